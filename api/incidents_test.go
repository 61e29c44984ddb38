package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/forum-mcp/forum/api"
	"github.com/forum-mcp/forum/processors/history"
	"github.com/forum-mcp/forum/processors/incidents"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/processors/ownerburst"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/duckdb"
	"github.com/forum-mcp/forum/sql/store"
)

const knownServer = "io.github.acme/tool"

// incidentFixture is the real HTTP handler over DuckDB, with the incidents
// processor applied synchronously where the bus would deliver.
type incidentFixture struct {
	t         *testing.T
	h         http.Handler
	s         *duckdb.Store
	published int
	now       time.Time
}

func newIncidentFixture(t *testing.T, tokens string) *incidentFixture {
	t.Helper()
	ctx := context.Background()
	s, err := duckdb.Open(ctx, filepath.Join(t.TempDir(), "inc.duckdb"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2025, 10, 1, 0, 0, 0, 0, time.UTC)
	if err := s.InsertRecords(ctx, []store.Record{{Name: knownServer, Version: "1.0.0", Namespace: schema.Namespace(knownServer),
		ContentSHA256: "abc", ObservedAt: at, SnapshotID: "snap", Status: "active", IsLatest: true, Server: "{}"}}); err != nil {
		t.Fatal(err)
	}
	f := &incidentFixture{t: t, s: s, now: time.Date(2025, 11, 1, 12, 0, 0, 0, time.UTC)}
	// The owner-burst detector's windows as the results sink stores them.
	bursts := ownerburst.NewStateWith(method.Embedded().Weights)
	var evs []schema.DriftEvent
	for i := 0; i < 25; i++ {
		evs = append(evs, schema.DriftEvent{ID: "e" + string(rune('a'+i)), Server: "ai.burst/s" + string(rune('a'+i)), Namespace: "ai.burst", Kind: schema.KindNewServer, ObservedAt: at})
	}
	bursts.Apply(evs...)
	var rows []store.OwnerBurstRow
	for _, w := range bursts.Windows(at) {
		raw, _ := schema.Marshal(w)
		rows = append(rows, history.OwnerBurstRowOf(&w, raw))
	}
	if err := s.InsertOwnerBursts(ctx, rows); err != nil {
		t.Fatal(err)
	}
	f.h, _ = api.New(api.Options{Store: s, Routes: []func(huma.API){
		api.IncidentRoutes(api.IncidentOptions{
			Tokens: api.ParseAdminTokens(tokens),
			Lookup: incidents.StoreLookup{Servers: s, Incidents: s},
			// What the history sink does with a published action.
			Publish: func(ctx context.Context, m incidents.Msg) error {
				f.published++
				if err := s.InsertIncidentAudit(ctx, []store.IncidentAudit{incidents.AuditRow(m)}); err != nil {
					return err
				}
				return s.InsertIncidents(ctx, []store.Incident{incidents.Row(m.Incident)})
			},
			Store: s,
			Now:   func() time.Time { return f.now },
		}),
		api.BurstRoutes(api.BurstOptions{Store: s}),
	}})
	return f
}

func (f *incidentFixture) do(method, path, token, body string) (int, map[string]any) {
	f.t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	var out map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &out)
	return rec.Code, out
}

func (f *incidentFixture) stored() (int, int) {
	f.t.Helper()
	inc, err := f.s.Incidents(context.Background(), "")
	if err != nil {
		f.t.Fatal(err)
	}
	aud, err := f.s.IncidentAuditLog(context.Background(), store.AuditQuery{})
	if err != nil {
		f.t.Fatal(err)
	}
	return len(inc), len(aud)
}

func body(edit func(m map[string]any)) string {
	m := map[string]any{"server": knownServer, "date": "2025-10-20T00:00:00Z", "class": "rug_pull", "severity": "high",
		"status": "confirmed", "source_uri": "https://example.org/advisory/42", "reason": "advisory published"}
	if edit != nil {
		edit(m)
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// TestIncidentIntakeRejectsBadInput: every kind of bad input gets a clear
// 4xx naming the problem, and nothing is published or stored.
func TestIncidentIntakeRejectsBadInput(t *testing.T) {
	f := newIncidentFixture(t, "alice:s3cret")
	tests := []struct {
		name   string
		token  string
		body   string
		status int
		want   string // in the error document
	}{
		{"no token", "", body(nil), 401, "bearer token is required"},
		{"wrong token", "guess", body(nil), 401, "not valid"},
		{"unknown server", "s3cret", body(func(m map[string]any) { m["server"] = "io.github.nobody/none" }), 422, "unknown_server"},
		{"future date", "s3cret", body(func(m map[string]any) { m["date"] = "2025-11-02T00:00:00Z" }), 422, "future_date"},
		{"missing source uri", "s3cret", body(func(m map[string]any) { m["source_uri"] = "" }), 422, "missing_source_uri"},
		{"unknown class", "s3cret", body(func(m map[string]any) { m["class"] = "spam" }), 422, "unknown_class"},
		{"unknown severity", "s3cret", body(func(m map[string]any) { m["severity"] = "severe" }), 422, "unknown_severity"},
		{"unknown status", "s3cret", body(func(m map[string]any) { m["status"] = "rumoured" }), 422, "unknown_status"},
		{"missing reason", "s3cret", body(func(m map[string]any) { m["reason"] = " " }), 422, "missing_reason"},
		{"no date field", "s3cret", body(func(m map[string]any) { delete(m, "date") }), 422, "date"},
		{"not JSON", "s3cret", "{not json", 400, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, doc := f.do(http.MethodPost, "/v1/admin/incidents", tt.token, tt.body)
			if code != tt.status {
				t.Fatalf("status %d, want %d: %v", code, tt.status, doc)
			}
			if b, _ := json.Marshal(doc); !strings.Contains(string(b), tt.want) {
				t.Errorf("error document %s does not mention %q", b, tt.want)
			}
		})
	}
	code, doc := f.do(http.MethodPost, "/v1/admin/incidents/inc-nope/retract", "s3cret", `{"reason":"x"}`)
	if code != 404 {
		t.Errorf("retract of an unknown id: %d %v, want 404", code, doc)
	}
	if f.published != 0 {
		t.Errorf("%d messages published for bad input", f.published)
	}
	if n, a := f.stored(); n != 0 || a != 0 {
		t.Errorf("bad input wrote %d incidents and %d audit rows", n, a)
	}
}

func TestIncidentIntakeDisabledWithoutToken(t *testing.T) {
	f := newIncidentFixture(t, "")
	code, doc := f.do(http.MethodPost, "/v1/admin/incidents", "anything", body(nil))
	if code != 503 || !strings.Contains(doc["detail"].(string), "FORUM_ADMIN_TOKEN") {
		t.Fatalf("status %d %v, want 503 naming FORUM_ADMIN_TOKEN", code, doc)
	}
	if n, a := f.stored(); n != 0 || a != 0 || f.published != 0 {
		t.Errorf("wrote %d/%d, published %d", n, a, f.published)
	}
}

// TestIncidentLifecycle: insert, history with audit, duplicate, retraction.
func TestIncidentLifecycle(t *testing.T) {
	f := newIncidentFixture(t, "alice:s3cret,bob:other")
	code, doc := f.do(http.MethodPost, "/v1/admin/incidents", "s3cret", body(nil))
	if code != 202 {
		t.Fatalf("insert: %d %v", code, doc)
	}
	id := doc["incident"].(map[string]any)["id"].(string)
	if code, doc := f.do(http.MethodPost, "/v1/admin/incidents", "s3cret", body(nil)); code != 409 {
		t.Errorf("same incident again: %d %v, want 409", code, doc)
	}
	if code, _ := f.do(http.MethodPost, "/v1/admin/incidents/"+id+"/retract", "other", `{"reason":""}`); code != 422 {
		t.Errorf("retract without reason: %d, want 422", code)
	}
	f.now = f.now.Add(time.Hour)
	if code, doc := f.do(http.MethodPost, "/v1/admin/incidents/"+id+"/retract", "other", `{"reason":"wrong server"}`); code != 202 {
		t.Fatalf("retract: %d %v", code, doc)
	}
	if code, _ := f.do(http.MethodPost, "/v1/admin/incidents/"+id+"/retract", "other", `{"reason":"again"}`); code != 409 {
		t.Errorf("second retraction: %d, want 409", code)
	}
	code, doc = f.do(http.MethodGet, "/v1/servers/"+url.PathEscape(knownServer)+"/incidents", "", "")
	if code != 200 {
		t.Fatalf("history: %d %v", code, doc)
	}
	list := doc["incidents"].([]any)
	if len(list) != 1 {
		t.Fatalf("history = %v", doc)
	}
	inc := list[0].(map[string]any)
	audit := inc["audit"].([]any)
	if inc["status"] != "retracted" || inc["curator"] != "alice" || len(audit) != 2 {
		t.Fatalf("incident = %v", inc)
	}
	a0, a1 := audit[0].(map[string]any), audit[1].(map[string]any)
	if a0["who"] != "alice" || a0["action"] != "insert" || a0["reason"] != "advisory published" || a1["who"] != "bob" || a1["action"] != "retract" || a1["reason"] != "wrong server" {
		t.Errorf("audit = %v", audit)
	}
	if n, a := f.stored(); n != 1 || a != 2 {
		t.Errorf("stored %d incidents, %d audit rows; want 1, 2", n, a)
	}
}

func TestOwnerBurstsRoute(t *testing.T) {
	f := newIncidentFixture(t, "")
	code, doc := f.do(http.MethodGet, "/v1/owner-bursts", "", "")
	if code != 200 {
		t.Fatalf("%d %v", code, doc)
	}
	ns := doc["namespaces"].([]any)
	if len(ns) != 1 || ns[0].(map[string]any)["namespace"] != "ai.burst" || ns[0].(map[string]any)["first_window_burst"] != true {
		t.Errorf("namespaces = %v", ns)
	}
	if doc["day"] != "2025-10-01" {
		t.Errorf("default day %v, want the newest the detector concluded", doc["day"])
	}
	// A day the detector concluded nothing on flags nothing.
	code, doc = f.do(http.MethodGet, "/v1/owner-bursts?day=2025-10-03", "", "")
	if code != 200 || len(doc["namespaces"].([]any)) != 0 || doc["day"] != "2025-10-03" {
		t.Errorf("two days later: %d %v", code, doc)
	}
	if code, _ := f.do(http.MethodGet, "/v1/owner-bursts?day=yesterday", "", ""); code != 422 {
		t.Errorf("a malformed day: %d, want 422", code)
	}
}
