package probe

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap/zaptest"
)

// loopback is the allow-list every test uses unless it tests the guard.
var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

func newTestProber(t *testing.T, opts ...Option) *Prober {
	t.Helper()
	all := append([]Option{WithAllow(loopback...), WithLogger(zaptest.NewLogger(t))}, opts...)
	p := New(all...)
	t.Cleanup(p.Close)
	return p
}

type echoIn struct {
	Text string `json:"text" jsonschema:"the text to echo back"`
}

// sdkServer is a real go-sdk MCP server with tools that have and lack
// descriptions and schemas, plus n numbered tools; pageSize 0 keeps the
// SDK default (1000 per page).
func sdkServer(n, pageSize int) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "fixture", Version: "1.2.3"}, &mcp.ServerOptions{
		PageSize:     pageSize,
		Instructions: "Use echo to echo.",
	})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the given text back to the caller, unchanged."},
		func(context.Context, *mcp.CallToolRequest, echoIn) (*mcp.CallToolResult, any, error) {
			return nil, nil, nil
		})
	// "bare" has neither description nor (once the middleware strips it) a schema.
	s.AddTool(&mcp.Tool{Name: "bare", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
	s.AddTool(&mcp.Tool{Name: "short", Description: "too short", InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
	for i := range n {
		s.AddTool(&mcp.Tool{Name: fmt.Sprintf("tool_%03d", i), Description: fmt.Sprintf("Numbered fixture tool number %d.", i),
			InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
	}
	// The SDK insists on a schema when a tool is added; real servers in the
	// registry omit it, so strip it on the way out.
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if r, ok := res.(*mcp.ListToolsResult); ok && err == nil {
				for i, tl := range r.Tools {
					if tl.Name == "bare" {
						cp := *tl
						cp.InputSchema = nil
						r.Tools[i] = &cp
					}
				}
			}
			return res, err
		}
	})
	return s
}

func streamableServer(t *testing.T, s *mcp.Server, opts *mcp.StreamableHTTPOptions) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, opts))
	t.Cleanup(ts.Close)
	return ts
}

func sseServer(t *testing.T, s *mcp.Server) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(ts.Close)
	return ts
}

func handlerServer(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts
}

func probeURL(t *testing.T, p *Prober, url, transport string) Check {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return p.Probe(ctx, Request{Server: "io.example/fixture", URL: url, Transport: transport,
		ObservedAt: time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)})
}

func wantOutcome(t *testing.T, c Check, o Outcome, class ErrorClass, kind AuthKind) {
	t.Helper()
	if c.Outcome != o || c.ErrorClass != class || c.AuthKind != kind {
		b, _ := json.MarshalIndent(c, "", "  ")
		t.Fatalf("got outcome=%s class=%s auth=%s, want %s/%s/%s\n%s", c.Outcome, c.ErrorClass, c.AuthKind, o, class, kind, b)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
