package store

import (
	"context"
	"time"
)

// Provenance is one row of the provenance table: one GitHub observation
// (ingest/github.Observation, topic provenance.obs) flattened, plus flags
// derived from the observation alone (processors/history.ProvenanceRow
// computes them with processors/provenance.FlagsOf, so the table and the
// processor agree). Zero times are stored as NULL.
type Provenance struct {
	ID          string // the observation id, "github:<repo>@<observed_at RFC 3339>"
	Repo        string // github.com/owner/name
	ObservedAt  time.Time
	Status      string // resolved|unresolved|... (ingest/github)
	HTTPStatus  int
	NotModified bool
	FullName    string
	RenamedTo   string
	OwnerLogin  string
	OwnerType   string

	OwnerCreatedAt time.Time // zero (NULL) until the owner was looked up
	// OwnerObservedAt is when the owner was looked up (zero: NULL); an
	// owner lookup re-publishes the observation under the same ID.
	OwnerObservedAt time.Time
	CreatedAt       time.Time // zero (NULL) when unknown
	PushedAt        time.Time // zero (NULL) when unknown
	Stars           int
	Fork            bool
	Archived        bool
	Disabled        bool
	LicenseSPDX     string // "" = no license

	// Commit stats of the last 90 days; CommitsFetched is false (and the
	// rest zero) until the commit pages were fetched.
	CommitsFetched    bool
	CommitsObservedAt time.Time // zero (NULL) when not fetched
	CommitsCount      int
	Authors           int
	Verified          int
	Empty             bool
	CapHit            bool
	LastCommitAt      time.Time // zero (NULL) when no commit was seen

	Flags ProvenanceFlags
}

// ProvenanceFlags are the per-observation flags (columns flag_*). nil
// (NULL) where the observation cannot say: every flag of an observation
// whose repo did not resolve, the commit flags before the commits were
// fetched, owner_older_than_1y before the owner was looked up. Ages are
// taken at the observation's observed_at.
type ProvenanceFlags struct {
	NoLicense        *bool
	SingleAuthor90d  *bool
	NoCommits90d     *bool
	RepoUnder30d     *bool
	StaleOver1y      *bool
	CommitCapHit     *bool
	Archived         *bool
	Fork             *bool
	OwnerOlderThan1y *bool
	StarsGE100       *bool
}

// ProvenanceQuery filters ProvenanceObservations.
type ProvenanceQuery struct {
	Repo  string    // "" for every repo
	Since time.Time // zero for all; inclusive
	Limit int       // 1..MaxEventLimit
}

// ProvenanceStore keeps GitHub observations (the provenance table and its
// analyst view provenance_v). Every engine implements it beside Store; the
// conformance suite is storetest.RunProvenance.
//
// Rows are keyed by ID. The winner of an ID is the row with the greatest
// Stamp (a commit fetch or an owner lookup re-publishes the repo
// observation it extends under the same ID, so the fuller row wins whatever
// order they arrive in); on a tie the later write wins.
type ProvenanceStore interface {
	// InsertProvenance stores observations (any batch size, idempotent).
	InsertProvenance(ctx context.Context, rows []Provenance) error
	// ProvenanceObservations returns observations oldest first (ties: ID),
	// filtered by q.
	ProvenanceObservations(ctx context.Context, q ProvenanceQuery) ([]Provenance, error)
}

// Stamp orders the versions of one observation ID: the latest of the repo
// observation, its commit fetch and its owner lookup.
func (p Provenance) Stamp() time.Time {
	t := Millis(p.ObservedAt)
	for _, x := range []time.Time{p.CommitsObservedAt, p.OwnerObservedAt} {
		if x := Millis(x); x.After(t) {
			t = x
		}
	}
	return t
}

// ReduceProvenance keeps one row per ID (the greatest Stamp; on a tie the
// later one), in first-seen order.
func ReduceProvenance(rows []Provenance) []Provenance {
	at := make(map[string]int, len(rows))
	out := make([]Provenance, 0, len(rows))
	for _, r := range rows {
		if i, ok := at[r.ID]; ok {
			if !r.Stamp().Before(out[i].Stamp()) {
				out[i] = r
			}
			continue
		}
		at[r.ID] = len(out)
		out = append(out, r)
	}
	return out
}
