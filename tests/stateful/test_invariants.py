"""The invariant catalogue: one stable name per invariant, and checkers that catch what they state."""

import re

import attrs
import pytest
from mqspec.model.seqnum import SequenceNumber
from mqspec.proofs import invariants as inv
from mqspec.proofs.ghost import (
    ChangeRequestHandled,
    SeqMove,
    SyncReplySent,
    TombstonesPurged,
)
from mqspec.refimpl.mqdsrp_state import (
    PEC_PARTITION_ID,
    DeletedObject,
    DirectoryPartition,
)

from mqspec.proofs.explore.driver import Driver, enterprise_input
from mqspec.proofs.explore.machine import InvariantViolation, ReplicationMachine

#: the names the design card and the proofs use (tests, docs and pipeline columns follow them)
REQUIRED = (
    "authority_last_seq_strictly_increases", "sequence_numbers_used_once_per_partition",
    "replica_last_seq_monotone_except_sync0", "replica_purged_seq_monotone_except_sync0",
    "applied_change_follows_last_seq", "purged_seq_at_most_last_seq",
    "tombstone_purged_only_after_all_psc_acks", "no_incremental_history_skips_purged_deletion",
    "no_lingering_deleted_objects_at_quiescence", "one_authority_per_partition",
    "servers_agree_on_authority_at_quiescence", "only_authority_assigns_sequence_numbers",
    "bsc_never_applies_change_request", "change_request_at_non_authority_is_forwarded",
    "authority_tombstone_covers_unacked_deletions", "acked_seq_at_most_replica_last_seq",
)
SITES = [{"site": "site0", "psc": "PEC0", "bscs": ["BSC01"], "machines": ["C0"]},
         {"site": "site1", "psc": "PSC1", "bscs": [], "machines": ["C1"]}]
_BUILT: list[Driver] = []


def built() -> Driver:
    """A converged two-site enterprise with the ghost attached (built once, copied per test)."""
    if not _BUILT:
        driver = Driver()
        driver.apply(enterprise_input(SITES))
        driver.ghost.observe("build")
        _BUILT.append(driver)
    return _BUILT[0].copy()


def problems(driver: Driver, name: str, events=(), **kw) -> list[str]:
    obs = driver.ghost.observe("test", full=True, **kw)
    return inv.BY_NAME[name].check(attrs.evolve(obs, events=tuple(events)))


def test_every_required_invariant_is_stated_once_with_prose_and_formula():
    """Each name of the design card is an Invariant with a family, prose and a formula, and names are unique."""
    assert len(inv.NAMES) == len(set(inv.NAMES))
    assert set(REQUIRED) <= set(inv.NAMES)
    for invariant in inv.INVARIANTS:
        assert re.fullmatch(r"[a-z][a-z0-9_]*", invariant.name)
        assert invariant.family in inv.FAMILIES and invariant.prose and invariant.formula


def test_the_machine_has_an_invariant_method_per_name():
    """ReplicationMachine checks every invariant by a method named exactly after it."""
    for name in inv.NAMES:
        assert callable(getattr(ReplicationMachine, name))


def test_a_converged_enterprise_violates_nothing():
    """The built enterprise, settled, satisfies every invariant, the quiescence ones included."""
    driver = built()
    driver.apply({"input": "settle"})
    assert inv.check(driver.ghost.observe("settle", quiescent=True, full=True)) == {}


def test_replica_ahead_of_the_authority_is_caught():
    """A replica LastSeqNumber beyond what the authority assigned violates only_authority_assigns_sequence_numbers."""
    driver = built()
    replica = driver.world.nodes["PSC1"].find_partition(PEC_PARTITION_ID)
    replica.last_seq_number = SequenceNumber(driver.ghost.hi[PEC_PARTITION_ID] + 1)
    assert problems(driver, "only_authority_assigns_sequence_numbers")


def test_purged_above_last_is_caught():
    """A NORMAL partition with PurgedSeqNumber above LastSeqNumber violates purged_seq_at_most_last_seq."""
    driver = built()
    p = driver.world.nodes["BSC01"].find_partition(PEC_PARTITION_ID)
    p.purged_seq_number = p.last_seq_number.increment()
    assert problems(driver, "purged_seq_at_most_last_seq")


def test_duplicate_partition_is_caught():
    """A second partition object with one PartitionID violates partition_held_once_per_server (E-104)."""
    driver = built()
    driver.world.nodes["PEC0"].partitions.append(DirectoryPartition(driver.world.site_guid("site1"), "PSC1"))
    assert problems(driver, "partition_held_once_per_server")


def test_missing_authority_tombstone_is_caught():
    """A deletion above the authority's PurgedSeqNumber without its tombstone violates authority_tombstone_covers_unacked_deletions."""
    driver = built()
    driver.apply({"input": "request", "at": "PEC0", "operation": "create", "type": "cn", "path": "cn1",
                  "properties": {"PROPID_CN_PROTOCOLID": 1}})
    driver.apply({"input": "request", "at": "PEC0", "operation": "delete", "type": "cn", "path": "cn1"})
    assert problems(driver, "authority_tombstone_covers_unacked_deletions") == []
    driver.world.nodes["PEC0"].deleted_objects.clear()
    assert problems(driver, "authority_tombstone_covers_unacked_deletions")


def test_lingering_object_is_caught_at_quiescence_only():
    """A server still holding an object its authority deleted violates the lingering invariant, at quiescence."""
    driver = built()
    driver.apply({"input": "request", "at": "PEC0", "operation": "create", "type": "cn", "path": "cn1",
                  "properties": {"PROPID_CN_PROTOCOLID": 1}})
    driver.apply({"input": "advance", "seconds": 30.0})
    kept = driver.world.nodes["BSC01"].directory.copy()
    driver.apply({"input": "request", "at": "PEC0", "operation": "delete", "type": "cn", "path": "cn1"})
    driver.apply({"input": "advance", "seconds": 30.0})
    driver.world.nodes["BSC01"].directory = kept
    assert problems(driver, "no_lingering_deleted_objects_at_quiescence") == []
    assert problems(driver, "no_lingering_deleted_objects_at_quiescence", quiescent=True)


@pytest.mark.parametrize(("name", "event"), [
    ("authority_last_seq_strictly_increases", SeqMove("PEC0", PEC_PARTITION_ID, "last", 4, 6, True, "apply", 4, "h")),
    ("sequence_numbers_used_once_per_partition", SeqMove("PEC0", PEC_PARTITION_ID, "last", 2, 3, True, "apply", 4, "h")),
    ("replica_last_seq_monotone_except_sync0", SeqMove("BSC01", PEC_PARTITION_ID, "last", 4, 0, False, "other", 4, "h")),
    ("replica_purged_seq_monotone_except_sync0", SeqMove("BSC01", PEC_PARTITION_ID, "purged", 3, 1, False, "other", 4, "h")),
    ("applied_change_follows_last_seq", SeqMove("BSC01", PEC_PARTITION_ID, "last", 2, 4, False, "apply", 4, "h", (3,))),
    ("tombstone_purged_only_after_all_psc_acks",
     TombstonesPurged("PEC0", ((None, PEC_PARTITION_ID, 7),), {PEC_PARTITION_ID: (("PSC1", 5),)}, "h")),
    ("bsc_never_applies_change_request",
     ChangeRequestHandled("BSC01", "BSC", PEC_PARTITION_ID, "message", "X", 1, False, True, None, None)),
    ("change_request_at_non_authority_is_forwarded",
     ChangeRequestHandled("PSC1", "PSC", PEC_PARTITION_ID, "client", "PSC1", 0, False, False, None, 0)),
])
def test_event_checkers_catch_what_they_state(name, event):
    """Each transition invariant flags an event that breaks it and passes the same step without it."""
    driver = built()
    assert problems(driver, name, [event])
    assert problems(driver, name, []) == []


def test_incremental_reply_skipping_a_deletion_is_caught():
    """An incremental sync reply over a deletion it does not carry violates no_incremental_history_skips_purged_deletion."""
    driver = built()
    driver.apply({"input": "request", "at": "PEC0", "operation": "create", "type": "cn", "path": "cn1",
                  "properties": {"PROPID_CN_PROTOCOLID": 1}})
    created = driver.ghost.hi[PEC_PARTITION_ID]
    driver.apply({"input": "request", "at": "PEC0", "operation": "delete", "type": "cn", "path": "cn1"})
    (deleted, guid, _c), = driver.ghost.deletions_after(PEC_PARTITION_ID, 0)
    skipping = SyncReplySent("PEC0", "BSC01", PEC_PARTITION_ID, created, deleted, 0, frozenset())
    carrying = attrs.evolve(skipping, deleted=frozenset({guid}))
    assert problems(driver, "no_incremental_history_skips_purged_deletion", [skipping])
    assert problems(driver, "no_incremental_history_skips_purged_deletion", [carrying]) == []


def test_acknowledgment_above_the_replica_is_caught():
    """A PSC neighbor's acknowledgment above its own LastSeqNumber violates acked_seq_at_most_replica_last_seq."""
    driver = built()
    neighbor = next(n for n in driver.world.nodes["PEC0"].psc_neighbors if n.machine_name == "PSC1")
    neighbor.acked_pec_seq_number = SequenceNumber(10_000)
    assert problems(driver, "acked_seq_at_most_replica_last_seq")


def test_acknowledgment_above_the_replica_is_caught_when_only_the_replica_ran():
    """An acknowledgment above the replica is caught after a step that touched only the replica, not the authority."""
    driver = built()
    neighbor = next(n for n in driver.world.nodes["PEC0"].psc_neighbors if n.machine_name == "PSC1")
    neighbor.acked_pec_seq_number = SequenceNumber(10_000)
    obs = driver.ghost.observe("test")
    check = inv.BY_NAME["acked_seq_at_most_replica_last_seq"].check
    assert check(attrs.evolve(obs, touched=frozenset({"PSC1"})))
    assert check(attrs.evolve(obs, touched=frozenset({"BSC01"}))) == []  # a step at neither: not looked at


def test_replica_tombstone_gap_is_caught():
    """A PSC replica that passed a deletion but keeps no tombstone violates replica_tombstone_covers_applied_deletions."""
    driver = built()
    driver.apply({"input": "request", "at": "PEC0", "operation": "create", "type": "cn", "path": "cn1",
                  "properties": {"PROPID_CN_PROTOCOLID": 1}})
    driver.apply({"input": "request", "at": "PEC0", "operation": "delete", "type": "cn", "path": "cn1"})
    driver.apply({"input": "advance", "seconds": 30.0})
    assert problems(driver, "replica_tombstone_covers_applied_deletions") == []
    psc1 = driver.world.nodes["PSC1"]
    psc1.deleted_objects = [d for d in psc1.deleted_objects if not isinstance(d, DeletedObject)]
    assert problems(driver, "replica_tombstone_covers_applied_deletions")


def test_each_input_of_a_rule_that_performs_several_is_checked(monkeypatch):
    """A violation after the first of a rule's inputs (a purge round's burst) is reported, not replaced by the next step."""
    class Machine(ReplicationMachine):
        EXPLAIN_SECONDS = 0.0

    machine = Machine()
    machine.build(1, [0, 0, 0])
    machine._check(machine.obs)
    flag = attrs.evolve(inv.BY_NAME["purged_seq_at_most_last_seq"],
                        check=lambda obs: ["flagged"] if obs.step == "first" else [])
    monkeypatch.setattr(inv, "INVARIANTS", tuple(flag if i.name == flag.name else i for i in inv.INVARIANTS))
    machine._apply({"input": "advance", "seconds": 0.01}, "first")
    with pytest.raises(InvariantViolation, match="purged_seq_at_most_last_seq is violated after first"):
        machine._apply({"input": "advance", "seconds": 0.01}, "second")
