"""``mqspec pipeline explore``: N exploration runs as Spark tasks, their findings as Parquet datasets.

Runs are numbered 0..N-1; run *i* explores from :func:`~mqspec.pipeline.runs.derive_seed`\\ (S, i),
so a row depends on (S, i, mode, reading, profile) only. The runs still missing are computed in
waves (one Spark job each, :mod:`mqspec.pipeline.store`), then the datasets are derived from every
stored wave:

- ``runs/``: one row per run (steps, handler runs, simulated seconds, messages, wire bytes,
  converged, the invariants violated, clauses exercised, CPU seconds, its trace file);
- ``violations/``: one row per violation, its shrunk scenario file under ``counterexamples/``
  (one file per distinct (invariant, errata, shrunk input), named in the row) and ``first_run``,
  the lowest run that found the same counterexample;
- ``coverage/``: per registered clause, the number of runs that exercised it;
- ``traces/`` (``--traces``): each run's trace in the published NDJSON format, compressed as
  ``--trace-compression`` says, written by the executor that ran it;
- ``summary.json``: the figures ``--json`` prints, and ``campaign.json``: the arguments.

Nothing bulky goes through the driver: the executors write the waves and the traces, Spark derives
the datasets; the driver reads counts and the (small, distinct) counterexample scenarios.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from mqspec.wording import plural

from . import store
from .runs import RUN_SCHEMA, Campaign, arrow_batches
from .store import Location

#: runs per Spark job by default (progress is reported after each), and runs per task
WAVE = 64
RUNS_PER_TASK = 2


class CampaignMismatch(ValueError):
    """``--out`` holds a campaign with other arguments (resuming it would mix two campaigns)."""


class NotShared(RuntimeError):
    """What the executors wrote under ``--out`` is not what the driver finds there (not one shared storage)."""


def explore(spark: Any, campaign: Campaign, out: Location, *, master: str, wave: int = WAVE,
            progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Compute the campaign's missing runs, derive its datasets; returns the summary."""
    from pyspark.sql import functions as F

    say = progress or (lambda text: print(text, file=sys.stderr, flush=True))
    started = time.monotonic()
    out.mkdir()
    _check_campaign(out, campaign)
    stored, removed = stored_waves(spark, out, campaign)
    if removed:
        say(f"explore: removed {plural(len(removed), 'incomplete wave')}: {', '.join(removed)}")
    done = [(first, min(end, campaign.runs)) for first, end, _ in stored.values() if first < campaign.runs]
    reused = sum(end - first for first, end in done)
    violations = sum(v for first, _, v in stored.values() if first < campaign.runs)
    if reused:
        say(f"explore: {reused} of {campaign.runs} runs already stored in {out}")
    finished = reused
    for first, end in store.missing_ranges(done, campaign.runs, wave):
        parts = max(1, -(-(end - first) // RUNS_PER_TASK))
        name = store.wave_name(first, end)
        path = out.child(store.WAVES, name)
        path.remove()  # what an interrupted attempt at this very wave left
        rows = spark.range(first, end, 1, parts).mapInArrow(
            partial(arrow_batches, campaign=campaign.to_json(), out=out.uri), _spark_schema())
        rows.write.mode("overwrite").parquet(path.uri)
        count, found = spark.read.schema(_spark_schema()).parquet(path.uri).agg(
            F.count("*"), F.sum("violation_count")).first()
        if count != end - first:
            raise NotShared(f"{path}: the executors wrote {end - first} runs, the driver reads {count}: --out must "
                            "be storage the driver and every executor share (HDFS, S3, a shared mount)")
        stored[name] = (first, end, int(found or 0))
        finished += end - first
        violations += int(found or 0)
        say(f"explore: {finished}/{campaign.runs} runs, {plural(violations, 'violation')}")
    summary = derive(spark, campaign, out, sorted(stored))
    summary.update(seconds=round(time.monotonic() - started, 3), master=master, computed=finished - reused,
                   resumed=reused)
    store.write_json(out.child("summary.json"),
                     {k: v for k, v in summary.items() if k not in ("seconds", "master", "executors")})
    return summary


def _check_campaign(out: Location, campaign: Campaign) -> None:
    path = out.child("campaign.json")
    if path.exists():
        stored = Campaign.from_json({**{"trace_compression": "none"}, **store.read_json(path)})
        if stored.identity() != campaign.identity():
            differ = sorted(k for k, v in campaign.identity().items() if stored.identity()[k] != v)
            raise CampaignMismatch(f"{out} holds a campaign with other {', '.join(differ)}: "
                                   f"resume it with the same arguments, or choose another --out")
    store.write_json(path, campaign.to_json())


def _spark_schema() -> Any:
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(RUN_SCHEMA)


def stored_waves(spark: Any, out: Location, campaign: Campaign) -> tuple[dict[str, tuple[int, int, int]], list[str]]:
    """The waves that hold what their names promise: name -> (first, end, violations); and the names of
    the others, removed (no ``_SUCCESS``; rows missing, extra or repeated; a trace file missing or cut)."""
    from pyspark.sql import functions as F

    names = store.wave_folders(out)
    committed = [n for n in names if store.committed(out, n)]
    removed = [n for n in names if n not in committed]
    good: dict[str, tuple[int, int, int]] = {}
    if committed:
        uris = {out.child(store.WAVES, n).uri.rstrip("/"): n for n in committed}
        waves = spark.read.schema(_spark_schema()).parquet(*uris).withColumn(
            "wave", F.regexp_extract(F.col("_metadata.file_path"), r"(wave-[0-9]{9}-[0-9]{9})", 1))
        counts = waves.groupBy("wave").agg(
            F.count("*").alias("rows"), F.countDistinct("run").alias("distinct"), F.min("run").alias("low"),
            F.max("run").alias("high"), F.sum("violation_count").alias("violations"),
            F.sum("trace_bytes").alias("trace_bytes"), F.count("trace_file").alias("traces")).collect()
        sizes = out.child("traces").sizes() if campaign.traces else {}
        for row in counts:
            first, end = store.wave_range(row["wave"]) or (-1, -1)
            whole = row["rows"] == row["distinct"] == end - first and row["low"] == first and row["high"] == end - 1
            if whole and campaign.traces:
                files = [sizes.get(campaign.trace_file(r)) for r in range(first, end)]
                whole = row["traces"] == end - first and None not in files and sum(files) == row["trace_bytes"]
            if whole:
                good[row["wave"]] = (first, end, int(row["violations"] or 0))
        removed += [n for n in committed if n not in good]
    for name in removed:
        out.child(store.WAVES, name).remove()
    return good, sorted(removed)


def derive(spark: Any, campaign: Campaign, out: Location, waves: list[str]) -> dict[str, Any]:
    """Write runs/, violations/, coverage/ and counterexamples/ from the stored waves (``waves``: their names)."""
    from pyspark.sql import functions as F

    from mqspec.clauses import load_all

    stored = spark.read.schema(_spark_schema()).parquet(*(out.child(store.WAVES, n).uri for n in waves))
    # a run stored twice (waves that overlapped after a crash in a job commit) counts once
    waves_df = stored.filter(F.col("run") < campaign.runs).dropDuplicates(["run"])
    runs = waves_df.select(
        "run", "seed", "profile", "mode", "reading", "steps", "handler_runs", "simulated_seconds", "messages",
        "wire_bytes", "converged", "violation_count",
        F.transform("violations", lambda v: v["invariant"]).alias("invariants_violated"),
        F.size("clauses").alias("clauses_exercised"), "cpu_seconds",
        F.when(F.col("trace_file").isNotNull(), F.concat(F.lit("traces/"), "trace_file")).alias("trace"))
    store.write_dataset(runs, out.child("runs"), ["run"])

    v = waves_df.select("run", "seed", "mode", "reading", "profile", F.explode("violations").alias("v"))
    v = v.select("run", "seed", "mode", "reading", "profile", "v.*")
    first = v.groupBy("key").agg(F.min("run").alias("first_run"))
    v = v.join(first, "key").withColumn(
        "counterexample", F.concat(F.lit("counterexamples/"), F.col("invariant"), F.lit("-"),
                                   F.substring("key", 1, 12), F.lit(".yaml")))
    store.write_dataset(v.drop("scenario", "inputs"), out.child("violations"), ["run", "invariant"])
    counterexamples = _write_counterexamples(v, out)

    registered = spark.createDataFrame([(c.document, c.section, c.title) for c in load_all()],
                                       "document string, section string, title string")
    exercised = (waves_df.select(F.explode("clauses").alias("clause")).groupBy("clause")
                 .agg(F.count("*").alias("runs")))
    coverage = (registered.withColumn("clause", F.concat_ws(" ", "document", "section"))
                .join(exercised, "clause", "left").fillna(0, ["runs"])
                .withColumn("share", F.round(F.col("runs") / F.lit(campaign.runs), 4)))
    store.write_dataset(coverage, out.child("coverage"), ["document", "section"])

    totals = waves_df.agg(F.count("*"), F.sum("steps"), F.sum("violation_count"),
                          F.sum(F.col("converged").cast("int")), F.sum("cpu_seconds"), F.sum("handler_runs"),
                          F.count("trace_file"), F.sum("trace_bytes")).first()
    by_invariant = {r["invariant"]: r["count"] for r in v.groupBy("invariant").count().collect()}
    return {
        "runs": int(totals[0]), "steps": int(totals[1] or 0), "violations": int(totals[2] or 0),
        "converged": int(totals[3] or 0), "cpu_seconds": round(float(totals[4] or 0.0), 3),
        "handler_runs": int(totals[5] or 0), "counterexamples": counterexamples, "traces": int(totals[6] or 0),
        "trace_bytes": int(totals[7] or 0), "violations_by_invariant": dict(sorted(by_invariant.items())),
        "mode": campaign.mode, "reading": list(campaign.reading), "profile": campaign.profile, "seed": campaign.seed,
        "out": out.uri,
    }


def _write_counterexamples(violations: Any, out: Location) -> int:
    """One scenario file per distinct counterexample: the text of its lowest run (what first_run names)."""
    rows = (violations.filter("run = first_run").select("counterexample", "scenario")
            .dropDuplicates(["counterexample"]).orderBy("counterexample"))
    written = 0
    for row in rows.toLocalIterator():
        path = out.child(*row["counterexample"].split("/"))
        if not path.exists() or path.read_text() != row["scenario"]:
            path.write_text(row["scenario"])
        written += 1
    return written
