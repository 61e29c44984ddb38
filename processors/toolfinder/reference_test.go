package toolfinder

// The repository-URL helpers and NormalizeDescription as first written
// (strings.Split / Fields + Join), kept as the reference for the
// allocation-free versions (issue 8).

import (
	"strings"
	"testing"

	"github.com/forum-mcp/forum/schema"
)

func refNormalizeDescription(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), " ")
}

func refNormalizeRepoURL(raw string) string {
	s := strings.ToLower(strings.TrimSpace(raw))
	if s == "" {
		return ""
	}
	s = strings.TrimPrefix(s, "git+")
	if i := strings.Index(s, "://"); i >= 0 {
		s = s[i+3:]
	} else if strings.HasPrefix(s, "git@") {
		// git@github.com:owner/repo.git
		s = strings.Replace(strings.TrimPrefix(s, "git@"), ":", "/", 1)
	}
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s = s[:i]
	}
	// user-info (rare, e.g. https://user@host/...)
	if at := strings.Index(s, "@"); at >= 0 && at < strings.Index(s+"/", "/") {
		s = s[at+1:]
	}
	s = strings.TrimPrefix(s, "www.")
	for _, cut := range []string{"/-/tree/", "/tree/", "/blob/", "/src/"} {
		if i := strings.Index(s, cut); i >= 0 {
			s = s[:i]
		}
	}
	s = strings.TrimRight(s, "/")
	s = strings.TrimSuffix(s, ".git")
	s = strings.TrimRight(s, "/")
	parts := strings.Split(s, "/")
	if parts[0] == "github.com" && len(parts) > 3 {
		parts = parts[:3]
		s = strings.Join(parts, "/")
		s = strings.TrimSuffix(s, ".git")
	}
	if len(parts) < 2 || parts[0] == "" {
		return ""
	}
	return s
}

// RepoOwnerName returns the owner and repository name of a repository URL
// ("github.com/Owner/Repo" → "owner", "repo"; lower-case). Empty strings when
// the URL has no owner/name path.
func refRepoOwnerName(raw string) (owner, name string) {
	n := refNormalizeRepoURL(raw)
	parts := strings.Split(n, "/")
	if len(parts) < 3 {
		return "", ""
	}
	return parts[1], parts[len(parts)-1]
}

// RepoHost returns the host of a repository URL ("" when unusable).
func refRepoHost(raw string) string {
	n := refNormalizeRepoURL(raw)
	if n == "" {
		return ""
	}
	return strings.SplitN(n, "/", 2)[0]
}

func FuzzRepoAndDescriptionMatchReference(f *testing.F) {
	for _, s := range []string{"https://github.com/Acme/Weather.git", "git@github.com:o/r.git", "https://github.com/o/r/tree/main/x", "github.com/o/r/x/y.git",
		"https://user@gitlab.com/g/s/p/-/tree/x", "/x/y", "x", "", "https://github.com//r", "github.com/a/b/c.git/d", " WWW.GitHub.com/A/B/ ",
		"  A  weather\tserver\u00a0for\u2028you ", "plain text", "trailing ", " leading", "a\x85b", "\xffa  b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if g, w := schema.NormalizeRepoURL(s), refNormalizeRepoURL(s); g != w {
			t.Fatalf("schema.NormalizeRepoURL(%q) = %q, reference %q", s, g, w)
		}
		go1, gn := schema.RepoOwnerName(s)
		wo, wn := refRepoOwnerName(s)
		if go1 != wo || gn != wn {
			t.Fatalf("schema.RepoOwnerName(%q) = %q %q, reference %q %q", s, go1, gn, wo, wn)
		}
		if g, w := schema.RepoHost(s), refRepoHost(s); g != w {
			t.Fatalf("schema.RepoHost(%q) = %q, reference %q", s, g, w)
		}
		if g, w := NormalizeDescription(s), refNormalizeDescription(s); g != w {
			t.Fatalf("NormalizeDescription(%q) = %q, reference %q", s, g, w)
		}
	})
}
