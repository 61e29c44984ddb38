package probe

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Bounds of the prober's metrics.
const (
	// MetricsTopHosts is how many hosts get a host label of their own; the
	// rest count under host="other". A host is named once it is among the
	// top MetricsTopHosts by checks seen (with at least 10 of them), and
	// keeps its label until it falls out of the top 2×MetricsTopHosts
	// (hysteresis, so a host at the edge does not flap), so at most
	// 2×MetricsTopHosts+1 host values exist.
	MetricsTopHosts = 20
	// MetricsWindow is how many of the latest checks the rate_limited share
	// is taken over.
	MetricsWindow = 1000
	// hostSketchSize is how many hosts the top-hosts sketch counts.
	hostSketchSize = 512
)

// OtherHost is the host label of every host outside the named top hosts.
const OtherHost = "other"

// Metrics is the prober's own health on /metrics (forum_probe_*): what it
// recorded, per Worker batch and cumulatively, by outcome and by host, and
// the share of rate_limited over the latest checks, so that a spike of our
// own making (our load refused by the hosts) shows up where it is made.
//
// Host labels are bounded: the registry has thousands of hosts, but a
// handful of gateways serve most remotes, and those are the ones our load
// can hurt. The top hosts by checks are found with a Space-Saving sketch
// (Metwally et al. 2005: hostSketchSize counters, exact for any host with
// more than 1/hostSketchSize of the checks) and named; all others are
// "other". A hashed bucket would bound the labels too, but a bucket name
// tells the operator nothing about which host to look at.
type Metrics struct {
	Checks           *prometheus.CounterVec // forum_probe_checks_total{outcome,error_class}
	HostChecks       *prometheus.CounterVec // forum_probe_host_checks_total{host,outcome}
	BatchChecks      *prometheus.GaugeVec   // forum_probe_batch_checks{outcome}: the latest Worker batch
	BatchHostChecks  *prometheus.GaugeVec   // forum_probe_batch_host_checks{host,outcome}: the latest Worker batch
	Batches          prometheus.Counter     // forum_probe_batches_total
	BatchSeconds     prometheus.Histogram   // forum_probe_batch_seconds
	RateLimitedRatio prometheus.Gauge       // forum_probe_rate_limited_ratio: share of rate_limited in the latest MetricsWindow checks
	WindowChecks     prometheus.Gauge       // forum_probe_window_checks: how many checks that share is over (< MetricsWindow after a start)
	BackoffHosts     prometheus.Gauge       // forum_probe_backoff_hosts: hosts whose Retry-After is still running
	BadRequests      prometheus.Counter     // forum_probe_bad_requests_total: probe requests sent to the DLQ

	mu     sync.Mutex
	hosts  topHosts
	window []bool // ring of "was rate_limited" over the latest checks
	next   int
	filled int
	limitN int
}

// NewMetrics registers the prober's metrics on reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Checks: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "forum_probe_checks_total",
			Help: "Checks recorded by the prober, by outcome and error class."}, []string{"outcome", "error_class"}),
		HostChecks: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "forum_probe_host_checks_total",
			Help: "Checks recorded by the prober, by host (top hosts by checks; the rest are \"other\") and outcome."}, []string{"host", "outcome"}),
		BatchChecks: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "forum_probe_batch_checks",
			Help: "Checks in the latest Worker batch, by outcome."}, []string{"outcome"}),
		BatchHostChecks: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "forum_probe_batch_host_checks",
			Help: "Checks in the latest Worker batch, by host (top hosts; the rest are \"other\") and outcome."}, []string{"host", "outcome"}),
		Batches: prometheus.NewCounter(prometheus.CounterOpts{Name: "forum_probe_batches_total",
			Help: "Worker batches of probe requests completed."}),
		BatchSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "forum_probe_batch_seconds",
			Help: "Time to probe one Worker batch.", Buckets: []float64{0.1, 0.5, 1, 2.5, 5, 10, 20, 40, 80}}),
		RateLimitedRatio: prometheus.NewGauge(prometheus.GaugeOpts{Name: "forum_probe_rate_limited_ratio",
			Help: "Share of rate_limited among the latest checks (see forum_probe_window_checks): hosts refusing our load."}),
		WindowChecks: prometheus.NewGauge(prometheus.GaugeOpts{Name: "forum_probe_window_checks",
			Help: "How many of the latest checks forum_probe_rate_limited_ratio is over."}),
		BackoffHosts: prometheus.NewGauge(prometheus.GaugeOpts{Name: "forum_probe_backoff_hosts",
			Help: "Hosts the prober leaves alone until their Retry-After has passed."}),
		BadRequests: prometheus.NewCounter(prometheus.CounterOpts{Name: "forum_probe_bad_requests_total",
			Help: "Probe requests that did not decode, sent to the DLQ."}),
		hosts:  newTopHosts(MetricsTopHosts, hostSketchSize),
		window: make([]bool, MetricsWindow),
	}
	if reg != nil {
		reg.MustRegister(m.Checks, m.HostChecks, m.BatchChecks, m.BatchHostChecks, m.Batches, m.BatchSeconds,
			m.RateLimitedRatio, m.WindowChecks, m.BackoffHosts, m.BadRequests)
	}
	return m
}

// ObserveBatch records one Worker batch: its checks (the batch's DLQ'd
// requests counted in bad), how long it took and how many hosts are in
// back-off. Safe for concurrent use.
func (m *Metrics) ObserveBatch(checks []Check, bad int, took time.Duration, backoffHosts int) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	hosts := make([]string, len(checks))
	for i, c := range checks {
		hosts[i] = targetHost(c.RemoteURL)
		m.hosts.observe(hosts[i])
	}
	for _, h := range m.hosts.refresh() {
		// No longer a top host: its series go, its checks count as "other".
		m.HostChecks.DeletePartialMatch(prometheus.Labels{"host": h})
	}
	m.BatchChecks.Reset()
	m.BatchHostChecks.Reset()
	for i, c := range checks {
		outcome := string(c.Outcome)
		class := string(c.ErrorClass)
		if class == "" {
			class = "none"
		}
		host := m.hosts.label(hosts[i])
		m.Checks.WithLabelValues(outcome, class).Inc()
		m.HostChecks.WithLabelValues(host, outcome).Inc()
		m.BatchChecks.WithLabelValues(outcome).Inc()
		m.BatchHostChecks.WithLabelValues(host, outcome).Inc()
		m.push(c.Outcome == OutcomeRateLimited)
	}
	if m.filled > 0 {
		m.RateLimitedRatio.Set(float64(m.limitN) / float64(m.filled))
	}
	m.WindowChecks.Set(float64(m.filled))
	m.Batches.Inc()
	m.BatchSeconds.Observe(took.Seconds())
	m.BackoffHosts.Set(float64(backoffHosts))
	m.BadRequests.Add(float64(bad))
}

// push adds one check to the window, dropping the oldest when it is full.
func (m *Metrics) push(limited bool) {
	if m.filled == len(m.window) {
		if m.window[m.next] {
			m.limitN--
		}
	} else {
		m.filled++
	}
	m.window[m.next] = limited
	if limited {
		m.limitN++
	}
	m.next = (m.next + 1) % len(m.window)
}

// topHosts finds the hosts with the most checks in bounded memory: a
// Space-Saving sketch of size counters (a new host takes over the smallest
// counter, inheriting its count as its possible overcount) and the set of
// hosts named in labels. A host is named only once it has surely had
// minNamedChecks checks (count less overcount), so one-off hosts never get
// a series of their own, even while the top is still empty.
type topHosts struct {
	k      int
	size   int
	counts map[string]hostCount
	named  map[string]bool
}

type hostCount struct{ n, over uint64 }

const minNamedChecks = 10

func newTopHosts(k, size int) topHosts {
	return topHosts{k: k, size: size, counts: map[string]hostCount{}, named: map[string]bool{}}
}

func (t *topHosts) observe(host string) {
	if c, ok := t.counts[host]; ok || len(t.counts) < t.size {
		c.n++
		t.counts[host] = c
		return
	}
	minHost, minN := "", uint64(0)
	for h, c := range t.counts {
		if minHost == "" || c.n < minN || (c.n == minN && h < minHost) {
			minHost, minN = h, c.n
		}
	}
	delete(t.counts, minHost)
	t.counts[host] = hostCount{n: minN + 1, over: minN}
}

// refresh names the top k hosts (those with at least minNamedChecks sure
// checks) and returns those that fell out of the top 2k and lost their name.
func (t *topHosts) refresh() (dropped []string) {
	type hc struct {
		h string
		hostCount
	}
	all := make([]hc, 0, len(t.counts))
	for h, c := range t.counts {
		all = append(all, hc{h, c})
	}
	slices.SortFunc(all, func(a, b hc) int { return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(a.h, b.h)) })
	keep := map[string]bool{}
	for i, e := range all {
		if i >= 2*t.k {
			break
		}
		if i < t.k && e.n-e.over >= minNamedChecks {
			t.named[e.h] = true
		}
		keep[e.h] = true
	}
	for h := range t.named {
		if !keep[h] {
			delete(t.named, h)
			dropped = append(dropped, h)
		}
	}
	slices.Sort(dropped)
	return dropped
}

func (t *topHosts) label(host string) string {
	if t.named[host] {
		return host
	}
	return OtherHost
}
