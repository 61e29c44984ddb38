package flightsql

import (
	"errors"
	"fmt"
	"strings"

	"github.com/forum-mcp/forum/sql/store"
)

// ErrFileAccess is returned by CheckSQL for a statement that would read a
// file, a URL or another database through the engine: Flight SQL is a
// network service, and what the forum process can read on its disk is not
// what a token holder may read.
var ErrFileAccess = errors.New("reading files, URLs or other databases is not allowed over Flight SQL")

// DeniedFunctions are the table and scalar functions CheckSQL refuses
// (compared case-insensitively, when called: name followed by "("):
// DuckDB's file readers and scanners of other systems, ClickHouse's table
// functions that read files, URLs or remote servers, and the functions that
// run a SQL string (query) or read the environment (getenv: the process's
// tokens live there).
var DeniedFunctions = []string{
	// DuckDB: files
	"read_csv", "read_csv_auto", "sniff_csv", "read_parquet", "parquet_scan", "parquet_metadata", "parquet_schema",
	"parquet_file_metadata", "parquet_kv_metadata", "parquet_bloom_probe", "read_json", "read_json_auto",
	"read_json_objects", "read_json_objects_auto", "read_ndjson", "read_ndjson_auto", "read_ndjson_objects",
	"read_text", "read_blob", "read_xlsx", "glob", "iceberg_scan", "iceberg_metadata", "iceberg_snapshots",
	"delta_scan", "read_avro",
	// DuckDB: other databases, SQL strings, the environment
	"sqlite_scan", "sqlite_attach", "postgres_scan", "postgres_scan_pushdown", "postgres_attach", "postgres_query",
	"postgres_execute", "mysql_scan", "mysql_query", "mysql_execute", "query", "query_table", "getenv",
	"duckdb_secrets", "load_aws_credentials",
	// ClickHouse table functions
	"file", "url", "urlcluster", "remote", "remotesecure", "cluster", "clusterallreplicas", "mysql", "postgresql",
	"jdbc", "odbc", "hdfs", "hdfscluster", "s3", "s3cluster", "gcs", "azureblobstorage", "azureblobstoragecluster",
	"input", "executable", "deltalake", "hudi", "iceberg", "mongodb", "redis", "sqlite", "filecluster",
}

// deniedWords are statement keywords that have no place in a read: the
// first-keyword check of store.CheckReadOnlySQL lets EXPLAIN ANALYZE …,
// WITH … and DESCRIBE … through, and these must not follow.
var deniedWords = []string{"COPY", "ATTACH", "DETACH", "INSTALL", "LOAD", "EXPORT", "IMPORT", "PRAGMA", "SET", "RESET",
	"CALL", "CREATE", "INSERT", "UPDATE", "DELETE", "DROP", "ALTER", "TRUNCATE", "VACUUM", "CHECKPOINT", "GRANT",
	"REVOKE", "OUTFILE", "SYSTEM", "KILL", "RENAME", "OPTIMIZE", "USE"}

var deniedFn, deniedWord = func() (map[string]bool, map[string]bool) {
	f, w := map[string]bool{}, map[string]bool{}
	for _, s := range DeniedFunctions {
		f[strings.ToLower(s)] = true
	}
	for _, s := range deniedWords {
		w[s] = true
	}
	return f, w
}()

// clauseEnd are the keywords that end a FROM list at their paren depth
// (ON and USING do not: "FROM a JOIN b ON x = y, c" goes on listing tables).
var clauseEnd = map[string]bool{"WHERE": true, "GROUP": true, "ORDER": true, "HAVING": true, "LIMIT": true, "UNION": true,
	"EXCEPT": true, "INTERSECT": true, "WINDOW": true, "QUALIFY": true, "SELECT": true,
	"SETTINGS": true, "FORMAT": true, "OFFSET": true, "SAMPLE": true, "PREWHERE": true, "ARRAY": true}

// CheckSQL is the guard of every Flight SQL statement: store.CheckReadOnlySQL
// (one statement, first keyword SELECT, WITH, SHOW, DESCRIBE or EXPLAIN),
// then, outside comments and literals, no call of a DeniedFunctions name, no
// write or session keyword (COPY, ATTACH, SET, INSERT, …) anywhere, and no
// quoted name or string in a FROM list (DuckDB reads FROM 'file.csv' as a
// file). A quoted identifier that is a plain name (letters, digits, _) is a
// table name and allowed. It returns the statement without its trailing
// semicolon. The engines refuse writes themselves (a read-only transaction
// on DuckDB, readonly=1 on ClickHouse); this guard is about reads.
func CheckSQL(sql string) (string, error) {
	q, err := store.CheckReadOnlySQL(sql)
	if err != nil {
		return "", err
	}
	type level struct{ inFrom, expectTable bool }
	stack := []level{{}}
	top := func() *level { return &stack[len(stack)-1] }
	deny := func(format string, a ...any) (string, error) {
		return "", fmt.Errorf("%w: %s", ErrFileAccess, fmt.Sprintf(format, a...))
	}
	// next returns the index of the next character that is not space or
	// inside a comment.
	next := func(i int) int {
		for i < len(q) {
			switch {
			case q[i] == ' ' || q[i] == '\t' || q[i] == '\n' || q[i] == '\r' || q[i] == '\f':
				i++
			case strings.HasPrefix(q[i:], "--"):
				for i < len(q) && q[i] != '\n' {
					i++
				}
			case strings.HasPrefix(q[i:], "/*"):
				j := strings.Index(q[i+2:], "*/")
				if j < 0 {
					return len(q)
				}
				i += j + 4
			default:
				return i
			}
		}
		return i
	}
	for i := next(0); i < len(q); i = next(i) {
		c := q[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			j := i + 1
			for j < len(q) {
				if q[j] == '\\' {
					j += 2
					continue
				}
				if q[j] == c {
					if j+1 < len(q) && q[j+1] == c { // doubled quote: escaped
						j += 2
						continue
					}
					break
				}
				j++
			}
			text := q[i+1 : min(j, len(q))]
			if c != '\'' {
				if k := next(j + 1); k < len(q) && q[k] == '(' && deniedFn[strings.ToLower(text)] {
					return deny("function %s", text)
				}
			}
			if top().expectTable && (c == '\'' || !plainName(text)) {
				return deny("FROM %c%s%c (a quoted name in FROM is read as a file)", c, text, c)
			}
			top().expectTable = false
			i = j + 1
		case isIdentStart(c):
			j := i
			for j < len(q) && isIdentPart(q[j]) {
				j++
			}
			word := q[i:j]
			upper := strings.ToUpper(word)
			if k := next(j); k < len(q) && q[k] == '(' && deniedFn[strings.ToLower(word)] {
				return deny("function %s", word)
			}
			if deniedWord[upper] {
				return "", fmt.Errorf("%w: %s is not allowed in a read", store.ErrNotReadOnly, upper)
			}
			switch {
			case upper == "FROM" || upper == "JOIN":
				top().inFrom, top().expectTable = true, true
			case clauseEnd[upper]:
				top().inFrom, top().expectTable = false, false
			default:
				top().expectTable = false
			}
			i = j
		case c == '(':
			top().expectTable = false
			stack = append(stack, level{})
			i++
		case c == ')':
			if len(stack) > 1 {
				stack = stack[:len(stack)-1]
			}
			i++
		case c == ',':
			if top().inFrom {
				top().expectTable = true
			}
			i++
		default:
			top().expectTable = false
			i++
		}
	}
	return q, nil
}

func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

func isIdentPart(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' || c == '$' }

// plainName reports whether a quoted identifier is a plain table name.
func plainName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isIdentPart(s[i]) {
			return false
		}
	}
	return true
}
