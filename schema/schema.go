// Package schema holds the message and row types shared by producers (ingest/),
// processors (processors/), the store (sql/) and the API (api/).
//
// Everything that crosses a Kafka topic is defined here, so a producer and its
// consumers can never disagree about a field, and every topic is a row of one
// table (topics.go: name, partitions, key, cleanup policy, value type, who
// writes and who reads), from which the topics are created. Values are JSON
// on the wire; every message carries its event time, and is keyed as its
// topic's row says. Every value type has a Validate method and decodes
// through Decode (decode.go), so each consumer refuses bad input the same
// way, with a reason code for the dlq.
//
// Files: schema.go (registry records, drift events, snapshots, dead
// letters), health.go (probe requests and checks), github.go (GitHub
// observations), incidents.go (curated incidents), outputs.go (what the
// processors conclude: drift, incident and provenance state, owner bursts,
// base rates, trust records, publications, progress markers), repo.go (the
// repository key every stage agrees on), topics.go, decode.go.
package schema

import (
	"encoding/json"
	"time"
)

// ServerDetail is the registry's ServerDetail (v0.1), with the fields the
// pipeline reads. Unknown fields are kept in Entry.Server (raw).
type ServerDetail struct {
	Schema      string      `json:"$schema,omitempty"`
	Name        string      `json:"name"`
	Description string      `json:"description,omitempty"`
	Title       string      `json:"title,omitempty"`
	Version     string      `json:"version,omitempty"`
	Repository  *Repository `json:"repository,omitempty"`
	WebsiteURL  string      `json:"websiteUrl,omitempty"`
	Packages    []Package   `json:"packages,omitempty"`
	Remotes     []Remote    `json:"remotes,omitempty"`
}

// Repository is where the source lives. Real data has `{}` and `{"url":""}`.
type Repository struct {
	URL       string `json:"url,omitempty"`
	Source    string `json:"source,omitempty"`
	ID        string `json:"id,omitempty"`
	Subfolder string `json:"subfolder,omitempty"`
}

// Package is a locally installed distribution of the server.
type Package struct {
	RegistryType         string     `json:"registryType,omitempty"`
	RegistryBaseURL      string     `json:"registryBaseUrl,omitempty"`
	Identifier           string     `json:"identifier,omitempty"`
	Version              string     `json:"version,omitempty"`
	RuntimeHint          string     `json:"runtimeHint,omitempty"`
	Transport            *Transport `json:"transport,omitempty"`
	EnvironmentVariables []KeyValue `json:"environmentVariables,omitempty"`
}

// Transport of a package.
type Transport struct {
	Type    string     `json:"type,omitempty"`
	URL     string     `json:"url,omitempty"`
	Headers []KeyValue `json:"headers,omitempty"`
}

// Remote is a hosted endpoint.
type Remote struct {
	Type    string     `json:"type,omitempty"`
	URL     string     `json:"url,omitempty"`
	Headers []KeyValue `json:"headers,omitempty"`
}

// KeyValue is an environment variable or a header declaration.
// IsRequired/IsSecret are pointers: absent differs from false (SPEC §3 auth ease).
type KeyValue struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	IsRequired  *bool  `json:"isRequired,omitempty"`
	IsSecret    *bool  `json:"isSecret,omitempty"`
	Default     string `json:"default,omitempty"`
	Value       string `json:"value,omitempty"`
}

// OfficialMeta is `_meta["io.modelcontextprotocol.registry/official"]`,
// normalized from both the legacy snake_case and the v0.1 camelCase spellings.
type OfficialMeta struct {
	Status          string    `json:"status,omitempty"` // active|deprecated|deleted ("" read as active)
	StatusMessage   string    `json:"statusMessage,omitempty"`
	StatusChangedAt time.Time `json:"statusChangedAt,omitzero"`
	PublishedAt     time.Time `json:"publishedAt,omitzero"`
	UpdatedAt       time.Time `json:"updatedAt,omitzero"`
	IsLatest        bool      `json:"isLatest"`
}

// Entry is one registry record: one version of one server, as observed.
type Entry struct {
	Server ServerDetail `json:"server"`
	Meta   OfficialMeta `json:"meta"`
	// Raw is the server object as published (compacted; legacy entries are
	// reshaped to the v0.1 server object, i.e. without status and _meta).
	Raw json.RawMessage `json:"raw"`
	// ContentSHA256 is the SHA-256 (hex) of Raw plus the official metadata:
	// two observations with the same hash are the same content.
	ContentSHA256 string `json:"content_sha256"`
}

// Namespace returns the part of the name before '/'.
func (e *Entry) Namespace() string { return Namespace(e.Server.Name) }

// Namespace returns the part of a server name before '/' ("" when there is none).
func Namespace(name string) string {
	for i := 0; i < len(name); i++ {
		if name[i] == '/' {
			return name[:i]
		}
	}
	return ""
}

// Status returns the entry's status, with "" read as active.
func (e *Entry) Status() string {
	if e.Meta.Status == "" {
		return "active"
	}
	return e.Meta.Status
}

// Snapshot modes.
const (
	ModeFull        = "full"        // a whole registry listing: what it lacks may be removed
	ModeIncremental = "incremental" // updated_since: only changes; nothing is inferred removed
)

// RecordMsg is the value on registry.records. A snapshot is a run of
// Type=="record" messages followed by one Type=="snapshot_end" message with the
// same SnapshotID. The differ applies a snapshot only when its end arrives.
type RecordMsg struct {
	Type       string       `json:"type"` // "record" | "snapshot_end"
	SnapshotID string       `json:"snapshot_id"`
	Mode       string       `json:"mode"`
	ObservedAt time.Time    `json:"observed_at"`
	Entry      *Entry       `json:"entry,omitempty"`
	End        *SnapshotEnd `json:"end,omitempty"`
}

// SnapshotEnd closes a snapshot on registry.records.
type SnapshotEnd struct {
	Source  string `json:"source"`  // file name or registry base URL
	Entries int    `json:"entries"` // accepted entries published before this marker
	Names   int    `json:"names"`
	Rejects int    `json:"rejects"` // entries sent to the DLQ instead
	// Incomplete is set when the listing lacks entries its source held: it
	// could not be read to its end (truncated file, a page that failed), or
	// entries in it could not be read (no valid name, malformed, too large;
	// such an entry may be any server's). The differ treats it as partial:
	// no removals.
	Incomplete bool `json:"incomplete"`
}

// Record message types.
const (
	MsgRecord      = "record"
	MsgSnapshotEnd = "snapshot_end"
)

// Drift event kinds (SPEC §2).
const (
	KindNewServer          = "new_server"
	KindVersionAdded       = "version_added"
	KindDescriptionChanged = "description_changed"
	KindTitleChanged       = "title_changed"
	KindEndpointsChanged   = "endpoints_changed"
	KindStatusChanged      = "status_changed"
	KindRemoved            = "removed"
)

// EventKinds lists every kind in a stable order (for reports).
var EventKinds = []string{KindNewServer, KindVersionAdded, KindDescriptionChanged, KindTitleChanged, KindEndpointsChanged, KindStatusChanged, KindRemoved}

// DriftEvent is the value on registry.diffs and a row of drift_events.
type DriftEvent struct {
	ID          string    `json:"id"` // deterministic: hash of server, kind, before, after, snapshot time
	Server      string    `json:"server"`
	Namespace   string    `json:"namespace"`
	Kind        string    `json:"kind"`
	Version     string    `json:"version"` // the version concerned (the new latest, or the added version)
	Before      string    `json:"before"`
	After       string    `json:"after"`
	ObservedAt  time.Time `json:"observed_at"`
	VersionBump bool      `json:"version_bump"`
	SnapshotID  string    `json:"snapshot_id"`
}

// SnapshotSummary is the value on registry.snapshots and a row of snapshots:
// one per snapshot the differ applied.
type SnapshotSummary struct {
	ID         string         `json:"id"`
	Mode       string         `json:"mode"`
	Source     string         `json:"source"`
	ObservedAt time.Time      `json:"observed_at"`
	Entries    int            `json:"entries"`
	Names      int            `json:"names"`
	KnownNames int            `json:"known_names"` // names in the known state after applying it
	Rejects    int            `json:"rejects"`
	Partial    bool           `json:"partial"` // removals suppressed, merged into the known state
	Events     int            `json:"events"`
	Counts     map[string]int `json:"counts"`
}

// DLQMessage is the value on the dlq topic and a row of dlq: bad input with a reason.
type DLQMessage struct {
	ID         string    `json:"id"` // deterministic: hash of source, reason, key, payload
	Stage      string    `json:"stage"`
	Source     string    `json:"source"`
	Reason     string    `json:"reason"` // a reason code, see the Reason* constants
	Detail     string    `json:"detail"` // human-readable, bounded
	Key        string    `json:"key"`
	ObservedAt time.Time `json:"observed_at"`
	// Payload is the offending input, cut to MaxDLQPayload bytes; PayloadSHA256
	// and PayloadBytes describe the whole of it.
	Payload       string `json:"payload"`
	PayloadBytes  int    `json:"payload_bytes"`
	PayloadSHA256 string `json:"payload_sha256"`
}

// MaxDLQPayload bounds what a DLQ message carries of the offending input.
const MaxDLQPayload = 4096

// DLQ reason codes. Callers branch on these; keep them stable.
const (
	ReasonMalformedJSON  = "malformed_json"  // not JSON, or not the expected shape
	ReasonTruncatedJSON  = "truncated_json"  // the document ends early
	ReasonNotJSON        = "not_json"        // e.g. an HTML error page
	ReasonInvalidUTF8    = "invalid_utf8"    // bytes that are not UTF-8
	ReasonEntryTooLarge  = "entry_too_large" // an entry over the size bound
	ReasonMissingName    = "missing_name"
	ReasonInvalidName    = "invalid_name"
	ReasonDuplicateEntry = "duplicate_entry" // the same (name, version) twice in one snapshot
	ReasonBadMessage     = "bad_message"     // a bus message that does not decode
	ReasonHTTPStatus     = "http_status"     // an upstream page answered with an error status
	ReasonBodyTooLarge   = "body_too_large"
	ReasonMissingField   = "missing_field" // a field every consumer needs is empty
	ReasonInvalidValue   = "invalid_value" // a field holds a value outside its domain
	ReasonUnknownKind    = "unknown_kind"  // a drift event kind or message type we do not know
	// ReasonTooManyVersions: more versions of one name than one listing takes
	// (registry.MaxVersionsPerName).
	ReasonTooManyVersions = "too_many_versions"
)
