"""The state machine's counterexamples replay as scenario files: resolved ones converge, open ones still fail."""

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
}
#: found by the machine and not resolved in clarified mode yet
OPEN = {
    "replicas_converge_at_quiescence-lost-sync0-reply.yaml": "E-264 (SYNC0)",
}


def run(name: str, mode: Mode = Mode.CLARIFIED) -> scenario_run.RunResult:
    return scenario_run.run(scenario.load(COUNTEREXAMPLES / name), mode=mode)


@pytest.mark.parametrize("name", sorted(RESOLVED))
def test_resolved_counterexample_converges_in_clarified_mode(name):
    """A counterexample whose defect the register resolves converges, with every expectation met."""
    result = run(name)
    assert result.failures == [] and result.converged, (RESOLVED[name], result.failures)


@pytest.mark.parametrize("name", sorted(OPEN))
def test_open_counterexample_replays_to_its_violation(name):
    """An open counterexample still fails its convergence expectation in clarified mode."""
    result = run(name)
    assert not result.converged and any("converged" in f for f in result.failures)


@pytest.mark.xfail(strict=True, reason="E-264 in SYNC0: a lost reply to a sync0 request is not asked again")
@pytest.mark.parametrize("name", sorted(OPEN))
def test_open_counterexample_converges_in_clarified_mode(name):
    """Once the register resolves it, the open counterexample converges (strict xfail until then)."""
    result = run(name)
    assert result.failures == [] and result.converged
