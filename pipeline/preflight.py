"""Before a job: can the executors run this mqspec, and do they share ``--out`` with the driver?

A few one-row tasks run :func:`mqspec.pipeline.probe.probe` (sent by value, so it runs even where
mqspec cannot be imported) and report their Python, where mqspec is and a digest of its code, what
failed to import, and whether they could write under ``--out``. The driver compares that with its
own: the same mqspec code (the rows depend on it), the same hypothesis version (its draws differ
between versions), everything the work imports importable, and the executors' probe files visible
from here. Any difference stops the job in seconds with one line saying what is missing and how to
ship it (:class:`PreflightError`, exit status 5), instead of failing every task of the first wave.

Failures of a job itself (an executor lost, an input the executors cannot read) end as a
:class:`JobError` with one line (exit status 6), never as a hang or a traceback.
"""

from __future__ import annotations

import json
import re
import threading
import time
from functools import partial
from typing import Any

from . import probe
from .store import Location

#: how long the probe may wait for executors (a cluster with no free cores never runs it)
TIMEOUT = 180.0
SHIP = ("ship this mqspec with the job: `mqspec pipeline pack-env mqspec-env.tar.gz`, then "
        "--archives mqspec-env.tar.gz#env --conf spark.pyspark.python=./env/bin/python")
SHIP_CONNECT = ("start the Connect server with spark.pyspark.python naming a Python that has this mqspec "
                "(e.g. the venv `mqspec pipeline pack-env` packs, unpacked on the server)")


class PreflightError(RuntimeError):
    """The executors cannot run this job (one line: what is missing and how to ship it)."""


class JobError(RuntimeError):
    """A Spark job failed (an executor lost, an input unreadable, storage not shared): one line."""


def run_job(action: Any, what: str) -> Any:
    """``action()`` (a Spark action); a failure becomes a JobError whose line names ``what`` was running."""
    try:
        return action()
    except (PreflightError, JobError):
        raise
    except Exception as exc:  # noqa: BLE001 - Py4JJavaError, SparkConnectGrpcException, PySparkException...
        raise JobError(f"{what} failed: {reason(exc)}") from exc


def reason(exc: BaseException) -> str:
    """The line of a Spark failure that says what went wrong (not the JVM stack, not the Python one)."""
    text = str(exc)
    for pattern, say in (
        (r'Cannot run program "([^"]+)"', "the executors cannot run Python {0}"),
        (r"PYTHON_VERSION_MISMATCH\]?\s*(.*?)(?:\.\s|$)", "{0}"),
        (r"(?:java\.io\.)?FileNotFoundException:\s*(.*?)(?:\n|$)", "an input or output is not readable there: {0}"),
        (r"\[PATH_NOT_FOUND\]\s*(.*?)(?:\n|SQLSTATE|$)", "{0}"),
        (r"ModuleNotFoundError: (.*?)(?:\n|$)", "the executors' Python: {0}"),
        (r"(OutOfMemoryError.*?)(?:\n|$)", "{0}"),
    ):
        m = re.search(pattern, text, re.S)
        if m:
            return say.format(*(" ".join(g.split()) for g in m.groups()))
    first = next((line.strip() for line in text.splitlines() if line.strip()), type(exc).__name__)
    return " ".join(first.split())[:400]


def preflight(spark: Any, *, tasks: int = 2, out: Location | None = None, connect: bool = False,
              timeout: float = TIMEOUT) -> dict[str, Any]:
    """Probe the executors (see the module docstring); returns what they run, else PreflightError."""
    from pyspark import cloudpickle
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    started = time.monotonic()
    cloudpickle.register_pickle_by_value(probe)  # the executors may not be able to import it
    here = probe.describe()
    udf = F.udf(partial(probe.probe, out=out.uri if out is not None else None), T.StringType(), useArrow=False)
    ship = SHIP_CONNECT if connect else SHIP
    rows = _collect(spark, spark.range(0, tasks, 1, tasks).select(udf("id").alias("probe")), timeout, ship)
    found = [json.loads(r["probe"]) for r in rows]
    try:
        _compare(found, here, ship)
        if out is not None:
            _check_shared(out, found)
    finally:
        if out is not None:
            out.child(probe.PREFLIGHT).remove()  # the executors' probe files, whatever the outcome
    return {"executors": sorted({(t["host"], t["python"], t["mqspec"]) for t in found}),
            "seconds": round(time.monotonic() - started, 2)}


def _compare(found: list[dict[str, Any]], here: dict[str, Any], ship: str) -> None:
    """PreflightError for the first executor that cannot run the driver's mqspec as the driver does."""
    for there in found:
        python = there.get("python")
        if there.get("error"):
            raise PreflightError(f"the executors' probe failed under Python {python}: {there['error']}")
        if there.get("mqspec") is None:
            raise PreflightError(f"the executors cannot import mqspec (Python {python}, in {there.get('cwd')}): {ship}")
        if there["missing"]:
            module, error = next(iter(there["missing"].items()))
            raise PreflightError(f"the executors cannot import {module} ({error}; Python {python}): {ship}")
        if there["digest"] != here["digest"]:
            raise PreflightError(f"the executors run another mqspec ({there['mqspec']}) than the driver "
                                 f"({here['mqspec']}): the rows would differ; {ship}")
        if there["versions"] != here["versions"]:
            raise PreflightError(f"the executors have {there['versions']}, the driver {here['versions']}: "
                                 f"hypothesis draws other runs in another version; {ship}")


def _check_shared(out: Location, found: list[dict[str, Any]]) -> None:
    folder = out.child(probe.PREFLIGHT)
    for there in found:
        if there.get("write_error"):
            raise PreflightError(f"the executors cannot write under --out {out}: {there['write_error']}")
        if not folder.child(there["wrote"]).exists():
            raise PreflightError(f"--out {out}: what the executors wrote there is not visible from the driver: "
                                 "use storage the driver and every executor share (HDFS, S3, a shared mount)")


def _collect(spark: Any, df: Any, timeout: float, ship: str) -> list[Any]:
    """``df.collect()``, cancelled after ``timeout`` seconds (a cluster without free executors never runs it)."""
    result: dict[str, Any] = {}

    def work() -> None:
        try:
            result["rows"] = df.collect()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            result["error"] = exc

    thread = threading.Thread(target=work, name="mqspec-preflight", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        _cancel(spark)
        raise PreflightError(f"no executor ran the pre-flight task within {timeout:.0f} s: the cluster has no free "
                             "executor for this application (cores, memory), or its workers cannot reach the driver")
    if "error" in result:
        why = reason(result["error"])
        raise PreflightError(f"{why}: {ship}" if why.startswith("the executors") else f"the probe failed: {why}")
    return result["rows"]


def _cancel(spark: Any) -> None:
    try:
        if type(spark).__module__.startswith("pyspark.sql.connect"):
            spark.interruptAll()
        else:
            spark.sparkContext.cancelAllJobs()
    except Exception:  # noqa: BLE001 - best effort: the process ends anyway
        pass
