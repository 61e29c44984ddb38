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
	opts    Options
	client  *http.Client
	tr      *http.Transport
	hosts   *hostLimiter
	backoff *backoffs
	log     *zap.Logger
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
	p := &Prober{opts: o, tr: tr, hosts: newHostLimiter(o.PerHostLimit), backoff: newBackoffs(), log: o.Logger}
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
	// The request's slot names the check (a redelivered request overwrites
	// it); observed_at is when the probe ran, stamped again in probe() once
	// the per-host wait is over and the first request is about to go out.
	slot := req.ObservedAt.UTC()
	if slot.IsZero() {
		slot = start.UTC()
	}
	transport := strings.ToLower(strings.TrimSpace(req.Transport))
	if transport == "" {
		transport = TransportStreamableHTTP
	}
	c := Check{
		ID:                CheckID(req.Server, req.URL, slot),
		ObservedAt:        start.UTC(),
		ScheduledAt:       slot,
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

	host := hostKey(u)
	// A host in back-off is not asked again before its Retry-After has
	// passed; checked before the wait for a slot (no point queueing) and
	// after it (a probe queued behind the one that was refused).
	if err := p.inBackoff(host); err != nil {
		return err
	}
	release, err := p.hosts.acquire(ctx, host)
	if err != nil {
		// Never started: whatever ended the wait, the remote was not checked.
		return &classError{Class: ClassCanceled, Err: fmt.Errorf("waiting for a slot on %s: %w", clip(u.Host, 256), err)}
	}
	defer release()
	if err := p.inBackoff(host); err != nil {
		return err
	}
	c.ObservedAt = p.opts.Now().UTC() // the handshake starts now
	hctx, cancel := context.WithTimeout(ctx, p.opts.Timeout)
	defer cancel()

	r := &run{p: p, c: c, url: u}
	err = p.handshake(hctx, r, transport)
	var rl *rateLimitError
	if errors.As(err, &rl) {
		p.refusedForLoad(host, rl)
	}
	return err
}

// hostKey names the host a URL's requests go to, for the per-host limit,
// back-off, schedule spread and metrics: the lower-cased name, with the
// port only when it is not the scheme's default (https://h and
// https://h:443 are one host).
func hostKey(u *url.URL) string {
	h := strings.ToLower(u.Hostname())
	port := u.Port()
	if port == "" || (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80") {
		return h
	}
	return net.JoinHostPort(h, port)
}

// handshake runs the declared transport and, when it is plainly not what
// the server speaks, the other one (SPEC §1.3):
//   - sse whose GET answers 404/405 is retried as Streamable HTTP;
//   - streamable-http whose POST initialize answers 400/404/405 (and whose
//     body said neither "auth" nor held an answer) is retried as legacy SSE,
//     as MCP's backwards-compatibility guidance tells clients to. The SSE
//     attempt replaces the first verdict only when it is decisive: the
//     endpoint event arrived (a legacy SSE server, whatever follows), or
//     the GET was refused for auth or for load. Anything less (404/405,
//     another error, a stream without an endpoint event) leaves the
//     Streamable HTTP verdict, so a server is never judged by a transport
//     it never claimed to speak.
//
// When the other transport answered initialize, the check carries the
// transport_mismatch note (TransportDeclared vs Transport).
func (p *Prober) handshake(ctx context.Context, r *run, transport string) error {
	c := r.c
	if transport == TransportSSE {
		reach, err := r.legacySSE(ctx)
		if reach != sseNoStream {
			return err
		}
		c.Transport = TransportStreamableHTTP
		c.HTTPStatus = 0
		err = r.streamable(ctx)
		if r.initialized {
			r.note(NoteTransportMismatch)
		}
		return err
	}
	err := r.streamable(ctx)
	if !wrongTransport(err) || ctx.Err() != nil {
		return err
	}
	before := *c // the SSE attempt only sets Transport and HTTPStatus unless it is decisive
	c.Transport = TransportSSE
	c.HTTPStatus = 0
	sr := &run{p: p, c: c, url: r.url}
	reach, serr := sr.legacySSE(ctx)
	decisive := reach == sseEndpoint
	if reach == sseRefused && serr != nil {
		o := classOutcome(classify(ctx, serr))
		decisive = o == OutcomeAuthRequired || o == OutcomeRateLimited
	}
	if !decisive {
		*c = before
		return err
	}
	if sr.initialized {
		sr.note(NoteTransportMismatch)
	}
	return serr
}

// wrongTransport reports whether a Streamable HTTP failure is the answer a
// legacy SSE server gives to POST initialize (400/404/405, nothing else said).
func wrongTransport(err error) bool {
	var se *statusError
	var ce *classError
	if errors.As(err, &ce) || !errors.As(err, &se) || se.Step != "initialize" {
		return false
	}
	switch se.Status {
	case http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed:
		return true
	}
	return false
}

// backoffError is a probe not made: the host's back-off still runs.
type backoffError struct {
	Host  string
	Until time.Time
	Left  time.Duration
}

func (e *backoffError) Error() string {
	return fmt.Sprintf("not requested: %s asked to be left alone until %s (Retry-After)", clip(e.Host, 256), e.Until.UTC().Format(time.RFC3339))
}

func (p *Prober) inBackoff(host string) error {
	now := p.opts.Now()
	if until, ok := p.backoff.get(host, now); ok {
		return &backoffError{Host: host, Until: until, Left: until.Sub(now)}
	}
	return nil
}

// refusedForLoad starts host's back-off: Retry-After when given (a date
// already past asks for no wait), NoRetryAfterBackoff when not, capped at
// MaxBackoff.
func (p *Prober) refusedForLoad(host string, rl *rateLimitError) {
	d := rl.RetryAfter
	if !rl.HasRetry {
		d = NoRetryAfterBackoff
	}
	d = min(d, p.opts.MaxBackoff)
	if d <= 0 {
		return
	}
	now := p.opts.Now()
	p.backoff.set(host, now.Add(d), now)
	if ce := p.log.Check(zap.InfoLevel, "host refused for load; backing off"); ce != nil {
		ce.Write(zap.String("host", host), zap.Int("status", rl.Status), zap.Duration("backoff", d))
	}
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
	var rl *rateLimitError
	var be *backoffError
	switch {
	case errors.As(err, &rl):
		c.RetryAfterSeconds = retryAfterSeconds(rl.RetryAfter)
	case errors.As(err, &be):
		c.RetryAfterSeconds = retryAfterSeconds(be.Left) // what is left of the host's wait
	}
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
	var rl *rateLimitError
	if errors.As(err, &rl) {
		return ClassRateLimited
	}
	var be *backoffError
	if errors.As(err, &be) {
		return ClassBackoff
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
	case ClassAuth, ClassJSONRPCAuth, ClassAuthMessage:
		return OutcomeAuthRequired
	case ClassRateLimited, ClassBackoff:
		return OutcomeRateLimited
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
