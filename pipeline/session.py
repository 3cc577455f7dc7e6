"""The one Spark session factory of the pipeline: embedded local Spark by default, a cluster on request.

``master``: ``--master`` / ``MQSPEC_SPARK_MASTER``, default ``local[*]``. ``local[...]`` runs Spark
inside this process (the JVM is started by pyspark); ``spark://HOST:PORT`` joins a standalone
cluster; ``sc://HOST:PORT`` talks to a Spark Connect server. The pipeline uses the DataFrame API
only (``mapInArrow``, no RDD or SparkContext calls), so the same jobs run on all three.

The user's settings win: ``--conf KEY=VALUE`` pairs go to the session as given, ``--archives`` and
``--py-files`` ship files to the executors (``spark.archives`` / ``spark.submit.pyFiles``; on Connect
``addArtifacts``), and the executors' Python is ``spark.pyspark.python`` when given, else
``$PYSPARK_PYTHON``, else the interpreter running mqspec (the one default that keeps one machine
working with nothing set). Whatever the executors run is checked before a job by
:mod:`mqspec.pipeline.preflight`.

Spark's own chatter stays off the terminal: its log at fatal errors only (``log4j2.properties`` beside
this module, unless ``$SPARK_CONF_DIR`` holds the user's own; a failed job is one line of mqspec's,
:mod:`mqspec.pipeline.preflight`), and the JVM's ``WARNING: Using incubator
modules`` line, which Spark's launcher provokes on every start (it always adds
``--add-modules=jdk.incubator.vector``, and no JVM option silences that warning), is dropped from the
JVM's stderr, as is the traceback of a Python worker forked just as a failing job closed its connection
(:func:`abandoned_fork`); every other line of it passes through. The driver JVM exits on an OutOfMemoryError
rather than leaving a job waiting for a thread that died. Local runs bind to 127.0.0.1.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO, Any

DEFAULT_MASTER = "local[*]"
#: Spark's log configuration for the pipeline: errors only (its start-up notices are not ours to show)
LOG4J = Path(__file__).resolve().parent / "log4j2.properties"
MASTER_ENV = "MQSPEC_SPARK_MASTER"
_MASTER = re.compile(r"^(local(\[(\*|[1-9][0-9]*)(,[1-9][0-9]*)?\])?|spark://[^\s/]+:[0-9]+(,[^\s/]+:[0-9]+)*|sc://\S+)$")
#: lines the JVM prints at every start that say nothing about the job (see the module docstring)
JVM_NOISE = frozenset({"WARNING: Using incubator modules: jdk.incubator.vector"})


class SessionError(ValueError):
    """A master URL or Spark set-up that cannot give a session (the CLI prints it as a usage error)."""


def master_url(master: str | None = None) -> str:
    """The master to use: the argument, else ``MQSPEC_SPARK_MASTER``, else ``local[*]`` (checked)."""
    url = master or os.environ.get(MASTER_ENV) or DEFAULT_MASTER
    if not _MASTER.match(url):
        raise SessionError(f"master {url!r}: expected local[*], local[N], spark://HOST:PORT or sc://HOST:PORT")
    return url


def is_local(url: str) -> bool:
    return url.startswith("local")


def is_connect(url: str) -> bool:
    return url.startswith("sc://")


def parse_conf(pairs: Iterable[str]) -> dict[str, str]:
    """``KEY=VALUE`` strings (``--conf``) as a dict; SessionError for one without ``=`` or a key."""
    conf: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise SessionError(f"--conf {pair!r}: expected KEY=VALUE")
        conf[key.strip()] = value
    return conf


def executor_python(conf: Mapping[str, str]) -> str:
    """The Python the executors run: ``spark.pyspark.python``, else ``$PYSPARK_PYTHON``, else this interpreter."""
    return conf.get("spark.pyspark.python") or os.environ.get("PYSPARK_PYTHON") or sys.executable


def session(master: str | None = None, *, app_name: str = "mqspec", event_log: str | Path | None = None,
            conf: Mapping[str, str] | None = None, archives: Iterable[str] = (), py_files: Iterable[str] = ()) -> Any:
    """A SparkSession on ``master`` (see the module docstring); ``event_log`` is a directory for Spark's event log."""
    url = master_url(master)
    user = dict(conf or {})
    archives, py_files = list(archives), list(py_files)
    from pyspark.sql import SparkSession

    if is_connect(url):
        builder = SparkSession.builder.remote(url)
        for key, value in user.items():
            builder = builder.config(key, value)
        spark = builder.appName(app_name).getOrCreate()
        if archives:
            spark.addArtifacts(*archives, archive=True)
        if py_files:
            spark.addArtifacts(*py_files, pyfile=True)
        return spark

    # pyspark gives the executors $PYSPARK_PYTHON (it does not read spark.pyspark.python itself)
    os.environ["PYSPARK_PYTHON"] = executor_python(user)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if is_local(url) or "127.0.0.1" in url or "localhost" in url:
        os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    options: dict[str, str] = {
        "spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false", "spark.python.worker.reuse": "true",
        "spark.sql.shuffle.partitions": "8", "spark.sql.execution.arrow.pyspark.enabled": "true",
    }
    if is_local(url):  # the executors live in the driver's JVM: Spark's 1g default is short
        options["spark.driver.memory"] = os.environ.get("MQSPEC_SPARK_DRIVER_MEMORY", "4g")
    if os.environ.get("SPARK_LOCAL_IP") == "127.0.0.1":
        options.update({"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"})
    if event_log is not None:
        Path(event_log).mkdir(parents=True, exist_ok=True)
        options.update({"spark.eventLog.enabled": "true", "spark.eventLog.dir": Path(event_log).resolve().as_uri()})
    if archives:
        options["spark.archives"] = ",".join(archives)
    if py_files:
        options["spark.submit.pyFiles"] = ",".join(py_files)
    options.update(user)  # the user's settings win
    options["spark.driver.extraJavaOptions"] = " ".join(
        filter(None, [user.get("spark.driver.extraJavaOptions", ""), *_driver_java_options()]))
    _launch_jvm(options)
    builder = SparkSession.builder.master(url)
    for key, value in options.items():
        builder = builder.config(key, value)
    return builder.appName(app_name).getOrCreate()


def _driver_java_options() -> list[str]:
    """The driver JVM's options mqspec adds: its log configuration (unless the user keeps one in
    ``$SPARK_CONF_DIR``) and an exit on OutOfMemoryError (a dead result thread would leave the job hanging)."""
    found = [] if (Path(os.environ.get("SPARK_CONF_DIR", "/nonexistent")) / "log4j2.properties").is_file() else \
        [f"-Dlog4j2.configurationFile={LOG4J.as_uri()}"]
    return [*found, "-XX:+ExitOnOutOfMemoryError"]


def _launch_jvm(options: Mapping[str, str]) -> None:
    """Start the driver JVM (once per process) with its stderr read by a thread that drops JVM_NOISE."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None or "PYSPARK_GATEWAY_PORT" in os.environ:
        return  # a JVM is already there (a second session in this process, or a pyspark shell's)
    conf = SparkConf(loadDefaults=False).setAll(list(options.items()))
    gateway = launch_gateway(conf, popen_kwargs={"stderr": subprocess.PIPE})
    stderr = getattr(getattr(gateway, "proc", None), "stderr", None)
    if stderr is not None:
        threading.Thread(target=_forward, args=(stderr, sys.stderr), name="mqspec-jvm-stderr", daemon=True).start()
    SparkContext._ensure_initialized(gateway=gateway, conf=conf)


def _forward(source: IO[bytes], target: IO[str]) -> None:
    held: list[str] = []  # a Python traceback being read: passed on whole, or dropped whole (abandoned_fork)
    for raw in iter(source.readline, b""):
        line = raw.decode("utf-8", "replace")
        if line.rstrip("\r\n") in JVM_NOISE:
            continue
        if line.rstrip("\r\n") == "Traceback (most recent call last):" or (held and line.startswith(" ")):
            held.append(line)
            continue
        if held:
            block, held = held + [line], []
            if not abandoned_fork(block):
                _write(target, "".join(block))
            continue
        _write(target, line)
    if held:
        _write(target, "".join(held))


def abandoned_fork(block: list[str]) -> bool:
    """A traceback that a Python worker Spark's daemon had just forked prints when the JVM closes its connection
    before the first read (a job failing, its tasks cancelled): EOFError in pyspark/daemon.py's ``worker``. It says
    nothing of the job, whose failure mqspec reports in one line, and it raced that line onto the terminal."""
    return block[-1].rstrip("\r\n") == "EOFError" and any('daemon.py", line' in x and "in worker" in x for x in block)


def _write(target: IO[str], text: str) -> None:
    try:
        target.write(text)
        target.flush()
    except (OSError, ValueError):  # our stderr closed: keep draining so the JVM never blocks on a full pipe
        pass


def parallelism(spark: Any, master: str) -> int:
    """How many tasks run at once: the cores of a local master, else Spark's default parallelism, else 2."""
    m = re.match(r"^local\[(\*|[0-9]+)", master)
    if m:
        return (os.cpu_count() or 2) if m.group(1) == "*" else int(m.group(1))
    if master == "local":
        return 1
    try:
        return int(spark.conf.get("spark.default.parallelism"))
    except Exception:  # noqa: BLE001 - not set on this cluster
        return 2
