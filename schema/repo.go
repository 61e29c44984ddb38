package schema

import (
	"strings"
)

// NormalizeRepoURL returns the key under which servers sharing a source
// repository are siblings (SPEC §3 Adoption): lower-case, no scheme, no
// "www.", no ".git", no trailing "/", no query or fragment, and the subfolder
// ignored — for github.com only host/owner/repo is kept, elsewhere anything
// from a "/tree/", "/-/tree/", "/blob/" or "/src/" path part on is cut.
// Scheme and "www." are dropped too (beyond the SPEC's list) because
// http/https and www/no-www spellings of one repository occur in real data
// and are the same repository. Returns "" for an empty or unusable URL.
//
// The FORUM provenance helpers (processors/trust) use the same key, so the
// two methods never disagree about which servers share a repository.
func NormalizeRepoURL(raw string) string {
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
	slash := strings.IndexByte(s, '/')
	if slash < 0 {
		slash = len(s)
	}
	if at := strings.Index(s, "@"); at >= 0 && at < slash {
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
	// Split on "/" without allocating: the host is the first part, and at
	// github.com only host/owner/repo is kept.
	first := strings.IndexByte(s, '/')
	if first <= 0 { // one part, or an empty host
		return ""
	}
	if s[:first] == "github.com" {
		rest := s[first+1:]
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			if k := strings.IndexByte(rest[j+1:], '/'); k >= 0 { // more than 3 parts
				s = strings.TrimSuffix(s[:first+1+j+1+k], ".git")
			}
		}
	}
	return s
}

// RepoOwnerName returns the owner and repository name of a repository URL
// ("github.com/Owner/Repo" → "owner", "repo"; lower-case). Empty strings when
// the URL has no owner/name path.
func RepoOwnerName(raw string) (owner, name string) {
	n := NormalizeRepoURL(raw)
	i := strings.IndexByte(n, '/')
	if i < 0 {
		return "", ""
	}
	j := strings.IndexByte(n[i+1:], '/')
	if j < 0 { // fewer than 3 parts
		return "", ""
	}
	return n[i+1 : i+1+j], n[strings.LastIndexByte(n, '/')+1:]
}

// RepoHost returns the host of a repository URL ("" when unusable).
func RepoHost(raw string) string {
	n := NormalizeRepoURL(raw)
	if n == "" {
		return ""
	}
	host, _, _ := strings.Cut(n, "/")
	return host
}
