package provenance_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/processors/provenance"
)

func ptr(v float64) *float64 { return &v }

// The adopt step writes a new weights file with a new method version, the
// live rates as pinned ones, and a change-log row; the current file is
// untouched and a version is never rewritten.
func TestAdopt(t *testing.T) {
	rates := []provenance.Rate{
		{Flag: "no_license", Count: 300, N: 1000, Live: ptr(0.3), Denominator: provenance.DenomResolved},
		{Flag: "fork", Count: 2, N: 50, Live: ptr(0.04)}, // n too small: skipped
		{Flag: "stale_over_1y", Count: 10, N: 1000, Live: ptr(0.01)},
		{Flag: "owner_older_than_1y"}, // no owner looked up yet (n = 0): skipped
	}
	a, err := provenance.Adopt(method.Embedded().Raw, rates, "0.1.0-draft5-cal1", "2026-12-01", provenance.MinAdoptN)
	if err != nil {
		t.Fatal(err)
	}
	w, err := method.Parse(a.Weights)
	if err != nil {
		t.Fatal(err)
	}
	cur := method.Embedded().Weights
	if w.MethodVersion != "0.1.0-draft5-cal1" || w.Provenance.Signals["no_license"].BaseRate != 0.3 {
		t.Fatalf("adopted: %s %+v", w.MethodVersion, w.Provenance.Signals["no_license"])
	}
	if w.Provenance.Signals["fork"].BaseRate != cur.Provenance.Signals["fork"].BaseRate {
		t.Fatal("a rate with n < MinAdoptN was adopted")
	}
	if w.Provenance.ReferenceBaseRates["stale_over_1y"] != 0.01 {
		t.Fatalf("reference rate: %v", w.Provenance.ReferenceBaseRates["stale_over_1y"])
	}
	if cur.Provenance.Signals["no_license"].BaseRate != 0.23 {
		t.Fatal("the current calibration changed")
	}
	if len(a.Changed) != 2 || len(a.Skipped) != 2 || a.Row.Version != a.Version || a.Row.WeightsSHA256 == "" || !strings.Contains(a.Row.Change, "no_license: 0.23 -> 0.3") {
		t.Fatalf("adoption: %+v", a)
	}
	dir := t.TempDir()
	paths, err := provenance.WriteAdoption(dir, a, method.Embedded())
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 3 {
		t.Fatal(paths)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "changelog.json"))
	var rows []method.ChangeRow
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatal(err)
	}
	old := method.Embedded().Changelog
	if len(rows) != len(old)+1 || rows[len(rows)-1].Version != "0.1.0-draft5-cal1" {
		t.Fatalf("changelog rows %d", len(rows))
	}
	md, _ := os.ReadFile(filepath.Join(dir, "CHANGELOG.md"))
	if !strings.Contains(string(md), "| 0.1.0-draft5-cal1 | 2026-12-01 |") {
		t.Fatalf("CHANGELOG.md: %s", md)
	}
	if _, err := provenance.WriteAdoption(dir, a, method.Embedded()); !errors.Is(err, provenance.ErrCalibration) {
		t.Fatalf("rewrite of a version: %v", err)
	}
	// Same version, or nothing to adopt: refused.
	if _, err := provenance.Adopt(method.Embedded().Raw, rates, method.Embedded().Version(), "2026-12-01", 100); !errors.Is(err, provenance.ErrCalibration) {
		t.Fatal("same version accepted")
	}
	same := []provenance.Rate{{Flag: "no_license", Count: 230, N: 1000, Live: ptr(0.23)}}
	if _, err := provenance.Adopt(method.Embedded().Raw, same, "x2", "2026-12-01", 100); !errors.Is(err, provenance.ErrCalibration) {
		t.Fatal("a no-op adoption accepted")
	}
}
