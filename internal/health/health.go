// Package health watches a role's dependencies — the bus, the store —
// and says whether the role is ready: each is probed on a period, its state
// is exported as forum_dependency_up{dependency} (1 up, 0 down) with the
// time of its last change, and transitions are logged once each. A role
// never exits because a dependency is down (its producers and consumers
// retry); it reports not ready on /readyz until the dependency is back.
//
// It also serves the operations endpoints (/healthz, /readyz, /metrics)
// for roles that have no API of their own (process, ingest).
package health

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"
)

// Probe answers nil when the dependency is usable.
type Probe func(ctx context.Context) error

// Watcher probes dependencies and remembers their state. The zero value is
// not usable: call New.
type Watcher struct {
	every   time.Duration
	timeout time.Duration
	log     *zap.Logger
	up      *prometheus.GaugeVec
	changed *prometheus.GaugeVec

	mu     sync.Mutex
	probes map[string]Probe
	state  map[string]error // nil: up
	seen   map[string]bool  // probed at least once
}

// New returns a Watcher probing every period (default 2 s), registering
// its gauges on reg (nil: unregistered).
func New(reg prometheus.Registerer, log *zap.Logger, every time.Duration) *Watcher {
	if log == nil {
		log = zap.NewNop()
	}
	if every <= 0 {
		every = 2 * time.Second
	}
	w := &Watcher{every: every, timeout: max(every, 2*time.Second), log: log.Named("health"),
		up: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "forum_dependency_up",
			Help: "Whether a dependency of this role answers (1) or not (0): bus, store."}, []string{"dependency"}),
		changed: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "forum_dependency_changed_seconds",
			Help: "Unix time of the dependency's last change between up and down."}, []string{"dependency"}),
		probes: map[string]Probe{}, state: map[string]error{}, seen: map[string]bool{}}
	if reg != nil {
		reg.MustRegister(w.up, w.changed)
	}
	return w
}

// Add watches a dependency under name. Until its first probe it counts as
// down (not yet checked).
func (w *Watcher) Add(name string, p Probe) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.probes[name] = p
	w.state[name] = errors.New("not checked yet")
	w.up.WithLabelValues(name).Set(0)
}

// Run probes every dependency each period until ctx ends.
func (w *Watcher) Run(ctx context.Context) error {
	t := time.NewTicker(w.every)
	defer t.Stop()
	for {
		w.CheckNow(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// CheckNow probes every dependency once, concurrently.
func (w *Watcher) CheckNow(ctx context.Context) {
	w.mu.Lock()
	names := make([]string, 0, len(w.probes))
	probes := make([]Probe, 0, len(w.probes))
	for n, p := range w.probes {
		names = append(names, n)
		probes = append(probes, p)
	}
	w.mu.Unlock()
	var wg sync.WaitGroup
	for i := range names {
		wg.Go(func() {
			pctx, cancel := context.WithTimeout(ctx, w.timeout)
			err := probes[i](pctx)
			cancel()
			if ctx.Err() != nil {
				return // shutting down: not the dependency's fault
			}
			w.set(names[i], err)
		})
	}
	wg.Wait()
}

func (w *Watcher) set(name string, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	was, first := w.state[name], !w.seen[name]
	w.state[name], w.seen[name] = err, true
	if (was == nil) == (err == nil) && !first {
		return
	}
	w.changed.WithLabelValues(name).SetToCurrentTime()
	if err == nil {
		w.up.WithLabelValues(name).Set(1)
		if !first {
			w.log.Info("dependency is back", zap.String("dependency", name))
		}
		return
	}
	w.up.WithLabelValues(name).Set(0)
	if was == nil || first {
		w.log.Warn("dependency is down; the role keeps retrying and reports not ready", zap.String("dependency", name), zap.Error(err))
	}
}

// Ready returns nil when every dependency answered its last probe, else an
// error naming those that did not.
func (w *Watcher) Ready() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var down []string
	for n, err := range w.state {
		if err != nil {
			down = append(down, fmt.Sprintf("%s: %v", n, err))
		}
	}
	if len(down) == 0 {
		return nil
	}
	sort.Strings(down)
	return errors.New(strings.Join(down, "; "))
}

// Handler serves /healthz (the process runs), /readyz (every dependency
// answers; 503 with the reasons otherwise) and /metrics from g.
func (w *Watcher) Handler(g prometheus.Gatherer) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(rw http.ResponseWriter, _ *http.Request) {
		rw.Header().Set("Content-Type", "text/plain")
		_, _ = rw.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(rw http.ResponseWriter, _ *http.Request) {
		rw.Header().Set("Content-Type", "text/plain")
		if err := w.Ready(); err != nil {
			rw.WriteHeader(http.StatusServiceUnavailable)
			_, _ = rw.Write([]byte("not ready: " + err.Error() + "\n"))
			return
		}
		_, _ = rw.Write([]byte("ready\n"))
	})
	if g != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	}
	return mux
}

// Serve serves Handler on addr until ctx ends. A listen failure (the port
// is taken, a bad address) is returned: it is configuration.
func (w *Watcher) Serve(ctx context.Context, addr string, g prometheus.Gatherer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--ops-listen %s: %w", addr, err)
	}
	return w.ServeOn(ctx, ln, g)
}

// ServeOn is Serve on a listener the caller opened (so a taken port fails
// before anything else starts); it closes ln.
func (w *Watcher) ServeOn(ctx context.Context, ln net.Listener, g prometheus.Gatherer) error {
	srv := &http.Server{Handler: w.Handler(g), ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second}
	w.log.Info("operations endpoints up", zap.String("addr", ln.Addr().String()))
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		<-errc
		return nil
	case err := <-errc:
		return fmt.Errorf("operations endpoints: %w", err)
	}
}
