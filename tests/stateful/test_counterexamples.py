"""The state machine's counterexamples replay as scenario files: each converges clarified and fails literally."""

from pathlib import Path

import pytest
from mqspec.refimpl import scenario, scenario_run
from mqspec.refimpl.effects import Mode

COUNTEREXAMPLES = Path(__file__).resolve().parents[2] / "scenarios" / "counterexamples"
#: counterexample file -> the register entry whose clarified resolution makes it converge
RESOLVED = {
    "replicas_converge_at_quiescence-delete-of-unseen-object.yaml": "E-261",
    "replicas_converge_at_quiescence-sync-window-stuck-at-max.yaml": "E-264",
    "replicas_converge_at_quiescence-site-scope-queue.yaml": "E-263",
    "replicas_converge_at_quiescence-lost-sync0-reply.yaml": "E-264 (SYNC0)",
}


def run(name: str, mode: Mode = Mode.CLARIFIED) -> scenario_run.RunResult:
    return scenario_run.run(scenario.load(COUNTEREXAMPLES / name), mode=mode)


@pytest.mark.parametrize("name", sorted(RESOLVED))
def test_resolved_counterexample_converges_in_clarified_mode(name):
    """A counterexample whose defect the register resolves converges, with every expectation met."""
    result = run(name)
    assert result.failures == [] and result.converged, (RESOLVED[name], result.failures)


@pytest.mark.parametrize("name", sorted(RESOLVED))
def test_resolved_counterexample_fails_in_literal_mode(name):
    """Read as written, the text does not converge on the machine's counterexample (the defect is the text's)."""
    result = run(name, Mode.LITERAL)
    assert result.failures and not result.converged
