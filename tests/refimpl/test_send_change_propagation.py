"""MC-MQDSRP 3.3.7.2 Send Change Propagation: the neighbor's available changes, with a SeqNumberHeader at times."""

import pytest
from mqspec.model.mqdsrp import (
    ChangePropagationMessage,
    Command,
    PartitionSeqNumbers,
    SeqNumberHeader,
)
from mqspec.refimpl.effects import Mode, TimerScope
from mqspec.refimpl.mqdsrp_client import (
    SEQ_NUMBER_HEADER_INTERVAL,
    send_change_propagation,
)

from mqspec.clauses import covers

from .mqdsrp_fixtures_client import (
    BSC11,
    ENT,
    MODES,
    PEC,
    PSC1,
    PSC2,
    SITE0,
    SITE1,
    SITE2,
    bodies,
    change,
    ctx_for,
    expect_send,
    partition,
    pec_qm,
    psc_qm,
    seq,
)

NO_HEADER = SeqNumberHeader(None, ())


def numbered(qm, partition_id, last, purged, allowed=0):
    p = partition(qm, partition_id)
    p.last_seq_number, p.purged_seq_number, p.allowed_purge_seq_number = seq(last), seq(purged), seq(allowed)


def entry(partition_id, last, purged):
    return PartitionSeqNumbers(partition_id, seq(last), seq(purged))


def header_sent_at(qm, neighbor, scope, mode, when):
    """Record the last SeqNumberHeader where ``mode`` reads it: per server (literal) or per neighbor (E-137)."""
    if mode is Mode.LITERAL:
        qm.last_seq_number_header_time = when
    else:
        qm.last_seq_number_header_sent[(neighbor.machine_name, scope.value)] = when


@covers("MC-MQDSRP", "3.3.7.2")
@pytest.mark.parametrize("mode", MODES)
def test_the_message_carries_the_available_changes_and_empties_the_collection(mode):
    """Flush 0x00, DirectoryChanges := AvailableChangeCollection, sent unacknowledged; then "Remove all elements"."""
    qm = psc_qm()
    neighbor = qm.bsc_neighbors[0]
    changes = [change(Command.CREATE, SITE1, 1), change(Command.UPDATE, SITE1, 2)]
    neighbor.available_changes = list(changes)
    header_sent_at(qm, neighbor, TimerScope.INTRASITE, mode, 0.0)
    ctx = ctx_for(qm, mode, now=5.0)
    send_change_propagation(qm, ctx, neighbor, TimerScope.INTRASITE)
    message = ChangePropagationMessage(SITE1, False, tuple(changes), NO_HEADER)
    assert ctx.effects == [expect_send(qm, BSC11, message, 20 * 60, 3, "None", acked_queues=False)]
    assert neighbor.available_changes == []


@covers("MC-MQDSRP", "3.3.7.2")
@pytest.mark.parametrize("mode", MODES)
def test_a_propagation_is_sent_even_with_no_change(mode):
    """Nothing makes the event conditional: an empty collection still gives a message with Count 0."""
    qm = psc_qm()
    header_sent_at(qm, qm.psc_neighbors[0], TimerScope.INTERSITE, mode, 0.0)
    ctx = ctx_for(qm, mode, now=1.0)
    send_change_propagation(qm, ctx, qm.psc_neighbors[0], TimerScope.INTERSITE)
    assert bodies(ctx) == [ChangePropagationMessage(SITE1, False, (), NO_HEADER)]


@covers("MC-MQDSRP", "3.3.7.2")
def test_the_pecs_intersite_header_has_the_enterprise_then_its_site_partition():
    """Intersite at the PEC: Count 2, PEC_PARTITION_ID first, then MySitePartition, each with Last and Purged."""
    qm = pec_qm()
    numbered(qm, ENT, 40, 3)
    numbered(qm, SITE0, 7, 1)
    ctx = ctx_for(qm, now=100.0)
    send_change_propagation(qm, ctx, qm.psc_neighbors[0], TimerScope.INTERSITE)
    assert bodies(ctx)[0].seq_numbers == SeqNumberHeader(PEC, (entry(ENT, 40, 3), entry(SITE0, 7, 1)))
    assert qm.last_seq_number_header_time == 100.0


@covers("MC-MQDSRP", "3.3.7.2")
def test_a_pscs_intersite_header_has_only_its_site_partition():
    """Intersite at a PSC: "Set seqNumberHeader.Count to 1", the element of MySitePartition."""
    qm = psc_qm()
    numbered(qm, SITE1, 12, 2)
    numbered(qm, ENT, 40, 3)
    ctx = ctx_for(qm)
    send_change_propagation(qm, ctx, qm.psc_neighbors[0], TimerScope.INTERSITE)
    assert bodies(ctx)[0].seq_numbers == SeqNumberHeader(PSC1, (entry(SITE1, 12, 2),))


@covers("MC-MQDSRP", "3.3.7.2")
def test_the_intrasite_header_lists_every_partition_with_owned_or_allowed_purge_numbers():
    """Intrasite: every partition; PurgedSeqNumber for owned ones, AllowedPurgeSeqNumber for the others."""
    qm = psc_qm()
    numbered(qm, ENT, 40, 3, allowed=30)
    numbered(qm, SITE0, 7, 1, allowed=5)
    numbered(qm, SITE1, 12, 2, allowed=9)
    ctx = ctx_for(qm)
    send_change_propagation(qm, ctx, qm.bsc_neighbors[0], TimerScope.INTRASITE)
    assert bodies(ctx)[0].seq_numbers == SeqNumberHeader(
        PSC1, (entry(ENT, 40, 30), entry(SITE0, 7, 5), entry(SITE1, 12, 2)))


@covers("MC-MQDSRP", "3.3.7.2")
@pytest.mark.parametrize("mode", MODES)
def test_within_the_interval_the_header_has_count_0(mode):
    """Before <12>'s 20 minutes have elapsed since the last header (to this neighbor, E-137): "Count := 0. Other fields: Not set"."""
    qm = psc_qm()
    neighbor = qm.psc_neighbors[0]
    header_sent_at(qm, neighbor, TimerScope.INTERSITE, mode, 1000.0)
    ctx = ctx_for(qm, mode, now=1000.0 + SEQ_NUMBER_HEADER_INTERVAL - 1)
    send_change_propagation(qm, ctx, neighbor, TimerScope.INTERSITE)
    assert bodies(ctx)[0].seq_numbers == NO_HEADER
    if mode is Mode.LITERAL:
        assert (qm.last_seq_number_header_time, qm.last_seq_number_header_sent) == (1000.0, {})
    else:
        assert qm.last_seq_number_header_time is None
        assert qm.last_seq_number_header_sent == {(neighbor.machine_name, "Intersite"): 1000.0}


@covers("MC-MQDSRP", "3.3.7.2")
@pytest.mark.parametrize("mode", MODES)
def test_after_the_interval_the_header_is_sent_again(mode):
    """20 minutes after the last header (to this neighbor, E-137), the next propagation carries one and restarts the interval."""
    qm = psc_qm()
    neighbor = qm.psc_neighbors[0]
    header_sent_at(qm, neighbor, TimerScope.INTERSITE, mode, 1000.0)
    now = 1000.0 + SEQ_NUMBER_HEADER_INTERVAL
    ctx = ctx_for(qm, mode, now=now)
    send_change_propagation(qm, ctx, neighbor, TimerScope.INTERSITE)
    assert bodies(ctx)[0].seq_numbers.machine_name == PSC1
    assert qm.last_seq_number_header_time == now
    assert qm.last_seq_number_header_sent == {(neighbor.machine_name, "Intersite"): now}


@covers("MC-MQDSRP", "3.3.7.2")
def test_a_psc_without_its_site_partition_sends_no_intersite_header():
    """MySitePartition is still uninitialized (3.1.3.1): no element to send, Count stays 0 and no time is recorded."""
    qm = psc_qm(site_partition=False)
    ctx = ctx_for(qm)
    send_change_propagation(qm, ctx, qm.psc_neighbors[0], TimerScope.INTERSITE)
    assert bodies(ctx)[0].seq_numbers == NO_HEADER
    assert (qm.last_seq_number_header_time, qm.last_seq_number_header_sent) == (None, {})


@covers("MC-MQDSRP", "3.3.7.2")
def test_literal_the_header_interval_is_counted_per_queue_manager_not_per_neighbor():
    """Literal: "since the last time a SeqNumberHeader was sent" read per server: the first neighbor served takes the header."""
    qm = pec_qm(psc_neighbors=[(PSC1, SITE1), (PSC2, SITE2)])
    ctx = ctx_for(qm, Mode.LITERAL, now=SEQ_NUMBER_HEADER_INTERVAL)
    for neighbor in qm.psc_neighbors:
        send_change_propagation(qm, ctx, neighbor, TimerScope.INTERSITE)
    assert [(e.destination, bool(e.body.seq_numbers.partitions)) for e in ctx.effects] == [
        (PSC1, True), (PSC2, False)]


@covers("MC-MQDSRP", "3.3.7.2")
def test_clarified_the_header_interval_is_counted_per_neighbor():
    """Clarified (E-137): each neighbor gets a header once its own interval has elapsed, whoever was served before it."""
    qm = pec_qm(psc_neighbors=[(PSC1, SITE1), (PSC2, SITE2)])
    now = SEQ_NUMBER_HEADER_INTERVAL
    ctx = ctx_for(qm, now=now)
    for neighbor in qm.psc_neighbors:
        send_change_propagation(qm, ctx, neighbor, TimerScope.INTERSITE)
    assert [(e.destination, bool(e.body.seq_numbers.partitions)) for e in ctx.effects] == [
        (PSC1, True), (PSC2, True)]
    assert qm.last_seq_number_header_sent == {(PSC1, "Intersite"): now, (PSC2, "Intersite"): now}
    # each neighbor's own interval now runs: a second round within it carries no header
    again = ctx_for(qm, now=now + 1)
    for neighbor in qm.psc_neighbors:
        send_change_propagation(qm, again, neighbor, TimerScope.INTERSITE)
    assert [e.body.seq_numbers for e in again.effects] == [NO_HEADER, NO_HEADER]
