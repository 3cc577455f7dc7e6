"""The main job's output reads at 80 columns and its hints run as printed (issue 15 row 21)."""

from __future__ import annotations

import io
import os
import subprocess

import pytest
from rich.console import Console

from mqspec import demo


def test_the_section_4_table_is_whole_at_80_columns(tmp_path):
    """No header or cell of the section 4 table is cut (no ellipsis) when the terminal is 80 columns wide."""
    out = io.StringIO()
    console = Console(file=out, width=80, force_terminal=False)
    assert demo.record_section4(console, tmp_path) == 10
    text = out.getvalue()
    assert "…" not in text
    for header in ("example", "mode", "converged", "failed", "messages"):
        assert header in text
    assert all(len(line) <= 80 for line in text.splitlines())
    assert len(list(tmp_path.glob("*/*.ndjson.zst"))) == 10


def test_the_hint_names_a_command_that_runs_as_printed():
    """The printed command is the venv's mqspec (relative to here) when mqspec is not on PATH, and it runs."""
    command = demo.command()
    done = subprocess.run([command, "--help"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0 and "pipeline" in done.stdout


def test_the_handover_line_counts_the_traces_that_declare_one_and_how_many_conform(tmp_path):
    """The summary names how many checked traces declare a PSC handover and how many of those conform."""
    moved, plain = tmp_path / "moved.ndjson", tmp_path / "plain.ndjson"
    moved.write_text('{"event":"handover","node":"PSC1b"}\n', encoding="utf-8")
    plain.write_text('{"event":"start","node":"PEC0"}\n', encoding="utf-8")
    rows = [{"path": str(moved), "verdict": "conformant"}, {"path": str(plain), "verdict": "divergent"}]
    assert demo.handover_summary(rows) == "PSC handovers (move_psc) declared in 1 trace (E-313): 1 of 1 conformant."
    assert demo.handover_summary(rows[1:]) is None


def test_the_exit_status_is_0_only_when_nothing_is_wrong():
    """Status 0 needs no violation, every trace conformant and the counts reconciled; anything else is 1."""
    explored = {"violations": 0}
    checked = {"inputs": 34, "conformant": 34, "reconciled": True}
    assert demo.status(explored, checked) == 0
    assert demo.status({"violations": 2}, checked) == 1
    assert demo.status(explored, {**checked, "conformant": 33}) == 1
    assert demo.status(explored, {**checked, "reconciled": False}) == 1


def test_the_demo_says_where_it_writes_and_what_it_replaces_and_refuses_a_folder_of_other_files(tmp_path, capsys):
    """A new folder is named as new; an earlier run's is named as replaced, with its size; any other is refused."""
    out = io.StringIO()
    console = Console(file=out, width=200)
    target = tmp_path / "demo"
    demo.claim(target, console)
    assert f"Writing under {target}/ (a new folder" in out.getvalue() and (target / demo.MARKER).is_file()
    (target / "old.bin").write_bytes(b"x" * 3_000_000)
    demo.claim(target, console)
    assert "replacing the previous run's 3 MB there" in out.getvalue() and not (target / "old.bin").exists()
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    with pytest.raises(SystemExit) as exit_:
        demo.claim(tmp_path / "mine", console)
    assert exit_.value.code == 2 and (tmp_path / "mine" / "notes.txt").read_text() == "keep"
    assert "holds files the demo did not write" in capsys.readouterr().err
