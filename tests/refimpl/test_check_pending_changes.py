"""MC-MQDSRP 3.1.7.2.4 Check Pending Changes."""

from mqspec.model.mqdsrp import ChangePropagationMessage, SyncRequestMessage
from mqspec.model.propvalue import Property
from mqspec.refimpl.mqdsrp_common import check_pending_changes

from mqspec.clauses import covers

from .mqdsrp_fixtures import (
    BSC,
    ENT,
    ENTERPRISE,
    PEC,
    SITE1,
    DirectoryNeighbor,
    Mode,
    P,
    add_object,
    change,
    context,
    dir_ops,
    enterprise_props,
    guid_of,
    messages,
    psc_node,
    queue_props,
    seq,
)


def _replica(last=5, purged=0, window=20):
    qm = psc_node()
    ent = qm.find_partition(ENT)
    ent.last_seq_number, ent.purged_seq_number, ent.change_missing_window = seq(last), seq(purged), seq(window)
    return qm, ent


def _create(previous, at, purged=0):
    return change(0, ENT, previous, at, purged, queue_props(f"q{at}", guid_of(f"q{at}")), path=f"q{at}")


def _check(qm, ent, mode=Mode.CLARIFIED):
    ctx = context(qm, mode)
    check_pending_changes(qm, ctx, ent)
    return ctx


@covers("MC-MQDSRP", "3.1.7.2.4")
def test_pending_change_older_than_the_purge_horizon_is_removed_and_the_loop_continues():
    """"If dirPendingChange.PurgedSeqNumber < iPartition.PurgedSeqNumber: Remove ... Continue the loop"."""
    qm, ent = _replica(last=5, purged=2)
    ent.pending_changes = [_create(5, 6, purged=1), _create(5, 6, purged=2)]
    ctx = _check(qm, ent)
    assert ent.pending_changes == []
    assert [op.seq_number for op in dir_ops(ctx)] == [6]  # the second, equally numbered, was applied
    assert ent.last_seq_number == seq(6)


@covers("MC-MQDSRP", "3.1.7.2.4")
def test_pending_changes_that_follow_are_applied_in_order_with_flush():
    """A pending change whose PreviousSeqNumber is LastSeqNumber is removed and applied (Handle In-Sync Change, iFlush true), then the next."""
    qm, ent = _replica(last=5)
    qm.bsc_neighbors = [DirectoryNeighbor(SITE1, BSC)]
    add_object(qm, ENTERPRISE, "enterprise", guid_of("ent"), enterprise_props(PEC), ENT)
    rename = change(1, ENT, 6, 7, 0, (Property(P["PROPID_E_PECNAME"], "PEC9"),), path="enterprise")
    ent.pending_changes = [_create(5, 6), rename]
    ctx = _check(qm, ent)
    assert ent.pending_changes == [] and ent.last_seq_number == seq(7)
    # iFlush := true: the rename (rNeedFlush) goes to the BSC at once, with the queue create before it
    [sent] = messages(ctx)
    assert isinstance(sent.body, ChangePropagationMessage) and sent.body.changes == (_create(5, 6), rename)


@covers("MC-MQDSRP", "3.1.7.2.4")
def test_literal_pending_change_beyond_the_window_asks_for_the_gap_and_stops():
    """Literal: SeqNumber > LastSeqNumber and > ChangeMissingWindow: Send Sync Request up to the window and take no further action (E-110 nesting)."""
    qm, ent = _replica(last=5, window=8)
    beyond, after = _create(9, 10), _create(10, 11)
    ent.pending_changes = [beyond, after]
    ctx = _check(qm, ent, Mode.LITERAL)
    assert ent.pending_changes == [beyond, after] and ent.change_missing_window == seq(8)
    [sent] = messages(ctx)
    assert isinstance(sent.body, SyncRequestMessage)
    assert (sent.body.from_seq_number, sent.body.to_seq_number) == (seq(5), seq(8))
    assert dir_ops(ctx) == []


@covers("MC-MQDSRP", "3.1.7.2.4")
def test_clarified_pending_change_beyond_the_window_widens_the_window_and_asks_up_to_it():
    """Clarified (E-136): a gap before a change beyond ChangeMissingWindow widens the window to its SeqNumber, then Send Sync Request and stop."""
    qm, ent = _replica(last=5, window=8)
    beyond, after = _create(9, 10), _create(10, 11)
    ent.pending_changes = [beyond, after]
    ctx = _check(qm, ent)
    assert ent.pending_changes == [beyond, after] and ent.change_missing_window == seq(10)
    [sent] = messages(ctx)
    assert isinstance(sent.body, SyncRequestMessage)
    assert (sent.body.from_seq_number, sent.body.to_seq_number) == (seq(5), seq(10))
    assert dir_ops(ctx) == [] and ent.last_seq_number == seq(5)


@covers("MC-MQDSRP", "3.1.7.2.4")
def test_literal_pending_change_within_the_window_that_does_not_follow_is_removed_unapplied():
    """Literal: SeqNumber > LastSeqNumber within the window but PreviousSeqNumber is not LastSeqNumber: removed, not applied (E-110 reading)."""
    qm, ent = _replica(last=5, window=20)
    ent.pending_changes = [_create(8, 9)]
    ctx = _check(qm, ent, Mode.LITERAL)
    assert ent.pending_changes == [] and ent.last_seq_number == seq(5)
    assert ctx.effects == []


@covers("MC-MQDSRP", "3.1.7.2.4")
def test_clarified_pending_change_within_the_window_that_does_not_follow_is_kept_until_the_gap_fills():
    """Clarified (E-136): a change within the window after a gap stays queued, with no request (the window's is outstanding)."""
    qm, ent = _replica(last=5, window=20)
    waiting = _create(8, 9)
    ent.pending_changes = [waiting]
    ctx = _check(qm, ent)
    assert ent.pending_changes == [waiting] and ent.last_seq_number == seq(5)
    assert ent.change_missing_window == seq(20)
    assert ctx.effects == []


@covers("MC-MQDSRP", "3.1.7.2.4")
def test_pending_change_already_applied_is_removed_unapplied():
    """A pending change whose SeqNumber is <= LastSeqNumber is removed; its PreviousSeqNumber is not LastSeqNumber, so nothing runs."""
    qm, ent = _replica(last=5)
    ent.pending_changes = [_create(3, 4)]
    ctx = _check(qm, ent)
    assert ent.pending_changes == [] and ctx.effects == []


@covers("MC-MQDSRP", "3.1.7.2.4")
def test_empty_pending_collection_does_nothing():
    """No pending change: no request, no state change."""
    qm, ent = _replica()
    assert _check(qm, ent).effects == []
    assert ent.last_seq_number == seq(5)


@covers("MC-MQDSRP", "3.1.7.2.4")
def test_literal_in_order_pending_change_beyond_the_window_is_not_applied_but_asked_for_again():
    """Evidence (literal, both nesting readings): the window test comes before the PreviousSeqNumber test, so change 7 after 6 waits.

    Change 7 was queued while change 6 was pending (3.1.7.2.2 widens the window only for the first
    pending change); once 6 is applied, 7 follows LastSeqNumber yet lies beyond ChangeMissingWindow 6.
    """
    qm, ent = _replica(last=5, window=6)
    seven = _create(6, 7)
    ent.pending_changes = [_create(5, 6), seven]
    ctx = _check(qm, ent, Mode.LITERAL)
    assert ent.last_seq_number == seq(6) and ent.pending_changes == [seven]
    [sent] = messages(ctx)
    assert (sent.body.from_seq_number, sent.body.to_seq_number) == (seq(6), seq(6))


@covers("MC-MQDSRP", "3.1.7.2.4")
def test_clarified_in_order_pending_changes_beyond_the_window_are_applied():
    """Clarified (E-136): a change with PreviousSeqNumber <= LastSeqNumber < SeqNumber is applied before the window test, so 6 then 7 apply."""
    qm, ent = _replica(last=5, window=6)
    ent.pending_changes = [_create(5, 6), _create(6, 7)]
    ctx = _check(qm, ent)
    assert ent.last_seq_number == seq(7) and ent.pending_changes == []
    assert [(op.operation, op.seq_number) for op in dir_ops(ctx)] == [("create", 6), ("create", 7)]
    assert messages(ctx) == []


@covers("MC-MQDSRP", "3.1.7.2.4")
def test_clarified_in_order_pending_change_is_applied_with_the_window_at_min():
    """Clarified (E-136): after a sync reply reset the window to MIN, an in-order pending change is applied, not asked for as [LastSeqNumber, MIN]."""
    qm, ent = _replica(last=5, window=0)
    ent.pending_changes = [_create(5, 6)]
    ctx = _check(qm, ent)
    assert ent.last_seq_number == seq(6) and ent.pending_changes == []
    assert messages(ctx) == [] and [op.seq_number for op in dir_ops(ctx)] == [6]
