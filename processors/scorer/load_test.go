package scorer

import (
	"context"
	"reflect"
	"testing"
	"time"

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
