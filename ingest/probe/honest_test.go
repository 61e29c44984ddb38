package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The regression suite of SPEC §1.3 "An honest instrument": failure modes a
// public census of the registry misread, always against the servers, each
// served for real on loopback (a go-sdk server where it can express the
// behaviour, a raw handler where the misbehaviour needs one).

// failureMode is one row: a server, how it is probed, the verdict every
// probe of it must reach, and which way the error goes if it is misread.
type failureMode struct {
	name      string
	server    func(t *testing.T) (url string, hits *atomic.Int32)
	transport string
	opts      []Option
	parallel  int // probes run at once against the server (0: one)
	outcome   Outcome
	class     ErrorClass
	status    int
	notes     []string
	used      string // transport used; "" = the declared one
	// misread says what reading this row wrong would record, and whom it
	// would wrong.
	misread string
	more    func(t *testing.T, p *Prober, url string, cs []Check, hits *atomic.Int32)
}

func TestHonestInstrument(t *testing.T) {
	clock := &offsetClock{}
	never := &countingResolver{fakeResolver: fakeResolver{}}
	var preludeSent atomic.Int64
	for _, tc := range []failureMode{
		{
			name:   "429-retry-after-seconds",
			server: refuse(429, "120", "slow down"),
			opts:   []Option{WithClock(clock.Now)}, outcome: OutcomeRateLimited, class: ClassRateLimited, status: 429,
			misread: "as handshake_failed: our own request rate recorded as the server's failure (server unfairly penalised)",
			more: func(t *testing.T, p *Prober, url string, cs []Check, hits *atomic.Int32) {
				if cs[0].RetryAfterSeconds != 120 {
					t.Fatalf("retry_after_s %d, want 120", cs[0].RetryAfterSeconds)
				}
				// Another remote on the same host, inside the back-off: not
				// requested, recorded rate_limited (it counts neither way).
				c := probeURL(t, p, url+"/other", "")
				wantOutcome(t, c, OutcomeRateLimited, ClassBackoff, AuthUnknown)
				if hits.Load() != 1 || c.HTTPStatus != 0 || c.RetryAfterSeconds < 1 || c.RetryAfterSeconds > 120 {
					t.Fatalf("during back-off: %d requests, status %d, retry_after_s %d", hits.Load(), c.HTTPStatus, c.RetryAfterSeconds)
				}
				clock.Advance(121 * time.Second)
				c = probeURL(t, p, url+"/other", "")
				wantOutcome(t, c, OutcomeRateLimited, ClassRateLimited, AuthUnknown)
				if hits.Load() != 2 {
					t.Fatalf("after the back-off: %d requests, want 2", hits.Load())
				}
			},
		},
		{
			name: "429-retry-after-http-date",
			server: func(t *testing.T) (string, *atomic.Int32) {
				return refuse(429, time.Now().Add(90*time.Second).UTC().Format(http.TimeFormat), "")(t)
			},
			outcome: OutcomeRateLimited, class: ClassRateLimited, status: 429,
			misread: "as handshake_failed, or the date ignored and the host asked again at once: our load as their fault",
			more: func(t *testing.T, p *Prober, url string, cs []Check, hits *atomic.Int32) {
				if ra := cs[0].RetryAfterSeconds; ra < 88 || ra > 91 {
					t.Fatalf("retry_after_s %d, want ~90 from the HTTP date", ra)
				}
			},
		},
		{
			name: "429-on-tools-list", server: func(t *testing.T) (string, *atomic.Int32) {
				h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return sdkServer(0, 0) }, &mcp.StreamableHTTPOptions{JSONResponse: true})
				return counted(t, func(w http.ResponseWriter, r *http.Request) {
					if body := peekBody(r); rpcMethod(body) == "tools/list" {
						w.Header().Set("Retry-After", "30")
						w.WriteHeader(429)
						return
					}
					h.ServeHTTP(w, r)
				})
			},
			outcome: OutcomeRateLimited, class: ClassRateLimited, status: 200,
			misread: "as ok with tools_list_failed: the server's tools scored 0 for our load (server unfairly penalised)",
		},
		{
			name:    "503-retry-after",
			server:  refuse(503, "60", "maintenance"),
			outcome: OutcomeRateLimited, class: ClassRateLimited, status: 503,
			misread: "as handshake_failed: a server shedding load on purpose counted as down (server unfairly penalised)",
			more: func(t *testing.T, p *Prober, url string, cs []Check, hits *atomic.Int32) {
				if cs[0].RetryAfterSeconds != 60 {
					t.Fatalf("retry_after_s %d", cs[0].RetryAfterSeconds)
				}
			},
		},
		{
			name:    "503-without-retry-after",
			server:  refuse(503, "", "upstream down"),
			outcome: OutcomeHandshakeFailed, class: ClassHTTPStatus, status: 503,
			misread: "as rate_limited: an outage excused as our load (server unfairly favoured, uptime inflated)",
			more: func(t *testing.T, p *Prober, url string, cs []Check, hits *atomic.Int32) {
				probeURL(t, p, url, "") // no back-off: an outage is not a request to wait
				if hits.Load() != 2 {
					t.Fatalf("%d requests, want 2", hits.Load())
				}
			},
		},
		{
			name: "valid-initialize-under-400-json", server: func(t *testing.T) (string, *atomic.Int32) {
				h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return sdkServer(0, 0) }, &mcp.StreamableHTTPOptions{JSONResponse: true})
				return counted(t, mangle(h, "initialize", 400, nil, nil))
			},
			outcome: OutcomeOK, class: ClassNone, status: 400, notes: []string{NoteOffSpecStatus},
			misread: "as handshake_failed: a working MCP server failed for its proxy's status code (server unfairly penalised)",
			more: func(t *testing.T, p *Prober, url string, cs []Check, hits *atomic.Int32) {
				checkFixtureTools(t, cs[0])
			},
		},
		{
			name: "valid-initialize-under-400-sse", server: func(t *testing.T) (string, *atomic.Int32) {
				h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return sdkServer(0, 0) }, nil)
				return counted(t, mangle(h, "initialize", 400, nil, nil))
			},
			outcome: OutcomeOK, class: ClassNone, status: 400, notes: []string{NoteOffSpecStatus},
			misread: "as handshake_failed: a working MCP server failed for its status code (server unfairly penalised)",
		},
		{
			name:    "auth-message-under-400",
			server:  refuse(400, "", "Bearer token is required"),
			outcome: OutcomeAuthRequired, class: ClassAuthMessage, status: 400,
			misread: "as handshake_failed: a server that only wants a token counted as broken (server unfairly penalised)",
			more: func(t *testing.T, p *Prober, url string, cs []Check, hits *atomic.Int32) {
				if hits.Load() != 1 {
					t.Fatalf("%d requests: the auth refusal must not trigger the SSE fallback", hits.Load())
				}
			},
		},
		{
			name: "jsonrpc-auth-error-under-400", server: func(t *testing.T) (string, *atomic.Int32) {
				return counted(t, func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(400)
					fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32001,"message":"invalid api key"}}`, rpcID(peekBody(r)))
				})
			},
			outcome: OutcomeAuthRequired, class: ClassJSONRPCAuth, status: 400,
			misread: "as handshake_failed: a server that only wants a key counted as broken (server unfairly penalised)",
		},
		{
			name: "verbose-sse-200KiB-before-the-answer", server: func(t *testing.T) (string, *atomic.Int32) {
				h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return sdkServer(0, 0) }, nil)
				return counted(t, mangle(h, "initialize", 0, verbosePrelude(), &preludeSent))
			},
			outcome: OutcomeOK, class: ClassNone, status: 200,
			misread: "as handshake_failed (no answer in the first buffer): a chatty but working server counted as broken (server unfairly penalised)",
			more: func(t *testing.T, p *Prober, url string, cs []Check, hits *atomic.Int32) {
				if n := preludeSent.Load(); n < 200<<10 || n > 900<<10 {
					t.Fatalf("the server sent %d bytes before the answer: not the case under test", n)
				}
				checkFixtureTools(t, cs[0])
			},
		},
		{
			name: "html-page", server: func(t *testing.T) (string, *atomic.Int32) {
				return counted(t, func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "text/html; charset=utf-8")
					io.WriteString(w, "<!doctype html><html><body>Welcome! <a href=/login>Sign in required</a></body></html>")
				})
			},
			outcome: OutcomeHandshakeFailed, class: ClassContentType, status: 200,
			misread: "as ok or auth_required: a web page counted as a working (or merely locked) MCP server (server unfairly favoured)",
		},
		{
			name: "html-error-page-under-400", server: func(t *testing.T) (string, *atomic.Int32) {
				return counted(t, func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "text/html")
					w.WriteHeader(400)
					io.WriteString(w, "<html><nav><a href=/login>Unauthorized? Sign in</a></nav><p>Bad request</p></html>")
				})
			},
			outcome: OutcomeHandshakeFailed, class: ClassHTTPStatus, status: 400,
			misread: "as auth_required from the page's navigation: a broken endpoint excused (server unfairly favoured)",
		},
		{
			name: "legacy-sse-behind-streamable-label",
			server: func(t *testing.T) (string, *atomic.Int32) {
				return counted(t, mcp.NewSSEHandler(sdkHandlerFunc, nil).ServeHTTP)
			},
			transport: TransportStreamableHTTP, used: TransportSSE,
			outcome: OutcomeOK, class: ClassNone, status: 200, notes: []string{NoteTransportMismatch},
			misread: "as handshake_failed (POST initialize → 400): a working legacy server failed for its registry label (server unfairly penalised)",
			more: func(t *testing.T, p *Prober, url string, cs []Check, hits *atomic.Int32) {
				if cs[0].TransportDeclared != TransportStreamableHTTP {
					t.Fatalf("declared %q", cs[0].TransportDeclared)
				}
				checkFixtureTools(t, cs[0])
			},
		},
		{
			name: "url-template", server: func(t *testing.T) (string, *atomic.Int32) {
				return "https://{tenant}.example.com/mcp", new(atomic.Int32)
			},
			opts:    []Option{WithResolver(never)},
			outcome: OutcomeHandshakeFailed, class: ClassURLTemplate,
			misread: "as unreachable after a DNS lookup of a literal {tenant}: a template counted as a dead server, and a name we never meant to ask for resolved",
			more: func(t *testing.T, p *Prober, url string, cs []Check, hits *atomic.Int32) {
				if never.n.Load() != 0 {
					t.Fatalf("the template host was resolved %d times", never.n.Load())
				}
			},
		},
		{
			name:     "stalls-under-parallel-load",
			server:   stallsUnderLoad(4, 30*time.Millisecond),
			opts:     []Option{WithPerHostLimit(2), WithTimeout(2 * time.Second)},
			parallel: 12,
			outcome:  OutcomeOK, class: ClassNone, status: 200,
			misread: "as unreachable (timeout): our own stampede recorded as their failure (server unfairly penalised)",
			more: func(t *testing.T, _ *Prober, url string, _ []Check, hits *atomic.Int32) {
				// The same burst without the per-host cap pushes the server
				// over: that is the error the cap prevents.
				p := newTestProber(t, WithPerHostLimit(64), WithTimeout(2*time.Second))
				failed := 0
				for _, c := range probeParallel(t, p, url, "", 12) {
					if c.Outcome != OutcomeOK {
						failed++
						if c.Outcome != OutcomeUnreachable || c.ErrorClass != ClassTimeout {
							t.Errorf("uncapped: %s/%s (%s)", c.Outcome, c.ErrorClass, c.ErrorMessage)
						}
					}
				}
				if failed == 0 {
					t.Fatal("uncapped, the burst did not push the server over: the case proves nothing")
				}
				t.Logf("uncapped: %d of 12 probes recorded as the server's failure", failed)
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.misread == "" {
				t.Fatal("every row says which way a misreading goes")
			}
			url, hits := tc.server(t)
			p := newTestProber(t, tc.opts...)
			cs := probeParallel(t, p, url, tc.transport, max(tc.parallel, 1))
			used := tc.used
			if used == "" {
				used = tc.transport
				if used == "" {
					used = TransportStreamableHTTP
				}
			}
			for _, c := range cs {
				if c.Outcome != tc.outcome || c.ErrorClass != tc.class || c.HTTPStatus != tc.status ||
					!slices.Equal(c.Notes, tc.notes) || c.Transport != used {
					b, _ := json.MarshalIndent(c, "", "  ")
					t.Fatalf("got %s/%s status %d notes %v via %s; want %s/%s status %d notes %v via %s\nmisread %s\n%s",
						c.Outcome, c.ErrorClass, c.HTTPStatus, c.Notes, c.Transport, tc.outcome, tc.class, tc.status, tc.notes, used, tc.misread, b)
				}
			}
			if tc.more != nil {
				tc.more(t, p, url, cs, hits)
			}
		})
	}
}

// A host's back-off is Retry-After capped at MaxBackoff (the probe
// interval): a server cannot silence itself for longer than one round.
func TestBackoffCappedAtInterval(t *testing.T) {
	clock := &offsetClock{}
	url, hits := refuse(429, "7200", "")(t)
	p := newTestProber(t, WithClock(clock.Now), WithMaxBackoff(time.Hour))
	c := probeURL(t, p, url, "")
	if c.Outcome != OutcomeRateLimited || c.RetryAfterSeconds != 7200 {
		t.Fatalf("%s retry_after_s %d", c.Outcome, c.RetryAfterSeconds)
	}
	clock.Advance(59 * time.Minute)
	if c := probeURL(t, p, url, ""); c.ErrorClass != ClassBackoff || hits.Load() != 1 {
		t.Fatalf("inside the cap: %s, %d requests", c.ErrorClass, hits.Load())
	}
	clock.Advance(time.Minute + time.Second)
	if c := probeURL(t, p, url, ""); c.ErrorClass != ClassRateLimited || hits.Load() != 2 {
		t.Fatalf("past the cap: %s, %d requests", c.ErrorClass, hits.Load())
	}
}

// A 429 without Retry-After still backs off, for NoRetryAfterBackoff.
func TestBackoffWithoutRetryAfter(t *testing.T) {
	clock := &offsetClock{}
	url, hits := refuse(429, "", "")(t)
	p := newTestProber(t, WithClock(clock.Now))
	if c := probeURL(t, p, url, ""); c.ErrorClass != ClassRateLimited || c.RetryAfterSeconds != 0 {
		t.Fatalf("%s retry_after_s %d", c.ErrorClass, c.RetryAfterSeconds)
	}
	if c := probeURL(t, p, url, ""); c.ErrorClass != ClassBackoff || hits.Load() != 1 {
		t.Fatalf("%s, %d requests", c.ErrorClass, hits.Load())
	}
	clock.Advance(NoRetryAfterBackoff)
	if probeURL(t, p, url, ""); hits.Load() != 2 {
		t.Fatalf("%d requests after the default back-off", hits.Load())
	}
}

// Probes queued behind the per-host limit when their host refuses for load
// are not sent: the back-off is checked again once a slot is free.
func TestBackoffStopsQueuedProbes(t *testing.T) {
	var hits atomic.Int32
	gate := make(chan struct{})
	ts := handlerServer(t, func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		<-gate
		w.Header().Set("Retry-After", "60")
		w.WriteHeader(429)
	})
	p := newTestProber(t, WithPerHostLimit(1))
	var wg sync.WaitGroup
	cs := make([]Check, 5)
	for i := range cs {
		wg.Go(func() { cs[i] = probeURL(t, p, fmt.Sprintf("%s/r%d", ts.URL, i), "") })
	}
	for hits.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // let the others queue for the slot
	close(gate)
	wg.Wait()
	if hits.Load() != 1 {
		t.Fatalf("%d requests reached a host that asked to be left alone", hits.Load())
	}
	for _, c := range cs {
		if c.Outcome != OutcomeRateLimited {
			t.Fatalf("outcome %s", c.Outcome)
		}
	}
}

// The SSE fallback only replaces the Streamable HTTP verdict when the SSE
// attempt is decisive; a server that is neither keeps its own status.
func TestStreamableToSSEFallbackNotDecisive(t *testing.T) {
	for _, tc := range []struct {
		name string
		get  http.HandlerFunc
	}{
		{"get-405", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(405) }},
		{"get-500", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }},
		{"get-json", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, "{}")
		}},
		{"stream-without-endpoint", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, ": nothing here\n\n")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := handlerServer(t, func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet {
					tc.get(w, r)
					return
				}
				http.Error(w, "bad request", 400)
			})
			c := probeURL(t, newTestProber(t, WithSSEReadTimeout(300*time.Millisecond)), ts.URL, TransportStreamableHTTP)
			wantOutcome(t, c, OutcomeHandshakeFailed, ClassHTTPStatus, AuthUnknown)
			if c.HTTPStatus != 400 || c.Transport != TransportStreamableHTTP || len(c.Notes) != 0 {
				t.Fatalf("status %d transport %s notes %v", c.HTTPStatus, c.Transport, c.Notes)
			}
		})
	}
	t.Run("get-401-decisive", func(t *testing.T) {
		ts := handlerServer(t, func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				w.Header().Set("WWW-Authenticate", `Bearer realm="sse"`)
				w.WriteHeader(401)
				return
			}
			http.Error(w, "sessionid must be provided", 400)
		})
		c := probeURL(t, newTestProber(t), ts.URL, TransportStreamableHTTP)
		wantOutcome(t, c, OutcomeAuthRequired, ClassAuth, AuthOAuth)
		if c.Transport != TransportSSE || c.HTTPStatus != 401 || len(c.Notes) != 0 {
			t.Fatalf("transport %s status %d notes %v", c.Transport, c.HTTPStatus, c.Notes)
		}
	})
}

// An sse label on a Streamable HTTP server carries the mismatch note too.
func TestSSEToStreamableNote(t *testing.T) {
	h := mcp.NewStreamableHTTPHandler(sdkHandlerFunc, nil)
	ts := handlerServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.WriteHeader(405)
			return
		}
		h.ServeHTTP(w, r)
	})
	c := probeURL(t, newTestProber(t), ts.URL, TransportSSE)
	wantOutcome(t, c, OutcomeOK, ClassNone, AuthNone)
	if c.Transport != TransportStreamableHTTP || !slices.Equal(c.Notes, []string{NoteTransportMismatch}) {
		t.Fatalf("transport %s notes %v", c.Transport, c.Notes)
	}
}

// --- servers and helpers ---

func sdkHandlerFunc(*http.Request) *mcp.Server { return sdkServer(0, 0) }

// counted serves h and counts the requests it gets.
func counted(t *testing.T, h http.HandlerFunc) (string, *atomic.Int32) {
	hits := new(atomic.Int32)
	ts := handlerServer(t, func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h(w, r)
	})
	return ts.URL, hits
}

// refuse answers every request with status, an optional Retry-After and a
// text body.
func refuse(status int, retryAfter, body string) func(t *testing.T) (string, *atomic.Int32) {
	return func(t *testing.T) (string, *atomic.Int32) {
		return counted(t, func(w http.ResponseWriter, r *http.Request) {
			if retryAfter != "" {
				w.Header().Set("Retry-After", retryAfter)
			}
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(status)
			io.WriteString(w, body)
		})
	}
}

func peekBody(r *http.Request) []byte {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body
}

func rpcMethod(body []byte) string {
	var m struct {
		Method string `json:"method"`
	}
	json.Unmarshal(body, &m)
	return m.Method
}

func rpcID(body []byte) string {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	json.Unmarshal(body, &m)
	if len(m.ID) == 0 {
		return "null"
	}
	return string(m.ID)
}

// mangle serves a real MCP handler but, for the POST of one JSON-RPC
// method, turns its 200 into status (0 keeps it) and writes prelude at the
// start of an event-stream answer — a working server behind a proxy that
// mangles the status, or one that chatters before it answers.
func mangle(h http.Handler, method string, status int, prelude []byte, sent *atomic.Int64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && rpcMethod(peekBody(r)) == method {
			w = &mangler{ResponseWriter: w, status: status, prelude: prelude, sent: sent}
		}
		h.ServeHTTP(w, r)
	}
}

type mangler struct {
	http.ResponseWriter
	status  int
	prelude []byte
	sent    *atomic.Int64 // prelude bytes written (nil: not counted)
	wrote   bool
}

func (m *mangler) WriteHeader(code int) {
	if m.wrote {
		return
	}
	m.wrote = true
	if code == http.StatusOK && m.status != 0 {
		code = m.status
	}
	m.ResponseWriter.WriteHeader(code)
	if strings.HasPrefix(m.Header().Get("Content-Type"), "text/event-stream") && len(m.prelude) > 0 {
		n, _ := m.ResponseWriter.Write(m.prelude)
		if m.sent != nil {
			m.sent.Add(int64(n))
		}
	}
}

func (m *mangler) Write(b []byte) (int, error) {
	m.WriteHeader(http.StatusOK)
	return m.ResponseWriter.Write(b)
}

func (m *mangler) Flush() {
	m.WriteHeader(http.StatusOK)
	if f, ok := m.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (m *mangler) Unwrap() http.ResponseWriter { return m.ResponseWriter }

// verbosePrelude is ~250 KiB of what chatty servers send before an answer:
// keep-alive comments, events of other types, log notifications, and one
// notification far bigger than any small read buffer.
func verbosePrelude() []byte {
	var b bytes.Buffer
	for b.Len() < 100<<10 {
		b.WriteString(": keep-alive " + strings.Repeat(".", 100) + "\n")
	}
	for i := 0; b.Len() < 150<<10; i++ {
		fmt.Fprintf(&b, "event: ping\nid: p%d\ndata: {\"seq\":%d}\n\n", i, i)
	}
	for i := 0; b.Len() < 180<<10; i++ {
		fmt.Fprintf(&b, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"debug\",\"data\":\"warming up %d\"}}\n\n", i)
	}
	fmt.Fprintf(&b, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"%s\"}}\n\n", strings.Repeat("z", 70<<10))
	return b.Bytes()
}

// stallsUnderLoad is a real MCP server that works under polite load but
// stalls (until the client gives up) any request that arrives while more
// than limit others are in flight — a small server stampeded.
func stallsUnderLoad(limit int32, work time.Duration) func(t *testing.T) (string, *atomic.Int32) {
	return func(t *testing.T) (string, *atomic.Int32) {
		h := mcp.NewStreamableHTTPHandler(sdkHandlerFunc, &mcp.StreamableHTTPOptions{JSONResponse: true})
		var inFlight atomic.Int32
		return counted(t, func(w http.ResponseWriter, r *http.Request) {
			n := inFlight.Add(1)
			defer inFlight.Add(-1)
			if n > limit {
				// Read the request first: net/http notices a client that
				// hung up only once the body is consumed.
				io.Copy(io.Discard, r.Body)
				select {
				case <-r.Context().Done():
				case <-time.After(10 * time.Second): // never outlive the test
				}
				return
			}
			time.Sleep(work)
			h.ServeHTTP(w, r)
		})
	}
}

func probeParallel(t *testing.T, p *Prober, url, transport string, n int) []Check {
	t.Helper()
	cs := make([]Check, n)
	var wg sync.WaitGroup
	for i := range cs {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cs[i] = p.Probe(ctx, Request{Server: fmt.Sprintf("io.example/s%d", i), URL: url, Transport: transport,
				ObservedAt: time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)})
		})
	}
	wg.Wait()
	return cs
}

// offsetClock is the wall clock moved forward on demand, so back-off tests
// skip minutes without sleeping.
type offsetClock struct{ off atomic.Int64 }

func (c *offsetClock) Now() time.Time          { return time.Now().Add(time.Duration(c.off.Load())) }
func (c *offsetClock) Advance(d time.Duration) { c.off.Add(int64(d)) }
