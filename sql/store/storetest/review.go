package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/forum-mcp/forum/sql/store"
)

// RunReview runs the conformance suite of store.ReviewStore. open is as for
// Run; the store it returns must implement store.ReviewStore.
func RunReview(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		f    func(t *testing.T, s store.Store, rs store.ReviewStore)
	}{
		{"RoundTrip", testReviewRoundTrip},
		{"Idempotent", testReviewIdempotent},
		{"NotFound", testReviewNotFound},
	}
	for _, tt := range tests {
		t.Run("Review/"+tt.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			must(t, "Migrate", s.Migrate(ctx(t)))
			rs, ok := s.(store.ReviewStore)
			if !ok {
				t.Fatalf("%T does not implement store.ReviewStore", s)
			}
			tt.f(t, s, rs)
		})
	}
}

func approval(server, pub, who string, d time.Duration) store.ReviewApproval {
	return store.ReviewApproval{Server: server, PublicationID: pub, Who: who, Reason: "checked by hand: " + server, ApprovedAt: at(d)}
}

func normReview(a store.ReviewApproval) store.ReviewApproval {
	a.ApprovedAt = store.Millis(a.ApprovedAt)
	return a
}

func getReview(t *testing.T, rs store.ReviewStore, server, pub string) store.ReviewApproval {
	t.Helper()
	got, err := rs.ReviewApproval(ctx(t), server, pub)
	must(t, "ReviewApproval("+server+", "+pub+")", err)
	return got
}

func testReviewRoundTrip(t *testing.T, s store.Store, rs store.ReviewStore) {
	a := approval("io.github.big/popular", "pub-2", "alice", 1500*time.Millisecond+123*time.Microsecond)
	b := approval("io.github.big/popular", "pub-3", "bob", time.Hour)
	c := approval("io.github.other/one", "pub-2", "carol", 2*time.Hour)
	for _, x := range []store.ReviewApproval{a, b, c} {
		must(t, "InsertReviewApproval", rs.InsertReviewApproval(ctx(t), x))
	}
	equal(t, "approval of (popular, pub-2)", getReview(t, rs, a.Server, a.PublicationID), normReview(a))
	equal(t, "approval of (popular, pub-3)", getReview(t, rs, b.Server, b.PublicationID), normReview(b))
	equal(t, "approval of (other, pub-2)", getReview(t, rs, c.Server, c.PublicationID), normReview(c))
}

func testReviewIdempotent(t *testing.T, s store.Store, rs store.ReviewStore) {
	a := approval("io.github.big/popular", "pub-2", "alice", time.Minute)
	must(t, "insert", rs.InsertReviewApproval(ctx(t), a))
	must(t, "identical rewrite", rs.InsertReviewApproval(ctx(t), a))
	optimize(t, s)
	equal(t, "after an identical rewrite", getReview(t, rs, a.Server, a.PublicationID), normReview(a))
	a2 := a
	a2.Who, a2.Reason, a2.ApprovedAt = "bob", "second look", at(2*time.Minute)
	must(t, "rewrite", rs.InsertReviewApproval(ctx(t), a2))
	must(t, "identical rewrite", rs.InsertReviewApproval(ctx(t), a2))
	equal(t, "last write of the key", getReview(t, rs, a.Server, a.PublicationID), normReview(a2))
	optimize(t, s)
	equal(t, "last write of the key (after a merge)", getReview(t, rs, a.Server, a.PublicationID), normReview(a2))
}

func testReviewNotFound(t *testing.T, s store.Store, rs store.ReviewStore) {
	if _, err := rs.ReviewApproval(ctx(t), "io.github.big/popular", "pub-1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("empty store: err %v, want ErrNotFound", err)
	}
	must(t, "insert", rs.InsertReviewApproval(ctx(t), approval("io.github.big/popular", "pub-2", "alice", 0)))
	for _, k := range [][2]string{{"io.github.big/popular", "pub-1"}, {"io.github.other/one", "pub-2"}, {"", ""}} {
		if _, err := rs.ReviewApproval(ctx(t), k[0], k[1]); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("ReviewApproval(%q, %q): err %v, want ErrNotFound", k[0], k[1], err)
		}
	}
}
