package history

// The provenance rows of the history sink: provenance.obs (GitHub
// observations, keyed by repo) -> the store's provenance table, one row per
// observation id, with flags derived from the observation alone.

import (
	"github.com/forum-mcp/forum/ingest/github"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/processors/provenance"
	"github.com/forum-mcp/forum/processors/trust"
	"github.com/forum-mcp/forum/sql/store"
)

// ProvenanceRow is the provenance row of an observation. Its flags are
// processors/provenance.FlagsOf at the observation's own observed_at (no
// listing, no registry facts: only what the observation says), NULL where
// FlagsOf's denominators leave the observation out: unresolved repos for
// every flag, unfetched commits for the commit flags, an owner not yet
// looked up for owner_older_than_1y.
func ProvenanceRow(w *method.Weights, o github.Observation) store.Provenance {
	p := store.Provenance{
		ID: o.ID, Repo: o.Repo, ObservedAt: o.ObservedAt.UTC(), Status: o.Status, HTTPStatus: o.HTTPStatus,
		NotModified: o.NotModified, FullName: o.FullName, RenamedTo: o.RenamedTo, OwnerLogin: o.OwnerLogin,
		OwnerType: o.OwnerType, OwnerCreatedAt: o.OwnerCreatedAt.UTC(), OwnerObservedAt: o.OwnerObservedAt.UTC(), CreatedAt: o.CreatedAt.UTC(),
		PushedAt: o.PushedAt.UTC(), Stars: o.Stars, Fork: o.Fork, Archived: o.Archived, Disabled: o.Disabled,
		LicenseSPDX: o.LicenseSPDX,
	}
	fl := provenance.FlagsOf(w, provenance.Listing{RepoURL: "https://" + o.Repo}, &o, trust.Facts{}, o.ObservedAt)
	if c := o.Commits; fl.CommitsKnown && c != nil {
		p.CommitsFetched, p.CommitsObservedAt = true, c.ObservedAt.UTC()
		p.CommitsCount, p.Authors, p.Verified, p.Empty, p.CapHit, p.LastCommitAt = c.Count, c.Authors, c.Verified, c.Empty, c.CapHit, c.Last.UTC()
	}
	if !fl.Resolved {
		return p
	}
	b := func(v bool) *bool { return &v }
	f := &p.Flags
	f.NoLicense, f.RepoUnder30d, f.StaleOver1y = b(fl.NoLicense), b(fl.Under30d), b(fl.StaleOver1y)
	f.Archived, f.Fork, f.StarsGE100 = b(fl.Archived), b(fl.Fork), b(fl.Stars100)
	if fl.CommitsKnown {
		f.SingleAuthor90d, f.NoCommits90d, f.CommitCapHit = b(fl.SingleAuthor), b(fl.NoCommits90d), b(fl.CapHit)
	}
	if fl.OwnerKnown {
		f.OwnerOlderThan1y = b(fl.OwnerOld)
	}
	return p
}
