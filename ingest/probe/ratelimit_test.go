package probe

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

var raNow = time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)

func TestParseRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"120", 120 * time.Second, true},
		{" 7 ", 7 * time.Second, true},
		{"0", 0, true},
		{"86400", 24 * time.Hour, true},
		{"86401", maxRetryAfter, true},                              // clamped
		{"99999999999999999999999", maxRetryAfter, true},            // overflows uint64: still "a long time"
		{"Thu, 01 Oct 2026 12:01:30 GMT", 90 * time.Second, true},   // IMF-fixdate
		{"Thursday, 01-Oct-26 12:00:05 GMT", 5 * time.Second, true}, // RFC 850
		{"Thu Oct  1 12:00:10 2026", 10 * time.Second, true},        // asctime
		{"Thu, 01 Oct 2026 11:00:00 GMT", 0, true},                  // already past
		{"Fri, 01 Oct 2027 12:00:00 GMT", maxRetryAfter, true},      // a year away: clamped
		{"", 0, false},
		{"-5", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
		{"120s", 0, false},
	} {
		d, ok := parseRetryAfter(tc.in, raNow)
		if d != tc.want || ok != tc.ok {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", tc.in, d, ok, tc.want, tc.ok)
		}
	}
}

// A date Retry-After is measured from the response's Date header, so a
// server whose clock runs ahead of ours still gets the wait it asked for.
func TestRateLimitedUsesServerDate(t *testing.T) {
	h := http.Header{}
	h.Set("Retry-After", "Thu, 01 Oct 2026 13:00:30 GMT")
	h.Set("Date", "Thu, 01 Oct 2026 13:00:00 GMT") // server is an hour ahead
	rl := rateLimited(&http.Response{StatusCode: 503, Header: h}, "initialize", raNow)
	if rl == nil || !rl.HasRetry || rl.RetryAfter != 30*time.Second {
		t.Fatalf("got %+v, want a 30 s wait", rl)
	}
	for _, tc := range []struct {
		status int
		ra     string
		want   bool
	}{
		{429, "", true}, {429, "garbage", true}, {503, "5", true}, {503, "garbage", true},
		{503, "", false}, {500, "5", false}, {400, "5", false}, {200, "5", false},
	} {
		h := http.Header{}
		if tc.ra != "" {
			h.Set("Retry-After", tc.ra)
		}
		if got := rateLimited(&http.Response{StatusCode: tc.status, Header: h}, "x", raNow) != nil; got != tc.want {
			t.Errorf("%d Retry-After %q: rate limited %v, want %v", tc.status, tc.ra, got, tc.want)
		}
	}
}

func TestBackoffs(t *testing.T) {
	b := newBackoffs()
	b.set("a", raNow.Add(time.Minute), raNow)
	b.set("a", raNow.Add(time.Second), raNow) // never shortened
	if u, ok := b.get("a", raNow.Add(30*time.Second)); !ok || !u.Equal(raNow.Add(time.Minute)) {
		t.Fatalf("a: %v %v", u, ok)
	}
	if _, ok := b.get("a", raNow.Add(time.Minute)); ok {
		t.Fatal("a back-off still running at its end")
	}
	if _, ok := b.get("b", raNow); ok {
		t.Fatal("b never backed off")
	}
	b.set("c", raNow.Add(time.Hour), raNow)
	if n := b.running(raNow.Add(time.Minute)); n != 1 {
		t.Fatalf("%d back-offs running, want 1", n)
	}
	// Expired entries are swept as the map grows: it stays as small as the
	// set of running back-offs, not the set of hosts ever refused.
	for i := range 10000 {
		at := raNow.Add(time.Duration(i) * time.Second)
		b.set("h"+strconv.Itoa(i), at.Add(time.Second), at)
	}
	if n := len(b.until); n > 200 {
		t.Fatalf("%d entries kept for 1-s back-offs set one a second", n)
	}
}

func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"120", "0", "Thu, 01 Oct 2026 12:01:30 GMT", "Thursday, 01-Oct-26 12:00:05 GMT",
		"Thu Oct  1 12:00:10 2026", "-1", "1e3", " 42 ", "99999999999999999999999", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		d, ok := parseRetryAfter(in, raNow)
		if d < 0 || d > maxRetryAfter {
			t.Fatalf("%q: wait %v outside [0, %v]", in, d, maxRetryAfter)
		}
		if !ok && d != 0 {
			t.Fatalf("%q: not parsed but a wait of %v", in, d)
		}
		if v := strings.TrimSpace(in); isDigits(v) {
			if !ok {
				t.Fatalf("%q: delay-seconds not parsed", in)
			}
			if n, err := strconv.ParseInt(v, 10, 64); err == nil && n <= int64(maxRetryAfter/time.Second) && d != time.Duration(n)*time.Second {
				t.Fatalf("%q: got %v", in, d)
			}
		}
		if got := retryAfterSeconds(d); got < 0 || time.Duration(got)*time.Second < d {
			t.Fatalf("%v rounds to %d s", d, got)
		}
	})
}
