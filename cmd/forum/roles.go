package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/ingest/registry"
	"github.com/forum-mcp/forum/internal/component"
)

// The role commands: run (everything), process, serve and ingest --role.
// Each picks its components from the one list (internal/component) and
// runs them under one errgroup: the first to fail with what a restart
// cannot fix ends the process; a shutdown joins every goroutine.

func newRunCmd() *cobra.Command {
	cfg := &config{}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run every role in one process: crawl, probe, diff, process, store, serve",
		Long: `run starts the whole pipeline in one process with the embedded defaults: a
Kafka-protocol broker on loopback persisted under DATA_DIR/kafka, and a DuckDB
file at DATA_DIR/forum.duckdb. It crawls the registry every --crawl-interval,
probes every remote every --probe-interval, runs every processor, stores the
history and serves the API on --listen. If the registry cannot be reached it
logs why, keeps serving what it has, and retries with back-off.

--kafka-brokers and --clickhouse-dsn switch the same process to an external
Kafka and ClickHouse. The GitHub crawler runs too when FORUM_GITHUB_CRAWL=1.

Components:
` + component.Describe(),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			a, err := openApp(ctx, cfg, withStore|withBus)
			if err != nil {
				return err
			}
			defer a.close()
			st, err := cfg.settings()
			if err != nil {
				return err
			}
			var specs []component.Spec
			for _, s := range component.List(component.RoleSource) {
				if s.InRun != nil && s.InRun(st) {
					specs = append(specs, s)
				}
			}
			specs = append(specs, withRoles(component.RoleProcess, component.RoleServe)...)
			g, gctx := errgroup.WithContext(ctx)
			if _, err := a.start(gctx, g, specs); err != nil {
				return waitAfter(g, err)
			}
			return g.Wait()
		},
	}
	bindAll(cfg, cmd)
	return cmd
}

// bindAll binds every flag a whole pipeline reads.
func bindAll(cfg *config, cmd *cobra.Command) {
	fs := cmd.Flags()
	cfg.bindCommon(fs)
	cfg.bindBus(fs)
	cfg.bindStore(fs)
	cfg.bindAPI(fs)
	cfg.bindScorer(fs)
	cfg.bindCrawl(fs)
	cfg.bindGitHub(fs)
	cfg.probe.bind(fs)
}

// waitAfter waits for what started (its context is already cancelled, or
// the start failure cancels it) and returns err.
func waitAfter(g *errgroup.Group, err error) error {
	_ = g.Wait()
	return err
}

func newProcessCmd() *cobra.Command {
	cfg := &config{}
	cmd := &cobra.Command{
		Use:   "process",
		Short: "Run the processors alone: differ, drift, owner burst, incidents, provenance, scorer, sinks",
		Long: `process runs every processing component (at scale, beside 'forum ingest'
roles and 'forum serve' replicas, on a shared Kafka and ClickHouse):

` + component.Describe(component.RoleProcess),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			a, err := openApp(ctx, cfg, withStore|withBus)
			if err != nil {
				return err
			}
			defer a.close()
			g, gctx := errgroup.WithContext(ctx)
			if _, err := a.start(gctx, g, component.List(component.RoleProcess)); err != nil {
				return waitAfter(g, err)
			}
			return g.Wait()
		},
	}
	cfg.bindCommon(cmd.Flags())
	cfg.bindBus(cmd.Flags())
	cfg.bindStore(cmd.Flags())
	cfg.bindScorer(cmd.Flags())
	cfg.bindOps(cmd.Flags())
	return cmd
}

func newServeCmd() *cobra.Command {
	cfg := &config{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the API from the store (stateless: run as many replicas as needed)",
		Long: `serve answers every route of the API from the configured store — the
registry history, trust records and proofs, provenance, owner bursts,
incidents, search and exports — and from read models rebuilt from it, so any
number of replicas answer alike. With --kafka-brokers it also takes incident
intake (published on the incidents topic); without, intake answers 503.

It also serves the HTML pages (/, /servers/{name}, /method), the docs
(/docs, offline) and read-only Arrow Flight SQL (--flight-listen, bearer
token --flight-token). With the embedded DuckDB store the file can be opened
by one process at a time: stop 'run' first, or use 'replay --serve'; while
one runs, 'forum sql' queries it through its Flight SQL. At scale, point every
replica at the shared ClickHouse and the scorer's signing key
(FORUM_SIGNING_KEY) so /v1/keys serves it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			parts := withStore
			if cfg.KafkaBrokers != "" {
				parts |= withBus
			}
			a, err := openApp(ctx, cfg, parts)
			if err != nil {
				return err
			}
			defer a.close()
			g, gctx := errgroup.WithContext(ctx)
			if _, err := a.start(gctx, g, component.List(component.RoleServe)); err != nil {
				return waitAfter(g, err)
			}
			return g.Wait()
		},
	}
	cfg.bindCommon(cmd.Flags())
	cfg.bindStore(cmd.Flags())
	cfg.bindAPI(cmd.Flags())
	cmd.Flags().StringVar(&cfg.KafkaBrokers, "kafka-brokers", envOr("FORUM_KAFKA_BROKERS", ""), "Kafka brokers for incident intake (env FORUM_KAFKA_BROKERS); empty: intake answers 503")
	cfg.Partitions = 3
	return cmd
}

func newIngestCmd() *cobra.Command {
	cfg := &config{}
	var role string
	var once bool
	var snapshots string
	cmd := &cobra.Command{
		Use:   "ingest --role " + strings.Join(append(component.Names(component.RoleSource), "replay"), "|"),
		Short: "Run a source alone: the registry crawler, the probe scheduler, a prober, the GitHub crawler, or a replay",
		Long: `ingest runs one source and publishes what it reads on the bus. Roles:
` + component.Describe(component.RoleSource) + `  replay           publish snapshot files (--snapshots DIR) on registry.records, as
                   'forum replay' does, then exit (for split-role runs and tests)

At scale, point it at the shared Kafka with --kafka-brokers and run 'forum
process' and 'forum serve' beside it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			spec, isComponent := component.Lookup(role)
			if role == "replay" {
				if snapshots == "" {
					return usageError{fmt.Errorf("--role replay needs --snapshots DIR")}
				}
				files, err := registry.ListSnapshots(snapshots)
				if err != nil {
					return usageError{err}
				}
				a, err := openApp(ctx, cfg, withBus)
				if err != nil {
					return err
				}
				defer a.close()
				return a.publishSnapshots(ctx, snapshots, files)
			}
			if !isComponent || spec.Role != component.RoleSource {
				return usageError{fmt.Errorf("--role %q: the roles are: %s, replay", role, strings.Join(component.Names(component.RoleSource), ", "))}
			}
			parts := withBus
			if role != "prober" && role != "registry" {
				parts |= withStore // the scheduler and the GitHub crawler read the latest view
			}
			a, err := openApp(ctx, cfg, parts)
			if err != nil {
				return err
			}
			defer a.close()
			if role == "registry" && once {
				return a.crawlOnce(ctx)
			}
			g, gctx := errgroup.WithContext(ctx)
			if _, err := a.start(gctx, g, []component.Spec{spec}); err != nil {
				return waitAfter(g, err)
			}
			return g.Wait()
		},
	}
	cfg.bindCommon(cmd.Flags())
	cfg.bindBus(cmd.Flags())
	cfg.bindStore(cmd.Flags())
	cfg.bindCrawl(cmd.Flags())
	cfg.bindGitHub(cmd.Flags())
	cfg.probe.bind(cmd.Flags())
	cfg.bindOps(cmd.Flags())
	cmd.Flags().StringVar(&role, "role", "registry", "which source to run")
	cmd.Flags().BoolVar(&once, "once", false, "registry: crawl once and exit")
	cmd.Flags().StringVar(&snapshots, "snapshots", "", "replay: the directory of snapshot files to publish")
	return cmd
}

// crawlOnce crawls the registry once onto the bus.
func (a *app) crawlOnce(ctx context.Context) error {
	c := a.cfg.crawl
	cr, err := registry.NewCrawler(registry.CrawlerOptions{BaseURL: c.BaseURL, Logger: a.log.Named("crawler")})
	if err != nil {
		return usageError{err}
	}
	w := bus.NewWriter(a.brokers, a.log)
	defer w.Close()
	loop := &registry.Loop{Crawler: cr, Publisher: &registry.Publisher{W: w, Log: a.log}, StatePath: filepath.Join(a.cfg.DataDir, registry.CrawlStateFile),
		Interval: c.Interval, FullEvery: c.FullEvery, Log: a.log.Named("crawler")}
	res, err := loop.Once(ctx)
	fmt.Fprintf(os.Stderr, "crawl %s: %d pages, %d entries, %d to the DLQ, incomplete=%v, %s\n", res.Mode, res.Pages, res.Entries, res.Rejects, res.Incomplete, res.Duration.Round(time.Millisecond))
	return err
}
