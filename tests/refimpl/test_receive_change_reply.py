"""MC-MQDSRP 3.3.7.6 Receive Change Reply: resume the Process Change Request the reply answers."""

import pytest
from mqspec.model.mqdsrp import ChangeReplyMessage
from mqspec.refimpl import status as st
from mqspec.refimpl.effects import Mode, RequestCompleted
from mqspec.refimpl.mqdsrp_client import process_change_request, receive_change_reply

from mqspec.clauses import covers

from .mqdsrp_fixtures_client import (
    BSC11,
    MODES,
    PSC1,
    SITE0,
    completed,
    ctx_for,
    psc_qm,
    sent,
    two_waits_with_one_identifier,
)
from .mqdsrp_fixtures_client import machine_update_request as request


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
