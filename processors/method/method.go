// Package method holds the FORUM trust method's machine-readable weights and
// its change log (SPEC §4, seed 002 §5.4 and §9).
//
// In: nothing at run time — weights-v0.1.0.json and changelog.json are
// embedded at build time. Out: the parsed Weights, the exact bytes they were
// parsed from, and their SHA-256, which every published record carries as
// weights_sha256 so any historical record can be re-derived.
//
// Method law: every number the trust scorer uses lives in the weights file,
// never in code. Changing any number means a new method version and a new
// change-log row; TestChangelogCoversCurrentVersion pins that the current
// version has one. Base rates in the file are the *pinned* calibration: live
// registry-wide rates are computed elsewhere and only become effective through
// an explicit adopt step that writes a new file ("no silent retune").
package method

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
)

// Version is the method version served by the API and stamped on records.
const Version = "0.1.0-draft5"

// WeightsFile is the name of the embedded weights file.
const WeightsFile = "weights-v0.1.0.json"

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
	return &w, nil
}

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

var current = sync.OnceValues(func() (*Weights, error) { return Parse(weightsJSON) })

// Current returns the weights of the current method version. The embedded file
// is validated by tests, so an error here means a broken build.
func Current() *Weights {
	w, err := current()
	if err != nil {
		panic(err)
	}
	return w
}

// RawWeights returns the exact bytes of the embedded weights file (a copy).
func RawWeights() []byte { return bytes.Clone(weightsJSON) }

// WeightsSHA256 is the lower-case hex SHA-256 of the weights file bytes, as
// referenced by every record.
func WeightsSHA256() string {
	s := sha256.Sum256(weightsJSON)
	return hex.EncodeToString(s[:])
}

// ChangeRow is one change-log row (seed 002 §9).
type ChangeRow struct {
	Version       string `json:"version"`
	Date          string `json:"date"`
	Change        string `json:"change"`
	Rationale     string `json:"rationale"`
	WeightsSHA256 string `json:"weights_sha256,omitempty"`
}

// Changelog returns the change-log rows, oldest first.
func Changelog() ([]ChangeRow, error) {
	var rows []ChangeRow
	if err := json.Unmarshal(changelogJSON, &rows); err != nil {
		return nil, fmt.Errorf("method: decode changelog: %w", err)
	}
	return rows, nil
}
