"""MC-MQDSRP 3.3.7.6 Receive Change Reply: resume the Process Change Request the reply answers."""

import pytest
from mqspec.model.mqdsrp import ChangeReplyMessage, Command
from mqspec.refimpl import status as st
from mqspec.refimpl.effects import Mode, RequestCompleted
from mqspec.refimpl.mqdsrp_client import process_change_request, receive_change_reply

from mqspec.clauses import covers

from .mqdsrp_fixtures_client import (
    BSC11,
    ENT,
    MODES,
    PSC1,
    SITE0,
    SITE1,
    change,
    change_request,
    completed,
    ctx_for,
    machine_properties,
    psc_qm,
    sent,
)


def request(requester, request_id, psc_name=None):
    return change_request(requester, ENT, request_id, change(Command.UPDATE, ENT, 0, previous=0,
                                                             properties=machine_properties("M", SITE1), path="M"),
                          psc_name=psc_name)


def two_waits_with_one_identifier(mode):
    """PSC1 waits for its own request 7 and for BSC11's request 7 that it forwarded (E-125)."""
    qm = psc_qm()
    process_change_request(qm, ctx_for(qm, mode), request(PSC1, 7), origin="client", client_request=1)
    process_change_request(qm, ctx_for(qm, mode), request(BSC11, 7, psc_name=PSC1), origin="forward")
    return qm


@covers("MC-MQDSRP", "3.3.7.6")
@pytest.mark.parametrize("mode", MODES)
def test_a_reply_nobody_waits_for_is_ignored(mode):
    """"If event is not found: Take no further action"."""
    qm = psc_qm()
    process_change_request(qm, ctx_for(qm, mode), request(PSC1, 4), origin="client", client_request=1)
    ctx = ctx_for(qm, mode)
    receive_change_reply(qm, ctx, ChangeReplyMessage(SITE0, 3, st.MQ_OK, PSC1))
    assert ctx.effects == []


@covers("MC-MQDSRP", "3.3.7.6")
def test_the_reply_resumes_the_wait_with_its_result():
    """"Continue processing the found Process Change Request event with ... iChangeReplyMessage.Status" (Result, E-129)."""
    qm = psc_qm()
    process_change_request(qm, ctx_for(qm), request(PSC1, 3), origin="client", client_request=9)
    ctx = ctx_for(qm)
    receive_change_reply(qm, ctx, ChangeReplyMessage(SITE0, 3, 0x80070005, PSC1))
    assert completed(ctx) == [RequestCompleted(PSC1, 9, 0x80070005)]
    assert qm.pending_requests == {}


@covers("MC-MQDSRP", "3.3.7.6")
def test_clarified_a_reply_resumes_the_wait_of_its_requester():
    """Clarified E-125: correlated by (RequesterName, RequestIdentifier), BSC11's reply resumes the forwarded wait."""
    qm = two_waits_with_one_identifier(Mode.CLARIFIED)
    ctx = ctx_for(qm)
    receive_change_reply(qm, ctx, ChangeReplyMessage(SITE0, 7, st.MQ_OK, BSC11))
    assert completed(ctx) == []
    assert [(e.destination, e.body.result) for e in sent(ctx)] == [(BSC11, st.MQ_OK)]
    assert list(qm.pending_requests) == [(PSC1, 7)]


@covers("MC-MQDSRP", "3.3.7.6")
def test_literal_a_reply_resumes_the_first_wait_with_its_identifier():
    """Literal E-125: "identified by iChangeReplyMessage.RequestIdentifier": BSC11's reply completes PSC1's own request."""
    qm = two_waits_with_one_identifier(Mode.LITERAL)
    ctx = ctx_for(qm, Mode.LITERAL)
    receive_change_reply(qm, ctx, ChangeReplyMessage(SITE0, 7, st.MQ_OK, BSC11))
    assert completed(ctx) == [RequestCompleted(PSC1, 1, st.MQ_OK)]
    assert sent(ctx) == []
    assert list(qm.pending_requests) == [(BSC11, 7)]
