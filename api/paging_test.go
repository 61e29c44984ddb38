package api_test

import (
	"context"
	"fmt"
	"math"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/forum-mcp/forum/api"
	"github.com/forum-mcp/forum/api/search"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/duckdb"
	"github.com/forum-mcp/forum/sql/store"
)

// manyServersStore is a DuckDB store holding n servers (latest entries),
// more than the store returns in one ListServers call when n > 1000.
func manyServersStore(t *testing.T, n int) *duckdb.Store {
	t.Helper()
	ctx := context.Background()
	s, err := duckdb.Open(ctx, filepath.Join(t.TempDir(), "many.duckdb"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2025, 10, 1, 0, 0, 0, 0, time.UTC)
	recs := make([]store.Record, 0, n)
	for i := range n {
		name := fmt.Sprintf("io.github.o%d/s%05d", i%7, i)
		recs = append(recs, store.Record{Name: name, Version: "1.0.0", Namespace: schema.Namespace(name), ContentSHA256: fmt.Sprintf("sha%d", i),
			ObservedAt: at, SnapshotID: "snap", Status: "active", IsLatest: true, Server: `{"name":"` + name + `"}`})
	}
	if err := s.InsertRecords(ctx, recs); err != nil {
		t.Fatal(err)
	}
	return s
}

// pageAll follows next_cursor from the first page and returns every name
// served and the number of requests made.
func pageAll(t *testing.T, srv *httptest.Server, query string) ([]string, int) {
	t.Helper()
	var names []string
	cursor := ""
	for req := 1; ; req++ {
		var out struct {
			Servers []struct {
				Name string `json:"name"`
			} `json:"servers"`
			NextCursor string `json:"next_cursor"`
		}
		get(t, srv, "/v1/servers?"+query+"&cursor="+url.QueryEscape(cursor), 200, &out)
		for _, x := range out.Servers {
			names = append(names, x.Name)
		}
		if out.NextCursor == "" {
			return names, req
		}
		if req > 1000 {
			t.Fatal("paging does not end")
		}
		cursor = out.NextCursor
	}
}

// TestListServersPagesAtTheMaximumLimit: at every limit up to the
// documented maximum (1000), following next_cursor serves every server
// exactly once, in order. A full page carries a cursor even when the page
// after it is empty (the registry's own convention, SPEC §1.1), so a
// registry of an exact multiple of limit costs one more, empty, request.
func TestListServersPagesAtTheMaximumLimit(t *testing.T) {
	const n = 1180
	s := manyServersStore(t, n)
	h, _ := api.New(api.Options{Store: s})
	srv := httptest.NewServer(h)
	defer srv.Close()
	inO3 := 0
	for i := range n {
		if i%7 == 3 {
			inO3++
		}
	}
	for _, tc := range []struct {
		query   string
		limit   int
		servers int
	}{
		{"limit=1000", 1000, n},
		{"limit=590", 590, n}, // 590 + 590 + an empty page
		{"limit=999", 999, n},
		{"limit=7", 7, n},
		{"limit=1000&namespace=io.github.o3", 1000, inO3},
		{fmt.Sprintf("limit=%d&namespace=io.github.o3", inO3), inO3, inO3},
	} {
		requests := tc.servers/tc.limit + 1 // full pages, then a short (maybe empty) one
		names, reqs := pageAll(t, srv, tc.query)
		if len(names) != tc.servers || reqs != requests {
			t.Errorf("%s: %d servers in %d requests, want %d in %d", tc.query, len(names), reqs, tc.servers, requests)
		}
		for i := 1; i < len(names); i++ {
			if names[i] <= names[i-1] {
				t.Fatalf("%s: not ordered or not unique at %d: %s after %s", tc.query, i, names[i], names[i-1])
			}
		}
	}
}

// TestDocumentedLimitsWithinWhatIsServed: no route documents a limit larger
// than what the read behind it returns in one call (the store's clamp, or
// the search index's), the mismatch that hid servers past the 1000th.
// Routes without a cursor are not paged: their limit only has to be served.
func TestDocumentedLimitsWithinWhatIsServed(t *testing.T) {
	_, h := api.New(api.Options{Routes: api.DocumentRoutes()})
	served := map[string]float64{"list-servers": store.MaxListLimit, "search": search.MaxLimit,
		"leaderboard": math.MaxInt} // toolfinder.Leaderboard does not clamp
	seen := 0
	for path, item := range h.OpenAPI().Paths {
		for _, op := range []*huma.Operation{item.Get, item.Post} {
			if op == nil {
				continue
			}
			for _, p := range op.Parameters {
				if p.Name != "limit" || p.In != "query" {
					continue
				}
				seen++
				limit, ok := served[op.OperationID]
				if !ok {
					limit = store.MaxEventLimit // every other read clamps to this
				}
				if p.Schema == nil || p.Schema.Maximum == nil || *p.Schema.Maximum > limit {
					t.Errorf("%s %s: limit maximum %v, but one read serves at most %v", op.Method, path, p.Schema.Maximum, limit)
				}
			}
		}
	}
	if seen < 6 {
		t.Errorf("only %d limit parameters found", seen)
	}
}
