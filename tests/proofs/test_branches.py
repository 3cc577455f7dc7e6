"""Every branch of the per-server model is reachable: for each event, each thing it can do (apply a change, send a
sync reply, purge a tombstone, start sync0, ...) is done from some state that satisfies the invariants and the
event's assumptions (issue 21: "every modelled branch of a handler is shown reachable under the assumptions").

A branch unreachable there would make every consecution obligation about it hold for no reason: the goal could
not fail on it. The enterprise model's branches are checked the same way in test_enterprise.py.
"""

import pytest
from mqspec.proofs import obligations
from mqspec.proofs.z3_events import EVENTS

#: the events that do none of the things a branch names, and why
NO_BRANCH: dict[str, str] = {
    "environment_advances": "not a handler of this server: the rest of the enterprise moving the ghost copy it "
                            "holds (the authority's LastSeqNumber, PurgedSeqNumber and deletions)",
}


@pytest.mark.parametrize("name", [e.name for e in EVENTS])
def test_every_branch_of_an_event_is_reachable(name):
    """Each branch of the event (obligations.branch_guards) is taken from a state satisfying every invariant
    (clarified); an event without one is listed, with its reason, in NO_BRANCH."""
    reach = obligations.branch_reachability(name, "clarified")
    assert bool(reach) != (name in NO_BRANCH), (name, reach)
    assert reach == dict.fromkeys(reach, "reachable")
