"""MC-MQDSRP 3.3.7.10 Start Sync0 State: mark the partition's objects deleted and ask the authority for all of it."""

from mqspec.model.guid import Guid
from mqspec.model.mqdsrp import Command, Scope, SyncRequestMessage
from mqspec.model.propids import ObjectType
from mqspec.model.seqnum import MAX_SEQ_NUMBER, MIN_SEQ_NUMBER
from mqspec.refimpl.effects import DirectoryOperation
from mqspec.refimpl.mqdsrp_client import start_sync0_state
from mqspec.refimpl.mqdsrp_state import DeletedObject, PurgeState

from mqspec.clauses import covers

from .mqdsrp_fixtures_client import (
    PEC,
    PSC1,
    SITE0,
    SITE1,
    change,
    ctx_for,
    expect_send,
    machine_properties,
    partition,
    psc_qm,
    seq,
    store_object,
)


def replica(last=3, purged=0):
    """PSC1's replica of site0 with machine A (seq 2), and its own site1 with machine B (seq 5)."""
    qm = psc_qm()
    p = partition(qm, SITE0)
    p.last_seq_number, p.purged_seq_number, p.change_missing_window = seq(last), seq(purged), MIN_SEQ_NUMBER
    p.pending_changes = [change(Command.CREATE, SITE0, 9, previous=8)]
    store_object(qm, ObjectType.MQDS_MACHINE, "A", machine_properties("A", SITE0), SITE0, 2)
    store_object(qm, ObjectType.MQDS_MACHINE, "B", machine_properties("B", SITE1), SITE1, 5)
    qm.deleted_objects = [DeletedObject(Guid.from_name("gone0"), SITE0, seq(3), int(ObjectType.MQDS_MACHINE), 0),
                          DeletedObject(Guid.from_name("gone1"), SITE1, seq(4), int(ObjectType.MQDS_MACHINE), 0)]
    return qm, p


@covers("MC-MQDSRP", "3.3.7.10")
def test_a_replica_already_past_the_purge_point_does_nothing():
    """"If dirPartition.LastSeqNumber >= iPurgedSeqNumber ...: Take no further action" (dirPartition is iPartition, E-134)."""
    qm, p = replica(last=10)
    ctx = ctx_for(qm)
    start_sync0_state(qm, ctx, p, seq(10))
    assert ctx.effects == []
    assert (p.purge_state, p.last_seq_number) == (PurgeState.NORMAL, seq(10))


@covers("MC-MQDSRP", "3.3.7.10")
def test_a_replica_that_knows_the_purge_point_does_nothing():
    """"... or dirPartition.PurgedSeqNumber >= iPurgedSeqNumber: Take no further action"."""
    qm, p = replica(last=3, purged=10)
    ctx = ctx_for(qm)
    start_sync0_state(qm, ctx, p, seq(10))
    assert ctx.effects == []
    assert len(p.pending_changes) == 1


@covers("MC-MQDSRP", "3.3.7.10")
def test_sync0_resets_the_partitions_replication_state():
    """LastSeqNumber MIN, ChangeMissingWindow MAX, PurgedSeqNumber := iPurgedSeqNumber, pending changes removed, SYNC0."""
    qm, p = replica()
    start_sync0_state(qm, ctx_for(qm), p, seq(10))
    assert (p.purge_state, p.last_seq_number, p.change_missing_window, p.purged_seq_number, p.pending_changes) == (
        PurgeState.SYNC0, MIN_SEQ_NUMBER, MAX_SEQ_NUMBER, seq(10), [])


@covers("MC-MQDSRP", "3.3.7.10")
def test_sync0_marks_only_this_partitions_objects_and_tombstones():
    """Reset Directory Partition operation 1 and "objDeleted.SeqNumber := MIN_SEQ_NUMBER" touch this partition only."""
    qm, p = replica()
    start_sync0_state(qm, ctx_for(qm), p, seq(10))
    seqs = {o.path_name: o.seq_number for o in qm.directory.objects.values()}
    assert seqs == {"A": MIN_SEQ_NUMBER, "B": seq(5)}
    assert [(d.partition_id, d.seq_number) for d in qm.deleted_objects] == [(SITE0, MIN_SEQ_NUMBER), (SITE1, seq(4))]


@covers("MC-MQDSRP", "3.3.7.10")
def test_sync0_resets_the_directory_then_asks_for_everything_with_is_sync0():
    """Effects in order: the Reset (operation 1), then a sync request From MIN To MAX, IsSync0 0x01, Known = new purged."""
    qm, p = replica()
    ctx = ctx_for(qm)
    start_sync0_state(qm, ctx, p, seq(10))
    request = SyncRequestMessage(SITE1, SITE0, MIN_SEQ_NUMBER, MAX_SEQ_NUMBER, seq(10), True, Scope.ENTERPRISE, PSC1)
    assert ctx.effects == [
        DirectoryOperation(PSC1, "reset1", 0, partition_id=SITE0),
        expect_send(qm, PEC, request, 20 * 60, 3, "AckNackReachQueue", acked_queues=True),
    ]
