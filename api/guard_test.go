package api_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/forum-mcp/forum/api"
)

// rawRequest sends one request line as given (no client-side escaping or
// validation, as a hostile client would) and returns the answer.
func rawRequest(t *testing.T, srv *httptest.Server, method, target, token, body string) (int, http.Header, []byte) {
	t.Helper()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := method + " " + target + " HTTP/1.1\r\nHost: forum.test\r\nConnection: close\r\n"
	if token != "" {
		req += "Authorization: Bearer " + token + "\r\n"
	}
	if body != "" {
		req += fmt.Sprintf("Content-Type: application/json\r\nContent-Length: %d\r\n", len(body))
	}
	if _, err := io.WriteString(c, req+"\r\n"+body); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%s %.80s: %v", method, target, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

// guardedServer is the whole API (NewServer) over a loaded DuckDB store,
// logging into an observer that keeps every entry, debug included, with
// stack traces from the error level up as the production logger has them.
func guardedServer(t *testing.T) (*httptest.Server, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	s := loadedStore(t)
	h := api.NewServer(api.Config{Store: s, Tokens: api.ParseAdminTokens("alice:s3cret"), Log: zap.New(core, zap.AddStacktrace(zapcore.ErrorLevel))}).Handler
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, logs
}

// TestBadEncodingIsA400Problem: invalid UTF-8 (and NUL bytes, malformed
// escapes) in a path or query, on any route, is answered 400 with a problem
// document naming what is wrong, before any store read: never a 5xx, never
// an error log (whose stack trace the production logger prints). Overlong
// paths and queries are answered 414 the same way.
func TestBadEncodingIsA400Problem(t *testing.T) {
	srv, logs := guardedServer(t)
	long := strings.Repeat("a", 5000)
	for _, tc := range []struct {
		method, target string
		status         int
		says           string // in the detail or an error's location/message
	}{
		{"GET", "/v1/servers?cursor=%ff", 400, "query.cursor"},
		{"GET", "/v1/servers?namespace=%c0%80", 400, "query.namespace"}, // an overlong encoding of NUL
		{"GET", "/v1/servers?cursor=%ed%a0%80", 400, "query.cursor"},    // a UTF-16 surrogate
		{"GET", "/v1/servers?cursor=%zz", 400, "malformed"},
		{"GET", "/v1/servers?limit=10&%ff=1", 400, "parameter name"},
		{"GET", "/v1/servers?cursor=a%00b", 400, "NUL"},
		{"GET", "/v1/servers/abc%ff/trust", 400, "path"},
		{"GET", "/v1/servers/abc%ff", 400, "path"},
		{"GET", "/v1/servers/abc\xff/trust", 400, "path"}, // raw, unescaped bytes
		{"GET", "/v1/servers/%ff%2Fx/events", 400, "path"},
		{"GET", "/v1/servers/x%2F%fe/health", 400, "path"},
		{"GET", "/v1/servers/x%2Fy/proof?publication=%ff", 400, "query.publication"},
		{"GET", "/v1/servers/x%2Fy/incidents?x=%f0%9f%98", 400, "query.x"}, // a cut 4-byte sequence
		{"GET", "/v1/servers/a%00b", 400, "NUL"},
		{"GET", "/v1/evidence/%ff", 400, "path"},
		{"GET", "/v1/events?kind=%ff", 400, "query.kind"},
		{"GET", "/v1/search?q=%ff", 400, "query.q"},
		{"GET", "/v1/publications/%ff", 400, "path"},
		{"GET", "/v1/export/%ff", 400, "path"},
		{"POST", "/v1/admin/reviews/a%ff/approve", 400, "path"},
		{"POST", "/v1/admin/incidents/%ff/retract", 400, "path"},
		{"GET", "/v1/servers/" + long, 414, "path"},
		{"GET", "/v1/servers?cursor=" + long, 414, "query"},
		{"GET", "/v1/search?q=" + strings.Repeat("%ff", 2000), 414, "query"},
	} {
		name := fmt.Sprintf("%s %.60s", tc.method, tc.target)
		status, hdr, b := rawRequest(t, srv, tc.method, tc.target, "s3cret", "")
		if status != tc.status {
			t.Errorf("%s: %d %s, want %d", name, status, b, tc.status)
			continue
		}
		if ct := hdr.Get("Content-Type"); ct != "application/problem+json" {
			t.Errorf("%s: Content-Type %q, want application/problem+json", name, ct)
		}
		var p struct {
			Title  string `json:"title"`
			Status int    `json:"status"`
			Detail string `json:"detail"`
			Errors []struct {
				Message, Location string
				Value             any
			} `json:"errors"`
		}
		if err := json.Unmarshal(b, &p); err != nil || p.Status != tc.status || p.Detail == "" {
			t.Errorf("%s: not a problem document (%v): %s", name, err, b)
			continue
		}
		if !strings.Contains(string(b), tc.says) {
			t.Errorf("%s: %s does not name %q", name, b, tc.says)
		}
		if len(b) > 2048 || !utf8.Valid(b) {
			t.Errorf("%s: %d bytes (valid UTF-8: %v), want a short, valid answer", name, len(b), utf8.Valid(b))
		}
	}
	for _, e := range logs.All() {
		if e.Level >= zapcore.ErrorLevel || e.Stack != "" {
			t.Errorf("logged at %s (stack %d bytes): %s %v", e.Level, len(e.Stack), e.Message, e.ContextMap())
		}
	}
	// Well-formed requests still pass.
	if status, _, b := rawRequest(t, srv, "GET", "/v1/servers?limit=2&cursor=%C3%A9", "", ""); status != 200 {
		t.Errorf("valid UTF-8 cursor: %d %s", status, b)
	}
	if status, _, b := rawRequest(t, srv, "GET", "/v1/servers/ai.smithery%2Fbrave", "", ""); status != 200 {
		t.Errorf("an escaped name: %d %s", status, b)
	}
}

// TestErrorsQuoteABoundedPartOfTheInput: an error answer quotes at most a
// few hundred bytes of any input value (cut on a rune boundary, with the
// full length noted), and at most a bounded number of errors, whatever
// was sent.
func TestErrorsQuoteABoundedPartOfTheInput(t *testing.T) {
	srv, _ := guardedServer(t)
	big := strings.Repeat("é", 30_000) // 60,000 bytes, two per rune
	manyProps := map[string]string{}
	for i := range 2000 {
		manyProps[fmt.Sprintf("unknown_%04d_%s", i, strings.Repeat("k", 100))] = "v"
	}
	manyBody, _ := json.Marshal(manyProps)
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
	}{
		{"a 60 KB reason", "POST", "/v1/admin/reviews/a%2Fb/approve", `{"reason":"` + big + `"}`, 422},
		{"a 60 KB field of an incomplete incident", "POST", "/v1/admin/incidents", `{"server":"` + big + `"}`, 422},
		{"2000 unknown properties", "POST", "/v1/admin/incidents", string(manyBody), 422},
		{"a long publication id", "POST", "/v1/admin/reviews/a%2Fb/approve", `{"reason":"x","publication_id":"` + big + `"}`, 422},
		{"a long query value", "GET", "/v1/servers?cursor=" + strings.Repeat("%C3%A9", 500), "", 422},
	} {
		status, _, b := rawRequest(t, srv, tc.method, tc.path, "s3cret", tc.body)
		if status != tc.status {
			t.Errorf("%s: %d %.300s, want %d", tc.name, status, b, tc.status)
			continue
		}
		if len(b) > 16<<10 {
			t.Errorf("%s: %d bytes answered for %d sent", tc.name, len(b), len(tc.body)+len(tc.path))
		}
		var p struct {
			Detail string `json:"detail"`
			Errors []struct {
				Message  string `json:"message"`
				Location string `json:"location"`
				Value    any    `json:"value"`
			} `json:"errors"`
		}
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatalf("%s: %v: %.300s", tc.name, err, b)
		}
		if len(p.Errors) == 0 || len(p.Errors) > 21 {
			t.Errorf("%s: %d errors", tc.name, len(p.Errors))
		}
		for _, e := range p.Errors {
			v, _ := json.Marshal(e.Value)
			if len(v) > 600 || len(e.Message) > 600 || len(e.Location) > 600 {
				t.Errorf("%s: an error quotes %d bytes of value, %d of message, %d of location", tc.name, len(v), len(e.Message), len(e.Location))
			}
			if s, ok := e.Value.(string); ok && strings.Contains(s, "\ufffd") {
				t.Errorf("%s: the quoted value was cut inside a rune: %q", tc.name, s)
			}
		}
		if !strings.Contains(string(b), "bytes") {
			t.Errorf("%s: no note of the full length: %.600s", tc.name, b)
		}
	}
	// The 60 KB reason: its value is a prefix of what was sent, and the
	// message says how long it was.
	_, _, b := rawRequest(t, srv, "POST", "/v1/admin/reviews/a%2Fb/approve", "s3cret", `{"reason":"`+big+`"}`)
	var p struct {
		Errors []struct {
			Message string `json:"message"`
			Value   string `json:"value"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(b, &p); err != nil || len(p.Errors) != 1 {
		t.Fatalf("%v: %s", err, b)
	}
	if e := p.Errors[0]; !strings.HasPrefix(big, strings.TrimSuffix(e.Value, "…")) || len(e.Value) < 100 || !strings.Contains(e.Message, "60000 bytes") {
		t.Errorf("quoted %q with message %q: want a prefix of the reason and its length", e.Value, e.Message)
	}
}
