// Package github is the GitHub provenance crawler (SPEC §1.2, issue 4).
//
// In: the repository URLs of the registry's latest entries (a Targets func),
// and GitHub's REST API (GET /repos/{o}/{r}, GET /repos/{o}/{r}/commits,
// GET /users/{login} for the owner account's age).
// Out: one Observation per fetch, published on the provenance.obs topic keyed
// by the normalized repository (github.com/owner/name); the provenance
// processor (processors/provenance) fans them out to servers.
//
// Files: observation.go (the message, its decoder and validator), client.go (a rate-limit-aware HTTP
// client: primary and secondary limits, ETags, bounded bodies, injectable
// clock), crawler.go (what to fetch next, budget pacing, renames, 404/409,
// the commit-page cap, checkpoint), githubfake/ (a fake GitHub API with a
// population generated at the seed's base rates, for tests).
//
// Readings where the SPEC is silent (pinned by tests):
//   - Budget: the client spaces requests evenly over what is left of the
//     rate-limit window ((reset − now) / remaining), so a backlog drains at
//     the full hourly rate without bursts; when nothing is due the crawler
//     idles until the next repo's refresh (Refresh after its last
//     observation, 24 h by default), which spreads the daily refresh evenly
//     over the day.
//   - Order: repos never observed first (metadata only: one request each, so
//     28k repos reach coverage in ~5.6 h at 5,000/h), then the commit pages of
//     resolved repos, then the owner accounts (one request per distinct
//     owner, fewer than repos, so they never delay coverage or commits),
//     then refreshes, oldest first.
//   - A 304 re-confirms the stored observation (new observed_at, same
//     content); a 301 is followed (at most 3 hops) and the new path is
//     remembered; 404 (and 403/451 that are not rate limits) is unresolved;
//     a 409 on the commits is an empty repo (no commits in 90 d).
//   - Commit pages: per_page=100, at most CommitPageCap pages (default 1);
//     a further rel="next" link sets commit_cap_hit.
//   - Owners: after the commit pass, each distinct owner login of a resolved
//     repo is looked up once (GET /users/{login}) and cached in the
//     checkpoint; OwnerRefresh (30 d) later it is asked again with
//     If-None-Match, so an unchanged account costs nothing. The owner's
//     created_at then rides on every observation of its repos.
//   - Commit authors are keyed by author.login, or by the commit's author
//     e-mail (then name) when login is null.
package github

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/forum-mcp/forum/schema"

	"github.com/forum-mcp/forum/processors/toolfinder"
)

// Topic carries GitHub observations, keyed by repo.
const Topic = "provenance.obs"

// Repo statuses of an observation.
const (
	StatusResolved   = "resolved"   // GET /repos answered 200
	StatusUnresolved = "unresolved" // 404 (or 403/451 without a rate limit)
)

// Observation is one look at one repository.
type Observation struct {
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
	Commits *CommitStats `json:"commits,omitempty"`
}

// CommitStats summarizes the last 90 days of commits.
type CommitStats struct {
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

// RepoKey returns the normalized key of a GitHub repository URL
// ("github.com/owner/name") and its owner and name; ok is false for
// anything that is not a github.com owner/name URL.
func RepoKey(raw string) (key, owner, name string, ok bool) {
	n := toolfinder.NormalizeRepoURL(raw)
	parts := strings.Split(n, "/")
	if len(parts) != 3 || parts[0] != "github.com" || parts[1] == "" || parts[2] == "" {
		return "", "", "", false
	}
	return n, parts[1], parts[2], true
}

// ObservationID is the evidence id of an observation.
func ObservationID(repo string, at time.Time) string {
	return "github:" + repo + "@" + at.UTC().Format(time.RFC3339)
}

// Reason codes of observations that fail DecodeObservation (they go to the
// dlq topic with the code). Stable: dashboards and tests branch on them.
const (
	ReasonMalformed        = schema.ReasonMalformedJSON // not JSON, or not an observation's shape
	ReasonMissingRepo      = "missing_repo"             // no repo key
	ReasonInvalidRepo      = "invalid_repo"             // not a normalized github.com/owner/name key
	ReasonInvalidStatus    = "invalid_status"           // status not resolved|unresolved, or an impossible HTTP status
	ReasonMissingObserved  = "missing_observed_at"      // zero observed_at
	ReasonImplausibleValue = "implausible_value"        // a time or count no GitHub answer can carry
)

// ErrInvalidObservation is wrapped by every DecodeObservation error.
var ErrInvalidObservation = errors.New("github: invalid observation")

// InvalidError says why an observation was refused; Reason is one of the
// Reason* codes.
type InvalidError struct {
	Reason string
	Detail string
}

func (e *InvalidError) Error() string {
	return "github: invalid observation: " + e.Reason + ": " + e.Detail
}

// Unwrap makes errors.Is(err, ErrInvalidObservation) hold.
func (e *InvalidError) Unwrap() error { return ErrInvalidObservation }

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

// DecodeObservation decodes and validates one provenance.obs message. The
// error is an *InvalidError (a reason code for the DLQ) for anything the
// provenance processor must not apply.
func DecodeObservation(b []byte) (Observation, error) {
	var o Observation
	if err := json.Unmarshal(b, &o); err != nil {
		return Observation{}, &InvalidError{Reason: ReasonMalformed, Detail: err.Error()}
	}
	if err := o.Validate(); err != nil {
		return Observation{}, err
	}
	return o, nil
}

// Validate checks what the processor relies on. It depends on nothing but
// the message (no wall clock), so a replay refuses exactly what the live
// run refused.
func (o *Observation) Validate() error {
	bad := func(reason, format string, a ...any) error {
		return &InvalidError{Reason: reason, Detail: fmt.Sprintf(format, a...)}
	}
	if o.Repo == "" {
		return bad(ReasonMissingRepo, "no repo key")
	}
	if key, _, _, ok := RepoKey("https://" + o.Repo); !ok || key != o.Repo {
		return bad(ReasonInvalidRepo, "repo %q is not a normalized github.com/owner/name key", schema.Bound(o.Repo, 200))
	}
	if o.Status != StatusResolved && o.Status != StatusUnresolved {
		return bad(ReasonInvalidStatus, "status %q", schema.Bound(o.Status, 50))
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
