"""MC-MQDSRP 3.3.7.5 Receive Sync Reply: apply the changes, then move the sync0 state or the missing window on."""

import pytest
from mqspec.model.guid import Guid
from mqspec.model.mqdsrp import (
    Command,
    CompleteSync0,
    SyncReplyMessage,
    SyncRequestMessage,
)
from mqspec.model.propids import ObjectType
from mqspec.model.seqnum import MAX_SEQ_NUMBER, MIN_SEQ_NUMBER
from mqspec.refimpl.effects import Mode
from mqspec.refimpl.mqdsrp_client import receive_sync_reply
from mqspec.refimpl.mqdsrp_state import PurgeState

from mqspec.clauses import covers

from .mqdsrp_fixtures_client import (
    BSC11,
    ENT,
    MODES,
    PEC,
    PSC2,
    SITE0,
    SITE2,
    bodies,
    change,
    ctx_for,
    directory_ops,
    machine_properties,
    partition,
    psc_qm,
    sent,
    seq,
    site_properties,
    store_object,
)


def reply(partition_id, from_seq, to_seq, *changes, purged=0, complete=CompleteSync0.NOT_IN_SYNC0):
    return SyncReplyMessage(SITE0, partition_id, seq(from_seq), seq(to_seq), seq(purged), complete, tuple(changes))


def machine(n, previous=None, purged=0):
    return change(Command.SYNC, SITE0, n, previous=previous, purged=purged,
                  properties=machine_properties(f"M{n}", SITE0), guid=Guid.from_name(f"qm:M{n}"))


def replica(last=0, window=MAX_SEQ_NUMBER, purged=0, state=PurgeState.NORMAL):
    qm = psc_qm()
    p = partition(qm, SITE0)
    p.last_seq_number, p.change_missing_window, p.purged_seq_number = seq(last), window, seq(purged)
    p.purge_state = state
    return qm, p


@covers("MC-MQDSRP", "3.3.7.5")
def test_a_reply_for_an_unknown_partition_is_ignored():
    """"If dirPartition is not found: Take no further action"."""
    qm, _ = replica()
    ctx = ctx_for(qm)
    receive_sync_reply(qm, ctx, reply(SITE2, 0, 1, change(Command.SYNC, SITE2, 1,
                                                        properties=machine_properties("M", SITE2), path="M")))
    assert ctx.effects == []


@covers("MC-MQDSRP", "3.3.7.5")
def test_a_reply_purged_below_the_replica_is_ignored():
    """"If ...SyncReplyHeader.PurgedSeqNumber < dirPartition.PurgedSeqNumber: Take no further action": nothing applied."""
    qm, p = replica(purged=5, last=5)
    ctx = ctx_for(qm)
    receive_sync_reply(qm, ctx, reply(SITE0, 5, 6, machine(6, purged=4), purged=4))
    assert ctx.effects == []
    assert (p.last_seq_number, p.change_missing_window) == (seq(5), MAX_SEQ_NUMBER)


@covers("MC-MQDSRP", "3.3.7.5")
def test_the_changes_are_applied_in_chain_order():
    """Each DirectoryChange is processed (3.1.5.2); a chained reply is applied whole."""
    qm, p = replica()
    receive_sync_reply(qm, ctx_for(qm), reply(SITE0, 0, 3, machine(1, 0), machine(3, 1)))
    assert p.last_seq_number == seq(3)
    assert {o.path_name for o in qm.directory.objects_in(SITE0)} == {"M1", "M3"}


@covers("MC-MQDSRP", "3.3.7.5")
def test_a_sync_reply_sets_icheckflush_so_a_new_site_is_flushed_to_the_bscs():
    """3.1.5.2: "If it is a Receive Sync Reply event, set iCheckFlush to true"."""
    qm = psc_qm()
    new_site = change(Command.CREATE, ENT, 1, properties=site_properties("site2", SITE2, PSC2), path="site2")
    ctx = ctx_for(qm)
    receive_sync_reply(qm, ctx, SyncReplyMessage(SITE0, ENT, seq(0), seq(1), seq(0), CompleteSync0.NOT_IN_SYNC0,
                                                 (new_site,)))
    assert [e.body.changes for e in sent(ctx) if e.destination == BSC11] == [(new_site,)]


@covers("MC-MQDSRP", "3.3.7.5")
def test_the_first_reply_after_initialization_closes_the_max_window():
    """NORMAL and ChangeMissingWindow MAX_SEQ_NUMBER: "Set dirPartition.ChangeMissingWindow to MIN_SEQ_NUMBER"."""
    qm, p = replica()
    receive_sync_reply(qm, ctx_for(qm), reply(SITE0, 0, 1, machine(1, 0)))
    assert (p.change_missing_window, p.last_seq_number) == (MIN_SEQ_NUMBER, seq(1))


@covers("MC-MQDSRP", "3.3.7.5")
def test_an_empty_reply_answering_the_window_moves_last_seq_number_to_to_seq_number():
    """Count 0 and ChangeMissingWindow = toSeqNumber: window to MIN, LastSeqNumber to toSeqNumber (E-128)."""
    qm, p = replica(last=3, window=seq(8))
    ctx = ctx_for(qm)
    receive_sync_reply(qm, ctx, reply(SITE0, 3, 8))
    assert (p.change_missing_window, p.last_seq_number) == (MIN_SEQ_NUMBER, seq(8))
    assert ctx.effects == []


@covers("MC-MQDSRP", "3.3.7.5")
def test_a_stale_empty_reply_moves_nothing():
    """Count 0 but ChangeMissingWindow is not toSeqNumber: the window and LastSeqNumber stay (E-128, both modes)."""
    qm, p = replica(last=3, window=seq(8))
    receive_sync_reply(qm, ctx_for(qm), reply(SITE0, 3, 5))
    assert (p.change_missing_window, p.last_seq_number) == (seq(8), seq(3))


@covers("MC-MQDSRP", "3.3.7.5")
def test_a_reply_with_changes_keeps_a_finite_window():
    """Count > 0 with a finite window: the changes move LastSeqNumber, the window stays."""
    qm, p = replica(last=3, window=seq(8))
    receive_sync_reply(qm, ctx_for(qm), reply(SITE0, 3, 8, machine(5, 3)))
    assert (p.change_missing_window, p.last_seq_number) == (seq(8), seq(5))


@covers("MC-MQDSRP", "3.3.7.5")
def test_check_pending_changes_applies_a_queued_change_that_is_now_in_order():
    """NORMAL: "Raise a Check Pending Changes event": a pending change whose predecessor just arrived is applied."""
    qm, p = replica(last=3, window=seq(6))
    p.pending_changes = [machine(6, 4)]
    receive_sync_reply(qm, ctx_for(qm), reply(SITE0, 3, 6, machine(4, 3)))
    assert p.last_seq_number == seq(6)
    assert p.pending_changes == []
    assert qm.directory.find(guid=Guid.from_name("qm:M6")) is not None


@covers("MC-MQDSRP", "3.3.7.5")
@pytest.mark.parametrize("mode", MODES)
def test_an_in_order_pending_change_beyond_the_window_is_applied_only_in_clarified_mode(mode):
    """E-136: after the reply fills the gap, the queued change 6 (PreviousSeqNumber 5) is applied in clarified mode; literally it is asked for again."""
    qm, p = replica(last=3, window=seq(5))
    queued = machine(6, 5)
    p.pending_changes = [queued]
    ctx = ctx_for(qm, mode)
    receive_sync_reply(qm, ctx, reply(SITE0, 3, 5, machine(4, 3), machine(5, 4)))
    requests = [(r.from_seq_number, r.to_seq_number) for r in bodies(ctx, SyncRequestMessage)]
    if mode is Mode.CLARIFIED:
        assert (p.last_seq_number, p.pending_changes, p.change_missing_window) == (seq(6), [], seq(5))
        # applying 4 leaves a gap before 6, but (4, 5] is within the window already asked for: no request
        assert requests == []
    else:
        # the window test comes first: 6 > ChangeMissingWindow 5 asks after 4, after 5 and after the reply
        assert (p.last_seq_number, p.pending_changes, p.change_missing_window) == (seq(5), [queued], seq(5))
        assert requests == [(seq(4), seq(5)), (seq(5), seq(5)), (seq(5), seq(5))]


@covers("MC-MQDSRP", "3.3.7.5")
def test_a_reply_that_fills_the_gap_before_a_pending_change_sends_no_request():
    """Clarified: the reply carries every change up to the queued change 6, so nothing is missing and no sync request is sent."""
    qm, p = replica(last=3, window=seq(5))
    p.pending_changes = [machine(6, 5)]
    ctx = ctx_for(qm)
    receive_sync_reply(qm, ctx, reply(SITE0, 3, 5, machine(4, 3), machine(5, 4)))
    assert (p.last_seq_number, p.pending_changes) == (seq(6), [])
    assert bodies(ctx, SyncRequestMessage) == []


@covers("MC-MQDSRP", "3.3.7.5")
def test_literal_an_empty_reply_for_a_min_window_moves_last_seq_number_back_to_min():
    """Evidence (literal, E-166): ChangeMissingWindow MIN equals a reply's ToSeqNumber MIN, so LastSeqNumber := MIN.

    Check Pending Changes sends ToSeqNumber := ChangeMissingWindow even when the window is MIN (none outstanding).
    """
    qm, p = replica(last=6, window=MIN_SEQ_NUMBER)
    receive_sync_reply(qm, ctx_for(qm, Mode.LITERAL), reply(SITE0, 6, 0))
    assert (p.last_seq_number, p.change_missing_window) == (MIN_SEQ_NUMBER, MIN_SEQ_NUMBER)


@covers("MC-MQDSRP", "3.3.7.5")
def test_clarified_an_empty_reply_for_a_min_window_keeps_last_seq_number():
    """Clarified (E-166): an empty reply never moves LastSeqNumber backwards; the window stays MIN."""
    qm, p = replica(last=6, window=MIN_SEQ_NUMBER)
    ctx = ctx_for(qm)
    receive_sync_reply(qm, ctx, reply(SITE0, 6, 0))
    assert (p.last_seq_number, p.change_missing_window) == (seq(6), MIN_SEQ_NUMBER)
    assert ctx.effects == []


@covers("MC-MQDSRP", "3.3.7.5")
def test_in_sync0_a_completed_reply_completes_sync0():
    """PURGE_STATE_SYNC0 and CompleteSync0 2 (E-127): Complete Sync0 State deletes what was not resent."""
    qm, p = replica(state=PurgeState.SYNC0, purged=2)
    store_object(qm, ObjectType.MQDS_MACHINE, "old", machine_properties("old", SITE0), SITE0, 0)
    ctx = ctx_for(qm)
    receive_sync_reply(qm, ctx, reply(SITE0, 0, 3, machine(3, 0, purged=2), purged=2,
                                      complete=CompleteSync0.COMPLETED))
    assert (p.purge_state, p.change_missing_window, p.last_seq_number) == (PurgeState.NORMAL, MIN_SEQ_NUMBER, seq(3))
    assert [o.path_name for o in qm.directory.objects_in(SITE0)] == ["M3"]
    assert [op.operation for op in directory_ops(ctx)][-1] == "reset2"


@covers("MC-MQDSRP", "3.3.7.5")
def test_in_sync0_a_completing_reply_asks_for_more():
    """CompleteSync0 1: "There are more updates for this partition. Raise a Send Sync Request event" (IsSync0 0x01)."""
    qm, p = replica(state=PurgeState.SYNC0, purged=2)
    ctx = ctx_for(qm)
    receive_sync_reply(qm, ctx, reply(SITE0, 0, 3, machine(3, 0, purged=2), purged=2,
                                      complete=CompleteSync0.COMPLETING))
    assert p.purge_state is PurgeState.SYNC0
    [request] = bodies(ctx, SyncRequestMessage)
    assert (request.from_seq_number, request.is_sync0, request.known_purged_seq_number) == (seq(3), True, seq(2))
    assert [e.destination for e in sent(ctx)] == [PEC]


@covers("MC-MQDSRP", "3.3.7.5")
def test_in_sync0_a_reply_not_for_sync0_changes_no_state():
    """CompleteSync0 0 (an older, incremental request's reply) in sync0: changes applied, nothing else."""
    qm, p = replica(state=PurgeState.SYNC0)
    ctx = ctx_for(qm)
    receive_sync_reply(qm, ctx, reply(SITE0, 0, 1, machine(1, 0)))
    assert (p.purge_state, p.change_missing_window) == (PurgeState.SYNC0, MAX_SEQ_NUMBER)
    assert sent(ctx) == []


@covers("MC-MQDSRP", "3.3.7.5")
@pytest.mark.parametrize("state", [PurgeState.STARTSYNC0, PurgeState.COMPLETESYNC0])
def test_in_other_purge_states_only_the_changes_are_processed(state):
    """Neither SYNC0 nor NORMAL: no purge-state update, no window change, no request."""
    qm, p = replica(state=state)
    ctx = ctx_for(qm)
    receive_sync_reply(qm, ctx, reply(SITE0, 0, 1, machine(1, 0), complete=CompleteSync0.COMPLETED))
    assert (p.purge_state, p.change_missing_window, p.last_seq_number) == (state, MAX_SEQ_NUMBER, seq(1))
    assert sent(ctx) == []
