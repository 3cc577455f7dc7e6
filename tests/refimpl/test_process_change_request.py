"""MC-MQDSRP 3.3.7.1 Process Change Request: send the request one hop towards the authority and wait.

The wait is a continuation (``QueueManager.pending_requests`` and a ``change_request_wait``
timer); these tests end it in each of the three ways the text lists (a Change Reply, a Nack,
the waiting time elapsing) for a directory client's request and for a request a PSC forwards.
"""

from mqspec.model import mqdsrp
from mqspec.model.guid import Guid
from mqspec.model.mqdsrp import ChangeReplyMessage, Command
from mqspec.model.propids import ObjectType
from mqspec.model.propvalue import Property
from mqspec.refimpl import status as st
from mqspec.refimpl.effects import CancelTimer, RequestCompleted, StartTimer, TimerKey
from mqspec.refimpl.mqdsrp_client import (
    change_request_wait_expired,
    process_change_request,
    receive_change_reply,
    receive_change_request_nack,
)
from mqspec.refimpl.mqdsrp_common import change_remote_object
from mqspec.refimpl.mqdsrp_server import receive_change_request
from mqspec.refimpl.world import World, add_site, bootstrap_pec, create_site

from mqspec.clauses import covers

from .mqdsrp_fixtures_client import (
    BSC11,
    ENT,
    PEC,
    PSC1,
    SITE0,
    SITE1,
    SITE2,
    P,
    bsc_qm,
    change,
    change_request,
    completed,
    ctx_for,
    expect_send,
    machine_properties,
    pec_qm,
    psc_qm,
    sent,
    started,
)

CN_GUID = Guid.from_name("cn:ip")


def create_cn(requester, request_id, *, psc_name=None):
    properties = (Property(P["PROPID_CN_NAME"], "ip"), Property(P["PROPID_CN_GUID"], CN_GUID))
    return change_request(requester, ENT, request_id, change(Command.CREATE, ENT, 0, previous=0,
                                                             properties=properties, path="ip"), psc_name=psc_name)


def wait_key(requester, request_id):
    return TimerKey("change_request_wait", ((requester, request_id),))


def reply(request, result, site=SITE0):
    return ChangeReplyMessage(site, request.request_identifier, result, request.requester_name)


def wire(message):
    """The message as the receiver decodes it."""
    return mqdsrp.decode(mqdsrp.encode(message))


# --- sending and waiting ----------------------------------------------------------------------


@covers("MC-MQDSRP", "3.3.7.1")
def test_a_bsc_sends_to_my_psc_name_and_waits_20_seconds_when_its_psc_is_not_the_authority():
    """nextHop := MyPSCName; <11> "20 seconds if the next hop is not the object authority"."""
    qm = bsc_qm()
    request = create_cn(BSC11, 1, psc_name=PSC1)
    ctx = ctx_for(qm)
    process_change_request(qm, ctx, request, origin="client", client_request=4)
    assert ctx.effects == [
        expect_send(qm, PSC1, request, 10, 8, "AckNackReachQueue", acked_queues=True),
        StartTimer(BSC11, wait_key(BSC11, 1), 20.0),
    ]
    pending = qm.pending_requests[(BSC11, 1)]
    assert (pending.request_identifier, pending.message, pending.origin, pending.client_request) == (
        1, request, "client", 4)


@covers("MC-MQDSRP", "3.3.7.1")
def test_a_bsc_waits_10_seconds_when_its_psc_is_the_authority():
    """<11> "10 seconds if the next hop is the object authority": PSC1 owns site1."""
    qm = bsc_qm()
    request = change_request(BSC11, SITE1, 2, change(Command.CREATE, SITE1, 0, previous=0,
                                                     properties=machine_properties("M", SITE1), path="M"),
                             psc_name=PSC1)
    ctx = ctx_for(qm)
    process_change_request(qm, ctx, request, origin="client")
    assert [(e.destination) for e in sent(ctx)] == [PSC1]
    assert [t.delay for t in started(ctx)] == [10.0]


@covers("MC-MQDSRP", "3.3.7.1")
def test_a_bsc_sends_even_for_a_partition_it_does_not_have():
    """A BSC does not look the partition up ("If the queue manager is BSC: Set nextHop to MyPSCName")."""
    qm = bsc_qm()
    request = change_request(BSC11, SITE2, 3, change(Command.CREATE, SITE2, 0, previous=0,
                                                     properties=machine_properties("M", SITE2), path="M"),
                             psc_name=PSC1)
    ctx = ctx_for(qm)
    process_change_request(qm, ctx, request, origin="client")
    assert [e.destination for e in sent(ctx)] == [PSC1]
    assert [t.delay for t in started(ctx)] == [20.0]


@covers("MC-MQDSRP", "3.3.7.1")
def test_a_psc_sends_to_the_partitions_authority_and_waits_10_seconds():
    """Else: nextHop := dirPartition.AuthorityName (the PEC for the enterprise partition)."""
    qm = psc_qm()
    request = create_cn(PSC1, 1)
    ctx = ctx_for(qm)
    process_change_request(qm, ctx, request, origin="client", client_request=1)
    assert ctx.effects == [
        expect_send(qm, PEC, request, 10, 8, "AckNackReachQueue", acked_queues=True),
        StartTimer(PSC1, wait_key(PSC1, 1), 10.0),
    ]


@covers("MC-MQDSRP", "3.3.7.1")
def test_an_unknown_partition_returns_unknown_source_to_the_client_at_once():
    """"If dirPartition is not found: Set rStatus to MQDS_UNKNOWN_SOURCE. Take no further action": no send, no wait."""
    qm = psc_qm()
    request = change_request(PSC1, SITE2, 1, change(Command.CREATE, SITE2, 0, previous=0,
                                                    properties=machine_properties("M", SITE2), path="M"))
    ctx = ctx_for(qm)
    process_change_request(qm, ctx, request, origin="client", client_request=6)
    assert ctx.effects == [RequestCompleted(PSC1, 6, st.MQDS_UNKNOWN_SOURCE)]
    assert qm.pending_requests == {}


@covers("MC-MQDSRP", "3.3.7.1")
def test_an_unknown_partition_of_a_forwarded_request_is_replied_unknown_source():
    """A forwarding PSC (3.2.7.2) sends the Change Reply with rStatus MQDS_UNKNOWN_SOURCE."""
    qm = psc_qm()
    request = change_request(BSC11, SITE2, 8, change(Command.CREATE, SITE2, 0, previous=0,
                                                     properties=machine_properties("M", SITE2), path="M"),
                             psc_name=PSC1)
    ctx = ctx_for(qm)
    process_change_request(qm, ctx, request, origin="forward")
    body = ChangeReplyMessage(SITE1, 8, st.MQDS_UNKNOWN_SOURCE, BSC11)
    assert ctx.effects == [expect_send(qm, BSC11, body, 10, 8, "AckNackReachQueue", acked_queues=True)]


# --- the three ways a client's wait ends -------------------------------------------------------


def waiting_psc(request_id=1, client_request=3):
    qm = psc_qm()
    request = create_cn(PSC1, request_id)
    process_change_request(qm, ctx_for(qm), request, origin="client", client_request=client_request)
    return qm, request


@covers("MC-MQDSRP", "3.3.7.1")
def test_a_change_reply_ends_the_wait_with_its_result():
    """"A Receive Change Reply event occurs: Set rStatus to the status code passed" (the reply's Result, E-129)."""
    qm, request = waiting_psc()
    ctx = ctx_for(qm)
    receive_change_reply(qm, ctx, wire(reply(request, st.MQDS_OBJECT_EXISTS)))
    assert ctx.effects == [CancelTimer(PSC1, wait_key(PSC1, 1)), RequestCompleted(PSC1, 3, st.MQDS_OBJECT_EXISTS)]
    assert qm.pending_requests == {}


@covers("MC-MQDSRP", "3.3.7.1")
def test_a_nack_ends_the_wait_with_owner_not_reached():
    """"A Receive Change Request Nack event occurs": rStatus is MQDS_OWNER_NOT_REACHED (3.3.7.8)."""
    qm, request = waiting_psc()
    ctx = ctx_for(qm)
    receive_change_request_nack(qm, ctx, wire(request))
    assert ctx.effects == [CancelTimer(PSC1, wait_key(PSC1, 1)), RequestCompleted(PSC1, 3, st.MQDS_OWNER_NOT_REACHED)]
    assert qm.pending_requests == {}


@covers("MC-MQDSRP", "3.3.7.1")
def test_the_waiting_time_ends_the_wait_with_no_response_from_owner():
    """"An implementation-specific waiting time has elapsed: Set rStatus to MQDS_NO_RSP_FROM_OWNER"."""
    qm = psc_qm()
    request = create_cn(PSC1, 1)
    first = ctx_for(qm)
    process_change_request(qm, first, request, origin="client", client_request=3)
    [timer] = started(first)
    ctx = ctx_for(qm, now=10.0)
    change_request_wait_expired(qm, ctx, timer.timer.args[0])  # as the simulator fires it
    assert ctx.effects == [CancelTimer(PSC1, wait_key(PSC1, 1)),
                           RequestCompleted(PSC1, 3, st.MQDS_NO_RSP_FROM_OWNER)]
    assert qm.pending_requests == {}


@covers("MC-MQDSRP", "3.3.7.1")
def test_a_reply_after_the_wait_ended_is_ignored():
    """Once the waiting time elapsed the event is gone: a late reply finds nothing (3.3.7.6 "If event is not found")."""
    qm, request = waiting_psc()
    change_request_wait_expired(qm, ctx_for(qm), (PSC1, 1))
    ctx = ctx_for(qm)
    receive_change_reply(qm, ctx, reply(request, st.MQ_OK))
    assert ctx.effects == []


@covers("MC-MQDSRP", "3.3.7.1")
def test_an_expired_timer_of_a_finished_wait_does_nothing():
    """A timer firing after the reply resumed the wait finds no pending request."""
    qm, request = waiting_psc()
    receive_change_reply(qm, ctx_for(qm), reply(request, st.MQ_OK))
    ctx = ctx_for(qm)
    change_request_wait_expired(qm, ctx, (PSC1, 1))
    assert ctx.effects == []


# --- the forward path: a PSC forwarding a BSC's request ----------------------------------------


def forwarding_psc(request_id=5):
    qm = psc_qm()
    request = create_cn(BSC11, request_id, psc_name=PSC1)
    ctx = ctx_for(qm)
    receive_change_request(qm, ctx, wire(request))
    return qm, request, ctx


@covers("MC-MQDSRP", "3.3.7.1")
def test_a_psc_forwards_a_bscs_request_to_the_authority_and_waits():
    """3.2.7.2 raises Process Change Request for a request it does not own; the PSC waits 10 s for the PEC."""
    qm, request, ctx = forwarding_psc()
    assert ctx.effects == [
        expect_send(qm, PEC, request, 10, 8, "AckNackReachQueue", acked_queues=True),
        StartTimer(PSC1, wait_key(BSC11, 5), 10.0),
    ]
    assert qm.pending_requests[(BSC11, 5)].origin == "forward"


@covers("MC-MQDSRP", "3.3.7.1")
def test_the_forwarding_psc_replies_to_the_bsc_when_the_authoritys_reply_arrives():
    """rStatus becomes changeResult and "Send a reply to the requester": a Change Reply to the BSC neighbor."""
    qm, request, _ = forwarding_psc()
    ctx = ctx_for(qm)
    receive_change_reply(qm, ctx, wire(reply(request, st.MQ_OK)))
    body = ChangeReplyMessage(SITE1, 5, st.MQ_OK, BSC11)
    assert ctx.effects == [
        CancelTimer(PSC1, wait_key(BSC11, 5)),
        expect_send(qm, BSC11, body, 10, 8, "AckNackReachQueue", acked_queues=True),
    ]
    assert qm.pending_requests == {}


@covers("MC-MQDSRP", "3.3.7.1")
def test_the_forwarding_psc_replies_owner_not_reached_on_a_nack():
    """A Nack of the forwarded request makes the PSC reply MQDS_OWNER_NOT_REACHED to the BSC."""
    qm, request, _ = forwarding_psc()
    ctx = ctx_for(qm)
    receive_change_request_nack(qm, ctx, wire(request))
    assert [(e.destination, e.body.result) for e in sent(ctx)] == [(BSC11, st.MQDS_OWNER_NOT_REACHED)]
    assert qm.pending_requests == {}


@covers("MC-MQDSRP", "3.3.7.1")
def test_the_forwarding_psc_replies_no_response_when_its_wait_expires():
    """The PSC's own wait elapsing makes it reply MQDS_NO_RSP_FROM_OWNER to the BSC."""
    qm, _, first = forwarding_psc()
    [timer] = started(first)
    ctx = ctx_for(qm, now=10.0)
    change_request_wait_expired(qm, ctx, timer.timer.args[0])
    assert [(e.destination, e.body.result) for e in sent(ctx)] == [(BSC11, st.MQDS_NO_RSP_FROM_OWNER)]
    assert qm.pending_requests == {}


@covers("MC-MQDSRP", "3.3.7.1")
def test_a_bscs_request_travels_to_the_pec_and_its_result_back_to_the_client():
    """4.3 end to end by hand: BSC -> PSC -> PEC applies -> reply to PSC (PSCName) -> PSC -> BSC -> client MQ_OK."""
    bsc, psc, pec = bsc_qm(), psc_qm(), pec_qm()
    c_bsc = ctx_for(bsc)
    change_remote_object(bsc, c_bsc, 0x00, int(ObjectType.MQDS_CN), "ip", None, ENT,
                         (Property(P["PROPID_CN_NAME"], "ip"), Property(P["PROPID_CN_GUID"], CN_GUID)),
                         client_request=1)
    [to_psc] = sent(c_bsc)
    c_psc = ctx_for(psc)
    receive_change_request(psc, c_psc, wire(to_psc.body))
    [to_pec] = sent(c_psc)
    c_pec = ctx_for(pec)
    receive_change_request(pec, c_pec, wire(to_pec.body))
    [back_to_psc] = [e for e in sent(c_pec) if isinstance(e.body, ChangeReplyMessage)]
    assert (back_to_psc.destination, back_to_psc.body.requester_name) == (PSC1, BSC11)
    c_psc2 = ctx_for(psc)
    receive_change_reply(psc, c_psc2, wire(back_to_psc.body))
    [back_to_bsc] = sent(c_psc2)
    assert back_to_bsc.destination == BSC11
    c_bsc2 = ctx_for(bsc)
    receive_change_reply(bsc, c_bsc2, wire(back_to_bsc.body))
    assert completed(c_bsc2) == [RequestCompleted(BSC11, 1, st.MQ_OK)]
    assert pec.directory.find(guid=CN_GUID) is not None
    assert (psc.pending_requests, bsc.pending_requests) == ({}, {})


@covers("MC-MQDSRP", "3.3.7.1")
def test_in_the_simulator_a_lost_reply_ends_the_wait_after_the_waiting_time():
    """The wait timer the handler starts is the one the simulator fires: a dropped reply gives MQDS_NO_RSP_FROM_OWNER."""
    world = World()
    bootstrap_pec(world, PEC, "site0")
    world.settle()
    add_site(world, "site1", PSC1)
    world.settle()
    world.network.drop(lambda m: m.source_machine == PEC and m.destination_machine == PSC1)
    number = create_site(world, PSC1, "site2", "PSC2")
    world.advance(9.0)
    assert (PSC1, number) not in world.results
    world.advance(2.0)
    assert world.results[(PSC1, number)] == st.MQDS_NO_RSP_FROM_OWNER
    assert world.nodes[PSC1].pending_requests == {}
