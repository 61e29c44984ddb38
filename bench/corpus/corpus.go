// Package corpus generates a synthetic MCP Registry at a chosen scale for the
// benchmarks in bench/: snapshot documents in the registry's v0.1 wire shape
// (`[{"server": ServerDetail, "_meta": {...official: {...}}}]`) and a series
// of daily snapshots with churn.
//
// In: a Config (servers, versions, seed, days). Out: []Server (the model),
// written as snapshot JSON by WriteSnapshot. The same seed gives the same
// bytes.
//
// Calibration (measured on ../shared/corpus/registry-daily/2025-11-30.json.gz,
// 2,253 entries, 931 servers, 613 namespaces; see bench/README.md):
//   - namespaces: one giant namespace (ai.smithery: 211 servers, 23 %); the
//     rest are 91 % singletons, sizes drawn from the measured histogram
//     {1:557, 2:28, 3:17, 4:5, 5:2, 6:1, 8:1, 12:1};
//   - distribution: packages only 50.4 %, remotes only 43.7 %, both 2.5 %,
//     neither 3.4 % (so ~46 % of servers have remotes: ~23k at 50k servers);
//     remotes 82.5 % streamable-http, 17.5 % sse; packages npm 53 %, pypi
//     25 %, oci 13 %, mcpb 7 %, nuget 1.4 %;
//   - descriptions: at most 100 characters (the registry's limit), p10 45,
//     p50 86, p90 99; a title on 17.6 % of servers, a repository on 86 %, a
//     websiteUrl on 9 %;
//   - versions per server: the measured histogram (63 % have one, max 66),
//     mean 2.42; the 170k target at 50k servers (3.4 per server) is reached
//     by giving extra versions to servers that already have several (the
//     tail grows, as it did over the corpus' 76 days);
//   - entry size ~1.1 KB of JSON (the corpus: 1.26 KB indented).
package corpus

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/forum-mcp/forum/schema"
)

// Config sizes a generated registry.
type Config struct {
	Servers  int       // default 50,000
	Versions int       // total versions (records); default 3.4 × Servers
	Seed     uint64    // default 1
	Start    time.Time // capture time of day 0; default 2026-01-01
	// EventsPerDay is the churn target of Advance (~1,400 diff events a day).
	EventsPerDay int
}

func (c *Config) defaults() {
	if c.Servers <= 0 {
		c.Servers = 50_000
	}
	if c.Versions <= 0 {
		c.Versions = c.Servers * 34 / 10
	}
	if c.Versions < c.Servers {
		c.Versions = c.Servers
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.Start.IsZero() {
		c.Start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if c.EventsPerDay <= 0 {
		c.EventsPerDay = 1400
	}
}

// Version is one record of a server.
type Version struct {
	Version     string
	Published   time.Time
	Description string
	Title       string
	Remotes     []schema.Remote
	Packages    []schema.Package
}

// Server is one generated server: its versions, oldest first; the last is
// the latest.
type Server struct {
	Name     string
	Repo     string
	Website  string
	Versions []Version
	Status   string
}

// Registry is the generator's state: the servers and the RNG, advanced one
// day at a time.
type Registry struct {
	Cfg     Config
	Servers []*Server
	Day     int
	rng     *rand.Rand
	nsSeq   int
	byNS    map[string][]*Server
	nsNames []string
}

var (
	nsSizeHist   = []struct{ size, n int }{{1, 557}, {2, 28}, {3, 17}, {4, 5}, {5, 2}, {6, 1}, {8, 1}, {12, 1}}
	versionsHist = []struct{ k, n int }{{1, 588}, {2, 146}, {3, 61}, {4, 35}, {5, 25}, {6, 19}, {7, 11}, {8, 9}, {9, 2}, {10, 4}, {11, 3}, {12, 3}, {13, 2}, {14, 6}, {15, 4}, {20, 6}, {30, 4}, {45, 2}, {66, 1}}
	words        = strings.Fields("weather notes calendar github search files postgres slack maps crm docs jira stock email images browser memory vector kubernetes terraform aws azure gcp linear notion figma stripe shopify discord telegram youtube spotify sql redis mongo elastic sentry grafana datadog pdf excel sheets drive dropbox zoom teams trello asana hubspot salesforce")
	adjectives   = strings.Fields("fast tiny open smart cloud local data quick simple secure micro prime remote lite pro unified async")
	descPhrases  = strings.Fields("An MCP server that lets agents query manage and automate your workspace through a typed tool interface with search create update delete and export operations for teams and developers")
	envSuffixes  = strings.Fields("API_KEY BASE_URL WORKSPACE_ID LOG_LEVEL TIMEOUT_MS REGION")
	pkgTypes     = []struct {
		t string
		w float64
	}{{"npm", 0.53}, {"pypi", 0.25}, {"oci", 0.13}, {"mcpb", 0.07}, {"nuget", 0.02}}
)

// New builds day 0 of a registry.
func New(cfg Config) *Registry {
	cfg.defaults()
	r := &Registry{Cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)), byNS: map[string][]*Server{}}
	// Namespaces: one giant (23 %), the rest from the measured histogram.
	giant := cfg.Servers * 23 / 100
	sizes := []int{giant}
	total := giant
	wsum := 0
	for _, h := range nsSizeHist {
		wsum += h.n
	}
	for total < cfg.Servers {
		x := r.rng.IntN(wsum)
		s := 1
		for _, h := range nsSizeHist {
			if x < h.n {
				s = h.size
				break
			}
			x -= h.n
		}
		s = min(s, cfg.Servers-total)
		sizes = append(sizes, s)
		total += s
	}
	for i, s := range sizes {
		ns := r.namespace(i == 0)
		for j := 0; j < s; j++ {
			r.addServer(ns, cfg.Start.Add(-time.Duration(r.rng.IntN(300*24))*time.Hour))
		}
	}
	// Versions: the measured histogram, then extra versions for servers
	// that already have several, up to the target.
	vsum := 0
	for _, h := range versionsHist {
		vsum += h.n
	}
	have := len(r.Servers)
	for _, s := range r.Servers {
		x := r.rng.IntN(vsum)
		k := 1
		for _, h := range versionsHist {
			if x < h.n {
				k = h.k
				break
			}
			x -= h.n
		}
		for i := 1; i < k && have < cfg.Versions; i++ {
			r.addVersion(s, s.Versions[len(s.Versions)-1].Published.Add(time.Duration(1+r.rng.IntN(72))*time.Hour))
			have++
		}
	}
	multi := make([]*Server, 0)
	for _, s := range r.Servers {
		if len(s.Versions) > 1 {
			multi = append(multi, s)
		}
	}
	for have < cfg.Versions && len(multi) > 0 {
		s := multi[r.rng.IntN(len(multi))]
		r.addVersion(s, s.Versions[len(s.Versions)-1].Published.Add(time.Duration(1+r.rng.IntN(72))*time.Hour))
		have++
	}
	// Versions published after Start are moved before it.
	for _, s := range r.Servers {
		last := s.Versions[len(s.Versions)-1].Published
		if last.After(cfg.Start) {
			shift := last.Sub(cfg.Start) + time.Hour
			for i := range s.Versions {
				s.Versions[i].Published = s.Versions[i].Published.Add(-shift)
			}
		}
	}
	return r
}

func (r *Registry) namespace(giant bool) string {
	r.nsSeq++
	var ns string
	switch {
	case giant:
		ns = "ai.smithery"
	case r.rng.Float64() < 0.62:
		ns = fmt.Sprintf("io.github.%s-%s%d", adjectives[r.rng.IntN(len(adjectives))], words[r.rng.IntN(len(words))], r.nsSeq)
	case r.rng.Float64() < 0.5:
		ns = fmt.Sprintf("com.%s%d", words[r.rng.IntN(len(words))], r.nsSeq)
	default:
		ns = fmt.Sprintf("ai.%s%d", words[r.rng.IntN(len(words))], r.nsSeq)
	}
	r.nsNames = append(r.nsNames, ns)
	return ns
}

func (r *Registry) description() string {
	// Lengths: p10 45, p50 86, p90 99, max 100.
	var n int
	switch x := r.rng.Float64(); {
	case x < 0.1:
		n = 15 + r.rng.IntN(30)
	case x < 0.5:
		n = 45 + r.rng.IntN(41)
	default:
		n = 86 + r.rng.IntN(15)
	}
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(descPhrases[r.rng.IntN(len(descPhrases))])
	}
	return b.String()[:n]
}

func (r *Registry) addServer(ns string, published time.Time) *Server {
	slug := fmt.Sprintf("%s-%s-mcp-%d", adjectives[r.rng.IntN(len(adjectives))], words[r.rng.IntN(len(words))], len(r.Servers))
	s := &Server{Name: ns + "/" + slug, Status: "active"}
	if r.rng.Float64() < 0.86 {
		owner := strings.TrimPrefix(ns, "io.github.")
		s.Repo = "https://github.com/" + owner + "/" + slug
	}
	if r.rng.Float64() < 0.09 {
		s.Website = "https://" + slug + ".example.com"
	}
	v := Version{Version: "0.1.0", Published: published, Description: r.description()}
	if r.rng.Float64() < 0.176 {
		v.Title = strings.ToUpper(slug[:1]) + strings.ReplaceAll(slug[1:], "-", " ")
	}
	x := r.rng.Float64()
	pk, rm := x < 0.504 || (x >= 0.941 && x < 0.966), x >= 0.504 && x < 0.966
	if pk {
		n := 1
		if r.rng.Float64() < 0.2 {
			n = 2
		}
		for i := 0; i < n; i++ {
			v.Packages = append(v.Packages, r.pkg(slug))
		}
	}
	if rm {
		t := "streamable-http"
		if r.rng.Float64() < 0.175 {
			t = "sse"
		}
		v.Remotes = []schema.Remote{{Type: t, URL: "https://mcp." + slug + ".example.com/" + t}}
		if r.rng.Float64() < 0.5 { // headers on about half the remotes, as measured
			yes := true
			v.Remotes[0].Headers = []schema.KeyValue{{Name: "Authorization", Description: "Bearer token from your account settings page", IsRequired: &yes, IsSecret: &yes}}
		}
	}
	s.Versions = []Version{v}
	r.Servers = append(r.Servers, s)
	r.byNS[ns] = append(r.byNS[ns], s)
	return s
}

func (r *Registry) pkg(slug string) schema.Package {
	x := r.rng.Float64()
	t := "npm"
	for _, p := range pkgTypes {
		if x < p.w {
			t = p.t
			break
		}
		x -= p.w
	}
	p := schema.Package{RegistryType: t, Identifier: "@" + slug + "/server", Version: "0.1.0", Transport: &schema.Transport{Type: "stdio"}}
	if t == "oci" {
		p.Identifier = "ghcr.io/" + slug + "/server:0.1.0"
	}
	// Environment variables: mean ~2 per package, as measured.
	envs := []int{0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 5, 5, 6}[r.rng.IntN(20)]
	stem := strings.ToUpper(strings.ReplaceAll(slug[:min(len(slug), 12)], "-", "_"))
	for i := 0; i < envs; i++ {
		yes, secret := true, i == 0
		p.EnvironmentVariables = append(p.EnvironmentVariables, schema.KeyValue{Name: fmt.Sprintf("%s_%s", stem, envSuffixes[i%len(envSuffixes)]),
			Description: "The " + strings.ToLower(envSuffixes[i%len(envSuffixes)]) + " used to reach the service (see the README)", IsRequired: &yes, IsSecret: &secret})
	}
	return p
}

func (r *Registry) addVersion(s *Server, published time.Time) {
	last := s.Versions[len(s.Versions)-1]
	v := last
	v.Version = fmt.Sprintf("0.%d.%d", len(s.Versions)/10+1, len(s.Versions)%10)
	v.Published = published
	v.Packages = make([]schema.Package, len(last.Packages))
	for i, p := range last.Packages {
		p.Version = v.Version
		v.Packages[i] = p
	}
	s.Versions = append(s.Versions, v)
}

// Records returns the number of records (versions) a snapshot will hold.
func (r *Registry) Records() int {
	n := 0
	for _, s := range r.Servers {
		n += len(s.Versions)
	}
	return n
}

// Now is the capture time of the current day.
func (r *Registry) Now() time.Time { return r.Cfg.Start.Add(time.Duration(r.Day) * 24 * time.Hour) }

// Churn counts what Advance did, by drift-event kind.
type Churn map[string]int

// Advance moves the registry one day on, with ~EventsPerDay drift events:
// new versions (45 %), new servers (35 %, a third of them a burst from a few
// namespaces), description (8 %), title (5 %) and endpoint (4 %) changes,
// removals (3 %). The mix follows the real corpus' replay (README: 936
// version_added, 935 new_server, 32 description, 31 title, 12 endpoints,
// 4 removed over 76 days), with more edits so every rule is exercised.
func (r *Registry) Advance() Churn {
	r.Day++
	now := r.Now()
	c := Churn{}
	at := func() time.Time { return now.Add(-time.Duration(1+r.rng.IntN(23*60)) * time.Minute) }
	n := r.Cfg.EventsPerDay
	live := func() *Server {
		for {
			s := r.Servers[r.rng.IntN(len(r.Servers))]
			if s.Status == "active" {
				return s
			}
		}
	}
	newLatest := func(s *Server) *Version {
		r.addVersion(s, at())
		return &s.Versions[len(s.Versions)-1]
	}
	for i := 0; i < n*45/100; i++ {
		newLatest(live())
		c[schema.KindVersionAdded]++
	}
	newServers := n * 35 / 100
	burst := newServers / 3
	for b := 0; b < 3 && burst > 0; b++ { // bursts: three namespaces publish many at once
		ns := r.nsNames[r.rng.IntN(len(r.nsNames))]
		for j := 0; j < burst/3; j++ {
			r.addServer(ns, at())
			c[schema.KindNewServer]++
		}
	}
	for c[schema.KindNewServer] < newServers {
		r.addServer(r.namespace(false), at())
		c[schema.KindNewServer]++
	}
	for i := 0; i < n*8/100; i++ {
		v := newLatest(live())
		v.Description = r.description()
		c[schema.KindDescriptionChanged]++
	}
	for i := 0; i < n*5/100; i++ {
		v := newLatest(live())
		v.Title = "Renamed " + v.Version
		c[schema.KindTitleChanged]++
	}
	for i := 0; i < n*4/100; i++ {
		s := live()
		for len(s.Versions[len(s.Versions)-1].Remotes) == 0 {
			s = live()
		}
		v := newLatest(s)
		v.Remotes = []schema.Remote{{Type: "streamable-http", URL: fmt.Sprintf("https://moved-%d-%d.example.net/mcp", r.Day, i)}}
		c[schema.KindEndpointsChanged]++
	}
	for i := 0; i < n*3/100; i++ {
		live().Status = "removed"
		c[schema.KindRemoved]++
	}
	return c
}

// WriteSnapshot writes the current registry as a v0.1 snapshot document
// (a JSON array, one entry per line). Removed servers are left out.
func (r *Registry) WriteSnapshot(w io.Writer) (records int, err error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	bw.WriteString("[")
	type official struct {
		Status      string `json:"status"`
		PublishedAt string `json:"publishedAt"`
		UpdatedAt   string `json:"updatedAt"`
		IsLatest    bool   `json:"isLatest"`
	}
	type entry struct {
		Server schema.ServerDetail `json:"server"`
		Meta   map[string]official `json:"_meta"`
	}
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	servers := make([]*Server, 0, len(r.Servers))
	for _, s := range r.Servers {
		if s.Status == "active" {
			servers = append(servers, s)
		}
	}
	sort.Slice(servers, func(i, j int) bool { return servers[i].Name < servers[j].Name })
	for _, s := range servers {
		for i, v := range s.Versions {
			e := entry{Server: schema.ServerDetail{
				Schema: "https://static.modelcontextprotocol.io/schemas/2025-10-17/server.schema.json",
				Name:   s.Name, Description: v.Description, Title: v.Title, Version: v.Version,
				WebsiteURL: s.Website, Packages: v.Packages, Remotes: v.Remotes,
			}}
			if s.Repo != "" {
				e.Server.Repository = &schema.Repository{URL: s.Repo, Source: "github"}
			}
			ts := v.Published.UTC().Format("2006-01-02T15:04:05.000000Z")
			e.Meta = map[string]official{"io.modelcontextprotocol.registry/official": {Status: "active", PublishedAt: ts, UpdatedAt: ts, IsLatest: i == len(s.Versions)-1}}
			if records > 0 {
				bw.WriteString(",\n")
			}
			if err := enc.Encode(e); err != nil {
				return records, err
			}
			records++
		}
	}
	bw.WriteString("]\n")
	return records, bw.Flush()
}
