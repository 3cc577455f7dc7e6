"""The main job's output reads at 80 columns and its hints run as printed (issue 15 row 21)."""

from __future__ import annotations

import io
import os
import subprocess

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
