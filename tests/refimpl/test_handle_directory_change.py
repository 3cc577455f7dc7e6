"""MC-MQDSRP 3.1.7.2.2 Handle Directory Change: apply in order, or queue and ask for the gap."""

import pytest
from mqspec.model.mqdsrp import Scope, SyncRequestMessage
from mqspec.model.seqnum import MAX_SEQ_NUMBER
from mqspec.refimpl import status as st
from mqspec.refimpl.effects import AckRequested, Mode
from mqspec.refimpl.mqdsrp_base import replication_queue_private
from mqspec.refimpl.mqdsrp_common import handle_directory_change

from mqspec.clauses import covers

from .mqdsrp_fixtures import (
    ENT,
    PEC,
    PSC,
    SITE1,
    change,
    context,
    dir_ops,
    guid_of,
    messages,
    psc_node,
    queue_props,
    seq,
)


def _replica(last=5, purged=0, window=None):
    """PSC1's replica of the enterprise partition at ``last``; the window MIN unless given (after the first sync)."""
    qm = psc_node()
    ent = qm.find_partition(ENT)
    ent.last_seq_number, ent.purged_seq_number = seq(last), seq(purged)
    ent.change_missing_window = seq(0) if window is None else window
    return qm, ent


def _create(previous, at, purged=0, name=None):
    name = name or f"q{at}"
    return change(0, ENT, previous, at, purged, queue_props(name, guid_of(name)), path=name)


def _handle(qm, partition, c, check_flush=True, mode=Mode.CLARIFIED):
    ctx = context(qm, mode)
    handle_directory_change(qm, ctx, partition, c, check_flush)
    return ctx


@covers("MC-MQDSRP", "3.1.7.2.2")
def test_change_already_applied_takes_no_action():
    """"If iChange.SeqNumber <= iPartition.LastSeqNumber ...: Take no further action"."""
    qm, ent = _replica(last=5)
    for c in (_create(4, 5), _create(2, 3)):
        assert _handle(qm, ent, c).effects == []
    assert ent.last_seq_number == seq(5) and ent.pending_changes == []


@covers("MC-MQDSRP", "3.1.7.2.2")
def test_change_older_than_the_purge_horizon_takes_no_action():
    """"... or iChange.PurgedSeqNumber < iPartition.PurgedSeqNumber: Take no further action", even when it is in order."""
    qm, ent = _replica(last=5, purged=4)
    assert _handle(qm, ent, _create(5, 6, purged=3)).effects == []
    assert ent.last_seq_number == seq(5) and ent.pending_changes == []


@covers("MC-MQDSRP", "3.1.7.2.2")
def test_change_following_the_last_one_is_applied():
    """PreviousSeqNumber = LastSeqNumber: Handle In-Sync Change applies it and LastSeqNumber moves to its SeqNumber."""
    qm, ent = _replica(last=5)
    ctx = _handle(qm, ent, _create(5, 6))
    assert ent.last_seq_number == seq(6)
    assert [(op.operation, op.path_name, op.seq_number, op.status) for op in dir_ops(ctx)] == [
        ("create", "q6", 6, st.MQ_OK)]


@covers("MC-MQDSRP", "3.1.7.2.2")
def test_change_overlapping_the_last_one_is_applied():
    """"If iChange.PreviousSeqNumber <= iPartition.LastSeqNumber": a change whose predecessor is older than LastSeqNumber is in sync too."""
    qm, ent = _replica(last=5)
    _handle(qm, ent, _create(2, 9))
    assert ent.last_seq_number == seq(9)


@covers("MC-MQDSRP", "3.1.7.2.2")
def test_applied_change_lets_check_pending_changes_apply_the_queued_next_one():
    """After an in-sync change Check Pending Changes runs: a queued change that now follows is applied."""
    qm, ent = _replica(last=5, window=MAX_SEQ_NUMBER)
    ent.pending_changes = [_create(6, 7)]
    ctx = _handle(qm, ent, _create(5, 6))
    assert ent.last_seq_number == seq(7) and ent.pending_changes == []
    assert [op.path_name for op in dir_ops(ctx)] == ["q6", "q7"]


@covers("MC-MQDSRP", "3.1.7.2.2")
def test_failed_in_sync_change_does_not_check_pending_changes():
    """"If rStatus of the Handle In-Sync Change event is not MQ_OK: Take no further action" (the pending collection is left alone)."""
    qm, ent = _replica(last=5)
    stale = _create(3, 4)  # Check Pending Changes would remove it: its SeqNumber is <= LastSeqNumber
    ent.pending_changes = [stale]
    update_of_nothing = change(1, ENT, 5, 6, 0, queue_props("missing"), path="missing")
    ctx = _handle(qm, ent, update_of_nothing)
    assert [(op.operation, op.status) for op in dir_ops(ctx)] == [("update", st.MQDS_OBJECT_NOT_FOUND)]
    assert ent.last_seq_number == seq(5) and ent.pending_changes == [stale]


@covers("MC-MQDSRP", "3.1.7.2.2")
def test_first_out_of_order_change_beyond_the_window_is_queued_and_the_gap_requested():
    """Empty PendingChangeCollection and SeqNumber > ChangeMissingWindow: queue it, widen the window, Send Sync Request (E-109 nesting)."""
    qm, ent = _replica(last=5, window=seq(0))
    c = _create(8, 9)
    ctx = _handle(qm, ent, c)
    assert ent.pending_changes == [c] and ent.change_missing_window == seq(9)
    assert ent.last_seq_number == seq(5)
    [sent] = messages(ctx)
    assert sent.body == SyncRequestMessage(SITE1, ENT, seq(5), seq(9), seq(0), False, Scope.ENTERPRISE, PSC)
    private = replication_queue_private(qm.identifier)
    assert (sent.destination, sent.time_to_reach_queue, sent.priority, sent.ack_requested, sent.admin_queue,
            sent.response_queue) == (PEC, 1200, 3, AckRequested.ACK_NACK_REACH_QUEUE, private, private)


@covers("MC-MQDSRP", "3.1.7.2.2")
def test_first_out_of_order_change_within_the_window_is_queued_without_request():
    """Empty PendingChangeCollection, SeqNumber <= ChangeMissingWindow (a gap already asked for): queue it, ask nothing."""
    qm, ent = _replica(last=5, window=seq(12))
    c = _create(8, 9)
    ctx = _handle(qm, ent, c)
    assert ent.pending_changes == [c] and ent.change_missing_window == seq(12)
    assert ctx.effects == []


@covers("MC-MQDSRP", "3.1.7.2.2")
@pytest.mark.parametrize("mode", [Mode.CLARIFIED, Mode.LITERAL])
def test_first_out_of_order_change_with_a_window_of_max_asks_for_the_gap_only_when_clarified(mode):
    """E-311: with the window MAX (the request for everything unanswered) clarified mode asks for (5, 9] at once; literal waits."""
    qm, ent = _replica(last=5, window=MAX_SEQ_NUMBER)
    c = _create(8, 9)
    ctx = _handle(qm, ent, c, mode=mode)
    assert ent.pending_changes == [c]
    if mode is Mode.CLARIFIED:
        assert ent.change_missing_window == seq(9)
        assert [(m.body.from_seq_number, m.body.to_seq_number) for m in messages(ctx)] == [(seq(5), seq(9))]
    else:
        assert ent.change_missing_window == MAX_SEQ_NUMBER and messages(ctx) == []


@covers("MC-MQDSRP", "3.1.7.2.2")
def test_further_out_of_order_changes_are_queued_in_sequence_order():
    """Fewer than 100 pending and no pending change with that SeqNumber: append, then sort by SeqNumber ascending."""
    qm, ent = _replica(last=5, window=seq(20))
    first, second, third = _create(11, 12), _create(8, 9), _create(14, 15)
    ent.pending_changes = [first]
    for c in (third, second):
        assert _handle(qm, ent, c).effects == []
    assert ent.pending_changes == [second, first, third]
    assert ent.change_missing_window == seq(20)


@covers("MC-MQDSRP", "3.1.7.2.2")
def test_out_of_order_change_with_a_queued_sequence_number_is_not_queued_twice():
    """"If no element ... whose SeqNumber field matches iChange.SeqNumber": a second change with that number is dropped."""
    qm, ent = _replica(last=5)
    queued = _create(8, 9)
    ent.pending_changes = [queued]
    _handle(qm, ent, _create(8, 9, name="other"))
    assert ent.pending_changes == [queued]


@covers("MC-MQDSRP", "3.1.7.2.2")
def test_out_of_order_change_is_dropped_when_100_are_pending():
    """"Else: Take no further action" once the PendingChangeCollection holds 100 changes."""
    qm, ent = _replica(last=5)
    ent.pending_changes = [_create(n, n + 1) for n in range(10, 110)]
    ctx = _handle(qm, ent, _create(7, 8))
    assert len(ent.pending_changes) == 100 and all(p.seq_number != seq(8) for p in ent.pending_changes)
    assert ctx.effects == []
