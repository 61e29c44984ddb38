package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/forum-mcp/forum/api"
	"github.com/forum-mcp/forum/sql/duckdb"
)

// adminCounts reads forum_admin_requests_total by "route/outcome".
func adminCounts(t *testing.T, g prometheus.Gatherer) map[string]float64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "forum_admin_requests_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			out[l["route"]+"/"+l["outcome"]] += m.GetCounter().GetValue()
		}
	}
	return out
}

// auditRows reads admin_audit with SQL (route, outcome, remote,
// fingerprint, who, calls), newest first.
func auditRows(t *testing.T, s *duckdb.Store) [][]any {
	t.Helper()
	_, rows, err := s.Query(context.Background(), `SELECT route, outcome, remote, fingerprint, who, calls FROM admin_audit ORDER BY called_at DESC, id DESC`)
	if err != nil {
		t.Fatalf("admin_audit: %v", err)
	}
	return rows
}

func emptyStore(t *testing.T) *duckdb.Store {
	t.Helper()
	s, err := duckdb.Open(context.Background(), filepath.Join(t.TempDir(), "admin.duckdb"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAdminCallsAreAudited: every admin call, refused or accepted, leaves
// a log line (route, outcome, remote address, a fingerprint of the
// presented token, never the token), a row in admin_audit and an increment
// of forum_admin_requests_total{route,outcome}; GET /v1/admin/audit serves
// the rows to an admin and audits its own calls. A caller without a valid
// token is refused before its input is validated.
func TestAdminCallsAreAudited(t *testing.T) {
	s := emptyStore(t)
	core, logs := observer.New(zapcore.DebugLevel)
	reg := prometheus.NewRegistry()
	const good, wrong = "s3cret-admin-token", "guessed-token-1"
	srv := httptest.NewServer(api.NewServer(api.Config{Store: s, Tokens: api.ParseAdminTokens("alice:" + good), Registry: reg, Log: zap.New(core)}).Handler)
	defer srv.Close()

	for _, tc := range []struct {
		method, path, token, body string
		status                    int
		route, outcome            string
	}{
		{"POST", "/v1/admin/incidents", "", `{}`, 401, "insert-incident", "refused"},
		{"POST", "/v1/admin/incidents", wrong, `{}`, 401, "insert-incident", "refused"},
		{"POST", "/v1/admin/incidents", wrong, `not even json`, 401, "insert-incident", "refused"}, // refused before validation
		{"POST", "/v1/admin/incidents/inc-1/retract", wrong, `{"reason":"x"}`, 401, "retract-incident", "refused"},
		{"POST", "/v1/admin/reviews/a%2Fb/approve", wrong, `{"reason":"x"}`, 401, "approve-review", "refused"},
		{"GET", "/v1/admin/audit", wrong, "", 401, "admin-audit", "refused"},
		{"POST", "/v1/admin/incidents/%ff/retract", wrong, `{"reason":"x"}`, 400, "retract-incident", "malformed"},
		{"POST", "/v1/admin/reviews/a%2Fb/approve", good, `{"reason":"x"}`, 404, "approve-review", "rejected"},
		{"POST", "/v1/admin/incidents", good, `{}`, 422, "insert-incident", "rejected"},
		{"POST", "/v1/admin/incidents/inc-1/retract", good, `{"reason":"x"}`, 404, "retract-incident", "rejected"},
		{"GET", "/v1/admin/audit", good, "", 200, "admin-audit", "accepted"},
	} {
		status, _, b := rawRequest(t, srv, tc.method, tc.path, tc.token, tc.body)
		if status != tc.status {
			t.Errorf("%s %s (token %q): %d %s, want %d", tc.method, tc.path, tc.token, status, b, tc.status)
		}
	}

	// The log: one line per call, naming route, outcome, remote and fingerprint.
	type line struct{ route, outcome, remote, fp, who string }
	var lines []line
	for _, e := range logs.All() {
		for _, tok := range []string{good, wrong} {
			if strings.Contains(e.Message, tok) || strings.Contains(fmt.Sprint(e.ContextMap()), tok) {
				t.Errorf("a log line holds a presented token: %s %v", e.Message, e.ContextMap())
			}
		}
		m := e.ContextMap()
		if _, ok := m["token_fingerprint"]; !ok {
			continue
		}
		who, _ := m["who"].(string)
		lines = append(lines, line{fmt.Sprint(m["route"]), fmt.Sprint(m["outcome"]), fmt.Sprint(m["remote"]), fmt.Sprint(m["token_fingerprint"]), who})
	}
	if len(lines) != 11 {
		t.Fatalf("%d admin log lines for 11 calls: %+v", len(lines), lines)
	}
	fps := map[string]string{} // token → fingerprint
	hexFP := regexp.MustCompile(`^[0-9a-f]{12}$`)
	for i, l := range lines {
		tok := []string{"", wrong, wrong, wrong, wrong, wrong, wrong, good, good, good, good}[i]
		if l.remote != "127.0.0.1" {
			t.Errorf("line %d: remote %q", i, l.remote)
		}
		if tok == "" {
			if l.fp != "none" {
				t.Errorf("line %d: fingerprint %q without a token", i, l.fp)
			}
			continue
		}
		if !hexFP.MatchString(l.fp) {
			t.Errorf("line %d: fingerprint %q", i, l.fp)
		}
		if f, ok := fps[tok]; ok && f != l.fp {
			t.Errorf("line %d: the same token has fingerprints %s and %s", i, f, l.fp)
		}
		fps[tok] = l.fp
		if (tok == good) != (l.who == "alice") {
			t.Errorf("line %d: who %q for token %q", i, l.who, tok)
		}
	}
	if fps[good] == fps[wrong] {
		t.Error("two tokens share a fingerprint")
	}
	// Whoever holds the tokens can tell which one a fingerprint is.
	if f := api.AdminTokenFingerprint(api.ParseAdminTokens("alice:"+good), good); f != fps[good] {
		t.Errorf("AdminTokenFingerprint = %s, the log says %s", f, fps[good])
	}

	// The store: a row per call (the refused ones are one key each here).
	rows := auditRows(t, s)
	if len(rows) != 11 {
		t.Fatalf("%d admin_audit rows for 11 calls: %v", len(rows), rows)
	}
	for _, r := range rows {
		if fmt.Sprint(r[2]) != "127.0.0.1" || strings.Contains(fmt.Sprint(r), good) || strings.Contains(fmt.Sprint(r), wrong) {
			t.Errorf("row %v", r)
		}
	}

	// The metric.
	want := map[string]float64{"insert-incident/refused": 3, "retract-incident/refused": 1, "approve-review/refused": 1, "admin-audit/refused": 1,
		"retract-incident/malformed": 1, "approve-review/rejected": 1, "insert-incident/rejected": 1, "retract-incident/rejected": 1, "admin-audit/accepted": 1}
	if got := adminCounts(t, reg); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("forum_admin_requests_total = %v, want %v", got, want)
	}

	// The route serves them, newest first, to an admin only.
	var out struct {
		Entries []struct {
			Route, Outcome, Who, Fingerprint string
		} `json:"entries"`
	}
	get := func() {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+"/v1/admin/audit?limit=5", nil)
		req.Header.Set("Authorization", "Bearer "+good)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("GET /v1/admin/audit: %d", resp.StatusCode)
		}
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
	}
	get()
	if len(out.Entries) != 5 || out.Entries[0].Route != "admin-audit" || out.Entries[0].Outcome != "accepted" || out.Entries[0].Who != "alice" ||
		out.Entries[0].Fingerprint != fps[good] {
		t.Errorf("audit entries: %+v", out.Entries)
	}
	if n := len(auditRows(t, s)); n != 12 {
		t.Errorf("the audit route's own call: %d rows, want 12", n)
	}
}

// TestRefusedAdminCallsAreBounded: a burst of calls without a valid token
// leaves log lines and counts for every call, but a bounded number of
// rows: per (route, outcome, status, remote, fingerprint, minute) a row at
// the 1st, 2nd, 4th, … call; at most AdminFingerprintsPerRemote
// fingerprints per address and AdminRefusedKeysPerMinute keys per minute.
func TestRefusedAdminCallsAreBounded(t *testing.T) {
	s := emptyStore(t)
	core, logs := observer.New(zapcore.InfoLevel)
	reg := prometheus.NewRegistry()
	tokens := api.ParseAdminTokens("alice:s3cret")
	now := time.Date(2025, 11, 1, 12, 0, 30, 0, time.UTC)
	h, _ := api.New(api.Options{Store: s, AdminAudit: s, Registerer: reg, Log: zap.New(core), Now: func() time.Time { return now },
		Routes: []func(huma.API){api.AdminRoutes(api.AdminOptions{Tokens: tokens, Store: s})}})
	call := func(remote, token string) {
		req := httptest.NewRequest("GET", "/v1/admin/audit", nil)
		req.RemoteAddr = remote + ":40000"
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if want := 401; token == "s3cret" {
			if rec.Code != 200 {
				t.Fatalf("an admin call: %d", rec.Code)
			}
		} else if rec.Code != want {
			t.Fatalf("a refused call: %d", rec.Code)
		}
	}
	rowsNow := func() int { return len(auditRows(t, s)) }

	// One address, one wrong token, 1000 times: rows at 1, 2, 4, …, 512.
	for range 1000 {
		call("192.0.2.1", "guess")
	}
	if n := rowsNow(); n != 10 {
		t.Errorf("one key, 1000 calls: %d rows, want 10", n)
	}
	top := auditRows(t, s)[0]
	_, rs, _ := s.Query(context.Background(), `SELECT max(calls) FROM admin_audit`)
	if fmt.Sprint(rs[0][0]) != "512" || fmt.Sprint(top[2]) != "192.0.2.1" {
		t.Errorf("largest count %v (want 512), newest row %v", rs[0][0], top)
	}

	// One address guessing 1000 tokens: 4 keys of their own (the first one
	// exists), then fingerprint "*".
	for i := range 1000 {
		call("192.0.2.2", fmt.Sprintf("guess-%d", i))
	}
	if n := rowsNow(); n != 10+4+10 { // 4 fingerprints at 1 call, then 996 calls under "*"
		t.Errorf("one address, 1000 tokens: %d rows, want 24", n)
	}

	// 1000 addresses, one call each: up to 100 keys a minute (6 are taken
	// by the calls above: 1 + 4 + the "*" of 192.0.2.2), then remote "*".
	for i := range 1000 {
		call(fmt.Sprintf("198.51.100.%d", i%250)+fmt.Sprintf("-%d", i/250), "guess")
	}
	if n := rowsNow(); n != 24+94+10 { // 94 keys at 1 call, then 906 calls under "*"
		t.Errorf("1000 addresses: %d rows, want 128", n)
	}

	// The next minute starts over; authorized calls are each a row.
	now = now.Add(time.Minute)
	call("192.0.2.1", "guess")
	call("192.0.2.1", "s3cret")
	call("192.0.2.1", "s3cret")
	if n := rowsNow(); n != 128+3 {
		t.Errorf("next minute: %d rows, want 131", n)
	}
	if got := adminCounts(t, reg); got["admin-audit/refused"] != 3001 || got["admin-audit/accepted"] != 2 {
		t.Errorf("forum_admin_requests_total = %v", got)
	}
	if n := logs.FilterMessage("admin call refused").Len(); n != 3001 {
		t.Errorf("%d refusal log lines for 3001 refused calls", n)
	}
}
