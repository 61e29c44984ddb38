package stage

import (
	"slices"
	"time"

	"github.com/forum-mcp/forum/schema"
)

// SnapshotBarrier tells a stage that reads registry.diffs and
// registry.snapshots when every drift event of a snapshot has arrived.
//
// Why: the differ writes a snapshot's events (keyed by server, over many
// partitions) and then its summary (one partition); Kafka orders nothing
// across partitions, so a consumer may see the summary before some of the
// events. The summary says how many events the snapshot has (each with a
// distinct id), so the barrier counts distinct event ids per snapshot and
// releases a snapshot once all are in — and only after every earlier
// snapshot (registry.snapshots has one partition, so summaries arrive in
// order). A stage that concludes its outputs at released snapshots, with
// the snapshot's time as event time, emits the same outputs however its
// input was batched, redelivered or interleaved.
//
// The barrier is plain data (JSON) so it goes into the stage's checkpoint.
// Memory: the ids of snapshots not yet released (a full first crawl of the
// registry is ~20k new_server ids, ~1.5 MB, until its summary completes).
type SnapshotBarrier struct {
	// Released is the time of the last released snapshot: events and
	// summaries at or before it are redeliveries and are ignored.
	Released time.Time `json:"released,omitzero"`
	// Pending are summaries waiting for their events, in arrival order.
	Pending []*PendingSnapshot `json:"pending"`
	// Early holds event ids whose summary has not arrived yet, by snapshot.
	Early map[string]*EarlyEvents `json:"early,omitempty"`
}

// EarlyEvents are the ids of a snapshot's events seen before its summary.
type EarlyEvents struct {
	At  time.Time `json:"at"` // the snapshot's time (every event carries it)
	IDs []string  `json:"ids"`
}

// PendingSnapshot is a summary and the distinct event ids seen for it.
type PendingSnapshot struct {
	Summary schema.SnapshotSummary `json:"summary"`
	IDs     []string               `json:"ids"` // sorted, distinct
}

func addID(ids []string, id string) []string {
	i, found := slices.BinarySearch(ids, id)
	if found {
		return ids
	}
	return slices.Insert(ids, i, id)
}

// Event records one drift event.
func (b *SnapshotBarrier) Event(e schema.DriftEvent) {
	if e.SnapshotID == "" || (!b.Released.IsZero() && !e.ObservedAt.After(b.Released)) {
		return
	}
	for _, p := range b.Pending {
		if p.Summary.ID == e.SnapshotID {
			p.IDs = addID(p.IDs, e.ID)
			return
		}
	}
	if b.Early == nil {
		b.Early = map[string]*EarlyEvents{}
	}
	x := b.Early[e.SnapshotID]
	if x == nil {
		x = &EarlyEvents{At: e.ObservedAt}
		b.Early[e.SnapshotID] = x
	}
	x.IDs = addID(x.IDs, e.ID)
}

// Summary records one snapshot summary.
func (b *SnapshotBarrier) Summary(s schema.SnapshotSummary) {
	if !b.Released.IsZero() && !s.ObservedAt.After(b.Released) {
		delete(b.Early, s.ID)
		return
	}
	for _, p := range b.Pending {
		if p.Summary.ID == s.ID {
			return
		}
	}
	p := &PendingSnapshot{Summary: s}
	if x := b.Early[s.ID]; x != nil {
		p.IDs = x.IDs
	}
	delete(b.Early, s.ID)
	b.Pending = append(b.Pending, p)
}

// Release pops the snapshots whose events have all arrived, oldest first,
// stopping at the first that is still incomplete.
func (b *SnapshotBarrier) Release() []schema.SnapshotSummary {
	var out []schema.SnapshotSummary
	for len(b.Pending) > 0 && len(b.Pending[0].IDs) >= b.Pending[0].Summary.Events {
		s := b.Pending[0].Summary
		b.Pending = b.Pending[1:]
		if s.ObservedAt.After(b.Released) {
			b.Released = s.ObservedAt
		}
		out = append(out, s)
	}
	// Early ids at or before what was released can never complete (their
	// summary was a redelivery, or was skipped by the differ): drop them.
	for id, x := range b.Early {
		if !x.At.After(b.Released) {
			delete(b.Early, id)
		}
	}
	if len(b.Pending) == 0 {
		b.Pending = nil
	}
	return out
}

// Waiting is the number of summaries not yet released.
func (b *SnapshotBarrier) Waiting() int { return len(b.Pending) }
