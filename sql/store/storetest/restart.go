package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/store"
)

// RunRestart checks that health history survives a restart: it writes
// through one store, closes it, opens the same storage again with open
// (same DuckDB file, same ClickHouse database), and expects every read to be
// the same. open must return a store over the same storage on every call,
// not yet migrated; RunRestart closes what it opens.
func RunRestart(t *testing.T, open func(t *testing.T) store.Store) {
	var checks []store.HealthCheck
	servers := []string{"io.github.a/one", "io.github.b/twö", "c/three"}
	outcomes := []string{"ok", "auth_required", "unreachable", "handshake_failed", "not_checked"}
	for i := 0; i < 60; i++ {
		sv := servers[i%len(servers)]
		c := hc(fmt.Sprintf("restart-%02d", i), sv, fmt.Sprintf("https://%d.example/mcp", i%2),
			at(time.Duration(i)*time.Minute+time.Duration(i)*time.Microsecond), outcomes[i%len(outcomes)])
		c.Check = fmt.Sprintf(`{"n":%d,"text":"ünïcödé 🚀"}`, i)
		checks = append(checks, c)
	}

	s := open(t)
	must(t, "Migrate", s.Migrate(ctx(t)))
	insertHealth(t, s, checks[:40]...)
	insertHealth(t, s, checks[30:]...) // overlapping batches: at-least-once
	insertRecords(t, s, rec("io.github.a/one", "1", "h", at(0), true))
	must(t, "InsertEvents", s.InsertEvents(ctx(t), []schema.DriftEvent{ev("e1", "io.github.a/one", schema.KindNewServer, at(0))}))
	before := readHealth(t, s, servers...)
	equal(t, "health_checks count before the restart", before.Count, int64(len(checks)))
	for _, sv := range servers {
		if len(before.History[sv]) != 20 || len(before.Latest[sv]) != 2 {
			t.Fatalf("%s before the restart: %d checks, %d latest; want 20 and 2", sv, len(before.History[sv]), len(before.Latest[sv]))
		}
	}
	countsBefore := counts(t, s)
	must(t, "Close", s.Close())

	for round := 1; round <= 2; round++ {
		s = open(t)
		phase := fmt.Sprintf("after restart %d", round)
		must(t, phase+": Migrate", s.Migrate(ctx(t)))
		equal(t, phase+": health reads", readHealth(t, s, servers...), before)
		equal(t, phase+": counts", counts(t, s), countsBefore)
		equal(t, phase+": record", getServer(t, s, "io.github.a/one"), norm(rec("io.github.a/one", "1", "h", at(0), true)))
		// Replaying after the restart changes nothing.
		insertHealth(t, s, checks...)
		equal(t, phase+": health reads after a replay", readHealth(t, s, servers...), before)
		must(t, phase+": Close", s.Close())
	}
}
