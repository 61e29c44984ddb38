package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/forum-mcp/forum/api/flightsql"
	"github.com/forum-mcp/forum/sql/store"
)

// sqlTables are the tables and views `forum sql --help` lists, one line
// each (a test checks the list against a migrated store, both ways).
var sqlTables = [][2]string{
	{"registry_records", "every stored registry entry content (name, version, content_sha256, observed_at, server JSON)"},
	{"servers_latest", "each server's latest registry entry"},
	{"snapshots", "applied snapshots with their per-kind event counts, partial or not"},
	{"registry_loads", "snapshots whose records are all stored"},
	{"drift_events", "registry drift events (new_server, version_added, …)"},
	{"health_checks", "MCP handshake checks (outcome, latency, auth, tools; check_json)"},
	{"provenance", "GitHub observations of repositories"},
	{"incidents", "curated incidents, current state"},
	{"incident_audit", "append-only log of incident inserts and retractions (who, why)"},
	{"drift_states", "the drift processor's conclusions per server"},
	{"incident_states", "the incidents processor's conclusions per server"},
	{"owner_bursts", "owner-burst evaluations per namespace and day"},
	{"provenance_signals", "the provenance processor's signals per server"},
	{"base_rates", "live vs pinned base rates per flag"},
	{"provenance_gate", "the GitHub coverage gate"},
	{"trust_records", "published records (the sealed JSON in record)"},
	{"publications", "signed publication headers (Merkle root, signature)"},
	{"review_approvals", "admin approvals of popular-server review holds"},
	{"dlq", "dead letters with their reason codes"},
	{"registry_sightings", "each registry content's last sighting (versions' is_latest and status as of a time)"},
	{"admin_audit", "every /v1/admin call, refused ones included (who, route, outcome)"},
	{"schema_migrations", "applied store migrations"},
	{"health_checks_v", "view: one row per check id, with observed_at_ms, observed_day"},
	{"drift_events_v", "view: one row per event id, with observed_at_ms, observed_day"},
	{"provenance_v", "view: one row per GitHub observation, with *_ms twins and flag_* columns"},
	{"trust_records_v", "view: one row per (publication, server) of visible publications, with computed_day"},
	{"publications_v", "view: one row per publication, with computed_day"},
	{"drift_states_v", "view: per (server, as_of): score, strong_negative, events"},
	{"incident_states_v", "view: per (server, as_of): score, incidents, counted"},
	{"owner_bursts_v", "view: per (namespace, day), the day's latest evaluation"},
	{"provenance_signals_v", "view: per (server, as_of): score, reason, flag_* columns"},
	{"base_rates_v", "view: per (flag, as_of): live, pinned, delta_pp, n"},
	{"provenance_gate_v", "view: per as_of: open, coverage_pct, resolvable, fresh"},
	{"registry_loads_v", "view: per snapshot: observed_at, entries"},
}

func sqlTablesHelp() string {
	var b strings.Builder
	for _, t := range sqlTables {
		fmt.Fprintf(&b, "  %-21s %s\n", t[0], t[1])
	}
	return b.String()
}

func newSQLCmd() *cobra.Command {
	cfg := &config{}
	var format, file, server, token string
	var params []string
	cmd := &cobra.Command{
		Use:   `sql "SELECT ..." | sql -f FILE [--param NAME=VALUE ...]`,
		Short: "Run one read-only SQL statement against the store (or a running forum's, over Flight SQL)",
		Long: `sql runs one SELECT (or WITH, SHOW, DESCRIBE, EXPLAIN) and prints the rows.
Writes are refused.

The statement is the argument, or the file given with -f (e.g. one of
sql/examples/*.sql, which run as written). Placeholders {{NAME}} are replaced
textually by --param NAME=VALUE; {{now_ms}} defaults to the current instant in
Unix milliseconds (UTC). A value may not hold a quote or a backslash (the
files put {{server}} inside a string literal). Leading "--" comment lines are
ignored (an argument that starts with one is SQL, not a flag).

Where it runs: on the store of --data-dir / --clickhouse-dsn; when the DuckDB
file is held by a running forum (run, serve, replay --serve), through that
process's read-only Arrow Flight SQL server, found in
DATA_DIR/` + flightsql.AddrFile + ` with the token of --token, ` + flightsql.EnvToken + ` or
DATA_DIR/` + flightsql.TokenFile + `; with --server HOST:PORT, always there. Over Flight SQL,
file-reading table functions (read_csv, read_parquet, glob, file(), url(), …)
are refused as well.

Tables and views (DuckDB and ClickHouse alike; sql/examples/README.md says
what the views add). The histories are append-only, deduplicated on read: a
row delivered twice is stored twice until a merge, so ask the *_v views,
which show each key once:
` + sqlTablesHelp() + `
Examples:
  forum sql "SELECT kind, count(*) AS n FROM drift_events_v GROUP BY kind ORDER BY n DESC"
  forum sql -f sql/examples/uptime_30d.sql
  forum sql -f sql/examples/band_history.sql --param server=io.github.someone/some-mcp --param now_ms=1760054400000
  forum sql --server 127.0.0.1:8815 --token "$TOKEN" -f sql/examples/band_changes.sql --format json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var text string
			switch {
			case file != "" && len(args) == 1:
				return usageError{errors.New("give the statement as an argument or with -f, not both")}
			case file != "":
				b, err := os.ReadFile(file)
				if err != nil {
					return usageError{fmt.Errorf("-f: %w", err)}
				}
				text = string(b)
			case len(args) == 1:
				text = args[0]
			default:
				return usageError{errors.New("a statement (argument) or -f FILE is required")}
			}
			if format != "table" && format != "json" {
				return usageError{fmt.Errorf("--format: want table or json, got %q", format)}
			}
			q, err := substitute(text, params, time.Now())
			if err != nil {
				return usageError{err}
			}
			q = stripLeadingComments(q)
			ctx := cmd.Context()
			if server != "" {
				return runRemoteSQL(ctx, cmd, server, flightToken(token, cfg.DataDir), q, format)
			}
			a, err := openApp(ctx, cfg, withStore)
			if err != nil {
				if cfg.ClickHouseDSN == "" {
					if addr, _ := flightsql.ReadAddr(cfg.DataDir); addr != "" {
						fmt.Fprintf(cmd.ErrOrStderr(), "the store is held by a running forum: querying it through Flight SQL at %s\n", addr)
						return runRemoteSQL(ctx, cmd, addr, flightToken(token, cfg.DataDir), q, format)
					}
				}
				return err
			}
			defer a.close()
			qr, ok := a.store.(store.Querier)
			if !ok {
				return errors.New("this store does not answer ad-hoc SQL")
			}
			cols, rows, err := qr.Query(ctx, q)
			if err != nil {
				if errors.Is(err, store.ErrNotReadOnly) {
					return usageError{err}
				}
				return err
			}
			return printRows(cmd.OutOrStdout(), cmd.ErrOrStderr(), cols, rows, format)
		},
	}
	cfg.bindCommon(cmd.Flags())
	cfg.bindStore(cmd.Flags())
	cmd.Flags().StringVar(&format, "format", "table", "table or json (one object per line)")
	cmd.Flags().StringVarP(&file, "file", "f", "", "read the statement from this file")
	cmd.Flags().StringArrayVar(&params, "param", nil, "NAME=VALUE for a {{NAME}} placeholder (repeatable; now_ms defaults to now)")
	cmd.Flags().StringVar(&server, "server", "", "HOST:PORT of a forum's Flight SQL server (default: the store, or the running forum holding it)")
	cmd.Flags().StringVar(&token, "token", "", "Flight SQL bearer token (default: env "+flightsql.EnvToken+", else DATA_DIR/"+flightsql.TokenFile+")")
	return cmd
}

// flightToken is --token, else FORUM_FLIGHT_TOKEN, else the data dir's.
func flightToken(flag, dataDir string) string {
	if flag != "" {
		return flag
	}
	if v := os.Getenv(flightsql.EnvToken); v != "" {
		return v
	}
	tok, _ := flightsql.ReadToken(dataDir)
	return tok
}

func runRemoteSQL(ctx context.Context, cmd *cobra.Command, addr, token, q, format string) error {
	if token == "" {
		return usageError{fmt.Errorf("Flight SQL at %s needs a token: --token, %s, or DATA_DIR/%s", addr, flightsql.EnvToken, flightsql.TokenFile)}
	}
	cols, rows, err := flightsql.Query(ctx, addr, token, q)
	if err != nil {
		return err
	}
	return printRows(cmd.OutOrStdout(), cmd.ErrOrStderr(), cols, rows, format)
}

var placeholder = regexp.MustCompile(`\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}`)

// substitute replaces {{NAME}} placeholders with --param values; now_ms
// defaults to now. A placeholder left without a value is an error naming
// it, and so is a value with a quote or backslash (the values are pasted
// into the text, some inside string literals).
func substitute(text string, params []string, now time.Time) (string, error) {
	vals := map[string]string{"now_ms": strconv.FormatInt(now.UnixMilli(), 10)}
	for _, p := range params {
		k, v, ok := strings.Cut(p, "=")
		if !ok || !placeholder.MatchString("{{"+k+"}}") {
			return "", fmt.Errorf("--param %q: want NAME=VALUE", p)
		}
		if strings.ContainsAny(v, `'"\`+"`") {
			return "", fmt.Errorf("--param %s: a value may not hold quotes or backslashes", k)
		}
		if k == "now_ms" {
			if _, err := strconv.ParseInt(v, 10, 64); err != nil {
				return "", fmt.Errorf("--param now_ms=%s: want Unix milliseconds", v)
			}
		}
		vals[k] = v
	}
	var missing []string
	out := placeholder.ReplaceAllStringFunc(text, func(m string) string {
		name := m[2 : len(m)-2]
		if v, ok := vals[name]; ok {
			return v
		}
		missing = append(missing, name)
		return m
	})
	if len(missing) > 0 {
		sort.Strings(missing)
		return "", fmt.Errorf("no value for %s: give --param %s=VALUE", strings.Join(missing, ", "), missing[0])
	}
	return out, nil
}

// stripLeadingComments drops the "--" comment lines (and blank lines) at
// the top of a statement.
func stripLeadingComments(q string) string {
	for {
		t := strings.TrimLeft(q, " \t\r\n")
		if !strings.HasPrefix(t, "--") {
			return t
		}
		i := strings.IndexByte(t, '\n')
		if i < 0 {
			return ""
		}
		q = t[i+1:]
	}
}

// sqlArgs lets `forum sql` take a statement that starts with a "--"
// comment as its argument: pflag would read it as a long flag. An argument
// of the sql command that starts with "--" and holds whitespace is SQL
// (flag names never hold whitespace), so it is moved behind the "--" that
// ends the flags.
func sqlArgs(args []string) []string {
	if len(args) == 0 || args[0] != "sql" {
		return args
	}
	var flags, stmts []string
	for i, a := range args[1:] {
		if a == "--" {
			stmts = append(stmts, args[i+2:]...)
			break
		}
		if name, _, _ := strings.Cut(a, "="); strings.HasPrefix(a, "--") && strings.ContainsAny(name, " \t\r\n") {
			stmts = append(stmts, a)
			continue
		}
		flags = append(flags, a)
	}
	if len(stmts) == 0 {
		return args
	}
	out := append([]string{"sql"}, flags...)
	return append(append(out, "--"), stmts...)
}

func printRows(w, errw io.Writer, cols []string, rows [][]any, format string) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		for _, r := range rows {
			obj := make(map[string]any, len(cols))
			for i, c := range cols {
				obj[c] = r[i]
			}
			if err := enc.Encode(obj); err != nil {
				return err
			}
		}
	default:
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
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
		fmt.Fprintf(errw, "(%d rows)\n", len(rows))
	}
	return nil
}
