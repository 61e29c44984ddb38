"""pyarrow reads every export with the documented schema and the store's row counts.

End to end through the binary: build `forum`, replay the bundled real
snapshots into a fresh DuckDB store, then for each table
  * `forum export --format arrow` (Arrow IPC file) and `--format parquet`,
  * GET /v1/export/{table} (Arrow IPC stream) from `forum replay --serve`,
and check each against the schema documented in api/export.go (kept as
api/testdata/export.<table>.schema.golden.txt) and against
`forum sql "SELECT count(*) ..."` on the same store.

Run: python3 -m pytest tests/python   (deploy/test.sh does). FORUM_BIN names a
prebuilt binary; otherwise the test builds one with `go build`.
"""

import json
import os
import pathlib
import shutil
import socket
import subprocess
import time
import urllib.request

import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq
import pytest

from conftest import SNAPSHOTS, run

ROOT = pathlib.Path(__file__).resolve().parents[2]

TS = pa.timestamp("ms", tz="UTC")
S = pa.string()

# The documented schemas (api/export.go): name -> (type, nullable).
SCHEMAS = {
    "trust_records": [
        ("server", S, False), ("publication_id", S, False), ("computed_at", TS, False),
        ("score", pa.float64(), True), ("band", S, False), ("toolfinder_score", pa.int32(), False),
        ("content_sha256", S, False), ("record", S, False),
    ],
    "health_checks": [
        ("id", S, False), ("server", S, False), ("remote_url", S, False), ("observed_at", TS, False),
        ("transport", S, False), ("outcome", S, False), ("error_class", S, False),
        ("http_status", pa.int32(), False), ("latency_ms", pa.float64(), False), ("auth_kind", S, False),
        ("protocol_version", S, False), ("tool_count", pa.int32(), False), ("tools_listed", pa.bool_(), False),
        ("check_json", S, False),
    ],
    "drift_events": [
        ("id", S, False), ("server", S, False), ("namespace", S, False), ("kind", S, False),
        ("version", S, False), ("before", S, False), ("after", S, False), ("observed_at", TS, False),
        ("version_bump", pa.bool_(), False), ("snapshot_id", S, False),
    ],
    # One row per GitHub observation; nullable timestamps are unknown, and
    # the flag_* columns are null where the observation cannot say.
    "provenance": [
        ("id", S, False), ("repo", S, False), ("observed_at", TS, False), ("status", S, False),
        ("http_status", pa.int32(), False), ("not_modified", pa.bool_(), False), ("full_name", S, False),
        ("renamed_to", S, False), ("owner_login", S, False), ("owner_type", S, False),
        ("owner_created_at", TS, True), ("owner_observed_at", TS, True), ("created_at", TS, True),
        ("pushed_at", TS, True), ("stars", pa.int32(), False), ("fork", pa.bool_(), False),
        ("archived", pa.bool_(), False), ("disabled", pa.bool_(), False), ("license_spdx", S, False),
        ("commits_fetched", pa.bool_(), False), ("commits_observed_at", TS, True),
        ("commits_count", pa.int32(), False), ("authors", pa.int32(), False), ("verified", pa.int32(), False),
        ("empty", pa.bool_(), False), ("cap_hit", pa.bool_(), False), ("last_commit_at", TS, True),
    ] + [(f"flag_{f}", pa.bool_(), True) for f in (
        "no_license", "single_author_90d", "no_commits_90d", "repo_under_30d", "stale_over_1y",
        "commit_cap_hit", "archived", "fork", "owner_older_than_1y", "stars_ge_100")],
}



def check_schema(table, schema, pub):
    want = SCHEMAS[table]
    assert schema.names == [n for n, _, _ in want], schema
    for f, (name, typ, nullable) in zip(schema, want):
        assert f.type == typ, f"{table}.{name}: {f.type}, want {typ}"
        assert f.nullable == nullable, f"{table}.{name}: nullable {f.nullable}"
    md = {k.decode(): v.decode() for k, v in (schema.metadata or {}).items()}
    assert md.get("forum.table") == table
    assert md.get("forum.publication_id") == pub
    assert md.get("forum.export_version") == "1"


def golden_names(table):
    text = (ROOT / "api" / "testdata" / f"export.{table}.schema.golden.txt").read_text()
    return [l.strip()[2:].split(":")[0] for l in text.splitlines() if l.strip().startswith("- ")]


@pytest.mark.parametrize("table", sorted(SCHEMAS))
def test_documented_schema_matches_golden(table):
    assert golden_names(table) == [n for n, _, _ in SCHEMAS[table]]


@pytest.mark.parametrize("fmt", ["arrow", "parquet"])
@pytest.mark.parametrize("table", sorted(SCHEMAS))
def test_file_export(forum, store, tmp_path, table, fmt):
    d, counts, pub = store
    out = tmp_path / f"{table}.{fmt}"
    run([forum, "export", "--table", table, "--format", fmt, "--out", str(out), "--data-dir", str(d), "--log-level", "warn"])
    if fmt == "arrow":
        with pa.memory_map(str(out)) as src:
            t = ipc.open_file(src).read_all()
    else:
        t = pq.read_table(out)
    check_schema(table, t.schema, pub)
    assert t.num_rows == counts[table]
    if table == "trust_records" and t.num_rows:
        rec = json.loads(t.column("record")[0].as_py())
        assert rec["server"] == t.column("server")[0].as_py()
        assert rec["publication_id"] == t.column("publication_id")[0].as_py()
    if table == "drift_events":
        ts = t.column("observed_at").to_pylist()
        assert ts == sorted(ts)


def test_since(forum, store, tmp_path):
    d, counts, _ = store
    out = tmp_path / "late.arrow"
    run([forum, "export", "--table", "drift_events", "--format", "arrow", "--since", "2025-10-08",
         "--out", str(out), "--data-dir", str(d), "--log-level", "warn"])
    t = ipc.open_file(pa.memory_map(str(out))).read_all()
    assert 0 < t.num_rows < counts["drift_events"]
    assert min(t.column("observed_at").to_pylist()).isoformat() >= "2025-10-08"


def test_bad_table_is_a_usage_error(forum, store, tmp_path):
    d, _, _ = store
    p = subprocess.run([forum, "export", "--table", "registry_records", "--out", str(tmp_path / "x"), "--data-dir", str(d)],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2, p.stderr


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_stream_export(forum, store, tmp_path):
    d, counts, pub = store
    # a copy: the served store is the same replay, and the files of other tests stay untouched
    served = tmp_path / "served"
    shutil.copytree(d, served)
    port = free_port()
    p = subprocess.Popen([forum, "replay", "--snapshots", str(SNAPSHOTS), "--data-dir", str(served), "--serve",
                          "--listen", f"127.0.0.1:{port}", "--log-level", "warn"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 120
        pending = dict(counts)
        while pending and time.time() < deadline:
            for table in list(pending):
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/export/{table}", timeout=30) as r:
                        assert r.headers["Content-Type"] == "application/vnd.apache.arrow.stream"
                        t = ipc.open_stream(r.read()).read_all()
                except OSError:
                    continue
                check_schema(table, t.schema, pub)
                if t.num_rows == counts[table]:
                    del pending[table]
            time.sleep(0.5)
        assert not pending, f"streams never matched the store: {pending}"
    finally:
        p.terminate()
        p.wait(timeout=30)
