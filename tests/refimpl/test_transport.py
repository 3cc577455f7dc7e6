"""The simulated MSMQ Express transport: format names, queues, Nacks, timeouts and injected faults."""

import math

import attrs
import pytest

from mqspec.clauses import covers
from mqspec.model.errors import ModelError
from mqspec.model.guid import Guid
from mqspec.model.jsonform import from_json, to_json
from mqspec.refimpl.clock import Scheduler
from mqspec.refimpl.transport import (
    CALG_MD5,
    INFINITE,
    SENDER_ID_TYPE_QM,
    AckRequested,
    Arrived,
    Delivery,
    MessageClass,
    MsmqMessage,
    Network,
    admin_queue_format_name,
    machine_of,
    msmq_priority,
    parse_format_name,
    replication_queue_direct,
    replication_queue_name,
    replication_queue_private,
)

GA, GB, GC = Guid.from_name("qm-a"), Guid.from_name("qm-b"), Guid.from_name("qm-c")
LATENCY = 0.01


def make_net(seed: int = 0, **kw) -> tuple[Scheduler, Network]:
    s = Scheduler()
    net = Network(s, seed=seed, latency=LATENCY, **kw)
    net.add_machine("PSC-A", GA)
    net.add_machine("PSC-B", GB)
    net.add_machine("BSC-C", GC)
    return s, net


def rep(body=b"\x00\x01", src="PSC-A", dst="PSC-B", timeout=10, **kw) -> MsmqMessage:
    """A message shaped as 3.1.7.2.1 shapes one, from ``src`` (GUID GA unless told) to ``dst``."""
    guid = kw.pop("guid", GA)
    fields = dict(
        source_machine=src,
        destination_machine=dst,
        destination_format_name=replication_queue_direct(dst),
        body=body,
        time_to_reach_queue=timeout,
        time_to_be_received=timeout,
        ack_requested=AckRequested.NACK_REACH_QUEUE,
        admin_queue=admin_queue_format_name(guid),
        response_queue=admin_queue_format_name(guid),
        hash_algorithm=CALG_MD5,
        sender_identifier_type=SENDER_ID_TYPE_QM,
        sender_identifier=guid,
    )
    fields.update(kw)
    return MsmqMessage(**fields)


def run(s: Scheduler, net: Network, until: float) -> list[Arrived]:
    arrivals = []

    def dispatch(event):
        arrived = net.handle(event)
        if arrived is not None:
            arrivals.append(arrived)

    s.run_until(until, dispatch)
    return arrivals


def drain(net: Network, machine: str) -> list[MsmqMessage]:
    out = []
    while (m := net.dequeue(machine)) is not None:
        out.append(m)
    return out


# -- values ---------------------------------------------------------------------------------------


def test_message_classes_have_the_mq_h_values():
    """The class values are MSMQ's MQMSG_CLASS_* constants."""
    assert MessageClass.NORMAL == 0
    assert MessageClass.NACK_BAD_DST_Q == 0x8000
    assert MessageClass.NACK_REACH_QUEUE_TIMEOUT == 0x8002
    assert MessageClass.NACK_BAD_SIGNATURE == 0x8006
    assert MessageClass.NACK_UNSUPPORTED_CRYPTO_PROVIDER == 0x800B
    assert MessageClass.NACK_Q_DELETED == 0xC000
    assert MessageClass.NACK_RECEIVE_TIMEOUT == 0xC002
    assert MessageClass.NACK_RECEIVE_TIMEOUT_AT_SENDER == 0xC003
    assert (MessageClass.ACK_REACH_QUEUE, MessageClass.ACK_RECEIVE) == (0x0002, 0x4000)


@covers("MC-MQDSRP", "3.1.5.1")
def test_a_nack_is_a_class_from_bad_dest_queue_to_receive_timeout_at_sender():
    """is_nack is the inclusive range NackBadDestQueue..NackReceiveTimeoutAtSender; Normal and positive acks are not Nacks."""
    nacks = [k for k in MessageClass if k.is_nack()]
    assert nacks[0] is MessageClass.NACK_BAD_DST_Q and nacks[-1] is MessageClass.NACK_RECEIVE_TIMEOUT_AT_SENDER
    assert len(nacks) == 16
    for k in (MessageClass.NORMAL, MessageClass.REPORT, MessageClass.ACK_REACH_QUEUE, MessageClass.ACK_RECEIVE):
        assert not k.is_nack()


def test_acknowledgment_flags_have_the_mq_h_values():
    """AckRequested holds the MQMSG_ACKNOWLEDGMENT_* bits; the text's AckNackReachQueue is NEG_ARRIVAL alone."""
    assert AckRequested.NACK_REACH_QUEUE == AckRequested.NEG_ARRIVAL == 0x04
    assert AckRequested.FULL_REACH_QUEUE == 0x05 and AckRequested.NACK_RECEIVE == 0x0C
    assert AckRequested.FULL_RECEIVE == 0x0E
    assert AckRequested.from_text("AckNackReachQueue") is AckRequested.NACK_REACH_QUEUE
    assert AckRequested.from_text("None") is AckRequested.NONE
    with pytest.raises(ModelError):
        AckRequested.from_text("AckEverything")


def test_priority_8_of_the_text_is_sent_as_7():
    """msmq_priority keeps 0..7 and maps the text's 8 to MQ_MAX_PRIORITY (E-055); a message refuses 8."""
    assert [msmq_priority(p) for p in (0, 3, 7, 8)] == [0, 3, 7, 7]
    for bad in (-1, 9, True, "8"):
        with pytest.raises(ModelError):
            msmq_priority(bad)
    with pytest.raises(ModelError):
        rep(priority=8)


@covers("MC-MQDSRP", "1.9")
def test_replication_queue_format_names_are_those_of_section_1_9():
    """REPLICATION_QUEUE_NAME, _DIRECT and _PRIVATE print as the Standards Assignments table says."""
    g = Guid.parse("e6eaba61-d1c6-11db-baac-0003ff4e2d22")
    assert replication_queue_name("PEC1") == "PEC1\\private$\\mqis_queue$"
    assert replication_queue_direct("PEC1") == "DIRECT=OS:PEC1\\private$\\mqis_queue$"
    assert replication_queue_private(g) == "PRIVATE=e6eaba61-d1c6-11db-baac-0003ff4e2d22\\1"
    assert admin_queue_format_name(g) == replication_queue_private(g)


def test_format_names_parse_case_insensitively_with_hex_queue_numbers():
    """Prefixes ignore case, GUIDs may carry braces, and a private queue number is hexadecimal."""
    g = Guid.from_name("x")
    assert parse_format_name(f"private={{{g}}}\\00000001") == parse_format_name(f"PRIVATE={g}\\1")
    assert parse_format_name(f"PRIVATE={g}\\1F").number == 0x1F
    direct = parse_format_name("direct=os:Host\\private$\\q")
    assert (direct.machine, direct.path) == ("Host", "private$\\q")
    assert machine_of("DIRECT=OS:Host\\private$\\q") == "Host"
    with pytest.raises(ModelError):
        machine_of(f"PRIVATE={g}\\1")


@pytest.mark.parametrize(
    "text",
    [
        "", "DIRECT=TCP:10.0.0.1\\q", "DIRECT=OS:\\q", "DIRECT=OS:host", "PRIVATE=nope\\1",
        "PUBLIC=x", "PRIVATE=" + "0" * 32 + "\\1g",
    ],
)
def test_malformed_format_names_are_refused(text):
    """Only DIRECT=OS:machine\\path and PRIVATE=guid\\hex are format names here."""
    with pytest.raises(ModelError):
        parse_format_name(text)


def test_a_direct_destination_must_name_the_destination_machine():
    """A DIRECT=OS: destination on another machine than destination_machine is a model error."""
    with pytest.raises(ModelError):
        rep(destination_format_name=replication_queue_direct("PSC-A"))
    assert rep(destination_format_name=replication_queue_direct("psc-b")).destination_machine == "PSC-B"


def test_message_fields_are_validated():
    """Timeouts are ULONG seconds, the body is bytes, enums are enums."""
    for bad in (
        dict(time_to_reach_queue=-1), dict(time_to_be_received=INFINITE + 1), dict(body="text"),
        dict(klass=0), dict(ack_requested=4), dict(sender_identifier_type=3), dict(admin_queue="q"),
        dict(sent_at=-1.0), dict(sent_at=math.inf),
    ):
        with pytest.raises(ModelError):
            rep(**bad)


def test_the_hot_path_copies_equal_attrs_evolve():
    """The sent copy (new id and time) and a template's copy with a new body equal attrs.evolve's, a subclass's too."""
    from mqspec.refimpl.transport import _stamped, with_body

    m = rep(
        message_id=7, correlation_id=3, klass=MessageClass.NACK_BAD_SIGNATURE, priority=6,
        time_to_be_received=40, delivery=Delivery.RECOVERABLE, ack_requested=AckRequested.FULL_RECEIVE,
        response_queue=None, hash_algorithm=9, signature_ok=False, sender_identifier_type=1, sent_at=1.5,
    )
    assert _stamped(m, 11, 2.5, m.body) == attrs.evolve(m, message_id=11, sent_at=2.5)
    assert _stamped(m, 11, 2.5, b"\x00") == attrs.evolve(m, message_id=11, sent_at=2.5, body=b"\x00")
    assert with_body(m, b"\x00\x09") == attrs.evolve(m, body=b"\x00\x09")
    with pytest.raises(ModelError, match="body"):
        with_body(m, "text")
    from mqspec.refimpl.notify import NotificationMsmqMessage

    n = NotificationMsmqMessage(**{f.name: getattr(m, f.name) for f in attrs.fields(MsmqMessage)},
                                authentication_level=1)
    assert _stamped(n, 11, 2.5, b"\x00") == attrs.evolve(n, message_id=11, sent_at=2.5, body=b"\x00")
    assert with_body(n, b"\x00") == attrs.evolve(n, body=b"\x00")
    assert type(_stamped(n, 11, 2.5, n.body)) is NotificationMsmqMessage


def test_sending_with_a_body_sends_the_message_carrying_that_body():
    """send(m, body) sends what send(with_body(m, body)) sends, and refuses a body that is not bytes."""
    from mqspec.refimpl.transport import with_body

    s, net = make_net()
    a = net.send(rep(), b"\x00\x07")
    b = net.send(with_body(rep(), b"\x00\x07"))
    assert a.body == b"\x00\x07" and a == attrs.evolve(b, message_id=a.message_id)
    with pytest.raises(ModelError, match="body"):
        net.send(rep(), "text")
    assert net.sent == 2


def test_world_message_of_reuses_checked_attributes_only_for_equal_typed_ones():
    """message_of builds the same message on its fast path, and still refuses a priority of True or a float timeout."""
    from mqspec.model.mqdsrp import BSCAckMessage
    from mqspec.refimpl.effects import AckRequested as Ack
    from mqspec.refimpl.effects import EnqueueMessage
    from mqspec.refimpl.world import World

    world = World()
    fields = dict(node="BSC1", destination="PSC1", format_name=replication_queue_direct("PSC1"),
                  time_to_reach_queue=1200, time_to_be_received=1200, priority=3, ack_requested=Ack.NONE,
                  admin_queue=None, response_queue=None, sender_identifier=GA)
    bodies = [BSCAckMessage(GB, GC, "BSC1"), BSCAckMessage(GB, GA, "BSC1")]
    for body in bodies:
        effect = EnqueueMessage(body=body, **fields)
        assert world.message_of(effect) == world._new_message(effect)
    assert world.message_of(EnqueueMessage(body=bodies[0], **fields)).body != world.message_of(
        EnqueueMessage(body=bodies[1], **fields)).body
    world.message_of(EnqueueMessage(body=bodies[0], **{**fields, "priority": 1}))  # True == 1
    for bad in (dict(priority=True), dict(priority=3.0), dict(time_to_reach_queue=1200.0)):
        with pytest.raises(ModelError):
            world.message_of(EnqueueMessage(body=bodies[0], **{**fields, **bad}))
    other = attrs.evolve(EnqueueMessage(body=bodies[0], **fields), sender_identifier=GB)
    assert world.message_of(other).sender_identifier == GB


def test_messages_round_trip_through_json():
    """An MsmqMessage survives to_json / from_json unchanged (enums as numbers, body as hex)."""
    m = rep(
        message_id=7, klass=MessageClass.NACK_BAD_SIGNATURE,
        ack_requested=AckRequested.FULL_RECEIVE, sent_at=1.5,
    )
    data = to_json(m)
    assert data["klass"] == 0x8006 and data["body"] == "0001"
    assert from_json(data, {"MsmqMessage": MsmqMessage}) == m


# -- delivery -------------------------------------------------------------------------------------


def test_send_assigns_an_id_and_the_send_time():
    """send returns the message with a fresh message_id and sent_at = now."""
    s, net = make_net()
    s.advance_to(3.0)
    a, b = net.send(rep()), net.send(rep())
    assert (a.sent_at, b.sent_at) == (3.0, 3.0) and a.message_id != b.message_id


def test_a_message_arrives_after_the_link_latency():
    """The message enters the destination's replication queue one latency later, not before."""
    s, net = make_net()
    net.set_latency("PSC-A", "PSC-B", 0.25)
    sent = net.send(rep())
    assert run(s, net, 0.2) == [] and net.dequeue("PSC-B") is None
    assert run(s, net, 0.25) == [Arrived("PSC-B", "private$\\mqis_queue$")]
    assert net.dequeue("PSC-B") == sent


def test_a_message_to_the_own_machine_needs_no_wire():
    """A queue on the sending machine receives the message at the same instant."""
    s, net = make_net()
    net.send(rep(dst="PSC-A", destination_format_name=replication_queue_private(GA)))
    assert run(s, net, 0.0) == [Arrived("PSC-A", "private$\\mqis_queue$")]


def test_private_and_direct_names_reach_the_same_queue():
    """PRIVATE=<guid>\\1 and DIRECT=OS:<machine>\\private$\\mqis_queue$ are one queue (E-051)."""
    s, net = make_net()
    net.send(rep(body=b"direct"))
    net.send(rep(body=b"private", destination_format_name=replication_queue_private(GB)))
    run(s, net, 1.0)
    assert [m.body for m in drain(net, "psc-b")] == [b"direct", b"private"]
    assert net.resolve(replication_queue_private(GB)) == ("PSC-B", "private$\\mqis_queue$")


def test_a_queue_orders_by_priority_then_arrival():
    """Higher priority is dequeued first; equal priorities in arrival order."""
    s, net = make_net()
    for body, prio in ((b"1", 3), (b"2", 7), (b"3", 3), (b"4", 0), (b"5", 7)):
        net.send(rep(body=body, priority=prio))
    run(s, net, 1.0)
    assert [m.body for m in drain(net, "PSC-B")] == [b"2", b"5", b"1", b"3", b"4"]


def test_only_normal_express_messages_can_be_sent():
    """Acknowledgments are made by the network and Recoverable delivery is not modelled."""
    _, net = make_net()
    for bad in (rep(klass=MessageClass.NACK_BAD_DST_Q), rep(delivery=Delivery.RECOVERABLE)):
        with pytest.raises(ModelError):
            net.send(bad)
    with pytest.raises(ModelError):
        net.send(rep(src="NOBODY"))


def test_the_network_refuses_foreign_events():
    """handle only takes network events, so a driver cannot lose a timer in it."""
    _, net = make_net()
    assert not net.handles("timer")
    with pytest.raises(ModelError):
        net.handle("timer")


# -- Nacks ----------------------------------------------------------------------------------------


def test_a_nack_returns_the_original_body_and_destination():
    """A Nack carries the original body and DestinationQueueFormatName, which 3.1.5.1 and 3.3.7.9 read (E-052)."""
    s, net = make_net()
    net.partition("PSC-A", "PSC-B")
    sent = net.send(rep(body=b"\x00\x01change-request", timeout=10))
    run(s, net, 11.0)
    [nack] = drain(net, "PSC-A")
    assert nack.klass is MessageClass.NACK_REACH_QUEUE_TIMEOUT and nack.klass.is_nack()
    assert nack.body == sent.body and nack.destination_format_name == sent.destination_format_name
    assert machine_of(nack.destination_format_name) == "PSC-B"
    assert nack.correlation_id == sent.message_id and nack.message_id != sent.message_id
    assert nack.ack_requested is AckRequested.NONE and nack.time_to_be_received == INFINITE


def test_time_to_reach_queue_expiry_nacks_at_the_deadline():
    """A message that cannot reach its queue within TimeToReachQueue is Nacked at sent_at + TTRQ exactly."""
    s, net = make_net()
    net.partition("PSC-A", "PSC-B")
    s.advance_to(2.0)
    net.send(rep(timeout=10))
    assert run(s, net, 11.99) == []
    assert run(s, net, 12.0) == [Arrived("PSC-A", "private$\\mqis_queue$")]
    assert net.stats().expired == 1


def test_a_delay_beyond_time_to_reach_queue_is_a_reach_queue_timeout():
    """A message delayed past its deadline never arrives; the sender Nacks it at the deadline."""
    s, net = make_net()
    net.delay(lambda m: m.klass is MessageClass.NORMAL, 30.0)
    net.send(rep(timeout=10))
    run(s, net, 100.0)
    assert net.dequeue("PSC-B") is None
    assert [m.klass for m in drain(net, "PSC-A")] == [MessageClass.NACK_REACH_QUEUE_TIMEOUT]


def test_no_nack_unless_asked_for():
    """With AcknowledgmentRequested None, or no administration queue, an expiry is silent."""
    s, net = make_net()
    net.partition("PSC-A", "PSC-B")
    net.send(rep(ack_requested=AckRequested.NONE))
    net.send(rep(admin_queue=None))
    run(s, net, 100.0)
    assert net.dequeue("PSC-A") is None and net.stats().nacked == 0 and net.stats().expired == 2


def test_time_to_be_received_expiry_discards_at_dequeue():
    """A message left in its queue past sent_at + TTBR is discarded at dequeue, silently under AckNackReachQueue (E-053)."""
    s, net = make_net()
    net.send(rep(timeout=10, body=b"old"))
    run(s, net, 10.5)
    assert net.queue_depth("PSC-B") == 1
    assert net.dequeue("PSC-B") is None
    assert net.stats().expired == 1 and net.stats().nacked == 0


def test_time_to_be_received_expiry_nacks_when_receive_nacks_are_asked_for():
    """With NEG_RECEIVE requested the discarded message comes back as NACK_RECEIVE_TIMEOUT."""
    s, net = make_net()
    net.send(rep(timeout=10, ack_requested=AckRequested.NACK_RECEIVE))
    run(s, net, 10.0)
    assert net.dequeue("PSC-B").klass is MessageClass.NORMAL  # exactly at the deadline it is still receivable
    net.send(rep(timeout=10, ack_requested=AckRequested.NACK_RECEIVE))
    run(s, net, 30.0)
    assert net.dequeue("PSC-B") is None
    run(s, net, 31.0)
    assert [m.klass for m in drain(net, "PSC-A")] == [MessageClass.NACK_RECEIVE_TIMEOUT]


def test_a_bad_signature_is_nacked_by_the_destination():
    """A tampered message fails the destination's check: discarded, NACK_BAD_SIGNATURE one latency later."""
    s, net = make_net()
    net.tamper(lambda m: m.body == b"evil", times=1)
    net.send(rep(body=b"evil"))
    net.send(rep(body=b"evil"))
    run(s, net, LATENCY)
    assert [m.body for m in drain(net, "PSC-B")] == [b"evil"]  # only the first was tampered with
    assert net.dequeue("PSC-A") is None
    run(s, net, 2 * LATENCY)
    [nack] = drain(net, "PSC-A")
    assert nack.klass is MessageClass.NACK_BAD_SIGNATURE and nack.body == b"evil"


def test_an_unknown_machine_is_a_bad_destination():
    """Sending to a machine nobody hosts is Nacked NACK_BAD_DST_Q by the sender at once."""
    s, net = make_net()
    net.send(rep(dst="GHOST"))
    run(s, net, 0.0)
    [nack] = drain(net, "PSC-A")
    assert nack.klass is MessageClass.NACK_BAD_DST_Q and nack.destination_machine == "GHOST"


def test_an_unknown_queue_is_a_bad_destination_from_the_destination():
    """A known machine without the queue Nacks NACK_BAD_DST_Q, which travels back over the link."""
    s, net = make_net()
    net.send(rep(destination_format_name="DIRECT=OS:PSC-B\\private$\\nosuch"))
    net.send(rep(destination_format_name=replication_queue_private(GC)))  # BSC-C's queue, sent to PSC-B
    run(s, net, 2 * LATENCY)
    assert [m.klass for m in drain(net, "PSC-A")] == [MessageClass.NACK_BAD_DST_Q] * 2
    assert net.dequeue("PSC-B") is None


def test_positive_acknowledgments_when_asked_for():
    """FULL_RECEIVE asks for ACK_REACH_QUEUE on arrival and ACK_RECEIVE on dequeue; they are not Nacks."""
    s, net = make_net()
    sent = net.send(rep(ack_requested=AckRequested.FULL_RECEIVE | AckRequested.POS_ARRIVAL))
    run(s, net, 1.0)
    assert net.dequeue("PSC-B") == sent
    run(s, net, 2.0)
    acks = drain(net, "PSC-A")
    assert [a.klass for a in acks] == [MessageClass.ACK_REACH_QUEUE, MessageClass.ACK_RECEIVE]
    assert not any(a.klass.is_nack() for a in acks) and net.stats().acked == 2


def test_an_acknowledgment_to_an_unknown_admin_queue_vanishes():
    """Acknowledgments are never acknowledged: one with nowhere to go is counted lost."""
    s, net = make_net()
    net.partition("PSC-A", "PSC-B")
    net.send(rep(admin_queue=replication_queue_private(Guid.from_name("nobody"))))
    run(s, net, 20.0)
    assert net.stats().lost == 1 and net.stats().nacked == 0


# -- faults ---------------------------------------------------------------------------------------


def test_drop_loses_matching_messages_silently():
    """A dropped message never arrives and no Nack is made (Express loss is silent, E-050)."""
    s, net = make_net()
    handle = net.drop(lambda m: m.body == b"x", times=2)
    for body in (b"x", b"y", b"x", b"x"):
        net.send(rep(body=body))
    run(s, net, 5.0)
    assert [m.body for m in drain(net, "PSC-B")] == [b"y", b"x"]
    assert net.dequeue("PSC-A") is None and net.stats().lost == 2
    assert net.clear(handle) is False  # used up


def test_a_cleared_fault_stops_applying():
    """clear removes a standing fault."""
    s, net = make_net()
    handle = net.drop(lambda m: True)
    net.send(rep(body=b"1"))
    assert net.clear(handle) is True
    net.send(rep(body=b"2"))
    run(s, net, 1.0)
    assert [m.body for m in drain(net, "PSC-B")] == [b"2"]


def test_duplicate_delivers_the_same_message_twice():
    """A duplicated message arrives twice with the same message_id."""
    s, net = make_net()
    net.duplicate(lambda m: True, times=1)
    sent = net.send(rep())
    run(s, net, 1.0)
    assert drain(net, "PSC-B") == [sent, sent] and net.stats().duplicated == 1


def test_delay_postpones_arrival():
    """A delay fault adds its seconds to the link latency."""
    s, net = make_net()
    net.delay(lambda m: True, 2.0)
    net.send(rep())
    assert run(s, net, 2.0) == []
    assert len(run(s, net, 2.0 + LATENCY)) == 1


def test_partition_holds_messages_until_heal():
    """Messages sent across a cut link wait at the sender and leave, in order, when it heals (E-058)."""
    s, net = make_net()
    net.partition("PSC-B", "PSC-A")
    net.send(rep(body=b"1", timeout=INFINITE))
    net.send(rep(body=b"2", timeout=INFINITE))
    net.send(rep(body=b"other", dst="BSC-C", timeout=INFINITE))
    run(s, net, 50.0)
    assert net.dequeue("PSC-B") is None and net.dequeue("BSC-C").body == b"other"
    net.heal("PSC-A", "PSC-B")
    run(s, net, 50.0 + LATENCY)
    assert [m.body for m in drain(net, "PSC-B")] == [b"1", b"2"]


def test_heal_without_arguments_heals_every_link():
    """heal() restores all partitions."""
    s, net = make_net()
    net.partition("PSC-A", "PSC-B")
    net.partition("PSC-A", "BSC-C")
    net.send(rep(dst="PSC-B", timeout=INFINITE))
    net.send(rep(dst="BSC-C", timeout=INFINITE))
    net.heal()
    run(s, net, 1.0)
    assert net.queue_depth("PSC-B") == net.queue_depth("BSC-C") == 1


def test_random_loss_is_seeded():
    """The same seed loses the same messages; rate 0 loses none and rate 1 loses every remote one."""

    def lost_bodies(seed, rate):
        s, net = make_net(seed=seed, loss_rate=rate)
        for i in range(200):
            net.send(rep(body=i.to_bytes(2, "big")))
        net.send(rep(dst="PSC-A", destination_format_name=replication_queue_private(GA), body=b"local"))
        run(s, net, 1.0)
        got = {m.body for m in drain(net, "PSC-B")} | {m.body for m in drain(net, "PSC-A")}
        return sorted({i.to_bytes(2, "big") for i in range(200)} - got), b"local" in got

    first, _ = lost_bodies(7, 0.3)
    assert first == lost_bodies(7, 0.3)[0] and 20 < len(first) < 100
    assert first != lost_bodies(8, 0.3)[0]
    assert lost_bodies(7, 0.0)[0] == []
    lost_all, local_kept = lost_bodies(7, 1.0)
    assert len(lost_all) == 200 and local_kept


def test_crash_loses_queued_messages_and_restart_starts_empty():
    """A crash loses the machine's queued Express messages; after restart it receives again."""
    s, net = make_net()
    net.send(rep(body=b"1"))
    run(s, net, 1.0)
    assert net.crash("PSC-B") == 1 and not net.is_up("PSC-B")
    with pytest.raises(ModelError):
        net.dequeue("PSC-B")
    net.restart("PSC-B")
    assert net.dequeue("PSC-B") is None
    net.send(rep(body=b"2"))
    run(s, net, 2.0)
    assert [m.body for m in drain(net, "PSC-B")] == [b"2"] and net.stats().lost == 1


def test_messages_to_a_crashed_machine_wait_for_its_restart():
    """The sender keeps messages for a down machine (also ones already on the wire) until it restarts."""
    s, net = make_net()
    net.send(rep(body=b"on-the-wire", timeout=INFINITE))
    net.crash("PSC-B")
    net.send(rep(body=b"later", timeout=INFINITE))
    run(s, net, 5.0)
    net.restart("PSC-B")
    run(s, net, 5.0 + LATENCY)
    assert [m.body for m in drain(net, "PSC-B")] == [b"on-the-wire", b"later"]


def test_a_message_held_for_a_down_machine_expires():
    """A message held for a down machine is Nacked when its TimeToReachQueue runs out."""
    s, net = make_net()
    net.crash("PSC-B")
    net.send(rep(timeout=10))
    run(s, net, 10.0)
    assert [m.klass for m in drain(net, "PSC-A")] == [MessageClass.NACK_REACH_QUEUE_TIMEOUT]


def test_a_sender_crash_loses_its_outgoing_messages():
    """Messages held at a sender are lost with it: no Nack, nothing after the restart."""
    s, net = make_net()
    net.partition("PSC-A", "PSC-B")
    net.send(rep(timeout=10))
    assert net.crash("PSC-A") == 1
    net.restart("PSC-A")
    net.heal()
    run(s, net, 20.0)
    assert net.dequeue("PSC-B") is None and net.dequeue("PSC-A") is None
    net.crash("PSC-A")
    with pytest.raises(ModelError):
        net.send(rep())


def test_counters_add_up():
    """sent, delivered, dequeued, bytes and nacked count what happened."""
    s, net = make_net()
    net.send(rep(body=b"abc"))
    net.send(rep(body=b"de", dst="GHOST"))
    run(s, net, 1.0)
    drain(net, "PSC-B")
    drain(net, "PSC-A")
    st = net.stats()
    assert (st.sent, st.bytes_sent, st.nacked, st.delivered, st.dequeued) == (2, 5, 1, 2, 2)
    assert st.bytes_delivered == 5 and st.lost == 0


def scenario(seed: int) -> list:
    """A busy run with every fault kind; returns its full trace."""
    s, net = make_net(seed=seed, loss_rate=0.2)
    net.duplicate(lambda m: m.priority == 7, times=3)
    net.delay(lambda m: m.body[:1] == b"\x05", 0.5)
    net.tamper(lambda m: m.body[:1] == b"\x09", times=2)
    trace = []
    for i in range(60):
        src, dst = [("PSC-A", "PSC-B"), ("PSC-B", "BSC-C"), ("BSC-C", "PSC-A")][i % 3]
        guid = {"PSC-A": GA, "PSC-B": GB, "BSC-C": GC}[src]
        if i == 20:
            net.partition("PSC-A", "PSC-B")
        if i == 40:
            net.heal()
        body = bytes([i % 11, i])
        net.send(rep(body=body, src=src, dst=dst, guid=guid, priority=i % 8, timeout=1 + i % 3))
        for a in run(s, net, s.now + 0.1):
            while (m := net.dequeue(a.machine)) is not None:
                trace.append((s.now, a.machine, m.message_id, m.klass, m.body))
    return [*trace, net.stats()]


def test_runs_are_deterministic_for_a_seed():
    """The same seed gives the same trace, message for message, and another seed another trace."""
    assert scenario(3) == scenario(3)
    assert scenario(3) != scenario(4)


def test_a_sender_that_crashed_forgets_its_messages_on_the_wire():
    """A message on the wire still arrives after its sender crashed; one that cannot is neither resent nor Nacked."""
    s, net = make_net()
    net.send(rep(body=b"arrives", timeout=10))
    net.delay(lambda m: m.body == b"too-slow", 30.0)
    net.send(rep(body=b"too-slow", timeout=10))
    net.send(rep(body=b"bounces", dst="BSC-C", timeout=10))
    net.crash("BSC-C")
    net.crash("PSC-A")
    net.restart("PSC-A")
    run(s, net, 1.0)
    net.restart("BSC-C")
    run(s, net, 40.0)
    assert net.dequeue("PSC-A") is None and net.dequeue("BSC-C") is None
    st = net.stats()
    assert (st.delivered, st.expired, st.lost, st.nacked) == (1, 1, 1, 0)
