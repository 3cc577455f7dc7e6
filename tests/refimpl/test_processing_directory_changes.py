"""MC-MQDSRP 3.1.5.2 Processing Directory Changes: find each change's partition, raise Handle Directory Change."""

import pytest
from mqspec.model.mqdsrp import (
    ChangePropagationMessage,
    CompleteSync0,
    SyncReplyMessage,
)
from mqspec.model.propvalue import Property
from mqspec.refimpl.effects import AckRequested
from mqspec.refimpl.mqdsrp_client import receive_sync_reply
from mqspec.refimpl.mqdsrp_common import processing_directory_changes
from mqspec.refimpl.mqdsrp_server import receive_change_propagation

from mqspec.clauses import covers

from .mqdsrp_fixtures import (
    BSC,
    ENT,
    ENTERPRISE,
    PEC,
    SITE0,
    SITE1,
    SITE2,
    DirectoryNeighbor,
    P,
    add_object,
    bsc_node,
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


def _q(partition, previous, at, name):
    return change(0, partition, previous, at, 0, queue_props(name, guid_of(name)), path=name)


def _psc_with_bsc_and_enterprise():
    qm = psc_node()
    qm.bsc_neighbors = [DirectoryNeighbor(SITE1, BSC)]
    add_object(qm, ENTERPRISE, "enterprise", guid_of("ent"), enterprise_props(PEC), ENT)
    return qm


def _pec_renamed(at=1):
    """An update of the enterprise object naming a new PEC: Handle Enterprise Update returns rNeedFlush true."""
    return change(1, ENT, at - 1, at, 0, (Property(P["PROPID_E_PECNAME"], "PEC9"),), path="enterprise")


@covers("MC-MQDSRP", "3.1.5.2")
def test_each_change_is_handled_in_the_partition_it_names():
    """For each dirChange the partition whose PartitionID matches is found and Handle Directory Change applies it there."""
    qm = bsc_node()
    ctx = context(qm)
    processing_directory_changes(qm, ctx, [_q(ENT, 0, 1, "e1"), _q(SITE1, 0, 1, "s1"), _q(ENT, 1, 2, "e2")], True)
    assert qm.find_partition(ENT).last_seq_number == seq(2)
    assert qm.find_partition(SITE1).last_seq_number == seq(1)
    assert [(op.path_name, op.partition_id) for op in dir_ops(ctx)] == [("e1", ENT), ("s1", SITE1), ("e2", ENT)]


@covers("MC-MQDSRP", "3.1.5.2")
def test_change_of_an_unknown_partition_is_skipped_and_the_next_one_processed():
    """"If dirPartition is not found: Take no further action" for that change; mqspec goes on with the message's next change."""
    qm = psc_node()
    ctx = context(qm)
    processing_directory_changes(qm, ctx, [_q(SITE2, 0, 1, "x"), _q(ENT, 0, 1, "e1")], True)
    assert qm.find_partition(SITE2) is None
    assert [op.path_name for op in dir_ops(ctx)] == ["e1"]
    assert qm.find_partition(ENT).last_seq_number == seq(1)


@covers("MC-MQDSRP", "3.1.5.2")
def test_check_flush_true_flushes_a_change_that_needs_it_to_the_bscs():
    """With iCheckFlush true a change whose handler returns rNeedFlush is sent at once to each BSC (Send Change Propagation, Intrasite)."""
    qm = _psc_with_bsc_and_enterprise()
    ctx = context(qm)
    processing_directory_changes(qm, ctx, [_pec_renamed()], True)
    [sent] = messages(ctx)
    assert sent.destination == BSC and isinstance(sent.body, ChangePropagationMessage)
    assert sent.body.changes == (_pec_renamed(),)
    assert (sent.time_to_reach_queue, sent.priority, sent.ack_requested) == (20 * 60, 3, AckRequested.NONE)
    assert qm.bsc_neighbors[0].available_changes == []


@covers("MC-MQDSRP", "3.1.5.2")
def test_check_flush_false_only_queues_the_change_for_the_bscs():
    """With iCheckFlush false the change waits in each BSC neighbor's AvailableChangeCollection for the timer."""
    qm = _psc_with_bsc_and_enterprise()
    ctx = context(qm)
    processing_directory_changes(qm, ctx, [_pec_renamed()], False)
    assert messages(ctx) == []
    assert qm.bsc_neighbors[0].available_changes == [_pec_renamed()]


@covers("MC-MQDSRP", "3.1.5.2")
@pytest.mark.parametrize(("flush", "sent_now"), [(False, True), (True, False)])
def test_receive_change_propagation_sets_check_flush_from_the_flush_field(flush, sent_now):
    """"set iCheckFlush to true when the Flush field ... is 0x00, set iCheckFlush to false when the field is 0x01"."""
    qm = _psc_with_bsc_and_enterprise()
    ctx = context(qm)
    receive_change_propagation(qm, ctx, ChangePropagationMessage(SITE0, flush, (_pec_renamed(),)))
    assert bool(messages(ctx)) is sent_now
    assert bool(qm.bsc_neighbors[0].available_changes) is not sent_now


@covers("MC-MQDSRP", "3.1.5.2")
def test_receive_sync_reply_sets_check_flush_true():
    """"If it is a Receive Sync Reply event ... set iCheckFlush to true": the change needing a flush goes to the BSC at once."""
    qm = _psc_with_bsc_and_enterprise()
    ctx = context(qm)
    receive_sync_reply(qm, ctx, SyncReplyMessage(SITE0, ENT, seq(0), seq(1), seq(0), CompleteSync0.NOT_IN_SYNC0,
                                                 (_pec_renamed(),)))
    assert [m.destination for m in messages(ctx)] == [BSC]
