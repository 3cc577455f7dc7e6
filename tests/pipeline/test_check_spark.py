"""mqspec pipeline check on local Spark: right verdicts on a mixed corpus, counts that reconcile."""

from __future__ import annotations

from pathlib import Path

import pytest

from .spark_rows import check_output


def test_a_mixed_corpus_gets_the_right_verdicts_and_the_counts_reconcile(checked):
    """Conformant traces (plain and compressed), a divergent trace, a non-trace, a cut zstd stream and a corrupt
    capture: one row each, none lost; the file that is neither is counted as skipped."""
    root, expected, summary = checked
    assert summary["reconciled"] and summary["inputs"] == len(expected) + 4
    assert summary["inputs"] == summary["verdicts"] + summary["quarantined"]
    assert summary["skipped_files"] == 1 and summary["skipped"][0].endswith("README.txt")
    data = check_output(root / "out")
    mine = [r for r in data["verdicts"] if "/in/" in r["path"]]
    assert sum(r["verdict"] == "conformant" for r in mine) == 5 and sum(r["verdict"] == "divergent" for r in mine) == 1
    assert summary["quarantined"] == 3
    got = {Path(r["path"]).name: r["verdict"] for r in data["verdicts"] if "/in/" in r["path"]}
    got.update({Path(r["path"]).name: "quarantine" for r in data["quarantine"]})
    assert got == expected
    (divergence,) = [r for r in data["divergences"] if "/in/" in r["path"]]
    assert Path(divergence["path"]).name == "divergent.ndjson" and divergence["clause"].startswith("MC-MQDSRP")
    assert {Path(r["path"]).name for r in data["coverage"]} >= {"a-site.ndjson", "a-bsc.ndjson"}
    assert len(data["messages"]) == summary["messages"] > 0


def test_every_generated_trace_conforms(checked):
    """explore --traces then check is a differential test: each run's trace conforms to the reference, a
    run that moved a PSC too (its trace declares the handover, E-313)."""
    root, _, _ = checked
    data = check_output(root / "out")
    generated = [r for r in data["verdicts"] if "/traces/run-" in r["path"]]
    assert len(generated) == 4 and all(r["verdict"] == "conformant" for r in generated)


def test_inputs_are_spread_across_tasks_by_size(spark, tmp_path):
    """One large input and many small ones: the large one has a task of its own, scheduled first, and the
    small ones share the other tasks, none holding much more than its share (issue 23 row 11)."""
    from pyspark.sql import functions as F

    from mqspec.pipeline.check import TASKS_PER_CORE, _spread_by_size, list_inputs

    (tmp_path / "big.ndjson").write_bytes(b"x" * 3_000_000)
    for i in range(40):
        (tmp_path / f"small-{i:02d}.ndjson").write_bytes(b"y" * (20_000 + 1000 * i))
    listing = list_inputs(spark, [tmp_path.as_uri()])
    total, tasks = sum(listing.inputs.values()), TASKS_PER_CORE * 2
    with _spread_by_size(spark, total, tasks):
        placed = (spark.read.format("binaryFile").load(sorted(listing.inputs))
                  .select("path", "length", F.spark_partition_id().alias("task")).collect())
    by_task: dict[int, list] = {}
    for row in placed:
        by_task.setdefault(row["task"], []).append(row)
    (big,) = [r for r in placed if r["path"].endswith("big.ndjson")]
    assert by_task[big["task"]] == [big] and big["task"] == 0
    small = [sum(r["length"] for r in rows) for task, rows in by_task.items() if task != big["task"]]
    assert len(small) >= 2 and max(small) <= 2 * -(-total // tasks)


def test_an_input_the_executors_cannot_read_fails_the_job_not_the_trace(spark, tmp_path):
    """An input listed but gone when the executors read it is a failed job with one line naming it, not a
    quarantined trace, and no verdicts are written (issue 23 row 6)."""
    from mqspec.pipeline.check import check, list_inputs
    from mqspec.pipeline.preflight import reason
    from mqspec.pipeline.store import Location

    from .corpus import make_corpus

    make_corpus(tmp_path / "in")
    listing = list_inputs(spark, [(tmp_path / "in").as_uri()])
    (tmp_path / "in" / "lab" / "a-site.ndjson").unlink()  # as on a worker that cannot see it
    with pytest.raises(Exception) as failed:
        check(spark, listing, Location(tmp_path / "out"), master="local[2]", parallelism=2)
    line = reason(failed.value)
    assert "a-site.ndjson" in line and "\n" not in line, line
    assert not (tmp_path / "out" / "verdicts").exists()
