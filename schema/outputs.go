package schema

import (
	"strconv"
	"time"
)

// What the processors conclude. Each value is published on a compacted
// topic keyed by what it is about (topics.go) and kept by a history sink
// (append-only where it is a history), so any role rebuilds it from the
// topic or the store and none answers from another role's memory.

// MarkerHeader is the Kafka header that marks a progress marker on an
// output topic; its value is a Marker. Consumers that keep a table of the
// topic use markers to know how far the producer has got; sinks skip them.
const MarkerHeader = "forum-marker"

// Marker is a stage's progress, written to every partition of its output
// topic after the outputs it covers: every input with event time at or
// before Watermark has been applied and its outputs written before this
// marker in this partition. Loaded says the stage has read its input to the
// end at least once since it started.
type Marker struct {
	Stage     string    `json:"stage"`
	Partition int       `json:"partition"`
	Watermark time.Time `json:"watermark"`
	Loaded    bool      `json:"loaded"`
}

// MarkerKey is the key of a stage's marker in one partition (compaction
// keeps the latest one of each).
func MarkerKey(stage string, partition int) string {
	return "\x00marker/" + stage + "/" + strconv.Itoa(partition)
}

// Validate checks a marker.
func (m *Marker) Validate() error {
	if m.Stage == "" || m.Partition < 0 {
		return Invalid(ReasonMissingField, "marker without a stage or with partition %d", m.Partition)
	}
	return nil
}

// DriftState is one server's drift history as the drift processor holds it
// (the value on drift.state, keyed by server): what the scorer needs to
// compute the drift sub-score at any later time, and that sub-score at
// AsOf for analysts.
type DriftState struct {
	Server    string    `json:"server"`
	Namespace string    `json:"namespace"`
	AsOf      time.Time `json:"as_of"` // the processor's watermark when emitted
	// ObservedSince is the first snapshot that held the server (zero: never
	// seen as new; the first event's time stands in).
	ObservedSince time.Time `json:"observed_since,omitzero"`
	// Events are the retained events, oldest first; text the drift math
	// never reads is dropped (see processors/drift).
	Events []DriftEvent `json:"events"`
	// BulkEdits are the namespace's bulk description edits (evidence).
	BulkEdits []BulkEdit `json:"bulk_edits"`
	// Drift is the drift sub-score at AsOf.
	Drift SubScore `json:"drift"`
}

// Validate checks a drift state.
func (d *DriftState) Validate() error {
	switch {
	case d.Server == "":
		return Invalid(ReasonMissingName, "drift state without a server")
	case d.AsOf.IsZero():
		return Invalid(ReasonMissingField, "drift state of %s without as_of", Bound(d.Server, 200))
	}
	for i := range d.Events {
		if d.Events[i].Server != d.Server {
			return Invalid(ReasonInvalidValue, "drift state of %s holds an event of %s", Bound(d.Server, 200), Bound(d.Events[i].Server, 200))
		}
	}
	return nil
}

// IncidentState is one server's curated incidents as the incidents
// processor holds them (the value on incidents.state, keyed by server):
// every incident's current row, retracted ones included (they stay in the
// evidence), and the incidents sub-score at AsOf.
type IncidentState struct {
	Server    string     `json:"server"`
	AsOf      time.Time  `json:"as_of"`
	Incidents []Incident `json:"incidents"`
	Score     SubScore   `json:"incidents_score"`
}

// Validate checks an incident state.
func (s *IncidentState) Validate() error {
	if s.Server == "" {
		return Invalid(ReasonMissingName, "incident state without a server")
	}
	for i := range s.Incidents {
		if s.Incidents[i].Server != s.Server || s.Incidents[i].ID == "" {
			return Invalid(ReasonInvalidValue, "incident state of %s holds incident %q of %s", Bound(s.Server, 200), Bound(s.Incidents[i].ID, 200), Bound(s.Incidents[i].Server, 200))
		}
	}
	return nil
}

// OwnerBurstWindow is one namespace's owner-burst evaluation on one UTC day
// (the value on ownerburst.windows, keyed "namespace|day"): the new_server
// times the detector holds for it (baseline excluded, within its
// retention) and the evaluation at AsOf, the detector's watermark.
type OwnerBurstWindow struct {
	Namespace  string      `json:"namespace"`
	Day        string      `json:"day"` // YYYY-MM-DD of AsOf
	AsOf       time.Time   `json:"as_of"`
	NewServers []time.Time `json:"new_servers"`
	OwnerBurst
	Flagged bool `json:"flagged"`
}

// OwnerBurstKey is the key of a namespace's window on a day.
func OwnerBurstKey(namespace, day string) string { return namespace + "|" + day }

// Validate checks a window.
func (o *OwnerBurstWindow) Validate() error {
	switch {
	case o.Namespace == "":
		return Invalid(ReasonMissingName, "owner-burst window without a namespace")
	case o.AsOf.IsZero():
		return Invalid(ReasonMissingField, "owner-burst window of %s without as_of", Bound(o.Namespace, 200))
	case o.Day != o.AsOf.UTC().Format(time.DateOnly):
		return Invalid(ReasonInvalidValue, "owner-burst window of %s: day %q is not the day of as_of %s", Bound(o.Namespace, 200), Bound(o.Day, 20), o.AsOf.UTC().Format(time.RFC3339))
	case o.Flagged != (o.RecurringBurst || o.FirstWindowBurst):
		return Invalid(ReasonInvalidValue, "owner-burst window of %s: flagged disagrees with its definitions", Bound(o.Namespace, 200))
	}
	return nil
}

// ProvenanceFlags are the observable facts of one server (their definitions
// are processors/provenance's package doc). Unknown is reported through the *Known fields.
type ProvenanceFlags struct {
	GitHubURL    bool    `json:"github_url"`
	Observed     bool    `json:"observed"`
	Resolved     bool    `json:"resolved"`
	CommitsKnown bool    `json:"commits_known"`
	Fork         bool    `json:"fork"`
	Archived     bool    `json:"archived"`
	NoLicense    bool    `json:"no_license"`
	Under30d     bool    `json:"repo_under_30d"`
	StaleOver1y  bool    `json:"stale_over_1y"`
	Stars100     bool    `json:"stars_ge_100"`
	LateGT30d    bool    `json:"repo_created_after_listing_gt30d"`
	Late1to30d   bool    `json:"repo_created_after_listing_1_30d"`
	NoCommits90d bool    `json:"no_commits_90d"`
	SingleAuthor bool    `json:"single_author_90d"`
	CapHit       bool    `json:"commit_cap_hit"`
	Verified     bool    `json:"verified_commits_90d"`
	OwnerKnown   bool    `json:"owner_age_known"`
	OwnerOld     bool    `json:"owner_older_than_1y"`
	OwnerAgeDays float64 `json:"owner_age_days"`
	Mismatch     bool    `json:"namespace_owner_mismatch"`
	CoRegCluster bool    `json:"co_registration_cluster_with_hygiene"` // with hygiene
	OneRepoMany  bool    `json:"one_repo_many_servers_with_hygiene"`   // with hygiene
	LagDays      float64 `json:"listing_lag_days"`
	RepoAgeDays  float64 `json:"repo_age_days"`
}

// ProvenanceGate is SPEC §1.2's GitHub coverage gate at a time.
type ProvenanceGate struct {
	Open        bool       `json:"open"`
	CoveragePct float64    `json:"coverage_pct"`
	Resolvable  int        `json:"resolvable"` // distinct github.com repos listed
	Fresh       int        `json:"fresh"`      // observed within max_age
	Observed    int        `json:"observed"`
	Oldest      *time.Time `json:"oldest_observation"`
	MaxAgeHours float64    `json:"max_age_hours"`
	MinCoverage float64    `json:"min_coverage"`
	At          time.Time  `json:"at"`
}

// BaseRate is one flag's live base rate next to the pinned one.
type BaseRate struct {
	Flag         string   `json:"flag"`
	Denominator  string   `json:"denominator"`
	Count        int      `json:"count"`
	N            int      `json:"n"`
	Live         *float64 `json:"live"` // null when N = 0
	Pinned       *float64 `json:"pinned"`
	PinnedSource string   `json:"pinned_source,omitempty"`
	DeltaPP      *float64 `json:"delta_pp"` // (live − pinned) in percentage points
	Scored       bool     `json:"scored"`   // a signal of the method (else a reference rate)
	Direction    string   `json:"direction,omitempty"`
}

// ProvenanceSignal is one server's provenance as the provenance processor
// concludes it at AsOf: the value on provenance.signals (keyed by server).
type ProvenanceSignal struct {
	Server string `json:"server"`
	// AsOf is the event time the flags and the sub-score were evaluated at.
	AsOf time.Time `json:"as_of"`
	// Repo is the normalized github.com key of RepoURL ("" when it is not
	// a GitHub repository): the coverage gate counts distinct repos.
	Repo        string             `json:"repo,omitempty"`
	RepoURL     string             `json:"repo_url"`
	ListedAt    time.Time          `json:"listed_at"`
	Observation *GitHubObservation `json:"observation"`
	Flags       ProvenanceFlags    `json:"flags"`
	// Provenance is the sub-score from the pinned calibration (null with a
	// reason when the repo is unresolved or not observed).
	Provenance SubScore `json:"provenance"`
}

// Validate checks a provenance signal.
func (p *ProvenanceSignal) Validate() error {
	switch {
	case p.Server == "":
		return Invalid(ReasonMissingName, "provenance signal without a server")
	case p.AsOf.IsZero():
		return Invalid(ReasonMissingField, "provenance signal of %s without as_of", Bound(p.Server, 200))
	}
	if p.Observation != nil {
		if err := p.Observation.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// ProvenanceRates is the provenance processor's registry-wide view at AsOf
// (the value on provenance.rates, one key): every flag's live base rate
// beside the pinned one of the method in force, and the coverage gate.
type ProvenanceRates struct {
	AsOf          time.Time      `json:"as_of"`
	MethodVersion string         `json:"method_version"`
	WeightsSHA256 string         `json:"weights_sha256"`
	Gate          ProvenanceGate `json:"gate"`
	Rates         []BaseRate     `json:"rates"`
}

// ProvenanceRatesKey is the one key of provenance.rates.
const ProvenanceRatesKey = "rates"

// Validate checks the rates.
func (r *ProvenanceRates) Validate() error {
	if r.AsOf.IsZero() || r.MethodVersion == "" {
		return Invalid(ReasonMissingField, "provenance rates without as_of or method_version")
	}
	for _, x := range r.Rates {
		if x.Flag == "" || x.Count < 0 || x.N < 0 || x.Count > x.N {
			return Invalid(ReasonInvalidValue, "base rate %q: count %d of n %d", Bound(x.Flag, 100), x.Count, x.N)
		}
	}
	return nil
}

// TrustRecordMsg is one sealed record of a publication (the value on
// trust.records, keyed by server). Record is the sealed RFC 8785 JSON as a
// string, so its bytes travel exactly; LeafHash is its RFC 6962 leaf hash
// (hex), stored so proofs never re-canonicalise.
type TrustRecordMsg struct {
	Server          string    `json:"server"`
	PublicationID   string    `json:"publication_id"`
	ComputedAt      time.Time `json:"computed_at"`
	Score           *float64  `json:"score"`
	Band            string    `json:"band"`
	ToolfinderScore int       `json:"toolfinder_score"`
	ContentSHA256   string    `json:"content_sha256"`
	LeafHash        string    `json:"leaf_hash"`
	Record          string    `json:"record"`
}

// Validate checks a record message.
func (t *TrustRecordMsg) Validate() error {
	switch {
	case t.Server == "" || t.PublicationID == "":
		return Invalid(ReasonMissingField, "trust record without a server or publication id")
	case t.Record == "" || t.Record[0] != '{':
		return Invalid(ReasonMissingField, "trust record of %s without a sealed record", Bound(t.Server, 200))
	case len(t.ContentSHA256) != 64 || len(t.LeafHash) != 64:
		return Invalid(ReasonInvalidValue, "trust record of %s: content_sha256 and leaf_hash must be 64 hex digits", Bound(t.Server, 200))
	case t.ComputedAt.IsZero():
		return Invalid(ReasonMissingField, "trust record of %s without computed_at", Bound(t.Server, 200))
	}
	return nil
}

// PublicationMsg is a publication's signed header (the value on
// trust.publications, keyed by id), written after all its records.
type PublicationMsg struct {
	ID            string    `json:"id"`
	MethodVersion string    `json:"method_version"`
	WeightsSHA256 string    `json:"weights_sha256"`
	RecordCount   int       `json:"record_count"`
	MerkleRoot    string    `json:"merkle_root"`
	Signature     string    `json:"signature"`
	KeyID         string    `json:"key_id"`
	ComputedAt    time.Time `json:"computed_at"`
}

// Validate checks a publication header.
func (p *PublicationMsg) Validate() error {
	switch {
	case p.ID == "" || p.MerkleRoot == "" || p.Signature == "":
		return Invalid(ReasonMissingField, "publication without an id, root or signature")
	case p.RecordCount < 0:
		return Invalid(ReasonInvalidValue, "publication %s: record_count %d", Bound(p.ID, 100), p.RecordCount)
	case p.ComputedAt.IsZero():
		return Invalid(ReasonMissingField, "publication %s without computed_at", Bound(p.ID, 100))
	}
	return nil
}
