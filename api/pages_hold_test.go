package api_test

import (
	"context"
	"crypto/ed25519"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/forum-mcp/forum/api"
	"github.com/forum-mcp/forum/api/pages"
	"github.com/forum-mcp/forum/api/search"
)

// TestSafetyHoldOnPages is the live incident (publishHoldFixture) served by
// the whole API as `forum serve` assembles it (NewServer: the pages in
// front of the JSON routes, the search index kept by its refresher): the
// poisoned server is absent from the leaderboard page, its search row and
// its page carry the safety-hold marker naming the tool_poisoning signal
// with its evidence link, it never holds the sponsored slot — and its page
// shows the Toolfinder score SPEC §3 computes, unchanged.
func TestSafetyHoldOnPages(t *testing.T) {
	f := publishHoldFixture(t)
	rec := f.published[holdPoisoned]
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := api.NewServer(api.Config{Store: f.store, PublicKey: f.key.Public().(ed25519.PublicKey), Sponsors: []string{holdPoisoned, holdClean},
		Log: zaptest.NewLogger(t)})
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Run(ctx) }()
	defer func() { cancel(); <-done }()
	srv := httptest.NewServer(s.Handler)
	defer srv.Close()
	page := func(path string) string {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d\n%s", path, resp.StatusCode, b)
		}
		return string(b)
	}
	// The refresher builds the index from the stored publication.
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp, err := http.Get(srv.URL + "/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the pages never became ready (search index not built)")
		}
		time.Sleep(100 * time.Millisecond)
	}

	home := page("/")
	if strings.Contains(home, holdPoisoned) {
		t.Errorf("the leaderboard page lists the held server %s", holdPoisoned)
	}
	if !strings.Contains(home, `href="`+pages.ServerPath(holdClean)+`"`) {
		t.Errorf("the leaderboard page does not list %s", holdClean)
	}

	// The finding behind the hold, as the record names it.
	var findingID string
	for _, fd := range rec.StaticScan.Findings {
		if fd.Class == "tool_poisoning" && fd.Severity == "high" {
			findingID = fd.ID
		}
	}
	hold := search.SafetyHoldOf(rec)
	if hold == nil || findingID == "" {
		t.Fatalf("fixture: hold %+v, finding %q", hold, findingID)
	}
	sp := page(pages.ServerPath(holdPoisoned))
	if !strings.Contains(sp, `data-safety-hold="`+search.HoldOpenStrongNegative+`"`) {
		t.Fatalf("the held server's page has no safety-hold marker")
	}
	box := sp[strings.Index(sp, `data-safety-hold=`):]
	box = box[:strings.Index(box, "</div>")]
	for _, sg := range hold.Signals {
		if !strings.Contains(box, html.EscapeString(sg.SubScore+"/"+sg.ID)) {
			t.Errorf("the marker does not name signal %s/%s", sg.SubScore, sg.ID)
		}
	}
	hrefs := regexp.MustCompile(`href="([^"]+)"`).FindAllStringSubmatch(box, -1)
	resolved := false
	for _, h := range hrefs {
		u := html.UnescapeString(h[1])
		if !strings.HasPrefix(u, "/v1/evidence/") {
			continue
		}
		resp, err := http.Get(srv.URL + u)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 && strings.Contains(string(b), findingID) {
			resolved = true
		}
	}
	if !resolved {
		t.Errorf("no evidence link of the marker resolves to finding %s (links %v)", findingID, hrefs)
	}
	m := regexp.MustCompile(`data-toolfinder-score>(\d+)<`).FindStringSubmatch(sp)
	if m == nil || m[1] != strconv.Itoa(rec.Toolfinder.Score) {
		t.Errorf("the page shows Toolfinder score %v, the sealed record %d", m, rec.Toolfinder.Score)
	}
	if cp := page(pages.ServerPath(holdClean)); strings.Contains(cp, "data-safety-hold=") {
		t.Errorf("the clean server's page carries a safety-hold marker")
	}

	sr := page("/search?q=notes")
	row := sr[strings.Index(sr, `href="`+pages.ServerPath(holdPoisoned)+`"`):]
	row = row[:strings.Index(row, "</tr>")]
	if !strings.Contains(row, `class="hold-tag"`) || !strings.Contains(row, "(×0.5)") {
		t.Errorf("the held search row lacks the marker or its ×0.5:\n%s", row)
	}
	i := strings.Index(sr, `aria-label="Sponsored"`)
	if i < 0 {
		t.Fatalf("no sponsored section (the clean server scores >= 50)")
	}
	if sponsored := sr[i:]; strings.Contains(sponsored, holdPoisoned) || !strings.Contains(sponsored, holdClean) {
		t.Errorf("the sponsored section must hold %s, never the held %s", holdClean, holdPoisoned)
	}
	t.Logf("held %s: Toolfinder %d, band %s; marker links %d evidence pointers", holdPoisoned, rec.Toolfinder.Score, rec.Band, len(hrefs))
}
