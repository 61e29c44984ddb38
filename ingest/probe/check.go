package probe

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/forum-mcp/forum/schema"
)

// Transports a remote can declare (registry remotes[].type).
const (
	TransportStreamableHTTP = schema.TransportStreamableHTTP
	TransportSSE            = schema.TransportSSE
)

// ProtocolVersion is the MCP revision the prober asks for in initialize.
const ProtocolVersion = "2025-06-18"

// The wire types live in schema (they cross probe.requests and
// health.checks); these aliases keep this package's code short.
type (
	Outcome                   = schema.Outcome
	AuthKind                  = schema.AuthKind
	Request                   = schema.ProbeRequest
	Check                     = schema.HealthCheck
	ServerInfo                = schema.ServerInfo
	Tool                      = schema.Tool
	AuthEvidence              = schema.AuthEvidence
	DeclaredHeader            = schema.DeclaredHeader
	ProtectedResourceMetadata = schema.ProtectedResourceMetadata
)

// Outcomes (SPEC §1.3).
const (
	OutcomeOK              = schema.OutcomeOK
	OutcomeAuthRequired    = schema.OutcomeAuthRequired
	OutcomeHandshakeFailed = schema.OutcomeHandshakeFailed
	OutcomeUnreachable     = schema.OutcomeUnreachable
	OutcomeRateLimited     = schema.OutcomeRateLimited
	OutcomeNotChecked      = schema.OutcomeNotChecked
)

// Auth kinds (SPEC §3 auth ease, remote servers).
const (
	AuthNone    = schema.AuthNone
	AuthOAuth   = schema.AuthOAuth
	AuthStatic  = schema.AuthStatic
	AuthUnknown = schema.AuthUnknown
)

// Notes a check may carry (Check.Notes). They are bare codes so consumers
// can match them; the details are in the check's own fields.
const (
	// NoteOffSpecStatus: a valid JSON-RPC answer came under a non-2xx HTTP
	// status; the server speaks MCP and was judged by the answer
	// (HTTPStatus holds initialize's status).
	NoteOffSpecStatus = "off_spec_status"
	// NoteTransportMismatch: the declared transport failed and the other
	// one answered initialize (TransportDeclared vs Transport).
	NoteTransportMismatch = "transport_mismatch"
)

// MaxErrorMessage bounds Check.ErrorMessage (bytes, cut on a rune boundary).
const MaxErrorMessage = 512

// CheckID is the deterministic id of a check: the same server, URL and
// scheduled slot (Check.ScheduledAt) always give the same id, so a replayed
// probe request overwrites rather than duplicates — even though the replay
// runs, and is observed, later.
func CheckID(server, url string, observedAt time.Time) string {
	h := sha256.New()
	h.Write([]byte(server))
	h.Write([]byte{0})
	h.Write([]byte(url))
	h.Write([]byte{0})
	h.Write([]byte(observedAt.UTC().Format(time.RFC3339Nano)))
	return hex.EncodeToString(h.Sum(nil))
}

// DeriveAuthKind applies SPEC §3 auth ease (remote servers), first rule wins:
//  1. handshake ok without credentials → none (even when the registry
//     declares a header: the probe proved it is not needed to connect);
//  2. a Bearer challenge, a resource_metadata pointer, or protected-resource
//     metadata found → oauth;
//  3. 401/403 without a Bearer challenge, or a declared required/secret
//     header → static;
//  4. otherwise → unknown (unreachable, broken, or an auth error with no
//     evidence of which kind).
func DeriveAuthKind(outcome Outcome, httpStatus int, ev AuthEvidence) AuthKind {
	if outcome == OutcomeOK {
		return AuthNone
	}
	if hasBearer(ev) || ev.ResourceMetadataURL != "" || ev.ResourceMetadata != nil {
		return AuthOAuth
	}
	if outcome == OutcomeAuthRequired && (httpStatus == 401 || httpStatus == 403) {
		return AuthStatic
	}
	if len(ev.DeclaredHeaders) > 0 {
		return AuthStatic
	}
	return AuthUnknown
}

func hasBearer(ev AuthEvidence) bool {
	for _, s := range ev.Schemes {
		if strings.EqualFold(s, "bearer") {
			return true
		}
	}
	return strings.EqualFold(ev.ChallengeScheme, "bearer")
}

// declaredHeaders keeps the registry headers that are required or secret.
func declaredHeaders(hs []schema.KeyValue) []DeclaredHeader {
	var out []DeclaredHeader
	for _, h := range hs {
		req := h.IsRequired != nil && *h.IsRequired
		sec := h.IsSecret != nil && *h.IsSecret
		if req || sec {
			out = append(out, DeclaredHeader{Name: h.Name, Required: req, Secret: sec})
		}
	}
	return out
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i], true
}
