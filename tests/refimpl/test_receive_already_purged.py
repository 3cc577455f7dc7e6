"""MC-MQDSRP 3.3.7.7 Receive Already Purged: start sync0 when the authority purged history this replica needs."""

from mqspec.model.guid import Guid
from mqspec.model.mqdsrp import AlreadyPurgedMessage, SyncRequestMessage
from mqspec.model.seqnum import MAX_SEQ_NUMBER, MIN_SEQ_NUMBER
from mqspec.refimpl.mqdsrp_client import receive_already_purged
from mqspec.refimpl.mqdsrp_state import PurgeState

from mqspec.clauses import covers

from .mqdsrp_fixtures_client import ENT, SITE0, bodies, ctx_for, partition, psc_qm, seq


def purged(n, partition_id=ENT):
    return AlreadyPurgedMessage(SITE0, partition_id, seq(n))


def replica(last, purged_seq):
    qm = psc_qm()
    p = partition(qm, ENT)
    p.last_seq_number, p.purged_seq_number = seq(last), seq(purged_seq)
    return qm, p


@covers("MC-MQDSRP", "3.3.7.7")
def test_a_message_for_an_unknown_partition_is_ignored():
    """"If dirPartition is not found: Take no further action"."""
    qm, _ = replica(3, 0)
    ctx = ctx_for(qm)
    receive_already_purged(qm, ctx, purged(10, Guid.from_name("site:nowhere")))
    assert ctx.effects == []


@covers("MC-MQDSRP", "3.3.7.7")
def test_a_replica_already_past_the_purge_point_ignores_it():
    """"If dirPartition.LastSeqNumber >= iAlreadyPurgedMessage.PurgedSeqNumber: Take no further action"."""
    qm, p = replica(10, 0)
    ctx = ctx_for(qm)
    receive_already_purged(qm, ctx, purged(10))
    assert ctx.effects == [] and p.purge_state is PurgeState.NORMAL


@covers("MC-MQDSRP", "3.3.7.7")
def test_a_replica_that_knows_the_purge_point_ignores_it():
    """"If dirPartition.PurgedSeqNumber >= iAlreadyPurgedMessage.PurgedSeqNumber: Take no further action"."""
    qm, p = replica(3, 10)
    ctx = ctx_for(qm)
    receive_already_purged(qm, ctx, purged(10))
    assert ctx.effects == [] and p.purge_state is PurgeState.NORMAL


@covers("MC-MQDSRP", "3.3.7.7")
def test_a_replica_behind_the_purge_point_starts_sync0_with_its_purged_seq_number():
    """"Raise a Start Sync0 State event"; iPurgedSeqNumber is the message's PurgedSeqNumber (E-134)."""
    qm, p = replica(3, 0)
    ctx = ctx_for(qm)
    receive_already_purged(qm, ctx, purged(10))
    assert (p.purge_state, p.last_seq_number, p.purged_seq_number, p.change_missing_window) == (
        PurgeState.SYNC0, MIN_SEQ_NUMBER, seq(10), MAX_SEQ_NUMBER)
    [request] = bodies(ctx, SyncRequestMessage)
    assert (request.is_sync0, request.known_purged_seq_number) == (True, seq(10))
