// Package differ turns registry snapshots into drift events (SPEC §2).
//
// In: a known State and the next Snapshot (a full listing, or an incremental
// one from an updated_since crawl). Out: the drift events between them and the
// next known State. The function is pure and deterministic: the same inputs
// give the same events with the same IDs, which is what makes at-least-once
// delivery safe downstream (sinks dedup on ID).
//
// Rules, and the reasons behind them:
//   - Content is compared, never updatedAt alone: the registry flips isLatest
//     and rewrites $schema without touching updatedAt.
//   - Each server's scored view is its latest entry: the one flagged isLatest,
//     else the one published last (the reading of ../shared/tools/refdiff.py).
//   - Partial-crawl guard: a full snapshot holding fewer than PartialRatio of
//     the known names (or one the source could not read to its end) emits no
//     removals, and is merged into the known state instead of replacing it.
//     The real corpus has six 100-entry captures (2025-09-30 → 10-06) that
//     would otherwise read as mass removal and then mass re-addition.
//   - Incremental snapshots are always merged; a server's latest entry is then
//     re-chosen from everything known of its versions.
package differ

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/forum-mcp/forum/schema"
)

// DefaultPartialRatio is the share of known names a full snapshot must hold
// to be trusted for removals (SPEC §2: 90 %).
const DefaultPartialRatio = 0.9

// Content is what the differ keeps of one server version: exactly the fields
// the diff rules read, so the state stays small at registry scale.
type Content struct {
	Description string    `json:"d,omitempty"`
	Title       string    `json:"t,omitempty"`
	Endpoints   string    `json:"e,omitempty"` // canonical endpoint set, see Endpoints
	Status      string    `json:"s,omitempty"` // "" means active
	IsLatest    bool      `json:"l,omitempty"`
	PublishedAt time.Time `json:"p,omitzero"`
}

// Latest is a server's latest entry.
type Latest struct {
	Version string `json:"v"`
	Content
}

// State is the known registry: every version seen and each server's latest.
type State struct {
	Versions map[string]map[string]Content `json:"versions"` // name -> version -> content
	Latest   map[string]Latest             `json:"latest"`   // name -> latest entry
	// FirstSeen is when each name first appeared (drift_observed_since).
	FirstSeen map[string]time.Time `json:"first_seen"`
	// Applied is the ObservedAt of the last snapshot applied; snapshots at or
	// before it are skipped on redelivery.
	Applied   time.Time `json:"applied,omitzero"`
	AppliedID string    `json:"applied_id,omitempty"`
	// NextOffset is the registry.records offset to read next: the input
	// position is checkpointed with the state it produced, in one file, so
	// the two can never disagree (a lost checkpoint re-reads from 0).
	NextOffset int64 `json:"next_offset"`
	Snapshots  int   `json:"snapshots"`
	EventCount int64 `json:"event_count"`
}

// NewState returns an empty known state.
func NewState() *State {
	return &State{Versions: map[string]map[string]Content{}, Latest: map[string]Latest{}, FirstSeen: map[string]time.Time{}}
}

// Snapshot is one registry listing to apply.
type Snapshot struct {
	ID         string
	Mode       string // schema.ModeFull or schema.ModeIncremental
	ObservedAt time.Time
	Entries    []schema.Entry
	// Incomplete marks a listing the source could not read to its end.
	Incomplete bool
}

// Options tune Diff.
type Options struct {
	PartialRatio float64 // 0 means DefaultPartialRatio
}

// Result is the outcome of applying one snapshot.
type Result struct {
	Events  []schema.DriftEvent
	Partial bool
	Names   int // names in the snapshot
	Next    *State
}

// Endpoints returns the canonical form of a server's remote set: sorted
// "type url" pairs, JSON-encoded. Two servers with the same remotes in any
// order have the same string.
func Endpoints(rs []schema.Remote) string {
	if len(rs) == 0 {
		return ""
	}
	var one [1][2]string
	var pairs [][2]string
	if len(rs) == 1 {
		pairs = one[:]
	} else {
		pairs = make([][2]string, len(rs))
	}
	n := 2 // brackets
	for i, r := range rs {
		pairs[i] = [2]string{r.Type, r.URL}
		n += len(r.Type) + len(r.URL) + 8
	}
	if len(pairs) > 1 {
		slices.SortFunc(pairs, func(a, b [2]string) int {
			if c := strings.Compare(a[0], b[0]); c != 0 {
				return c
			}
			return strings.Compare(a[1], b[1])
		})
	}
	// json.Marshal's output, written by hand for strings it would copy as
	// they are (the common case, and a hot path at registry scale).
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, p := range pairs {
		if !plainJSON(p[0]) || !plainJSON(p[1]) {
			out, _ := json.Marshal(pairs)
			return string(out)
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `["`...)
		b = append(b, p[0]...)
		b = append(b, `","`...)
		b = append(b, p[1]...)
		b = append(b, `"]`...)
	}
	b = append(b, ']')
	return string(b)
}

// plainJSON reports whether json.Marshal writes s between quotes unchanged:
// printable ASCII without '"', '\\' and the HTML characters it escapes.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

func contentOf(e *schema.Entry) Content {
	st := e.Meta.Status
	if st == "active" {
		st = ""
	}
	return Content{
		Description: e.Server.Description,
		Title:       e.Server.Title,
		Endpoints:   Endpoints(e.Server.Remotes),
		Status:      st,
		IsLatest:    e.Meta.IsLatest,
		PublishedAt: e.Meta.PublishedAt,
	}
}

// better reports whether candidate c should replace the current latest cur
// (refdiff's rule: isLatest wins; among equals, the later publishedAt; on a
// tie the first seen stays).
func better(c, cur Content) bool {
	if c.IsLatest != cur.IsLatest {
		return c.IsLatest
	}
	return c.PublishedAt.After(cur.PublishedAt)
}

// snapshotView indexes a snapshot the way State does. At registry scale it
// is map-bound, so the work is spread: the contents are computed in
// parallel, then the version map and the latest map (with the sorted name
// list) are built at the same time, each by one goroutine, in entry order.
func snapshotView(entries []schema.Entry) (map[string]map[string]Content, map[string]Latest, []string) {
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

// parallel runs f over [0, n) in GOMAXPROCS chunks (one when n is small).
func parallel(n int, f func(lo, hi int)) {
	w := runtime.GOMAXPROCS(0)
	if n < 4096 || w == 1 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	chunk := (n + w - 1) / w
	for lo := chunk; lo < n; lo += chunk {
		wg.Add(1)
		go func() { defer wg.Done(); f(lo, min(lo+chunk, n)) }()
	}
	f(0, min(chunk, n))
	wg.Wait()
}

// Diff applies snap to known and returns the events and the next state.
// known is not modified.
func Diff(known *State, snap Snapshot, opt Options) Result {
	ratio := opt.PartialRatio
	if ratio <= 0 {
		ratio = DefaultPartialRatio
	}
	nv, nl, names := snapshotView(snap.Entries)
	incremental := snap.Mode == schema.ModeIncremental
	partial := !incremental && (snap.Incomplete || float64(len(nl)) < ratio*float64(len(known.Latest)))

	if incremental {
		// Re-choose each touched server's latest from all its known versions.
		for _, n := range names {
			merged := make(map[string]Content, len(known.Versions[n])+len(nv[n]))
			for v, c := range known.Versions[n] {
				merged[v] = c
			}
			for v, c := range nv[n] {
				merged[v] = c
			}
			nl[n] = pickLatest(merged)
		}
	}

	at := snap.ObservedAt.UTC()
	ev := make([]schema.DriftEvent, 0, 16)
	add := func(name, kind, version, before, after string, bump bool) {
		ev = append(ev, schema.DriftEvent{
			ID:          EventID(name, kind, before, after, at),
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
	if !partial && !incremental {
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
	if partial || incremental {
		// Merge: what the snapshot adds or changes is kept, what it lacks stays.
		next.Versions = make(map[string]map[string]Content, len(known.Versions)+len(nv))
		for n, vm := range known.Versions {
			next.Versions[n] = vm
		}
		for n, vm := range nv {
			// Merge per version: a partial capture that lacks some versions
			// of a server says nothing about them.
			merged := make(map[string]Content, len(known.Versions[n])+len(vm))
			for v, c := range known.Versions[n] {
				merged[v] = c
			}
			for v, c := range vm {
				merged[v] = c
			}
			next.Versions[n] = merged
		}
		next.Latest = make(map[string]Latest, len(known.Latest)+len(nl))
		for n, l := range known.Latest {
			next.Latest[n] = l
		}
		for n, l := range nl {
			next.Latest[n] = l
		}
	} else {
		next.Versions, next.Latest = nv, nl
	}
	return Result{Events: ev, Partial: partial, Names: len(nl), Next: next}
}

func pickLatest(vm map[string]Content) Latest {
	keys := make([]string, 0, len(vm))
	for v := range vm {
		keys = append(keys, v)
	}
	sort.Strings(keys) // deterministic tie-break among equal candidates
	var out Latest
	for i, v := range keys {
		if i == 0 || better(vm[v], out.Content) {
			out = Latest{Version: v, Content: vm[v]}
		}
	}
	return out
}

func statusOr(s string) string {
	if s == "" {
		return "active"
	}
	return s
}

// EventID is the deterministic id of a drift event: a hash of server, kind,
// before, after and the snapshot's time (SPEC §2).
func EventID(server, kind, before, after string, at time.Time) string {
	h := sha256.New()
	for _, s := range []string{server, kind, before, after, at.UTC().Format(time.RFC3339Nano)} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// Counts tallies events per kind.
func Counts(evs []schema.DriftEvent) map[string]int {
	out := map[string]int{}
	for _, e := range evs {
		out[e.Kind]++
	}
	return out
}

// FormatCounts renders counts in schema.EventKinds order, e.g. for stderr.
func FormatCounts(c map[string]int) string {
	var b strings.Builder
	for _, k := range schema.EventKinds {
		if b.Len() > 0 {
			b.WriteString(" ")
		}
		b.WriteString(k)
		b.WriteString("=")
		b.WriteString(strconv.Itoa(c[k]))
	}
	return b.String()
}
