"""A real standalone Spark cluster on 127.0.0.1 gives explore and check the same results as local mode."""

from __future__ import annotations

import json
import subprocess
import sys

from .cluster import standalone
from .corpus import make_corpus
from .spark_rows import check_output, explore_output

MQSPEC = [sys.executable, "-m", "mqspec"]


def _run(*args: str) -> dict:
    done = subprocess.run([*MQSPEC, "pipeline", *args, "--json"], capture_output=True, text=True, timeout=900)
    assert done.returncode in (0, 1), done.stderr[-3000:]
    return json.loads(done.stdout)


def test_explore_and_check_on_a_standalone_cluster_equal_local_mode(tmp_path):
    """The same campaign and the same corpus, on spark://127.0.0.1 (a master and a worker) and on local[2]."""
    make_corpus(tmp_path / "in")
    campaign = ("explore", "--runs", "3", "--seed", "2", "--traces")
    local = _run(*campaign, "--out", str(tmp_path / "local-explore"), "--master", "local[2]")
    local_check = _run("check", str(tmp_path / "in"), str(tmp_path / "local-explore" / "traces"),
                       "--out", str(tmp_path / "local-check"), "--master", "local[2]")
    with standalone(tmp_path) as master:
        remote = _run(*campaign, "--out", str(tmp_path / "cluster-explore"), "--master", master)
        remote_check = _run("check", str(tmp_path / "in"), str(tmp_path / "cluster-explore" / "traces"),
                            "--out", str(tmp_path / "cluster-check"), "--master", master)
    assert remote["master"].startswith("spark://127.0.0.1:") and remote["runs"] == local["runs"] == 3
    assert explore_output(tmp_path / "cluster-explore") == explore_output(tmp_path / "local-explore")
    assert _relocated(check_output(tmp_path / "cluster-check")) == _relocated(check_output(tmp_path / "local-check"))
    # explore --traces, then check: every generated trace conforms (the simulator against the checker)
    assert local_check["conformant"] == 3 + 3 and remote_check == {**local_check, "seconds": remote_check["seconds"],
                                                                   "master": master, "out": remote_check["out"]}


def _relocated(data: dict) -> dict:
    """The rows with the traces' folder (local-explore/ or cluster-explore/) named alike, re-sorted."""
    def row(r: dict) -> dict:
        return {**r, "path": r["path"].replace("local-explore", "explore").replace("cluster-explore", "explore")}

    return {name: sorted((row(r) for r in rows), key=lambda r: json.dumps(r, sort_keys=True, default=str))
            for name, rows in data.items()}
