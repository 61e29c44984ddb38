package schema

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
)

// The published record (SPEC §5): what the scorer seals (RFC 8785
// canonical JSON, hashed, a Merkle leaf of its publication), sends on
// trust.records and the API serves. Its parts from the Toolfinder scorer,
// the classifier and the static scanner are here too, so readers of
// records (the API, search, verify) need nothing of the processors.

// Record is one published record (SPEC §5). Field order is irrelevant: the
// record is sealed as RFC 8785 canonical JSON.
type Record struct {
	Server             string              `json:"server"`
	Version            string              `json:"version"`
	Namespace          string              `json:"namespace"`
	Status             string              `json:"status"`
	MethodVersion      string              `json:"method_version"`
	WeightsSHA256      string              `json:"weights_sha256"`
	ComputedAt         time.Time           `json:"computed_at"`
	PublicationID      string              `json:"publication_id"`
	Score              *float64            `json:"score"`
	Band               string              `json:"band"`
	BandReason         string              `json:"band_reason"`
	Provenance         SubScore            `json:"provenance"`
	Static             SubScore            `json:"static"`
	Drift              SubScore            `json:"drift"`
	Incidents          SubScore            `json:"incidents"`
	OpenSignals        []OpenSignal        `json:"open_signals"`
	Visibility         string              `json:"visibility"`
	Unobserved         []Unobserved        `json:"unobserved"`
	DriftObservedSince *time.Time          `json:"drift_observed_since"`
	OwnerBurst         *OwnerBurst         `json:"owner_burst,omitempty"`
	ReviewPending      *ReviewPending      `json:"review_pending,omitempty"`
	Toolfinder         ToolfinderBlock     `json:"toolfinder"`
	Categories         Categories          `json:"categories"`
	StaticScan         StaticScan          `json:"static_scan"`
	GitHub             GitHubState         `json:"github"`
	Health             []Evidence          `json:"health_checks"`
	Registry           RegistryObservation `json:"registry"`
	ContentSHA256      string              `json:"content_sha256,omitempty"`
}

// ReviewPending marks a record held by the popular-server review (SPEC §4):
// until Until (or an approval), the API keeps serving the previous record.
type ReviewPending struct {
	PreviousBand          string    `json:"previous_band"`
	PreviousPublicationID string    `json:"previous_publication_id"`
	Stars                 int       `json:"stars"`
	Until                 time.Time `json:"until"`
}

// ToolfinderBlock is the Toolfinder v0.3 result as published.
type ToolfinderBlock struct {
	Version    string                `json:"version"`
	Score      int                   `json:"score"`
	RawSum     float64               `json:"raw_sum"`
	Rounded    int                   `json:"rounded"`
	Components []ToolfinderComponent `json:"components"`
	Flags      []string              `json:"flags"`
	Penalties  []ToolfinderPenalty   `json:"penalties"`
	GitHubGate ToolfinderGate        `json:"github_gate"`
}

// ToolfinderGate is the GitHub coverage gate (SPEC §1.2) as a record states it.
type ToolfinderGate struct {
	Open   bool   `json:"open"`
	Reason string `json:"reason"`
}

// GitHubState says what the record knows from GitHub.
type GitHubState struct {
	Observed bool   `json:"observed"`
	RepoURL  string `json:"repo_url,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// StaticScan is the static scan behind the static sub-score.
type StaticScan struct {
	Coverage string           `json:"coverage"` // scanned|auth_required|unreachable|handshake_failed|no_endpoint|not_scanned
	Check    *Evidence        `json:"check,omitempty"`
	Findings []ScannedFinding `json:"findings"`
}

// ScannedFinding is a scanner finding with its evidence id.
type ScannedFinding struct {
	ID string `json:"id"`
	ScanFinding
}

// RegistryObservation is the registry entry the record scored.
type RegistryObservation struct {
	ContentSHA256 string     `json:"content_sha256"`
	UpdatedAt     *time.Time `json:"updated_at"`
	FirstListed   *time.Time `json:"first_listed"`
}

// ToolfinderFinding is one Toolfinder check's outcome inside a component.
type ToolfinderFinding struct {
	Probe    string             `json:"probe"`
	Outcome  string             `json:"outcome"` // positive|negative|neutral|not_applicable
	Message  string             `json:"message"`
	Points   float64            `json:"points"`
	Values   map[string]float64 `json:"values,omitempty"`
	Evidence []Evidence         `json:"evidence,omitempty"`
}

// ToolfinderComponent is one of the seven Toolfinder score components.
type ToolfinderComponent struct {
	Name     string              `json:"name"`
	Max      float64             `json:"max"`
	Score    float64             `json:"score"`
	Findings []ToolfinderFinding `json:"findings"`
}

// ToolfinderPenalty is one Toolfinder anti-junk flag and what it subtracted.
type ToolfinderPenalty struct {
	Flag   string `json:"flag"`
	Points int    `json:"points"`
	Reason string `json:"reason"`
}

// Categories is the classification of one server (SPEC §6).
type Categories struct {
	Primary    string         `json:"primary"`
	Categories []string       `json:"categories"` // primary first, at most 3
	Weights    map[string]int `json:"weights"`
}

// ScanFinding is one static-scan finding (SPEC §1.4).
type ScanFinding struct {
	Class    string `json:"class"`
	Severity string `json:"severity"`
	Tool     string `json:"tool,omitempty"`  // "" for registry-level text
	Field    string `json:"field,omitempty"` // e.g. tool.description, tool.input_schema, registry.description
	RuleID   string `json:"rule_id"`
	Evidence string `json:"evidence"`
	Source   string `json:"source"` // "builtin" or "ramparts"
}

// ScanFindingID is the evidence id of a scan finding: "scan:<server>:<hash>",
// so the API can find the record that holds it.
func ScanFindingID(server, checkID string, f ScanFinding) string {
	h := sha256.New()
	for _, s := range []string{server, checkID, f.Class, f.Severity, f.RuleID, f.Tool, f.Field, f.Evidence, f.Source} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return "scan:" + server + ":" + hex.EncodeToString(h.Sum(nil))[:16]
}

// ParseScanFindingID splits a scan-finding id into its server.
func ParseScanFindingID(id string) (server string, ok bool) {
	rest, found := strings.CutPrefix(id, "scan:")
	i := strings.LastIndex(rest, ":")
	if !found || i <= 0 {
		return "", false
	}
	return rest[:i], true
}
