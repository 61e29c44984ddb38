package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/forum-mcp/forum/api"
	"github.com/forum-mcp/forum/ingest/probe"
	"github.com/forum-mcp/forum/ingest/registry"
	"github.com/forum-mcp/forum/sql/store"
)

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
servers_latest, snapshots, dlq; the histories through their views, which show
each key once (the tables are append-only, deduplicated on read):
health_checks_v, drift_events_v, provenance_v, drift_states_v,
incident_states_v, owner_bursts_v, provenance_signals_v, base_rates_v,
provenance_gate_v, registry_loads_v; trust_records_v, publications_v.
sql/examples holds queries that run on both engines.

Example:
  forum sql "SELECT kind, count(*) AS n FROM drift_events_v GROUP BY kind ORDER BY n DESC"`,
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
			var allow []netip.Prefix
			for _, c := range pf.allow {
				pfx, err := netip.ParsePrefix(c)
				if err != nil {
					return usageError{fmt.Errorf("--probe-allow %q: %w", c, err)}
				}
				allow = append(allow, pfx)
			}
			p := probe.New(probe.WithTimeout(pf.timeout), probe.WithPerHostLimit(pf.perHost), probe.WithAllow(allow...), probe.WithLogger(log.Named("prober")))
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
