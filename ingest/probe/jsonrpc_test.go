package probe

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParseRPCResponse(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     string
		ok     bool
		class  ErrorClass // "" = no classError
		rpcErr bool
	}{
		{"result", `{"jsonrpc":"2.0","id":1,"result":{"x":1}}`, true, "", false},
		{"string-id", `{"jsonrpc":"2.0","id":"1","result":{}}`, true, "", false},
		{"batch", `[{"jsonrpc":"2.0","method":"notifications/message"},{"jsonrpc":"2.0","id":1,"result":{}}]`, true, "", false},
		{"other-id", `{"jsonrpc":"2.0","id":2,"result":{}}`, false, "", false},
		{"notification-only", `{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`, false, "", false},
		{"error", `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"nope"}}`, true, "", true},
		{"null-id-error", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`, true, "", true},
		{"no-result", `{"jsonrpc":"2.0","id":1}`, false, ClassInvalidJSONRPC, false},
		{"wrong-version", `{"jsonrpc":"1.0","id":1,"result":{}}`, false, ClassInvalidJSONRPC, false},
		{"not-json", `<html>`, false, ClassInvalidJSON, false},
		{"json-not-rpc", `"hello"`, false, ClassInvalidJSONRPC, false},
		{"empty", ``, false, ClassInvalidJSON, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ok, err := parseRPCResponse([]byte(tc.in), 1)
			var ce *classError
			var re *RPCError
			switch {
			case tc.class != "":
				if !errors.As(err, &ce) || ce.Class != tc.class {
					t.Fatalf("want class %s, got %v", tc.class, err)
				}
			case tc.rpcErr:
				if !errors.As(err, &re) || !ok {
					t.Fatalf("want RPCError, got %v ok=%v", err, ok)
				}
			default:
				if err != nil || ok != tc.ok {
					t.Fatalf("got ok=%v err=%v", ok, err)
				}
			}
		})
	}
}

func TestRPCErrorIsAuth(t *testing.T) {
	for _, tc := range []struct {
		e    RPCError
		want bool
	}{
		{RPCError{Code: -32000, Message: "Unauthorized"}, true},
		{RPCError{Code: -32001, Message: "Authentication required"}, true},
		{RPCError{Code: -32600, Message: "missing API key"}, true},
		{RPCError{Code: 401, Message: "x"}, true},
		{RPCError{Code: -32603, Message: "internal", Data: json.RawMessage(`{"reason":"invalid access token"}`)}, true},
		{RPCError{Code: -32603, Message: "internal", Data: json.RawMessage(`{"trace":"` + strings.Repeat("x", 4096) + `","reason":"missing api key"}`)}, true},
		{RPCError{Code: -32601, Message: "Method not found"}, false},
		{RPCError{Code: -32603, Message: "internal error"}, false},
	} {
		if got := tc.e.isAuth(); got != tc.want {
			t.Errorf("%+v: got %v", tc.e, got)
		}
	}
}

func FuzzJSONRPCResponse(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","serverInfo":{"name":"x","version":"1"}}}`,
		`[{"jsonrpc":"2.0","id":1,"result":{}}]`,
		`{"jsonrpc":"2.0","id":"1","error":{"code":-32000,"message":"Unauthorized"}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"c"}}`,
		`{"id":1e400}`, `[]`, `null`, `{"jsonrpc":"2.0","id":null,"error":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		res, ok, err := parseRPCResponse(in, 1)
		if err == nil && ok && (len(res) == 0 || !json.Valid(res)) {
			t.Fatalf("ok without a valid result: %q", res)
		}
		if err != nil {
			var ce *classError
			var re *RPCError
			if !errors.As(err, &ce) && !errors.As(err, &re) {
				t.Fatalf("unclassified error %v", err)
			}
			return
		}
		if ok {
			// Whatever the result, the MCP-level parsers must not panic.
			_, _ = parseInitializeResult(res)
			if p, err := parseToolsPage(res); err == nil {
				for _, raw := range p.Tools {
					_, _ = toolFromJSON(raw)
				}
			}
		}
	})
}
