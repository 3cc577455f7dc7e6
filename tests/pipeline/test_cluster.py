"""A real standalone Spark cluster on 127.0.0.1 gives explore and check the same results as local mode."""

from __future__ import annotations

import json
import subprocess
import sys

from .cluster import standalone
from .conftest import CLARIFIED
from .spark_rows import check_output, explore_output

MQSPEC = [sys.executable, "-m", "mqspec"]


def _run(*args: str) -> dict:
    done = subprocess.run([*MQSPEC, "pipeline", *args, "--json"], capture_output=True, text=True, timeout=900)
    assert done.returncode in (0, 1), done.stderr[-3000:]
    return json.loads(done.stdout)


def test_explore_and_check_on_a_standalone_cluster_equal_local_mode(clarified, checked, tmp_path):
    """The local[2] campaign and check, run again on spark://127.0.0.1 (a master and a worker), give equal rows."""
    local_out, local = clarified
    root, _, local_check = checked
    with standalone(tmp_path) as master:
        remote = _run("explore", "--runs", str(CLARIFIED.runs), "--seed", str(CLARIFIED.seed), "--traces",
                      "--out", str(tmp_path / "explore"), "--master", master)
        remote_check = _run("check", str(root / "in"), str(local_out / "traces"), "--out", str(tmp_path / "check"),
                            "--master", master)
    assert remote["master"].startswith("spark://127.0.0.1:") and remote["runs"] == local["runs"]
    assert explore_output(tmp_path / "explore") == explore_output(local_out)
    assert check_output(tmp_path / "check") == check_output(root / "out")
    same = ("inputs", "conformant", "divergent", "quarantined", "messages", "clauses", "by_verdict")
    assert {k: remote_check[k] for k in same} == {k: local_check[k] for k in same}
