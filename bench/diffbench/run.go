package diffbench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"sort"
	"time"

	gojson "github.com/goccy/go-json"

	"github.com/forum-mcp/forum/ingest/differ"
	"github.com/forum-mcp/forum/ingest/registry"
	"github.com/forum-mcp/forum/schema"
)

// Measure is one timed run: wall time, CPU time and what the Go heap
// allocated.
type Measure struct {
	Wall    time.Duration
	CPU     time.Duration // user+system CPU of the whole process during the run (on a shared box, less noisy than wall)
	Bytes   uint64        // bytes allocated (TotalAlloc delta)
	Allocs  uint64        // heap objects allocated (Mallocs delta)
	Records int           // records decoded (both files)
	Events  int           // drift events (end-to-end arms)
}

// Measured runs f after a GC and returns its wall time and allocations.
func Measured(f func() (records, events int, err error)) (Measure, error) {
	runtime.GC()
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	c0 := processCPU()
	t0 := time.Now()
	recs, evs, err := f()
	wall := time.Since(t0)
	cpu := processCPU() - c0
	runtime.ReadMemStats(&b)
	return Measure{Wall: wall, CPU: cpu, Bytes: b.TotalAlloc - a.TotalAlloc, Allocs: b.Mallocs - a.Mallocs, Records: recs, Events: evs}, err
}

// Arm is one way of doing (part of) the job.
type Arm struct {
	Name string
	What string
	Run  func(oldPath, newPath string) (records, events int, err error)
}

// minimal is the floor struct: exactly the fields the diff rules read.
type minimal struct {
	Server struct {
		Name        string `json:"name"`
		Version     string `json:"version"`
		Description string `json:"description"`
		Title       string `json:"title"`
		Remotes     []struct {
			Type string `json:"type"`
			URL  string `json:"url"`
		} `json:"remotes"`
	} `json:"server"`
	Meta struct {
		Official struct {
			Status      string `json:"status"`
			PublishedAt string `json:"publishedAt"`
			IsLatest    bool   `json:"isLatest"`
		} `json:"io.modelcontextprotocol.registry/official"`
	} `json:"_meta"`
}

func both(oldPath, newPath string, f func(string) (int, error)) (int, int, error) {
	a, err := f(oldPath)
	if err != nil {
		return 0, 0, err
	}
	b, err := f(newPath)
	return a + b, 0, err
}

// Arms returns every arm of benchmark 1, floors first.
func Arms() []Arm {
	return []Arm{
		{"floor: read files", "os.ReadFile of both files", func(o, n string) (int, int, error) {
			return both(o, n, func(p string) (int, error) { b, err := os.ReadFile(p); return len(b) * 0, err })
		}},
		{"floor: encoding/json → []RawMessage", "os.ReadFile + json.Unmarshal into []json.RawMessage", func(o, n string) (int, int, error) {
			return both(o, n, func(p string) (int, error) {
				b, err := os.ReadFile(p)
				if err != nil {
					return 0, err
				}
				var raws []json.RawMessage
				err = json.Unmarshal(b, &raws)
				return len(raws), err
			})
		}},
		{"floor: encoding/json → minimal struct", "json.Unmarshal into []struct{name,version,description,title,remotes,official}", func(o, n string) (int, int, error) {
			return both(o, n, func(p string) (int, error) {
				b, err := os.ReadFile(p)
				if err != nil {
					return 0, err
				}
				var es []minimal
				err = json.Unmarshal(b, &es)
				return len(es), err
			})
		}},
		{"floor: goccy/go-json → minimal struct", "the same with github.com/goccy/go-json", func(o, n string) (int, int, error) {
			return both(o, n, func(p string) (int, error) {
				b, err := os.ReadFile(p)
				if err != nil {
					return 0, err
				}
				var es []minimal
				err = gojson.Unmarshal(b, &es)
				return len(es), err
			})
		}},
		{"floor: split only", "os.ReadFile + SplitEntries (byte scanner, no decoding)", func(o, n string) (int, int, error) {
			return both(o, n, func(p string) (int, error) {
				b, err := os.ReadFile(p)
				if err != nil {
					return 0, err
				}
				raws, err := SplitEntries(b)
				return len(raws), err
			})
		}},
		{"decode: forum", "registry.LoadSnapshotFile of both files at once: the fast path (windows parsed in GOMAXPROCS goroutines, one pass per entry)", func(o, n string) (int, int, error) {
			return bothAtOnce(o, n, loadForum)
		}},
		{"decode: reference", "registry.LoadSnapshotFileReference: json.Decoder + ParseEntry, one goroutine (ReadSnapshot before the fast path)", func(o, n string) (int, int, error) {
			return both(o, n, func(p string) (int, error) { e, err := loadReference(p); return len(e), err })
		}},
		ForumArm(),
		{"e2e: reference", "the same through the reference path, one file after the other (forum before the fast path)", endToEnd(loadReference, false)},
	}
}

// ForumArm is forum's production path end to end.
func ForumArm() Arm {
	return Arm{"e2e: forum", "LoadSnapshotFile both files at once (fast path), Diff(empty, old), Diff(known, new)", endToEnd(loadForum, true)}
}

func loadForum(p string) ([]schema.Entry, error) {
	return checked(p)(registry.LoadSnapshotFile(registry.SnapshotFile{Path: p, CapturedAt: time.Unix(0, 0)}))
}

func loadReference(p string) ([]schema.Entry, error) {
	return checked(p)(registry.LoadSnapshotFileReference(registry.SnapshotFile{Path: p, CapturedAt: time.Unix(0, 0)}))
}

// bothAtOnce loads both files in two goroutines.
func bothAtOnce(o, n string, load func(string) ([]schema.Entry, error)) (int, int, error) {
	var a []schema.Entry
	var errA error
	done := make(chan struct{})
	go func() { a, errA = load(o); close(done) }()
	b, errB := load(n)
	<-done
	if errA != nil {
		return 0, 0, errA
	}
	return len(a) + len(b), 0, errB
}

func checked(p string) func([]schema.Entry, []schema.DLQMessage, registry.SnapshotStats, error) ([]schema.Entry, error) {
	return func(ents []schema.Entry, rej []schema.DLQMessage, st registry.SnapshotStats, err error) ([]schema.Entry, error) {
		if err == nil && (st.Incomplete || len(rej) > 0) {
			err = fmt.Errorf("%s: %d rejects, incomplete %v", p, len(rej), st.Incomplete)
		}
		return ents, err
	}
}

func loadParallel(p string, parse ParseFunc) ([]schema.Entry, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	raws, err := SplitEntries(b)
	if err != nil {
		return nil, err
	}
	ents, rej := ParallelParse(raws, parse, 0)
	if rej > 0 {
		return ents, fmt.Errorf("%s: %d rejects", p, rej)
	}
	return ents, nil
}

func endToEnd(load func(string) ([]schema.Entry, error), concurrent bool) func(o, n string) (int, int, error) {
	return func(o, n string) (int, int, error) {
		var old, cur []schema.Entry
		var errO, errN error
		if concurrent {
			done := make(chan struct{})
			go func() { old, errO = load(o); close(done) }()
			cur, errN = load(n)
			<-done
		} else {
			old, errO = load(o)
			if errO == nil {
				cur, errN = load(n)
			}
		}
		if errO != nil {
			return 0, 0, errO
		}
		if errN != nil {
			return 0, 0, errN
		}
		t0 := time.Unix(1_700_000_000, 0).UTC()
		known := differ.Diff(differ.NewState(), differ.Snapshot{ID: "old", Mode: schema.ModeFull, ObservedAt: t0, Entries: old}, differ.Options{}).Next
		res := differ.Diff(known, differ.Snapshot{ID: "new", Mode: schema.ModeFull, ObservedAt: t0.Add(24 * time.Hour), Entries: cur}, differ.Options{})
		return len(old) + len(cur), len(res.Events), nil
	}
}

// DiffOnly times differ.Diff alone on decoded entries: the state of the old
// snapshot built, then the diff against the new one.
func DiffOnly(oldPath, newPath string) (Measure, map[string]int, error) {
	old, err := loadForum(oldPath)
	if err != nil {
		return Measure{}, nil, err
	}
	cur, err := loadForum(newPath)
	if err != nil {
		return Measure{}, nil, err
	}
	var counts map[string]int
	m, err := Measured(func() (int, int, error) {
		t0 := time.Unix(1_700_000_000, 0).UTC()
		known := differ.Diff(differ.NewState(), differ.Snapshot{ID: "old", Mode: schema.ModeFull, ObservedAt: t0, Entries: old}, differ.Options{}).Next
		res := differ.Diff(known, differ.Snapshot{ID: "new", Mode: schema.ModeFull, ObservedAt: t0.Add(24 * time.Hour), Entries: cur}, differ.Options{})
		counts = differ.Counts(res.Events)
		return len(old) + len(cur), len(res.Events), nil
	})
	return m, counts, err
}

// Best returns the run with the least wall time.
func Best(ms []Measure) Measure {
	sort.Slice(ms, func(i, j int) bool { return ms[i].Wall < ms[j].Wall })
	return ms[0]
}

// SameEntries reports the first difference between two entry lists, or "".
func SameEntries(a, b []schema.Entry) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%d entries vs %d", len(a), len(b))
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.ContentSHA256 != y.ContentSHA256 || !bytes.Equal(x.Raw, y.Raw) || x.Meta != y.Meta || x.Server.Name != y.Server.Name || x.Server.Version != y.Server.Version {
			return fmt.Sprintf("entry %d (%s@%s) differs", i, x.Server.Name, x.Server.Version)
		}
		xj, _ := json.Marshal(x.Server)
		yj, _ := json.Marshal(y.Server)
		if !bytes.Equal(xj, yj) {
			return fmt.Sprintf("entry %d (%s@%s): server differs", i, x.Server.Name, x.Server.Version)
		}
	}
	return ""
}

// ParallelLoad (the goccy prototype) reads a snapshot file with SplitEntries + FastParseEntry in
// GOMAXPROCS goroutines (falling back to registry.ReadSnapshot for
// documents that are not a plain array).
func ParallelLoad(p string) ([]schema.Entry, error) {
	ents, err := loadParallel(p, FastParseEntry)
	if err == ErrNotArray {
		return loadForum(p)
	}
	return ents, err
}
