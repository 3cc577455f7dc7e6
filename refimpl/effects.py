"""Effects: everything an event handler does that the outside world can observe, as data.

Handlers never perform I/O. They receive a :class:`Context`, read and change the state they are
given (every change goes through a handler), and append effects: a replication message enqueued
with all of its MSMQ message properties, a timer started or cancelled, a directory operation
and its status, a directory client's request completing. The simulator (and the trace writer,
and the proofs) consume the effects; a test can assert on every one of them.

The context also carries the mode: ``clarified`` (the default) implements the resolution of
every errata-register entry, ``literal`` keeps the literal reading wherever it is executable.
Code that departs from the text says ``if ctx.clarified:  # clarification E-NNN``.
"""

from __future__ import annotations

import enum
from typing import Any

import attrs

from mqspec.model.guid import Guid


class Mode(str, enum.Enum):
    """Which reading of the text the handlers execute."""

    CLARIFIED = "clarified"
    LITERAL = "literal"


class AckRequested(str, enum.Enum):
    """iAckRequested values the handlers pass to Send Replication Message (3.1.7.2.1)."""

    NONE = "None"
    ACK_NACK_REACH_QUEUE = "AckNackReachQueue"


class TimerScope(str, enum.Enum):
    """iScope of the Change Propagation Timer (3.3.2.1): "MUST be set to either Intrasite or Intersite"."""

    INTRASITE = "Intrasite"
    INTERSITE = "Intersite"


@attrs.frozen
class TimerKey:
    """Names one timer instance of a node: its kind and the arguments that tell instances apart.

    Kinds: ``change_propagation`` (args: neighbor machine name, TimerScope), ``bsc_ack`` (no
    args), ``change_request_wait`` (args: the RequestIdentifier of a Process Change Request).
    """

    kind: str
    args: tuple[Any, ...] = ()


@attrs.frozen
class EnqueueMessage:
    """Send Replication Message (3.1.7.2.1): a Message object enqueued to a replication queue.

    The fields are the Message attributes the section sets; ``body`` is the replication message
    model value (it crosses the simulated wire as the bytes its codec produces).
    """

    node: str
    destination: str  # iDestination, the machine name
    format_name: str  # outFormatName: REPLICATION_QUEUE_DIRECT for iDestination
    body: Any  # a mqspec.model.mqdsrp replication message
    time_to_reach_queue: int
    time_to_be_received: int
    priority: int
    ack_requested: AckRequested
    admin_queue: str | None
    response_queue: str | None
    message_class: str = "Normal"
    delivery: str = "Express"
    hash_algorithm: str = "CALG_MD5"
    sender_identifier_type: int = 2
    sender_identifier: Guid = Guid.NULL


@attrs.frozen
class StartTimer:
    node: str
    timer: TimerKey
    delay: float


@attrs.frozen
class CancelTimer:
    node: str
    timer: TimerKey


@attrs.frozen
class DirectoryOperation:
    """An [MS-MQDS] event raised on the local directory and the status it returned."""

    node: str
    operation: str  # create | update | delete | read | lookup | reset
    status: int
    object_type: int | None = None
    path_name: str | None = None
    guid: Guid | None = None
    partition_id: Guid | None = None
    seq_number: int | None = None


@attrs.frozen
class RequestCompleted:
    """A directory client's change request finished (the rStatus returned to the MQDS server)."""

    node: str
    request: int  # the client request's number at that node
    status: int


@attrs.frozen
class Clarified:
    """The handler took the clarified branch of an errata entry (recorded for traces and tests)."""

    node: str
    erratum: str
    detail: str


Effect = EnqueueMessage | StartTimer | CancelTimer | DirectoryOperation | RequestCompleted | Clarified


#: the modes as module constants: Context.clarified runs several times for every change a replica
#: applies, and reading a member off an Enum class is slow in Python 3.11 (EnumType.__getattr__)
_CLARIFIED, _LITERAL = Mode.CLARIFIED, Mode.LITERAL


class Context:
    """What one event's handlers share: the node, the mode, the clock, and the effects so far."""

    __slots__ = ("node", "mode", "now", "effects")

    def __init__(self, node: str, mode: Mode = Mode.CLARIFIED, now: float = 0.0) -> None:
        self.node = node
        self.mode = mode
        self.now = now
        self.effects: list[Effect] = []

    @property
    def clarified(self) -> bool:
        return self.mode is _CLARIFIED

    @property
    def literal(self) -> bool:
        return self.mode is _LITERAL

    def emit(self, effect: Effect) -> None:
        self.effects.append(effect)

    def start_timer(self, timer: TimerKey, delay: float) -> None:
        self.effects.append(StartTimer(self.node, timer, delay))

    def cancel_timer(self, timer: TimerKey) -> None:
        self.effects.append(CancelTimer(self.node, timer))

    def clarify(self, erratum: str, detail: str) -> None:
        """Record that the clarified reading of ``erratum`` changed what happens here."""
        self.effects.append(Clarified(self.node, erratum, detail))
