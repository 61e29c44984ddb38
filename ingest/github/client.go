package github

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Clock is the time the client and crawler live in; tests inject a
// simulated one whose Sleep advances Now instantly (compressed time).
type Clock interface {
	Now() time.Time
	Sleep(ctx context.Context, d time.Duration) error
}

// RealClock is wall-clock time.
type RealClock struct{}

// Now is time.Now.
func (RealClock) Now() time.Time { return time.Now() }

// Sleep waits d or until ctx ends.
func (RealClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Defaults.
const (
	DefaultBaseURL       = "https://api.github.com"
	DefaultMaxBody       = 4 << 20
	DefaultTimeout       = 30 * time.Second
	MinSecondaryBackoff  = 60 * time.Second
	MaxSecondaryBackoff  = 30 * time.Minute
	maxAttempts          = 8
	unauthenticatedLimit = 60
)

// ErrGaveUp is returned when a request kept failing (rate limits or 5xx)
// after maxAttempts tries.
var ErrGaveUp = errors.New("github: gave up after repeated failures")

// Response is what the client hands back: redirects are not followed here.
type Response struct {
	Status   int
	Body     []byte
	ETag     string
	Location string
	Link     string
}

// Stats count what the client did (for tests and metrics).
type Stats struct {
	Requests       int // HTTP requests sent
	NotModified    int // 304 answers
	PrimaryWaits   int // waits for x-ratelimit-reset
	SecondaryWaits int // waits for retry-after / back-off
	ServerErrors   int
}

// Client is a rate-limit-aware GitHub REST client. Safe for one goroutine
// at a time (the crawler is sequential by design: pacing is the point).
type Client struct {
	BaseURL   string
	Token     string // GITHUB_TOKEN; empty = 60 requests/h
	HTTP      *http.Client
	Clock     Clock
	MaxBody   int64
	UserAgent string

	mu        sync.Mutex
	known     bool
	limit     int
	remaining int
	reset     time.Time
	last      time.Time
	backoff   time.Duration
	stats     Stats
}

// NewClient returns a client for base (DefaultBaseURL when empty).
func NewClient(base, token string, clock Clock, rt http.RoundTripper) *Client {
	if base == "" {
		base = DefaultBaseURL
	}
	if clock == nil {
		clock = RealClock{}
	}
	hc := &http.Client{Timeout: DefaultTimeout, Transport: rt,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &Client{BaseURL: strings.TrimRight(base, "/"), Token: token, HTTP: hc, Clock: clock, MaxBody: DefaultMaxBody, UserAgent: "forum-provenance-crawler"}
}

// Stats returns a copy of the counters.
func (c *Client) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// Budget is the last rate-limit state GitHub reported.
type Budget struct {
	Known     bool      `json:"known"`
	Limit     int       `json:"limit"`
	Remaining int       `json:"remaining"`
	Reset     time.Time `json:"reset"`
}

// Budget returns the last reported rate-limit state.
func (c *Client) Budget() Budget {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Budget{Known: c.known, Limit: c.limit, Remaining: c.remaining, Reset: c.reset}
}

// pace waits so that requests are spread evenly over what is left of the
// rate-limit window, and for the reset when the budget is spent.
func (c *Client) pace(ctx context.Context) error {
	now := c.Clock.Now()
	if !c.known {
		// Before the first answer, assume the smallest budget.
		if !c.last.IsZero() {
			return c.Clock.Sleep(ctx, c.last.Add(time.Hour/unauthenticatedLimit).Sub(now))
		}
		return nil
	}
	if !c.reset.After(now) {
		// A new window has begun: the old numbers are stale.
		c.remaining = c.limit
		c.reset = now.Add(time.Hour)
	}
	if c.remaining <= 0 {
		c.stats.PrimaryWaits++
		return c.Clock.Sleep(ctx, c.reset.Sub(now)+time.Second)
	}
	gap := c.reset.Sub(now) / time.Duration(c.remaining)
	if c.last.IsZero() {
		return nil
	}
	return c.Clock.Sleep(ctx, c.last.Add(gap).Sub(now))
}

// Get fetches path (starting with "/", or an absolute URL on the API host)
// with If-None-Match: etag. Rate limits and 5xx are retried here; every
// other status is returned.
func (c *Client) Get(ctx context.Context, path, etag string) (*Response, error) {
	u := path
	if strings.HasPrefix(path, "/") {
		u = c.BaseURL + path
	}
	for attempt := 0; attempt < maxAttempts; attempt++ {
		if err := c.pace(ctx); err != nil {
			return nil, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, fmt.Errorf("github: %w", err)
		}
		req.Header.Set("Accept", "application/vnd.github+json")
		req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
		req.Header.Set("User-Agent", c.UserAgent)
		if c.Token != "" {
			req.Header.Set("Authorization", "Bearer "+c.Token)
		}
		if etag != "" {
			req.Header.Set("If-None-Match", etag)
		}
		c.last = c.Clock.Now()
		c.stats.Requests++
		resp, err := c.HTTP.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if err := c.secondary(ctx, ""); err != nil {
				return nil, err
			}
			continue
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, c.MaxBody))
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("github: reading %s: %w", path, err)
		}
		rem, hasRem := c.observeLimits(resp.Header)
		switch {
		case resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusTooManyRequests:
			if hasRem && rem == 0 {
				// Primary limit: pace() waits for the reset.
				c.remaining = 0
				continue
			}
			ra := resp.Header.Get("Retry-After")
			if ra != "" || resp.StatusCode == http.StatusTooManyRequests || strings.Contains(strings.ToLower(string(body)), "rate limit") {
				if err := c.secondary(ctx, ra); err != nil {
					return nil, err
				}
				continue
			}
		case resp.StatusCode >= 500:
			c.stats.ServerErrors++
			if err := c.secondary(ctx, resp.Header.Get("Retry-After")); err != nil {
				return nil, err
			}
			continue
		}
		c.backoff = 0
		if resp.StatusCode == http.StatusNotModified {
			c.stats.NotModified++
		}
		return &Response{Status: resp.StatusCode, Body: body, ETag: resp.Header.Get("ETag"),
			Location: resp.Header.Get("Location"), Link: resp.Header.Get("Link")}, nil
	}
	return nil, fmt.Errorf("%w: %s", ErrGaveUp, path)
}

// observeLimits records x-ratelimit-* headers.
func (c *Client) observeLimits(h http.Header) (remaining int, ok bool) {
	rem, err1 := strconv.Atoi(h.Get("X-Ratelimit-Remaining"))
	if err1 != nil {
		return 0, false
	}
	c.known = true
	c.remaining = rem
	if l, err := strconv.Atoi(h.Get("X-Ratelimit-Limit")); err == nil {
		c.limit = l
	}
	if r, err := strconv.ParseInt(h.Get("X-Ratelimit-Reset"), 10, 64); err == nil {
		c.reset = time.Unix(r, 0)
	}
	return rem, true
}

// secondary waits for a secondary rate limit: retry-after when given, else
// at least 60 s, doubling per consecutive hit (capped).
func (c *Client) secondary(ctx context.Context, retryAfter string) error {
	c.stats.SecondaryWaits++
	if s, err := strconv.Atoi(strings.TrimSpace(retryAfter)); err == nil && s >= 0 {
		c.backoff = 0
		return c.Clock.Sleep(ctx, time.Duration(s)*time.Second)
	}
	if c.backoff < MinSecondaryBackoff {
		c.backoff = MinSecondaryBackoff
	} else {
		c.backoff = min(2*c.backoff, MaxSecondaryBackoff)
	}
	return c.Clock.Sleep(ctx, c.backoff)
}
