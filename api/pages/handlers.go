package pages

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/forum-mcp/forum/api/search"
	"github.com/forum-mcp/forum/processors/categories"
	"github.com/forum-mcp/forum/processors/toolfinder"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/store"
)

// LeaderboardRows is how many rows the home page lists.
const LeaderboardRows = 50

// SearchRows is how many results the search page lists.
const SearchRows = 20

func (p *Pages) home(w http.ResponseWriter, r *http.Request) {
	cat := r.URL.Query().Get("category")
	if !validCategory(cat) {
		p.fail(w, r, http.StatusBadRequest, "unknown category "+cat, nil)
		return
	}
	v := homeView{Title: "forum: MCP servers, scored", Categories: categories.IDs(), Category: cat, API: "/v1/leaderboard"}
	if cat != "" {
		v.API += "?category=" + url.QueryEscape(cat)
	}
	var snap *search.Snapshot
	if p.o.Index != nil {
		snap = p.o.Index.Current()
	}
	if snap == nil {
		p.fail(w, r, http.StatusServiceUnavailable, "The search index is not built yet (no publication indexed); try again in a few seconds.", nil)
		return
	}
	v.PublicationID, v.Servers = snap.PublicationID, snap.Len()
	v.Rows = p.leaderboard(snap, cat)
	p.render(w, http.StatusOK, "home", v)
}

// leaderboard returns the snapshot's leaderboard rows for a category,
// computed once per snapshot and category (ranking every indexed server
// per request costs more than the page's render).
func (p *Pages) leaderboard(snap *search.Snapshot, cat string) []listRow {
	k := boardKey{snap.PublicationID, cat}
	p.mu.Lock()
	rows, ok := p.boards[k]
	p.mu.Unlock()
	if ok {
		return rows
	}
	for i, d := range snap.Leaderboard(cat, LeaderboardRows) {
		rows = append(rows, rowOf(i+1, d, 0))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for old := range p.boards {
		if old.publication != k.publication { // a newer index replaced it
			delete(p.boards, old)
		}
	}
	p.boards[k] = rows
	return rows
}

// validCategory accepts "" and the classifier's ids (the API's pattern is
// [a-z0-9-]*; an id outside the list would list nothing).
func validCategory(c string) bool {
	if c == "" {
		return true
	}
	for _, id := range categories.IDs() {
		if id == c {
			return true
		}
	}
	return false
}

func (p *Pages) search(w http.ResponseWriter, r *http.Request) {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	if q == "" {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	v := searchView{Title: "Search: " + q, Query: q, API: "/v1/search?q=" + url.QueryEscape(q)}
	if p.o.Index == nil {
		p.fail(w, r, http.StatusServiceUnavailable, search.ErrNotReady.Error(), nil)
		return
	}
	ctx, cancel := p.ctx(r)
	defer cancel()
	resp, err := p.o.Index.Search(ctx, q, SearchRows, p.o.Sponsors)
	switch {
	case errors.Is(err, search.ErrBadQuery):
		p.fail(w, r, http.StatusBadRequest, err.Error(), nil)
		return
	case errors.Is(err, search.ErrNotReady):
		p.fail(w, r, http.StatusServiceUnavailable, "The search index is not built yet (no publication indexed); try again in a few seconds.", nil)
		return
	case err != nil:
		p.fail(w, r, http.StatusInternalServerError, "search failed; see the server log", err)
		return
	}
	v.PublicationID, v.Total, v.Terms = resp.PublicationID, resp.Total, resp.Terms
	for i, res := range resp.Results {
		v.Results = append(v.Results, rowOf(i+1, res.Doc, res.Rank))
		v.Results[i].Multiplier = res.Multiplier
	}
	for _, res := range resp.Sponsored {
		row := rowOf(0, res.Doc, res.Rank)
		row.Sponsored = true
		v.Sponsored = append(v.Sponsored, row)
	}
	p.render(w, http.StatusOK, "search", v)
}

// HealthDays is the span of the health strip and the latency sparkline.
const HealthDays = 30

// MaxTimeline bounds the drift events a page lists (newest first).
const MaxTimeline = 100

func (p *Pages) server(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if len(name) < 3 || len(name) > 200 || !strings.Contains(name, "/") {
		p.fail(w, r, http.StatusNotFound, "no server named "+name+" (names look like io.github.owner/repo)", nil)
		return
	}
	ctx, cancel := p.ctx(r)
	defer cancel()
	var (
		rec    store.TrustRecord
		recErr error
		row    store.ServerRow
		rowErr error
		events []schema.DriftEvent
		incs   []store.Incident
	)
	// The reads are independent: run them side by side (the page's latency
	// is the slowest, not the sum).
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { rec, recErr = p.o.Record(gctx, name); return nil })
	g.Go(func() error {
		row, events, rowErr = p.o.Server(gctx, name)
		return nil
	})
	g.Go(func() (err error) { incs, err = p.o.Store.Incidents(gctx, name); return err })
	if err := g.Wait(); err != nil {
		p.fail(w, r, http.StatusInternalServerError, "reading the server failed; see the server log", err)
		return
	}
	switch {
	case recErr != nil && !isNotFound(recErr):
		p.fail(w, r, http.StatusInternalServerError, "reading the record failed; see the server log", recErr)
		return
	case rowErr != nil && !isNotFound(rowErr):
		p.fail(w, r, http.StatusInternalServerError, "reading the server failed; see the server log", rowErr)
		return
	case isNotFound(recErr) && isNotFound(rowErr):
		p.fail(w, r, http.StatusNotFound, "no server named "+name+" in the registry history", nil)
		return
	}
	v := serverView{Name: name, Title: name, API: apiPath(name, "/trust"), TrustAPI: apiPath(name, "/trust"), ProofAPI: apiPath(name, "/proof"),
		ServerAPI: apiPath(name, ""), HealthAPI: apiPath(name, "/health"), EventsAPI: apiPath(name, "/events"), IncidentsAPI: apiPath(name, "/incidents")}
	if rowErr == nil {
		v.Registry = &registryView{Title: row.Title, Description: row.Description, Version: row.Version, Status: row.Status,
			PublishedAt: row.PublishedAt, UpdatedAt: row.UpdatedAt}
		if row.Title != "" {
			v.Title = row.Title + " (" + name + ")"
		}
	}
	end := time.Now().UTC()
	if recErr == nil {
		var sr schema.Record
		if err := json.Unmarshal([]byte(rec.Record), &sr); err != nil {
			p.fail(w, r, http.StatusInternalServerError, "decoding the record failed; see the server log", fmt.Errorf("record of %s: %w", name, err))
			return
		}
		v.Record = recordViewOf(sr, p.o.Method.Weights.Aggregation.Weights)
		// The strip ends at the record's time (event time: a replayed
		// history is shown as of its records, not today's clock), or at
		// the newest check after it.
		end = sr.ComputedAt.UTC()
	}
	checks, err := p.o.Store.HealthChecks(ctx, store.HealthQuery{Server: name, Since: end.Add(-HealthDays * 24 * time.Hour), Limit: store.MaxEventLimit})
	if err != nil {
		p.fail(w, r, http.StatusInternalServerError, "reading health checks failed; see the server log", err)
		return
	}
	v.Health = healthViewOf(checks, end)
	// Newest first, on a copy: a read model's slice is shared.
	events = append([]schema.DriftEvent(nil), events...)
	sort.SliceStable(events, func(i, j int) bool { return events[i].ObservedAt.After(events[j].ObservedAt) })
	v.EventCount = len(events)
	for i, e := range events {
		if i == MaxTimeline {
			break
		}
		v.Timeline = append(v.Timeline, eventViewOf(e))
	}
	for _, in := range incs {
		v.Incidents = append(v.Incidents, incidentView{ID: in.ID, Date: in.Date, Class: in.Class, Severity: in.Severity, Status: in.Status,
			SourceURI: in.SourceURI, Curator: in.Curator, Note: in.Note, Evidence: schema.EvidenceURI(in.ID)})
	}
	p.render(w, http.StatusOK, "server", v)
}

func (p *Pages) method(w http.ResponseWriter, r *http.Request) {
	m := p.o.Method
	v := methodView{Title: "Method", API: "/v1/method", MethodVersion: m.Version(), WeightsFile: m.File, WeightsSHA256: m.SHA256,
		ToolfinderVersion: toolfinder.Version, Changelog: m.Changelog, Penalties: penaltyRules, Components: componentRules}
	for _, k := range []string{"provenance", "static", "drift", "incidents"} {
		v.Aggregation = append(v.Aggregation, weightRow{Name: k, Weight: m.Weights.Aggregation.Weights[k]})
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, m.Raw, "", "  "); err == nil {
		v.WeightsJSON = pretty.String()
	} else {
		v.WeightsJSON = string(m.Raw)
	}
	if p.o.Store != nil {
		ctx, cancel := p.ctx(r)
		defer cancel()
		rows, gate, err := p.o.Store.LatestBaseRates(ctx)
		if err != nil {
			p.fail(w, r, http.StatusInternalServerError, "reading base rates failed; see the server log", err)
			return
		}
		for _, br := range rows {
			v.Rates = append(v.Rates, rateRow{Flag: br.Flag, Count: br.Count, N: br.N, Live: br.Live, Pinned: br.Pinned, DeltaPP: br.DeltaPP,
				Scored: br.Scored, Direction: br.Direction})
		}
		if !gate.AsOf.IsZero() {
			v.Gate = &gateView{AsOf: gate.AsOf.UTC(), Open: gate.Open, CoveragePct: gate.CoveragePct, Resolvable: gate.Resolvable, Fresh: gate.Fresh}
			if len(rows) > 0 {
				v.RatesAsOf = rows[0].AsOf.UTC()
			}
		}
	}
	p.render(w, http.StatusOK, "method", v)
}
