package pages_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/forum-mcp/forum/api/pages"
	"github.com/forum-mcp/forum/api/search"
	"github.com/forum-mcp/forum/ingest/registry"
	"github.com/forum-mcp/forum/processors/scorer"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/duckdb"
	"github.com/forum-mcp/forum/sql/store"
)

var at = time.Date(2025, 10, 9, 20, 30, 0, 0, time.UTC)

// entry parses a registry ServerResponse as the crawler does.
func entry(t *testing.T, name, title, desc, repo string) schema.Entry {
	t.Helper()
	srv := map[string]any{"name": name, "description": desc, "version": "1.0.0", "title": title,
		"packages": []map[string]any{{"registryType": "npm", "identifier": "@x/" + strings.ReplaceAll(name, "/", "-"), "version": "1.0.0",
			"transport": map[string]any{"type": "stdio"}}}}
	if repo != "" {
		srv["repository"] = map[string]any{"url": repo, "source": "github"}
	}
	raw, err := json.Marshal(map[string]any{"server": srv,
		"_meta": map[string]any{registry.OfficialMetaKey: map[string]any{"status": "active", "publishedAt": at.Add(-40 * 24 * time.Hour),
			"updatedAt": at.Add(-3 * 24 * time.Hour), "isLatest": true}}})
	if err != nil {
		t.Fatal(err)
	}
	e, err := registry.ParseEntry(raw)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// serve stores the entries, scores and publishes them with the real
// scorer, indexes the stored publication and serves the pages in front of
// a stub API (a 418, so a request that falls through is visible).
func serve(t *testing.T, entries ...schema.Entry) *httptest.Server {
	t.Helper()
	ctx := context.Background()
	s, err := duckdb.Open(ctx, filepath.Join(t.TempDir(), "pages.duckdb"), zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	var recs []store.Record
	for i := range entries {
		recs = append(recs, store.RecordFromEntry(&entries[i], "snap-pages", at.Add(-2*time.Hour)))
	}
	if err := s.InsertRecords(ctx, recs); err != nil {
		t.Fatal(err)
	}
	inputs, err := scorer.Load(ctx, s, scorer.LoadOptions{AsOf: at})
	if err != nil {
		t.Fatal(err)
	}
	meta := scorer.Meta{PublicationID: scorer.PublicationID(at), ComputedAt: at}
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32))
	sealed, err := scorer.Seal(scorer.Compute(inputs, scorer.Sources{}, meta, nil), meta, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := scorer.Publish(ctx, scorer.StoreOutput{W: s}, nil, sealed); err != nil {
		t.Fatal(err)
	}
	docs, err := search.LoadDocs(ctx, s, meta.PublicationID)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := search.Build(ctx, meta.PublicationID, docs)
	if err != nil {
		t.Fatal(err)
	}
	idx := &search.Index{}
	idx.Swap(snap)
	t.Cleanup(func() { snap.Close() })
	api := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })
	srv := httptest.NewServer(pages.New(pages.Options{Store: s, Index: idx, Log: zaptest.NewLogger(t)}).Mount(api))
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, srv *httptest.Server, path string, status int) string {
	t.Helper()
	resp, err := http.Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		t.Fatalf("GET %s: status %d, want %d\n%s", path, resp.StatusCode, status, b)
	}
	if status < 400 || status == http.StatusNotFound {
		if ct := resp.Header.Get("Content-Type"); status != http.StatusTeapot && !strings.HasPrefix(ct, "text/html") {
			t.Errorf("GET %s: Content-Type %q", path, ct)
		}
	}
	return string(b)
}

// Markup from strangers — a description holding <script>, a title holding
// an <img onerror>, a name-like string in the search box — is shown as
// text on every page that shows it, and no page carries a script.
func TestStrangerMarkupIsText(t *testing.T) {
	const (
		name  = "io.github.mallory/notes-mcp"
		desc  = `<script>alert("pwned")</script> notes <b>bold</b>`
		title = `Notes <img src=x onerror=alert(1)>`
	)
	srv := serve(t,
		entry(t, name, title, desc, "https://github.com/mallory/notes-mcp"),
		entry(t, "io.github.alice/weather-mcp", "Weather", "Forecasts for any city, from public data", "https://github.com/alice/weather-mcp"))
	pagesWithIt := map[string]string{
		"/":                          get(t, srv, "/", 200),
		"/search?q=notes":            get(t, srv, "/search?q=notes", 200),
		pages.ServerPath(name):       get(t, srv, pages.ServerPath(name), 200),
		"/search?q=<script>notes":    get(t, srv, "/search?q=%3Cscript%3Enotes", 200),
		"/servers/<script>x/y (404)": get(t, srv, "/servers/%3Cscript%3Ex/y", 404),
	}
	for path, body := range pagesWithIt {
		if strings.Contains(strings.ToLower(body), "<script") {
			t.Errorf("%s: a <script> element reached the page", path)
		}
		if strings.Contains(body, "<img src=x") || strings.Contains(body, "<b>bold") {
			t.Errorf("%s: stranger markup rendered as markup", path)
		}
	}
	for _, path := range []string{"/", "/search?q=notes", pages.ServerPath(name)} {
		body := pagesWithIt[path]
		if !strings.Contains(body, "&lt;script&gt;alert(&#34;pwned&#34;)&lt;/script&gt;") {
			t.Errorf("%s: the description is not shown as escaped text", path)
		}
	}
	if !strings.Contains(pagesWithIt[pages.ServerPath(name)], "Notes &lt;img src=x onerror=alert(1)&gt;") {
		t.Errorf("server page: the title is not shown as escaped text")
	}
	if !strings.Contains(pagesWithIt["/search?q=<script>notes"], `value="&lt;script&gt;notes"`) {
		t.Errorf("search page: the query is not echoed escaped")
	}
}

// A server page shows the seven Toolfinder components against their maxima
// and the four FORUM sub-scores, an unknown one as "not observed" with its
// reason, and links the JSON record and its proof.
func TestServerPageBreakdown(t *testing.T) {
	const name = "io.github.alice/weather-mcp"
	srv := serve(t, entry(t, name, "Weather", "Forecasts for any city, from public data", "https://github.com/alice/weather-mcp"))
	body := get(t, srv, pages.ServerPath(name), 200)
	if enc := get(t, srv, "/servers/io.github.alice%2Fweather-mcp", 200); enc != body {
		t.Errorf("the encoded name (/servers/a%%2Fb) must reach the same page")
	}
	comps := regexp.MustCompile(`data-component="([a-z_]+)"`).FindAllStringSubmatch(body, -1)
	var names []string
	for _, c := range comps {
		names = append(names, c[1])
	}
	if got := strings.Join(names, ","); got != "health,auth_ease,tool_quality,maintenance,adoption,usage,security" {
		t.Errorf("components %s", got)
	}
	for _, max := range []string{"/ 25", "/ 15", "/ 10"} {
		if !strings.Contains(body, max) {
			t.Errorf("no component shown against its max %q", max)
		}
	}
	subs := regexp.MustCompile(`data-subscore="([a-z]+)"`).FindAllStringSubmatch(body, -1)
	if len(subs) != 4 {
		t.Fatalf("%d sub-scores", len(subs))
	}
	// No probe ran: static is unknown, with its reason.
	if !strings.Contains(body, "<em>not observed</em>") || !strings.Contains(body, "no_endpoint") {
		t.Errorf("an unknown sub-score must read 'not observed' with its reason")
	}
	for _, link := range []string{`href="/v1/servers/io.github.alice%2fweather-mcp/trust"`, `href="/v1/servers/io.github.alice%2fweather-mcp/proof"`} {
		if !strings.Contains(strings.ToLower(body), link) {
			t.Errorf("no link %s", link)
		}
	}
	if !strings.Contains(body, `<svg class="strip"`) || strings.Count(body, "<rect ") != pages.HealthDays {
		t.Errorf("the health strip must have %d days", pages.HealthDays)
	}
	get(t, srv, "/servers/io.github.nobody/none", 404)
}

func TestHomeSearchMethod(t *testing.T) {
	srv := serve(t,
		entry(t, "io.github.alice/weather-mcp", "Weather", "Forecasts for any city, from public data", "https://github.com/alice/weather-mcp"),
		entry(t, "io.github.bob/test", "", "A test server for notes", ""))
	home := get(t, srv, "/", 200)
	if !strings.Contains(home, `href="/servers/io.github.alice/weather-mcp"`) || !strings.Contains(home, `href="/v1/leaderboard"`) {
		t.Errorf("home: no leaderboard row or API link")
	}
	if strings.Contains(home, "io.github.bob/test") {
		t.Errorf("home: a flagged server (test_or_demo) is on the leaderboard")
	}
	if !strings.Contains(home, "lost most on") {
		t.Errorf("home: rows carry no why")
	}
	get(t, srv, "/?category=no-such-category", 400)
	if s := get(t, srv, "/search?q=weather", 200); !strings.Contains(s, "weather-mcp") || !strings.Contains(s, `href="/v1/search?q=weather"`) {
		t.Errorf("search: no result or API link")
	}
	if s := get(t, srv, "/search?q=notes", 200); !strings.Contains(s, `<span class="flag">test_or_demo</span>`) {
		t.Errorf("search: a flagged result must show its flag")
	}
	m := get(t, srv, "/method", 200)
	for _, want := range []string{"0.1.0-draft5", "Change log", "placeholder", "bulk_publisher", `href="/v1/method"`} {
		if !strings.Contains(m, want) {
			t.Errorf("method page lacks %q", want)
		}
	}
	// Everything else falls through to the API.
	get(t, srv, "/v1/anything", http.StatusTeapot)
}
