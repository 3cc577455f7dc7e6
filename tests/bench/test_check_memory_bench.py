"""bench/check_memory.py: on a small generated trace it reports every figure, and each child's own peak memory.

The figures themselves depend on the machine and its load; what is checked is the report's shape,
that it describes the trace it wrote, and that the peak it reports for a trace of about a megabyte is
a real, bounded figure (a Python process with mqspec loaded, far below the 300 MB limit).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "check_memory.py"


def run(trace: Path) -> dict:
    done = subprocess.run([sys.executable, str(BENCH), "--json", "--megabytes", "0.05", "--trace", str(trace)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> tuple[dict, dict, Path]:
    """The report of a run that writes a small trace, then of one that reuses it."""
    trace = tmp_path_factory.mktemp("memory") / "small.ndjson"
    return run(trace), run(trace), trace


def test_a_run_records_a_trace_and_reports_both_children(reports):
    """The first run writes the trace (recorder child) and checks it (check child): sizes, figures, the limit."""
    first, _, trace = reports
    assert first["benchmark"] == "check_memory" and first["limit_mb"] == 300 and first["coverage"] is False
    assert first["trace"] == str(trace) and first["bytes"] == trace.stat().st_size > 0
    assert first["events"] == len(trace.read_bytes().splitlines())
    assert len(first["load_average"]) == 3
    for name in ("record", "check"):
        child = first[name]
        assert child["exit"] == 0
        assert 10 < child["peak_rss_mb"] < 150, child  # an interpreter with mqspec loaded, bounded for this size
        assert child["cpu_seconds"] > 0 and child["wall_seconds"] > 0
    assert first["record"]["changes"] >= 1
    assert first["check"]["events_per_cpu_second"] > 0
    assert first["within_limit"] is True


def test_a_second_run_reuses_the_trace_and_reports_the_check_alone(reports):
    """A trace already large enough is not written again: the run checks it alone, with the same figures of size."""
    first, second, _ = reports
    assert "record" not in second
    assert second["bytes"] == first["bytes"] and second["events"] == first["events"]
    assert second["check"]["exit"] == 0 and 10 < second["check"]["peak_rss_mb"] < 150
