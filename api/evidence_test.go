package api_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap/zaptest"

	"github.com/forum-mcp/forum/api"
	"github.com/forum-mcp/forum/ingest/differ"
	"github.com/forum-mcp/forum/ingest/probe"
	"github.com/forum-mcp/forum/ingest/registry"
	"github.com/forum-mcp/forum/processors/drift"
	"github.com/forum-mcp/forum/processors/history"
	"github.com/forum-mcp/forum/processors/incidents"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/processors/scorer"
	"github.com/forum-mcp/forum/processors/trust"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/duckdb"
	"github.com/forum-mcp/forum/sql/store"
)

// driftAsOf is the drift processor's state read as of the publication
// being computed (what its output topic holds at that time).
type driftAsOf struct {
	st *drift.State
	at time.Time
}

func (d *driftAsOf) DriftInput(server string) trust.DriftInput { return d.st.InputAsOf(server, d.at) }

// storedGitHub serves the GitHub observations the test stored, as the
// provenance processor's signal carries them.
type storedGitHub map[string]schema.GitHubObservation // repo key -> observation

func (g storedGitHub) GitHub(_, repoURL string) (scorer.GitHubObservation, bool) {
	key, _, _, ok := schema.GitHubRepoKey(repoURL)
	if o, found := g[key]; ok && found {
		return scorer.ObservationOf(o), true
	}
	return scorer.GitHubObservation{}, false
}

func (storedGitHub) GateOpen(time.Time) bool { return false }

// entryAt is a registry ServerResponse as the crawler parses it.
func entryAt(t *testing.T, name, version, desc, repo, remote string, latest bool, published time.Time) schema.Entry {
	t.Helper()
	raw, err := json.Marshal(map[string]any{
		"server": map[string]any{
			"name": name, "description": desc, "version": version,
			"repository": map[string]any{"url": repo, "source": "github"},
			"remotes":    []map[string]any{{"type": "streamable-http", "url": remote}},
		},
		"_meta": map[string]any{registry.OfficialMetaKey: map[string]any{
			"status": "active", "publishedAt": published, "updatedAt": published, "isLatest": latest}},
	})
	if err != nil {
		t.Fatal(err)
	}
	e, err := registry.ParseEntry(raw)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// pointer is one evidence pointer found in a stored record.
type pointer struct {
	Kind, ID, URI, Publication, Server string
}

// pointers collects every evidence pointer of a record: every JSON object
// with an evidence kind, an id and an observed_at, wherever it sits.
func pointers(v any, pub, server string, out *[]pointer) {
	switch x := v.(type) {
	case map[string]any:
		kind, _ := x["kind"].(string)
		id, _ := x["id"].(string)
		_, at := x["observed_at"]
		switch kind {
		case trust.EvHealthCheck, trust.EvRegistryEvent, trust.EvGitHubRepo, trust.EvScanFinding, trust.EvIncident:
			if id != "" && at {
				uri, _ := x["uri"].(string)
				*out = append(*out, pointer{Kind: kind, ID: id, URI: uri, Publication: pub, Server: server})
			}
		}
		for _, c := range x {
			pointers(c, pub, server, out)
		}
	case []any:
		for _, c := range x {
			pointers(c, pub, server, out)
		}
	}
}

// TestEveryEvidencePointerOfEveryPublicationResolves is SPEC §5's promise
// over a history: three publications of real go-sdk MCP servers probed over
// loopback, re-probed between publications (so each publication points at
// its own checks and scan findings), with registry drift, a GitHub
// observation and a curated incident. Afterwards every evidence pointer of
// every stored publication — the oldest included — resolves through
// GET /v1/evidence/{id} to an observation of its kind.
func TestEveryEvidencePointerOfEveryPublicationResolves(t *testing.T) {
	ctx := context.Background()
	w := method.Embedded().Weights
	const (
		poisoned = "io.github.quillcraft/notes-sync"
		clean    = "io.github.inkwell/notes-keeper"
	)
	poisonedURL := notesServer(t, poisonedDescription, "List the saved notes, newest first, optionally filtered by words.")
	// The clean server's listener is closed before the last probe: its
	// remote becomes unreachable.
	cleanSrv := httptest.NewServer(notesHandler("Save a note to the user's notebook with a title and a body.", "List the saved notes, newest first."))
	t.Cleanup(cleanSrv.Close)
	cleanURL := cleanSrv.URL + "/mcp"
	repos := map[string]string{poisoned: "https://github.com/quillcraft/notes-sync", clean: "https://github.com/inkwell/notes-keeper"}
	urls := map[string]string{poisoned: poisonedURL, clean: cleanURL}

	s, err := duckdb.Open(ctx, filepath.Join(t.TempDir(), "evidence.duckdb"), zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}

	// Two registry snapshots: the baseline, then the poisoned server's new
	// version with a new description (and its old latest re-observed as
	// not latest). The differ's events go to the store and the drift state.
	base := trustAt.Add(-72 * time.Hour)
	snaps := []struct {
		at      time.Time
		entries []schema.Entry
	}{
		{base, []schema.Entry{
			entryAt(t, poisoned, "1.4.0", "Sync your notes across devices", repos[poisoned], urls[poisoned], true, base.Add(-60*24*time.Hour)),
			entryAt(t, clean, "2.0.0", "Keep notes in a private notebook with fast search", repos[clean], urls[clean], true, base.Add(-90*24*time.Hour)),
		}},
		{base.Add(24 * time.Hour), []schema.Entry{
			entryAt(t, poisoned, "1.4.0", "Sync your notes across devices", repos[poisoned], urls[poisoned], false, base.Add(-60*24*time.Hour)),
			entryAt(t, poisoned, "1.5.0", "Sync and search your notes across all devices", repos[poisoned], urls[poisoned], true, base.Add(23*time.Hour)),
			entryAt(t, clean, "2.0.0", "Keep notes in a private notebook with fast search", repos[clean], urls[clean], true, base.Add(-90*24*time.Hour)),
		}},
	}
	driftState := drift.NewStateWith(w)
	known := differ.NewState()
	for i, sn := range snaps {
		id := registry.SnapshotID(sn.at)
		res := differ.Diff(known, differ.Snapshot{ID: id, Mode: schema.ModeFull, ObservedAt: sn.at, Entries: sn.entries}, differ.Options{})
		known = res.Next
		var recs []store.Record
		for j := range sn.entries {
			recs = append(recs, store.RecordFromEntry(&sn.entries[j], id, sn.at))
		}
		if err := s.InsertRecords(ctx, recs); err != nil {
			t.Fatal(err)
		}
		if err := s.InsertEvents(ctx, res.Events); err != nil {
			t.Fatal(err)
		}
		driftState.Apply(res.Events...)
		if i == 1 && len(res.Events) == 0 {
			t.Fatal("the second snapshot gave no drift events")
		}
	}

	// A curated incident of the clean server, stored as the history sink
	// stores it and applied to the incidents processor's state.
	inc := schema.Incident{ID: incidents.IncidentID(clean, base, "vulnerability", "https://example.com/advisory"), Server: clean, Date: base,
		Class: "vulnerability", Severity: "low", Status: "confirmed", SourceURI: "https://example.com/advisory", Curator: "test", UpdatedAt: base}
	if err := s.InsertIncidents(ctx, []store.Incident{incidents.Row(inc)}); err != nil {
		t.Fatal(err)
	}
	incState := incidents.NewState()
	incState.Apply(schema.IncidentMsg{Incident: inc})
	incState.MarkLoaded()

	// A GitHub observation of the poisoned server's repository.
	key, owner, _, _ := schema.GitHubRepoKey(repos[poisoned])
	obs := schema.GitHubObservation{ID: schema.GitHubObservationID(key, base), Repo: key, ObservedAt: base, Status: schema.StatusResolved, HTTPStatus: 200,
		FullName: "quillcraft/notes-sync", OwnerLogin: owner, CreatedAt: base.Add(-400 * 24 * time.Hour), PushedAt: base.Add(-24 * time.Hour), Stars: 12, LicenseSPDX: "MIT"}
	if err := s.InsertProvenance(ctx, []store.Provenance{history.ProvenanceRow(w, obs)}); err != nil {
		t.Fatal(err)
	}

	keyPair := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32))
	da := &driftAsOf{st: driftState}
	st := &scorer.Stage{Store: s, Out: scorer.StoreOutput{W: s}, Key: keyPair, Log: zaptest.NewLogger(t),
		Sources: scorer.Sources{Drift: da, Incidents: incState, Provenance: storedGitHub{key: obs}}}

	// Three publications, each after a fresh probe of every remote; the
	// clean server's endpoint is gone before the third.
	var pubIDs []string
	for i, at := range []time.Time{trustAt.Add(-2 * time.Hour), trustAt.Add(-time.Hour), trustAt} {
		ran := at.Add(-10 * time.Minute)
		p := probe.New(probe.WithAllow(netip.MustParsePrefix("127.0.0.0/8")), probe.WithLogger(zaptest.NewLogger(t)),
			probe.WithClock(func() time.Time { return ran }))
		if i == 2 {
			cleanSrv.CloseClientConnections()
			cleanSrv.Close()
		}
		var rows []store.HealthCheck
		for _, name := range []string{poisoned, clean} {
			pctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			c := p.Probe(pctx, probe.Request{Server: name, URL: urls[name], Transport: "streamable-http", ObservedAt: ran.Truncate(time.Minute)})
			cancel()
			if want := map[bool]probe.Outcome{true: probe.OutcomeUnreachable, false: probe.OutcomeOK}[i == 2 && name == clean]; c.Outcome != want {
				t.Fatalf("probe %d of %s: %s (%s), want %s", i+1, name, c.Outcome, c.ErrorMessage, want)
			}
			rows = append(rows, history.HealthRow(&c, nil))
		}
		p.Close()
		if err := s.InsertHealthChecks(ctx, rows); err != nil {
			t.Fatal(err)
		}
		da.at = at
		pub, err := st.PublishAt(ctx, at, false)
		if err != nil {
			t.Fatal(err)
		}
		pubIDs = append(pubIDs, pub.ID)
	}

	h, _ := api.New(api.Options{Store: s, Routes: []func(huma.API){
		api.TrustRoutes(api.TrustOptions{Store: s, PublicKey: keyPair.Public().(ed25519.PublicKey), Now: func() time.Time { return trustAt }}),
	}})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	stored, err := s.Publications(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != 3 {
		t.Fatalf("%d stored publications, want 3 (%v)", len(stored), pubIDs)
	}
	var all []pointer
	for _, p := range stored {
		recs, err := s.PublicationRecords(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			var v any
			if err := json.Unmarshal([]byte(r.Record), &v); err != nil {
				t.Fatal(err)
			}
			pointers(v, p.ID, r.Server, &all)
		}
	}
	kinds := map[string]int{}
	ids := map[string]bool{}
	perPub := map[string]map[string]bool{} // publication -> scan finding and check ids
	for _, p := range all {
		kinds[p.Kind]++
		if p.URI != "" && p.URI != schema.EvidenceURI(p.ID) {
			t.Errorf("%s %s in %s: uri %q, want %q", p.Kind, p.ID, p.Publication, p.URI, schema.EvidenceURI(p.ID))
		}
		if p.Kind == trust.EvScanFinding || p.Kind == trust.EvHealthCheck {
			if perPub[p.Publication] == nil {
				perPub[p.Publication] = map[string]bool{}
			}
			perPub[p.Publication][p.ID] = true
		}
		if ids[p.Kind+" "+p.ID] {
			continue // resolved already
		}
		ids[p.Kind+" "+p.ID] = true
		resp, err := http.Get(srv.URL + schema.EvidenceURI(p.ID))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var got struct {
			Kind string `json:"kind"`
			ID   string `json:"id"`
		}
		_ = json.Unmarshal(b, &got)
		if resp.StatusCode != http.StatusOK || got.Kind != p.Kind || got.ID != p.ID {
			t.Errorf("%s pointer %s of %s in %s: GET = %d, kind %q: %s", p.Kind, p.ID, p.Server, p.Publication, resp.StatusCode, got.Kind, b)
		}
	}
	for _, k := range []string{trust.EvHealthCheck, trust.EvRegistryEvent, trust.EvGitHubRepo, trust.EvScanFinding, trust.EvIncident} {
		if kinds[k] == 0 {
			t.Errorf("no %s pointer in any publication: the test covers less than it says (%v)", k, kinds)
		}
	}
	// The publications point at different observations: the re-probes gave
	// new checks and new scan findings, so the oldest publication's
	// pointers are its own.
	for i := 1; i < len(pubIDs); i++ {
		a, b := perPub[pubIDs[i-1]], perPub[pubIDs[i]]
		for id := range a {
			if b[id] {
				t.Errorf("%s and %s share the pointer %s: the re-probe gave nothing new", pubIDs[i-1], pubIDs[i], id)
			}
		}
	}
	sorted := make([]string, 0, len(kinds))
	for k, n := range kinds {
		sorted = append(sorted, fmt.Sprintf("%s=%d", k, n))
	}
	sort.Strings(sorted)
	t.Logf("%d pointers (%d distinct) over %d publications: %v", len(all), len(ids), len(stored), sorted)
}

// notesHandler is notesServer's MCP handler, for a test that closes the
// listener itself.
func notesHandler(saveDesc, listDesc string) http.Handler {
	s := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "save_note", Description: saveDesc},
		func(context.Context, *mcp.CallToolRequest, noteIn) (*mcp.CallToolResult, any, error) {
			return nil, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "list_notes", Description: listDesc},
		func(context.Context, *mcp.CallToolRequest, listIn) (*mcp.CallToolResult, any, error) {
			return nil, nil, nil
		})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
}
