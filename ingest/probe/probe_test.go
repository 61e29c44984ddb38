package probe

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/forum-mcp/forum/internal/testenv"
	"github.com/forum-mcp/forum/schema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestProbeSDKStreamable(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts *mcp.StreamableHTTPOptions
	}{
		{"sse-framed", nil},
		{"json", &mcp.StreamableHTTPOptions{JSONResponse: true}},
		{"stateless", &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := streamableServer(t, sdkServer(0, 0), tc.opts)
			c := probeURL(t, newTestProber(t), ts.URL, TransportStreamableHTTP)
			wantOutcome(t, c, OutcomeOK, ClassNone, AuthNone)
			if c.HTTPStatus != 200 || c.Transport != TransportStreamableHTTP || c.ProtocolVersion != ProtocolVersion {
				t.Fatalf("status %d transport %s protocol %s", c.HTTPStatus, c.Transport, c.ProtocolVersion)
			}
			if c.ServerInfo == nil || c.ServerInfo.Name != "fixture" || c.ServerInfo.Version != "1.2.3" {
				t.Fatalf("server info %+v", c.ServerInfo)
			}
			if c.Instructions != "Use echo to echo." {
				t.Fatalf("instructions %q", c.Instructions)
			}
			checkFixtureTools(t, c)
		})
	}
}

func checkFixtureTools(t *testing.T, c Check) {
	t.Helper()
	if !c.ToolsListed || len(c.Tools) < 3 {
		t.Fatalf("tools listed=%v n=%d", c.ToolsListed, len(c.Tools))
	}
	by := map[string]Tool{}
	for _, tl := range c.Tools {
		by[tl.Name] = tl
		if len(tl.SHA256) != 64 {
			t.Fatalf("tool %s hash %q", tl.Name, tl.SHA256)
		}
	}
	if e := by["echo"]; !e.InputSchemaPresent || !strings.Contains(string(e.InputSchema), `"text"`) || len(e.Description) < 20 {
		t.Fatalf("echo: %+v", e)
	}
	if b := by["bare"]; b.InputSchemaPresent || b.Description != "" || b.InputSchema != nil {
		t.Fatalf("bare: %+v", b)
	}
	if s := by["short"]; !s.InputSchemaPresent || s.Description != "too short" {
		t.Fatalf("short: %+v", s)
	}
}

func TestProbeSDKLegacySSE(t *testing.T) {
	ts := sseServer(t, sdkServer(0, 0))
	c := probeURL(t, newTestProber(t), ts.URL, TransportSSE)
	wantOutcome(t, c, OutcomeOK, ClassNone, AuthNone)
	if c.Transport != TransportSSE || c.HTTPStatus != 200 || c.ServerInfo == nil || c.ServerInfo.Name != "fixture" {
		t.Fatalf("%+v", c)
	}
	checkFixtureTools(t, c)
}

func TestProbeHundredToolsPaged(t *testing.T) {
	// 100 numbered tools + 3 fixtures, 30 per page: 4 pages.
	s := sdkServer(100, 30)
	for _, tc := range []struct {
		name      string
		url       string
		transport string
	}{
		{"streamable", streamableServer(t, s, nil).URL, TransportStreamableHTTP},
		{"sse", sseServer(t, s).URL, TransportSSE},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := probeURL(t, newTestProber(t), tc.url, tc.transport)
			wantOutcome(t, c, OutcomeOK, ClassNone, AuthNone)
			if len(c.Tools) != 103 || c.ToolsPages != 4 || c.ToolsTruncated {
				t.Fatalf("tools %d pages %d truncated %v", len(c.Tools), c.ToolsPages, c.ToolsTruncated)
			}
			seen := map[string]bool{}
			for _, tl := range c.Tools {
				if seen[tl.Name] {
					t.Fatalf("duplicate %s", tl.Name)
				}
				seen[tl.Name] = true
			}
		})
	}
	t.Run("page-cap", func(t *testing.T) {
		ts := streamableServer(t, s, nil)
		c := probeURL(t, newTestProber(t, WithMaxToolPages(2)), ts.URL, TransportStreamableHTTP)
		if c.Outcome != OutcomeOK || !c.ToolsListed || !c.ToolsTruncated || len(c.Tools) != 60 || c.ToolsPages != 2 {
			t.Fatalf("outcome %s listed %v truncated %v tools %d pages %d", c.Outcome, c.ToolsListed, c.ToolsTruncated, len(c.Tools), c.ToolsPages)
		}
	})
}

// The tool hash is stable across probes and moves when a definition moves.
func TestToolHashStable(t *testing.T) {
	a := probeURL(t, newTestProber(t), streamableServer(t, sdkServer(0, 0), nil).URL, "")
	b := probeURL(t, newTestProber(t), streamableServer(t, sdkServer(0, 0), nil).URL, "")
	for i := range a.Tools {
		if a.Tools[i].SHA256 != b.Tools[i].SHA256 {
			t.Fatalf("hash of %s differs between identical servers", a.Tools[i].Name)
		}
	}
	s := sdkServer(0, 0)
	s.AddTool(&mcp.Tool{Name: "short", Description: "too short!", InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
	c := probeURL(t, newTestProber(t), streamableServer(t, s, nil).URL, "")
	for i := range a.Tools {
		if a.Tools[i].Name == "short" && a.Tools[i].SHA256 == c.Tools[i].SHA256 {
			t.Fatal("changed tool kept its hash")
		}
	}
}

const prmDoc = `{"resource":"%s","authorization_servers":["https://auth.example.com"],"scopes_supported":["mcp:read","mcp:write"],"bearer_methods_supported":["header"],"resource_name":"Fixture"}`

func TestProbeAuth(t *testing.T) {
	t.Run("401-bearer-resource-metadata", func(t *testing.T) {
		var ts *httptest.Server
		ts = handlerServer(t, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/.well-known/oauth-protected-resource/mcp" {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, strings.Replace(prmDoc, "%s", ts.URL+"/mcp", 1))
				return
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="fixture", error="invalid_token", resource_metadata="`+ts.URL+`/.well-known/oauth-protected-resource/mcp"`)
			w.WriteHeader(401)
		})
		c := probeURL(t, newTestProber(t), ts.URL+"/mcp", "")
		wantOutcome(t, c, OutcomeAuthRequired, ClassAuth, AuthOAuth)
		a := c.Auth
		if c.HTTPStatus != 401 || a.ChallengeScheme != "Bearer" || a.Realm != "fixture" || a.Error != "invalid_token" ||
			a.ResourceMetadataSource != "challenge" || a.ResourceMetadata == nil ||
			a.ResourceMetadata.Resource != ts.URL+"/mcp" || a.ResourceMetadata.AuthorizationServers[0] != "https://auth.example.com" ||
			len(a.ResourceMetadata.ScopesSupported) != 2 || a.ResourceMetadata.BearerMethodsSupported[0] != "header" {
			t.Fatalf("auth evidence %+v md %+v", a, a.ResourceMetadata)
		}
	})
	t.Run("401-no-challenge-well-known", func(t *testing.T) {
		var ts *httptest.Server
		ts = handlerServer(t, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/.well-known/oauth-protected-resource" { // root form only
				io.WriteString(w, strings.Replace(prmDoc, "%s", ts.URL, 1))
				return
			}
			w.WriteHeader(401)
		})
		c := probeURL(t, newTestProber(t), ts.URL+"/mcp", "")
		wantOutcome(t, c, OutcomeAuthRequired, ClassAuth, AuthOAuth)
		if c.Auth.ResourceMetadataSource != "well_known" || c.Auth.ResourceMetadataURL != ts.URL+"/.well-known/oauth-protected-resource" {
			t.Fatalf("%+v", c.Auth)
		}
	})
	t.Run("401-no-challenge-no-metadata", func(t *testing.T) {
		ts := handlerServer(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(401) })
		c := probeURL(t, newTestProber(t), ts.URL+"/mcp", "")
		wantOutcome(t, c, OutcomeAuthRequired, ClassAuth, AuthStatic)
		if c.Auth.ResourceMetadataError == "" || c.Auth.ResourceMetadata != nil {
			t.Fatalf("%+v", c.Auth)
		}
	})
	t.Run("401-basic", func(t *testing.T) {
		ts := handlerServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("WWW-Authenticate", `Basic realm="x"`)
			w.WriteHeader(401)
		})
		c := probeURL(t, newTestProber(t), ts.URL, "")
		wantOutcome(t, c, OutcomeAuthRequired, ClassAuth, AuthStatic)
	})
	t.Run("403", func(t *testing.T) {
		ts := handlerServer(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(403) })
		c := probeURL(t, newTestProber(t), ts.URL, "")
		wantOutcome(t, c, OutcomeAuthRequired, ClassAuth, AuthStatic)
		if c.HTTPStatus != 403 {
			t.Fatal(c.HTTPStatus)
		}
	})
	t.Run("jsonrpc-auth-error", func(t *testing.T) {
		ts := handlerServer(t, rpcErrorHandler(-32000, "Unauthorized: missing API key"))
		c := probeURL(t, newTestProber(t), ts.URL, "")
		wantOutcome(t, c, OutcomeAuthRequired, ClassJSONRPCAuth, AuthUnknown)
	})
	t.Run("declared-secret-header", func(t *testing.T) {
		ts := handlerServer(t, rpcErrorHandler(-32000, "Unauthorized"))
		yes := true
		ctx := context.Background()
		c := newTestProber(t).Probe(ctx, Request{Server: "a/b", URL: ts.URL, Transport: "streamable-http",
			RemoteHeaders: []schema.KeyValue{{Name: "X-API-Key", IsSecret: &yes}, {Name: "X-Opt"}}})
		wantOutcome(t, c, OutcomeAuthRequired, ClassJSONRPCAuth, AuthStatic)
		if len(c.Auth.DeclaredHeaders) != 1 || c.Auth.DeclaredHeaders[0].Name != "X-API-Key" || !c.Auth.DeclaredHeaders[0].Secret {
			t.Fatalf("%+v", c.Auth.DeclaredHeaders)
		}
	})
	t.Run("tools-list-401", func(t *testing.T) {
		// initialize is open, tools/list needs a token: auth-gated.
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return sdkServer(0, 0) }, &mcp.StreamableHTTPOptions{JSONResponse: true})
		ts := handlerServer(t, func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if strings.Contains(string(body), `"tools/list"`) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="tools"`)
				w.WriteHeader(401)
				return
			}
			r.Body = io.NopCloser(strings.NewReader(string(body)))
			h.ServeHTTP(w, r)
		})
		c := probeURL(t, newTestProber(t), ts.URL, "")
		wantOutcome(t, c, OutcomeAuthRequired, ClassAuth, AuthOAuth)
		if c.ServerInfo == nil || c.ToolsListed {
			t.Fatalf("%+v", c)
		}
	})
}

func rpcErrorHandler(code int, msg string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": code, "message": msg}})
	}
}

func TestProbeMisbehaving(t *testing.T) {
	for _, tc := range []struct {
		name    string
		h       http.HandlerFunc
		outcome Outcome
		class   ErrorClass
		status  int
	}{
		{"html-200", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, "<!doctype html><html><body>Welcome!</body></html>")
		}, OutcomeHandshakeFailed, ClassContentType, 200},
		{"wrong-json", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"hello":"world"}`)
		}, OutcomeHandshakeFailed, ClassInvalidJSONRPC, 200},
		{"json-array-of-strings", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `["a","b"]`)
		}, OutcomeHandshakeFailed, ClassInvalidJSONRPC, 200},
		{"broken-json", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{`)
		}, OutcomeHandshakeFailed, ClassInvalidJSON, 200},
		{"result-not-mcp", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"ok":true}}`)
		}, OutcomeHandshakeFailed, ClassProtocol, 200},
		{"jsonrpc-error", rpcErrorHandler(-32603, "internal error"), OutcomeHandshakeFailed, ClassJSONRPCError, 200},
		{"500", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", 500) }, OutcomeHandshakeFailed, ClassHTTPStatus, 500},
		{"404", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }, OutcomeHandshakeFailed, ClassHTTPStatus, 404},
		{"202-no-answer", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(202) }, OutcomeHandshakeFailed, ClassProtocol, 202},
		{"sse-ends-without-answer", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n")
		}, OutcomeHandshakeFailed, ClassProtocol, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := handlerServer(t, tc.h)
			c := probeURL(t, newTestProber(t), ts.URL, "")
			wantOutcome(t, c, tc.outcome, tc.class, AuthUnknown)
			if c.HTTPStatus != tc.status || c.ErrorMessage == "" || len(c.ErrorMessage) > MaxErrorMessage {
				t.Fatalf("status %d message %q", c.HTTPStatus, c.ErrorMessage)
			}
		})
	}
}

// slowMethods delays the answers of a real SDK server per JSON-RPC method.
func slowMethods(h http.Handler, delays map[string]time.Duration) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m struct {
			Method string `json:"method"`
		}
		json.Unmarshal(body, &m)
		time.Sleep(delays[m.Method])
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		h.ServeHTTP(w, r)
	}
}

// The issue asks for the initialize latency within ±20 ms of a 600 ms
// server. The prober measures from writing initialize to the parsed answer,
// so it reads the server's delay plus the cost of one round trip on this
// machine. Each attempt therefore probes the same server without the delay
// first (the baseline) and asserts the delayed reading is 600 ms over it,
// ±20 ms. tools/list is slowed by 300 ms too, so a latency that wrongly
// covered more than initialize would read >= 900 ms and fail. On a shared
// 2-core box single attempts can be late by far more than 20 ms (load
// average 14 seen), so up to seven attempts are made and the first that
// fits passes; idle, the first one does.
func TestProbeLatency600ms(t *testing.T) {
	const delay, tolerance = 600 * time.Millisecond, 20.0
	var extra atomic.Int64 // 0 for the baseline, delay for the measurement
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return sdkServer(0, 0) }, nil)
	ts := handlerServer(t, func(w http.ResponseWriter, r *http.Request) {
		d := time.Duration(extra.Load())
		slowMethods(h, map[string]time.Duration{"initialize": d, "tools/list": d / 2})(w, r)
	})
	for attempt := 1; attempt <= 7; attempt++ {
		extra.Store(0)
		base := probeURL(t, newTestProber(t), ts.URL, "")
		wantOutcome(t, base, OutcomeOK, ClassNone, AuthNone)
		extra.Store(int64(delay))
		c := probeURL(t, newTestProber(t), ts.URL, "")
		wantOutcome(t, c, OutcomeOK, ClassNone, AuthNone)
		if c.InitializeLatencyMS < float64(delay.Milliseconds()) {
			t.Fatalf("initialize latency %.1f ms below the server's %v delay", c.InitializeLatencyMS, delay)
		}
		if c.DurationMS < 900 {
			t.Fatalf("whole probe %.1f ms, want >= 900 (initialize + tools/list delays)", c.DurationMS)
		}
		off := c.InitializeLatencyMS - base.InitializeLatencyMS - float64(delay.Milliseconds())
		t.Logf("attempt %d: baseline %.2f ms, delayed %.2f ms, off by %+.2f ms; whole probe %.2f ms", attempt, base.InitializeLatencyMS, c.InitializeLatencyMS, off, c.DurationMS)
		if off >= -tolerance && off <= tolerance {
			return
		}
	}
	t.Fatalf("initialize latency was never within ±%.0f ms of 600 ms over the baseline in 7 attempts", tolerance)
}

func TestProbeHangTimesOut(t *testing.T) {
	release := make(chan struct{})
	ts := handlerServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	p := newTestProber(t, WithTimeout(300*time.Millisecond))
	start := time.Now()
	c := probeURL(t, p, ts.URL, "")
	wantOutcome(t, c, OutcomeUnreachable, ClassTimeout, AuthUnknown)
	if el := time.Since(start); el < 300*time.Millisecond || el > 2*time.Second {
		t.Fatalf("took %v", el)
	}
}

func TestProbeSSEStreamHangs(t *testing.T) {
	// Legacy SSE GET that never sends the endpoint event: the SSE read cap ends it.
	ts := handlerServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	c := probeURL(t, newTestProber(t, WithSSEReadTimeout(200*time.Millisecond)), ts.URL, TransportSSE)
	wantOutcome(t, c, OutcomeUnreachable, ClassTimeout, AuthUnknown)
}

func TestProbeSSEFallback(t *testing.T) {
	for _, code := range []int{404, 405} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return sdkServer(0, 0) }, nil)
			var gets atomic.Int32
			ts := handlerServer(t, func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet {
					gets.Add(1)
					w.WriteHeader(code)
					return
				}
				h.ServeHTTP(w, r)
			})
			c := probeURL(t, newTestProber(t), ts.URL, TransportSSE)
			wantOutcome(t, c, OutcomeOK, ClassNone, AuthNone)
			if c.TransportDeclared != TransportSSE || c.Transport != TransportStreamableHTTP || gets.Load() != 1 || len(c.Tools) != 3 {
				t.Fatalf("declared %s used %s gets %d tools %d", c.TransportDeclared, c.Transport, gets.Load(), len(c.Tools))
			}
		})
	}
}

func TestProbeBodyTooLarge(t *testing.T) {
	chunk := []byte(strings.Repeat("x", 32<<10))
	const total = 50 << 20
	var sent atomic.Int64
	for _, tc := range []struct {
		name          string
		contentLength bool
		ct            string
	}{
		{"chunked-json", false, "application/json"},
		{"declared-length", true, "application/json"},
		{"sse", false, "text/event-stream"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sent.Store(0)
			ts := handlerServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.ct)
				if tc.contentLength {
					w.Header().Set("Content-Length", "52428800")
				}
				if tc.ct == "text/event-stream" {
					io.WriteString(w, "data: ")
				}
				for n := 0; n < total; n += len(chunk) {
					if _, err := w.Write(chunk); err != nil {
						return
					}
					sent.Add(int64(len(chunk)))
				}
			})
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			c := probeURL(t, newTestProber(t), ts.URL, "")
			runtime.ReadMemStats(&after)
			wantOutcome(t, c, OutcomeHandshakeFailed, ClassBodyTooLarge, AuthUnknown)
			// Memory: the prober buffers at most the 1 MiB cap (plus slice
			// growth); reading the 50 MB would allocate > 50 MB.
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
				t.Fatalf("allocated %d MiB for a capped body", alloc>>20)
			}
			if s := sent.Load(); s >= total {
				t.Fatalf("server managed to send the whole body (%d bytes)", s)
			}
		})
	}
}

func TestProbeURLTemplate(t *testing.T) {
	var hits atomic.Int32
	ts := handlerServer(t, func(w http.ResponseWriter, r *http.Request) { hits.Add(1) })
	for _, u := range []string{ts.URL + "/{tenant}/mcp", ts.URL + "/mcp?key={api_key}", ts.URL + "/%7Btenant%7D/mcp", "https://{host}.example.com/mcp"} {
		c := probeURL(t, newTestProber(t), u, "")
		wantOutcome(t, c, OutcomeHandshakeFailed, ClassURLTemplate, AuthUnknown)
	}
	if hits.Load() != 0 {
		t.Fatalf("template URL was requested %d times", hits.Load())
	}
}

func TestProbeNotChecked(t *testing.T) {
	p := newTestProber(t)
	c := probeURL(t, p, "http://127.0.0.1:1/", "stdio")
	wantOutcome(t, c, OutcomeNotChecked, ClassUnsupportedTransport, AuthUnknown)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c = p.Probe(ctx, Request{Server: "a/b", URL: "http://127.0.0.1:1/", Transport: "streamable-http"})
	wantOutcome(t, c, OutcomeNotChecked, ClassCanceled, AuthUnknown)
}

func TestProbeUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := probeURL(t, newTestProber(t), "http://"+addr+"/mcp", "")
	wantOutcome(t, c, OutcomeUnreachable, ClassConnect, AuthUnknown)

	c = probeURL(t, newTestProber(t, WithResolver(fakeResolver{})), "http://no-such-host.invalid/mcp", "")
	wantOutcome(t, c, OutcomeUnreachable, ClassDNS, AuthUnknown)

	// TLS: a self-signed certificate, and HTTPS to a plain-HTTP server.
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer tlsSrv.Close()
	c = probeURL(t, newTestProber(t), tlsSrv.URL, "")
	wantOutcome(t, c, OutcomeUnreachable, ClassTLS, AuthUnknown)
	ts := handlerServer(t, func(w http.ResponseWriter, r *http.Request) {})
	c = probeURL(t, newTestProber(t), strings.Replace(ts.URL, "http://", "https://", 1), "")
	wantOutcome(t, c, OutcomeUnreachable, ClassTLS, AuthUnknown)
}

// listen127 opens a listener on another loopback address so that one test
// can allow-list the server it probes and still be refused 127.0.0.1.
func listen127(t *testing.T, ip string, h http.Handler) *httptest.Server {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		testenv.Unavailable(t, "cannot listen on %s: %v", ip, err)
	}
	ts := httptest.NewUnstartedServer(h)
	ts.Listener.Close()
	ts.Listener = ln
	ts.Start()
	t.Cleanup(ts.Close)
	return ts
}

func TestProbeRedirects(t *testing.T) {
	target := streamableServer(t, sdkServer(0, 0), nil) // on 127.0.0.1
	redirector := func(to string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, to, http.StatusTemporaryRedirect)
		})
	}
	only2 := netip.MustParsePrefix("127.0.0.2/32")
	for _, tc := range []struct {
		name    string
		to      string
		allow   []netip.Prefix
		outcome Outcome
		class   ErrorClass
	}{
		{"to-127.0.0.1-blocked", target.URL, []netip.Prefix{only2}, OutcomeUnreachable, ClassBlockedAddress},
		{"to-metadata-blocked", "http://169.254.169.254/latest/meta-data/", []netip.Prefix{only2}, OutcomeUnreachable, ClassBlockedAddress},
		{"to-metadata-blocked-even-with-loopback-allowed", "http://169.254.169.254/latest/meta-data/", loopback, OutcomeUnreachable, ClassBlockedAddress},
		{"to-ipv6-loopback-blocked", "http://[::1]:9/", []netip.Prefix{only2}, OutcomeUnreachable, ClassBlockedAddress},
		{"to-mapped-metadata-blocked", "http://[::ffff:169.254.169.254]/", []netip.Prefix{only2}, OutcomeUnreachable, ClassBlockedAddress},
		{"to-allowed-followed", target.URL, loopback, OutcomeOK, ClassNone},
		{"to-file-scheme", "file:///etc/passwd", loopback, OutcomeHandshakeFailed, ClassRedirect},
	} {
		t.Run(tc.name, func(t *testing.T) {
			from := listen127(t, "127.0.0.2", redirector(tc.to))
			p := New(WithAllow(tc.allow...))
			defer p.Close()
			c := probeURL(t, p, from.URL, "")
			if c.Outcome != tc.outcome || c.ErrorClass != tc.class {
				t.Fatalf("got %s/%s (%s), want %s/%s", c.Outcome, c.ErrorClass, c.ErrorMessage, tc.outcome, tc.class)
			}
		})
	}
	t.Run("redirect-loop", func(t *testing.T) {
		var ts *httptest.Server
		ts = handlerServer(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, ts.URL+r.URL.Path+"x", http.StatusTemporaryRedirect)
		})
		c := probeURL(t, newTestProber(t), ts.URL+"/", "")
		wantOutcome(t, c, OutcomeHandshakeFailed, ClassRedirect, AuthUnknown)
	})
}

// Without an allow-list the prober refuses its own loopback test servers,
// whether named by IP or by a name that resolves there.
func TestProbeDefaultBlocksLoopback(t *testing.T) {
	ts := streamableServer(t, sdkServer(0, 0), nil)
	p := New()
	defer p.Close()
	port := ts.URL[strings.LastIndex(ts.URL, ":")+1:]
	for _, u := range []string{ts.URL, "http://localhost:" + port + "/", "http://[::1]:" + port + "/"} {
		c := probeURL(t, p, u, "")
		wantOutcome(t, c, OutcomeUnreachable, ClassBlockedAddress, AuthUnknown)
	}
	// A public-looking name that resolves to loopback, as DNS rebinding would.
	p2 := New(WithResolver(fakeResolver{"mcp.example.com": {"127.0.0.1"}}))
	defer p2.Close()
	c := probeURL(t, p2, "http://mcp.example.com:"+port+"/", "")
	wantOutcome(t, c, OutcomeUnreachable, ClassBlockedAddress, AuthUnknown)
}

// With the name allow-listed through the resolver, the prober dials the IP
// it checked and keeps the Host header.
func TestProbeDialsCheckedIP(t *testing.T) {
	s := sdkServer(0, 0)
	var host atomic.Value
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{DisableLocalhostProtection: true})
	var conns atomic.Int32
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { host.Store(r.Host); h.ServeHTTP(w, r) }))
	ts.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	ts.Start()
	defer ts.Close()
	port := ts.URL[strings.LastIndex(ts.URL, ":")+1:]
	r := &countingResolver{fakeResolver: fakeResolver{"mcp.example.com": {"127.0.0.1"}}}
	c := probeURL(t, newTestProber(t, WithResolver(r)), "http://mcp.example.com:"+port+"/", "")
	wantOutcome(t, c, OutcomeOK, ClassNone, AuthNone)
	if host.Load() != "mcp.example.com:"+port {
		t.Fatalf("host header %v", host.Load())
	}
	// One resolution per connection: each dial checks what it dials.
	if n, m := r.n.Load(), conns.Load(); n < 1 || n != m {
		t.Fatalf("resolver called %d times for %d connections", n, m)
	}
}

func TestPerHostLimit(t *testing.T) {
	var cur, peak atomic.Int32
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return sdkServer(0, 0) }, &mcp.StreamableHTTPOptions{JSONResponse: true})
	ts := handlerServer(t, func(w http.ResponseWriter, r *http.Request) {
		n := cur.Add(1)
		defer cur.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
		h.ServeHTTP(w, r)
	})
	p := newTestProber(t, WithPerHostLimit(2))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if c := probeURL(t, p, ts.URL, ""); c.Outcome != OutcomeOK {
				t.Errorf("outcome %s %s", c.Outcome, c.ErrorMessage)
			}
		})
	}
	wg.Wait()
	if peak.Load() > 2 {
		t.Fatalf("peak concurrency on one host %d, limit 2", peak.Load())
	}
}

func TestCheckIDAndJSON(t *testing.T) {
	at := time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)
	a := CheckID("a/b", "https://x/mcp", at)
	if a != CheckID("a/b", "https://x/mcp", at.In(time.FixedZone("X", 3600))) || a == CheckID("a/b", "https://x/mcp", at.Add(time.Second)) || len(a) != 64 {
		t.Fatal("CheckID not deterministic in (server, url, instant)")
	}
	ts := streamableServer(t, sdkServer(0, 0), nil)
	c := probeURL(t, newTestProber(t), ts.URL, "")
	if c.ID != CheckID("io.example/fixture", ts.URL, c.ScheduledAt) {
		t.Fatal("check id")
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"initialize_latency_ms"`, `"http_status":200`, `"outcome":"ok"`, `"auth_kind":"none"`, `"tools_listed":true`, `"input_schema_present":true`, `"server_info":{"name":"fixture"`} {
		if !strings.Contains(string(b), k) {
			t.Fatalf("JSON lacks %s: %s", k, b)
		}
	}
	var back Check
	if err := json.Unmarshal(b, &back); err != nil || back.ID != c.ID || len(back.Tools) != len(c.Tools) {
		t.Fatalf("round trip: %v", err)
	}
}

// TestCheckStampsWhenTheProbeRan: observed_at is when the probe ran, not
// the slot it was scheduled for (up to a scheduler tick earlier); the slot
// is kept as scheduled_at and is what the id is derived from, so a
// redelivered request — probed again, later — overwrites the first check.
func TestCheckStampsWhenTheProbeRan(t *testing.T) {
	ts := streamableServer(t, sdkServer(0, 0), nil)
	slot := time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)
	var ran time.Time // the prober's clock
	p := newTestProber(t, WithClock(func() time.Time { return ran }))
	req := Request{Server: "io.example/fixture", URL: ts.URL, ObservedAt: slot}
	var ids []string
	for _, late := range []time.Duration{17 * time.Second, 29*time.Second + 500*time.Millisecond} {
		ran = slot.Add(late)
		c := p.Probe(context.Background(), req)
		if c.Outcome != OutcomeOK {
			t.Fatalf("outcome %s (%s)", c.Outcome, c.ErrorMessage)
		}
		if !c.ObservedAt.Equal(ran) || !c.ScheduledAt.Equal(slot) {
			t.Errorf("observed_at %v, scheduled_at %v: want the run time %v and the slot %v", c.ObservedAt, c.ScheduledAt, ran, slot)
		}
		if c.ID != CheckID(req.Server, req.URL, slot) {
			t.Errorf("id %s is not CheckID of the slot", c.ID)
		}
		ids = append(ids, c.ID)
		b, _ := json.Marshal(c)
		if !strings.Contains(string(b), `"scheduled_at":"2026-10-01T12:00:00Z"`) {
			t.Errorf("the slot is not on the wire: %s", b)
		}
	}
	if ids[0] != ids[1] {
		t.Error("a redelivered request got another id: it would duplicate the check")
	}
	// A request without a slot (an ad-hoc probe) is stamped with the time
	// the prober took it, and its id follows that.
	ran = slot.Add(time.Hour)
	c := p.Probe(context.Background(), Request{Server: "io.example/fixture", URL: ts.URL})
	if !c.ObservedAt.Equal(ran) || !c.ScheduledAt.Equal(ran) || c.ID != CheckID("io.example/fixture", ts.URL, ran) {
		t.Errorf("ad-hoc probe: observed_at %v scheduled_at %v id %s", c.ObservedAt, c.ScheduledAt, c.ID)
	}
}

// A probe that times out while queued behind the per-host limit was never
// run: not_checked, not unreachable.
func TestPerHostWaitIsNotChecked(t *testing.T) {
	release := make(chan struct{})
	ts := handlerServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	p := newTestProber(t, WithPerHostLimit(1), WithTimeout(5*time.Second))
	first := make(chan struct{})
	go func() { p.Probe(context.Background(), Request{Server: "a/b", URL: ts.URL}); close(first) }()
	time.Sleep(50 * time.Millisecond) // let the first probe take the slot
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	c := p.Probe(ctx, Request{Server: "a/b", URL: ts.URL})
	close(release)
	<-first
	wantOutcome(t, c, OutcomeNotChecked, ClassCanceled, AuthUnknown)
}
