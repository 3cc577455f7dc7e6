"""The refinement campaign of `mqspec prove` (proofs/refinement/campaign.py), whole: the slow tier.

Minutes on two cores: the default tier runs the check on a few scenario files (test_refinement.py).
"""

import pytest
from mqspec.proofs.refinement import campaign
from mqspec.refimpl import mqdsrp_common
from mqspec.vectors import mutation as vm

pytestmark = pytest.mark.slow


def test_the_default_campaign_finds_no_departure_in_either_mode():
    """The reference refines the model on every state the default campaign reaches, in both modes."""
    rows = campaign.rows("default", jobs=2)
    assert [r.obligation.name for r in rows if r.status == "violated"] == []
    assert sum(r.status == "refined" for r in rows) > len(campaign.HANDLERS)  # most handlers checked, both modes


def test_the_campaign_catches_the_stale_change_guard_off_by_one():
    """Handle Directory Change applying a change numbered LastSeqNumber again makes a row violated."""
    fn = mqdsrp_common.handle_directory_change
    found = [m for m in vm.mutants_of(fn, (*vm.OPERATORS, *vm.EXTRA_OPERATORS))
             if m.operator == "shift" and m.before.startswith("change.seq_number <= partition.last_seq_number")]
    assert len(found) == 1
    with vm.installed(fn, vm.mutant_code(fn, found[0])):
        rows = campaign.rows("default", stop_at_first=True, shrink=False, jobs=1)
    assert any(r.status == "violated" for r in rows)
