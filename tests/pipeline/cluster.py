"""Real Spark services on 127.0.0.1 for the tests, each stopped by the PID of the process the test started.

- :func:`standalone`: a master and one worker (pyspark's ``bin/spark-class``, free ports, the master's
  REST submission port off). The worker runs in its own mount namespace where this checkout, and so
  the driver's venv and interpreter, is an empty folder: it sees Spark (bind-mounted elsewhere), the
  machine's base Python and its own working folder, so an executor has mqspec only if the job ships it.
- :func:`connect_server`: a Spark Connect server (``sbin/start-connect-server.sh --wait``, the jar
  pyspark ships) on ``local[2]``, in the same kind of namespace, its executors running the Python given.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pyspark

SPARK_HOME = Path(pyspark.__file__).resolve().parent
#: the environment variables that would hand a process the driver's Python or this checkout
DRIVER_ONLY = ("PYTHONPATH", "VIRTUAL_ENV", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "SPARK_HOME", "SPARK_CONF_DIR")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def can_hide(folder: Path) -> bool:
    """Whether this machine lets a process hide ``folder`` from itself (a private mount namespace: unshare -m)."""
    done = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                           f"mount -t tmpfs -o size=1m none '{folder}' && test -z \"$(ls -A '{folder}')\""],
                          capture_output=True, timeout=30)
    return done.returncode == 0 and shutil.which("unshare") is not None


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without what points at the driver's venv or checkout."""
    env = {k: v for k, v in os.environ.items() if k not in DRIVER_ONLY}
    venv_bin = str(Path(os.environ.get("VIRTUAL_ENV", "/nonexistent")) / "bin")
    env["PATH"] = ":".join(p for p in env.get("PATH", "").split(":") if p and ".venv" not in p and p != venv_bin)
    env.update(SPARK_LOCAL_IP="127.0.0.1", SPARK_NO_DAEMONIZE="1", **extra)
    return env


def _alive_workers(ui_port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=2) as page:  # noqa: S310 - loopback
            return int(json.load(page).get("aliveworkers", 0))
    except OSError:
        return 0


def stop(process: subprocess.Popen) -> None:
    """Stop a service the test started: its process group (the PID the test holds), TERM then KILL."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


def _start(command: list[str], log: Path, env: dict[str, str], cwd: Path) -> subprocess.Popen:
    return subprocess.Popen(command, stdout=log.open("wb"), stderr=subprocess.STDOUT, env=env, cwd=cwd,
                            start_new_session=True)


def _logs(folder: Path) -> str:
    return "".join(p.read_text(errors="replace")[-2000:] for p in sorted(folder.glob("*.log")))


@contextlib.contextmanager
def standalone(workdir: Path, hide: Path, cores: int = 2, timeout: float = 180.0) -> Iterator[str]:
    """A master, and a worker that cannot see ``hide`` (this checkout); yields ``spark://127.0.0.1:PORT``."""
    port, ui, worker_ui = free_port(), free_port(), free_port()
    (workdir / "master").mkdir(parents=True)
    (workdir / "worker" / "work").mkdir(parents=True)
    (workdir / "worker" / "spark").mkdir()
    env = clean_env(SPARK_MASTER_OPTS="-Dspark.master.rest.enabled=false", SPARK_LOG_DIR=str(workdir / "logs"))
    master = _start([str(SPARK_HOME / "bin" / "spark-class"), "org.apache.spark.deploy.master.Master",
                     "--host", "127.0.0.1", "--port", str(port), "--webui-port", str(ui)],
                    workdir / "master.log", env, workdir / "master")
    worker = None
    try:
        spark = workdir / "worker" / "spark"
        command = (f"exec '{spark}/bin/spark-class' org.apache.spark.deploy.worker.Worker spark://127.0.0.1:{port} "
                   f"--host 127.0.0.1 --webui-port {worker_ui} --cores {cores} --memory 2g "
                   f"--work-dir '{workdir / 'worker' / 'work'}'")
        worker = _start(_hidden(hide, spark, command), workdir / "worker.log",
                        {**env, "SPARK_HOME": str(spark), "SPARK_WORKER_DIR": str(workdir / "worker" / "work")},
                        workdir / "worker")
        deadline = time.monotonic() + timeout
        while _alive_workers(ui) < 1:
            if master.poll() is not None or worker.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the standalone cluster did not come up:\n{_logs(workdir)}")
            time.sleep(0.5)
        yield f"spark://127.0.0.1:{port}"
    finally:
        if worker is not None:
            stop(worker)
        stop(master)


def _hidden(hide: Path, spark: Path, command: str) -> list[str]:
    """``command`` (a shell line) in a mount namespace where ``hide`` is empty and Spark is at ``spark``."""
    return ["unshare", "-m", "--propagation", "private", "sh", "-c",
            f"mount --bind '{SPARK_HOME}' '{spark}' && mount -t tmpfs -o size=1m,mode=0555 none '{hide}' && {command}"]


@contextlib.contextmanager
def connect_server(workdir: Path, python: Path, hide: Path, timeout: float = 180.0) -> Iterator[str]:
    """A Spark Connect server on local[2] that cannot see ``hide`` (this checkout), its executors running
    ``python``; yields ``sc://127.0.0.1:PORT``."""
    port = free_port()
    spark = workdir / "spark"
    spark.mkdir(parents=True)
    env = clean_env(PYSPARK_PYTHON=str(python), SPARK_LOG_DIR=str(workdir / "logs"), SPARK_PID_DIR=str(workdir),
                    SPARK_HOME=str(spark))
    command = (f"exec '{spark}/sbin/start-connect-server.sh' --wait --master 'local[2]' "
               f"--conf spark.connect.grpc.binding.port={port} --conf spark.connect.grpc.binding.address=127.0.0.1 "
               "--conf spark.driver.host=127.0.0.1 --conf spark.driver.bindAddress=127.0.0.1 "
               "--conf spark.ui.enabled=false")
    server = _start(_hidden(hide, spark, command), workdir / "connect.log", env, workdir)
    try:
        deadline = time.monotonic() + timeout
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the Spark Connect server did not come up:\n{_logs(workdir)}")
            time.sleep(0.5)
        yield f"sc://127.0.0.1:{port}"
    finally:
        stop(server)
