// Package storetest is the conformance suite of the store contract
// (sql/store): every engine runs the same tests, so DuckDB and ClickHouse
// return the same rows for the same writes, whatever batching or background
// merges happened in between.
//
// In: a function that opens a fresh, empty store. Out: subtests over every
// method of store.Store (and store.Querier when implemented): round trips,
// idempotency, the winner rules (earliest observation per record, latest view
// tie-breaking, last write per id), paging and filters, counts, ErrNotFound,
// and the health history (HealthChecks, LatestHealth). RunRestart checks
// that what was written survives closing and reopening the store; RunTrust,
// RunIncidents, RunReview, RunAdmin, RunProvenance, RunHealthBulk, RunResults
// (store.ResultStore and the views of its tables) and RunBulk
// (store.BulkReader) cover the other interfaces.
//
// A store may implement Optimize(ctx) error (ClickHouse: OPTIMIZE … FINAL);
// the suite then checks that reads are the same before and after it.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/store"
)

// Optimizer is implemented by stores whose background merges can be forced.
type Optimizer interface {
	Optimize(ctx context.Context) error
}

// Run runs the conformance suite. open must return a new, empty store (not
// yet migrated) for each call and arrange its own cleanup; Run closes it.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		f    func(t *testing.T, s store.Store)
	}{
		{"Migrate", testMigrate},
		{"RecordRoundTrip", testRecordRoundTrip},
		{"Idempotent", testIdempotent},
		{"EarliestObserved", testEarliestObserved},
		{"LatestView", testLatestView},
		{"ListServersPaging", testListServersPaging},
		{"NotFound", testNotFound},
		{"Versions", testVersions},
		{"VersionFlags", testVersionFlags},
		{"VersionFlagsReversed", testVersionFlagsReversed},
		{"VersionHistories", testVersionHistories},
		{"Events", testEvents},
		{"EventLastWriteWins", testEventLastWriteWins},
		{"Snapshots", testSnapshots},
		{"DLQ", testDLQ},
		{"Counts", testCounts},
		{"Times", testTimes},
		{"Query", testQuery},
		{"HealthRoundTrip", testHealthRoundTrip},
		{"HealthTimes", testHealthTimes},
		{"HealthIdempotent", testHealthIdempotent},
		{"HealthLastWriteWins", testHealthLastWriteWins},
		{"HealthChecksQuery", testHealthChecksQuery},
		{"LatestHealth", testLatestHealth},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			if err := s.Migrate(ctx(t)); err != nil {
				t.Fatalf("Migrate: %v", err)
			}
			tt.f(t, s)
		})
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

// t0 is the suite's base time: sub-millisecond digits and a non-UTC zone on
// purpose, so every read must come back truncated to ms in UTC.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 123_456_789, time.FixedZone("X", 5*3600))

func at(d time.Duration) time.Time { return t0.Add(d) }

func rec(name, version, sha string, observed time.Time, latest bool) store.Record {
	return store.Record{
		Name:          name,
		Version:       version,
		Namespace:     schema.Namespace(name),
		ContentSHA256: sha,
		ObservedAt:    observed,
		SnapshotID:    "snap-" + observed.UTC().Format("150405.000"),
		Status:        "active",
		IsLatest:      latest,
		PublishedAt:   observed.Add(-time.Hour),
		UpdatedAt:     observed.Add(-time.Minute),
		Description:   "desc of " + name + "@" + version,
		Title:         "Title " + version,
		Server:        `{"name":"` + name + `","version":"` + version + `"}`,
	}
}

// norm is what a read must return for a written record. A record observed
// once was last observed then too (LastObservedAt); tests of records
// observed again set it themselves.
func norm(r store.Record) store.Record {
	r.ObservedAt, r.PublishedAt, r.UpdatedAt = store.Millis(r.ObservedAt), store.Millis(r.PublishedAt), store.Millis(r.UpdatedAt)
	if r.LastObservedAt.IsZero() {
		r.LastObservedAt = r.ObservedAt
	}
	r.LastObservedAt = store.Millis(r.LastObservedAt)
	return r
}

// seen is what a read returns for a record observed again, last at last.
func seen(r store.Record, last time.Time) store.Record {
	r.LastObservedAt = last
	return norm(r)
}

func normAll(rs []store.Record) []store.Record {
	out := make([]store.Record, len(rs))
	for i, r := range rs {
		out[i] = norm(r)
	}
	return out
}

func normEvent(e schema.DriftEvent) schema.DriftEvent {
	e.ObservedAt = store.Millis(e.ObservedAt)
	return e
}

// show prints v with long strings shortened, for failure messages.
func show(v any) string {
	s := fmt.Sprintf("%+v", v)
	if len(s) > 2000 {
		return s[:1000] + fmt.Sprintf(" …(%d bytes)… ", len(s)-2000) + s[len(s)-1000:]
	}
	return s
}

func equal[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got  %s\n want %s", what, show(got), show(want))
	}
}

func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func insertRecords(t *testing.T, s store.Store, recs ...store.Record) {
	t.Helper()
	must(t, "InsertRecords", s.InsertRecords(ctx(t), recs))
}

func listAll(t *testing.T, s store.Store, q store.ListQuery) []store.ServerRow {
	t.Helper()
	rows, err := s.ListServers(ctx(t), q)
	must(t, "ListServers", err)
	return rows
}

func versions(t *testing.T, s store.Store, name string) []store.Record {
	t.Helper()
	rs, err := s.Versions(ctx(t), name, 0)
	must(t, "Versions", err)
	return rs
}

func getServer(t *testing.T, s store.Store, name string) store.Record {
	t.Helper()
	r, err := s.GetServer(ctx(t), name)
	must(t, "GetServer "+name, err)
	return r.Record
}

func counts(t *testing.T, s store.Store) map[string]int64 {
	t.Helper()
	c, err := s.Counts(ctx(t))
	must(t, "Counts", err)
	return c
}

// snapshotReads captures every read, to compare states.
type snapshotReads struct {
	Servers   []store.ServerRow
	Versions  map[string][]store.Record
	Events    []schema.DriftEvent
	EvCounts  map[string]int64
	Snapshots []schema.SnapshotSummary
	DLQ       []schema.DLQMessage
	Counts    map[string]int64
}

func readAll(t *testing.T, s store.Store) snapshotReads {
	t.Helper()
	var r snapshotReads
	r.Servers = listAll(t, s, store.ListQuery{Limit: store.MaxListLimit})
	r.Versions = map[string][]store.Record{}
	for _, sv := range r.Servers {
		r.Versions[sv.Name] = versions(t, s, sv.Name)
	}
	var err error
	r.Events, err = s.Events(ctx(t), store.EventQuery{Limit: store.MaxEventLimit})
	must(t, "Events", err)
	r.EvCounts, err = s.EventCounts(ctx(t))
	must(t, "EventCounts", err)
	r.Snapshots, err = s.Snapshots(ctx(t))
	must(t, "Snapshots", err)
	r.DLQ, err = s.DLQ(ctx(t), store.MaxEventLimit)
	must(t, "DLQ", err)
	r.Counts = counts(t, s)
	return r
}

// optimize forces merges when the store can, then checks reads are unchanged.
func optimize(t *testing.T, s store.Store) {
	t.Helper()
	o, ok := s.(Optimizer)
	if !ok {
		return
	}
	before := readAll(t, s)
	must(t, "Optimize", o.Optimize(ctx(t)))
	equal(t, "reads after Optimize", readAll(t, s), before)
}

var allTables = []string{"registry_records", "servers_latest", "drift_events", "snapshots", "dlq", "health_checks", "provenance", "publications"}

func zeroCounts() map[string]int64 {
	m := map[string]int64{}
	for _, tb := range allTables {
		m[tb] = 0
	}
	return m
}

func testMigrate(t *testing.T, s store.Store) {
	must(t, "second Migrate", s.Migrate(ctx(t)))
	must(t, "Ping", s.Ping(ctx(t)))
	equal(t, "counts of a new store", counts(t, s), zeroCounts())
	insertRecords(t, s, rec("a/x", "1", "h1", at(0), true))
	must(t, "Migrate on a used store", s.Migrate(ctx(t)))
	equal(t, "servers after re-Migrate", len(listAll(t, s, store.ListQuery{})), 1)
}

func testRecordRoundTrip(t *testing.T, s store.Store) {
	long := strings.Repeat("long description ✓ ", 100*1024/20+1)[:100*1024+3] // 100 KiB, cut mid-rune is not allowed:
	for !utf8Valid(long) {
		long = long[:len(long)-1]
	}
	cases := []store.Record{
		rec("io.github.x/plain", "1.0.0", "sha-plain", at(0), true),
		func() store.Record {
			r := rec("io.github.ünï/cödé-日本語", "2.0.0-β", "sha-unicode", at(time.Second), true)
			r.Description = "emoji 🚀, quotes ' \" `, backslash \\ , NUL-free, newline\nand tab\t"
			r.Title = "タイトル"
			r.Server = `{"name":"io.github.ünï/cödé-日本語","description":"🚀"}`
			r.Status = "deprecated"
			return r
		}(),
		func() store.Record {
			r := rec("empty/strings", "", "sha-empty", at(2*time.Second), true)
			r.Description, r.Title, r.Server, r.SnapshotID = "", "", "", ""
			r.PublishedAt, r.UpdatedAt = time.Time{}, time.Time{}
			return r
		}(),
		func() store.Record {
			r := rec("nonamespace", "3", "sha-long", at(3*time.Second), true)
			r.Description = long
			r.Server = `{"description":"` + long + `"}`
			return r
		}(),
		rec("not/latest", "0.1", "sha-nl", at(4*time.Second), false),
	}
	insertRecords(t, s, cases...)
	for _, want := range cases {
		got := versions(t, s, want.Name)
		equal(t, "Versions("+want.Name+")", got, []store.Record{norm(want)})
		if len(got) == 1 && len(got[0].Description) != len(want.Description) {
			t.Errorf("description of %s: %d bytes, want %d", want.Name, len(got[0].Description), len(want.Description))
		}
		if !want.IsLatest {
			continue
		}
		equal(t, "GetServer("+want.Name+")", getServer(t, s, want.Name), norm(want))
	}
	if _, err := s.GetServer(ctx(t), "not/latest"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetServer of a server without a latest record: err = %v, want ErrNotFound", err)
	}
	rows := listAll(t, s, store.ListQuery{})
	var names []string
	for _, r := range rows {
		names = append(names, r.Name)
	}
	equal(t, "ListServers names", names, []string{"empty/strings", "io.github.x/plain", "io.github.ünï/cödé-日本語", "nonamespace"})
	r := getServer(t, s, "empty/strings")
	if !r.PublishedAt.IsZero() || !r.UpdatedAt.IsZero() {
		t.Errorf("zero times came back as %v / %v", r.PublishedAt, r.UpdatedAt)
	}
	if r.ObservedAt.Location() != time.UTC {
		t.Errorf("ObservedAt location = %v, want UTC", r.ObservedAt.Location())
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

func testIdempotent(t *testing.T, s store.Store) {
	recs := []store.Record{
		rec("a/one", "1", "h1", at(0), false),
		rec("a/one", "2", "h2", at(0), true),
		rec("b/two", "1", "h3", at(time.Second), true),
	}
	evs := []schema.DriftEvent{ev("e1", "a/one", schema.KindNewServer, at(0)), ev("e2", "b/two", schema.KindNewServer, at(time.Second))}
	snaps := []schema.SnapshotSummary{snap("s1", at(0))}
	dlqs := []schema.DLQMessage{dlqMsg("d1", at(0))}
	write := func() {
		insertRecords(t, s, recs...)
		must(t, "InsertEvents", s.InsertEvents(ctx(t), evs))
		must(t, "InsertSnapshots", s.InsertSnapshots(ctx(t), snaps))
		must(t, "InsertDLQ", s.InsertDLQ(ctx(t), dlqs))
	}
	write()
	once := readAll(t, s)
	equal(t, "counts after one write", once.Counts, map[string]int64{
		"registry_records": 3, "servers_latest": 2, "drift_events": 2, "snapshots": 1, "dlq": 1, "health_checks": 0, "provenance": 0, "publications": 0})
	write()
	equal(t, "reads after a second identical write", readAll(t, s), once)
	// The same rows twice within one batch.
	insertRecords(t, s, append(append([]store.Record{}, recs...), recs...)...)
	must(t, "InsertEvents", s.InsertEvents(ctx(t), append(append([]schema.DriftEvent{}, evs...), evs...)))
	must(t, "InsertDLQ", s.InsertDLQ(ctx(t), append(append([]schema.DLQMessage{}, dlqs...), dlqs...)))
	must(t, "InsertSnapshots", s.InsertSnapshots(ctx(t), append(append([]schema.SnapshotSummary{}, snaps...), snaps...)))
	equal(t, "reads after duplicated batches", readAll(t, s), once)
	optimize(t, s)
	equal(t, "reads after optimize", readAll(t, s), once)
	// Empty batches are no-ops.
	insertRecords(t, s)
	must(t, "InsertEvents(nil)", s.InsertEvents(ctx(t), nil))
	must(t, "InsertSnapshots(nil)", s.InsertSnapshots(ctx(t), nil))
	must(t, "InsertDLQ(nil)", s.InsertDLQ(ctx(t), nil))
	equal(t, "reads after empty batches", readAll(t, s), once)
}

func testEarliestObserved(t *testing.T, s store.Store) {
	// Later observation first, earlier second (separate batches).
	late := rec("a/x", "1", "h", at(2*time.Hour), false)
	early := rec("a/x", "1", "h", at(time.Hour), false)
	insertRecords(t, s, late)
	insertRecords(t, s, early)
	insertRecords(t, s, rec("a/x", "1", "h", at(3*time.Hour), false))
	// The row keeps its earliest observation and its latest one.
	equal(t, "separate batches", versions(t, s, "a/x"), []store.Record{seen(early, at(3*time.Hour))})

	// Within one batch, in either order.
	b1 := rec("b/y", "1", "h", at(2*time.Hour), false)
	b0 := rec("b/y", "1", "h", at(time.Hour), false)
	insertRecords(t, s, b1, b0, b1)
	equal(t, "one batch", versions(t, s, "b/y"), []store.Record{seen(b0, b1.ObservedAt)})

	// Same content, same ms, different snapshots: the later write wins.
	c1 := rec("c/z", "1", "h", at(time.Hour), false)
	c2 := c1
	c2.SnapshotID = "snap-other"
	c2.ObservedAt = c1.ObservedAt.Add(300 * time.Microsecond) // same millisecond
	insertRecords(t, s, c1)
	insertRecords(t, s, c2)
	equal(t, "tie, later write", versions(t, s, "c/z"), []store.Record{norm(c2)})

	// A new content of the same version is a new row.
	d := rec("a/x", "1", "h-changed", at(4*time.Hour), false)
	insertRecords(t, s, d)
	equal(t, "new content", versions(t, s, "a/x"), []store.Record{norm(d), seen(early, at(3*time.Hour))})
	equal(t, "registry_records count", counts(t, s)["registry_records"], int64(4))
	optimize(t, s)
	equal(t, "after optimize", versions(t, s, "a/x"), []store.Record{norm(d), seen(early, at(3*time.Hour))})
	equal(t, "tie after optimize", versions(t, s, "c/z"), []store.Record{norm(c2)})
}

func testLatestView(t *testing.T, s store.Store) {
	pub := func(r store.Record, p time.Time) store.Record { r.PublishedAt = p; return r }
	cases := []struct {
		name    string
		batches [][]store.Record
		want    store.Record // only Version and ContentSHA256 and ObservedAt are compared… and the rest via norm
	}{
		{
			name: "newer observation wins",
			batches: [][]store.Record{
				{rec("n1", "1.0.0", "a", at(0), true)},
				{rec("n1", "1.1.0", "b", at(time.Hour), true)},
			},
			want: rec("n1", "1.1.0", "b", at(time.Hour), true),
		},
		{
			name: "older observation arriving later is ignored",
			batches: [][]store.Record{
				{rec("n2", "1.1.0", "b", at(time.Hour), true)},
				{rec("n2", "1.0.0", "a", at(0), true)},
			},
			want: rec("n2", "1.1.0", "b", at(time.Hour), true),
		},
		{
			name: "same content re-observed moves observed_at",
			batches: [][]store.Record{
				{rec("n3", "1", "a", at(0), true)},
				{rec("n3", "1", "a", at(time.Hour), true)},
				{rec("n3", "1", "a", at(30*time.Minute), true)},
			},
			want: rec("n3", "1", "a", at(time.Hour), true),
		},
		{
			name: "tie on observed: later published wins",
			batches: [][]store.Record{
				{pub(rec("n4", "2", "b", at(0), true), at(-time.Hour))},
				{pub(rec("n4", "1", "a", at(0), true), at(-time.Minute))},
				{pub(rec("n4", "3", "c", at(0), true), at(-2*time.Hour))},
			},
			want: pub(rec("n4", "1", "a", at(0), true), at(-time.Minute)),
		},
		{
			name: "tie on observed and published: greater version wins (bytewise)",
			batches: [][]store.Record{
				{pub(rec("n5", "1.9.0", "a", at(0), true), at(-time.Hour))},
				{pub(rec("n5", "1.10.0", "b", at(0), true), at(-time.Hour))},
			},
			want: pub(rec("n5", "1.9.0", "a", at(0), true), at(-time.Hour)),
		},
		{
			name: "tie on observed, published and version: greater content hash wins",
			batches: [][]store.Record{
				{rec("n6", "1", "bbb", at(0), true)},
				{rec("n6", "1", "aaa", at(0), true)},
			},
			want: rec("n6", "1", "bbb", at(0), true),
		},
		{
			name: "same batch, any order",
			batches: [][]store.Record{
				{rec("n7", "3", "c", at(2*time.Hour), true), rec("n7", "1", "a", at(0), true), rec("n7", "2", "b", at(time.Hour), true)},
			},
			want: rec("n7", "3", "c", at(2*time.Hour), true),
		},
		{
			name: "records not marked latest never update the view",
			batches: [][]store.Record{
				{rec("n8", "1", "a", at(0), true)},
				{rec("n8", "2", "b", at(time.Hour), false)},
			},
			want: rec("n8", "1", "a", at(0), true),
		},
		{
			name: "complete tie: the later write wins",
			batches: [][]store.Record{
				{rec("n9", "1", "a", at(0), true)},
				func() []store.Record {
					r := rec("n9", "1", "a", at(0), true)
					r.SnapshotID = "snap-second"
					return []store.Record{r}
				}(),
			},
			want: func() store.Record {
				r := rec("n9", "1", "a", at(0), true)
				r.SnapshotID = "snap-second"
				return r
			}(),
		},
	}
	for _, c := range cases {
		for _, b := range c.batches {
			insertRecords(t, s, b...)
		}
	}
	check := func(phase string) {
		for _, c := range cases {
			equal(t, phase+": "+c.name, getServer(t, s, c.want.Name), norm(c.want))
		}
		equal(t, phase+": servers_latest count", counts(t, s)["servers_latest"], int64(len(cases)))
	}
	check("before optimize")
	optimize(t, s)
	check("after optimize")
	// Replaying everything (at-least-once) changes nothing.
	for _, c := range cases {
		for _, b := range c.batches {
			insertRecords(t, s, b...)
		}
	}
	check("after replay")
}

func testListServersPaging(t *testing.T, s store.Store) {
	var recs []store.Record
	var all, nsB []string
	for i := 0; i < 25; i++ {
		ns := "a"
		if i%3 == 0 {
			ns = "b"
		}
		name := fmt.Sprintf("%s/srv-%02d", ns, i)
		recs = append(recs, rec(name, "1", "h", at(time.Duration(i)*time.Second), true))
		all = append(all, name)
		if ns == "b" {
			nsB = append(nsB, name)
		}
	}
	recs = append(recs, rec("ab/other", "1", "h", at(0), true), rec("c/notlatest", "1", "h", at(0), false))
	all = append(all, "ab/other")
	sort.Strings(all)
	insertRecords(t, s, recs...)

	page := func(q store.ListQuery) []string {
		var names []string
		for i := 0; i < 100; i++ {
			rows := listAll(t, s, q)
			if len(rows) > q.Limit && q.Limit > 0 {
				t.Fatalf("page of %d rows with limit %d", len(rows), q.Limit)
			}
			for _, r := range rows {
				names = append(names, r.Name)
			}
			if len(rows) < q.Limit || len(rows) == 0 {
				return names
			}
			q.Cursor = rows[len(rows)-1].Name
		}
		t.Fatal("paging does not end")
		return nil
	}
	equal(t, "all pages, limit 10", page(store.ListQuery{Limit: 10}), all)
	equal(t, "all pages, limit 1", page(store.ListQuery{Limit: 1}), all)
	equal(t, "namespace b, limit 4", page(store.ListQuery{Namespace: "b", Limit: 4}), nsB)
	equal(t, "namespace ab", page(store.ListQuery{Namespace: "ab", Limit: 10}), []string{"ab/other"})
	equal(t, "unknown namespace", len(listAll(t, s, store.ListQuery{Namespace: "zz", Limit: 10})), 0)
	equal(t, "limit 0 means the default", len(listAll(t, s, store.ListQuery{})), len(all))
	equal(t, "limit above max is capped", len(listAll(t, s, store.ListQuery{Limit: 1 << 30})), len(all))
	equal(t, "cursor past the end", len(listAll(t, s, store.ListQuery{Cursor: "zzz", Limit: 10})), 0)
	rows := listAll(t, s, store.ListQuery{Cursor: "a/srv-05", Limit: 2})
	if len(rows) != 2 || rows[0].Name != "a/srv-07" || rows[1].Name != "a/srv-08" {
		t.Errorf("cursor a/srv-05: got %s", show(rows))
	}
	rows = listAll(t, s, store.ListQuery{Cursor: "a/srv-05", Namespace: "b", Limit: 2})
	if len(rows) != 2 || rows[0].Name != "b/srv-00" {
		t.Errorf("cursor a/srv-05 in namespace b: got %s", show(rows))
	}
}

func testNotFound(t *testing.T, s store.Store) {
	if _, err := s.GetServer(ctx(t), "no/such"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetServer on an empty store: err = %v, want ErrNotFound", err)
	}
	insertRecords(t, s, rec("some/server", "1", "h", at(0), true))
	if _, err := s.GetServer(ctx(t), "no/such"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetServer of an unknown name: err = %v, want ErrNotFound", err)
	}
	if _, err := s.GetServer(ctx(t), "some/serve"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetServer of a name prefix: err = %v, want ErrNotFound", err)
	}
	if _, err := s.GetServer(ctx(t), "some/server"); err != nil {
		t.Errorf("GetServer of a stored name: %v", err)
	}
	vs, err := s.Versions(ctx(t), "no/such", 10)
	must(t, "Versions", err)
	equal(t, "versions of an unknown server", len(vs), 0)
	evs, err := s.Events(ctx(t), store.EventQuery{Server: "no/such"})
	must(t, "Events", err)
	equal(t, "events of an unknown server", len(evs), 0)
}

func testVersions(t *testing.T, s store.Store) {
	v1 := rec("a/v", "1.0.0", "h1", at(0), false)
	v2 := rec("a/v", "1.1.0", "h2", at(time.Hour), false)
	v2b := rec("a/v", "1.1.0", "h2b", at(2*time.Hour), true) // same version, new content
	v3 := rec("a/v", "2.0.0", "h3", at(2*time.Hour), false)  // tie on observed: version DESC
	other := rec("a/vv", "9", "h9", at(5*time.Hour), true)
	insertRecords(t, s, v1, v3, other)
	insertRecords(t, s, v2b, v2)
	want := normAll([]store.Record{v3, v2b, v2, v1})
	equal(t, "Versions newest first", versions(t, s, "a/v"), want)
	got, err := s.Versions(ctx(t), "a/v", 2)
	must(t, "Versions limit 2", err)
	equal(t, "Versions limit 2", got, want[:2])
	optimize(t, s)
	equal(t, "Versions after optimize", versions(t, s, "a/v"), want)
}

// testVersionFlags: a version's flags come from its most recent sighting.
// An incremental crawl re-observes the old latest with isLatest=false (a new
// row, since the content hash covers the flag) beside the new latest; later
// the old version becomes latest again (re-sighted with the content it was
// first seen with) and the newer one is deprecated. Versions never shows two
// latest versions, agrees with the latest view, and the as-of rule
// (LatestAsOf) gives what was latest at each time — whatever the batching,
// the arrival order and the merges.
func testVersionFlags(t *testing.T, s store.Store) {
	const name = "io.github.acme/flags"
	t0, t1, t2, t3 := at(0), at(24*time.Hour), at(48*time.Hour), at(72*time.Hour)
	v := func(version, sha string, observed time.Time, latest bool, status string) store.Record {
		r := rec(name, version, sha, observed, latest)
		r.PublishedAt = map[string]time.Time{"1.0.0": at(-time.Hour), "2.0.0": at(23 * time.Hour)}[version]
		r.Status = status
		return r
	}
	crawls := [][]store.Record{
		{v("1.0.0", "v1-latest", t0, true, "active")},
		{v("1.0.0", "v1-demoted", t1, false, "active"), v("2.0.0", "v2-latest", t1, true, "active")},
		{v("1.0.0", "v1-latest", t2, true, "active"), v("2.0.0", "v2-deprecated", t2, false, "deprecated")},
		{v("1.0.0", "v1-latest", t3, true, "active"), v("2.0.0", "v2-deprecated", t3, false, "deprecated")}, // unchanged
	}
	type want struct {
		latest   string            // the version served as latest ("" for none)
		statuses map[string]string // version -> status served on each of its rows
	}
	check := func(phase string, upTo int, w want) {
		t.Helper()
		vs := versions(t, s, name)
		latest := []string{}
		for _, r := range vs {
			if r.IsLatest {
				latest = append(latest, r.Version+"/"+r.ContentSHA256)
			}
			if st := w.statuses[r.Version]; st != "" && r.Status != st {
				t.Errorf("%s: %s/%s status %q, want %q (the version's most recent sighting)", phase, r.Version, r.ContentSHA256, r.Status, st)
			}
		}
		if len(latest) != 1 || !strings.HasPrefix(latest[0], w.latest+"/") {
			t.Errorf("%s: Versions marks %v latest, want only %s", phase, latest, w.latest)
		}
		if got := getServer(t, s, name).Version; got != w.latest {
			t.Errorf("%s: the latest view serves %s, Versions %s", phase, got, w.latest)
		}
		// The as-of rule at each crawl and between them.
		asOf := []struct {
			t    time.Time
			want string
		}{{t0, "1.0.0"}, {t0.Add(time.Hour), "1.0.0"}, {t1, "2.0.0"}, {t1.Add(time.Hour), "2.0.0"}, {t2, "1.0.0"},
			{t2.Add(time.Hour), "1.0.0"}, {t3, "1.0.0"}}
		for _, a := range asOf[:2*upTo+1] {
			got := ""
			must(t, "LatestAsOf", store.LatestAsOf(ctx(t), s, a.t, false, func(r store.Record) error {
				if r.Name == name {
					got = r.Version
				}
				return nil
			}))
			if got != a.want {
				t.Errorf("%s: latest as of %s is %q, want %s", phase, a.t.UTC().Format(time.RFC3339), got, a.want)
			}
		}
	}
	// Crawl by crawl.
	insertRecords(t, s, crawls[0]...)
	check("first crawl", 0, want{"1.0.0", map[string]string{"1.0.0": "active"}})
	insertRecords(t, s, crawls[1]...)
	after1 := want{"2.0.0", map[string]string{"1.0.0": "active", "2.0.0": "active"}}
	check("incremental crawl: new latest", 1, after1)
	optimize(t, s)
	check("new latest, after optimize", 1, after1)
	insertRecords(t, s, crawls[2]...)
	after2 := want{"1.0.0", map[string]string{"1.0.0": "active", "2.0.0": "deprecated"}}
	check("old version latest again", 2, after2)
	optimize(t, s)
	check("latest again, after optimize", 2, after2)
	insertRecords(t, s, crawls[3]...)
	check("re-observed unchanged", 3, after2)
	insertRecords(t, s, append(append(append(append([]store.Record{}, crawls[0]...), crawls[1]...), crawls[2]...), crawls[3]...)...)
	check("replayed in one batch", 3, after2)
	// The v1 content first seen at t0 was last seen at t3.
	for _, r := range versions(t, s, name) {
		if r.ContentSHA256 == "v1-latest" && (!r.ObservedAt.Equal(store.Millis(t0)) || !r.LastObservedAt.Equal(store.Millis(t3))) {
			t.Errorf("v1-latest sighted %v..%v, want %v..%v", r.ObservedAt, r.LastObservedAt, store.Millis(t0), store.Millis(t3))
		}
	}
}

// testVersionFlagsReversed is testVersionFlags' end state written in
// reverse (a late redelivery of older crawls): the same reads.
func testVersionFlagsReversed(t *testing.T, s store.Store) {
	const name = "io.github.acme/flags"
	t0, t1, t2 := at(0), at(24*time.Hour), at(48*time.Hour)
	v := func(version, sha string, observed time.Time, latest bool) store.Record {
		r := rec(name, version, sha, observed, latest)
		r.PublishedAt = map[string]time.Time{"1.0.0": at(-time.Hour), "2.0.0": at(23 * time.Hour)}[version]
		return r
	}
	insertRecords(t, s, v("1.0.0", "v1-latest", t2, true), v("2.0.0", "v2-demoted", t2, false))
	insertRecords(t, s, v("1.0.0", "v1-demoted", t1, false), v("2.0.0", "v2-latest", t1, true))
	insertRecords(t, s, v("1.0.0", "v1-latest", t0, true))
	for _, phase := range []string{"written newest first", "after optimize"} {
		n, latest := 0, ""
		for _, r := range versions(t, s, name) {
			if r.IsLatest {
				n++
				latest = r.Version + "/" + r.ContentSHA256
			}
		}
		if n != 1 || latest != "1.0.0/v1-latest" {
			t.Errorf("%s: %d latest rows (%s), want only 1.0.0/v1-latest", phase, n, latest)
		}
		optimize(t, s)
	}
}

func ev(id, server, kind string, t time.Time) schema.DriftEvent {
	return schema.DriftEvent{
		ID: id, Server: server, Namespace: schema.Namespace(server), Kind: kind, Version: "1.0." + id,
		Before: "before " + id, After: "after " + id, ObservedAt: t, VersionBump: len(id)%2 == 0, SnapshotID: "snap-" + id,
	}
}

func testEvents(t *testing.T, s store.Store) {
	evs := []schema.DriftEvent{
		ev("e3", "a/x", schema.KindDescriptionChanged, at(2*time.Second)),
		ev("e1", "a/x", schema.KindNewServer, at(0)),
		ev("e2", "b/y", schema.KindNewServer, at(time.Second)),
		ev("e4b", "b/y", schema.KindVersionAdded, at(3*time.Second)),
		ev("e4a", "a/x", schema.KindVersionAdded, at(3*time.Second)), // same time: by id
		ev("e5", "a/x", schema.KindRemoved, at(4*time.Second)),
	}
	evs[0].Before, evs[0].After = "", "ünïcödé 🚀\n"+strings.Repeat("x", 10000)
	must(t, "InsertEvents", s.InsertEvents(ctx(t), evs[:3]))
	must(t, "InsertEvents", s.InsertEvents(ctx(t), evs[3:]))
	byID := map[string]schema.DriftEvent{}
	for _, e := range evs {
		byID[e.ID] = normEvent(e)
	}
	pick := func(ids ...string) []schema.DriftEvent {
		var out []schema.DriftEvent
		for _, id := range ids {
			out = append(out, byID[id])
		}
		return out
	}
	cases := []struct {
		name string
		q    store.EventQuery
		want []schema.DriftEvent
	}{
		{"all, oldest first, ties by id", store.EventQuery{}, pick("e1", "e2", "e3", "e4a", "e4b", "e5")},
		{"server", store.EventQuery{Server: "a/x"}, pick("e1", "e3", "e4a", "e5")},
		{"kind", store.EventQuery{Kind: schema.KindNewServer}, pick("e1", "e2")},
		{"server and kind", store.EventQuery{Server: "b/y", Kind: schema.KindVersionAdded}, pick("e4b")},
		{"since is inclusive at ms", store.EventQuery{Since: store.Millis(at(2 * time.Second))}, pick("e3", "e4a", "e4b", "e5")},
		{"since between", store.EventQuery{Since: at(2*time.Second + time.Millisecond)}, pick("e4a", "e4b", "e5")},
		{"since in another zone", store.EventQuery{Since: at(3 * time.Second).In(time.FixedZone("Y", -7*3600))}, pick("e4a", "e4b", "e5")},
		{"limit", store.EventQuery{Limit: 2}, pick("e1", "e2")},
		{"limit with filters", store.EventQuery{Server: "a/x", Since: at(time.Second), Limit: 2}, pick("e3", "e4a")},
		{"no match", store.EventQuery{Kind: schema.KindTitleChanged}, nil},
		{"since after all", store.EventQuery{Since: at(time.Hour)}, nil},
	}
	run := func(phase string) {
		for _, c := range cases {
			got, err := s.Events(ctx(t), c.q)
			must(t, "Events "+c.name, err)
			if len(got) == 0 && len(c.want) == 0 {
				continue
			}
			equal(t, phase+": "+c.name, got, c.want)
		}
	}
	run("first write")
	must(t, "InsertEvents again", s.InsertEvents(ctx(t), evs))
	run("after replay")
	optimize(t, s)
	run("after optimize")

	ec, err := s.EventCounts(ctx(t))
	must(t, "EventCounts", err)
	equal(t, "EventCounts", ec, map[string]int64{
		schema.KindNewServer: 2, schema.KindDescriptionChanged: 1, schema.KindVersionAdded: 2, schema.KindRemoved: 1})
}

func testEventLastWriteWins(t *testing.T, s store.Store) {
	first := ev("same", "a/x", schema.KindTitleChanged, at(0))
	second := ev("same", "a/x", schema.KindStatusChanged, at(time.Second))
	second.After = "second"
	must(t, "InsertEvents", s.InsertEvents(ctx(t), []schema.DriftEvent{first}))
	must(t, "InsertEvents", s.InsertEvents(ctx(t), []schema.DriftEvent{second}))
	check := func(phase string) {
		got, err := s.Events(ctx(t), store.EventQuery{})
		must(t, "Events", err)
		equal(t, phase+": events", got, []schema.DriftEvent{normEvent(second)})
		got, err = s.Events(ctx(t), store.EventQuery{Kind: schema.KindTitleChanged})
		must(t, "Events", err)
		equal(t, phase+": filter on the overwritten kind", len(got), 0)
		ec, err := s.EventCounts(ctx(t))
		must(t, "EventCounts", err)
		equal(t, phase+": EventCounts", ec, map[string]int64{schema.KindStatusChanged: 1})
	}
	check("separate batches")
	optimize(t, s)
	check("after optimize")
	third := first
	third.ID = "other"
	must(t, "InsertEvents", s.InsertEvents(ctx(t), []schema.DriftEvent{third, second, first}))
	got, err := s.Events(ctx(t), store.EventQuery{})
	must(t, "Events", err)
	equal(t, "one batch: last of the batch wins", got, []schema.DriftEvent{normEvent(third), normEvent(first)})
}

func snap(id string, t time.Time) schema.SnapshotSummary {
	return schema.SnapshotSummary{
		ID: id, Mode: schema.ModeFull, Source: "https://registry.example/v0.1/servers?" + id, ObservedAt: t,
		Entries: 1000, Names: 900, KnownNames: 950, Rejects: 3, Partial: false, Events: 12,
		Counts: map[string]int{schema.KindNewServer: 10, schema.KindRemoved: 2},
	}
}

func testSnapshots(t *testing.T, s store.Store) {
	a := snap("s-a", at(time.Hour))
	b := snap("s-b", at(0))
	b.Mode, b.Partial, b.Counts, b.Source = schema.ModeIncremental, true, map[string]int{}, ""
	c := snap("s-c", at(2*time.Hour))
	c.Counts = nil
	d := snap("s-d", at(time.Hour)) // tie with a: by id
	d.Entries, d.Names, d.KnownNames, d.Rejects, d.Events = 1<<31+5, 0, 1, 0, 0
	must(t, "InsertSnapshots", s.InsertSnapshots(ctx(t), []schema.SnapshotSummary{a, b}))
	must(t, "InsertSnapshots", s.InsertSnapshots(ctx(t), []schema.SnapshotSummary{d, c, a}))
	norms := func(xs ...schema.SnapshotSummary) []schema.SnapshotSummary {
		for i := range xs {
			xs[i].ObservedAt = store.Millis(xs[i].ObservedAt)
		}
		return xs
	}
	got, err := s.Snapshots(ctx(t))
	must(t, "Snapshots", err)
	want := norms(b, a, d, c)
	equal(t, "Snapshots oldest first", got, want)
	// Last write wins on id.
	a2 := a
	a2.Events, a2.Counts = 99, map[string]int{schema.KindTitleChanged: 99}
	must(t, "InsertSnapshots", s.InsertSnapshots(ctx(t), []schema.SnapshotSummary{a2}))
	optimize(t, s)
	got, err = s.Snapshots(ctx(t))
	must(t, "Snapshots", err)
	equal(t, "Snapshots after overwrite", got, norms(b, a2, d, c))
	equal(t, "snapshots count", counts(t, s)["snapshots"], int64(4))
}

func dlqMsg(id string, t time.Time) schema.DLQMessage {
	return schema.DLQMessage{
		ID: id, Stage: "crawler", Source: "file.json", Reason: schema.ReasonMalformedJSON, Detail: "unexpected EOF at " + id,
		Key: "key-" + id, ObservedAt: t, Payload: `{"broken":` + id, PayloadBytes: 12345, PayloadSHA256: "sha-" + id,
	}
}

func testDLQ(t *testing.T, s store.Store) {
	m1 := dlqMsg("d1", at(time.Second))
	m2 := dlqMsg("d2", at(0))
	m2.Payload = "\x01 binaryish ünï 🚀 " + strings.Repeat("p", schema.MaxDLQPayload)
	m2.Key, m2.Detail = "", ""
	m3 := dlqMsg("d3", at(time.Second)) // tie with d1: by id
	m3.Reason = schema.ReasonNotJSON
	must(t, "InsertDLQ", s.InsertDLQ(ctx(t), []schema.DLQMessage{m1, m2}))
	must(t, "InsertDLQ", s.InsertDLQ(ctx(t), []schema.DLQMessage{m3, m1}))
	n := func(ms ...schema.DLQMessage) []schema.DLQMessage {
		for i := range ms {
			ms[i].ObservedAt = store.Millis(ms[i].ObservedAt)
		}
		return ms
	}
	got, err := s.DLQ(ctx(t), 0)
	must(t, "DLQ", err)
	equal(t, "DLQ oldest first", got, n(m2, m1, m3))
	got, err = s.DLQ(ctx(t), 2)
	must(t, "DLQ limit", err)
	equal(t, "DLQ limit 2", got, n(m2, m1))
	optimize(t, s)
	got, err = s.DLQ(ctx(t), 10)
	must(t, "DLQ", err)
	equal(t, "DLQ after optimize", got, n(m2, m1, m3))
	equal(t, "dlq count", counts(t, s)["dlq"], int64(3))
}

func testCounts(t *testing.T, s store.Store) {
	insertRecords(t, s,
		rec("a/1", "1", "h1", at(0), true),
		rec("a/1", "2", "h2", at(time.Hour), true),
		rec("a/1", "2", "h2", at(2*time.Hour), true), // same key: one row
		rec("a/2", "1", "h3", at(0), false),
		rec("b/3", "1", "h4", at(0), true),
	)
	must(t, "InsertEvents", s.InsertEvents(ctx(t), []schema.DriftEvent{ev("e1", "a/1", schema.KindNewServer, at(0)), ev("e2", "a/1", schema.KindVersionAdded, at(time.Hour))}))
	must(t, "InsertSnapshots", s.InsertSnapshots(ctx(t), []schema.SnapshotSummary{snap("s1", at(0)), snap("s2", at(time.Hour)), snap("s3", at(2*time.Hour))}))
	must(t, "InsertDLQ", s.InsertDLQ(ctx(t), []schema.DLQMessage{dlqMsg("d1", at(0))}))
	insertHealth(t, s,
		hc("h1", "a/1", "https://a.example/1", at(0), "ok"),
		hc("h2", "a/1", "https://a.example/2", at(0), "ok"),
		hc("h3", "b/3", "https://b.example/", at(time.Hour), "unreachable"),
		hc("h1", "a/1", "https://a.example/1", at(0), "unreachable"), // same id: one row
	)
	want := map[string]int64{"registry_records": 4, "servers_latest": 2, "drift_events": 2, "snapshots": 3, "dlq": 1, "health_checks": 3, "provenance": 0, "publications": 0}
	equal(t, "Counts", counts(t, s), want)
	optimize(t, s)
	equal(t, "Counts after optimize", counts(t, s), want)
}

func testTimes(t *testing.T, s store.Store) {
	cases := []struct {
		name string
		in   time.Time
		want time.Time
	}{
		{"sub-ms truncated, zone to UTC", time.Date(2024, 12, 31, 23, 59, 59, 999_999_999, time.FixedZone("Z", -3*3600)), time.Date(2025, 1, 1, 2, 59, 59, 999_000_000, time.UTC)},
		{"exact ms", time.Date(2025, 6, 1, 0, 0, 0, 1_000_000, time.UTC), time.Date(2025, 6, 1, 0, 0, 0, 1_000_000, time.UTC)},
		{"before 1970", time.Date(1969, 7, 20, 20, 17, 40, 500_700_000, time.UTC), time.Date(1969, 7, 20, 20, 17, 40, 500_000_000, time.UTC)},
		{"unix epoch", time.Unix(0, 0), time.Unix(0, 0).UTC()},
		{"far future", time.Date(2200, 1, 1, 0, 0, 0, 42_000_000, time.UTC), time.Date(2200, 1, 1, 0, 0, 0, 42_000_000, time.UTC)},
		{"with monotonic reading", time.Now(), store.Millis(time.Now())}, // want fixed below
	}
	now := time.Now()
	cases[len(cases)-1].in, cases[len(cases)-1].want = now, time.UnixMilli(now.UnixMilli()).UTC()
	for i, c := range cases {
		name := fmt.Sprintf("t/%d", i)
		r := rec(name, "1", "h", c.in, true)
		r.PublishedAt, r.UpdatedAt = c.in, c.in
		insertRecords(t, s, r)
		must(t, "InsertEvents", s.InsertEvents(ctx(t), []schema.DriftEvent{ev(name, name, schema.KindNewServer, c.in)}))
		must(t, "InsertDLQ", s.InsertDLQ(ctx(t), []schema.DLQMessage{dlqMsg(name, c.in)}))
		must(t, "InsertSnapshots", s.InsertSnapshots(ctx(t), []schema.SnapshotSummary{snap(name, c.in)}))
		g := getServer(t, s, name)
		for what, got := range map[string]time.Time{"ObservedAt": g.ObservedAt, "PublishedAt": g.PublishedAt, "UpdatedAt": g.UpdatedAt} {
			if !got.Equal(c.want) || got.Location() != time.UTC {
				t.Errorf("%s: record %s = %v, want %v UTC", c.name, what, got, c.want)
			}
		}
		evs, err := s.Events(ctx(t), store.EventQuery{Server: name})
		must(t, "Events", err)
		if len(evs) != 1 || !evs[0].ObservedAt.Equal(c.want) || evs[0].ObservedAt.Location() != time.UTC {
			t.Errorf("%s: event times %s, want %v", c.name, show(evs), c.want)
		}
	}
	dl, err := s.DLQ(ctx(t), 100)
	must(t, "DLQ", err)
	sn, err := s.Snapshots(ctx(t))
	must(t, "Snapshots", err)
	if len(dl) != len(cases) || len(sn) != len(cases) {
		t.Fatalf("got %d dlq, %d snapshots, want %d each", len(dl), len(sn), len(cases))
	}
	// Both are ordered by time; the cases sorted by want give the expected order.
	sorted := append(cases[:0:0], cases...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].want.Before(sorted[j].want) })
	for i, c := range sorted {
		if !dl[i].ObservedAt.Equal(c.want) || dl[i].ObservedAt.Location() != time.UTC {
			t.Errorf("%s: dlq time %v, want %v", c.name, dl[i].ObservedAt, c.want)
		}
		if !sn[i].ObservedAt.Equal(c.want) || sn[i].ObservedAt.Location() != time.UTC {
			t.Errorf("%s: snapshot time %v, want %v", c.name, sn[i].ObservedAt, c.want)
		}
	}
}

func testQuery(t *testing.T, s store.Store) {
	q, ok := s.(store.Querier)
	if !ok {
		t.Skip("store does not implement store.Querier")
	}
	must(t, "InsertDLQ", s.InsertDLQ(ctx(t), []schema.DLQMessage{dlqMsg("d1", at(0)), dlqMsg("d2", at(time.Second))}))
	insertRecords(t, s, rec("a/x", "1", "h", at(0), true))

	cols, rows, err := q.Query(ctx(t), "SELECT id, reason FROM dlq WHERE id = ? ORDER BY id", "d2")
	must(t, "Query SELECT", err)
	equal(t, "columns", cols, []string{"id", "reason"})
	if len(rows) != 1 || fmt.Sprint(rows[0]...) != fmt.Sprint("d2", schema.ReasonMalformedJSON) {
		t.Errorf("rows = %s", show(rows))
	}
	cols, rows, err = q.Query(ctx(t), "  -- a comment\n  select count(*) AS n from servers_latest ; ")
	must(t, "Query select with comment and semicolon", err)
	if len(cols) != 1 || len(rows) != 1 || fmt.Sprint(rows[0][0]) != "1" {
		t.Errorf("count query: cols %v rows %s", cols, show(rows))
	}
	_, rows, err = q.Query(ctx(t), "SELECT 'a;b' AS x")
	must(t, "Query with a semicolon in a string", err)
	if len(rows) != 1 || fmt.Sprint(rows[0][0]) != "a;b" {
		t.Errorf("string literal query rows %s", show(rows))
	}

	before := counts(t, s)
	refused := []string{
		"INSERT INTO dlq (id, stage, source, reason, detail, key, observed_at, payload, payload_bytes, payload_sha256) SELECT id, stage, source, reason, detail, key, observed_at, payload, payload_bytes, payload_sha256 FROM dlq",
		"DROP TABLE dlq",
		"delete from dlq",
		"SELECT 1; DROP TABLE dlq",
		"SELECT 1; -- fine\n DROP TABLE dlq",
		"TRUNCATE TABLE dlq",
		"ALTER TABLE dlq DELETE WHERE 1",
		"CREATE TABLE x (a Int64)",
		"/* sneaky */ DROP TABLE dlq",
		// Passes the keyword check on engines that parse it: the engine must refuse it.
		"WITH x AS (SELECT 1 AS a) INSERT INTO dlq (id, stage, source, reason, detail, key, observed_at, payload, payload_bytes, payload_sha256) SELECT id || '-copy', stage, source, reason, detail, key, observed_at, payload, payload_bytes, payload_sha256 FROM dlq",
		"",
		"   ",
	}
	for _, sql := range refused {
		if _, _, err := q.Query(ctx(t), sql); err == nil {
			t.Errorf("Query(%q) was allowed", sql)
		}
	}
	if _, _, err := q.Query(ctx(t), "DROP TABLE dlq"); !errors.Is(err, store.ErrNotReadOnly) {
		t.Errorf("Query(DROP): err = %v, want ErrNotReadOnly", err)
	}
	equal(t, "counts after refused queries", counts(t, s), before)
	got, err := s.DLQ(ctx(t), 10)
	must(t, "DLQ", err)
	equal(t, "dlq rows after refused queries", len(got), 2)
}

// testVersionHistories: the many-server read (store.HistoriesReader) is
// VersionHistory of each name, and LatestAsOf answers the same through it
// as one server at a time.
func testVersionHistories(t *testing.T, s store.Store) {
	hr, ok := s.(store.HistoriesReader)
	if !ok {
		t.Fatalf("%T reads no histories in bulk (store.HistoriesReader)", s)
	}
	var names []string
	for i := range 7 {
		name := fmt.Sprintf("io.github.many/s%d", i)
		names = append(names, name)
		for v := range i + 1 { // server i has i+1 versions, one a day
			latest := v == i
			insertRecords(t, s, rec(name, fmt.Sprintf("1.%d.0", v), fmt.Sprintf("sha-%d-%d", i, v), at(time.Duration(v)*24*time.Hour), latest))
		}
	}
	got, err := hr.VersionHistories(ctx(t), append(slices.Clone(names), "io.github.many/unknown"))
	must(t, "VersionHistories", err)
	type histReader interface {
		VersionHistory(ctx context.Context, name string) ([]store.Record, error)
	}
	one := s.(histReader)
	for _, n := range names {
		want, err := one.VersionHistory(ctx(t), n)
		must(t, "VersionHistory", err)
		if !reflect.DeepEqual(got[n], want) {
			t.Errorf("%s: VersionHistories %d rows, VersionHistory %d (or they differ)", n, len(got[n]), len(want))
		}
	}
	if len(got["io.github.many/unknown"]) != 0 {
		t.Errorf("an unknown name has history: %v", got["io.github.many/unknown"])
	}
	// LatestAsOf through the bulk read equals the per-server reads.
	for _, d := range []time.Duration{0, 36 * time.Hour, 100 * time.Hour} {
		asOf := at(d)
		var bulk, each []string
		must(t, "LatestAsOf", store.LatestAsOf(ctx(t), s, asOf, false, func(r store.Record) error {
			bulk = append(bulk, r.Name+"@"+r.Version)
			return nil
		}))
		must(t, "LatestAsOf", store.LatestAsOf(ctx(t), oneAtATime{s.(store.AsOfReader)}, asOf, false, func(r store.Record) error {
			each = append(each, r.Name+"@"+r.Version)
			return nil
		}))
		if !slices.Equal(bulk, each) || len(bulk) == 0 {
			t.Errorf("as of +%s: bulk %v, one at a time %v", d, bulk, each)
		}
	}
}

// oneAtATime hides a store's HistoriesReader.
type oneAtATime struct{ store.AsOfReader }
