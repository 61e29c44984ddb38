package trust

import (
	"sort"
	"time"

	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/schema"
)

// OwnerBurstOf evaluates one namespace from its new_server event times.
// Windows are the last `windows` (7) consecutive 24 h windows ending at now,
// (now−24h·(i+1), now−24h·i]: an event at now is in the current window, one
// exactly 24 h before now in the one before it. Events after now or at or
// before the oldest window's open end are ignored. Windows are anchored at
// the publication time, not at UTC midnight, so a replay gives the same
// answer as living through it.
func OwnerBurstOf(w *method.Weights, newServerTimes []time.Time, now time.Time) OwnerBurst {
	ob := w.OwnerBurst
	win := time.Duration(ob.WindowHours * float64(time.Hour))
	per := make([]int, ob.Windows)
	for _, t := range newServerTimes {
		if t.After(now) {
			continue
		}
		// age in [0, win) → current window (index Windows-1): the window is
		// open at now−win, so an age of exactly win belongs to the next one.
		i := int(now.Sub(t) / win)
		if i >= ob.Windows {
			continue
		}
		per[ob.Windows-1-i]++
	}
	res := OwnerBurst{PerWindowNew: per}
	for _, n := range per {
		if n >= ob.RecurringMinPerWindow {
			res.WindowsOverThreshold++
		}
	}
	res.RecurringBurst = res.WindowsOverThreshold >= ob.RecurringMinWindows
	res.FirstWindowBurst = per[ob.Windows-1] >= ob.FirstWindowMin
	return res
}

// OwnerBursts evaluates every namespace from new_server drift events and
// returns only the flagged ones (the record field is set only for them).
func OwnerBursts(w *method.Weights, events []schema.DriftEvent, now time.Time) map[string]OwnerBurst {
	byNS := map[string][]time.Time{}
	for _, e := range events {
		if e.Kind != schema.KindNewServer {
			continue
		}
		ns := e.Namespace
		if ns == "" {
			ns = schema.Namespace(e.Server)
		}
		byNS[ns] = append(byNS[ns], e.ObservedAt)
	}
	out := map[string]OwnerBurst{}
	nss := make([]string, 0, len(byNS))
	for ns := range byNS {
		nss = append(nss, ns)
	}
	sort.Strings(nss)
	for _, ns := range nss {
		if b := OwnerBurstOf(w, byNS[ns], now); b.Flagged() {
			out[ns] = b
		}
	}
	return out
}
