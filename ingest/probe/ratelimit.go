package probe

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// maxRetryAfter bounds what a Retry-After may say before it is recorded: a
// server cannot make us store (or wait for) years. The back-off itself is
// capped lower, at Options.MaxBackoff.
const maxRetryAfter = 24 * time.Hour

// parseRetryAfter reads a Retry-After value (RFC 9110 §10.2.3): either
// delay-seconds (1*DIGIT) or an HTTP-date. A date is measured from ref — the
// response's own Date header when it has one, so a server whose clock is off
// from ours still gets the wait it asked for. A date already past gives 0.
// ok is false for an empty or unparseable value.
func parseRetryAfter(v string, ref time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if isDigits(v) {
		secs, err := strconv.ParseUint(v, 10, 64)
		if err != nil || secs > uint64(maxRetryAfter/time.Second) { // only overflow fails here
			return maxRetryAfter, true
		}
		return time.Duration(secs) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	d = t.Sub(ref)
	switch {
	case d < 0:
		return 0, true
	case d > maxRetryAfter:
		return maxRetryAfter, true
	}
	return d, true
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// rateLimited returns the refusal a response stands for when it is one: 429
// (with or without Retry-After), or 503 with a Retry-After header. A 503
// without Retry-After is an outage, not a refusal for load (SPEC §1.3).
func rateLimited(resp *http.Response, step string, now time.Time) *rateLimitError {
	ra := resp.Header.Get("Retry-After")
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
	case resp.StatusCode == http.StatusServiceUnavailable && strings.TrimSpace(ra) != "":
		// Present but unparseable still says "come back later": the
		// server asked for patience, so it is not held against it.
	default:
		return nil
	}
	ref := now
	if t, err := http.ParseTime(resp.Header.Get("Date")); err == nil {
		ref = t
	}
	d, ok := parseRetryAfter(ra, ref)
	return &rateLimitError{Status: resp.StatusCode, Step: step, RetryAfter: d, HasRetry: ok}
}

// retryAfterSeconds rounds a wait up to whole seconds, as Retry-After counts.
func retryAfterSeconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int(math.Ceil(d.Seconds()))
}

// backoffs remembers, per host, until when it asked not to be probed. The
// map holds only hosts whose back-off is running: expired entries are
// dropped on lookup and swept when the map grows.
type backoffs struct {
	mu    sync.Mutex
	until map[string]time.Time
	sweep int // sweep when len(until) reaches this
}

func newBackoffs() *backoffs { return &backoffs{until: map[string]time.Time{}, sweep: 64} }

// set extends host's back-off to at least until (never shortens it: two
// refusals in flight keep the longer wait).
func (b *backoffs) set(host string, until, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if u, ok := b.until[host]; !ok || until.After(u) {
		b.until[host] = until
	}
	if len(b.until) >= b.sweep {
		for h, u := range b.until {
			if !u.After(now) {
				delete(b.until, h)
			}
		}
		b.sweep = max(64, 2*len(b.until))
	}
}

// get returns host's back-off end when it is still running at now.
func (b *backoffs) get(host string, now time.Time) (time.Time, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	u, ok := b.until[host]
	if !ok {
		return time.Time{}, false
	}
	if !u.After(now) {
		delete(b.until, host)
		return time.Time{}, false
	}
	return u, true
}

// running is the number of hosts whose back-off still runs at now.
func (b *backoffs) running(now time.Time) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, u := range b.until {
		if u.After(now) {
			n++
		}
	}
	return n
}
