package registry

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/forum-mcp/forum/schema"
)

// ---- the fake registry ----------------------------------------------------

// crawlPageFiles are the real pages bundled in testdata/crawl (see its README).
func crawlPageFiles(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "crawl", "page-*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no crawl test pages: %v", err)
	}
	slices.Sort(files)
	return files
}

// crawlRealRows returns the raw entries of the bundled pages, in order.
// It reads them with encoding/json, not with decodePage, so the crawler is
// checked against an independent reading.
func crawlRealRows(t testing.TB) []json.RawMessage {
	t.Helper()
	var rows []json.RawMessage
	for _, f := range crawlPageFiles(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var page struct {
			Servers []json.RawMessage `json:"servers"`
		}
		if err := json.Unmarshal(b, &page); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		rows = append(rows, page.Servers...)
	}
	if len(rows) != 250 {
		t.Fatalf("bundled pages hold %d rows, want 250", len(rows))
	}
	return rows
}

// crawlParseAll parses rows the way the crawler must, for expected values.
func crawlParseAll(t testing.TB, rows []json.RawMessage) []schema.Entry {
	t.Helper()
	out := make([]schema.Entry, 0, len(rows))
	for i, r := range rows {
		e, err := ParseEntry(r)
		if err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
		out = append(out, e)
	}
	return out
}

// crawlFake serves rows as the read API v0.1 does: pages of `limit`
// (default 30, max 100), opaque cursors, `updated_since` strictly after
// updatedAt, and a cursor on every page of exactly `limit` rows — even when
// the next page is empty; and `/v0.1/servers/{name}/versions`, every row of
// one name in one page.
type crawlFake struct {
	t     testing.TB
	rows  []json.RawMessage
	snake bool // spell the cursor next_cursor, as old deployments did
	// hook, when set, may answer request n (1-based) itself by returning true.
	hook func(n int, w http.ResponseWriter, r *http.Request) bool

	mu   sync.Mutex
	reqs []*http.Request
}

func newCrawlFake(t testing.TB, rows []json.RawMessage) (*crawlFake, *httptest.Server) {
	f := &crawlFake{t: t, rows: rows}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *crawlFake) requests() []*http.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.reqs)
}

func crawlCursor(off int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("o:" + strconv.Itoa(off)))
}

func crawlFakeUpdatedAt(raw []byte) time.Time {
	var v struct {
		Meta map[string]struct {
			UpdatedAt time.Time `json:"updatedAt"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(raw, &v)
	return v.Meta[OfficialMetaKey].UpdatedAt
}

// crawlVersionsPath reads {name} out of /v0.1/servers/{name}/versions.
func crawlVersionsPath(p string) (string, bool) {
	rest, ok := strings.CutPrefix(p, "/v0.1/servers/")
	if !ok {
		return "", false
	}
	esc, ok := strings.CutSuffix(rest, "/versions")
	if !ok || strings.Contains(esc, "/") {
		return "", false
	}
	name, err := url.PathUnescape(esc)
	return name, err == nil
}

func crawlFakeName(raw []byte) string {
	var v struct {
		Server struct {
			Name string `json:"name"`
		} `json:"server"`
	}
	_ = json.Unmarshal(raw, &v)
	return v.Server.Name
}

func (f *crawlFake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.reqs = append(f.reqs, r)
	n := len(f.reqs)
	f.mu.Unlock()
	if f.hook != nil && f.hook(n, w, r) {
		return
	}
	if name, ok := crawlVersionsPath(r.URL.EscapedPath()); ok {
		var page []json.RawMessage
		for _, row := range f.rows {
			if crawlFakeName(row) == name {
				page = append(page, row)
			}
		}
		if len(page) == 0 {
			http.Error(w, `{"title":"Not Found","status":404}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(f.pageBody(page, ""))
		return
	}
	if r.URL.Path != "/v0.1/servers" {
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query()
	limit := 30
	if s := q.Get("limit"); s != "" {
		l, err := strconv.Atoi(s)
		if err != nil || l < 1 || l > 100 {
			http.Error(w, `{"title":"Unprocessable Entity","status":422}`, http.StatusUnprocessableEntity)
			return
		}
		limit = l
	}
	off := 0
	if c := q.Get("cursor"); c != "" {
		b, err := base64.RawURLEncoding.DecodeString(c)
		o, err2 := strconv.Atoi(strings.TrimPrefix(string(b), "o:"))
		if err != nil || err2 != nil || !strings.HasPrefix(string(b), "o:") {
			http.Error(w, `{"title":"Bad Request","status":400,"detail":"invalid cursor"}`, http.StatusBadRequest)
			return
		}
		off = o
	}
	rows := f.rows
	if s := q.Get("updated_since"); s != "" {
		since, err := time.Parse(time.RFC3339, s)
		if err != nil {
			http.Error(w, `{"title":"Bad Request","status":400}`, http.StatusBadRequest)
			return
		}
		rows = nil
		for _, r := range f.rows {
			if crawlFakeUpdatedAt(r).After(since) {
				rows = append(rows, r)
			}
		}
	}
	page := rows[min(off, len(rows)):min(off+limit, len(rows))]
	next := ""
	if len(page) == limit {
		next = crawlCursor(off + limit)
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(f.pageBody(page, next))
}

func (f *crawlFake) pageBody(page []json.RawMessage, next string) []byte {
	var b bytes.Buffer
	b.WriteString(`{"servers":[`)
	for i, r := range page {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(r)
	}
	b.WriteString(`],"metadata":{`)
	if next != "" {
		key := "nextCursor"
		if f.snake {
			key = "next_cursor"
		}
		fmt.Fprintf(&b, "%q:%q,", key, next)
	}
	fmt.Fprintf(&b, `"count":%d}}`, len(page))
	return b.Bytes()
}

// ---- the crawler under test -----------------------------------------------

type crawlSleeps struct {
	mu sync.Mutex
	ds []time.Duration
}

func (s *crawlSleeps) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.ds = append(s.ds, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *crawlSleeps) waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ds)
}

type crawlSink struct {
	entries []schema.Entry
	dlq     []schema.DLQMessage
}

func (s *crawlSink) emit(e schema.Entry) error        { s.entries = append(s.entries, e); return nil }
func (s *crawlSink) reject(m schema.DLQMessage) error { s.dlq = append(s.dlq, m); return nil }

var crawlClock = time.Date(2025, 10, 7, 21, 0, 0, 0, time.UTC)

func newCrawlTestCrawler(t testing.TB, srv *httptest.Server, sl *crawlSleeps, mod func(*CrawlerOptions)) *Crawler {
	t.Helper()
	opts := CrawlerOptions{
		BaseURL:    srv.URL + "/",
		HTTPClient: srv.Client(),
		Logger:     zaptest.NewLogger(t, zaptest.Level(zapcore.WarnLevel)),
		Now:        func() time.Time { return crawlClock },
	}
	if sl != nil {
		opts.Sleep = sl.Sleep
	}
	if mod != nil {
		mod(&opts)
	}
	c, err := NewCrawler(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func crawlRun(t testing.TB, c *Crawler, since time.Time) (*crawlSink, CrawlResult, error) {
	t.Helper()
	var s crawlSink
	res, err := c.Crawl(t.Context(), since, s.emit, s.reject)
	return &s, res, err
}

func crawlMaxUpdated(es []schema.Entry) time.Time {
	var m time.Time
	for _, e := range es {
		if e.Meta.UpdatedAt.After(m) {
			m = e.Meta.UpdatedAt
		}
	}
	return m
}

func crawlAssertEntries(t *testing.T, got, want []schema.Entry) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("emitted %d entries, want %d", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("entry %d: got %s@%s, want %s@%s (or a field differs)", i,
				got[i].Server.Name, got[i].Server.Version, want[i].Server.Name, want[i].Server.Version)
		}
	}
}

func crawlReasons(ms []schema.DLQMessage) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Reason)
	}
	return out
}

// ---- cases ------------------------------------------------------------------

func TestCrawlFull(t *testing.T) {
	rows := crawlRealRows(t)
	want := crawlParseAll(t, rows)
	f, srv := newCrawlFake(t, rows)
	c := newCrawlTestCrawler(t, srv, nil, nil)

	s, res, err := crawlRun(t, c, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	crawlAssertEntries(t, s.entries, want)
	if len(s.dlq) != 0 {
		t.Fatalf("DLQ: %v", crawlReasons(s.dlq))
	}
	names := map[string]bool{}
	for _, e := range want {
		names[e.Server.Name] = true
	}
	wantRes := CrawlResult{Source: srv.URL, Mode: schema.ModeFull, Started: crawlClock, Pages: 3, Entries: 250,
		Names: len(names), Watermark: crawlMaxUpdated(want)}
	if !reflect.DeepEqual(res, wantRes) {
		t.Fatalf("result\n got %+v\nwant %+v", res, wantRes)
	}
	reqs := f.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	for i, r := range reqs {
		q := r.URL.Query()
		if q.Has("version") || q.Has("updated_since") {
			t.Errorf("request %d: %s: a full crawl of all versions sends neither version nor updated_since", i, r.URL)
		}
		if q.Get("limit") != "100" {
			t.Errorf("request %d: limit %q", i, q.Get("limit"))
		}
		if (i == 0) == q.Has("cursor") {
			t.Errorf("request %d: cursor %q", i, q.Get("cursor"))
		}
		if ua := r.Header.Get("User-Agent"); ua != DefaultUserAgent {
			t.Errorf("User-Agent %q", ua)
		}
	}
}

func TestCrawlIncremental(t *testing.T) {
	rows := crawlRealRows(t)
	all := crawlParseAll(t, rows)
	var times []time.Time
	for _, e := range all {
		times = append(times, e.Meta.UpdatedAt)
	}
	slices.SortFunc(times, time.Time.Compare)

	for _, tc := range []struct {
		name  string
		since time.Time
	}{
		{"median", times[len(times)/2]},
		{"just before the newest", times[len(times)-1].Add(-time.Nanosecond)},
		{"the newest: nothing after it", times[len(times)-1]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The rows updated since, then the other versions of each server
			// whose new latest they carry (by name, in page order).
			var want []schema.Entry
			listed, bumped := map[string]bool{}, map[string]bool{}
			for _, e := range all {
				if e.Meta.UpdatedAt.After(tc.since) {
					want = append(want, e)
					listed[e.Server.Name+"@"+e.Server.Version] = true
					if e.Meta.IsLatest {
						bumped[e.Server.Name] = true
					}
				}
			}
			listing := len(want)
			for _, n := range slices.Sorted(maps.Keys(bumped)) {
				for _, e := range all {
					if e.Server.Name == n && !listed[n+"@"+e.Server.Version] {
						want = append(want, e)
					}
				}
			}
			f, srv := newCrawlFake(t, rows)
			c := newCrawlTestCrawler(t, srv, nil, nil)
			s, res, err := crawlRun(t, c, tc.since)
			if err != nil {
				t.Fatal(err)
			}
			crawlAssertEntries(t, s.entries, want)
			if res.Mode != schema.ModeIncremental || res.Incomplete || res.Entries != len(want) {
				t.Fatalf("result %+v", res)
			}
			wantMark := tc.since
			if listing > 0 {
				wantMark = crawlMaxUpdated(want[:listing])
			}
			if !res.Watermark.Equal(wantMark) {
				t.Fatalf("watermark %v, want %v", res.Watermark, wantMark)
			}
			versions := 0
			for _, r := range f.requests() {
				if _, ok := crawlVersionsPath(r.URL.EscapedPath()); ok {
					versions++
					continue
				}
				got, err := time.Parse(time.RFC3339, r.URL.Query().Get("updated_since"))
				if err != nil || !got.Equal(tc.since) {
					t.Fatalf("updated_since %q (%v), want %v", r.URL.Query().Get("updated_since"), err, tc.since)
				}
				if r.URL.Query().Has("version") {
					t.Fatal("version filter sent")
				}
			}
			if versions != len(bumped) {
				t.Errorf("%d versions requests, want one per server with a new latest (%d)", versions, len(bumped))
			}
		})
	}
}

func TestCrawlSnakeCaseCursor(t *testing.T) {
	rows := crawlRealRows(t)
	f, srv := newCrawlFake(t, rows)
	f.snake = true
	s, res, err := crawlRun(t, newCrawlTestCrawler(t, srv, nil, nil), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	crawlAssertEntries(t, s.entries, crawlParseAll(t, rows))
	if res.Pages != 3 {
		t.Fatalf("pages %d", res.Pages)
	}
}

// A page of exactly `limit` rows carries a cursor even when nothing follows:
// the crawler fetches the empty page, and that ends the crawl.
func TestCrawlExactLimitThenEmptyPage(t *testing.T) {
	rows := crawlRealRows(t)
	f, srv := newCrawlFake(t, rows)
	c := newCrawlTestCrawler(t, srv, nil, func(o *CrawlerOptions) { o.PageLimit = 50 })
	s, res, err := crawlRun(t, c, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	crawlAssertEntries(t, s.entries, crawlParseAll(t, rows))
	if res.Pages != 6 || res.Incomplete {
		t.Fatalf("result %+v: want 5 full pages and an empty one", res)
	}
	reqs := f.requests()
	if last := reqs[len(reqs)-1].URL.Query().Get("cursor"); last != crawlCursor(250) {
		t.Fatalf("last cursor %q", last)
	}
}

func TestCrawlRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		name, header string
		want         time.Duration
	}{
		{"seconds", "7", 7 * time.Second},
		{"zero", "0", 0},
		{"HTTP date", crawlClock.Add(30 * time.Second).Format(http.TimeFormat), 30 * time.Second},
		{"date in the past", crawlClock.Add(-time.Hour).Format(http.TimeFormat), 0},
		{"capped", "3600", DefaultMaxBackoff},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := crawlRealRows(t)
			f, srv := newCrawlFake(t, rows)
			f.hook = func(n int, w http.ResponseWriter, r *http.Request) bool {
				if n != 2 {
					return false
				}
				w.Header().Set("Retry-After", tc.header)
				http.Error(w, `{"title":"Too Many Requests","status":429}`, http.StatusTooManyRequests)
				return true
			}
			var sl crawlSleeps
			s, res, err := crawlRun(t, newCrawlTestCrawler(t, srv, &sl, nil), time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			if got := sl.waits(); !slices.Equal(got, []time.Duration{tc.want}) {
				t.Fatalf("waits %v, want [%v]", got, tc.want)
			}
			crawlAssertEntries(t, s.entries, crawlParseAll(t, rows))
			if res.Retries != 1 || len(s.dlq) != 0 {
				t.Fatalf("retries %d, DLQ %v", res.Retries, crawlReasons(s.dlq))
			}
			if reqs := f.requests(); reqs[1].URL.String() != reqs[2].URL.String() {
				t.Fatalf("retry asked %s, want %s", reqs[2].URL, reqs[1].URL)
			}
		})
	}
}

func TestCrawl503TwiceThenSuccess(t *testing.T) {
	rows := crawlRealRows(t)
	f, srv := newCrawlFake(t, rows)
	f.hook = func(n int, w http.ResponseWriter, r *http.Request) bool {
		if n == 1 || n == 2 {
			http.Error(w, "upstream unavailable", http.StatusServiceUnavailable)
			return true
		}
		return false
	}
	var sl crawlSleeps
	s, res, err := crawlRun(t, newCrawlTestCrawler(t, srv, &sl, nil), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	crawlAssertEntries(t, s.entries, crawlParseAll(t, rows))
	// Exponential back-off with equal jitter: [0.5 s, 1 s], then [1 s, 2 s].
	waits := sl.waits()
	if len(waits) != 2 ||
		waits[0] < 500*time.Millisecond || waits[0] > time.Second ||
		waits[1] < time.Second || waits[1] > 2*time.Second {
		t.Fatalf("waits %v", waits)
	}
	if res.Retries != 2 || res.Incomplete || len(s.dlq) != 0 {
		t.Fatalf("result %+v, DLQ %v", res, crawlReasons(s.dlq))
	}
}

func TestCrawlBackoffIsExponentialAndCapped(t *testing.T) {
	_, srv := newCrawlFake(t, nil)
	c := newCrawlTestCrawler(t, srv, nil, func(o *CrawlerOptions) { o.MaxBackoff = 10 * time.Second })
	var got []time.Duration
	for a := 1; a <= 6; a++ {
		got = append(got, c.backoff(a))
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}
	if !slices.Equal(got, want) {
		t.Fatalf("back-off %v, want %v", got, want)
	}
	for range 1000 {
		if d := crawlEqualJitter(8 * time.Second); d < 4*time.Second || d > 8*time.Second {
			t.Fatalf("jitter %v out of [4s, 8s]", d)
		}
	}
}

// crawlPageFailure: page 2 always answers badly; the crawl must stop with an
// error, one DLQ message for the page, Incomplete, and page 1 kept.
func crawlPageFailure(t *testing.T, answer func(w http.ResponseWriter), mod func(*CrawlerOptions)) (*crawlSink, CrawlResult, error, *crawlSleeps, *crawlFake) {
	t.Helper()
	rows := crawlRealRows(t)
	f, srv := newCrawlFake(t, rows)
	f.hook = func(n int, w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Query().Get("cursor") == crawlCursor(100) {
			answer(w)
			return true
		}
		return false
	}
	var sl crawlSleeps
	s, res, err := crawlRun(t, newCrawlTestCrawler(t, srv, &sl, mod), time.Time{})
	if err == nil {
		t.Fatal("crawl succeeded over a bad page")
	}
	crawlAssertEntries(t, s.entries, crawlParseAll(t, rows[:100]))
	if !res.Incomplete || res.Pages != 1 || res.Entries != 100 || !res.Watermark.IsZero() {
		t.Fatalf("result %+v: want incomplete after page 1, watermark not advanced", res)
	}
	return s, res, err, &sl, f
}

func crawlCheckPageDLQ(t *testing.T, s *crawlSink, err error, reason string, status int) schema.DLQMessage {
	t.Helper()
	var pe *PageError
	if !errors.As(err, &pe) || pe.Reason != reason || pe.Status != status {
		t.Fatalf("error %v (%T), want a PageError %s status %d", err, err, reason, status)
	}
	if len(s.dlq) != 1 {
		t.Fatalf("DLQ %v, want one %s", crawlReasons(s.dlq), reason)
	}
	m := s.dlq[0]
	if m.Reason != reason || m.Stage != CrawlStage || !strings.Contains(m.Source, "cursor="+crawlCursor(100)) ||
		m.ID == "" || len(m.Payload) > schema.MaxDLQPayload || !utf8.ValidString(m.Payload) {
		t.Fatalf("DLQ message %+v", m)
	}
	return m
}

func TestCrawlHTMLPage(t *testing.T) {
	html := "<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>cloudflare</body></html>"
	s, _, err, sl, f := crawlPageFailure(t, func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(html))
	}, nil)
	m := crawlCheckPageDLQ(t, s, err, schema.ReasonNotJSON, 200)
	if m.Payload != html || m.PayloadBytes != len(html) {
		t.Fatalf("payload %q (%d bytes)", m.Payload, m.PayloadBytes)
	}
	if len(sl.waits()) != DefaultMaxAttempts-1 || len(f.requests()) != 1+DefaultMaxAttempts {
		t.Fatalf("%d waits, %d requests: want the page tried %d times", len(sl.waits()), len(f.requests()), DefaultMaxAttempts)
	}
}

func TestCrawlTruncatedPage(t *testing.T) {
	rows := crawlRealRows(t)
	f := &crawlFake{rows: rows}
	body := f.pageBody(rows[100:200], crawlCursor(200))
	body = body[:len(body)/2]
	s, _, err, _, _ := crawlPageFailure(t, func(w http.ResponseWriter) { _, _ = w.Write(body) }, nil)
	m := crawlCheckPageDLQ(t, s, err, schema.ReasonTruncatedJSON, 200)
	if m.PayloadBytes != len(body) {
		t.Fatalf("payload bytes %d, want %d", m.PayloadBytes, len(body))
	}
}

func TestCrawlMalformedPages(t *testing.T) {
	for _, tc := range []struct{ name, body, reason string }{
		{"servers not an array", `{"servers":{"a":1},"metadata":{}}`, schema.ReasonMalformedJSON},
		{"no servers", `{"metadata":{"nextCursor":"x"}}`, schema.ReasonMalformedJSON},
		{"syntax error", `{"servers":[{"server":{}} {"x":1}]}`, schema.ReasonMalformedJSON},
		{"plain text", "upstream connect error or disconnect/reset before headers", schema.ReasonNotJSON},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _, err, _, _ := crawlPageFailure(t, func(w http.ResponseWriter) { _, _ = w.Write([]byte(tc.body)) }, nil)
			crawlCheckPageDLQ(t, s, err, tc.reason, 200)
		})
	}
}

func TestCrawlHTTPStatusAfterRetries(t *testing.T) {
	s, res, err, sl, _ := crawlPageFailure(t, func(w http.ResponseWriter) {
		http.Error(w, "bad gateway", http.StatusBadGateway)
	}, nil)
	crawlCheckPageDLQ(t, s, err, schema.ReasonHTTPStatus, 502)
	if len(sl.waits()) != DefaultMaxAttempts-1 || res.Retries != DefaultMaxAttempts-1 {
		t.Fatalf("waits %v, retries %d", sl.waits(), res.Retries)
	}
}

func TestCrawlClientErrorIsNotRetried(t *testing.T) {
	s, res, err, sl, _ := crawlPageFailure(t, func(w http.ResponseWriter) {
		http.Error(w, `{"title":"Bad Request","status":400,"detail":"invalid cursor"}`, http.StatusBadRequest)
	}, nil)
	m := crawlCheckPageDLQ(t, s, err, schema.ReasonHTTPStatus, 400)
	if len(sl.waits()) != 0 || res.Retries != 0 || !strings.Contains(m.Payload, "invalid cursor") {
		t.Fatalf("waits %v, retries %d, payload %q", sl.waits(), res.Retries, m.Payload)
	}
}

// Entries ParseEntry rejects, and duplicates, go to the DLQ with their reason;
// every other entry of the page is emitted and the crawl goes on.
func TestCrawlBadEntries(t *testing.T) {
	rows := crawlRealRows(t)
	want := crawlParseAll(t, rows)

	mutate := func(raw json.RawMessage, edit func(server map[string]any)) json.RawMessage {
		var v map[string]any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		edit(v["server"].(map[string]any))
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	badUTF8 := bytes.Replace(mutate(rows[120], func(s map[string]any) { s["description"] = "caf\u00e9 MARK" }),
		[]byte("MARK"), []byte{0xff, 0xfe, 0x80}, 1)
	if utf8.Valid(badUTF8) {
		t.Fatal("invalid UTF-8 case is valid")
	}
	huge := mutate(rows[130], func(s map[string]any) { s["description"] = strings.Repeat("A", 10<<20) })
	noName := mutate(rows[140], func(s map[string]any) { delete(s, "name") })
	dupFar := rows[10]   // first seen on page 1
	dupNear := rows[145] // first seen earlier on the same page (page 2)

	var served []json.RawMessage
	served = append(served, rows[:150]...)
	served = append(served, badUTF8, huge, dupFar, noName, dupNear)
	served = append(served, rows[150:]...)

	_, srv := newCrawlFake(t, served)
	c := newCrawlTestCrawler(t, srv, nil, func(o *CrawlerOptions) { o.PageLimit = 100 })
	s, res, err := crawlRun(t, c, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	crawlAssertEntries(t, s.entries, want)
	if res.Incomplete || res.Entries != 250 || res.Rejects != 5 || res.Pages != 3 {
		t.Fatalf("result %+v", res)
	}

	wantDLQ := []struct {
		reason, key string
		raw         []byte
	}{
		{schema.ReasonInvalidUTF8, want[120].Server.Name, badUTF8},
		{schema.ReasonEntryTooLarge, want[130].Server.Name, huge},
		{schema.ReasonDuplicateEntry, want[10].Server.Name + "@" + want[10].Server.Version, dupFar},
		{schema.ReasonMissingName, "", noName},
		{schema.ReasonDuplicateEntry, want[145].Server.Name + "@" + want[145].Server.Version, dupNear},
	}
	if len(s.dlq) != len(wantDLQ) {
		t.Fatalf("DLQ %v", crawlReasons(s.dlq))
	}
	for i, w := range wantDLQ {
		m := s.dlq[i]
		if m.Reason != w.reason || m.Key != w.key || m.Stage != CrawlStage || m.PayloadBytes != len(w.raw) ||
			!strings.Contains(m.Source, "cursor="+crawlCursor(100)) || m.Detail == "" {
			t.Errorf("DLQ %d: %s key %q source %s bytes %d detail %q; want %s key %q bytes %d",
				i, m.Reason, m.Key, m.Source, m.PayloadBytes, m.Detail, w.reason, w.key, len(w.raw))
		}
		if len(m.Payload) > schema.MaxDLQPayload || !utf8.ValidString(m.Payload) {
			t.Errorf("DLQ %d: payload of %d bytes, valid UTF-8 %v", i, len(m.Payload), utf8.ValidString(m.Payload))
		}
	}

	// The same bad input gives the same DLQ ids on the next crawl.
	s2, _, err := crawlRun(t, c, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range s.dlq {
		if s.dlq[i].ID != s2.dlq[i].ID {
			t.Fatalf("DLQ id %d changed between crawls", i)
		}
	}
	if s.dlq[2].ID == s.dlq[4].ID {
		t.Fatal("two different duplicates share an id")
	}
}

func TestCrawlBodyTooLarge(t *testing.T) {
	for _, chunked := range []bool{false, true} {
		t.Run(fmt.Sprintf("chunked=%v", chunked), func(t *testing.T) {
			rows := crawlRealRows(t)
			// Page 2 answers with 200 rows, over a cap that page 1 (100 rows) is under.
			body := (&crawlFake{rows: rows}).pageBody(rows[:200], crawlCursor(200))
			s, res, err, sl, _ := crawlPageFailure(t, func(w http.ResponseWriter) {
				if chunked {
					_, _ = w.Write(body[:10])
					w.(http.Flusher).Flush() // no Content-Length
					_, _ = w.Write(body[10:])
					return
				}
				w.Header().Set("Content-Length", strconv.Itoa(len(body)))
				_, _ = w.Write(body)
			}, func(o *CrawlerOptions) { o.MaxBodyBytes = int64(len(body)) * 3 / 4 })
			m := crawlCheckPageDLQ(t, s, err, schema.ReasonBodyTooLarge, 200)
			if len(sl.waits()) != 0 || res.Retries != 0 {
				t.Fatalf("a body over the cap was retried: %v", sl.waits())
			}
			if !chunked && m.PayloadBytes != len(body) {
				t.Fatalf("payload bytes %d, want the Content-Length %d", m.PayloadBytes, len(body))
			}
		})
	}
}

func TestCrawlNetworkErrors(t *testing.T) {
	rows := crawlRealRows(t)
	hangUp := func(w http.ResponseWriter) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	}
	t.Run("two resets then success", func(t *testing.T) {
		f, srv := newCrawlFake(t, rows)
		f.hook = func(n int, w http.ResponseWriter, r *http.Request) bool {
			if n == 2 || n == 3 {
				hangUp(w)
				return true
			}
			return false
		}
		var sl crawlSleeps
		c := newCrawlTestCrawler(t, srv, &sl, func(o *CrawlerOptions) {
			// Fresh connections: net/http would itself retry a GET that
			// failed on a reused one, hiding the resets from the crawler.
			tr := srv.Client().Transport.(*http.Transport).Clone()
			tr.DisableKeepAlives = true
			o.HTTPClient = &http.Client{Transport: tr}
		})
		s, res, err := crawlRun(t, c, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		crawlAssertEntries(t, s.entries, crawlParseAll(t, rows))
		if res.Retries != 2 || len(sl.waits()) != 2 {
			t.Fatalf("retries %d, waits %v", res.Retries, sl.waits())
		}
	})
	t.Run("request timeout", func(t *testing.T) {
		f, srv := newCrawlFake(t, rows)
		f.hook = func(n int, w http.ResponseWriter, r *http.Request) bool {
			if n == 1 {
				<-r.Context().Done() // hang until the client gives up
				return true
			}
			return false
		}
		var sl crawlSleeps
		c := newCrawlTestCrawler(t, srv, &sl, func(o *CrawlerOptions) { o.RequestTimeout = 200 * time.Millisecond })
		s, res, err := crawlRun(t, c, time.Time{})
		if err != nil || res.Retries != 1 || len(s.entries) != 250 {
			t.Fatalf("err %v, result %+v", err, res)
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		_, srv := newCrawlFake(t, rows)
		var sl crawlSleeps
		c := newCrawlTestCrawler(t, srv, &sl, nil)
		srv.Close()
		s, res, err := crawlRun(t, c, time.Time{})
		if !errors.Is(err, ErrUnreachable) {
			t.Fatalf("err %v, want ErrUnreachable", err)
		}
		if !res.Incomplete || len(s.dlq) != 0 || len(sl.waits()) != DefaultMaxAttempts-1 {
			t.Fatalf("result %+v, DLQ %v, waits %v: an outage is not bad input", res, crawlReasons(s.dlq), sl.waits())
		}
	})
}

func TestCrawlContextCancel(t *testing.T) {
	rows := crawlRealRows(t)
	for _, tc := range []struct {
		name   string
		answer func(w http.ResponseWriter, r *http.Request)
	}{
		{"during a request", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }},
		{"during a back-off wait", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "60")
			http.Error(w, "slow down", http.StatusTooManyRequests)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, srv := newCrawlFake(t, rows)
			f.hook = func(n int, w http.ResponseWriter, r *http.Request) bool {
				if n >= 2 {
					tc.answer(w, r)
					return true
				}
				return false
			}
			// The real Sleep: cancelling must cut a 60 s wait short.
			c := newCrawlTestCrawler(t, srv, nil, func(o *CrawlerOptions) { o.Sleep = nil })
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var s crawlSink
			done := make(chan struct{})
			var (
				res CrawlResult
				err error
			)
			go func() {
				defer close(done)
				res, err = c.Crawl(ctx, time.Time{}, s.emit, s.reject)
			}()
			time.Sleep(150 * time.Millisecond)
			start := time.Now()
			cancel()
			select {
			case <-done:
			case <-time.After(2 * time.Second):
				t.Fatal("crawl did not stop within 2 s of the cancel")
			}
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err %v, want context.Canceled", err)
			}
			if !res.Incomplete || res.Entries != 100 || len(s.dlq) != 0 {
				t.Fatalf("result %+v, DLQ %v", res, crawlReasons(s.dlq))
			}
			t.Logf("stopped %v after the cancel", time.Since(start))
		})
	}
}

func TestCrawlCursorLoop(t *testing.T) {
	rows := crawlRealRows(t)
	f, srv := newCrawlFake(t, rows)
	f.hook = func(n int, w http.ResponseWriter, r *http.Request) bool {
		// Every page points back at the second one: A → B → B.
		next := "B"
		page := rows[:100]
		if r.URL.Query().Get("cursor") == "B" {
			page = rows[100:200]
		}
		_, _ = w.Write(f.pageBody(page, next))
		return true
	}
	s, res, err := crawlRun(t, newCrawlTestCrawler(t, srv, nil, nil), time.Time{})
	if !errors.Is(err, ErrCursorLoop) {
		t.Fatalf("err %v, want ErrCursorLoop", err)
	}
	if !res.Incomplete || res.Pages != 2 || len(s.entries) != 200 || len(f.requests()) != 2 {
		t.Fatalf("result %+v, %d requests", res, len(f.requests()))
	}
}

func TestCrawlMaxPages(t *testing.T) {
	rows := crawlRealRows(t)
	_, srv := newCrawlFake(t, rows)
	c := newCrawlTestCrawler(t, srv, nil, func(o *CrawlerOptions) { o.PageLimit = 50; o.MaxPages = 2 })
	s, res, err := crawlRun(t, c, time.Time{})
	if !errors.Is(err, ErrTooManyPages) || !res.Incomplete || res.Pages != 2 || len(s.entries) != 100 {
		t.Fatalf("err %v, result %+v", err, res)
	}
}

func TestCrawlCallbackErrorsStop(t *testing.T) {
	rows := crawlRealRows(t)
	boom := errors.New("bus down")
	t.Run("emit", func(t *testing.T) {
		_, srv := newCrawlFake(t, rows)
		n := 0
		res, err := newCrawlTestCrawler(t, srv, nil, nil).Crawl(t.Context(), time.Time{},
			func(schema.Entry) error {
				if n++; n == 150 {
					return boom
				}
				return nil
			}, func(schema.DLQMessage) error { return nil })
		if !errors.Is(err, boom) || !res.Incomplete || res.Entries != 149 {
			t.Fatalf("err %v, result %+v", err, res)
		}
	})
	t.Run("reject", func(t *testing.T) {
		_, srv := newCrawlFake(t, append(slices.Clone(rows[:5]), rows[0]))
		res, err := newCrawlTestCrawler(t, srv, nil, nil).Crawl(t.Context(), time.Time{},
			func(schema.Entry) error { return nil }, func(schema.DLQMessage) error { return boom })
		if !errors.Is(err, boom) || !res.Incomplete {
			t.Fatalf("err %v, result %+v", err, res)
		}
	})
}

func TestCrawlLogsProgress(t *testing.T) {
	rows := crawlRealRows(t)
	_, srv := newCrawlFake(t, rows)
	core, logs := observer.New(zapcore.InfoLevel)
	c := newCrawlTestCrawler(t, srv, nil, func(o *CrawlerOptions) {
		o.Logger = zap.New(core)
		o.PageLimit = 50
		o.ProgressEvery = 2
	})
	if _, _, err := crawlRun(t, c, time.Time{}); err != nil {
		t.Fatal(err)
	}
	progress := logs.FilterMessage("crawl progress").All()
	if len(progress) != 3 { // after pages 2, 4 and 6
		t.Fatalf("%d progress lines, want 3", len(progress))
	}
	if f := progress[1].ContextMap(); f["pages"] != int64(4) || f["entries"] != int64(200) {
		t.Fatalf("progress fields %v", f)
	}
	if logs.FilterMessage("crawl done").Len() != 1 {
		t.Fatal("no final log line")
	}
}

func TestCrawlNewCrawlerOptions(t *testing.T) {
	c, err := NewCrawler(CrawlerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	o := c.opts
	if c.base != DefaultBaseURL || o.PageLimit != 100 || o.RequestTimeout != 30*time.Second ||
		o.MaxBodyBytes != 16<<20 || o.MaxPages != 5000 || o.MaxAttempts != 6 || o.MaxBackoff != 60*time.Second ||
		o.UserAgent != DefaultUserAgent || o.HTTPClient == nil || o.Logger == nil || o.Sleep == nil {
		t.Fatalf("defaults %+v", o)
	}
	if got := c.pageURL("a b/c", time.Date(2025, 10, 1, 2, 3, 4, 500, time.FixedZone("x", 3600))); got !=
		DefaultBaseURL+"/v0.1/servers?cursor=a+b%2Fc&limit=100&updated_since=2025-10-01T01%3A03%3A04.0000005Z" {
		t.Fatalf("page URL %s", got)
	}
	for _, bad := range []CrawlerOptions{
		{BaseURL: "ftp://x"}, {BaseURL: "https://"}, {BaseURL: "https://x/?a=b"},
		{PageLimit: 101}, {PageLimit: -1}, {MaxAttempts: -1},
	} {
		if _, err := NewCrawler(bad); err == nil {
			t.Errorf("options %+v accepted", bad)
		}
	}
}

func TestCrawlRetryAfterHeader(t *testing.T) {
	for _, tc := range []struct {
		h    string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"12", 12 * time.Second, true},
		{" 3 ", 3 * time.Second, true},
		{"-1", 0, false},
		{"soon", 0, false},
		{crawlClock.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{"99999999999", 24 * time.Hour, true},
	} {
		got, ok := crawlRetryAfter(tc.h, crawlClock)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Retry-After %q: %v %v, want %v %v", tc.h, got, ok, tc.want, tc.ok)
		}
	}
}

func TestCrawlDecodePage(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		rows       int
		next       string
		reason     string
	}{
		{"camelCase cursor", `{"servers":[{"a":1},{"b":2}],"metadata":{"nextCursor":"c1","count":2}}`, 2, "c1", ""},
		{"snake_case cursor", `{"servers":[{"a":1}],"metadata":{"next_cursor":"c2","count":1}}`, 1, "c2", ""},
		{"both: camelCase wins", `{"metadata":{"next_cursor":"old","nextCursor":"new"},"servers":[]}`, 0, "new", ""},
		{"empty cursor is the end", `{"servers":[{"a":1}],"metadata":{"nextCursor":""}}`, 1, "", ""},
		{"no metadata", `{"servers":[]}`, 0, "", ""},
		{"null servers and metadata", `{"servers":null,"metadata":null}`, 0, "", ""},
		{"BOM and unknown members", "\ufeff {\"x\":[1,{}],\"servers\":[[1],\"s\",null],\"metadata\":{\"count\":3,\"y\":1}}\n", 3, "", ""},
		{"HTML", "<html><body>502</body></html>", 0, "", schema.ReasonNotJSON},
		{"empty", "", 0, "", schema.ReasonTruncatedJSON},
		{"truncated", `{"servers":[{"a":1},{"b":`, 0, "", schema.ReasonTruncatedJSON},
		{"truncated after array", `{"servers":[]`, 0, "", schema.ReasonTruncatedJSON},
		{"array", `[{"server":{}}]`, 0, "", schema.ReasonMalformedJSON},
		{"servers object", `{"servers":{}}`, 0, "", schema.ReasonMalformedJSON},
		{"servers twice", `{"servers":[],"servers":[]}`, 0, "", schema.ReasonMalformedJSON},
		{"no servers", `{"metadata":{}}`, 0, "", schema.ReasonMalformedJSON},
		{"bad metadata", `{"servers":[],"metadata":{"nextCursor":5}}`, 0, "", schema.ReasonMalformedJSON},
		{"trailing data", `{"servers":[]} {}`, 0, "", schema.ReasonMalformedJSON},
		{"syntax", `{"servers":[{"a":1}}`, 0, "", schema.ReasonMalformedJSON},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, next, err := decodePage([]byte(tc.body))
			if tc.reason != "" {
				var pe *PageError
				if !errors.As(err, &pe) || pe.Reason != tc.reason {
					t.Fatalf("err %v, want reason %s", err, tc.reason)
				}
				return
			}
			if err != nil || len(rows) != tc.rows || next != tc.next {
				t.Fatalf("%d rows, next %q, err %v", len(rows), next, err)
			}
		})
	}
	for _, f := range crawlPageFiles(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rows, _, err := decodePage(b)
		if err != nil || len(rows) == 0 {
			t.Fatalf("%s: %d rows, %v", f, len(rows), err)
		}
	}
}

func FuzzDecodePage(f *testing.F) {
	// Seeds from the real pages, cut to their first rows: whole 85 KB pages
	// make every interesting input take seconds to minimize.
	for _, p := range crawlPageFiles(f) {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		var page struct {
			Servers  []json.RawMessage `json:"servers"`
			Metadata json.RawMessage   `json:"metadata"`
		}
		if err := json.Unmarshal(b, &page); err != nil {
			f.Fatal(err)
		}
		small := []byte(`{"servers":[` + string(page.Servers[0]) + `,` + string(page.Servers[1]) +
			`],"metadata":` + string(page.Metadata) + `}`)
		f.Add(small)
		f.Add(small[:len(small)/2])
		f.Add(bytes.Replace(small, []byte(`"nextCursor"`), []byte(`"next_cursor"`), 1))
	}
	f.Add([]byte(`{"servers":null,"metadata":null}`))
	f.Add([]byte("\ufeff{\"servers\":[],\"metadata\":{\"next_cursor\":\"x\"}}"))
	f.Add([]byte("<!DOCTYPE html><html></html>"))
	f.Fuzz(func(t *testing.T, body []byte) {
		rows, next, err := decodePage(body)
		if err != nil {
			var pe *PageError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not a *PageError", err)
			}
			switch pe.Reason {
			case schema.ReasonNotJSON, schema.ReasonMalformedJSON, schema.ReasonTruncatedJSON:
			default:
				t.Fatalf("reason %q", pe.Reason)
			}
			if rows != nil || next != "" {
				t.Fatal("a failed page returned rows")
			}
			return
		}
		// Every row is one JSON value; re-enveloped, the page decodes the same.
		var b bytes.Buffer
		b.WriteString(`{"servers":[`)
		for i, r := range rows {
			if !json.Valid(r) {
				t.Fatalf("row %d is not JSON: %q", i, r)
			}
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(r)
		}
		cur, _ := json.Marshal(next)
		fmt.Fprintf(&b, `],"metadata":{"nextCursor":%s}}`, cur)
		rows2, next2, err := decodePage(b.Bytes())
		if err != nil || next2 != next || len(rows2) != len(rows) {
			t.Fatalf("round trip: %d rows, next %q, %v; want %d, %q", len(rows2), next2, err, len(rows), next)
		}
		for i := range rows {
			if !bytes.Equal(rows[i], rows2[i]) {
				t.Fatalf("row %d changed in the round trip", i)
			}
		}
	})
}
