package health

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap/zaptest"
)

// TestWatcherFollowsADependency: not ready until the first probe, ready
// while it answers, not ready (naming it and why) while it does not, and
// the gauge follows.
func TestWatcherFollowsADependency(t *testing.T) {
	reg := prometheus.NewRegistry()
	w := New(reg, zaptest.NewLogger(t), time.Hour)
	var down atomic.Bool
	w.Add("store", func(context.Context) error {
		if down.Load() {
			return errors.New("connection refused")
		}
		return nil
	})
	if err := w.Ready(); err == nil || !strings.Contains(err.Error(), "not checked yet") {
		t.Fatalf("before the first probe: %v", err)
	}
	ctx := context.Background()
	w.CheckNow(ctx)
	if err := w.Ready(); err != nil {
		t.Fatalf("up: %v", err)
	}
	if v := testutil.ToFloat64(w.up.WithLabelValues("store")); v != 1 {
		t.Fatalf("gauge %v while up", v)
	}
	down.Store(true)
	w.CheckNow(ctx)
	err := w.Ready()
	if err == nil || !strings.Contains(err.Error(), "store: connection refused") {
		t.Fatalf("down: %v", err)
	}
	if v := testutil.ToFloat64(w.up.WithLabelValues("store")); v != 0 {
		t.Fatalf("gauge %v while down", v)
	}
	h := w.Handler(reg)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
	if rec.Code != 503 || !strings.Contains(rec.Body.String(), "store") {
		t.Fatalf("/readyz while down: %d %q", rec.Code, rec.Body.String())
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if b, _ := io.ReadAll(rec.Body); !strings.Contains(string(b), `forum_dependency_up{dependency="store"} 0`) {
		t.Fatalf("/metrics lacks the gauge:\n%s", b)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	if rec.Code != 200 {
		t.Fatalf("/healthz while a dependency is down: %d (the process itself is fine)", rec.Code)
	}
	down.Store(false)
	w.CheckNow(ctx)
	if err := w.Ready(); err != nil {
		t.Fatalf("back up: %v", err)
	}
}

// TestProbeTimeout: a probe that hangs counts as down after the timeout.
func TestProbeTimeout(t *testing.T) {
	w := New(nil, zaptest.NewLogger(t), 10*time.Millisecond)
	w.timeout = 50 * time.Millisecond
	w.Add("bus", func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
	start := time.Now()
	w.CheckNow(context.Background())
	if err := w.Ready(); err == nil || time.Since(start) > 5*time.Second {
		t.Fatalf("hung probe: %v after %s", err, time.Since(start))
	}
}
