package erc8004

import (
	"context"
	"crypto/ed25519"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/forum-mcp/forum/ingest/differ"
	"github.com/forum-mcp/forum/ingest/registry"
	"github.com/forum-mcp/forum/processors/publish"
	"github.com/forum-mcp/forum/processors/scorer"
	"github.com/forum-mcp/forum/processors/trust"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/duckdb"
	"github.com/forum-mcp/forum/sql/store"
)

// The bundled real snapshots, published the way the pipeline publishes
// them: stored as the history sink stores them, scored by the scorer at
// each snapshot with drift from the real differ and incidents checked
// (none), the records and headers stored as the publications sink does.
// Built once per test binary (about 15 s) and only read after that.
var (
	fixtureOnce sync.Once
	fixture     struct {
		store   *duckdb.Store
		headers []schema.PublicationMsg // as trust.publications carries them, in order
		err     error
	}
	fixtureDir string
)

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(helperMain())
	}
	code := m.Run()
	if fixture.store != nil {
		fixture.store.Close()
	}
	if fixtureDir != "" {
		os.RemoveAll(fixtureDir)
	}
	os.Exit(code)
}

// driftSource is the drift processor's state as the scorer reads it.
type driftSource struct {
	first  map[string]time.Time
	events map[string][]schema.DriftEvent
}

func (d *driftSource) DriftInput(server string) trust.DriftInput {
	return trust.DriftInput{ObservedSince: d.first[server], Events: d.events[server]}
}

type checkedNoIncidents struct{}

func (checkedNoIncidents) IncidentsInput(string) trust.IncidentsInput {
	return trust.IncidentsInput{Checked: true}
}

// headerCapture stores a publication and keeps its header.
type headerCapture struct {
	scorer.StoreOutput
	headers []schema.PublicationMsg
}

func (h *headerCapture) Header(ctx context.Context, p schema.PublicationMsg) error {
	if err := h.StoreOutput.Header(ctx, p); err != nil {
		return err
	}
	h.headers = append(h.headers, p)
	return nil
}

func published(t *testing.T) (*duckdb.Store, []schema.PublicationMsg) {
	t.Helper()
	fixtureOnce.Do(func() {
		fixture.store, fixture.headers, fixture.err = publishSnapshots()
	})
	if fixture.err != nil {
		t.Fatal(fixture.err)
	}
	return fixture.store, fixture.headers
}

func publishSnapshots() (*duckdb.Store, []schema.PublicationMsg, error) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "erc8004-fixture-")
	if err != nil {
		return nil, nil, err
	}
	fixtureDir = dir
	s, err := duckdb.Open(ctx, filepath.Join(dir, "forum.duckdb"), zap.NewNop())
	if err != nil {
		return nil, nil, err
	}
	if err := s.Migrate(ctx); err != nil {
		return s, nil, err
	}
	files, err := registry.ListSnapshots("../../ingest/registry/testdata/snapshots")
	if err != nil {
		return s, nil, err
	}
	_, key, _ := ed25519.GenerateKey(nil)
	ds := &driftSource{events: map[string][]schema.DriftEvent{}}
	out := &headerCapture{StoreOutput: scorer.StoreOutput{W: s}}
	sc := &scorer.Stage{Store: s, Out: out, Key: key, Committer: publish.NewFileCommitter(filepath.Join(dir, "publications.log")),
		Sources: scorer.Sources{Drift: ds, Incidents: checkedNoIncidents{}}}
	st := differ.NewState()
	for _, f := range files {
		entries, _, stats, err := registry.LoadSnapshotFile(f)
		if err != nil {
			return s, nil, err
		}
		id := registry.SnapshotID(f.CapturedAt)
		res := differ.Diff(st, differ.Snapshot{ID: id, Mode: schema.ModeFull, ObservedAt: f.CapturedAt, Entries: entries, Incomplete: stats.Incomplete}, differ.Options{})
		st = res.Next
		for _, e := range res.Events {
			ds.events[e.Server] = append(ds.events[e.Server], e)
		}
		ds.first = st.FirstSeen
		recs := make([]store.Record, len(entries))
		for i := range entries {
			recs[i] = store.RecordFromEntry(&entries[i], id, f.CapturedAt)
		}
		if err := s.InsertRecords(ctx, recs); err != nil {
			return s, nil, err
		}
		if err := s.InsertEvents(ctx, res.Events); err != nil {
			return s, nil, err
		}
		if err := s.InsertSnapshots(ctx, []schema.SnapshotSummary{{ID: id, Mode: schema.ModeFull, ObservedAt: f.CapturedAt, Partial: res.Partial, Entries: len(entries)}}); err != nil {
			return s, nil, err
		}
		if _, err := sc.PublishAt(ctx, f.CapturedAt, !res.Partial); err != nil {
			return s, nil, err
		}
	}
	return s, out.headers, nil
}

// expectation is what the change rule sends for a server over the
// publications, worked out here from the stored records alone (not through
// Decide): per publication index, the record it sends (nil: none), and how
// many changes the daily allowance deferred.
type expectation struct {
	sends    []*store.TrustRecord
	deferred int
	changes  int
}

func expect(t *testing.T, st Store, headers []schema.PublicationMsg, server string) expectation {
	t.Helper()
	var ex expectation
	var lastScore int = -1
	var lastBand string
	var lastAt time.Time
	var prevScore int = -1
	var prevBand string
	for _, h := range headers {
		rec, err := st.TrustRecordIn(context.Background(), server, h.ID)
		if err != nil || rec.Score == nil {
			ex.sends = append(ex.sends, nil)
			continue
		}
		score := int(*rec.Score + 0.5)
		if prevScore >= 0 && (score != prevScore || rec.Band != prevBand) {
			ex.changes++
		}
		prevScore, prevBand = score, rec.Band
		changed := lastScore < 0 || score != lastScore || rec.Band != lastBand
		if changed && lastScore >= 0 && h.ComputedAt.Sub(lastAt) < 24*time.Hour {
			ex.deferred++
			changed = false
		}
		if !changed {
			ex.sends = append(ex.sends, nil)
			continue
		}
		r := rec
		ex.sends = append(ex.sends, &r)
		lastScore, lastBand, lastAt = score, rec.Band, h.ComputedAt
	}
	return ex
}

// remotesIn returns a server's remotes in its newest stored entry.
func remotesIn(t *testing.T, st Store, server string) []string {
	t.Helper()
	vers, err := st.Versions(context.Background(), server, store.MaxEventLimit)
	if err != nil || len(vers) == 0 {
		t.Fatalf("versions of %s: %v", server, err)
	}
	newest := vers[0]
	for _, v := range vers {
		if v.ObservedAt.After(newest.ObservedAt) {
			newest = v
		}
	}
	r := remotesOf(newest.Server)
	if len(r) == 0 {
		t.Fatalf("%s has no remote", server)
	}
	return r
}
