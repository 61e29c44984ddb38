package history

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
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
