"""The one Spark session factory of the pipeline: embedded local Spark by default, a cluster on request.

``master``: ``--master`` / ``MQSPEC_SPARK_MASTER``, default ``local[*]``. ``local[...]`` runs Spark
inside this process (the JVM is started by pyspark); ``spark://HOST:PORT`` joins a standalone
cluster; ``sc://HOST:PORT`` talks to a Spark Connect server. The pipeline uses the DataFrame API
only (``mapInArrow``, no RDD or SparkContext calls), so the same jobs run on all three.

Before the session starts it sets ``PYSPARK_PYTHON`` to the running interpreter: otherwise the
executors silently run whatever ``python3`` is on PATH, with other package versions (or no
mqspec at all). Local runs bind to 127.0.0.1 (``SPARK_LOCAL_IP``, the driver's host and bind
address), the web UI is off, and Spark's own logging is kept to errors.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

DEFAULT_MASTER = "local[*]"
#: Spark's log configuration for the pipeline: errors only (its start-up warnings are not ours to show)
LOG4J = Path(__file__).resolve().parent / "log4j2.properties"
MASTER_ENV = "MQSPEC_SPARK_MASTER"
_MASTER = re.compile(r"^(local(\[(\*|[1-9][0-9]*)(,[1-9][0-9]*)?\])?|spark://[^\s/]+:[0-9]+(,[^\s/]+:[0-9]+)*|sc://\S+)$")


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


def session(master: str | None = None, *, app_name: str = "mqspec", event_log: str | Path | None = None,
            conf: dict[str, str] | None = None) -> Any:
    """A SparkSession on ``master`` (see the module docstring); ``event_log`` is a directory for Spark's event log."""
    url = master_url(master)
    # the executors must run this interpreter (and so this mqspec): set before the JVM starts
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    if url.startswith("sc://"):
        builder = SparkSession.builder.remote(url)
    else:
        if is_local(url) or "127.0.0.1" in url or "localhost" in url:
            os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
        # Spark reads log4j2.properties from SPARK_CONF_DIR (a user's own configuration wins)
        os.environ.setdefault("SPARK_CONF_DIR", str(LOG4J.parent))
        builder = SparkSession.builder.master(url)
        builder = (builder.config("spark.ui.enabled", "false")
                   .config("spark.ui.showConsoleProgress", "false")
                   .config("spark.pyspark.python", sys.executable)
                   .config("spark.executorEnv.PYSPARK_PYTHON", sys.executable)
                   .config("spark.python.worker.reuse", "true")
                   .config("spark.sql.shuffle.partitions", "8")
                   .config("spark.sql.execution.arrow.pyspark.enabled", "true"))
        if is_local(url):  # the executors live in the driver's JVM: Spark's 1g default is short for traces
            builder = builder.config("spark.driver.memory", os.environ.get("MQSPEC_SPARK_DRIVER_MEMORY", "4g"))
        if os.environ.get("SPARK_LOCAL_IP") == "127.0.0.1":
            builder = builder.config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
        if event_log is not None:
            Path(event_log).mkdir(parents=True, exist_ok=True)
            builder = (builder.config("spark.eventLog.enabled", "true")
                       .config("spark.eventLog.dir", Path(event_log).resolve().as_uri()))
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    spark = builder.appName(app_name).getOrCreate()
    if not url.startswith("sc://"):
        _quiet(spark)
    return spark


def _quiet(spark: Any) -> None:
    """Spark's log at ERROR (its INFO lines would bury the pipeline's progress on stderr)."""
    try:
        spark.sparkContext.setLogLevel("ERROR")  # classic sessions only; Connect has no SparkContext
    except Exception:  # noqa: BLE001 - logging is cosmetic, never a reason to fail a job
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
