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
	"time"

	"github.com/forum-mcp/forum/schema"
)

// Topic carries GitHub observations, keyed by repo.
const Topic = schema.TopicProvenanceObs

// The wire type lives in schema (it crosses provenance.obs); these names
// keep the crawler's code short.
type (
	Observation = schema.GitHubObservation
	CommitStats = schema.GitHubCommits
)

// Repo statuses of an observation.
const (
	StatusResolved   = schema.StatusResolved
	StatusUnresolved = schema.StatusUnresolved
)

// RepoKey returns the normalized key of a GitHub repository URL
// ("github.com/owner/name") and its owner and name; ok is false for
// anything that is not a github.com owner/name URL.
func RepoKey(raw string) (key, owner, name string, ok bool) { return schema.GitHubRepoKey(raw) }

// ObservationID is the evidence id of an observation.
func ObservationID(repo string, at time.Time) string { return schema.GitHubObservationID(repo, at) }

// DecodeObservation decodes and validates one provenance.obs message
// (schema.DecodeGitHubObservation).
func DecodeObservation(b []byte) (Observation, error) { return schema.DecodeGitHubObservation(b) }
