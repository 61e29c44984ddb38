// Package method holds the FORUM trust method's machine-readable weights and
// its change log (SPEC §4, seed 002 §5.4 and §9).
//
// In: weights-v0.1.0.json and changelog.json, embedded at build time — the
// default method (Embedded) — or a weights file written by 'forum calibrate
// --adopt' (Load, LoadFile; FORUM_METHOD_WEIGHTS names it). Out: a *Method:
// the parsed Weights, the exact bytes they were parsed from, their SHA-256
// (every published record carries it as weights_sha256, so any historical
// record can be re-derived), and the change log.
//
// There is no method "in force" held by this package: the process loads
// one Method at startup and hands it to every stage that scores
// (component.Deps.Settings.MethodWeights names the file), so two methods
// can never be mixed by accident and tests run methods side by side.
//
// An adopted file is taken only when the changelog.json beside it has a row
// with its method_version and its weights_sha256: a method nobody adopted
// (or a file edited after adoption) is refused.
//
// Method law: every number the trust scorer uses lives in the weights file,
// never in code. Changing any number means a new method version and a new
// change-log row; TestChangelogCoversCurrentVersion pins that the current
// version has one. Base rates in the file are the *pinned* calibration: live
// registry-wide rates are computed elsewhere and only become effective through
// an explicit adopt step that writes a new file ("no silent retune").
package method

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// The embedded (default) method.
const (
	EmbeddedVersion     = "0.1.0-draft5"
	EmbeddedWeightsFile = "weights-v0.1.0.json"
)

// EnvWeights names an adopted weights file to put in force at startup.
const EnvWeights = "FORUM_METHOD_WEIGHTS"

//go:embed weights-v0.1.0.json
var weightsJSON []byte

//go:embed changelog.json
var changelogJSON []byte

// Direction names (seed 002 §4.1).
const (
	StrongNegative = "strong_negative"
	Negative       = "negative"
	MildNegative   = "mild_negative"
	NearNeutral    = "near_neutral"
	None           = "none"
	MildPositive   = "mild_positive"
)

// Weights is the parsed weights file. Field names follow the JSON keys.
type Weights struct {
	// sha256 is the hex SHA-256 of the bytes the weights were parsed from
	// (set by Parse), the weights_sha256 of every record scored with them.
	sha256 string

	Method         string      `json:"method"`
	MethodVersion  string      `json:"method_version"`
	WeightsVersion string      `json:"weights_version"`
	Aggregation    Aggregation `json:"aggregation"`
	Provenance     Provenance  `json:"provenance"`
	Static         Static      `json:"static"`
	Drift          Drift       `json:"drift"`
	Incidents      Incidents   `json:"incidents"`
	Bands          Bands       `json:"bands"`
	OwnerBurst     OwnerBurst  `json:"owner_burst"`
	PopularReview  Popular     `json:"popular_review"`
}

// Aggregation weights per sub-score name (provenance, static, drift, incidents).
type Aggregation struct {
	Weights map[string]float64 `json:"weights"`
}

// Provenance parameters.
type Provenance struct {
	Baseline           float64               `json:"baseline"`
	Magnitudes         map[string]float64    `json:"magnitudes"`
	BaseRateFactor     BaseRateFactor        `json:"base_rate_factor"`
	Signals            map[string]SignalSpec `json:"signals"`
	ReferenceBaseRates map[string]any        `json:"reference_base_rates"`
	Thresholds         ProvenanceThresholds  `json:"thresholds"`
}

// BaseRateFactor parameterizes f(p) = clamp(log10(1/p)/Divisor, Min, Max).
type BaseRateFactor struct {
	Divisor float64 `json:"divisor"`
	Min     float64 `json:"min"`
	Max     float64 `json:"max"`
}

// SignalSpec is one provenance signal's direction and pinned base rate.
type SignalSpec struct {
	Direction        string  `json:"direction"`
	BaseRate         float64 `json:"base_rate"`
	OpenHighSeverity bool    `json:"open_high_severity,omitempty"`
	LinearDecayDays  float64 `json:"linear_decay_days,omitempty"`
	RegistrySide     bool    `json:"registry_side,omitempty"`
	BaseRateSource   string  `json:"base_rate_source,omitempty"`
}

// ProvenanceThresholds are the day/count cut-offs of the provenance signals.
type ProvenanceThresholds struct {
	LateRepoStrongDays        float64 `json:"late_repo_strong_days"`
	LateRepoMildMinDays       float64 `json:"late_repo_mild_min_days"`
	RepoYoungDays             float64 `json:"repo_young_days"`
	OwnerOldDays              float64 `json:"owner_old_days"`
	StarsPositive             int     `json:"stars_positive"`
	CoRegistrationMinListings int     `json:"co_registration_min_listings"`
	OneRepoMinServers         int     `json:"one_repo_min_servers"`
}

// Static parameters.
type Static struct {
	Baseline              float64            `json:"baseline"`
	ClassWeights          map[string]float64 `json:"class_weights"`
	SeverityImpact        map[string]float64 `json:"severity_impact"`
	StrongNegativeClasses []string           `json:"strong_negative_classes"`
}

// Drift parameters.
type Drift struct {
	Baseline              float64            `json:"baseline"`
	HalfLifeDays          float64            `json:"half_life_days"`
	Weights               map[string]float64 `json:"weights"`
	MultiChangeWindowHrs  float64            `json:"multi_change_window_hours"`
	MultiChangeMinKinds   int                `json:"multi_change_min_kinds"`
	BulkEditMinServers    int                `json:"bulk_edit_min_servers"`
	BulkEditWindowHours   float64            `json:"bulk_edit_window_hours"`
	OpenSignalMinFraction float64            `json:"open_signal_min_fraction"`
}

// Incidents parameters.
type Incidents struct {
	Baseline             float64            `json:"baseline"`
	HalfLifeDays         float64            `json:"half_life_days"`
	SeverityWeights      map[string]float64 `json:"severity_weights"`
	StatusFactors        map[string]float64 `json:"status_factors"`
	RecurrenceBase       float64            `json:"recurrence_base"`
	RecurrenceWindowDays float64            `json:"recurrence_window_days"`
	FBandMinFraction     float64            `json:"f_band_min_fraction"`
}

// Bands thresholds.
type Bands struct {
	DBelow float64 `json:"d_below"`
	AMin   float64 `json:"a_min"`
	BMin   float64 `json:"b_min"`
}

// OwnerBurst parameters (draft6, evidence only).
type OwnerBurst struct {
	WindowHours           float64 `json:"window_hours"`
	Windows               int     `json:"windows"`
	RecurringMinPerWindow int     `json:"recurring_min_per_window"`
	RecurringMinWindows   int     `json:"recurring_min_windows"`
	FirstWindowMin        int     `json:"first_window_min"`
}

// Popular is the popular-server review rule.
type Popular struct {
	MinStars    int     `json:"min_stars"`
	MinBandDrop int     `json:"min_band_drop"`
	HoldHours   float64 `json:"hold_hours"`
}

// ErrInvalidWeights is returned (wrapped) by Parse for a file that decodes but
// breaks an invariant the scorer relies on.
var ErrInvalidWeights = errors.New("method: invalid weights")

// Parse decodes and validates a weights file. The file carries "doc" strings
// for readers that the structs ignore, so decoding is lenient; instead Validate
// checks that every number the scorer reads is present, so a typo in a key
// cannot silently leave a weight at zero.
func Parse(b []byte) (*Weights, error) {
	var w Weights
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("method: decode weights: %w", err)
	}
	if err := w.Validate(); err != nil {
		return nil, err
	}
	w.sha256 = sha256Hex(b)
	return &w, nil
}

// SHA256 is the lower-case hex SHA-256 of the weights file the weights were
// parsed from: the weights_sha256 every record scored with them carries.
func (w *Weights) SHA256() string { return w.sha256 }

// Validate checks the invariants the scorer relies on.
func (w *Weights) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidWeights, fmt.Sprintf(format, a...))
	}
	if w.MethodVersion == "" {
		return bad("method_version empty")
	}
	sum := 0.0
	for _, k := range SubScores {
		v, ok := w.Aggregation.Weights[k]
		if !ok || v <= 0 {
			return bad("aggregation weight %q missing or not positive", k)
		}
		sum += v
	}
	if sum < 0.999 || sum > 1.001 {
		return bad("aggregation weights sum to %v, want 1", sum)
	}
	for _, d := range []string{StrongNegative, Negative, MildNegative, NearNeutral, None, MildPositive} {
		if _, ok := w.Provenance.Magnitudes[d]; !ok {
			return bad("magnitude %q missing", d)
		}
	}
	f := w.Provenance.BaseRateFactor
	if f.Divisor <= 0 || f.Min <= 0 || f.Max < f.Min {
		return bad("base_rate_factor %+v", f)
	}
	for name, s := range w.Provenance.Signals {
		if _, ok := w.Provenance.Magnitudes[s.Direction]; !ok {
			return bad("signal %q: unknown direction %q", name, s.Direction)
		}
		if s.BaseRate <= 0 || s.BaseRate > 1 {
			return bad("signal %q: base_rate %v outside (0,1]", name, s.BaseRate)
		}
	}
	for _, name := range ProvenanceSignals {
		if _, ok := w.Provenance.Signals[name]; !ok {
			return bad("provenance signal %q missing", name)
		}
	}
	for _, k := range DriftWeightKeys {
		if _, ok := w.Drift.Weights[k]; !ok {
			return bad("drift weight %q missing", k)
		}
	}
	for _, c := range StaticClasses {
		if _, ok := w.Static.ClassWeights[c]; !ok {
			return bad("static class weight %q missing", c)
		}
	}
	for _, s := range []string{"high", "medium", "low"} {
		if _, ok := w.Static.SeverityImpact[s]; !ok {
			return bad("severity impact %q missing", s)
		}
		if _, ok := w.Incidents.SeverityWeights[s]; !ok {
			return bad("incident severity weight %q missing", s)
		}
	}
	if _, ok := w.Incidents.SeverityWeights["critical"]; !ok {
		return bad("incident severity weight critical missing")
	}
	if w.Drift.HalfLifeDays <= 0 || w.Incidents.HalfLifeDays <= 0 {
		return bad("half-lives must be positive")
	}
	if w.OwnerBurst.Windows <= 0 || w.OwnerBurst.WindowHours <= 0 {
		return bad("owner_burst windows")
	}
	return nil
}

// SubScores are the four sub-score names in record order.
var SubScores = []string{"provenance", "static", "drift", "incidents"}

// ProvenanceSignals are the provenance signal ids the trust scorer reads.
var ProvenanceSignals = []string{
	"repo_created_after_listing_gt30d", "repo_created_after_listing_1_30d", "namespace_owner_mismatch",
	"fork", "archived", "repo_under_30d", "no_license", "single_author_90d",
	"co_registration_cluster_with_hygiene", "one_repo_many_servers_with_hygiene", "commit_cap_hit",
	"verified_commits_90d", "owner_older_than_1y", "stars_ge_100",
}

// DriftWeightKeys are the drift weight keys the trust scorer reads.
var DriftWeightKeys = []string{
	"endpoints_changed", "endpoints_changed_suspect_destination", "multi_change_24h",
	"description_changed_no_version_bump", "description_changed_with_version_bump", "title_changed",
	"status_changed_deprecated_or_deleted", "status_changed_other", "new_server", "version_added", "removed", "bulk_edit",
}

// StaticClasses are the static-scan finding classes (SPEC §1.4).
var StaticClasses = []string{"tool_poisoning", "shadowing", "hardcoded_secret", "command_injection", "suspicious_description", "hygiene"}

// embedded is the embedded method, parsed once. The embedded file is
// validated by tests, so an error here means a broken build.
var embedded = sync.OnceValue(func() *Method {
	w, err := Parse(weightsJSON)
	if err != nil {
		panic(err)
	}
	var rows []ChangeRow
	if err := json.Unmarshal(changelogJSON, &rows); err != nil {
		panic(fmt.Errorf("method: decode embedded changelog: %w", err))
	}
	return &Method{Weights: w, Raw: weightsJSON, SHA256: w.SHA256(), File: EmbeddedWeightsFile, Changelog: rows}
})

// Embedded returns the embedded (default) method. It is shared: callers
// must not modify it.
func Embedded() *Method { return embedded() }

// Load returns the method a process runs with: the embedded one for "",
// else the adopted weights file at path (LoadFile).
func Load(path string) (*Method, error) {
	if path == "" {
		return Embedded(), nil
	}
	return LoadFile(path)
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Method is a method a process scores with: the embedded one or an
// adopted weights file. Treat it as read-only once loaded.
type Method struct {
	Weights   *Weights
	Raw       []byte // the weights file's bytes, verbatim
	SHA256    string // hex SHA-256 of Raw (= Weights.SHA256())
	File      string // the weights file's name
	Path      string // where it was loaded from ("" for the embedded one)
	Changelog []ChangeRow
	Row       ChangeRow // the row that adopted it (zero for the embedded one)
}

// Version is the method version (weights' method_version).
func (m *Method) Version() string { return m.Weights.MethodVersion }

// ErrNotAdopted is returned (wrapped) by LoadFile for a weights file that no
// change-log row adopts.
var ErrNotAdopted = errors.New("method: weights file not adopted")

// maxWeightsFile bounds what LoadFile reads (the embedded file is ~8 KiB).
const maxWeightsFile = 1 << 20

// LoadFile reads an adopted weights file: it must validate (Parse), and
// changelog.json in the same directory must hold a row whose version is the
// file's method_version and whose weights_sha256 is the file's SHA-256.
func LoadFile(path string) (*Method, error) {
	raw, err := readBounded(path)
	if err != nil {
		return nil, fmt.Errorf("method: weights %s: %w", path, err)
	}
	w, err := Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("method: weights %s: %w", path, err)
	}
	m := &Method{Weights: w, Raw: raw, SHA256: w.SHA256(), File: filepath.Base(path), Path: path}
	cpath := filepath.Join(filepath.Dir(path), "changelog.json")
	cb, err := readBounded(cpath)
	if err != nil {
		return nil, fmt.Errorf("%w: %s needs a change-log row in %s: %w", ErrNotAdopted, path, cpath, err)
	}
	if err := json.Unmarshal(cb, &m.Changelog); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrNotAdopted, cpath, err)
	}
	for _, r := range m.Changelog {
		if r.Version == w.MethodVersion && r.WeightsSHA256 == m.SHA256 {
			m.Row = r
			return m, nil
		}
	}
	return nil, fmt.Errorf("%w: no row of %s has version %q and weights_sha256 %s (adopt with 'forum calibrate --adopt'; a file edited after adoption is refused)",
		ErrNotAdopted, cpath, w.MethodVersion, m.SHA256)
}

func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxWeightsFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxWeightsFile {
		return nil, fmt.Errorf("larger than %d bytes", maxWeightsFile)
	}
	return b, nil
}

// ChangeRow is one change-log row (seed 002 §9).
type ChangeRow struct {
	Version       string `json:"version"`
	Date          string `json:"date"`
	Change        string `json:"change"`
	Rationale     string `json:"rationale"`
	WeightsSHA256 string `json:"weights_sha256,omitempty"`
}
