package github

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/forum-mcp/forum/internal/checkpoint"
)

// Crawler defaults.
const (
	DefaultCommitPageCap = 1
	DefaultCommitWindow  = 90 * 24 * time.Hour
	DefaultRefresh       = 24 * time.Hour
	DefaultTargetsEvery  = time.Hour
	// DefaultOwnerRefresh: an account's created_at never changes; asking
	// again monthly (304, free) only notices deleted or renamed accounts.
	DefaultOwnerRefresh = 30 * 24 * time.Hour
	maxRedirects        = 3
)

// Crawler decides what to fetch next and publishes observations.
type Crawler struct {
	Client *Client
	// Targets lists the repository URLs to observe (the registry's latest
	// entries); non-GitHub URLs are ignored.
	Targets func(ctx context.Context) ([]string, error)
	// Publish sends one observation (keyed by o.Repo).
	Publish       func(ctx context.Context, o Observation) error
	CommitPageCap int
	CommitWindow  time.Duration
	Refresh       time.Duration
	TargetsEvery  time.Duration
	// OwnerRefresh is how long an owner lookup is trusted (default 30 d).
	OwnerRefresh time.Duration
	// StatePath is the checkpoint file ("" = none).
	StatePath string
	Log       *zap.Logger

	state       map[string]*repoState
	owners      map[string]*ownerState     // lower-case login → last lookup
	ownerRepos  map[string]map[string]bool // lower-case login → listed repo keys it owns
	newQ        []string                   // never observed
	commitQ     []string                   // resolved, commits not fetched yet
	ownerQ      []string                   // owner logins never looked up or stale
	ownerQueued map[string]bool
	ownerScanAt time.Time // next look for owners whose lookup is due again
	refreshQ    []qent    // every observed repo, oldest observation first
	targetsAt   time.Time
	sinceSave   int
	initialized bool
}

// qent is a refresh-queue entry; it is stale when the repo was observed
// again since (its at differs from the last observation's).
type qent struct {
	key string
	at  time.Time
}

type repoState struct {
	Owner       string       `json:"owner"`
	Name        string       `json:"name"`
	Path        string       `json:"path,omitempty"` // owner/name after renames
	RepoETag    string       `json:"repo_etag,omitempty"`
	CommitsETag string       `json:"commits_etag,omitempty"`
	Last        *Observation `json:"last,omitempty"`
	Listed      bool         `json:"-"`
	// commitsFailed: the commits answered neither 200 nor 409 since the last
	// metadata fetch (the repo vanished between the two calls). Not queued
	// for commits again until the metadata is fetched again, so a vanished
	// repo costs one request per refresh, not a loop.
	commitsFailed bool
}

// ownerState is the last GET /users/{login} answer for one owner.
type ownerState struct {
	Login     string    `json:"login"`
	Status    int       `json:"status"` // 200, or the 4xx that answered
	CreatedAt time.Time `json:"created_at,omitzero"`
	ETag      string    `json:"etag,omitempty"`
	CheckedAt time.Time `json:"checked_at"`
}

// checkpointFile is the on-disk state (format 2 adds the owners; format 1
// was the bare repo map, still read).
type checkpointFile struct {
	Format int                    `json:"format"`
	Repos  map[string]*repoState  `json:"repos"`
	Owners map[string]*ownerState `json:"owners"`
}

func (c *Crawler) defaults() {
	if c.CommitPageCap <= 0 {
		c.CommitPageCap = DefaultCommitPageCap
	}
	if c.CommitWindow <= 0 {
		c.CommitWindow = DefaultCommitWindow
	}
	if c.Refresh <= 0 {
		c.Refresh = DefaultRefresh
	}
	if c.TargetsEvery <= 0 {
		c.TargetsEvery = DefaultTargetsEvery
	}
	if c.OwnerRefresh <= 0 {
		c.OwnerRefresh = DefaultOwnerRefresh
	}
	if c.owners == nil {
		c.owners = map[string]*ownerState{}
	}
	if c.ownerRepos == nil {
		c.ownerRepos = map[string]map[string]bool{}
	}
	if c.ownerQueued == nil {
		c.ownerQueued = map[string]bool{}
	}
	if c.Log == nil {
		c.Log = zap.NewNop()
	}
	if c.state == nil {
		c.state = map[string]*repoState{}
	}
}

// Load reads the checkpoint (a missing file is an empty state).
func (c *Crawler) Load() error {
	c.defaults()
	if c.StatePath == "" {
		return nil
	}
	b, err := os.ReadFile(c.StatePath)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("github: checkpoint: %w", err)
	}
	var cp checkpointFile
	if err := json.Unmarshal(b, &cp); err != nil {
		return fmt.Errorf("github: checkpoint %s: %w", c.StatePath, err)
	}
	if cp.Format < 2 {
		// Format 1: the repo map itself (its keys are github.com/... and
		// never "format"), no owners yet.
		cp.Repos, cp.Owners = nil, nil
		if err := json.Unmarshal(b, &cp.Repos); err != nil {
			return fmt.Errorf("github: checkpoint %s: %w", c.StatePath, err)
		}
	}
	if cp.Repos != nil {
		c.state = cp.Repos
	}
	if cp.Owners != nil {
		c.owners = cp.Owners
	}
	return nil
}

// Save writes the checkpoint atomically.
func (c *Crawler) Save() error {
	if c.StatePath == "" {
		return nil
	}
	return checkpoint.Save(c.StatePath, checkpointFile{Format: 2, Repos: c.state, Owners: c.owners})
}

// SetTargets replaces the set of repositories to observe.
func (c *Crawler) SetTargets(urls []string) {
	c.defaults()
	for _, s := range c.state {
		s.Listed = false
	}
	for _, u := range urls {
		key, owner, name, ok := RepoKey(u)
		if !ok {
			continue
		}
		s := c.state[key]
		if s == nil {
			s = &repoState{Owner: owner, Name: name}
			c.state[key] = s
		}
		s.Listed = true
	}
	c.rebuildQueues()
	c.initialized = true
}

func (c *Crawler) rebuildQueues() {
	c.newQ, c.commitQ, c.refreshQ = nil, nil, nil
	c.ownerQ, c.ownerQueued, c.ownerRepos = nil, map[string]bool{}, map[string]map[string]bool{}
	type kv struct {
		k string
		t time.Time
	}
	var obs []kv
	for k, s := range c.state {
		if !s.Listed {
			continue
		}
		switch {
		case s.Last == nil:
			c.newQ = append(c.newQ, k)
		default:
			if s.Last.Status == StatusResolved && s.Last.Commits == nil {
				c.commitQ = append(c.commitQ, k)
			}
			c.indexOwner(k, "", s.Last)
			obs = append(obs, kv{k, s.Last.ObservedAt})
		}
	}
	sortStrings(c.newQ)
	sortStrings(c.commitQ)
	// indexOwner queued in map order: queue again in login order, so the
	// crawl is deterministic.
	c.ownerQ, c.ownerQueued = nil, map[string]bool{}
	var logins []string
	for login := range c.ownerRepos {
		logins = append(logins, login)
	}
	sortStrings(logins)
	for _, login := range logins {
		c.queueOwner(login)
	}
	sortKV(obs, func(i, j int) bool {
		if !obs[i].t.Equal(obs[j].t) {
			return obs[i].t.Before(obs[j].t)
		}
		return obs[i].k < obs[j].k
	})
	for _, o := range obs {
		c.refreshQ = append(c.refreshQ, qent{o.k, o.t})
	}
}

// Coverage is the share of listed repos whose last observation is younger
// than maxAge at now, and the oldest observation time among them.
type Coverage struct {
	Listed   int       `json:"listed"`
	Observed int       `json:"observed"`
	Fresh    int       `json:"fresh"`
	Oldest   time.Time `json:"oldest,omitzero"`
}

// Coverage reports the crawler's own view of coverage.
func (c *Crawler) Coverage(now time.Time, maxAge time.Duration) Coverage {
	var cv Coverage
	for _, s := range c.state {
		if !s.Listed {
			continue
		}
		cv.Listed++
		if s.Last == nil {
			continue
		}
		cv.Observed++
		if now.Sub(s.Last.ObservedAt) < maxAge {
			cv.Fresh++
		}
		if cv.Oldest.IsZero() || s.Last.ObservedAt.Before(cv.Oldest) {
			cv.Oldest = s.Last.ObservedAt
		}
	}
	return cv
}

// Run crawls until ctx ends.
func (c *Crawler) Run(ctx context.Context) error {
	return c.RunUntil(ctx, time.Time{})
}

// RunUntil crawls until ctx ends or the clock reaches until (zero: never).
func (c *Crawler) RunUntil(ctx context.Context, until time.Time) error {
	c.defaults()
	defer func() {
		if err := c.Save(); err != nil {
			c.Log.Warn("github checkpoint", zap.Error(err))
		}
	}()
	clock := c.Client.Clock
	for {
		now := clock.Now()
		if !until.IsZero() && !now.Before(until) {
			return nil
		}
		if ctx.Err() != nil {
			return nil
		}
		if c.Targets != nil && (!c.initialized || now.Sub(c.targetsAt) >= c.TargetsEvery) {
			urls, err := c.Targets(ctx)
			if err != nil {
				c.Log.Warn("github: listing targets", zap.Error(err))
			} else {
				c.SetTargets(urls)
			}
			c.targetsAt = now
		}
		did, next, err := c.Step(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			c.Log.Warn("github: step", zap.Error(err))
		}
		if !did {
			wait := next.Sub(now)
			if next.IsZero() || wait > c.TargetsEvery {
				wait = c.TargetsEvery
			}
			if !until.IsZero() && now.Add(wait).After(until) {
				wait = until.Sub(now)
			}
			if err := clock.Sleep(ctx, max(wait, time.Second)); err != nil {
				return nil
			}
		}
		if c.sinceSave++; c.sinceSave >= 1000 {
			c.sinceSave = 0
			cv := c.Coverage(clock.Now(), 48*time.Hour)
			known, looked := c.Owners()
			c.Log.Info("github crawl progress", zap.Int("listed", cv.Listed), zap.Int("fresh_48h", cv.Fresh),
				zap.Int("owners", known), zap.Int("owners_looked_up", looked),
				zap.Any("budget", c.Client.Budget()), zap.Any("client", c.Client.Stats()))
			if err := c.Save(); err != nil {
				c.Log.Warn("github checkpoint", zap.Error(err))
			}
		}
	}
}

// Step does the next due piece of work. did is false when nothing was due;
// next is then when something will be.
func (c *Crawler) Step(ctx context.Context) (did bool, next time.Time, err error) {
	c.defaults()
	now := c.Client.Clock.Now()
	for len(c.newQ) > 0 {
		k := c.newQ[0]
		c.newQ = c.newQ[1:]
		s := c.state[k]
		if s == nil || !s.Listed || s.Last != nil {
			continue
		}
		return true, time.Time{}, c.observeRepo(ctx, k, s, false)
	}
	for len(c.commitQ) > 0 {
		k := c.commitQ[0]
		c.commitQ = c.commitQ[1:]
		s := c.state[k]
		if s == nil || !s.Listed || s.Last == nil || s.Last.Status != StatusResolved || s.Last.Commits != nil {
			continue
		}
		return true, time.Time{}, c.observeCommits(ctx, k, s, *s.Last)
	}
	if !now.Before(c.ownerScanAt) {
		c.scanOwners(now)
	}
	for len(c.ownerQ) > 0 {
		login := c.ownerQ[0]
		c.ownerQ = c.ownerQ[1:]
		delete(c.ownerQueued, login)
		if len(c.ownerRepos[login]) == 0 || !c.ownerDue(login, now) {
			continue
		}
		return true, time.Time{}, c.observeOwner(ctx, login)
	}
	for len(c.refreshQ) > 0 {
		e := c.refreshQ[0]
		k := e.key
		s := c.state[k]
		if s == nil || !s.Listed || s.Last == nil || !s.Last.ObservedAt.Equal(e.at) {
			c.refreshQ = c.refreshQ[1:]
			continue
		}
		due := s.Last.ObservedAt.Add(c.Refresh)
		if due.After(now) {
			if c.ownerScanAt.Before(due) {
				due = c.ownerScanAt
			}
			return false, due, nil
		}
		c.refreshQ = c.refreshQ[1:]
		return true, time.Time{}, c.observeRepo(ctx, k, s, true)
	}
	return false, time.Time{}, nil
}

// ghRepo is the part of GET /repos/{o}/{r} we read.
type ghRepo struct {
	FullName string `json:"full_name"`
	Owner    struct {
		Login string `json:"login"`
		Type  string `json:"type"`
	} `json:"owner"`
	CreatedAt  time.Time `json:"created_at"`
	PushedAt   time.Time `json:"pushed_at"`
	Stars      int       `json:"stargazers_count"`
	Fork       bool      `json:"fork"`
	Archived   bool      `json:"archived"`
	Disabled   bool      `json:"disabled"`
	Private    bool      `json:"private"`
	Visibility string    `json:"visibility"`
	License    *struct {
		SPDX *string `json:"spdx_id"`
	} `json:"license"`
}

// observeRepo fetches the repo (following renames) and publishes; with
// withCommits (a refresh) the commits follow right away.
func (c *Crawler) observeRepo(ctx context.Context, key string, s *repoState, withCommits bool) error {
	s.commitsFailed = false
	path := s.Path
	if path == "" {
		path = s.Owner + "/" + s.Name
	}
	etag := s.RepoETag
	renamed := false
	api := "/repos/" + path
	var resp *Response
	var err error
	for hop := 0; ; hop++ {
		resp, err = c.Client.Get(ctx, api, etag)
		if err != nil {
			c.requeue(key)
			return err
		}
		if resp.Status != http.StatusMovedPermanently && resp.Status != http.StatusFound && resp.Status != http.StatusTemporaryRedirect {
			break
		}
		if hop >= maxRedirects {
			break
		}
		np, ok := redirectPath(resp.Location)
		if !ok {
			break
		}
		api, renamed, etag = np, true, ""
	}
	now := c.Client.Clock.Now().UTC()
	o := Observation{Repo: key, ObservedAt: now, HTTPStatus: resp.Status}
	switch {
	case resp.Status == http.StatusNotModified && s.Last != nil:
		o = *s.Last
		o.ObservedAt, o.NotModified, o.HTTPStatus = now, true, resp.Status
	case resp.Status == http.StatusOK:
		var r ghRepo
		if err := json.Unmarshal(resp.Body, &r); err != nil {
			c.requeue(key)
			return fmt.Errorf("github: decoding %s: %w", path, err)
		}
		o.Status = StatusResolved
		o.FullName, o.OwnerLogin, o.OwnerType = r.FullName, r.Owner.Login, r.Owner.Type
		o.CreatedAt, o.PushedAt, o.Stars = r.CreatedAt.UTC(), r.PushedAt.UTC(), r.Stars
		o.Fork, o.Archived, o.Disabled = r.Fork, r.Archived, r.Disabled
		o.Private = r.Private || (r.Visibility != "" && r.Visibility != "public")
		if r.License != nil && r.License.SPDX != nil {
			o.LicenseSPDX = *r.License.SPDX
		}
		if s.Last != nil {
			o.Commits = s.Last.Commits // kept until the commits are fetched again
		}
		s.RepoETag = resp.ETag
		if renamed && r.FullName != "" {
			s.Path = r.FullName
			o.RenamedTo = r.FullName
		} else if s.Last != nil {
			o.RenamedTo = s.Last.RenamedTo
		}
	default:
		// 404, 403/451 that are not rate limits, 3xx loops: unresolved.
		o.Status = StatusUnresolved
		s.RepoETag, s.Path = "", ""
	}
	o.ID = ObservationID(key, now)
	if withCommits && o.Status == StatusResolved {
		return c.observeCommits(ctx, key, s, o)
	}
	return c.finish(ctx, key, s, o)
}

func (c *Crawler) finish(ctx context.Context, key string, s *repoState, o Observation) error {
	c.withOwner(&o)
	prevOwner := ""
	if s.Last != nil {
		prevOwner = s.Last.OwnerLogin
	}
	c.indexOwner(key, prevOwner, &o)
	if s.Last == nil || !s.Last.ObservedAt.Equal(o.ObservedAt) {
		c.refreshQ = append(c.refreshQ, qent{key, o.ObservedAt})
	}
	s.Last = &o
	if o.Status == StatusResolved && o.Commits == nil && !s.commitsFailed {
		c.commitQ = append(c.commitQ, key)
	}
	if c.Publish != nil {
		if err := c.Publish(ctx, o); err != nil {
			return fmt.Errorf("github: publish %s: %w", key, err)
		}
	}
	return nil
}

func (c *Crawler) requeue(key string) {
	s := c.state[key]
	if s == nil {
		return
	}
	if s.Last == nil {
		c.newQ = append(c.newQ, key)
	} else {
		c.refreshQ = append(c.refreshQ, qent{key, s.Last.ObservedAt})
	}
}

type ghCommit struct {
	Author *struct {
		Login string `json:"login"`
	} `json:"author"`
	Commit struct {
		Author struct {
			Name  string    `json:"name"`
			Email string    `json:"email"`
			Date  time.Time `json:"date"`
		} `json:"author"`
		Verification struct {
			Verified bool `json:"verified"`
		} `json:"verification"`
	} `json:"commit"`
}

var linkNext = regexp.MustCompile(`<([^>]+)>\s*;\s*rel="next"`)

// observeCommits fetches up to CommitPageCap pages of the last 90 days.
func (c *Crawler) observeCommits(ctx context.Context, key string, s *repoState, o Observation) error {
	path := s.Path
	if path == "" {
		path = s.Owner + "/" + s.Name
	}
	now := c.Client.Clock.Now().UTC()
	since := now.Add(-c.CommitWindow).Truncate(24 * time.Hour)
	q := url.Values{"since": {since.Format(time.RFC3339)}, "per_page": {"100"}}
	next := "/repos/" + path + "/commits?" + q.Encode()
	st := &CommitStats{Since: since}
	// Authors: distinct logins, plus the e-mails of null-login commits that
	// no login was seen with.
	logins, emailLogin, nullEmails := map[string]bool{}, map[string]string{}, map[string]bool{}
	for page := 0; next != ""; page++ {
		if page >= c.CommitPageCap {
			st.CapHit = true
			break
		}
		etag := ""
		if page == 0 && o.Commits != nil {
			etag = s.CommitsETag
		}
		resp, err := c.Client.Get(ctx, next, etag)
		if err != nil {
			c.requeueCommits(key)
			return err
		}
		if page == 0 && resp.Status == http.StatusNotModified && o.Commits != nil {
			cs := *o.Commits
			st = &cs
			break
		}
		if resp.Status == http.StatusConflict {
			st.Empty = true
			break
		}
		if resp.Status != http.StatusOK {
			// The repo vanished between the two calls: keep the metadata,
			// record no commit facts (they stay unknown).
			st = nil
			break
		}
		if page == 0 {
			s.CommitsETag = resp.ETag
		}
		var cs []ghCommit
		if err := json.Unmarshal(resp.Body, &cs); err != nil {
			c.requeueCommits(key)
			return fmt.Errorf("github: decoding commits of %s: %w", path, err)
		}
		st.Pages++
		for _, cm := range cs {
			st.Count++
			email := strings.ToLower(cm.Commit.Author.Email)
			if cm.Author != nil && cm.Author.Login != "" {
				login := strings.ToLower(cm.Author.Login)
				logins[login] = true
				if email != "" {
					emailLogin[email] = login
				}
			} else if email != "" {
				nullEmails[email] = true
			} else {
				nullEmails["name:"+cm.Commit.Author.Name] = true
			}
			if cm.Commit.Verification.Verified {
				st.Verified++
			}
			if d := cm.Commit.Author.Date.UTC(); d.After(st.Last) {
				st.Last = d
			}
		}
		next = ""
		if m := linkNext.FindStringSubmatch(resp.Link); m != nil {
			next = m[1]
		}
	}
	if st != nil {
		st.Authors = len(logins)
		for e := range nullEmails {
			if _, ok := emailLogin[e]; !ok {
				st.Authors++
			}
		}
		st.ObservedAt = c.Client.Clock.Now().UTC()
	}
	if st != nil {
		o.Commits = st
	} else {
		// Nothing usable: the commit facts stay what they were (unknown when
		// never fetched) rather than reading as "no commits in 90 d".
		s.commitsFailed = true
	}
	return c.finish(ctx, key, s, o)
}

func (c *Crawler) requeueCommits(key string) {
	c.commitQ = append(c.commitQ, key)
}

// redirectPath turns a 301 Location into an API path: "/repos/owner/name"
// or "/repositories/<id>" (what GitHub sends for renamed repos).
func redirectPath(loc string) (string, bool) {
	u, err := url.Parse(loc)
	if err != nil {
		return "", false
	}
	p := strings.Trim(u.Path, "/")
	if rest, ok := strings.CutPrefix(p, "repos/"); ok && strings.Count(rest, "/") == 1 {
		return "/" + p, true
	}
	if rest, ok := strings.CutPrefix(p, "repositories/"); ok && rest != "" && !strings.Contains(rest, "/") {
		return "/" + p, true
	}
	return "", false
}

// scanOwners queues the owners whose lookup is due again; it runs a few
// times per OwnerRefresh (and at least every TargetsEvery), so a refresh
// is late by a fraction of OwnerRefresh at most.
func (c *Crawler) scanOwners(now time.Time) {
	logins := make([]string, 0, len(c.ownerRepos))
	for login, repos := range c.ownerRepos {
		if len(repos) > 0 {
			logins = append(logins, login)
		}
	}
	sortStrings(logins)
	for _, login := range logins {
		c.queueOwner(login)
	}
	c.ownerScanAt = now.Add(min(c.TargetsEvery, c.OwnerRefresh/4))
}

// ownerKey is the cache key of an owner login (GitHub logins are
// case-insensitive).
func ownerKey(login string) string { return strings.ToLower(login) }

// indexOwner records that repo key is owned by o's owner (and no longer by
// prev) and queues the owner's lookup when it is due. Only resolved repos
// name a real owner.
func (c *Crawler) indexOwner(key, prev string, o *Observation) {
	if p := ownerKey(prev); p != "" && p != ownerKey(o.OwnerLogin) {
		delete(c.ownerRepos[p], key)
	}
	if o.Status != StatusResolved || o.OwnerLogin == "" {
		return
	}
	login := ownerKey(o.OwnerLogin)
	if c.ownerRepos[login] == nil {
		c.ownerRepos[login] = map[string]bool{}
	}
	c.ownerRepos[login][key] = true
	if c.owners[login] == nil {
		c.owners[login] = &ownerState{Login: o.OwnerLogin}
	}
	c.queueOwner(login)
}

// queueOwner appends login to the owner queue once, when it is due.
func (c *Crawler) queueOwner(login string) {
	if c.ownerQueued[login] || c.Client == nil || !c.ownerDue(login, c.Client.Clock.Now()) {
		return
	}
	c.ownerQueued[login] = true
	c.ownerQ = append(c.ownerQ, login)
}

// ownerDue: never looked up, or the last lookup is OwnerRefresh old.
func (c *Crawler) ownerDue(login string, now time.Time) bool {
	st := c.owners[login]
	return st == nil || st.CheckedAt.IsZero() || now.Sub(st.CheckedAt) >= c.OwnerRefresh
}

// withOwner copies the cached owner account's created_at onto o (zero when
// the owner is unknown, not yet looked up, or its lookup failed).
func (c *Crawler) withOwner(o *Observation) {
	o.OwnerCreatedAt, o.OwnerObservedAt = time.Time{}, time.Time{}
	if o.Status != StatusResolved || o.OwnerLogin == "" {
		return
	}
	st := c.owners[ownerKey(o.OwnerLogin)]
	if st == nil || st.CheckedAt.IsZero() {
		return
	}
	o.OwnerObservedAt = st.CheckedAt
	if st.Status == http.StatusOK {
		o.OwnerCreatedAt = st.CreatedAt
	}
}

// ghUser is the part of GET /users/{login} we read.
type ghUser struct {
	Login     string    `json:"login"`
	CreatedAt time.Time `json:"created_at"`
}

// observeOwner looks an owner up (If-None-Match: a 304 is free) and, when
// the answer changed what its repos' observations carry, re-publishes each
// of them with the owner's created_at (same ID and observed_at; the later
// owner_observed_at makes the processor take it, as for the commit pass).
func (c *Crawler) observeOwner(ctx context.Context, login string) error {
	st := c.owners[login]
	if st == nil {
		st = &ownerState{Login: login}
		c.owners[login] = st
	}
	resp, err := c.Client.Get(ctx, "/users/"+url.PathEscape(st.Login), st.ETag)
	if err != nil {
		c.queueOwner(login)
		return err
	}
	now := c.Client.Clock.Now().UTC()
	switch {
	case resp.Status == http.StatusNotModified && st.Status == http.StatusOK:
		st.CheckedAt = now
		return nil // unchanged: the observations already carry it
	case resp.Status == http.StatusOK:
		var u ghUser
		if err := json.Unmarshal(resp.Body, &u); err != nil {
			// A broken answer is no fact; asked again at the next refresh.
			st.CheckedAt = now
			return fmt.Errorf("github: decoding user %s: %w", st.Login, err)
		}
		if u.CreatedAt.IsZero() {
			st.CheckedAt = now
			return fmt.Errorf("github: user %s without created_at", st.Login)
		}
		st.Status, st.CreatedAt, st.ETag, st.CheckedAt = http.StatusOK, u.CreatedAt.UTC(), resp.ETag, now
	default:
		// 404 (account gone), or a 304 without a stored answer: unknown.
		st.Status, st.CreatedAt, st.ETag, st.CheckedAt = resp.Status, time.Time{}, "", now
	}
	keys := make([]string, 0, len(c.ownerRepos[login]))
	for k := range c.ownerRepos[login] {
		keys = append(keys, k)
	}
	sortStrings(keys)
	for _, k := range keys {
		s := c.state[k]
		if s == nil || !s.Listed || s.Last == nil || ownerKey(s.Last.OwnerLogin) != login {
			continue
		}
		o := *s.Last
		c.withOwner(&o)
		if o.OwnerCreatedAt.Equal(s.Last.OwnerCreatedAt) && !s.Last.OwnerObservedAt.IsZero() {
			continue
		}
		s.Last = &o
		if c.Publish != nil {
			if err := c.Publish(ctx, o); err != nil {
				return fmt.Errorf("github: publish %s: %w", k, err)
			}
		}
	}
	return nil
}

// Owners is how many distinct owner accounts the crawler knows and how many
// of them were looked up.
func (c *Crawler) Owners() (known, lookedUp int) {
	for _, st := range c.owners {
		known++
		if !st.CheckedAt.IsZero() {
			lookedUp++
		}
	}
	return known, lookedUp
}
