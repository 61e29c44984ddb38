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
//     the known names, or one marked Incomplete, emits no removals, and is
//     merged into the known state instead of replacing it. The real corpus
//     has six 100-entry captures (2025-09-30 → 10-06) that would otherwise
//     read as mass removal and then mass re-addition.
//   - Incomplete means the listing lacks entries its source held: the source
//     could not be read to its end (a truncated file, a page that failed), or
//     an entry in it could not be read (no valid name, malformed, too large:
//     registry.SnapshotStats.Unreadable). An unreadable entry may be any
//     server's, so such a snapshot cannot say what is gone: it is partial for
//     removals (its additions and changes are still reported), and the
//     summary says so (partial, with its rejects). Rejects that hide no
//     server (a duplicate whose first copy was kept, versions over the
//     per-name bound) leave a listing whole.
//   - Incremental snapshots are always merged.
//   - A merged snapshot (partial or incremental) says what it holds, never
//     what it lacks, so it moves a server's latest view only to a version it
//     marks latest; the versions of that server it does not carry lose their
//     mark (the registry keeps one latest per server, and flips the old one
//     without touching its updatedAt, so an incremental page never carries
//     it). A merged snapshot holding only older versions of a server leaves
//     the server's view as it was: nothing is derived from an older version.
//   - A new server whose latest entry a merged snapshot lacks is reported new
//     with the best version it holds as a stand-in (Latest.Provisional); the
//     first sight of its real latest is a baseline, not a change.
package differ

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
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
	// Provisional marks a stand-in: a merged snapshot showed the server
	// without its latest entry. The first entry marked latest replaces it
	// without change events (it was never the registry's latest view).
	Provisional bool `json:"pv,omitempty"`
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
	// Incomplete marks a listing that lacks entries its source held: it
	// could not be read to its end, or some of its entries could not be
	// read (see the package doc). Removals are then not inferred.
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
	// PartialReason says why a full snapshot was read as partial ("" when
	// it was not), for logs and the CLI.
	PartialReason string
	Names         int // names in the snapshot
	Next          *State
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

// contentOf is what the differ keeps of e.
func contentOf(e *schema.Entry) Content { return contentWith(e, Endpoints(e.Server.Remotes)) }

// sameRemotes reports whether a and b hold the same remotes in the same
// order (then their Endpoints are equal).
func sameRemotes(a, b []schema.Remote) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Type != b[i].Type || a[i].URL != b[i].URL {
			return false
		}
	}
	return true
}

// contentWith is contentOf with e's Endpoints already made.
func contentWith(e *schema.Entry, endpoints string) Content {
	st := e.Meta.Status
	if st == "active" {
		st = ""
	}
	return Content{
		Description: e.Server.Description,
		Title:       e.Server.Title,
		Endpoints:   endpoints,
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

// view is a snapshot indexed by server: the maps a State keeps (vers,
// latest), and the same servers as groups of entries, which Diff walks in
// name order without looking them up again.
type view struct {
	vers   map[string]map[string]Content
	latest map[string]Latest
	name   []string // per group: the server's name
	pick   []Latest // per group: its latest entry
	start  []int32  // group g's entries are members[start[g]:start[g+1]], in file order
	member []int32
	order  []int32 // groups by name
	// What known has of each group's server: its latest entry (and
	// whether it has the server at all) and its version map. same: the
	// snapshot holds exactly those versions with those contents, so the
	// group's version map is known's own.
	old     []Latest
	existed []bool
	kv      []map[string]Content
	same    []bool
}

// entries returns the indexes of group g's entries, in file order.
func (v *view) entries(g int32) []int32 { return v.member[v.start[g]:v.start[g+1]] }

// snapshotView indexes a snapshot, and looks its servers up in known. At
// registry scale it is bound by map work and cache misses, so each name is
// hashed as few times as can be: entries are grouped by name (one lookup
// per run of entries with the same name, as a listing usually holds a
// server's versions together); then, in parallel, each group's contents and
// latest entry are made and its server looked up in known, and its version
// map is made only when known's differs (from one day to the next almost
// every server is as it was, and a version map is a 1 KB allocation); then
// the two maps of the State are filled at once, each by one goroutine,
// while the names are sorted. The 2 × 170k-record benchmark
// (bench/RESULTS.md) spent 0.65 s in Diff with a map lookup per entry and
// four per name.
func snapshotView(entries []schema.Entry, known *State) *view {
	n := len(entries)
	v := &view{}
	gid := make([]int32, n)
	idx := make(map[string]int32, n/3)
	prev, pg := "", int32(-1)
	for i := range entries {
		name := entries[i].Server.Name
		if pg < 0 || name != prev {
			g, ok := idx[name]
			if !ok {
				g = int32(len(v.name))
				idx[name] = g
				v.name = append(v.name, name)
			}
			prev, pg = name, g
		}
		gid[i] = pg
	}
	groups := len(v.name)
	v.start = make([]int32, groups+1)
	for _, g := range gid {
		v.start[g+1]++
	}
	for g := range groups {
		v.start[g+1] += v.start[g]
	}
	v.member = make([]int32, n)
	next := slices.Clone(v.start[:groups])
	for i, g := range gid {
		v.member[next[g]] = int32(i)
		next[g]++
	}

	v.pick = make([]Latest, groups)
	v.old, v.existed = make([]Latest, groups), make([]bool, groups)
	v.kv, v.same = make([]map[string]Content, groups), make([]bool, groups)
	vms := make([]map[string]Content, groups)
	parallel(groups, func(lo, hi int) {
		var cs []Content // the group's contents, in file order
		for g := int32(lo); g < int32(hi); g++ {
			es := v.entries(g)
			v.old[g], v.existed[g] = known.Latest[v.name[g]]
			kv := known.Versions[v.name[g]]
			same := kv != nil && len(kv) == len(es)
			cs = cs[:0]
			var cur Latest
			for k, i := range es {
				var c Content
				if e := &entries[i]; k > 0 && sameRemotes(entries[es[k-1]].Server.Remotes, e.Server.Remotes) {
					// A server's versions mostly keep their remotes: the
					// endpoint string is the previous entry's.
					c = contentWith(e, cs[k-1].Endpoints)
				} else {
					c = contentOf(e)
				}
				cs = append(cs, c)
				// refdiff's rule (better): on a tie the first seen stays.
				if k == 0 || better(c, cur.Content) {
					cur = Latest{Version: entries[i].Server.Version, Content: c}
				}
				if same {
					kc, ok := kv[entries[i].Server.Version]
					same = ok && kc == c
				}
			}
			// same: every version is known's, with known's content, as
			// many as known has, none twice: then the snapshot's map is
			// known's.
			if same && len(es) > 1 {
				same = distinctVersions(entries, es)
			}
			vm := kv
			if !same {
				vm = make(map[string]Content, len(es))
				for k, i := range es {
					vm[entries[i].Server.Version] = cs[k]
				}
			}
			v.pick[g], vms[g], v.kv[g], v.same[g] = cur, vm, kv, same
		}
	})
	v.vers = make(map[string]map[string]Content, groups)
	v.latest = make(map[string]Latest, groups)
	var wg sync.WaitGroup
	wg.Go(func() {
		for g, vm := range vms {
			v.vers[v.name[g]] = vm
		}
	})
	wg.Go(func() {
		for g, l := range v.pick {
			v.latest[v.name[g]] = l
		}
	})
	v.order = make([]int32, groups)
	for g := range v.order {
		v.order[g] = int32(g)
	}
	slices.SortFunc(v.order, func(a, b int32) int { return strings.Compare(v.name[a], v.name[b]) })
	wg.Wait()
	return v
}

// distinctVersions reports whether no version is listed twice among es.
func distinctVersions(entries []schema.Entry, es []int32) bool {
	if len(es) <= 16 {
		for a := range es {
			for b := a + 1; b < len(es); b++ {
				if entries[es[a]].Server.Version == entries[es[b]].Server.Version {
					return false
				}
			}
		}
		return true
	}
	seen := make(map[string]struct{}, len(es))
	for _, i := range es {
		if _, dup := seen[entries[i].Server.Version]; dup {
			return false
		}
		seen[entries[i].Server.Version] = struct{}{}
	}
	return true
}

// minParallel is the least work split over goroutines (a variable so that
// tests can split small inputs).
var minParallel = 4096

// parallel runs f over [0, n) in GOMAXPROCS chunks (one when n is small).
func parallel(n int, f func(lo, hi int)) {
	w := runtime.GOMAXPROCS(0)
	if n < minParallel || w == 1 {
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
	v := snapshotView(snap.Entries, known)
	nv, nl := v.vers, v.latest
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
		merged = make(map[string]map[string]Content, len(v.order))
		for _, g := range v.order {
			n := v.name[g]
			merged[n], v.pick[g] = mergeServer(v.kv[g], nv[n], v.pick[g], v.old[g], v.existed[g])
			nl[n] = v.pick[g]
		}
	}

	at := snap.ObservedAt.UTC()
	atText := at.Format(time.RFC3339Nano)
	// FirstSeen is built beside the walk: it needs nothing from it.
	var firstSeen map[string]time.Time
	var fsDone sync.WaitGroup
	fsDone.Go(func() {
		firstSeen = maps.Clone(known.FirstSeen)
		if firstSeen == nil {
			firstSeen = make(map[string]time.Time, len(v.name))
		}
		for _, n := range v.name {
			if _, ok := firstSeen[n]; !ok {
				firstSeen[n] = at
			}
		}
	})

	// The walk over the snapshot's servers in name order, in chunks at
	// once (each looks up its servers in known and hashes its events'
	// ids), their events put together in order after.
	w := runtime.GOMAXPROCS(0)
	if len(v.order) < minParallel {
		w = 1
	}
	evs := make([][]schema.DriftEvent, w)
	kepts := make([]int, w)
	var wg sync.WaitGroup
	for c := range w {
		wg.Go(func() {
			lo, hi := c*len(v.order)/w, (c+1)*len(v.order)/w
			evs[c], kepts[c] = walk(snap, v, v.order[lo:hi], at, atText)
		})
	}
	wg.Wait()
	kept := 0 // names of the snapshot that known has
	total := 0
	for c := range w {
		kept += kepts[c]
		total += len(evs[c])
	}
	ev := make([]schema.DriftEvent, 0, total+16)
	for _, e := range evs {
		ev = append(ev, e...)
	}
	// Every known name the snapshot lacks is gone; when it has them all
	// (the count says so), there is nothing to look for.
	if !merge && kept < len(known.Latest) {
		gone := make([]string, 0, len(known.Latest)-kept)
		for n := range known.Latest {
			if _, ok := nl[n]; !ok {
				gone = append(gone, n)
			}
		}
		sort.Strings(gone)
		for _, n := range gone {
			ev = appendEvent(ev, snap.ID, at, atText, n, schema.KindRemoved, known.Latest[n].Version, known.Latest[n].Version, "", false)
		}
	}
	fsDone.Wait()

	next := &State{
		NextOffset: known.NextOffset,
		Applied:    at,
		AppliedID:  snap.ID,
		Snapshots:  known.Snapshots + 1,
		EventCount: known.EventCount + int64(len(ev)),
	}
	next.FirstSeen = firstSeen
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

// walk compares the servers of groups (in name order) with what known has
// of them (v.old, v.kv), and returns their events and how many of them
// known has.
func walk(snap Snapshot, v *view, groups []int32, at time.Time, atText string) ([]schema.DriftEvent, int) {
	var ev []schema.DriftEvent
	add := func(name, kind, version, before, after string, bump bool) {
		ev = appendEvent(ev, snap.ID, at, atText, name, kind, version, before, after, bump)
	}
	kept := 0
	for _, g := range groups {
		n, l, old := v.name[g], v.pick[g], v.old[g]
		if !v.existed[g] {
			add(n, schema.KindNewServer, l.Version, "", l.Version, false)
			continue
		}
		kept++
		var buf [4]string
		added := buf[:0]
		if !v.same[g] { // same: known has every version
			kv := v.kv[g]
			for _, i := range v.entries(g) {
				if ver := snap.Entries[i].Server.Version; !has(kv, ver) {
					added = append(added, ver)
				}
			}
		}
		if len(added) > 1 {
			slices.Sort(added)
			added = slices.Compact(added) // a version listed twice is added once
		}
		for _, ver := range added {
			add(n, schema.KindVersionAdded, ver, old.Version, ver, old.Version != ver)
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
	return ev, kept
}

// appendEvent appends one event; atText is at in RFC 3339 (its id's part).
func appendEvent(ev []schema.DriftEvent, snapID string, at time.Time, atText, name, kind, version, before, after string, bump bool) []schema.DriftEvent {
	return append(ev, schema.DriftEvent{
		ID:          eventID(name, kind, before, after, atText),
		Server:      name,
		Namespace:   schema.Namespace(name),
		Kind:        kind,
		Version:     version,
		Before:      before,
		After:       after,
		ObservedAt:  at,
		VersionBump: bump,
		SnapshotID:  snapID,
	})
}

func has(vm map[string]Content, version string) bool {
	_, ok := vm[version]
	return ok
}

// mergeServer merges a snapshot's versions of one server (sv, and pick, the
// snapshot's own choice of latest among them) into what is known (kv, and
// old when existed), for a snapshot that cannot vouch for what it lacks:
//   - a version the snapshot marks latest is the view, and the known
//     versions it does not carry lose their mark (they can only be stale);
//   - otherwise a known server keeps its view: the snapshot holds older
//     versions only, or shows the latest demoted without its successor,
//     and neither says what the latest is now. A source that marks no
//     version at all (old captures) moves the view to a version published
//     after it, as a full listing would;
//   - a new server without a marked version gets pick as a stand-in.
func mergeServer(kv, sv map[string]Content, pick Latest, old Latest, existed bool) (map[string]Content, Latest) {
	out := make(map[string]Content, len(kv)+len(sv))
	for v, c := range kv {
		if pick.IsLatest && c.IsLatest {
			if _, carried := sv[v]; !carried {
				c.IsLatest = false
			}
		}
		out[v] = c
	}
	maps.Copy(out, sv)
	switch {
	case pick.IsLatest:
		return out, pick
	case !existed:
		pick.Provisional = true
		return out, pick
	case !old.IsLatest && !anyLatest(kv) && pick.PublishedAt.After(old.PublishedAt):
		pick.Provisional = old.Provisional
		return out, pick
	default:
		return out, old
	}
}

func anyLatest(vm map[string]Content) bool {
	for _, c := range vm {
		if c.IsLatest {
			return true
		}
	}
	return false
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
	return eventID(server, kind, before, after, at.UTC().Format(time.RFC3339Nano))
}

// eventID is EventID with the time formatted: one SHA-256 over the fields
// each ended by a zero byte, built on the stack when they are short (a
// snapshot that seeds the state makes one event per server).
func eventID(server, kind, before, after, at string) string {
	var stack [512]byte
	b := stack[:0]
	for _, s := range [...]string{server, kind, before, after, at} {
		b = append(append(b, s...), 0)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
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
