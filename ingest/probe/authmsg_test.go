package probe

import (
	"strings"
	"testing"
)

func TestAuthMessage(t *testing.T) {
	for _, tc := range []struct {
		body, ct string
		want     bool
	}{
		// Real refusals seen under 400 (and friends).
		{"Bearer token is required", "text/plain", true},
		{`{"error":"invalid api key"}`, "application/json", true},
		{"Unauthorized", "", true},
		{"missing authorization", "text/plain", true},
		{`{"error":"invalid_token","error_description":"The access token expired"}`, "application/json", true},
		{"No API key provided. Pass it in the X-API-Key header.", "text/plain", true},
		{"Missing x-api-key header", "text/plain", true},
		{"Authentication required", "text/plain", true},
		{"This endpoint requires authentication", "text/plain", true},
		{"Authorization header is missing or malformed", "text/plain", true},
		{"No token provided", "text/plain", true},
		{"Invalid credentials", "text/plain", true},
		{"UNAUTHENTICATED: request lacks valid credentials", "application/json", true},
		{"Access denied", "text/plain", true},
		// Refusals that are about something else.
		{"sessionid must be provided", "text/plain", false}, // the go-sdk legacy SSE handler, to a POST
		{"Bad Request: No valid session ID provided", "text/plain", false},
		{"Invalid or missing session ID", "text/plain", false},
		{"Not Found", "text/plain", false},
		{"Method Not Allowed", "text/plain", false},
		{"Accept must contain both 'application/json' and 'text/event-stream'", "text/plain", false},
		{"missing required parameter: protocolVersion", "application/json", false},
		{"max_tokens is required", "application/json", false},
		{"Content-Type must be 'application/json'", "text/plain", false},
		{"", "", false},
		// HTML error pages are never read for auth words.
		{"<!DOCTYPE html><html><a href=/login>Sign in required</a> Unauthorized</html>", "", false},
		{"<p>Unauthorized</p>", "text/html; charset=utf-8", false},
	} {
		if got := authMessage([]byte(tc.body), tc.ct); got != tc.want {
			t.Errorf("authMessage(%q, %q) = %v, want %v", tc.body, tc.ct, got, tc.want)
		}
	}
}

// The phrase is found wherever it sits in a body under the cap, not only in
// a first chunk.
func TestAuthMessageLateInBody(t *testing.T) {
	body := strings.Repeat("x", 900<<10) + "\nBearer token is required\n"
	if !authMessage([]byte(body), "text/plain") {
		t.Fatal("an auth message 900 KiB into the body was missed")
	}
}

func FuzzAuthMessage(f *testing.F) {
	for _, s := range []string{"Bearer token is required", "invalid api key", "Unauthorized", "missing authorization",
		"sessionid must be provided", "<html>Unauthorized</html>", `{"error":"invalid_token"}`, "no valid session id", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got := authMessage([]byte(in), "text/plain")
		// ASCII case does not matter.
		if isASCII(in) && authMessage([]byte(strings.ToUpper(in)), "text/plain") != got {
			t.Fatalf("%q: verdict changes with case", in)
		}
		// A plain refusal on its own line is found whatever surrounds it,
		// unless the body reads as HTML.
		if !looksLikeHTML("text/plain", []byte(in)) && !authMessage([]byte(in+"\nBearer token is required\n"), "text/plain") {
			t.Fatalf("%q: appended auth line missed", in)
		}
		if authMessage([]byte(in), "text/html") {
			t.Fatalf("%q: HTML read as an auth message", in)
		}
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
