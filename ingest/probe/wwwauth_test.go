package probe

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseWWWAuthenticate(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []string
		want []Challenge
	}{
		{"bearer-rm", []string{`Bearer realm="mcp", resource_metadata="https://x.example/.well-known/oauth-protected-resource"`},
			[]Challenge{{Scheme: "Bearer", Params: map[string]string{"realm": "mcp", "resource_metadata": "https://x.example/.well-known/oauth-protected-resource"}}}},
		{"bare-scheme", []string{"Bearer"}, []Challenge{{Scheme: "Bearer"}}},
		{"token-value", []string{`Bearer error=invalid_token, scope="a b"`},
			[]Challenge{{Scheme: "Bearer", Params: map[string]string{"error": "invalid_token", "scope": "a b"}}}},
		{"two-challenges", []string{`Basic realm="x", Bearer realm="y"`},
			[]Challenge{{Scheme: "Basic", Params: map[string]string{"realm": "x"}}, {Scheme: "Bearer", Params: map[string]string{"realm": "y"}}}},
		{"two-headers", []string{`Basic realm="x"`, `Bearer`},
			[]Challenge{{Scheme: "Basic", Params: map[string]string{"realm": "x"}}, {Scheme: "Bearer"}}},
		{"token68", []string{"Negotiate YIIB/g==, Basic"}, []Challenge{{Scheme: "Negotiate", Token68: "YIIB/g=="}, {Scheme: "Basic"}}},
		{"escapes", []string{`Bearer realm="a \"q\" \\ b"`}, []Challenge{{Scheme: "Bearer", Params: map[string]string{"realm": `a "q" \ b`}}}},
		{"case-and-spaces", []string{`bearer  Realm = "x" ,  SCOPE="y"`}, []Challenge{{Scheme: "bearer", Params: map[string]string{"realm": "x", "scope": "y"}}}},
		{"unterminated-quote", []string{`Bearer realm="x`}, []Challenge{{Scheme: "Bearer", Params: map[string]string{"realm": "x"}}}},
		{"empty", []string{""}, nil},
		{"junk", []string{`"=,=,"`}, nil},
		{"comma-in-quoted", []string{`Bearer realm="a,b", error="e"`}, []Challenge{{Scheme: "Bearer", Params: map[string]string{"realm": "a,b", "error": "e"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseWWWAuthenticate(tc.in); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

func TestAuthEvidenceFrom(t *testing.T) {
	var ev AuthEvidence
	authEvidenceFrom(&ev, parseWWWAuthenticate([]string{`Basic realm="b", Bearer realm="r", scope="s", error="invalid_token", resource_metadata="https://m"`}))
	want := AuthEvidence{Schemes: []string{"Basic", "Bearer"}, ChallengeScheme: "Bearer", Realm: "r", Scope: "s", Error: "invalid_token",
		ResourceMetadataURL: "https://m", ResourceMetadataSource: "challenge"}
	if !reflect.DeepEqual(ev, want) {
		t.Fatalf("%+v", ev)
	}
}

func FuzzWWWAuthenticate(f *testing.F) {
	for _, s := range []string{
		`Bearer realm="mcp", resource_metadata="https://x/.well-known/oauth-protected-resource"`,
		`Basic realm="x", Bearer error=invalid_token`,
		`Negotiate YIIB/g==, Basic`,
		`Bearer realm="a \"q\" \\ b"`,
		`Bearer realm="x`,
		`, ,Bearer ,realm=x`,
		`Digest realm="r", qop="auth,auth-int", nonce="n", opaque="o"`,
		"Bearer\trealm=x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		cs := parseWWWAuthenticate([]string{in})
		if len(cs) > maxChallenges {
			t.Fatalf("%d challenges", len(cs))
		}
		for _, c := range cs {
			if c.Scheme == "" || strings.IndexFunc(c.Scheme, func(r rune) bool { return r > 127 || !isTchar(byte(r)) }) >= 0 {
				t.Fatalf("bad scheme %q", c.Scheme)
			}
			if len(c.Params) > maxChallengeParam || (c.Token68 != "" && c.Params != nil) {
				t.Fatalf("bad challenge %#v", c)
			}
			for k := range c.Params {
				if k == "" || k != strings.ToLower(k) {
					t.Fatalf("bad param name %q", k)
				}
			}
		}
		// Round trip: what parsed renders to a header that parses the same.
		out := formatChallenges(cs)
		if len(out) > maxAuthHeader {
			return
		}
		if again := parseWWWAuthenticate([]string{out}); !reflect.DeepEqual(again, cs) {
			t.Fatalf("round trip of %q via %q:\n got %#v\nwant %#v", in, out, again, cs)
		}
	})
}
