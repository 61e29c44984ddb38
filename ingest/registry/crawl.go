// The crawler: the live half of package registry (the package doc is in
// parse.go). The contract is on type Crawler.

package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/forum-mcp/forum/schema"
)

// Crawler defaults (SPEC §1.1).
const (
	DefaultBaseURL        = "https://registry.modelcontextprotocol.io"
	DefaultUserAgent      = "forum/0.1 (+https://github.com/forum-mcp/forum)"
	DefaultPageLimit      = 100 // the API's maximum
	DefaultRequestTimeout = 30 * time.Second
	DefaultMaxBodyBytes   = 16 << 20 // one page
	DefaultMaxPages       = 5000     // 500k rows at 100 a page
	DefaultMaxAttempts    = 6
	DefaultBaseBackoff    = time.Second
	DefaultMaxBackoff     = 60 * time.Second
	DefaultProgressEvery  = 10 // pages
)

// CrawlStage is the DLQMessage.Stage of everything the crawler rejects.
const CrawlStage = "crawler"

// Sentinel errors a caller of Crawl may branch on (with errors.Is).
var (
	// ErrCursorLoop: the registry handed out a cursor it had handed out before.
	ErrCursorLoop = errors.New("registry: cursor loop")
	// ErrTooManyPages: the crawl reached CrawlerOptions.MaxPages with a cursor left.
	ErrTooManyPages = errors.New("registry: too many pages")
	// ErrUnreachable: a page could not be fetched (network errors, timeouts) after every attempt.
	ErrUnreachable = errors.New("registry: unreachable")
)

// PageError is a page the crawler could not use. Crawl returns it (wrapped)
// after the page's last attempt; its Reason is the schema.Reason* code of the
// DLQMessage sent for the page.
type PageError struct {
	URL      string
	Reason   string // schema.ReasonHTTPStatus, ReasonNotJSON, ReasonMalformedJSON, ReasonTruncatedJSON, ReasonBodyTooLarge
	Status   int    // HTTP status of the last attempt (0 when none)
	Attempts int
	Detail   string // human-readable, bounded
	Err      error  // the underlying cause, if any
}

func (e *PageError) Error() string {
	var b strings.Builder
	b.WriteString("registry: page")
	if e.URL != "" {
		b.WriteString(" ")
		b.WriteString(schema.Bound(e.URL, maxURLBytes))
	}
	fmt.Fprintf(&b, ": %s", e.Reason)
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " after %d attempts", e.Attempts)
	}
	return b.String()
}

func (e *PageError) Unwrap() error { return e.Err }

// CrawlerOptions configures a Crawler. Zero fields take the Default* values.
type CrawlerOptions struct {
	BaseURL        string        // registry root, without /v0.1
	PageLimit      int           // rows per page, 1–100
	RequestTimeout time.Duration // per request, body included
	MaxBodyBytes   int64         // per page; bigger → body_too_large
	MaxPages       int           // per crawl
	MaxAttempts    int           // per page, first try included
	BaseBackoff    time.Duration // first back-off; doubles per attempt
	MaxBackoff     time.Duration // cap of any wait, Retry-After included
	UserAgent      string
	ProgressEvery  int // log progress at info every N pages

	HTTPClient *http.Client // default: a client without its own timeout (RequestTimeout applies)
	Logger     *zap.Logger  // default: zap.NewNop()
	// Sleep waits d or until ctx is done (then it returns ctx.Err()). Tests
	// inject it to record the waits without waiting.
	Sleep func(ctx context.Context, d time.Duration) error
	// Jitter turns a nominal back-off d into the wait. Default: equal jitter,
	// uniform in [d/2, d]. Retry-After waits are not jittered.
	Jitter func(d time.Duration) time.Duration
	// Now is the clock for ObservedAt and durations. Default: time.Now.
	Now func() time.Time
}

func (o *CrawlerOptions) setDefaults() {
	if o.BaseURL == "" {
		o.BaseURL = DefaultBaseURL
	}
	if o.PageLimit == 0 {
		o.PageLimit = DefaultPageLimit
	}
	if o.RequestTimeout == 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.MaxPages == 0 {
		o.MaxPages = DefaultMaxPages
	}
	if o.MaxAttempts == 0 {
		o.MaxAttempts = DefaultMaxAttempts
	}
	if o.BaseBackoff == 0 {
		o.BaseBackoff = DefaultBaseBackoff
	}
	if o.MaxBackoff == 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	if o.ProgressEvery == 0 {
		o.ProgressEvery = DefaultProgressEvery
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.Sleep == nil {
		o.Sleep = crawlSleep
	}
	if o.Jitter == nil {
		o.Jitter = crawlEqualJitter
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

func (o *CrawlerOptions) validate() error {
	u, err := url.Parse(o.BaseURL)
	if err != nil {
		return fmt.Errorf("registry: base URL %q: %w", o.BaseURL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("registry: base URL %q: want http(s)://host", o.BaseURL)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("registry: base URL %q: no query or fragment allowed", o.BaseURL)
	}
	switch {
	case o.PageLimit < 1 || o.PageLimit > 100:
		return fmt.Errorf("registry: page limit %d: want 1–100", o.PageLimit)
	case o.RequestTimeout < 0, o.MaxBodyBytes < 0, o.MaxPages < 0,
		o.MaxAttempts < 0, o.BaseBackoff < 0, o.MaxBackoff < 0, o.ProgressEvery < 0:
		return errors.New("registry: negative crawler option")
	}
	return nil
}

// Crawler lists the official registry. It holds no state between crawls and
// is safe for concurrent use; the caller keeps the watermark.
//
// In: the registry's read API v0.1 (SPEC §1.1), `GET {base}/v0.1/servers`,
// paged by an opaque cursor. Out: every entry of every version, through two
// callbacks — emit for a good schema.Entry, rej for a schema.DLQMessage —
// and a CrawlResult that says how far the crawl got.
//
//   - Full or incremental: a zero since lists the whole registry (a full
//     snapshot, schema.ModeFull); a non-zero since adds
//     `updated_since=RFC3339` and lists only rows updated strictly after it,
//     deleted ones included (schema.ModeIncremental). No `version` filter is
//     sent: all versions are crawled, so version history stays complete.
//   - Paging: `nextCursor` (or the old `next_cursor`) absent or empty ends the
//     crawl. A page of exactly `limit` rows carries a cursor even when the next
//     page is empty; that empty page is fetched and ends the crawl. A cursor
//     seen twice stops the crawl with ErrCursorLoop; more than MaxPages pages
//     stops it with ErrTooManyPages.
//   - Bad entries never stop a crawl: each raw entry goes through ParseEntry;
//     one it rejects (invalid UTF-8, missing name, too large, …), a second
//     copy of a (name, version) already emitted in this crawl (the first copy
//     is kept), or a version of a name past MaxVersionsPerName, becomes a
//     DLQMessage with the reason code, and the crawl goes on with the next
//     entry. CrawlResult.Unreadable counts the rejects that may hide a server.
//   - Incremental crawls re-read the versions of every server whose new
//     latest they list (`GET {base}/v0.1/servers/{name}/versions`) and emit
//     those not listed yet: the registry flips the old latest's isLatest
//     without changing its updatedAt, so updated_since never lists it, and
//     without this second look the old latest would stay marked latest
//     downstream beside the new one. These entries do not move the watermark
//     (they were not read in updatedAt order).
//   - Bad pages stop a crawl: a 429, a 5xx, a network error, or a 200 whose
//     body is not the expected JSON is retried with exponential back-off and
//     jitter (Retry-After honoured, waits capped). If the page still fails, or
//     fails in a way a retry cannot fix (another 4xx, a body over
//     MaxBodyBytes), Crawl returns an error, sends one DLQMessage for the page
//     (reason http_status, not_json, malformed_json, truncated_json or
//     body_too_large) unless the registry was simply unreachable, and sets
//     CrawlResult.Incomplete. What was emitted before stays emitted; the
//     caller publishes the snapshot as incomplete so no removals are inferred.
//   - An error returned by emit or reject stops the crawl (Incomplete, the
//     error wrapped): the crawler never drops an entry or a DLQ message.
//   - Cancelling ctx stops the crawl promptly, also during a back-off wait;
//     the error then wraps ctx.Err().
//   - Progress (pages, entries, rejects, elapsed) is logged at info every
//     ProgressEvery pages, retries at warn, the outcome once at the end.
//
// Requests and bodies are bounded: one timeout per request, MaxBodyBytes per
// page, MaxEntryBytes per entry (ParseEntry), MaxVersionsPerName versions per
// server, schema.MaxDLQPayload bytes of input per DLQ message. Errors and
// logs quote what the registry made (a cursor, a URL carrying one, a body)
// bounded, never whole.
type Crawler struct {
	opts CrawlerOptions
	base string // BaseURL without a trailing '/'
	log  *zap.Logger
}

// NewCrawler applies the defaults to opts and checks them.
func NewCrawler(opts CrawlerOptions) (*Crawler, error) {
	opts.setDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	return &Crawler{
		opts: opts,
		base: strings.TrimRight(opts.BaseURL, "/"),
		log:  opts.Logger,
	}, nil
}

// CrawlResult says what a crawl did.
type CrawlResult struct {
	Source  string    // the registry base URL
	Mode    string    // schema.ModeFull (zero since) or schema.ModeIncremental
	Since   time.Time // the updated_since sent (zero for a full crawl)
	Started time.Time
	Pages   int // pages fetched and decoded
	Entries int // entries emitted
	Names   int // distinct server names among them
	Rejects int // DLQ messages sent (entries and pages)
	// Unreadable counts the entries rejected because they could not be read
	// into one (see SnapshotStats.Unreadable): the listing may lack a server.
	Unreadable int
	Retries    int // attempts beyond the first, over all pages
	// Incomplete is set when the crawl stopped before the registry's last
	// page (Crawl then returns an error): what was emitted is kept, but the
	// listing must not be read as the whole registry.
	Incomplete bool
	// Watermark is the `updated_since` for the next incremental crawl: the
	// latest updatedAt among the entries seen when the crawl completed, and
	// Since unchanged when it was incomplete or saw nothing newer (a partial
	// listing is not in updatedAt order, so it cannot advance the mark).
	Watermark time.Time
	Duration  time.Duration
}

// Crawl lists the registry once; the contract is on type Crawler.
// since zero = full snapshot, else incremental (rows updated strictly after
// since). emit gets each good entry in page order; rej gets each DLQ
// message. The error is nil only when the last page was reached and every
// callback succeeded.
func (c *Crawler) Crawl(ctx context.Context, since time.Time,
	emit func(schema.Entry) error, rej func(schema.DLQMessage) error,
) (CrawlResult, error) {
	res := CrawlResult{
		Source:     c.base,
		Mode:       schema.ModeFull,
		Since:      since,
		Started:    c.opts.Now(),
		Watermark:  since,
		Incomplete: true, // until the last page is through
	}
	if !since.IsZero() {
		res.Mode = schema.ModeIncremental
	}
	var (
		maxUpdated = since
		seen       = make(map[string]int) // name@version → page it was first seen on
		names      = make(versionCounts)  // versions emitted per name
		newLatest  = make(map[string]bool)
		cursors    = map[string]bool{"": true}
		cursor     string
	)
	finish := func(err error) (CrawlResult, error) {
		res.Names = len(names)
		res.Duration = c.opts.Now().Sub(res.Started)
		if err == nil {
			res.Incomplete = false
			res.Watermark = maxUpdated
		}
		fields := []zap.Field{
			zap.String("mode", res.Mode), zap.Int("pages", res.Pages), zap.Int("entries", res.Entries),
			zap.Int("rejects", res.Rejects), zap.Int("retries", res.Retries),
			zap.Bool("incomplete", res.Incomplete), zap.Duration("elapsed", res.Duration),
		}
		if err != nil {
			c.log.Warn("crawl stopped", append(fields, zap.Error(err))...)
		} else {
			c.log.Info("crawl done", append(fields, zap.Time("watermark", res.Watermark))...)
		}
		return res, err
	}
	sendDLQ := func(m schema.DLQMessage) error {
		if err := rej(m); err != nil {
			return fmt.Errorf("registry: reject %s (%s): %w", m.Reason, schema.Bound(m.Source, maxURLBytes), err)
		}
		res.Rejects++
		return nil
	}
	// take handles one raw entry of a page: of the listing when of is "",
	// else of a second look at the versions of server of.
	take := func(pageURL string, page int, raw json.RawMessage, of string) error {
		listed := of == ""
		e, reason, detail, key := c.parse(raw)
		if reason != "" {
			res.Unreadable++
		} else if !listed && e.Server.Name != of {
			reason, key = schema.ReasonInvalidValue, e.Server.Name+"@"+e.Server.Version
			detail = fmt.Sprintf("the versions of %s list an entry of %s", schema.Bound(of, maxKeyBytes), schema.Bound(e.Server.Name, maxKeyBytes))
		} else {
			key = e.Server.Name + "@" + e.Server.Version
			if first, dup := seen[key]; dup {
				if !listed {
					return nil // already emitted from the listing: the second look adds nothing
				}
				reason = schema.ReasonDuplicateEntry
				detail = fmt.Sprintf("a second entry for %s in one crawl (first on page %d); the first is kept", schema.Bound(key, maxKeyBytes), first)
			} else if !names.admit(e.Server.Name, e.Meta.IsLatest) {
				reason, detail = schema.ReasonTooManyVersions, tooManyVersions(e.Server.Name)
			} else {
				seen[key] = page
			}
			if listed && e.Meta.UpdatedAt.After(maxUpdated) {
				maxUpdated = e.Meta.UpdatedAt
			}
		}
		if reason != "" {
			return sendDLQ(c.dlq(pageURL, reason, detail, key, raw, len(raw)))
		}
		if err := emit(e); err != nil {
			return fmt.Errorf("registry: emit %s: %w", schema.Bound(key, maxKeyBytes), err)
		}
		res.Entries++
		if listed && e.Meta.IsLatest {
			newLatest[e.Server.Name] = true
		}
		return nil
	}
	// fetch gets one page; a page that fails is sent to the DLQ.
	fetch := func(pageURL string) ([]json.RawMessage, string, error) {
		raws, next, retries, err := c.fetchPage(ctx, pageURL)
		res.Retries += retries
		if err != nil {
			var pe *pageFailure
			if errors.As(err, &pe) {
				if derr := sendDLQ(c.dlq(pageURL, pe.PageError.Reason, pe.PageError.Error(), "", pe.payload, pe.payloadBytes)); derr != nil {
					return nil, "", errors.Join(pe.PageError, derr)
				}
				return nil, "", pe.PageError
			}
			return nil, "", err
		}
		res.Pages++
		return raws, next, nil
	}

	c.log.Info("crawl start", zap.String("source", c.base), zap.String("mode", res.Mode), zap.Time("since", since))
	for {
		if err := ctx.Err(); err != nil {
			return finish(fmt.Errorf("registry: crawl: %w", err))
		}
		if res.Pages >= c.opts.MaxPages {
			return finish(fmt.Errorf("%w: stopped after %d pages with cursor %q left", ErrTooManyPages, res.Pages, schema.Bound(cursor, maxCursorQuote)))
		}
		pageURL := c.pageURL(cursor, since)
		raws, next, err := fetch(pageURL)
		if err != nil {
			return finish(err)
		}
		page := res.Pages
		for _, raw := range raws {
			if err := take(pageURL, page, raw, ""); err != nil {
				return finish(err)
			}
		}
		if c.opts.ProgressEvery > 0 && res.Pages%c.opts.ProgressEvery == 0 {
			c.log.Info("crawl progress", zap.Int("pages", res.Pages), zap.Int("entries", res.Entries),
				zap.Int("rejects", res.Rejects), zap.Duration("elapsed", c.opts.Now().Sub(res.Started)))
		}
		if ce := c.log.Check(zap.DebugLevel, "page"); ce != nil {
			ce.Write(zap.String("url", schema.Bound(pageURL, maxURLBytes)), zap.Int("rows", len(raws)), zap.Bool("last", next == ""))
		}
		if next == "" {
			break
		}
		if cursors[next] {
			return finish(fmt.Errorf("%w: cursor %q came back on page %d", ErrCursorLoop, schema.Bound(next, maxCursorQuote), res.Pages))
		}
		cursors[next] = true
		cursor = next
	}
	if res.Mode == schema.ModeIncremental && len(newLatest) > 0 {
		c.log.Info("re-reading the versions of servers with a new latest", zap.Int("servers", len(newLatest)))
		for _, name := range slices.Sorted(maps.Keys(newLatest)) {
			if err := c.versions(ctx, name, fetch, take); err != nil {
				return finish(err)
			}
		}
	}
	return finish(nil)
}

// versions lists every version of one server (following cursors, at most
// enough pages for MaxVersionsPerName) and hands each entry to take.
func (c *Crawler) versions(ctx context.Context, name string,
	fetch func(string) ([]json.RawMessage, string, error),
	take func(pageURL string, page int, raw json.RawMessage, of string) error,
) error {
	base := c.base + "/v0.1/servers/" + url.PathEscape(name) + "/versions"
	cursors := map[string]bool{"": true}
	pageURL := base
	for pages := 1; ; pages++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("registry: crawl: %w", err)
		}
		raws, next, err := fetch(pageURL)
		if err != nil {
			return err
		}
		for _, raw := range raws {
			if err := take(pageURL, 0, raw, name); err != nil {
				return err
			}
		}
		switch {
		case next == "":
			return nil
		case cursors[next]:
			return fmt.Errorf("%w: cursor %q came back listing the versions of %s", ErrCursorLoop, schema.Bound(next, maxCursorQuote), schema.Bound(name, maxKeyBytes))
		case pages > MaxVersionsPerName/c.opts.PageLimit+1:
			return fmt.Errorf("%w: the versions of %s run past %d pages", ErrTooManyPages, schema.Bound(name, maxKeyBytes), pages)
		}
		cursors[next] = true
		pageURL = base + "?" + url.Values{"cursor": {next}}.Encode()
	}
}

// Bounds of what an error or a log line quotes of a registry-made string:
// a cursor, or a URL that carries one.
const (
	maxCursorQuote = 100
	maxURLBytes    = 512
)

// parse turns one raw entry into an Entry, or a reason code, a detail and a
// DLQ key (name@version when known).
func (c *Crawler) parse(raw json.RawMessage) (e schema.Entry, reason, detail, key string) {
	e, err := FastParseEntry(raw) // ParseEntry's result, faster (fastparse.go)
	if err == nil {
		return e, "", "", ""
	}
	var re *RejectError
	if errors.As(err, &re) {
		key = re.Key
	}
	if key == "" {
		key = crawlPeekName(raw)
	}
	return e, ReasonOf(err), err.Error(), key
}

// pageURL is GET {base}/v0.1/servers?limit=N[&cursor=…][&updated_since=…].
func (c *Crawler) pageURL(cursor string, since time.Time) string {
	q := url.Values{}
	q.Set("limit", strconv.Itoa(c.opts.PageLimit))
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	if !since.IsZero() {
		q.Set("updated_since", since.UTC().Format(time.RFC3339Nano))
	}
	return c.base + "/v0.1/servers?" + q.Encode()
}

// pageFailure carries a PageError with the bytes for its DLQ message.
type pageFailure struct {
	*PageError
	payload      []byte
	payloadBytes int
}

func (f *pageFailure) Unwrap() error { return f.PageError }

// fetchPage GETs and decodes one page, retrying what a retry can fix. It
// returns the number of retries made; its error is a *pageFailure (the page
// was answered but unusable), wraps ErrUnreachable, or wraps ctx.Err().
func (c *Crawler) fetchPage(ctx context.Context, pageURL string) ([]json.RawMessage, string, int, error) {
	for attempt := 1; ; attempt++ {
		raws, next, wait, retry, err := c.tryPage(ctx, pageURL)
		if err == nil {
			return raws, next, attempt - 1, nil
		}
		if ctx.Err() != nil {
			return nil, "", attempt - 1, fmt.Errorf("registry: GET %s: %w", schema.Bound(pageURL, maxURLBytes), ctx.Err())
		}
		var pf *pageFailure
		if errors.As(err, &pf) {
			pf.URL, pf.Attempts = pageURL, attempt
		}
		if !retry || attempt >= c.opts.MaxAttempts {
			if pf != nil {
				return nil, "", attempt - 1, pf
			}
			return nil, "", attempt - 1, fmt.Errorf("%w: GET %s: %d attempts: %w", ErrUnreachable, schema.Bound(pageURL, maxURLBytes), attempt, withoutURL(err))
		}
		if wait < 0 { // no Retry-After: exponential back-off with jitter
			wait = c.opts.Jitter(c.backoff(attempt))
		}
		wait = min(max(wait, 0), c.opts.MaxBackoff)
		c.log.Warn("page failed, retrying", zap.String("url", schema.Bound(pageURL, maxURLBytes)), zap.Int("attempt", attempt),
			zap.Duration("wait", wait), zap.Error(withoutURL(err)))
		if err := c.opts.Sleep(ctx, wait); err != nil {
			return nil, "", attempt, fmt.Errorf("registry: GET %s: waiting to retry: %w", schema.Bound(pageURL, maxURLBytes), err)
		}
	}
}

// withoutURL drops the URL net/http puts in its errors (*url.Error): the
// callers quote the URL themselves, bounded, and a registry-made cursor in
// it may be of any length.
func withoutURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", ue.Op, ue.Err)
	}
	return err
}

// backoff is the nominal wait after the attempt-th failure: BaseBackoff·2^(attempt-1), capped.
func (c *Crawler) backoff(attempt int) time.Duration {
	d := c.opts.BaseBackoff
	for i := 1; i < attempt && d < c.opts.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, c.opts.MaxBackoff)
}

// tryPage makes one attempt. wait is the server's Retry-After (-1 when
// none); retry says whether another attempt may succeed.
func (c *Crawler) tryPage(ctx context.Context, pageURL string) (raws []json.RawMessage, next string, wait time.Duration, retry bool, err error) {
	wait = -1
	rctx, cancel := context.WithTimeout(ctx, c.opts.RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, pageURL, nil)
	if err != nil {
		return nil, "", wait, false, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.opts.UserAgent)
	resp, err := c.opts.HTTPClient.Do(req)
	if err != nil {
		return nil, "", wait, true, err
	}
	defer resp.Body.Close()

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		snippet, _ := io.ReadAll(io.LimitReader(resp.Body, schema.MaxDLQPayload))
		retry = resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode >= 500
		if retry {
			if d, ok := crawlRetryAfter(resp.Header.Get("Retry-After"), c.opts.Now()); ok {
				wait = d
			}
		}
		return nil, "", wait, retry, &pageFailure{
			PageError: &PageError{Reason: schema.ReasonHTTPStatus, Status: resp.StatusCode, Detail: schema.Bound(strings.TrimSpace(string(snippet)), 200)},
			payload:   snippet, payloadBytes: len(snippet),
		}
	}
	if resp.ContentLength > c.opts.MaxBodyBytes {
		head, _ := io.ReadAll(io.LimitReader(resp.Body, schema.MaxDLQPayload))
		return nil, "", wait, false, &pageFailure{
			PageError: &PageError{Reason: schema.ReasonBodyTooLarge, Status: resp.StatusCode,
				Detail: fmt.Sprintf("Content-Length %d over the %d-byte bound", resp.ContentLength, c.opts.MaxBodyBytes)},
			payload: head, payloadBytes: int(resp.ContentLength),
		}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.opts.MaxBodyBytes+1))
	if err != nil {
		return nil, "", wait, true, fmt.Errorf("reading body: %w", err)
	}
	if int64(len(body)) > c.opts.MaxBodyBytes {
		return nil, "", wait, false, &pageFailure{
			PageError: &PageError{Reason: schema.ReasonBodyTooLarge, Status: resp.StatusCode,
				Detail: fmt.Sprintf("body over the %d-byte bound", c.opts.MaxBodyBytes)},
			payload: body, payloadBytes: len(body),
		}
	}
	raws, next, err = decodePage(body)
	if err != nil {
		pe := new(PageError)
		if !errors.As(err, &pe) {
			pe = &PageError{Reason: schema.ReasonMalformedJSON, Err: err}
		}
		pe.Status = resp.StatusCode
		if pe.Reason == schema.ReasonMalformedJSON && crawlLooksLikeHTML(resp.Header.Get("Content-Type"), body) {
			pe.Reason = schema.ReasonNotJSON
		}
		// A broken body may be a proxy's hiccup: retry it.
		return nil, "", wait, true, &pageFailure{PageError: pe, payload: body, payloadBytes: len(body)}
	}
	return raws, next, wait, false, nil
}

// pageMetadata is the envelope's "metadata"; old deployments spelled the cursor next_cursor.
type pageMetadata struct {
	NextCursor      string `json:"nextCursor"`
	NextCursorSnake string `json:"next_cursor"`
	Count           *int   `json:"count"`
}

// decodePage reads one API page, `{"servers":[…],"metadata":{"nextCursor":"…","count":N}}`
// (a leading BOM and unknown members are allowed, `next_cursor` is accepted).
// The servers array is decoded element by element, each element kept as
// published; nextCursor "" means the last page. An error is a *PageError
// with reason not_json, truncated_json or malformed_json.
func decodePage(body []byte) (entries []json.RawMessage, nextCursor string, err error) {
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	fail := func(reason, detail string, cause error) ([]json.RawMessage, string, error) {
		return nil, "", &PageError{Reason: reason, Detail: detail, Err: cause}
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	switch {
	case len(trimmed) == 0:
		return fail(schema.ReasonTruncatedJSON, "empty body", io.ErrUnexpectedEOF)
	case trimmed[0] != '{' && trimmed[0] != '[':
		return fail(schema.ReasonNotJSON, fmt.Sprintf("body starts with %q", schema.Bound(string(trimmed), 40)), nil)
	case trimmed[0] == '[':
		return fail(schema.ReasonMalformedJSON, "body is a JSON array, want the {servers, metadata} object", nil)
	}
	syntax := func(err error) ([]json.RawMessage, string, error) {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return fail(schema.ReasonTruncatedJSON, "body ends inside the JSON document", err)
		}
		return fail(schema.ReasonMalformedJSON, err.Error(), err)
	}

	dec := json.NewDecoder(bytes.NewReader(body))
	if _, err := dec.Token(); err != nil { // '{'
		return syntax(err)
	}
	var (
		sawServers bool
		md         pageMetadata
	)
	entries = []json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return syntax(err)
		}
		key, _ := tok.(string)
		switch key {
		case "servers":
			if sawServers {
				return fail(schema.ReasonMalformedJSON, `"servers" appears twice`, nil)
			}
			sawServers = true
			tok, err := dec.Token()
			if err != nil {
				return syntax(err)
			}
			if tok == nil { // "servers": null — no rows
				continue
			}
			if d, ok := tok.(json.Delim); !ok || d != '[' {
				return fail(schema.ReasonMalformedJSON, fmt.Sprintf(`"servers" is %s, want an array`, crawlTokenKind(tok)), nil)
			}
			for dec.More() {
				var raw json.RawMessage
				if err := dec.Decode(&raw); err != nil {
					return syntax(err)
				}
				entries = append(entries, raw)
			}
			if _, err := dec.Token(); err != nil { // ']'
				return syntax(err)
			}
		case "metadata":
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return syntax(err)
			}
			if string(raw) == "null" {
				continue
			}
			if err := json.Unmarshal(raw, &md); err != nil {
				return fail(schema.ReasonMalformedJSON, "metadata: "+err.Error(), err)
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return syntax(err)
			}
		}
	}
	if _, err := dec.Token(); err != nil { // '}'
		return syntax(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			err = errors.New("data after the JSON document")
		}
		return fail(schema.ReasonMalformedJSON, err.Error(), err)
	}
	if !sawServers {
		return fail(schema.ReasonMalformedJSON, `no "servers" member`, nil)
	}
	nextCursor = md.NextCursor
	if nextCursor == "" {
		nextCursor = md.NextCursorSnake
	}
	return entries, nextCursor, nil
}

// dlq builds a DLQMessage with schema.NewDLQ: its ID is deterministic (stage,
// source, reason, key, payload hash), so a re-crawl of the same bad input
// does not add a row. payloadBytes is the size of the whole offending input
// when only part of it was read.
func (c *Crawler) dlq(source, reason, detail, key string, payload []byte, payloadBytes int) schema.DLQMessage {
	m := schema.NewDLQ(CrawlStage, source, reason, detail, key, payload, c.opts.Now())
	m.PayloadBytes = max(payloadBytes, len(payload))
	return m
}

// crawlPeekName gets server.name out of an entry ParseEntry rejected, for the
// DLQ key; "" when there is none.
func crawlPeekName(raw []byte) string {
	var v struct {
		Server struct {
			Name any `json:"name"`
		} `json:"server"`
		Name any `json:"name"` // legacy flat entries
	}
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	for _, n := range []any{v.Server.Name, v.Name} {
		if s, ok := n.(string); ok && s != "" {
			return schema.Bound(s, 256)
		}
	}
	return ""
}

// crawlRetryAfter reads Retry-After: delay-seconds or an HTTP date.
func crawlRetryAfter(h string, now time.Time) (time.Duration, bool) {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(h, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		if secs > int64(24*time.Hour/time.Second) {
			secs = int64(24 * time.Hour / time.Second)
		}
		return time.Duration(secs) * time.Second, true
	}
	if t, err := http.ParseTime(h); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

func crawlLooksLikeHTML(contentType string, body []byte) bool {
	if strings.Contains(strings.ToLower(contentType), "html") {
		return true
	}
	b := bytes.ToLower(bytes.TrimLeft(body, " \t\r\n\xef\xbb\xbf"))
	return bytes.HasPrefix(b, []byte("<!doctype")) || bytes.HasPrefix(b, []byte("<html"))
}

func crawlTokenKind(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			return "an object"
		}
		return "an array"
	case string:
		return "a string"
	case float64, json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}

func crawlSleep(ctx context.Context, d time.Duration) error {
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

// crawlEqualJitter waits uniformly in [d/2, d].
func crawlEqualJitter(d time.Duration) time.Duration {
	if d <= 1 {
		return d
	}
	half := d / 2
	return half + rand.N(d-half+1)
}
