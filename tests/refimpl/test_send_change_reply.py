"""MC-MQDSRP 3.2.7.6 Send Change Reply: reply to the requester, or to its PSC when the requester is no neighbor."""

import pytest
from mqspec.model.mqdsrp import ChangeReplyMessage, Command
from mqspec.refimpl import status as st
from mqspec.refimpl.effects import Mode
from mqspec.refimpl.mqdsrp_server import send_change_reply

from mqspec.clauses import covers

from .mqdsrp_fixtures_client import (
    BSC11,
    ENT,
    MODES,
    PEC,
    PSC1,
    PSC2,
    SITE1,
    change,
    change_request,
    ctx_for,
    expect_send,
    machine_properties,
    pec_qm,
    psc_qm,
)


def request(requester, psc_name=None, request_id=42):
    return change_request(requester, ENT, request_id, change(Command.CREATE, ENT, 0, previous=0,
                                                             properties=machine_properties("M", SITE1), path="M"),
                          psc_name=psc_name)


@covers("MC-MQDSRP", "3.2.7.6")
def test_the_reply_goes_to_a_psc_neighbor_requester():
    """The requester is in PSCNeighborCollection: serverName stays RequesterName."""
    qm = pec_qm()
    ctx = ctx_for(qm)
    send_change_reply(qm, ctx, st.MQ_OK, request(PSC1))
    body = ChangeReplyMessage(qm.site_identifier, 42, st.MQ_OK, PSC1)
    assert ctx.effects == [expect_send(qm, PSC1, body, 10, 8, "AckNackReachQueue", acked_queues=True)]


@covers("MC-MQDSRP", "3.2.7.6")
def test_the_reply_goes_to_a_bsc_neighbor_requester():
    """The requester is in BSCNeighborCollection: the reply goes to it directly."""
    qm = psc_qm()
    ctx = ctx_for(qm)
    send_change_reply(qm, ctx, st.MQDS_OBJECT_EXISTS, request(BSC11, psc_name=PSC1))
    body = ChangeReplyMessage(qm.site_identifier, 42, st.MQDS_OBJECT_EXISTS, BSC11)
    assert ctx.effects == [expect_send(qm, BSC11, body, 10, 8, "AckNackReachQueue", acked_queues=True)]


@covers("MC-MQDSRP", "3.2.7.6")
def test_a_bsc_requester_that_is_no_neighbor_is_answered_through_its_psc():
    """"If dirNeighbor is not found: Set serverName to ...PSCName"; the reply's RequesterName stays the BSC."""
    qm = pec_qm()
    ctx = ctx_for(qm)
    send_change_reply(qm, ctx, st.MQ_OK, request(BSC11, psc_name=PSC1, request_id=9))
    body = ChangeReplyMessage(qm.site_identifier, 9, st.MQ_OK, BSC11)
    assert ctx.effects == [expect_send(qm, PSC1, body, 10, 8, "AckNackReachQueue", acked_queues=True)]


@covers("MC-MQDSRP", "3.2.7.6")
@pytest.mark.parametrize("mode", MODES)
def test_a_requester_that_is_no_neighbor_and_sent_no_psc_name_is_answered_directly(mode):
    """E-122 (both modes): a PSC requester with no neighbor entry sent no PSCName, so the reply goes to RequesterName."""
    qm = pec_qm()
    ctx = ctx_for(qm, mode)
    send_change_reply(qm, ctx, st.MQ_OK, request(PSC2))
    assert [(e.destination, e.body.requester_name) for e in ctx.effects] == [(PSC2, PSC2)]


@covers("MC-MQDSRP", "3.2.7.6")
def test_the_reply_carries_the_status_unchanged():
    """"Result := iStatus", any HRESULT, read unsigned."""
    qm = pec_qm()
    ctx = ctx_for(qm)
    send_change_reply(qm, ctx, st.MQDS_NO_RSP_FROM_OWNER, request(PSC1))
    assert [e.body.result for e in ctx.effects] == [st.MQDS_NO_RSP_FROM_OWNER]
    assert ctx.effects[0].node == PEC


@covers("MC-MQDSRP", "3.2.7.6")
def test_literal_a_bsc_not_yet_a_neighbor_of_its_authority_psc_has_its_reply_sent_to_that_psc_itself():
    """Evidence (literal, E-165): at the requester's own PSC, "Set serverName to ...PSCName" names the sender; the BSC never hears back."""
    qm = psc_qm(bsc_neighbors=[])
    ctx = ctx_for(qm, Mode.LITERAL)
    send_change_reply(qm, ctx, st.MQ_OK, request(BSC11, psc_name=PSC1))
    assert [(e.node, e.destination, e.body.requester_name) for e in ctx.effects] == [(PSC1, PSC1, BSC11)]


@covers("MC-MQDSRP", "3.2.7.6")
def test_clarified_a_bsc_not_yet_a_neighbor_of_its_authority_psc_is_answered_directly():
    """Clarified (E-165): PSCName names this server itself, so the reply goes to the requesting BSC."""
    qm = psc_qm(bsc_neighbors=[])
    ctx = ctx_for(qm)
    send_change_reply(qm, ctx, st.MQ_OK, request(BSC11, psc_name=PSC1))
    body = ChangeReplyMessage(qm.site_identifier, 42, st.MQ_OK, BSC11)
    assert ctx.effects == [expect_send(qm, BSC11, body, 10, 8, "AckNackReachQueue", acked_queues=True)]
