package differ_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/forum-mcp/forum/ingest/differ"
	"github.com/forum-mcp/forum/ingest/registry"
	"github.com/forum-mcp/forum/internal/testenv"
	"github.com/forum-mcp/forum/schema"
)

const bundled = "../registry/testdata/snapshots"

// corpusDir is the shared real corpus, when this checkout has it beside it.
const corpusDir = "../../../shared/corpus/registry-daily"

func load(t testing.TB, f registry.SnapshotFile) differ.Snapshot {
	t.Helper()
	entries, rejects, st, err := registry.LoadSnapshotFile(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(rejects) > 0 {
		t.Fatalf("%s: %d real entries rejected, first: %+v", f.Path, len(rejects), rejects[0])
	}
	return differ.Snapshot{ID: f.CapturedAt.Format(time.RFC3339), Mode: schema.ModeFull, ObservedAt: f.CapturedAt, Entries: entries, Incomplete: st.Incomplete}
}

func replay(t testing.TB, dir string) (map[string]int, []string) {
	t.Helper()
	files, err := registry.ListSnapshots(dir)
	if err != nil {
		t.Fatal(err)
	}
	state := differ.NewState()
	total := map[string]int{}
	var partial []string
	for i, f := range files {
		res := differ.Diff(state, load(t, f), differ.Options{})
		if i > 0 { // the first capture only seeds the known state, like refdiff
			maps.Copy(total, addCounts(total, differ.Counts(res.Events)))
			if res.Partial {
				partial = append(partial, filepath.Base(f.Path))
			}
		}
		state = res.Next
	}
	return total, partial
}

func addCounts(a, b map[string]int) map[string]int {
	out := maps.Clone(a)
	for k, v := range b {
		out[k] += v
	}
	return out
}

// refReplay runs the reference reading (../shared/tools/refdiff.py).
func refReplay(t *testing.T, dir string) (map[string]int, []string) {
	t.Helper()
	script := "../../../shared/tools/refdiff.py"
	testenv.Path(t, script, "the reference differ comes with shared/, beside the checkout")
	out, err := exec.Command("python3", script, "--replay", dir).Output()
	if err != nil {
		t.Fatalf("refdiff: %v", err)
	}
	var r struct {
		Counts  map[string]int `json:"counts"`
		Partial []string       `json:"partial"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatal(err)
	}
	return r.Counts, r.Partial
}

func TestReplayBundledMatchesReference(t *testing.T) {
	got, partial := replay(t, bundled)
	// Pinned from refdiff.py on these files, so this runs without ../shared.
	want := map[string]int{"description_changed": 5, "endpoints_changed": 2, "new_server": 178, "removed": 4, "version_added": 145}
	if !maps.Equal(got, want) {
		t.Errorf("counts = %v, want %v", got, want)
	}
	if fmt.Sprint(partial) != "[2025-09-30.json.gz 2025-10-02.json.gz]" {
		t.Errorf("partial = %v", partial)
	}
}

func TestReplayCorpusMatchesReference(t *testing.T) {
	testenv.Path(t, corpusDir, "the real corpus comes with shared/, beside the checkout")
	want, wantPartial := refReplay(t, corpusDir)
	got, partial := replay(t, corpusDir)
	if !maps.Equal(got, want) {
		t.Errorf("counts = %v, reference %v", got, want)
	}
	if fmt.Sprint(partial) != fmt.Sprint(wantPartial) {
		t.Errorf("partial days = %v, reference %v", partial, wantPartial)
	}
	if got[schema.KindRemoved] > 10 {
		t.Errorf("%d removals: the partial captures leaked through", got[schema.KindRemoved])
	}
}

// TestSelfTestOnEveryBundledSnapshot is the drift engine's validation, kept as
// a test: identical pair -> 0 events; each mutation found, 0 false events.
func TestSelfTestOnEveryBundledSnapshot(t *testing.T) {
	files, err := registry.ListSnapshots(bundled)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		snap := load(t, f)
		rep, err := differ.SelfTest(snap.Entries, f.CapturedAt)
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Passed || rep.FalseEvents != 0 || rep.Missed != 0 || len(rep.Cases) != 8 {
			b, _ := json.MarshalIndent(rep, "", " ")
			t.Errorf("%s: self-test failed:\n%s", f.Path, b)
		}
	}
}

func entry(name, version, desc string, latest bool, remotes ...string) schema.Entry {
	e := schema.Entry{Server: schema.ServerDetail{Name: name, Version: version, Description: desc}, Meta: schema.OfficialMeta{IsLatest: latest, Status: "active"}}
	for _, r := range remotes {
		e.Server.Remotes = append(e.Server.Remotes, schema.Remote{Type: "streamable-http", URL: r})
	}
	return e
}

func TestDiffRules(t *testing.T) {
	t0 := time.Date(2025, 10, 1, 0, 0, 0, 0, time.UTC)
	ten := func() []schema.Entry {
		var es []schema.Entry
		for i := range 10 {
			es = append(es, entry(fmt.Sprintf("io.example/s%d", i), "1.0.0", "d", true, "https://x.example/mcp"))
		}
		return es
	}
	apply := func(st *differ.State, mode string, at time.Time, es []schema.Entry, incomplete bool) differ.Result {
		return differ.Diff(st, differ.Snapshot{ID: at.String(), Mode: mode, ObservedAt: at, Entries: es, Incomplete: incomplete}, differ.Options{})
	}
	base := apply(differ.NewState(), schema.ModeFull, t0, ten(), false).Next

	tests := []struct {
		name        string
		mode        string
		entries     func() []schema.Entry
		incomplete  bool
		wantCounts  map[string]int
		wantPartial bool
		wantKnown   int
	}{
		{"identical", schema.ModeFull, ten, false, map[string]int{}, false, 10},
		{"8 of 10 is partial: no removals, state kept", schema.ModeFull, func() []schema.Entry { return ten()[:8] }, false, map[string]int{}, true, 10},
		{"9 of 10 is a real listing: 1 removal", schema.ModeFull, func() []schema.Entry { return ten()[:9] }, false, map[string]int{"removed": 1}, false, 9},
		{"incomplete source is partial", schema.ModeFull, func() []schema.Entry { return ten()[:9] }, true, map[string]int{}, true, 10},
		{"partial still reports additions and changes", schema.ModeFull, func() []schema.Entry {
			es := ten()[:2]
			es[0].Server.Description = "new"
			return append(es, entry("io.example/new", "1", "n", true))
		}, false, map[string]int{"description_changed": 1, "new_server": 1}, true, 11},
		{"incremental: only changes, nothing removed", schema.ModeIncremental, func() []schema.Entry {
			e := entry("io.example/s3", "1.1.0", "d2", true, "https://y.example/mcp")
			old := entry("io.example/s3", "1.0.0", "d", false, "https://x.example/mcp")
			return []schema.Entry{old, e}
		}, false, map[string]int{"version_added": 1, "description_changed": 1, "endpoints_changed": 1}, false, 10},
		{"updatedAt alone is no change", schema.ModeFull, func() []schema.Entry {
			es := ten()
			es[4].Meta.UpdatedAt = t0.Add(time.Hour)
			es[4].ContentSHA256 = "different"
			return es
		}, false, map[string]int{}, false, 10},
		{"remote order is no change", schema.ModeFull, func() []schema.Entry {
			es := ten()
			es[1].Server.Remotes = []schema.Remote{{Type: "sse", URL: "https://x.example/sse"}, {Type: "streamable-http", URL: "https://x.example/mcp"}}
			es[2].Server.Remotes = []schema.Remote{{Type: "streamable-http", URL: "https://x.example/mcp"}, {Type: "sse", URL: "https://x.example/sse"}}
			return es
		}, false, map[string]int{"endpoints_changed": 2}, false, 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := apply(base, tc.mode, t0.Add(24*time.Hour), tc.entries(), tc.incomplete)
			if got := differ.Counts(res.Events); !maps.Equal(got, tc.wantCounts) {
				t.Errorf("counts = %v, want %v", got, tc.wantCounts)
			}
			if res.Partial != tc.wantPartial {
				t.Errorf("partial = %v, want %v", res.Partial, tc.wantPartial)
			}
			if len(res.Next.Latest) != tc.wantKnown {
				t.Errorf("known names = %d, want %d", len(res.Next.Latest), tc.wantKnown)
			}
		})
	}
}

func TestEventIDsAreDeterministic(t *testing.T) {
	t0 := time.Date(2025, 10, 1, 0, 0, 0, 0, time.UTC)
	a := differ.EventID("a/b", "removed", "1", "", t0)
	if a != differ.EventID("a/b", "removed", "1", "", t0) {
		t.Fatal("same inputs, different ids")
	}
	for _, other := range []string{
		differ.EventID("a/c", "removed", "1", "", t0),
		differ.EventID("a/b", "new_server", "1", "", t0),
		differ.EventID("a/b", "removed", "2", "", t0),
		differ.EventID("a/b", "removed", "1", "x", t0),
		differ.EventID("a/b", "removed", "1", "", t0.Add(time.Millisecond)),
		differ.EventID("a/b", "removed1", "", "", t0), // field boundaries are kept
	} {
		if other == a {
			t.Errorf("collision: %s", other)
		}
	}
}
