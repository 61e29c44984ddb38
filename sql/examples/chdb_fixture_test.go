package examples_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

var update = flag.Bool("update", false, "rewrite testdata/chdb from the ClickHouse run")

// The chDB fixture (testdata/chdb) carries this test's dataset and answers
// to current ClickHouse: tests/python/test_chdb.py runs every migration of
// sql/clickhouse on ClickHouse 26 in-process (chdb-core), inserts
// tables/*.jsonl — the raw rows the ClickHouse store wrote for the dataset
// here, duplicates included, so the views' deduplication is exercised too —
// and runs every example, expecting expected.json's rows. The fixture is
// checked against each run on the 18.16 server (go test -update rewrites
// it), so the two engines are held to the same data and answers.
const fixtureDir = "testdata/chdb"

// checkFixture dumps db's tables and the expected answers and compares them
// with the committed fixture (or rewrites it with -update).
func checkFixture(t *testing.T, conn driver.Conn, db string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rows, err := conn.Query(ctx, "SELECT name FROM system.tables WHERE database = ? AND engine LIKE '%MergeTree' ORDER BY name", db)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, n)
	}
	rows.Close()
	files := map[string][]byte{}
	for _, tb := range tables {
		if tb == "schema_migrations" || strings.HasPrefix(tb, ".inner") {
			continue // chDB's run of the migrations has its own; a view's inner table fills from its source
		}
		b := dumpTable(t, ctx, conn, db, tb)
		if len(b) > 0 {
			files[filepath.Join("tables", tb+".jsonl")] = b
		}
	}
	type answer struct {
		SQL  string     `json:"sql"`
		Cols []string   `json:"cols"`
		Rows [][]string `json:"rows"`
	}
	ex := examples(t)
	ans := map[string]answer{}
	for name, q := range ex {
		want := expected[name]
		ans[name] = answer{SQL: q, Cols: want.cols, Rows: want.rows}
	}
	b, err := json.MarshalIndent(ans, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	files["expected.json"] = append(b, '\n')

	if *update {
		if err := os.RemoveAll(fixtureDir); err != nil {
			t.Fatal(err)
		}
		for name, b := range files {
			p := filepath.Join(fixtureDir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("rewrote %s (%d files)", fixtureDir, len(files))
		return
	}
	for name, b := range files {
		old, err := os.ReadFile(filepath.Join(fixtureDir, name))
		if err != nil || !bytes.Equal(old, b) {
			t.Errorf("%s/%s is not what this run stored (%v): run go test ./sql/examples -run ClickHouse -update with FORUM_TEST_CLICKHOUSE set", fixtureDir, name, err)
		}
	}
	have, _ := filepath.Glob(filepath.Join(fixtureDir, "tables", "*.jsonl"))
	for _, p := range have {
		rel, _ := filepath.Rel(fixtureDir, p)
		if _, ok := files[rel]; !ok {
			t.Errorf("%s: a table this run does not have", p)
		}
	}
}

// dumpTable writes a table's raw rows (no FINAL) as JSON lines, part by
// part in insert order, each line with "__insert": the part's rank. A
// ReplacingMergeTree without a version keeps the last inserted row of a key,
// so the inserts must be replayed in their order (the test stops merges
// before loading, so every insert is still a part of its own; within a
// part, rows of one key keep their insert order). Lines of one part are
// sorted, which keeps the file stable. _ver columns are replaced by their
// rank in the table: only their order matters to the replacing merges and
// the views, and some hold the writer's clock.
func dumpTable(t *testing.T, ctx context.Context, conn driver.Conn, db, table string) []byte {
	t.Helper()
	rows, err := conn.Query(ctx, "SELECT _part AS __part, * FROM `"+db+"`.`"+table+"` SETTINGS max_threads = 1")
	if err != nil {
		t.Fatalf("dump %s: %v", table, err)
	}
	defer rows.Close()
	cols := rows.Columns()
	types := rows.ColumnTypes()
	var recs []map[string]any
	for rows.Next() {
		vals := make([]any, len(cols))
		for i, ct := range types {
			vals[i] = reflect.New(ct.ScanType()).Interface()
		}
		if err := rows.Scan(vals...); err != nil {
			t.Fatalf("dump %s: %v", table, err)
		}
		rec := map[string]any{}
		for i, c := range cols {
			v := reflect.ValueOf(vals[i]).Elem().Interface()
			layout := "2006-01-02 15:04:05"
			if strings.TrimSuffix(strings.TrimPrefix(types[i].DatabaseTypeName(), "Nullable("), ")") == "Date" {
				layout = "2006-01-02"
			}
			if tm, ok := v.(time.Time); ok {
				v = tm.UTC().Format(layout)
			}
			if p, ok := v.(*time.Time); ok && p != nil {
				v = p.UTC().Format(layout)
			}
			rec[c] = v
		}
		recs = append(recs, rec)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if _, ok := indexOf(cols, "_ver"); ok {
		var vers []uint64
		for _, r := range recs {
			vers = append(vers, toU64(r["_ver"]))
		}
		sorted := append([]uint64(nil), vers...)
		sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
		rank := map[uint64]uint64{}
		for _, v := range sorted {
			if _, ok := rank[v]; !ok {
				rank[v] = uint64(len(rank) + 1)
			}
		}
		for i, r := range recs {
			r["_ver"] = rank[vers[i]]
		}
	}
	// Parts in insert order: all_<min block>_<max block>_<level>.
	block := func(part string) int {
		f := strings.Split(part, "_")
		if len(f) < 4 {
			t.Fatalf("%s: part name %q", table, part)
		}
		n, err := strconv.Atoi(f[len(f)-3])
		if err != nil {
			t.Fatalf("%s: part name %q", table, part)
		}
		return n
	}
	var parts []string
	for _, r := range recs {
		p := r["__part"].(string)
		if !slices.Contains(parts, p) {
			parts = append(parts, p)
		}
	}
	sort.Slice(parts, func(i, j int) bool { return block(parts[i]) < block(parts[j]) })
	lines := make([]string, 0, len(recs))
	for rank, p := range parts {
		var group []string
		for _, r := range recs {
			if r["__part"] != p {
				continue
			}
			rec := maps.Clone(r)
			delete(rec, "__part")
			rec["__insert"] = rank
			b, err := json.Marshal(rec)
			if err != nil {
				t.Fatalf("dump %s: %v", table, err)
			}
			group = append(group, string(b))
		}
		sort.Strings(group)
		lines = append(lines, group...)
	}
	var buf bytes.Buffer
	for _, l := range lines {
		buf.WriteString(l)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

func indexOf(xs []string, x string) (int, bool) {
	for i, v := range xs {
		if v == x {
			return i, true
		}
	}
	return -1, false
}

func toU64(v any) uint64 {
	switch x := v.(type) {
	case uint64:
		return x
	case int64:
		return uint64(x)
	}
	n, _ := strconv.ParseUint(fmt.Sprint(v), 10, 64)
	return n
}
