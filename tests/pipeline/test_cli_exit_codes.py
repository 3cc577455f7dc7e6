"""The exit-status table's rows for the pipeline commands that need Spark (the others are in
tests/test_exit_codes.py): each command ends with the status its row lists, on the session of conftest.

Spark jobs are slow on a shared machine, so `pipeline check` runs twice: once over one conformant input
(status 0), and once over five inputs, one per verdict, whose status is the precedence's top (2); the
statuses of every other mix follow from the verdict counts that run reports, by the same precedence as
`mqspec check`, which the test holds to `mqspec check`'s own status for the same inputs. `pipeline explore`
resumes the campaigns conftest computed (nothing is recomputed) and ends with their status.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from mqspec.cli.main import main
from mqspec.cli.pipeline import MARKER, check_status

from tests.test_exit_codes import SAMPLES, divergent, header_only, text_file, with_a_hole

#: an input per verdict (a quarantined input is one that is not a trace)
INPUTS = {
    "conformant": lambda t: str(SAMPLES / "adding-a-site.ndjson"),
    "divergent": divergent,
    "quarantined": lambda t: text_file(t, "notes.ndjson", json.dumps({"hello": "not a trace"}) + "\n"),
    "nothing-checked": header_only,
    "incomplete-capture": with_a_hole,
}


def pipeline(*args: str):
    return CliRunner().invoke(main, ["pipeline", *args, "--master", "local[2]"])


def test_pipeline_check_ends_as_mqspec_check_does(spark, tmp_path):
    """One conformant input: 0. One input of each verdict: 2 (a quarantined one is malformed input), and each
    mix of fewer verdicts gives what `mqspec check` gives the same inputs: 1, 4, 3, 0 in turn."""
    alone = pipeline("check", INPUTS["conformant"](tmp_path), "--out", str(tmp_path / "one"))
    assert alone.exit_code == 0, alone.output
    paths = {verdict: make(tmp_path) for verdict, make in INPUTS.items()}
    every = pipeline("check", *paths.values(), "--out", str(tmp_path / "all"), "--json")
    assert every.exit_code == 2, every.output
    summary = json.loads(every.stdout)
    assert summary["quarantined"] == 1 and summary["by_verdict"] == {
        "conformant": 1, "divergent": 1, "incomplete-capture": 1, "nothing-checked": 1}
    kinds = list(INPUTS)
    for dropped, status in (("quarantined", 1), ("divergent", 4), ("incomplete-capture", 3), ("nothing-checked", 0)):
        kinds.remove(dropped)
        counts = {"quarantined": 0, "by_verdict": {k: 1 for k in kinds}}
        alone_status = CliRunner().invoke(main, ["check", *(paths[k] for k in kinds)]).exit_code
        assert check_status(counts) == alone_status == status, (dropped, kinds)


def resumed(campaign: Path, tmp_path: Path, *args: str):
    """`pipeline explore` over a copy of a campaign conftest computed: every wave is stored, nothing runs."""
    copy = tmp_path / campaign.name
    shutil.copytree(campaign, copy)
    (copy / MARKER).write_text("explore\n")
    return pipeline("explore", *args, "--out", str(copy), "--json")


def test_pipeline_explore_ends_with_0_without_violation_and_1_with_one(clarified, literal, tmp_path):
    """The clarified campaign (no violation) ends with 0, the literal one (violations) with 1; report with 0."""
    clean = resumed(clarified[0], tmp_path, "--runs", "4", "--seed", "9", "--traces", "--wave", "4")
    assert clean.exit_code == 0, clean.output
    assert json.loads(clean.stdout)["computed"] == 0
    broken = resumed(literal[0], tmp_path, "--runs", "2", "--seed", "9", "--mode", "literal", "--shrink-replays", "1")
    assert broken.exit_code == 1, broken.output
    assert json.loads(broken.stdout)["violations"] > 0
    report = CliRunner().invoke(main, ["pipeline", "report", str(tmp_path / literal[0].name), "--out",
                                       str(tmp_path / "r"), "--json"])
    assert report.exit_code == 0, report.output
    assert json.loads(report.stdout)["report"] == str(tmp_path / "r" / "index.html")
