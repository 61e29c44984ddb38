package scorer

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"go.uber.org/zap/zaptest"

	"github.com/forum-mcp/forum/bus/stage"
	"github.com/forum-mcp/forum/ingest/differ"
	"github.com/forum-mcp/forum/ingest/probe"
	"github.com/forum-mcp/forum/ingest/registry"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/processors/publish"
	"github.com/forum-mcp/forum/processors/trust"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/duckdb"
	"github.com/forum-mcp/forum/sql/store"
)

// replayedStore fills a DuckDB store with the bundled snapshots the way the
// history sink would, and returns each snapshot's capture time by file date.
func replayedStore(t *testing.T) (*duckdb.Store, map[string]time.Time) {
	t.Helper()
	ctx := context.Background()
	s, err := duckdb.Open(ctx, filepath.Join(t.TempDir(), "forum.duckdb"), zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	files, err := registry.ListSnapshots("../../ingest/registry/testdata/snapshots")
	if err != nil {
		t.Fatal(err)
	}
	at := map[string]time.Time{}
	st := differ.NewState()
	for _, f := range files {
		entries, _, stats, err := registry.LoadSnapshotFile(f)
		if err != nil {
			t.Fatal(err)
		}
		id := registry.SnapshotID(f.CapturedAt)
		res := differ.Diff(st, differ.Snapshot{ID: id, Mode: schema.ModeFull, ObservedAt: f.CapturedAt, Entries: entries, Incomplete: stats.Incomplete}, differ.Options{})
		st = res.Next
		var recs []store.Record
		for i := range entries {
			recs = append(recs, store.RecordFromEntry(&entries[i], id, f.CapturedAt))
		}
		if err := s.InsertRecords(ctx, recs); err != nil {
			t.Fatal(err)
		}
		if err := s.InsertEvents(ctx, res.Events); err != nil {
			t.Fatal(err)
		}
		if err := s.InsertSnapshots(ctx, []schema.SnapshotSummary{{ID: id, Mode: schema.ModeFull, ObservedAt: f.CapturedAt, Partial: res.Partial, Entries: len(entries)}}); err != nil {
			t.Fatal(err)
		}
		at[filepath.Base(f.Path)[:10]] = f.CapturedAt
	}
	return s, at
}

func TestStagePublishes(t *testing.T) {
	ctx := context.Background()
	s, at := replayedStore(t)
	dir := t.TempDir()
	logPath := filepath.Join(dir, "publications.log")
	st := &Stage{Store: s, Out: StoreOutput{W: s}, Key: testKey, Committer: publish.NewFileCommitter(logPath), Log: zaptest.NewLogger(t)}

	// A server with a remote gets a check before and one after 2025-10-08's
	// capture: the as-of rule must score the earlier one.
	e, err := s.GetServer(ctx, "ai.klavis/strata")
	if err != nil {
		t.Fatal(err)
	}
	var d schema.ServerDetail
	if err := json.Unmarshal([]byte(e.Server), &d); err != nil || len(d.Remotes) == 0 {
		t.Fatalf("fixture server has no remote: %v", err)
	}
	url := d.Remotes[0].URL
	before := probe.Check{ID: "c-before", Server: d.Name, RemoteURL: url, ObservedAt: at["2025-10-08"].Add(-time.Hour), Outcome: probe.OutcomeAuthRequired, HTTPStatus: 401,
		Auth: probe.AuthEvidence{ChallengeScheme: "Bearer", Schemes: []string{"Bearer"}}}
	after := probe.Check{ID: "c-after", Server: d.Name, RemoteURL: url, ObservedAt: at["2025-10-08"].Add(time.Hour), Outcome: probe.OutcomeUnreachable}
	if err := s.InsertHealthChecks(ctx, []store.HealthCheck{healthRow(&before), healthRow(&after)}); err != nil {
		t.Fatal(err)
	}

	p8, err := st.PublishAt(ctx, at["2025-10-08"], true)
	if err != nil {
		t.Fatal(err)
	}
	if p8.ID != "pub-20251008T202933Z" || p8.RecordCount != 589 {
		t.Errorf("2025-10-08: publication %s with %d records, want pub-20251008T202933Z with 589 (the snapshot's names)", p8.ID, p8.RecordCount)
	}
	recs, err := s.PublicationRecords(ctx, p8.ID)
	if err != nil {
		t.Fatal(err)
	}
	var strata Record
	for _, r := range recs {
		if r.Server == d.Name {
			if err := json.Unmarshal([]byte(r.Record), &strata); err != nil {
				t.Fatal(err)
			}
		}
	}
	if strata.Visibility != "oauth-gated" || len(strata.Health) != 1 || strata.Health[0].ID != "c-before" {
		t.Errorf("as-of health: visibility %q, checks %+v; want oauth-gated from c-before", strata.Visibility, strata.Health)
	}

	// Idempotent: publishing the same snapshot again changes nothing.
	again, err := st.PublishAt(ctx, at["2025-10-08"], true)
	if err != nil || again.MerkleRoot != p8.MerkleRoot {
		t.Fatalf("republish: %v, root %s vs %s", err, again.MerkleRoot, p8.MerkleRoot)
	}
	entries, err := publish.NewFileCommitter(logPath).Entries()
	if err != nil || len(entries) != 1 || entries[0].Root != p8.MerkleRoot {
		t.Fatalf("commitment log after a republish: %+v, %v", entries, err)
	}

	// The stored publication exports and verifies offline.
	row, err := s.GetPublication(ctx, p8.ID)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := FromStore(row, recs)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := publish.WriteExport(&buf, pub); err != nil {
		t.Fatal(err)
	}
	if err := publish.Verify(&buf, testKey.Public().(ed25519.PublicKey)); err != nil {
		t.Errorf("stored publication does not verify: %v", err)
	}
	latest, err := s.LatestTrustRecord(ctx, d.Name)
	if err != nil || latest.PublicationID != p8.ID {
		t.Errorf("latest record of %s: %+v, %v", d.Name, latest.PublicationID, err)
	}

	// A root already committed under the id (a crash after the commit, then
	// a recomputation that differs) is never contradicted: the next id.
	at7 := at["2025-10-07"]
	if err := publish.NewFileCommitter(logPath).Commit(ctx, publish.Commitment{PublicationID: PublicationID(at7), Root: "00", MethodVersion: "x", Time: at7}); err != nil {
		t.Fatal(err)
	}
	p7, err := st.PublishAt(ctx, at7, true)
	if err != nil {
		t.Fatal(err)
	}
	if p7.ID != PublicationID(at7)+"-2" {
		t.Errorf("publication under a contradicted id: %s, want %s-2", p7.ID, PublicationID(at7))
	}
	if _, err := s.GetPublication(ctx, PublicationID(at7)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the contradicted id must not be stored: %v", err)
	}
}

func TestStageHandleWaitsForTheSnapshot(t *testing.T) {
	s, at := replayedStore(t)
	st := &Stage{Store: s, Method: method.Embedded(), Key: testKey, SnapshotWait: 300 * time.Millisecond}
	b, _ := json.Marshal(schema.SnapshotSummary{ID: "never-stored", Mode: schema.ModeFull, ObservedAt: at["2025-10-09"]})
	sg, err := stage.New(st.Config(nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	err = sg.Handle(context.Background(), []kafka.Message{{Value: b}})
	if err == nil || !strings.Contains(err.Error(), "not stored") {
		t.Errorf("a snapshot the sink has not stored yet must not be published: %v", err)
	}
}

// healthRow is history.HealthRow (a copy: processors/history is downstream
// of this package, and a test of the scorer should not need the sinks).
func healthRow(c *probe.Check) store.HealthCheck {
	raw, _ := json.Marshal(c)
	return store.HealthCheck{
		ID: c.ID, Server: c.Server, RemoteURL: c.RemoteURL, ObservedAt: c.ObservedAt.UTC(), Transport: c.Transport,
		Outcome: string(c.Outcome), ErrorClass: string(c.ErrorClass), HTTPStatus: c.HTTPStatus, LatencyMS: c.InitializeLatencyMS,
		AuthKind: string(c.AuthKind), ProtocolVersion: c.ProtocolVersion, ToolCount: len(c.Tools), ToolsListed: c.ToolsListed, Check: string(raw),
	}
}

// TestIntervalPublicationCarriesNewChecks: with --publish-interval, a probe
// result stored after the last publication is in the next one, one
// interval later (SPEC §1.3's hourly probes reach records without waiting
// for a registry snapshot). The stage runs its own ticker loop on a DuckDB
// store; the test steps the ticker and the wall clock by hand.
func TestIntervalPublicationCarriesNewChecks(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := duckdb.Open(ctx, filepath.Join(t.TempDir(), "interval.duckdb"), zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	const name, url = "com.example/interval", "https://mcp.interval.example.com/mcp"
	// The wall clock at the first tick: not on a whole second, as it never is.
	t0 := time.Date(2026, 3, 2, 12, 0, 0, 250_000_000, time.UTC)
	e := entry(name, []string{url}, "")
	e.Raw, _ = json.Marshal(e.Server)
	e.ContentSHA256 = "sha-interval"
	if err := s.InsertRecords(ctx, []store.Record{store.RecordFromEntry(&e, "snap", t0.Add(-24*time.Hour))}); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	now := t0
	ticks := make(chan time.Time)
	st := &Stage{Store: s, Out: StoreOutput{W: s}, Key: testKey, Committer: publish.NewFileCommitter(filepath.Join(t.TempDir(), "publications.log")),
		Interval: time.Minute, Log: zaptest.NewLogger(t),
		Now:    func() time.Time { mu.Lock(); defer mu.Unlock(); return now },
		ticker: func(time.Duration) (<-chan time.Time, func()) { return ticks, func() {} }}
	done := make(chan struct{})
	go func() { defer close(done); st.tick(ctx) }()
	defer func() { cancel(); <-done }()

	// tickAt moves the clock to at, ticks, and returns the record the
	// publication stored for the server.
	tickAt := func(at time.Time) Record {
		t.Helper()
		mu.Lock()
		now = at
		mu.Unlock()
		ticks <- at
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			tr, err := s.LatestTrustRecord(ctx, name)
			if err == nil && !tr.ComputedAt.Before(at.Truncate(time.Second)) {
				var r Record
				if err := json.Unmarshal([]byte(tr.Record), &r); err != nil {
					t.Fatal(err)
				}
				if r.PublicationID == PublicationID(at) {
					return r
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("no publication of %s after the tick at %s", name, at.Format(time.RFC3339Nano))
		return Record{}
	}

	first := tickAt(t0)
	if first.Visibility != trust.VisNotChecked || len(first.Health) != 0 {
		t.Fatalf("first publication: visibility %s, health %+v; want not-checked", first.Visibility, first.Health)
	}
	// The probe runs 59.9 s later, after that publication, and its check
	// is stored; the next tick, one interval after the first, must carry it.
	c := check(name, url, probe.OutcomeOK, 0)
	c.ObservedAt = t0.Add(time.Minute - 100*time.Millisecond)
	c.ScheduledAt = c.ObservedAt.Truncate(time.Minute)
	c.ID = probe.CheckID(name, url, c.ScheduledAt)
	if err := s.InsertHealthChecks(ctx, []store.HealthCheck{healthRow(&c)}); err != nil {
		t.Fatal(err)
	}
	next := tickAt(t0.Add(time.Minute))
	if next.Visibility != trust.VisLiveEndpoint || len(next.Health) != 1 || next.Health[0].ID != c.ID {
		t.Fatalf("publication one interval later (%s, computed %s): visibility %s, health %+v; want the check %s observed at %s",
			next.PublicationID, next.ComputedAt.Format(time.RFC3339Nano), next.Visibility, next.Health, c.ID, c.ObservedAt.Format(time.RFC3339Nano))
	}
}
