package main

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/forum-mcp/forum/internal/testenv"
)

// envChromium names the Chromium binary the end-to-end page tests drive
// (Debian's chromium; deploy/test.sh installs it and sets
// FORUM_TEST_CHROMIUM=chromium). Unset: the test skips (fails under CI).
const envChromium = "FORUM_TEST_CHROMIUM"

// envScreenshots is where the screenshots go (deploy/test.sh:
// data/screenshots); unset, a temp dir the test logs.
const envScreenshots = "FORUM_SCREENSHOTS_DIR"

// TestChromiumPages drives headless Chromium over the DevTools protocol
// against `forum replay --serve` of the bundled snapshots, on loopback with
// every other host unresolvable: the leaderboard renders, search returns
// results, a server page shows the seven Toolfinder components and the
// four FORUM sub-scores (on a desktop and a phone-sized viewport), and
// /docs lists the API's operations from the embedded viewer. Every
// request the browser makes is recorded and must stay on loopback.
// Screenshots of each page are written as PNGs.
func TestChromiumPages(t *testing.T) {
	bin := testenv.Service(t, envChromium, "headless Chromium for the page tests: set "+envChromium+"=chromium (deploy/test.sh installs it and does)")
	chromium, err := exec.LookPath(bin)
	if err != nil {
		testenv.Unavailable(t, "%s=%s: %v (apt-get install chromium)", envChromium, bin, err)
	}
	shots := os.Getenv(envScreenshots)
	if shots == "" {
		if shots, err = os.MkdirTemp("", "forum-screenshots-"); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", shots)

	addr := freeAddr(t)
	base := "http://" + addr
	p := start(t, forumBin(t), []string{"FORUM_KAFKA_BROKERS=", "FORUM_CLICKHOUSE_DSN="}, "replay", "--snapshots", bundled, "--data-dir", t.TempDir(),
		"--serve", "--listen", addr, "--flight-listen", "off", "--log-level", "warn")
	defer p.stop()
	for deadline := time.Now().Add(4 * time.Minute); ; {
		if resp, err := http.Get(base + "/v1/search?q=github"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if p.exited() || time.Now().After(deadline) {
			t.Fatalf("forum replay --serve never served search:\n%s", p.out.String())
		}
		time.Sleep(time.Second)
	}

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true), chromedp.Flag("disable-breakpad", true),
		chromedp.Flag("disable-features", "Translate,OptimizationHints,MediaRouter"),
		// The network is cut off: every host but loopback fails to resolve.
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	ctx, cancelC := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	defer cancelC()
	ctx, cancelT := context.WithTimeout(ctx, 4*time.Minute)
	defer cancelT()

	var mu sync.Mutex
	var requested []string
	chromedp.ListenTarget(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			requested = append(requested, e.Request.URL)
			mu.Unlock()
		}
	})
	if err := chromedp.Run(ctx, network.Enable()); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	shot := func(name string) chromedp.Action {
		return chromedp.ActionFunc(func(ctx context.Context) error {
			var png []byte
			if err := chromedp.FullScreenshot(&png, 90).Do(ctx); err != nil {
				return err
			}
			path := filepath.Join(shots, name+".png")
			if err := os.WriteFile(path, png, 0o644); err != nil {
				return err
			}
			t.Logf("screenshot %s (%d bytes)", path, len(png))
			return nil
		})
	}
	count := func(sel string, n *int) chromedp.Action {
		return chromedp.Evaluate(`document.querySelectorAll(`+jsString(sel)+`).length`, n)
	}

	// The leaderboard.
	var rows int
	var first string
	if err := chromedp.Run(ctx,
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(`#leaderboard`, chromedp.ByQuery),
		count(`main table tbody tr`, &rows),
		chromedp.AttributeValue(`main table tbody tr a.name`, "href", &first, nil, chromedp.ByQuery),
		shot("leaderboard"),
	); err != nil {
		t.Fatalf("leaderboard: %v", err)
	}
	if rows == 0 || !strings.HasPrefix(first, "/servers/") {
		t.Fatalf("leaderboard: %d rows, first link %q", rows, first)
	}

	// Search, through the form as a person would use it.
	var results int
	var searchURL string
	if err := chromedp.Run(ctx,
		chromedp.SetValue(`#q`, "github", chromedp.ByID),
		chromedp.Submit(`#q`, chromedp.ByID),
		chromedp.WaitVisible(`main table tbody tr`, chromedp.ByQuery),
		chromedp.Location(&searchURL),
		count(`main table tbody tr`, &results),
		shot("search"),
	); err != nil {
		t.Fatalf("search: %v", err)
	}
	if results == 0 || !strings.Contains(searchURL, "/search?q=github") {
		t.Fatalf("search: %d results at %s", results, searchURL)
	}

	// A server page, on a desktop and on a phone.
	var comps, subs, notObserved int
	var overflow bool
	if err := chromedp.Run(ctx,
		chromedp.Navigate(base+first),
		chromedp.WaitVisible(`#components`, chromedp.ByID),
		count(`#components [data-component]`, &comps),
		count(`#subscores [data-subscore]`, &subs),
		count(`#subscores em`, &notObserved),
		shot("server"),
		chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile),
		chromedp.Navigate(base+first),
		chromedp.WaitVisible(`#components`, chromedp.ByID),
		// Readable on a phone: the page itself does not scroll sideways
		// (wide tables scroll inside their own box).
		chromedp.Evaluate(`document.documentElement.scrollWidth > window.innerWidth + 1`, &overflow),
		shot("server-phone"),
		chromedp.EmulateViewport(1280, 900),
	); err != nil {
		t.Fatalf("server page %s: %v", first, err)
	}
	if comps != 7 || subs != 4 {
		t.Errorf("server page %s: %d components, %d sub-scores; want 7 and 4", first, comps, subs)
	}
	if overflow {
		t.Errorf("server page %s overflows a 390 px wide screen", first)
	}
	t.Logf("server page %s: %d components, %d sub-scores (%d not observed)", first, comps, subs, notObserved)

	// The method page.
	if err := chromedp.Run(ctx, chromedp.Navigate(base+"/method"), chromedp.WaitVisible(`h1`, chromedp.ByQuery), shot("method")); err != nil {
		t.Fatalf("method: %v", err)
	}

	// /docs from the embedded viewer, with the network cut off.
	var ops int
	var docText string
	if err := chromedp.Run(ctx,
		chromedp.Navigate(base+"/docs"),
		chromedp.WaitVisible(`.opblock`, chromedp.ByQuery),
		count(`.opblock`, &ops),
		chromedp.Text(`#swagger-ui`, &docText, chromedp.ByID),
		shot("docs"),
	); err != nil {
		t.Fatalf("docs: %v", err)
	}
	for _, path := range []string{"/v1/leaderboard", "/v1/search", "/v1/servers/{name}/trust", "/v1/servers/{name}/proof"} {
		if !strings.Contains(docText, path) {
			t.Errorf("/docs does not list %s", path)
		}
	}
	if ops < 20 {
		t.Errorf("/docs lists %d operations", ops)
	}

	mu.Lock()
	defer mu.Unlock()
	for _, r := range requested {
		u, err := url.Parse(r)
		if err != nil {
			t.Errorf("request to an unparsable URL %q", r)
			continue
		}
		switch {
		case u.Scheme == "data" || u.Scheme == "about" || u.Scheme == "blob":
		case (u.Scheme == "http" || u.Scheme == "https") && (u.Hostname() == "127.0.0.1" || u.Hostname() == "localhost" || u.Hostname() == "::1"):
		default:
			t.Errorf("a request left loopback: %s", r)
		}
	}
	t.Logf("%d browser requests, all on loopback; /docs lists %d operations; leaderboard %d rows; search %d results", len(requested), ops, rows, results)
}

// jsString quotes s as a JavaScript string literal (selectors here are
// constants, but keep them quoted properly).
func jsString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
