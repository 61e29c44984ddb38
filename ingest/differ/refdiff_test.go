package differ

// The differ as it was before the grouped walk (2026-11-30), kept as the
// reference the rewritten Diff is compared with (reference_test.go).

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/forum-mcp/forum/schema"
)

// snapshotView indexes a snapshot the way State does. At registry scale it
// is map-bound, so the work is spread: the contents are computed in
// parallel, then the version map and the latest map (with the sorted name
// list) are built at the same time, each by one goroutine, in entry order.
func referenceSnapshotView(entries []schema.Entry) (map[string]map[string]Content, map[string]Latest, []string) {
	contents := make([]Content, len(entries))
	parallel(len(entries), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			contents[i] = contentOf(&entries[i])
		}
	})
	vers := make(map[string]map[string]Content, len(entries)/2)
	latest := make(map[string]Latest, len(entries)/2)
	var order []string
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range entries {
			n := entries[i].Server.Name
			vm, ok := vers[n]
			if !ok {
				vm = make(map[string]Content, 1)
				vers[n] = vm
			}
			vm[entries[i].Server.Version] = contents[i]
		}
	}()
	for i := range entries {
		n := entries[i].Server.Name
		cur, ok := latest[n]
		if !ok {
			order = append(order, n)
		}
		if !ok || better(contents[i], cur.Content) {
			latest[n] = Latest{Version: entries[i].Server.Version, Content: contents[i]}
		}
	}
	slices.Sort(order)
	wg.Wait()
	return vers, latest, order
}

// referenceDiff is Diff as it was before the grouped walk (2026-11-30):
// maps looked up per name. Kept to compare with.
func referenceDiff(known *State, snap Snapshot, opt Options) Result {
	ratio := opt.PartialRatio
	if ratio <= 0 {
		ratio = DefaultPartialRatio
	}
	nv, nl, names := referenceSnapshotView(snap.Entries)
	incremental := snap.Mode == schema.ModeIncremental
	reason := ""
	if !incremental {
		switch {
		case snap.Incomplete:
			reason = "the listing is incomplete (cut short, or entries could not be read)"
		case float64(len(nl)) < ratio*float64(len(known.Latest)):
			reason = fmt.Sprintf("%d names, under %.0f%% of the %d known", len(nl), 100*ratio, len(known.Latest))
		}
	}
	partial := reason != ""
	merge := partial || incremental

	// merged holds, for each server a merged snapshot touches, everything
	// known of its versions with the snapshot's on top.
	var merged map[string]map[string]Content
	if merge {
		merged = make(map[string]map[string]Content, len(names))
		for _, n := range names {
			old, existed := known.Latest[n]
			merged[n], nl[n] = mergeServer(known.Versions[n], nv[n], nl[n], old, existed)
		}
	}

	at := snap.ObservedAt.UTC()
	ev := make([]schema.DriftEvent, 0, 16)
	add := func(name, kind, version, before, after string, bump bool) {
		ev = append(ev, schema.DriftEvent{
			ID:          referenceEventID(name, kind, before, after, at),
			Server:      name,
			Namespace:   schema.Namespace(name),
			Kind:        kind,
			Version:     version,
			Before:      before,
			After:       after,
			ObservedAt:  at,
			VersionBump: bump,
			SnapshotID:  snap.ID,
		})
	}

	for _, n := range names {
		l := nl[n]
		old, existed := known.Latest[n]
		if !existed {
			add(n, schema.KindNewServer, l.Version, "", l.Version, false)
			continue
		}
		var buf [4]string
		added := buf[:0]
		kv := known.Versions[n]
		for v := range nv[n] {
			if _, ok := kv[v]; !ok {
				added = append(added, v)
			}
		}
		slices.Sort(added)
		for _, v := range added {
			add(n, schema.KindVersionAdded, v, old.Version, v, old.Version != v)
		}
		if old.Provisional && !l.Provisional && l.IsLatest {
			continue // a stand-in replaced by the real latest: a baseline, not a change
		}
		bump := old.Version != l.Version
		if old.Description != l.Description {
			add(n, schema.KindDescriptionChanged, l.Version, old.Description, l.Description, bump)
		}
		if old.Title != l.Title {
			add(n, schema.KindTitleChanged, l.Version, old.Title, l.Title, bump)
		}
		if old.Endpoints != l.Endpoints {
			add(n, schema.KindEndpointsChanged, l.Version, old.Endpoints, l.Endpoints, bump)
		}
		if statusOr(old.Status) != statusOr(l.Status) {
			add(n, schema.KindStatusChanged, l.Version, statusOr(old.Status), statusOr(l.Status), bump)
		}
	}
	if !merge {
		gone := make([]string, 0)
		for n := range known.Latest {
			if _, ok := nl[n]; !ok {
				gone = append(gone, n)
			}
		}
		sort.Strings(gone)
		for _, n := range gone {
			add(n, schema.KindRemoved, known.Latest[n].Version, known.Latest[n].Version, "", false)
		}
	}

	next := &State{
		NextOffset: known.NextOffset,
		Applied:    at,
		AppliedID:  snap.ID,
		Snapshots:  known.Snapshots + 1,
		EventCount: known.EventCount + int64(len(ev)),
	}
	next.FirstSeen = maps.Clone(known.FirstSeen)
	if next.FirstSeen == nil {
		next.FirstSeen = make(map[string]time.Time, len(names))
	}
	for _, n := range names {
		if _, ok := next.FirstSeen[n]; !ok {
			next.FirstSeen[n] = at
		}
	}
	if merge {
		// What the snapshot adds or changes is kept, what it lacks stays.
		// Untouched servers share known's version maps (never written).
		next.Versions = make(map[string]map[string]Content, len(known.Versions)+len(merged))
		maps.Copy(next.Versions, known.Versions)
		maps.Copy(next.Versions, merged)
		next.Latest = make(map[string]Latest, len(known.Latest)+len(nl))
		maps.Copy(next.Latest, known.Latest)
		maps.Copy(next.Latest, nl)
	} else {
		next.Versions, next.Latest = nv, nl
	}
	return Result{Events: ev, Partial: partial, PartialReason: reason, Names: len(nl), Next: next}
}

// referenceEventID is EventID as it was: the fields through a hash.Hash.
func referenceEventID(server, kind, before, after string, at time.Time) string {
	h := sha256.New()
	for _, s := range []string{server, kind, before, after, at.UTC().Format(time.RFC3339Nano)} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}
