package provenance

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/forum-mcp/forum/processors/method"
)

// ErrCalibration is returned (wrapped) when an adoption cannot be made.
var ErrCalibration = errors.New("provenance: calibration")

// MinAdoptN is the smallest denominator whose live rate may be adopted.
const MinAdoptN = 100

// Adoption is a new pinned calibration: the weights file bytes of a new
// method version and its change-log row.
type Adoption struct {
	Version  string           `json:"version"`
	File     string           `json:"file"` // weights-<version>.json
	Weights  []byte           `json:"-"`
	Row      method.ChangeRow `json:"row"`
	Changed  []string         `json:"changed"` // "flag: pinned -> live (n)"
	Skipped  []string         `json:"skipped"` // flags kept at their pinned rate, with why
	Previous string           `json:"previous_version"`
}

// Adopt makes a new calibration from the current weights file raw and the
// live rates: every scored signal and reference rate whose live rate has
// n >= minN and 0 < rate <= 1 replaces the pinned one; the method version
// becomes version. Nothing else in the file changes. The result is
// validated with method.Parse. It is pure: writing is WriteAdoption's job.
func Adopt(raw []byte, rates []Rate, version, date string, minN int) (Adoption, error) {
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return Adoption{}, fmt.Errorf("%w: weights: %v", ErrCalibration, err)
	}
	prev, _ := doc["method_version"].(string)
	if version == "" || version == prev {
		return Adoption{}, fmt.Errorf("%w: the new method version must differ from %q", ErrCalibration, prev)
	}
	prov, _ := doc["provenance"].(map[string]any)
	sigs, _ := prov["signals"].(map[string]any)
	ref, _ := prov["reference_base_rates"].(map[string]any)
	if sigs == nil {
		return Adoption{}, fmt.Errorf("%w: weights file has no provenance.signals", ErrCalibration)
	}
	a := Adoption{Version: version, File: "weights-" + version + ".json", Previous: prev, Changed: []string{}, Skipped: []string{}}
	for _, r := range rates {
		if r.Live == nil || r.N < minN || *r.Live <= 0 || *r.Live > 1 {
			a.Skipped = append(a.Skipped, fmt.Sprintf("%s: n=%d count=%d (needs n >= %d and a rate in (0,1])", r.Flag, r.N, r.Count, minN))
			continue
		}
		live := *r.Live
		if s, ok := sigs[r.Flag].(map[string]any); ok {
			old, _ := s["base_rate"].(float64)
			if old == live {
				continue
			}
			s["base_rate"] = live
			s["base_rate_source"] = fmt.Sprintf("live calibration %s (%d/%d %s), adopted in %s", date, r.Count, r.N, r.Denominator, version)
			a.Changed = append(a.Changed, fmt.Sprintf("%s: %g -> %g (n=%d)", r.Flag, old, live, r.N))
		} else if ref != nil {
			if old, ok := ref[r.Flag].(float64); ok && old != live {
				ref[r.Flag] = live
				a.Changed = append(a.Changed, fmt.Sprintf("%s (reference): %g -> %g (n=%d)", r.Flag, old, live, r.N))
			}
		}
	}
	if len(a.Changed) == 0 {
		return Adoption{}, fmt.Errorf("%w: live rates equal the pinned ones (or none is adoptable): nothing to adopt", ErrCalibration)
	}
	sort.Strings(a.Changed)
	doc["method_version"] = version
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return Adoption{}, err
	}
	b = append(b, '\n')
	if _, err := method.Parse(b); err != nil {
		return Adoption{}, fmt.Errorf("%w: the new weights do not validate: %v", ErrCalibration, err)
	}
	sum := sha256.Sum256(b)
	a.Weights = b
	a.Row = method.ChangeRow{Version: version, Date: date,
		Change:        "Base-rate calibration adopted from live rates (" + strings.Join(a.Changed, "; ") + "); file " + a.File + ".",
		Rationale:     "forum calibrate --adopt: SPEC §4 base-rate calibration (no silent retune); previous method " + prev,
		WeightsSHA256: hex.EncodeToString(sum[:])}
	return a, nil
}

// WriteAdoption writes the adoption into dir: the new weights file (refusing
// to overwrite one), changelog.json (dir's, else the embedded one, plus the
// new row) and a row appended to CHANGELOG.md. Returns the paths written.
// base is the method the adoption starts from: its change log is the one
// continued when dir has none.
func WriteAdoption(dir string, a Adoption, base *method.Method) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	wpath := filepath.Join(dir, a.File)
	if _, err := os.Stat(wpath); err == nil {
		return nil, fmt.Errorf("%w: %s exists: a method version is never rewritten", ErrCalibration, wpath)
	}
	cpath := filepath.Join(dir, "changelog.json")
	var rows []method.ChangeRow
	if b, err := os.ReadFile(cpath); err == nil {
		if err := json.Unmarshal(b, &rows); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrCalibration, cpath, err)
		}
	} else if errors.Is(err, os.ErrNotExist) {
		rows = append(rows, base.Changelog...)
	} else {
		return nil, err
	}
	rows = append(rows, a.Row)
	var cb strings.Builder
	cb.WriteString("[\n")
	for i, r := range rows {
		b, _ := json.Marshal(r)
		cb.WriteString("  ")
		cb.Write(b)
		if i < len(rows)-1 {
			cb.WriteString(",")
		}
		cb.WriteString("\n")
	}
	cb.WriteString("]\n")
	if err := os.WriteFile(wpath, a.Weights, 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(cpath, []byte(cb.String()), 0o644); err != nil {
		return nil, err
	}
	mpath := filepath.Join(dir, "CHANGELOG.md")
	f, err := os.OpenFile(mpath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, _ := f.Stat(); st != nil && st.Size() == 0 {
		fmt.Fprintf(f, "# FORUM trust method — change log\n\n| Version | Date | Change | Rationale |\n|---|---|---|---|\n")
	}
	if _, err := fmt.Fprintf(f, "| %s | %s | %s (sha256 `%s`) | %s |\n", a.Row.Version, a.Row.Date, a.Row.Change, a.Row.WeightsSHA256, a.Row.Rationale); err != nil {
		return nil, err
	}
	return []string{wpath, cpath, mpath}, nil
}
