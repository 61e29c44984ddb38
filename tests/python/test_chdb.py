"""Our ClickHouse SQL on current ClickHouse: every migration of
sql/clickhouse/migrations and every example of sql/examples runs on
ClickHouse 26 in-process (chdb-core), beside the 18.16 server the Go tests
use. The data is the examples' dataset as the ClickHouse store wrote it
(sql/examples/testdata/chdb/tables, raw rows with their duplicates; the Go
test on 18.16 keeps the fixture current), and the expected rows are the
ones hand-computed there (expected.json)."""

import datetime
import json
import math
import pathlib
import re

import pytest

import chdb  # noqa: F401,E402 - chdb-core: deploy/test.sh installs it; missing, the test fails
from chdb import session as chs  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
MIGRATIONS = ROOT / "sql" / "clickhouse" / "migrations"
FIXTURE = ROOT / "sql" / "examples" / "testdata" / "chdb"
DB = "forum_chdb"


def split_statements(src):
    """The Go migrator's split (sql/clickhouse splitStatements): statements
    end with a semicolon at the end of a line; whole-line comments go."""
    out, cur = [], []
    for line in src.split("\n"):
        t = line.strip()
        if not t or t.startswith("--"):
            continue
        cur.append(line)
        if t.endswith(";"):
            out.append("\n".join(cur).strip().rstrip(";"))
            cur = []
    if "".join(cur).strip():
        out.append("\n".join(cur).strip())
    return out


def norm(v, typ):
    """The Go test's norm: NULL, integers, shortest floats, dates at
    midnight as 2006-01-02, other times as RFC 3339, strings."""
    if v is None:
        return "NULL"
    base = re.sub(r"^(Nullable|LowCardinality)\((.*)\)$", r"\2", typ)
    if base.startswith("DateTime"):
        dt = datetime.datetime.fromisoformat(str(v).replace(" ", "T"))
        if dt.time() == datetime.time(0):
            return dt.date().isoformat()
        return dt.replace(tzinfo=datetime.timezone.utc).isoformat().replace("+00:00", "Z")
    if base.startswith("Date"):
        return str(v)
    if base == "Bool":
        return "true" if v else "false"
    if isinstance(v, bool):
        return "true" if v else "false"
    if base.startswith("Float") or isinstance(v, float):
        f = float(v)
        if math.isfinite(f) and f == int(f) and abs(f) < 1e21:
            return str(int(f))
        return repr(f)
    return str(v)


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    s = chs.Session(str(tmp_path_factory.mktemp("chdb")))
    s.query(f"CREATE DATABASE IF NOT EXISTS {DB}")
    files = sorted(MIGRATIONS.glob("*.sql"))
    assert len(files) >= 9, files
    applied = 0
    for f in files:
        for stmt in split_statements(f.read_text()):
            # One statement a query, in the store's database (as the Go
            # migrator runs them on a connection to it).
            s.query(f"USE {DB}")
            try:
                s.query(stmt)
            except Exception as e:  # noqa: BLE001 - name the file and statement
                raise AssertionError(f"{f.name} fails on ClickHouse {version(s)}:\n{stmt}\n{e}") from e
            applied += 1
    tables = sorted((FIXTURE / "tables").glob("*.jsonl"))
    assert tables, "no fixture tables: run the Go examples test with -update"
    for t in tables:
        # One INSERT per insert of the Go store, in its order ("__insert"):
        # a ReplacingMergeTree without a version keeps the last inserted row.
        groups = {}
        for line in t.read_text().strip().split("\n"):
            rec = json.loads(line)
            groups.setdefault(rec.pop("__insert"), []).append(json.dumps(rec))
        for _, rows in sorted(groups.items()):
            s.query(f"INSERT INTO {DB}.{t.stem} SETTINGS date_time_input_format='best_effort' FORMAT JSONEachRow " + "\n".join(rows))
    yield s, applied, [t.stem for t in tables]
    s.close()


def version(s):
    return str(s.query("SELECT version()", "CSV")).strip().strip('"')


def test_chdb_is_current_clickhouse(db):
    s, applied, _ = db
    major = int(version(s).split(".")[0])
    assert major >= 25, f"chDB runs ClickHouse {version(s)}, not a current release"
    assert applied > 30, f"only {applied} migration statements ran"


def test_fixture_rows_loaded(db):
    # Merges may already have folded the duplicates; every table holds rows.
    s, _, tables = db
    for t in tables:
        got = int(str(s.query(f"SELECT count() FROM {DB}.{t} FINAL", "CSV")).strip())
        assert got > 0, f"{t}: no rows loaded"


EXPECTED = json.loads((FIXTURE / "expected.json").read_text())


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_on_clickhouse_26(db, name):
    s, _, _ = db
    ex = EXPECTED[name]
    s.query(f"USE {DB}")
    raw = s.query(f"{ex['sql'].rstrip().rstrip(';')}\nSETTINGS output_format_json_quote_64bit_integers = 0, output_format_json_quote_64bit_floats = 0", "JSONCompact")
    out = json.loads(raw.bytes() if hasattr(raw, "bytes") else str(raw))
    cols = [m["name"] for m in out["meta"]]
    types = [m["type"] for m in out["meta"]]
    rows = [[norm(v, types[i]) for i, v in enumerate(r)] for r in out["data"]]
    assert cols == ex["cols"], f"{name}: columns {cols}, want {ex['cols']}"
    assert rows == ex["rows"], f"{name}:\n got  {rows}\n want {ex['rows']}"
