"""The machine in literal mode: hypothesis finds the violations the errata register predicts.

Each case hunts one invariant on the literal reading (tests/stateful/hunt.py): hypothesis
generates runs until one violates it, then delta debugging shrinks that run's inputs, and the
shrunk inputs still violate it. ``bench/literal.py --json`` prints the steps and seconds each
hunt took, for every invariant.
"""

import pytest
from mqspec.refimpl.effects import Mode

from .hunt import LITERAL_SETTLE, PREDICTED, hunt
from .minimize import violations

#: the cases the slow tier runs (the three quickest to find; bench/literal.py hunts them all)
SLOW_TIER = ("replicas_converge_at_quiescence", "authority_tombstone_covers_unacked_deletions",
             "partition_held_once_per_server")


@pytest.mark.slow
@pytest.mark.parametrize("invariant", SLOW_TIER)
def test_literal_reading_violates(invariant):
    """Hypothesis finds a literal-mode run that violates the invariant, as the register predicts; it shrinks."""
    assert invariant in PREDICTED
    result = hunt(invariant, search_seconds=600.0)
    print({k: v for k, v in result.items() if k != "shrunk"})
    assert result["found"], result
    assert result["shrunk_inputs"] <= result["failing_run_inputs"]
    assert invariant in violations(result["shrunk"], Mode.LITERAL, stop=invariant, settle=LITERAL_SETTLE)
