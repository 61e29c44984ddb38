package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/pflag"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"golang.org/x/sync/errgroup"

	"github.com/forum-mcp/forum/api/flightsql"
	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/bus/stage"
	"github.com/forum-mcp/forum/ingest/github"
	"github.com/forum-mcp/forum/ingest/probe"
	"github.com/forum-mcp/forum/ingest/registry"
	"github.com/forum-mcp/forum/internal/component"
	"github.com/forum-mcp/forum/internal/health"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/sql/clickhouse"
	"github.com/forum-mcp/forum/sql/duckdb"
	"github.com/forum-mcp/forum/sql/store"
)

// Environment variables read here and nowhere else (flags take their
// defaults from them).
const (
	envSigningKey = "FORUM_SIGNING_KEY" // the Ed25519 key file (default DATA_DIR/publication.key)
	envAdminToken = "FORUM_ADMIN_TOKEN" // "label:token,…" bearer tokens of the admin API
	envSponsored  = "FORUM_SPONSORED"   // the sponsorship campaign, comma-separated server names
	envGitHub     = "FORUM_GITHUB_CRAWL"
)

// config is every setting shared by the subcommands: flags, with defaults
// from FORUM_* environment variables (one place, here).
type config struct {
	DataDir       string
	KafkaBrokers  string
	KafkaPort     int
	ClickHouseDSN string
	DuckDBMemory  string
	DuckDBThreads string
	Listen        string
	FlightListen  string
	FlightToken   string
	LogLevel      string
	LogFormat     string
	Partitions    int

	MethodWeights   string
	SigningKey      string
	PublishInterval time.Duration
	OpsListen       string

	crawl   component.CrawlSettings
	probe   probeFlags
	github  component.GitHubSettings
	erc8004 component.ERC8004Settings
}

func envOr(key, def string) string {
	if v, ok := os.LookupEnv(key); ok && v != "" {
		return v
	}
	return def
}

func (c *config) bindCommon(fs *pflag.FlagSet) {
	fs.StringVar(&c.DataDir, "data-dir", envOr("FORUM_DATA_DIR", "./data"), "where the embedded broker, the DuckDB file and checkpoints live (env FORUM_DATA_DIR)")
	fs.StringVar(&c.LogLevel, "log-level", envOr("FORUM_LOG_LEVEL", "info"), "debug, info, warn or error (env FORUM_LOG_LEVEL)")
	fs.StringVar(&c.LogFormat, "log-format", envOr("FORUM_LOG_FORMAT", "console"), "console or json (env FORUM_LOG_FORMAT)")
	fs.StringVar(&c.MethodWeights, "method-weights", os.Getenv(method.EnvWeights), "an adopted weights file (forum calibrate --adopt) to score with; refused unless the changelog.json beside it has its row (env "+method.EnvWeights+"; default: the embedded method)")
	fs.StringVar(&c.SigningKey, "signing-key", os.Getenv(envSigningKey), "the Ed25519 key file publications are signed with (env "+envSigningKey+"; default DATA_DIR/publication.key, created on first use)")
}

func (c *config) bindBus(fs *pflag.FlagSet) {
	fs.StringVar(&c.KafkaBrokers, "kafka-brokers", envOr("FORUM_KAFKA_BROKERS", ""), "comma-separated Kafka brokers; empty runs the embedded broker under --data-dir (env FORUM_KAFKA_BROKERS)")
	fs.IntVar(&c.KafkaPort, "embedded-kafka-port", 0, "port of the embedded broker on 127.0.0.1 (0 picks a free one)")
	fs.IntVar(&c.Partitions, "partitions", 3, "partitions of the keyed topics this process creates (registry.records, registry.snapshots and the publications always have 1)")
}

func (c *config) bindStore(fs *pflag.FlagSet) {
	fs.StringVar(&c.ClickHouseDSN, "clickhouse-dsn", envOr("FORUM_CLICKHOUSE_DSN", ""), "ClickHouse native DSN, e.g. clickhouse://127.0.0.1:9000/forum; empty uses DuckDB at DATA_DIR/forum.duckdb (env FORUM_CLICKHOUSE_DSN)")
	fs.StringVar(&c.DuckDBThreads, "duckdb-threads", envOr("FORUM_DUCKDB_THREADS", duckdb.DefaultThreads), "DuckDB's worker threads; 1 keeps an embedded run's peak memory under 1.5 GB (a checkpoint compresses one row group at a time), more speeds up large analyst queries (env FORUM_DUCKDB_THREADS)")
	fs.StringVar(&c.DuckDBMemory, "duckdb-memory-limit", envOr("FORUM_DUCKDB_MEMORY_LIMIT", duckdb.DefaultMemoryLimit), "DuckDB's memory_limit, e.g. 384MB or 2GB; bounds its buffer pool, which otherwise grows with the history to 80 % of RAM (env FORUM_DUCKDB_MEMORY_LIMIT)")
}

func (c *config) bindAPI(fs *pflag.FlagSet) {
	fs.StringVar(&c.Listen, "listen", envOr("FORUM_LISTEN", ":8080"), "API listen address (env FORUM_LISTEN)")
	fs.StringVar(&c.FlightListen, "flight-listen", envOr("FORUM_FLIGHT_LISTEN", "127.0.0.1:0"), "read-only Arrow Flight SQL address (env FORUM_FLIGHT_LISTEN); default: loopback on a free port, recorded in DATA_DIR/"+flightsql.AddrFile+" for forum sql; 'off' for none")
	fs.StringVar(&c.FlightToken, "flight-token", os.Getenv(flightsql.EnvToken), "bearer token Flight SQL clients must send (env "+flightsql.EnvToken+"); empty: one generated into DATA_DIR/"+flightsql.TokenFile+" (0600)")
}

// bindOps binds --ops-listen, for the roles without an API of their own.
func (c *config) bindOps(fs *pflag.FlagSet) {
	fs.StringVar(&c.OpsListen, "ops-listen", envOr("FORUM_OPS_LISTEN", ""), "serve /healthz, /readyz (503 while the bus or the store is down) and /metrics here, e.g. :9464 (env FORUM_OPS_LISTEN; empty: off)")
}

func (c *config) bindScorer(fs *pflag.FlagSet) {
	fs.DurationVar(&c.PublishInterval, "publish-interval", time.Hour, "a publication every interval of wall-clock time, beside the one per applied snapshot, so new probe results reach records within one interval (0: only per snapshot)")
	c.bindERC8004(fs) // the ERC-8004 committer reads the scorer's publications
}

func (c *config) bindCrawl(fs *pflag.FlagSet) {
	fs.StringVar(&c.crawl.BaseURL, "registry-url", envOr("FORUM_REGISTRY_URL", registry.DefaultBaseURL), "registry base URL (env FORUM_REGISTRY_URL)")
	fs.DurationVar(&c.crawl.Interval, "crawl-interval", 6*time.Hour, "time between crawls")
	fs.DurationVar(&c.crawl.FullEvery, "full-every", 24*time.Hour, "time between full crawls (incremental updated_since crawls in between)")
}

func (c *config) bindGitHub(fs *pflag.FlagSet) {
	fs.StringVar(&c.github.Token, "github-token", os.Getenv("GITHUB_TOKEN"), "GitHub token (env GITHUB_TOKEN); empty = 60 requests/h")
	fs.StringVar(&c.github.BaseURL, "github-api", envOr("FORUM_GITHUB_API", github.DefaultBaseURL), "GitHub REST base URL (env FORUM_GITHUB_API)")
	fs.IntVar(&c.github.PageCap, "commit-page-cap", github.DefaultCommitPageCap, "commit pages (of 100) per repo; more sets commit_cap_hit")
	fs.DurationVar(&c.github.Refresh, "github-refresh", github.DefaultRefresh, "re-observe each repo this long after its last observation")
	fs.DurationVar(&c.github.OwnerRefresh, "owner-refresh", github.DefaultOwnerRefresh, "look each owner account up again this long after the last lookup (a 304 is free)")
	c.github.Enabled = os.Getenv(envGitHub) == "1"
}

func (c *config) logger() (*zap.Logger, error) {
	lvl, err := zapcore.ParseLevel(c.LogLevel)
	if err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	var zc zap.Config
	switch c.LogFormat {
	case "json":
		zc = zap.NewProductionConfig()
	case "console":
		zc = zap.NewDevelopmentConfig()
		zc.DisableStacktrace = true
		zc.EncoderConfig.EncodeLevel = zapcore.CapitalColorLevelEncoder
		if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice == 0 {
			zc.EncoderConfig.EncodeLevel = zapcore.CapitalLevelEncoder
		}
	default:
		return nil, fmt.Errorf("--log-format: want console or json, got %q", c.LogFormat)
	}
	zc.Level = zap.NewAtomicLevelAt(lvl)
	zc.OutputPaths = []string{"stderr"}
	return zc.Build()
}

// settings are the component settings of this configuration.
func (c *config) settings() (component.Settings, error) {
	var allow []netip.Prefix
	for _, s := range c.probe.allow {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return component.Settings{}, usageError{fmt.Errorf("--probe-allow %q: %w", s, err)}
		}
		allow = append(allow, p)
	}
	key := c.SigningKey
	if key == "" {
		key = filepath.Join(c.DataDir, "publication.key")
	}
	return component.Settings{
		MethodWeights: c.MethodWeights, SigningKey: key, AdminTokens: os.Getenv(envAdminToken),
		PublishInterval: c.PublishInterval, Listen: c.Listen, Sponsors: splitList(os.Getenv(envSponsored)),
		FlightListen: c.FlightListen, FlightToken: c.FlightToken,
		Crawl: c.crawl, GitHub: c.github, ERC8004: c.erc8004,
		Probe: component.ProbeSettings{Interval: c.probe.interval, Concurrency: c.probe.concurrency, PerHost: c.probe.perHost,
			Timeout: c.probe.timeout, Allow: allow},
	}, nil
}

func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// probeFlags configure the probe scheduler and the prober workers.
type probeFlags struct {
	interval    time.Duration
	concurrency int
	perHost     int
	timeout     time.Duration
	allow       []string
}

func (p *probeFlags) bind(fs *pflag.FlagSet) {
	fs.DurationVar(&p.interval, "probe-interval", time.Hour, "how often each remote is probed (spread across the interval)")
	fs.IntVar(&p.concurrency, "probe-concurrency", 32, "probes in flight per worker")
	fs.IntVar(&p.perHost, "probe-per-host", probe.DefaultPerHostLimit, "probes in flight per host")
	fs.DurationVar(&p.timeout, "probe-timeout", probe.DefaultTimeout, "budget for one whole handshake")
	fs.StringSliceVar(&p.allow, "probe-allow", nil, "CIDRs the prober may reach although private/loopback (tests and labs only)")
}

// app holds what a subcommand opened.
type app struct {
	cfg      *config
	log      *zap.Logger
	brokers  []string
	embedded *bus.Embedded
	store    store.Store
	reg      *prometheus.Registry
	stage    *stage.Metrics
	health   *health.Watcher
	// stopOps ends the dependency watcher and the operations endpoints
	// started by openApp for --ops-listen (nil: none started there).
	stopOps func()
}

// What openApp opens besides the logger.
const (
	withStore = 1 << iota
	withBus
)

// openApp builds the logger and opens what a subcommand needs (the store is
// opened before the bus: a store that cannot open should not leave a broker
// behind). The caller closes the app.
func openApp(ctx context.Context, cfg *config, parts int) (*app, error) {
	log, err := cfg.logger()
	if err != nil {
		return nil, usageError{err}
	}
	// A method that cannot load is a bad configuration: refuse it before
	// anything starts (each component loads the same file again).
	if _, err := method.Load(cfg.MethodWeights); err != nil {
		return nil, usageError{fmt.Errorf("--method-weights: %w", err)}
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	a := &app{cfg: cfg, log: log, reg: reg, stage: stage.NewMetrics(reg), health: health.New(reg, log, 2*time.Second)}
	if cfg.OpsListen != "" {
		// Up before the store and the bus, which may be waited for: a role
		// started before its broker or database says so on /readyz and
		// forum_dependency_up while it waits.
		ln, err := net.Listen("tcp", cfg.OpsListen)
		if err != nil {
			return nil, usageError{fmt.Errorf("--ops-listen %s: %w", cfg.OpsListen, err)}
		}
		octx, stop := context.WithCancel(context.Background())
		var g errgroup.Group
		g.Go(func() error { return a.health.Run(octx) })
		g.Go(func() error { return a.health.ServeOn(octx, ln, reg) })
		a.stopOps = func() {
			stop()
			if err := g.Wait(); err != nil {
				log.Warn("operations endpoints", zap.Error(err))
			}
		}
	}
	if parts&withStore != 0 {
		if err := a.openStore(ctx); err != nil {
			a.close()
			return nil, err
		}
	}
	if parts&withBus != 0 {
		if err := a.openBus(ctx); err != nil {
			a.close()
			return nil, err
		}
	}
	return a, nil
}

func (a *app) openBus(ctx context.Context) error {
	if a.cfg.KafkaBrokers != "" {
		a.brokers = strings.Split(a.cfg.KafkaBrokers, ",")
		a.log.Info("using external Kafka", zap.Strings("brokers", a.brokers))
	} else {
		e, err := bus.StartEmbedded(filepath.Join(a.cfg.DataDir, "kafka"), a.cfg.KafkaPort, a.log)
		if err != nil {
			return err
		}
		a.embedded = e
		a.brokers = e.Addrs()
	}
	// Every topic of the table (schema.Topics), with its partitions and
	// cleanup policy: whichever role starts first creates them all.
	// EnsureTopics waits for a broker that is down or starting (watched
	// meanwhile, for --ops-listen).
	brokers := a.brokers
	a.health.Add("bus", func(ctx context.Context) error { return bus.Ping(ctx, brokers) })
	if err := bus.EnsureTopics(ctx, a.brokers, bus.TopicSpecs(a.cfg.Partitions), a.log); err != nil {
		return fmt.Errorf("the bus at %s is not usable: %w", strings.Join(a.brokers, ","), err)
	}
	return nil
}

func (a *app) openStore(ctx context.Context) error {
	if a.cfg.ClickHouseDSN != "" {
		a.health.Add("store", func(context.Context) error { return errors.New("waiting for ClickHouse to open and migrate") })
		s, err := openClickHouse(ctx, a.cfg.ClickHouseDSN, a.log)
		if err != nil {
			return err
		}
		a.store = s
	} else {
		if err := os.MkdirAll(a.cfg.DataDir, 0o755); err != nil {
			return fmt.Errorf("data dir: %w", err)
		}
		threads := cmp.Or(a.cfg.DuckDBThreads, duckdb.DefaultThreads)
		if n, err := strconv.Atoi(threads); err != nil || n < 1 {
			return fmt.Errorf("--duckdb-threads %q: want a whole number of threads, at least 1", threads)
		}
		path := filepath.Join(a.cfg.DataDir, "forum.duckdb")
		s, err := duckdb.Open(ctx, path+"?memory_limit="+url.QueryEscape(a.cfg.DuckDBMemory)+"&threads="+threads, a.log.Named("duckdb"))
		if err != nil {
			return fmt.Errorf("opening DuckDB %s (is another forum process using it?): %w", path, err)
		}
		if err := s.Migrate(ctx); err != nil {
			s.Close()
			return fmt.Errorf("migrating the store: %w", err)
		}
		a.store = s
	}
	st := a.store
	a.health.Add("store", st.Ping)
	return nil
}

// openClickHouse opens and migrates the ClickHouse store, waiting for a
// server that is down or starting as long as ctx lasts (a role started
// before its database comes up with it); a bad DSN, a refused login or a
// migration the server rejects returns at once.
func openClickHouse(ctx context.Context, dsn string, log *zap.Logger) (*clickhouse.Store, error) {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval, b.MaxInterval = 500*time.Millisecond, 10*time.Second
	attempt := 0
	return backoff.Retry(ctx, func() (*clickhouse.Store, error) {
		attempt++
		s, err := clickhouse.Open(ctx, dsn, log.Named("clickhouse"))
		if err != nil {
			err = fmt.Errorf("opening ClickHouse (%s): %w", redactDSN(dsn), err)
			if !clickhouse.Transient(err) {
				return nil, backoff.Permanent(err)
			}
			return nil, err
		}
		if err := s.Migrate(ctx); err != nil {
			s.Close()
			err = fmt.Errorf("migrating the store: %w", err)
			if !clickhouse.Transient(err) {
				return nil, backoff.Permanent(err)
			}
			return nil, err
		}
		return s, nil
	}, backoff.WithBackOff(b), backoff.WithMaxElapsedTime(0), backoff.WithNotify(func(err error, next time.Duration) {
		log.Warn("ClickHouse is not answering; waiting for it", zap.Int("attempt", attempt), zap.Duration("next_in", next.Round(time.Millisecond)), zap.Error(err))
	}))
}

func redactDSN(dsn string) string {
	if i := strings.Index(dsn, "@"); i >= 0 {
		if j := strings.Index(dsn, "://"); j >= 0 && j < i {
			return dsn[:j+3] + "***" + dsn[i:]
		}
	}
	return dsn
}

func (a *app) close() {
	if a.stopOps != nil {
		a.stopOps()
	}
	if a.store != nil {
		if err := a.store.Close(); err != nil {
			a.log.Warn("closing store", zap.Error(err))
		}
	}
	if a.embedded != nil {
		a.embedded.Close()
	}
	_ = a.log.Sync()
}

// deps are the component dependencies of this app.
func (a *app) deps() (*component.Deps, error) {
	st, err := a.cfg.settings()
	if err != nil {
		return nil, err
	}
	d := &component.Deps{Brokers: a.brokers, Partitions: a.cfg.Partitions, DataDir: a.cfg.DataDir, Log: a.log,
		Registry: a.reg, Gatherer: a.reg, Stage: a.stage, Settings: st,
		Ready: func(context.Context) error { return a.health.Ready() }}
	if a.store != nil {
		d.Store = a.store
	}
	return d, nil
}

// started is a component that runs.
type started struct {
	spec   component.Spec
	runner component.Runner
}

// start builds the components (in the order given: process before serve,
// so the scorer's signing key exists before the API reads it) and runs
// each under g; every goroutine is joined by g.Wait.
func (a *app) start(ctx context.Context, g *errgroup.Group, specs []component.Spec) ([]started, error) {
	d, err := a.deps()
	if err != nil {
		return nil, err
	}
	out := make([]started, 0, len(specs))
	for _, s := range specs {
		if !s.On(d.Settings) {
			a.log.Debug("component off in this configuration", zap.String("component", s.Name))
			continue
		}
		r, err := s.New(ctx, d)
		if err != nil {
			return nil, fmt.Errorf("starting %s: %w", s.Name, err)
		}
		out = append(out, started{spec: s, runner: r})
	}
	// The dependency watcher (forum_dependency_up, readiness); with
	// --ops-listen openApp already runs it, beside the endpoints, until
	// close.
	if a.stopOps == nil {
		g.Go(func() error { return a.health.Run(ctx) })
	}
	for _, s := range out {
		g.Go(func() error {
			if err := s.runner.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
				return fmt.Errorf("%s: %w", s.spec.Name, err)
			}
			return nil
		})
	}
	if lagging := withInput(out); len(lagging) > 0 {
		g.Go(func() error { a.reportLag(ctx, lagging); return nil })
	}
	a.log.Debug("components started", zap.Int("n", len(out)))
	return out, nil
}

// withInput are the started components that consume topics.
func withInput(cs []started) []started {
	var out []started
	for _, c := range cs {
		if isLagger(c.runner) || (c.spec.Group != "" && len(c.spec.In) > 0) {
			out = append(out, c)
		}
	}
	return out
}

// reportLag sets forum_consumer_lag{component} every 15 s until ctx ends:
// how many input messages each component has not done (what the
// dashboard's lag panel and an alert on a stuck consumer read).
func (a *app) reportLag(ctx context.Context, cs []started) {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "forum_consumer_lag",
		Help: "Input messages a component has not done yet (end offsets minus its committed offsets), read every 15 s."}, []string{"component"})
	if err := a.reg.Register(g); err != nil {
		a.log.Warn("forum_consumer_lag not registered", zap.Error(err))
		return
	}
	t := time.NewTicker(15 * time.Second)
	defer t.Stop()
	for {
		for _, c := range cs {
			lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			l, err := a.lag(lctx, []started{c})
			cancel()
			if err == nil {
				g.WithLabelValues(c.spec.Name).Set(float64(l))
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// lag is how many input messages the components have not done yet, read
// in dataflow order (upstream first: a zero read after an upstream zero
// includes everything the upstream wrote before it committed).
func (a *app) lag(ctx context.Context, cs []started) (int64, error) {
	var total int64
	for _, c := range cs {
		var l int64
		var err error
		switch {
		case isLagger(c.runner):
			l, err = c.runner.(component.Lagger).Lag(ctx)
		case c.spec.Group != "" && len(c.spec.In) > 0:
			l, err = bus.Lag(ctx, a.brokers, c.spec.Group, c.spec.In)
		}
		if err != nil {
			return 0, fmt.Errorf("lag of %s: %w", c.spec.Name, err)
		}
		total += l
	}
	return total, nil
}

func isLagger(r component.Runner) bool {
	_, ok := r.(component.Lagger)
	return ok
}

// withRoles lists the components of roles in that order of roles.
func withRoles(roles ...component.Role) []component.Spec {
	var out []component.Spec
	for _, r := range roles {
		out = append(out, component.List(r)...)
	}
	return out
}
