package search_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/forum-mcp/forum/api/search"
	"github.com/forum-mcp/forum/processors/scorer"
	"github.com/forum-mcp/forum/schema"
)

var holdAt = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// poisonSignal is a static tool_poisoning signal as the trust method writes
// it for a high-severity finding, with the scorer's evidence URI.
func poisonSignal(server string) (schema.Signal, schema.OpenSignal) {
	id := "scan:" + server + ":00112233aabbccdd"
	sg := schema.Signal{ID: "tool_poisoning/sensitive_file_read", Direction: schema.DirectionStrongNegative, Severity: "high", Open: true, Penalty: 45,
		Evidence: []schema.Evidence{{Kind: schema.EvScanFinding, ID: id, ObservedAt: holdAt, URI: scorer.EvidenceURI(id)}}}
	return sg, schema.OpenSignal{SubScore: "static", ID: sg.ID, Kind: "strong_negative"}
}

// TestSafetyHoldOf pins the hold decision (SPEC §3) and the marker's
// contents on records shaped as the trust method writes them.
func TestSafetyHoldOf(t *testing.T) {
	const name = "io.github.mallory/notes"
	poison, poisonOpen := poisonSignal(name)
	incident := schema.Signal{ID: "inc-7", Direction: schema.DirectionStrongNegative, Severity: "high", Open: true, Penalty: 100,
		Evidence: []schema.Evidence{{Kind: schema.EvIncident, ID: "inc-7", ObservedAt: holdAt}}} // no uri: the marker fills it
	decayed := schema.Signal{ID: "endpoint_suspect/trycloudflare.com", Direction: schema.DirectionStrongNegative, Severity: "high", Open: false, Penalty: 3,
		Evidence: []schema.Evidence{{Kind: schema.EvRegistryEvent, ID: "ev-1", ObservedAt: holdAt, URI: scorer.EvidenceURI("ev-1")}}}
	hygieneHigh := schema.Signal{ID: "suspicious_description/zero_width", Direction: "negative", Severity: "high", Open: true, Penalty: 22.5,
		Evidence: []schema.Evidence{{Kind: schema.EvScanFinding, ID: "scan:" + name + ":ffff", ObservedAt: holdAt, URI: scorer.EvidenceURI("scan:" + name + ":ffff")}}}
	rec := func(band, why string, static, drift, incidents []schema.Signal, open ...schema.OpenSignal) scorer.Record {
		return scorer.Record{Server: name, Band: band, BandReason: why, Static: schema.SubScore{Signals: static},
			Drift: schema.SubScore{Signals: drift}, Incidents: schema.SubScore{Signals: incidents}, OpenSignals: open}
	}
	for _, tc := range []struct {
		name    string
		r       scorer.Record
		reason  string   // "" no hold
		signals []string // sub_score/id/kind
		uris    []string // every evidence uri, in order
	}{
		{name: "band A", r: rec("A", "A: all sub-scores known and >= 80", nil, nil, nil)},
		{name: "band C, limited visibility", r: rec("C", "C: limited visibility (unknown sub-score)", nil, nil, nil)},
		{name: "band C with an open high-severity signal that is not strong-negative",
			r: rec("C", "C: open high-severity signal", []schema.Signal{hygieneHigh}, nil, nil, schema.OpenSignal{SubScore: "static", ID: hygieneHigh.ID, Kind: "high_severity"})},
		{name: "strong negative decayed below its threshold (closed)",
			r: rec("C", "C: limited visibility (unknown sub-score)", nil, []schema.Signal{decayed}, nil)},
		{name: "band D from a sub-score alone", r: rec("D", "D: drift below 40", nil, nil, nil), reason: search.HoldBandD},
		{name: "band D from an open strong negative", r: rec("D", "D: static below 40", []schema.Signal{poison}, nil, nil, poisonOpen),
			reason: search.HoldOpenStrongNegative, signals: []string{"static/" + poison.ID + "/strong_negative"}, uris: []string{poison.Evidence[0].URI}},
		{name: "an open strong negative holds whatever the band says",
			r:      rec("C", "C: limited visibility (unknown sub-score)", []schema.Signal{poison}, nil, nil, poisonOpen),
			reason: search.HoldOpenStrongNegative, signals: []string{"static/" + poison.ID + "/strong_negative"}, uris: []string{poison.Evidence[0].URI}},
		{name: "band F without a signal (repo unresolved, registry-side negative)",
			r: rec("F", "F: repo_unresolved with negative registry-side provenance signal namespace_owner_mismatch", nil, nil, nil), reason: search.HoldBandF},
		{name: "band F, a confirmed incident and a poisoned tool", r: rec("F", "F: confirmed incident inc-7 still >= 10% of its original weight",
			[]schema.Signal{hygieneHigh, poison}, nil, []schema.Signal{incident}, poisonOpen, schema.OpenSignal{SubScore: "static", ID: hygieneHigh.ID, Kind: "high_severity"},
			schema.OpenSignal{SubScore: "incidents", ID: "inc-7", Kind: "strong_negative"}),
			reason:  search.HoldBandF,
			signals: []string{"static/" + poison.ID + "/strong_negative", "static/" + hygieneHigh.ID + "/high_severity", "incidents/inc-7/strong_negative"},
			uris:    []string{poison.Evidence[0].URI, hygieneHigh.Evidence[0].URI, "/v1/evidence/inc-7"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := search.SafetyHoldOf(tc.r)
			if tc.reason == "" {
				if h != nil {
					t.Fatalf("held: %+v", h)
				}
				return
			}
			if h == nil {
				t.Fatalf("not held, want %s", tc.reason)
			}
			if h.Reason != tc.reason || h.Band != tc.r.Band || h.BandReason != tc.r.BandReason || h.ReviewPending {
				t.Errorf("hold %+v, want reason %s, band %s (%s)", h, tc.reason, tc.r.Band, tc.r.BandReason)
			}
			var sigs, uris []string
			for _, s := range h.Signals {
				sigs = append(sigs, s.SubScore+"/"+s.ID+"/"+s.Kind)
				for _, e := range s.Evidence {
					uris = append(uris, e.URI)
					if !strings.HasPrefix(e.URI, "/v1/evidence/") || e.ID == "" || e.Kind == "" || e.ObservedAt.IsZero() {
						t.Errorf("evidence %+v: want kind, id, observed_at and a /v1/evidence/ uri", e)
					}
				}
			}
			if !reflect.DeepEqual(sigs, tc.signals) || !reflect.DeepEqual(uris, tc.uris) {
				t.Errorf("signals %v evidence %v, want %v %v", sigs, uris, tc.signals, tc.uris)
			}
			if h.Signals == nil {
				t.Error("signals is nil: it must be a list, empty when the band alone holds")
			}
		})
	}
	// a record under popular-server review still holds, and says so
	r := rec("D", "D: static below 40", []schema.Signal{poison}, nil, nil, poisonOpen)
	r.ReviewPending = &scorer.ReviewPending{PreviousBand: "A", PreviousPublicationID: "p0", Stars: 5000, Until: holdAt.Add(24 * time.Hour)}
	if h := search.SafetyHoldOf(r); h == nil || !h.ReviewPending {
		t.Errorf("a record under review: %+v, want held with review_pending", h)
	}
}

// TestPlantedServersAreHeld runs the scorer's generated population (the
// same known-bad servers the separation test plants) through the decision:
// each planted server with an open strong-negative signal is held with that
// signal and a resolvable evidence uri; no band A or B record is.
func TestPlantedServersAreHeld(t *testing.T) {
	g := scorer.Generate(60, 5, holdAt)
	recs := scorer.Compute(g.Inputs, g.Sources, scorer.Meta{PublicationID: scorer.PublicationID(holdAt), ComputedAt: holdAt}, nil)
	byName := map[string]scorer.Record{}
	for _, r := range recs {
		byName[r.Server] = r
		if h := search.SafetyHoldOf(r); h != nil && (r.Band == "A" || r.Band == "B") {
			t.Errorf("%s: band %s held: %+v", r.Server, r.Band, h)
		}
	}
	for _, tc := range []struct{ server, signal string }{
		{scorer.PlantedPoisoning, "static/tool_poisoning/"},
		{scorer.PlantedSecret, "static/hardcoded_secret/"},
		{scorer.PlantedTunnel, "drift/"},
		{scorer.PlantedLateRepo, "provenance/"},
	} {
		r, ok := byName[tc.server]
		if !ok {
			t.Fatalf("%s: no record", tc.server)
		}
		h := search.SafetyHoldOf(r)
		if h == nil {
			t.Errorf("%s (band %s, open %v): not held", tc.server, r.Band, r.OpenSignals)
			continue
		}
		found := false
		for _, s := range h.Signals {
			if s.Kind == "strong_negative" && strings.HasPrefix(s.SubScore+"/"+s.ID, tc.signal) && len(s.Evidence) > 0 &&
				strings.HasPrefix(s.Evidence[0].URI, "/v1/evidence/") {
				found = true
			}
		}
		if !found || h.Reason == search.HoldBandD {
			t.Errorf("%s: hold %+v, want an open strong-negative %s… with evidence", tc.server, h, tc.signal)
		}
	}
}

// TestHeldIsFlaggedOnce pins "treated as flagged" as one display state: a
// held twin ranks at half its plain twin, a held and flagged one too (not a
// quarter), and the ×0.85 for a down server still multiplies.
func TestHeldIsFlaggedOnce(t *testing.T) {
	hold := &search.SafetyHold{Reason: search.HoldBandD, Band: "D", Signals: []search.HeldSignal{}}
	for _, tc := range []struct {
		name string
		mod  func(*search.Doc)
		mult float64
	}{
		{"held", func(d *search.Doc) { d.Hold = hold }, 0.5},
		{"held and flagged", func(d *search.Doc) { d.Hold, d.Flags = hold, []string{"placeholder"} }, 0.5},
		{"flagged", func(d *search.Doc) { d.Flags = []string{"placeholder"} }, 0.5},
		{"held and unreachable", func(d *search.Doc) { d.Hold, d.LastOutcome = hold, "unreachable" }, 0.425},
		{"band D recorded but no hold", func(d *search.Doc) { d.Band = "D" }, 1}, // the hold comes from SafetyHoldOf, not Doc.Band
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, plain, other := twins(t, tc.mod)
			resp, err := s.Search(context.Background(), "weatherglass barometric", 50, nil)
			if err != nil {
				t.Fatal(err)
			}
			ip, rp := find(resp.Results, plain)
			io, ro := find(resp.Results, other)
			if ip < 0 || io < 0 {
				t.Fatalf("twins not found")
			}
			if ro.Multiplier != tc.mult || ro.Rank != rp.Rank*tc.mult || ro.Relevance != rp.Relevance || ro.Score != rp.Score {
				t.Errorf("rank %v (×%v) vs plain %v: want ×%v, same relevance and score", ro.Rank, ro.Multiplier, rp.Rank, tc.mult)
			}
			if tc.mult < 1 && io <= ip {
				t.Errorf("at %d, plain twin at %d", io, ip)
			}
			want, err := s.SearchReference(context.Background(), "weatherglass barometric", 50, nil)
			if err != nil || !reflect.DeepEqual(resp, want) {
				t.Errorf("Search and the SQL reference differ (%v)", err)
			}
		})
	}
}

// TestSafetyHoldOnRealSnapshot edits one record of the bundled real
// snapshot — the leaderboard's first server — to band D, with and without
// an open strong-negative signal, and compares the index built from it with
// the unedited one: the server leaves the leaderboard (exactly as if it
// were not indexed), its search rank is half its unheld twin's with the
// same relevance and Toolfinder score, and its hit carries the marker with
// the evidence uri.
func TestSafetyHoldOnRealSnapshot(t *testing.T) {
	recs, text := bundledRecords(t)
	docsOf := func(recs []scorer.Record, skip string) []search.Doc {
		var docs []search.Doc
		for _, r := range recs {
			if r.Server != skip {
				docs = append(docs, search.DocFromRecord(r, text[r.Server][0], text[r.Server][1], nil))
			}
		}
		return docs
	}
	plain := build(t, docsOf(recs, ""))
	top := plain.Leaderboard("", 1)
	if len(top) != 1 {
		t.Fatal("empty leaderboard")
	}
	target := top[0].Name
	without := build(t, docsOf(recs, target))
	names := func(ds []search.Doc) []string {
		var n []string
		for _, d := range ds {
			n = append(n, d.Name)
		}
		return n
	}
	ctx := context.Background()
	query := strings.Join(strings.FieldsFunc(target, func(r rune) bool { return r == '/' || r == '.' || r == '-' }), " ")
	base, err := plain.Search(ctx, query, search.MaxLimit, nil)
	if err != nil {
		t.Fatal(err)
	}
	ib, rb := find(base.Results, target)
	if ib < 0 || rb.Hold != nil || rb.Multiplier != 1 {
		t.Fatalf("%s unheld: at %d, %+v", target, ib, rb)
	}

	poison, poisonOpen := poisonSignal(target)
	for _, tc := range []struct {
		name   string
		edit   func(*scorer.Record)
		reason string
		uri    string
	}{
		{"band D with an open tool_poisoning signal", func(r *scorer.Record) {
			r.Band, r.BandReason = "D", "D: open strong-negative signal static/"+poison.ID
			r.Static.Signals = append(append([]schema.Signal(nil), r.Static.Signals...), poison)
			r.OpenSignals = append(append([]schema.OpenSignal(nil), r.OpenSignals...), poisonOpen)
		}, search.HoldOpenStrongNegative, poison.Evidence[0].URI},
		{"band D alone", func(r *scorer.Record) { r.Band, r.BandReason = "D", "D: drift below 40" }, search.HoldBandD, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			edited := append([]scorer.Record(nil), recs...)
			for i := range edited {
				if edited[i].Server == target {
					tc.edit(&edited[i])
				}
			}
			held := build(t, docsOf(edited, ""))
			// off the leaderboard: the same list as without the server at all
			if got, want := names(held.Leaderboard("", 0)), names(without.Leaderboard("", 0)); !reflect.DeepEqual(got, want) {
				t.Errorf("leaderboard with %s held differs from the one without it", target)
			}
			for _, d := range held.Leaderboard("", 0) {
				if d.Name == target {
					t.Errorf("%s on the leaderboard", target)
				}
			}
			got, err := held.Search(ctx, query, search.MaxLimit, nil)
			if err != nil {
				t.Fatal(err)
			}
			ih, rh := find(got.Results, target)
			if ih < 0 {
				t.Fatalf("%s not found by %q", target, query)
			}
			if rh.Rank != 0.5*rb.Rank || rh.Multiplier != 0.5 || rh.Relevance != rb.Relevance || rh.Score != rb.Score || ih < ib {
				t.Errorf("held: at %d rank %v ×%v score %d; unheld at %d rank %v score %d: want half the rank, same score",
					ih, rh.Rank, rh.Multiplier, rh.Score, ib, rb.Rank, rb.Score)
			}
			t.Logf("%s: unheld rank %v at %d, held %v at %d", target, rb.Rank, ib, rh.Rank, ih)
			h := rh.Hold
			if h == nil || h.Reason != tc.reason || h.Band != "D" {
				t.Fatalf("marker %+v, want reason %s", h, tc.reason)
			}
			if tc.uri != "" && (len(h.Signals) != 1 || h.Signals[0].ID != poison.ID || len(h.Signals[0].Evidence) != 1 || h.Signals[0].Evidence[0].URI != tc.uri) {
				t.Errorf("marker signals %+v, want %s with evidence %s", h.Signals, poison.ID, tc.uri)
			}
			if want, err := held.SearchReference(ctx, query, search.MaxLimit, nil); err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("Search and the SQL reference differ (%v)", err)
			}
			// the other servers are untouched
			for _, r := range got.Results {
				if r.Name == target {
					continue
				}
				if _, ru := find(base.Results, r.Name); ru.Name != "" && (ru.Rank != r.Rank || r.Hold != nil) {
					t.Errorf("%s changed: %v → %v", r.Name, ru.Rank, r.Rank)
				}
			}
		})
	}
}

// TestSponsorCannotBypassHold: a held server scoring >= 50 in the campaign
// is never the sponsored entry (the next eligible one is); it stays in the
// organic results, halved.
func TestSponsorCannotBypassHold(t *testing.T) {
	docs := bundledDocs(t)
	var eligible []int
	for i := range docs {
		if strings.Contains(strings.ToLower(docs[i].Description), "database") && len(eligible) < 3 {
			docs[i].Score = 70 - 5*len(eligible)
			eligible = append(eligible, i)
		}
	}
	if len(eligible) < 2 {
		t.Fatal("need two database servers")
	}
	heldName, otherName := docs[eligible[0]].Name, docs[eligible[1]].Name
	docs[eligible[0]].Hold = &search.SafetyHold{Reason: search.HoldBandD, Band: "D", Signals: []search.HeldSignal{}}
	s := build(t, docs)
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		campaign []string
		want     string // "" none
	}{
		{"held alone", []string{heldName}, ""},
		{"held first in the campaign", []string{heldName, otherName}, otherName},
		{"held after an eligible one", []string{otherName, heldName}, otherName},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, run := range []func(context.Context, string, int, []string) (search.Response, error){s.Search, s.SearchReference} {
				got, err := run(ctx, "database sql", 30, tc.campaign)
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case tc.want == "" && len(got.Sponsored) != 0:
					t.Errorf("sponsored %s", got.Sponsored[0].Name)
				case tc.want != "" && (len(got.Sponsored) != 1 || got.Sponsored[0].Name != tc.want):
					t.Errorf("sponsored %+v, want %s", got.Sponsored, tc.want)
				}
				if i, r := find(got.Results, heldName); i < 0 || r.Multiplier != 0.5 || r.Hold == nil {
					t.Errorf("held server organic at %d ×%v", i, r.Multiplier)
				}
			}
		})
	}
}
