package api_test

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/forum-mcp/forum/api"
	"github.com/forum-mcp/forum/ingest/differ"
	"github.com/forum-mcp/forum/ingest/probe"
	"github.com/forum-mcp/forum/ingest/registry"
	"github.com/forum-mcp/forum/processors/history"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/duckdb"
	"github.com/forum-mcp/forum/sql/store"
)

var update = flag.Bool("update", false, "rewrite golden files")

// loadedStore fills a DuckDB store from the bundled real snapshots, the way
// the pipeline would (differ + history rows), without the bus.
func loadedStore(t *testing.T) *duckdb.Store {
	t.Helper()
	ctx := context.Background()
	s, err := duckdb.Open(ctx, filepath.Join(t.TempDir(), "api.duckdb"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	files, err := registry.ListSnapshots("../ingest/registry/testdata/snapshots")
	if err != nil {
		t.Fatal(err)
	}
	st := differ.NewState()
	for _, f := range files[len(files)-3:] {
		entries, _, _, err := registry.LoadSnapshotFile(f)
		if err != nil {
			t.Fatal(err)
		}
		id := registry.SnapshotID(f.CapturedAt)
		var recs []store.Record
		for i := range entries {
			recs = append(recs, store.RecordFromEntry(&entries[i], id, f.CapturedAt))
		}
		res := differ.Diff(st, differ.Snapshot{ID: id, Mode: schema.ModeFull, ObservedAt: f.CapturedAt, Entries: entries}, differ.Options{})
		st = res.Next
		if err := s.InsertRecords(ctx, recs); err != nil {
			t.Fatal(err)
		}
		if err := s.InsertEvents(ctx, res.Events); err != nil {
			t.Fatal(err)
		}
		if err := s.InsertSnapshots(ctx, []schema.SnapshotSummary{{ID: id, Mode: schema.ModeFull, Source: filepath.Base(f.Path), ObservedAt: f.CapturedAt, Entries: len(entries), Names: res.Names, Events: len(res.Events), Counts: differ.Counts(res.Events)}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.InsertDLQ(ctx, []schema.DLQMessage{schema.NewDLQ("test", "page-1", schema.ReasonNotJSON, "html", "", []byte("<html>"), time.Now())}); err != nil {
		t.Fatal(err)
	}
	return s
}

func get(t *testing.T, srv *httptest.Server, path string, wantStatus int, into any) string {
	t.Helper()
	resp, err := http.Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != wantStatus {
		t.Fatalf("GET %s = %d, want %d: %s", path, resp.StatusCode, wantStatus, b)
	}
	if into != nil {
		if err := json.Unmarshal(b, into); err != nil {
			t.Fatalf("GET %s: %v: %s", path, err, b)
		}
	}
	return string(b)
}

func TestAPI(t *testing.T) {
	s := loadedStore(t)
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "forum_test_total", Help: "t"}))
	h, _ := api.New(api.Options{Store: s, Registry: reg})
	srv := httptest.NewServer(h)
	defer srv.Close()

	// Paging over the whole latest view visits every server once, in order.
	var all []string
	cursor := ""
	for page := 0; ; page++ {
		var out struct {
			Servers []struct {
				Name string `json:"name"`
			} `json:"servers"`
			NextCursor string `json:"next_cursor"`
		}
		get(t, srv, "/v1/servers?limit=100&cursor="+url.QueryEscape(cursor), 200, &out)
		for _, x := range out.Servers {
			all = append(all, x.Name)
		}
		if out.NextCursor == "" {
			break
		}
		cursor = out.NextCursor
		if page > 20 {
			t.Fatal("paging does not end")
		}
	}
	if len(all) != 595 {
		t.Errorf("paged %d servers, want 595 (names in 2025-10-09)", len(all))
	}
	for i := 1; i < len(all); i++ {
		if all[i] <= all[i-1] {
			t.Fatalf("not ordered/unique at %d: %s after %s", i, all[i], all[i-1])
		}
	}

	var ns struct {
		Servers []struct {
			Name, Namespace string
		} `json:"servers"`
	}
	get(t, srv, "/v1/servers?namespace=ai.smithery&limit=1000", 200, &ns)
	if len(ns.Servers) == 0 {
		t.Fatal("namespace filter returned nothing")
	}
	for _, x := range ns.Servers {
		if x.Namespace != "ai.smithery" {
			t.Errorf("namespace filter leaked %s", x.Name)
		}
	}

	var one struct {
		Server struct {
			Name, Version string
			Detail        map[string]any `json:"detail"`
		} `json:"server"`
		Versions []struct{ Version string } `json:"versions"`
		Events   []schema.DriftEvent        `json:"events"`
	}
	get(t, srv, "/v1/servers/"+url.PathEscape("ai.smithery/brave"), 200, &one)
	if one.Server.Name != "ai.smithery/brave" || one.Server.Version != "2.0.52" || one.Server.Detail["name"] != "ai.smithery/brave" {
		t.Errorf("server: %+v", one.Server)
	}
	if len(one.Versions) < 20 || len(one.Events) == 0 {
		t.Errorf("versions %d, events %d", len(one.Versions), len(one.Events))
	}

	body := get(t, srv, "/v1/servers/"+url.PathEscape("io.example/does-not-exist"), 404, nil)
	if !strings.Contains(body, "no server named") {
		t.Errorf("404 body does not say why: %s", body)
	}
	get(t, srv, "/v1/servers?limit=0", 422, nil)
	get(t, srv, "/v1/servers?limit=abc", 422, nil)
	get(t, srv, "/v1/events?kind=bogus", 422, nil)
	get(t, srv, "/v1/events?since=yesterday", 422, nil)

	var evs struct {
		Events []schema.DriftEvent `json:"events"`
	}
	get(t, srv, "/v1/events?kind=version_added&limit=5", 200, &evs)
	if len(evs.Events) != 5 {
		t.Errorf("events limit: %d", len(evs.Events))
	}
	for _, e := range evs.Events {
		if e.Kind != "version_added" {
			t.Errorf("kind filter leaked %s", e.Kind)
		}
	}
	get(t, srv, "/v1/servers/"+url.PathEscape("ai.smithery/brave")+"/events?kind=version_added", 200, &evs)
	for _, e := range evs.Events {
		if e.Server != "ai.smithery/brave" || e.Kind != "version_added" {
			t.Errorf("server events leaked %s %s", e.Server, e.Kind)
		}
	}

	var snaps struct {
		Snapshots   []schema.SnapshotSummary `json:"snapshots"`
		EventCounts map[string]int64         `json:"event_counts"`
	}
	get(t, srv, "/v1/snapshots", 200, &snaps)
	if len(snaps.Snapshots) != 3 || snaps.EventCounts["new_server"] == 0 {
		t.Errorf("snapshots %d counts %v", len(snaps.Snapshots), snaps.EventCounts)
	}
	var dlq struct {
		DeadLetters []schema.DLQMessage `json:"dead_letters"`
	}
	get(t, srv, "/v1/dlq", 200, &dlq)
	if len(dlq.DeadLetters) != 1 || dlq.DeadLetters[0].Reason != schema.ReasonNotJSON {
		t.Errorf("dlq: %+v", dlq.DeadLetters)
	}
	get(t, srv, "/healthz", 200, nil)
	get(t, srv, "/readyz", 200, nil)
	if m := get(t, srv, "/metrics", 200, nil); !strings.Contains(m, "forum_test_total") {
		t.Error("metrics not served")
	}
	if d := get(t, srv, "/docs", 200, nil); !strings.Contains(d, "<html") {
		t.Error("docs page not served")
	}
	var doc map[string]any
	get(t, srv, "/openapi.json", 200, &doc)
	if doc["openapi"] != "3.1.0" {
		t.Errorf("openapi version %v", doc["openapi"])
	}
}

func TestReadyzFailsWhenTheStoreIsGone(t *testing.T) {
	s := loadedStore(t)
	h, _ := api.New(api.Options{Store: s})
	srv := httptest.NewServer(h)
	defer srv.Close()
	s.Close()
	get(t, srv, "/readyz", 503, nil)
}

// TestOpenAPIGolden keeps the published API document in the repo; run with
// -update after an intended change.
func TestOpenAPIGolden(t *testing.T) {
	_, h := api.New(api.Options{Routes: api.DocumentRoutes()})
	got, err := json.MarshalIndent(h.OpenAPI(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	golden := filepath.Join("testdata", "openapi.golden.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./api -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Error("the OpenAPI document changed; review and run go test ./api -run OpenAPIGolden -update")
	}
}

func TestHealthRoute(t *testing.T) {
	s := loadedStore(t)
	ctx := context.Background()
	t0 := time.Date(2025, 10, 9, 12, 0, 0, 0, time.UTC)
	mk := func(url string, at time.Time, outcome string) store.HealthCheck {
		c := probe.Check{ID: probe.CheckID("ai.smithery/brave", url, at), ObservedAt: at, Server: "ai.smithery/brave", RemoteURL: url,
			Transport: "streamable-http", Outcome: probe.Outcome(outcome), InitializeLatencyMS: 120, AuthKind: probe.AuthNone, Tools: []probe.Tool{}}
		return history.HealthRow(&c, nil)
	}
	checks := []store.HealthCheck{
		mk("https://a.example/mcp", t0, "unreachable"),
		mk("https://a.example/mcp", t0.Add(time.Hour), "ok"),
		mk("https://b.example/mcp", t0.Add(30*time.Minute), "auth_required"),
	}
	if err := s.InsertHealthChecks(ctx, checks); err != nil {
		t.Fatal(err)
	}
	h, _ := api.New(api.Options{Store: s})
	srv := httptest.NewServer(h)
	defer srv.Close()
	var out struct {
		Latest  []probe.Check `json:"latest"`
		History []struct {
			Outcome    string    `json:"outcome"`
			ObservedAt time.Time `json:"observed_at"`
		} `json:"history"`
	}
	get(t, srv, "/v1/servers/"+url.PathEscape("ai.smithery/brave")+"/health", 200, &out)
	if len(out.Latest) != 2 || len(out.History) != 3 {
		t.Fatalf("latest %d history %d", len(out.Latest), len(out.History))
	}
	for _, c := range out.Latest {
		if c.RemoteURL == "https://a.example/mcp" && c.Outcome != probe.OutcomeOK {
			t.Errorf("latest of a is %s, want the newer ok", c.Outcome)
		}
	}
	if !out.History[0].ObservedAt.After(out.History[2].ObservedAt) {
		t.Error("history is not newest first")
	}
	get(t, srv, "/v1/servers/"+url.PathEscape("ai.smithery/brave")+"/health?since="+url.QueryEscape(t0.Add(20*time.Minute).Format(time.RFC3339)), 200, &out)
	if len(out.History) != 2 {
		t.Errorf("since filter: %d", len(out.History))
	}
	get(t, srv, "/v1/servers/"+url.PathEscape("io.example/nope")+"/health", 404, nil)
}

// TestServerReadModelMatchesTheStore pins the read model of GET
// /v1/servers/{name} to the store path it replaces: byte-identical bodies
// for every server, 404 for an unknown name, and a write after the build is
// served (from the store while the model does not know the name, from the
// model once rebuilt).
func TestServerReadModelMatchesTheStore(t *testing.T) {
	ctx := context.Background()
	s := loadedStore(t)
	model := api.NewServerModel(s, nil)
	if err := model.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if model.Len() != 595 {
		t.Fatalf("model holds %d servers, want 595", model.Len())
	}
	// In-process requests: one Host, so the bodies' $schema links agree.
	fromModel, _ := api.New(api.Options{Store: s, Servers: model})
	fromStore, _ := api.New(api.Options{Store: s, NoReadModel: true})
	names, err := s.ListServers(ctx, store.ListQuery{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	same := func(name string, status int) {
		t.Helper()
		p := "/v1/servers/" + url.PathEscape(name)
		ca, a := call(t, fromModel, http.MethodGet, p, "", "", nil)
		cb, b := call(t, fromStore, http.MethodGet, p, "", "", nil)
		if ca != status || cb != status || a != b {
			t.Fatalf("%s: the model answers %d\n%s\nthe store %d\n%s", name, ca, a, cb, b)
		}
	}
	for _, n := range names {
		same(n.Name, 200)
	}
	same("io.example/does-not-exist", 404)

	// A server and an event written after the build.
	at := time.Date(2025, 10, 10, 0, 0, 0, 0, time.UTC)
	rec := names[0].Record
	rec.Name, rec.Version, rec.ContentSHA256, rec.ObservedAt = "io.example/late", "1.0.0", "late", at
	rec.Server = `{"name":"io.example/late","version":"1.0.0"}`
	ev := schema.DriftEvent{ID: "late-1", Server: names[1].Name, Namespace: names[1].Namespace, Kind: schema.KindTitleChanged, ObservedAt: at}
	if err := s.InsertRecords(ctx, []store.Record{rec}); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertEvents(ctx, []schema.DriftEvent{ev}); err != nil {
		t.Fatal(err)
	}
	same(rec.Name, 200) // not in the model: the store answers
	if err := model.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if model.Len() != 596 {
		t.Fatalf("rebuilt model holds %d servers, want 596", model.Len())
	}
	same(rec.Name, 200)
	same(names[1].Name, 200)
	if _, body := call(t, fromModel, http.MethodGet, "/v1/servers/"+url.PathEscape(names[1].Name), "", "", nil); !strings.Contains(body, `"late-1"`) {
		t.Errorf("the rebuilt model misses the new event: %s", body)
	}
}
