package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/spf13/cobra"

	"github.com/forum-mcp/forum/api"
)

// 'forum export' writes one table as an Arrow IPC file or Parquet; the API
// serves the same tables at GET /v1/export/{table} (Arrow IPC stream). Schemas: api/export.go and the golden files
// api/testdata/export.<table>.schema.golden.txt.

func newExportCmd() *cobra.Command {
	cfg := &config{}
	var table, format, out, since string
	cmd := &cobra.Command{
		Use:   "export --table TABLE --format arrow|parquet --out FILE [--since T]",
		Short: "Write a table as an Arrow IPC file or Parquet",
		Long: `export writes one table of the store for notebooks and analysts:

  trust_records   every published record (one row per server and publication)
  health_checks   every MCP handshake check
  drift_events    every registry drift event
  provenance      every GitHub observation, with the flags it implies
                  (null where it cannot say)

--format arrow writes the Arrow IPC file format (pyarrow.ipc.open_file,
polars.read_ipc); parquet writes Parquet (zstd) with the Arrow schema stored.
The schema metadata carries forum.publication_id (the newest publication when
the export started), forum.table, forum.export_version and forum.since.
--since (RFC 3339 or YYYY-MM-DD) keeps rows observed (trust_records:
publications computed) at or after it. The file is written beside --out and
renamed into place when complete. The row count goes to stderr.

With the embedded DuckDB store, stop 'run' first (one process per file), or
stream GET /v1/export/{table} from the running API instead.`,
		Example: `  forum export --table trust_records --format parquet --out records.parquet
  forum export --table drift_events --format arrow --since 2025-10-01 --out drift.arrow`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !contains(api.ExportTables, table) {
				return usageError{fmt.Errorf("--table: want one of %s, got %q", strings.Join(api.ExportTables, ", "), table)}
			}
			if format != "arrow" && format != "parquet" {
				return usageError{fmt.Errorf("--format: want arrow or parquet, got %q", format)}
			}
			if out == "" {
				return usageError{fmt.Errorf("--out is required")}
			}
			var sinceT time.Time
			if since != "" {
				t, err := parseSince(since)
				if err != nil {
					return usageError{err}
				}
				sinceT = t
			}
			a, err := openApp(cmd.Context(), cfg, withStore)
			if err != nil {
				return err
			}
			defer a.close()
			src, ok := a.store.(api.ExportSource)
			if !ok {
				return fmt.Errorf("the store %T cannot be exported", a.store)
			}
			n, err := exportFile(cmd.Context(), src, table, format, sinceT, out)
			if err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "%s: %d rows -> %s (%s)\n", table, n, out, format)
			return nil
		},
	}
	cfg.bindCommon(cmd.Flags())
	cfg.bindStore(cmd.Flags())
	cmd.Flags().StringVar(&table, "table", "", "trust_records, health_checks, drift_events or provenance")
	cmd.Flags().StringVar(&format, "format", "arrow", "arrow (IPC file) or parquet")
	cmd.Flags().StringVar(&out, "out", "", "output file")
	cmd.Flags().StringVar(&since, "since", "", "only rows at or after this instant (RFC 3339 or YYYY-MM-DD, UTC)")
	return cmd
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func parseSince(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("--since: want RFC 3339 or YYYY-MM-DD, got %q", s)
}

// exportFile writes the export to a temporary file beside out, then renames.
func exportFile(ctx context.Context, src api.ExportSource, table, format string, since time.Time, out string) (int64, error) {
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name())
	var ipcw *ipc.FileWriter
	var pqw *pqarrow.FileWriter
	open := func(sc *arrow.Schema) error {
		var err error
		if format == "parquet" {
			props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd))
			pqw, err = pqarrow.NewFileWriter(sc, tmp, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
		} else {
			ipcw, err = ipc.NewFileWriter(tmp, ipc.WithSchema(sc))
		}
		return err
	}
	sc, n, err := api.ExportBatches(ctx, src, table, since, func(sc *arrow.Schema, rec arrow.RecordBatch) error {
		if ipcw == nil && pqw == nil {
			if err := open(sc); err != nil {
				return err
			}
		}
		if pqw != nil {
			return pqw.Write(rec)
		}
		return ipcw.Write(rec)
	})
	if err != nil {
		tmp.Close()
		return 0, err
	}
	if ipcw == nil && pqw == nil {
		if err := open(sc); err != nil {
			tmp.Close()
			return 0, err
		}
	}
	if pqw != nil {
		err = pqw.Close() // closes tmp too
	} else {
		if err = ipcw.Close(); err == nil {
			err = tmp.Close()
		}
	}
	if err != nil {
		return 0, fmt.Errorf("writing %s: %w", out, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return 0, err
	}
	return n, os.Rename(tmp.Name(), out)
}
