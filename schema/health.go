package schema

import (
	"encoding/json"
	"time"
)

// The probe wire types: ProbeRequest is the value on probe.requests,
// HealthCheck the value on health.checks (ingest/probe produces both, the
// health sink and the scorer read them). ingest/probe keeps short aliases
// (probe.Check, probe.Request) for its own code.

// Transports a remote can declare (registry remotes[].type).
const (
	TransportStreamableHTTP = "streamable-http"
	TransportSSE            = "sse"
)

// ErrorClass is the machine-readable reason of a failed (or partial) check;
// the values are ingest/probe's Class* constants. Stable: they land in
// health_checks and in metrics labels.
type ErrorClass string

// Outcome is the health class of one check (SPEC §1.3).
type Outcome string

// Outcomes.
const (
	OutcomeOK              Outcome = "ok"
	OutcomeAuthRequired    Outcome = "auth_required"
	OutcomeHandshakeFailed Outcome = "handshake_failed"
	OutcomeUnreachable     Outcome = "unreachable"
	OutcomeRateLimited     Outcome = "rate_limited" // refused for load (429, or 503 with Retry-After): counts neither way
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

// ProbeRequest asks for one probe. It is the value on probe.requests.
type ProbeRequest struct {
	Server        string     `json:"server"`
	URL           string     `json:"url"`
	Transport     string     `json:"transport"` // streamable-http | sse
	RemoteHeaders []KeyValue `json:"remote_headers,omitempty"`
	ObservedAt    time.Time  `json:"observed_at"` // zero: the prober's clock at start
}

// HealthCheck is the result of one probe: the value on health.checks and one row of
// health_checks. Unknowns are zero values, never guesses.
type HealthCheck struct {
	ID string `json:"id"` // sha256(server, url, scheduled_at), hex
	// ObservedAt is when the probe ran (its handshake began): what windows,
	// "newest" and evidence times read.
	ObservedAt time.Time `json:"observed_at"`
	// ScheduledAt is the slot the request was scheduled for (up to a
	// scheduler tick before ObservedAt; the prober's clock when the request
	// had none). The ID derives from it, so a redelivered request, probed
	// again later, overwrites its check instead of adding one.
	ScheduledAt       time.Time `json:"scheduled_at,omitzero"`
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
	// Notes are what the probe noticed beyond the outcome (e.g.
	// off_spec_status: a valid initialize result under a non-2xx status;
	// transport_mismatch: declared streamable-http, answered as legacy SSE).
	Notes []string `json:"notes,omitempty"`
	// RetryAfterSeconds is the server's Retry-After on a rate_limited
	// answer (0 when it gave none).
	RetryAfterSeconds int `json:"retry_after_s,omitempty"`

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
