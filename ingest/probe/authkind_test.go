package probe

import (
	"testing"

	"github.com/forum-mcp/forum/schema"
)

func TestDeriveAuthKind(t *testing.T) {
	bearer := AuthEvidence{Schemes: []string{"Bearer"}, ChallengeScheme: "Bearer"}
	basic := AuthEvidence{Schemes: []string{"Basic"}, ChallengeScheme: "Basic"}
	pointer := AuthEvidence{ResourceMetadataURL: "https://x/.well-known/oauth-protected-resource"}
	md := AuthEvidence{ResourceMetadata: &ProtectedResourceMetadata{Resource: "https://x"}}
	hdr := AuthEvidence{DeclaredHeaders: []DeclaredHeader{{Name: "X-Key", Secret: true}}}
	for _, tc := range []struct {
		name    string
		outcome Outcome
		status  int
		ev      AuthEvidence
		want    AuthKind
	}{
		{"ok-no-creds", OutcomeOK, 200, AuthEvidence{}, AuthNone},
		{"ok-despite-declared-header", OutcomeOK, 200, hdr, AuthNone},
		{"401-bearer", OutcomeAuthRequired, 401, bearer, AuthOAuth},
		{"401-bearer-lowercase", OutcomeAuthRequired, 401, AuthEvidence{Schemes: []string{"bearer"}}, AuthOAuth},
		{"401-basic-then-bearer", OutcomeAuthRequired, 401, AuthEvidence{Schemes: []string{"Basic", "Bearer"}, ChallengeScheme: "Bearer"}, AuthOAuth},
		{"401-resource-metadata-pointer", OutcomeAuthRequired, 401, pointer, AuthOAuth},
		{"401-well-known-metadata", OutcomeAuthRequired, 401, md, AuthOAuth},
		{"403-bearer", OutcomeAuthRequired, 403, bearer, AuthOAuth},
		{"401-no-challenge", OutcomeAuthRequired, 401, AuthEvidence{}, AuthStatic},
		{"401-basic", OutcomeAuthRequired, 401, basic, AuthStatic},
		{"403-plain", OutcomeAuthRequired, 403, AuthEvidence{}, AuthStatic},
		{"jsonrpc-auth-no-evidence", OutcomeAuthRequired, 200, AuthEvidence{}, AuthUnknown},
		{"jsonrpc-auth-declared-header", OutcomeAuthRequired, 200, hdr, AuthStatic},
		{"unreachable-declared-header", OutcomeUnreachable, 0, hdr, AuthStatic},
		{"unreachable", OutcomeUnreachable, 0, AuthEvidence{}, AuthUnknown},
		{"handshake-failed", OutcomeHandshakeFailed, 500, AuthEvidence{}, AuthUnknown},
		{"not-checked", OutcomeNotChecked, 0, AuthEvidence{}, AuthUnknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DeriveAuthKind(tc.outcome, tc.status, tc.ev); got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestDeclaredHeaders(t *testing.T) {
	yes, no := true, false
	got := declaredHeaders([]schema.KeyValue{
		{Name: "A", IsRequired: &yes},
		{Name: "B", IsSecret: &yes, IsRequired: &no},
		{Name: "C", IsRequired: &no},
		{Name: "D"}, // absent flags: neither required nor secret
	})
	if len(got) != 2 || got[0] != (DeclaredHeader{Name: "A", Required: true}) || got[1] != (DeclaredHeader{Name: "B", Secret: true}) {
		t.Fatalf("%+v", got)
	}
}

func TestWellKnownPRM(t *testing.T) {
	for _, tc := range []struct{ in, want0, want1 string }{
		{"https://h.example/mcp", "https://h.example/.well-known/oauth-protected-resource/mcp", "https://h.example/.well-known/oauth-protected-resource"},
		{"https://h.example/", "https://h.example/.well-known/oauth-protected-resource", ""},
		{"https://h.example:8443/a/b/", "https://h.example:8443/.well-known/oauth-protected-resource/a/b", "https://h.example:8443/.well-known/oauth-protected-resource"},
	} {
		u := mustURL(t, tc.in)
		got := wellKnownPRM(u)
		if got[0] != tc.want0 || (tc.want1 != "" && got[1] != tc.want1) || (tc.want1 == "" && len(got) != 1) {
			t.Fatalf("%s: %v", tc.in, got)
		}
	}
}
