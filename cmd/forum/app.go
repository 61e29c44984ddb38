package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/forum-mcp/forum/api"
	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/ingest/differ"
	"github.com/forum-mcp/forum/ingest/probe"
	"github.com/forum-mcp/forum/processors/history"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/clickhouse"
	"github.com/forum-mcp/forum/sql/duckdb"
	"github.com/forum-mcp/forum/sql/store"
)

// config is every setting shared by the subcommands: flags, with defaults
// from FORUM_* environment variables (one place, here).
type config struct {
	DataDir       string
	KafkaBrokers  string
	KafkaPort     int
	ClickHouseDSN string
	DuckDBMemory  string
	Listen        string
	LogLevel      string
	LogFormat     string
	Partitions    int
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
}

func (c *config) bindBus(fs *pflag.FlagSet) {
	fs.StringVar(&c.KafkaBrokers, "kafka-brokers", envOr("FORUM_KAFKA_BROKERS", ""), "comma-separated Kafka brokers; empty runs the embedded broker under --data-dir (env FORUM_KAFKA_BROKERS)")
	fs.IntVar(&c.KafkaPort, "embedded-kafka-port", 0, "port of the embedded broker on 127.0.0.1 (0 picks a free one)")
	fs.IntVar(&c.Partitions, "partitions", 3, "partitions for keyed topics created by this process (registry.records always has 1)")
}

func (c *config) bindStore(fs *pflag.FlagSet) {
	fs.StringVar(&c.ClickHouseDSN, "clickhouse-dsn", envOr("FORUM_CLICKHOUSE_DSN", ""), "ClickHouse native DSN, e.g. clickhouse://127.0.0.1:9000/forum; empty uses DuckDB at DATA_DIR/forum.duckdb (env FORUM_CLICKHOUSE_DSN)")
	fs.StringVar(&c.DuckDBMemory, "duckdb-memory-limit", envOr("FORUM_DUCKDB_MEMORY_LIMIT", duckdb.DefaultMemoryLimit), "DuckDB's memory_limit, e.g. 512MB or 2GB; bounds its buffer pool, which otherwise grows with the history to 80 % of RAM (env FORUM_DUCKDB_MEMORY_LIMIT)")
}

func (c *config) bindAPI(fs *pflag.FlagSet) {
	fs.StringVar(&c.Listen, "listen", envOr("FORUM_LISTEN", ":8080"), "API listen address (env FORUM_LISTEN)")
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

// app holds the running pieces a subcommand asked for.
type app struct {
	cfg      *config
	log      *zap.Logger
	brokers  []string
	embedded *bus.Embedded
	store    store.Store
	reg      *prometheus.Registry
	// routes are extra API routes the running stages contribute.
	routes []func(huma.API)
}

// stageSpec is a long-running processor that a file of this package adds
// to 'run', 'replay' and 'process' by calling registerStage from init():
// one file per processor, no edits to the wiring.
type stageSpec struct {
	name   string
	group  string   // consumer group, for the replay's caught-up check ("" for none)
	topics []string // topics that group reads
	// start builds the stage on the app's bus and store (and may add API
	// routes to a.routes); the returned func runs until ctx ends.
	start func(ctx context.Context, a *app) (run func(ctx context.Context) error, err error)
	// serve marks stages that need only the store and feed the API (search
	// index, exports): 'forum serve' runs these too.
	serve bool
}

var stages []stageSpec

func registerStage(s stageSpec) { stages = append(stages, s) }

// extraCommands are subcommands other files register from init().
var extraCommands []func() *cobra.Command

func registerCommand(f func() *cobra.Command) { extraCommands = append(extraCommands, f) }

// Which registered stages startStages starts.
const (
	stagesAll       = iota // run, replay
	stagesServeOnly        // serve: the ones that only feed the API
	stagesNoServe          // process: no API, so none of those
)

// startStages starts the registered stages that which selects in g.
func (a *app) startStages(ctx context.Context, g *group, gctx context.Context, which ...int) error {
	mode := stagesAll
	if len(which) > 0 {
		mode = which[0]
	}
	for _, s := range stages {
		if (mode == stagesServeOnly && !s.serve) || (mode == stagesNoServe && s.serve) {
			continue
		}
		run, err := s.start(ctx, a)
		if err != nil {
			return fmt.Errorf("starting %s: %w", s.name, err)
		}
		g.Go(s.name, func() error { return run(gctx) })
	}
	return nil
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
	// An adopted method (forum calibrate --adopt) is put in force only by
	// naming its weights file, before any stage reads method.Current().
	if err := method.UseEnv(log); err != nil {
		return nil, usageError{err}
	}
	a := newApp(cfg, log)
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

func newApp(cfg *config, log *zap.Logger) *app {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return &app{cfg: cfg, log: log, reg: reg}
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
	// registry.records: the differ reads a snapshot in order. registry.snapshots:
	// publications follow snapshots in order (the review hold compares with
	// the previous publication).
	topics := []bus.TopicSpec{{Name: schema.TopicRegistryRecords, Partitions: 1}, {Name: schema.TopicRegistrySnapshots, Partitions: 1}}
	for _, t := range []string{schema.TopicRegistryDiffs, schema.TopicDLQ, schema.TopicProbeRequests, schema.TopicHealthChecks} {
		topics = append(topics, bus.TopicSpec{Name: t, Partitions: a.cfg.Partitions})
	}
	if err := bus.EnsureTopics(ctx, a.brokers, topics, a.log); err != nil {
		return fmt.Errorf("the bus at %s is not usable: %w", strings.Join(a.brokers, ","), err)
	}
	return nil
}

func (a *app) openStore(ctx context.Context) error {
	var s store.Store
	var err error
	if a.cfg.ClickHouseDSN != "" {
		s, err = clickhouse.Open(ctx, a.cfg.ClickHouseDSN, a.log.Named("clickhouse"))
		if err != nil {
			return fmt.Errorf("opening ClickHouse (%s): %w", redactDSN(a.cfg.ClickHouseDSN), err)
		}
	} else {
		if err := os.MkdirAll(a.cfg.DataDir, 0o755); err != nil {
			return fmt.Errorf("data dir: %w", err)
		}
		path := filepath.Join(a.cfg.DataDir, "forum.duckdb")
		s, err = duckdb.Open(ctx, path+"?memory_limit="+url.QueryEscape(a.cfg.DuckDBMemory), a.log.Named("duckdb"))
		if err != nil {
			return fmt.Errorf("opening DuckDB %s (is another forum process using it?): %w", path, err)
		}
	}
	if err := s.Migrate(ctx); err != nil {
		s.Close()
		return fmt.Errorf("migrating the store: %w", err)
	}
	a.store = s
	return nil
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

func (a *app) differStage() (*differ.Stage, error) {
	return differ.NewStage(differ.StageConfig{Brokers: a.brokers, StatePath: filepath.Join(a.cfg.DataDir, "differ-state.json"), Log: a.log})
}

func (a *app) sink() *history.Sink {
	return &history.Sink{W: a.store, Log: a.log.Named("history"), Metrics: history.NewMetrics(a.reg)}
}

// serveAPI serves until ctx ends, then shuts down gracefully.
func (a *app) serveAPI(ctx context.Context) error {
	h, _ := api.New(api.Options{Store: a.store, Log: a.log.Named("api"), Registry: a.reg, Ready: a.busReady, Routes: a.routes})
	ln, err := net.Listen("tcp", a.cfg.Listen)
	if err != nil {
		return fmt.Errorf("API listen on %s: %w", a.cfg.Listen, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 60 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
	a.log.Info("API listening", zap.String("addr", ln.Addr().String()), zap.String("docs", "http://"+displayAddr(ln.Addr())+"/docs"))
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(sctx)
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	}
}

func displayAddr(addr net.Addr) string {
	s := addr.String()
	if strings.HasPrefix(s, "[::]:") {
		return "localhost:" + strings.TrimPrefix(s, "[::]:")
	}
	if strings.HasPrefix(s, "0.0.0.0:") {
		return "localhost:" + strings.TrimPrefix(s, "0.0.0.0:")
	}
	return s
}

func (a *app) busReady(ctx context.Context) error {
	if a.brokers == nil {
		return nil
	}
	_, err := bus.Lag(ctx, a.brokers, history.Group, history.Topics)
	if err != nil {
		return fmt.Errorf("bus: %w", err)
	}
	return nil
}

// caughtUp reports whether every stage has consumed everything on the bus.
func (a *app) caughtUp(ctx context.Context, d *differ.Stage) (bool, int64, error) {
	l1, err := d.Lag(ctx)
	if err != nil {
		return false, 0, err
	}
	l2, err := bus.Lag(ctx, a.brokers, history.Group, history.Topics)
	if err != nil {
		return false, 0, err
	}
	total := l1 + l2
	for _, s := range stages {
		if s.group == "" {
			continue
		}
		l, err := bus.Lag(ctx, a.brokers, s.group, s.topics)
		if err != nil {
			return false, 0, err
		}
		total += l
	}
	return total == 0, total, nil
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

func (p *probeFlags) prober(log *zap.Logger) (*probe.Prober, error) {
	var allow []netip.Prefix
	for _, c := range p.allow {
		pfx, err := netip.ParsePrefix(c)
		if err != nil {
			return nil, usageError{fmt.Errorf("--probe-allow %q: %w", c, err)}
		}
		allow = append(allow, pfx)
	}
	return probe.New(probe.WithTimeout(p.timeout), probe.WithPerHostLimit(p.perHost), probe.WithAllow(allow...), probe.WithLogger(log.Named("prober"))), nil
}

func (a *app) probeScheduler(p *probeFlags) *probe.Scheduler {
	return &probe.Scheduler{Lister: a.store, W: bus.NewWriter(a.brokers, a.log), Interval: p.interval,
		StatePath: filepath.Join(a.cfg.DataDir, "probe-scheduler.json"), Log: a.log.Named("probe-scheduler")}
}

func (a *app) probeWorker(p *probeFlags) (*probe.Worker, error) {
	pr, err := p.prober(a.log)
	if err != nil {
		return nil, err
	}
	return &probe.Worker{Prober: pr, Brokers: a.brokers, Concurrency: p.concurrency, Log: a.log.Named("prober")}, nil
}
