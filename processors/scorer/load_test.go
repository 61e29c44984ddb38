package scorer

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/forum-mcp/forum/ingest/probe"
	"github.com/forum-mcp/forum/sql/duckdb"
	"github.com/forum-mcp/forum/sql/store"
)

// bulkStore gives a store the optional BulkHealthReader, built from the
// per-server query, so Load's bulk path can be compared with the
// per-server one.
type bulkStore struct {
	*duckdb.Store
	perServer int // LatestHealth calls seen (the bulk path must make none)
}

func (b *bulkStore) LatestHealth(ctx context.Context, server string) ([]store.HealthCheck, error) {
	b.perServer++
	return b.Store.LatestHealth(ctx, server)
}

func (b *bulkStore) LatestHealthAll(ctx context.Context) ([]store.HealthCheck, error) {
	var out []store.HealthCheck
	cursor := ""
	for {
		rows, err := b.ListServers(ctx, store.ListQuery{Cursor: cursor, Limit: store.MaxListLimit})
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			hs, err := b.Store.LatestHealth(ctx, r.Name)
			if err != nil {
				return nil, err
			}
			out = append(out, hs...)
		}
		if len(rows) < store.MaxListLimit {
			return out, nil
		}
		cursor = rows[len(rows)-1].Name
	}
}

// TestLoadBulkHealthSameAsPerServer: with BulkHealthReader, Load asks no
// per-server LatestHealth and returns the same inputs, including for a
// server whose newest check is after AsOf (the history path).
func TestLoadBulkHealthSameAsPerServer(t *testing.T) {
	ctx := context.Background()
	s, at := replayedStore(t)
	var checks []store.HealthCheck
	n := 0
	rows, err := s.ListServers(ctx, store.ListQuery{Limit: store.MaxListLimit})
	if err != nil {
		t.Fatal(err)
	}
	asOf := at["2025-10-09"]
	for _, r := range rows {
		e, err := entryOf(r.Record)
		if err != nil || len(e.Server.Remotes) == 0 {
			continue
		}
		for i, rm := range e.Server.Remotes {
			c := probe.Check{ID: "c-" + r.Name + "-" + rm.URL, Server: r.Name, RemoteURL: rm.URL, ObservedAt: asOf.Add(-time.Duration(1+i) * time.Hour), Outcome: probe.OutcomeOK}
			checks = append(checks, healthRow(&c))
			if n%5 == 0 { // a later check too: the history path
				c.ID, c.ObservedAt, c.Outcome = c.ID+"-late", asOf.Add(time.Hour), probe.OutcomeUnreachable
				checks = append(checks, healthRow(&c))
			}
			if n%7 == 3 { // a newer refusal for load: the history path too
				c.ID, c.ObservedAt, c.Outcome = c.ID+"-429", asOf.Add(-time.Minute), probe.OutcomeRateLimited
				checks = append(checks, healthRow(&c))
			}
		}
		if n++; n == 60 {
			break
		}
	}
	if err := s.InsertHealthChecks(ctx, checks); err != nil {
		t.Fatal(err)
	}
	per, err := Load(ctx, struct{ Reader }{s}, // hides the store's LatestHealthAll: the per-server path
		LoadOptions{AsOf: asOf})
	if err != nil {
		t.Fatal(err)
	}
	b := &bulkStore{Store: s}
	bulk, err := Load(ctx, b, LoadOptions{AsOf: asOf})
	if err != nil {
		t.Fatal(err)
	}
	if b.perServer != 0 {
		t.Fatalf("bulk path asked LatestHealth %d times", b.perServer)
	}
	if !reflect.DeepEqual(per, bulk) {
		t.Fatalf("bulk Load differs from per-server Load")
	}
	withChecks := 0
	for _, in := range per {
		if len(in.Checks) > 0 {
			withChecks++
		}
	}
	if withChecks < 30 {
		t.Fatalf("only %d servers with checks: the comparison proves little", withChecks)
	}
}

// TestLoadSkipsUncountedChecks: a rate_limited or not_checked check counts
// neither for nor against (SPEC §1.3, §3 Health): each remote is scored on
// its last other check as of the publication time, on the bulk path and
// the per-server one alike; a remote with none is not checked.
func TestLoadSkipsUncountedChecks(t *testing.T) {
	ctx := context.Background()
	s, err := duckdb.Open(ctx, filepath.Join(t.TempDir(), "load.duckdb"), zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	asOf := tNow
	url := func(name string) string { return "https://" + strings.ReplaceAll(name, "/", ".") + ".example.com/mcp" }
	names := []string{"com.example/counted-behind-429", "com.example/only-429", "com.example/late-ok", "com.example/plain"}
	var recs []store.Record
	for _, n := range names {
		e := entry(n, []string{url(n)}, "")
		raw, _ := json.Marshal(e.Server)
		e.Raw = raw
		e.ContentSHA256 = "sha-" + n
		recs = append(recs, store.RecordFromEntry(&e, "snap", asOf.Add(-24*time.Hour)))
	}
	if err := s.InsertRecords(ctx, recs); err != nil {
		t.Fatal(err)
	}
	mk := func(n string, o probe.Outcome, ago time.Duration) probe.Check {
		c := check(n, url(n), o, ago)
		c.ID = string(o) + "@" + n
		return c
	}
	all := []probe.Check{
		mk(names[0], probe.OutcomeOK, 3*time.Hour),
		mk(names[0], probe.OutcomeRateLimited, time.Hour), // newest, but refused for load
		mk(names[1], probe.OutcomeNotChecked, 2*time.Hour),
		mk(names[1], probe.OutcomeRateLimited, time.Hour),
		mk(names[2], probe.OutcomeUnreachable, 5*time.Hour),
		mk(names[2], probe.OutcomeRateLimited, time.Hour),
		mk(names[2], probe.OutcomeOK, -time.Hour), // after the publication time
		mk(names[3], probe.OutcomeOK, time.Hour),
	}
	var rows []store.HealthCheck
	for i := range all {
		rows = append(rows, healthRow(&all[i]))
	}
	if err := s.InsertHealthChecks(ctx, rows); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{names[0]: "ok@" + names[0], names[1]: "", names[2]: "unreachable@" + names[2], names[3]: "ok@" + names[3]}
	for _, path := range []struct {
		name string
		r    Reader
	}{{"per-server", struct{ Reader }{s}}, {"bulk", s}} {
		in, err := Load(ctx, path.r, LoadOptions{AsOf: asOf})
		if err != nil {
			t.Fatal(err)
		}
		if len(in) != len(names) {
			t.Fatalf("%s: %d servers", path.name, len(in))
		}
		recs := Compute(in, Sources{}, Meta{PublicationID: "p", ComputedAt: asOf}, nil)
		for i, x := range in {
			n := x.Entry.Server.Name
			got := ""
			for _, c := range x.Checks {
				got += c.ID
			}
			if got != want[n] {
				t.Errorf("%s: %s scored on %q, want %q", path.name, n, got, want[n])
			}
			r := recs[i]
			health := r.Toolfinder.Components[0]
			switch n {
			case names[1]:
				if r.Visibility != "not-checked" || r.StaticScan.Coverage != CoverageNotScanned || health.Score != 0 || !strings.Contains(health.Findings[0].Message, "not") ||
					len(health.Findings[0].Evidence) != 0 || len(r.Health) != 0 {
					t.Errorf("%s: %s only refused for load: visibility %s, coverage %s, health %+v; want not checked", path.name, n, r.Visibility, r.StaticScan.Coverage, health)
				}
			case names[0]:
				if r.Visibility != "live-endpoint" || r.StaticScan.Coverage != "scanned" || health.Score != 25 {
					t.Errorf("%s: %s: visibility %s, coverage %s, health %v; want the ok check behind the 429", path.name, n, r.Visibility, r.StaticScan.Coverage, health.Score)
				}
			}
		}
	}
}
