package history

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/forum-mcp/forum/sql/store"
)

// WriteTimes is forum_store_write_seconds{table}: how long one sink batch's
// insert into one table took, store round trip included. A nil *WriteTimes
// observes nothing (tests, benchmarks).
type WriteTimes struct {
	h *prometheus.HistogramVec
}

// NewWriteTimes registers the histogram on reg, or reuses the one already
// there: the three sinks of a process share it.
func NewWriteTimes(reg prometheus.Registerer) *WriteTimes {
	if reg == nil {
		return nil
	}
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "forum_store_write_seconds",
		Help: "Time one sink batch took to insert into one store table (a slow or failing store shows here first).",
		// 1 ms … ~65 s: a DuckDB append is milliseconds, a ClickHouse part
		// under load or a retried insert seconds.
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 17),
	}, []string{"table"})
	if err := reg.Register(h); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			return nil
		}
		h = are.ExistingCollector.(*prometheus.HistogramVec)
	}
	return &WriteTimes{h: h}
}

// timed runs f and observes its duration under table, failed or not.
func (w *WriteTimes) timed(table string, f func() error) error {
	if w == nil {
		return f()
	}
	start := time.Now()
	err := f()
	w.h.WithLabelValues(table).Observe(time.Since(start).Seconds())
	return err
}

// step is one table's insert of a sink batch.
type step struct {
	what, table string
	n           int
	f           func() error
}

// write stores a sink batch: in one call, timed under label, when the
// store takes whole batches (store.BatchWriter); else the steps that have
// rows, in order, each timed under its table. The first error ends the
// batch (nothing is committed, so it is redelivered whole).
func (w *WriteTimes) write(ctx context.Context, to any, label string, b *store.Batch, steps []step) error {
	if bw, ok := to.(store.BatchWriter); ok {
		if b.Len() == 0 {
			return nil
		}
		if err := w.timed(label, func() error { return bw.WriteBatch(ctx, b) }); err != nil {
			return fmt.Errorf("storing the batch: %w", err)
		}
		return nil
	}
	for _, st := range steps {
		if st.n == 0 {
			continue
		}
		if err := w.timed(st.table, st.f); err != nil {
			return fmt.Errorf("storing %s: %w", st.what, err)
		}
	}
	return nil
}
