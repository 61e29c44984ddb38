package probe

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/forum-mcp/forum/schema"
)

// Transports a remote can declare (registry remotes[].type).
const (
	TransportStreamableHTTP = "streamable-http"
	TransportSSE            = "sse"
)

// ProtocolVersion is the MCP revision the prober asks for in initialize.
const ProtocolVersion = "2025-06-18"

// Outcome is the health class of one check (SPEC §1.3).
type Outcome string

// Outcomes.
const (
	OutcomeOK              Outcome = "ok"
	OutcomeAuthRequired    Outcome = "auth_required"
	OutcomeHandshakeFailed Outcome = "handshake_failed"
	OutcomeUnreachable     Outcome = "unreachable"
	OutcomeNotChecked      Outcome = "not_checked"
)

// AuthKind is the auth-ease class a check supports (SPEC §3 auth ease,
// remote servers): none 15, oauth 12, static 6, unknown 4.
type AuthKind string

// Auth kinds.
const (
	AuthNone    AuthKind = "none"
	AuthOAuth   AuthKind = "oauth"
	AuthStatic  AuthKind = "static"
	AuthUnknown AuthKind = "unknown"
)

// MaxErrorMessage bounds Check.ErrorMessage (bytes, cut on a rune boundary).
const MaxErrorMessage = 512

// Request asks for one probe. It is the value on probe.requests.
type Request struct {
	Server        string            `json:"server"`
	URL           string            `json:"url"`
	Transport     string            `json:"transport"` // streamable-http | sse
	RemoteHeaders []schema.KeyValue `json:"remote_headers,omitempty"`
	ObservedAt    time.Time         `json:"observed_at"` // zero: the prober's clock at start
}

// Check is the result of one probe: the value on health.checks and one row of
// health_checks. Unknowns are zero values, never guesses.
type Check struct {
	ID                string    `json:"id"` // sha256(server, url, observed_at), hex
	ObservedAt        time.Time `json:"observed_at"`
	Server            string    `json:"server"`
	RemoteURL         string    `json:"remote_url"`
	TransportDeclared string    `json:"transport_declared"`
	Transport         string    `json:"transport"` // used; differs after the sse→streamable-http fallback
	// InitializeLatencyMS is from writing the initialize request (connection
	// set-up included) to the parsed initialize answer. 0 when never answered.
	InitializeLatencyMS float64 `json:"initialize_latency_ms"`
	DurationMS          float64 `json:"duration_ms"` // the whole probe
	HTTPStatus          int     `json:"http_status"` // of the initialize POST (or of the SSE GET when that failed)

	Outcome      Outcome    `json:"outcome"`
	ErrorClass   ErrorClass `json:"error_class,omitempty"`
	ErrorMessage string     `json:"error_message,omitempty"`

	ServerInfo      *ServerInfo `json:"server_info,omitempty"`
	ProtocolVersion string      `json:"protocol_version,omitempty"`
	Instructions    string      `json:"instructions,omitempty"` // capped at MaxTextBytes; the static scan reads it

	ToolsListed    bool   `json:"tools_listed"`
	ToolsPages     int    `json:"tools_pages"`
	ToolsTruncated bool   `json:"tools_truncated"` // page cap hit: the list is a prefix
	Tools          []Tool `json:"tools"`

	Auth     AuthEvidence `json:"auth"`
	AuthKind AuthKind     `json:"auth_kind"`
}

// ServerInfo is initialize's serverInfo.
type ServerInfo struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// Tool is one entry of tools/list. SHA256 covers the tool's whole definition
// as received (canonical JSON: keys sorted, no insignificant whitespace), so
// any change to it shows up as drift. Long texts are capped; the hash is not.
type Tool struct {
	Name               string `json:"name"`
	Title              string `json:"title,omitempty"`
	Description        string `json:"description"`
	InputSchemaPresent bool   `json:"input_schema_present"` // inputSchema is a JSON object
	// InputSchema is the canonical schema, omitted when over MaxSchemaBytes
	// (InputSchemaTruncated set): the static scan reads it.
	InputSchema          json.RawMessage `json:"input_schema,omitempty"`
	InputSchemaTruncated bool            `json:"input_schema_truncated,omitempty"`
	DescriptionTruncated bool            `json:"description_truncated,omitempty"`
	SHA256               string          `json:"sha256"`
}

// AuthEvidence is what the probe saw about authentication.
type AuthEvidence struct {
	// Schemes lists every WWW-Authenticate challenge scheme, in order.
	Schemes []string `json:"schemes,omitempty"`
	// ChallengeScheme is the scheme recorded: Bearer when offered, else the first.
	ChallengeScheme string `json:"challenge_scheme,omitempty"`
	Realm           string `json:"realm,omitempty"`
	Scope           string `json:"scope,omitempty"`
	Error           string `json:"error,omitempty"` // Bearer error= (RFC 6750)
	// ResourceMetadataURL is the challenge's resource_metadata pointer, or the
	// well-known URL that answered when the 401 had no challenge.
	ResourceMetadataURL    string                     `json:"resource_metadata_url,omitempty"`
	ResourceMetadataSource string                     `json:"resource_metadata_source,omitempty"` // challenge | well_known
	ResourceMetadata       *ProtectedResourceMetadata `json:"resource_metadata,omitempty"`
	ResourceMetadataError  string                     `json:"resource_metadata_error,omitempty"`
	// DeclaredHeaders are the registry entry's required or secret headers.
	DeclaredHeaders []DeclaredHeader `json:"declared_headers,omitempty"`
}

// DeclaredHeader is a remote header the registry entry says is required or secret.
type DeclaredHeader struct {
	Name     string `json:"name"`
	Required bool   `json:"required"`
	Secret   bool   `json:"secret"`
}

// ProtectedResourceMetadata is the RFC 9728 document (the fields we score on).
type ProtectedResourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers,omitempty"`
	ScopesSupported        []string `json:"scopes_supported,omitempty"`
	BearerMethodsSupported []string `json:"bearer_methods_supported,omitempty"`
	ResourceName           string   `json:"resource_name,omitempty"`
}

// CheckID is the deterministic id of a check: the same server, URL and
// observation time always give the same id, so a replayed probe request
// overwrites rather than duplicates.
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
	if ev.hasBearer() || ev.ResourceMetadataURL != "" || ev.ResourceMetadata != nil {
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

func (ev AuthEvidence) hasBearer() bool {
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
