// Package githubfake is a fake GitHub REST API for tests: a population of
// repositories generated at the seed 002 §4.1 base rates, served with
// primary and secondary rate limits, ETags (304 costs no quota), 301
// renames, 404 for unresolved repos and 409 for empty ones, and the repo
// owners' accounts (GET /users/{login}: owners repeat across repos, ~1 per
// 3 repos, and Rates.OwnerOlder1y of the resolved repos have an owner
// account older than a year). Time comes from
// an injected clock, so a test can live through hours in milliseconds.
//
// It is a regular (non-test) package so the crawler's and the provenance
// processor's tests share one generator.
package githubfake

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Rates are the generator's target base rates. RepoResolved is over all
// listings, NamespaceOwnerMismatch over all listings, the rest over
// resolved repos.
type Rates struct {
	RepoResolved           float64
	SingleAuthor90d        float64
	NoLicense              float64
	CommitCapHit           float64
	NoCommits90d           float64
	RepoUnder30d           float64
	NamespaceOwnerMismatch float64
	Archived               float64
	Fork                   float64
	StaleOver1y            float64
	LateRepoGT30d          float64 // repo created > 30 d after its listing
	Empty                  float64 // 409 (a subset of NoCommits90d)
	Renamed                float64 // served behind a 301
	Verified               float64 // repos with >= 1 verified commit (of those with commits)
	// OwnerOlder1y: resolved repos whose owner account is older than 365 d
	// (counted per repo, as the processor counts servers).
	OwnerOlder1y float64
}

// SeedRates are seed 002 §4.1's full-crawl base rates.
var SeedRates = Rates{
	RepoResolved: 0.86, SingleAuthor90d: 0.36, NoLicense: 0.23, CommitCapHit: 0.19, NoCommits90d: 0.14,
	RepoUnder30d: 0.11, NamespaceOwnerMismatch: 0.027, Archived: 0.008, Fork: 0.005, StaleOver1y: 0.004,
	LateRepoGT30d: 0.001, Empty: 0.02, Renamed: 0.01, Verified: 0.30,
	// Not measured by the seed: the project's estimate pinned in
	// processors/method/weights-v0.1.0.json.
	OwnerOlder1y: 0.70,
}

// Repo is one generated repository and its listing.
type Repo struct {
	ID         int64
	Owner      string // as listed
	Name       string
	NewOwner   string // non-empty when renamed
	NewName    string
	Server     string // the registry listing's server name
	ListedAt   time.Time
	Resolved   bool
	Empty      bool
	CreatedAt  time.Time
	PushedAt   time.Time
	Stars      int
	Fork       bool
	Archived   bool
	License    string // "" = none
	Commits    int    // in the last 90 d
	Authors    int
	Verified   bool
	NullLogins bool // some commits have author null (keyed by e-mail)

	// Planted truth, for tests.
	Truth Truth
}

// Truth is what the generator planted.
type Truth struct {
	SingleAuthor, NoLicense, CapHit, NoCommits, Under30d, Mismatch, Archived, Fork, Stale, Late bool
	OwnerOld                                                                                    bool // owner account older than 365 d
}

// Owner is one generated GitHub account owning one or more repos.
type Owner struct {
	ID        int64
	Login     string
	Type      string // User | Organization
	CreatedAt time.Time
	Repos     []*Repo
}

// URL is the listing's repository URL.
func (r *Repo) URL() string { return "https://github.com/" + r.Owner + "/" + r.Name }

// Population is a generated set of repos.
type Population struct {
	Start    time.Time
	PageCap  int
	Repos    []*Repo
	Owners   []*Owner
	byLogin  map[string]*Owner
	byPath   map[string]*Repo // lower "owner/name" (current names) → repo
	oldPaths map[string]*Repo // lower old "owner/name" of renamed repos
	byID     map[int64]*Repo
}

// Generate makes n repos at rates, as of start. pageCap is the crawler's
// commit-page cap (cap-hit repos get more than pageCap*100 commits).
// Flags are assigned to exact counts (round(rate × base)), so measured rates
// equal the targets up to rounding.
func Generate(n int, rates Rates, start time.Time, pageCap int, seed uint64) *Population {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	// Owners come from their own stream, so the repos' facts stay what this
	// seed always generated.
	orng := rand.New(rand.NewPCG(seed^0x5bd1e995, seed+1))
	p := &Population{Start: start, PageCap: pageCap, byPath: map[string]*Repo{}, oldPaths: map[string]*Repo{}, byID: map[int64]*Repo{}, byLogin: map[string]*Owner{}}
	ownerOf := groupOwners(orng, n)
	day := 24 * time.Hour
	pick := func(pool []int, rate float64, base int) []int {
		k := int(math.Round(rate * float64(base)))
		idx := append([]int(nil), pool...)
		rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
		if k > len(idx) {
			k = len(idx)
		}
		return idx[:k]
	}
	all := make([]int, n)
	for i := range all {
		r := &Repo{ID: int64(100000 + i), Owner: fmt.Sprintf("owner%05d", ownerOf[i]), Name: fmt.Sprintf("mcp-server-%05d", i)}
		r.Server = "io.github." + r.Owner + "/" + r.Name
		p.Repos = append(p.Repos, r)
		all[i] = i
	}
	for _, i := range pick(all, rates.NamespaceOwnerMismatch, n) {
		r := p.Repos[i]
		r.Truth.Mismatch = true
		r.Server = "io.github.other" + strconv.Itoa(i) + "/" + r.Name
	}
	var res []int
	for _, i := range pick(all, rates.RepoResolved, n) {
		p.Repos[i].Resolved = true
		res = append(res, i)
	}
	nr := len(res)
	// no_commits, cap_hit and single_author are mutually exclusive.
	perm := append([]int(nil), res...)
	rng.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
	kNo := int(math.Round(rates.NoCommits90d * float64(nr)))
	kCap := int(math.Round(rates.CommitCapHit * float64(nr)))
	kSingle := int(math.Round(rates.SingleAuthor90d * float64(nr)))
	noCommits := perm[:kNo]
	for _, i := range perm[:kNo] {
		p.Repos[i].Truth.NoCommits = true
	}
	for _, i := range perm[kNo : kNo+kCap] {
		p.Repos[i].Truth.CapHit = true
	}
	for _, i := range perm[kNo+kCap : kNo+kCap+kSingle] {
		p.Repos[i].Truth.SingleAuthor = true
	}
	for _, i := range pick(noCommits, rates.Empty/rates.NoCommits90d, len(noCommits)) {
		p.Repos[i].Empty = true
	}
	// stale ⊂ no_commits, not empty; under_30d excludes stale.
	var stalePool []int
	for _, i := range noCommits {
		if !p.Repos[i].Empty {
			stalePool = append(stalePool, i)
		}
	}
	for _, i := range pick(stalePool, rates.StaleOver1y*float64(nr)/float64(len(stalePool)), len(stalePool)) {
		p.Repos[i].Truth.Stale = true
	}
	var youngPool []int
	for _, i := range res {
		if !p.Repos[i].Truth.Stale && !(p.Repos[i].Truth.NoCommits && !p.Repos[i].Empty) {
			youngPool = append(youngPool, i)
		}
	}
	for _, i := range pick(youngPool, rates.RepoUnder30d*float64(nr)/float64(len(youngPool)), len(youngPool)) {
		p.Repos[i].Truth.Under30d = true
	}
	for _, i := range pick(res, rates.NoLicense, nr) {
		p.Repos[i].Truth.NoLicense = true
	}
	for _, i := range pick(res, rates.Archived, nr) {
		p.Repos[i].Truth.Archived = true
	}
	for _, i := range pick(res, rates.Fork, nr) {
		p.Repos[i].Truth.Fork = true
	}
	var latePool []int
	for _, i := range res {
		if !p.Repos[i].Truth.Stale {
			latePool = append(latePool, i)
		}
	}
	for _, i := range pick(latePool, rates.LateRepoGT30d*float64(nr)/float64(len(latePool)), len(latePool)) {
		p.Repos[i].Truth.Late = true
	}
	for _, i := range pick(res, rates.Renamed, nr) {
		r := p.Repos[i]
		r.NewOwner, r.NewName = r.Owner, r.Name+"-renamed" // a rename, not a transfer
	}
	dur := func(lo, hi float64) time.Duration { return time.Duration((lo + rng.Float64()*(hi-lo)) * float64(day)) }
	for _, r := range p.Repos {
		t := r.Truth
		r.Fork, r.Archived = t.Fork, t.Archived
		if !t.NoLicense {
			r.License = []string{"MIT", "Apache-2.0", "NOASSERTION", "BSD-3-Clause"}[rng.IntN(4)]
		}
		r.Stars = int(math.Exp(rng.Float64()*9)) - 1
		switch {
		case t.Under30d:
			r.CreatedAt = start.Add(-dur(2, 28))
		case t.Stale:
			r.CreatedAt = start.Add(-dur(800, 1500))
		case r.Empty:
			r.CreatedAt = start.Add(-dur(95, 300)) // pushed_at = created_at: not stale
		default:
			r.CreatedAt = start.Add(-dur(95, 900))
		}
		if t.Late {
			r.ListedAt = r.CreatedAt.Add(-dur(40, 150))
		} else {
			r.ListedAt = r.CreatedAt.Add(dur(0, 0.5))
			if r.ListedAt.After(start) {
				r.ListedAt = start.Add(-time.Hour)
			}
		}
		switch {
		case t.NoCommits:
			r.Commits = 0
		case t.CapHit:
			r.Commits = pageCap*100 + 1 + rng.IntN(150)
			r.Authors = 2 + rng.IntN(6)
		case t.SingleAuthor:
			r.Commits = 1 + rng.IntN(60)
			r.Authors = 1
		default:
			r.Commits = 2 + rng.IntN(80)
			r.Authors = 2 + rng.IntN(4)
			if r.Authors > r.Commits {
				r.Authors = r.Commits
			}
		}
		if r.Commits > 0 {
			r.Verified = rng.Float64() < rates.Verified
			r.NullLogins = rng.IntN(10) == 0
		}
		switch {
		case r.Empty:
			r.PushedAt = r.CreatedAt
		case t.Stale:
			r.PushedAt = start.Add(-dur(370, 700))
		case t.NoCommits:
			r.PushedAt = start.Add(-dur(95, 300))
			if r.PushedAt.Before(r.CreatedAt) {
				r.PushedAt = r.CreatedAt
			}
		default:
			r.PushedAt = p.commitDate(r, 0)
		}
		p.byID[r.ID] = r
		if r.NewOwner != "" {
			p.oldPaths[strings.ToLower(r.Owner+"/"+r.Name)] = r
			p.byPath[strings.ToLower(r.NewOwner+"/"+r.NewName)] = r
		} else {
			p.byPath[strings.ToLower(r.Owner+"/"+r.Name)] = r
		}
	}
	p.ageOwners(orng, rates.OwnerOlder1y, nr)
	return p
}

// groupOwners gives repo i its owner index: owners repeat, with a long
// tail of fleets (55 % of owners hold one repo, 25 % two, 12 % 3–5, 7 %
// 6–20, 1 % 21–80: ~2.9 repos per owner).
func groupOwners(rng *rand.Rand, n int) []int {
	out := make([]int, n)
	perm := rng.Perm(n)
	o := 0
	for j := 0; j < n; o++ {
		var k int
		switch x := rng.Float64(); {
		case x < 0.55:
			k = 1
		case x < 0.80:
			k = 2
		case x < 0.92:
			k = 3 + rng.IntN(3)
		case x < 0.99:
			k = 6 + rng.IntN(15)
		default:
			k = 21 + rng.IntN(60)
		}
		for t := 0; t < k && j < n; t++ {
			out[perm[j]] = o
			j++
		}
	}
	return out
}

// ageOwners builds the owners and sets their accounts' created_at so that
// round(rate × resolved) resolved repos have an owner older than 365 d. An
// account normally predates its repos, so the young owners are taken first
// from those whose resolved repos are all younger than a year; only when
// they do not suffice is an owner younger than its repo (a transferred
// repo keeps its created_at).
func (p *Population) ageOwners(rng *rand.Rand, rate float64, resolved int) {
	day := 24 * time.Hour
	for _, r := range p.Repos {
		key := strings.ToLower(r.Owner)
		ow := p.byLogin[key]
		if ow == nil {
			ow = &Owner{ID: int64(500000 + len(p.Owners)), Login: r.Owner, Type: "User"}
			if len(p.Owners)%4 == 3 {
				ow.Type = "Organization"
			}
			p.byLogin[key] = ow
			p.Owners = append(p.Owners, ow)
		}
		ow.Repos = append(ow.Repos, r)
	}
	yearAgo := p.Start.Add(-365 * day)
	type cand struct {
		ow       *Owner
		res      int
		earliest time.Time
	}
	var young, other []cand
	for _, ow := range p.Owners {
		c := cand{ow: ow}
		for _, r := range ow.Repos {
			if !r.Resolved {
				continue
			}
			c.res++
			if c.earliest.IsZero() || r.CreatedAt.Before(c.earliest) {
				c.earliest = r.CreatedAt
			}
		}
		if c.res > 0 && c.earliest.After(yearAgo) {
			young = append(young, c)
		} else {
			other = append(other, c)
		}
	}
	rng.Shuffle(len(young), func(i, j int) { young[i], young[j] = young[j], young[i] })
	rng.Shuffle(len(other), func(i, j int) { other[i], other[j] = other[j], other[i] })
	need := resolved - int(math.Round(rate*float64(resolved)))
	isYoung := map[*Owner]bool{}
	for _, c := range append(young, other...) {
		if c.res > 0 && c.res <= need {
			isYoung[c.ow] = true
			need -= c.res
		}
	}
	span := func(lo, hi time.Time) time.Time { return lo.Add(time.Duration(rng.Float64() * float64(hi.Sub(lo)))) }
	for _, c := range append(young, other...) {
		ow := c.ow
		if isYoung[ow] {
			lo, hi := p.Start.Add(-364*day), p.Start.Add(-day)
			if !c.earliest.IsZero() && c.earliest.After(lo) && c.earliest.Before(hi) {
				hi = c.earliest
			}
			ow.CreatedAt = span(lo, hi).Truncate(time.Second)
		} else {
			hi := p.Start.Add(-366 * day)
			if !c.earliest.IsZero() && c.earliest.Before(hi) {
				hi = c.earliest
			}
			ow.CreatedAt = span(hi.Add(-3000*day), hi).Truncate(time.Second)
		}
		for _, r := range ow.Repos {
			r.Truth.OwnerOld = !isYoung[ow]
		}
	}
}

// OwnerOf returns a repo's owner account.
func (p *Population) OwnerOf(r *Repo) *Owner { return p.byLogin[strings.ToLower(r.Owner)] }

// commitDate is the date of the k-th newest commit: spread over the last
// 60 days (or since creation), newest first.
func (p *Population) commitDate(r *Repo, k int) time.Time {
	lo := p.Start.Add(-60 * 24 * time.Hour)
	if r.CreatedAt.After(lo) {
		lo = r.CreatedAt
	}
	hi := p.Start.Add(-time.Hour)
	span := hi.Sub(lo)
	step := span / time.Duration(r.Commits+1)
	return hi.Add(-step * time.Duration(k))
}

// Listing is a generated registry listing.
type Listing struct {
	Server   string
	RepoURL  string
	ListedAt time.Time
}

// Listings are the registry side of the population.
func (p *Population) Listings() []Listing {
	out := make([]Listing, len(p.Repos))
	for i, r := range p.Repos {
		out[i] = Listing{Server: r.Server, RepoURL: r.URL(), ListedAt: r.ListedAt}
	}
	return out
}

// URLs are the listed repository URLs.
func (p *Population) URLs() []string {
	out := make([]string, len(p.Repos))
	for i, r := range p.Repos {
		out[i] = r.URL()
	}
	return out
}

// Limits configure the server's rate limits.
type Limits struct {
	PerHour            int // primary limit per 1 h window
	SecondaryPerMinute int // more than this many requests in any 60 s → secondary limit (0: off)
	// SecondaryNoRetryAfter answers secondary hits without a retry-after
	// header (the client must back off >= 60 s on its own).
	SecondaryNoRetryAfter bool
}

// Clock is the server's notion of now.
type Clock interface{ Now() time.Time }

// Server serves a Population.
type Server struct {
	Pop    *Population
	Limits Limits
	Clock  Clock

	mu          sync.Mutex
	windowStart time.Time
	used        int
	recent      []time.Time
	st          ServerStats
	cache       map[string]answer
	pages       map[string][]byte // commit pages by repo, page size, offset, window length
	users       map[string]int    // lower login → GET /users/{login} answered
}

// UserLookups returns how often each owner login was asked for (a copy).
func (s *Server) UserLookups() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.users))
	for k, v := range s.users {
		out[k] = v
	}
	return out
}

// ServerStats count what the server saw.
type ServerStats struct {
	Requests         int // every request
	Charged          int // requests that cost quota
	NotModified      int // 304s (free)
	PrimaryRejected  int // 403 with remaining 0
	SecondaryHits    int
	MaxUsedInWindow  int
	Redirects        int
	RequestsAfterHit int // requests within 60 s after a secondary hit (should be 0 for a polite client)
	UserRequests     int // GET /users/{login} answered (200, 304 or 404)
	UserNotModified  int // of which 304 (free)
	lastSecondary    time.Time
}

// Stats returns a copy of the counters.
func (s *Server) Stats() ServerStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st
}

// Transport is an in-process http.RoundTripper onto the server (no
// sockets: 28k repos × several requests run in seconds).
func (s *Server) Transport() http.RoundTripper {
	return rtFunc(func(req *http.Request) (*http.Response, error) {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		res := rec.Result()
		res.Request = req
		return res, nil
	})
}

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func (s *Server) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	now := s.Clock.Now()
	s.mu.Lock()
	s.st.Requests++
	if !s.st.lastSecondary.IsZero() && now.Sub(s.st.lastSecondary) < 60*time.Second && now.After(s.st.lastSecondary) {
		s.st.RequestsAfterHit++
	}
	if s.windowStart.IsZero() || now.Sub(s.windowStart) >= time.Hour {
		s.windowStart, s.used = now, 0
	}
	reset := s.windowStart.Add(time.Hour)
	hdr := func(rem int) {
		w.Header().Set("X-Ratelimit-Limit", strconv.Itoa(s.Limits.PerHour))
		w.Header().Set("X-Ratelimit-Remaining", strconv.Itoa(rem))
		w.Header().Set("X-Ratelimit-Reset", strconv.FormatInt(reset.Unix(), 10))
	}
	if s.used >= s.Limits.PerHour {
		s.st.PrimaryRejected++
		hdr(0)
		s.mu.Unlock()
		http.Error(w, `{"message":"API rate limit exceeded"}`, http.StatusForbidden)
		return
	}
	if s.Limits.SecondaryPerMinute > 0 {
		cut := now.Add(-time.Minute)
		k := 0
		for k < len(s.recent) && !s.recent[k].After(cut) {
			k++
		}
		s.recent = append(s.recent[k:], now)
		if len(s.recent) > s.Limits.SecondaryPerMinute {
			s.st.SecondaryHits++
			s.st.lastSecondary = now
			hdr(s.Limits.PerHour - s.used)
			if !s.Limits.SecondaryNoRetryAfter {
				w.Header().Set("Retry-After", "60")
			}
			s.mu.Unlock()
			http.Error(w, `{"message":"You have exceeded a secondary rate limit"}`, http.StatusForbidden)
			return
		}
	}
	s.mu.Unlock()

	status, body, etag, loc, link := s.cachedRoute(req, now)
	s.mu.Lock()
	if status == http.StatusNotModified {
		s.st.NotModified++
	} else {
		s.used++
		s.st.Charged++
		s.st.MaxUsedInWindow = max(s.st.MaxUsedInWindow, s.used)
	}
	if status == http.StatusMovedPermanently {
		s.st.Redirects++
	}
	if login, ok := strings.CutPrefix(req.URL.Path, "/users/"); ok {
		s.st.UserRequests++
		if status == http.StatusNotModified {
			s.st.UserNotModified++
		}
		if s.users == nil {
			s.users = map[string]int{}
		}
		s.users[strings.ToLower(login)]++
	}
	hdr(s.Limits.PerHour - s.used)
	s.mu.Unlock()
	if etag != "" {
		w.Header().Set("ETag", etag)
	}
	if loc != "" {
		w.Header().Set("Location", loc)
	}
	if link != "" {
		w.Header().Set("Link", link)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

func etagOf(b []byte) string {
	h := sha256.Sum256(b)
	return `W/"` + hex.EncodeToString(h[:8]) + `"`
}

type answer struct {
	status          int
	body            []byte
	etag, loc, link string
}

// cachedRoute memoizes answers per path and query (the population does not
// change during a test; If-None-Match is compared here).
func (s *Server) cachedRoute(req *http.Request, now time.Time) (int, []byte, string, string, string) {
	key := req.URL.Path + "?" + req.URL.RawQuery
	s.mu.Lock()
	if s.cache == nil {
		s.cache = map[string]answer{}
	}
	a, ok := s.cache[key]
	s.mu.Unlock()
	if !ok {
		r0 := req.Clone(req.Context())
		r0.Header.Del("If-None-Match")
		a.status, a.body, a.etag, a.loc, a.link = s.route(r0, now)
		s.mu.Lock()
		s.cache[key] = a
		s.mu.Unlock()
	}
	if a.status == http.StatusOK && a.etag != "" && req.Header.Get("If-None-Match") == a.etag {
		return http.StatusNotModified, nil, a.etag, "", ""
	}
	return a.status, a.body, a.etag, a.loc, a.link
}

// route answers one request: status, body, etag, location, link.
func (s *Server) route(req *http.Request, now time.Time) (int, []byte, string, string, string) {
	p := s.Pop
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	var r *Repo
	var sub string
	switch {
	case len(parts) >= 3 && parts[0] == "repos":
		key := strings.ToLower(parts[1] + "/" + parts[2])
		if len(parts) == 4 {
			sub = parts[3]
		}
		if old := p.oldPaths[key]; old != nil {
			return http.StatusMovedPermanently, []byte(`{"message":"Moved Permanently"}`), "",
				"https://api.github.com/repositories/" + strconv.FormatInt(old.ID, 10) + suffix(sub), ""
		}
		r = p.byPath[key]
	case len(parts) == 2 && parts[0] == "users":
		ow := p.byLogin[strings.ToLower(parts[1])]
		if ow == nil {
			return http.StatusNotFound, []byte(`{"message":"Not Found"}`), "", "", ""
		}
		body, _ := json.Marshal(map[string]any{"login": ow.Login, "id": ow.ID, "type": ow.Type,
			"created_at": ow.CreatedAt.UTC().Format(time.RFC3339), "public_repos": len(ow.Repos)})
		etag := etagOf(body)
		return http.StatusOK, body, etag, "", ""
	case len(parts) >= 2 && parts[0] == "repositories":
		id, _ := strconv.ParseInt(parts[1], 10, 64)
		r = p.byID[id]
		if len(parts) == 3 {
			sub = parts[2]
		}
	}
	if r == nil || !r.Resolved {
		return http.StatusNotFound, []byte(`{"message":"Not Found"}`), "", "", ""
	}
	var body []byte
	link := ""
	switch sub {
	case "":
		body, _ = json.Marshal(repoJSON(r))
	case "commits":
		if r.Empty {
			return http.StatusConflict, []byte(`{"message":"Git Repository is empty."}`), "", "", ""
		}
		q := req.URL.Query()
		since, _ := time.Parse(time.RFC3339, q.Get("since"))
		per, _ := strconv.Atoi(q.Get("per_page"))
		if per <= 0 || per > 100 {
			per = 30
		}
		page, _ := strconv.Atoi(q.Get("page"))
		if page <= 0 {
			page = 1
		}
		var all []int
		for k := 0; k < r.Commits; k++ {
			if !p.commitDate(r, k).Before(since) {
				all = append(all, k)
			}
		}
		lo, hi := (page-1)*per, page*per
		if lo > len(all) {
			lo = len(all)
		}
		if hi > len(all) {
			hi = len(all)
		}
		ck := fmt.Sprintf("%d/%d/%d/%d", r.ID, per, lo, len(all))
		s.mu.Lock()
		cached, ok := s.pages[ck]
		s.mu.Unlock()
		if ok {
			body = cached
		} else {
			body = buildPage(p, r, all[lo:hi])
			s.mu.Lock()
			if s.pages == nil {
				s.pages = map[string][]byte{}
			}
			s.pages[ck] = body
			s.mu.Unlock()
		}
		if hi < len(all) {
			u := *req.URL
			u.Scheme, u.Host = "https", "api.github.com"
			qq := url.Values{}
			for k, v := range q {
				qq[k] = v
			}
			qq.Set("page", strconv.Itoa(page+1))
			u.RawQuery = qq.Encode()
			link = "<" + u.String() + `>; rel="next"`
		}
	default:
		return http.StatusNotFound, []byte(`{"message":"Not Found"}`), "", "", ""
	}
	etag := etagOf(body)
	if req.Header.Get("If-None-Match") == etag {
		return http.StatusNotModified, nil, etag, "", ""
	}
	return http.StatusOK, body, etag, "", link
}

func suffix(sub string) string {
	if sub == "" {
		return ""
	}
	return "/" + sub
}

func repoJSON(r *Repo) map[string]any {
	owner, name := r.Owner, r.Name
	if r.NewOwner != "" {
		owner, name = r.NewOwner, r.NewName
	}
	var lic any
	if r.License != "" {
		lic = map[string]any{"spdx_id": r.License}
	}
	return map[string]any{
		"id": r.ID, "full_name": owner + "/" + name, "name": name,
		"owner":      map[string]any{"login": owner, "type": "User"},
		"created_at": r.CreatedAt.UTC().Format(time.RFC3339), "pushed_at": r.PushedAt.UTC().Format(time.RFC3339),
		"stargazers_count": r.Stars, "fork": r.Fork, "archived": r.Archived, "disabled": false,
		"private": false, "visibility": "public", "license": lic,
	}
}

// buildPage is one commits page.
func buildPage(p *Population, r *Repo, ks []int) []byte {
	buf := make([]byte, 0, 320*len(ks)+2)
	buf = append(buf, '[')
	for i, k := range ks {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendCommit(buf, r, k, p.commitDate(r, k))
	}
	return append(buf, ']')
}

// appendCommit writes one commit of the commits API (hand-written JSON:
// the tests serve millions of them).
func appendCommit(b []byte, r *Repo, k int, at time.Time) []byte {
	a := k % max(1, r.Authors)
	login := r.Owner + "-dev" + strconv.Itoa(a)
	b = append(b, `{"sha":"`...)
	b = append(b, fmt.Sprintf("%040x", r.ID*1000+int64(k))...)
	b = append(b, `","author":`...)
	if r.NullLogins && k%3 == 0 {
		b = append(b, "null"...) // keyed by e-mail instead
	} else {
		b = append(b, `{"login":`...)
		b = strconv.AppendQuote(b, login)
		b = append(b, '}')
	}
	b = append(b, `,"commit":{"author":{"name":`...)
	b = strconv.AppendQuote(b, login)
	b = append(b, `,"email":`...)
	b = strconv.AppendQuote(b, login+"@users.noreply.github.com")
	b = append(b, `,"date":"`...)
	b = at.UTC().AppendFormat(b, time.RFC3339)
	b = append(b, `"},"verification":{"verified":`...)
	b = strconv.AppendBool(b, r.Verified && k == 0)
	return append(b, "}}}"...)
}

// SimClock is a simulated clock: Sleep advances Now instantly.
type SimClock struct {
	mu sync.Mutex
	t  time.Time
}

// NewSimClock starts at t.
func NewSimClock(t time.Time) *SimClock { return &SimClock{t: t} }

// Now is the simulated time.
func (c *SimClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Sleep advances the simulated time by d.
func (c *SimClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d > 0 {
		c.mu.Lock()
		c.t = c.t.Add(d)
		c.mu.Unlock()
	}
	return nil
}
