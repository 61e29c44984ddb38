// Package pages is the API for people: server-rendered HTML pages beside the
// JSON API, for someone deciding whether to install a server.
//
// In: the store (the newest published record of a server, its health
// checks, drift events and incidents, the live base rates) and the search
// index (search.Index: the same ranking as GET /v1/search, the same
// leaderboard as GET /v1/leaderboard, the same safety hold). Out:
//
//	GET /                 search box and leaderboard (category filter)
//	GET /search?q=        search results; the sponsored entry labelled, apart
//	GET /servers/{name}   one server: Toolfinder breakdown, FORUM record,
//	                      30-day health strip and latency sparkline (inline
//	                      SVG), drift timeline, incidents, categories, safety
//	                      hold, links to the JSON record and its proof
//	GET /method           method version, weights, change log, base rates
//
// Every page links its JSON equivalent and works without JavaScript (none
// is served) on a phone-sized screen. Pages are html/template: everything
// from strangers (names, titles, descriptions, tool text, evidence) is
// escaped by the template engine, and no stranger text ever becomes
// template.HTML; SVG is drawn from numbers by the templates themselves.
//
// Display rules are the API's (SPEC §3): a server under a safety hold
// (search.SafetyHoldOf: FORUM band D/F or an open strong-negative signal)
// is never on the leaderboard, is halved in search, never sponsored, and its
// page and every listing of it show the marker with its signals and their
// evidence. Nothing here changes a score.
package pages

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/forum-mcp/forum/api/search"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/store"
)

// Store is what the pages read. The API's store implements it.
type Store interface {
	LatestTrustRecord(ctx context.Context, server string) (store.TrustRecord, error)
	GetServer(ctx context.Context, name string) (store.ServerRow, error)
	HealthChecks(ctx context.Context, q store.HealthQuery) ([]store.HealthCheck, error)
	Events(ctx context.Context, q store.EventQuery) ([]schema.DriftEvent, error)
	Incidents(ctx context.Context, server string) ([]store.Incident, error)
	LatestBaseRates(ctx context.Context) ([]store.BaseRateRow, store.GateRow, error)
}

// Options configure the pages.
type Options struct {
	Store Store
	// Index is the search index the API's search and leaderboard use (kept
	// current by its Refresher). Nil or not built: / and /search say so
	// with a 503.
	Index *search.Index
	// Sponsors is the sponsorship campaign (as search.Index.Search takes it).
	Sponsors []string
	// Method is the method in force (default: the embedded one).
	Method *method.Method
	// Record returns a server's newest published record; nil reads
	// Store.LatestTrustRecord (a read model may be passed instead).
	Record func(ctx context.Context, server string) (store.TrustRecord, error)
	// Server returns a server's latest registry entry and its drift events
	// (store.ErrNotFound when the registry never held it); nil reads the
	// store (StoreServer).
	Server func(ctx context.Context, name string) (store.ServerRow, []schema.DriftEvent, error)
	Log    *zap.Logger
	// Timeout bounds one page's store reads (default 10 s).
	Timeout time.Duration
}

// Pages renders the pages.
type Pages struct {
	o Options

	// The leaderboard of a snapshot and category never changes (snapshots
	// are immutable): its rows are kept, for the current publication only.
	mu     sync.Mutex
	boards map[boardKey][]listRow
}

type boardKey struct{ publication, category string }

// New returns the pages over o.
func New(o Options) *Pages {
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	if o.Method == nil {
		o.Method = method.Embedded()
	}
	if o.Record == nil && o.Store != nil {
		o.Record = o.Store.LatestTrustRecord
	}
	if o.Server == nil && o.Store != nil {
		st := o.Store
		o.Server = func(ctx context.Context, name string) (store.ServerRow, []schema.DriftEvent, error) {
			return StoreServer(ctx, st, name)
		}
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	return &Pages{o: o, boards: map[boardKey][]listRow{}}
}

// StoreServer reads a server's latest registry entry and its drift events
// from the store (the entry's store.ErrNotFound is returned with the
// events, which may exist for a removed server).
func StoreServer(ctx context.Context, st Store, name string) (store.ServerRow, []schema.DriftEvent, error) {
	evs, err := st.Events(ctx, store.EventQuery{Server: name, Limit: store.MaxEventLimit})
	if err != nil {
		return store.ServerRow{}, nil, err
	}
	row, err := st.GetServer(ctx, name)
	return row, evs, err
}

// Mount returns a handler that answers the pages' paths and passes every
// other request to next (the JSON API).
func (p *Pages) Mount(next http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", p.home)
	mux.HandleFunc("GET /search", p.search)
	// {name...}: registry names hold '/', and both /servers/a.b/c and the
	// API's encoded form /servers/a.b%2Fc reach the same page.
	mux.HandleFunc("GET /servers/{name...}", p.server)
	mux.HandleFunc("GET /method", p.method)
	mux.Handle("/", next)
	return mux
}

// ServerPath is the page of a server: each segment escaped, the '/' of
// the name kept, so the address reads like the name.
func ServerPath(name string) string {
	segs := strings.Split(name, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return "/servers/" + strings.Join(segs, "/")
}

// apiPath is a server's route under /v1/servers, the name URL-encoded as
// the API wants it.
func apiPath(name, suffix string) string {
	return "/v1/servers/" + url.PathEscape(name) + suffix
}

func (p *Pages) ctx(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), p.o.Timeout)
}

// fail renders the error page: 404 for what does not exist, 503 before the
// index is built, 500 (with the cause logged, not shown) otherwise.
func (p *Pages) fail(w http.ResponseWriter, r *http.Request, status int, msg string, err error) {
	if err != nil {
		p.o.Log.Error("pages: read failed", zap.String("path", r.URL.Path), zap.Error(err))
	}
	p.render(w, status, "error", errorView{Title: http.StatusText(status), Status: status, Message: msg, API: "/openapi.json"})
}

func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }
