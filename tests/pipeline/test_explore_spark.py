"""mqspec pipeline explore on local Spark: the same rows whatever the waves, resumable without loss or duplicates."""

from __future__ import annotations

import shutil

import pyarrow.parquet as pq
import pytest

from mqspec.pipeline import store
from mqspec.pipeline.explore import CampaignMismatch, explore
from mqspec.pipeline.runs import Campaign
from mqspec.pipeline.store import Location

from .conftest import CLARIFIED, SAY
from .spark_rows import explore_output


def test_a_campaign_stores_runs_violations_counterexamples_and_coverage(literal):
    """Every run is a row; each violation a row naming its shrunk scenario file, which exists; clauses counted."""
    out, summary = literal
    data = explore_output(out)
    assert [r["run"] for r in data["runs"]] == [0, 1] and summary["runs"] == 2
    assert summary["violations"] == len(data["violations"]) >= 2
    for v in data["violations"]:
        assert (out / v["counterexample"]).is_file() and v["first_run"] <= v["run"]
        assert v["invariant"] in data["runs"][v["run"]]["invariants_violated"]
    for run in (0, 1):  # each run breaks at least one invariant the register explains (E-142, E-108, ...)
        assert any(v["errata"] for v in data["violations"] if v["run"] == run)
    assert summary["counterexamples"] == len({v["counterexample"] for v in data["violations"]})
    assert any(c["runs"] == 2 and c["clause"] == "MC-MQDSRP 3.1.3.1" for c in data["coverage"])
    assert any(c["runs"] == 0 for c in data["coverage"])  # registered clauses nothing ran are listed too


def test_the_rows_do_not_depend_on_the_waves_or_the_partitioning(spark, clarified, tmp_path):
    """Computed in waves of 2 (two Spark jobs, other tasks), the datasets equal the one-wave campaign's."""
    out, summary = clarified
    other = tmp_path / "waves-of-2"
    explore(spark, CLARIFIED, Location(other), master="local[2]", wave=2, progress=SAY)
    assert explore_output(other) == explore_output(out)
    assert summary["violations"] == 0 and summary["converged"] == 4


def test_an_interrupted_campaign_resumes_with_nothing_lost_or_duplicated(spark, clarified, tmp_path):
    """With a wave cut short (no _SUCCESS) and the campaign extended, only missing runs are computed, once each."""
    out, _ = clarified
    resumed = tmp_path / "resumed"
    explore(spark, Campaign(runs=2, seed=9, traces=True), Location(resumed), master="local[2]", wave=1, progress=SAY)
    (resumed / "_waves" / store.wave_name(1, 2) / "_SUCCESS").unlink()  # as if killed before its commit
    lines: list[str] = []
    summary = explore(spark, CLARIFIED, Location(resumed), master="local[2]", wave=2, progress=lines.append)
    assert summary["resumed"] == 1 and summary["computed"] == 3
    assert any("removed 1 incomplete wave: wave-000000001-000000002" in line for line in lines)
    assert explore_output(resumed) == explore_output(out)
    again = explore(spark, CLARIFIED, Location(resumed), master="local[2]", progress=SAY)
    assert again["computed"] == 0 and explore_output(resumed) == explore_output(out)


def test_a_committed_wave_is_checked_by_its_rows_and_traces_not_by_success_alone(spark, clarified, tmp_path):
    """A wave whose _SUCCESS is there but whose Parquet lost its rows, or whose run lost its trace file, is
    recomputed (not taken as done, not stuck on 'path exists'); the datasets come out the same."""
    out, _ = clarified
    again = tmp_path / "again"
    explore(spark, CLARIFIED, Location(again), master="local[2]", wave=2, progress=SAY)
    for part in (again / "_waves" / store.wave_name(0, 2)).glob("part-*"):
        part.unlink()  # the driver sees only _SUCCESS, as when executors wrote to their own disks
    (again / "traces" / "run-000000003.ndjson.zst").unlink()
    lines: list[str] = []
    summary = explore(spark, CLARIFIED, Location(again), master="local[2]", wave=2, progress=lines.append)
    assert summary["computed"] == 4 and summary["resumed"] == 0
    assert any("removed 2 incomplete waves" in line for line in lines)
    assert explore_output(again) == explore_output(out)


def test_resuming_with_other_arguments_is_refused(spark, clarified, tmp_path):
    """A folder holding a campaign of another seed is not mixed with a new one."""
    out, _ = clarified
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    with pytest.raises(CampaignMismatch, match="seed"):
        explore(spark, Campaign(runs=4, seed=10, traces=True), Location(copy), master="local[2]", progress=SAY)


def test_traces_are_kept_compressed_in_the_published_format_and_stored_once(clarified):
    """--traces: one zstd-compressed NDJSON trace per run under traces/, written by the executors, named in
    runs/, and not inside the Parquet waves again; decompressed it is the run's trace, byte for byte."""
    from mqspec.oracle.compression import open_text
    from mqspec.pipeline.runs import run_rows

    out, summary = clarified
    names = sorted(p.name for p in (out / "traces").iterdir())
    assert names == [f"run-00000000{i}.ndjson.zst" for i in range(4)] and summary["traces"] == 4
    assert summary["trace_bytes"] == sum(p.stat().st_size for p in (out / "traces").iterdir())
    assert [r["trace"] for r in explore_output(out)["runs"]] == [f"traces/{n}" for n in names]
    for wave in (out / "_waves").iterdir():
        assert "trace" not in pq.read_schema(next(wave.glob("*.parquet"))).names
    (row,) = run_rows([2], CLARIFIED)
    with open_text(out / "traces" / names[2]) as f:
        assert f.read() == row["trace"]


def test_the_report_draws_the_pictures_and_links_every_clause_to_its_section(literal, checked, tmp_path):
    """From explore and check outputs: index.html with its images beside it, clauses linked to section pages."""
    from mqspec.pipeline.report import write

    result = write([literal[0], checked[0] / "out"], tmp_path / "report", docs="https://docs.invalid/mqspec")
    page = (tmp_path / "report" / "index.html").read_text()
    assert {"violations.png", "coverage.png", "divergences.png", "lag-clarified.png", "convergence.png"} <= set(
        result["figures"])
    for name in result["figures"]:
        assert (tmp_path / "report" / name).stat().st_size > 1000 and f"src='{name}'" in page
    assert "https://docs.invalid/mqspec/spec/mc-mqdsrp/3.1.7.2.2.html" in page
    assert "counterexamples/" in page and "notes.ndjson" in page
