package categories

import (
	"reflect"
	"testing"

	"github.com/forum-mcp/forum/ingest/registry"
	"github.com/forum-mcp/forum/internal/testenv"
)

// corpusInputs turns every distinct registry entry of the snapshots in dir
// into classifier inputs: the entry as the scorer sends it, and a second
// input that also feeds the registry text through the tool slots (the
// captures have no tool lists) so tool weights and phrase boundaries across
// tools are exercised on real text.
func corpusInputs(t *testing.T, dir string) []Input {
	t.Helper()
	files, err := registry.ListSnapshots(dir)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var out []Input
	for _, f := range files {
		es, _, _, err := registry.LoadSnapshotFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			k := e.Server.Name + "\x00" + e.Server.Title + "\x00" + e.Server.Description
			if seen[k] {
				continue
			}
			seen[k] = true
			in := Input{Name: e.Server.Name, Title: e.Server.Title, Description: e.Server.Description}
			out = append(out, in)
			in.Tools = append(in.Tools, Tool{Name: e.Server.Name, Description: e.Server.Description}, Tool{Name: e.Server.Title, Description: e.Server.Version})
			for _, p := range e.Server.Packages {
				in.Tools = append(in.Tools, Tool{Name: p.Identifier, Description: p.RegistryType})
				for _, v := range p.EnvironmentVariables {
					in.Tools = append(in.Tools, Tool{Name: v.Name, Description: v.Description})
				}
			}
			out = append(out, in)
		}
	}
	return out
}

func checkSame(t *testing.T, ins []Input) (hits int) {
	t.Helper()
	for _, in := range ins {
		got, want := Classify(in), refClassify(in)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: compiled %+v, reference %+v", in.Name, got, want)
		}
		if got.Primary != Other {
			hits++
		}
	}
	return hits
}

// TestMatchesReferenceOnBundledCorpus: the compiled matcher and the
// reference classifier agree on every record of the bundled real snapshots.
func TestMatchesReferenceOnBundledCorpus(t *testing.T) {
	ins := corpusInputs(t, "../../ingest/registry/testdata/snapshots")
	hits := checkSame(t, ins)
	if len(ins) < 500 || hits < len(ins)/3 {
		t.Fatalf("corpus too thin to prove anything: %d inputs, %d categorised", len(ins), hits)
	}
	t.Logf("%d inputs, %d categorised, identical", len(ins), hits)
}

// TestMatchesReferenceOnDailyCorpus does the same on the 77 daily captures
// of ../shared/corpus when it is beside the checkout.
func TestMatchesReferenceOnDailyCorpus(t *testing.T) {
	dir := testenv.Path(t, "../../../shared/corpus/registry-daily", "the real corpus comes with shared/, beside the checkout")
	ins := corpusInputs(t, dir)
	hits := checkSame(t, ins)
	t.Logf("%d inputs, %d categorised, identical", len(ins), hits)
}

// FuzzClassifyMatchesReference: any text, any Unicode (invalid UTF-8,
// case-mapping oddities like the Kelvin sign), the same Result.
func FuzzClassifyMatchesReference(f *testing.F) {
	f.Add("io.github.x/postgres-mcp", "Postgres", "Postgres databases and a knowledge graph", "run_query", "Runs queries")
	f.Add("com.acme/wx", "", "Weather forecasts; e-commerce; fine-tune models", "send_emails", "Email a report")
	f.Add("a/b", "Pull Requests", "pull requests, merge requests, unit tests, code reviews", "git_branches", "KNOWLEDGE  GRAPHES")
	f.Add("x/\u212aubernetes", "\u0130ssue", "\xffsql\xfe postgres\u2028slack", "GİT", "searches es s")
	f.Add("", "", "google analytics google google analytics", "web", "search")
	f.Add("ns/ß", "ǅ", "ΣΑΣ databaseses gitlabs", "Ⅻ", "١٢٣ redis")
	f.Fuzz(func(t *testing.T, name, title, desc, tn, td string) {
		in := Input{Name: name, Title: title, Description: desc, Tools: []Tool{{tn, td}, {td, tn}}}
		got, want := Classify(in), refClassify(in)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("compiled %+v, reference %+v", got, want)
		}
	})
}
