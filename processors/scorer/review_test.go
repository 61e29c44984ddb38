package scorer

import (
	"context"
	"encoding/json"
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
	t0, t1 := tNow.Add(-2*time.Hour), tNow.Add(-time.Hour)
	old, _ := json.Marshal(Record{Server: name, Band: "A", PublicationID: "p0"})
	held, _ := json.Marshal(Record{Server: name, Band: "D", PublicationID: "p1",
		ReviewPending: &ReviewPending{PreviousBand: "A", PreviousPublicationID: "p0", Stars: 5000, Until: t1.Add(24 * time.Hour)}})
	for _, p := range []struct {
		id, band string
		rec      []byte
		at       time.Time
	}{{"p0", "A", old, t0}, {"p1", "D", held, t1}} {
		if err := s.InsertTrustRecords(ctx, []store.TrustRecord{{Server: name, PublicationID: p.id, ComputedAt: p.at, Band: p.band, Record: string(p.rec)}}); err != nil {
			t.Fatal(err)
		}
		if err := s.InsertPublication(ctx, store.Publication{ID: p.id, RecordCount: 1, ComputedAt: p.at}); err != nil {
			t.Fatal(err)
		}
	}
	heldPrev, approvedPrev := Previous{Band: "A", PublicationID: "p0"}, Previous{Band: "D", PublicationID: "p1"}
	prevAt := func(st *Stage, at time.Time) Previous {
		t.Helper()
		prev, err := st.previous(ctx, at)
		if err != nil {
			t.Fatal(err)
		}
		return prev[name]
	}

	without, with := &Stage{Store: s}, &Stage{Store: s, Reviews: s}
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

func TestPreviousBandsWithLookupError(t *testing.T) {
	held, _ := json.Marshal(Record{Server: "a/b", Band: "D", ReviewPending: &ReviewPending{PreviousBand: "A", PreviousPublicationID: "p0", Until: tNow.Add(time.Hour)}})
	plain, _ := json.Marshal(Record{Server: "c/d", Band: "B"})
	recs := []store.TrustRecord{{Server: "a/b", Band: "D", Record: string(held)}, {Server: "c/d", Band: "B", Record: string(plain)}}
	asked := 0
	boom := errors.New("store down")
	if _, err := PreviousBandsWith(recs, "p1", tNow, func(string) (bool, error) { asked++; return false, boom }); !errors.Is(err, boom) {
		t.Errorf("a failing lookup must fail the publication: err %v", err)
	}
	asked = 0
	got, err := PreviousBandsWith(recs, "p1", tNow, func(s string) (bool, error) { asked++; return s == "a/b", nil })
	if err != nil || asked != 1 || got["a/b"] != (Previous{Band: "D", PublicationID: "p1"}) || got["c/d"] != (Previous{Band: "B", PublicationID: "p1"}) {
		t.Errorf("approved hold: %+v (err %v, asked %d times; only held records are looked up)", got, err, asked)
	}
}
