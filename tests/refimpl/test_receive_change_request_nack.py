"""MC-MQDSRP 3.3.7.8 Receive Change Request Nack: resume the wait with MQDS_OWNER_NOT_REACHED."""

import pytest
from mqspec.refimpl import status as st
from mqspec.refimpl.effects import Mode, RequestCompleted
from mqspec.refimpl.mqdsrp_client import (
    process_change_request,
    receive_change_request_nack,
)

from mqspec.clauses import covers

from .mqdsrp_fixtures_client import (
    BSC11,
    MODES,
    PSC1,
    completed,
    ctx_for,
    psc_qm,
    sent,
    two_waits_with_one_identifier,
)
from .mqdsrp_fixtures_client import machine_update_request as request


@covers("MC-MQDSRP", "3.3.7.8")
@pytest.mark.parametrize("mode", MODES)
def test_a_nack_nobody_waits_for_is_ignored(mode):
    """"If the event is not found: Take no further action"."""
    qm = psc_qm()
    process_change_request(qm, ctx_for(qm, mode), request(PSC1, 4), origin="client", client_request=1)
    ctx = ctx_for(qm, mode)
    receive_change_request_nack(qm, ctx, request(PSC1, 3))
    assert ctx.effects == []


@covers("MC-MQDSRP", "3.3.7.8")
def test_a_nack_resumes_the_wait_with_owner_not_reached():
    """"Continue processing the Process Change Request event with ... MQDS_OWNER_NOT_REACHED"."""
    qm = psc_qm()
    process_change_request(qm, ctx_for(qm), request(PSC1, 3), origin="client", client_request=2)
    ctx = ctx_for(qm)
    receive_change_request_nack(qm, ctx, request(PSC1, 3))
    assert completed(ctx) == [RequestCompleted(PSC1, 2, st.MQDS_OWNER_NOT_REACHED)]
    assert qm.pending_requests == {}


@covers("MC-MQDSRP", "3.3.7.8")
def test_clarified_a_nack_resumes_the_wait_of_its_requester():
    """Clarified E-125: the Nack's body names BSC11 as requester, so the forwarded wait is the one resumed."""
    qm = two_waits_with_one_identifier(Mode.CLARIFIED)
    ctx = ctx_for(qm)
    receive_change_request_nack(qm, ctx, request(BSC11, 7, psc_name=PSC1))
    assert [(e.destination, e.body.result) for e in sent(ctx)] == [(BSC11, st.MQDS_OWNER_NOT_REACHED)]
    assert list(qm.pending_requests) == [(PSC1, 7)]


@covers("MC-MQDSRP", "3.3.7.8")
def test_literal_a_nack_resumes_the_first_wait_with_its_identifier():
    """Literal E-125: "identified by iChangeRequestMessage.RequestIdentifier" alone picks PSC1's own request."""
    qm = two_waits_with_one_identifier(Mode.LITERAL)
    ctx = ctx_for(qm, Mode.LITERAL)
    receive_change_request_nack(qm, ctx, request(BSC11, 7, psc_name=PSC1))
    assert completed(ctx) == [RequestCompleted(PSC1, 1, st.MQDS_OWNER_NOT_REACHED)]
    assert list(qm.pending_requests) == [(BSC11, 7)]
