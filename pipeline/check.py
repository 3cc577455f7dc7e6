"""``mqspec pipeline check``: judge every trace and capture of a test lab in one Spark job.

The inputs are URIs or local paths, files or folders (searched recursively for ``*.ndjson``,
``*.ndjson.gz``, ``*.ndjson.zst``, ``*.pcap`` and ``*.pcapng``), globs allowed; they are listed and
read through Spark's file systems (``binaryFile``), so a lab's traces in HDFS or S3 are checked where
they lie and the executors read them, not the driver. Each input is judged by
:func:`mqspec.pipeline.checks.arrow_batches` with the checker of ``mqspec check``; its tagged rows
are stored once (``DIR/_rows``) and split into the datasets ``verdicts/``, ``divergences/``,
``coverage/``, ``messages/`` and ``quarantine/``. The summary reconciles the counts: inputs =
verdict rows + quarantine rows, or the job fails.

Inputs are spread across tasks by size: Spark packs files into tasks largest first, about
``bytes / (4 x parallelism)`` per task, so a large trace has a task of its own and starts first.
An input the executors cannot read (not there, no permission) fails the job: that is the
cluster's problem, not a verdict on the trace.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import partial
from typing import Any
from urllib.parse import unquote, urlsplit

from . import store
from .checks import CAPTURE_SUFFIXES, ROW_SCHEMA, TOPOLOGY_SUFFIX, arrow_batches, is_input, sidecar_of
from .store import Location

#: the columns each dataset keeps, and its sort order
DATASETS: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "verdicts": ("verdict", ("path", "kind", "trace", "verdict", "conformant", "events", "nodes", "event", "node",
                             "clause", "divergence_kind", "summary", "error", "frames", "capture_messages", "holes",
                             "frames_skipped"), ("path",)),
    "divergences": ("divergence", ("path", "kind", "trace", "verdict", "event", "node", "clause", "divergence_kind",
                                   "summary", "diff"), ("path", "trace")),
    "coverage": ("coverage", ("path", "kind", "clause"), ("clause", "path")),
    "messages": ("message", ("path", "trace", "t", "node", "direction", "peer", "protocol", "message_type",
                             "partition", "seq_low", "seq", "purged", "count", "error"), ("path", "trace", "t", "node")),
    "quarantine": ("quarantine", ("path", "kind", "error"), ("path",)),
}
#: tasks per core: with more tasks than cores, one that runs long does not hold the others back
TASKS_PER_CORE = 4


class Unreconciled(RuntimeError):
    """The datasets do not account for every input (a bug: the job refuses to call its output complete)."""


class NoInputs(ValueError):
    """An input names nothing (no such path), or the named folders hold no trace or capture."""


@dataclass
class Listing:
    """What the inputs named: the traces and captures (path -> bytes), sidecars, and the other files."""

    inputs: dict[str, int] = field(default_factory=dict)
    topologies: dict[str, str] = field(default_factory=dict)  # capture path -> its sidecar's text
    skipped: list[str] = field(default_factory=list)


def _local(path: str) -> str:
    parts = urlsplit(path)
    return unquote(parts.path) if parts.scheme in ("", "file") else path


def list_inputs(spark: Any, uris: list[str]) -> Listing:
    """List ``uris`` through Spark's file systems (recursively); NoInputs when one names nothing."""
    from pyspark.errors import AnalysisException

    try:
        files = (spark.read.format("binaryFile").option("recursiveFileLookup", "true").load(uris)
                 .select("path", "length").collect())
    except AnalysisException as exc:
        raise NoInputs(" ".join(str(exc).split()).split(" SQLSTATE")[0]) from None
    named = {_local(u) for u in uris}
    listing = Listing()
    sidecars = []
    for row in sorted(files, key=lambda r: r["path"]):
        path = row["path"]
        if is_input(path) or _local(path) in named:
            listing.inputs[path] = row["length"]
        elif path.lower().endswith(TOPOLOGY_SUFFIX):
            sidecars.append(path)
        else:
            listing.skipped.append(path)
    captures = {sidecar_of(p): p for p in listing.inputs if p.lower().endswith(CAPTURE_SUFFIXES)}
    wanted = [s for s in sidecars if s in captures]
    listing.skipped += [s for s in sidecars if s not in captures]
    if wanted:  # small JSON files: read here, handed to the tasks with the function
        for row in spark.read.format("binaryFile").load(wanted).select("path", "content").collect():
            listing.topologies[captures[row["path"]]] = bytes(row["content"]).decode("utf-8-sig")
    return listing


def check(spark: Any, listing: Listing, out: Location, *, master: str, parallelism: int = 2) -> dict[str, Any]:
    """Check the listed inputs, write the datasets, return the summary."""
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema

    started = time.monotonic()
    out.mkdir()
    inputs = sorted(listing.inputs)
    total = sum(listing.inputs.values())
    rows_path = out.child("_rows")
    files = spark.read.format("binaryFile").load(inputs).select("path", "content")
    judged = files.mapInArrow(partial(arrow_batches, topologies=listing.topologies), from_arrow_schema(ROW_SCHEMA))
    tasks = max(1, min(len(inputs), TASKS_PER_CORE * parallelism))
    with _spread_by_size(spark, total, tasks):
        judged.write.mode("overwrite").parquet(rows_path.uri)
    rows = spark.read.parquet(rows_path.uri)
    for name, (table, columns, order) in DATASETS.items():
        store.write_dataset(rows.filter(F.col("table") == table).select(*columns), out.child(name), list(order))
    counts = {r["table"]: r["count"] for r in rows.groupBy("table").count().collect()}
    verdicts = spark.read.parquet(out.child("verdicts").uri)
    by_verdict = {r["verdict"]: r["count"] for r in verdicts.groupBy("verdict").count().collect()}
    summary: dict[str, Any] = {
        "inputs": len(inputs), "bytes": total, "skipped_files": len(listing.skipped), "skipped": listing.skipped,
        "verdicts": counts.get("verdict", 0), "quarantined": counts.get("quarantine", 0),
        "conformant": by_verdict.get("conformant", 0),
        "divergent": by_verdict.get("divergent", 0) + by_verdict.get("error", 0),
        "incomplete": by_verdict.get("incomplete-capture", 0),
        "nothing_checked": sum(n for v, n in by_verdict.items()
                               if v not in ("conformant", "divergent", "error", "incomplete-capture")),
        "messages": counts.get("message", 0), "clauses": rows.filter("table = 'coverage'").select("clause")
        .distinct().count(), "by_verdict": dict(sorted(by_verdict.items())), "out": out.uri,
    }
    summary["reconciled"] = summary["inputs"] == summary["verdicts"] + summary["quarantined"]
    if not summary["reconciled"]:
        raise Unreconciled(f"{len(inputs)} inputs but {summary['verdicts']} verdict and {summary['quarantined']} "
                           "quarantine rows")
    rows_path.remove()
    store.write_json(out.child("summary.json"), summary)
    summary.update(seconds=round(time.monotonic() - started, 3), master=master)
    return summary


class _spread_by_size:
    """Spark's file packing set for this job: about ``total / tasks`` bytes a task, files largest first.

    (Spark sorts files by size and fills each task up to ``min(maxPartitionBytes, max(openCost,
    bytes / minPartitionNum))``; a file's open cost is counted as 64 KiB, not 4 MiB, so small traces
    share a task.) The settings are restored afterwards.
    """

    KEYS = ("spark.sql.files.maxPartitionBytes", "spark.sql.files.openCostInBytes", "spark.sql.files.minPartitionNum")

    def __init__(self, spark: Any, total: int, tasks: int) -> None:
        self.spark = spark
        self.values = {self.KEYS[0]: str(max(1 << 16, -(-total // tasks))), self.KEYS[1]: str(1 << 16),
                       self.KEYS[2]: str(tasks)}
        self.saved: dict[str, str | None] = {}

    def __enter__(self) -> None:
        for key, value in self.values.items():
            try:
                self.saved[key] = self.spark.conf.get(key)
            except Exception:  # noqa: BLE001 - not set
                self.saved[key] = None
            self.spark.conf.set(key, value)

    def __exit__(self, *exc: object) -> None:
        for key, value in self.saved.items():
            if value is None:
                self.spark.conf.unset(key)
            else:
                self.spark.conf.set(key, value)


__all__ = ["DATASETS", "Listing", "NoInputs", "Unreconciled", "check", "list_inputs"]
