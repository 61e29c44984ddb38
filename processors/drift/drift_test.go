package drift

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/forum-mcp/forum/ingest/differ"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/processors/trust"
	"github.com/forum-mcp/forum/schema"
)

var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// history generates a random registry history: servers in a few
// namespaces, one "snapshot" every 6 h over span, each snapshot carrying a
// few events of every kind (bursts of changes included, so multi_change_24h
// and bulk_edit both fire), in snapshot order.
func history(r *rand.Rand, span time.Duration) []schema.DriftEvent {
	kinds := []string{schema.KindVersionAdded, schema.KindDescriptionChanged, schema.KindTitleChanged, schema.KindEndpointsChanged, schema.KindStatusChanged}
	var out []schema.DriftEvent
	seen := map[string]bool{}
	for at := t0; at.Before(t0.Add(span)); at = at.Add(6 * time.Hour) {
		n := r.IntN(6)
		if r.IntN(40) == 0 {
			n += 15 // a bulk description edit or a burst
		}
		for i := 0; i < n; i++ {
			ns := fmt.Sprintf("io.github.ns%d", r.IntN(4))
			server := fmt.Sprintf("%s/s%02d", ns, r.IntN(25))
			kind := kinds[r.IntN(len(kinds))]
			if !seen[server] {
				kind, seen[server] = schema.KindNewServer, true
			}
			after := fmt.Sprintf("v%d", r.IntN(1000))
			if kind == schema.KindEndpointsChanged {
				host := "mcp.example.com"
				if r.IntN(4) == 0 {
					host = "x.trycloudflare.com"
				}
				after = fmt.Sprintf(`[["sse","https://%d.%s/sse"]]`, r.IntN(100), host)
			}
			e := schema.DriftEvent{Server: server, Namespace: ns, Kind: kind, After: after, ObservedAt: at, VersionBump: r.IntN(2) == 0,
				SnapshotID: "snap-" + at.Format(time.RFC3339)}
			e.ID = differ.EventID(server, kind, "", after, at)
			out = append(out, e)
		}
	}
	return out
}

// shuffleWithin permutes events whose times lie within tol of each other:
// the reordering a keyed, partitioned topic may show (a snapshot's events
// across partitions, a redelivered batch).
func shuffleWithin(r *rand.Rand, evs []schema.DriftEvent, tol time.Duration) []schema.DriftEvent {
	out := append([]schema.DriftEvent(nil), evs...)
	key := make(map[string]float64, len(out))
	for _, e := range out {
		key[e.ID] = float64(e.ObservedAt.UnixNano()) + r.Float64()*float64(tol)
	}
	sort.SliceStable(out, func(i, j int) bool { return key[out[i].ID] < key[out[j].ID] })
	return out
}

func dump(t *testing.T, s *State) []byte {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLiveEqualsReplay is the property test of the issue: the same events
// delivered live (one at a time, reordered within tolerance, some twice)
// and replayed (all at once, in any order) give identical state — pruning
// included, since the history spans more than Horizon.
func TestLiveEqualsReplay(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 99))
			evs := history(r, Horizon+200*24*time.Hour)
			live := NewStateWith(method.Embedded().Weights)
			for i, e := range shuffleWithin(r, evs, 48*time.Hour) {
				live.Apply(e)
				if i%7 == 0 { // at-least-once: some events come again
					live.Apply(e)
				}
			}
			all := append([]schema.DriftEvent(nil), evs...)
			r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
			replay := NewStateWith(method.Embedded().Weights)
			replay.Apply(all...)
			if a, b := dump(t, live), dump(t, replay); !bytes.Equal(a, b) {
				t.Fatalf("live and replayed states differ (%d vs %d bytes)", len(a), len(b))
			}
			if st := replay.Stats(); st.Events >= len(evs) {
				t.Errorf("nothing was pruned (%d events kept of %d): the test does not exercise pruning", st.Events, len(evs))
			}
			// Batches of random size, as bus.Consume delivers them.
			batched := NewStateWith(method.Embedded().Weights)
			sh := shuffleWithin(r, evs, 24*time.Hour)
			for i := 0; i < len(sh); {
				n := 1 + r.IntN(300)
				batched.Apply(sh[i:min(i+n, len(sh))]...)
				i += n
			}
			if !bytes.Equal(dump(t, batched), dump(t, replay)) {
				t.Fatal("batched and replayed states differ")
			}
		})
	}
}

// TestPruneBound: pruning changes no published drift score (2 decimals) by
// more than 0.01 compared with keeping every event, for every server, at
// the watermark and a day later.
func TestPruneBound(t *testing.T) {
	w := method.Embedded().Weights
	r := rand.New(rand.NewPCG(7, 7))
	evs := history(r, Horizon+300*24*time.Hour)
	s := NewStateWith(method.Embedded().Weights)
	s.Apply(evs...)
	byServer := map[string][]schema.DriftEvent{}
	for _, e := range evs {
		byServer[e.Server] = append(byServer[e.Server], e)
	}
	for _, now := range []time.Time{s.Watermark(), s.Watermark().Add(24 * time.Hour)} {
		for _, server := range s.Servers() {
			pruned := trust.ComputeWith(w, trust.Input{Server: server, Drift: s.DriftInput(server)}, now)
			full := trust.ComputeWith(w, trust.Input{Server: server, Drift: trust.DriftInput{ObservedSince: s.DriftInput(server).ObservedSince,
				Events: byServer[server], BulkEdits: trust.BulkEdits(w, evs)[schema.Namespace(server)]}}, now)
			if math.Abs(*pruned.Drift.Value-*full.Drift.Value) > 0.01+1e-9 { // one rounding step at most
				t.Errorf("%s at %s: pruned %v, full %v", server, now, *pruned.Drift.Value, *full.Drift.Value)
			}
			if !reflect.DeepEqual(pruned.OpenSignals, full.OpenSignals) {
				t.Errorf("%s: open signals differ: %v vs %v", server, pruned.OpenSignals, full.OpenSignals)
			}
		}
	}
}

func TestPrunePrefix(t *testing.T) {
	at := func(h int) schema.DriftEvent {
		return schema.DriftEvent{ObservedAt: t0.Add(time.Duration(h) * time.Hour)}
	}
	evs := []schema.DriftEvent{at(0), at(10), at(40), at(50), at(100)}
	for _, tc := range []struct {
		cutoffH int
		want    int
	}{{0, 0}, {5, 0}, {11, 2}, {45, 2}, {60, 4}, {200, 5}} {
		// cutoff 5 h: 0 is older but only 10 h before the next event, so it stays;
		// cutoff 11 h: 0 and 10 are older and 10 -> 40 is a 30 h gap > 24 h.
		if got := prunePrefix(evs, t0.Add(time.Duration(tc.cutoffH)*time.Hour), 24*time.Hour); got != tc.want {
			t.Errorf("cutoff %dh: prune %d, want %d", tc.cutoffH, got, tc.want)
		}
	}
	// The first event is followed by only 10 h: with cutoff 5 h nothing may be cut... unless it is alone.
	if got := prunePrefix(evs[:2], t0.Add(5*time.Hour), 24*time.Hour); got != 0 {
		t.Errorf("prefix followed by a short gap was cut: %d", got)
	}
}

func TestDriftInput(t *testing.T) {
	s := NewStateWith(method.Embedded().Weights)
	ns := "io.github.a"
	e := func(server, kind string, h int, after string) schema.DriftEvent {
		at := t0.Add(time.Duration(h) * time.Hour)
		return schema.DriftEvent{ID: differ.EventID(server, kind, "", after, at), Server: server, Namespace: ns, Kind: kind, Before: "b", After: after, ObservedAt: at}
	}
	s.Apply(e(ns+"/x", schema.KindNewServer, 5, "1.0"), e(ns+"/x", schema.KindEndpointsChanged, 1, "u"), e(ns+"/x", schema.KindDescriptionChanged, 2, "d"))
	in := s.DriftInput(ns + "/x")
	if !in.ObservedSince.Equal(t0.Add(5 * time.Hour)) {
		t.Errorf("ObservedSince = %v, want the new_server time", in.ObservedSince)
	}
	if len(in.Events) != 3 || in.Events[0].Kind != schema.KindEndpointsChanged || in.Events[2].Kind != schema.KindNewServer {
		t.Fatalf("events not in time order: %+v", in.Events)
	}
	if in.Events[0].Before != "b" || in.Events[1].Before != "" {
		t.Errorf("endpoints keep their before/after, descriptions do not: %+v", in.Events[:2])
	}
	if got := s.DriftInput("io.github.b/none"); !got.ObservedSince.IsZero() || got.Events != nil {
		t.Errorf("unknown server: %+v", got)
	}
}

func TestCheckpointRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	s := NewStateWith(method.Embedded().Weights)
	s.Apply(history(r, 90*24*time.Hour)...)
	path := filepath.Join(t.TempDir(), "drift-state.json")
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path, method.Embedded().Weights)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(dump(t, s), dump(t, back)) {
		t.Fatal("checkpoint round trip changed the state")
	}
	for _, srv := range s.Servers() {
		if !reflect.DeepEqual(s.DriftInput(srv), back.DriftInput(srv)) {
			t.Fatalf("DriftInput(%s) differs after reload", srv)
		}
	}
	if missing, err := Load(filepath.Join(t.TempDir(), "none.json"), method.Embedded().Weights); err != nil || missing.Stats().Servers != 0 {
		t.Errorf("missing checkpoint: %v, %+v", err, missing.Stats())
	}
}

// TestConcurrentUse: reads during applies (run with -race) always see a
// well-formed state — each server's events time-ordered and unique, never
// more than were applied — and the state after concurrent use equals the
// state of the same events applied alone.
func TestConcurrentUse(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	evs := history(r, 60*24*time.Hour)
	s := NewStateWith(method.Embedded().Weights)
	done := make(chan struct{})
	applied := make(chan struct{}) // the writer waits for a read after every other batch
	go func() {
		defer close(done)
		for i := 0; i < len(evs); i += 50 {
			s.Apply(evs[i:min(i+50, len(evs))]...)
			if (i/50)%2 == 0 {
				applied <- struct{}{}
			}
		}
	}()
	reads := 0
	for reading := true; reading; reads++ {
		select {
		case <-done:
			reading = false
		case <-applied:
		default:
		}
		for _, srv := range []string{"io.github.ns0/s01", "io.github.ns1/s02"} {
			in := s.DriftInput(srv)
			seen := map[string]bool{}
			for i, e := range in.Events {
				if seen[e.ID] || (i > 0 && e.ObservedAt.Before(in.Events[i-1].ObservedAt)) || e.Server != srv {
					t.Fatalf("read %d: events of %s out of order, duplicated or foreign: %+v", reads, srv, in.Events)
				}
				seen[e.ID] = true
			}
		}
		if st := s.Stats(); st.Events > len(evs) {
			t.Fatalf("read %d: %d events held, only %d exist", reads, st.Events, len(evs))
		}
	}
	alone := NewStateWith(method.Embedded().Weights)
	alone.Apply(evs...)
	a, _ := json.Marshal(alone)
	b, _ := json.Marshal(s)
	if !bytes.Equal(a, b) || reads < 2 {
		t.Fatalf("concurrent use left another state than applying alone (or no read overlapped: %d reads)", reads)
	}
}
