package history

import (
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/forum-mcp/forum/ingest/github"
	"github.com/forum-mcp/forum/schema"
)

// TestCalibration: a small history has the census shares of remote
// classes, one check per remote per hour, ~EventsPerDay drift events a day,
// one GitHub observation per repository a day, and reads back from its file
// as generated.
func TestCalibration(t *testing.T) {
	cfg := Config{Servers: 2000, Days: 2, Remotes: 500, GitHub: true}
	path := filepath.Join(t.TempDir(), "h.bin")
	st, err := WriteFile(path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range Census {
		got := float64(st.ByClass[c.Class]) / float64(st.Remotes)
		if math.Abs(got-c.Share) > 0.005 {
			t.Errorf("%s: %.3f of remotes, want %.3f", c.Class, got, c.Share)
		}
	}
	if want := st.Remotes * 24 * cfg.Days; st.ByTopic[schema.TopicHealthChecks] != want {
		t.Errorf("%d health checks, want %d", st.ByTopic[schema.TopicHealthChecks], want)
	}
	if d := st.ByTopic[schema.TopicRegistryDiffs]; d < cfg.Days*1000 || d > cfg.Days*2000 {
		t.Errorf("%d drift events over %d days", d, cfg.Days)
	}
	if g := st.ByTopic[github.Topic]; g != st.Repos*cfg.Days {
		t.Errorf("%d GitHub observations, want %d", g, st.Repos*cfg.Days)
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n, ends, records := 0, map[string]int{}, map[string]int{}
	for {
		m, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
		switch m.Topic {
		case schema.TopicRegistryRecords:
			v, err := schema.Decode[schema.RecordMsg](m.Value)
			if err != nil {
				t.Fatalf("message %d: %v", n, err)
			}
			if v.Type == schema.MsgSnapshotEnd {
				if v.End.Entries != records[v.SnapshotID] || ends[v.SnapshotID] > 0 {
					t.Errorf("end of %s: %d entries, %d records published before it", v.SnapshotID, v.End.Entries, records[v.SnapshotID])
				}
				ends[v.SnapshotID]++
			} else {
				records[v.SnapshotID]++
			}
		case schema.TopicRegistrySnapshots:
			v, err := schema.Decode[schema.SnapshotSummary](m.Value)
			if err != nil {
				t.Fatal(err)
			}
			// The history sink stores a snapshot's load row on its end
			// marker, and the provenance processor waits for that row.
			if ends[v.ID] != 1 {
				t.Errorf("snapshot %s summarized without an end marker on registry.records before it", v.ID)
			}
		}
	}
	if n != st.Messages || r.Stats.Messages != n {
		t.Errorf("read %d messages (trailer %d), generated %d", n, r.Stats.Messages, st.Messages)
	}
	if len(ends) != cfg.Days+1 {
		t.Errorf("%d snapshot end markers, want one per day and day 0: %d", len(ends), cfg.Days+1)
	}
}

// TestCompressedFile: a .zst file reads back message for message as the
// plain file of the same config, and is smaller.
func TestCompressedFile(t *testing.T) {
	cfg := Config{Servers: 500, Days: 1, Remotes: 100, GitHub: true}
	dir := t.TempDir()
	plain, zst := filepath.Join(dir, "h.bin"), filepath.Join(dir, "h.bin.zst")
	if _, err := WriteFile(plain, cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteFile(zst, cfg); err != nil {
		t.Fatal(err)
	}
	a, err := Open(plain)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(zst)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	n := 0
	for {
		ma, ea := a.Next()
		mb, eb := b.Next()
		if ea != eb {
			t.Fatalf("message %d: errors %v and %v", n, ea, eb)
		}
		if ea == io.EOF {
			break
		}
		if ea != nil {
			t.Fatal(ea)
		}
		if !reflect.DeepEqual(ma, mb) {
			t.Fatalf("message %d differs: %+v / %+v", n, ma, mb)
		}
		n++
	}
	pi, _ := os.Stat(plain)
	zi, _ := os.Stat(zst)
	if n == 0 || zi.Size()*3 > pi.Size() {
		t.Errorf("%d messages; %d bytes compressed of %d", n, zi.Size(), pi.Size())
	}
}
