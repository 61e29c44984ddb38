package trust

import (
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/schema"
)

// Listing is one server as the registry-wide provenance helpers see it.
type Listing struct {
	Name        string
	RepoURL     string
	RepoOwner   string    // GitHub owner.login when resolved; "" → taken from RepoURL
	PublishedAt time.Time // first listing of the server (earliest publishedAt)
	// Evidence is the registry observation of the listing (optional).
	Evidence *Evidence
}

// Facts are the registry-side provenance facts of one server.
type Facts struct {
	NamespaceOwnerMismatch bool
	CoRegistrationCluster  bool   // member of a same-day cluster; the signal fires only with weak hygiene
	ClusterKey             string // "owner:<login>@<day>" or "family:<family>@<day>"
	ClusterSize            int
	RepoServers            int // servers sharing the normalized repo URL (incl. this one)
	Evidence               []Evidence
}

// NameFamily is a server name with digits and "-mcp"/"mcp-" stripped
// (draft5), lower-case, each '/'-part trimmed of leading/trailing '-', '_',
// '.'. The namespace is part of the name, so numbered sock-puppet namespaces
// (io.github.user1/x, io.github.user2/x) share a family while unrelated
// servers that merely share a popular last segment do not.
func NameFamily(name string) string {
	s := strings.ToLower(name)
	s = strings.Map(func(r rune) rune {
		if unicode.IsDigit(r) {
			return -1
		}
		return r
	}, s)
	s = strings.ReplaceAll(s, "-mcp", "")
	s = strings.ReplaceAll(s, "mcp-", "")
	parts := strings.Split(s, "/")
	for i, p := range parts {
		parts[i] = strings.Trim(p, "-_.")
	}
	return strings.Join(parts, "/")
}

// NamespaceOwnerMismatch reports whether an io.github.<owner> namespace lists
// a github.com repository owned by someone else (case-insensitive). Other
// namespaces are reverse-DNS names verified by the registry and cannot be
// compared with a GitHub login, and repositories on other forges are not
// evaluated: both give false.
func NamespaceOwnerMismatch(name, repoURL, repoOwner string) bool {
	ns := strings.ToLower(schema.Namespace(name))
	if !strings.HasPrefix(ns, "io.github.") {
		return false
	}
	if schema.RepoHost(repoURL) != "github.com" {
		return false
	}
	owner := strings.ToLower(repoOwner)
	if owner == "" {
		owner, _ = schema.RepoOwnerName(repoURL)
	}
	if owner == "" {
		return false
	}
	return strings.TrimPrefix(ns, "io.github.") != owner
}

// RegistryFacts computes every server's registry-side provenance facts from
// all current listings (SPEC §4 draft5 definitions):
//   - co-registration cluster: >= co_registration_min_listings listings first
//     published the same UTC day sharing the repo owner or the NameFamily;
//   - repo servers: how many servers list the same normalized repo URL;
//   - namespace/owner mismatch.
func RegistryFacts(w *method.Weights, listings []Listing) map[string]Facts {
	type group struct{ members []int }
	groups := map[string]*group{}
	key := func(k string, i int) {
		g := groups[k]
		if g == nil {
			g = &group{}
			groups[k] = g
		}
		g.members = append(g.members, i)
	}
	repoCount := map[string]int{}
	for i, l := range listings {
		owner := strings.ToLower(l.RepoOwner)
		if owner == "" {
			owner, _ = schema.RepoOwnerName(l.RepoURL)
		}
		if r := schema.NormalizeRepoURL(l.RepoURL); r != "" {
			repoCount[r]++
		}
		if l.PublishedAt.IsZero() {
			continue
		}
		day := l.PublishedAt.UTC().Format("2006-01-02")
		if owner != "" {
			key("owner:"+owner+"@"+day, i)
		}
		key("family:"+NameFamily(l.Name)+"@"+day, i)
	}
	out := make(map[string]Facts, len(listings))
	for _, l := range listings {
		f := Facts{NamespaceOwnerMismatch: NamespaceOwnerMismatch(l.Name, l.RepoURL, l.RepoOwner)}
		if r := schema.NormalizeRepoURL(l.RepoURL); r != "" {
			f.RepoServers = repoCount[r]
		}
		if l.Evidence != nil {
			f.Evidence = []Evidence{*l.Evidence}
		}
		out[l.Name] = f
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys) // deterministic choice of the reported cluster key
	minN := w.Provenance.Thresholds.CoRegistrationMinListings
	for _, k := range keys {
		g := groups[k]
		if len(g.members) < minN {
			continue
		}
		for _, i := range g.members {
			f := out[listings[i].Name]
			if !f.CoRegistrationCluster || len(g.members) > f.ClusterSize {
				f.CoRegistrationCluster = true
				f.ClusterKey = k
				f.ClusterSize = len(g.members)
			}
			out[listings[i].Name] = f
		}
	}
	return out
}

// BulkEdits finds bulk edits in description_changed events, per namespace.
// Windows start at an event and do not overlap: after a window is reported
// the search resumes after its end.
func BulkEdits(w *method.Weights, events []schema.DriftEvent) map[string][]BulkEdit {
	byNS := map[string][]schema.DriftEvent{}
	for _, e := range events {
		if e.Kind != schema.KindDescriptionChanged {
			continue
		}
		ns := e.Namespace
		if ns == "" {
			ns = schema.Namespace(e.Server)
		}
		byNS[ns] = append(byNS[ns], e)
	}
	win := time.Duration(w.Drift.BulkEditWindowHours * float64(time.Hour))
	out := map[string][]BulkEdit{}
	for ns, evs := range byNS {
		sort.Slice(evs, func(i, j int) bool { return evs[i].ObservedAt.Before(evs[j].ObservedAt) })
		for i := 0; i < len(evs); {
			start := evs[i].ObservedAt
			servers := map[string]bool{}
			j := i
			for ; j < len(evs) && evs[j].ObservedAt.Sub(start) <= win; j++ {
				servers[evs[j].Server] = true
			}
			if len(servers) >= w.Drift.BulkEditMinServers {
				out[ns] = append(out[ns], BulkEdit{Namespace: ns, Start: start.UTC(), Servers: len(servers)})
				i = j
				continue
			}
			i++
		}
	}
	return out
}
