"""[MS-MQSD] section 3: the effects the client and server handlers return, as data.

The MQSD handlers share :class:`mqspec.refimpl.effects.Context` with the MC-MQDSRP handlers
(the node, the mode, the clock and the list of effects) and its timer effects: the client's
Wait For Response Timer (3.1.2.1) is ``StartTimer``/``CancelTimer`` with :data:`WAIT_FOR_RESPONSE`.
What is specific to discovery is defined here: a request broadcast on one network address, a
reply sent to a request's sender, a packet discarded (and why), the completion of Get Directory
Server List with its result, and the server's socket life cycle (open, close, thread terminated).

A runner (the simulator in the tests, :mod:`mqspec.mqsd_net` over real UDP sockets) performs the
effects. Both keep the Wait For Response Timer with :class:`TimerInstances`, which gives the
text's timer its literal meaning: *start* arms a new instance, *stop* stops every armed one
(errata E-205: the text stops the timer explicitly wherever it means a restart, except once).
"""

from __future__ import annotations

import enum
import heapq
from typing import Any

import attrs
from mqspec.model.guid import Guid
from mqspec.model.mqsd import TopologyClientRequest, TopologyServerReply, encode

from .effects import CancelTimer, StartTimer, TimerKey

DOC = "MS-MQSD"

#: 3.1.2.1 Wait For ResponseTimer: "A 15-second time-out value for receiving a response"
WAIT_FOR_RESPONSE_TIMEOUT = 15.0
#: the client's only timer
WAIT_FOR_RESPONSE = TimerKey("wait_for_response")


class Transport(str, enum.Enum):
    """The networking protocol a packet travelled over (2.1: "either UDP over IP or IPX")."""

    IP = "ip"
    IPX = "ipx"


@attrs.frozen
class NetworkAddress:
    """One entry of the client's NetworkAddressList (3.1.1.2): an opaque name for a network.

    ``ras`` says whether it is a Remote Access Service address (the check of 3.1.4.1, note <18>).
    The real-socket runner names a network by the destinations it broadcasts to
    (``"127.0.0.1:1801"``); the handlers only compare addresses for equality.
    """

    name: str
    ras: bool = False

    def __str__(self) -> str:
        return self.name


# --------------------------------------------------------------------------- client effects


@attrs.frozen
class BroadcastRequest:
    """3.1.5.1: "broadcast the TopologyClientRequest packet on the network address listed in the
    NetworkAddressList ADM element at the position corresponding to the CurrentNetworkIndex"."""

    node: str
    network: NetworkAddress
    request: TopologyClientRequest

    @property
    def data(self) -> bytes:
        """The datagram's bytes."""
        return encode(self.request)


@attrs.frozen
class DirectoryServerListResult:
    """Get Directory Server List (3.1.4.1) completed: success, or "a result that indicates a failure".

    The two lists are the client's QueueManager.DirectoryServerList and
    ConnectedNetworkIdentifierList as they stand at completion.
    """

    node: str
    success: bool
    directory_server_list: tuple[str, ...]
    connected_network_identifier_list: tuple[Guid, ...]
    network: NetworkAddress | None = None  # LastSuccessfulNetworkAddress when it is valid


# --------------------------------------------------------------------------- server effects


@attrs.frozen
class SendReply:
    """3.2.5.1: "The protocol MUST send the TopologyServerReply packet to the sender of the
    TopologyClientRequest packet." ``destination`` is the sender as the transport names it."""

    node: str
    destination: Any
    reply: TopologyServerReply
    transport: Transport = Transport.IP

    @property
    def data(self) -> bytes:
        """The datagram's bytes."""
        return encode(self.reply)


@attrs.frozen
class OpenSocket:
    """3.2.3 / 3.2.5: open the socket and listen for client requests."""

    node: str


@attrs.frozen
class CloseSocket:
    """3.2.5: "the server MUST close and reopen the socket" after a send error (the close half)."""

    node: str


@attrs.frozen
class TerminateThread:
    """3.2.5: "If the socket cannot be opened, the server thread MUST terminate."."""

    node: str
    reason: str


# --------------------------------------------------------------------------- both


class Discard(str, enum.Enum):
    """Why a received packet was discarded (the counters a runner keeps are keyed by these)."""

    WRONG_NETWORK = "wrong_network"  # 3.1.5.2, first rule
    MALFORMED = "malformed"  # 3.1.5.2 second rule; the server's E-211
    WRONG_CORRELATION = "wrong_correlation"  # 3.1.5.2, third rule
    NOT_LISTENING = "not_listening"  # the server thread terminated (3.2.5)
    OTHER_ENTERPRISE = "other_enterprise"  # clarification E-210
    NO_CONFORMANT_REPLY = "no_conformant_reply"  # errata E-208, E-209


@attrs.frozen
class PacketDiscarded:
    """A received packet was dropped with no further processing, ``reason`` saying which rule.

    ``erratum`` names the register entry the discard rests on when no MUST of ``section`` makes
    it (a malformed datagram at the server, E-211; another enterprise's request, E-210; no
    conformant reply, E-208 / E-209); None when the section's MUST does.
    """

    node: str
    reason: Discard
    detail: str
    section: str
    erratum: str | None = None


# --------------------------------------------------------------------------- timer instances


class TimerInstances:
    """The armed instances of one timer, as a runner keeps them.

    ``StartTimer`` arms one more instance due ``delay`` seconds after ``now``; ``CancelTimer``
    stops every armed instance. :meth:`pop_due` fires the earliest instance that is due.

    >>> t = TimerInstances(WAIT_FOR_RESPONSE)
    >>> t.apply(StartTimer("c", WAIT_FOR_RESPONSE, 15.0), now=0.0); t.apply(StartTimer("c", WAIT_FOR_RESPONSE, 15.0), now=5.0)
    >>> t.next_due(), t.pop_due(16.0), t.pop_due(16.0), t.next_due()
    (15.0, True, False, 20.0)
    """

    __slots__ = ("_due", "key")

    def __init__(self, key: TimerKey) -> None:
        self.key = key
        self._due: list[float] = []

    def apply(self, effect: object, now: float) -> None:
        """Arm or stop instances for a StartTimer / CancelTimer of this timer; ignore anything else."""
        if type(effect) is StartTimer and effect.timer == self.key:
            heapq.heappush(self._due, now + effect.delay)
        elif type(effect) is CancelTimer and effect.timer == self.key:
            self._due.clear()

    def next_due(self) -> float | None:
        """When the earliest armed instance fires, or None when none is armed."""
        return self._due[0] if self._due else None

    def pop_due(self, now: float) -> bool:
        """Remove the earliest instance if it is due at ``now``; True when one fired."""
        if self._due and self._due[0] <= now:
            heapq.heappop(self._due)
            return True
        return False

    def __len__(self) -> int:
        return len(self._due)
