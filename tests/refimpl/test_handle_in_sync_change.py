"""MC-MQDSRP 3.1.7.2.3 Handle In-Sync Change: apply, pass on to the BSCs, purge, acknowledge."""

import pytest
from mqspec.model.mqdsrp import ChangePropagationMessage, PSCAckMessage
from mqspec.model.propvalue import Property
from mqspec.refimpl import status as st
from mqspec.refimpl.effects import AckRequested
from mqspec.refimpl.mqdsrp_base import replication_queue_private
from mqspec.refimpl.mqdsrp_common import handle_in_sync_change
from mqspec.refimpl.mqdsrp_state import PurgeState

from mqspec.clauses import covers

from .mqdsrp_fixtures import (
    BSC,
    ENT,
    ENTERPRISE,
    MACHINE,
    PEC,
    PSC,
    QUEUE,
    SCOPE_ENTERPRISE,
    SITE1,
    DirectoryNeighbor,
    P,
    add_object,
    bsc_node,
    change,
    context,
    delete_props,
    dir_ops,
    enterprise_props,
    guid_of,
    machine_props,
    messages,
    psc_node,
    queue_props,
    seq,
    tombstone,
)


def _replica(last=5, bsc=True):
    """PSC1's replica of the enterprise partition at ``last`` with BSC11 as BSC neighbor and a queue q1."""
    qm = psc_node()
    ent = qm.find_partition(ENT)
    ent.last_seq_number = seq(last)
    if bsc:
        qm.bsc_neighbors = [DirectoryNeighbor(SITE1, BSC)]
    add_object(qm, QUEUE, "q1", guid_of("q1"), queue_props("q1"), ENT)
    add_object(qm, ENTERPRISE, "enterprise", guid_of("ent"), enterprise_props(PEC), ENT)
    return qm, ent


def _apply(qm, partition, c, flush=True):
    ctx = context(qm)
    status = handle_in_sync_change(qm, ctx, partition, c, flush)
    return status, ctx


def _pec_renamed(at):
    return change(1, ENT, at - 1, at, 0, (Property(P["PROPID_E_PECNAME"], "PEC9"),), path="enterprise")


@covers("MC-MQDSRP", "3.1.7.2.3")
def test_create_uses_the_object_type_of_the_first_propid_and_the_path_name():
    """Create: objectType from the first PROPID (3.1.1.4), pathName from PathName when UseGuid is 0x00; LastSeqNumber := SeqNumber."""
    qm, ent = _replica()
    c = change(0, ENT, 5, 6, 0, machine_props("M1", SITE1, 0, guid_of("M1")), path="M1")
    status, ctx = _apply(qm, ent, c)
    assert status == st.MQ_OK and ent.last_seq_number == seq(6)
    [op] = dir_ops(ctx)
    assert (op.operation, op.object_type, op.path_name, op.partition_id, op.seq_number) == (
        "create", int(MACHINE), "M1", ENT, 6)


@covers("MC-MQDSRP", "3.1.7.2.3")
def test_update_by_guid_passes_the_guid_identifier_and_no_path_name():
    """Update: with UseGuid 0x01 guidIdentifier := GuidIdentifier and pathName stays NULL."""
    qm, ent = _replica()
    c = change(1, ENT, 5, 6, 0, (Property(P["PROPID_Q_LABEL"], "new"),), guid=guid_of("q1"))
    status, ctx = _apply(qm, ent, c)
    assert status == st.MQ_OK
    [op] = dir_ops(ctx)
    assert (op.operation, op.object_type, op.path_name, op.guid) == ("update", int(QUEUE), None, guid_of("q1"))
    assert qm.directory.find(guid=guid_of("q1")).properties[P["PROPID_Q_LABEL"]] == "new"


@covers("MC-MQDSRP", "3.1.7.2.3")
def test_delete_takes_the_object_type_from_the_second_value_and_scope_from_the_first():
    """Delete: "iObjectType := the property value of the second element", "iScope := ... the first element"."""
    qm, ent = _replica()
    c = change(2, ENT, 5, 6, 0, delete_props(SCOPE_ENTERPRISE, QUEUE), guid=guid_of("q1"))
    status, ctx = _apply(qm, ent, c)
    assert status == st.MQ_OK
    assert [(op.operation, op.object_type, op.guid) for op in dir_ops(ctx)] == [("delete", int(QUEUE), guid_of("q1"))]
    assert qm.directory.find(guid=guid_of("q1")) is None
    assert [(d.identifier, d.scope, d.object_type) for d in qm.deleted_objects] == [
        (guid_of("q1"), SCOPE_ENTERPRISE, int(QUEUE))]


@covers("MC-MQDSRP", "3.1.7.2.3")
def test_sync_reads_then_updates_an_existing_object():
    """Sync (0x03): Handle Directory Sync reads the object and, found, updates it."""
    qm, ent = _replica()
    c = change(3, ENT, 5, 6, 0, (Property(P["PROPID_Q_LABEL"], "synced"),), guid=guid_of("q1"))
    status, ctx = _apply(qm, ent, c)
    assert status == st.MQ_OK
    assert [(op.operation, op.status) for op in dir_ops(ctx)] == [("read", st.MQ_OK), ("update", st.MQ_OK)]


@covers("MC-MQDSRP", "3.1.7.2.3")
def test_failed_change_returns_its_status_and_changes_nothing():
    """"If rStatus is not MQ_OK: Take no further action": LastSeqNumber stays and the BSCs get nothing."""
    qm, ent = _replica()
    c = change(0, ENT, 5, 6, 0, queue_props("q1", guid_of("q1")), path="q1")  # already exists
    status, ctx = _apply(qm, ent, c)
    assert status != st.MQ_OK
    assert ent.last_seq_number == seq(5)
    assert qm.bsc_neighbors[0].available_changes == [] and messages(ctx) == []


@covers("MC-MQDSRP", "3.1.7.2.3")
def test_change_needing_a_flush_is_sent_to_each_bsc_at_once():
    """PURGE_STATE_NORMAL, iFlush and rNeedFlush true: append iChange, then Send Change Propagation (Intrasite) to the BSC."""
    qm, ent = _replica()
    qm.bsc_neighbors.append(DirectoryNeighbor(SITE1, "BSC12"))
    c = _pec_renamed(6)
    _, ctx = _apply(qm, ent, c)
    assert ent.authority_name == "PEC9"
    assert [(m.destination, m.body.changes) for m in messages(ctx)] == [(BSC, (c,)), ("BSC12", (c,))]
    assert all(isinstance(m.body, ChangePropagationMessage) and m.ack_requested is AckRequested.NONE
               for m in messages(ctx))
    assert all(n.available_changes == [] for n in qm.bsc_neighbors)


@covers("MC-MQDSRP", "3.1.7.2.3")
@pytest.mark.parametrize("reason", ["flush false", "no flush needed"])
def test_change_is_only_queued_for_the_bscs_without_both_flush_flags(reason):
    """iFlush false, or rNeedFlush false (a queue create): the change waits in AvailableChangeCollection."""
    qm, ent = _replica()
    if reason == "flush false":
        c, flush = _pec_renamed(6), False
    else:
        c, flush = change(0, ENT, 5, 6, 0, queue_props("q2", guid_of("q2")), path="q2"), True
    _, ctx = _apply(qm, ent, c, flush)
    assert messages(ctx) == []
    assert qm.bsc_neighbors[0].available_changes == [c]


@covers("MC-MQDSRP", "3.1.7.2.3")
def test_change_is_not_passed_on_outside_purge_state_normal():
    """"If iPartition.PurgeState is 0 (PURGE_STATE_NORMAL)" guards the BSC hand-over: in sync0 the BSCs get nothing."""
    qm, ent = _replica()
    ent.purge_state = PurgeState.SYNC0
    status, ctx = _apply(qm, ent, _pec_renamed(6))
    assert status == st.MQ_OK and ent.last_seq_number == seq(6)
    assert qm.bsc_neighbors[0].available_changes == [] and messages(ctx) == []


@covers("MC-MQDSRP", "3.1.7.2.3")
def test_purge_deleted_objects_runs_every_256_changes():
    """"If iPartition.LastSeqNumber > (iPartition.PreviousPurgedSeqNumber + 256)": purge, then PreviousPurgedSeqNumber := LastSeqNumber."""
    qm, ent = _replica(last=1999)
    ent.allowed_purge_seq_number = seq(1200)
    qm.deleted_objects = [tombstone(ENT, 500), tombstone(ENT, 990)]
    _apply(qm, ent, change(0, ENT, 1999, 2000, 0, queue_props("q2", guid_of("q2")), path="q2"))
    # a replica purges up to min(2000 - 1024, AllowedPurgeSeqNumber) = 976
    assert [d.seq_number for d in qm.deleted_objects] == [seq(990)]
    assert ent.previous_purged_seq_number == seq(2000)


@covers("MC-MQDSRP", "3.1.7.2.3")
def test_purge_deleted_objects_waits_until_more_than_256_changes():
    """LastSeqNumber = PreviousPurgedSeqNumber + 256 is not greater: no purge, PreviousPurgedSeqNumber stays."""
    qm, ent = _replica(last=1255)
    ent.previous_purged_seq_number = seq(1000)
    ent.allowed_purge_seq_number = seq(1200)
    qm.deleted_objects = [tombstone(ENT, 100)]
    _apply(qm, ent, change(0, ENT, 1255, 1256, 0, queue_props("q2", guid_of("q2")), path="q2"))
    assert len(qm.deleted_objects) == 1 and ent.previous_purged_seq_number == seq(1000)


@covers("MC-MQDSRP", "3.1.7.2.3")
def test_psc_acknowledges_when_the_eighth_byte_of_last_seq_number_is_zero():
    """A PSC raises Send PSC Ack to the partition's authority when LastSeqNumber's eighth byte is 0x00 (every 256 changes)."""
    qm, ent = _replica(last=255)
    _, ctx = _apply(qm, ent, change(0, ENT, 255, 256, 0, queue_props("q2", guid_of("q2")), path="q2"))
    [ack] = messages(ctx)
    assert ack.body == PSCAckMessage(SITE1, SITE1, ENT, seq(256), PSC)
    private = replication_queue_private(qm.identifier)
    assert (ack.destination, ack.time_to_reach_queue, ack.priority, ack.ack_requested, ack.admin_queue) == (
        PEC, 1200, 3, AckRequested.ACK_NACK_REACH_QUEUE, private)


@covers("MC-MQDSRP", "3.1.7.2.3")
def test_psc_does_not_acknowledge_other_sequence_numbers():
    """LastSeqNumber 257 ends in 0x01: no PSC Ack."""
    qm, ent = _replica(last=256)
    _, ctx = _apply(qm, ent, change(0, ENT, 256, 257, 0, queue_props("q2", guid_of("q2")), path="q2"))
    assert messages(ctx) == []


@covers("MC-MQDSRP", "3.1.7.2.3")
def test_bsc_never_sends_psc_ack():
    """"If the queue manager is a PSC": a BSC reaching LastSeqNumber 256 acknowledges nothing."""
    qm = bsc_node()
    ent = qm.find_partition(ENT)
    ent.last_seq_number = seq(255)
    status, ctx = _apply(qm, ent, change(0, ENT, 255, 256, 0, queue_props("q2", guid_of("q2")), path="q2"))
    assert status == st.MQ_OK and messages(ctx) == []


@covers("MC-MQDSRP", "3.1.7.2.3")
@pytest.mark.parametrize(("purged", "acked"), [(300, False), (256, True)])
def test_outside_purge_state_normal_psc_acknowledges_only_past_the_purged_number(purged, acked):
    """"If iPartition.PurgeState is 0 ... or iPartition.LastSeqNumber >= iPartition.PurgedSeqNumber": in sync0 only once caught up."""
    qm, ent = _replica(last=255)
    ent.purge_state = PurgeState.SYNC0
    ent.purged_seq_number = seq(purged)
    _, ctx = _apply(qm, ent, change(0, ENT, 255, 256, purged, queue_props("q2", guid_of("q2")), path="q2"))
    assert [type(m.body) for m in messages(ctx)] == ([PSCAckMessage] if acked else [])


@covers("MC-MQDSRP", "3.1.7.2.3")
def test_delete_whose_values_are_no_numbers_fails_without_stopping_the_server():
    """A decodable delete change whose first two values are text names no type or scope: Delete Directory Object fails, nothing else."""
    qm, ent = _replica()
    c = change(2, ENT, 5, 6, 0, queue_props("q1"), path="q1")
    status, ctx = _apply(qm, ent, c)
    assert status == st.MQ_ERROR
    assert [(op.operation, op.object_type) for op in dir_ops(ctx)] == [("delete", 0)]
    assert ent.last_seq_number == seq(5) and qm.directory.find(guid=guid_of("q1")) is not None
