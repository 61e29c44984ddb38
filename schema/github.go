package schema

import (
	"net/http"
	"strings"
	"time"
)

// The GitHub wire type: GitHubObservation is the value on provenance.obs
// (ingest/github produces it, keyed by the normalized repo; the provenance
// processor and the provenance sink read it).

// Repo statuses of an observation.
const (
	StatusResolved   = "resolved"   // GET /repos answered 200
	StatusUnresolved = "unresolved" // 404 (or 403/451 without a rate limit)
)

// GitHubObservation is one look at one repository: the value on
// provenance.obs (ingest/github produces it, keyed by Repo).
type GitHubObservation struct {
	ID         string    `json:"id"`   // "github:<repo>@<observed_at RFC3339>"
	Repo       string    `json:"repo"` // normalized key: github.com/owner/name (lower-case), as listed
	ObservedAt time.Time `json:"observed_at"`
	Status     string    `json:"status"`
	HTTPStatus int       `json:"http_status"`
	// NotModified: the repo answered 304 to our ETag; the fields are the
	// stored ones, re-confirmed at ObservedAt.
	NotModified bool   `json:"not_modified,omitempty"`
	FullName    string `json:"full_name,omitempty"`  // owner/name as GitHub names it now
	RenamedTo   string `json:"renamed_to,omitempty"` // set when a 301 was followed

	OwnerLogin string `json:"owner_login,omitempty"`
	OwnerType  string `json:"owner_type,omitempty"`
	// OwnerCreatedAt is the owner account's created_at (GET /users/{login}),
	// zero until the owner was looked up.
	OwnerCreatedAt time.Time `json:"owner_created_at,omitzero"`
	// OwnerObservedAt is when the owner account was last looked up. An
	// owner lookup re-publishes the repo's observation (same ID, like the
	// commit pass) with this later time, so the processor takes it.
	OwnerObservedAt time.Time `json:"owner_observed_at,omitzero"`
	CreatedAt       time.Time `json:"created_at,omitzero"`
	PushedAt        time.Time `json:"pushed_at,omitzero"`
	Stars           int       `json:"stars"`
	Fork            bool      `json:"fork"`
	Archived        bool      `json:"archived"`
	Disabled        bool      `json:"disabled"`
	Private         bool      `json:"private"`
	LicenseSPDX     string    `json:"license_spdx,omitempty"` // "" = no license (null)

	// Commits is nil until the commit pages were fetched.
	Commits *GitHubCommits `json:"commits,omitempty"`
}

// GitHubCommits summarizes the last 90 days of commits.
type GitHubCommits struct {
	ObservedAt time.Time `json:"observed_at"`
	Since      time.Time `json:"since"`
	Empty      bool      `json:"empty"` // 409: the repository has no commits at all
	Count      int       `json:"count"` // commits seen (capped)
	Authors    int       `json:"authors"`
	Verified   int       `json:"verified"`
	Pages      int       `json:"pages"`
	CapHit     bool      `json:"cap_hit"`
	Last       time.Time `json:"last,omitzero"`
}

// GitHubRepoKey returns the normalized key of a GitHub repository URL
// ("github.com/owner/name") and its owner and name; ok is false for
// anything that is not a github.com owner/name URL.
func GitHubRepoKey(raw string) (key, owner, name string, ok bool) {
	n := NormalizeRepoURL(raw)
	parts := strings.Split(n, "/")
	if len(parts) != 3 || parts[0] != "github.com" || parts[1] == "" || parts[2] == "" {
		return "", "", "", false
	}
	return n, parts[1], parts[2], true
}

// GitHubObservationID is the evidence id of an observation.
func GitHubObservationID(repo string, at time.Time) string {
	return "github:" + repo + "@" + at.UTC().Format(time.RFC3339)
}

// Reason codes of observations that fail DecodeGitHubObservation (they go
// to the dlq topic with the code). Stable: dashboards and tests branch on them.
const (
	ReasonMissingRepo      = "missing_repo"        // no repo key
	ReasonInvalidRepo      = "invalid_repo"        // not a normalized github.com/owner/name key
	ReasonInvalidStatus    = "invalid_status"      // status not resolved|unresolved, or an impossible HTTP status
	ReasonMissingObserved  = "missing_observed_at" // zero observed_at
	ReasonImplausibleValue = "implausible_value"   // a time or count no GitHub answer can carry
)

// Plausibility bounds: GitHub opened in 2008 (its first accounts date from
// Oct 2007), and a count no page cap could produce is a corrupt message.
var (
	minPlausible = time.Date(2007, 10, 1, 0, 0, 0, 0, time.UTC)
	maxPlausible = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
)

const (
	maxStars   = 100_000_000
	maxCommits = 10_000_000
	// clockSkew is how far a repo or account time may lie after the
	// observation that reported it (clocks differ; days do not).
	clockSkew = 24 * time.Hour
)

// DecodeGitHubObservation decodes and validates one provenance.obs
// message. The error is an *InvalidError (a reason code for the DLQ) for
// anything the provenance processor must not apply.
func DecodeGitHubObservation(b []byte) (GitHubObservation, error) {
	return Decode[GitHubObservation](b)
}

// Validate checks what the processor relies on. It depends on nothing but
// the message (no wall clock), so a replay refuses exactly what the live
// run refused.
func (o *GitHubObservation) Validate() error {
	bad := func(reason, format string, a ...any) error {
		return Invalid(reason, format, a...)
	}
	if o.Repo == "" {
		return bad(ReasonMissingRepo, "no repo key")
	}
	if key, _, _, ok := GitHubRepoKey("https://" + o.Repo); !ok || key != o.Repo {
		return bad(ReasonInvalidRepo, "repo %q is not a normalized github.com/owner/name key", Bound(o.Repo, 200))
	}
	if o.Status != StatusResolved && o.Status != StatusUnresolved {
		return bad(ReasonInvalidStatus, "status %q", Bound(o.Status, 50))
	}
	if o.HTTPStatus != 0 && (o.HTTPStatus < 100 || o.HTTPStatus > 599) {
		return bad(ReasonInvalidStatus, "http_status %d", o.HTTPStatus)
	}
	if o.Status == StatusResolved && o.HTTPStatus != 0 && o.HTTPStatus != http.StatusOK && o.HTTPStatus != http.StatusNotModified {
		return bad(ReasonInvalidStatus, "resolved with http_status %d", o.HTTPStatus)
	}
	if o.ObservedAt.IsZero() {
		return bad(ReasonMissingObserved, "zero observed_at")
	}
	if o.ObservedAt.Before(minPlausible) || o.ObservedAt.After(maxPlausible) {
		return bad(ReasonImplausibleValue, "observed_at %s", o.ObservedAt.UTC().Format(time.RFC3339))
	}
	limit := o.ObservedAt.Add(clockSkew)
	for _, t := range []struct {
		name string
		at   time.Time
	}{{"created_at", o.CreatedAt}, {"pushed_at", o.PushedAt}, {"owner_created_at", o.OwnerCreatedAt}} {
		if !t.at.IsZero() && (t.at.Before(minPlausible) || t.at.After(limit)) {
			return bad(ReasonImplausibleValue, "%s %s with observed_at %s", t.name, t.at.UTC().Format(time.RFC3339), o.ObservedAt.UTC().Format(time.RFC3339))
		}
	}
	if !o.OwnerObservedAt.IsZero() && (o.OwnerObservedAt.Before(minPlausible) || o.OwnerObservedAt.After(maxPlausible)) {
		return bad(ReasonImplausibleValue, "owner_observed_at %s", o.OwnerObservedAt.UTC().Format(time.RFC3339))
	}
	if o.Stars < 0 || o.Stars > maxStars {
		return bad(ReasonImplausibleValue, "stars %d", o.Stars)
	}
	if c := o.Commits; c != nil {
		switch {
		case c.Count < 0 || c.Count > maxCommits || c.Authors < 0 || c.Verified < 0 || c.Pages < 0:
			return bad(ReasonImplausibleValue, "negative or huge commit counts %+v", *c)
		case c.Authors > c.Count || c.Verified > c.Count:
			return bad(ReasonImplausibleValue, "more authors (%d) or verified commits (%d) than commits (%d)", c.Authors, c.Verified, c.Count)
		case !c.ObservedAt.IsZero() && (c.ObservedAt.Before(minPlausible) || c.ObservedAt.After(maxPlausible)):
			return bad(ReasonImplausibleValue, "commits observed_at %s", c.ObservedAt.UTC().Format(time.RFC3339))
		}
	}
	return nil
}
