package main

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/forum-mcp/forum/schema"
)

const module = "github.com/forum-mcp/forum/"

// goList lists packages (and, with deps, everything they import) as go
// list -json reports them.
func goList(t *testing.T, args ...string) []struct {
	ImportPath string
	Imports    []string
	Deps       []string
} {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-json"}, args...)...)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v", args, err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var pkgs []struct {
		ImportPath string
		Imports    []string
		Deps       []string
	}
	for {
		var p struct {
			ImportPath string
			Imports    []string
			Deps       []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			return pkgs
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
}

// The production binary links no benchmark code and no test fake (the
// GitHub fake, the corpus generator): `forum bench` is `go run ./bench`.
func TestBinaryLinksNoBenchOrFake(t *testing.T) {
	pkgs := goList(t, "./cmd/forum")
	if len(pkgs) != 1 {
		t.Fatalf("go list: %d packages", len(pkgs))
	}
	for _, d := range pkgs[0].Deps {
		rel, ok := strings.CutPrefix(d, module)
		if !ok {
			continue
		}
		if strings.HasPrefix(rel, "bench") || strings.Contains(rel, "fake") || strings.HasSuffix(rel, "test") || strings.Contains(rel, "testenv") {
			t.Errorf("cmd/forum links %s", d)
		}
	}
}

// The dataflow runs one way: nothing under ingest/ (the sources) imports
// processors/ or sql/, directly or through another package; they meet
// only on the bus, in schema's types.
func TestIngestImportsNoProcessorsOrStore(t *testing.T) {
	pkgs := goList(t, "./ingest/...")
	if len(pkgs) < 5 {
		t.Fatalf("go list: only %d ingest packages", len(pkgs))
	}
	for _, p := range pkgs {
		if strings.Contains(p.ImportPath, "fake") {
			continue // test fakes are not the dataflow
		}
		for _, d := range p.Deps {
			rel, ok := strings.CutPrefix(d, module)
			if ok && (strings.HasPrefix(rel, "processors/") || strings.HasPrefix(rel, "sql/") || strings.HasPrefix(rel, "api")) {
				t.Errorf("%s depends on %s", p.ImportPath, d)
			}
		}
	}
}

// The API reads results, not the scorer: api/ imports no processor stage
// (scorer, drift, ownerburst, provenance, history).
func TestAPIImportsNoProcessorStage(t *testing.T) {
	for _, p := range goList(t, "./api/...") {
		for _, d := range p.Imports {
			for _, stage := range []string{"scorer", "drift", "ownerburst", "provenance", "history"} {
				if d == module+"processors/"+stage {
					t.Errorf("%s imports %s", p.ImportPath, d)
				}
			}
		}
	}
}

// The README's dataflow names every topic of the table, so the picture a
// newcomer reads cannot fall behind the code.
func TestReadmeNamesEveryTopic(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range schema.Topics {
		if !strings.Contains(string(b), tp.Name) {
			t.Errorf("README.md never names topic %s", tp.Name)
		}
	}
}
