package api

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"reflect"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/danielgtaylor/huma/v2"
	"go.uber.org/zap"

	"github.com/forum-mcp/forum/sql/store"
)

// Arrow exports of the store's tables, for calibration notebooks and
// analysts (pyarrow, polars, DuckDB): `forum export` writes an Arrow IPC file
// or Parquet, GET /v1/export/{table} streams the Arrow IPC stream format.
//
// Schemas (golden copies: api/testdata/export.<table>.schema.golden.txt).
// Every timestamp is timestamp[ms, tz=UTC]; strings are utf8.
//
//	trust_records  server, publication_id, computed_at, score (float64,
//	               null when every sub-score is unknown), band,
//	               toolfinder_score (int32), content_sha256, record (the
//	               sealed record, RFC 8785 JSON). One row per (server,
//	               publication) of every publication computed at or after
//	               --since, publications oldest first, servers by name.
//	health_checks  id, server, remote_url, observed_at, transport, outcome,
//	               error_class, http_status (int32), latency_ms (float64),
//	               auth_kind, protocol_version, tool_count (int32),
//	               tools_listed (bool), check_json. Ordered by observed_at, id.
//	drift_events   id, server, namespace, kind, version, before, after,
//	               observed_at, version_bump (bool), snapshot_id. Ordered by
//	               observed_at, id.
//	provenance     one row per GitHub observation (ingest/github.Observation,
//	               the store's provenance_v): id, repo, observed_at, status,
//	               http_status (int32), not_modified (bool), full_name,
//	               renamed_to, owner_login, owner_type, owner_created_at,
//	               owner_observed_at, created_at, pushed_at (nullable
//	               timestamps: unknown), stars (int32), fork, archived,
//	               disabled (bool), license_spdx ("" = none),
//	               commits_fetched (bool), commits_observed_at (nullable),
//	               commits_count, authors, verified (int32), empty, cap_hit
//	               (bool), last_commit_at (nullable), and the flags derived
//	               from the observation alone at its observed_at (nullable
//	               bool: null where it cannot say, e.g. every flag of an
//	               unresolved repo): flag_no_license, flag_single_author_90d,
//	               flag_no_commits_90d, flag_repo_under_30d,
//	               flag_stale_over_1y, flag_commit_cap_hit, flag_archived,
//	               flag_fork, flag_owner_older_than_1y, flag_stars_ge_100.
//	               Ordered by observed_at, id.
//
// Schema metadata: forum.table, forum.export_version, forum.publication_id
// (the newest publication in the store when the export started; "" when
// there is none) and forum.since (RFC 3339, "" for everything).
//
// Rows are read in pages of ExportPageRows (keyset paging on the analyst
// views health_checks_v, drift_events_v and provenance_v, which deduplicate on both
// engines; trust records publication by publication), one record batch per
// page, so memory stays bounded however large the table.

// ExportVersion is the version of the export schemas; bump it with any
// schema change (and the golden files).
const ExportVersion = "1"

// ExportPageRows is the number of rows per record batch (tests lower it to
// exercise paging).
var ExportPageRows = 10000

// ExportTables are the exportable tables.
var ExportTables = []string{"trust_records", "health_checks", "drift_events", "provenance"}

// ExportSource is what an export reads.
type ExportSource interface {
	store.Querier
	Publications(ctx context.Context, limit int) ([]store.Publication, error)
	PublicationRecords(ctx context.Context, id string) ([]store.TrustRecord, error)
}

var tsUTC = &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}

func utf8(name string) arrow.Field { return arrow.Field{Name: name, Type: arrow.BinaryTypes.String} }

func i32(name string) arrow.Field { return arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Int32} }

func boolean(name string) arrow.Field {
	return arrow.Field{Name: name, Type: arrow.FixedWidthTypes.Boolean}
}

// provenanceFields is the provenance schema (see the package comment).
var provenanceFields = func() []arrow.Field {
	ts := func(name string, nullable bool) arrow.Field {
		return arrow.Field{Name: name, Type: tsUTC, Nullable: nullable}
	}
	fs := []arrow.Field{utf8("id"), utf8("repo"), ts("observed_at", false), utf8("status"), i32("http_status"),
		boolean("not_modified"), utf8("full_name"), utf8("renamed_to"), utf8("owner_login"), utf8("owner_type"),
		ts("owner_created_at", true), ts("owner_observed_at", true), ts("created_at", true), ts("pushed_at", true),
		i32("stars"), boolean("fork"), boolean("archived"), boolean("disabled"), utf8("license_spdx"),
		boolean("commits_fetched"), ts("commits_observed_at", true), i32("commits_count"), i32("authors"),
		i32("verified"), boolean("empty"), boolean("cap_hit"), ts("last_commit_at", true)}
	for _, f := range []string{"no_license", "single_author_90d", "no_commits_90d", "repo_under_30d", "stale_over_1y",
		"commit_cap_hit", "archived", "fork", "owner_older_than_1y", "stars_ge_100"} {
		fs = append(fs, arrow.Field{Name: "flag_" + f, Type: arrow.FixedWidthTypes.Boolean, Nullable: true})
	}
	return fs
}()

var exportFields = map[string][]arrow.Field{
	"trust_records": {utf8("server"), utf8("publication_id"), {Name: "computed_at", Type: tsUTC},
		{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true}, utf8("band"),
		{Name: "toolfinder_score", Type: arrow.PrimitiveTypes.Int32}, utf8("content_sha256"), utf8("record")},
	"health_checks": {utf8("id"), utf8("server"), utf8("remote_url"), {Name: "observed_at", Type: tsUTC}, utf8("transport"),
		utf8("outcome"), utf8("error_class"), {Name: "http_status", Type: arrow.PrimitiveTypes.Int32},
		{Name: "latency_ms", Type: arrow.PrimitiveTypes.Float64}, utf8("auth_kind"), utf8("protocol_version"),
		{Name: "tool_count", Type: arrow.PrimitiveTypes.Int32}, {Name: "tools_listed", Type: arrow.FixedWidthTypes.Boolean}, utf8("check_json")},
	"drift_events": {utf8("id"), utf8("server"), utf8("namespace"), utf8("kind"), utf8("version"), utf8("before"), utf8("after"),
		{Name: "observed_at", Type: tsUTC}, {Name: "version_bump", Type: arrow.FixedWidthTypes.Boolean}, utf8("snapshot_id")},
	"provenance": provenanceFields,
}

// exportSQL selects one page of a view-backed table: columns in schema
// order with the timestamp as epoch milliseconds, keyset-paged on
// (observed_at_ms, id). Arguments: since_ms, after_ms, after_ms, after_id.
var exportSQL = map[string]string{
	"health_checks": `SELECT id, server, remote_url, observed_at_ms, transport, outcome, error_class, http_status, latency_ms,
 auth_kind, protocol_version, tool_count, tools_listed, check_json FROM health_checks_v
 WHERE observed_at_ms >= ? AND (observed_at_ms > ? OR (observed_at_ms = ? AND id > ?)) ORDER BY observed_at_ms, id LIMIT `,
	"drift_events": `SELECT id, server, namespace, kind, version, before, after, observed_at_ms, version_bump, snapshot_id FROM drift_events_v
 WHERE observed_at_ms >= ? AND (observed_at_ms > ? OR (observed_at_ms = ? AND id > ?)) ORDER BY observed_at_ms, id LIMIT `,
	"provenance": `SELECT id, repo, observed_at_ms, status, http_status, not_modified, full_name, renamed_to, owner_login, owner_type,
 owner_created_at_ms, owner_observed_at_ms, created_at_ms, pushed_at_ms, stars, fork, archived, disabled, license_spdx,
 commits_fetched, commits_observed_at_ms, commits_count, authors, verified, empty, cap_hit, last_commit_at_ms,
 flag_no_license, flag_single_author_90d, flag_no_commits_90d, flag_repo_under_30d, flag_stale_over_1y, flag_commit_cap_hit,
 flag_archived, flag_fork, flag_owner_older_than_1y, flag_stars_ge_100 FROM provenance_v
 WHERE observed_at_ms >= ? AND (observed_at_ms > ? OR (observed_at_ms = ? AND id > ?)) ORDER BY observed_at_ms, id LIMIT `,
}

// ErrUnknownTable is returned for a table that is not exportable.
var ErrUnknownTable = fmt.Errorf("unknown export table (want one of %v)", ExportTables)

// ExportSchema is a table's Arrow schema with the export metadata.
func ExportSchema(table, publicationID string, since time.Time) (*arrow.Schema, error) {
	f, ok := exportFields[table]
	if !ok {
		return nil, ErrUnknownTable
	}
	s := ""
	if !since.IsZero() {
		s = since.UTC().Format(time.RFC3339)
	}
	md := arrow.NewMetadata([]string{"forum.table", "forum.export_version", "forum.publication_id", "forum.since"},
		[]string{table, ExportVersion, publicationID, s})
	return arrow.NewSchema(f, &md), nil
}

// LatestPublicationID is the newest publication's id, "" when none.
func LatestPublicationID(ctx context.Context, src ExportSource) (string, error) {
	p, err := src.Publications(ctx, 1)
	if err != nil || len(p) == 0 {
		return "", err
	}
	return p[0].ID, nil
}

// ExportBatches reads table (rows at or after since; zero: all) and calls fn
// with each record batch, in order; fn must not keep the batch after it
// returns. It returns the schema used and the row count.
func ExportBatches(ctx context.Context, src ExportSource, table string, since time.Time, fn func(*arrow.Schema, arrow.RecordBatch) error) (*arrow.Schema, int64, error) {
	pub, err := LatestPublicationID(ctx, src)
	if err != nil {
		return nil, 0, fmt.Errorf("export %s: %w", table, err)
	}
	sc, err := ExportSchema(table, pub, since)
	if err != nil {
		return nil, 0, err
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	var n int64
	emit := func() error {
		rec := b.NewRecordBatch()
		defer rec.Release()
		if rec.NumRows() == 0 {
			return nil
		}
		n += rec.NumRows()
		return fn(sc, rec)
	}
	if table == "trust_records" {
		pubs, err := src.Publications(ctx, store.MaxEventLimit)
		if err != nil {
			return nil, 0, fmt.Errorf("export %s: %w", table, err)
		}
		for i := len(pubs) - 1; i >= 0; i-- { // oldest first
			if !since.IsZero() && pubs[i].ComputedAt.Before(since) {
				continue
			}
			recs, err := src.PublicationRecords(ctx, pubs[i].ID)
			if err != nil {
				return nil, 0, fmt.Errorf("export %s: %w", table, err)
			}
			for j, r := range recs {
				b.Field(0).(*array.StringBuilder).Append(r.Server)
				b.Field(1).(*array.StringBuilder).Append(r.PublicationID)
				b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(r.ComputedAt.UnixMilli()))
				if r.Score == nil {
					b.Field(3).AppendNull()
				} else {
					b.Field(3).(*array.Float64Builder).Append(*r.Score)
				}
				b.Field(4).(*array.StringBuilder).Append(r.Band)
				b.Field(5).(*array.Int32Builder).Append(int32(r.ToolfinderScore))
				b.Field(6).(*array.StringBuilder).Append(r.ContentSHA256)
				b.Field(7).(*array.StringBuilder).Append(r.Record)
				if (j+1)%ExportPageRows == 0 {
					if err := emit(); err != nil {
						return nil, 0, err
					}
				}
			}
			if err := emit(); err != nil {
				return nil, 0, err
			}
		}
		return sc, n, nil
	}
	q := exportSQL[table] + strconv.Itoa(ExportPageRows)
	var sinceMS int64 = math.MinInt64
	if !since.IsZero() {
		sinceMS = since.UnixMilli()
	}
	afterMS, afterID := int64(math.MinInt64), ""
	fields := exportFields[table]
	for {
		_, rows, err := src.Query(ctx, q, sinceMS, afterMS, afterMS, afterID)
		if err != nil {
			return nil, 0, fmt.Errorf("export %s: %w", table, err)
		}
		for _, row := range rows {
			if len(row) != len(fields) {
				return nil, 0, fmt.Errorf("export %s: %d columns, want %d", table, len(row), len(fields))
			}
			for c, v := range row {
				if err := appendValue(b.Field(c), fields[c].Type, v); err != nil {
					return nil, 0, fmt.Errorf("export %s column %s: %w", table, fields[c].Name, err)
				}
			}
		}
		if err := emit(); err != nil {
			return nil, 0, err
		}
		if len(rows) < ExportPageRows {
			return sc, n, nil
		}
		last := rows[len(rows)-1]
		if afterMS, err = toInt64(last[indexOf(fields, "observed_at")]); err != nil {
			return nil, 0, err
		}
		afterID, _ = last[0].(string)
	}
}

func indexOf(fs []arrow.Field, name string) int {
	for i, f := range fs {
		if f.Name == name {
			return i
		}
	}
	return -1
}

// appendValue converts what either engine's driver returns (ClickHouse
// returns Nullable columns as pointers, nil for NULL).
func appendValue(b array.Builder, t arrow.DataType, v any) error {
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			v = nil
		} else {
			v = rv.Elem().Interface()
		}
	}
	if v == nil {
		b.AppendNull()
		return nil
	}
	switch t.ID() {
	case arrow.STRING:
		switch s := v.(type) {
		case string:
			b.(*array.StringBuilder).Append(s)
		case []byte:
			b.(*array.StringBuilder).Append(string(s))
		default:
			b.(*array.StringBuilder).Append(fmt.Sprint(v))
		}
	case arrow.TIMESTAMP:
		if tm, ok := v.(time.Time); ok {
			b.(*array.TimestampBuilder).Append(arrow.Timestamp(tm.UnixMilli()))
			return nil
		}
		x, err := toInt64(v)
		if err != nil {
			return err
		}
		b.(*array.TimestampBuilder).Append(arrow.Timestamp(x))
	case arrow.INT32:
		x, err := toInt64(v)
		if err != nil {
			return err
		}
		b.(*array.Int32Builder).Append(int32(x))
	case arrow.FLOAT64:
		switch f := v.(type) {
		case float64:
			b.(*array.Float64Builder).Append(f)
		case float32:
			b.(*array.Float64Builder).Append(float64(f))
		default:
			x, err := toInt64(v)
			if err != nil {
				return err
			}
			b.(*array.Float64Builder).Append(float64(x))
		}
	case arrow.BOOL:
		switch x := v.(type) {
		case bool:
			b.(*array.BooleanBuilder).Append(x)
		default:
			i, err := toInt64(v)
			if err != nil {
				return err
			}
			b.(*array.BooleanBuilder).Append(i != 0)
		}
	default:
		return fmt.Errorf("unsupported type %s", t)
	}
	return nil
}

func toInt64(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case int32:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int8:
		return int64(x), nil
	case int:
		return int64(x), nil
	case uint64:
		return int64(x), nil
	case uint32:
		return int64(x), nil
	case uint16:
		return int64(x), nil
	case uint8:
		return int64(x), nil
	case float64:
		return int64(x), nil
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	case time.Time:
		return x.UnixMilli(), nil
	}
	return 0, fmt.Errorf("cannot read %T as an integer", v)
}

// WriteExportStream writes table as an Arrow IPC stream to w.
func WriteExportStream(ctx context.Context, src ExportSource, table string, since time.Time, w io.Writer) (int64, error) {
	var iw *ipc.Writer
	sc, n, err := ExportBatches(ctx, src, table, since, func(sc *arrow.Schema, rec arrow.RecordBatch) error {
		if iw == nil {
			iw = ipc.NewWriter(w, ipc.WithSchema(sc))
		}
		return iw.Write(rec)
	})
	if err != nil {
		return n, err
	}
	if iw == nil { // no rows: the schema alone
		iw = ipc.NewWriter(w, ipc.WithSchema(sc))
	}
	return n, iw.Close()
}

// ExportOptions configure the export route.
type ExportOptions struct {
	Store ExportSource // nil: 503
	Log   *zap.Logger
}

type exportInput struct {
	Table string    `path:"table" enum:"trust_records,health_checks,drift_events,provenance"`
	Since time.Time `query:"since" doc:"Only rows at or after this instant (RFC 3339); trust_records: publications computed at or after it."`
}

// ExportRoutes registers GET /v1/export/{table}: the table as an Arrow IPC
// stream (application/vnd.apache.arrow.stream), written batch by batch.
func ExportRoutes(o ExportOptions) func(huma.API) {
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	return func(api huma.API) {
		huma.Register(api, huma.Operation{OperationID: "export-table", Method: http.MethodGet, Path: "/v1/export/{table}", Summary: "Export a table as Arrow",
			Description: "Streams trust_records, health_checks, drift_events or provenance as an Arrow IPC stream; the schema metadata carries forum.publication_id (the newest publication), forum.table, forum.export_version and forum.since.",
			Tags:        []string{"export"}, Errors: []int{http.StatusServiceUnavailable},
			Responses: map[string]*huma.Response{"200": {Description: "Arrow IPC stream", Content: map[string]*huma.MediaType{"application/vnd.apache.arrow.stream": {}}}}},
			func(ctx context.Context, in *exportInput) (*huma.StreamResponse, error) {
				if o.Store == nil {
					return nil, huma.Error503ServiceUnavailable("no store to export from")
				}
				return &huma.StreamResponse{Body: func(hc huma.Context) {
					hc.SetHeader("Content-Type", "application/vnd.apache.arrow.stream")
					hc.SetHeader("Content-Disposition", `attachment; filename="`+in.Table+`.arrows"`)
					hc.SetStatus(http.StatusOK)
					if n, err := WriteExportStream(hc.Context(), o.Store, in.Table, in.Since, hc.BodyWriter()); err != nil {
						// The status is sent; a truncated stream fails to parse on the client.
						o.Log.Error("export failed mid-stream", zap.String("table", in.Table), zap.Int64("rows", n), zap.Error(err))
					}
				}}, nil
			})
	}
}
