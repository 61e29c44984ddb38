package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/forum-mcp/forum/api"
	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/ingest/github"
	"github.com/forum-mcp/forum/ingest/probe"
	"github.com/forum-mcp/forum/ingest/registry"
	"github.com/forum-mcp/forum/sql/store"
)

type crawlFlags struct {
	baseURL   string
	interval  time.Duration
	fullEvery time.Duration
}

func (c *crawlFlags) bind(cmd *cobra.Command) {
	cmd.Flags().StringVar(&c.baseURL, "registry-url", envOr("FORUM_REGISTRY_URL", registry.DefaultBaseURL), "registry base URL (env FORUM_REGISTRY_URL)")
	cmd.Flags().DurationVar(&c.interval, "crawl-interval", 6*time.Hour, "time between crawls")
	cmd.Flags().DurationVar(&c.fullEvery, "full-every", 24*time.Hour, "time between full crawls (incremental updated_since crawls in between)")
}

func (a *app) crawlLoop(c *crawlFlags) (*registry.Loop, func(), error) {
	cr, err := registry.NewCrawler(registry.CrawlerOptions{BaseURL: c.baseURL, Logger: a.log.Named("crawler")})
	if err != nil {
		return nil, nil, usageError{err}
	}
	w := bus.NewWriter(a.brokers, a.log)
	return &registry.Loop{Crawler: cr, Publisher: &registry.Publisher{W: w, Log: a.log}, StatePath: filepath.Join(a.cfg.DataDir, "crawl-state.json"),
		Interval: c.interval, FullEvery: c.fullEvery, Log: a.log.Named("crawler")}, func() { w.Close() }, nil
}

func newRunCmd() *cobra.Command {
	cfg := &config{}
	cf := &crawlFlags{}
	pf := &probeFlags{}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run every role in one process: crawl, diff, store, serve",
		Long: `run starts the whole pipeline in one process with the embedded defaults: a
Kafka-protocol broker on loopback persisted under DATA_DIR/kafka, and a DuckDB
file at DATA_DIR/forum.duckdb. It crawls the registry every --crawl-interval,
publishes records and drift events on the bus, stores the history and serves
the API on --listen. If the registry cannot be reached it logs why, keeps
serving what it has, and retries with back-off.

--kafka-brokers and --clickhouse-dsn switch the same process to an external
Kafka and ClickHouse.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			a, err := openApp(ctx, cfg, withStore|withBus)
			if err != nil {
				return err
			}
			defer a.close()
			stage, err := a.differStage()
			if err != nil {
				return err
			}
			loop, closeLoop, err := a.crawlLoop(cf)
			if err != nil {
				return err
			}
			defer closeLoop()
			worker, err := a.probeWorker(pf)
			if err != nil {
				return err
			}
			sched := a.probeScheduler(pf)
			defer sched.W.Close()
			g, gctx := newGroup(ctx)
			g.Go("differ", func() error { return stage.Run(gctx) })
			g.Go("history", func() error { return a.sink().Run(gctx, a.brokers) })
			g.Go("crawler", func() error { return loop.Run(gctx) })
			g.Go("probe-scheduler", func() error { return sched.Run(gctx) })
			g.Go("prober", func() error { return worker.Run(gctx) })
			if err := a.startStages(ctx, g, gctx); err != nil {
				g.cancel()
				_ = g.Wait()
				return err
			}
			g.Go("api", func() error { return a.serveAPI(gctx) })
			return g.Wait()
		},
	}
	cfg.bindCommon(cmd.Flags())
	cfg.bindBus(cmd.Flags())
	cfg.bindStore(cmd.Flags())
	cfg.bindAPI(cmd.Flags())
	cf.bind(cmd)
	pf.bind(cmd.Flags())
	return cmd
}

func newIngestCmd() *cobra.Command {
	cfg := &config{}
	cf := &crawlFlags{}
	pf := &probeFlags{}
	var role string
	var once bool
	cmd := &cobra.Command{
		Use:   "ingest --role registry|probe-scheduler|prober|github",
		Short: "Run a source alone: the registry crawler, the probe scheduler or a prober",
		Long: `ingest runs one source and publishes what it reads on the bus. Roles:
  registry         crawl the registry (full, then updated_since) onto registry.records
  probe-scheduler  publish a probe request for every remote once per --probe-interval
                   onto probe.requests (reads the latest view from the store)
  prober           execute probe requests and publish health.checks; run as many as
                   needed, they share the work as one consumer group
  github           crawl the GitHub repo of every listed server onto provenance.obs
                   (GITHUB_TOKEN for 5,000 requests/h; 'forum github' has the flags)

At scale, point it at the shared Kafka with --kafka-brokers and run 'forum
process' and 'forum serve' beside it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch role {
			case "registry", "probe-scheduler", "prober", "github":
			default:
				return usageError{fmt.Errorf("--role %q: the roles are: registry, probe-scheduler, prober, github", role)}
			}
			ctx := cmd.Context()
			a, err := openApp(ctx, cfg, withBus)
			if err != nil {
				return err
			}
			defer a.close()
			switch role {
			case "probe-scheduler":
				if err := a.openStore(cmd.Context()); err != nil {
					return err
				}
				s := a.probeScheduler(pf)
				defer s.W.Close()
				return s.Run(cmd.Context())
			case "prober":
				w, err := a.probeWorker(pf)
				if err != nil {
					return err
				}
				return w.Run(cmd.Context())
			case "github":
				// The same crawler as 'forum github', with its defaults.
				if err := a.openStore(cmd.Context()); err != nil {
					return err
				}
				if err := ensureProvenanceTopic(cmd.Context(), a); err != nil {
					return err
				}
				run, err := githubCrawler(a, githubFlags{token: os.Getenv("GITHUB_TOKEN"), base: envOr("FORUM_GITHUB_API", github.DefaultBaseURL),
					pageCap: github.DefaultCommitPageCap, refresh: github.DefaultRefresh})
				if err != nil {
					return err
				}
				return run(cmd.Context())
			}
			loop, closeLoop, err := a.crawlLoop(cf)
			if err != nil {
				return err
			}
			defer closeLoop()
			if once {
				res, err := loop.Once(cmd.Context())
				fmt.Fprintf(os.Stderr, "crawl %s: %d pages, %d entries, %d to the DLQ, incomplete=%v, %s\n", res.Mode, res.Pages, res.Entries, res.Rejects, res.Incomplete, res.Duration.Round(time.Millisecond))
				return err
			}
			return loop.Run(cmd.Context())
		},
	}
	cfg.bindCommon(cmd.Flags())
	cfg.bindBus(cmd.Flags())
	cfg.bindStore(cmd.Flags())
	cf.bind(cmd)
	pf.bind(cmd.Flags())
	cmd.Flags().StringVar(&role, "role", "registry", "which source to run")
	cmd.Flags().BoolVar(&once, "once", false, "crawl once and exit")
	return cmd
}

func newProcessCmd() *cobra.Command {
	cfg := &config{}
	cmd := &cobra.Command{
		Use:   "process",
		Short: "Run the processors alone: differ, history sink, drift/incidents/owner burst, scorer",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			a, err := openApp(ctx, cfg, withStore|withBus)
			if err != nil {
				return err
			}
			defer a.close()
			stage, err := a.differStage()
			if err != nil {
				return err
			}
			g, gctx := newGroup(ctx)
			g.Go("differ", func() error { return stage.Run(gctx) })
			g.Go("history", func() error { return a.sink().Run(gctx, a.brokers) })
			// No API here: the stages that only feed it (search, exports) stay off.
			if err := a.startStages(ctx, g, gctx, stagesNoServe); err != nil {
				g.cancel()
				_ = g.Wait()
				return err
			}
			return g.Wait()
		},
	}
	cfg.bindCommon(cmd.Flags())
	cfg.bindBus(cmd.Flags())
	cfg.bindStore(cmd.Flags())
	return cmd
}

func newServeCmd() *cobra.Command {
	cfg := &config{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the API from the store",
		Long: `serve answers the API from the configured store. With the embedded DuckDB
store the file can be opened by one process at a time: stop 'run' first, or
use 'replay --serve'.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			a, err := openApp(ctx, cfg, withStore)
			if err != nil {
				return err
			}
			defer a.close()
			if err := a.addStoreRoutes(); err != nil {
				return err
			}
			g, gctx := newGroup(ctx)
			if err := a.startStages(ctx, g, gctx, stagesServeOnly); err != nil {
				g.cancel()
				_ = g.Wait()
				return err
			}
			g.Go("api", func() error { return a.serveAPI(gctx) })
			return g.Wait()
		},
	}
	cfg.bindCommon(cmd.Flags())
	cfg.bindStore(cmd.Flags())
	cfg.bindAPI(cmd.Flags())
	return cmd
}

func newMigrateCmd() *cobra.Command {
	cfg := &config{}
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Create or upgrade the store's tables",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			a, err := openApp(ctx, cfg, withStore)
			if err != nil {
				return err
			}
			defer a.close()
			fmt.Fprintln(os.Stderr, "store is at the latest schema")
			return nil
		},
	}
	cfg.bindCommon(cmd.Flags())
	cfg.bindStore(cmd.Flags())
	return cmd
}

func newSQLCmd() *cobra.Command {
	cfg := &config{}
	var format string
	cmd := &cobra.Command{
		Use:   `sql "SELECT ..."`,
		Short: "Run one read-only SQL statement against the store",
		Long: `sql runs one SELECT (or WITH, SHOW, DESCRIBE, EXPLAIN) against the configured
store and prints the rows. Writes are refused. Tables: registry_records,
servers_latest, drift_events, snapshots, dlq.

Example:
  forum sql "SELECT kind, count(*) AS n FROM drift_events GROUP BY kind ORDER BY n DESC"`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			a, err := openApp(ctx, cfg, withStore)
			if err != nil {
				return err
			}
			defer a.close()
			q, ok := a.store.(store.Querier)
			if !ok {
				return errors.New("this store does not answer ad-hoc SQL")
			}
			cols, rows, err := q.Query(cmd.Context(), args[0])
			if err != nil {
				if errors.Is(err, store.ErrNotReadOnly) {
					return usageError{err}
				}
				return err
			}
			switch format {
			case "json":
				enc := json.NewEncoder(os.Stdout)
				for _, r := range rows {
					obj := make(map[string]any, len(cols))
					for i, c := range cols {
						obj[c] = r[i]
					}
					if err := enc.Encode(obj); err != nil {
						return err
					}
				}
			case "table":
				tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, strings.Join(cols, "\t"))
				for _, r := range rows {
					cells := make([]string, len(r))
					for i, v := range r {
						cells[i] = fmt.Sprint(v)
					}
					fmt.Fprintln(tw, strings.Join(cells, "\t"))
				}
				if err := tw.Flush(); err != nil {
					return err
				}
				fmt.Fprintf(os.Stderr, "(%d rows)\n", len(rows))
			default:
				return usageError{fmt.Errorf("--format: want table or json, got %q", format)}
			}
			return nil
		},
	}
	cfg.bindCommon(cmd.Flags())
	cfg.bindStore(cmd.Flags())
	cmd.Flags().StringVar(&format, "format", "table", "table or json (one object per line)")
	return cmd
}

// captureTime finds a file's capture time: a MANIFEST.tsv beside it, else a
// date in its name, else now.
func captureTime(path string) time.Time {
	if files, err := registry.ListSnapshots(filepath.Dir(path)); err == nil {
		for _, f := range files {
			if filepath.Base(f.Path) == filepath.Base(path) {
				return f.CapturedAt
			}
		}
	}
	return time.Now().UTC().Truncate(time.Second)
}

func newOpenAPICmd() *cobra.Command {
	return &cobra.Command{
		Use:   "openapi",
		Short: "Print the OpenAPI 3.1 document",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, h := api.New(api.Options{Routes: api.DocumentRoutes()})
			b, err := json.MarshalIndent(h.OpenAPI(), "", "  ")
			if err != nil {
				return err
			}
			fmt.Println(string(b))
			return nil
		},
	}
}

func newProbeCmd() *cobra.Command {
	pf := &probeFlags{}
	var transport, server string
	cmd := &cobra.Command{
		Use:   "probe URL",
		Short: "Probe one MCP endpoint and print the check as JSON",
		Long: `probe runs the same MCP handshake the hourly probers run (initialize,
notifications/initialized, tools/list with paging; legacy SSE when asked) against
one URL and prints the check: outcome, latency, HTTP status, transport used,
auth evidence (WWW-Authenticate, RFC 9728 metadata), server info, protocol
version and tools. Loopback, private and link-local addresses are refused
unless --probe-allow names them.

Examples:
  forum probe https://mcp.example.com/mcp
  forum probe --transport sse https://mcp.example.com/sse
  forum probe --probe-allow 127.0.0.0/8 http://127.0.0.1:3000/mcp`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if transport != probe.TransportStreamableHTTP && transport != probe.TransportSSE {
				return usageError{fmt.Errorf("--transport: want streamable-http or sse, got %q", transport)}
			}
			log, err := (&config{LogLevel: "warn", LogFormat: "console"}).logger()
			if err != nil {
				return err
			}
			p, err := pf.prober(log)
			if err != nil {
				return err
			}
			defer p.Close()
			c := p.Probe(cmd.Context(), probe.Request{Server: server, URL: args[0], Transport: transport})
			b, _ := json.MarshalIndent(c, "", "  ")
			fmt.Println(string(b))
			fmt.Fprintf(os.Stderr, "%s: %s (%s) in %.0f ms, %d tools\n", args[0], c.Outcome, c.AuthKind, c.DurationMS, len(c.Tools))
			return nil
		},
	}
	cmd.Flags().StringVar(&transport, "transport", probe.TransportStreamableHTTP, "streamable-http or sse")
	cmd.Flags().StringVar(&server, "server", "", "registry name to record on the check")
	pf.bind(cmd.Flags())
	return cmd
}
