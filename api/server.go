package api

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/forum-mcp/forum/api/pages"
	"github.com/forum-mcp/forum/api/search"
	"github.com/forum-mcp/forum/processors/incidents"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/sql/store"
)

// Store is everything the API reads. It is stateless over it: every route
// answers from the store, or from read models rebuilt from the store (the
// server model, the trust model, the search index, proof trees), so any
// number of replicas answer alike, on DuckDB and on ClickHouse.
type Store interface {
	Reader
	TrustReader
	ProvenanceReader
	BurstReader
	search.Source
	ExportSource
	store.IncidentStore
	store.ReviewStore
	store.AdminStore
}

// Config configures the whole API.
type Config struct {
	Store     Store
	Method    *method.Method    // default: the embedded one
	PublicKey ed25519.PublicKey // the publication signing key's public half; nil: /v1/keys lists none
	// Tokens are the admin bearer tokens (ParseAdminTokens); empty disables
	// the admin routes (503).
	Tokens map[string]string
	// Publish puts an accepted incident action on the bus; nil: intake
	// answers 503 (a replica without a bus).
	Publish  func(ctx context.Context, m incidents.Msg) error
	Sponsors []string
	Registry prometheus.Gatherer // served on /metrics; nil for none
	// Registerer takes the API's own metrics (forum_admin_requests_total);
	// nil: Registry, when it is a *prometheus.Registry.
	Registerer prometheus.Registerer
	// Ready reports extra readiness (the bus); nil: the store and the
	// search index.
	Ready func(ctx context.Context) error
	Log   *zap.Logger
}

// HTTPServer is the API: its handler, its OpenAPI document, and the background
// work that keeps the search index on the newest publication.
type HTTPServer struct {
	Handler http.Handler
	API     huma.API
	index   *search.Index
	refresh *search.Refresher
	log     *zap.Logger
}

// SearchRefresh is how often the search index looks for a new publication.
const SearchRefresh = 5 * time.Second

// NewServer assembles every route group on the store.
func NewServer(c Config) *HTTPServer {
	if c.Log == nil {
		c.Log = zap.NewNop()
	}
	if c.Method == nil {
		c.Method = method.Embedded()
	}
	idx := &search.Index{}
	s := &HTTPServer{index: idx, log: c.Log,
		refresh: &search.Refresher{Index: idx, Source: c.Store, Interval: SearchRefresh, Log: c.Log.Named("search-index")}}
	ready := func(ctx context.Context) error {
		if c.Ready != nil {
			if err := c.Ready(ctx); err != nil {
				return err
			}
		}
		// Search answers 503 until an index is built: not ready before.
		if idx.Current() == nil {
			return errors.New("the search index is not built yet (no publication indexed)")
		}
		return nil
	}
	// The read models are shared by the JSON routes and the pages.
	servers, trust := NewServerModel(c.Store, c.Log), NewTrustModel(c.Store, c.Log.Named("trust-api"))
	routes := []func(huma.API){
		TrustRoutes(TrustOptions{Store: c.Store, Method: c.Method, PublicKey: c.PublicKey, Reviews: c.Store, Tokens: c.Tokens, Log: c.Log.Named("trust-api"), Model: trust}),
		IncidentRoutes(IncidentOptions{Tokens: c.Tokens, Lookup: incidents.StoreLookup{Servers: c.Store, Incidents: c.Store}, Publish: c.Publish,
			Store: c.Store, Log: c.Log.Named("incidents-api")}),
		BurstRoutes(BurstOptions{Store: c.Store, Log: c.Log}),
		ProvenanceRoutes(ProvenanceOptions{Store: c.Store, Method: c.Method, Log: c.Log}),
		SearchRoutes(SearchOptions{Index: idx, Sponsors: c.Sponsors, Log: c.Log.Named("search-api")}),
		ExportRoutes(ExportOptions{Store: c.Store, Log: c.Log}),
		AdminRoutes(AdminOptions{Tokens: c.Tokens, Store: c.Store, Log: c.Log.Named("admin-api")}),
	}
	reg, _ := c.Registry.(*prometheus.Registry)
	s.Handler, s.API = New(Options{Store: c.Store, Log: c.Log, Registry: reg, Registerer: c.Registerer, Ready: ready, Routes: routes,
		AdminAudit: c.Store, Servers: servers})
	s.Handler = pages.New(PagesOptions(c.Store, idx, servers, trust, c.Sponsors, c.Method, c.Log.Named("pages"))).Mount(s.Handler)
	return s
}

// Run keeps the search index current until ctx ends.
func (s *HTTPServer) Run(ctx context.Context) error { return s.refresh.Run(ctx) }

// ListenAndServe serves on addr until ctx ends, then shuts down gracefully;
// the search index is kept current meanwhile.
func (s *HTTPServer) ListenAndServe(ctx context.Context, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("API listen on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: s.Handler, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 60 * time.Second,
		IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
	s.log.Info("API listening", zap.String("addr", ln.Addr().String()), zap.String("docs", "http://"+DisplayAddr(ln.Addr())+"/docs"))
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	refreshed := make(chan struct{})
	go func() {
		defer close(refreshed)
		_ = s.Run(rctx)
	}()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	var serveErr error
	select {
	case <-ctx.Done():
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		serveErr = srv.Shutdown(sctx)
		scancel()
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			serveErr = err
		}
	}
	cancel()
	<-refreshed
	return serveErr
}

// DisplayAddr is addr with an unspecified host shown as localhost.
func DisplayAddr(addr net.Addr) string {
	s := addr.String()
	for _, p := range []string{"[::]:", "0.0.0.0:"} {
		if strings.HasPrefix(s, p) {
			return "localhost:" + strings.TrimPrefix(s, p)
		}
	}
	return s
}
