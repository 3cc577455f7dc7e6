"""Beyond one machine: a standalone worker and a Spark Connect server that cannot see this checkout run explore
and check from file:// URIs, shipped this mqspec as a packed venv, and give local mode's rows (issue 23)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile

import pytest

from mqspec.cli.pipeline import check_status

from .cluster import can_hide, connect_server, standalone
from .conftest import CLARIFIED
from .installs import ROOT
from .spark_rows import check_output, explore_output

MQSPEC = [sys.executable, "-m", "mqspec", "pipeline"]
SAME = ("inputs", "conformant", "divergent", "quarantined", "messages", "clauses", "by_verdict", "skipped")

pytestmark = pytest.mark.skipif(not can_hide(ROOT), reason="hiding the checkout from a worker needs a private "
                                "mount namespace (unshare -m, as root); this machine refuses one")


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    """`mqspec pipeline pack-env`: this mqspec and what the executors import, as a venv archive."""
    path = tmp_path_factory.mktemp("env") / "mqspec-env.tar.gz"
    done = subprocess.run([*MQSPEC, "pack-env", str(path), "--json"], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    packed = json.loads(done.stdout)
    assert "pyspark" not in packed["distributions"] and "hypothesis" in packed["distributions"]
    return path


def _run(*args: str, status: tuple[int, ...] = (0, 1), cwd=None) -> subprocess.CompletedProcess:
    done = subprocess.run([*MQSPEC, *args], capture_output=True, text=True, timeout=900, cwd=cwd)
    assert done.returncode in status, done.stderr[-3000:]
    return done


def _campaign(out: str, master: str, *ship: str, cwd=None) -> dict:
    return json.loads(_run("explore", "--runs", str(CLARIFIED.runs), "--seed", str(CLARIFIED.seed), "--traces",
                           "--out", out, "--master", master, "--json", *ship, cwd=cwd).stdout)


def test_a_worker_that_cannot_see_the_checkout_runs_the_shipped_mqspec(archive, clarified, checked, tmp_path):
    """Unshipped, the job stops at the pre-flight check with one line (the driver's Python is not there);
    with the packed venv (--archives ...#env, spark.pyspark.python=./env/bin/python) the worker's executors
    run explore and check from file:// URIs, import mqspec from their own folder, and give local[2]'s rows."""
    local_out, _ = clarified
    root, _, local_check = checked
    ship = ("--archives", f"{archive.as_uri()}#env", "--conf", "spark.pyspark.python=./env/bin/python",
            # the executors' JVMs are as short-lived as the driver's: the suite's JVM options (tests/conftest.py)
            "--conf", f"spark.executor.extraJavaOptions={os.environ.get('SPARK_SUBMIT_OPTS', '')}")
    with standalone(tmp_path / "cluster", hide=ROOT) as master:
        refused = _run("explore", "--runs", "1", "--out", (tmp_path / "refused").as_uri(), "--master", master,
                       status=(5,))
        remote = _campaign((tmp_path / "explore").as_uri(), master, *ship, cwd=tmp_path)
        remote_check = json.loads(_run("check", (root / "in").as_uri(), (local_out / "traces").as_uri(), "--out",
                                       (tmp_path / "check").as_uri(), "--master", master, "--json", *ship,
                                       cwd=tmp_path, status=(check_status(local_check),)).stdout)
    (line,) = refused.stderr.splitlines()
    assert line.startswith(f"mqspec: pre-flight: the executors cannot run Python {sys.executable}"), line
    for _, python, where in remote["executors"] + remote_check["executors"]:
        assert python.endswith("/env/bin/python") and where.startswith(str(tmp_path / "cluster" / "worker" / "work"))
    assert not any((tmp_path / name).exists() for name in ("file:", "refused/_waves"))
    assert explore_output(tmp_path / "explore") == explore_output(local_out)
    assert check_output(tmp_path / "check") == check_output(root / "out")
    assert {k: remote_check[k] for k in SAME} == {k: local_check[k] for k in SAME}


def test_spark_connect_runs_explore_and_check_with_local_modes_rows(archive, clarified, checked, tmp_path):
    """A Spark Connect server started by the test (its executors on the packed venv's Python, the checkout
    hidden from it) runs both commands for a client at sc://127.0.0.1 and gives local mode's rows."""
    local_out, _ = clarified
    root, _, local_check = checked
    with tarfile.open(archive) as packed:
        packed.extractall(tmp_path / "server" / "env", filter="tar")
    with connect_server(tmp_path / "server", tmp_path / "server" / "env" / "bin" / "python", hide=ROOT) as master:
        remote = _campaign(str(tmp_path / "explore"), master)
        remote_check = json.loads(_run("check", str(root / "in"), str(local_out / "traces"), "--out",
                                       str(tmp_path / "check"), "--master", master, "--json",
                                       status=(check_status(local_check),)).stdout)
    assert remote["master"].startswith("sc://127.0.0.1:")
    for _, python, where in remote["executors"]:
        assert python.startswith(str(tmp_path / "server" / "env")) and where.startswith(str(tmp_path / "server"))
    assert explore_output(tmp_path / "explore") == explore_output(local_out)
    assert check_output(tmp_path / "check") == check_output(root / "out")
    assert {k: remote_check[k] for k in SAME} == {k: local_check[k] for k in SAME}
