"""mqspec pipeline check on local Spark: right verdicts on a mixed corpus, counts that reconcile."""

from __future__ import annotations

from pathlib import Path

from .spark_rows import check_output


def test_a_mixed_corpus_gets_the_right_verdicts_and_the_counts_reconcile(checked):
    """Conformant traces, a divergent trace, a non-trace and a corrupt capture: one row each, none lost."""
    root, expected, summary = checked
    assert summary["reconciled"] and summary["inputs"] == len(expected) + 4
    assert summary["inputs"] == summary["verdicts"] + summary["quarantined"]
    data = check_output(root / "out")
    mine = [r for r in data["verdicts"] if "/in/" in r["path"]]
    assert sum(r["verdict"] == "conformant" for r in mine) == 3 and sum(r["verdict"] == "divergent" for r in mine) == 1
    assert summary["quarantined"] == 2
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
