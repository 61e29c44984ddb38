package probe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
)

// rpcRequest is an outgoing JSON-RPC 2.0 request or notification (ID nil).
type rpcRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      *int64 `json:"id,omitempty"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
}

// rpcMessage is any incoming JSON-RPC 2.0 message; only responses matter.
type rpcMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Result  json.RawMessage `json:"result"`
	Error   *RPCError       `json:"error"`
}

// RPCError is a JSON-RPC error object.
type RPCError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string {
	return fmt.Sprintf("json-rpc error %d: %s", e.Code, e.Message)
}

// authWords are the words servers use when they reject a request for lack
// of credentials inside a JSON-RPC error instead of with HTTP 401.
var authWords = regexp.MustCompile(`(?i)unauthori[sz]ed|unauthenticated|authenticat|authori[sz]ation|forbidden|access[ _-]?token|api[ _-]?key|credential|bearer|login required|not logged in`)

// isAuth reports whether the error reads as "credentials needed".
func (e *RPCError) isAuth() bool {
	if e.Code == 401 || e.Code == 403 {
		return true
	}
	// Data is searched whole (it is inside a body already capped at 1 MiB):
	// SPEC §1.3 allows no truncation before classification below that cap.
	return authWords.MatchString(e.Message) || authWords.Match(e.Data)
}

// errNoResponse means the body held JSON-RPC messages, none answering us.
var errNoResponse = withClass(ClassInvalidJSONRPC, "no JSON-RPC response with the request id")

// parseRPCResponse finds the response to request id in one JSON body, which
// may be a single message or a batch. It returns the result, or the
// server's error as *RPCError, or a classError (invalid_json,
// invalid_jsonrpc). ok=false with a nil error means the body holds only
// other messages (notifications, server requests): keep reading the stream.
func parseRPCResponse(body []byte, id int64) (result json.RawMessage, ok bool, err error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil, false, withClass(ClassInvalidJSON, "empty body")
	}
	var msgs []rpcMessage
	if body[0] == '[' {
		if err := json.Unmarshal(body, &msgs); err != nil {
			return nil, false, jsonErr(body, err)
		}
	} else {
		var m rpcMessage
		if err := json.Unmarshal(body, &m); err != nil {
			return nil, false, jsonErr(body, err)
		}
		msgs = []rpcMessage{m}
	}
	for _, m := range msgs {
		if m.Method != "" && m.Result == nil && m.Error == nil {
			continue // a notification or a request from the server
		}
		if !idMatches(m.ID, id) {
			if len(m.ID) == 0 || string(m.ID) == "null" {
				// An error with a null id is the server's answer to a
				// request it could not parse: ours.
				if m.Error != nil {
					return nil, true, m.Error
				}
			}
			continue
		}
		if m.JSONRPC != "2.0" {
			return nil, false, withClass(ClassInvalidJSONRPC, "jsonrpc member is %q, want \"2.0\"", clip(m.JSONRPC, 16))
		}
		if m.Error != nil {
			return nil, true, m.Error
		}
		if m.Result == nil || string(m.Result) == "null" {
			return nil, false, withClass(ClassInvalidJSONRPC, "response without result or error")
		}
		return m.Result, true, nil
	}
	return nil, false, nil
}

func jsonErr(body []byte, err error) error {
	if json.Valid(body) { // JSON, but not a JSON-RPC message
		return &classError{Class: ClassInvalidJSONRPC, Err: fmt.Errorf("not a JSON-RPC message: %w", err)}
	}
	return &classError{Class: ClassInvalidJSON, Err: fmt.Errorf("invalid JSON: %w", err)}
}

// idMatches compares a response id with ours. Some servers echo numeric ids
// as strings; accept that, it is still our answer.
func idMatches(raw json.RawMessage, id int64) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return false
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return false
		}
		return s == strconv.FormatInt(id, 10)
	}
	var n json.Number
	if json.Unmarshal(raw, &n) != nil {
		return false
	}
	v, err := n.Int64()
	return err == nil && v == id
}

func clip(s string, n int) string {
	t, _ := truncate(s, n)
	return t
}

// initializeResult is the part of initialize's result we record.
type initializeResult struct {
	ProtocolVersion string          `json:"protocolVersion"`
	Capabilities    json.RawMessage `json:"capabilities"`
	ServerInfo      *ServerInfo     `json:"serverInfo"`
	Instructions    string          `json:"instructions"`
}

// parseInitializeResult validates the MCP shape of initialize's result.
func parseInitializeResult(raw json.RawMessage) (initializeResult, error) {
	var r initializeResult
	if err := json.Unmarshal(raw, &r); err != nil {
		return r, withClass(ClassProtocol, "initialize result: %v", err)
	}
	if r.ProtocolVersion == "" {
		return r, withClass(ClassProtocol, "initialize result without protocolVersion")
	}
	if len(r.Capabilities) > 0 && bytes.TrimSpace(r.Capabilities)[0] != '{' {
		return r, withClass(ClassProtocol, "initialize capabilities is not an object")
	}
	return r, nil
}

// toolsPage is one tools/list result; tools stay raw for hashing.
type toolsPage struct {
	Tools      []json.RawMessage `json:"tools"`
	NextCursor *string           `json:"nextCursor"`
}

func parseToolsPage(raw json.RawMessage) (toolsPage, error) {
	var p toolsPage
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, withClass(ClassProtocol, "tools/list result: %v", err)
	}
	if p.Tools == nil {
		return p, withClass(ClassProtocol, "tools/list result without tools")
	}
	return p, nil
}
