package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/forum-mcp/forum/internal/component"
)

// The deploy/ files are checked against the code, since no Docker engine
// runs here: the compose file parses, every forum command and flag in it
// exists, every role it names is a component, its dependencies are
// services; the dashboard asks only for metrics the code registers; the
// example settings are variables the code reads.

type composeFile struct {
	Services map[string]struct {
		Image       string         `yaml:"image"`
		Build       map[string]any `yaml:"build"`
		Command     []string       `yaml:"command"`
		Environment map[string]any `yaml:"environment"`
		DependsOn   any            `yaml:"depends_on"` // a list or a map
		Healthcheck map[string]any `yaml:"healthcheck"`
		Restart     string         `yaml:"restart"`
	} `yaml:"services"`
	Volumes map[string]any `yaml:"volumes"`
}

func TestComposeFileMatchesTheBinary(t *testing.T) {
	b, err := os.ReadFile("../../deploy/compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cf composeFile
	if err := yaml.Unmarshal(b, &cf); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	roles := map[string]bool{}
	forum := 0
	for name, s := range cf.Services {
		var deps []string
		switch d := s.DependsOn.(type) {
		case []any:
			for _, x := range d {
				deps = append(deps, x.(string))
			}
		case map[string]any:
			for k := range d {
				deps = append(deps, k)
			}
		}
		for _, dep := range deps {
			if _, ok := cf.Services[dep]; !ok {
				t.Errorf("%s depends on %s, which is not a service", name, dep)
			}
		}
		if s.Image != "forum:local" {
			continue
		}
		forum++
		if s.Build == nil {
			t.Errorf("%s: the forum image must be built (build:)", name)
		}
		if len(s.Command) == 0 {
			t.Errorf("%s: no command", name)
			continue
		}
		root := newRoot()
		cmd, rest, err := root.Find(s.Command)
		if err != nil || cmd == root {
			t.Errorf("%s: %v is not a forum command: %v", name, s.Command, err)
			continue
		}
		if err := cmd.ParseFlags(rest); err != nil {
			t.Errorf("%s: forum %s: %v", name, cmd.Name(), err)
			continue
		}
		if r := cmd.Flags().Lookup("role"); r != nil && r.Changed {
			if spec, ok := component.Lookup(r.Value.String()); !ok || spec.Role != component.RoleSource {
				t.Errorf("%s: --role %s is not a source component", name, r.Value)
			}
			roles[r.Value.String()] = true
		}
		if s.Restart != "no" && s.Healthcheck == nil {
			t.Errorf("%s: a long-running role needs a health check", name)
		}
		if s.Healthcheck != nil && cmd.Name() != "serve" {
			if ops := cmd.Flags().Lookup("ops-listen"); ops == nil || ops.Value.String() == "" {
				t.Errorf("%s: its health check reads /readyz, but --ops-listen is not set", name)
			}
		}
		for k := range s.Environment {
			if !strings.HasPrefix(k, "FORUM_") || !readByCode(t, k) {
				t.Errorf("%s: environment %s is not a variable forum reads", name, k)
			}
		}
	}
	if forum < 5 {
		t.Fatalf("only %d forum services: the merge keys (<<: *forum) did not resolve", forum)
	}
	for _, want := range []string{"registry", "probe-scheduler", "prober"} {
		if !roles[want] {
			t.Errorf("no service runs --role %s", want)
		}
	}
}

func TestDashboardUsesOnlyExportedMetrics(t *testing.T) {
	b, err := os.ReadFile("../../deploy/grafana/forum-pipeline.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	exported := exportedMetrics(t)
	name := regexp.MustCompile(`\bforum_[a-z0-9_]+`)
	used := 0
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			for _, m := range name.FindAllString(tg.Expr, -1) {
				used++
				base := m
				for _, suf := range []string{"_bucket", "_sum", "_count"} {
					if b, ok := strings.CutSuffix(m, suf); ok && exported[b] {
						base = b
					}
				}
				if !exported[base] {
					t.Errorf("panel %q asks for %s, which no code registers", p.Title, m)
				}
			}
		}
	}
	if used < 10 {
		t.Fatalf("the dashboard uses %d metrics: nothing was checked", used)
	}
}

func TestExampleSettingsAreRead(t *testing.T) {
	b, err := os.ReadFile("../../deploy/config/forum.env.example")
	if err != nil {
		t.Fatal(err)
	}
	v := regexp.MustCompile(`(?m)^#?((?:FORUM|GITHUB)_[A-Z_]+)=`)
	found := v.FindAllStringSubmatch(string(b), -1)
	if len(found) < 10 {
		t.Fatalf("only %d settings in the example", len(found))
	}
	for _, m := range found {
		if !readByCode(t, m[1]) {
			t.Errorf("forum.env.example sets %s, which the code never reads", m[1])
		}
	}
}

var sourceCache []string

// goSources are the non-test Go files of the module.
func goSources(t *testing.T) []string {
	t.Helper()
	if sourceCache != nil {
		return sourceCache
	}
	err := filepath.WalkDir("../..", func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && (e.Name() == "data" || e.Name() == "node_modules" || strings.HasPrefix(e.Name(), ".")) && p != "../.." {
			return filepath.SkipDir
		}
		if !e.IsDir() && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sourceCache = append(sourceCache, string(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sourceCache
}

func readByCode(t *testing.T, env string) bool {
	return slices.ContainsFunc(goSources(t), func(s string) bool { return strings.Contains(s, `"`+env+`"`) })
}

// exportedMetrics are the names registered by the code: every
// prometheus Opts Name "forum_…" in a non-test source file.
func exportedMetrics(t *testing.T) map[string]bool {
	re := regexp.MustCompile(`Name:\s*"(forum_[a-z0-9_]+)"`)
	out := map[string]bool{}
	for _, s := range goSources(t) {
		for _, m := range re.FindAllStringSubmatch(s, -1) {
			out[m[1]] = true
		}
	}
	return out
}
