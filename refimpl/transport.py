"""The MSMQ transport under MC-MQDSRP: messages, format names and a simulated Express network.

"The protocol uses the MSMQ binary transport for all replication messages, as specified in
[MS-MQQB]. The replication data is described by a replication message, which is carried in the
body of an MSMQ message." (MC-MQDSRP 2.1). [MS-MQQB] and [MS-MQDMPR] are not in this repository,
so every assumption made about them is a "modelling" entry of the errata register:

* E-050: the network: per-link latency, priority-then-FIFO queues, Express loss is silent;
* E-051: the format names of 1.9 and how they resolve to a queue;
* E-052: the message classes, and what a Nack carries (the original body and destination);
* E-053: which acknowledgment bit asks for which Nack;
* E-054: TimeToReachQueue / TimeToBeReceived, counted from the send;
* E-055: ``iPriority := 8`` of 3.2.7.6 and 3.3.7.1 does not fit MSMQ's 0..7 (an erratum);
* E-058: crashes, partitions, unknown destinations and bad signatures.

Covered: Express delivery between machines that each host queues, Nacks to the administration
queue, positive acknowledgments, fault injection (drop, duplicate, delay, tamper, partition,
crash, seeded random loss). Not covered: recoverable or transactional delivery, routing through
intermediate queue managers, encryption, journals and dead-letter queues, real signatures (a
message carries ``signature_ok``, which a fault can turn off).

Everything is deterministic for a given seed: the only randomness is ``random.Random(seed)``,
containers are dicts and lists in insertion order, and time is the :class:`Scheduler`'s.
"""

from __future__ import annotations

import functools
import heapq
import math
import random
from collections.abc import Callable
from enum import IntEnum, IntFlag

import attrs

from mqspec import memos
from mqspec.clauses import clause
from mqspec.model.errors import ModelError
from mqspec.model.guid import Guid
from mqspec.model.mqdsrp_changes import unchecked_constructor

from mqspec.refimpl.clock import Scheduler
from mqspec.refimpl.effects import AckRequested as EffectAck

#: MSMQ's INFINITE time-out (a ULONG of seconds that never expires)
INFINITE = 0xFFFFFFFF
#: CALG_MD5, the HashAlgorithm every replication message is signed with (3.1.7.2.1)
CALG_MD5 = 0x00008003
#: SenderIdentifierType values; 3.1.7.2.1 uses 2, the queue manager GUID
SENDER_ID_TYPE_NONE, SENDER_ID_TYPE_SID, SENDER_ID_TYPE_QM = 0, 1, 2
#: PROPID_M_PRIORITY: "An integer value between 7 and 0 (the default is 3)"
MQ_MIN_PRIORITY, MQ_MAX_PRIORITY, MQ_DEFAULT_PRIORITY = 0, 7, 3

#: the replication queue's path below its machine (REPLICATION_QUEUE_NAME, 1.9 and 3.1.1.2.1)
REPLICATION_QUEUE_PATH = "private$\\mqis_queue$"
#: the replication queue's private queue number (REPLICATION_QUEUE_PRIVATE, 1.9)
REPLICATION_QUEUE_NUMBER = 1


class MessageClass(IntEnum):
    """Message.Class: the MQMSG_CLASS_* values of mq.h ([MS-MQDMPR] 3.1.1.12 names in the docs).

    NACK_BAD_DST_Q is [MS-MQDMPR]'s NackBadDestQueue and NACK_RECEIVE_TIMEOUT_AT_SENDER its
    NackReceiveTimeoutAtSender, the two ends of the range 3.1.5.1 calls a Nack (E-052).
    """

    NORMAL = 0x0000
    REPORT = 0x0001
    ACK_REACH_QUEUE = 0x0002
    ACK_RECEIVE = 0x4000
    NACK_BAD_DST_Q = 0x8000
    NACK_PURGED = 0x8001
    NACK_REACH_QUEUE_TIMEOUT = 0x8002
    NACK_Q_EXCEED_QUOTA = 0x8003
    NACK_ACCESS_DENIED = 0x8004
    NACK_HOP_COUNT_EXCEEDED = 0x8005
    NACK_BAD_SIGNATURE = 0x8006
    NACK_BAD_ENCRYPTION = 0x8007
    NACK_COULD_NOT_ENCRYPT = 0x8008
    NACK_NOT_TRANSACTIONAL_Q = 0x8009
    NACK_NOT_TRANSACTIONAL_MSG = 0x800A
    NACK_UNSUPPORTED_CRYPTO_PROVIDER = 0x800B
    NACK_Q_DELETED = 0xC000
    NACK_Q_PURGED = 0xC001
    NACK_RECEIVE_TIMEOUT = 0xC002
    NACK_RECEIVE_TIMEOUT_AT_SENDER = 0xC003

    def is_nack(self) -> bool:
        """3.1.5.1: "a Nack class is a value from NackBadDestQueue to NackReceiveTimeoutAtSender,
        inclusive"."""
        return MessageClass.NACK_BAD_DST_Q <= self <= MessageClass.NACK_RECEIVE_TIMEOUT_AT_SENDER

    def is_acknowledgment(self) -> bool:
        """A positive or negative acknowledgment: made by a queue manager, never sent by a user."""
        return self not in (MessageClass.NORMAL, MessageClass.REPORT)


class AckRequested(IntFlag):
    """Message.AcknowledgmentRequested: the MQMSG_ACKNOWLEDGMENT_* bits of mq.h (E-053)."""

    NONE = 0x00
    POS_ARRIVAL = 0x01
    POS_RECEIVE = 0x02
    NEG_ARRIVAL = 0x04
    NEG_RECEIVE = 0x08
    NACK_REACH_QUEUE = 0x04  # the text's AckNackReachQueue
    FULL_REACH_QUEUE = 0x05
    NACK_RECEIVE = 0x0C
    FULL_RECEIVE = 0x0E

    @classmethod
    def from_text(cls, name: str) -> AckRequested:
        """The value of an ``iAckRequested`` the text names (the levels of effects.AckRequested)."""
        try:
            return {EffectAck.NONE: cls.NONE, EffectAck.ACK_NACK_REACH_QUEUE: cls.NACK_REACH_QUEUE}[EffectAck(name)]
        except ValueError:
            raise ModelError(f"the text names no acknowledgment level {name!r}") from None


# which bit of AcknowledgmentRequested asks for an acknowledgment of each class (E-053)
_ACK_BIT = {
    **{k: AckRequested.NEG_ARRIVAL for k in MessageClass if 0x8000 <= k < 0xC000},
    **{k: AckRequested.NEG_RECEIVE for k in MessageClass if k >= 0xC000},
    MessageClass.ACK_REACH_QUEUE: AckRequested.POS_ARRIVAL,
    MessageClass.ACK_RECEIVE: AckRequested.POS_RECEIVE,
}


class Delivery(IntEnum):
    """Message.DeliveryGuarantee (MQMSG_DELIVERY_*); 3.1.7.2.1 sends every message Express."""

    EXPRESS = 0
    RECOVERABLE = 1


def msmq_priority(i_priority: int) -> int:
    """The MSMQ priority for an ``iPriority`` of the text: 8 becomes 7 (erratum E-055).

    3.2.7.6 and 3.3.7.1 pass ``iPriority := 8``; PROPID_M_PRIORITY holds 0..7 and the
    BaseHeader carries it in three bits, so 8 is sent as MQ_MAX_PRIORITY, the highest there is.
    """
    if isinstance(i_priority, bool) or not isinstance(i_priority, int) or not 0 <= i_priority <= 8:
        raise ModelError(f"the text passes an iPriority of 0..8, not {i_priority!r}")
    return min(i_priority, MQ_MAX_PRIORITY)


# ---------------------------------------------------------------------------------------------
# Format names (1.9; E-051)


@clause("MC-MQDSRP", "1.9", "Standards Assignments")
def replication_queue_name(machine: str) -> str:
    """REPLICATION_QUEUE_NAME: ``<Machine Name>\\private$\\mqis_queue$`` (1.9, 3.1.1.2.1)."""
    return f"{_machine_name(machine)}\\{REPLICATION_QUEUE_PATH}"


def replication_queue_direct(machine: str) -> str:
    """REPLICATION_QUEUE_DIRECT: ``DIRECT=OS:<Machine Name>\\private$\\mqis_queue$`` (1.9)."""
    return f"DIRECT=OS:{replication_queue_name(machine)}"


def replication_queue_private(qm_guid: Guid) -> str:
    """REPLICATION_QUEUE_PRIVATE: ``PRIVATE=<Queue Manager GUID>\\1`` (1.9)."""
    if not isinstance(qm_guid, Guid):
        raise ModelError(f"a queue manager GUID is a Guid, not {qm_guid!r}")
    return f"PRIVATE={qm_guid}\\{REPLICATION_QUEUE_NUMBER}"


def admin_queue_format_name(qm_guid: Guid) -> str:
    """The iAdminQueueFormatName (and iResponseQueueFormatName) every acknowledged send passes.

    "REPLICATION_QUEUE_PRIVATE, where <Queue Manager GUID> is set to the sending queue manager
    GUID" (3.2.7.6, 3.3.6.2, 3.3.7.1, 3.3.7.3, 3.3.7.4, 3.3.7.9).
    """
    return replication_queue_private(qm_guid)


@attrs.frozen
class FormatName:
    """A parsed format name: ``DIRECT=OS:machine\\path`` or ``PRIVATE=guid\\number``."""

    machine: str | None = None
    path: str | None = None
    qm: Guid | None = None
    number: int | None = None


@functools.lru_cache(maxsize=4096)
def parse_format_name(text: str) -> FormatName:
    """Parse the two format-name shapes 1.9 uses; ModelError for anything else.

    >>> parse_format_name("DIRECT=OS:pec1\\\\private$\\\\mqis_queue$").machine
    'pec1'
    >>> parse_format_name("PRIVATE=00000000-0000-0000-0000-000000000001\\\\00000001").number
    1
    """
    if not isinstance(text, str):
        raise ModelError(f"a format name is text, not {text!r}")
    kind, sep, rest = text.partition("=")
    head, sep2, tail = rest.partition("\\")
    direct = kind.upper() == "DIRECT" and head[:3].upper() == "OS:" and head[3:] != ""
    if sep and sep2 and tail and direct:
        return FormatName(machine=head[3:], path=tail)
    if sep and sep2 and kind.upper() == "PRIVATE":
        # the queue number is hexadecimal, so "\1" and "\00000001" name the same queue (E-051)
        if 1 <= len(tail) <= 8 and all(c in "0123456789abcdefABCDEF" for c in tail):
            return FormatName(qm=Guid.parse(head), number=int(tail, 16))
    raise ModelError(f"not a DIRECT=OS: or PRIVATE= format name: {text!r}")


memos.register_cache(parse_format_name, "a format name's text -> the FormatName parsed from it")


def machine_of(format_name: str) -> str:
    """The machine a DIRECT=OS: name names ("Machine in ...DestinationQueueFormatName", 3.3.7.9)."""
    parsed = parse_format_name(format_name)
    if parsed.machine is None:
        raise ModelError(f"{format_name!r} names a queue manager GUID; use Network.resolve")
    return parsed.machine


def _machine_name(name: object) -> str:
    if not isinstance(name, str) or not name or "\\" in name:
        raise ModelError(f"a machine name is non-empty text without a backslash, not {name!r}")
    return name


# ---------------------------------------------------------------------------------------------
# The message


Validator = Callable[[object, attrs.Attribute, object], None]


def _check(ok: Callable[[object], bool], what: str) -> Validator:
    def validate(_inst: object, attr: attrs.Attribute, value: object) -> None:
        if not ok(value):
            raise ModelError(f"MsmqMessage.{attr.name} must be {what}, not {value!r}")

    return validate


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_format_name(v: object) -> bool:
    try:
        parse_format_name(v)
    except ModelError:
        return False
    return True


def _instance(cls: type) -> Validator:
    return _check(lambda v: isinstance(v, cls), f"a {cls.__name__}")


_int = _check(_is_int, "an int")
_ulong = _check(lambda v: _is_int(v) and 0 <= v <= 0xFFFFFFFF, "a ULONG")
_seconds = _check(lambda v: _is_int(v) and 0 <= v <= INFINITE, "whole seconds 0..INFINITE")
_name = _check(lambda v: isinstance(v, str) and v != "", "a machine name")
_format = _check(_is_format_name, "a DIRECT=OS: or PRIVATE= format name")
_opt_format = _check(lambda v: v is None or _is_format_name(v), "None or a format name")
_priority = _check(lambda v: _is_int(v) and MQ_MIN_PRIORITY <= v <= MQ_MAX_PRIORITY, "0..7")
_sender_type = _check(lambda v: _is_int(v) and v in (0, 1, 2), "0, 1 or 2")
_time = _check(lambda v: (_is_int(v) or isinstance(v, float)) and 0 <= v < math.inf, "a time")


@attrs.frozen(kw_only=True)
class MsmqMessage:
    """An MSMQ Message object with the attributes 3.1.7.2.1 sets, as the network carries it.

    ``message_id`` and ``sent_at`` are assigned by :meth:`Network.send`. An acknowledgment keeps
    every attribute of the message it acknowledges (its body, its destination format name) and
    gets its own ``message_id``, ``correlation_id`` = the original's id, its class, and no
    acknowledgment request of its own (E-052). ``signature_ok`` stands for the outcome of the
    destination's signature check.
    """

    message_id: int = attrs.field(default=0, validator=_int)
    correlation_id: int = attrs.field(default=0, validator=_int)
    source_machine: str = attrs.field(validator=_name)
    destination_machine: str = attrs.field(validator=_name)
    destination_format_name: str = attrs.field(validator=_format)
    body: bytes = attrs.field(validator=_check(lambda v: type(v) is bytes, "bytes"))
    klass: MessageClass = attrs.field(
        default=MessageClass.NORMAL, validator=_instance(MessageClass)
    )
    priority: int = attrs.field(default=MQ_DEFAULT_PRIORITY, validator=_priority)
    time_to_reach_queue: int = attrs.field(default=INFINITE, validator=_seconds)
    time_to_be_received: int = attrs.field(default=INFINITE, validator=_seconds)
    delivery: Delivery = attrs.field(default=Delivery.EXPRESS, validator=_instance(Delivery))
    ack_requested: AckRequested = attrs.field(
        default=AckRequested.NONE, validator=_instance(AckRequested)
    )
    admin_queue: str | None = attrs.field(default=None, validator=_opt_format)
    response_queue: str | None = attrs.field(default=None, validator=_opt_format)
    hash_algorithm: int = attrs.field(default=CALG_MD5, validator=_ulong)
    signature_ok: bool = attrs.field(default=True, validator=_instance(bool))
    sender_identifier_type: int = attrs.field(default=SENDER_ID_TYPE_NONE, validator=_sender_type)
    sender_identifier: Guid = attrs.field(default=Guid.NULL, validator=_instance(Guid))
    sent_at: float = attrs.field(default=0.0, validator=_time)

    def __attrs_post_init__(self) -> None:
        # a DIRECT=OS: name names its machine, which must be the machine the message is sent to
        named = parse_format_name(self.destination_format_name).machine
        if named is not None and named.casefold() != self.destination_machine.casefold():
            raise ModelError(
                f"{self.destination_format_name!r} is not on {self.destination_machine!r}"
            )

    @property
    def reach_deadline(self) -> float:
        """When TimeToReachQueue runs out (E-054): sent_at + TimeToReachQueue, or never."""
        ttrq = self.time_to_reach_queue
        return math.inf if ttrq == INFINITE else self.sent_at + ttrq

    @property
    def receive_deadline(self) -> float:
        """When TimeToBeReceived runs out (E-054): sent_at + TimeToBeReceived, or never."""
        ttbr = self.time_to_be_received
        return math.inf if ttbr == INFINITE else self.sent_at + ttbr


#: MsmqMessage(...) with the fields in order, without validators or __attrs_post_init__: only for
#: attribute values taken from a message that was built, and so validated, already
_unchecked_message = unchecked_constructor(MsmqMessage)


def _stamped(m: MsmqMessage, message_id: int, sent_at: float, body: bytes) -> MsmqMessage:
    """``m`` as :meth:`Network.send` puts it on the wire: with its own message_id and send time.

    The same value as ``attrs.evolve(m, message_id=..., sent_at=..., body=...)`` with the
    validators off, at half the cost (one is made per message sent): every other attribute is
    ``m``'s, checked when ``m`` was built, and ``body`` is ``m``'s or was checked by the caller.
    A subclass (an MS-MQCN message with more attributes) is copied by attrs.evolve, keeping them.
    """
    if type(m) is not MsmqMessage:
        with attrs.validators.disabled():
            return attrs.evolve(m, message_id=message_id, sent_at=sent_at, body=body)
    return _unchecked_message(
        message_id, m.correlation_id, m.source_machine, m.destination_machine, m.destination_format_name,
        body, m.klass, m.priority, m.time_to_reach_queue, m.time_to_be_received, m.delivery,
        m.ack_requested, m.admin_queue, m.response_queue, m.hash_algorithm, m.signature_ok,
        m.sender_identifier_type, m.sender_identifier, sent_at,
    )


def with_body(template: MsmqMessage, body: bytes) -> MsmqMessage:
    """``template`` carrying ``body``: ``attrs.evolve(template, body=body)`` for a template already built.

    Only the body is new, so only the body's check is made (the others held when ``template``
    was built, and the format-name check of __attrs_post_init__ does not read the body).
    """
    if type(body) is not bytes or type(template) is not MsmqMessage:
        return attrs.evolve(template, body=body)  # a subclass keeps its own attributes; a bad body raises
    return _stamped(template, template.message_id, template.sent_at, body)


# ---------------------------------------------------------------------------------------------
# The network


@attrs.frozen
class NetworkStats:
    """Counters for benchmarks: messages sent by users, placed in queues, dequeued, lost, ..."""

    sent: int = 0  # Network.send calls
    bytes_sent: int = 0  # body bytes of those
    delivered: int = 0  # messages (acknowledgments included) placed in a queue
    bytes_delivered: int = 0
    dequeued: int = 0
    lost: int = 0  # vanished without an acknowledgment: faults, random loss, crashes
    expired: int = 0  # TimeToReachQueue or TimeToBeReceived ran out
    duplicated: int = 0  # extra copies made by duplicate faults
    nacked: int = 0  # Nacks generated
    acked: int = 0  # positive acknowledgments generated


@attrs.frozen
class Arrived:
    """A message was just placed in ``queue`` (a path: ``private$\\mqis_queue$``) on ``machine``."""

    machine: str
    queue: str


@attrs.frozen
class FaultHandle:
    """Names an injected fault so that it can be cleared."""

    id: int
    action: str


Match = Callable[[MsmqMessage], bool]

_FLYING, _HELD, _DOOMED, _DONE = range(4)


class _Transit:
    """One copy of a message between leaving its sender and being placed in (or failing) a queue."""

    __slots__ = (
        "tid", "message", "src", "dst", "queue", "deadline", "extra", "state", "deadline_posted",
        "epoch",
    )

    def __init__(
        self, tid: int, message: MsmqMessage, src: str, dst: str, queue: str | None,
        deadline: float, extra: float, epoch: int,
    ) -> None:
        self.tid = tid  # a serial number: message ids repeat across duplicate copies
        self.message = message
        self.src = src  # machine keys (casefolded names)
        self.dst = dst
        self.queue = queue  # an acknowledgment's fixed target queue key; None: resolve at dst
        self.deadline = deadline
        self.extra = extra
        self.state = _FLYING
        self.deadline_posted = False
        self.epoch = epoch  # the sender's crash count when it sent: a crash forgets the message


class NetworkEvent:
    """A scheduler event that belongs to the network: hand it to :meth:`Network.handle`."""

    __slots__ = ("transit",)

    def __init__(self, transit: _Transit) -> None:
        self.transit = transit

    def __repr__(self) -> str:
        m = self.transit.message
        where = f"{self.transit.src}->{self.transit.dst}"
        return f"{type(self).__name__}(message_id={m.message_id}, {m.klass.name}, {where})"


class ArrivalEvent(NetworkEvent):
    """A message reaches its destination machine."""

    __slots__ = ()


class DeadlineEvent(NetworkEvent):
    """A message's TimeToReachQueue runs out while it is held or too slow to arrive."""

    __slots__ = ()


class _Machine:
    __slots__ = ("name", "guid", "up", "epoch", "queues", "numbers")

    def __init__(self, name: str, guid: Guid) -> None:
        self.name = name
        self.guid = guid
        self.up = True
        self.epoch = 0  # how many times it crashed
        self.queues: dict[str, tuple[str, list]] = {}  # path key -> (path as created, heap)
        self.numbers: dict[int, str] = {}  # private queue number -> path key


class _Fault:
    __slots__ = ("handle", "match", "seconds", "remaining")

    def __init__(
        self, handle: FaultHandle, match: Match, seconds: float, remaining: int | None
    ) -> None:
        self.handle = handle
        self.match = match
        self.seconds = seconds
        self.remaining = remaining


_COUNTERS = tuple(f.name for f in attrs.fields(NetworkStats))


class Network:
    """Machines, their queues, and the Express messages between them, on a :class:`Scheduler`.

    :meth:`send` puts a message on the wire; its arrival is an :class:`ArrivalEvent` on the
    scheduler, which the driver passes to :meth:`handle` (``scheduler.run_until(t, net.handle)``
    when the network is alone). :meth:`handle` returns :class:`Arrived` when a message entered a
    queue; :meth:`dequeue` takes the next one (priority first, then arrival order).
    """

    __slots__ = (
        "_sched", "_rng", "_latency", "_links", "_loss_rate", "_machines", "_by_guid",
        "_partitions", "_held", "_faults", "_next_id", "_next_fault", "_next_tid", "_arrivals",
        *_COUNTERS,
    )

    def __init__(
        self, scheduler: Scheduler, *, seed: int = 0, latency: float = 0.01, loss_rate: float = 0.0
    ) -> None:
        self._sched = scheduler
        self._rng = random.Random(seed)
        self._latency = _check_seconds(latency, "latency")
        self._links: dict[tuple[str, str], float] = {}
        self._loss_rate = 0.0
        self.set_loss_rate(loss_rate)
        self._machines: dict[str, _Machine] = {}
        self._by_guid: dict[Guid, str] = {}
        self._partitions: set[frozenset[str]] = set()  # membership tests only, never iterated
        self._held: dict[tuple[str, str], dict[int, _Transit]] = {}  # (src, dst) -> outgoing queue
        self._faults: dict[int, _Fault] = {}
        self._next_id = 1
        self._next_fault = 1
        self._next_tid = 0
        self._arrivals = 0
        for name in _COUNTERS:
            setattr(self, name, 0)

    # -- topology ------------------------------------------------------------------------------

    def add_machine(self, name: str, qm_guid: Guid) -> None:
        """Add a queue manager and its replication queue (REPLICATION_QUEUE_NAME, queue 1)."""
        key = _machine_name(name).casefold()
        if key in self._machines:
            raise ModelError(f"machine {name!r} already exists")
        if not isinstance(qm_guid, Guid) or qm_guid in self._by_guid:
            raise ModelError(f"queue manager GUID {qm_guid!r} is not a new Guid")
        self._machines[key] = _Machine(name, qm_guid)
        self._by_guid[qm_guid] = key
        self.add_queue(name, REPLICATION_QUEUE_PATH, REPLICATION_QUEUE_NUMBER)

    def add_queue(self, machine: str, path: str, number: int | None = None) -> None:
        """Create queue ``path`` (e.g. ``private$\\other``) on ``machine``, maybe with a number."""
        m = self._machine(machine)
        if not isinstance(path, str) or not path or path.casefold() in m.queues:
            raise ModelError(f"queue {path!r} is empty or already exists on {machine!r}")
        if number is not None:
            if not _is_int(number) or not 1 <= number <= 0xFFFFFFFF or number in m.numbers:
                raise ModelError(f"private queue number {number!r} is bad or taken on {machine!r}")
            m.numbers[number] = path.casefold()
        m.queues[path.casefold()] = (path, [])

    def machines(self) -> tuple[str, ...]:
        """The machine names, in the order they were added."""
        return tuple(m.name for m in self._machines.values())

    def is_up(self, machine: str) -> bool:
        return self._machine(machine).up

    def resolve(self, format_name: str) -> tuple[str, str] | None:
        """The (machine, queue path) a format name names here, or None if there is no such queue."""
        target = self._resolve(format_name)
        if target is None:
            return None
        m = self._machines[target[0]]
        return m.name, m.queues[target[1]][0]

    def set_latency(self, a: str, b: str, seconds: float) -> None:
        """The one-way delay between two machines, both directions (default: the constructor's)."""
        ka, kb = self._machine(a).name.casefold(), self._machine(b).name.casefold()
        self._links[(ka, kb)] = self._links[(kb, ka)] = _check_seconds(seconds, "latency")

    def set_loss_rate(self, rate: float) -> None:
        """The probability that a message between two different machines silently vanishes."""
        if isinstance(rate, bool) or not isinstance(rate, int | float) or not 0.0 <= rate <= 1.0:
            raise ModelError(f"a loss rate is a probability 0..1, not {rate!r}")
        self._loss_rate = float(rate)

    # -- faults --------------------------------------------------------------------------------

    def drop(self, match: Match, *, times: int | None = None) -> FaultHandle:
        """Silently lose matching messages (the next ``times`` of them, or all)."""
        return self._add_fault("drop", match, 0.0, times)

    def duplicate(self, match: Match, *, times: int | None = None) -> FaultHandle:
        """Deliver matching messages twice (same message_id, the copy right after the original)."""
        return self._add_fault("duplicate", match, 0.0, times)

    def delay(self, match: Match, seconds: float, *, times: int | None = None) -> FaultHandle:
        """Add ``seconds`` to the transit time of matching messages."""
        return self._add_fault("delay", match, _check_seconds(seconds, "delay"), times)

    def tamper(self, match: Match, *, times: int | None = None) -> FaultHandle:
        """Make matching messages fail the destination's signature check (signature_ok=False)."""
        return self._add_fault("tamper", match, 0.0, times)

    def clear(self, fault: FaultHandle) -> bool:
        """Remove an injected fault; False if it was already used up or cleared."""
        return self._faults.pop(fault.id, None) is not None

    def partition(self, a: str, b: str) -> None:
        """Cut the link between two machines: messages wait at their sender until :meth:`heal`."""
        ka, kb = self._machine(a).name.casefold(), self._machine(b).name.casefold()
        if ka == kb:
            raise ModelError("a machine cannot be partitioned from itself")
        self._partitions.add(frozenset((ka, kb)))

    def has_cut_links(self) -> bool:
        """Whether any link is cut (a :meth:`partition` not yet healed)."""
        return bool(self._partitions)

    def heal(self, a: str | None = None, b: str | None = None) -> None:
        """Restore the link between ``a`` and ``b`` (every link if both are omitted); resend."""
        if a is None and b is None:
            self._partitions.clear()
        else:
            ka, kb = self._machine(a).name.casefold(), self._machine(b).name.casefold()
            self._partitions.discard(frozenset((ka, kb)))
        self._flush()

    def crash(self, machine: str) -> int:
        """Stop a machine: its queued and outgoing Express messages are lost. Returns how many."""
        m = self._machine(machine)
        key = m.name.casefold()
        m.up = False
        m.epoch += 1
        lost = 0
        for _path, heap in m.queues.values():
            lost += len(heap)
            heap.clear()
        for pair in [p for p in self._held if p[0] == key]:
            for t in self._held.pop(pair).values():
                t.state = _DONE
                lost += 1
        self.lost += lost
        return lost

    def restart(self, machine: str) -> None:
        """Start a crashed machine again (with empty queues); senders resend what waited for it."""
        self._machine(machine).up = True
        self._flush()

    # -- sending and receiving -----------------------------------------------------------------

    def send(self, message: MsmqMessage, body: bytes | None = None) -> MsmqMessage:
        """Put a Normal Express message on the wire; returns it with its message_id and sent_at.

        With ``body``, the message sent is ``message`` carrying that body: what
        ``send(with_body(message, body))`` sends, with one copy fewer (the simulator keeps one
        checked message per sender, destination and kind, and sends it with each new body).
        """
        if body is None:
            body = message.body
        elif type(body) is not bytes:
            with_body(message, body)  # raises the validator's error
        src = self._machine(message.source_machine)
        if not src.up:
            raise ModelError(f"machine {src.name!r} is down and cannot send")
        if message.klass is not MessageClass.NORMAL or message.delivery is not Delivery.EXPRESS:
            raise ModelError("only Normal Express messages are sent; the network makes the acks")
        now = self._sched.now
        # the message was validated when it was built; only the id and the time change here
        sent = _stamped(message, self._new_id(), now, body)
        self.sent += 1
        self.bytes_sent += len(sent.body)
        src_key = src.name.casefold()
        dst_key = sent.destination_machine.casefold()
        if dst_key not in self._machines:
            # nobody answers for that machine name: the sender reports a bad destination (E-058)
            self._acknowledge(sent, MessageClass.NACK_BAD_DST_Q, src_key)
        else:
            self._transmit(sent, src_key, dst_key, None, sent.reach_deadline)
        return sent

    def handle(self, event: object) -> Arrived | None:
        """Process one network event popped from the scheduler."""
        if type(event) is ArrivalEvent:
            return self._arrive(event.transit)
        if type(event) is DeadlineEvent:
            self._deadline(event.transit)
            return None
        raise ModelError(f"not a network event: {event!r}")

    @staticmethod
    def handles(event: object) -> bool:
        """True for the events :meth:`handle` takes."""
        return isinstance(event, NetworkEvent)

    def dequeue(self, machine: str, queue: str = REPLICATION_QUEUE_PATH) -> MsmqMessage | None:
        """Take a queue's next message, discarding those whose TimeToBeReceived ran out (E-054)."""
        m, heap = self._queue(machine, queue)
        if not heap:  # the Dequeue Message loop ends with this call on every message it takes
            return None
        key = m.name.casefold()
        now = self._sched.now
        while heap:
            msg = heapq.heappop(heap)[2]
            ttbr = msg.time_to_be_received
            if ttbr != INFINITE and now > msg.sent_at + ttbr:  # msg.receive_deadline, without the call
                self.expired += 1
                self._acknowledge(msg, MessageClass.NACK_RECEIVE_TIMEOUT, key)
                continue
            self.dequeued += 1
            if msg.klass is MessageClass.NORMAL:
                self._acknowledge(msg, MessageClass.ACK_RECEIVE, key)
            return msg
        return None

    # -- the simulator's fast path (refimpl/fastpath.py) ---------------------------------------

    def quiet_arrival(self, source: str, destination: str, time_to_reach_queue: int,
                      spared: Callable[[], bool]) -> tuple[float, int] | None:
        """When a Normal Express message sent now would arrive untouched, and the sender's epoch.

        None when something could act on the message on its way: an injected fault that matches
        it, random loss, a cut link, a stopped or unknown destination, a TimeToReachQueue that
        runs out. ``spared`` says whether no fault matches the message (:meth:`spares`); it is
        asked only when there are faults.
        """
        src, dst = source.casefold(), destination.casefold()
        sender = self._machines.get(src)
        if sender is None or not sender.up or dst not in self._machines:
            return None
        if (src != dst and self._loss_rate) or self._blocked(src, dst):
            return None
        if self._faults and not spared():
            return None
        now = self._sched.now
        at = now + self._link_latency(src, dst)
        if time_to_reach_queue != INFINITE and at > now + time_to_reach_queue:
            return None
        return at, sender.epoch

    def spares(self, message: MsmqMessage) -> bool:
        """Whether no injected fault matches ``message``, asked without counting it.

        A match callable declares itself side-effect free with a ``pure`` attribute, the predicate
        to ask, which must give the same answer for the same message every time and must not
        depend on the message_id and sent_at :meth:`send` assigns; a fault without one counts as
        matching. The answer holds while :attr:`fault_generation` stays the same.
        """
        for fault in self._faults.values():
            pure = getattr(fault.match, "pure", None)
            if pure is None or pure(message):
                return False
        return True

    @property
    def fault_generation(self) -> tuple[int, int]:
        """Changes whenever a fault is added, used up or cleared (faults are only added with new ids)."""
        return self._next_fault, len(self._faults)

    def link_latency(self, source: str, destination: str) -> float:
        """The transit time of a message from ``source`` to ``destination`` (no fault delaying it)."""
        return self._link_latency(source.casefold(), destination.casefold())

    def blocked(self, source: str, destination: str) -> bool:
        """Whether a message from ``source`` would wait at its sender now (destination down, link cut)."""
        return self._blocked(source.casefold(), destination.casefold())

    def late_arrival(self, message: MsmqMessage, sent_at: float, epoch: int) -> Arrived | None:
        """A message sent at ``sent_at`` (by a sender in ``epoch``) that reaches its destination now.

        What :meth:`send` and the arrival would have done, done at the arrival: for a message the
        fast path did not send, found at its arrival to need the real network after all.
        """
        sent = _stamped(message, self._new_id(), sent_at, message.body)
        self.sent += 1
        self.bytes_sent += len(sent.body)
        self._next_tid += 1
        transit = _Transit(self._next_tid, sent, sent.source_machine.casefold(),
                           sent.destination_machine.casefold(), None, sent.reach_deadline, 0.0, epoch)
        return self._arrive(transit)

    def queue_depth(self, machine: str, queue: str = REPLICATION_QUEUE_PATH) -> int:
        """How many messages wait in a queue (expired ones included until a dequeue finds them)."""
        return len(self._queue(machine, queue)[1])

    def stats(self) -> NetworkStats:
        """A snapshot of the counters."""
        return NetworkStats(**{name: getattr(self, name) for name in _COUNTERS})

    # -- internals -----------------------------------------------------------------------------

    def _machine(self, name: str) -> _Machine:
        m = self._machines.get(name.casefold()) if isinstance(name, str) else None
        if m is None:
            raise ModelError(f"no machine named {name!r}")
        return m

    def _queue(self, machine: str, queue: str) -> tuple[_Machine, list]:
        m = self._machines.get(machine.casefold()) if type(machine) is str else None
        if m is not None and m.up:  # the common case, checked as below
            entry = m.queues.get(queue.casefold()) if type(queue) is str else None
            if entry is not None:
                return m, entry[1]
        m = self._machine(machine)
        if not m.up:
            raise ModelError(f"machine {m.name!r} is down")
        entry = m.queues.get(queue.casefold()) if isinstance(queue, str) else None
        if entry is None:
            raise ModelError(f"no queue {queue!r} on {m.name!r}")
        return m, entry[1]

    def _resolve(self, format_name: str) -> tuple[str, str] | None:
        fn = parse_format_name(format_name)
        if fn.machine is not None:
            key = fn.machine.casefold()
            m = self._machines.get(key)
            path = fn.path.casefold()
            return (key, path) if m is not None and path in m.queues else None
        key = self._by_guid.get(fn.qm)
        path = self._machines[key].numbers.get(fn.number) if key is not None else None
        return (key, path) if path is not None else None

    def _new_id(self) -> int:
        self._next_id += 1
        return self._next_id - 1

    def _add_fault(
        self, action: str, match: Match, seconds: float, times: int | None
    ) -> FaultHandle:
        if not callable(match):
            raise ModelError(f"a fault matches messages with a callable, not {match!r}")
        if times is not None and (not _is_int(times) or times < 1):
            raise ModelError(f"times is a positive count or None, not {times!r}")
        handle = FaultHandle(self._next_fault, action)
        self._next_fault += 1
        self._faults[handle.id] = _Fault(handle, match, seconds, times)
        return handle

    def _link_latency(self, src: str, dst: str) -> float:
        if src == dst:
            return 0.0  # a queue on the sending machine: no wire
        return self._links.get((src, dst), self._latency)

    def _blocked(self, src: str, dst: str) -> bool:
        if not self._machines[dst].up:
            return True
        # the set is asked only when a link is cut (a frozenset is built per question)
        return bool(self._partitions) and src != dst and frozenset((src, dst)) in self._partitions

    def _transmit(
        self, msg: MsmqMessage, src: str, dst: str, queue: str | None, deadline: float
    ) -> None:
        """Apply the faults, then launch one transit per copy."""
        extra = 0.0
        copies = 1
        if self._faults:
            for fault in list(self._faults.values()):
                if not fault.match(msg):
                    continue
                if fault.remaining is not None:
                    fault.remaining -= 1
                    if fault.remaining == 0:
                        del self._faults[fault.handle.id]
                action = fault.handle.action
                if action == "drop":
                    self.lost += 1
                    return
                if action == "duplicate":
                    copies += 1
                elif action == "delay":
                    extra += fault.seconds
                else:  # tamper
                    msg = attrs.evolve(msg, signature_ok=False)
        if src != dst and self._loss_rate and self._rng.random() < self._loss_rate:
            self.lost += 1
            return
        self.duplicated += copies - 1
        epoch = self._machines[src].epoch
        for _ in range(copies):
            self._next_tid += 1
            self._launch(_Transit(self._next_tid, msg, src, dst, queue, deadline, extra, epoch))

    def _launch(self, t: _Transit) -> None:
        """The transit leaves its sender now, or waits there while the link is down."""
        if self._blocked(t.src, t.dst):
            self._hold(t)
            return
        at = self._sched.now + self._link_latency(t.src, t.dst) + t.extra
        if at > t.deadline:
            # it cannot make it: TimeToReachQueue runs out on the way (E-054)
            t.state = _DOOMED
            self._post_deadline(t)
            return
        t.state = _FLYING
        self._sched.post(at, ArrivalEvent(t))

    def _hold(self, t: _Transit) -> None:
        """Keep the transit in its sender's outgoing queue (lost if the sender crashed since)."""
        sender = self._machines[t.src]
        if not sender.up or sender.epoch != t.epoch:
            t.state = _DONE
            self.lost += 1
            return
        t.state = _HELD
        self._held.setdefault((t.src, t.dst), {})[t.tid] = t
        self._post_deadline(t)

    def _post_deadline(self, t: _Transit) -> None:
        if not t.deadline_posted and t.deadline < math.inf:
            t.deadline_posted = True
            self._sched.post(t.deadline, DeadlineEvent(t))

    def _flush(self) -> None:
        """Launch every held transit whose link is up again: higher priority first, then oldest."""
        for pair in list(self._held):
            if not self._blocked(*pair) and self._machines[pair[0]].up:
                for t in sorted(self._held.pop(pair).values(), key=_outgoing_order):
                    self._launch(t)

    def _arrive(self, t: _Transit) -> Arrived | None:
        if t.state != _FLYING:
            return None
        if self._blocked(t.src, t.dst):
            # the destination went down (or the link was cut) while the message was on the way
            self._hold(t)
            return None
        t.state = _DONE
        msg = t.message
        dst = self._machines[t.dst]
        path = t.queue
        if path is None:
            # the destination queue manager checks the signature, then finds the queue (E-058)
            if not msg.signature_ok:
                self._acknowledge(msg, MessageClass.NACK_BAD_SIGNATURE, t.dst)
                return None
            target = self._resolve(msg.destination_format_name)
            if target is None or target[0] != t.dst:
                self._acknowledge(msg, MessageClass.NACK_BAD_DST_Q, t.dst)
                return None
            path = target[1]
        name, heap = dst.queues[path]
        heapq.heappush(heap, (-msg.priority, self._arrivals, msg))
        self._arrivals += 1
        self.delivered += 1
        self.bytes_delivered += len(msg.body)
        if msg.klass is MessageClass.NORMAL:
            self._acknowledge(msg, MessageClass.ACK_REACH_QUEUE, t.dst)
        return Arrived(dst.name, name)

    def _deadline(self, t: _Transit) -> None:
        if t.state == _HELD:
            held = self._held[(t.src, t.dst)]
            del held[t.tid]
            if not held:
                del self._held[(t.src, t.dst)]
        elif t.state != _DOOMED:
            return  # it arrived (or was lost) before its deadline
        t.state = _DONE
        self.expired += 1
        # the sending queue manager gives up on the message and says so (E-054), unless it
        # crashed meanwhile and so forgot the message
        if self._machines[t.src].epoch == t.epoch:
            self._acknowledge(t.message, MessageClass.NACK_REACH_QUEUE_TIMEOUT, t.src)

    def _acknowledge(self, msg: MsmqMessage, klass: MessageClass, by: str) -> None:
        """Send an acknowledgment of ``klass`` to msg's administration queue, if asked (E-053)."""
        ack_requested = msg.ack_requested
        # NONE asks for nothing: said first, as an identity test, because most messages carry it
        # and an IntFlag's ``&`` and an enum's hash are Python calls (two per message delivered)
        if ack_requested is AckRequested.NONE or not ack_requested & _ACK_BIT[klass] or msg.admin_queue is None:
            return
        if not self._machines[by].up:
            return  # no queue manager is running to generate it
        target = self._resolve(msg.admin_queue)
        if target is None:
            self.lost += 1  # an acknowledgment is never acknowledged: it just vanishes
            return
        ack = attrs.evolve(
            msg,
            message_id=self._new_id(),
            correlation_id=msg.message_id,
            klass=klass,
            ack_requested=AckRequested.NONE,
            time_to_reach_queue=INFINITE,
            time_to_be_received=INFINITE,
            sent_at=self._sched.now,
        )
        if klass.is_nack():
            self.nacked += 1
        else:
            self.acked += 1
        self._transmit(ack, by, target[0], target[1], math.inf)


def _outgoing_order(t: _Transit) -> tuple[int, int]:
    # an outgoing queue sends higher priorities first, then in the order messages were sent
    return -t.message.priority, t.tid


def _check_seconds(value: float, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < math.inf:
        raise ModelError(f"{what} is a non-negative finite number of seconds, not {value!r}")
    return float(value)
