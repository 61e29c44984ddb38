package storetest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/store"
)

// RunBulk is the conformance suite of store.BulkReader: AllLatest,
// AllVersions and AllEvents equal what ListServers, Versions and Events
// return per server (before and after replays and Optimize), a callback
// error stops the stream and is returned, and ChangeMarker changes after
// each kind of write the read models see and not otherwise. open is as for
// Run; the store must implement store.BulkReader (and store.TrustStore and
// store.ResultStore, whose writes the marker test makes).
func RunBulk(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		f    func(t *testing.T, s store.Store, b store.BulkReader)
	}{
		{"Empty", testBulkEmpty},
		{"MatchesPerServerReads", testBulkMatches},
		{"CallbackError", testBulkCallbackError},
		{"ChangeMarker", testChangeMarker},
	}
	for _, tt := range tests {
		t.Run("Bulk/"+tt.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			b, ok := s.(store.BulkReader)
			if !ok {
				t.Fatalf("%T does not implement store.BulkReader", s)
			}
			must(t, "Migrate", s.Migrate(ctx(t)))
			tt.f(t, s, b)
		})
	}
}

// bulkReads is everything the BulkReader returns.
type bulkReads struct {
	Latest   []store.Record
	Versions []store.Record
	Events   []schema.DriftEvent
}

func readBulk(t *testing.T, b store.BulkReader) bulkReads {
	t.Helper()
	var r bulkReads
	var err error
	r.Latest, err = b.AllLatest(ctx(t))
	must(t, "AllLatest", err)
	must(t, "AllVersions", b.AllVersions(ctx(t), func(x store.Record) error { r.Versions = append(r.Versions, x); return nil }))
	must(t, "AllEvents", b.AllEvents(ctx(t), func(e schema.DriftEvent) error { r.Events = append(r.Events, e); return nil }))
	return r
}

// perServer is what the per-server reads return, in the bulk orders: the
// latest view paged through ListServers, and Versions (the server object
// cleared, as AllVersions leaves it) and Events of every name, by name.
func perServer(t *testing.T, s store.Store, names []string) bulkReads {
	t.Helper()
	var r bulkReads
	q := store.ListQuery{Limit: 7} // several pages
	for {
		page := listAll(t, s, q)
		for _, p := range page {
			r.Latest = append(r.Latest, p.Record)
		}
		if len(page) < q.Limit {
			break
		}
		q.Cursor = page[len(page)-1].Name
	}
	for _, n := range names {
		vs, err := s.Versions(ctx(t), n, store.MaxEventLimit)
		must(t, "Versions", err)
		for _, v := range vs {
			v.Server = ""
			r.Versions = append(r.Versions, v)
		}
		evs, err := s.Events(ctx(t), store.EventQuery{Server: n, Limit: store.MaxEventLimit})
		must(t, "Events", err)
		r.Events = append(r.Events, evs...)
	}
	return r
}

// checkBulkReads compares the bulk reads with the per-server reads and with
// the row counts (so a server missing from both would still show).
func checkBulkReads(t *testing.T, s store.Store, b store.BulkReader, names []string, phase string) bulkReads {
	t.Helper()
	got := readBulk(t, b)
	want := perServer(t, s, names)
	equal(t, phase+": AllLatest vs ListServers", got.Latest, want.Latest)
	equal(t, phase+": AllVersions vs Versions per server", got.Versions, want.Versions)
	equal(t, phase+": AllEvents vs Events per server", got.Events, want.Events)
	c := counts(t, s)
	equal(t, phase+": rows", [3]int64{int64(len(got.Latest)), int64(len(got.Versions)), int64(len(got.Events))},
		[3]int64{c["servers_latest"], c["registry_records"], c["drift_events"]})
	return got
}

func testBulkEmpty(t *testing.T, s store.Store, b store.BulkReader) {
	got := readBulk(t, b)
	if got.Latest == nil || len(got.Latest) != 0 || len(got.Versions) != 0 || len(got.Events) != 0 {
		t.Errorf("bulk reads of an empty store = %s, want an empty non-nil AllLatest and no callbacks", show(got))
	}
}

func testBulkMatches(t *testing.T, s store.Store, b store.BulkReader) {
	rng := rand.New(rand.NewPCG(3, 4))
	names := []string{"io.github.ünï/cödé", "Z.example/upper", "a.example/one", "a.example/one-two", "a.example/on",
		"nolatest.example/x"}
	for i := range 40 {
		names = append(names, fmt.Sprintf("io.github.n%02d/srv", i))
	}
	var recs []store.Record
	var evs []schema.DriftEvent
	for i, n := range names {
		latest := n != "nolatest.example/x"
		for v := range 1 + rng.IntN(4) {
			obs := at(time.Duration(rng.IntN(5))*time.Hour + time.Duration(rng.IntN(1000))*time.Microsecond)
			r := rec(n, fmt.Sprintf("1.%d.0", v), fmt.Sprintf("sha-%d-%d", i, v), obs, latest && rng.IntN(3) > 0)
			recs = append(recs, r)
			if rng.IntN(3) == 0 { // the same content observed again later: the earliest observation stays
				recs = append(recs, rec(n, r.Version, r.ContentSHA256, obs.Add(time.Hour), r.IsLatest))
			}
		}
		for k := range rng.IntN(5) {
			kind := []string{schema.KindNewServer, schema.KindVersionAdded, schema.KindDescriptionChanged}[rng.IntN(3)]
			// Several events in one ms of a server: ordered by id.
			evs = append(evs, ev(fmt.Sprintf("ev-%02d-%d", i, k), n, kind, at(time.Duration(rng.IntN(3))*time.Minute)))
		}
	}
	// An event rewritten under another server: it moves (last write of the id wins).
	moved := ev("ev-moved", "a.example/one", schema.KindTitleChanged, at(time.Minute))
	evs = append(evs, moved)
	rng.Shuffle(len(recs), func(i, j int) { recs[i], recs[j] = recs[j], recs[i] })
	for i := 0; i < len(recs); i += 25 {
		insertRecords(t, s, recs[i:min(i+25, len(recs))]...)
	}
	must(t, "InsertEvents", s.InsertEvents(ctx(t), evs))
	moved.Server, moved.Namespace = "Z.example/upper", "Z.example"
	must(t, "InsertEvents moved", s.InsertEvents(ctx(t), []schema.DriftEvent{moved}))
	slices.Sort(names)

	first := checkBulkReads(t, s, b, names, "first write")
	if len(first.Latest) < 30 || len(first.Versions) < 60 || len(first.Events) < 40 {
		t.Fatalf("test bug: the fixture is too small: %d latest, %d versions, %d events", len(first.Latest), len(first.Versions), len(first.Events))
	}
	for _, r := range first.Latest {
		if r.Server == "" {
			t.Fatalf("AllLatest row of %s without its server object", r.Name)
		}
	}
	// Replays change nothing.
	insertRecords(t, s, recs...)
	must(t, "InsertEvents again", s.InsertEvents(ctx(t), append(evs[:len(evs)-1:len(evs)-1], moved)))
	equal(t, "bulk reads after a replay", checkBulkReads(t, s, b, names, "after a replay"), first)
	optimize(t, s)
	equal(t, "bulk reads after Optimize", checkBulkReads(t, s, b, names, "after Optimize"), first)
}

var errStop = errors.New("stop here")

func testBulkCallbackError(t *testing.T, s store.Store, b store.BulkReader) {
	var recs []store.Record
	var evs []schema.DriftEvent
	for i := range 500 {
		n := fmt.Sprintf("io.github.n%03d/srv", i)
		recs = append(recs, rec(n, "1.0.0", "sha", at(0), true), rec(n, "2.0.0", "sha2", at(time.Hour), true))
		evs = append(evs, ev(fmt.Sprintf("ev-%03d", i), n, schema.KindNewServer, at(0)))
	}
	insertRecords(t, s, recs...)
	must(t, "InsertEvents", s.InsertEvents(ctx(t), evs))
	for i := range 2 { // twice: the store stays usable after a stopped stream
		calls := 0
		err := b.AllVersions(ctx(t), func(store.Record) error {
			if calls++; calls == 3 {
				return errStop
			}
			return nil
		})
		if !errors.Is(err, errStop) || calls != 3 {
			t.Errorf("round %d: AllVersions stopped after %d calls with %v, want 3 calls and the callback's error", i, calls, err)
		}
		calls = 0
		err = b.AllEvents(ctx(t), func(schema.DriftEvent) error {
			if calls++; calls == 2 {
				return errStop
			}
			return nil
		})
		if !errors.Is(err, errStop) || calls != 2 {
			t.Errorf("round %d: AllEvents stopped after %d calls with %v, want 2 calls and the callback's error", i, calls, err)
		}
	}
	got := readBulk(t, b)
	equal(t, "rows read after stopped streams", [3]int{len(got.Latest), len(got.Versions), len(got.Events)}, [3]int{500, 1000, 500})
}

func testChangeMarker(t *testing.T, s store.Store, b store.BulkReader) {
	ts := trustStore(t, s)
	rs, ok := s.(store.ResultStore)
	if !ok {
		t.Fatalf("%T does not implement store.ResultStore", s)
	}
	marker := func() string {
		t.Helper()
		m, err := b.ChangeMarker(ctx(t))
		must(t, "ChangeMarker", err)
		if m == "" || len(m) > 64 {
			t.Fatalf("ChangeMarker = %q, want a short non-empty value", m)
		}
		return m
	}
	last := marker()
	equal(t, "ChangeMarker without writes", marker(), last)

	changes := []struct {
		name  string
		write func() error
	}{
		{"InsertRecords", func() error { return s.InsertRecords(ctx(t), []store.Record{rec("a/x", "1", "h1", at(0), true)}) }},
		{"InsertRecords of a record not latest", func() error { return s.InsertRecords(ctx(t), []store.Record{rec("a/x", "0", "h0", at(0), false)}) }},
		{"InsertRecords that changes a record's content", func() error {
			r := rec("a/x", "1", "h1", at(0), true)
			r.Description = "rewritten"
			return s.InsertRecords(ctx(t), []store.Record{r})
		}},
		{"InsertEvents", func() error {
			return s.InsertEvents(ctx(t), []schema.DriftEvent{ev("e1", "a/x", schema.KindNewServer, at(0))})
		}},
		{"InsertSnapshots", func() error { return s.InsertSnapshots(ctx(t), []schema.SnapshotSummary{snap("s1", at(0))}) }},
		{"InsertTrustRecords", func() error {
			return ts.InsertTrustRecords(ctx(t), []store.TrustRecord{trec("a/x", "p1", at(0), fptr(50), "C")})
		}},
		{"InsertPublication", func() error { return ts.InsertPublication(ctx(t), pubRow("p1", at(0), 1)) }},
		{"InsertRegistryLoads", func() error {
			return rs.InsertRegistryLoads(ctx(t), []store.RegistryLoad{{SnapshotID: "s1", ObservedAt: at(0), Entries: 1}})
		}},
	}
	for _, c := range changes {
		must(t, c.name, c.write())
		m := marker()
		if m == last {
			t.Errorf("ChangeMarker unchanged (%q) after %s", m, c.name)
		}
		equal(t, "ChangeMarker again after "+c.name, marker(), m)
		last = m
	}

	same := []struct {
		name string
		do   func() error
	}{
		{"empty batches", func() error {
			return errors.Join(s.InsertRecords(ctx(t), nil), s.InsertEvents(ctx(t), nil), s.InsertSnapshots(ctx(t), nil),
				ts.InsertTrustRecords(ctx(t), nil), rs.InsertRegistryLoads(ctx(t), nil))
		}},
		{"reads", func() error {
			_, err := b.AllLatest(ctx(t))
			return errors.Join(err, b.AllVersions(ctx(t), func(store.Record) error { return nil }),
				b.AllEvents(ctx(t), func(schema.DriftEvent) error { return nil }))
		}},
		{"InsertDLQ", func() error { return s.InsertDLQ(ctx(t), []schema.DLQMessage{dlqMsg("d1", at(0))}) }},
		{"InsertHealthChecks", func() error {
			return s.InsertHealthChecks(ctx(t), []store.HealthCheck{hc("h1", "a/x", "https://a.example/mcp", at(0), "ok")})
		}},
		{"result writes", func() error {
			return errors.Join(
				rs.InsertDriftStates(ctx(t), []store.DriftStateRow{driftRow("a/x", at(0), nil, false, 1)}),
				rs.InsertIncidentStates(ctx(t), []store.IncidentStateRow{incidentRow("a/x", at(0), nil, 0, 0)}),
				rs.InsertOwnerBursts(ctx(t), []store.OwnerBurstRow{burst("a", at(0), 1)}),
				rs.InsertProvenanceSignals(ctx(t), []store.ProvenanceSignalRow{signal("a/x", at(0), nil)}),
				rs.InsertBaseRates(ctx(t), []store.BaseRateRow{rate("fork", at(0), 1, 2)}, []store.GateRow{gateRow(at(0), true, 90)}))
		}},
		{"Optimize", func() error {
			if o, ok := s.(Optimizer); ok {
				return o.Optimize(ctx(t))
			}
			return nil
		}},
	}
	for _, c := range same {
		must(t, c.name, c.do())
		equal(t, "ChangeMarker after "+c.name, marker(), last)
	}
	// And it still moves after all that.
	must(t, "InsertRecords", s.InsertRecords(ctx(t), []store.Record{rec("b/y", "1", "h", at(0), true)}))
	if marker() == last {
		t.Errorf("ChangeMarker unchanged after a write that followed an Optimize")
	}
}
