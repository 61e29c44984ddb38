// Package github is the GitHub provenance crawler (SPEC §1.2, issue 4).
//
// In: the repository URLs of the registry's latest entries (a Targets func),
// and GitHub's REST API (GET /repos/{o}/{r}, GET /repos/{o}/{r}/commits).
// Out: one Observation per fetch, published on the provenance.obs topic keyed
// by the normalized repository (github.com/owner/name); the provenance
// processor (processors/provenance) fans them out to servers.
//
// Files: observation.go (the message), client.go (a rate-limit-aware HTTP
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
//     resolved repos, then refreshes, oldest first.
//   - A 304 re-confirms the stored observation (new observed_at, same
//     content); a 301 is followed (at most 3 hops) and the new path is
//     remembered; 404 (and 403/451 that are not rate limits) is unresolved;
//     a 409 on the commits is an empty repo (no commits in 90 d).
//   - Commit pages: per_page=100, at most CommitPageCap pages (default 1);
//     a further rel="next" link sets commit_cap_hit.
//   - Commit authors are keyed by author.login, or by the commit's author
//     e-mail (then name) when login is null.
package github

import (
	"strings"
	"time"

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
	CreatedAt      time.Time `json:"created_at,omitzero"`
	PushedAt       time.Time `json:"pushed_at,omitzero"`
	Stars          int       `json:"stars"`
	Fork           bool      `json:"fork"`
	Archived       bool      `json:"archived"`
	Disabled       bool      `json:"disabled"`
	Private        bool      `json:"private"`
	LicenseSPDX    string    `json:"license_spdx,omitempty"` // "" = no license (null)

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
