package scorer

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/forum-mcp/forum/processors/trust"
	"github.com/forum-mcp/forum/sql/duckdb"
	"github.com/forum-mcp/forum/sql/store"
)

// TestApprovedHoldIsOver pins SPEC §4 "Popular-server review … unless
// approved through the admin API": once the held record of a publication is
// approved, the next publication's previous band is the held record's own
// band (the hold is over), so the same drop is not held again.
func TestApprovedHoldIsOver(t *testing.T) {
	ctx := context.Background()
	s, err := duckdb.Open(ctx, filepath.Join(t.TempDir(), "forum.duckdb"), zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	const name = "io.github.big/popular"
	t1 := tNow.Add(-time.Hour)
	// The last publication, p1, holds the server's drop from A to D.
	last := scorerCheckpoint{LastID: "p1", LastAt: t1, Served: map[string]Served{
		name: {Band: "D", Hold: &ReviewPending{PreviousBand: "A", PreviousPublicationID: "p0", Stars: 5000, Until: t1.Add(24 * time.Hour)}}}}
	heldPrev, approvedPrev := Previous{Band: "A", PublicationID: "p0"}, Previous{Band: "D", PublicationID: "p1"}
	prevAt := func(st *Stage, at time.Time) Previous {
		t.Helper()
		st.ck, st.loaded = last, true
		prev, err := st.previous(ctx, "p2", at)
		if err != nil {
			t.Fatal(err)
		}
		return prev[name]
	}

	without, with := &Stage{}, &Stage{Reviews: s}
	if got := prevAt(without, tNow); got != heldPrev {
		t.Errorf("no review store: previous %+v, want the held band %+v", got, heldPrev)
	}
	if got := prevAt(with, tNow); got != heldPrev {
		t.Errorf("not approved: previous %+v, want the held band %+v", got, heldPrev)
	}
	approvedAt := tNow.Add(30 * time.Minute)
	if err := s.InsertReviewApproval(ctx, store.ReviewApproval{Server: name, PublicationID: "p1", Who: "alice", Reason: "checked", ApprovedAt: approvedAt}); err != nil {
		t.Fatal(err)
	}
	if got := prevAt(with, tNow); got != heldPrev {
		t.Errorf("approved after the publication's event time: previous %+v, want the held band %+v", got, heldPrev)
	}
	if got := prevAt(without, tNow.Add(time.Hour)); got != heldPrev {
		t.Errorf("nil Reviews keeps the old behaviour: previous %+v, want %+v", got, heldPrev)
	}
	after := tNow.Add(time.Hour)
	got := prevAt(with, after)
	if got != approvedPrev {
		t.Fatalf("approved: previous %+v, want the held record's own band %+v", got, approvedPrev)
	}

	// The next record of the server, still band D with 5000 stars: held
	// again while the hold was not approved, not held once it was.
	e := entry(name, nil, "https://github.com/big/popular")
	obs := GitHubObservation{Status: trust.RepoResolved, RepoCreatedAt: e.Meta.PublishedAt.Add(60 * 24 * time.Hour), OwnerLogin: "big", LicenseSPDX: "MIT",
		Stars: 5000, Evidence: &trust.Evidence{Kind: trust.EvGitHubRepo, ID: "gh-1", ObservedAt: tNow}}
	src := Sources{Provenance: fixedProvenance{obs: obs, open: true}}
	if r := one(t, ServerInput{Entry: e}, src, map[string]Previous{name: heldPrev}); r.Band != trust.BandD || r.ReviewPending == nil {
		t.Fatalf("against the held band: band %s review %+v, want D held", r.Band, r.ReviewPending)
	}
	if r := one(t, ServerInput{Entry: e}, src, map[string]Previous{name: got}); r.ReviewPending != nil {
		t.Errorf("against the approved band: review_pending %+v, want none", r.ReviewPending)
	}
}

// A failing approval lookup fails the publication (it is retried), and
// only records under a running hold are looked up.
func TestPreviousBandsWithLookupError(t *testing.T) {
	ck := scorerCheckpoint{LastID: "p1", LastAt: tNow.Add(-time.Minute), Served: map[string]Served{
		"a/b": {Band: "D", Hold: &ReviewPending{PreviousBand: "A", PreviousPublicationID: "p0", Until: tNow.Add(time.Hour)}},
		"c/d": {Band: "B"},
	}}
	boom := errors.New("store down")
	st := &Stage{Reviews: lookupFunc(func(string) (bool, error) { return false, boom }), ck: ck, loaded: true}
	if _, err := st.previous(context.Background(), "p2", tNow); !errors.Is(err, boom) {
		t.Errorf("a failing lookup must fail the publication: err %v", err)
	}
	asked := 0
	st = &Stage{Reviews: lookupFunc(func(s string) (bool, error) { asked++; return s == "a/b", nil }), ck: ck, loaded: true}
	got, err := st.previous(context.Background(), "p2", tNow)
	if err != nil || asked != 1 || got["a/b"] != (Previous{Band: "D", PublicationID: "p1"}) || got["c/d"] != (Previous{Band: "B", PublicationID: "p1"}) {
		t.Errorf("approved hold: %+v (err %v, asked %d times; only held records are looked up)", got, err, asked)
	}
}

// lookupFunc answers approvals: approved(server) true means approved at
// the start of time.
type lookupFunc func(server string) (bool, error)

func (f lookupFunc) ReviewApproval(_ context.Context, server, pub string) (store.ReviewApproval, error) {
	ok, err := f(server)
	if err != nil {
		return store.ReviewApproval{}, err
	}
	if !ok {
		return store.ReviewApproval{}, store.ErrNotFound
	}
	return store.ReviewApproval{Server: server, PublicationID: pub, ApprovedAt: time.Unix(0, 0)}, nil
}
