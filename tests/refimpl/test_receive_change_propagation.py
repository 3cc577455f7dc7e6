"""MC-MQDSRP 3.2.7.1 Receive Change Propagation: apply the changes, then read the SeqNumberHeader."""

import pytest
from mqspec.model.mqdsrp import (
    ChangePropagationMessage,
    PartitionSeqNumbers,
    Scope,
    SeqNumberHeader,
    SyncRequestMessage,
)
from mqspec.model.propids import ObjectType
from mqspec.model.seqnum import MAX_SEQ_NUMBER, MIN_SEQ_NUMBER
from mqspec.refimpl.effects import Mode
from mqspec.refimpl.mqdsrp_server import receive_change_propagation
from mqspec.refimpl.mqdsrp_state import PurgeState

from mqspec.clauses import covers

from .mqdsrp_fixtures_client import (
    BSC11,
    ENT,
    PEC,
    PSC1,
    PSC2,
    SITE0,
    SITE1,
    SITE2,
    bodies,
    bsc_qm,
    change,
    ctx_for,
    expect_send,
    machine_properties,
    partition,
    psc_qm,
    sent,
    seq,
    site_properties,
)

NO_HEADER = SeqNumberHeader(None, ())


def propagation(*changes, flush=False, header=NO_HEADER):
    return ChangePropagationMessage(SITE0, flush, tuple(changes), header)


def header(machine, *entries):
    return SeqNumberHeader(machine, tuple(PartitionSeqNumbers(pid, seq(last), seq(purged)) for pid, last, purged in entries))


def ready(qm, partition_id, last=0, purged=0, allowed=0):
    """A replica that finished its initial synchronization (ChangeMissingWindow back to MIN)."""
    p = partition(qm, partition_id)
    p.last_seq_number, p.purged_seq_number, p.allowed_purge_seq_number = seq(last), seq(purged), seq(allowed)
    p.change_missing_window = MIN_SEQ_NUMBER
    return p


@covers("MC-MQDSRP", "3.2.7.1")
def test_each_change_is_processed_into_its_partition():
    """"For each DirectoryChange ... Process dirChange as specified in section 3.1.5.2": an in-order change is applied."""
    qm = psc_qm()
    site0 = ready(qm, SITE0)
    ctx = ctx_for(qm)
    receive_change_propagation(qm, ctx, propagation(
        change(0, SITE0, 1, properties=machine_properties("M0", SITE0), path="M0"),
        change(0, SITE0, 2, properties=machine_properties("M1", SITE0), path="M1"),
    ))
    assert site0.last_seq_number == seq(2)
    assert {o.path_name for o in qm.directory.objects_in(SITE0)} == {"M0", "M1"}
    assert sent(ctx) == []  # machine creates need no flush; no header: nothing is sent


@covers("MC-MQDSRP", "3.2.7.1")
def test_a_change_of_an_unknown_partition_is_ignored():
    """3.1.5.2 "If dirPartition is not found: Take no further action" for that change only."""
    qm = psc_qm()
    site0 = ready(qm, SITE0)
    ctx = ctx_for(qm)
    receive_change_propagation(qm, ctx, propagation(
        change(0, SITE2, 1, properties=machine_properties("M2", SITE2), path="M2"),
        change(0, SITE0, 1, properties=machine_properties("M0", SITE0), path="M0"),
    ))
    assert qm.find_partition(SITE2) is None
    assert site0.last_seq_number == seq(1)
    assert [o.path_name for o in qm.directory.objects.values()] == ["M0"]


@covers("MC-MQDSRP", "3.2.7.1")
def test_flush_0x00_sets_icheckflush_and_flushes_to_the_bscs():
    """Flush 0x00 gives iCheckFlush true (3.1.5.2): a change needing a flush is sent to the BSCs at once."""
    qm = psc_qm()
    ready(qm, ENT)
    new_site = change(0, ENT, 1, properties=site_properties("site2", SITE2, PSC2), path="site2")
    ctx = ctx_for(qm)
    receive_change_propagation(qm, ctx, propagation(new_site, flush=False))
    to_bsc = [e for e in sent(ctx) if e.destination == BSC11]
    assert [e.body.changes for e in to_bsc] == [(new_site,)]
    assert to_bsc[0].body.flush is False
    assert qm.find_partition(SITE2) is not None


@covers("MC-MQDSRP", "3.2.7.1")
def test_flush_0x01_clears_icheckflush_and_waits_for_the_timer():
    """Flush 0x01 gives iCheckFlush false: the change waits in the BSC neighbor's AvailableChangeCollection."""
    qm = psc_qm()
    ready(qm, ENT)
    new_site = change(0, ENT, 1, properties=site_properties("site2", SITE2, PSC2), path="site2")
    ctx = ctx_for(qm)
    receive_change_propagation(qm, ctx, propagation(new_site, flush=True))
    assert [e for e in sent(ctx) if e.destination == BSC11] == []
    assert qm.bsc_neighbors[0].available_changes == [new_site]


@covers("MC-MQDSRP", "3.2.7.1")
def test_a_header_with_count_0_does_nothing_more():
    """"If iChangePropagationMessage.SeqNumberHeader.Count > 0" is false: no sync request, no state change."""
    qm = psc_qm()
    ent = ready(qm, ENT)
    ctx = ctx_for(qm)
    receive_change_propagation(qm, ctx, propagation())
    assert ctx.effects == []
    assert (ent.allowed_purge_seq_number, ent.change_missing_window) == (MIN_SEQ_NUMBER, MIN_SEQ_NUMBER)


@covers("MC-MQDSRP", "3.2.7.1")
def test_a_header_entry_of_an_unknown_partition_is_skipped():
    """"If dirPartition is not found: Continue with the next element"; the next element is still processed."""
    qm = psc_qm()
    ent = ready(qm, ENT)
    ctx = ctx_for(qm)
    receive_change_propagation(qm, ctx, propagation(header=header(PEC, (SITE2, 5, 0), (ENT, 5, 0))))
    assert [type(b) for b in bodies(ctx)] == [SyncRequestMessage]
    assert bodies(ctx)[0].partition_id == ENT
    assert ent.change_missing_window == seq(5)


@covers("MC-MQDSRP", "3.2.7.1")
def test_a_header_entry_purged_below_the_replica_is_skipped():
    """"If seqNumber.PurgedSeqNumber < dirPartition.PurgedSeqNumber: Continue": nothing changes, nothing is sent."""
    qm = psc_qm()
    ent = ready(qm, ENT, purged=4, allowed=4)
    ctx = ctx_for(qm)
    receive_change_propagation(qm, ctx, propagation(header=header(PEC, (ENT, 50, 3))))
    assert ctx.effects == []
    assert (ent.allowed_purge_seq_number, ent.change_missing_window, ent.authority_name) == (
        seq(4), MIN_SEQ_NUMBER, PEC)


@covers("MC-MQDSRP", "3.2.7.1")
def test_a_larger_purged_number_raises_allowed_purge_seq_number():
    """"If seqNumber.PurgedSeqNumber > dirPartition.AllowedPurgeNumber: Set ... to seqNumber.PurgedSeqNumber" (E-002)."""
    qm = psc_qm()
    ent = ready(qm, ENT, last=10, allowed=2)
    ctx = ctx_for(qm)
    receive_change_propagation(qm, ctx, propagation(header=header(PEC, (ENT, 10, 6))))
    assert ent.allowed_purge_seq_number == seq(6)
    assert ctx.effects == []  # LastSeqNumber is not behind: no sync request


@covers("MC-MQDSRP", "3.2.7.1")
def test_a_smaller_purged_number_leaves_allowed_purge_seq_number():
    """AllowedPurgeSeqNumber never moves back: a header purged number below it is not copied."""
    qm = psc_qm()
    ent = ready(qm, ENT, last=10, allowed=8)
    receive_change_propagation(qm, ctx_for(qm), propagation(header=header(PEC, (ENT, 10, 6))))
    assert ent.allowed_purge_seq_number == seq(8)


@covers("MC-MQDSRP", "3.2.7.1")
def test_a_header_not_ahead_of_the_replica_sends_no_sync_request():
    """"If seqNumber.LastSeqNumber <= dirPartition.LastSeqNumber ...: Continue": no authority change, no request."""
    qm = psc_qm()
    ent = ready(qm, ENT, last=10)
    ctx = ctx_for(qm)
    receive_change_propagation(qm, ctx, propagation(header=header("PEC-new", (ENT, 10, 0))))
    assert ctx.effects == []
    assert ent.authority_name == PEC


@covers("MC-MQDSRP", "3.2.7.1")
@pytest.mark.parametrize("mode", [Mode.CLARIFIED, Mode.LITERAL])
def test_a_header_below_the_missing_window_sends_no_sync_request(mode):
    """"... or seqNumber.LastSeqNumber < dirPartition.ChangeMissingWindow: Continue" (already asked for)."""
    qm = psc_qm()
    ent = ready(qm, ENT, last=2)
    ent.change_missing_window = seq(9)
    ctx = ctx_for(qm, mode)
    receive_change_propagation(qm, ctx, propagation(header=header(PEC, (ENT, 8, 0))))
    assert ctx.effects == []
    assert ent.change_missing_window == seq(9)


@covers("MC-MQDSRP", "3.2.7.1")
def test_after_initialization_the_max_window_suppresses_header_sync_requests():
    """Literal E-264: ChangeMissingWindow is MAX_SEQ_NUMBER until the first sync reply: every header entry is below it."""
    qm = psc_qm()
    ctx = ctx_for(qm, Mode.LITERAL)
    receive_change_propagation(qm, ctx, propagation(header=header(PEC, (ENT, 8, 0))))
    assert ctx.effects == []
    assert partition(qm, ENT).change_missing_window == MAX_SEQ_NUMBER


@covers("MC-MQDSRP", "3.2.7.1")
def test_clarified_a_max_window_lets_a_header_ask_again():
    """Clarified E-264: with the window at MAX (its reply may be lost) a header ahead asks once more, up to its LastSeqNumber."""
    qm = psc_qm()
    ent = partition(qm, ENT)
    ctx = ctx_for(qm)
    receive_change_propagation(qm, ctx, propagation(header=header("PEC-new", (ENT, 8, 0))))
    assert (ent.change_missing_window, ent.authority_name) == (seq(8), "PEC-new")
    request = SyncRequestMessage(SITE1, ENT, seq(0), seq(8), seq(0), False, Scope.ENTERPRISE, PSC1)
    assert ctx.effects == [expect_send(qm, "PEC-new", request, 20 * 60, 3, "AckNackReachQueue", acked_queues=True)]


@covers("MC-MQDSRP", "3.2.7.1")
def test_clarified_a_max_window_asks_again_then_each_header_asks_once():
    """Clarified E-264: the new window is the header's LastSeqNumber (E-116); the next header naming it asks once more, in case that reply is lost too."""
    qm = psc_qm()
    receive_change_propagation(qm, ctx_for(qm), propagation(header=header(PEC, (ENT, 8, 0))))
    again = ctx_for(qm)
    receive_change_propagation(qm, again, propagation(header=header(PEC, (ENT, 8, 0))))
    assert [(b.from_seq_number, b.to_seq_number) for b in bodies(again)] == [(seq(0), seq(8))]
    assert partition(qm, ENT).change_missing_window == seq(8)


@covers("MC-MQDSRP", "3.2.7.1")
@pytest.mark.parametrize("mode", [Mode.CLARIFIED, Mode.LITERAL])
@pytest.mark.parametrize("state", [PurgeState.STARTSYNC0, PurgeState.COMPLETESYNC0])
def test_a_max_window_outside_normal_and_sync0_suppresses_header_sync_requests(mode, state):
    """E-264: a partition neither NORMAL nor SYNC0 keeps its MAX window in both modes; no request is sent."""
    qm = psc_qm()
    ent = partition(qm, ENT)
    ent.purge_state = state
    ctx = ctx_for(qm, mode)
    receive_change_propagation(qm, ctx, propagation(header=header("PEC-new", (ENT, 8, 0))))
    assert ctx.effects == []
    assert (ent.change_missing_window, ent.authority_name) == (MAX_SEQ_NUMBER, PEC)


def _header_ahead_in_sync0(make_qm, sender):
    """Each reading's (queue manager, effects) after ``sender``'s header shows the enterprise partition,
    in SYNC0 with its window at MAX, behind; the window and the authority stay as they were in both."""
    effects = {}
    for mode in (Mode.LITERAL, Mode.CLARIFIED):
        qm = make_qm()
        ent = partition(qm, ENT)
        ent.purge_state = PurgeState.SYNC0
        ctx = ctx_for(qm, mode)
        receive_change_propagation(qm, ctx, propagation(header=header(sender, (ENT, 8, 0))))
        assert (ent.change_missing_window, ent.authority_name) == (MAX_SEQ_NUMBER, PEC)
        effects[mode] = (qm, ctx.effects)
    return effects


@covers("MC-MQDSRP", "3.2.7.1")
def test_a_max_window_in_sync0_asks_again_for_everything_only_when_clarified():
    """E-264 in SYNC0: literally every header is below the MAX window (a lost sync0 reply is never asked again);
    clarified, a header ahead re-sends the sync0 request (From LastSeqNumber, To MAX) and the window stays MAX."""
    effects = _header_ahead_in_sync0(psc_qm, "PEC-new")
    assert effects[Mode.LITERAL][1] == []
    qm, clarified = effects[Mode.CLARIFIED]
    request = SyncRequestMessage(SITE1, ENT, seq(0), MAX_SEQ_NUMBER, seq(0), True, Scope.ENTERPRISE, PSC1)
    assert clarified == [expect_send(qm, PEC, request, 20 * 60, 3, "AckNackReachQueue", acked_queues=True)]


@covers("MC-MQDSRP", "3.2.7.1")
def test_a_bsc_in_sync0_asks_the_psc_whose_header_shows_it_behind_only_when_clarified():
    """E-316: a BSC in SYNC0 re-asks (E-264) the PSC whose header this is ("Set QueueManager.MyPSCName to
    machineName"), not the PSC it knew before, which may have moved away; literally it does not ask at all."""
    effects = _header_ahead_in_sync0(bsc_qm, "PSC1-new")
    qm, literal = effects[Mode.LITERAL]
    assert (qm.my_psc_name, literal) == (PSC1, [])
    qm, clarified = effects[Mode.CLARIFIED]
    assert qm.my_psc_name == "PSC1-new"
    request = SyncRequestMessage(SITE1, ENT, seq(0), MAX_SEQ_NUMBER, seq(0), True, Scope.NONE, BSC11)
    assert clarified == [expect_send(qm, "PSC1-new", request, 20 * 60, 3, "AckNackReachQueue", acked_queues=True)]


@covers("MC-MQDSRP", "3.2.7.1")
@pytest.mark.parametrize("mode", [Mode.CLARIFIED, Mode.LITERAL])
def test_a_header_at_the_missing_window_asks_again_in_both_modes(mode):
    """E-116: a header equal to the window is not below it, so both modes ask again (up to L clarified, L + 1 literal): the previous reply may be lost."""
    qm = psc_qm()
    ent = ready(qm, ENT, last=2)
    ent.change_missing_window = seq(8)
    ctx = ctx_for(qm, mode)
    receive_change_propagation(qm, ctx, propagation(header=header(PEC, (ENT, 8, 0))))
    if mode is Mode.CLARIFIED:
        assert ent.change_missing_window == seq(8)
        assert [(b.from_seq_number, b.to_seq_number) for b in bodies(ctx)] == [(seq(2), seq(8))]
    else:
        assert ent.change_missing_window == seq(9)
        assert [(b.from_seq_number, b.to_seq_number) for b in bodies(ctx)] == [(seq(2), seq(9))]


@covers("MC-MQDSRP", "3.2.7.1")
@pytest.mark.parametrize("mode", [Mode.CLARIFIED, Mode.LITERAL])
def test_a_header_past_the_missing_window_widens_it_and_asks(mode):
    """A header beyond an outstanding window asks again in both modes: up to L when clarified, L + 1 when literal (E-116)."""
    qm = psc_qm()
    ent = ready(qm, ENT, last=2)
    ent.change_missing_window = seq(8)
    ctx = ctx_for(qm, mode)
    receive_change_propagation(qm, ctx, propagation(header=header(PEC, (ENT, 9, 0))))
    window = seq(9) if mode is Mode.CLARIFIED else seq(10)
    assert ent.change_missing_window == window
    assert [(b.from_seq_number, b.to_seq_number) for b in bodies(ctx)] == [(seq(2), window)]


@covers("MC-MQDSRP", "3.2.7.1")
def test_a_psc_behind_the_header_adopts_the_sender_as_authority_and_asks_up_to_the_header():
    """At a PSC: "Set dirPartition.AuthorityName to machineName", then a Send Sync Request to it (clarified E-116)."""
    qm = psc_qm()
    ent = ready(qm, ENT, last=2, purged=1)
    ctx = ctx_for(qm)
    receive_change_propagation(qm, ctx, propagation(header=header("PEC-new", (ENT, 8, 1))))
    assert ent.authority_name == "PEC-new"
    assert ent.change_missing_window == seq(8)
    request = SyncRequestMessage(SITE1, ENT, seq(2), seq(8), seq(1), False, Scope.ENTERPRISE, PSC1)
    assert ctx.effects == [expect_send(qm, "PEC-new", request, 20 * 60, 3, "AckNackReachQueue", acked_queues=True)]


@covers("MC-MQDSRP", "3.2.7.1")
def test_literal_window_is_the_header_last_seq_number_plus_one():
    """Literal E-116: "Set dirPartition.ChangeMissingWindow to (seqNumber.LastSeqNumber + 1)" and ask up to it."""
    qm = psc_qm()
    ent = ready(qm, ENT, last=2)
    ctx = ctx_for(qm, Mode.LITERAL)
    receive_change_propagation(qm, ctx, propagation(header=header(PEC, (ENT, 8, 0))))
    assert ent.change_missing_window == seq(9)
    assert [b.to_seq_number for b in bodies(ctx)] == [seq(9)]


@covers("MC-MQDSRP", "3.2.7.1")
def test_a_bsc_behind_the_header_adopts_the_sender_as_its_psc():
    """At a BSC: "Set QueueManager.MyPSCName to machineName"; the partition's AuthorityName is untouched."""
    qm = bsc_qm()
    ent = ready(qm, ENT, last=2)
    ctx = ctx_for(qm)
    receive_change_propagation(qm, ctx, propagation(header=header("PSC1-new", (ENT, 8, 0))))
    assert qm.my_psc_name == "PSC1-new"
    assert ent.authority_name == PEC
    request = SyncRequestMessage(SITE1, ENT, seq(2), seq(8), seq(0), False, Scope.NONE, BSC11)
    assert ctx.effects == [expect_send(qm, "PSC1-new", request, 20 * 60, 3, "AckNackReachQueue", acked_queues=True)]


@covers("MC-MQDSRP", "3.2.7.1")
@pytest.mark.parametrize("mode", [Mode.CLARIFIED, Mode.LITERAL])
def test_every_header_entry_is_handled_on_its_own(mode):
    """Each PARTITION_SEQ_NUMBERS element is checked separately: one sync request per partition behind."""
    qm = psc_qm()
    ready(qm, ENT, last=3)
    ready(qm, SITE0, last=5)
    ctx = ctx_for(qm, mode)
    receive_change_propagation(qm, ctx, propagation(header=header(PEC, (ENT, 7, 0), (SITE0, 5, 0))))
    assert [(b.partition_id, b.from_seq_number) for b in bodies(ctx)] == [(ENT, seq(3))]


@covers("MC-MQDSRP", "3.2.7.1")
def test_changes_are_applied_before_the_header_is_read():
    """The changes come first: a header naming the changes just applied finds nothing missing."""
    qm = psc_qm()
    site0 = ready(qm, SITE0)
    ctx = ctx_for(qm)
    receive_change_propagation(qm, ctx, propagation(
        change(0, SITE0, 1, properties=machine_properties("M0", SITE0), path="M0"),
        header=header(PEC, (SITE0, 1, 0)),
    ))
    assert site0.last_seq_number == seq(1)
    assert sent(ctx) == []
    assert [o.object_type for o in qm.directory.objects.values()] == [ObjectType.MQDS_MACHINE]
