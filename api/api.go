// Package api serves what the pipeline stored: the registry's servers, their
// versions and drift events, applied snapshots and dead letters, through a
// Huma v2 OpenAPI 3.1 layer (document at /openapi.json, docs at /docs), plus
// /healthz, /readyz and Prometheus /metrics.
//
// Before any route, withLimits refuses what no route can use (a path or
// query too long, not UTF-8, with a NUL byte or a malformed escape) with a
// problem document, and boundErrors bounds what any error answer quotes of
// the input. Operations under /v1/admin/ pass the admin gate (admin.go):
// authorized before their input is read, and every call logged, counted
// and stored in admin_audit, refused ones included.
//
// Server names contain '/', so they travel URL-encoded in paths
// (/v1/servers/io.github.owner%2Frepo), as in the registry's own API.
package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"

	"github.com/forum-mcp/forum/api/docs"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/store"
)

// Version of the API document.
const Version = "0.1.0"

// Reader is what the API reads from the store.
type Reader interface {
	Ping(ctx context.Context) error
	ListServers(ctx context.Context, q store.ListQuery) ([]store.ServerRow, error)
	GetServer(ctx context.Context, name string) (store.ServerRow, error)
	Versions(ctx context.Context, name string, limit int) ([]store.Record, error)
	Events(ctx context.Context, q store.EventQuery) ([]schema.DriftEvent, error)
	EventCounts(ctx context.Context) (map[string]int64, error)
	Snapshots(ctx context.Context) ([]schema.SnapshotSummary, error)
	DLQ(ctx context.Context, limit int) ([]schema.DLQMessage, error)
	HealthChecks(ctx context.Context, q store.HealthQuery) ([]store.HealthCheck, error)
	LatestHealth(ctx context.Context, server string) ([]store.HealthCheck, error)
}

// Options configure the API.
type Options struct {
	Store    Reader
	Log      *zap.Logger
	Registry *prometheus.Registry // served on /metrics; nil for none
	// Ready reports extra readiness (e.g. the bus); nil means store only.
	Ready func(ctx context.Context) error
	// Routes register further operations (trust records, incidents, …) that
	// live beside the processors that feed them.
	Routes []func(huma.API)
	// Servers is the read model GET /v1/servers/{name} answers from. Nil:
	// New makes one that loads on the first request and keeps itself
	// current (ServerModel). Pass one to load it before serving.
	Servers *ServerModel
	// NoReadModel serves GET /v1/servers/{name} from the store on every
	// request, as before the read model (a kill switch; the benchmark's
	// comparison arm).
	NoReadModel bool
	// AdminAudit stores a row of every admin call (the admin gate,
	// adminAuditor). Nil: Store, when it is a store.AdminStore; else admin
	// calls are logged and counted only.
	AdminAudit store.AdminStore
	// Registerer takes the API's own metrics (forum_admin_requests_total).
	// Nil: Registry, when set; else they are not exported.
	Registerer prometheus.Registerer
	// Now is the admin audit's clock (default time.Now).
	Now func() time.Time
}

// New returns the HTTP handler and the Huma API (for the OpenAPI document).
func New(o Options) (http.Handler, huma.API) {
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	mux := http.NewServeMux()
	cfg := huma.DefaultConfig("forum", Version)
	cfg.Info.Description = "Trust and quality records for every server in the official MCP Registry: registry history, drift events and dead letters (walking skeleton)."
	cfg.OpenAPIPath = "/openapi"
	// Bound error answers before the schema link rewraps them.
	cfg.Transformers = append([]huma.Transformer{boundErrors}, cfg.Transformers...)
	cfg.DocsPath = "" // /docs is api/docs: its viewer is embedded, Huma's loads from a CDN
	api := humago.New(mux, cfg)
	if o.AdminAudit == nil {
		o.AdminAudit, _ = o.Store.(store.AdminStore)
	}
	// The admin gate wraps every operation registered after it: all of them.
	aud := newAdminAuditor(o)
	api.OpenAPI().OnAddOperation = append(api.OpenAPI().OnAddOperation, aud.addOperation)
	api.UseMiddleware(aud.middleware(api))
	h := &handlers{o: o, model: o.Servers}
	if h.model == nil && !o.NoReadModel && o.Store != nil {
		h.model = NewServerModel(o.Store, o.Log)
	}
	if o.NoReadModel {
		h.model = nil
	}
	h.addRoutes(api)
	h.addHealthRoutes(api)
	for _, r := range o.Routes {
		r(api)
	}
	docs.Register(mux, docs.Options{})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", h.readyz)
	if o.Registry != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(o.Registry, promhttp.HandlerOpts{Registry: o.Registry}))
	}
	return withLimits(api, mux, aud), api
}

type handlers struct {
	o     Options
	model *ServerModel // nil: every lookup reads the store
}

func (h *handlers) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	err := h.o.Store.Ping(ctx)
	if err == nil && h.o.Ready != nil {
		err = h.o.Ready(ctx)
	}
	w.Header().Set("Content-Type", "text/plain")
	if err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("not ready: " + err.Error() + "\n"))
		return
	}
	_, _ = w.Write([]byte("ready\n"))
}

// Server is a server's latest registry entry.
type Server struct {
	Name          string         `json:"name" doc:"Server name (namespace/name)."`
	Namespace     string         `json:"namespace"`
	Version       string         `json:"version" doc:"The latest version."`
	Status        string         `json:"status" enum:"active,deprecated,deleted"`
	Description   string         `json:"description"`
	Title         string         `json:"title,omitempty"`
	PublishedAt   *time.Time     `json:"published_at,omitempty"`
	UpdatedAt     *time.Time     `json:"updated_at,omitempty"`
	ObservedAt    time.Time      `json:"observed_at" doc:"When this content was first observed."`
	ContentSHA256 string         `json:"content_sha256"`
	Detail        map[string]any `json:"detail,omitempty" doc:"The registry's server object as published."`
}

// VersionRow is one stored content of one version.
type VersionRow struct {
	Version       string     `json:"version"`
	Status        string     `json:"status"`
	IsLatest      bool       `json:"is_latest"`
	PublishedAt   *time.Time `json:"published_at,omitempty"`
	ObservedAt    time.Time  `json:"observed_at"`
	ContentSHA256 string     `json:"content_sha256"`
	Description   string     `json:"description"`
}

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func toServer(r store.Record, detail bool) Server {
	s := Server{Name: r.Name, Namespace: r.Namespace, Version: r.Version, Status: r.Status, Description: r.Description, Title: r.Title,
		PublishedAt: optTime(r.PublishedAt), UpdatedAt: optTime(r.UpdatedAt), ObservedAt: r.ObservedAt, ContentSHA256: r.ContentSHA256}
	if detail && r.Server != "" {
		_ = json.Unmarshal([]byte(r.Server), &s.Detail)
	}
	return s
}

type listInput struct {
	Namespace string `query:"namespace" maxLength:"200" doc:"Only servers of this namespace (the part before '/')."`
	Cursor    string `query:"cursor" maxLength:"400" doc:"The next_cursor of the previous page."`
	Limit     int    `query:"limit" minimum:"1" maximum:"1000" default:"100" doc:"Servers per page (at most 1000)."`
}

type listOutput struct {
	Body struct {
		Servers    []Server `json:"servers"`
		NextCursor string   `json:"next_cursor,omitempty" doc:"Set on every full page (limit servers): pass it as cursor for the next page, which may be empty, as in the registry's own API. Absent on a short page: the last one."`
	}
}

type nameInput struct {
	Name string `path:"name" minLength:"3" maxLength:"200" doc:"Server name, URL-encoded (io.github.owner%2Frepo)."`
}

type serverOutput struct {
	Body struct {
		Server   Server              `json:"server"`
		Versions []VersionRow        `json:"versions"`
		Events   []schema.DriftEvent `json:"events"`
	}
}

type eventsInput struct {
	Kind  string    `query:"kind" enum:"new_server,version_added,description_changed,title_changed,endpoints_changed,status_changed,removed," doc:"Only events of this kind."`
	Since time.Time `query:"since" doc:"Only events observed at or after this instant (RFC 3339)."`
	Limit int       `query:"limit" minimum:"1" maximum:"10000" default:"1000"`
}

type serverEventsInput struct {
	Name  string    `path:"name" minLength:"3" maxLength:"200" doc:"Server name, URL-encoded (io.github.owner%2Frepo)."`
	Kind  string    `query:"kind" enum:"new_server,version_added,description_changed,title_changed,endpoints_changed,status_changed,removed," doc:"Only events of this kind."`
	Since time.Time `query:"since" doc:"Only events observed at or after this instant (RFC 3339)."`
	Limit int       `query:"limit" minimum:"1" maximum:"10000" default:"1000"`
}

type eventsOutput struct {
	Body struct {
		Events []schema.DriftEvent `json:"events"`
	}
}

type snapshotsOutput struct {
	Body struct {
		Snapshots   []schema.SnapshotSummary `json:"snapshots"`
		EventCounts map[string]int64         `json:"event_counts" doc:"Stored drift events per kind."`
	}
}

type dlqInput struct {
	Limit int `query:"limit" minimum:"1" maximum:"10000" default:"100"`
}

type dlqOutput struct {
	Body struct {
		DeadLetters []schema.DLQMessage `json:"dead_letters"`
	}
}

func (h *handlers) addRoutes(api huma.API) {
	huma.Register(api, huma.Operation{OperationID: "list-servers", Method: http.MethodGet, Path: "/v1/servers", Summary: "List servers",
		Description: "Pages over every server's latest registry entry, ordered by name. Follow next_cursor until it is absent: a full page always carries one (the page after it may be empty), a short page never does.", Tags: []string{"servers"}},
		func(ctx context.Context, in *listInput) (*listOutput, error) {
			// Exactly limit rows, and a cursor after a full page: asking
			// for limit+1 to look ahead would ask the store for more than
			// it serves (store.MaxListLimit) at the maximum limit, and the
			// last page would seem reached with servers left.
			rows, err := h.o.Store.ListServers(ctx, store.ListQuery{Namespace: in.Namespace, Cursor: in.Cursor, Limit: in.Limit})
			if err != nil {
				return nil, h.internal("list servers", err)
			}
			rows = rows[:min(len(rows), in.Limit)]
			out := &listOutput{}
			out.Body.Servers = make([]Server, 0, len(rows))
			for _, r := range rows {
				out.Body.Servers = append(out.Body.Servers, toServer(r.Record, false))
			}
			if len(rows) == in.Limit {
				out.Body.NextCursor = rows[len(rows)-1].Name
			}
			return out, nil
		})
	huma.Register(api, huma.Operation{OperationID: "get-server", Method: http.MethodGet, Path: "/v1/servers/{name}", Summary: "Get a server",
		Description: "The latest entry, every stored version and the drift events of one server.", Tags: []string{"servers"}},
		func(ctx context.Context, in *nameInput) (*serverOutput, error) {
			if e := h.model.lookup(in.Name); e != nil {
				out := &serverOutput{}
				out.Body.Server, out.Body.Versions, out.Body.Events = toServer(e.latest, true), e.versions, e.events
				return out, nil
			}
			// Not in the model (not built yet, or a server that appeared
			// after it was): the store answers, as it always did.
			row, err := h.o.Store.GetServer(ctx, in.Name)
			if errors.Is(err, store.ErrNotFound) {
				return nil, huma.Error404NotFound("no server named " + in.Name + " (names are URL-encoded: io.github.owner%2Frepo)")
			}
			if err != nil {
				return nil, h.internal("get server", err)
			}
			vers, err := h.o.Store.Versions(ctx, in.Name, maxServerVersions)
			if err != nil {
				return nil, h.internal("versions", err)
			}
			evs, err := h.o.Store.Events(ctx, store.EventQuery{Server: in.Name, Limit: maxServerEvents})
			if err != nil {
				return nil, h.internal("events", err)
			}
			out := &serverOutput{}
			out.Body.Server = toServer(row.Record, true)
			out.Body.Versions = make([]VersionRow, 0, len(vers))
			for _, v := range vers {
				out.Body.Versions = append(out.Body.Versions, versionRow(v))
			}
			out.Body.Events = nonNil(evs)
			return out, nil
		})
	huma.Register(api, huma.Operation{OperationID: "get-server-events", Method: http.MethodGet, Path: "/v1/servers/{name}/events", Summary: "Drift events of a server",
		Tags: []string{"drift"}},
		func(ctx context.Context, in *serverEventsInput) (*eventsOutput, error) {
			evs, err := h.o.Store.Events(ctx, store.EventQuery{Server: in.Name, Kind: in.Kind, Since: in.Since, Limit: in.Limit})
			if err != nil {
				return nil, h.internal("events", err)
			}
			out := &eventsOutput{}
			out.Body.Events = nonNil(evs)
			return out, nil
		})
	huma.Register(api, huma.Operation{OperationID: "list-events", Method: http.MethodGet, Path: "/v1/events", Summary: "Drift events",
		Description: "Drift events across the registry, oldest first.", Tags: []string{"drift"}},
		func(ctx context.Context, in *eventsInput) (*eventsOutput, error) {
			evs, err := h.o.Store.Events(ctx, store.EventQuery{Kind: in.Kind, Since: in.Since, Limit: in.Limit})
			if err != nil {
				return nil, h.internal("events", err)
			}
			out := &eventsOutput{}
			out.Body.Events = nonNil(evs)
			return out, nil
		})
	huma.Register(api, huma.Operation{OperationID: "list-snapshots", Method: http.MethodGet, Path: "/v1/snapshots", Summary: "Applied snapshots",
		Description: "Every registry snapshot the differ applied, with its per-kind event counts and whether it was partial.", Tags: []string{"drift"}},
		func(ctx context.Context, _ *struct{}) (*snapshotsOutput, error) {
			snaps, err := h.o.Store.Snapshots(ctx)
			if err != nil {
				return nil, h.internal("snapshots", err)
			}
			counts, err := h.o.Store.EventCounts(ctx)
			if err != nil {
				return nil, h.internal("event counts", err)
			}
			out := &snapshotsOutput{}
			out.Body.Snapshots = snaps
			if out.Body.Snapshots == nil {
				out.Body.Snapshots = []schema.SnapshotSummary{}
			}
			out.Body.EventCounts = counts
			return out, nil
		})
	huma.Register(api, huma.Operation{OperationID: "list-dead-letters", Method: http.MethodGet, Path: "/v1/dlq", Summary: "Dead letters",
		Description: "Input that could not be used, with the reason code and a bounded copy of the payload.", Tags: []string{"operations"}},
		func(ctx context.Context, in *dlqInput) (*dlqOutput, error) {
			d, err := h.o.Store.DLQ(ctx, in.Limit)
			if err != nil {
				return nil, h.internal("dlq", err)
			}
			out := &dlqOutput{}
			out.Body.DeadLetters = d
			if out.Body.DeadLetters == nil {
				out.Body.DeadLetters = []schema.DLQMessage{}
			}
			return out, nil
		})
}

// HealthPoint is one check in a server's health history.
type HealthPoint struct {
	ID         string    `json:"id"`
	ObservedAt time.Time `json:"observed_at"`
	RemoteURL  string    `json:"remote_url"`
	Transport  string    `json:"transport"`
	Outcome    string    `json:"outcome" enum:"ok,auth_required,handshake_failed,unreachable,not_checked"`
	ErrorClass string    `json:"error_class,omitempty"`
	HTTPStatus int       `json:"http_status"`
	LatencyMS  float64   `json:"initialize_latency_ms"`
	AuthKind   string    `json:"auth_kind"`
	ToolCount  int       `json:"tool_count"`
}

type healthInput struct {
	Name  string    `path:"name" minLength:"3" maxLength:"200" doc:"Server name, URL-encoded (io.github.owner%2Frepo)."`
	Since time.Time `query:"since" doc:"Only checks observed at or after this instant (RFC 3339)."`
	Limit int       `query:"limit" minimum:"1" maximum:"10000" default:"500"`
}

type healthOutput struct {
	Body struct {
		Server  string               `json:"server"`
		Latest  []schema.HealthCheck `json:"latest" doc:"The newest check of each remote, in full."`
		History []HealthPoint        `json:"history" doc:"Checks, newest first."`
	}
}

func (h *handlers) addHealthRoutes(api huma.API) {
	huma.Register(api, huma.Operation{OperationID: "get-server-health", Method: http.MethodGet, Path: "/v1/servers/{name}/health", Summary: "Health of a server",
		Description: "The latest MCP handshake check of each remote, and the check history.", Tags: []string{"health"}},
		func(ctx context.Context, in *healthInput) (*healthOutput, error) {
			latest, err := h.o.Store.LatestHealth(ctx, in.Name)
			if err != nil {
				return nil, h.internal("latest health", err)
			}
			hist, err := h.o.Store.HealthChecks(ctx, store.HealthQuery{Server: in.Name, Since: in.Since, Limit: in.Limit})
			if err != nil {
				return nil, h.internal("health history", err)
			}
			if len(latest) == 0 {
				if _, err := h.o.Store.GetServer(ctx, in.Name); errors.Is(err, store.ErrNotFound) {
					return nil, huma.Error404NotFound("no server named " + in.Name + " (names are URL-encoded: io.github.owner%2Frepo)")
				}
			}
			out := &healthOutput{}
			out.Body.Server = in.Name
			out.Body.Latest = []schema.HealthCheck{}
			for _, r := range latest {
				var c schema.HealthCheck
				if err := json.Unmarshal([]byte(r.Check), &c); err != nil {
					return nil, h.internal("decode check", err)
				}
				out.Body.Latest = append(out.Body.Latest, c)
			}
			out.Body.History = make([]HealthPoint, 0, len(hist))
			for _, r := range hist {
				out.Body.History = append(out.Body.History, HealthPoint{ID: r.ID, ObservedAt: r.ObservedAt, RemoteURL: r.RemoteURL, Transport: r.Transport,
					Outcome: r.Outcome, ErrorClass: r.ErrorClass, HTTPStatus: r.HTTPStatus, LatencyMS: r.LatencyMS, AuthKind: r.AuthKind, ToolCount: r.ToolCount})
			}
			return out, nil
		})
}

func nonNil(evs []schema.DriftEvent) []schema.DriftEvent {
	if evs == nil {
		return []schema.DriftEvent{}
	}
	return evs
}

// internal logs the cause and returns a 500 that does not leak it.
func (h *handlers) internal(what string, err error) error {
	h.o.Log.Error("api: store read failed", zap.String("what", what), zap.Error(err))
	return huma.Error500InternalServerError(what + " failed; see the server log")
}

// DocumentRoutes are every optional route group with empty options, for the
// published OpenAPI document (`forum openapi`, the golden file): the
// document describes the whole API whatever a given process serves.
func DocumentRoutes() []func(huma.API) {
	return []func(huma.API){TrustRoutes(TrustOptions{}), IncidentRoutes(IncidentOptions{}), BurstRoutes(BurstOptions{}),
		ProvenanceRoutes(ProvenanceOptions{}), SearchRoutes(SearchOptions{}), ExportRoutes(ExportOptions{}), AdminRoutes(AdminOptions{})}
}

// What GET /v1/servers/{name} returns at most (unchanged from the store path).
const (
	maxServerVersions = 1000
	maxServerEvents   = 10000
)

func versionRow(v store.Record) VersionRow {
	return VersionRow{Version: v.Version, Status: v.Status, IsLatest: v.IsLatest, PublishedAt: optTime(v.PublishedAt),
		ObservedAt: v.ObservedAt, ContentSHA256: v.ContentSHA256, Description: v.Description}
}

// MaxModelServers bounds a read model: a registry (or publication) with more
// servers than this is not held in memory, and its lookups read the store.
// The model holds one latest entry (or record) per server.
const MaxModelServers = 100_000

// DefaultModelPoll is how often a read model asks the store whether it
// changed (one cheap query), at most.
const DefaultModelPoll = 2 * time.Second

// readModel is a value built from the store and replaced whole through an
// atomic pointer: get never blocks and never sees a half-built value. A get
// whose last check is older than poll starts one background check; the
// check compares the store's change marker with the built one and rebuilds
// only when it moved. So staleness is bounded by poll plus one build, and an
// idle process does no work.
type readModel[T any] struct {
	what  string
	poll  time.Duration
	mark  func(ctx context.Context) (string, error) // cheap change marker
	build func(ctx context.Context) (*T, error)     // the whole model
	log   *zap.Logger

	cur     atomic.Pointer[T]
	busy    atomic.Bool
	next    atomic.Int64 // unix nanos: no background check before this
	mu      sync.Mutex   // serializes refresh
	curMark string       // guarded by mu
}

// get returns the current value (nil before the first build).
func (m *readModel[T]) get() *T {
	if time.Now().UnixNano() >= m.next.Load() && m.busy.CompareAndSwap(false, true) {
		go func() {
			defer m.busy.Store(false)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			if err := m.refresh(ctx); err != nil {
				m.log.Warn("api: read model refresh failed; lookups read the store or the previous model", zap.String("model", m.what), zap.Error(err))
			}
		}()
	}
	return m.cur.Load()
}

// refresh rebuilds the value when the store's marker moved (or none is
// built). The marker is read before the build, so a write racing the build
// is picked up by the next check at worst.
func (m *readModel[T]) refresh(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	start := time.Now()
	var err error
	defer func() {
		// Back off by the build time too, so a store that changes all the
		// time (a replay) is rebuilt at most every poll + 3 builds; and by a
		// minute after a failure, so a store that cannot be modelled is
		// not asked (nor logged) on every poll.
		wait := m.poll + 3*time.Since(start)
		if err != nil {
			wait = max(wait, time.Minute)
		}
		m.next.Store(time.Now().Add(wait).UnixNano())
	}()
	mk, err := m.mark(ctx)
	if err != nil {
		return fmt.Errorf("%s marker: %w", m.what, err)
	}
	if m.cur.Load() != nil && mk == m.curMark {
		return nil
	}
	var v *T
	if v, err = m.build(ctx); err != nil {
		return fmt.Errorf("%s build: %w", m.what, err)
	}
	m.cur.Store(v)
	m.curMark = mk
	m.log.Debug("api: read model built", zap.String("model", m.what), zap.Duration("took", time.Since(start)))
	return nil
}

// ServerModel is the in-memory read model of GET /v1/servers/{name}: per
// server its latest entry, its versions (newest first, ≤ 1000) and its drift
// events (oldest first, ≤ 10000), exactly what the three store queries of
// the route return. It is built from the store's bulk reads
// (store.BulkReader: one pass per table, on DuckDB and ClickHouse alike);
// a store without them, or more than MaxModelServers servers, gets no model
// and the route reads the store per request. A name not in the model (a
// server newer than the model) is read from the store too; an entry in the
// model is at most DefaultModelPoll plus one build behind the store.
type ServerModel struct {
	m  readModel[serverModel]
	ok bool // the store can be read in bulk
}

type serverModel struct{ byName map[string]*serverEntry }

type serverEntry struct {
	latest   store.Record // with the registry's server JSON
	versions []VersionRow // shared by every response: never modified
	events   []schema.DriftEvent
}

// NewServerModel returns a model of st's registry tables, built on first
// use (or by Refresh).
func NewServerModel(st Reader, log *zap.Logger) *ServerModel {
	if log == nil {
		log = zap.NewNop()
	}
	b, ok := st.(store.BulkReader)
	sm := &ServerModel{ok: ok}
	sm.m = readModel[serverModel]{what: "servers", poll: DefaultModelPoll, log: log,
		mark:  func(ctx context.Context) (string, error) { return b.ChangeMarker(ctx) },
		build: func(ctx context.Context) (*serverModel, error) { return buildServerModel(ctx, b) }}
	return sm
}

// Refresh builds the model now when the store changed since the last build
// (for a caller that wants it loaded before serving).
func (sm *ServerModel) Refresh(ctx context.Context) error {
	if sm == nil || !sm.ok {
		return nil
	}
	return sm.m.refresh(ctx)
}

// Len is the number of servers in the current model (0 before a build).
func (sm *ServerModel) Len() int {
	if sm == nil {
		return 0
	}
	if v := sm.m.cur.Load(); v != nil {
		return len(v.byName)
	}
	return 0
}

func (sm *ServerModel) lookup(name string) *serverEntry {
	if sm == nil || !sm.ok {
		return nil
	}
	v := sm.m.get()
	if v == nil {
		return nil
	}
	return v.byName[name]
}

// buildServerModel reads the latest view, every record and every event in
// the route's orders.
func buildServerModel(ctx context.Context, b store.BulkReader) (*serverModel, error) {
	latest, err := b.AllLatest(ctx)
	if err != nil {
		return nil, err
	}
	if len(latest) > MaxModelServers {
		return nil, fmt.Errorf("%d servers: over MaxModelServers (%d); lookups read the store", len(latest), MaxModelServers)
	}
	m := &serverModel{byName: make(map[string]*serverEntry, len(latest))}
	for _, rec := range latest {
		m.byName[rec.Name] = &serverEntry{latest: rec, versions: []VersionRow{}, events: []schema.DriftEvent{}}
	}
	if err := b.AllVersions(ctx, func(v store.Record) error {
		if e := m.byName[v.Name]; e != nil && len(e.versions) < maxServerVersions {
			e.versions = append(e.versions, versionRow(v))
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if err := b.AllEvents(ctx, func(ev schema.DriftEvent) error {
		if e := m.byName[ev.Server]; e != nil && len(e.events) < maxServerEvents {
			e.events = append(e.events, ev)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	return m, nil
}
