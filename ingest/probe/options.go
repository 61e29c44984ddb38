package probe

import (
	"net"
	"net/netip"
	"time"

	"go.uber.org/zap"
)

// Options configure a Prober. Zero fields take the Default* values.
type Options struct {
	// Timeout bounds the whole handshake of one probe (SPEC §1.3: 10 s).
	Timeout time.Duration
	// MaxBodyBytes caps each response body and each SSE answer (1 MiB).
	MaxBodyBytes int64
	// SSEReadTimeout caps the wait for one answer on an SSE stream (and for
	// the legacy endpoint event); Timeout still bounds the whole probe.
	SSEReadTimeout time.Duration
	// PerHostLimit is how many probes may run against one host at once.
	PerHostLimit int
	// MaxToolPages caps how many tools/list pages are followed.
	MaxToolPages int
	// MaxBackoff caps how long a host that refused for load (429, or 503
	// with Retry-After) is left alone; set it to the probe interval (SPEC
	// §1.3: the wait is Retry-After capped at the interval).
	MaxBackoff time.Duration
	// MaxRedirects caps redirects per request.
	MaxRedirects int
	UserAgent    string
	// Allow lists prefixes the SSRF guard admits although they are internal.
	// For tests and benchmarks only; production leaves it empty.
	Allow []netip.Prefix
	// Resolver resolves host names for the guard (net.DefaultResolver).
	Resolver Resolver
	Logger   *zap.Logger
	// Now is the clock for observation times and durations' start stamps.
	Now func() time.Time
}

// Defaults.
const (
	DefaultTimeout        = 10 * time.Second
	DefaultMaxBodyBytes   = 1 << 20
	DefaultSSEReadTimeout = 8 * time.Second
	DefaultPerHostLimit   = 4
	DefaultMaxToolPages   = 10
	DefaultMaxRedirects   = 5
	DefaultMaxBackoff     = time.Hour // the default probe interval
	// NoRetryAfterBackoff is the wait after a 429 that gave no usable
	// Retry-After (SPEC §1.2 waits ≥ 60 s for GitHub's limits in that case).
	NoRetryAfterBackoff = time.Minute
	DefaultUserAgent    = "forum-prober/0.1"
)

func (o *Options) setDefaults() {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.SSEReadTimeout <= 0 {
		o.SSEReadTimeout = DefaultSSEReadTimeout
	}
	if o.PerHostLimit <= 0 {
		o.PerHostLimit = DefaultPerHostLimit
	}
	if o.MaxToolPages <= 0 {
		o.MaxToolPages = DefaultMaxToolPages
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	if o.MaxRedirects <= 0 {
		o.MaxRedirects = DefaultMaxRedirects
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	if o.Resolver == nil {
		o.Resolver = net.DefaultResolver
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Option changes Options; pass them to New.
type Option func(*Options)

// WithOptions replaces the whole Options value (later options still apply).
func WithOptions(o Options) Option { return func(dst *Options) { *dst = o } }

// WithTimeout sets the whole-handshake budget.
func WithTimeout(d time.Duration) Option { return func(o *Options) { o.Timeout = d } }

// WithMaxBodyBytes sets the body cap.
func WithMaxBodyBytes(n int64) Option { return func(o *Options) { o.MaxBodyBytes = n } }

// WithSSEReadTimeout sets the per-answer SSE wait cap.
func WithSSEReadTimeout(d time.Duration) Option { return func(o *Options) { o.SSEReadTimeout = d } }

// WithPerHostLimit sets the per-host concurrency limit.
func WithPerHostLimit(n int) Option { return func(o *Options) { o.PerHostLimit = n } }

// WithMaxToolPages sets the tools/list page cap.
func WithMaxToolPages(n int) Option { return func(o *Options) { o.MaxToolPages = n } }

// WithMaxBackoff caps a host's back-off after a refusal for load; pass the
// probe interval.
func WithMaxBackoff(d time.Duration) Option { return func(o *Options) { o.MaxBackoff = d } }

// WithUserAgent sets the User-Agent header.
func WithUserAgent(ua string) Option { return func(o *Options) { o.UserAgent = ua } }

// WithAllow admits internal prefixes (tests, benchmarks).
func WithAllow(p ...netip.Prefix) Option {
	return func(o *Options) { o.Allow = append(o.Allow, p...) }
}

// WithResolver injects the resolver the SSRF guard uses.
func WithResolver(r Resolver) Option { return func(o *Options) { o.Resolver = r } }

// WithLogger injects a logger (Nop by default).
func WithLogger(l *zap.Logger) Option { return func(o *Options) { o.Logger = l } }

// WithClock injects the clock.
func WithClock(now func() time.Time) Option { return func(o *Options) { o.Now = now } }
