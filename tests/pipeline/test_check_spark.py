"""mqspec pipeline check on local Spark: right verdicts on a mixed corpus, counts that reconcile."""

from __future__ import annotations

from pathlib import Path

from mqspec.pipeline.check import check
from mqspec.pipeline.checks import find_inputs

from .corpus import make_corpus
from .spark_rows import check_output


def test_a_mixed_corpus_gets_the_right_verdicts_and_the_counts_reconcile(spark, tmp_path):
    """Conformant traces, a divergent trace, a non-trace and a corrupt capture: one row each, none lost."""
    expected = make_corpus(tmp_path / "in")
    inputs = find_inputs([tmp_path / "in"])
    summary = check(spark, inputs, tmp_path / "out", master="local[2]")
    assert summary["reconciled"] and summary["inputs"] == len(expected) == summary["verdicts"] + summary["quarantined"]
    assert (summary["conformant"], summary["divergent"], summary["quarantined"]) == (3, 1, 2)
    data = check_output(tmp_path / "out")
    got = {Path(r["path"]).name: r["verdict"] for r in data["verdicts"]}
    got.update({Path(r["path"]).name: "quarantine" for r in data["quarantine"]})
    assert got == expected
    (divergence,) = data["divergences"]
    assert Path(divergence["path"]).name == "divergent.ndjson" and divergence["clause"].startswith("MC-MQDSRP")
    assert {Path(r["path"]).name for r in data["coverage"]} >= {"a-site.ndjson", "a-bsc.ndjson"}
    assert len(data["messages"]) == summary["messages"] > 0

