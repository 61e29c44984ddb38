// Package history generates days of registry history as the bus carries it,
// for benchmark 3 (bench/harness/pipeline.go): the encoded messages of
// registry.records, registry.diffs, registry.snapshots, health.checks and
// provenance.obs, in event-time order, calibrated as issue 8 asks:
//
//   - registry: bench/corpus at Servers (day 0 published in full on
//     registry.records, then each day's new versions only); each day's churn
//     (~1,400 drift events) diffed by the real differ (ingest/differ.Diff), so
//     registry.diffs and registry.snapshots hold what the differ would publish;
//   - health: one check an hour for each of Remotes remotes (the corpus'
//     servers with remotes, first ones first), spread over the hour like the
//     probe scheduler does; each remote keeps one class for the whole run,
//     assigned in exact shares of the census of real endpoints: 58.5 % open
//     (ok), 29.2 % auth-gated (auth_required, 401), 10.5 % not MCP
//     (handshake_failed: an HTML page or a 404) and 1.8 % wrong transport
//     (handshake_failed, 405 on the declared transport);
//   - GitHub: one ingest/github.Observation a day for every corpus server
//     with a repository (the crawler's 24 h refresh), with attributes drawn
//     by githubfake.Generate at the seed's base rates.
//
// Generate streams the messages to a callback (nothing is held but the
// registry and the differ state); WriteFile/ReadFile keep them in a framed
// file so the benchmark's producers read bytes instead of encoding JSON.
// The same Config and seed always give the same bytes. A path ending in
// .zst is zstd-compressed (klauspost/compress): the month is ~30 GB framed
// and ~10x smaller compressed, which leaves the disk to the broker and the
// store it benchmarks.
package history

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/forum-mcp/forum/bench/corpus"
	"github.com/forum-mcp/forum/ingest/differ"
	"github.com/forum-mcp/forum/ingest/github"
	"github.com/forum-mcp/forum/ingest/github/githubfake"
	"github.com/forum-mcp/forum/ingest/probe"
	"github.com/forum-mcp/forum/schema"
)

// Config is the size of the history.
type Config struct {
	Servers      int    // registry size at day 0 (default 50,000)
	Days         int    // days of history after day 0 (default 30)
	Remotes      int    // remotes probed every hour (default 21,000; at most the corpus' remotes)
	EventsPerDay int    // registry churn (default 1,400)
	GitHub       bool   // emit GitHub observations (one a day per repository)
	Seed         uint64 // default 1
}

// Defaults fills zero fields.
func (c *Config) Defaults() {
	if c.Servers <= 0 {
		c.Servers = 50_000
	}
	if c.Days <= 0 {
		c.Days = 30
	}
	if c.Remotes < 0 {
		c.Remotes = 0
	}
	if c.EventsPerDay <= 0 {
		c.EventsPerDay = 1400
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
}

// Census shares of remote classes (issue 8).
var Census = []struct {
	Class string
	Share float64
}{{ClassOpen, 0.585}, {ClassAuth, 0.292}, {ClassNotMCP, 0.105}, {ClassWrongTransport, 0.018}}

// Remote classes.
const (
	ClassOpen           = "open"
	ClassAuth           = "auth_gated"
	ClassNotMCP         = "not_mcp"
	ClassWrongTransport = "wrong_transport"
)

// Msg is one message as produced: topic, key, the encoded value and its
// event time.
type Msg struct {
	Topic string
	Key   []byte
	Value []byte
	At    time.Time
}

// Stats counts what Generate emitted.
type Stats struct {
	Messages int
	Bytes    int64          // values + keys
	ByTopic  map[string]int // messages per topic
	ByClass  map[string]int // remotes per census class
	Outcomes map[string]int // health checks per outcome
	Records  int            // registry records published (day 0 in full, then new versions)
	// Day0 is the number of leading messages that are day 0 (the registry
	// in full and its snapshot summary, Day0Records of them records): the
	// state a month of history starts from.
	Day0, Day0Records int
	Remotes           int
	Repos             int
	Start             time.Time // day 0
	End               time.Time // the last event time
	DriftKind         map[string]int
}

func (s *Stats) add(m Msg) {
	s.Messages++
	s.Bytes += int64(len(m.Value) + len(m.Key))
	s.ByTopic[m.Topic]++
	if m.At.After(s.End) {
		s.End = m.At
	}
}

type remote struct {
	server, url, transport string
	class                  string
	tools                  []probe.Tool
	oauth                  bool
	html                   bool
	latency                float64
}

// Generate builds the history and calls emit for each message, in event
// time order (ties: health checks of an hour, then GitHub observations, then
// the day's snapshot: records, drift events, summary). emit may keep m.
func Generate(cfg Config, emit func(m Msg) error) (Stats, error) {
	cfg.Defaults()
	st := Stats{ByTopic: map[string]int{}, ByClass: map[string]int{}, Outcomes: map[string]int{}, DriftKind: map[string]int{}}
	reg := corpus.New(corpus.Config{Servers: cfg.Servers, Seed: cfg.Seed, EventsPerDay: cfg.EventsPerDay})
	rng := rand.New(rand.NewPCG(cfg.Seed^0x5eed, cfg.Seed))
	st.Start = reg.Now()
	out := func(m Msg) error {
		st.add(m)
		return emit(m)
	}

	// Remotes, and their census classes in exact shares.
	var rems []*remote
	for _, s := range reg.Servers {
		v := s.Versions[len(s.Versions)-1]
		for _, r := range v.Remotes {
			if len(rems) < cfg.Remotes {
				rems = append(rems, &remote{server: s.Name, url: r.URL, transport: r.Type})
			}
		}
	}
	idx := rng.Perm(len(rems))
	at := 0
	for ci, c := range Census {
		n := int(math.Round(c.Share * float64(len(rems))))
		if ci == len(Census)-1 {
			n = len(rems) - at
		}
		for _, i := range idx[at:min(at+n, len(rems))] {
			rems[i].class = c.Class
		}
		at += n
	}
	for _, r := range rems {
		st.ByClass[r.class]++
		r.latency = 60 + rng.ExpFloat64()*180
		switch r.class {
		case ClassOpen:
			for k := range 1 + rng.IntN(8) {
				name := fmt.Sprintf("tool_%d", k)
				desc := fmt.Sprintf("Does %s for the %s server: reads its input and returns a JSON result.", name, r.server)
				schemaJSON := json.RawMessage(`{"properties":{"query":{"description":"what to look up","type":"string"}},"required":["query"],"type":"object"}`)
				h := sha256.Sum256([]byte(r.server + name + desc))
				r.tools = append(r.tools, probe.Tool{Name: name, Description: desc, InputSchemaPresent: true, InputSchema: schemaJSON, SHA256: hex.EncodeToString(h[:])})
			}
		case ClassAuth:
			r.oauth = rng.IntN(3) < 2
		case ClassNotMCP:
			r.html = rng.IntN(2) == 0
		}
	}
	st.Remotes = len(rems)

	// GitHub: the corpus' repositories, attributes from githubfake.
	type repoObs struct {
		key  string
		fake *githubfake.Repo
	}
	var repos []repoObs
	if cfg.GitHub {
		seen := map[string]bool{}
		for _, s := range reg.Servers {
			if k, _, _, ok := github.RepoKey(s.Repo); ok && !seen[k] {
				seen[k] = true
				repos = append(repos, repoObs{key: k})
			}
		}
		pop := githubfake.Generate(len(repos), githubfake.SeedRates, st.Start, 1, cfg.Seed)
		for i := range repos {
			repos[i].fake = pop.Repos[i]
		}
		st.Repos = len(repos)
	}

	// Day 0: the whole registry on registry.records.
	known := differ.NewState()
	res, err := snapshot(reg, known, out, &st, true)
	if err != nil {
		return st, err
	}
	known = res.Next
	st.Day0, st.Day0Records = st.Messages, st.Records
	for d := 1; d <= cfg.Days; d++ {
		dayStart := reg.Now()
		for h := range 24 {
			hour := dayStart.Add(time.Duration(h) * time.Hour)
			for i, r := range rems {
				// The scheduler spreads the remotes evenly over the hour.
				obs := hour.Add(time.Duration(int64(i) * int64(time.Hour) / int64(len(rems)))).Truncate(time.Millisecond)
				b, outcome, err := check(r, obs, rng)
				if err != nil {
					return st, err
				}
				st.Outcomes[outcome]++
				if err := out(Msg{Topic: schema.TopicHealthChecks, Key: []byte(r.server), Value: b, At: obs}); err != nil {
					return st, err
				}
			}
			for i := h; i < len(repos); i += 24 { // each repo once a day
				o := observation(repos[i].key, repos[i].fake, hour.Add(time.Duration(i/24%3600)*time.Second), d)
				b, err := json.Marshal(&o)
				if err != nil {
					return st, err
				}
				if err := out(Msg{Topic: github.Topic, Key: []byte(o.Repo), Value: b, At: o.ObservedAt}); err != nil {
					return st, err
				}
			}
		}
		reg.Advance()
		res, err := snapshot(reg, known, out, &st, false)
		if err != nil {
			return st, err
		}
		known = res.Next
	}
	return st, nil
}

// snapshot publishes the registry as of its current day: records (all on
// day 0, else the versions the known state lacks) and the snapshot's end
// marker, then the differ's events and the snapshot summary.
func snapshot(reg *corpus.Registry, known *differ.State, out func(Msg) error, st *Stats, full bool) (differ.Result, error) {
	at := reg.Now()
	id := "bench-" + at.Format("2006-01-02")
	entries := make([]schema.Entry, 0, len(reg.Servers)*4)
	published, names := 0, map[string]bool{} // what this snapshot puts on registry.records
	for _, s := range reg.Servers {
		if s.Status != "active" {
			continue
		}
		for i, v := range s.Versions {
			e := schema.Entry{
				Server: schema.ServerDetail{Name: s.Name, Description: v.Description, Title: v.Title, Version: v.Version, WebsiteURL: s.Website, Remotes: v.Remotes},
				Meta:   schema.OfficialMeta{Status: "active", PublishedAt: v.Published.UTC(), UpdatedAt: v.Published.UTC(), IsLatest: i == len(s.Versions)-1},
			}
			if _, ok := known.Versions[s.Name][v.Version]; full || !ok {
				e.Server.Packages = v.Packages
				if s.Repo != "" {
					e.Server.Repository = &schema.Repository{URL: s.Repo, Source: "github"}
				}
				raw, err := json.Marshal(&e.Server)
				if err != nil {
					return differ.Result{}, err
				}
				h := sha256.Sum256(raw)
				e.Raw, e.ContentSHA256 = raw, hex.EncodeToString(h[:])
				b, err := json.Marshal(&schema.RecordMsg{Type: schema.MsgRecord, SnapshotID: id, Mode: schema.ModeFull, ObservedAt: at, Entry: &e})
				if err != nil {
					return differ.Result{}, err
				}
				st.Records++
				published++
				names[s.Name] = true
				if err := out(Msg{Topic: schema.TopicRegistryRecords, Key: []byte(s.Name), Value: b, At: at}); err != nil {
					return differ.Result{}, err
				}
			}
			entries = append(entries, e)
		}
	}
	// The snapshot's end, as ingest/registry publishes it: the history sink
	// stores the snapshot's load row on it, and the provenance processor
	// concludes at a snapshot only once that row exists.
	endMsg, err := json.Marshal(&schema.RecordMsg{Type: schema.MsgSnapshotEnd, SnapshotID: id, Mode: schema.ModeFull, ObservedAt: at,
		End: &schema.SnapshotEnd{Source: "bench/history", Entries: published, Names: len(names)}})
	if err != nil {
		return differ.Result{}, err
	}
	if err := out(Msg{Topic: schema.TopicRegistryRecords, Key: []byte{}, Value: endMsg, At: at}); err != nil {
		return differ.Result{}, err
	}
	res := differ.Diff(known, differ.Snapshot{ID: id, Mode: schema.ModeFull, ObservedAt: at, Entries: entries}, differ.Options{})
	if full {
		// Day 0 is the baseline the month starts from, not 50k new servers.
		res.Events = nil
	}
	for i := range res.Events {
		st.DriftKind[res.Events[i].Kind]++
		b, err := json.Marshal(&res.Events[i])
		if err != nil {
			return res, err
		}
		if err := out(Msg{Topic: schema.TopicRegistryDiffs, Key: []byte(res.Events[i].Server), Value: b, At: at}); err != nil {
			return res, err
		}
	}
	sum := schema.SnapshotSummary{ID: id, Mode: schema.ModeFull, Source: "bench/history", ObservedAt: at, Entries: len(entries),
		Names: res.Names, KnownNames: len(res.Next.Latest), Partial: res.Partial, Events: len(res.Events), Counts: differ.Counts(res.Events)}
	b, err := json.Marshal(&sum)
	if err != nil {
		return res, err
	}
	return res, out(Msg{Topic: schema.TopicRegistrySnapshots, Key: []byte(id), Value: b, At: at})
}

// check is one hourly probe result of r at obs, as the prober encodes it.
func check(r *remote, obs time.Time, rng *rand.Rand) ([]byte, string, error) {
	c := probe.Check{ID: probe.CheckID(r.server, r.url, obs), ObservedAt: obs, Server: r.server, RemoteURL: r.url,
		TransportDeclared: r.transport, Transport: r.transport}
	lat := math.Round((r.latency*(0.8+0.4*rng.Float64()))*100) / 100
	c.DurationMS = lat + 5
	switch r.class {
	case ClassOpen:
		c.Outcome, c.HTTPStatus, c.InitializeLatencyMS = probe.OutcomeOK, 200, lat
		c.ServerInfo = &probe.ServerInfo{Name: r.server, Version: "1.0.0"}
		c.ProtocolVersion = probe.ProtocolVersion
		c.ToolsListed, c.ToolsPages, c.Tools = true, 1, r.tools
		c.DurationMS += lat
	case ClassAuth:
		c.Outcome, c.ErrorClass, c.HTTPStatus = probe.OutcomeAuthRequired, probe.ClassAuth, 401
		c.ErrorMessage = "HTTP 401 Unauthorized"
		if r.oauth {
			c.Auth = probe.AuthEvidence{Schemes: []string{"Bearer"}, ChallengeScheme: "Bearer",
				ResourceMetadataURL: r.url + "/.well-known/oauth-protected-resource", ResourceMetadataSource: "challenge"}
		}
	case ClassNotMCP:
		c.Outcome = probe.OutcomeHandshakeFailed
		if r.html {
			c.ErrorClass, c.HTTPStatus, c.ErrorMessage = probe.ClassContentType, 200, "unexpected content type text/html"
		} else {
			c.ErrorClass, c.HTTPStatus, c.ErrorMessage = probe.ClassHTTPStatus, 404, "HTTP 404 Not Found"
		}
	case ClassWrongTransport:
		c.Outcome, c.ErrorClass, c.HTTPStatus = probe.OutcomeHandshakeFailed, probe.ClassHTTPStatus, 405
		c.ErrorMessage = "HTTP 405 Method Not Allowed on the declared " + r.transport + " transport"
	}
	c.AuthKind = probe.DeriveAuthKind(c.Outcome, c.HTTPStatus, c.Auth)
	b, err := json.Marshal(&c)
	return b, string(c.Outcome), err
}

// observation is repository key's daily GitHub observation on day d.
func observation(key string, r *githubfake.Repo, at time.Time, d int) github.Observation {
	at = at.UTC().Truncate(time.Second)
	o := github.Observation{ID: github.ObservationID(key, at), Repo: key, ObservedAt: at}
	if !r.Resolved {
		o.Status, o.HTTPStatus = github.StatusUnresolved, 404
		return o
	}
	_, owner, name, _ := github.RepoKey("https://" + key)
	o.Status, o.HTTPStatus = github.StatusResolved, 200
	o.FullName, o.OwnerLogin, o.OwnerType = owner+"/"+name, owner, "User"
	o.CreatedAt, o.PushedAt, o.Stars = r.CreatedAt.UTC(), r.PushedAt.UTC(), r.Stars+d/7
	o.Fork, o.Archived, o.LicenseSPDX = r.Fork, r.Archived, r.License
	o.Commits = &github.CommitStats{ObservedAt: at, Since: at.Add(-90 * 24 * time.Hour), Empty: r.Empty, Count: r.Commits,
		Authors: r.Authors, Pages: 1, CapHit: r.Truth.CapHit, Last: r.PushedAt.UTC()}
	if r.Verified {
		o.Commits.Verified = max(1, r.Commits/3)
	}
	return o
}

// Topics are the topics a history uses, with the partition counts
// `forum run` gives them (3 for keyed topics, 1 for the ordered ones).
func Topics(partitions int) map[string]int {
	return map[string]int{
		schema.TopicRegistryRecords: 1, schema.TopicRegistrySnapshots: 1,
		schema.TopicRegistryDiffs: partitions, schema.TopicHealthChecks: partitions, schema.TopicDLQ: partitions,
		github.Topic: partitions,
	}
}

// The file format: a header line, then per message: uvarint topic index,
// int64 event time (Unix ms), uvarint key length, key, uvarint value length,
// value; a trailer of the Stats as JSON after a zero-length sentinel.
const magic = "forum-bench-history v1\n"

var fileTopics = []string{schema.TopicRegistryRecords, schema.TopicRegistryDiffs, schema.TopicRegistrySnapshots, schema.TopicHealthChecks, github.Topic, schema.TopicDLQ}

// WriteFile generates cfg's history into path (atomically: a temporary
// file renamed into place) and returns its stats.
func WriteFile(path string, cfg Config) (Stats, error) {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return Stats{}, fmt.Errorf("history: %w", err)
	}
	defer os.Remove(tmp)
	var out io.Writer = f
	var zw *zstd.Encoder
	if strings.HasSuffix(path, ".zst") {
		if zw, err = zstd.NewWriter(f, zstd.WithEncoderLevel(zstd.SpeedDefault)); err != nil {
			f.Close()
			return Stats{}, fmt.Errorf("history: %w", err)
		}
		out = zw
	}
	w := bufio.NewWriterSize(out, 1<<20)
	w.WriteString(magic)
	ti := map[string]uint64{}
	for i, t := range fileTopics {
		ti[t] = uint64(i + 1)
	}
	var buf [binary.MaxVarintLen64]byte
	uv := func(x uint64) { w.Write(buf[:binary.PutUvarint(buf[:], x)]) }
	st, err := Generate(cfg, func(m Msg) error {
		uv(ti[m.Topic])
		binary.Write(w, binary.LittleEndian, m.At.UnixMilli())
		uv(uint64(len(m.Key)))
		w.Write(m.Key)
		uv(uint64(len(m.Value)))
		_, err := w.Write(m.Value)
		return err
	})
	if err != nil {
		f.Close()
		return st, fmt.Errorf("history: generate: %w", err)
	}
	uv(0)
	trailer, _ := json.Marshal(&st)
	w.Write(trailer)
	if err := w.Flush(); err != nil {
		f.Close()
		return st, fmt.Errorf("history: write %s: %w", path, err)
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			f.Close()
			return st, fmt.Errorf("history: write %s: %w", path, err)
		}
	}
	if err := f.Close(); err != nil {
		return st, fmt.Errorf("history: write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return st, fmt.Errorf("history: %w", err)
	}
	return st, nil
}

// Reader reads a history file message by message.
type Reader struct {
	f     *os.File
	z     *zstd.Decoder // nil unless the file is .zst
	r     *bufio.Reader
	Stats Stats // set once Next has returned io.EOF
}

// Open opens a file written by WriteFile.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	var in io.Reader = f
	var zr *zstd.Decoder
	if strings.HasSuffix(path, ".zst") {
		// One goroutine: the benchmark's producer decompresses beside the
		// pipeline it measures, on the same cores.
		if zr, err = zstd.NewReader(f, zstd.WithDecoderConcurrency(1)); err != nil {
			f.Close()
			return nil, fmt.Errorf("history: %s: %w", path, err)
		}
		in = zr
	}
	r := bufio.NewReaderSize(in, 1<<20)
	h := make([]byte, len(magic))
	if _, err := io.ReadFull(r, h); err != nil || string(h) != magic {
		if zr != nil {
			zr.Close()
		}
		f.Close()
		return nil, fmt.Errorf("history: %s is not a history file", path)
	}
	return &Reader{f: f, z: zr, r: r}, nil
}

// Close closes the file.
func (r *Reader) Close() error {
	if r.z != nil {
		r.z.Close()
	}
	return r.f.Close()
}

// Next returns the next message (its slices are fresh: the caller may keep
// them), or io.EOF after the last one.
func (r *Reader) Next() (Msg, error) {
	t, err := binary.ReadUvarint(r.r)
	if err != nil {
		return Msg{}, fmt.Errorf("history: %w", err)
	}
	if t == 0 {
		b, err := io.ReadAll(r.r)
		if err != nil {
			return Msg{}, fmt.Errorf("history: trailer: %w", err)
		}
		if err := json.Unmarshal(b, &r.Stats); err != nil {
			return Msg{}, fmt.Errorf("history: trailer: %w", err)
		}
		return Msg{}, io.EOF
	}
	if int(t) > len(fileTopics) {
		return Msg{}, errors.New("history: corrupt file (topic index)")
	}
	var ms int64
	if err := binary.Read(r.r, binary.LittleEndian, &ms); err != nil {
		return Msg{}, fmt.Errorf("history: %w", err)
	}
	read := func() ([]byte, error) {
		n, err := binary.ReadUvarint(r.r)
		if err != nil {
			return nil, err
		}
		b := make([]byte, n)
		_, err = io.ReadFull(r.r, b)
		return b, err
	}
	k, err := read()
	if err != nil {
		return Msg{}, fmt.Errorf("history: %w", err)
	}
	v, err := read()
	if err != nil {
		return Msg{}, fmt.Errorf("history: %w", err)
	}
	return Msg{Topic: fileTopics[t-1], Key: k, Value: v, At: time.UnixMilli(ms).UTC()}, nil
}

// Summary is a one-line description of the stats.
func (s Stats) Summary() string {
	keys := make([]string, 0, len(s.ByTopic))
	for k := range s.ByTopic {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := fmt.Sprintf("%d messages, %.0f MB", s.Messages, float64(s.Bytes)/1e6)
	for _, k := range keys {
		out += fmt.Sprintf(", %s %d", k, s.ByTopic[k])
	}
	return out
}
