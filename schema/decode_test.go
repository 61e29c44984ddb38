package schema

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// healthSeeds are checks as the prober writes them, and the shapes of bad
// input the two decoders could treat differently.
func healthSeeds(t testing.TB) [][]byte {
	full := HealthCheck{
		ID: "737e310b", ObservedAt: time.Date(2026, 1, 1, 0, 0, 0, 171e6, time.UTC), ScheduledAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Server: "ai.smithery/data-crm", RemoteURL: "https://mcp.example.com/mcp", TransportDeclared: "streamable-http",
		Transport: "streamable-http", InitializeLatencyMS: 179.12, DurationMS: 363.24, HTTPStatus: 200, Outcome: OutcomeOK,
		Notes: []string{"off_spec_status"}, RetryAfterSeconds: 3, ServerInfo: &ServerInfo{Name: "x", Version: "1.0.0"},
		ProtocolVersion: "2025-06-18", Instructions: "use <b>me</b> & \u2028", ToolsListed: true, ToolsPages: 1,
		Tools: []Tool{{Name: "tool_0", Description: "Does tool_0", InputSchemaPresent: true,
			InputSchema: json.RawMessage(`{"properties":{"q":{"type":"string"}},"type":"object"}`), SHA256: "0e67"}},
		Auth:     AuthEvidence{Schemes: []string{"Bearer"}, ChallengeScheme: "Bearer", ResourceMetadataURL: "https://x/.well-known"},
		AuthKind: AuthKind("oauth"),
	}
	b, err := Marshal(full)
	if err != nil {
		t.Fatal(err)
	}
	return [][]byte{
		b,
		[]byte(`{"id":"a","observed_at":"2026-01-01T00:00:00Z","server":"s","remote_url":"u","outcome":"auth_required","tools":null,"auth":{},"auth_kind":"none"}`),
		[]byte(`{"ID":"a","Observed_At":"2026-01-01T00:00:00Z","SERVER":"s","remote_url":"u","outcome":"ok","tools":[]}`),
		[]byte(`{"id":"a","id":"b","observed_at":"2026-01-01T00:00:00Z","server":"s","remote_url":"u","outcome":"ok"}`),
		[]byte("{\"id\":\"a\xff\",\"observed_at\":\"2026-01-01T00:00:00Z\",\"server\":\"s\",\"remote_url\":\"u\",\"outcome\":\"ok\"}"),
		[]byte(`{"id":"\ud800x","observed_at":"2026-01-01T00:00:00Z","server":"s","remote_url":"u","outcome":"ok"}`),
		[]byte(`{"id":"a","observed_at":"2026-01-01T00:00:00Z","server":"s","remote_url":"u","outcome":"ok","http_status":2e2}`),
		[]byte(`{"id":"a","observed_at":"2026-01-01T00:00:00Z","server":"s","remote_url":"u","outcome":"ok","http_status":"200"}`),
		[]byte(`{"id":"a","observed_at":"2026-01-01T00:00:00Z","server":"s","remote_url":"u","outcome":"ok"} x`),
		[]byte(`{"id":"a","observed_at":"2026-01-01","server":"s","remote_url":"u","outcome":"ok"}`),
		[]byte(`{"id":"a","observed_at":"2026-01-01T00:00:00Z","server":"s","remote_url":"u","outcome":"bogus"}`),
		[]byte(`{"id":"a","observed_at":"2026-01-01T00:00:00Z","server":"s","remote_url":"u","outcome":"ok","tools":[{"input_schema":[1,{"a":null}]}]}`),
		[]byte(`{"id":"a","observed_at":"2026-01-01T00:00:00Z","server":"s","remote_url":"u","outcome":"ok","tools":[{"input_schema":nul}]}`),
		[]byte(`{"id":"a","observed_at":"2026-01-01T00:00:00Z","server":"s","remote_url":"u","outcome":"ok","tools_listed":1}`),
		[]byte(`{"id":"a","observed_at":"2026-01-01T00:00:00Z","server":"s","remote_url":"u","outcome":"ok","server_info":null,"latency":-0.0e-0}`),
		[]byte(`{"id":"a"`),
		[]byte(``),
		[]byte(`[]`),
		[]byte(`null`),
	}
}

// FuzzUnmarshalMatchesEncodingJSON: Unmarshal (json/v1 on v2 first) and
// encoding/json decode every input alike — the same value, or both refuse
// it — for the hot wire types, and Decode gives encoding/json's reason.
func FuzzUnmarshalMatchesEncodingJSON(f *testing.F) {
	for _, s := range healthSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		same[HealthCheck](t, b)
		same[GitHubObservation](t, b)
		same[DriftEvent](t, b)
		same[RecordMsg](t, b)
	})
}

// same fails t when Unmarshal and encoding/json disagree on b as a T.
func same[T any](t *testing.T, b []byte) {
	t.Helper()
	var fast, ref T
	ferr := Unmarshal(b, &fast)
	rerr := json.Unmarshal(b, &ref)
	if (ferr == nil) != (rerr == nil) {
		t.Fatalf("%T of %q: Unmarshal error %v, encoding/json error %v", fast, b, ferr, rerr)
	}
	if !reflect.DeepEqual(fast, ref) {
		t.Fatalf("%T of %q:\nUnmarshal     %+v\nencoding/json %+v", fast, b, fast, ref)
	}
}

func TestUnmarshalMatchesEncodingJSONOnSeeds(t *testing.T) {
	decoded := 0
	for _, s := range healthSeeds(t) {
		same[HealthCheck](t, s)
		if _, err := Decode[HealthCheck](s); err == nil {
			decoded++
		}
	}
	if decoded < 5 {
		t.Fatalf("only %d seeds decode and validate: the seeds no longer exercise the fast path", decoded)
	}
}
