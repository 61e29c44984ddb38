"""Shared fixtures of the Python tests: the forum binary and a store holding
the replay of the bundled real snapshots."""

import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SNAPSHOTS = ROOT / "ingest" / "registry" / "testdata" / "snapshots"

COUNT_SQL = {
    "trust_records": "SELECT count(*) AS n FROM trust_records",
    "health_checks": "SELECT count(*) AS n FROM health_checks_v",
    "drift_events": "SELECT count(*) AS n FROM drift_events_v",
    "provenance": "SELECT count(*) AS n FROM provenance_v",
}


def run(args, **kw):
    p = subprocess.run(args, capture_output=True, text=True, timeout=300, **kw)
    if p.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, args))} exited {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p.stdout


@pytest.fixture(scope="session")
def forum(tmp_path_factory):
    b = os.environ.get("FORUM_BIN")
    if b:
        return b
    out = tmp_path_factory.mktemp("bin") / "forum"
    run(["go", "build", "-o", str(out), "./cmd/forum"], cwd=ROOT)
    return str(out)


@pytest.fixture(scope="session")
def store(forum, tmp_path_factory):
    """A data dir holding the replay of the bundled snapshots, with the
    store's counts and newest publication id."""
    d = tmp_path_factory.mktemp("data")
    run([forum, "replay", "--snapshots", str(SNAPSHOTS), "--data-dir", str(d), "--log-level", "warn"])

    def sql(q):
        return [json.loads(l) for l in run([forum, "sql", q, "--format", "json", "--data-dir", str(d), "--log-level", "warn"]).splitlines() if l]

    counts = {t: int(sql(q)[0]["n"]) for t, q in COUNT_SQL.items()}
    pub = sql("SELECT id FROM publications ORDER BY computed_at DESC, id DESC LIMIT 1")[0]["id"]
    assert counts["trust_records"] > 0 and counts["drift_events"] > 0, counts
    return d, counts, pub
