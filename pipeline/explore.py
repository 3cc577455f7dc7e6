"""``mqspec pipeline explore``: N exploration runs as Spark tasks, their findings as Parquet datasets.

Runs are numbered 0..N-1; run *i* explores from :func:`~mqspec.pipeline.runs.derive_seed`\\ (S, i),
so a row depends on (S, i, mode, reading, profile) only. The runs still missing are computed in
waves (one Spark job each, :mod:`mqspec.pipeline.store`), then the datasets are derived from every
stored wave:

- ``runs/``: one row per run (steps, handler runs, simulated seconds, messages, wire bytes,
  converged, the invariants violated, clauses exercised, CPU seconds);
- ``violations/``: one row per violation, its shrunk scenario file under ``counterexamples/``
  (one file per distinct (invariant, errata, shrunk input), named in the row) and ``first_run``,
  the lowest run that found the same counterexample;
- ``coverage/``: per registered clause, the number of runs that exercised it;
- ``traces/`` (``--traces``): each run's trace in the published NDJSON format;
- ``summary.json``: the figures ``--json`` prints, and ``campaign.json``: the arguments.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from mqspec.wording import plural

from . import store
from .runs import RUN_SCHEMA, Campaign, arrow_batches

#: runs per Spark job by default (progress is reported after each), and runs per task
WAVE = 64
RUNS_PER_TASK = 2


class CampaignMismatch(ValueError):
    """``--out`` holds a campaign with other arguments (resuming it would mix two campaigns)."""


def explore(spark: Any, campaign: Campaign, out: Path, *, master: str, wave: int = WAVE,
            progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Compute the campaign's missing runs, derive its datasets; returns the summary."""
    from pyspark.sql import functions as F

    say = progress or (lambda text: print(text, file=sys.stderr, flush=True))
    started = time.monotonic()
    out.mkdir(parents=True, exist_ok=True)
    _check_campaign(out, campaign)
    removed = store.remove_incomplete_waves(out)
    if removed:
        say(f"explore: removed {plural(len(removed), 'interrupted wave')}: {', '.join(removed)}")
    done, violations = _stored(spark, out)
    reused = len({r for r in done if r < campaign.runs})
    todo = store.missing_ranges(done, campaign.runs, wave)
    if reused:
        say(f"explore: {reused} of {campaign.runs} runs already stored in {out}")
    finished = reused
    for first, end in todo:
        parts = max(1, -(-(end - first) // RUNS_PER_TASK))
        rows = spark.range(first, end, 1, parts).mapInArrow(
            partial(arrow_batches, campaign=campaign.to_json()), _spark_schema())
        path = out / store.WAVES / store.wave_name(first, end)
        rows.write.mode("errorifexists").parquet(str(path))
        finished += end - first
        violations += spark.read.parquet(str(path)).agg(F.sum("violation_count")).first()[0] or 0
        say(f"explore: {finished}/{campaign.runs} runs, {plural(violations, 'violation')}")
    summary = derive(spark, campaign, out)
    summary.update(seconds=round(time.monotonic() - started, 3), master=master, computed=finished - reused,
                   resumed=reused)
    store.write_json(out / "summary.json", {k: v for k, v in summary.items() if k not in ("seconds", "master")})
    return summary


def _check_campaign(out: Path, campaign: Campaign) -> None:
    path = out / "campaign.json"
    if path.exists():
        stored = Campaign.from_json(store.read_json(path))
        if stored.identity() != campaign.identity():
            differ = sorted(k for k, v in campaign.identity().items() if stored.identity()[k] != v)
            raise CampaignMismatch(f"{out} holds a campaign with other {', '.join(differ)}: "
                                   f"resume it with the same arguments, or choose another --out")
    store.write_json(path, campaign.to_json())


def _waves(spark: Any, out: Path) -> Any:
    waves = store.complete_waves(out)
    if not waves:
        return None
    return spark.read.schema(_spark_schema()).parquet(*(str(p) for p in waves))


def _spark_schema() -> Any:
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(RUN_SCHEMA)


def _stored(spark: Any, out: Path) -> tuple[set[int], int]:
    """The runs the stored waves hold, and the violations among them (one read of the waves)."""
    waves = _waves(spark, out)
    rows = [] if waves is None else waves.select("run", "violation_count").collect()
    return {row[0] for row in rows}, sum(row[1] for row in rows)


def derive(spark: Any, campaign: Campaign, out: Path) -> dict[str, Any]:
    """Write runs/, violations/, coverage/, counterexamples/ and traces/ from the stored waves."""
    from pyspark.sql import functions as F

    from mqspec.clauses import load_all

    stored = _waves(spark, out).filter(F.col("run") < campaign.runs)
    # a run stored twice (two waves that overlapped after a crash in a job commit) counts once; the
    # traces (megabytes each) stay out of that shuffle: they are written file by file from the waves
    waves = stored.drop("trace").dropDuplicates(["run"])
    runs = waves.select(
        "run", "seed", "profile", "mode", "reading", "steps", "handler_runs", "simulated_seconds", "messages",
        "wire_bytes", "converged", "violation_count",
        F.transform("violations", lambda v: v["invariant"]).alias("invariants_violated"),
        F.size("clauses").alias("clauses_exercised"), "cpu_seconds")
    store.write_dataset(runs, out / "runs", ["run"])

    v = waves.select("run", "seed", "mode", "reading", "profile", F.explode("violations").alias("v"))
    v = v.select("run", "seed", "mode", "reading", "profile", "v.*")
    first = v.groupBy("key").agg(F.min("run").alias("first_run"))
    v = v.join(first, "key").withColumn(
        "counterexample", F.concat(F.lit("counterexamples/"), F.col("invariant"), F.lit("-"),
                                   F.substring("key", 1, 12), F.lit(".yaml")))
    store.write_dataset(v.drop("scenario", "inputs"), out / "violations", ["run", "invariant"])
    counterexamples = _write_counterexamples(v, out)

    registered = spark.createDataFrame([(c.document, c.section, c.title) for c in load_all()],
                                       "document string, section string, title string")
    exercised = (waves.select(F.explode("clauses").alias("clause")).groupBy("clause").agg(F.count("*").alias("runs")))
    coverage = (registered.withColumn("clause", F.concat_ws(" ", "document", "section"))
                .join(exercised, "clause", "left").fillna(0, ["runs"])
                .withColumn("share", F.round(F.col("runs") / F.lit(campaign.runs), 4)))
    store.write_dataset(coverage, out / "coverage", ["document", "section"])

    traces = _write_traces(stored, out) if campaign.traces else 0
    totals = waves.agg(F.count("*"), F.sum("steps"), F.sum("violation_count"), F.sum(F.col("converged").cast("int")),
                       F.sum("cpu_seconds"), F.sum("handler_runs")).first()
    by_invariant = {r["invariant"]: r["count"] for r in v.groupBy("invariant").count().collect()}
    return {
        "runs": int(totals[0]), "steps": int(totals[1] or 0), "violations": int(totals[2] or 0),
        "converged": int(totals[3] or 0), "cpu_seconds": round(float(totals[4] or 0.0), 3),
        "handler_runs": int(totals[5] or 0), "counterexamples": counterexamples, "traces": traces,
        "violations_by_invariant": dict(sorted(by_invariant.items())), "mode": campaign.mode,
        "reading": list(campaign.reading), "profile": campaign.profile, "seed": campaign.seed, "out": str(out),
    }


def _write_counterexamples(violations: Any, out: Path) -> int:
    """One scenario file per distinct counterexample: the text of its lowest run (what first_run names)."""
    folder = out / "counterexamples"
    folder.mkdir(exist_ok=True)
    rows = (violations.filter("run = first_run").select("counterexample", "scenario")
            .dropDuplicates(["counterexample"]).orderBy("counterexample"))
    written = 0
    for row in rows.toLocalIterator():
        path = out / row["counterexample"]
        if not path.exists() or path.read_text(encoding="utf-8") != row["scenario"]:
            path.write_text(row["scenario"], encoding="utf-8")
        written += 1
    return written


def _write_traces(waves: Any, out: Path) -> int:
    """Each stored run's trace as traces/run-NNNNNNNNN.ndjson; returns how many runs have one."""
    folder = out / "traces"
    folder.mkdir(exist_ok=True)
    written: set[int] = set()
    # no sort: one file per run, whatever order the rows come in (a sort would shuffle every trace)
    for row in waves.select("run", "trace").filter("trace is not null").toLocalIterator():
        path = folder / f"run-{row['run']:09d}.ndjson"
        if not path.exists() or path.stat().st_size != len(row["trace"].encode()):
            path.write_text(row["trace"], encoding="utf-8")
        written.add(row["run"])
    return len(written)
