"""The machine in literal mode: hypothesis finds the violations the errata register predicts.

Each case runs the machine on the literal reading with one invariant checked, lets hypothesis
generate runs until one violates it (no shrinking: it costs minutes at literal mode's message
storms), then shrinks that run's inputs by delta debugging (tests/stateful/minimize.py), and
records the steps and seconds both took in ``REPORT`` (printed with ``pytest -s``).
"""

import time

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test
from mqspec.proofs import invariants as inv
from mqspec.refimpl.effects import Mode

from .machine import InvariantViolation, ReplicationMachine, Stats
from .minimize import minimize

#: literal mode's sync-request storms (E-136, E-142) make each simulated second costly: settle briefly
LITERAL_SETTLE = {"quiet": 300.0, "limit": 1800.0}
SEARCH = settings(max_examples=300, stateful_step_count=40, deadline=None, phases=[Phase.generate],
                  database=None, suppress_health_check=list(HealthCheck), print_blob=False)
#: invariant -> the register entries whose literal reading the violation is evidence of
PREDICTED = {
    "replicas_converge_at_quiescence": ("E-119", "E-142"),
    "authority_tombstone_covers_unacked_deletions": ("E-108",),
    "partition_held_once_per_server": ("E-104",),
}
REPORT: dict[str, dict[str, object]] = {}


def hunt(invariant: str) -> dict[str, object]:
    """Find a literal-mode violation of ``invariant`` with hypothesis, then shrink it; what it took."""

    class LiteralMachine(ReplicationMachine):
        MODE = Mode.LITERAL
        CHECKED = frozenset({invariant})
        FINAL_SETTLE = LITERAL_SETTLE
        LONG_WAITS = False
        EXPLAIN_SECONDS = 0.0
        stats = Stats()

    start = time.perf_counter()
    with pytest.raises(InvariantViolation) as found:
        run_state_machine_as_test(LiteralMachine, settings=SEARCH)
    found_after = time.perf_counter() - start
    inputs = LiteralMachine.stats.last_failure
    start = time.perf_counter()
    small = minimize(inputs, invariant, Mode.LITERAL, settle=LITERAL_SETTLE, budget=120.0)
    return {"invariant": invariant, "errata": PREDICTED[invariant], "first": found.value.problems[0],
            "find_steps": LiteralMachine.stats.steps, "find_seconds": round(found_after, 1),
            "failing_run_inputs": len(inputs) - 1, "shrunk_inputs": len(small) - 1,
            "shrink_seconds": round(time.perf_counter() - start, 1)}


@pytest.mark.slow
@pytest.mark.parametrize("invariant", sorted(PREDICTED))
def test_literal_reading_violates(invariant):
    """Hypothesis finds a literal-mode run that violates the invariant, as the register predicts."""
    result = hunt(invariant)
    REPORT[invariant] = result
    print(result)
    assert result["shrunk_inputs"] <= result["failing_run_inputs"]
    assert invariant in inv.BY_NAME
