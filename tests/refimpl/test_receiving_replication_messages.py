"""MC-MQDSRP 3.1.5.1 Receiving Replication Messages: the dispatch on Class and BaseReplicationHeader.Operation."""

import pytest
from mqspec.model import mqdsrp
from mqspec.model.mqdsrp import (
    AlreadyPurgedMessage,
    BSCAckMessage,
    ChangePropagationMessage,
    ChangeReplyMessage,
    ChangeRequestMessage,
    CompleteSync0,
    PSCAckMessage,
    Scope,
    SyncReplyMessage,
    SyncRequestMessage,
)
from mqspec.refimpl import status as st
from mqspec.refimpl.mqdsrp_base import replication_queue_direct
from mqspec.refimpl.mqdsrp_common import (
    change_remote_object,
    receiving_replication_messages,
)
from mqspec.refimpl.mqdsrp_state import PurgeState
from mqspec.refimpl.transport import MessageClass

from mqspec.clauses import covers

from .mqdsrp_fixtures import (
    BSC,
    ENT,
    PEC,
    PSC,
    QUEUE,
    SITE0,
    SITE1,
    DirectoryNeighbor,
    change,
    context,
    dir_ops,
    guid_of,
    messages,
    pec_node,
    psc_node,
    queue_props,
    request_completions,
    seq,
)

NORMAL = int(MessageClass.NORMAL)


def _receive(qm, message, klass=NORMAL, destination=""):
    ctx = context(qm, now=42.0)
    body = message if isinstance(message, bytes) else mqdsrp.encode(message)
    receiving_replication_messages(qm, ctx, body, klass, destination)
    return ctx


def _with_pending_request(qm):
    """A Process Change Request of PSC1 waiting for PEC0's reply (request 1)."""
    ctx = context(qm)
    change_remote_object(qm, ctx, 0x00, int(QUEUE), "q9", None, ENT, queue_props("q9"), client_request=5)
    return messages(ctx)[0].body


@covers("MC-MQDSRP", "3.1.5.1")
def test_empty_body_takes_no_action():
    """"If repMessage is empty: Take no further action"."""
    qm = psc_node()
    ctx = _receive(qm, b"")
    assert ctx.effects == []


@covers("MC-MQDSRP", "3.1.5.1")
def test_nonzero_version_takes_no_action():
    """"If repMessage.BaseReplicationHeader.Version is not 0x00: Take no further action", even for a well-formed body."""
    qm = psc_node()
    qm.bsc_neighbors = [DirectoryNeighbor(SITE1, BSC)]
    body = bytearray(mqdsrp.encode(BSCAckMessage(SITE1, guid_of(BSC), BSC)))
    body[0] = 0x01
    ctx = _receive(qm, bytes(body))
    assert ctx.effects == [] and qm.bsc_neighbors[0].last_acked_time == 0.0


@covers("MC-MQDSRP", "3.1.5.1")
def test_normal_change_propagation_raises_receive_change_propagation():
    """Class Normal, Operation 0x00: Receive Change Propagation applies the carried change."""
    qm = psc_node()
    q = guid_of("q1")
    ctx = _receive(qm, ChangePropagationMessage(SITE0, False, (change(0, ENT, 0, 1, 0, queue_props("q1", q), path="q1"),)))
    assert qm.find_partition(ENT).last_seq_number == seq(1)
    assert [(op.operation, op.status) for op in dir_ops(ctx)] == [("create", st.MQ_OK)]


@covers("MC-MQDSRP", "3.1.5.1")
def test_normal_change_request_raises_receive_change_request():
    """Class Normal, Operation 0x01: Receive Change Request applies the change to the owned partition and replies."""
    qm = psc_node()
    request = ChangeRequestMessage(SITE0, SITE1, 7, "PSC2", None,
                                   change(0, SITE1, 0, 0, 0, queue_props("PSC1\\q", guid_of("q")), path="PSC1\\q"))
    ctx = _receive(qm, request)
    [reply] = messages(ctx)
    assert isinstance(reply.body, ChangeReplyMessage)
    assert (reply.body.request_identifier, reply.body.result, reply.destination) == (7, st.MQ_OK, "PSC2")
    assert qm.my_site_partition.last_seq_number == seq(1)


@covers("MC-MQDSRP", "3.1.5.1")
def test_normal_sync_request_raises_receive_sync_request():
    """Class Normal, Operation 0x02: Receive Sync Request answers the requester with a SyncReplyMessage."""
    qm = psc_node()
    ctx = _receive(qm, SyncRequestMessage(SITE1, SITE1, seq(0), seq(0xFFFFFFFFFFFFFFFF), seq(0), False,
                                          Scope.NONE, BSC))
    [reply] = messages(ctx)
    assert isinstance(reply.body, SyncReplyMessage) and reply.destination == BSC


@covers("MC-MQDSRP", "3.1.5.1")
def test_normal_sync_reply_raises_receive_sync_reply():
    """Class Normal, Operation 0x03: Receive Sync Reply applies the replied changes."""
    qm = psc_node()
    reply = SyncReplyMessage(SITE0, ENT, seq(0), seq(1), seq(0), CompleteSync0.NOT_IN_SYNC0,
                             (change(0, ENT, 0, 1, 0, queue_props("q1", guid_of("q1")), path="q1"),))
    _receive(qm, reply)
    assert qm.find_partition(ENT).last_seq_number == seq(1)
    assert qm.directory.find(guid=guid_of("q1")) is not None


@covers("MC-MQDSRP", "3.1.5.1")
def test_normal_change_reply_raises_receive_change_reply():
    """Class Normal, Operation 0x04: Receive Change Reply ends the waiting Process Change Request with the reply's result."""
    qm = psc_node()
    _with_pending_request(qm)
    ctx = _receive(qm, ChangeReplyMessage(SITE0, 1, st.MQDS_OBJECT_EXISTS, PSC))
    assert [(c.request, c.status) for c in request_completions(ctx)] == [(5, st.MQDS_OBJECT_EXISTS)]
    assert qm.pending_requests == {}


@covers("MC-MQDSRP", "3.1.5.1")
def test_normal_already_purged_raises_receive_already_purged():
    """Class Normal, Operation 0x05: Receive Already Purged starts the sync0 state of the partition."""
    qm = psc_node()
    ctx = _receive(qm, AlreadyPurgedMessage(SITE0, ENT, seq(10)))
    ent = qm.find_partition(ENT)
    assert ent.purge_state is PurgeState.SYNC0 and ent.purged_seq_number == seq(10)
    assert [op.operation for op in dir_ops(ctx)] == ["reset1"]
    assert isinstance(messages(ctx)[0].body, SyncRequestMessage)


@covers("MC-MQDSRP", "3.1.5.1")
def test_normal_psc_ack_raises_receive_psc_ack():
    """Class Normal, Operation 0x06: Receive PSC Ack records what the PSC neighbor acknowledged."""
    qm = pec_node()
    qm.psc_neighbors = [DirectoryNeighbor(SITE1, PSC)]
    ctx = _receive(qm, PSCAckMessage(SITE1, SITE1, ENT, seq(256), PSC))
    assert qm.psc_neighbors[0].acked_pec_seq_number == seq(256)
    assert ctx.effects == []


@covers("MC-MQDSRP", "3.1.5.1")
def test_normal_bsc_ack_raises_receive_bsc_ack():
    """Class Normal, Operation 0x07: Receive BSC Ack sets the BSC neighbor's LastAckedTime to the current time."""
    qm = psc_node()
    qm.bsc_neighbors = [DirectoryNeighbor(SITE1, BSC)]
    _receive(qm, BSCAckMessage(SITE1, guid_of(BSC), BSC))
    assert qm.bsc_neighbors[0].last_acked_time == 42.0


@covers("MC-MQDSRP", "3.1.5.1")
@pytest.mark.parametrize("klass", [NORMAL, int(MessageClass.NACK_BAD_DST_Q)])
def test_unknown_operation_takes_no_action(klass):
    """"Others: take no further action" for an Operation outside 0x00..0x07, Normal or Nack."""
    qm = psc_node()
    body = bytes([0x00]) + SITE0.bytes_le + bytes([0x08]) + bytes(24)
    assert _receive(qm, body, klass).effects == []


@covers("MC-MQDSRP", "3.1.5.1")
def test_normal_message_that_does_not_decode_takes_no_action():
    """A Normal message whose bytes are no replication message (truncated BSCAckMessage) is dropped without effect."""
    qm = psc_node()
    body = mqdsrp.encode(BSCAckMessage(SITE1, guid_of(BSC), BSC))[:30]
    assert _receive(qm, body).effects == []


@covers("MC-MQDSRP", "3.1.5.1")
@pytest.mark.parametrize("klass", [MessageClass.NACK_BAD_DST_Q, MessageClass.NACK_REACH_QUEUE_TIMEOUT,
                                   MessageClass.NACK_RECEIVE_TIMEOUT_AT_SENDER])
def test_nack_of_change_request_raises_receive_change_request_nack(klass):
    """A Nack class (NackBadDestQueue .. NackReceiveTimeoutAtSender inclusive) of Operation 0x01 ends the wait with MQDS_OWNER_NOT_REACHED."""
    qm = psc_node()
    request = _with_pending_request(qm)
    ctx = _receive(qm, request, int(klass))
    assert [(c.request, c.status) for c in request_completions(ctx)] == [(5, st.MQDS_OWNER_NOT_REACHED)]


@covers("MC-MQDSRP", "3.1.5.1")
def test_nack_bad_signature_of_other_operation_raises_receive_request_nack():
    """A NackBadSignature of Operation 0x02 raises Receive Request Nack, which resends the message to the Nack's destination."""
    qm = psc_node()
    request = SyncRequestMessage(SITE1, ENT, seq(0), seq(5), seq(0), False, Scope.ENTERPRISE, PSC)
    ctx = _receive(qm, request, int(MessageClass.NACK_BAD_SIGNATURE), replication_queue_direct(PEC))
    [resent] = messages(ctx)
    assert (resent.destination, resent.body) == (PEC, request)


@covers("MC-MQDSRP", "3.1.5.1")
@pytest.mark.parametrize("klass", [0x0001, 0x0002, 0x4000, 0x7FFF, 0xC004])
def test_class_neither_normal_nor_nack_takes_no_action(klass):
    """"Else: Take no further action": Report, acknowledgments and classes outside the Nack range are ignored."""
    qm = psc_node()
    request = _with_pending_request(qm)
    ctx = _receive(qm, request, klass)
    assert ctx.effects == []
    assert list(qm.pending_requests) == [(PSC, 1)]


@covers("MC-MQDSRP", "3.1.5.1")
def test_nack_too_short_to_carry_an_operation_takes_no_action():
    """A Nack whose body ends before BaseReplicationHeader.Operation has no operation to dispatch on."""
    qm = psc_node()
    _with_pending_request(qm)
    assert _receive(qm, bytes(17), int(MessageClass.NACK_BAD_DST_Q)).effects == []


@covers("MC-MQDSRP", "3.1.5.1")
def test_nack_bad_signature_of_a_body_that_does_not_decode_takes_no_action():
    """A NackBadSignature whose Operation is 0x02 but whose body is no SyncRequestMessage is dispatched and resends nothing."""
    qm = psc_node()
    body = bytes([0x00]) + SITE0.bytes_le + bytes([0x02]) + bytes(5)
    assert _receive(qm, body, int(MessageClass.NACK_BAD_SIGNATURE), replication_queue_direct(PEC)).effects == []
