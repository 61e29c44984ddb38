package trust

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/schema"
)

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func days(d float64) time.Duration { return time.Duration(d * 24 * float64(time.Hour)) }

func ago(d float64) time.Time { return now.Add(-days(d)) }

// clean is a server with every dimension observed and nothing wrong.
func clean() Input {
	return Input{
		Server: "io.github.alice/weather",
		Provenance: ProvenanceInput{
			RepoURL: "https://github.com/alice/weather", RepoStatus: RepoResolved,
			Observation: &Evidence{Kind: EvGitHubRepo, ID: "gh-1", ObservedAt: ago(0.5)},
			ListedAt:    ago(400), RepoCreatedAt: ago(500), OwnerCreatedAt: ago(200),
			LicenseSPDX: "MIT",
		},
		Static:    StaticInput{Coverage: CoverageScanned},
		Drift:     DriftInput{ObservedSince: ago(300)},
		Incidents: IncidentsInput{Checked: true},
		Endpoint:  EndpointInput{HasRemote: true, Outcome: "ok"},
	}
}

func val(t *testing.T, s SubScore) float64 {
	t.Helper()
	if s.Value == nil {
		t.Fatalf("value is null (reason %q)", s.Reason)
	}
	return *s.Value
}

func near(a, b float64) bool { return math.Abs(a-b) < 0.005 }

func TestBaseRateFactor(t *testing.T) {
	w := method.Embedded().Weights
	for _, c := range []struct{ p, want float64 }{
		{0.01, 1.0}, {0.001, 1.5}, {0.0001, 1.5}, {0.36, 0.25}, {0.027, 0.784318}, {0.11, 0.479304}, {1, 0.25},
	} {
		if got := BaseRateFactor(w, c.p); math.Abs(got-c.want) > 1e-6 {
			t.Errorf("f(%v) = %v, want %v", c.p, got, c.want)
		}
	}
}

func TestProvenance(t *testing.T) {
	cases := []struct {
		name string
		mod  func(*Input)
		want float64
		sig  string // a signal that must be present
	}{
		{"clean", func(*Input) {}, 100, ""},
		// 10 × f(0.23)=0.319136 → 3.19
		{"no_license", func(in *Input) { in.Provenance.LicenseSPDX = "" }, 96.81, "no_license"},
		{"NOASSERTION is a license", func(in *Input) { in.Provenance.LicenseSPDX = "NOASSERTION" }, 100, ""},
		// 10 × f(0.005)=1.150515
		{"fork", func(in *Input) { in.Provenance.Fork = true }, 88.49, "fork"},
		// 20 × f(0.008)=1.048455
		{"archived", func(in *Input) { in.Provenance.Archived = true }, 79.03, "archived"},
		// 40 × f(0.001)=1.5 = 60
		{"repo created 60 d after listing", func(in *Input) {
			in.Provenance.ListedAt, in.Provenance.RepoCreatedAt = ago(100), ago(40)
		}, 40, "repo_created_after_listing_gt30d"},
		{"repo created 10 d after listing", func(in *Input) {
			in.Provenance.ListedAt, in.Provenance.RepoCreatedAt = ago(100), ago(90)
		}, 88.49, "repo_created_after_listing_1_30d"},
		{"repo created same day as listing", func(in *Input) {
			in.Provenance.ListedAt, in.Provenance.RepoCreatedAt = ago(100), ago(99.5)
		}, 100, ""},
		// repo_under_30d: 10 × f(0.11)=0.479304 × (1 − age/30)
		{"repo_under_30d day 0", func(in *Input) {
			in.Provenance.ListedAt, in.Provenance.RepoCreatedAt = now, now
		}, 95.21, "repo_under_30d"},
		{"repo_under_30d day 15", func(in *Input) {
			in.Provenance.ListedAt, in.Provenance.RepoCreatedAt = ago(15), ago(15)
		}, 97.60, "repo_under_30d"},
		{"repo_under_30d day 30", func(in *Input) {
			in.Provenance.ListedAt, in.Provenance.RepoCreatedAt = ago(30), ago(30)
		}, 100, ""},
		{"single_author_90d", func(in *Input) { in.Provenance.SingleAuthor90d = true }, 99.5, "single_author_90d"},
		{"commit_cap_hit scores nothing", func(in *Input) { in.Provenance.CommitCapHit = true }, 100, "commit_cap_hit"},
		// bonus −5 × f(0.3)=0.261439 offsets no_license
		{"verified commits offset no_license", func(in *Input) {
			in.Provenance.LicenseSPDX, in.Provenance.VerifiedCommits90d = "", true
		}, 98.12, "verified_commits_90d"},
		{"positives clamp at 100", func(in *Input) {
			in.Provenance.VerifiedCommits90d, in.Provenance.Stars = true, 500
			in.Provenance.OwnerCreatedAt = ago(800)
		}, 100, "stars_ge_100"},
		{"namespace_owner_mismatch", func(in *Input) { in.Provenance.Registry.NamespaceOwnerMismatch = true }, 92.16, "namespace_owner_mismatch"},
		// 20 × f(0.0435)=0.680755 + fork 11.505
		{"co-registration with fork", func(in *Input) {
			in.Provenance.Fork = true
			in.Provenance.Registry.CoRegistrationCluster, in.Provenance.Registry.ClusterSize = true, 3
		}, 74.88, "co_registration_cluster_with_hygiene"},
		{"co-registration without weak hygiene does not fire", func(in *Input) {
			in.Provenance.Registry.CoRegistrationCluster = true
			in.Provenance.LicenseSPDX = "" // draft4's stars==0+no_license arm is gone
		}, 96.81, ""},
		// 10 × f(0.0172)=0.882236
		{"one repo many servers with no commits", func(in *Input) {
			in.Provenance.NoCommits90d = true
			in.Provenance.Registry.RepoServers = 2
		}, 91.18, "one_repo_many_servers_with_hygiene"},
		{"one repo many servers with clean hygiene", func(in *Input) { in.Provenance.Registry.RepoServers = 4 }, 100, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := clean()
			c.mod(&in)
			r := ComputeWith(method.Embedded().Weights, in, now)
			if got := val(t, r.Provenance); !near(got, c.want) {
				t.Errorf("provenance = %v, want %v; signals %+v", got, c.want, r.Provenance.Signals)
			}
			if c.sig != "" && !hasSignal(r.Provenance, c.sig) {
				t.Errorf("signal %s missing: %+v", c.sig, r.Provenance.Signals)
			}
		})
	}
}

func hasSignal(s SubScore, id string) bool {
	for _, sg := range s.Signals {
		if sg.ID == id {
			return true
		}
	}
	return false
}

func TestProvenanceUnknown(t *testing.T) {
	in := clean()
	in.Provenance = ProvenanceInput{}
	r := ComputeWith(method.Embedded().Weights, in, now)
	if r.Provenance.Value != nil || r.Provenance.Reason != ReasonRepoUnresolved {
		t.Fatalf("no URL: %+v", r.Provenance)
	}
	in.Provenance = ProvenanceInput{RepoURL: "https://github.com/a/b"}
	r = ComputeWith(method.Embedded().Weights, in, now)
	if r.Provenance.Value != nil || r.Provenance.Reason != ReasonRepoNotObserved {
		t.Fatalf("not observed: %+v", r.Provenance)
	}
}

func TestStatic(t *testing.T) {
	f := func(class, sev, rule, tool string) StaticFinding {
		return StaticFinding{ID: class + rule + tool + sev, Class: class, Severity: sev, RuleID: rule, Tool: tool, ObservedAt: ago(1)}
	}
	many := []StaticFinding{}
	for i := 0; i < 50; i++ {
		many = append(many, f("hygiene", "low", "HY-001", string(rune('a'+i%26))+itoa(i)))
	}
	cases := []struct {
		name     string
		findings []StaticFinding
		want     float64
	}{
		{"clean baseline", nil, 85},
		// 85 − 35 × 1.5
		{"one high command_injection", []StaticFinding{f("command_injection", "high", "CI-001", "run")}, 32.5},
		{"fifty tools missing a description count once", many, 82.5},
		{"same rule at two severities counts at the highest", []StaticFinding{
			f("tool_poisoning", "low", "TP-001", "a"), f("tool_poisoning", "high", "TP-001", "b"), f("tool_poisoning", "medium", "TP-001", "c"),
		}, 40},
		{"two rules of one class count twice", []StaticFinding{
			f("tool_poisoning", "medium", "TP-001", "a"), f("tool_poisoning", "medium", "TP-002", "a"),
		}, 25},
		{"suspicious + hygiene", []StaticFinding{f("suspicious_description", "medium", "SD-001", "a"), f("hygiene", "medium", "HY-002", "a")}, 65},
		{"floor 0", []StaticFinding{
			f("command_injection", "high", "CI-001", "a"), f("tool_poisoning", "high", "TP-001", "a"), f("shadowing", "high", "SH-001", "a"),
		}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := clean()
			in.Static.Findings = c.findings
			r := ComputeWith(method.Embedded().Weights, in, now)
			if got := val(t, r.Static); !near(got, c.want) {
				t.Errorf("static = %v, want %v", got, c.want)
			}
		})
	}
	for _, cov := range []string{CoverageAuthRequired, CoverageUnreachable, CoverageNoEndpoint, ""} {
		in := clean()
		in.Static = StaticInput{Coverage: cov}
		r := ComputeWith(method.Embedded().Weights, in, now)
		want := cov
		if cov == "" {
			want = ReasonNotScanned
		}
		if r.Static.Value != nil || r.Static.Reason != want {
			t.Errorf("coverage %q: static %+v, want null with reason %q", cov, r.Static, want)
		}
	}
}

// The seed's draft4 fix: one high command_injection lands at 32.5, band D.
func TestOneHighCommandInjectionIsBandD(t *testing.T) {
	in := clean()
	in.Static.Findings = []StaticFinding{{ID: "f1", Class: "command_injection", Severity: "high", RuleID: "CI-001", Tool: "run"}}
	r := ComputeWith(method.Embedded().Weights, in, now)
	if *r.Static.Value != 32.5 || r.Band != BandD {
		t.Fatalf("static %v band %s (%s), want 32.5 D", *r.Static.Value, r.Band, r.BandReason)
	}
}

func ev(kind string, ageDays float64, before, after string, bump bool) schema.DriftEvent {
	at := ago(ageDays)
	return schema.DriftEvent{ID: kind + at.Format(time.RFC3339Nano) + after, Server: "io.github.alice/weather", Kind: kind,
		Before: before, After: after, ObservedAt: at, VersionBump: bump}
}

func TestDriftDecay(t *testing.T) {
	cases := []struct {
		name   string
		events []schema.DriftEvent
		want   float64
		open   bool
	}{
		{"no events", nil, 100, false},
		{"new_server and version_added weigh 0", []schema.DriftEvent{ev(schema.KindNewServer, 1, "", "", false), ev(schema.KindVersionAdded, 1, "", "1.1", true)}, 100, false},
		{"endpoint 0 d", []schema.DriftEvent{ev(schema.KindEndpointsChanged, 0, `[["streamable-http","https://a.example.com/mcp"]]`, `[["streamable-http","https://b.example.com/mcp"]]`, false)}, 85, false},
		{"endpoint 30 d", []schema.DriftEvent{ev(schema.KindEndpointsChanged, 30, `[]`, `[["sse","https://b.example.com/sse"]]`, false)}, 92.5, false},
		{"endpoint 60 d", []schema.DriftEvent{ev(schema.KindEndpointsChanged, 60, ``, `[["sse","https://b.example.com/sse"]]`, false)}, 96.25, false},
		// 15 × 0.5^(365/30) = 0.0033
		{"endpoint 365 d", []schema.DriftEvent{ev(schema.KindEndpointsChanged, 365, ``, `[["sse","https://b.example.com/sse"]]`, false)}, 100, false},
		{"suspect endpoint 0 d", []schema.DriftEvent{ev(schema.KindEndpointsChanged, 0, `[["sse","https://api.example.com"]]`, `[["sse","https://evil-1.trycloudflare.com/sse"]]`, false)}, 50, true},
		{"suspect endpoint 30 d", []schema.DriftEvent{ev(schema.KindEndpointsChanged, 30, ``, `[["sse","https://x.ngrok-free.app/sse"]]`, false)}, 75, true},
		{"suspect endpoint 60 d", []schema.DriftEvent{ev(schema.KindEndpointsChanged, 60, ``, `[["sse","https://x.workers.dev/sse"]]`, false)}, 87.5, true},
		// 50 × 0.5^(99/30) = 5.08: decay 0.1015 ≥ 10 %, still open
		{"suspect endpoint 99 d still open", []schema.DriftEvent{ev(schema.KindEndpointsChanged, 99, ``, `[["sse","https://x.duckdns.org/sse"]]`, false)}, 94.92, true},
		// 50 × 0.5^(100/30) = 4.96: decay 0.0992 < 10 %, closed
		{"suspect endpoint 100 d closed", []schema.DriftEvent{ev(schema.KindEndpointsChanged, 100, ``, `[["sse","https://x.duckdns.org/sse"]]`, false)}, 95.04, false},
		{"suspect endpoint 365 d", []schema.DriftEvent{ev(schema.KindEndpointsChanged, 365, ``, `[["sse","https://x.loca.lt/sse"]]`, false)}, 99.99, false},
		{"staying on a tunnel host is no move to it", []schema.DriftEvent{ev(schema.KindEndpointsChanged, 0, `[["sse","https://x.ngrok.io/sse"]]`, `[["streamable-http","https://x.ngrok.io/sse"]]`, false)}, 85, false},
		{"look-alike host is not suspect", []schema.DriftEvent{ev(schema.KindEndpointsChanged, 0, ``, `[["sse","https://notngrok.io/sse"]]`, false)}, 85, false},
		{"description without bump", []schema.DriftEvent{ev(schema.KindDescriptionChanged, 0, "a", "b", false)}, 92, false},
		{"description with bump", []schema.DriftEvent{ev(schema.KindDescriptionChanged, 0, "a", "b", true)}, 98, false},
		{"description 30 d", []schema.DriftEvent{ev(schema.KindDescriptionChanged, 30, "a", "b", false)}, 96, false},
		{"title", []schema.DriftEvent{ev(schema.KindTitleChanged, 0, "a", "b", false)}, 97, false},
		{"status to deprecated", []schema.DriftEvent{ev(schema.KindStatusChanged, 0, "active", "deprecated", false)}, 95, false},
		{"status to deleted", []schema.DriftEvent{ev(schema.KindStatusChanged, 0, "active", "deleted", false)}, 95, false},
		{"status back to active", []schema.DriftEvent{ev(schema.KindStatusChanged, 0, "deprecated", "active", false)}, 100, false},
		// endpoint 15 + description 8 + title 3 + multi_change 40
		{"multi_change_24h", []schema.DriftEvent{
			ev(schema.KindEndpointsChanged, 0, ``, `[["sse","https://b.example.com"]]`, false),
			ev(schema.KindDescriptionChanged, 0, "a", "b", false),
			ev(schema.KindTitleChanged, 0, "a", "b", false),
		}, 34, true},
		// description(+version bump) 2 + title 3 + multi 40
		{"description with bump + title is three kinds", []schema.DriftEvent{
			ev(schema.KindDescriptionChanged, 0, "a", "b", true), ev(schema.KindTitleChanged, 0, "a", "b", false),
		}, 55, true},
		{"three kinds spread over 3 days are not multi", []schema.DriftEvent{
			ev(schema.KindEndpointsChanged, 3, ``, `[["sse","https://b.example.com"]]`, false),
			ev(schema.KindDescriptionChanged, 2, "a", "b", false),
			ev(schema.KindTitleChanged, 1, "a", "b", false),
		}, 100 - 15*math.Pow(0.5, 0.1) - 8*math.Pow(0.5, 2.0/30) - 3*math.Pow(0.5, 1.0/30), false},
		{"future events are ignored", []schema.DriftEvent{ev(schema.KindDescriptionChanged, -1, "a", "b", false)}, 100, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := clean()
			in.Drift.Events = c.events
			r := ComputeWith(method.Embedded().Weights, in, now)
			if got := val(t, r.Drift); !near(got, round2(c.want)) {
				t.Errorf("drift = %v, want %v; signals %+v", got, round2(c.want), r.Drift.Signals)
			}
			open := false
			for _, o := range r.OpenSignals {
				if o.SubScore == "drift" && o.Kind == "strong_negative" {
					open = true
				}
			}
			if open != c.open {
				t.Errorf("open strong-negative drift signal = %v, want %v", open, c.open)
			}
			if c.open && r.Band != BandD {
				t.Errorf("band %s, want D", r.Band)
			}
		})
	}
}

func TestDriftMultiChangeCountsOncePerBurst(t *testing.T) {
	in := clean()
	in.Drift.Events = []schema.DriftEvent{
		ev(schema.KindEndpointsChanged, 0.9, ``, `[["sse","https://b.example.com"]]`, false),
		ev(schema.KindDescriptionChanged, 0.8, "a", "b", false),
		ev(schema.KindTitleChanged, 0.7, "a", "b", false),
		ev(schema.KindDescriptionChanged, 0.6, "b", "c", false), // same burst: no second multi_change
	}
	r := ComputeWith(method.Embedded().Weights, in, now)
	n := 0
	for _, s := range r.Drift.Signals {
		if s.ID == "multi_change_24h" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("multi_change_24h counted %d times", n)
	}
}

// TestDriftMultiChangeNoteListsTheWindow: the signal's note and evidence
// cover every change in its window — the 24 h from the change that opened
// the burst — not only those up to the change that completed the set; the
// signal's time, and so its weight and the score, stay the completing
// change's.
func TestDriftMultiChangeNoteListsTheWindow(t *testing.T) {
	h := func(x float64) float64 { return x / 24 } // hours, in days of age
	in := clean()
	in.Drift.Events = []schema.DriftEvent{
		ev(schema.KindEndpointsChanged, 2+h(0), ``, `[["sse","https://b.example.com"]]`, false), // opens the burst
		ev(schema.KindDescriptionChanged, 2-h(1), "a", "b", false),
		ev(schema.KindTitleChanged, 2-h(2), "a", "b", false),        // completes the set
		ev(schema.KindVersionAdded, 2-h(5), "", "1.1.0", true),      // in the window, after the signal
		ev(schema.KindDescriptionChanged, 2-h(25), "b", "c", false), // 25 h after the opening change: outside
	}
	r := ComputeWith(method.Embedded().Weights, in, now)
	var sig *Signal
	for i, s := range r.Drift.Signals {
		if s.ID == "multi_change_24h" {
			if sig != nil {
				t.Fatalf("two multi_change_24h signals: %+v", r.Drift.Signals)
			}
			sig = &r.Drift.Signals[i]
		}
	}
	if sig == nil {
		t.Fatalf("no multi_change_24h: %+v", r.Drift.Signals)
	}
	if want := "endpoint+description+title+version within 24 h"; sig.Note != want {
		t.Errorf("note %q, want %q", sig.Note, want)
	}
	if len(sig.Evidence) != 4 {
		t.Errorf("evidence %+v: want the 4 changes of the window", sig.Evidence)
	}
	// The score is unchanged: the signal is dated at the completing change.
	if age := sig.Values["age_days"]; !near(age, round6(2-h(2))) {
		t.Errorf("signal age %v days, want %v (the completing change)", age, 2-h(2))
	}
}

func TestDriftUnknownAndBulkEdit(t *testing.T) {
	in := clean()
	in.Drift = DriftInput{}
	r := ComputeWith(method.Embedded().Weights, in, now)
	if r.Drift.Value != nil || r.Drift.Reason != ReasonDriftNotObs || r.DriftObservedSince != nil {
		t.Fatalf("drift %+v since %v", r.Drift, r.DriftObservedSince)
	}
	in = clean()
	in.Drift.BulkEdits = []BulkEdit{{Namespace: "io.github.alice", Start: ago(1), Servers: 15}}
	r = ComputeWith(method.Embedded().Weights, in, now)
	if *r.Drift.Value != 100 || !hasSignal(r.Drift, "bulk_edit") {
		t.Fatalf("bulk edit must be a weight-0 flag: %+v", r.Drift)
	}
	if r.DriftObservedSince == nil || !r.DriftObservedSince.Equal(ago(300)) {
		t.Fatalf("drift_observed_since %v", r.DriftObservedSince)
	}
}

func TestBulkEdits(t *testing.T) {
	w := method.Embedded().Weights
	var evs []schema.DriftEvent
	for i := 0; i < 12; i++ {
		evs = append(evs, schema.DriftEvent{Server: "com.pipe/s" + itoa(i), Kind: schema.KindDescriptionChanged, ObservedAt: ago(2).Add(time.Duration(i) * time.Hour)})
	}
	for i := 0; i < 9; i++ { // 9 servers: under the threshold
		evs = append(evs, schema.DriftEvent{Server: "com.small/s" + itoa(i), Kind: schema.KindDescriptionChanged, ObservedAt: ago(2)})
	}
	got := BulkEdits(w, evs)
	if len(got["com.pipe"]) != 1 || got["com.pipe"][0].Servers != 12 || len(got["com.small"]) != 0 {
		t.Fatalf("bulk edits %+v", got)
	}
}

func inc(id string, ageDays float64, sev, status string) Incident {
	return Incident{ID: id, Server: "io.github.alice/weather", Date: ago(ageDays), Class: "rug_pull", Severity: sev, Status: status}
}

// TestIncidentEvidencePointsAtTheAPI: an incident's evidence pointer
// resolves through the API like every other (SPEC §5), so it carries no
// outside uri of its own (the publisher gives it /v1/evidence/{id}); the
// curator's source is named in the signal's note.
func TestIncidentEvidencePointsAtTheAPI(t *testing.T) {
	in := clean()
	it := inc("i1", 10, "low", IncidentConfirmed)
	it.SourceURI = "https://example.com/advisory"
	in.Incidents = IncidentsInput{Checked: true, Items: []Incident{it}}
	r := ComputeWith(method.Embedded().Weights, in, now)
	if len(r.Incidents.Signals) != 1 || len(r.Incidents.Evidence) != 1 {
		t.Fatalf("incidents %+v", r.Incidents)
	}
	for _, e := range append(r.Incidents.Evidence, r.Incidents.Signals[0].Evidence...) {
		if e.URI != "" || e.ID != "i1" || e.Kind != EvIncident {
			t.Errorf("incident evidence %+v: want the id, no outside uri", e)
		}
	}
	if n := r.Incidents.Signals[0].Note; !strings.Contains(n, "source https://example.com/advisory") {
		t.Errorf("note %q does not name the source", n)
	}
}

func TestIncidents(t *testing.T) {
	cases := []struct {
		name  string
		items []Incident
		want  float64
		band  string
	}{
		{"none observed", nil, 100, BandA},
		{"confirmed high 0 d", []Incident{inc("i1", 0, "high", IncidentConfirmed)}, 40, BandF},
		{"confirmed high 30 d", []Incident{inc("i1", 30, "high", IncidentConfirmed)}, 100 - 60*math.Pow(0.5, 30.0/180), BandF},
		{"confirmed high 60 d", []Incident{inc("i1", 60, "high", IncidentConfirmed)}, 100 - 60*math.Pow(0.5, 60.0/180), BandF},
		{"confirmed high 180 d", []Incident{inc("i1", 180, "high", IncidentConfirmed)}, 70, BandF},
		// 60 × 0.5^(365/180) = 14.71; decay 0.245 ≥ 10 %: still F
		{"confirmed high 365 d", []Incident{inc("i1", 365, "high", IncidentConfirmed)}, 85.29, BandF},
		// decay at 600 d = 0.099 < 10 %: no longer F
		{"confirmed low 600 d", []Incident{inc("i1", 600, "low", IncidentConfirmed)}, 100 - 10*math.Pow(0.5, 600.0/180), BandA},
		{"confirmed critical 0 d floors at 0", []Incident{inc("i1", 0, "critical", IncidentConfirmed)}, 0, BandF},
		{"suspected counts half", []Incident{inc("i1", 0, "high", IncidentSuspected)}, 70, BandC},
		{"suspected medium is not high-severity", []Incident{inc("i1", 0, "medium", IncidentSuspected)}, 85, BandA},
		{"retracted counts 0", []Incident{inc("i1", 0, "critical", IncidentRetracted)}, 100, BandA},
		// k=1: 30 × 0.5^(100/180) = 20.41; k=2: 30 × 1.5 = 45
		{"recurrence within 365 d", []Incident{inc("i1", 100, "medium", IncidentConfirmed), inc("i2", 0, "medium", IncidentConfirmed)}, 34.59, BandF},
		// 400 d apart: both k=1
		{"no recurrence beyond 365 d", []Incident{inc("i1", 400, "low", IncidentSuspected), inc("i2", 0, "low", IncidentSuspected)},
			100 - 5*math.Pow(0.5, 400.0/180) - 5, BandA},
		// third within 365 d of both: k=3 → 1.5² = 2.25 (81.34; suspected low is not high-severity)
		{"third incident escalates 2.25x", []Incident{
			inc("i1", 200, "low", IncidentSuspected), inc("i2", 100, "low", IncidentSuspected), inc("i3", 0, "low", IncidentSuspected),
		}, 100 - 5*math.Pow(0.5, 200.0/180) - 7.5*math.Pow(0.5, 100.0/180) - 11.25, BandA},
		{"retracted does not raise k", []Incident{inc("i1", 10, "low", IncidentRetracted), inc("i2", 0, "low", IncidentSuspected)}, 95, BandA},
		{"future incident ignored", []Incident{inc("i1", -2, "critical", IncidentConfirmed)}, 100, BandA},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := clean()
			in.Incidents.Items = c.items
			r := ComputeWith(method.Embedded().Weights, in, now)
			if got := val(t, r.Incidents); !near(got, round2(c.want)) {
				t.Errorf("incidents = %v, want %v; %+v", got, round2(c.want), r.Incidents.Signals)
			}
			if r.Band != c.band {
				t.Errorf("band %s (%s), want %s", r.Band, r.BandReason, c.band)
			}
			if len(r.Incidents.Evidence) != countPast(c.items) {
				t.Errorf("evidence %d, want every past incident incl. retracted", len(r.Incidents.Evidence))
			}
		})
	}
	in := clean()
	in.Incidents = IncidentsInput{}
	if r := ComputeWith(method.Embedded().Weights, in, now); r.Incidents.Value != nil || r.Incidents.Reason != ReasonIncidentsNotChk {
		t.Fatalf("unchecked incidents %+v", r.Incidents)
	}
}

func countPast(items []Incident) int {
	n := 0
	for _, i := range items {
		if !i.Date.After(now) {
			n++
		}
	}
	return n
}

func TestAggregate(t *testing.T) {
	w := method.Embedded().Weights
	p := func(f float64) *float64 { return &f }
	cases := []struct {
		name                string
		prov, stat, dr, inc *float64
		want                *float64
	}{
		// 0.35·80 + 0.30·85 + 0.25·100 + 0.10·100
		{"all known", p(80), p(85), p(100), p(100), p(88.5)},
		// (0.35·80 + 0.25·100 + 0.10·100) / 0.70
		{"static unknown renormalizes", p(80), nil, p(100), p(100), p(90)},
		// (0.30·32.5 + 0.25·100 + 0.10·100) / 0.65
		{"provenance unknown", nil, p(32.5), p(100), p(100), p(68.85)},
		{"only incidents", nil, nil, nil, p(40), p(40)},
		{"all unknown", nil, nil, nil, nil, nil},
	}
	for _, c := range cases {
		got := Aggregate(w, c.prov, c.stat, c.dr, c.inc)
		switch {
		case c.want == nil && got != nil:
			t.Errorf("%s: got %v, want null", c.name, *got)
		case c.want != nil && (got == nil || !near(*got, *c.want)):
			t.Errorf("%s: got %v, want %v", c.name, got, *c.want)
		}
	}
}

func TestBands(t *testing.T) {
	cases := []struct {
		name string
		mod  func(*Input)
		band string
	}{
		{"A: all >= 80, nothing open", func(*Input) {}, BandA},
		// archived: provenance 79.03 → B
		{"B: a sub-score in [60,80)", func(in *Input) { in.Provenance.Archived = true }, BandB},
		{"C: a sub-score in [40,60)", func(in *Input) {
			in.Static.Findings = []StaticFinding{{ID: "x", Class: "tool_poisoning", Severity: "medium", RuleID: "TP-001"}}
		}, BandC},
		{"C: unknown sub-score (oauth-gated, unscanned)", func(in *Input) {
			in.Static.Coverage = CoverageAuthRequired
			in.Endpoint.Outcome = "auth_required"
		}, BandC},
		// static 85 − 15 × 1.5 = 62.5; a high suspicious_description is open high-severity (not strong-negative)
		{"C: open high-severity signal blocks A/B", func(in *Input) {
			in.Static.Findings = []StaticFinding{{ID: "x", Class: "suspicious_description", Severity: "high", RuleID: "SD-001"}}
		}, BandC},
		{"C: suspected critical incident is open high-severity", func(in *Input) {
			in.Incidents.Items = []Incident{inc("i1", 0, "critical", IncidentSuspected)} // incidents 50
		}, BandC},
		{"D: sub-score below 40 without any strong negative", func(in *Input) {
			in.Static.Findings = []StaticFinding{{ID: "x", Class: "command_injection", Severity: "medium", RuleID: "CI-002"},
				{ID: "y", Class: "command_injection", Severity: "medium", RuleID: "CI-003"}} // 85 − 35 − 35 = 15
		}, BandD},
		{"D: static exactly 40 (not below 40) but a strong negative", func(in *Input) {
			in.Static.Findings = []StaticFinding{{ID: "x", Class: "tool_poisoning", Severity: "high", RuleID: "TP-001"}} // 85 − 45 = 40
		}, BandD},
		{"B: static 60 from medium findings", func(in *Input) {
			in.Static.Findings = []StaticFinding{{ID: "x", Class: "suspicious_description", Severity: "medium", RuleID: "SD-002"},
				{ID: "y", Class: "hygiene", Severity: "medium", RuleID: "HY-001"},
				{ID: "z", Class: "hygiene", Severity: "medium", RuleID: "HY-002"}} // 85 − 15 − 5 − 5 = 60
		}, BandB},
		{"D: provenance 40 from a late repo is a strong negative", func(in *Input) {
			in.Provenance.ListedAt, in.Provenance.RepoCreatedAt = ago(100), ago(40)
		}, BandD},
		{"D: drift below 40", func(in *Input) {
			for i := 0; i < 5; i++ {
				in.Drift.Events = append(in.Drift.Events, ev(schema.KindEndpointsChanged, float64(i)*2, ``, `[["sse","https://h`+itoa(i)+`.example.com"]]`, false))
			}
		}, BandD},
		{"F: confirmed incident", func(in *Input) { in.Incidents.Items = []Incident{inc("i1", 10, "low", IncidentConfirmed)} }, BandF},
		{"F: repo unresolved + namespace mismatch", func(in *Input) {
			in.Provenance = ProvenanceInput{RepoURL: "https://github.com/bob/weather", RepoStatus: RepoUnresolved,
				Registry: Facts{NamespaceOwnerMismatch: true}}
		}, BandF},
		{"F: repo unresolved + co-registration cluster with last-known fork", func(in *Input) {
			in.Provenance = ProvenanceInput{RepoURL: "https://github.com/alice/weather", RepoStatus: RepoUnresolved, Fork: true,
				Registry: Facts{CoRegistrationCluster: true, ClusterSize: 4}}
		}, BandF},
		{"C: repo unresolved alone", func(in *Input) { in.Provenance = ProvenanceInput{} }, BandC},
		{"C: repo not observed + mismatch is not F", func(in *Input) {
			in.Provenance = ProvenanceInput{RepoURL: "https://github.com/bob/x", RepoStatus: RepoNotObserved, Registry: Facts{NamespaceOwnerMismatch: true}}
		}, BandC},
		{"D: resolved repo + mismatch + late repo", func(in *Input) {
			in.Provenance.Registry.NamespaceOwnerMismatch = true
			in.Provenance.ListedAt, in.Provenance.RepoCreatedAt = ago(100), ago(40)
		}, BandD},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := clean()
			c.mod(&in)
			r := ComputeWith(method.Embedded().Weights, in, now)
			if r.Band != c.band {
				t.Errorf("band %s (%s), want %s; score %v", r.Band, r.BandReason, c.band, deref(r.Score))
			}
		})
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestVisibility(t *testing.T) {
	cases := []struct {
		remote  bool
		outcome string
		vis     string
		reason  string
	}{
		{true, "ok", VisLiveEndpoint, ""},
		{true, "auth_required", VisOAuthGated, ReasonAuthRequired},
		{true, "unreachable", VisUnreachable, ReasonUnreachable},
		{true, "handshake_failed", VisUnreachable, ReasonHandshakeFailed},
		// No counted check yet: never probed, or only refused for load
		// (rate_limited counts neither way, SPEC §1.3) — not-checked, not
		// unreachable (SPEC §4 Coverage honesty).
		{true, "", VisNotChecked, ReasonNotChecked},
		{true, "not_checked", VisNotChecked, ReasonNotChecked},
		{true, "rate_limited", VisNotChecked, ReasonNotChecked},
		{false, "", VisNoEndpoint, ReasonNoEndpoint},
	}
	for _, c := range cases {
		in := clean()
		in.Endpoint = EndpointInput{HasRemote: c.remote, Outcome: c.outcome}
		r := ComputeWith(method.Embedded().Weights, in, now)
		if r.Visibility != c.vis {
			t.Errorf("%v/%q: visibility %s, want %s", c.remote, c.outcome, r.Visibility, c.vis)
		}
		got := ""
		for _, u := range r.Unobserved {
			if u.Dimension == "endpoint" {
				got = u.Reason
			}
		}
		if got != c.reason {
			t.Errorf("%v/%q: endpoint reason %q, want %q", c.remote, c.outcome, got, c.reason)
		}
	}
	in := clean()
	in.Static.Coverage = CoverageNoEndpoint
	in.Provenance = ProvenanceInput{}
	r := ComputeWith(method.Embedded().Weights, in, now)
	want := map[string]string{"static": CoverageNoEndpoint, "provenance": ReasonRepoUnresolved}
	for _, u := range r.Unobserved {
		if w, ok := want[u.Dimension]; ok && w != u.Reason {
			t.Errorf("%s reason %s, want %s", u.Dimension, u.Reason, w)
		}
		delete(want, u.Dimension)
	}
	if len(want) != 0 {
		t.Errorf("missing unobserved dimensions %v", want)
	}
}

func TestRecordFields(t *testing.T) {
	r := ComputeWith(method.Embedded().Weights, clean(), now)
	if r.MethodVersion != method.Embedded().Version() || r.WeightsSHA256 != method.Embedded().SHA256 || r.Namespace != "io.github.alice" {
		t.Fatalf("record header %+v", r)
	}
	// 0.35·100 + 0.30·85 (clean static baseline) + 0.25·100 + 0.10·100
	if r.Score == nil || *r.Score != 95.5 || r.Band != BandA {
		t.Fatalf("score %v", deref(r.Score))
	}
}

func TestReviewHold(t *testing.T) {
	w := method.Embedded().Weights
	cases := []struct {
		prev, next string
		stars      int
		want       bool
	}{
		{BandA, BandB, 1000, true},
		{BandA, BandB, 999, false},
		{BandB, BandB, 5000, false},
		{BandC, BandA, 5000, false},
		{BandB, BandF, 1200, true},
		{"", BandF, 5000, false},
	}
	for _, c := range cases {
		if got := ReviewHold(w, c.prev, c.next, c.stars); got != c.want {
			t.Errorf("%s→%s stars %d: %v, want %v", c.prev, c.next, c.stars, got, c.want)
		}
	}
	if !HoldUntil(w, now).Equal(now.Add(24 * time.Hour)) {
		t.Error("hold is 24 h")
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
