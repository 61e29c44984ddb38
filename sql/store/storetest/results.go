package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/store"
)

// RunResults is the conformance suite of store.ResultStore and of the
// analyst views over its tables: for every method a round trip of every
// column, idempotency (the same rows twice, in one batch and in two, and
// the reads again after Optimize when the store has it), the latest-wins
// rules, filters, ordering, limits, ErrNotFound and empty results, and
// ms-precision UTC times. open is as for Run; the store must implement
// store.ResultStore and store.TrustStore.
func RunResults(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		f    func(t *testing.T, s store.Store, rs store.ResultStore)
	}{
		{"Empty", testResultsEmpty},
		{"DriftStates", testDriftStates},
		{"IncidentStates", testIncidentStates},
		{"OwnerBursts", testOwnerBursts},
		{"OwnerBurstsRejectBadDays", testOwnerBurstsBadDays},
		{"ProvenanceSignals", testProvenanceSignals},
		{"BaseRates", testBaseRates},
		{"RegistryLoads", testRegistryLoads},
		{"PublicationLeaves", testPublicationLeaves},
		{"PublicationLeaves50k", testPublicationLeaves50k},
		{"Views", testResultViews},
	}
	for _, tt := range tests {
		t.Run("Results/"+tt.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			rs, ok := s.(store.ResultStore)
			if !ok {
				t.Fatalf("%T does not implement store.ResultStore", s)
			}
			must(t, "Migrate", s.Migrate(ctx(t)))
			tt.f(t, s, rs)
		})
	}
}

// idempotent checks that write, done again and with its rows twice in
// one batch (write(true)), leaves read unchanged, and that Optimize (when
// the store has it) does too. It returns the reads after the first write.
func idempotent[T any](t *testing.T, s store.Store, what string, write func(twice bool), read func() T) T {
	t.Helper()
	write(false)
	once := read()
	write(false)
	equal(t, what+": reads after the same write again", read(), once)
	write(true)
	equal(t, what+": reads after a batch with every row twice", read(), once)
	if o, ok := s.(Optimizer); ok {
		must(t, "Optimize", o.Optimize(ctx(t)))
		equal(t, what+": reads after Optimize", read(), once)
		write(false)
		equal(t, what+": reads after a write after Optimize", read(), once)
	}
	return once
}

// twice returns xs, or xs followed by xs.
func twice[T any](xs []T, yes bool) []T {
	if !yes {
		return xs
	}
	return append(slices.Clone(xs), xs...)
}

// state is a JSON text with what a stored message may hold (unicode,
// escapes, newlines), distinct per argument.
func state(parts ...any) string {
	return fmt.Sprintf(`{"key":%q,"text":"ünïcödé 🚀 \"quoted\" \\ back\nslash"}`, fmt.Sprint(parts...))
}

func isUTC(t *testing.T, what string, x time.Time) {
	t.Helper()
	if x.Location() != time.UTC || !x.Equal(store.Millis(x)) {
		t.Errorf("%s = %v, want a UTC time at ms precision", what, x)
	}
}

func testResultsEmpty(t *testing.T, s store.Store, rs store.ResultStore) {
	// Empty batches are no-ops.
	must(t, "InsertDriftStates(nil)", rs.InsertDriftStates(ctx(t), nil))
	must(t, "InsertIncidentStates(nil)", rs.InsertIncidentStates(ctx(t), nil))
	must(t, "InsertOwnerBursts(nil)", rs.InsertOwnerBursts(ctx(t), nil))
	must(t, "InsertProvenanceSignals(nil)", rs.InsertProvenanceSignals(ctx(t), nil))
	must(t, "InsertBaseRates(nil, nil)", rs.InsertBaseRates(ctx(t), nil, nil))
	must(t, "InsertRegistryLoads(nil)", rs.InsertRegistryLoads(ctx(t), nil))

	loaded, err := rs.SnapshotLoaded(ctx(t), "snap-1")
	must(t, "SnapshotLoaded", err)
	equal(t, "SnapshotLoaded on an empty store", loaded, false)
	if _, err := rs.LatestProvenanceSignal(ctx(t), "a/x"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("LatestProvenanceSignal on an empty store: err %v, want ErrNotFound", err)
	}
	rates, gate, err := rs.LatestBaseRates(ctx(t))
	must(t, "LatestBaseRates", err)
	equal(t, "LatestBaseRates rates on an empty store", len(rates), 0)
	equal(t, "LatestBaseRates gate on an empty store", gate, store.GateRow{})
	bursts, err := rs.OwnerBursts(ctx(t), store.OwnerBurstQuery{})
	must(t, "OwnerBursts", err)
	equal(t, "OwnerBursts on an empty store", len(bursts), 0)
	day, err := rs.LatestOwnerBurstDay(ctx(t))
	must(t, "LatestOwnerBurstDay", err)
	equal(t, "LatestOwnerBurstDay on an empty store", day, "")
	ds, err := rs.DriftStates(ctx(t), "a/x", 10)
	must(t, "DriftStates", err)
	equal(t, "DriftStates on an empty store", len(ds), 0)
	is, err := rs.IncidentStates(ctx(t), "a/x", 10)
	must(t, "IncidentStates", err)
	equal(t, "IncidentStates on an empty store", len(is), 0)
	servers, leaves, err := rs.PublicationLeaves(ctx(t), "pub-1")
	must(t, "PublicationLeaves", err)
	equal(t, "PublicationLeaves on an empty store", [2]int{len(servers), len(leaves)}, [2]int{0, 0})
}

func driftRow(server string, asOf time.Time, score *float64, strong bool, events int) store.DriftStateRow {
	return store.DriftStateRow{Server: server, Namespace: schema.Namespace(server), AsOf: asOf, Score: score,
		StrongNegative: strong, Events: events, State: state("drift", server, asOf.UnixNano())}
}

func normDrift(rs ...store.DriftStateRow) []store.DriftStateRow {
	out := make([]store.DriftStateRow, len(rs))
	for i, r := range rs {
		r.AsOf = store.Millis(r.AsOf)
		out[i] = r
	}
	return out
}

func driftStates(t *testing.T, rs store.ResultStore, server string, limit int) []store.DriftStateRow {
	t.Helper()
	got, err := rs.DriftStates(ctx(t), server, limit)
	must(t, "DriftStates", err)
	return got
}

func testDriftStates(t *testing.T, s store.Store, rs store.ResultStore) {
	const a, b = "io.github.ünï/cödé", "b.example/two"
	long := driftRow(a, at(2*time.Hour), fptr(-0.5), false, 1<<20)
	long.State = `{"events":"` + strings.Repeat("x", 200_000) + `"}`
	rows := []store.DriftStateRow{
		driftRow(a, at(0), fptr(72.125), true, 3),
		driftRow(a, at(time.Hour), nil, false, 0), // unknown score stays nil
		long,
		driftRow(b, at(time.Hour), fptr(0), false, 12),
	}
	type reads struct{ A, B, Unknown []store.DriftStateRow }
	read := func() reads {
		return reads{driftStates(t, rs, a, 0), driftStates(t, rs, b, 0), driftStates(t, rs, "b.example/tw", 0)}
	}
	got := idempotent(t, s, "drift states", func(two bool) {
		must(t, "InsertDriftStates", rs.InsertDriftStates(ctx(t), twice(rows, two)))
	}, read)
	equal(t, "drift states of a, newest first", got.A, normDrift(rows[2], rows[1], rows[0]))
	equal(t, "drift states of b", got.B, normDrift(rows[3]))
	equal(t, "drift states of a name prefix", len(got.Unknown), 0)
	for _, r := range got.A {
		isUTC(t, "DriftStateRow.AsOf", r.AsOf)
	}

	// The last write of a key wins, the key being as_of at the ms: a
	// rewrite 300 µs later is the same row.
	re := driftRow(b, at(time.Hour).Add(300*time.Microsecond), fptr(99), true, 13)
	must(t, "rewrite", rs.InsertDriftStates(ctx(t), []store.DriftStateRow{re}))
	want := normDrift(re)
	equal(t, "drift states of b after a rewrite", driftStates(t, rs, b, 0), want)
	optimize(t, s)
	equal(t, "drift states of b after a rewrite and Optimize", driftStates(t, rs, b, 0), want)
	// Within one batch too: the last row of a key wins.
	first, last := driftRow(b, at(3*time.Hour), fptr(1), false, 1), driftRow(b, at(3*time.Hour), fptr(2), true, 2)
	must(t, "one batch", rs.InsertDriftStates(ctx(t), []store.DriftStateRow{first, last}))
	equal(t, "drift states of b after one batch with a key twice", driftStates(t, rs, b, 0), normDrift(last, re))

	// Limits: ClampLimit with MaxEventLimit.
	var many []store.DriftStateRow
	for i := range store.DefaultLimit + 5 {
		many = append(many, driftRow("c/many", at(time.Duration(i)*time.Minute), fptr(float64(i)), i%2 == 0, i))
	}
	must(t, "InsertDriftStates many", rs.InsertDriftStates(ctx(t), many))
	slices.Reverse(many)
	for _, c := range []struct {
		limit, want int
	}{{0, store.DefaultLimit}, {-1, store.DefaultLimit}, {2, 2}, {1 << 30, len(many)}} {
		equal(t, fmt.Sprintf("DriftStates limit %d", c.limit), driftStates(t, rs, "c/many", c.limit), normDrift(many[:c.want]...))
	}
}

func incidentRow(server string, asOf time.Time, score *float64, incidents, counted int) store.IncidentStateRow {
	return store.IncidentStateRow{Server: server, AsOf: asOf, Score: score, Incidents: incidents, Counted: counted,
		State: state("incidents", server, asOf.UnixNano())}
}

func normIncidentStates(rs ...store.IncidentStateRow) []store.IncidentStateRow {
	out := make([]store.IncidentStateRow, len(rs))
	for i, r := range rs {
		r.AsOf = store.Millis(r.AsOf)
		out[i] = r
	}
	return out
}

func incidentStates(t *testing.T, rs store.ResultStore, server string, limit int) []store.IncidentStateRow {
	t.Helper()
	got, err := rs.IncidentStates(ctx(t), server, limit)
	must(t, "IncidentStates", err)
	return got
}

func testIncidentStates(t *testing.T, s store.Store, rs store.ResultStore) {
	const a, b = "a.example/one", "Z.example/upper"
	rows := []store.IncidentStateRow{
		incidentRow(a, at(time.Hour), fptr(40.5), 3, 2),
		incidentRow(a, at(0), nil, 0, 0),
		incidentRow(a, at(-24*time.Hour), fptr(100), 1, 1),
		incidentRow(b, at(0), fptr(12), 7, 5),
	}
	type reads struct{ A, B, None []store.IncidentStateRow }
	read := func() reads {
		return reads{incidentStates(t, rs, a, 0), incidentStates(t, rs, b, 0), incidentStates(t, rs, "nobody/here", 0)}
	}
	got := idempotent(t, s, "incident states", func(two bool) {
		must(t, "InsertIncidentStates", rs.InsertIncidentStates(ctx(t), twice(rows, two)))
	}, read)
	equal(t, "incident states of a, newest first", got.A, normIncidentStates(rows[0], rows[1], rows[2]))
	equal(t, "incident states of b", got.B, normIncidentStates(rows[3]))
	equal(t, "incident states of an unknown server", len(got.None), 0)
	for _, r := range got.A {
		isUTC(t, "IncidentStateRow.AsOf", r.AsOf)
	}
	equal(t, "limit 2", incidentStates(t, rs, a, 2), normIncidentStates(rows[0], rows[1]))

	re := incidentRow(a, at(0).Add(400*time.Microsecond), fptr(1), 9, 9) // same ms as rows[1]
	must(t, "rewrite", rs.InsertIncidentStates(ctx(t), []store.IncidentStateRow{re}))
	want := normIncidentStates(rows[0], re, rows[2])
	equal(t, "incident states of a after a rewrite", incidentStates(t, rs, a, 0), want)
	optimize(t, s)
	equal(t, "after Optimize", incidentStates(t, rs, a, 0), want)
}

// burst is an owner-burst evaluation of ns at asOf (its day is asOf's UTC
// day); kinds holds "recurring" and/or "first".
func burst(ns string, asOf time.Time, current int, kinds ...string) store.OwnerBurstRow {
	r := store.OwnerBurstRow{Namespace: ns, Day: asOf.UTC().Format(time.DateOnly), AsOf: asOf,
		RecurringBurst: slices.Contains(kinds, "recurring"), FirstWindowBurst: slices.Contains(kinds, "first"),
		WindowsOverThreshold: 2 * len(kinds), CurrentWindowNew: current, State: state("burst", ns, asOf.UnixNano())}
	r.Flagged = r.RecurringBurst || r.FirstWindowBurst
	return r
}

func normBursts(rs ...store.OwnerBurstRow) []store.OwnerBurstRow {
	out := make([]store.OwnerBurstRow, len(rs))
	for i, r := range rs {
		r.AsOf = store.Millis(r.AsOf)
		out[i] = r
	}
	return out
}

func ownerBursts(t *testing.T, rs store.ResultStore, q store.OwnerBurstQuery) []store.OwnerBurstRow {
	t.Helper()
	got, err := rs.OwnerBursts(ctx(t), q)
	must(t, fmt.Sprintf("OwnerBursts(%+v)", q), err)
	return got
}

func testOwnerBursts(t *testing.T, s store.Store, rs store.ResultStore) {
	const a, b, z, u = "a.example", "b.example", "Z.upper", "ünï.example"
	d := func(h int) time.Time { return at(time.Duration(h) * time.Hour) } // t0 is 07:00:00.123 UTC on 2025-03-01
	const d1, d2, d3 = "2025-03-01", "2025-03-02", "2025-03-03"
	a1early := burst(a, d(0), 5, "first")
	a1 := burst(a, d(1), 1) // the day's latest evaluation is not flagged
	b1 := burst(b, d(2), 4, "recurring")
	a2early := burst(a, d(24), 7, "recurring")
	a2 := burst(a, d(25), 9, "recurring", "first")
	z2 := burst(z, d(26), 0)
	a3 := burst(a, d(48), 3, "first")
	u3 := burst(u, d(49), 6, "recurring")
	// Newer evaluations first, older ones after: the greatest as_of wins, not the last write.
	rows := []store.OwnerBurstRow{a1, a2, u3, b1, z2, a3, a1early, a2early}
	if a1.Day != d1 || a2.Day != d2 || a3.Day != d3 {
		t.Fatalf("test bug: days %s %s %s", a1.Day, a2.Day, a3.Day)
	}

	cases := []struct {
		name string
		q    store.OwnerBurstQuery
		want []store.OwnerBurstRow
	}{
		{"all: the latest of each (namespace, day), by day then namespace (bytes)", store.OwnerBurstQuery{}, []store.OwnerBurstRow{a1, b1, z2, a2, a3, u3}},
		{"flagged only: on that latest row", store.OwnerBurstQuery{FlaggedOnly: true}, []store.OwnerBurstRow{b1, a2, a3, u3}},
		{"namespace", store.OwnerBurstQuery{Namespace: a}, []store.OwnerBurstRow{a1, a2, a3}},
		{"namespace, flagged", store.OwnerBurstQuery{Namespace: a, FlaggedOnly: true}, []store.OwnerBurstRow{a2, a3}},
		{"from (inclusive)", store.OwnerBurstQuery{From: d2}, []store.OwnerBurstRow{z2, a2, a3, u3}},
		{"to (inclusive)", store.OwnerBurstQuery{To: d2}, []store.OwnerBurstRow{a1, b1, z2, a2}},
		{"one day", store.OwnerBurstQuery{From: d2, To: d2}, []store.OwnerBurstRow{z2, a2}},
		{"limit", store.OwnerBurstQuery{Limit: 1}, []store.OwnerBurstRow{a1}},
		{"limit after the flagged filter", store.OwnerBurstQuery{FlaggedOnly: true, Limit: 3}, []store.OwnerBurstRow{b1, a2, a3}},
		{"every filter", store.OwnerBurstQuery{Namespace: u, From: d1, To: d3, FlaggedOnly: true, Limit: 10}, []store.OwnerBurstRow{u3}},
		{"unknown namespace", store.OwnerBurstQuery{Namespace: "a.exampl"}, nil},
		{"after every day", store.OwnerBurstQuery{From: "2025-04-01"}, nil},
		{"from after to", store.OwnerBurstQuery{From: d3, To: d1}, nil},
	}
	read := func() [][]store.OwnerBurstRow {
		var out [][]store.OwnerBurstRow
		for _, c := range cases {
			out = append(out, ownerBursts(t, rs, c.q))
		}
		return out
	}
	got := idempotent(t, s, "owner bursts", func(two bool) {
		must(t, "InsertOwnerBursts", rs.InsertOwnerBursts(ctx(t), twice(rows, two)))
	}, read)
	for i, c := range cases {
		if len(c.want) == 0 {
			equal(t, c.name, len(got[i]), 0)
			continue
		}
		equal(t, c.name, got[i], normBursts(c.want...))
	}
	for _, r := range got[0] {
		isUTC(t, "OwnerBurstRow.AsOf", r.AsOf)
	}
	day, err := rs.LatestOwnerBurstDay(ctx(t))
	must(t, "LatestOwnerBurstDay", err)
	equal(t, "LatestOwnerBurstDay", day, d3)

	// A rewrite of a key (same ms) wins; an evaluation that is newer still
	// replaces the day's row.
	re := burst(a, d(25).Add(200*time.Microsecond), 11, "first")
	must(t, "rewrite", rs.InsertOwnerBursts(ctx(t), []store.OwnerBurstRow{re}))
	equal(t, "day 2 after a rewrite", ownerBursts(t, rs, store.OwnerBurstQuery{Namespace: a, From: d2, To: d2}), normBursts(re))
	later := burst(a, d(30), 2)
	must(t, "newer", rs.InsertOwnerBursts(ctx(t), []store.OwnerBurstRow{later}))
	equal(t, "day 2 after a newer evaluation", ownerBursts(t, rs, store.OwnerBurstQuery{Namespace: a, From: d2, To: d2}), normBursts(later))
	equal(t, "flagged on day 2", ownerBursts(t, rs, store.OwnerBurstQuery{From: d2, To: d2, FlaggedOnly: true}), []store.OwnerBurstRow{})
	optimize(t, s)
	equal(t, "after Optimize", ownerBursts(t, rs, store.OwnerBurstQuery{Namespace: a, From: d2, To: d2}), normBursts(later))

	// Limits: ClampLimit with MaxEventLimit.
	var many []store.OwnerBurstRow
	for i := range store.DefaultLimit + 5 {
		many = append(many, burst(fmt.Sprintf("m%03d.example", i), time.Date(2025, 4, 1, 1, 0, 0, 0, time.UTC), i, "first"))
	}
	must(t, "InsertOwnerBursts many", rs.InsertOwnerBursts(ctx(t), many))
	for _, c := range []struct{ limit, want int }{{0, store.DefaultLimit}, {1 << 30, len(many)}, {7, 7}} {
		equal(t, fmt.Sprintf("OwnerBursts limit %d", c.limit),
			ownerBursts(t, rs, store.OwnerBurstQuery{From: "2025-04-01", Limit: c.limit}), normBursts(many[:c.want]...))
	}
	day, err = rs.LatestOwnerBurstDay(ctx(t))
	must(t, "LatestOwnerBurstDay", err)
	equal(t, "LatestOwnerBurstDay after a later day", day, "2025-04-01")
}

func testOwnerBurstsBadDays(t *testing.T, s store.Store, rs store.ResultStore) {
	for _, q := range []store.OwnerBurstQuery{{From: "2025-3-1"}, {To: "yesterday"}, {From: "2025-03-01T00:00:00Z"},
		{From: "1969-12-31"}, {To: "2106-01-01"}} {
		if _, err := rs.OwnerBursts(ctx(t), q); err == nil {
			t.Errorf("OwnerBursts(%+v) accepted a malformed day", q)
		}
	}
	bad := burst("a.example", at(0), 1, "first")
	bad.Day = "01/03/2025"
	if err := rs.InsertOwnerBursts(ctx(t), []store.OwnerBurstRow{burst("b.example", at(0), 1), bad}); err == nil {
		t.Errorf("InsertOwnerBursts accepted a malformed day")
	}
	equal(t, "rows after a refused batch", len(ownerBursts(t, rs, store.OwnerBurstQuery{})), 0)
	// Days a ClickHouse Date cannot hold are refused on every engine.
	for _, d := range []time.Time{time.Date(1969, 12, 31, 23, 0, 0, 0, time.UTC), time.Date(2106, 1, 1, 0, 0, 0, 0, time.UTC)} {
		if err := rs.InsertOwnerBursts(ctx(t), []store.OwnerBurstRow{burst("c.example", d, 1, "first")}); !errors.Is(err, store.ErrDayOutOfRange) {
			t.Errorf("InsertOwnerBursts on %v: err %v, want ErrDayOutOfRange", d, err)
		}
	}
	// The range's ends are stored and read back.
	ends := []store.OwnerBurstRow{burst("d.example", time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), 1, "first"),
		burst("d.example", time.Date(2105, 12, 31, 23, 59, 59, 999e6, time.UTC), 2, "recurring")}
	must(t, "InsertOwnerBursts at the range's ends", rs.InsertOwnerBursts(ctx(t), ends))
	equal(t, "the range's ends", ownerBursts(t, rs, store.OwnerBurstQuery{From: store.MinDay, To: store.MaxDay}), normBursts(ends...))
}

// signalFlagNames are the flag fields of a ProvenanceSignalRow, in a fixed
// order, for fixtures that set one flag at a time.
var signalFlagNames = []string{"fork", "archived", "no_license", "repo_under_30d", "namespace_owner_mismatch",
	"late_gt_30d", "late_1_30d", "no_commits_90d", "single_author_90d", "commit_cap",
	"co_registration", "one_repo_many", "verified_90d", "stars_ge_100", "owner_old_1y"}

func setSignalFlag(r *store.ProvenanceSignalRow, name string) {
	ptr := map[string]*bool{"fork": &r.Fork, "archived": &r.Archived, "no_license": &r.NoLicense,
		"repo_under_30d": &r.RepoUnder30d, "namespace_owner_mismatch": &r.NamespaceOwnerMismatch,
		"late_gt_30d": &r.LateGT30d, "late_1_30d": &r.Late1to30d, "no_commits_90d": &r.NoCommits90d,
		"single_author_90d": &r.SingleAuthor90d, "commit_cap": &r.CommitCap, "co_registration": &r.CoRegistration,
		"one_repo_many": &r.OneRepoMany, "verified_90d": &r.Verified90d, "stars_ge_100": &r.StarsGE100,
		"owner_old_1y": &r.OwnerOld1y}[name]
	if ptr == nil {
		panic("unknown flag " + name)
	}
	*ptr = true
}

// signal is a resolved provenance signal of server at asOf with the named flags set.
func signal(server string, asOf time.Time, score *float64, flags ...string) store.ProvenanceSignalRow {
	r := store.ProvenanceSignalRow{Server: server, AsOf: asOf, Repo: "github.com/o/" + schema.Namespace(server),
		RepoURL: "https://github.com/o/" + schema.Namespace(server) + ".git", Score: score, Observed: true, Resolved: true,
		State: state("provenance", server, asOf.UnixNano())}
	for _, f := range flags {
		setSignalFlag(&r, f)
	}
	return r
}

func normSignal(r store.ProvenanceSignalRow) store.ProvenanceSignalRow {
	r.AsOf = store.Millis(r.AsOf)
	return r
}

func latestSignal(t *testing.T, rs store.ResultStore, server string) store.ProvenanceSignalRow {
	t.Helper()
	got, err := rs.LatestProvenanceSignal(ctx(t), server)
	must(t, "LatestProvenanceSignal("+server+")", err)
	return got
}

func testProvenanceSignals(t *testing.T, s store.Store, rs store.ResultStore) {
	// One server per flag with only that flag set, so a column mix-up shows.
	var rows []store.ProvenanceSignalRow
	for i, f := range signalFlagNames {
		rows = append(rows, signal(fmt.Sprintf("flag.example/%02d-%s", i, f), at(time.Duration(i)*time.Second), fptr(float64(i)+0.25), f))
	}
	all := signal("all.example/every-flag", at(0), fptr(0), signalFlagNames...)
	unknown := store.ProvenanceSignalRow{Server: "none.example/x", AsOf: at(0), Reason: "no GitHub repository",
		State: state("unknown")} // not observed: no repo, nil score, every flag false
	unresolved := signal("gone.example/x", at(0), nil)
	unresolved.Resolved, unresolved.Reason, unresolved.Repo = false, "repo not found (404)", "github.com/o/gone"
	rows = append(rows, all, unknown, unresolved)
	// History of one server: the newest as_of wins whatever the write order.
	const h = "io.github.ünï/history"
	newest := signal(h, at(2*time.Hour), fptr(80), "stars_ge_100")
	older := []store.ProvenanceSignalRow{signal(h, at(time.Hour), fptr(60), "fork"), signal(h, at(-time.Hour), fptr(10), "archived")}

	read := func() []store.ProvenanceSignalRow {
		var out []store.ProvenanceSignalRow
		for _, r := range append(slices.Clone(rows), newest) {
			out = append(out, latestSignal(t, rs, r.Server))
		}
		return out
	}
	got := idempotent(t, s, "provenance signals", func(two bool) {
		must(t, "InsertProvenanceSignals", rs.InsertProvenanceSignals(ctx(t), twice(rows, two)))
		must(t, "InsertProvenanceSignals newest", rs.InsertProvenanceSignals(ctx(t), []store.ProvenanceSignalRow{newest}))
		must(t, "InsertProvenanceSignals older, after", rs.InsertProvenanceSignals(ctx(t), twice(older, two)))
	}, read)
	for i, r := range append(slices.Clone(rows), newest) {
		equal(t, "LatestProvenanceSignal("+r.Server+")", got[i], normSignal(r))
		isUTC(t, "ProvenanceSignalRow.AsOf", got[i].AsOf)
	}
	for _, server := range []string{"nobody/here", "flag.example/00-for", h + "x"} {
		if _, err := rs.LatestProvenanceSignal(ctx(t), server); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("LatestProvenanceSignal(%q): err %v, want ErrNotFound", server, err)
		}
	}
	// A rewrite of the newest key (same ms) wins.
	re := signal(h, at(2*time.Hour).Add(100*time.Microsecond), fptr(81), "verified_90d", "owner_old_1y")
	must(t, "rewrite", rs.InsertProvenanceSignals(ctx(t), []store.ProvenanceSignalRow{re}))
	equal(t, "after a rewrite", latestSignal(t, rs, h), normSignal(re))
	optimize(t, s)
	equal(t, "after a rewrite and Optimize", latestSignal(t, rs, h), normSignal(re))
}

func rate(flag string, asOf time.Time, count, n int) store.BaseRateRow {
	r := store.BaseRateRow{Flag: flag, AsOf: asOf, Denominator: "resolved_repos", Count: count, N: n,
		Pinned: fptr(0.125), Scored: true, Direction: "negative", MethodVersion: "0.1.0-draft6", State: state("rate", flag, asOf.UnixNano())}
	if n > 0 {
		live := float64(count) / float64(n)
		r.Live, r.DeltaPP = &live, fptr((live-0.125)*100)
	}
	return r
}

func gateRow(asOf time.Time, open bool, pct float64) store.GateRow {
	return store.GateRow{AsOf: asOf, Open: open, CoveragePct: pct, Resolvable: 40_000, Fresh: 31_000, Observed: 39_000,
		State: state("gate", asOf.UnixNano())}
}

func normRates(rs ...store.BaseRateRow) []store.BaseRateRow {
	out := make([]store.BaseRateRow, len(rs))
	for i, r := range rs {
		r.AsOf = store.Millis(r.AsOf)
		out[i] = r
	}
	return out
}

func normGate(g store.GateRow) store.GateRow {
	g.AsOf = store.Millis(g.AsOf)
	return g
}

func testBaseRates(t *testing.T, s store.Store, rs store.ResultStore) {
	t1, t2 := at(0), at(time.Hour)
	set1 := []store.BaseRateRow{rate("no_license", t1, 3, 40), rate("archived", t1, 1, 40), rate("fork", t1, 0, 0)}
	noPinned := rate("fork", t2, 5, 41)
	noPinned.Pinned, noPinned.DeltaPP, noPinned.Scored, noPinned.Direction = nil, nil, false, ""
	// Rows of one as_of (at the ms): the newest set has fork and no_license, not archived.
	set2 := []store.BaseRateRow{rate("no_license", t2.Add(300*time.Microsecond), 4, 41), noPinned}
	older := []store.BaseRateRow{rate("zz_old", at(-time.Hour), 1, 2)}
	g1, g2, g0 := gateRow(t1, false, 41.5), gateRow(at(30*time.Minute), true, 77.25), gateRow(at(-2*time.Hour), true, 99)

	type reads struct {
		Rates []store.BaseRateRow
		Gate  store.GateRow
	}
	read := func() reads {
		r, g, err := rs.LatestBaseRates(ctx(t))
		must(t, "LatestBaseRates", err)
		return reads{r, g}
	}
	// Rates alone first: the gate stays zero until one is written.
	must(t, "InsertBaseRates set 1", rs.InsertBaseRates(ctx(t), set1, nil))
	equal(t, "set 1 without a gate", read(), reads{normRates(set1[1], set1[2], set1[0]), store.GateRow{}})
	must(t, "InsertBaseRates gate only", rs.InsertBaseRates(ctx(t), nil, []store.GateRow{g1}))
	equal(t, "set 1 and gate 1", read(), reads{normRates(set1[1], set1[2], set1[0]), normGate(g1)})

	got := idempotent(t, s, "base rates", func(two bool) {
		must(t, "InsertBaseRates set 2", rs.InsertBaseRates(ctx(t), twice(set2, two), twice([]store.GateRow{g2}, two)))
		must(t, "InsertBaseRates older, after", rs.InsertBaseRates(ctx(t), twice(older, two), []store.GateRow{g0}))
	}, read)
	equal(t, "the newest as_of's rates by flag, and the newest gate", got, reads{normRates(noPinned, set2[0]), normGate(g2)})
	for _, r := range got.Rates {
		isUTC(t, "BaseRateRow.AsOf", r.AsOf)
		equal(t, "as_of of the newest set", r.AsOf, store.Millis(t2))
	}
	isUTC(t, "GateRow.AsOf", got.Gate.AsOf)

	re := rate("fork", t2, 6, 41)
	must(t, "rewrite", rs.InsertBaseRates(ctx(t), []store.BaseRateRow{re}, nil))
	want := reads{normRates(re, set2[0]), normGate(g2)}
	equal(t, "after a rewrite", read(), want)
	optimize(t, s)
	equal(t, "after a rewrite and Optimize", read(), want)
}

func testRegistryLoads(t *testing.T, s store.Store, rs store.ResultStore) {
	loads := []store.RegistryLoad{{SnapshotID: "snap-1", ObservedAt: at(0), Entries: 51_234}, {SnapshotID: "snap-ünï", ObservedAt: at(time.Hour)}}
	ids := []string{"snap-1", "snap-ünï", "snap-2", "snap-", ""}
	read := func() []bool {
		var out []bool
		for _, id := range ids {
			ok, err := rs.SnapshotLoaded(ctx(t), id)
			must(t, "SnapshotLoaded("+id+")", err)
			out = append(out, ok)
		}
		return out
	}
	equal(t, "before any load", read(), []bool{false, false, false, false, false})
	got := idempotent(t, s, "registry loads", func(two bool) {
		must(t, "InsertRegistryLoads", rs.InsertRegistryLoads(ctx(t), twice(loads, two)))
	}, read)
	equal(t, "SnapshotLoaded", got, []bool{true, true, false, false, false})
	if _, ok := s.(store.Querier); !ok {
		return
	}
	view := queryRows(t, s, `SELECT snapshot_id, observed_at, observed_at_ms, observed_day, entries FROM registry_loads_v ORDER BY snapshot_id`)
	equal(t, "registry_loads_v", view, []string{
		fmt.Sprintf("snap-1 2025-03-01 %d 2025-03-01 51234", store.Millis(at(0)).UnixMilli()),
		fmt.Sprintf("snap-ünï 2025-03-01 %d 2025-03-01 0", store.Millis(at(time.Hour)).UnixMilli()),
	})
}

func leavesOf(t *testing.T, rs store.ResultStore, pub string) (servers, leaves []string) {
	t.Helper()
	servers, leaves, err := rs.PublicationLeaves(ctx(t), pub)
	must(t, "PublicationLeaves("+pub+")", err)
	if len(servers) != len(leaves) {
		t.Fatalf("PublicationLeaves(%s): %d servers, %d leaves", pub, len(servers), len(leaves))
	}
	return servers, leaves
}

// checkLeaves compares PublicationLeaves with PublicationRecords: the
// same servers in the same order, and the records' leaf hashes.
func checkLeaves(t *testing.T, ts store.TrustStore, rs store.ResultStore, pub string) (servers, leaves []string) {
	t.Helper()
	servers, leaves = leavesOf(t, rs, pub)
	recs, err := ts.PublicationRecords(ctx(t), pub)
	must(t, "PublicationRecords", err)
	wantS, wantL := []string{}, []string{}
	for _, r := range recs {
		wantS, wantL = append(wantS, r.Server), append(wantL, r.LeafHash)
	}
	equal(t, "PublicationLeaves servers vs PublicationRecords of "+pub, servers, wantS)
	equal(t, "PublicationLeaves leaves vs PublicationRecords of "+pub, leaves, wantL)
	return servers, leaves
}

func trustStore(t *testing.T, s store.Store) store.TrustStore {
	t.Helper()
	ts, ok := s.(store.TrustStore)
	if !ok {
		t.Fatalf("%T does not implement store.TrustStore", s)
	}
	return ts
}

func testPublicationLeaves(t *testing.T, s store.Store, rs store.ResultStore) {
	ts := trustStore(t, s)
	// Byte order: upper case before lower case, a prefix before its
	// extensions, multi-byte UTF-8 last.
	names := []string{"io.github.ünï/cödé", "a.example/one-two", "Z.example/upper", "a.example/one", "b.example/two"}
	var p1 []store.TrustRecord
	for _, n := range names {
		p1 = append(p1, trec(n, "pub-1", at(0), fptr(50), "C"))
	}
	p2 := []store.TrustRecord{trec("a.example/one", "pub-2", at(time.Hour), fptr(60), "B")}
	type reads struct{ S1, L1, S2, L2, S3, L3 []string }
	read := func() reads {
		var r reads
		r.S1, r.L1 = checkLeaves(t, ts, rs, "pub-1")
		r.S2, r.L2 = checkLeaves(t, ts, rs, "pub-2")
		r.S3, r.L3 = checkLeaves(t, ts, rs, "pub-none")
		return r
	}
	got := idempotent(t, s, "publication leaves", func(two bool) {
		must(t, "InsertTrustRecords", ts.InsertTrustRecords(ctx(t), twice(append(slices.Clone(p1), p2...), two)))
	}, read)
	sorted := slices.Clone(names)
	slices.Sort(sorted) // Go compares strings bytewise: the Merkle leaf order
	var leaves []string
	for _, n := range sorted {
		leaves = append(leaves, leafHash(n, "pub-1"))
	}
	equal(t, "servers of pub-1", got.S1, sorted)
	equal(t, "leaves of pub-1", got.L1, leaves)
	equal(t, "pub-2", [2][]string{got.S2, got.L2}, [2][]string{{"a.example/one"}, {leafHash("a.example/one", "pub-2")}})
	equal(t, "a publication without records", [2]int{len(got.S3), len(got.L3)}, [2]int{0, 0})

	// The last write of a (server, publication) wins, leaf included.
	re := trec("b.example/two", "pub-1", at(0), fptr(51), "C")
	re.LeafHash = strings.Repeat("ab", 32)
	must(t, "rewrite", ts.InsertTrustRecords(ctx(t), []store.TrustRecord{re}))
	_, l := checkLeaves(t, ts, rs, "pub-1")
	equal(t, "leaf after a rewrite", l[slices.Index(sorted, "b.example/two")], re.LeafHash)
	optimize(t, s)
	checkLeaves(t, ts, rs, "pub-1")
	// LatestTrustRecord carries the leaf too.
	must(t, "InsertPublication", ts.InsertPublication(ctx(t), pubRow("pub-1", at(0), len(p1))))
	latest, err := ts.LatestTrustRecord(ctx(t), "b.example/two")
	must(t, "LatestTrustRecord", err)
	equal(t, "LatestTrustRecord.LeafHash", latest.LeafHash, re.LeafHash)
}

// testPublicationLeaves50k times PublicationLeaves on a publication of
// registry size (50,000 records, beside a second publication) and checks
// it against PublicationRecords.
func testPublicationLeaves50k(t *testing.T, s store.Store, rs store.ResultStore) {
	if testing.Short() {
		t.Skip("-short: 50,000 records")
	}
	ts := trustStore(t, s)
	const n = 50_000
	pad := strings.Repeat("r", 400) // a sealed record is a few hundred bytes at least
	recs := make([]store.TrustRecord, 0, n)
	for i := range n {
		r := trec(fmt.Sprintf("io.github.n%05d/srv", (i*7919)%n), "pub-big", at(0), fptr(float64(i%100)), "C")
		r.Record = `{"pad":"` + pad + `"}`
		recs = append(recs, r)
	}
	start := time.Now()
	must(t, "InsertTrustRecords 50k", ts.InsertTrustRecords(ctx(t), recs))
	other := make([]store.TrustRecord, 0, 5000)
	for _, r := range recs[:5000] {
		r.PublicationID, r.LeafHash = "pub-small", leafHash(r.Server, "pub-small")
		other = append(other, r)
	}
	must(t, "InsertTrustRecords pub-small", ts.InsertTrustRecords(ctx(t), other))
	write := time.Since(start)

	var best time.Duration
	var servers, leaves []string
	for i := range 3 {
		start = time.Now()
		servers, leaves = leavesOf(t, rs, "pub-big")
		if d := time.Since(start); i == 0 || d < best {
			best = d
		}
	}
	start = time.Now()
	recsRead, err := ts.PublicationRecords(ctx(t), "pub-big")
	must(t, "PublicationRecords", err)
	records := time.Since(start)
	t.Logf("%d records: PublicationLeaves %v (best of 3), PublicationRecords %v, write %v", n, best, records, write)
	if len(servers) != n || len(recsRead) != n {
		t.Fatalf("got %d leaves and %d records, want %d", len(servers), len(recsRead), n)
	}
	for i, r := range recsRead {
		if servers[i] != r.Server || leaves[i] != r.LeafHash || leaves[i] != leafHash(r.Server, "pub-big") {
			t.Fatalf("leaf %d: %s %s, record %s %s", i, servers[i], leaves[i], r.Server, r.LeafHash)
		}
		if i > 0 && servers[i-1] >= servers[i] {
			t.Fatalf("leaves not in server order at %d: %q then %q", i, servers[i-1], servers[i])
		}
	}
	// Generous: the point is one query over two columns, not a JSON decode per record.
	if best > 5*time.Second {
		t.Errorf("PublicationLeaves of %d records took %v", n, best)
	}
}

// testResultViews: the analyst views have the same columns on every
// engine and one row per key (owner_bursts_v: per (namespace, day), the
// greatest as_of) whatever was written twice or rewritten.
func testResultViews(t *testing.T, s store.Store, rs store.ResultStore) {
	if _, ok := s.(store.Querier); !ok {
		t.Skip("store does not implement store.Querier")
	}
	ms := func(d time.Duration) int64 { return store.Millis(at(d)).UnixMilli() }
	drift := []store.DriftStateRow{driftRow("a/x", at(0), fptr(70), true, 2), driftRow("a/x", at(time.Hour), nil, false, 0)}
	incidents := []store.IncidentStateRow{incidentRow("a/x", at(0), fptr(40), 2, 1)}
	bursts := []store.OwnerBurstRow{burst("a", at(0), 5, "first"), burst("a", at(time.Hour), 6, "recurring", "first"), burst("b", at(0), 1)}
	signals := []store.ProvenanceSignalRow{signal("a/x", at(0), fptr(55), "fork", "owner_old_1y"), signal("a/x", at(time.Hour), nil, "co_registration")}
	rates := []store.BaseRateRow{rate("fork", at(0), 2, 8)}
	gates := []store.GateRow{gateRow(at(0), true, 81.5)}
	for range 2 {
		must(t, "InsertDriftStates", rs.InsertDriftStates(ctx(t), drift))
		must(t, "InsertIncidentStates", rs.InsertIncidentStates(ctx(t), incidents))
		must(t, "InsertOwnerBursts", rs.InsertOwnerBursts(ctx(t), bursts))
		must(t, "InsertProvenanceSignals", rs.InsertProvenanceSignals(ctx(t), signals))
		must(t, "InsertBaseRates", rs.InsertBaseRates(ctx(t), rates, gates))
	}
	reDrift := driftRow("a/x", at(0), fptr(71), false, 3)
	must(t, "rewrite", rs.InsertDriftStates(ctx(t), []store.DriftStateRow{reDrift}))

	cases := []struct {
		name, q string
		want    []string
	}{
		{"drift_states_v", `SELECT server, namespace, as_of, as_of_ms, as_of_day, score, strong_negative, events FROM drift_states_v ORDER BY server, as_of_ms`,
			[]string{fmt.Sprintf("a/x a 2025-03-01 %d 2025-03-01 71 0 3", ms(0)), fmt.Sprintf("a/x a 2025-03-01 %d 2025-03-01 NULL 0 0", ms(time.Hour))}},
		{"incident_states_v", `SELECT server, as_of, as_of_ms, as_of_day, score, incidents, counted FROM incident_states_v`,
			[]string{fmt.Sprintf("a/x 2025-03-01 %d 2025-03-01 40 2 1", ms(0))}},
		{"owner_bursts_v", `SELECT namespace, day, as_of, as_of_ms, flagged, recurring_burst, first_window_burst, windows_over_threshold, current_window_new FROM owner_bursts_v ORDER BY day, namespace`,
			[]string{fmt.Sprintf("a 2025-03-01 2025-03-01 %d 1 1 1 4 6", ms(time.Hour)), fmt.Sprintf("b 2025-03-01 2025-03-01 %d 0 0 0 0 1", ms(0))}},
		{"provenance_signals_v", `SELECT server, as_of, as_of_ms, as_of_day, repo, repo_url, score, reason, observed, resolved,
			flag_fork, flag_archived, flag_no_license, flag_repo_under_30d, flag_namespace_owner_mismatch,
			flag_late_gt_30d, flag_late_1_30d, flag_no_commits_90d, flag_single_author_90d, flag_commit_cap_hit,
			flag_co_registration, flag_one_repo_many, flag_verified_90d, flag_stars_ge_100, flag_owner_older_than_1y
			FROM provenance_signals_v ORDER BY server, as_of_ms`,
			[]string{fmt.Sprintf("a/x 2025-03-01 %d 2025-03-01 github.com/o/a https://github.com/o/a.git 55  1 1 1 0 0 0 0 0 0 0 0 0 0 0 0 0 1", ms(0)),
				fmt.Sprintf("a/x 2025-03-01 %d 2025-03-01 github.com/o/a https://github.com/o/a.git NULL  1 1 0 0 0 0 0 0 0 0 0 0 1 0 0 0 0", ms(time.Hour))}},
		{"base_rates_v", `SELECT flag, as_of, as_of_ms, as_of_day, denominator, flagged, n, live, pinned, delta_pp, scored, direction, method_version FROM base_rates_v`,
			[]string{fmt.Sprintf("fork 2025-03-01 %d 2025-03-01 resolved_repos 2 8 0.25 0.125 12.5 1 negative 0.1.0-draft6", ms(0))}},
		{"provenance_gate_v", `SELECT as_of, as_of_ms, as_of_day, open, coverage_pct, resolvable, fresh, observed FROM provenance_gate_v`,
			[]string{fmt.Sprintf("2025-03-01 %d 2025-03-01 1 81.5 40000 31000 39000", ms(0))}},
	}
	check := func(phase string) {
		for _, c := range cases {
			equal(t, phase+": "+c.name, queryRows(t, s, c.q), c.want)
		}
		// state is the message verbatim.
		got := queryRows(t, s, `SELECT state FROM drift_states_v WHERE as_of_ms = `+fmt.Sprint(ms(0)))
		equal(t, phase+": drift_states_v.state", got, []string{reDrift.State})
	}
	check("before Optimize")
	if o, ok := s.(Optimizer); ok {
		must(t, "Optimize", o.Optimize(ctx(t)))
		check("after Optimize")
	}
}
