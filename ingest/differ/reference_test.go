package differ

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/forum-mcp/forum/bench/corpus"
	"github.com/forum-mcp/forum/ingest/registry"
	"github.com/forum-mcp/forum/schema"
)

// sameResult reports how Diff's result differs from the reference's, or "".
func sameResult(got, want Result) string {
	if len(got.Events) != len(want.Events) {
		return fmt.Sprintf("%d events, reference %d:\n%v\nreference %v", len(got.Events), len(want.Events), got.Events, want.Events)
	}
	for i := range want.Events {
		if got.Events[i] != want.Events[i] {
			return fmt.Sprintf("event %d: %+v\nreference %+v", i, got.Events[i], want.Events[i])
		}
	}
	if got.Partial != want.Partial || got.PartialReason != want.PartialReason || got.Names != want.Names {
		return fmt.Sprintf("partial %v %q names %d, reference %v %q %d", got.Partial, got.PartialReason, got.Names, want.Partial, want.PartialReason, want.Names)
	}
	if !reflect.DeepEqual(got.Next, want.Next) {
		g, _ := json.Marshal(got.Next)
		w, _ := json.Marshal(want.Next)
		return fmt.Sprintf("next state:\n%s\nreference\n%s", g, w)
	}
	return ""
}

// applyBoth applies snap to known with Diff and with the reference and
// fails on any difference; it returns the reference's next state.
func applyBoth(t testing.TB, known *State, snap Snapshot, opt Options) *State {
	t.Helper()
	want := referenceDiff(known, snap, opt)
	got := Diff(known, snap, opt)
	if d := sameResult(got, want); d != "" {
		t.Fatalf("snapshot %s (%s, %d entries, incomplete %v): %s", snap.ID, snap.Mode, len(snap.Entries), snap.Incomplete, d)
	}
	return want.Next
}

// randomSnapshot draws a listing from a small world, so that names,
// versions, flags and contents collide often: duplicates, several latest
// marks, ties on publishedAt, servers coming and going, escapes in
// remote URLs; and, as from one day to the next, entries of prev kept
// as they were, some listed twice.
func randomSnapshot(r *rand.Rand, day int, prev []schema.Entry) Snapshot {
	t0 := time.Date(2025, 10, 1, 0, 0, 0, 0, time.UTC)
	names := 1 + r.IntN(12)
	var es []schema.Entry
	for range r.IntN(3 * names) {
		n := r.IntN(names)
		e := schema.Entry{Server: schema.ServerDetail{
			Name:        fmt.Sprintf("io.example/s%d", n),
			Version:     fmt.Sprintf("1.%d", r.IntN(4)),
			Description: []string{"", "a", "b"}[r.IntN(3)],
			Title:       []string{"", "T"}[r.IntN(2)],
		}, Meta: schema.OfficialMeta{
			Status:      []string{"active", "", "deprecated", "deleted"}[r.IntN(4)],
			IsLatest:    r.IntN(2) == 0,
			PublishedAt: t0.Add(time.Duration(r.IntN(3)) * time.Hour),
		}}
		for range r.IntN(3) {
			e.Server.Remotes = append(e.Server.Remotes, schema.Remote{
				Type: []string{"sse", "streamable-http"}[r.IntN(2)],
				URL:  []string{"https://x.example/mcp", "https://y.example/<mcp>", "https://x.example/\"q\""}[r.IntN(3)],
			})
		}
		es = append(es, e)
	}
	if len(prev) > 0 && r.IntN(2) == 0 {
		for _, e := range prev {
			if r.IntN(4) > 0 {
				es = append(es, e)
			}
			if r.IntN(8) == 0 {
				es = append(es, e)
			}
		}
		r.Shuffle(len(es), func(i, j int) { es[i], es[j] = es[j], es[i] })
	}
	mode := schema.ModeFull
	if r.IntN(4) == 0 {
		mode = schema.ModeIncremental
	}
	return Snapshot{ID: fmt.Sprint("day ", day), Mode: mode, ObservedAt: t0.Add(time.Duration(day) * 24 * time.Hour), Entries: es, Incomplete: r.IntN(6) == 0}
}

// TestDiffMatchesReferenceRandom: on random sequences of full, partial,
// incomplete and incremental listings, Diff gives the reference's events
// (same order, same ids) and the same next state.
func TestDiffMatchesReferenceRandom(t *testing.T) {
	defer func(m int) { minParallel = m }(minParallel)
	r := rand.New(rand.NewPCG(1, 2))
	for seq := range 400 {
		minParallel = []int{1, 3, 4096}[seq%3] // work split over goroutines, or not
		known := NewState()
		var prev []schema.Entry
		for day := range 8 {
			snap := randomSnapshot(r, seq*8+day, prev)
			known = applyBoth(t, known, snap, Options{PartialRatio: []float64{0, 0.5, 0.99}[r.IntN(3)]})
			prev = snap.Entries
		}
	}
}

// TestDiffMatchesReferenceOnListings: the bundled real captures in order
// (two of them partial), and a generated registry over a week of churn
// (versions kept together, as the registry lists them), then the same
// listings shuffled (names scattered).
func TestDiffMatchesReferenceOnListings(t *testing.T) {
	files, err := registry.ListSnapshots("../registry/testdata/snapshots")
	if err != nil {
		t.Fatal(err)
	}
	var snaps []Snapshot
	for _, f := range files {
		es, _, st, err := registry.LoadSnapshotFile(f)
		if err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, Snapshot{ID: f.Path, Mode: schema.ModeFull, ObservedAt: f.CapturedAt, Entries: es, Incomplete: st.Incomplete})
	}
	gen := corpus.New(corpus.Config{Servers: 2000, Seed: 7})
	for day := range 7 {
		if day > 0 {
			gen.Advance()
		}
		var buf bytes.Buffer
		if _, err := gen.WriteSnapshot(&buf); err != nil {
			t.Fatal(err)
		}
		var es []schema.Entry
		if _, err := registry.ReadSnapshot(&buf, "gen", time.Time{}, func(e schema.Entry) error { es = append(es, e); return nil },
			func(m schema.DLQMessage) error { return fmt.Errorf("generated entry rejected: %s", m.Reason) }); err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, Snapshot{ID: fmt.Sprint("generated day ", day), Mode: schema.ModeFull,
			ObservedAt: time.Date(2026, 1, 1+day, 0, 0, 0, 0, time.UTC), Entries: es})
	}
	r := rand.New(rand.NewPCG(3, 4))
	defer func(m int) { minParallel = m }(minParallel)
	for k, shuffle := range []bool{false, true} {
		minParallel = []int{1000, 1}[k]
		known := NewState()
		for _, s := range snaps {
			if shuffle {
				s.Entries = append([]schema.Entry(nil), s.Entries...)
				r.Shuffle(len(s.Entries), func(i, j int) { s.Entries[i], s.Entries[j] = s.Entries[j], s.Entries[i] })
			}
			known = applyBoth(t, known, s, Options{})
		}
	}
}

// FuzzDiffMatchesReference: any sequence of random listings.
func FuzzDiffMatchesReference(f *testing.F) {
	for i := range 8 {
		f.Add(uint64(i), uint64(i*7), uint8(4))
	}
	f.Fuzz(func(t *testing.T, a, b uint64, days uint8) {
		defer func(m int) { minParallel = m }(minParallel)
		minParallel = 1 + int(a%5)
		r := rand.New(rand.NewPCG(a, b))
		known := NewState()
		var prev []schema.Entry
		for day := range int(days%16) + 1 {
			snap := randomSnapshot(r, day, prev)
			known = applyBoth(t, known, snap, Options{PartialRatio: float64(r.IntN(101)) / 100})
			prev = snap.Entries
		}
	})
}

// generatedPair is day 0 and day 1 of a generated registry of n servers.
func generatedPair(b *testing.B, n int) (old, cur []schema.Entry) {
	b.Helper()
	gen := corpus.New(corpus.Config{Servers: n, Seed: 1})
	read := func() []schema.Entry {
		var buf bytes.Buffer
		if _, err := gen.WriteSnapshot(&buf); err != nil {
			b.Fatal(err)
		}
		var es []schema.Entry
		if _, err := registry.ReadSnapshot(&buf, "gen", time.Time{}, func(e schema.Entry) error { es = append(es, e); return nil },
			func(m schema.DLQMessage) error { return fmt.Errorf("generated entry rejected: %s", m.Reason) }); err != nil {
			b.Fatal(err)
		}
		return es
	}
	old = read()
	gen.Advance()
	return old, read()
}

// BenchmarkDiffGenerated is benchmark 1's diff alone (bench/README.md):
// the state of day 0 built from an empty one, then day 1 diffed against
// it, 50,000 servers (~170k records each), by Diff and by the reference;
// then the same listings shuffled.
func BenchmarkDiffGenerated(b *testing.B) {
	old, cur := generatedPair(b, 50_000)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	run := func(b *testing.B, diff func(*State, Snapshot, Options) Result, old, cur []schema.Entry) {
		b.ReportAllocs()
		for b.Loop() {
			known := diff(NewState(), Snapshot{ID: "old", Mode: schema.ModeFull, ObservedAt: t0, Entries: old}, Options{}).Next
			res := diff(known, Snapshot{ID: "new", Mode: schema.ModeFull, ObservedAt: t0.Add(24 * time.Hour), Entries: cur}, Options{})
			if len(res.Events) == 0 {
				b.Fatal("no events")
			}
		}
	}
	b.Run("forum", func(b *testing.B) { run(b, Diff, old, cur) })
	b.Run("reference", func(b *testing.B) { run(b, referenceDiff, old, cur) })
	r := rand.New(rand.NewPCG(5, 6))
	shuffled := func(es []schema.Entry) []schema.Entry {
		es = append([]schema.Entry(nil), es...)
		r.Shuffle(len(es), func(i, j int) { es[i], es[j] = es[j], es[i] })
		return es
	}
	oldS, curS := shuffled(old), shuffled(cur)
	b.Run("forum-shuffled", func(b *testing.B) { run(b, Diff, oldS, curS) })
	b.Run("reference-shuffled", func(b *testing.B) { run(b, referenceDiff, oldS, curS) })
}

// TestEventIDIsTheReference: the id on the stack is the id through a
// hash.Hash, for short fields and for fields past the stack buffer.
func TestEventIDIsTheReference(t *testing.T) {
	at := time.Date(2025, 10, 1, 0, 0, 0, 5, time.FixedZone("x", 3600))
	long := string(bytes.Repeat([]byte("é<x>"), 300))
	for _, f := range [][4]string{{"a/b", "removed", "1", ""}, {"", "", "", ""}, {"io.x/y", "description_changed", long, "short"}, {"io.x/y", "endpoints_changed", `[["sse","https://x"]]`, long}} {
		if got, want := EventID(f[0], f[1], f[2], f[3], at), referenceEventID(f[0], f[1], f[2], f[3], at); got != want {
			t.Errorf("%q: %s, reference %s", f, got, want)
		}
	}
}

// TestDiffVersionListedTwice: a server listed with one version twice,
// where known has that version and one more with the same content, lost
// the other version (known's map is not the snapshot's).
func TestDiffVersionListedTwice(t *testing.T) {
	t0 := time.Date(2025, 10, 1, 0, 0, 0, 0, time.UTC)
	e := func(version string) schema.Entry {
		return schema.Entry{Server: schema.ServerDetail{Name: "io.example/a", Version: version, Description: "d"}}
	}
	others := func() []schema.Entry {
		var es []schema.Entry
		for i := range 20 {
			es = append(es, schema.Entry{Server: schema.ServerDetail{Name: fmt.Sprintf("io.example/o%d", i), Version: "1"}})
		}
		return es
	}
	known := applyBoth(t, NewState(), Snapshot{ID: "0", Mode: schema.ModeFull, ObservedAt: t0, Entries: append(others(), e("1"), e("2"))}, Options{})
	for _, mode := range []string{schema.ModeFull, schema.ModeIncremental} {
		applyBoth(t, known, Snapshot{ID: "1", Mode: mode, ObservedAt: t0.Add(time.Hour), Entries: append(others(), e("1"), e("1"))}, Options{})
	}
}
