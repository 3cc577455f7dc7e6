"""The machine in literal mode: hypothesis finds the violations the errata register predicts.

Each case hunts one invariant on the literal reading (proofs/explore/hunt.py; for replica-side
defects, the literal reading confined to the handlers the register blames): hypothesis
generates runs until one violates it, then delta debugging shrinks that run's inputs, and the
shrunk inputs still violate it. ``bench/literal.py --json`` prints the steps and seconds each
hunt took, for every invariant.
"""

import pytest

from mqspec.proofs.explore.hunt import PREDICTED, SELECTIVE, hunt, literal_machine, read_as
from mqspec.proofs.explore.minimize import violations

#: the cases the slow tier runs: (invariant, handlers read literally; () for the whole text), the
#: quickest to find (bench/literal.py hunts them all)
SLOW_TIER = (
    ("replicas_converge_at_quiescence", ()),
    ("authority_tombstone_covers_unacked_deletions", ()),
    ("partition_held_once_per_server", ()),
    ("replica_tombstone_covers_applied_deletions", SELECTIVE["replica_tombstone_covers_applied_deletions"][0]),
    ("no_lingering_deleted_objects_at_quiescence", SELECTIVE["no_lingering_deleted_objects_at_quiescence"][0]),
)


@pytest.mark.slow
@pytest.mark.parametrize("invariant,reading", SLOW_TIER, ids=[f"{i}-{'-'.join(r) or 'literal'}" for i, r in SLOW_TIER])
def test_literal_reading_violates(invariant, reading):
    """Hypothesis finds a run that violates the invariant when read as the register predicts; it shrinks, and still violates it."""
    assert invariant in PREDICTED or invariant in SELECTIVE
    result = hunt(invariant, search_seconds=600.0, reading=reading)
    print({k: v for k, v in result.items() if k != "shrunk"})
    assert result["found"], result
    assert result["shrunk_inputs"] <= result["failing_run_inputs"]
    machine = literal_machine(invariant, reading)
    with read_as(reading):
        found = violations(result["shrunk"], machine.MODE, stop=invariant, settle=machine.FINAL_SETTLE)
    assert invariant in found
