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
	maxRedirects         = 3
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
	// StatePath is the checkpoint file ("" = none).
	StatePath string
	Log       *zap.Logger

	state       map[string]*repoState
	newQ        []string // never observed
	commitQ     []string // resolved, commits not fetched yet
	refreshQ    []qent   // every observed repo, oldest observation first
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
	var st map[string]*repoState
	if err := json.Unmarshal(b, &st); err != nil {
		return fmt.Errorf("github: checkpoint %s: %w", c.StatePath, err)
	}
	c.state = st
	return nil
}

// Save writes the checkpoint atomically.
func (c *Crawler) Save() error {
	if c.StatePath == "" {
		return nil
	}
	return checkpoint.Save(c.StatePath, c.state)
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
			obs = append(obs, kv{k, s.Last.ObservedAt})
		}
	}
	sortStrings(c.newQ)
	sortStrings(c.commitQ)
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
			c.Log.Info("github crawl progress", zap.Int("listed", cv.Listed), zap.Int("fresh_48h", cv.Fresh),
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
	if s.Last == nil || !s.Last.ObservedAt.Equal(o.ObservedAt) {
		c.refreshQ = append(c.refreshQ, qent{key, o.ObservedAt})
	}
	s.Last = &o
	if o.Status == StatusResolved && o.Commits == nil {
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
	o.Commits = st
	if st == nil {
		o.Commits = &CommitStats{ObservedAt: now, Since: since} // fetched, nothing usable: no commit signals
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
