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
	"github.com/forum-mcp/forum/ingest/differ"
	"github.com/forum-mcp/forum/ingest/registry"
	"github.com/forum-mcp/forum/schema"
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
			log, err := cfg.logger()
			if err != nil {
				return usageError{err}
			}
			a := newApp(cfg, log)
			defer a.close()
			ctx := cmd.Context()
			if err := a.openStore(ctx); err != nil {
				return err
			}
			if err := a.openBus(ctx); err != nil {
				return err
			}
			stage, err := a.differStage()
			if err != nil {
				return err
			}
			loop, closeLoop, err := a.crawlLoop(cf)
			if err != nil {
				return err
			}
			defer closeLoop()
			g, gctx := newGroup(ctx)
			g.Go("differ", func() error { return stage.Run(gctx) })
			g.Go("history", func() error { return a.sink().Run(gctx, a.brokers) })
			g.Go("api", func() error { return a.serveAPI(gctx) })
			g.Go("crawler", func() error { return loop.Run(gctx) })
			return g.Wait()
		},
	}
	cfg.bindCommon(cmd.Flags())
	cfg.bindBus(cmd.Flags())
	cfg.bindStore(cmd.Flags())
	cfg.bindAPI(cmd.Flags())
	cf.bind(cmd)
	return cmd
}

func newIngestCmd() *cobra.Command {
	cfg := &config{}
	cf := &crawlFlags{}
	var role string
	var once bool
	cmd := &cobra.Command{
		Use:   "ingest --role registry",
		Short: "Run a source alone: the registry crawler",
		Long: `ingest runs one source and publishes what it reads on the bus. Roles:
  registry   crawl the registry (full, then updated_since) onto registry.records

At scale, point it at the shared Kafka with --kafka-brokers and run 'forum
process' and 'forum serve' beside it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if role != "registry" {
				return usageError{fmt.Errorf("--role %q: the roles are: registry", role)}
			}
			log, err := cfg.logger()
			if err != nil {
				return usageError{err}
			}
			a := newApp(cfg, log)
			defer a.close()
			if err := a.openBus(cmd.Context()); err != nil {
				return err
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
	cf.bind(cmd)
	cmd.Flags().StringVar(&role, "role", "registry", "which source to run")
	cmd.Flags().BoolVar(&once, "once", false, "crawl once and exit")
	return cmd
}

func newProcessCmd() *cobra.Command {
	cfg := &config{}
	cmd := &cobra.Command{
		Use:   "process",
		Short: "Run the processors alone: the differ and the history sink",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := cfg.logger()
			if err != nil {
				return usageError{err}
			}
			a := newApp(cfg, log)
			defer a.close()
			ctx := cmd.Context()
			if err := a.openStore(ctx); err != nil {
				return err
			}
			if err := a.openBus(ctx); err != nil {
				return err
			}
			stage, err := a.differStage()
			if err != nil {
				return err
			}
			g, gctx := newGroup(ctx)
			g.Go("differ", func() error { return stage.Run(gctx) })
			g.Go("history", func() error { return a.sink().Run(gctx, a.brokers) })
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
			log, err := cfg.logger()
			if err != nil {
				return usageError{err}
			}
			a := newApp(cfg, log)
			defer a.close()
			if err := a.openStore(cmd.Context()); err != nil {
				return err
			}
			return a.serveAPI(cmd.Context())
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
			log, err := cfg.logger()
			if err != nil {
				return usageError{err}
			}
			a := newApp(cfg, log)
			defer a.close()
			if err := a.openStore(cmd.Context()); err != nil {
				return err
			}
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
			log, err := cfg.logger()
			if err != nil {
				return usageError{err}
			}
			a := newApp(cfg, log)
			defer a.close()
			if err := a.openStore(cmd.Context()); err != nil {
				return err
			}
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

func newDiffCmd() *cobra.Command {
	var ratio float64
	cmd := &cobra.Command{
		Use:   "diff OLD NEW",
		Short: "Print the drift events between two snapshot files as JSON lines",
		Long: `diff compares two snapshot files (json or json.gz, either registry format) and
prints one drift event per line on stdout (SPEC §2 fields), then a count per
kind on stderr. The event time is NEW's capture time (from a MANIFEST.tsv
beside it, else a date in its name, else now).

When NEW holds fewer than --partial-ratio of OLD's names it is read as a
partial crawl: removals are not reported.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			load := func(path string) (differ.Snapshot, error) {
				f := registry.SnapshotFile{Path: path, CapturedAt: captureTime(path)}
				entries, rejects, st, err := registry.LoadSnapshotFile(f)
				if err != nil {
					return differ.Snapshot{}, err
				}
				for _, r := range rejects {
					fmt.Fprintf(os.Stderr, "%s: skipped bad input: %s: %s\n", filepath.Base(path), r.Reason, r.Detail)
				}
				return differ.Snapshot{ID: registry.SnapshotID(f.CapturedAt), Mode: schema.ModeFull, ObservedAt: f.CapturedAt, Entries: entries, Incomplete: st.Incomplete}, nil
			}
			old, err := load(args[0])
			if err != nil {
				return err
			}
			cur, err := load(args[1])
			if err != nil {
				return err
			}
			base := differ.Diff(differ.NewState(), old, differ.Options{}).Next
			res := differ.Diff(base, cur, differ.Options{PartialRatio: ratio})
			enc := json.NewEncoder(os.Stdout)
			for i := range res.Events {
				if err := enc.Encode(&res.Events[i]); err != nil {
					return err
				}
			}
			note := ""
			if res.Partial {
				note = " (partial: removals suppressed)"
			}
			fmt.Fprintf(os.Stderr, "%d events%s: %s\n", len(res.Events), note, differ.FormatCounts(differ.Counts(res.Events)))
			return nil
		},
	}
	cmd.Flags().Float64Var(&ratio, "partial-ratio", differ.DefaultPartialRatio, "share of OLD's names NEW must hold to be trusted for removals")
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

func newValidateCmd() *cobra.Command {
	var snapshot string
	cmd := &cobra.Command{
		Use:   "validate --snapshot FILE",
		Short: "Run the drift engine's self-test on a real snapshot",
		Long: `validate checks the differ against a real snapshot (SPEC §2, §7): the identical
pair must give 0 events, and each injected mutation of a known kind must be
found with 0 false events. Prints JSON on stdout and a summary on stderr;
exits 1 when a check fails.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if snapshot == "" {
				return usageError{errors.New("--snapshot FILE is required")}
			}
			f := registry.SnapshotFile{Path: snapshot, CapturedAt: captureTime(snapshot)}
			entries, _, _, err := registry.LoadSnapshotFile(f)
			if err != nil {
				return err
			}
			rep, err := differ.SelfTest(entries, f.CapturedAt)
			if err != nil {
				return err
			}
			b, _ := json.MarshalIndent(map[string]any{"drift_self_test": rep}, "", "  ")
			fmt.Println(string(b))
			for _, c := range rep.Cases {
				mark := "ok  "
				if !c.Passed {
					mark = "FAIL"
				}
				fmt.Fprintf(os.Stderr, "%s %-20s want %v got %v\n", mark, c.Name, c.Want, c.Got)
			}
			fmt.Fprintf(os.Stderr, "drift self-test on %d entries: false events %d, missed %d\n", rep.Entries, rep.FalseEvents, rep.Missed)
			if !rep.Passed {
				return errors.New("drift self-test failed")
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&snapshot, "snapshot", "", "a snapshot file (json or json.gz)")
	return cmd
}

func newOpenAPICmd() *cobra.Command {
	return &cobra.Command{
		Use:   "openapi",
		Short: "Print the OpenAPI 3.1 document",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, h := api.New(api.Options{})
			b, err := json.MarshalIndent(h.OpenAPI(), "", "  ")
			if err != nil {
				return err
			}
			fmt.Println(string(b))
			return nil
		},
	}
}
