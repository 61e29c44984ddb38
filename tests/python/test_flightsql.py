"""Analysts on a live system: `forum replay --serve` offers read-only Arrow
Flight SQL, and ADBC (adbc-driver-flightsql, as a notebook would use it)
runs every file of sql/examples/ against it while it serves, getting the
same rows `forum sql -f` gets from the stopped store. Writes and
file-reading table functions are refused, and so is a wrong token.
"""

import datetime as dt
import decimal
import json
import math
import pathlib
import re
import shutil
import subprocess
import time
import urllib.request

import adbc_driver_flightsql.dbapi as flightsql
import pytest

from conftest import ROOT, SNAPSHOTS, run
from test_exports import free_port

EXAMPLES = sorted((ROOT / "sql" / "examples").glob("*.sql"))
# The reference instant: the day after the bundled snapshots' last capture
# (2025-10-09), so every 30-day window holds the replayed history.
NOW_MS = 1760054400000
TOKEN = "adbc-test-token"


def substitute(text, params):
    """The files' placeholders, replaced textually as sql/examples/README.md says."""
    for k, v in params.items():
        text = text.replace("{{" + k + "}}", v)
    assert "{{" not in text, text
    return text


def canon(v):
    """One comparable form for a value from JSON (forum sql) or Arrow (ADBC)."""
    if v is None:
        return None
    if isinstance(v, bool):
        return v
    if isinstance(v, (dt.datetime, dt.date)):
        if isinstance(v, dt.datetime):
            v = v.astimezone(dt.timezone.utc) if v.tzinfo else v.replace(tzinfo=dt.timezone.utc)
        else:
            v = dt.datetime(v.year, v.month, v.day, tzinfo=dt.timezone.utc)
        return ("t", v.timestamp())
    if isinstance(v, str) and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)", v):
        return ("t", dt.datetime.fromisoformat(v.replace("Z", "+00:00")).timestamp())
    if isinstance(v, (int, float, decimal.Decimal)):
        f = float(v)
        return ("n", None if math.isnan(f) else round(f, 9))
    return v


def rows_of(dicts):
    return sorted(json.dumps({k: canon(x) for k, x in d.items()}, sort_keys=True) for d in dicts)


def forum_sql(forum, data_dir, path, params, extra=()):
    args = [forum, "sql", "-f", str(path), "--format", "json", "--data-dir", str(data_dir), "--log-level", "warn", *extra]
    for k, v in params.items():
        args += ["--param", f"{k}={v}"]
    return [json.loads(l) for l in run(args).splitlines() if l.strip()]


@pytest.fixture(scope="module")
def served(forum, store, tmp_path_factory):
    """A copy of the replayed store: its rows read by `forum sql -f` while
    stopped, then served by replay --serve with Flight SQL on."""
    d, _, _ = store
    data = tmp_path_factory.mktemp("flight") / "data"
    shutil.copytree(d, data)
    server = run([forum, "sql", "SELECT server FROM trust_records ORDER BY server LIMIT 1", "--format", "json",
                  "--data-dir", str(data), "--log-level", "warn"])
    params = {"now_ms": str(NOW_MS), "server": json.loads(server.splitlines()[0])["server"]}
    stopped = {p.name: forum_sql(forum, data, p, params) for p in EXAMPLES}
    assert any(stopped.values()), "the examples return no row at all on the replayed store"

    port, fport = free_port(), free_port()
    proc = subprocess.Popen([forum, "replay", "--snapshots", str(SNAPSHOTS), "--data-dir", str(data), "--serve",
                             "--listen", f"127.0.0.1:{port}", "--flight-listen", f"127.0.0.1:{fport}",
                             "--flight-token", TOKEN, "--log-level", "warn"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 180
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert proc.poll() is None, "forum replay --serve exited"
            assert time.time() < deadline, "forum replay --serve never became ready"
            time.sleep(0.5)
        yield {"data": data, "uri": f"grpc://127.0.0.1:{fport}", "params": params, "stopped": stopped}
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def connect(uri, token=TOKEN):
    return flightsql.connect(uri, db_kwargs={"adbc.flight.sql.authorization_header": "Bearer " + token}, autocommit=True)


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_examples_over_adbc_match_the_stopped_store(served, path):
    sql = substitute(path.read_text(), served["params"])
    with connect(served["uri"]) as conn, conn.cursor() as cur:
        cur.execute(sql)
        table = cur.fetch_arrow_table()
    live = table.to_pylist()
    want = served["stopped"][path.name]
    if want:  # forum sql --format json writes each row as an object: keys, not their order
        assert sorted(f.name for f in table.schema) == sorted(want[0].keys())
    assert rows_of(live) == rows_of(want), f"{path.name}: {len(live)} rows over Flight SQL, {len(want)} from the stopped store"


def test_forum_sql_goes_through_the_running_forum(forum, served):
    """The store is held by the serving process: forum sql -f on the same
    data dir answers through its Flight SQL server, with the same rows."""
    path = ROOT / "sql" / "examples" / "drift_events_per_kind_per_day.sql"
    env_rows = forum_sql(forum, served["data"], path, served["params"], extra=["--token", TOKEN])
    assert rows_of(env_rows) == rows_of(served["stopped"][path.name])


@pytest.mark.parametrize("sql", [
    "DELETE FROM dlq",
    "INSERT INTO dlq SELECT * FROM dlq",
    "SELECT 1; SELECT 2",
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM read_csv_auto('/etc/hostname')",
    "SELECT * FROM '/etc/passwd'",
    "SELECT * FROM glob('/etc/*')",
    "SELECT getenv('FORUM_FLIGHT_TOKEN')",
])
def test_writes_and_file_reads_are_refused(served, sql):
    with connect(served["uri"]) as conn, conn.cursor() as cur:
        with pytest.raises(Exception) as e:
            cur.execute(sql)
            cur.fetchall()
        assert "INVALID_ARGUMENT" in str(e.value) or "InvalidArgument" in str(e.value), str(e.value)


def test_a_wrong_token_is_refused(served):
    with pytest.raises(Exception) as e:
        with connect(served["uri"], token="wrong") as conn, conn.cursor() as cur:
            cur.execute("SELECT 1")
            cur.fetchall()
    assert "UNAUTHENTICATED" in str(e.value).upper(), str(e.value)
