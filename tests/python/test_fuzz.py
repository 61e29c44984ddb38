"""The API is fuzzed from its own OpenAPI document (schemathesis, bounded, on
loopback): no 5xx, every response matches the schema.

The served process is `forum replay --serve` on a copy of the replayed store:
it serves every route group (registry, trust, incidents, owner bursts,
search, leaderboard, Arrow export), where `forum serve` lacks the stage-fed
ones. The admin routes (bearer-token writes) are left out: without a token
they answer 503 by design, and the fuzzer must not write incidents.
"""

import shutil
import subprocess
import time
import urllib.request

from conftest import SNAPSHOTS
from test_exports import free_port

MAX_EXAMPLES = "10"
SEED = "1"


def test_schemathesis(forum, store, tmp_path):
    d, _, _ = store
    served = tmp_path / "served"
    shutil.copytree(d, served)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    p = subprocess.Popen([forum, "replay", "--snapshots", str(SNAPSHOTS), "--data-dir", str(served), "--serve",
                          "--listen", f"127.0.0.1:{port}", "--log-level", "warn"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 120
        while True:  # ready once the search index is built (the last stage to answer)
            try:
                with urllib.request.urlopen(base + "/v1/search?q=notion", timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert time.time() < deadline, "forum replay --serve never answered"
            time.sleep(0.5)
        st = shutil.which("st") or shutil.which("schemathesis")
        assert st, "schemathesis is not installed (deploy/test.sh installs it)"
        out = subprocess.run([st, "run", base + "/openapi.json",
                              "--checks", "not_a_server_error,response_schema_conformance",
                              "--phases", "examples,coverage,fuzzing", "--max-examples", MAX_EXAMPLES, "--seed", SEED,
                              "--request-timeout", "10", "--workers", "2",
                              "--exclude-path-regex", "^/v1/admin/", "--suppress-health-check", "filter_too_much"],
                             capture_output=True, text=True, timeout=600, cwd=tmp_path)
        assert out.returncode == 0, out.stdout[-8000:] + out.stderr[-2000:]
    finally:
        p.terminate()
        p.wait(timeout=30)
