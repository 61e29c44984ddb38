package ownerburst

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/schema"
)

var t0 = time.Date(2025, 9, 15, 0, 0, 0, 0, time.UTC)

// history: a baseline snapshot with many servers, then daily snapshots
// where a few namespaces register in bursts.
func history(r *rand.Rand, days int) ([]schema.DriftEvent, []schema.SnapshotSummary) {
	var evs []schema.DriftEvent
	var sums []schema.SnapshotSummary
	for d := 0; d < days; d++ {
		at := t0.Add(time.Duration(d) * 24 * time.Hour)
		snap := fmt.Sprintf("snap-%03d", d)
		sums = append(sums, schema.SnapshotSummary{ID: snap, ObservedAt: at})
		n := 3 + r.IntN(5)
		if d == 0 {
			n = 200
		}
		for i := 0; i < n; i++ {
			ns := fmt.Sprintf("io.github.ns%d", r.IntN(10))
			if r.IntN(8) == 0 {
				ns = "ai.burst" // the bursty owner
			}
			kind := schema.KindNewServer
			if r.IntN(5) == 0 {
				kind = schema.KindVersionAdded
			}
			server := fmt.Sprintf("%s/d%d-%d", ns, d, i)
			evs = append(evs, schema.DriftEvent{ID: fmt.Sprintf("%s|%s|%d", server, kind, d), Server: server, Namespace: ns, Kind: kind, ObservedAt: at, SnapshotID: snap})
		}
		// The bursty owner registers 25 at once every 9 days and 12 more
		// three days later: a first-window burst on the day of the 25, a
		// recurring burst (two windows of >= 10) on the day of the 12.
		if n := burstsOn(d); n > 0 {
			for i := 0; i < n; i++ {
				server := fmt.Sprintf("ai.burst/x%d-%d", d, i)
				evs = append(evs, schema.DriftEvent{ID: server + "|new", Server: server, Namespace: "ai.burst", Kind: schema.KindNewServer, ObservedAt: at, SnapshotID: snap})
			}
		}
	}
	return evs, sums
}

// burstsOn is how many servers the bursty owner registers at once on day d.
func burstsOn(d int) int {
	switch d % 9 {
	case 4:
		return 25
	case 7:
		return 12
	}
	return 0
}

// expected is the owner-burst reading computed by hand from the events, as
// a reference for the detector: every non-baseline new_server event, bucketed
// into the 7 windows (now−24h·(i+1), now−24h·i] by explicit comparisons.
func expected(evs []schema.DriftEvent, baseline string, now time.Time) []NamespaceBurst {
	per := map[string][]int{}
	for _, e := range evs {
		if e.Kind != schema.KindNewServer || e.SnapshotID == baseline {
			continue
		}
		for i := 0; i < 7; i++ {
			hi := now.Add(-time.Duration(i) * 24 * time.Hour)
			lo := hi.Add(-24 * time.Hour)
			if e.ObservedAt.After(lo) && !e.ObservedAt.After(hi) {
				if per[e.Namespace] == nil {
					per[e.Namespace] = make([]int, 7)
				}
				per[e.Namespace][6-i]++
			}
		}
	}
	out := []NamespaceBurst{}
	names := make([]string, 0, len(per))
	for n := range per {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		b := NamespaceBurst{Namespace: n}
		b.PerWindowNew = per[n]
		for _, c := range per[n] {
			if c >= 10 {
				b.WindowsOverThreshold++
			}
		}
		b.RecurringBurst = b.WindowsOverThreshold >= 2
		b.FirstWindowBurst = per[n][6] >= 20
		if b.RecurringBurst || b.FirstWindowBurst {
			out = append(out, b)
		}
	}
	return out
}

func dump(t *testing.T, s *State) []byte {
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLiveEqualsReplay: events one at a time (reordered within a day, some
// twice, summaries late) versus all at once give the same state and the
// same answers.
func TestLiveEqualsReplay(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 5))
			evs, sums := history(r, 60)
			key := map[string]float64{}
			for _, e := range evs {
				key[e.ID] = float64(e.ObservedAt.Unix()) + r.Float64()*86400
			}
			live := append([]schema.DriftEvent(nil), evs...)
			sort.SliceStable(live, func(i, j int) bool { return key[live[i].ID] < key[live[j].ID] })
			ls := NewStateWith(method.Embedded().Weights)
			si := 0
			for i, e := range live {
				ls.Apply(e)
				if i%5 == 0 {
					ls.Apply(e)
				}
				// Summaries arrive on another topic, behind the events.
				for si < len(sums) && sums[si].ObservedAt.Before(e.ObservedAt.Add(-24*time.Hour)) {
					ls.ApplySnapshot(sums[si])
					si++
				}
			}
			ls.ApplySnapshot(sums[si:]...)
			all := append([]schema.DriftEvent(nil), evs...)
			r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
			rs := NewStateWith(method.Embedded().Weights)
			rs.ApplySnapshot(sums...)
			rs.Apply(all...)
			if !bytes.Equal(dump(t, ls), dump(t, rs)) {
				t.Fatal("live and replayed states differ")
			}
			// At every snapshot after the baseline, both states say what the
			// events say, and on the bursty owner's days that is a flag.
			flagged := 0
			for d, sum := range sums[1:] {
				now := sum.ObservedAt
				want := expected(evs, sums[0].ID, now)
				live, replayed := ls.Flagged(now), rs.Flagged(now)
				if !reflect.DeepEqual(live, want) || !reflect.DeepEqual(replayed, want) {
					t.Fatalf("day %d: live %+v, replayed %+v, want %+v", d+1, live, replayed, want)
				}
				b, ok := rs.OwnerBurst("ai.burst", now)
				switch burstsOn(d + 1) {
				case 25:
					if !ok || !b.FirstWindowBurst {
						t.Fatalf("day %d: 25 registrations, no first-window burst: %+v", d+1, b)
					}
				case 12:
					if !ok || !b.RecurringBurst || b.PerWindowNew[6] < 12 || b.PerWindowNew[3] < 25 {
						t.Fatalf("day %d: 25 then 12 registrations three days apart, no recurring burst: %+v", d+1, b)
					}
				}
				flagged += len(want)
			}
			if flagged < 12 {
				t.Fatalf("only %d flagged readings over 60 days: the comparison proves little", flagged)
			}
		})
	}
}

// TestBaselineIgnored: the first snapshot's 200 "new" servers never flag.
func TestBaselineIgnored(t *testing.T) {
	s := NewStateWith(method.Embedded().Weights)
	var evs []schema.DriftEvent
	for i := 0; i < 40; i++ {
		evs = append(evs, schema.DriftEvent{ID: fmt.Sprint(i), Server: fmt.Sprintf("com.big/s%d", i), Namespace: "com.big", Kind: schema.KindNewServer, ObservedAt: t0, SnapshotID: "base"})
	}
	s.Apply(evs...)
	if _, f := s.OwnerBurst("com.big", t0); !f {
		t.Fatal("without a known baseline 40 new servers in one window must flag")
	}
	s.ApplySnapshot(schema.SnapshotSummary{ID: "base", ObservedAt: t0}, schema.SnapshotSummary{ID: "later", ObservedAt: t0.Add(time.Hour)})
	if b, f := s.OwnerBurst("com.big", t0); f {
		t.Errorf("baseline servers flagged: %+v", b)
	}
	if got := s.Flagged(t0); len(got) != 0 {
		t.Errorf("Flagged = %+v", got)
	}
}

// Prune bounds the state to Retention before the pruning time.
func TestRetentionBound(t *testing.T) {
	s := NewStateWith(method.Embedded().Weights)
	for d := 0; d < 100; d++ {
		at := t0.Add(time.Duration(d) * 24 * time.Hour)
		s.Apply(schema.DriftEvent{ID: fmt.Sprint(d), Server: fmt.Sprintf("io.github.a/s%d", d), Kind: schema.KindNewServer, ObservedAt: at})
		s.Prune(at) // as the stage does at each released snapshot
	}
	n := 0
	for _, m := range s.ns {
		n += len(m)
	}
	if want := int(Retention/(24*time.Hour)) + 1; n != want {
		t.Errorf("kept %d events, want %d (Retention)", n, want)
	}
}

func TestCheckpointRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	evs, sums := history(r, 20)
	s := NewStateWith(method.Embedded().Weights)
	s.ApplySnapshot(sums...)
	s.Apply(evs...)
	path := filepath.Join(t.TempDir(), "ob.json")
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path, method.Embedded().Weights)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(dump(t, s), dump(t, back)) || !reflect.DeepEqual(s.Flagged(s.Watermark()), back.Flagged(back.Watermark())) {
		t.Fatal("round trip changed the state")
	}
}
