package api_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/danielgtaylor/huma/v2"

	"github.com/forum-mcp/forum/api"
	"github.com/forum-mcp/forum/ingest/github"
	"github.com/forum-mcp/forum/internal/testenv"
	"github.com/forum-mcp/forum/processors/history"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/processors/scorer"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/clickhouse"
	"github.com/forum-mcp/forum/sql/duckdb"
	"github.com/forum-mcp/forum/sql/store"
)

// exportStore holds two publications of a generated population, its health
// checks (written twice: the views dedup) and drift events with tied
// timestamps (the keyset paging must not lose or repeat them).
func exportStore(t *testing.T) (*duckdb.Store, map[string]int64, string) {
	t.Helper()
	s, err := duckdb.Open(context.Background(), filepath.Join(t.TempDir(), "export.duckdb"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	counts, pub := fillExportStore(t, s)
	return s, counts, pub
}

// exportTestStore is what both engines' stores offer.
type exportTestStore interface {
	store.Store
	store.TrustStore
	store.ProvenanceStore
	api.ExportSource
}

func fillExportStore(t *testing.T, s exportTestStore) (map[string]int64, string) {
	t.Helper()
	ctx := context.Background()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{9}, 32))
	var last string
	var nrec int64
	for i, at := range []time.Time{trustAt.Add(-24 * time.Hour), trustAt} {
		g := scorer.Generate(40+i*5, 5, at)
		meta := scorer.Meta{PublicationID: scorer.PublicationID(at), ComputedAt: at}
		sealed, err := scorer.Seal(scorer.Compute(g.Inputs, g.Sources, meta, nil), meta, key)
		if err != nil {
			t.Fatal(err)
		}
		if err := scorer.Publish(ctx, scorer.StoreOutput{W: s}, nil, sealed); err != nil {
			t.Fatal(err)
		}
		nrec += int64(len(sealed.Records))
		last = meta.PublicationID
		var checks []store.HealthCheck
		for _, in := range g.Inputs {
			for j := range in.Checks {
				checks = append(checks, history.HealthRow(&in.Checks[j], nil))
			}
		}
		for k := 0; k < 2; k++ {
			if err := s.InsertHealthChecks(ctx, checks); err != nil {
				t.Fatal(err)
			}
		}
	}
	var evs []schema.DriftEvent
	for i := 0; i < 37; i++ {
		at := trustAt.Add(-time.Duration(i/4) * time.Hour) // four events per instant
		evs = append(evs, schema.DriftEvent{ID: fmt.Sprintf("ev-%03d", i), Server: "io.github.x/s", Namespace: "io.github.x",
			Kind: schema.KindDescriptionChanged, Before: "a", After: "b", ObservedAt: at, SnapshotID: "snap"})
	}
	if err := s.InsertEvents(ctx, evs); err != nil {
		t.Fatal(err)
	}
	// GitHub observations: three per instant (ties), every third one
	// unresolved (NULL flags and times), every other one with commits,
	// written twice and then re-published with commits (same ids).
	var obs, later []store.Provenance
	for i := 0; i < 20; i++ {
		at := trustAt.Add(-time.Duration(i/3) * time.Hour)
		o := github.Observation{ID: github.ObservationID(fmt.Sprintf("github.com/o/r%02d", i), at), Repo: fmt.Sprintf("github.com/o/r%02d", i),
			ObservedAt: at, Status: github.StatusResolved, HTTPStatus: 200, CreatedAt: at.Add(-time.Duration(i) * 24 * time.Hour), Stars: i * 10}
		if i%3 == 0 {
			o = github.Observation{ID: o.ID, Repo: o.Repo, ObservedAt: at, Status: github.StatusUnresolved, HTTPStatus: 404}
		}
		obs = append(obs, history.ProvenanceRow(method.Embedded().Weights, o))
		if i%2 == 0 && o.Status == github.StatusResolved {
			o.Commits = &github.CommitStats{ObservedAt: at.Add(time.Minute), Count: i, Authors: 1}
			later = append(later, history.ProvenanceRow(method.Embedded().Weights, o))
		}
	}
	for _, batch := range [][]store.Provenance{obs, obs, later} {
		if err := s.InsertProvenance(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	counts := map[string]int64{"trust_records": nrec, "drift_events": int64(len(evs)), "provenance": int64(len(obs))}
	_, rows, err := s.Query(ctx, "SELECT count(*) FROM health_checks_v")
	if err != nil {
		t.Fatal(err)
	}
	n, err := toInt(rows[0][0])
	if err != nil {
		t.Fatal(err)
	}
	counts["health_checks"] = n
	return counts, last
}

func toInt(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case uint64:
		return int64(x), nil
	}
	return 0, fmt.Errorf("count is %T", v)
}

func TestExportBatchesMatchTheStore(t *testing.T) {
	s, counts, pub := exportStore(t)
	checkExportBatches(t, s, counts, pub)
}

// TestIntegrationClickHouseExport runs the same export against ClickHouse
// (FORUM_TEST_CLICKHOUSE names the server; unset, it skips).
func TestIntegrationClickHouseExport(t *testing.T) {
	base := testenv.Service(t, "FORUM_TEST_CLICKHOUSE", "run `deploy/clickhouse.sh start` and set it to $(deploy/clickhouse.sh dsn)")
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	db := "forum_test_export_" + hex.EncodeToString(b)
	u, q, _ := strings.Cut(base, "?")
	if i := strings.Index(u, "://"); i >= 0 {
		if j := strings.Index(u[i+3:], "/"); j >= 0 {
			u = u[:i+3+j]
		}
	}
	dsn := u + "/" + db
	if q != "" {
		dsn += "?" + q
	}
	s, err := clickhouse.Open(context.Background(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		dropCH(t, base, db)
	})
	counts, pub := fillExportStore(t, s)
	checkExportBatches(t, s, counts, pub)
}

func dropCH(t *testing.T, base, db string) {
	opts, err := ch.ParseDSN(base)
	if err != nil {
		t.Errorf("parse dsn: %v", err)
		return
	}
	opts.Auth.Database = "default"
	c, err := ch.Open(opts)
	if err != nil {
		t.Errorf("drop %s: %v", db, err)
		return
	}
	defer c.Close()
	if err := c.Exec(context.Background(), "DROP DATABASE IF EXISTS `"+db+"`"); err != nil {
		t.Errorf("drop %s: %v", db, err)
	}
}

func checkExportBatches(t *testing.T, s api.ExportSource, counts map[string]int64, pub string) {
	t.Helper()
	old := api.ExportPageRows
	api.ExportPageRows = 7 // several pages, ties across page edges
	defer func() { api.ExportPageRows = old }()
	for _, table := range api.ExportTables {
		seen := map[string]bool{}
		batches := 0
		sc, n, err := api.ExportBatches(context.Background(), s, table, time.Time{}, func(sc *arrow.Schema, rec arrow.RecordBatch) error {
			batches++
			if !rec.Schema().Equal(sc) {
				t.Errorf("%s: batch schema differs", table)
			}
			col := rec.Column(0).(*array.String)
			key := col
			if table == "trust_records" {
				key = nil
			}
			for i := 0; i < int(rec.NumRows()); i++ {
				k := col.Value(i)
				if key == nil {
					k += "|" + rec.Column(1).(*array.String).Value(i)
				}
				if seen[k] {
					t.Errorf("%s: row %s twice", table, k)
				}
				seen[k] = true
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if n != counts[table] || int64(len(seen)) != n {
			t.Errorf("%s: exported %d rows (%d distinct), store holds %d", table, n, len(seen), counts[table])
		}
		if batches < 2 {
			t.Errorf("%s: %d batches; paging not exercised", table, batches)
		}
		if v, _ := sc.Metadata().GetValue("forum.publication_id"); v != pub {
			t.Errorf("%s: publication id %q, want %q", table, v, pub)
		}
	}
	checkProvenanceValues(t, s)
	// since
	_, n, err := api.ExportBatches(context.Background(), s, "drift_events", trustAt.Add(-2*time.Hour), func(*arrow.Schema, arrow.RecordBatch) error { return nil })
	if err != nil || n != 12 {
		t.Errorf("drift_events since -2h: %d rows, %v; want 12", n, err)
	}
	_, n, _ = api.ExportBatches(context.Background(), s, "trust_records", trustAt, func(*arrow.Schema, arrow.RecordBatch) error { return nil })
	if n == 0 || n >= counts["trust_records"] {
		t.Errorf("trust_records since the last publication: %d of %d", n, counts["trust_records"])
	}
	if _, _, err := api.ExportBatches(context.Background(), s, "servers; DROP TABLE x", time.Time{}, nil); err == nil {
		t.Error("unknown table accepted")
	}
}

// TestExportSchemaGolden keeps each table's documented schema; -update
// rewrites the golden files after an intended change (bump ExportVersion).
func TestExportSchemaGolden(t *testing.T) {
	for _, table := range api.ExportTables {
		sc, err := api.ExportSchema(table, "pub-20261130T120000Z", time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		got := sc.String() + "\n"
		golden := filepath.Join("testdata", "export."+table+".schema.golden.txt")
		if *update {
			if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run go test ./api -run ExportSchemaGolden -update)", err)
		}
		if got != string(want) {
			t.Errorf("%s: the export schema changed; bump api.ExportVersion and run -update\n%s", table, got)
		}
	}
}

func TestExportStreamRoute(t *testing.T) {
	s, counts, pub := exportStore(t)
	h, _ := api.New(api.Options{Store: s, Routes: []func(huma.API){api.ExportRoutes(api.ExportOptions{Store: s})}})
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, table := range api.ExportTables {
		resp, err := http.Get(srv.URL + "/v1/export/" + table)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/vnd.apache.arrow.stream" {
			t.Fatalf("%s: %d %s", table, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		r, err := ipc.NewReader(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := api.ExportSchema(table, pub, time.Time{})
		if !r.Schema().Equal(want) || !r.Schema().Metadata().Equal(want.Metadata()) {
			t.Errorf("%s: schema\n%s\nwant\n%s", table, r.Schema(), want)
		}
		var n int64
		for r.Next() {
			n += r.RecordBatch().NumRows()
		}
		if r.Err() != nil {
			t.Errorf("%s: %v", table, r.Err())
		}
		r.Release()
		resp.Body.Close()
		if n != counts[table] {
			t.Errorf("%s: streamed %d rows, store holds %d", table, n, counts[table])
		}
	}
	resp, err := http.Get(srv.URL + "/v1/export/registry_records")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("unknown table: %d", resp.StatusCode)
	}
	// an empty table still carries its schema
	empty, err := duckdb.Open(context.Background(), filepath.Join(t.TempDir(), "empty.duckdb"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer empty.Close()
	if err := empty.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if n, err := api.WriteExportStream(context.Background(), empty, "drift_events", time.Time{}, &buf); err != nil || n != 0 {
		t.Fatalf("empty: %d %v", n, err)
	}
	r, err := ipc.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if r.Schema().NumFields() != 10 || r.Next() {
		t.Errorf("empty export: %s", r.Schema())
	}
	r.Release()
}

// checkProvenanceValues: NULLs survive the export on both engines (the
// unresolved observations' flags and times), booleans and the re-published
// commit stats come through, and observed_at is the stored instant.
func checkProvenanceValues(t *testing.T, s api.ExportSource) {
	t.Helper()
	var rows, nullFlags, nullCreated, commits, single int
	var first int64
	_, _, err := api.ExportBatches(context.Background(), s, "provenance", time.Time{}, func(sc *arrow.Schema, rec arrow.RecordBatch) error {
		col := func(name string) arrow.Array { return rec.Column(sc.FieldIndices(name)[0]) }
		for i := 0; i < int(rec.NumRows()); i++ {
			if rows == 0 {
				first = int64(col("observed_at").(*array.Timestamp).Value(i))
			}
			rows++
			if col("flag_no_license").IsNull(i) {
				nullFlags++
			}
			if col("created_at").IsNull(i) {
				nullCreated++
			}
			if col("commits_fetched").(*array.Boolean).Value(i) {
				commits++
				if c := col("flag_single_author_90d"); !c.IsNull(i) && c.(*array.Boolean).Value(i) {
					single++
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// r00, r03, …, r18 are unresolved (7); r02, r04, r08, r10, r14, r16 got commits (6).
	if rows != 20 || nullFlags != 7 || nullCreated != 7 || commits != 6 || single != 6 {
		t.Errorf("provenance export: %d rows, %d null flags, %d null created_at, %d with commits (%d single author); want 20, 7, 7, 6, 6",
			rows, nullFlags, nullCreated, commits, single)
	}
	if want := trustAt.Add(-6 * time.Hour).UnixMilli(); first != want {
		t.Errorf("first observed_at %d, want %d", first, want)
	}
}
