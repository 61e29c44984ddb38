package probe

import (
	"errors"
	"fmt"
	"time"

	"github.com/forum-mcp/forum/schema"
)

// ErrorClass is the machine-readable reason of a failed (or partial) check
// (schema.ErrorClass: it crosses health.checks). Values are stable: they
// land in health_checks and in metrics labels.
type ErrorClass = schema.ErrorClass

// Error classes. The comment names the outcome each one leads to.
const (
	ClassNone                 ErrorClass = ""
	ClassURLTemplate          ErrorClass = "url_template"            // handshake_failed: {placeholder} in the URL, never requested
	ClassInvalidURL           ErrorClass = "invalid_url"             // handshake_failed
	ClassUnsupportedTransport ErrorClass = "unsupported_transport"   // not_checked (stdio, unknown)
	ClassCanceled             ErrorClass = "canceled"                // not_checked: the caller gave up (shutdown)
	ClassBlockedAddress       ErrorClass = "blocked_address"         // unreachable: SSRF guard refused the address
	ClassDNS                  ErrorClass = "dns"                     // unreachable
	ClassConnect              ErrorClass = "connect"                 // unreachable: refused, reset, no route
	ClassTLS                  ErrorClass = "tls"                     // unreachable
	ClassTimeout              ErrorClass = "timeout"                 // unreachable: the whole-handshake budget ran out
	ClassAuth                 ErrorClass = "auth"                    // auth_required: HTTP 401/403
	ClassJSONRPCAuth          ErrorClass = "jsonrpc_auth"            // auth_required: JSON-RPC error that reads as an auth error
	ClassAuthMessage          ErrorClass = "auth_message"            // auth_required: another 4xx whose body says a credential is missing or invalid
	ClassRateLimited          ErrorClass = "rate_limited"            // rate_limited: 429, or 503 with Retry-After (refused for load)
	ClassBackoff              ErrorClass = "backoff"                 // rate_limited: not requested, the host's Retry-After has not passed
	ClassHTTPStatus           ErrorClass = "http_status"             // handshake_failed: other 4xx/5xx
	ClassContentType          ErrorClass = "unexpected_content_type" // handshake_failed: HTML and friends
	ClassInvalidJSON          ErrorClass = "invalid_json"            // handshake_failed: body is not JSON
	ClassInvalidJSONRPC       ErrorClass = "invalid_jsonrpc"         // handshake_failed: JSON, but not the JSON-RPC answer expected
	ClassJSONRPCError         ErrorClass = "jsonrpc_error"           // handshake_failed: JSON-RPC error on initialize
	ClassProtocol             ErrorClass = "protocol_error"          // handshake_failed: valid JSON-RPC, invalid MCP
	ClassBodyTooLarge         ErrorClass = "body_too_large"          // handshake_failed: over the body cap
	ClassRedirect             ErrorClass = "redirect"                // handshake_failed: too many or non-HTTP redirects
	ClassRead                 ErrorClass = "read_error"              // handshake_failed: the body broke off
	ClassToolsList            ErrorClass = "tools_list_failed"       // ok: handshake fine, tools/list failed (tools_listed=false)
)

// Sentinel errors callers and tests can branch on with errors.Is.
var (
	ErrURLTemplate          = errors.New("url has unfilled {placeholders}")
	ErrUnsupportedTransport = errors.New("unsupported transport")
	ErrBlockedAddress       = errors.New("address blocked by SSRF guard")
	ErrBodyTooLarge         = errors.New("response body over the cap")
	ErrNotMCP               = errors.New("not an MCP response")
)

// BlockedError says which address the guard refused and why.
type BlockedError struct {
	Host   string // as dialled (name or literal)
	Addr   string // the offending IP
	Reason string // e.g. "loopback", "link-local", "private"
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("dial %s: %s is %s: %v", e.Host, e.Addr, e.Reason, ErrBlockedAddress)
}

func (e *BlockedError) Unwrap() error { return ErrBlockedAddress }

// statusError is a non-2xx HTTP answer.
type statusError struct {
	Status int
	Step   string // "initialize", "initialized", "tools/list", "sse_get"
	Detail string // what the body said (bounded), when it said something
}

func (e *statusError) Error() string {
	if e.Detail != "" {
		return fmt.Sprintf("%s: HTTP %d: %s", e.Step, e.Status, e.Detail)
	}
	return fmt.Sprintf("%s: HTTP %d", e.Step, e.Status)
}

// rateLimitError is a refusal for load: 429, or 503 with Retry-After.
type rateLimitError struct {
	Status     int
	Step       string
	RetryAfter time.Duration // 0 when the server gave none (or one already past)
	HasRetry   bool          // a usable Retry-After was given
}

func (e *rateLimitError) Error() string {
	if e.HasRetry {
		return fmt.Sprintf("%s: HTTP %d, Retry-After %s", e.Step, e.Status, e.RetryAfter)
	}
	return fmt.Sprintf("%s: HTTP %d without Retry-After", e.Step, e.Status)
}

// classError carries a class picked at the failure site (content type,
// protocol errors) so classify does not have to guess from the text.
type classError struct {
	Class ErrorClass
	Err   error
}

func (e *classError) Error() string { return e.Err.Error() }
func (e *classError) Unwrap() error { return e.Err }

func withClass(c ErrorClass, format string, args ...any) error {
	return &classError{Class: c, Err: fmt.Errorf(format, args...)}
}
