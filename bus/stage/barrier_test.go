package stage

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/forum-mcp/forum/schema"
)

func snap(i, events int) (schema.SnapshotSummary, []schema.DriftEvent) {
	at := time.Date(2025, 10, 1+i, 0, 0, 0, 0, time.UTC)
	s := schema.SnapshotSummary{ID: fmt.Sprintf("s%d", i), Mode: schema.ModeFull, ObservedAt: at, Events: events}
	var evs []schema.DriftEvent
	for j := range events {
		evs = append(evs, schema.DriftEvent{ID: fmt.Sprintf("e%d-%d", i, j), Server: "a/b", Kind: schema.KindNewServer, ObservedAt: at, SnapshotID: s.ID})
	}
	return s, evs
}

// Snapshots are released in order, only once all their events arrived,
// whatever the interleaving of events and summaries and however often
// anything is redelivered — and a checkpoint taken at any point resumes
// to the same releases.
func TestSnapshotBarrierReleasesInOrderWhateverTheInterleaving(t *testing.T) {
	type msg struct {
		sum *schema.SnapshotSummary
		ev  *schema.DriftEvent
	}
	var summaries []schema.SnapshotSummary
	var events [][]msg // per snapshot: its events
	counts := []int{3, 0, 5, 1, 4}
	for i, n := range counts {
		s, evs := snap(i, n)
		summaries = append(summaries, s)
		var ms []msg
		for j := range evs {
			ms = append(ms, msg{ev: &evs[j]})
		}
		events = append(events, ms)
	}
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 7))
		// Summaries keep their order (one partition); events interleave
		// anywhere, some twice.
		var stream []msg
		for i := range summaries {
			stream = append(stream, msg{sum: &summaries[i]})
		}
		for _, evs := range events {
			for _, m := range evs {
				for range 1 + rng.IntN(2) {
					pos := rng.IntN(len(stream) + 1)
					stream = slices.Insert(stream, pos, m)
				}
			}
		}
		var b SnapshotBarrier
		var got []string
		for k, m := range stream {
			if m.sum != nil {
				b.Summary(*m.sum)
			} else {
				b.Event(*m.ev)
			}
			for _, s := range b.Release() {
				got = append(got, s.ID)
			}
			if k == len(stream)/2 { // a checkpoint and a restart half way
				raw, err := json.Marshal(&b)
				if err != nil {
					t.Fatal(err)
				}
				b = SnapshotBarrier{}
				if err := json.Unmarshal(raw, &b); err != nil {
					t.Fatal(err)
				}
			}
		}
		if want := []string{"s0", "s1", "s2", "s3", "s4"}; !slices.Equal(got, want) {
			t.Fatalf("seed %d: released %v, want %v", seed, got, want)
		}
		if b.Waiting() != 0 || len(b.Early) != 0 {
			t.Fatalf("seed %d: left %d pending, %d early", seed, b.Waiting(), len(b.Early))
		}
	}
}

// A summary does not release before its last event, and a redelivered
// snapshot after its release changes nothing.
func TestSnapshotBarrierWaitsAndIgnoresRedelivery(t *testing.T) {
	s, evs := snap(0, 2)
	var b SnapshotBarrier
	b.Summary(s)
	b.Event(evs[0])
	b.Event(evs[0]) // a duplicate is not a second event
	if got := b.Release(); len(got) != 0 {
		t.Fatalf("released %v with one of two events", got)
	}
	b.Event(evs[1])
	if got := b.Release(); len(got) != 1 {
		t.Fatalf("released %v, want s0", got)
	}
	b.Summary(s)
	b.Event(evs[1])
	if got := b.Release(); len(got) != 0 || b.Waiting() != 0 || len(b.Early) != 0 {
		t.Fatalf("a redelivered snapshot was released again: %v (pending %d, early %d)", got, b.Waiting(), len(b.Early))
	}
}
