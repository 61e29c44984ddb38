package scan_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/forum-mcp/forum/ingest/probe"
	"github.com/forum-mcp/forum/ingest/registry"
	"github.com/forum-mcp/forum/ingest/scan"
	"github.com/forum-mcp/forum/processors/scorer"
	"github.com/forum-mcp/forum/schema"
)

// snapshotTargets builds scan targets from the bundled real registry
// snapshots the way Compute does (scorer.ScanTarget: registry text, env and
// header defaults/values/descriptions), each with a successful check whose
// tools carry the real descriptions of neighbouring servers and a schema
// made of the entry's real env/header texts — real registry prose in every
// field the scanner reads.
func snapshotTargets(tb testing.TB) []scan.Target {
	tb.Helper()
	files, err := registry.ListSnapshots(filepath.Join("..", "registry", "testdata", "snapshots"))
	if err != nil {
		tb.Fatal(err)
	}
	var entries []schema.Entry
	for _, f := range files {
		es, _, _, err := registry.LoadSnapshotFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		entries = append(entries, es...)
	}
	if len(entries) == 0 {
		tb.Fatal("no snapshot entries")
	}
	var out []scan.Target
	for i, e := range entries {
		if len(e.Server.Remotes) == 0 {
			e.Server.Remotes = []schema.Remote{{Type: "streamable-http", URL: "https://x.example/mcp"}}
		}
		props := map[string]any{}
		for _, p := range e.Server.Packages {
			for _, kv := range p.EnvironmentVariables {
				props[kv.Name] = map[string]any{"type": "string", "description": kv.Description, "default": kv.Default}
			}
		}
		sch, _ := json.Marshal(map[string]any{"type": "object", "properties": props})
		check := probe.Check{Outcome: probe.OutcomeOK, ToolsListed: true}
		for k := 0; k < 1+i%4; k++ {
			d := entries[(i+k*7+1)%len(entries)].Server
			name := d.Name[strings.LastIndexByte(d.Name, '/')+1:]
			t := probe.Tool{Name: name, Description: d.Description + " " + d.Title, InputSchemaPresent: k%3 != 2}
			if t.InputSchemaPresent {
				t.InputSchema = sch
			}
			check.Tools = append(check.Tools, t)
		}
		if i%5 == 0 {
			check.Instructions = entries[(i+3)%len(entries)].Server.Description
		}
		if t, ok := scorer.ScanTarget(scorer.ServerInput{Entry: e, Checks: []probe.Check{check}}); ok {
			out = append(out, t)
		}
	}
	return out
}

// generatedTargets are the targets Compute scans for a scorer.Generate
// population (what bench -only score times), planted servers included.
func generatedTargets(n int) []scan.Target {
	g := scorer.Generate(n, 1, time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
	var out []scan.Target
	for _, in := range g.Inputs {
		if t, ok := scorer.ScanTarget(in); ok {
			out = append(out, t)
		}
	}
	return out
}

func sameFindings(t *testing.T, what string, tg scan.Target) {
	t.Helper()
	got, want := scan.Scan(tg), scan.RefScan(tg)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s %q: findings differ from the reference\n got %s\nwant %s", what, tg.Name, show(got), show(want))
	}
}

func show(fs []scan.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "\n  %+v", f)
	}
	return b.String()
}

// TestScanMatchesReference pins that Scan's findings (every field, same
// order) are the reference scanner's on real registry text and on a
// generated population.
func TestScanMatchesReference(t *testing.T) {
	snap := snapshotTargets(t)
	n := 0
	for _, tg := range snap {
		sameFindings(t, "snapshot", tg)
		n += len(scan.Scan(tg))
	}
	if n == 0 {
		t.Fatal("snapshot targets produced no findings at all: the comparison is vacuous")
	}
	gen := generatedTargets(2000)
	for _, tg := range gen {
		sameFindings(t, "generated", tg)
	}
	t.Logf("%d snapshot targets (%d findings), %d generated targets", len(snap), n, len(gen))
}

// TestSchemaViewOnCorpus pins the schema decoder to the map-based reading
// (scan.SchemaViewDiff) on every tool of the snapshot and generated
// targets.
func TestSchemaViewOnCorpus(t *testing.T) {
	n := 0
	for _, set := range [][]scan.Target{snapshotTargets(t), generatedTargets(2000)} {
		for _, tg := range set {
			for _, tl := range tg.Tools {
				if d := scan.SchemaViewDiff(tl); d != "" {
					t.Fatalf("%s tool %s: %s", tg.Name, tl.Name, d)
				}
				if len(tl.InputSchema) > 2 {
					n++
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no tool with a schema: the comparison is vacuous")
	}
	t.Logf("%d schemas", n)
}

// BenchmarkScan compares Scan with the reference scanner on the same
// realistic targets in the same run.
func BenchmarkScan(b *testing.B) {
	sets := []struct {
		name    string
		targets []scan.Target
	}{{"snapshots", snapshotTargets(b)}, {"generated", generatedTargets(2000)}}
	for _, set := range sets {
		for _, impl := range []struct {
			name string
			fn   func(scan.Target) []scan.Finding
		}{{"reference", scan.RefScan}, {"fast", scan.Scan}} {
			b.Run(set.name+"/"+impl.name, func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					impl.fn(set.targets[i%len(set.targets)])
					i++
				}
			})
		}
	}
}
