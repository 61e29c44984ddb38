package method

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEmbeddedParses(t *testing.T) {
	w := Embedded().Weights
	if w.MethodVersion != EmbeddedVersion {
		t.Fatalf("file method_version %q, code EmbeddedVersion %q", w.MethodVersion, EmbeddedVersion)
	}
	// Spot-check SPEC §4 numbers so a careless edit shows up as a named failure.
	checks := []struct {
		name      string
		got, want float64
	}{
		{"aggregation provenance", w.Aggregation.Weights["provenance"], 0.35},
		{"aggregation static", w.Aggregation.Weights["static"], 0.30},
		{"aggregation drift", w.Aggregation.Weights["drift"], 0.25},
		{"aggregation incidents", w.Aggregation.Weights["incidents"], 0.10},
		{"strong_negative", w.Provenance.Magnitudes[StrongNegative], 40},
		{"negative", w.Provenance.Magnitudes[Negative], 20},
		{"mild_negative", w.Provenance.Magnitudes[MildNegative], 10},
		{"near_neutral", w.Provenance.Magnitudes[NearNeutral], 2},
		{"none", w.Provenance.Magnitudes[None], 0},
		{"mild_positive", w.Provenance.Magnitudes[MildPositive], -5},
		{"f min", w.Provenance.BaseRateFactor.Min, 0.25},
		{"f max", w.Provenance.BaseRateFactor.Max, 1.5},
		{"static baseline", w.Static.Baseline, 85},
		{"command_injection", w.Static.ClassWeights["command_injection"], 35},
		{"tool_poisoning", w.Static.ClassWeights["tool_poisoning"], 30},
		{"shadowing", w.Static.ClassWeights["shadowing"], 30},
		{"hardcoded_secret", w.Static.ClassWeights["hardcoded_secret"], 30},
		{"suspicious_description", w.Static.ClassWeights["suspicious_description"], 15},
		{"hygiene", w.Static.ClassWeights["hygiene"], 5},
		{"impact high", w.Static.SeverityImpact["high"], 1.5},
		{"impact medium", w.Static.SeverityImpact["medium"], 1.0},
		{"impact low", w.Static.SeverityImpact["low"], 0.5},
		{"drift half-life", w.Drift.HalfLifeDays, 30},
		{"endpoints_changed", w.Drift.Weights["endpoints_changed"], 15},
		{"suspect endpoint", w.Drift.Weights["endpoints_changed_suspect_destination"], 50},
		{"multi_change_24h", w.Drift.Weights["multi_change_24h"], 40},
		{"desc no bump", w.Drift.Weights["description_changed_no_version_bump"], 8},
		{"desc bump", w.Drift.Weights["description_changed_with_version_bump"], 2},
		{"title", w.Drift.Weights["title_changed"], 3},
		{"status deprecated", w.Drift.Weights["status_changed_deprecated_or_deleted"], 5},
		{"incident half-life", w.Incidents.HalfLifeDays, 180},
		{"critical", w.Incidents.SeverityWeights["critical"], 100},
		{"high", w.Incidents.SeverityWeights["high"], 60},
		{"medium", w.Incidents.SeverityWeights["medium"], 30},
		{"low", w.Incidents.SeverityWeights["low"], 10},
		{"suspected", w.Incidents.StatusFactors["suspected"], 0.5},
		{"retracted", w.Incidents.StatusFactors["retracted"], 0},
		{"recurrence", w.Incidents.RecurrenceBase, 1.5},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	// Pinned base rates from seed 002 §4.1.
	rates := map[string]float64{
		"single_author_90d": 0.36, "no_license": 0.23, "commit_cap_hit": 0.19, "repo_under_30d": 0.11,
		"namespace_owner_mismatch": 0.027, "archived": 0.008, "fork": 0.005, "repo_created_after_listing_gt30d": 0.001,
	}
	for k, v := range rates {
		if got := w.Provenance.Signals[k].BaseRate; got != v {
			t.Errorf("base rate %s = %v, want %v", k, got, v)
		}
	}
	ref := w.Provenance.ReferenceBaseRates
	for k, v := range map[string]float64{"repo_resolved": 0.86, "no_commits_90d": 0.14, "stale_over_1y": 0.004} {
		if got, _ := ref[k].(float64); got != v {
			t.Errorf("reference base rate %s = %v, want %v", k, got, v)
		}
	}
}

func TestWeightsSHA256(t *testing.T) {
	m := Embedded()
	s := sha256.Sum256(m.Raw)
	if m.SHA256 != hex.EncodeToString(s[:]) || m.Weights.SHA256() != m.SHA256 {
		t.Fatal("hash does not match raw bytes")
	}
}

// TestWeightsHashPinned fails when weights-v0.1.0.json is edited in place: a
// changed number needs a new method version and a change-log row, not an edit.
func TestWeightsHashPinned(t *testing.T) {
	m := Embedded()
	found := false
	for _, r := range m.Changelog {
		if r.WeightsSHA256 == m.SHA256 {
			found = true
		}
	}
	if !found {
		t.Fatalf("no change-log row carries weights sha256 %s: a weights edit needs a new version and a row", m.SHA256)
	}
}

func TestChangelogCoversCurrentVersion(t *testing.T) {
	rows := Embedded().Changelog
	if len(rows) == 0 || rows[len(rows)-1].Version != EmbeddedVersion && !strings.HasPrefix(rows[len(rows)-1].Version, EmbeddedVersion) {
		t.Fatalf("last change-log row %+v does not name %s", rows[len(rows)-1], EmbeddedVersion)
	}
	for _, r := range rows {
		if r.Version == "" || r.Date == "" || r.Change == "" {
			t.Errorf("incomplete row %+v", r)
		}
	}
}

func TestParseRejectsMissingNumbers(t *testing.T) {
	for name, doc := range map[string]string{
		"empty":          `{}`,
		"bad aggregates": `{"method_version":"x","aggregation":{"weights":{"provenance":1,"static":1,"drift":1,"incidents":1}}}`,
		"not json":       `{`,
	} {
		if _, err := Parse([]byte(doc)); err == nil {
			t.Errorf("%s: Parse accepted it", name)
		} else if name != "not json" && !errors.Is(err, ErrInvalidWeights) {
			t.Errorf("%s: error %v is not ErrInvalidWeights", name, err)
		}
	}
}

// adoptInto writes an adopted method into dir the way 'forum calibrate
// --adopt' does: the embedded weights with a new version and one changed
// base rate, and changelog.json with a row carrying its hash (row=false
// leaves the row out). Returns the file's path and hash.
func adoptInto(t *testing.T, dir, version string, row bool) (string, string) {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(Embedded().Raw, &doc); err != nil {
		t.Fatal(err)
	}
	doc["method_version"] = version
	doc["provenance"].(map[string]any)["signals"].(map[string]any)["no_license"].(map[string]any)["base_rate"] = 0.5
	b, _ := json.MarshalIndent(doc, "", "  ")
	path := filepath.Join(dir, "weights-"+version+".json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	rows := append([]ChangeRow(nil), Embedded().Changelog...)
	sum := sha256.Sum256(b)
	if row {
		rows = append(rows, ChangeRow{Version: version, Date: "2026-12-01", Change: "test adoption", WeightsSHA256: hex.EncodeToString(sum[:])})
	}
	cb, _ := json.Marshal(rows)
	if err := os.WriteFile(filepath.Join(dir, "changelog.json"), cb, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, hex.EncodeToString(sum[:])
}

// An adopted file loads only with its change-log row; the Method then
// names it everywhere (version, file, hash, bytes, change log), and the
// embedded method is untouched by it.
func TestLoadAdoptedFile(t *testing.T) {
	embeddedSHA := Embedded().SHA256
	dir := t.TempDir()
	path, sum := adoptInto(t, dir, "0.1.0-test-adopted", true)
	m, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if m.Version() != "0.1.0-test-adopted" || m.SHA256 != sum || m.Weights.SHA256() != sum || m.File != "weights-0.1.0-test-adopted.json" ||
		m.Weights.Provenance.Signals["no_license"].BaseRate != 0.5 || sha256Hex(m.Raw) != sum || m.Changelog[len(m.Changelog)-1].Version != "0.1.0-test-adopted" {
		t.Fatalf("loaded: %s %s %s", m.Version(), m.SHA256, m.File)
	}
	if e := Embedded(); e.Version() != EmbeddedVersion || e.SHA256 != embeddedSHA || e.File != EmbeddedWeightsFile {
		t.Fatal("loading an adopted file changed the embedded method")
	}
	if d, err := Load(""); err != nil || d != Embedded() {
		t.Fatalf(`Load("") = %v, %v; want the embedded method`, d, err)
	}
}

func TestLoadFileRefuses(t *testing.T) {
	cases := []struct {
		name  string
		setup func(dir string) string
		want  error
		says  string
	}{
		{"no change-log row", func(dir string) string { p, _ := adoptInto(t, dir, "0.1.0-x", false); return p }, ErrNotAdopted, "no row"},
		{"no changelog.json", func(dir string) string {
			p, _ := adoptInto(t, dir, "0.1.0-x", true)
			os.Remove(filepath.Join(dir, "changelog.json"))
			return p
		}, ErrNotAdopted, "changelog.json"},
		{"edited after adoption", func(dir string) string {
			p, _ := adoptInto(t, dir, "0.1.0-x", true)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, append(b, ' '), 0o644)
			return p
		}, ErrNotAdopted, "weights_sha256"},
		{"invalid weights", func(dir string) string {
			p := filepath.Join(dir, "weights-bad.json")
			os.WriteFile(p, []byte(`{"method_version":"x"}`), 0o644)
			return p
		}, ErrInvalidWeights, ""},
		{"missing file", func(dir string) string { return filepath.Join(dir, "nope.json") }, os.ErrNotExist, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := c.setup(t.TempDir())
			m, err := Load(p)
			if m != nil || !errors.Is(err, c.want) || !strings.Contains(fmt.Sprint(err), c.says) {
				t.Fatalf("Load: %v, %v; want %v mentioning %q", m, err, c.want, c.says)
			}
		})
	}
}
