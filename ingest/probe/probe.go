package probe

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"
)

// Prober runs probes. It is safe for concurrent use; one per process is
// enough (it pools connections and holds the per-host semaphore).
type Prober struct {
	opts   Options
	client *http.Client
	tr     *http.Transport
	hosts  *hostLimiter
	log    *zap.Logger
}

// New builds a Prober from DefaultOptions changed by opts.
func New(opts ...Option) *Prober {
	var o Options
	for _, f := range opts {
		f(&o)
	}
	o.setDefaults()
	d := newDialer(guard{allow: o.Allow}, o.Resolver, o.Timeout)
	tr := &http.Transport{
		Proxy:                  nil, // a proxy would be dialled instead of the checked IP
		DialContext:            d.DialContext,
		ForceAttemptHTTP2:      true,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    o.Timeout,
		MaxIdleConns:           512,
		MaxIdleConnsPerHost:    o.PerHostLimit,
		IdleConnTimeout:        30 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	p := &Prober{opts: o, tr: tr, hosts: newHostLimiter(o.PerHostLimit), log: o.Logger}
	p.client = &http.Client{
		Transport: tr,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > o.MaxRedirects {
				return withClass(ClassRedirect, "more than %d redirects", o.MaxRedirects)
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return withClass(ClassRedirect, "redirect to scheme %q", clip(req.URL.Scheme, 16))
			}
			return nil // the dialer checks the new address
		},
	}
	return p
}

// Options returns the effective options (defaults applied).
func (p *Prober) Options() Options { return p.opts }

// Close drops pooled idle connections.
func (p *Prober) Close() { p.tr.CloseIdleConnections() }

// placeholder matches an unfilled URL template variable, raw or escaped.
var placeholder = regexp.MustCompile(`\{[^{}/]*\}|%7[Bb][^/]*?%7[Dd]`)

// Probe runs one handshake and returns its check. It never returns an
// error: failures are outcomes. ctx cancellation (shutdown) yields
// not_checked/canceled; the handshake itself is bounded by Options.Timeout,
// not counting the wait for a per-host slot.
func (p *Prober) Probe(ctx context.Context, req Request) Check {
	start := p.opts.Now()
	obs := req.ObservedAt
	if obs.IsZero() {
		obs = start.UTC()
	}
	transport := strings.ToLower(strings.TrimSpace(req.Transport))
	if transport == "" {
		transport = TransportStreamableHTTP
	}
	c := Check{
		ID:                CheckID(req.Server, req.URL, obs),
		ObservedAt:        obs,
		Server:            req.Server,
		RemoteURL:         req.URL,
		TransportDeclared: req.Transport,
		Transport:         transport,
		Tools:             []Tool{},
		Auth:              AuthEvidence{DeclaredHeaders: declaredHeaders(req.RemoteHeaders)},
	}
	err := p.probe(ctx, &c, req.URL, transport)
	p.finish(ctx, &c, err)
	c.DurationMS = ms(p.opts.Now().Sub(start))
	if ce := p.log.Check(zap.DebugLevel, "probe"); ce != nil {
		ce.Write(zap.String("server", c.Server), zap.String("url", c.RemoteURL),
			zap.String("outcome", string(c.Outcome)), zap.String("error_class", string(c.ErrorClass)),
			zap.Int("http_status", c.HTTPStatus), zap.Float64("initialize_ms", c.InitializeLatencyMS),
			zap.Int("tools", len(c.Tools)))
	}
	return c
}

func (p *Prober) probe(ctx context.Context, c *Check, raw, transport string) error {
	if transport != TransportStreamableHTTP && transport != TransportSSE {
		return &classError{Class: ClassUnsupportedTransport, Err: fmt.Errorf("%q: %w", clip(transport, 32), ErrUnsupportedTransport)}
	}
	if placeholder.MatchString(raw) {
		return &classError{Class: ClassURLTemplate, Err: fmt.Errorf("%w: %s", ErrURLTemplate, clip(raw, 256))}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return withClass(ClassInvalidURL, "%v", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return withClass(ClassInvalidURL, "url must be absolute http(s): %s", clip(raw, 256))
	}
	u.Fragment = ""

	release, err := p.hosts.acquire(ctx, strings.ToLower(u.Host))
	if err != nil {
		// Never started: whatever ended the wait, the remote was not checked.
		return &classError{Class: ClassCanceled, Err: fmt.Errorf("waiting for a slot on %s: %w", clip(u.Host, 256), err)}
	}
	defer release()
	hctx, cancel := context.WithTimeout(ctx, p.opts.Timeout)
	defer cancel()

	r := &run{p: p, c: c, url: u}
	if transport == TransportSSE {
		fallback, err := r.legacySSE(hctx)
		if !fallback {
			return err
		}
		// SPEC §1.3: a remote labelled sse that answers 404/405 to the GET
		// is retried as Streamable HTTP.
		c.Transport = TransportStreamableHTTP
		c.HTTPStatus = 0
	}
	return r.streamable(hctx)
}

// finish turns the run's error into outcome, class and message.
func (p *Prober) finish(ctx context.Context, c *Check, err error) {
	defer func() { c.AuthKind = DeriveAuthKind(c.Outcome, c.HTTPStatus, c.Auth) }()
	if err == nil {
		if c.Outcome == "" {
			c.Outcome = OutcomeOK
		}
		return
	}
	class := classify(ctx, err)
	c.Outcome = classOutcome(class)
	c.ErrorClass = class
	c.ErrorMessage, _ = truncate(err.Error(), MaxErrorMessage)
}

// classify maps an error to its class; see the ErrorClass constants for the
// outcome each class leads to.
func classify(ctx context.Context, err error) ErrorClass {
	if errors.Is(ctx.Err(), context.Canceled) {
		return ClassCanceled
	}
	var ce *classError
	if errors.As(err, &ce) {
		return ce.Class
	}
	if errors.Is(err, ErrBlockedAddress) {
		return ClassBlockedAddress
	}
	if errors.Is(err, ErrBodyTooLarge) {
		return ClassBodyTooLarge
	}
	var se *statusError
	if errors.As(err, &se) {
		if se.Status == http.StatusUnauthorized || se.Status == http.StatusForbidden {
			return ClassAuth
		}
		return ClassHTTPStatus
	}
	var re *RPCError
	if errors.As(err, &re) {
		if re.isAuth() {
			return ClassJSONRPCAuth
		}
		return ClassJSONRPCError
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return ClassTimeout
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return ClassTimeout
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return ClassDNS
	}
	if isTLS(err) {
		return ClassTLS
	}
	var oe *net.OpError
	if errors.As(err, &oe) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) {
		return ClassConnect
	}
	var de *doError
	if errors.As(err, &de) {
		return ClassConnect // failed before any response: the server did not answer
	}
	return ClassProtocol
}

func classOutcome(c ErrorClass) Outcome {
	switch c {
	case ClassNone, ClassToolsList:
		return OutcomeOK
	case ClassUnsupportedTransport, ClassCanceled:
		return OutcomeNotChecked
	case ClassBlockedAddress, ClassDNS, ClassConnect, ClassTLS, ClassTimeout:
		return OutcomeUnreachable
	case ClassAuth, ClassJSONRPCAuth:
		return OutcomeAuthRequired
	default:
		return OutcomeHandshakeFailed
	}
}

func isTLS(err error) bool {
	var (
		cv *tls.CertificateVerificationError
		rh tls.RecordHeaderError
		ae tls.AlertError
		ua x509.UnknownAuthorityError
		he x509.HostnameError
		ci x509.CertificateInvalidError
	)
	return errors.As(err, &cv) || errors.As(err, &rh) || errors.As(err, &ae) ||
		errors.As(err, &ua) || errors.As(err, &he) || errors.As(err, &ci) ||
		strings.Contains(err.Error(), "tls: ") || strings.Contains(err.Error(), "HTTP response to HTTPS client")
}

// doError marks an error from http.Client.Do: no response was received.
type doError struct{ err error }

func (e *doError) Error() string { return e.err.Error() }
func (e *doError) Unwrap() error { return e.err }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
