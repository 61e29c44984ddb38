package api_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
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
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/processors/publish"
	"github.com/forum-mcp/forum/processors/scorer"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/duckdb"
	"github.com/forum-mcp/forum/sql/store"
)

var trustAt = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// trustServer stores a scored publication of a generated population, one
// health check and one drift event, and serves the trust routes over it.
func trustServer(t *testing.T) (*httptest.Server, *scorer.Sealed, ed25519.PrivateKey) {
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
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{3}, 32))
	g := scorer.Generate(30, 5, trustAt)
	meta := scorer.Meta{PublicationID: scorer.PublicationID(trustAt), ComputedAt: trustAt}
	sealed, err := scorer.Seal(scorer.Compute(g.Inputs, g.Sources, meta, nil), meta, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := scorer.Publish(ctx, scorer.StoreOutput{W: s}, nil, sealed); err != nil {
		t.Fatal(err)
	}
	var rows []store.HealthCheck
	for _, in := range g.Inputs {
		for i := range in.Checks {
			rows = append(rows, history.HealthRow(&in.Checks[i], nil))
		}
	}
	if err := s.InsertHealthChecks(ctx, rows); err != nil {
		t.Fatal(err)
	}
	ev := schema.DriftEvent{ID: "ev-1", Server: scorer.PlantedTunnel, Namespace: schema.Namespace(scorer.PlantedTunnel), Kind: schema.KindEndpointsChanged, ObservedAt: trustAt.Add(-time.Hour)}
	if err := s.InsertEvents(ctx, []schema.DriftEvent{ev}); err != nil {
		t.Fatal(err)
	}
	// A curated incident, as the history sink stores it: its id resolves.
	if err := s.InsertIncidents(ctx, []store.Incident{{ID: "inc-1", Server: scorer.PlantedSecret, Date: trustAt, Class: "credential_theft",
		Severity: "high", Status: "confirmed", SourceURI: "https://example.com/inc-1", Curator: "test", UpdatedAt: trustAt}}); err != nil {
		t.Fatal(err)
	}
	h, _ := api.New(api.Options{Store: s, Routes: []func(huma.API){api.TrustRoutes(api.TrustOptions{Store: s, PublicKey: key.Public().(ed25519.PublicKey), Now: func() time.Time { return trustAt }})}})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, sealed, key
}

func TestTrustRoutes(t *testing.T) {
	srv, sealed, key := trustServer(t)
	name := scorer.PlantedPoisoning
	esc := url.PathEscape(name)

	var tr struct {
		Server        string          `json:"server"`
		PublicationID string          `json:"publication_id"`
		Record        json.RawMessage `json:"record"`
		Held          bool            `json:"held"`
	}
	get(t, srv, "/v1/servers/"+esc+"/trust", 200, &tr)
	if tr.Server != name || tr.PublicationID != sealed.Row.ID || tr.Held {
		t.Fatalf("trust: %+v", tr)
	}
	var rec scorer.Record
	if err := json.Unmarshal(tr.Record, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Band != "D" || rec.Static.Value == nil || len(rec.StaticScan.Findings) == 0 {
		t.Errorf("the poisoned server's record: band %s static %v findings %d", rec.Band, rec.Static.Value, len(rec.StaticScan.Findings))
	}
	if sum, err := publish.ContentSHA256([]byte(tr.Record)); err != nil || sum != rec.ContentSHA256 {
		t.Errorf("the served record's content hash does not re-derive: %s vs %s (%v)", sum, rec.ContentSHA256, err)
	}
	get(t, srv, "/v1/servers/"+url.PathEscape("nobody/here")+"/trust", 404, nil)

	// The proof checks against the signed root.
	var pr struct {
		LeafIndex   int                   `json:"leaf_index"`
		TreeSize    int                   `json:"tree_size"`
		AuditPath   []string              `json:"audit_path"`
		Publication api.PublicationHeader `json:"publication"`
		Record      json.RawMessage       `json:"record"`
	}
	get(t, srv, "/v1/servers/"+esc+"/proof", 200, &pr)
	path := make([][]byte, len(pr.AuditPath))
	for i, h := range pr.AuditPath {
		path[i], _ = hex.DecodeString(h)
	}
	if err := publish.VerifyRecordInclusion(pr.Record, pr.LeafIndex, pr.TreeSize, path, pr.Publication.MerkleRoot); err != nil {
		t.Errorf("inclusion proof: %v", err)
	}
	sig, _ := base64.StdEncoding.DecodeString(pr.Publication.Signature)
	if err := publish.VerifyHeader(pr.Publication.SignedHeader, sig, key.Public().(ed25519.PublicKey)); err != nil {
		t.Errorf("the served header's signature: %v", err)
	}

	var pubs struct {
		Publications []api.PublicationHeader `json:"publications"`
	}
	get(t, srv, "/v1/publications", 200, &pubs)
	if len(pubs.Publications) != 1 || pubs.Publications[0].MerkleRoot != sealed.Row.MerkleRoot || pubs.Publications[0].RecordCount != len(sealed.Records) {
		t.Errorf("publications: %+v", pubs)
	}
	var one api.PublicationHeader
	get(t, srv, "/v1/publications/latest", 200, &one)
	get(t, srv, "/v1/publications/"+sealed.Row.ID, 200, &one)
	if one.PublicationID != sealed.Row.ID {
		t.Errorf("publication: %+v", one)
	}
	get(t, srv, "/v1/publications/nope", 404, nil)

	var m struct {
		MethodVersion string          `json:"method_version"`
		WeightsSHA256 string          `json:"weights_sha256"`
		Weights       json.RawMessage `json:"weights"`
		Changelog     []any           `json:"changelog"`
	}
	get(t, srv, "/v1/method", 200, &m)
	if m.MethodVersion != method.Embedded().Version() || m.WeightsSHA256 != method.Embedded().SHA256 || len(m.Changelog) == 0 || len(m.Weights) == 0 {
		t.Errorf("method: %s %s %d", m.MethodVersion, m.WeightsSHA256, len(m.Changelog))
	}

	var keys struct {
		Keys []api.Key `json:"keys"`
	}
	get(t, srv, "/v1/keys", 200, &keys)
	if len(keys.Keys) != 1 || keys.Keys[0].KeyID != sealed.Row.KeyID {
		t.Fatalf("keys: %+v", keys)
	}
	if pub, err := scorer.ParsePublicKey([]byte(keys.Keys[0].PEM)); err != nil || !pub.Equal(key.Public()) {
		t.Errorf("served PEM: %v", err)
	}

	// Every evidence pointer of the record resolves.
	type evOut struct {
		Kind   string          `json:"kind"`
		Server string          `json:"server"`
		Data   json.RawMessage `json:"data"`
	}
	for _, e := range rec.Static.Evidence {
		var out evOut
		get(t, srv, e.URI, 200, &out)
		if out.Kind != "scan_finding" || out.Server != name {
			t.Errorf("evidence %s: %+v", e.ID, out)
		}
	}
	if len(rec.Health) != 1 {
		t.Fatalf("health evidence: %+v", rec.Health)
	}
	for _, e := range rec.Health {
		var out evOut
		get(t, srv, e.URI, 200, &out)
		if out.Kind != "health_check" || out.Server != name || !json.Valid(out.Data) {
			t.Errorf("health check evidence %s: %+v", e.ID, out)
		}
	}
	var de evOut
	get(t, srv, "/v1/evidence/ev-1", 200, &de)
	if de.Kind != "registry_event" || de.Server != scorer.PlantedTunnel {
		t.Errorf("drift event evidence: %+v", de)
	}
	var inc evOut
	get(t, srv, "/v1/evidence/inc-1", 200, &inc)
	if inc.Kind != "incident" || inc.Server != scorer.PlantedSecret {
		t.Errorf("incident evidence: %+v", inc)
	}
	get(t, srv, "/v1/evidence/nope", 404, nil)
	get(t, srv, "/v1/evidence/"+url.PathEscape("scan:"+name+":0000"), 404, nil)
}

// TestTrustRoutesWithoutStore: the routes register with zero options (the
// OpenAPI document is complete) and data routes answer 503.
func TestTrustRoutesWithoutStore(t *testing.T) {
	h, _ := api.New(api.Options{Store: nil, Routes: []func(huma.API){api.TrustRoutes(api.TrustOptions{})}})
	srv := httptest.NewServer(h)
	defer srv.Close()
	get(t, srv, "/v1/publications", 503, nil)
	get(t, srv, "/v1/method", 200, nil)
	var keys struct {
		Keys []api.Key `json:"keys"`
	}
	get(t, srv, "/v1/keys", 200, &keys)
	if len(keys.Keys) != 0 {
		t.Errorf("keys without a key: %+v", keys)
	}
}

// TestTrustServesThePreviousRecordWhileHeld: a record held for popular-server
// review is not served until the hold ends; the previous one is, marked.
func TestTrustServesThePreviousRecordWhileHeld(t *testing.T) {
	ctx := context.Background()
	s, err := duckdb.Open(ctx, filepath.Join(t.TempDir(), "api.duckdb"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	const name = "io.github.big/popular"
	t0 := trustAt.Add(-time.Hour)
	old := `{"band":"A","publication_id":"p0","server":"` + name + `"}`
	held := `{"band":"D","publication_id":"p1","review_pending":{"previous_band":"A","previous_publication_id":"p0","stars":5000,"until":"` +
		trustAt.Add(23*time.Hour).Format(time.RFC3339) + `"},"server":"` + name + `"}`
	for _, p := range []struct {
		id, rec string
		at      time.Time
	}{{"p0", old, t0}, {"p1", held, trustAt}} {
		if err := s.InsertTrustRecords(ctx, []store.TrustRecord{{Server: name, PublicationID: p.id, ComputedAt: p.at, Band: "x", Record: p.rec}}); err != nil {
			t.Fatal(err)
		}
		if err := s.InsertPublication(ctx, store.Publication{ID: p.id, RecordCount: 1, ComputedAt: p.at}); err != nil {
			t.Fatal(err)
		}
	}
	serve := func(now time.Time) (out struct {
		PublicationID string          `json:"publication_id"`
		Record        json.RawMessage `json:"record"`
		Held          bool            `json:"held"`
		Pending       json.RawMessage `json:"pending"`
	}) {
		h, _ := api.New(api.Options{Store: s, Routes: []func(huma.API){api.TrustRoutes(api.TrustOptions{Store: s, Now: func() time.Time { return now }})}})
		srv := httptest.NewServer(h)
		defer srv.Close()
		get(t, srv, "/v1/servers/"+url.PathEscape(name)+"/trust", 200, &out)
		return out
	}
	during := serve(trustAt.Add(time.Hour))
	if !during.Held || during.PublicationID != "p0" || string(during.Record) != old || string(during.Pending) != held {
		t.Errorf("during the hold: %+v", during)
	}
	after := serve(trustAt.Add(25 * time.Hour))
	if after.Held || after.PublicationID != "p1" || string(after.Record) != held {
		t.Errorf("after the hold: %+v", after)
	}
}

// heldStore stores two publications of one popular server: p0 (band A) and
// p1, whose record dropped to D and is held for review until trustAt+23h.
func heldStore(t *testing.T) (s *duckdb.Store, name, old, held string) {
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
	name = "io.github.big/popular"
	old = `{"band":"A","publication_id":"p0","server":"` + name + `"}`
	held = `{"band":"D","publication_id":"p1","review_pending":{"previous_band":"A","previous_publication_id":"p0","stars":5000,"until":"` +
		trustAt.Add(23*time.Hour).Format(time.RFC3339) + `"},"server":"` + name + `"}`
	for _, p := range []struct {
		id, band, rec string
		at            time.Time
	}{{"p0", "A", old, trustAt.Add(-time.Hour)}, {"p1", "D", held, trustAt}} {
		if err := s.InsertTrustRecords(ctx, []store.TrustRecord{{Server: name, PublicationID: p.id, ComputedAt: p.at, Band: p.band, Record: p.rec}}); err != nil {
			t.Fatal(err)
		}
		if err := s.InsertPublication(ctx, store.Publication{ID: p.id, RecordCount: 1, ComputedAt: p.at}); err != nil {
			t.Fatal(err)
		}
	}
	return s, name, old, held
}

type servedTrust struct {
	PublicationID string              `json:"publication_id"`
	Record        json.RawMessage     `json:"record"`
	Held          bool                `json:"held"`
	Pending       json.RawMessage     `json:"pending"`
	Approval      *api.ReviewApproval `json:"approval"`
}

// call sends one request to h and decodes the JSON answer into into (when
// not nil); it returns the status and the raw body.
func call(t *testing.T, h http.Handler, method, path, token, body string, into any) (int, string) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if into != nil && rec.Code < 300 {
		if err := json.Unmarshal(rec.Body.Bytes(), into); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, rec.Body.String())
		}
	}
	return rec.Code, rec.Body.String()
}

// TestReviewApproval: POST /v1/admin/reviews/{name}/approve ends a
// popular-server review hold (SPEC §4): GET trust then serves the held
// record as current, with the approval; every refusal names its reason.
func TestReviewApproval(t *testing.T) {
	s, name, old, held := heldStore(t)
	now := trustAt.Add(time.Hour)
	handler := func(o api.TrustOptions) http.Handler {
		o.Store = s
		if o.Now == nil {
			o.Now = func() time.Time { return now }
		}
		h, _ := api.New(api.Options{Store: s, Routes: []func(huma.API){api.TrustRoutes(o)}})
		return h
	}
	h := handler(api.TrustOptions{Reviews: s, Tokens: api.ParseAdminTokens("alice:tok-a,bob:tok-b")})
	approve := "/v1/admin/reviews/" + url.PathEscape(name) + "/approve"
	trustPath := "/v1/servers/" + url.PathEscape(name) + "/trust"
	ok := `{"reason":"maintainer rotated keys; drop confirmed by hand"}`

	var before servedTrust
	call(t, h, http.MethodGet, trustPath, "", "", &before)
	if !before.Held || before.PublicationID != "p0" || string(before.Record) != old || before.Approval != nil {
		t.Fatalf("before the approval: %+v", before)
	}

	for _, tc := range []struct {
		name, token, path, body string
		h                       http.Handler
		status                  int
		says                    string
	}{
		{"no tokens configured", "tok-a", approve, ok, handler(api.TrustOptions{Reviews: s}), 503, "no admin token"},
		{"no review store", "tok-a", approve, ok, handler(api.TrustOptions{Tokens: api.ParseAdminTokens("tok-a")}), 503, "no review store"},
		{"missing token", "", approve, ok, h, 401, "bearer token is required"},
		{"wrong token", "tok-x", approve, ok, h, 401, "not valid"},
		{"no reason", "tok-a", approve, `{}`, h, 422, "reason"},
		{"blank reason", "tok-a", approve, `{"reason":"  "}`, h, 422, "reason is required"},
		{"unknown server", "tok-a", "/v1/admin/reviews/" + url.PathEscape("nobody/here") + "/approve", ok, h, 404, "no published record for nobody/here"},
		{"unknown publication", "tok-a", approve, `{"publication_id":"nope","reason":"x"}`, h, 404, "no publication nope"},
		{"server not in the publication", "tok-a", "/v1/admin/reviews/" + url.PathEscape("other/one") + "/approve", `{"publication_id":"p1","reason":"x"}`, h, 404, "holds no record for other/one"},
		{"record not held", "tok-a", approve, `{"publication_id":"p0","reason":"x"}`, h, 409, "is not held for review"},
		{"hold already ended", "tok-a", approve, ok, handler(api.TrustOptions{Reviews: s, Tokens: api.ParseAdminTokens("alice:tok-a"),
			Now: func() time.Time { return trustAt.Add(25 * time.Hour) }}), 409, "already ended"},
	} {
		status, body := call(t, tc.h, http.MethodPost, tc.path, tc.token, tc.body, nil)
		if status != tc.status || !strings.Contains(body, tc.says) {
			t.Errorf("%s: %d %s, want %d saying %q", tc.name, status, body, tc.status, tc.says)
		}
	}
	if _, err := s.ReviewApproval(context.Background(), name, "p1"); err == nil {
		t.Fatal("a refused request stored an approval")
	}
	var still servedTrust
	call(t, h, http.MethodGet, trustPath, "", "", &still)
	if !still.Held || still.PublicationID != "p0" {
		t.Fatalf("refusals must not end the hold: %+v", still)
	}

	var res struct {
		Server        string                `json:"server"`
		PublicationID string                `json:"publication_id"`
		ReviewPending *scorer.ReviewPending `json:"review_pending"`
		Approval      api.ReviewApproval    `json:"approval"`
		Note          string                `json:"note"`
	}
	if status, body := call(t, h, http.MethodPost, approve, "tok-a", ok, &res); status != 200 {
		t.Fatalf("approve: %d %s", status, body)
	}
	want := api.ReviewApproval{Server: name, PublicationID: "p1", Who: "alice", Reason: "maintainer rotated keys; drop confirmed by hand", ApprovedAt: now}
	if res.Server != name || res.PublicationID != "p1" || res.Approval != want || res.ReviewPending == nil || res.ReviewPending.PreviousBand != "A" {
		t.Fatalf("approve: %+v", res)
	}

	var after servedTrust
	call(t, h, http.MethodGet, trustPath, "", "", &after)
	if after.Held || after.PublicationID != "p1" || string(after.Record) != held || after.Pending != nil || after.Approval == nil || *after.Approval != want {
		t.Errorf("after the approval: %+v", after)
	}
	// Without a review store the approval is not seen: the hold runs on.
	var blind servedTrust
	call(t, handler(api.TrustOptions{}), http.MethodGet, trustPath, "", "", &blind)
	if !blind.Held || blind.PublicationID != "p0" {
		t.Errorf("without Reviews: %+v", blind)
	}

	// Approving again (another admin, explicit publication) keeps the first approval.
	var again struct {
		Approval api.ReviewApproval `json:"approval"`
		Note     string             `json:"note"`
	}
	if status, body := call(t, h, http.MethodPost, approve, "tok-b", `{"publication_id":"p1","reason":"second look"}`, &again); status != 200 {
		t.Fatalf("approve again: %d %s", status, body)
	}
	if again.Approval != want || !strings.Contains(again.Note, "already approved") {
		t.Errorf("approve again: %+v", again)
	}
}

// TestTrustReadModelMatchesTheStore pins the read model of GET
// /v1/servers/{name}/trust to the store path it replaces: byte-identical
// bodies for every record of a scored publication and for a held record
// during its hold, after it, and once approved; 404 for an unknown name.
func TestTrustReadModelMatchesTheStore(t *testing.T) {
	ctx := context.Background()
	s, err := duckdb.Open(ctx, filepath.Join(t.TempDir(), "api.duckdb"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	g := scorer.Generate(30, 5, trustAt)
	meta := scorer.Meta{PublicationID: scorer.PublicationID(trustAt), ComputedAt: trustAt}
	sealed, err := scorer.Seal(scorer.Compute(g.Inputs, g.Sources, meta, nil), meta, ed25519.NewKeyFromSeed(bytes.Repeat([]byte{3}, 32)))
	if err != nil {
		t.Fatal(err)
	}
	if err := scorer.Publish(ctx, scorer.StoreOutput{W: s}, nil, sealed); err != nil {
		t.Fatal(err)
	}
	held, name, _, _ := heldStore(t)
	tests := []struct {
		name  string
		st    *duckdb.Store
		now   time.Time
		paths []string
		admit bool // approve the held record first
	}{
		{"every record of a publication", s, trustAt, nil, false},
		{"held, during the hold", held, trustAt.Add(time.Hour), []string{name}, false},
		{"held, after the hold", held, trustAt.Add(25 * time.Hour), []string{name}, false},
		{"held and approved", held, trustAt.Add(time.Hour), []string{name}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			paths := tc.paths
			if paths == nil {
				for _, r := range sealed.Records {
					paths = append(paths, r.Server)
				}
			}
			paths = append(paths, "nobody/here")
			if tc.admit {
				if err := tc.st.InsertReviewApproval(ctx, store.ReviewApproval{Server: name, PublicationID: "p1", Who: "ops", Reason: "ok", ApprovedAt: trustAt}); err != nil {
					t.Fatal(err)
				}
			}
			model := api.NewTrustModel(tc.st, nil)
			if err := model.Refresh(ctx); err != nil {
				t.Fatal(err)
			}
			now := func() time.Time { return tc.now }
			fromModel, _ := api.New(api.Options{Store: tc.st, NoReadModel: true, Routes: []func(huma.API){api.TrustRoutes(api.TrustOptions{Store: tc.st, Reviews: tc.st, Now: now, Model: model})}})
			fromStore, _ := api.New(api.Options{Store: tc.st, NoReadModel: true, Routes: []func(huma.API){api.TrustRoutes(api.TrustOptions{Store: tc.st, Reviews: tc.st, Now: now, NoReadModel: true})}})
			for _, n := range paths {
				p := "/v1/servers/" + url.PathEscape(n) + "/trust"
				ca, a := call(t, fromModel, http.MethodGet, p, "", "", nil)
				cb, b := call(t, fromStore, http.MethodGet, p, "", "", nil)
				if ca != cb || a != b {
					t.Fatalf("%s: the model answers %d\n%s\nthe store %d\n%s", n, ca, a, cb, b)
				}
			}
		})
	}
}
