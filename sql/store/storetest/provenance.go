package storetest

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/forum-mcp/forum/sql/store"
)

// RunProvenance is the conformance suite of store.ProvenanceStore and of the
// analyst views provenance_v and trust_records_v (when the store implements
// store.Querier). open is as for Run; the store must implement
// store.ProvenanceStore (and store.TrustStore for the trust view).
func RunProvenance(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		f    func(t *testing.T, s store.Store, ps store.ProvenanceStore)
	}{
		{"RoundTrip", testProvenanceRoundTrip},
		{"CommitsWin", testProvenanceCommitsWin},
		{"Query", testProvenanceQuery},
		{"View", testProvenanceView},
		{"TrustRecordsView", testTrustRecordsView},
	}
	for _, tt := range tests {
		t.Run("Provenance/"+tt.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			ps, ok := s.(store.ProvenanceStore)
			if !ok {
				t.Fatalf("%T does not implement store.ProvenanceStore", s)
			}
			must(t, "Migrate", s.Migrate(ctx(t)))
			tt.f(t, s, ps)
			if o, ok := s.(Optimizer); ok {
				// Reads must not depend on merges: run the checks again after one.
				must(t, "Optimize", o.Optimize(ctx(t)))
				tt.f(t, s, ps)
			}
		})
	}
}

func bptr(b bool) *bool { return &b }

// pobs is a resolved observation with every column set (flags mixed, times
// with sub-ms digits in a non-UTC zone).
func pobs(repo string, observed time.Time) store.Provenance {
	return store.Provenance{
		ID: "github:" + repo + "@" + observed.UTC().Format(time.RFC3339), Repo: repo, ObservedAt: observed,
		Status: "resolved", HTTPStatus: 200, FullName: strings.TrimPrefix(repo, "github.com/"), OwnerLogin: "owner", OwnerType: "User",
		OwnerCreatedAt: observed.Add(-400 * 24 * time.Hour), CreatedAt: observed.Add(-10 * 24 * time.Hour),
		PushedAt: observed.Add(-time.Hour), Stars: 150, Fork: true, LicenseSPDX: "MIT",
		Flags: store.ProvenanceFlags{NoLicense: bptr(false), RepoUnder30d: bptr(true), StaleOver1y: bptr(false),
			Archived: bptr(false), Fork: bptr(true), OwnerOlderThan1y: bptr(true), StarsGE100: bptr(true)},
	}
}

// withCommits is o after its commit fetch at the given time.
func withCommits(o store.Provenance, fetched time.Time) store.Provenance {
	o.CommitsFetched, o.CommitsObservedAt = true, fetched
	o.CommitsCount, o.Authors, o.Verified, o.CapHit, o.LastCommitAt = 300, 1, 2, true, o.ObservedAt.Add(-2*time.Hour)
	o.Flags.SingleAuthor90d, o.Flags.NoCommits90d, o.Flags.CommitCapHit = bptr(true), bptr(false), bptr(true)
	return o
}

// unresolved is a 404 observation: no GitHub fields, every flag NULL.
func unresolved(repo string, observed time.Time) store.Provenance {
	return store.Provenance{ID: "github:" + repo + "@" + observed.UTC().Format(time.RFC3339), Repo: repo,
		ObservedAt: observed, Status: "unresolved", HTTPStatus: 404}
}

func normProv(ps ...store.Provenance) []store.Provenance {
	out := make([]store.Provenance, len(ps))
	for i, p := range ps {
		for _, t := range []*time.Time{&p.ObservedAt, &p.OwnerCreatedAt, &p.OwnerObservedAt, &p.CreatedAt, &p.PushedAt, &p.CommitsObservedAt, &p.LastCommitAt} {
			if !t.IsZero() {
				*t = store.Millis(*t)
			}
		}
		out[i] = p
	}
	return out
}

func allProv(t *testing.T, ps store.ProvenanceStore, q store.ProvenanceQuery) []store.Provenance {
	t.Helper()
	got, err := ps.ProvenanceObservations(ctx(t), q)
	must(t, "ProvenanceObservations", err)
	return got
}

func testProvenanceRoundTrip(t *testing.T, _ store.Store, ps store.ProvenanceStore) {
	a := withCommits(pobs("github.com/o/a", at(0)), at(time.Minute))
	a.NotModified, a.RenamedTo, a.Archived, a.Disabled, a.Empty = true, "github.com/o/a2", true, true, true
	a.OwnerObservedAt = at(30 * time.Second)
	b := pobs("github.com/o/b", at(time.Second))
	b.OwnerCreatedAt, b.LicenseSPDX, b.Flags.OwnerOlderThan1y, b.Flags.NoLicense = time.Time{}, "", nil, bptr(true)
	c := unresolved("github.com/o/c", at(-time.Hour))
	// Twice: at-least-once delivery.
	must(t, "InsertProvenance", ps.InsertProvenance(ctx(t), []store.Provenance{a, b, c}))
	must(t, "InsertProvenance again", ps.InsertProvenance(ctx(t), []store.Provenance{c, b, a}))
	equal(t, "ProvenanceObservations", allProv(t, ps, store.ProvenanceQuery{}), normProv(c, a, b))
}

// testProvenanceCommitsWin: a commit fetch (and an owner lookup)
// re-publishes its observation under the same id; the version with the
// later stamp wins in any order, in one batch or several, and on a tie the
// later write wins.
func testProvenanceCommitsWin(t *testing.T, _ store.Store, ps store.ProvenanceStore) {
	o := pobs("github.com/o/x", at(0))
	full := withCommits(o, at(time.Minute))
	must(t, "insert with commits", ps.InsertProvenance(ctx(t), []store.Provenance{full}))
	must(t, "insert the older version after", ps.InsertProvenance(ctx(t), []store.Provenance{o}))
	must(t, "both in one batch, newer first", ps.InsertProvenance(ctx(t), []store.Provenance{full, o}))
	equal(t, "after out-of-order writes", allProv(t, ps, store.ProvenanceQuery{Repo: o.Repo}), normProv(full))
	// The owner lookup re-publishes it later still: it wins over both.
	z := pobs("github.com/o/z", at(2*time.Hour))
	zc := withCommits(z, at(2*time.Hour+time.Minute))
	owned := zc
	owned.OwnerCreatedAt, owned.OwnerObservedAt, owned.Flags.OwnerOlderThan1y = at(-10*24*time.Hour), at(3*time.Hour), bptr(false)
	must(t, "insert owner version", ps.InsertProvenance(ctx(t), []store.Provenance{owned}))
	must(t, "insert older versions after", ps.InsertProvenance(ctx(t), []store.Provenance{z, zc}))
	equal(t, "after the owner lookup", allProv(t, ps, store.ProvenanceQuery{Repo: z.Repo}), normProv(owned))

	y := pobs("github.com/o/y", at(time.Hour))
	y2 := y
	y2.Stars, y2.Flags.StarsGE100 = 3, bptr(false)
	must(t, "insert tie 1", ps.InsertProvenance(ctx(t), []store.Provenance{y}))
	must(t, "insert tie 2", ps.InsertProvenance(ctx(t), []store.Provenance{y2}))
	equal(t, "tie: the later write", allProv(t, ps, store.ProvenanceQuery{Repo: y.Repo}), normProv(y2))
}

func testProvenanceQuery(t *testing.T, _ store.Store, ps store.ProvenanceStore) {
	var rows []store.Provenance
	for i := 0; i < 5; i++ {
		rows = append(rows, pobs("github.com/o/q", at(time.Duration(i)*time.Hour)), unresolved("github.com/o/r", at(time.Duration(i)*time.Hour)))
	}
	must(t, "InsertProvenance", ps.InsertProvenance(ctx(t), rows))
	got := allProv(t, ps, store.ProvenanceQuery{Repo: "github.com/o/q", Since: at(2 * time.Hour), Limit: 2})
	equal(t, "repo+since+limit", got, normProv(rows[4], rows[6]))
	got = allProv(t, ps, store.ProvenanceQuery{Since: at(4 * time.Hour)})
	equal(t, "since, ties by id", got, normProv(rows[8], rows[9]))
	equal(t, "unknown repo", len(allProv(t, ps, store.ProvenanceQuery{Repo: "github.com/none/x"})), 0)
}

// queryRows runs q and formats each row with fmt.Sprint (NULL as "<nil>").
func queryRows(t *testing.T, s store.Store, q string) []string {
	t.Helper()
	qr, ok := s.(store.Querier)
	if !ok {
		t.Skip("store does not implement store.Querier")
	}
	_, rows, err := qr.Query(ctx(t), q)
	must(t, "Query", err)
	out := make([]string, len(rows))
	for i, r := range rows {
		parts := make([]string, len(r))
		for j, v := range r {
			parts[j] = show1(v)
		}
		out[i] = strings.Join(parts, " ")
	}
	return out
}

// show1 formats a value of either driver the same way: pointers followed,
// NULL as "NULL", booleans as 0/1, times as their UTC day, the rest with
// fmt.Sprint.
func show1(v any) string {
	rv := reflect.ValueOf(v)
	for rv.IsValid() && rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return "NULL"
		}
		rv = rv.Elem()
	}
	if !rv.IsValid() {
		return "NULL"
	}
	switch x := rv.Interface().(type) {
	case bool:
		if x {
			return "1"
		}
		return "0"
	case time.Time:
		return x.UTC().Format("2006-01-02")
	}
	return fmt.Sprint(rv.Interface())
}

// testProvenanceView: provenance_v has one row per id, the *_ms columns and
// observed_day on both engines, and NULL flags where the observation cannot
// say.
func testProvenanceView(t *testing.T, s store.Store, ps store.ProvenanceStore) {
	o := pobs("github.com/o/v", at(0))
	full := withCommits(o, at(time.Minute))
	u := unresolved("github.com/o/u", at(time.Hour))
	must(t, "InsertProvenance", ps.InsertProvenance(ctx(t), []store.Provenance{o, u}))
	must(t, "InsertProvenance", ps.InsertProvenance(ctx(t), []store.Provenance{full, u}))
	got := queryRows(t, s, `SELECT repo, observed_at_ms, observed_day, owner_created_at_ms, commits_observed_at_ms,
		flag_single_author_90d, flag_no_license, flag_owner_older_than_1y, flag_stars_ge_100
		FROM provenance_v ORDER BY observed_at_ms, id`)
	equal(t, "provenance_v", got, []string{
		fmt.Sprintf("github.com/o/v %d 2025-03-01 %d %d 1 0 1 1", store.Millis(o.ObservedAt).UnixMilli(),
			store.Millis(o.OwnerCreatedAt).UnixMilli(), store.Millis(full.CommitsObservedAt).UnixMilli()),
		fmt.Sprintf("github.com/o/u %d 2025-03-01 NULL NULL NULL NULL NULL NULL", store.Millis(u.ObservedAt).UnixMilli()),
	})
}

// testTrustRecordsView: trust_records_v has one row per (publication,
// server), the last write, and only records of visible publications.
func testTrustRecordsView(t *testing.T, s store.Store, _ store.ProvenanceStore) {
	ts, ok := s.(store.TrustStore)
	if !ok {
		t.Skip("store does not implement store.TrustStore")
	}
	p1 := []store.TrustRecord{trec("a/x", "p1", at(0), fptr(81), "A"), trec("b/y", "p1", at(0), nil, "C")}
	must(t, "InsertTrustRecords", ts.InsertTrustRecords(ctx(t), p1))
	must(t, "InsertTrustRecords again", ts.InsertTrustRecords(ctx(t), p1))
	rewrite := trec("b/y", "p1", at(0), fptr(55), "C")
	must(t, "InsertTrustRecords rewrite", ts.InsertTrustRecords(ctx(t), []store.TrustRecord{rewrite}))
	must(t, "InsertPublication", ts.InsertPublication(ctx(t), pubRow("p1", at(0), 2)))
	must(t, "InsertPublication again", ts.InsertPublication(ctx(t), pubRow("p1", at(0), 2)))
	// p2's records are written, its publication row is not: invisible.
	must(t, "InsertTrustRecords p2", ts.InsertTrustRecords(ctx(t), []store.TrustRecord{trec("a/x", "p2", at(time.Hour), fptr(20), "D")}))
	got := queryRows(t, s, `SELECT publication_id, server, band, score, computed_day FROM trust_records_v ORDER BY publication_id, server`)
	equal(t, "trust_records_v", got, []string{"p1 a/x A 81 2025-03-01", "p1 b/y C 55 2025-03-01"})
	got = queryRows(t, s, `SELECT id, record_count, computed_day FROM publications_v`)
	equal(t, "publications_v", got, []string{"p1 2 2025-03-01"})
}
