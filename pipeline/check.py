"""``mqspec pipeline check``: judge every trace and capture of a test lab in one Spark job.

The inputs (files, and directories searched recursively for ``*.ndjson``, ``*.pcap`` and
``*.pcapng``) are checked one per task row by :func:`mqspec.pipeline.checks.check_rows`, the
checker of ``mqspec check``. Its tagged rows are stored once (``DIR/_rows``) and split into the
datasets ``verdicts/``, ``divergences/``, ``coverage/``, ``messages/`` and ``quarantine/``. The
summary reconciles the counts: inputs = verdict rows + quarantine rows, or the job fails.

Executors read the inputs by path: on a cluster the paths must be readable by every worker
(a shared file system); local mode and a one-machine cluster need nothing.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

from . import store
from .checks import ROW_SCHEMA, arrow_batches, find_inputs

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


class Unreconciled(RuntimeError):
    """The datasets do not account for every input (a bug: the job refuses to call its output complete)."""


def check(spark: Any, inputs: list[str], out: Path, *, master: str, tasks: int = 0) -> dict[str, Any]:
    """Check ``inputs`` (already expanded by :func:`find_inputs`), write the datasets, return the summary."""
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema

    started = time.monotonic()
    out.mkdir(parents=True, exist_ok=True)
    paths = spark.createDataFrame([(str(Path(p).resolve()),) for p in inputs], "path string")
    paths = paths.repartition(max(1, min(len(inputs), tasks or len(inputs))), "path")
    rows_path = out / "_rows"
    paths.mapInArrow(arrow_batches, from_arrow_schema(ROW_SCHEMA)).write.mode("overwrite").parquet(str(rows_path))
    rows = spark.read.parquet(str(rows_path))
    for name, (table, columns, order) in DATASETS.items():
        store.write_dataset(rows.filter(F.col("table") == table).select(*columns), out / name, list(order))
    counts = {r["table"]: r["count"] for r in rows.groupBy("table").count().collect()}
    verdicts = spark.read.parquet(str(out / "verdicts"))
    by_verdict = {r["verdict"]: r["count"] for r in verdicts.groupBy("verdict").count().collect()}
    summary: dict[str, Any] = {
        "inputs": len(inputs), "verdicts": counts.get("verdict", 0), "quarantined": counts.get("quarantine", 0),
        "conformant": by_verdict.get("conformant", 0),
        "divergent": by_verdict.get("divergent", 0) + by_verdict.get("error", 0),
        "incomplete": by_verdict.get("incomplete-capture", 0),
        "nothing_checked": sum(n for v, n in by_verdict.items()
                               if v not in ("conformant", "divergent", "error", "incomplete-capture")),
        "messages": counts.get("message", 0), "clauses": rows.filter("table = 'coverage'").select("clause")
        .distinct().count(), "by_verdict": dict(sorted(by_verdict.items())), "out": str(out),
    }
    summary["reconciled"] = summary["inputs"] == summary["verdicts"] + summary["quarantined"]
    if not summary["reconciled"]:
        raise Unreconciled(f"{len(inputs)} inputs but {summary['verdicts']} verdict and {summary['quarantined']} "
                           "quarantine rows")
    shutil.rmtree(rows_path)
    store.write_json(out / "summary.json", summary)
    summary.update(seconds=round(time.monotonic() - started, 3), master=master)
    return summary


__all__ = ["DATASETS", "Unreconciled", "check", "find_inputs"]
