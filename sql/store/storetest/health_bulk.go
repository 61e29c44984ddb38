package storetest

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/forum-mcp/forum/sql/store"
)

// RunHealthBulk runs the conformance suite of store.BulkHealthReader: on
// fixtures with several servers and remotes, duplicate writes, rewrites of
// an id (in place and moved to another remote or time), older checks that
// arrive last and ties on the millisecond, LatestHealthAll equals the
// concatenation of LatestHealth over every server (in server order) and a
// model of the contract, before and after Optimize. open is as for Run; the
// store it returns must implement store.BulkHealthReader.
func RunHealthBulk(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		f    func(t *testing.T, s store.Store, b store.BulkHealthReader)
	}{
		{"Empty", testHealthBulkEmpty},
		{"Fixture", testHealthBulkFixture},
		{"Many", testHealthBulkMany},
	}
	for _, tt := range tests {
		t.Run("HealthBulk/"+tt.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			if err := s.Migrate(ctx(t)); err != nil {
				t.Fatalf("Migrate: %v", err)
			}
			b, ok := s.(store.BulkHealthReader)
			if !ok {
				t.Fatalf("%T does not implement store.BulkHealthReader", s)
			}
			tt.f(t, s, b)
		})
	}
}

// healthModel is the contract of LatestHealth and LatestHealthAll in Go:
// the last write of each id, then per (server, remote URL) the greatest
// (ObservedAt at ms, ID), ordered by server then remote URL.
type healthModel struct {
	byID    map[string]store.HealthCheck
	servers map[string]bool
}

func newHealthModel() *healthModel {
	return &healthModel{byID: map[string]store.HealthCheck{}, servers: map[string]bool{}}
}

// write inserts cs in one batch into s and the model.
func (m *healthModel) write(t *testing.T, s store.Store, cs ...store.HealthCheck) {
	t.Helper()
	insertHealth(t, s, cs...)
	for _, c := range normHealth(cs...) {
		m.byID[c.ID] = c
		m.servers[c.Server] = true
	}
}

func (m *healthModel) latest() []store.HealthCheck {
	best := map[[2]string]store.HealthCheck{}
	for _, c := range m.byID {
		k := [2]string{c.Server, c.RemoteURL}
		if b, ok := best[k]; !ok || c.ObservedAt.After(b.ObservedAt) || (c.ObservedAt.Equal(b.ObservedAt) && c.ID > b.ID) {
			best[k] = c
		}
	}
	out := make([]store.HealthCheck, 0, len(best))
	for _, c := range best {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b store.HealthCheck) int {
		if c := strings.Compare(a.Server, b.Server); c != 0 {
			return c
		}
		return strings.Compare(a.RemoteURL, b.RemoteURL)
	})
	return out
}

func latestHealthAll(t *testing.T, b store.BulkHealthReader) []store.HealthCheck {
	t.Helper()
	got, err := b.LatestHealthAll(ctx(t))
	must(t, "LatestHealthAll", err)
	return got
}

// checkBulk compares LatestHealthAll with LatestHealth of every server
// (plus extra, which have no checks) and with the model.
func checkBulk(t *testing.T, s store.Store, b store.BulkHealthReader, m *healthModel, phase string, extra ...string) {
	t.Helper()
	got := latestHealthAll(t, b)
	servers := append(slices.Collect(maps.Keys(m.servers)), extra...)
	slices.Sort(servers)
	union := []store.HealthCheck{}
	for _, sv := range servers {
		union = append(union, latestHealth(t, s, sv)...)
	}
	equal(t, phase+": LatestHealthAll vs LatestHealth of every server", got, union)
	equal(t, phase+": LatestHealthAll vs the model", got, m.latest())
}

// optimizeBulk forces merges when the store can, then checks again.
func optimizeBulk(t *testing.T, s store.Store, b store.BulkHealthReader, m *healthModel, phase string, extra ...string) {
	t.Helper()
	o, ok := s.(Optimizer)
	if !ok {
		return
	}
	before := latestHealthAll(t, b)
	must(t, "Optimize", o.Optimize(ctx(t)))
	equal(t, phase+": LatestHealthAll changed by Optimize", latestHealthAll(t, b), before)
	checkBulk(t, s, b, m, phase, extra...)
}

func testHealthBulkEmpty(t *testing.T, s store.Store, b store.BulkHealthReader) {
	got := latestHealthAll(t, b)
	if got == nil || len(got) != 0 {
		t.Errorf("LatestHealthAll of an empty store = %#v, want an empty, non-nil slice", got)
	}
	// Records without checks add no rows.
	insertRecords(t, s, rec("a/listed", "1.0.0", "sha-1", at(0), true))
	got = latestHealthAll(t, b)
	if got == nil || len(got) != 0 {
		t.Errorf("LatestHealthAll with servers but no checks = %#v, want an empty, non-nil slice", got)
	}
}

func testHealthBulkFixture(t *testing.T, s store.Store, b store.BulkHealthReader) {
	const (
		one   = "a/one"
		pre   = "a/one-two" // a/one as a prefix
		two   = "b/two"
		upper = "Z/upper" // sorts before the lower-case names (byte order)
		uni   = "io.github.ünï/cödé-日本語"
	)
	r1, r2, r3 := "https://one.example/mcp", "https://two.example/sse", "https://Three.example/mcp"
	m := newHealthModel()
	extra := []string{"no/checks", "a/on"}

	batch1 := []store.HealthCheck{
		hc("one-old", one, r1, at(0), "ok"),
		hc("one-new", one, r1, at(time.Hour), "unreachable"), // newest of r1 though not ok
		hc("one-a", one, r2, at(2*time.Hour), "ok"),          // same ms as one-z: greater id wins
		hc("one-z", one, r2, at(2*time.Hour).Add(400*time.Microsecond), "auth_required"),
		hc("one-0", one, r2, at(time.Hour), "ok"),
		hc("one-3", one, r3, at(-time.Hour), "auth_required"),
		hc("pre-1", pre, r1, at(5*time.Hour), "ok"), // same URL, another server
		hc("two-1", two, r1, at(0), "ok"),
		hc("two-2", two, r1, at(10*time.Minute), "ok"),
		hc("two-2", two, r1, at(10*time.Minute), "handshake_failed"), // the last row of an id in a batch wins
		hc("up-1", upper, "https://z.example/", at(time.Minute), "ok"),
		hc("uni-1", uni, "https://ünï.example/日本語", at(time.Minute), "ok"),
		hc("uni-2", uni, "https://ünï.example/ascii", at(time.Minute), "unreachable"),
	}
	m.write(t, s, batch1...)
	checkBulk(t, s, b, m, "first write", extra...)
	m.write(t, s, batch1...) // at-least-once: the same batch again
	m.write(t, s, append(slices.Clone(batch1[:4]), batch1[:4]...)...)
	checkBulk(t, s, b, m, "duplicate writes", extra...)

	rewritten := hc("one-new", one, r1, at(time.Hour), "ok") // same key, a newer write
	rewritten.Check = `{"rewritten":true}`
	m.write(t, s,
		hc("one-mid", one, r1, at(30*time.Minute), "ok"), // older, arrives last: not the newest
		rewritten,
		hc("two-3", two, r1, at(10*time.Minute).Add(-300*time.Microsecond), "ok"), // ms tie with two-2, greater id
	)
	checkBulk(t, s, b, m, "rewrites and ties", extra...)

	// An id that wins r1, then is moved (rewritten) to an older time on r2:
	// r1 falls back to its previous newest, r2 keeps its own.
	m.write(t, s, hc("one-moved", one, r1, at(3*time.Hour), "ok"))
	checkBulk(t, s, b, m, "moving id written", extra...)
	m.write(t, s, hc("one-moved", one, r2, at(-time.Hour), "unreachable"))
	checkBulk(t, s, b, m, "moved", extra...)
	optimizeBulk(t, s, b, m, "after optimize", extra...)

	// After the merge: the same batches again, a newer check, a move back.
	m.write(t, s, batch1...)
	m.write(t, s, hc("uni-3", uni, "https://ünï.example/ascii", at(2*time.Minute), "ok"),
		hc("one-moved", one, r1, at(3*time.Hour), "auth_required"))
	checkBulk(t, s, b, m, "writes after optimize", extra...)
	optimizeBulk(t, s, b, m, "after a second optimize", extra...)
	if n := len(m.latest()); n != 8 {
		t.Fatalf("test bug: the fixture has %d remotes, want 8", n)
	}
}

func testHealthBulkMany(t *testing.T, s store.Store, b store.BulkHealthReader) {
	const servers = 300
	rng := rand.New(rand.NewPCG(1, 2))
	m := newHealthModel()
	var all []store.HealthCheck
	for i := range servers {
		sv := fmt.Sprintf("io.github.n%03d/srv", i)
		if i%7 == 0 {
			sv = fmt.Sprintf("io.github.n%03d/srv-%d", i-1, i) // a prefix sibling of the previous one
		}
		for r := range 1 + rng.IntN(3) {
			url := fmt.Sprintf("https://s%d.example/%d", i, r)
			for k := range 1 + rng.IntN(4) {
				obs := at(time.Duration(rng.IntN(5)) * time.Minute).Add(time.Duration(rng.IntN(1000)) * time.Microsecond)
				all = append(all, hc(fmt.Sprintf("m-%d-%d-%d", i, r, k), sv, url, obs, []string{"ok", "unreachable", "auth_required"}[rng.IntN(3)]))
			}
		}
	}
	// Several batches, out of order, some rows twice.
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	for len(all) > 0 {
		n := min(len(all), 1+rng.IntN(200))
		batch := all[:n]
		all = all[n:]
		if rng.IntN(3) == 0 {
			batch = append(slices.Clone(batch), batch[:n/2]...)
		}
		m.write(t, s, batch...)
	}
	// Rewrites: some ids move to another time of their remote.
	var moves []store.HealthCheck
	for _, id := range slices.Sorted(maps.Keys(m.byID)) {
		if c := m.byID[id]; rng.IntN(10) == 0 {
			c.ObservedAt, c.Outcome = at(time.Duration(rng.IntN(6))*time.Minute), "handshake_failed"
			moves = append(moves, c)
		}
	}
	m.write(t, s, moves...)

	start := time.Now()
	got := latestHealthAll(t, b)
	bulk := time.Since(start)
	start = time.Now()
	checkBulk(t, s, b, m, "many servers")
	t.Logf("%d servers, %d checks, %d latest: LatestHealthAll %v; check with LatestHealth per server %v",
		len(m.servers), len(m.byID), len(got), bulk, time.Since(start))
	optimizeBulk(t, s, b, m, "many servers after optimize")
}
