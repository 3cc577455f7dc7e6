"""A real Spark standalone cluster on 127.0.0.1 for the tests: one master and one worker, stopped by PID.

Both start through pyspark's ``bin/spark-class`` (the deploy Master and Worker classes), on free
ports, with the master's REST submission port off; :func:`standalone` yields the master URL once
the worker has registered (the master's ``/json`` page lists it alive).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pyspark


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _spark_class(*args: str, log: Path, env: dict[str, str]) -> subprocess.Popen:
    spark_home = Path(pyspark.__file__).resolve().parent
    return subprocess.Popen([str(spark_home / "bin" / "spark-class"), *args], stdout=log.open("wb"),
                            stderr=subprocess.STDOUT, env=env, start_new_session=True)


def _alive_workers(ui_port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=2) as page:  # noqa: S310 - loopback
            return int(json.load(page).get("aliveworkers", 0))
    except OSError:
        return 0


def _stop(process: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


@contextlib.contextmanager
def standalone(workdir: Path, cores: int = 2, timeout: float = 120.0) -> Iterator[str]:
    """A master and a worker on 127.0.0.1; yields ``spark://127.0.0.1:PORT``; both stopped (by PID) at the end."""
    port, ui, worker_ui = free_port(), free_port(), free_port()
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable,
           "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false", "SPARK_WORKER_DIR": str(workdir / "work"),
           "SPARK_LOG_DIR": str(workdir / "logs"), "SPARK_NO_DAEMONIZE": "1"}
    master = _spark_class("org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                          "--webui-port", str(ui), log=workdir / "master.log", env=env)
    worker = None
    try:
        worker = _spark_class("org.apache.spark.deploy.worker.Worker", f"spark://127.0.0.1:{port}",
                              "--host", "127.0.0.1", "--webui-port", str(worker_ui), "--cores", str(cores),
                              "--memory", "2g", "--work-dir", str(workdir / "work"),
                              log=workdir / "worker.log", env=env)
        deadline = time.monotonic() + timeout
        while _alive_workers(ui) < 1:
            if master.poll() is not None or worker.poll() is not None or time.monotonic() > deadline:
                logs = "".join(p.read_text(errors="replace")[-2000:] for p in workdir.glob("*.log"))
                raise RuntimeError(f"the standalone cluster did not come up:\n{logs}")
            time.sleep(0.5)
        yield f"spark://127.0.0.1:{port}"
    finally:
        if worker is not None:
            _stop(worker)
        _stop(master)
