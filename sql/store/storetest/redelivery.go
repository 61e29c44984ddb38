package storetest

import (
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

// RunRedelivery is the conformance suite of at-least-once delivery into
// the histories (health checks, drift events, GitHub observations, the
// processors' results) and the tables written beside them. The sinks'
// batches are written twice over: once as a clean run delivers them, and
// once as the bus redelivers them after crashes between the store's write
// and the offset commit — the same batch again, a batch overlapping the
// previous one, a batch holding every row twice, never a batch older than
// one already committed. Every read the API, the processors and analysts
// use must then be the same on both stores, and show each key once:
// the Store and ResultStore reads, LatestHealthAll, the BulkReader reads,
// store.LatestAsOf, the evidence reads by id, and every *_v view (through
// store.Querier); again after Optimize when the store has it.
//
// When the store is a store.BatchWriter the suite runs twice: writing each
// batch with WriteBatch, and table by table (what the sinks do for stores
// without it). open is as for Run; the store must implement
// store.ResultStore, store.ProvenanceStore, store.TrustStore and
// store.Querier.
func RunRedelivery(t *testing.T, open func(t *testing.T) store.Store) {
	modes := []string{"PerTable"}
	probe := open(t)
	if _, ok := probe.(store.BatchWriter); ok {
		modes = append([]string{"WriteBatch"}, modes...)
	}
	must(t, "Close", probe.Close())
	batches := redeliveryBatches()
	for _, mode := range modes {
		t.Run("Redelivery/"+mode, func(t *testing.T) {
			write := func(s store.Store, b store.Batch) {
				t.Helper()
				if mode == "WriteBatch" {
					must(t, "WriteBatch", s.(store.BatchWriter).WriteBatch(ctx(t), &b))
					return
				}
				writeTables(t, s, b)
			}
			once := openMigrated(t, open)
			for _, b := range batches {
				write(once, b)
			}
			want := readEverything(t, once)
			if len(want.Checks) == 0 || len(want.Views["health_checks_v"]) == 0 || len(want.Provenance) == 0 {
				t.Fatalf("test bug: the clean run stored nothing: %s", show(want))
			}

			again := openMigrated(t, open)
			for i, b := range batches {
				write(again, b)
				write(again, b) // the store had it; the commit of its offsets was lost
				if i+1 < len(batches) {
					// redelivered from an offset inside b: its tail with the next batch's head
					write(again, overlap(b, batches[i+1]))
				}
			}
			last := batches[len(batches)-1]
			write(again, concat(last, last)) // a batch holding every row twice
			got := readEverything(t, again)
			sameReads(t, "after redelivery", got, want)
			checkUnique(t, got)
			if o, ok := again.(Optimizer); ok {
				must(t, "Optimize", o.Optimize(ctx(t)))
				sameReads(t, "after redelivery and Optimize", readEverything(t, again), want)
				write(again, last)
				sameReads(t, "after a redelivery following Optimize", readEverything(t, again), want)
			}
		})
	}
}

func openMigrated(t *testing.T, open func(t *testing.T) store.Store) store.Store {
	t.Helper()
	s := open(t)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	must(t, "Migrate", s.Migrate(ctx(t)))
	return s
}

// writeTables writes b table by table in Batch's documented order, as the
// sinks do for a store that is not a store.BatchWriter.
func writeTables(t *testing.T, s store.Store, b store.Batch) {
	t.Helper()
	c := ctx(t)
	rs, ps, is := s.(store.ResultStore), s.(store.ProvenanceStore), s.(store.IncidentStore)
	ts := s.(store.TrustStore)
	steps := []struct {
		n int
		f func() error
	}{
		{len(b.Records), func() error { return s.InsertRecords(c, b.Records) }},
		{len(b.Loads), func() error { return rs.InsertRegistryLoads(c, b.Loads) }},
		{len(b.Events), func() error { return s.InsertEvents(c, b.Events) }},
		{len(b.Snapshots), func() error { return s.InsertSnapshots(c, b.Snapshots) }},
		{len(b.Checks), func() error { return s.InsertHealthChecks(c, b.Checks) }},
		{len(b.Prov), func() error { return ps.InsertProvenance(c, b.Prov) }},
		{len(b.Audit), func() error { return is.InsertIncidentAudit(c, b.Audit) }},
		{len(b.Incidents), func() error { return is.InsertIncidents(c, b.Incidents) }},
		{len(b.DLQ), func() error { return s.InsertDLQ(c, b.DLQ) }},
		{len(b.DriftStates), func() error { return rs.InsertDriftStates(c, b.DriftStates) }},
		{len(b.IncidentStates), func() error { return rs.InsertIncidentStates(c, b.IncidentStates) }},
		{len(b.OwnerBursts), func() error { return rs.InsertOwnerBursts(c, b.OwnerBursts) }},
		{len(b.ProvSignals), func() error { return rs.InsertProvenanceSignals(c, b.ProvSignals) }},
		{len(b.BaseRates) + len(b.Gates), func() error { return rs.InsertBaseRates(c, b.BaseRates, b.Gates) }},
		{len(b.TrustRecords), func() error { return ts.InsertTrustRecords(c, b.TrustRecords) }},
	}
	for i, st := range steps {
		if st.n > 0 {
			must(t, fmt.Sprintf("table write %d", i), st.f())
		}
	}
}

// halves splits every table of b: the first half of each slice, or the
// second.
func halves(b store.Batch, second bool) store.Batch {
	h := func(n int) (int, int) {
		if second {
			return n / 2, n
		}
		return 0, n / 2
	}
	var o store.Batch
	lo, hi := h(len(b.Records))
	o.Records = b.Records[lo:hi]
	lo, hi = h(len(b.Loads))
	o.Loads = b.Loads[lo:hi]
	lo, hi = h(len(b.Events))
	o.Events = b.Events[lo:hi]
	lo, hi = h(len(b.Snapshots))
	o.Snapshots = b.Snapshots[lo:hi]
	lo, hi = h(len(b.Checks))
	o.Checks = b.Checks[lo:hi]
	lo, hi = h(len(b.Prov))
	o.Prov = b.Prov[lo:hi]
	lo, hi = h(len(b.DLQ))
	o.DLQ = b.DLQ[lo:hi]
	lo, hi = h(len(b.DriftStates))
	o.DriftStates = b.DriftStates[lo:hi]
	lo, hi = h(len(b.IncidentStates))
	o.IncidentStates = b.IncidentStates[lo:hi]
	lo, hi = h(len(b.OwnerBursts))
	o.OwnerBursts = b.OwnerBursts[lo:hi]
	lo, hi = h(len(b.ProvSignals))
	o.ProvSignals = b.ProvSignals[lo:hi]
	lo, hi = h(len(b.BaseRates))
	o.BaseRates = b.BaseRates[lo:hi]
	lo, hi = h(len(b.Gates))
	o.Gates = b.Gates[lo:hi]
	lo, hi = h(len(b.TrustRecords))
	o.TrustRecords = b.TrustRecords[lo:hi]
	return o
}

// concat is a followed by b, table by table.
func concat(a, b store.Batch) store.Batch {
	return store.Batch{
		Records: slices.Concat(a.Records, b.Records), Loads: slices.Concat(a.Loads, b.Loads),
		Events: slices.Concat(a.Events, b.Events), Snapshots: slices.Concat(a.Snapshots, b.Snapshots),
		Checks: slices.Concat(a.Checks, b.Checks), Prov: slices.Concat(a.Prov, b.Prov),
		Audit: slices.Concat(a.Audit, b.Audit), Incidents: slices.Concat(a.Incidents, b.Incidents),
		DLQ: slices.Concat(a.DLQ, b.DLQ), DriftStates: slices.Concat(a.DriftStates, b.DriftStates),
		IncidentStates: slices.Concat(a.IncidentStates, b.IncidentStates), OwnerBursts: slices.Concat(a.OwnerBursts, b.OwnerBursts),
		ProvSignals: slices.Concat(a.ProvSignals, b.ProvSignals), BaseRates: slices.Concat(a.BaseRates, b.BaseRates),
		Gates: slices.Concat(a.Gates, b.Gates), TrustRecords: slices.Concat(a.TrustRecords, b.TrustRecords),
	}
}

// overlap is a redelivery from the middle of a: its second half, then the
// first half of the next batch.
func overlap(a, next store.Batch) store.Batch { return concat(halves(a, true), halves(next, false)) }

// redeliveryBatches is a small stream in four sink batches: a registry of
// six servers over three snapshots (records, summaries, loads, drift
// events), hourly checks of two remotes each, GitHub observations (one
// re-published with its commits under the same id, in a later batch), the
// processors' conclusions at each snapshot, and dead letters. The last
// write of every rewritten key is in a later batch than the first.
func redeliveryBatches() []store.Batch {
	base := time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)
	servers := []string{"io.github.a/one", "io.github.a/two", "b.example/three", "b.example/four", "c.dev/five", "c.dev/six"}
	out := make([]store.Batch, 4)
	for day := 0; day < 3; day++ {
		at := base.Add(time.Duration(day) * 24 * time.Hour)
		snapID := fmt.Sprintf("snap-%d", day)
		b := &out[day]
		for i, sv := range servers {
			if day == 0 || i%3 == day {
				r := rec(sv, fmt.Sprintf("1.%d.0", day), fmt.Sprintf("sha-%s-%d", sv, day), at, true)
				r.SnapshotID = snapID
				b.Records = append(b.Records, r)
			}
			if day > 0 && i%2 == 0 {
				b.Events = append(b.Events, ev(fmt.Sprintf("ev-%d-%d", day, i), sv, schema.KindVersionAdded, at))
			}
			score := float64(60 + 5*day + i)
			b.DriftStates = append(b.DriftStates, driftRow(sv, at, &score, i == 1 && day == 2, day))
			b.IncidentStates = append(b.IncidentStates, incidentRow(sv, at, &score, i%2, 0))
			flags := []string{}
			if i%2 == 1 {
				flags = append(flags, "fork")
			}
			b.ProvSignals = append(b.ProvSignals, signal(sv, at, &score, flags...))
		}
		b.Snapshots = append(b.Snapshots, snap(snapID, at))
		b.Loads = append(b.Loads, store.RegistryLoad{SnapshotID: snapID, ObservedAt: at, Entries: len(b.Records)})
		b.OwnerBursts = append(b.OwnerBursts, burst("io.github.a", at, 10+day, "recurring"), burst("b.example", at, day))
		b.BaseRates = append(b.BaseRates, rate("fork", at, 2+day, 6), rate("no_license", at, day, 6))
		b.Gates = append(b.Gates, gateRow(at, day == 2, 90+float64(day)))
		b.DLQ = append(b.DLQ, dlqMsg(fmt.Sprintf("dlq-%d", day), at))
		for h := 0; h < 24; h += 6 {
			for i, sv := range servers[:4] {
				for r := 0; r < 2; r++ {
					url := fmt.Sprintf("https://%s.example/%d", strings.ReplaceAll(sv, "/", "-"), r)
					obs := at.Add(time.Duration(h)*time.Hour + time.Duration(i)*time.Minute)
					outcome := []string{"ok", "auth_required", "unreachable"}[(h/6+i+r)%3]
					b.Checks = append(b.Checks, hc(fmt.Sprintf("hc-%d-%d-%d-%d", day, h, i, r), sv, url, obs, outcome))
				}
			}
		}
		for i, sv := range []string{"github.com/a/one", "github.com/b/three", "github.com/c/five"} {
			p := pobs(sv, at.Add(time.Duration(i)*time.Hour))
			b.Prov = append(b.Prov, p)
		}
	}
	// The fourth batch: rewrites of keys first written earlier (a check
	// whose result was corrected, an event re-derived, the re-publication of
	// an observation with its commits), and a late snapshot's worth of rows.
	late := base.Add(72 * time.Hour)
	b := &out[3]
	fixed := out[0].Checks[1]
	fixed.Outcome, fixed.Check = "ok", `{"fixed":true}`
	b.Checks = append(b.Checks, fixed, hc("hc-late", servers[0], "https://late.example/0", late, "ok"))
	reEv := out[1].Events[0]
	reEv.After = "re-derived"
	b.Events = append(b.Events, reEv, ev("ev-late", servers[5], schema.KindDescriptionChanged, late))
	b.Prov = append(b.Prov, withCommits(out[0].Prov[0], late))
	score := 42.0
	b.DriftStates = append(b.DriftStates, driftRow(servers[0], late, &score, true, 3))
	b.ProvSignals = append(b.ProvSignals, signal(servers[0], late, &score, "archived"))
	b.OwnerBursts = append(b.OwnerBursts, burst("io.github.a", base.Add(2*24*time.Hour+time.Hour), 13))
	b.DLQ = append(b.DLQ, dlqMsg("dlq-late", late))
	return out
}

// everything is every read of a store this suite compares.
type everything struct {
	Servers    []store.ServerRow
	Versions   map[string][]store.Record
	Events     []schema.DriftEvent
	EventKinds map[string]int64
	Snapshots  []schema.SnapshotSummary
	DLQ        []schema.DLQMessage
	Counts     map[string]int64

	Checks       map[string][]store.HealthCheck
	Latest       map[string][]store.HealthCheck
	LatestAll    []store.HealthCheck
	CheckByID    map[string]store.HealthCheck
	EventByID    map[string]schema.DriftEvent
	Provenance   []store.Provenance
	ProvByRepo   map[string][]store.Provenance
	DriftStates  map[string][]store.DriftStateRow
	IncStates    map[string][]store.IncidentStateRow
	Signals      map[string]store.ProvenanceSignalRow
	Rates        []store.BaseRateRow
	Gate         store.GateRow
	Bursts       []store.OwnerBurstRow
	BurstDay     string
	Loaded       map[string]bool
	AllLatest    []store.Record
	AllVersions  []store.Record
	AllEvents    []schema.DriftEvent
	AsOf         map[string][]store.Record
	Views        map[string][]string
	ViewKeyDupes map[string][]string
}

// redeliveryViews are the analyst views over the histories, with their
// key columns first (what each shows once) and content columns after.
var redeliveryViews = []struct{ name, key, rest string }{
	{"health_checks_v", "id", "server, remote_url, observed_at_ms, observed_day, outcome, http_status, latency_ms, check_json"},
	{"drift_events_v", "id", "server, kind, version, before, after, observed_at_ms, observed_day"},
	{"provenance_v", "id", "repo, observed_at_ms, commits_fetched, commits_count, authors, flag_single_author_90d"},
	{"drift_states_v", "server, as_of_ms", "namespace, score, strong_negative, events, state"},
	{"incident_states_v", "server, as_of_ms", "score, incidents, counted, state"},
	{"owner_bursts_v", "namespace, day", "as_of_ms, flagged, recurring_burst, current_window_new, state"},
	{"provenance_signals_v", "server, as_of_ms", "score, flag_fork, flag_archived, state"},
	{"base_rates_v", "as_of_ms, flag", "flagged, n, live, state"},
	{"provenance_gate_v", "as_of_ms", "open, coverage_pct, state"},
	{"registry_loads_v", "snapshot_id", "observed_at_ms, entries"},
}

func readEverything(t *testing.T, s store.Store) everything {
	t.Helper()
	c := ctx(t)
	var e everything
	var err error
	e.Servers = listAll(t, s, store.ListQuery{Limit: store.MaxListLimit})
	e.Versions = map[string][]store.Record{}
	for _, sv := range e.Servers {
		e.Versions[sv.Name] = versions(t, s, sv.Name)
	}
	e.Events, err = s.Events(c, store.EventQuery{Limit: store.MaxEventLimit})
	must(t, "Events", err)
	e.EventKinds, err = s.EventCounts(c)
	must(t, "EventCounts", err)
	e.Snapshots, err = s.Snapshots(c)
	must(t, "Snapshots", err)
	e.DLQ, err = s.DLQ(c, store.MaxEventLimit)
	must(t, "DLQ", err)
	e.Counts = counts(t, s)

	servers := map[string]bool{}
	e.CheckByID, e.EventByID = map[string]store.HealthCheck{}, map[string]schema.DriftEvent{}
	ts := s.(store.TrustStore)
	for _, b := range redeliveryBatches() {
		for _, hc := range b.Checks {
			servers[hc.Server] = true
			got, err := ts.HealthCheckByID(c, hc.ID)
			must(t, "HealthCheckByID("+hc.ID+")", err)
			e.CheckByID[hc.ID] = got
		}
		for _, ev := range b.Events {
			got, err := ts.EventByID(c, ev.ID)
			must(t, "EventByID("+ev.ID+")", err)
			e.EventByID[ev.ID] = got
		}
	}
	e.Checks, e.Latest = map[string][]store.HealthCheck{}, map[string][]store.HealthCheck{}
	for sv := range servers {
		e.Checks[sv] = healthChecks(t, s, store.HealthQuery{Server: sv, Limit: store.MaxEventLimit})
		e.Latest[sv] = latestHealth(t, s, sv)
	}
	if b, ok := s.(store.BulkHealthReader); ok {
		e.LatestAll, err = b.LatestHealthAll(c)
		must(t, "LatestHealthAll", err)
	}
	ps := s.(store.ProvenanceStore)
	e.Provenance, err = ps.ProvenanceObservations(c, store.ProvenanceQuery{Limit: store.MaxEventLimit})
	must(t, "ProvenanceObservations", err)
	e.ProvByRepo = map[string][]store.Provenance{}
	for _, p := range e.Provenance {
		if _, ok := e.ProvByRepo[p.Repo]; !ok {
			e.ProvByRepo[p.Repo], err = ps.ProvenanceObservations(c, store.ProvenanceQuery{Repo: p.Repo, Since: p.ObservedAt, Limit: 10})
			must(t, "ProvenanceObservations("+p.Repo+")", err)
		}
	}

	rs := s.(store.ResultStore)
	e.DriftStates, e.IncStates, e.Signals = map[string][]store.DriftStateRow{}, map[string][]store.IncidentStateRow{}, map[string]store.ProvenanceSignalRow{}
	for _, sv := range e.Servers {
		e.DriftStates[sv.Name], err = rs.DriftStates(c, sv.Name, store.MaxEventLimit)
		must(t, "DriftStates", err)
		e.IncStates[sv.Name], err = rs.IncidentStates(c, sv.Name, store.MaxEventLimit)
		must(t, "IncidentStates", err)
		e.Signals[sv.Name], err = rs.LatestProvenanceSignal(c, sv.Name)
		must(t, "LatestProvenanceSignal", err)
	}
	e.Rates, e.Gate, err = rs.LatestBaseRates(c)
	must(t, "LatestBaseRates", err)
	e.Bursts, err = rs.OwnerBursts(c, store.OwnerBurstQuery{Limit: store.MaxEventLimit})
	must(t, "OwnerBursts", err)
	e.BurstDay, err = rs.LatestOwnerBurstDay(c)
	must(t, "LatestOwnerBurstDay", err)
	e.Loaded = map[string]bool{}
	for _, x := range e.Snapshots {
		e.Loaded[x.ID], err = rs.SnapshotLoaded(c, x.ID)
		must(t, "SnapshotLoaded", err)
	}

	if b, ok := s.(store.BulkReader); ok {
		e.AllLatest, err = b.AllLatest(c)
		must(t, "AllLatest", err)
		must(t, "AllVersions", b.AllVersions(c, func(r store.Record) error { e.AllVersions = append(e.AllVersions, r); return nil }))
		must(t, "AllEvents", b.AllEvents(c, func(ev schema.DriftEvent) error { e.AllEvents = append(e.AllEvents, ev); return nil }))
	}
	e.AsOf = map[string][]store.Record{}
	for _, x := range e.Snapshots {
		var recs []store.Record
		must(t, "LatestAsOf", store.LatestAsOf(c, s, x.ObservedAt, false, func(r store.Record) error { recs = append(recs, r); return nil }))
		e.AsOf[x.ID] = recs
	}

	e.Views, e.ViewKeyDupes = map[string][]string{}, map[string][]string{}
	for _, v := range redeliveryViews {
		rows := queryRows(t, s, `SELECT `+v.key+`, `+v.rest+` FROM `+v.name)
		sort.Strings(rows)
		e.Views[v.name] = rows
		keys := queryRows(t, s, `SELECT `+v.key+` FROM `+v.name)
		sort.Strings(keys)
		for i := 1; i < len(keys); i++ {
			if keys[i] == keys[i-1] {
				e.ViewKeyDupes[v.name] = append(e.ViewKeyDupes[v.name], keys[i])
			}
		}
	}
	return e
}

// sameReads compares every read, one field of everything at a time.
func sameReads(t *testing.T, phase string, got, want everything) {
	t.Helper()
	g, w := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := 0; i < g.NumField(); i++ {
		equal(t, phase+": "+g.Type().Field(i).Name, g.Field(i).Interface(), w.Field(i).Interface())
	}
}

// checkUnique fails for a key a view shows more than once, and for reads
// that returned a history row twice.
func checkUnique(t *testing.T, e everything) {
	t.Helper()
	for v, d := range e.ViewKeyDupes {
		t.Errorf("%s shows keys more than once: %q", v, d)
	}
	seen := map[string]bool{}
	for _, hcs := range e.Checks {
		for _, hc := range hcs {
			if seen[hc.ID] {
				t.Errorf("HealthChecks returned %s twice", hc.ID)
			}
			seen[hc.ID] = true
		}
	}
	ids := map[string]bool{}
	for _, ev := range e.Events {
		if ids[ev.ID] {
			t.Errorf("Events returned %s twice", ev.ID)
		}
		ids[ev.ID] = true
	}
	ids = map[string]bool{}
	for _, p := range e.Provenance {
		if ids[p.ID] {
			t.Errorf("ProvenanceObservations returned %s twice", p.ID)
		}
		ids[p.ID] = true
	}
}
