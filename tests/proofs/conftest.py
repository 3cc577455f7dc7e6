"""``mqspec prove --json`` in both modes, run once per test session: the default tier checks its rows."""

import json
import resource
import subprocess
import sys
import time

import attrs
import pytest

#: both runs on a loaded two-core machine (about 600 s at a load of 6; 200 s of CPU each on an idle one)
PROVE_TIMEOUT = 1800


@attrs.frozen
class ProveRun:
    """One ``mqspec prove --json --mode MODE`` run: its rows, exit status, wall time and CPU time (its processes')."""

    rows: list
    exit_code: int
    seconds: float
    cpu_seconds: float

    def of_kind(self, *kinds):
        return [r for r in self.rows if r["kind"] in kinds]


def pytest_collection_modifyitems(items):
    """The test that first asks for ``prove_runs`` waits for both runs: a longer timeout than one test's."""
    for item in items:
        if "prove_runs" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.timeout(PROVE_TIMEOUT))


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@pytest.fixture(scope="session")
def prove_runs():
    """Every obligation of both modes, as ``mqspec prove`` reports it: the command itself, with two processes as on
    CI's two cores."""
    runs = {}
    for mode in ("clarified", "literal"):
        cpu, started = _children_cpu(), time.perf_counter()
        # the obligations only: the refinement campaign (both modes in one run) is tested in test_refinement*.py
        done = subprocess.run([sys.executable, "-m", "mqspec", "prove", "--mode", mode, "--json", "--jobs", "2",
                               "--no-refinement"],
                              capture_output=True, text=True, check=False, timeout=PROVE_TIMEOUT)
        assert done.returncode in (0, 1), done.stderr
        runs[mode] = ProveRun(json.loads(done.stdout), done.returncode, time.perf_counter() - started,
                              _children_cpu() - cpu)
    return runs
