package github

import (
	"strings"
	"testing"
)

// Outside input: Location headers, Link headers and repository URLs never
// panic, and what they yield is well-formed.
func FuzzOutsideInput(f *testing.F) {
	for _, s := range []string{"https://api.github.com/repositories/123", "https://api.github.com/repos/a/b", "/repos/a/b/c",
		`<https://api.github.com/x?page=2>; rel="next", <https://api.github.com/x?page=9>; rel="last"`, "git@github.com:o/r.git", "%zz", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if p, ok := redirectPath(s); ok && !strings.HasPrefix(p, "/repos/") && !strings.HasPrefix(p, "/repositories/") {
			t.Fatalf("redirectPath(%q) = %q", s, p)
		}
		if k, o, n, ok := RepoKey(s); ok && (k != "github.com/"+o+"/"+n || o == "" || n == "") {
			t.Fatalf("RepoKey(%q) = %q %q %q", s, k, o, n)
		}
		_ = linkNext.FindStringSubmatch(s)
	})
}

func TestRedirectPath(t *testing.T) {
	for in, want := range map[string]string{
		"https://api.github.com/repositories/42":         "/repositories/42",
		"https://api.github.com/repos/new/name":          "/repos/new/name",
		"https://api.github.com/repositories/42/commits": "",
		"https://example.com/":                           "",
	} {
		got, _ := redirectPath(in)
		if got != want {
			t.Errorf("redirectPath(%q) = %q, want %q", in, got, want)
		}
	}
}
