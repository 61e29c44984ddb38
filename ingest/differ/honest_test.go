package differ_test

// "An honest instrument": our own faults (a truncated capture, an entry we
// could not read, a page that does not carry a flag the registry flipped)
// must never be reported as the registry's. Real captures throughout.

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/forum-mcp/forum/ingest/differ"
	"github.com/forum-mcp/forum/ingest/registry"
	"github.com/forum-mcp/forum/schema"
)

// bundledFile returns the bundled capture of day (e.g. "2025-10-09").
func bundledFile(t testing.TB, day string) registry.SnapshotFile {
	t.Helper()
	files, err := registry.ListSnapshots(bundled)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if filepath.Base(f.Path) == day+".json.gz" {
			return f
		}
	}
	t.Fatalf("no bundled capture of %s", day)
	return registry.SnapshotFile{}
}

// gunzipped is the JSON document of a bundled capture.
func gunzipped(t testing.TB, f registry.SnapshotFile) []byte {
	t.Helper()
	raw, err := os.ReadFile(f.Path)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// readDoc reads a snapshot document as the replay does, at observedAt.
func readDoc(t testing.TB, doc []byte, observedAt time.Time) differ.Snapshot {
	t.Helper()
	var es []schema.Entry
	st, err := registry.ReadSnapshot(bytes.NewReader(doc), "test.json", observedAt,
		func(e schema.Entry) error { es = append(es, e); return nil },
		func(schema.DLQMessage) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	return differ.Snapshot{ID: observedAt.Format(time.RFC3339), Mode: schema.ModeFull, ObservedAt: observedAt, Entries: es, Incomplete: st.Incomplete}
}

// stateUpTo replays the bundled captures up to and including day.
func stateUpTo(t testing.TB, day string) *differ.State {
	t.Helper()
	files, err := registry.ListSnapshots(bundled)
	if err != nil {
		t.Fatal(err)
	}
	st := differ.NewState()
	for _, f := range files {
		st = differ.Diff(st, load(t, f), differ.Options{}).Next
		if filepath.Base(f.Path) == day+".json.gz" {
			return st
		}
	}
	t.Fatalf("no bundled capture of %s", day)
	return nil
}

// flagged returns, per server, the versions its known state marks latest.
func flagged(st *differ.State) map[string][]string {
	out := map[string][]string{}
	for n, vm := range st.Versions {
		for v, c := range vm {
			if c.IsLatest {
				out[n] = append(out[n], v)
			}
		}
		slices.Sort(out[n])
	}
	return out
}

// TestTruncatedCaptureNeverMovesLatestBack: a capture cut short says what it
// holds, not what it lacks. When it holds only older versions of a server,
// the server's latest view stays where it was and no change is derived from
// the older version.
func TestTruncatedCaptureNeverMovesLatestBack(t *testing.T) {
	day9 := bundledFile(t, "2025-10-09")
	doc := gunzipped(t, day9)
	full := load(t, day9)
	at := day9.CapturedAt.Add(24 * time.Hour) // a later capture time, as the replay's 2025-10-10

	t.Run("a third of the capture already applied adds nothing", func(t *testing.T) {
		// The cut the end-to-end replay test makes (2025-10-10 = the first
		// third of 2025-10-09): every event it gives is our own fault.
		known := stateUpTo(t, "2025-10-09")
		snap := readDoc(t, doc[:len(doc)/3], at)
		if !snap.Incomplete || len(snap.Entries) == 0 {
			t.Fatalf("the cut capture reads %d entries, incomplete %v", len(snap.Entries), snap.Incomplete)
		}
		res := differ.Diff(known, snap, differ.Options{})
		for _, e := range res.Events {
			t.Errorf("false %s %s: %q -> %q", e.Kind, e.Server, e.Before, e.After)
		}
		for n, l := range known.Latest {
			if got := res.Next.Latest[n]; got.Version != l.Version || got.Content != l.Content {
				t.Errorf("%s: latest view moved from %s to %s", n, l.Version, got.Version)
			}
		}
	})

	// Cut anywhere, a prefix of 2025-10-09 over 2025-10-08 says nothing the
	// whole capture does not say (same event IDs: same server, kind, before,
	// after and time; a new server may show a stand-in version when the cut
	// lacks its latest entry), and moves no latest view anywhere but where
	// the whole capture moves it.
	known := stateUpTo(t, "2025-10-08")
	full.ObservedAt = at
	whole := differ.Diff(known, full, differ.Options{})
	ids := map[string]bool{}
	for _, e := range whole.Events {
		ids[e.ID] = true
		if e.Kind == schema.KindNewServer {
			ids[e.Kind+" "+e.Server] = true
		}
	}
	cuts := []int{len(doc) / 3, len(doc) / 2}
	for c := 200; c < len(doc); c += len(doc) / 97 {
		cuts = append(cuts, c)
	}
	for _, cut := range cuts {
		snap := readDoc(t, doc[:cut], at)
		res := differ.Diff(known, snap, differ.Options{})
		for _, e := range res.Events {
			if !ids[e.ID] && !(e.Kind == schema.KindNewServer && ids[e.Kind+" "+e.Server]) {
				t.Errorf("cut at byte %d (%d entries): %s %s %q -> %q is not in the whole capture's diff", cut, len(snap.Entries), e.Kind, e.Server, e.Before, e.After)
			}
		}
		for n, l := range res.Next.Latest {
			if k, ok := known.Latest[n]; ok && l.Version != k.Version && l.Version != whole.Next.Latest[n].Version {
				t.Errorf("cut at byte %d: %s latest moved from %s to %s (the whole capture says %s)", cut, n, k.Version, l.Version, whole.Next.Latest[n].Version)
			}
		}
		for n, vs := range flagged(res.Next) {
			if len(vs) > 1 {
				t.Errorf("cut at byte %d: %s has %d versions marked latest: %v", cut, n, len(vs), vs)
			}
		}
	}
}

// TestIncrementalLeavesOneLatest: the registry flips the previous version's
// isLatest without changing its updatedAt, so an updated_since listing
// carries the new latest but not the old one. The known state must not keep
// both marked latest, and the incremental reading must agree with the full
// one on every server's latest view and on every event but removals.
func TestIncrementalLeavesOneLatest(t *testing.T) {
	day8, day9 := bundledFile(t, "2025-10-08"), bundledFile(t, "2025-10-09")
	known := stateUpTo(t, "2025-10-08")
	var mark time.Time // the watermark a crawl of 2025-10-08 would keep
	es8, _, _, err := registry.LoadSnapshotFile(day8)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es8 {
		if e.Meta.UpdatedAt.After(mark) {
			mark = e.Meta.UpdatedAt
		}
	}
	full := load(t, day9)
	var since []schema.Entry // what updated_since=mark returns on 2025-10-09
	for _, e := range full.Entries {
		if e.Meta.UpdatedAt.After(mark) {
			since = append(since, e)
		}
	}
	inc := differ.Snapshot{ID: "inc", Mode: schema.ModeIncremental, ObservedAt: full.ObservedAt, Entries: since}
	gotInc := differ.Diff(known, inc, differ.Options{})
	gotFull := differ.Diff(known, full, differ.Options{})

	bumped := 0
	for n, vs := range flagged(gotInc.Next) {
		if len(vs) > 1 {
			t.Errorf("%s: %d versions marked latest after the incremental crawl: %v", n, len(vs), vs)
		}
		if gotInc.Next.Latest[n].Version != known.Latest[n].Version {
			bumped++
		}
	}
	if bumped == 0 {
		t.Fatal("no server got a new latest between the two captures; the test checks nothing")
	}
	for n, l := range gotFull.Next.Latest {
		if got := gotInc.Next.Latest[n]; got.Version != l.Version {
			t.Errorf("%s: incremental latest %s, full %s", n, got.Version, l.Version)
		}
	}
	want := map[string]bool{}
	for _, e := range gotFull.Events {
		if e.Kind != schema.KindRemoved {
			want[e.ID] = true
		}
	}
	got := map[string]bool{}
	for _, e := range gotInc.Events {
		got[e.ID] = true
		if !want[e.ID] {
			t.Errorf("incremental only: %s %s %q -> %q", e.Kind, e.Server, e.Before, e.After)
		}
	}
	for _, e := range gotFull.Events {
		if want[e.ID] && !got[e.ID] {
			t.Errorf("full only: %s %s %q -> %q", e.Kind, e.Server, e.Before, e.After)
		}
	}
}

// TestPartialMergeRules pins how a snapshot that cannot vouch for what it
// lacks (incremental, or a partial full listing) moves a server's latest
// view: to a version it marks latest, else nowhere.
func TestPartialMergeRules(t *testing.T) {
	t0 := time.Date(2025, 10, 1, 0, 0, 0, 0, time.UTC)
	pub := func(e schema.Entry, d int) schema.Entry {
		e.Meta.PublishedAt = t0.Add(time.Duration(d) * time.Hour)
		return e
	}
	v1 := pub(entry("io.example/a", "1.0.0", "one", true, "https://a.example/mcp"), 1)
	v1old := v1
	v1old.Meta.IsLatest = false
	v2 := pub(entry("io.example/a", "2.0.0", "two", true, "https://a.example/v2"), 2)
	v2old := v2
	v2old.Meta.IsLatest = false
	v3 := pub(entry("io.example/a", "3.0.0", "three", false), 3) // not latest: a newer one exists, unseen
	others := func() []schema.Entry {
		var es []schema.Entry
		for i := range 19 {
			es = append(es, entry("io.example/o"+string(rune('a'+i)), "1", "o", true))
		}
		return es
	}
	known := differ.Diff(differ.NewState(), differ.Snapshot{ID: "k", Mode: schema.ModeFull, ObservedAt: t0,
		Entries: append(others(), v1old, v2)}, differ.Options{}).Next

	tests := []struct {
		name        string
		mode        string
		entries     []schema.Entry
		wantLatest  string
		wantFlagged []string
		wantEvents  []string
	}{
		{"incremental: an older version alone moves nothing", schema.ModeIncremental, []schema.Entry{v1old}, "2.0.0", []string{"2.0.0"}, nil},
		{"partial: an older version alone moves nothing", schema.ModeFull, []schema.Entry{v1old}, "2.0.0", []string{"2.0.0"}, nil},
		{"partial: the latest, demoted, with no newer one seen, stays the view", schema.ModeFull, []schema.Entry{v2old, v3}, "2.0.0", nil, []string{"version_added 3.0.0"}},
		{"incremental: a version marked latest is the view; the old mark goes", schema.ModeIncremental,
			[]schema.Entry{pub(entry("io.example/a", "4.0.0", "four", true), 4)}, "4.0.0", []string{"4.0.0"},
			[]string{"description_changed 4.0.0", "endpoints_changed 4.0.0", "version_added 4.0.0"}},
		{"partial: a version marked latest is the view", schema.ModeFull,
			[]schema.Entry{v3, pub(entry("io.example/a", "4.0.0", "four", true), 4)}, "4.0.0", []string{"4.0.0"},
			[]string{"description_changed 4.0.0", "endpoints_changed 4.0.0", "version_added 3.0.0", "version_added 4.0.0"}},
		{"incremental: the latest itself changed", schema.ModeIncremental,
			[]schema.Entry{func() schema.Entry { e := v2; e.Server.Description = "two!"; return e }()}, "2.0.0", []string{"2.0.0"},
			[]string{"description_changed 2.0.0"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := differ.Diff(known, differ.Snapshot{ID: "s", Mode: tc.mode, ObservedAt: t0.Add(24 * time.Hour), Entries: tc.entries}, differ.Options{})
			if got := res.Next.Latest["io.example/a"].Version; got != tc.wantLatest {
				t.Errorf("latest = %s, want %s", got, tc.wantLatest)
			}
			if got := flagged(res.Next)["io.example/a"]; !slices.Equal(got, tc.wantFlagged) {
				t.Errorf("marked latest = %v, want %v", got, tc.wantFlagged)
			}
			var evs []string
			for _, e := range res.Events {
				evs = append(evs, e.Kind+" "+e.Version)
			}
			slices.Sort(evs)
			if !slices.Equal(evs, tc.wantEvents) {
				t.Errorf("events = %v, want %v", evs, tc.wantEvents)
			}
		})
	}

	// A new server whose latest a partial capture does not hold is new; the
	// version it shows stands in until its real latest is seen, and that
	// first sight is no change.
	t.Run("a stand-in view is replaced without events", func(t *testing.T) {
		b1 := pub(entry("io.example/b", "1.0.0", "b one", false, "https://b.example/1"), 1)
		b2 := pub(entry("io.example/b", "2.0.0", "b two", true, "https://b.example/2"), 2)
		res := differ.Diff(known, differ.Snapshot{ID: "p", Mode: schema.ModeFull, ObservedAt: t0.Add(24 * time.Hour), Entries: []schema.Entry{b1}}, differ.Options{})
		if c := differ.Counts(res.Events); c[schema.KindNewServer] != 1 || len(res.Events) != 1 {
			t.Fatalf("events %v, want one new_server", c)
		}
		next := differ.Diff(res.Next, differ.Snapshot{ID: "f", Mode: schema.ModeFull, ObservedAt: t0.Add(48 * time.Hour),
			Entries: append(append(others(), v1old, v2), b1, b2)}, differ.Options{})
		var evs []string
		for _, e := range next.Events {
			evs = append(evs, e.Kind+" "+e.Server+" "+e.Version)
		}
		if !slices.Equal(evs, []string{"version_added io.example/b 2.0.0"}) {
			t.Errorf("events %v, want only the version added", evs)
		}
	})
}

// rawWithout returns doc (a JSON array of entries) with server.name removed
// from the entry of name.
func rawWithout(t testing.TB, doc []byte, name string) []byte {
	t.Helper()
	var raws []map[string]json.RawMessage
	if err := json.Unmarshal(bytes.TrimPrefix(doc, []byte("\xef\xbb\xbf")), &raws); err != nil {
		t.Fatal(err)
	}
	hit := 0
	for _, r := range raws {
		var s map[string]json.RawMessage
		if json.Unmarshal(r["server"], &s) != nil {
			continue
		}
		var n string
		_ = json.Unmarshal(s["name"], &n)
		if n == name {
			delete(s, "name")
			r["server"], _ = json.Marshal(s)
			hit++
		}
	}
	if hit != 1 {
		t.Fatalf("%s has %d entries, want 1", name, hit)
	}
	out, err := json.Marshal(raws)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
