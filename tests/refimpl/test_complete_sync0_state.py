"""MC-MQDSRP 3.3.7.11 Complete Sync0 State: delete what the authority did not resend, back to PURGE_STATE_NORMAL."""

import pytest
from mqspec.model.guid import Guid
from mqspec.model.mqdsrp import Command
from mqspec.model.propids import ObjectType
from mqspec.model.seqnum import MAX_SEQ_NUMBER, MIN_SEQ_NUMBER
from mqspec.refimpl.effects import DirectoryOperation, Mode
from mqspec.refimpl.mqdsrp_client import complete_sync0_state
from mqspec.refimpl.mqdsrp_state import DeletedObject, PurgeState

from mqspec.clauses import covers

from .mqdsrp_fixtures_client import (
    PSC1,
    SITE0,
    SITE1,
    change,
    ctx_for,
    machine_properties,
    partition,
    psc_qm,
    seq,
    store_object,
)

GONE0, KEPT0, GONE1 = Guid.from_name("gone0"), Guid.from_name("kept0"), Guid.from_name("gone1")


def in_sync0(state=PurgeState.SYNC0):
    """PSC1's site0 replica in sync0: machine A not resent (MIN), machine C resent (seq 6); site1's B at MIN."""
    qm = psc_qm()
    p = partition(qm, SITE0)
    p.purge_state, p.last_seq_number, p.change_missing_window = state, seq(6), MAX_SEQ_NUMBER
    store_object(qm, ObjectType.MQDS_MACHINE, "A", machine_properties("A", SITE0), SITE0, 0)
    store_object(qm, ObjectType.MQDS_MACHINE, "C", machine_properties("C", SITE0), SITE0, 6)
    store_object(qm, ObjectType.MQDS_MACHINE, "B", machine_properties("B", SITE1), SITE1, 0)
    qm.deleted_objects = [
        DeletedObject(GONE0, SITE0, MIN_SEQ_NUMBER, int(ObjectType.MQDS_MACHINE), 0),
        DeletedObject(KEPT0, SITE0, seq(5), int(ObjectType.MQDS_MACHINE), 0),
        DeletedObject(GONE1, SITE1, MIN_SEQ_NUMBER, int(ObjectType.MQDS_MACHINE), 0),
    ]
    return qm, p


@covers("MC-MQDSRP", "3.3.7.11")
@pytest.mark.parametrize("state", [PurgeState.NORMAL, PurgeState.STARTSYNC0])
def test_a_partition_not_in_sync0_is_left_alone(state):
    """"If iPartition.PurgeState is not 2 ... or 3 ...: Take no further condition" (E-135: the values are tested)."""
    qm, p = in_sync0(state)
    ctx = ctx_for(qm)
    complete_sync0_state(qm, ctx, p)
    assert ctx.effects == []
    assert (p.purge_state, len(qm.directory), len(qm.deleted_objects)) == (state, 3, 3)


@covers("MC-MQDSRP", "3.3.7.11")
@pytest.mark.parametrize("state", [PurgeState.SYNC0, PurgeState.COMPLETESYNC0])
def test_completion_deletes_the_objects_and_tombstones_not_resent_and_returns_to_normal(state):
    """Reset operation 2 and the tombstone sweep touch this partition's MIN_SEQ_NUMBER entries only."""
    qm, p = in_sync0(state)
    ctx = ctx_for(qm)
    complete_sync0_state(qm, ctx, p)
    assert sorted(o.path_name for o in qm.directory.objects.values()) == ["B", "C"]
    assert [d.identifier for d in qm.deleted_objects] == [KEPT0, GONE1]
    assert (p.purge_state, p.change_missing_window) == (PurgeState.NORMAL, MIN_SEQ_NUMBER)
    assert ctx.effects[0] == DirectoryOperation(PSC1, "reset2", 0, partition_id=SITE0)


@covers("MC-MQDSRP", "3.3.7.11")
def test_clarified_completion_applies_changes_queued_during_sync0():
    """Clarified (E-136): the Check Pending Changes completion raises finds the window at MIN, so a change queued in sync0 that is now in order applies."""
    qm, p = in_sync0()
    p.pending_changes = [change(Command.SYNC, SITE0, 7, previous=6, properties=machine_properties("D", SITE0),
                                guid=Guid.from_name("qm:D"))]
    ctx = ctx_for(qm)
    complete_sync0_state(qm, ctx, p)
    assert (p.last_seq_number, p.pending_changes) == (seq(7), [])
    assert [e for e in ctx.effects if hasattr(e, "body")] == []


@covers("MC-MQDSRP", "3.3.7.11")
def test_clarified_completion_raises_check_pending_changes():
    """Clarified: "Raise a Check Pending Changes event", so a change queued after a gap asks for [LastSeqNumber, its SeqNumber] (E-136)."""
    qm, p = in_sync0()
    queued = change(Command.SYNC, SITE0, 9, previous=8, properties=machine_properties("D", SITE0),
                    guid=Guid.from_name("qm:D"))
    p.pending_changes = [queued]
    ctx = ctx_for(qm)
    complete_sync0_state(qm, ctx, p)
    [request] = [e.body for e in ctx.effects if hasattr(e, "body")]
    assert (request.from_seq_number, request.to_seq_number) == (seq(6), seq(9))
    assert (p.last_seq_number, p.change_missing_window, p.pending_changes) == (seq(6), seq(9), [queued])


@covers("MC-MQDSRP", "3.3.7.11")
def test_literal_completion_asks_for_last_seq_number_to_min():
    """Literal (E-136): the Check Pending Changes completion raises finds the window at MIN, so it asks for [LastSeqNumber, MIN] instead of applying."""
    qm, p = in_sync0()
    queued = change(Command.SYNC, SITE0, 7, previous=6, properties=machine_properties("D", SITE0),
                    guid=Guid.from_name("qm:D"))
    p.pending_changes = [queued]
    ctx = ctx_for(qm, Mode.LITERAL)
    complete_sync0_state(qm, ctx, p)
    [request] = [e.body for e in ctx.effects if hasattr(e, "body")]
    assert (request.from_seq_number, request.to_seq_number) == (seq(6), MIN_SEQ_NUMBER)
    assert (p.last_seq_number, p.pending_changes) == (seq(6), [queued])
