"""MC-MQDSRP 3.3.7.9 Receive Request Nack: resend a replication message whose signature was refused."""

import pytest
from mqspec.model import mqdsrp
from mqspec.model.mqdsrp import Scope, SyncRequestMessage
from mqspec.refimpl.mqdsrp_client import NACK_BAD_SIGNATURE, receive_request_nack
from mqspec.refimpl.transport import MessageClass

from mqspec.clauses import covers

from .mqdsrp_fixtures_client import (
    ENT,
    PEC,
    PSC1,
    SITE1,
    ctx_for,
    direct,
    expect_send,
    psc_qm,
    seq,
)

REQUEST = SyncRequestMessage(SITE1, ENT, seq(3), seq(9), seq(0), False, Scope.ENTERPRISE, PSC1)


@covers("MC-MQDSRP", "3.3.7.9")
@pytest.mark.parametrize("klass", [MessageClass.NACK_BAD_DST_Q, MessageClass.NACK_REACH_QUEUE_TIMEOUT,
                                   MessageClass.NACK_Q_EXCEED_QUOTA, MessageClass.NACK_ACCESS_DENIED])
def test_a_nack_other_than_bad_signature_is_ignored(klass):
    """"If iNackMessage.Class is not NackBadSignature: Take no further action"."""
    qm = psc_qm()
    ctx = ctx_for(qm)
    receive_request_nack(qm, ctx, mqdsrp.encode(REQUEST), int(klass), direct(PEC))
    assert ctx.effects == []


@covers("MC-MQDSRP", "3.3.7.9")
def test_a_bad_signature_nack_resends_the_body_to_the_destination_machine():
    """iDestination := Machine in DestinationQueueFormatName, iTimeout 10, iPriority 3, AckNackReachQueue."""
    qm = psc_qm()
    ctx = ctx_for(qm)
    receive_request_nack(qm, ctx, mqdsrp.encode(REQUEST), NACK_BAD_SIGNATURE, direct(PEC))
    assert ctx.effects == [expect_send(qm, PEC, REQUEST, 10, 3, "AckNackReachQueue", acked_queues=True)]


@covers("MC-MQDSRP", "3.3.7.9")
def test_nack_bad_signature_is_the_msmq_class_value():
    """NackBadSignature is the MSMQ message class 0x8006 ([MS-MQDMPR] 3.1.1.12)."""
    assert NACK_BAD_SIGNATURE == int(MessageClass.NACK_BAD_SIGNATURE) == 0x8006


@covers("MC-MQDSRP", "3.3.7.9")
def test_a_body_that_is_no_replication_message_is_not_resent():
    """A Nack whose body does not decode (3.1.5.1 checked only Version and Operation) is dropped, never raised."""
    qm = psc_qm()
    ctx = ctx_for(qm)
    body = bytes(17) + bytes([2]) + b"\x01"
    receive_request_nack(qm, ctx, body, NACK_BAD_SIGNATURE, direct(PEC))
    assert ctx.effects == []
