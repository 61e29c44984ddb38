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

	"go.uber.org/zap"
)

func TestCurrentParses(t *testing.T) {
	w := Current()
	if w.MethodVersion != Version {
		t.Fatalf("file method_version %q, code Version %q", w.MethodVersion, Version)
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
	s := sha256.Sum256(RawWeights())
	if WeightsSHA256() != hex.EncodeToString(s[:]) {
		t.Fatal("hash does not match raw bytes")
	}
}

// TestWeightsHashPinned fails when weights-v0.1.0.json is edited in place: a
// changed number needs a new method version and a change-log row, not an edit.
func TestWeightsHashPinned(t *testing.T) {
	rows, err := Changelog()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range rows {
		if r.WeightsSHA256 == WeightsSHA256() {
			found = true
		}
	}
	if !found {
		t.Fatalf("no change-log row carries weights sha256 %s: a weights edit needs a new version and a row", WeightsSHA256())
	}
}

func TestChangelogCoversCurrentVersion(t *testing.T) {
	rows, err := Changelog()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 || rows[len(rows)-1].Version != Version && !strings.HasPrefix(rows[len(rows)-1].Version, Version) {
		t.Fatalf("last change-log row %+v does not name %s", rows[len(rows)-1], Version)
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
	if err := json.Unmarshal(RawWeights(), &doc); err != nil {
		t.Fatal(err)
	}
	doc["method_version"] = version
	doc["provenance"].(map[string]any)["signals"].(map[string]any)["no_license"].(map[string]any)["base_rate"] = 0.5
	b, _ := json.MarshalIndent(doc, "", "  ")
	path := filepath.Join(dir, "weights-"+version+".json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	rows, _ := Changelog()
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

// An adopted file is put in force only with its change-log row; then
// Current, Version, WeightsFile, WeightsSHA256, RawWeights and Changelog
// all name it, and restoring brings the embedded method back.
func TestUseAdoptedFile(t *testing.T) {
	embeddedSHA := WeightsSHA256()
	dir := t.TempDir()
	path, sum := adoptInto(t, dir, "0.1.0-test-adopted", true)
	restore := Use(nil)
	defer restore()
	if err := UseFile(path, zap.NewNop()); err != nil {
		t.Fatal(err)
	}
	rows, _ := Changelog()
	if Current().MethodVersion != "0.1.0-test-adopted" || Version != "0.1.0-test-adopted" || WeightsSHA256() != sum ||
		WeightsFile != "weights-0.1.0-test-adopted.json" || Current().Provenance.Signals["no_license"].BaseRate != 0.5 ||
		sha256Hex(RawWeights()) != sum || rows[len(rows)-1].Version != "0.1.0-test-adopted" {
		t.Fatalf("in force: %s %s %s %s", Current().MethodVersion, Version, WeightsSHA256(), WeightsFile)
	}
	Use(nil)
	if Version != EmbeddedVersion || WeightsSHA256() != embeddedSHA || Current().MethodVersion != EmbeddedVersion || WeightsFile != EmbeddedWeightsFile {
		t.Fatal("Use(nil) did not bring the embedded method back")
	}
}

func TestLoadFileRefuses(t *testing.T) {
	restore := Use(nil)
	defer restore()
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
			err := UseFile(p, nil)
			if !errors.Is(err, c.want) || !strings.Contains(fmt.Sprint(err), c.says) {
				t.Fatalf("UseFile: %v, want %v mentioning %q", err, c.want, c.says)
			}
			if Version != EmbeddedVersion || WeightsSHA256() == "" || Current().MethodVersion != EmbeddedVersion {
				t.Fatal("a refused file changed the method in force")
			}
		})
	}
	// The environment variable: unset keeps the default; a refused file is
	// an error naming the variable.
	t.Setenv(EnvWeights, "")
	if err := UseEnv(nil); err != nil || Version != EmbeddedVersion {
		t.Fatalf("empty %s: %v", EnvWeights, err)
	}
	t.Setenv(EnvWeights, filepath.Join(t.TempDir(), "nope.json"))
	if err := UseEnv(nil); err == nil || !strings.Contains(err.Error(), EnvWeights) {
		t.Fatalf("bad %s: %v", EnvWeights, err)
	}
}

// WeightsSHA256 is asked once per published record, so it must not hash: it
// allocates nothing, for the embedded method and for an adopted one, and a
// Method put in force by hand still carries the hash of its bytes.
func TestWeightsSHA256Cached(t *testing.T) {
	restore := Use(nil)
	defer restore()
	want := WeightsSHA256()
	if n := testing.AllocsPerRun(100, func() { _ = WeightsSHA256() }); n != 0 {
		t.Fatalf("embedded: %v allocs per WeightsSHA256, want 0 (hashed per call?)", n)
	}
	raw := append(RawWeights(), ' ')
	m := &Method{Weights: Current(), Raw: raw, SHA256: "stale", Path: "/x/weights-hand.json"}
	Use(m)
	s := sha256.Sum256(raw)
	if got := WeightsSHA256(); got != hex.EncodeToString(s[:]) {
		t.Fatalf("hand-built method in force: sha %q, want the hash of its bytes", got)
	}
	m.SHA256 = "changed after Use"
	if WeightsSHA256() != hex.EncodeToString(s[:]) {
		t.Fatal("writing the caller's Method after Use changed the hash in force")
	}
	if n := testing.AllocsPerRun(100, func() { _ = WeightsSHA256() }); n != 0 {
		t.Fatalf("adopted: %v allocs per WeightsSHA256, want 0", n)
	}
	Use(nil)
	if WeightsSHA256() != want {
		t.Fatal("Use(nil) did not bring the embedded hash back")
	}
}

func BenchmarkWeightsSHA256(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = WeightsSHA256()
	}
}
