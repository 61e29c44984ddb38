"""notebooks/calibration.ipynb runs headless (nbclient) on the exports of the
replayed bundled snapshots and writes its PNG figures."""

import os
import pathlib

from conftest import ROOT, run

import nbformat  # noqa: E402
from nbclient import NotebookClient  # noqa: E402

FIGURES = ["score_by_band.png", "subscores_by_band.png", "base_rates.png", "separation.png", "drift_per_day.png"]


def test_calibration_notebook(forum, store, tmp_path, monkeypatch):
    d, _, _ = store
    exports = tmp_path / "exports"
    exports.mkdir()
    run([forum, "export", "--table", "trust_records", "--format", "parquet", "--out", str(exports / "trust_records.parquet"),
         "--data-dir", str(d), "--log-level", "warn"])
    run([forum, "export", "--table", "drift_events", "--format", "arrow", "--out", str(exports / "drift_events.arrow"),
         "--data-dir", str(d), "--log-level", "warn"])
    figs = pathlib.Path(os.environ.get("FORUM_FIGURES_DIR") or tmp_path / "figures")
    monkeypatch.setenv("FORUM_EXPORT_DIR", str(exports))
    monkeypatch.setenv("FORUM_FIGURES_DIR", str(figs))
    nb = nbformat.read(ROOT / "notebooks" / "calibration.ipynb", as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    for f in FIGURES:
        p = figs / f
        assert p.exists() and p.stat().st_size > 1000, f"{f} not written"
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
