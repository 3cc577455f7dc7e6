"""Trace recording streams: each line goes to the file as the simulated server logs it, not at the end."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from mqspec.refimpl import scenario as sc
from mqspec.refimpl import world

from mqspec.oracle.generate import generate
from mqspec.oracle.record import record_scenario

SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "4.1-adding-a-site.yaml"
WORLD = world.__file__


def while_running(record: Callable[[Callable[[str], object]], object]) -> tuple[int, int]:
    """(lines written, lines written while the World's code was on the stack) by ``record(write)``."""
    lines = inside = 0

    def write(text: str) -> None:
        nonlocal lines, inside
        assert text.count("\n") == 1 and text.endswith("\n")  # one line a write
        lines += 1
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename != WORLD:
            frame = frame.f_back
        inside += frame is not None

    record(write)
    return lines, inside


def test_a_recorded_scenario_is_written_line_by_line_while_the_world_runs():
    """mqspec trace record's writer gets each line of a scenario's trace as the simulator makes it."""
    lines, inside = while_running(lambda write: record_scenario(sc.load(str(SCENARIO)), write=write))
    assert lines > 100 and inside >= 0.9 * lines, (lines, inside)


def test_a_generated_trace_is_written_line_by_line_while_the_world_runs():
    """generate(write=...) (bench/check_memory.py's recorder) hands out each line as the simulator makes it."""
    lines, inside = while_running(lambda write: generate(seed=7, sites=2, bscs=1, changes=10, interval=2.0,
                                                         quiet=12.0, write=write))
    assert lines > 100 and inside >= 0.9 * lines, (lines, inside)
