"""[MS-MQSD] over real UDP sockets: a responder and a client that drive the section 3 handlers.

Nothing here decides anything the protocol decides. :class:`UdpResponder` hands every datagram
its socket receives to :func:`mqspec.refimpl.mqsd_server.receive_datagram` and performs the
effects (send the reply, close and reopen the socket, end the thread); :func:`discover` runs
:func:`mqspec.refimpl.mqsd_client.get_directory_server_list` and feeds the client handlers the
replies and the Wait For Response Timer expiries, measured on the monotonic clock.

How the runner maps the text onto sockets (modelling E-215): a *network address* of the client
is one UDP socket and the destinations that stand for that network's broadcast address (the
broadcast address of a local interface, or, on loopback, the responders listening there: a
"broadcast" is then one datagram to each). A reply is "received on" the network whose socket
it arrived on. Every loop is bounded by time; the responder's faults (dropping replies, failing
sends or opens) exist so that tests can exercise 3.2.5 on a real socket.
"""

from __future__ import annotations

import collections
import errno
import ipaddress
import selectors
import socket
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any, Self

import attrs

from mqspec.model.guid import Guid
from mqspec.refimpl.effects import CancelTimer, Context, Mode, StartTimer
from mqspec.refimpl.mqsd_client import (
    MqsdClient,
    get_directory_server_list,
    no_server_response,
    receive_topology_server_reply,
)
from mqspec.refimpl.mqsd_effects import (
    WAIT_FOR_RESPONSE,
    BroadcastRequest,
    CloseSocket,
    DirectoryServerListResult,
    NetworkAddress,
    OpenSocket,
    PacketDiscarded,
    SendReply,
    TerminateThread,
    TimerInstances,
    Transport,
)
from mqspec.refimpl.mqsd_server import (
    MqsdServer,
    receive_datagram,
    rule,
    send_failed,
    server_initialization,
    socket_open_failed,
)
from mqspec.wording import plural

#: 1.9 / <5>: "Port number 1801 for UDP and TCP has been registered ... for MSMQ protocols"
MQSD_PORT = 1801
#: the largest datagram read; an MQSD packet is far smaller
MAX_DATAGRAM = 65535
#: the largest UDP payload over IPv4 (65,535 less the 20-byte IP and 8-byte UDP headers): a
#: reply must fit in it
MAX_UDP_PAYLOAD = 65_507

Address = tuple[str, int]


def format_address(address: Any) -> str:
    """``host:port`` for a socket address (``[host]:port`` for IPv6), ``repr`` for anything else."""
    if isinstance(address, tuple) and len(address) >= 2:
        host = str(address[0])
        return f"[{host}]:{address[1]}" if ":" in host else f"{host}:{address[1]}"
    return repr(address)


def split_address(text: str) -> tuple[str, str | None]:
    """``HOST:PORT``, ``[IPV6]:PORT``, ``[IPV6]``, a bare IPv6 address or ``HOST`` -> (host, port text or None).

    The host:port syntax of ``--to``, of a trace's ``from`` and ``to`` and of every address mqspec prints.
    """
    if text.startswith("["):
        host, bracket, rest = text[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            raise ValueError(f"{text!r}: an IPv6 address in brackets is [ADDRESS] or [ADDRESS]:PORT")
        return host, (rest[1:] if rest else None)
    if text.count(":") > 1:  # a bare IPv6 address: no port
        return text, None
    host, sep, port = text.rpartition(":")
    return (host, port) if sep else (text, None)


def family_of(host: str) -> socket.AddressFamily:
    """AF_INET6 for an IPv6 address, AF_INET for anything else."""
    try:
        return socket.AF_INET6 if ipaddress.ip_address(host).version == 6 else socket.AF_INET
    except ValueError:
        return socket.AF_INET


def random_guid() -> Guid:
    """A new random GUID ("The protocol MUST create a new GUID", 3.1.4.1)."""
    return Guid(uuid.uuid4().bytes_le)


# --------------------------------------------------------------------------- the responder


@attrs.define
class ResponderFaults:
    """Failures a test asks a responder to suffer (all off by default).

    ``drop_replies`` loses every reply before it is sent (the network lost it: nothing is
    reported to the handlers); ``send_errors`` makes the next N sends fail with a network error
    (3.2.5 close and reopen); ``open_errors`` makes the next N socket opens fail (3.2.5 terminate).
    """

    drop_replies: bool = False
    send_errors: int = 0
    open_errors: int = 0


@attrs.define
class ResponderStats:
    """What a responder saw: datagrams received, replies sent, discards by reason, socket events."""

    datagrams: int = 0
    replies: int = 0
    dropped_replies: int = 0
    discarded: collections.Counter = attrs.field(factory=collections.Counter)
    send_errors: int = 0
    receive_errors: int = 0
    reopens: int = 0


class UdpResponder:
    """An MQSD server on one UDP socket, driven by a selectors loop.

    ``open()`` runs Initialization (3.2.3); ``serve()`` loops until :meth:`stop` (safe from a
    signal handler or another thread), until the server thread terminates (3.2.5), or until an
    optional deadline. ``start()`` / ``shutdown()`` run the loop in a thread.
    """

    def __init__(
        self,
        server: MqsdServer,
        host: str = "127.0.0.1",
        port: int = MQSD_PORT,
        *,
        mode: Mode = Mode.CLARIFIED,
        node: str = "mqsd-server",
        log: Callable[[str], None] | None = None,
        faults: ResponderFaults | None = None,
        tick: tuple[float, Callable[[], None]] | None = None,
    ) -> None:
        self.server = server
        #: (seconds, callback): the loop calls back every so many seconds (a log's summaries)
        self.tick = tick
        self.mode = mode
        self.node = node
        self.log = log or (lambda _line: None)
        self.faults = faults or ResponderFaults()
        self.stats = ResponderStats()
        self.termination: str | None = None  # TerminateThread.reason, once the thread ended
        self._bind: Address = (host, port)
        self._sock: socket.socket | None = None
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._selector.register(self._wake_r, selectors.EVENT_READ, "wake")
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._t0 = time.monotonic()

    # -- life cycle

    @property
    def address(self) -> Address:
        """The bound (host, port); the port is the real one when 0 asked for an ephemeral port."""
        return self._bind

    def open(self) -> bool:
        """Initialization (3.2.3): open and bind the socket; False when the thread terminated instead."""
        self._run(server_initialization)
        return not self.server.terminated

    def start(self) -> Self:
        """Open the socket and serve in a daemon thread; raises OSError when the socket cannot be opened."""
        if not self.open():
            raise OSError(self.termination)
        self._thread = threading.Thread(target=self.serve, name=f"mqsd-responder-{self._bind[1]}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Ask the loop to end (thread- and signal-safe)."""
        self._stopping = True
        try:
            self._wake_w.send(b"x")
        except OSError:  # pragma: no cover - the wake-up pipe is full or closed: the flag suffices
            pass

    def shutdown(self, timeout: float = 5.0) -> None:
        """Stop the loop, wait for its thread, close every socket."""
        self.stop()
        if self._thread is not None:
            self._thread.join(timeout)
        self.close()

    def close(self) -> None:
        self._close_socket()
        for s in (self._wake_r, self._wake_w):
            s.close()
        self._selector.close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.shutdown()

    # -- the loop

    def serve(self, *, deadline: float | None = None) -> None:
        """Answer requests until stopped, terminated, or the monotonic ``deadline`` passes."""
        next_tick = time.monotonic() + self.tick[0] if self.tick is not None else None
        while not self._stopping and not self.server.terminated:
            now = time.monotonic()
            if next_tick is not None and now >= next_tick:
                self.tick[1]()  # type: ignore[index]
                next_tick = now + self.tick[0]  # type: ignore[index]
            timeout = None if deadline is None else max(0.0, deadline - now)
            if timeout == 0.0:
                return
            if next_tick is not None:
                timeout = next_tick - now if timeout is None else min(timeout, next_tick - now)
            for key, _events in self._selector.select(timeout):
                if key.data == "wake":
                    try:
                        self._wake_r.recv(64)
                    except OSError:
                        pass
                    continue
                self._receive(key.fileobj)  # type: ignore[arg-type]

    def _receive(self, sock: socket.socket) -> None:
        try:
            data, sender = sock.recvfrom(MAX_DATAGRAM)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            # clarification E-214: 3.2.5 rules only on send errors; a receive error (such as an
            # ICMP error reported on the socket) leaves the socket listening
            self.stats.receive_errors += 1
            self.log(f"receive error: {exc}")
            return
        self.stats.datagrams += 1
        effects = self._run(receive_datagram, data, sender, Transport.IP)
        self._log_request(data, sender, effects)

    def _run(self, handler: Callable[..., None], *args: Any) -> list[Any]:
        """Call one handler with a fresh context and perform its effects; return the effects."""
        ctx = Context(self.node, self.mode, time.monotonic() - self._t0)
        handler(self.server, ctx, *args)
        for effect in ctx.effects:
            self._perform(effect)
        return ctx.effects

    def _perform(self, effect: Any) -> None:
        kind = type(effect)
        if kind is SendReply:
            self._send(effect)
        elif kind is PacketDiscarded:
            self.stats.discarded[effect.reason.value] += 1
        elif kind is OpenSocket:
            self._open_socket()
        elif kind is CloseSocket:
            self._close_socket()
        elif kind is TerminateThread:
            self.termination = effect.reason
            self.log(f"server thread terminated: {effect.reason}")

    def _send(self, effect: SendReply) -> None:
        if self.faults.drop_replies:
            self.stats.dropped_replies += 1
            return
        try:
            if self.faults.send_errors > 0:
                self.faults.send_errors -= 1
                raise OSError(errno.ENETDOWN, "injected network error")
            if self._sock is None:
                raise OSError(errno.EBADF, "the socket is closed")
            self._sock.sendto(effect.data, effect.destination)
        except OSError as exc:
            self.stats.send_errors += 1
            self.log(f"send error to {format_address(effect.destination)}: {exc}; closing and reopening the socket")
            self.stats.reopens += 1
            self._run(send_failed, str(exc))
            return
        self.stats.replies += 1

    def _open_socket(self) -> None:
        try:
            if self.faults.open_errors > 0:
                self.faults.open_errors -= 1
                raise OSError(errno.EADDRINUSE, "injected open error")
            sock = socket.socket(family_of(self._bind[0]), socket.SOCK_DGRAM)
            try:
                sock.bind(self._bind)
            except OSError:
                sock.close()
                raise
        except OSError as exc:
            self._run(socket_open_failed, f"cannot open {format_address(self._bind)}: {exc}")
            return
        sock.setblocking(False)
        self._bind = sock.getsockname()[:2]  # keep the ephemeral port for a reopen
        self._sock = sock
        self._selector.register(sock, selectors.EVENT_READ, "socket")

    def _close_socket(self) -> None:
        if self._sock is not None:
            try:
                self._selector.unregister(self._sock)
            except (KeyError, ValueError):
                pass
            self._sock.close()
            self._sock = None

    def _log_request(self, data: bytes, sender: Any, effects: list[Any]) -> None:
        """One line per datagram: what was asked and what was answered (or why nothing was)."""
        who = format_address(sender)
        for e in effects:
            if type(e) is SendReply:
                kind = "local-site" if e.reply.responding_site_id is None else "remote-site"
                fate = "lost (dropped)" if self.faults.drop_replies else plural(len(e.data), "byte")
                self.log(f"request from {who} ({plural(len(data), 'byte')}) RequestID {e.reply.correlation_id}: "
                         f"{kind} reply, {fate}")
                return
            if type(e) is PacketDiscarded:
                self.log(f"datagram from {who} ({plural(len(data), 'byte')}) dropped: {e.reason.value}: {e.detail}")
                return


# --------------------------------------------------------------------------- the client


@attrs.frozen
class Network:
    """One network the client is connected to: its NetworkAddress and the UDP destinations of its broadcast."""

    address: NetworkAddress
    destinations: tuple[Address, ...]

    @classmethod
    def to(cls, *destinations: Address, ras: bool = False, nth: int = 1) -> Network:
        """A network named after its destinations (``"127.0.0.1:1801"``, comma-joined; ``nth``
        above 1 appends ``#nth``: a second network whose broadcast reaches the same destinations)."""
        name = ",".join(format_address(d) for d in destinations) + (f"#{nth}" if nth > 1 else "")
        return cls(NetworkAddress(name, ras), tuple(destinations))

    @property
    def family(self) -> socket.AddressFamily:
        """The address family of the network's socket (its destinations', all of one family)."""
        families = {family_of(h) for h, _ in self.destinations}
        if len(families) > 1:
            raise ValueError(f"network {self.address.name} mixes IPv4 and IPv6 destinations")
        return families.pop() if families else socket.AF_INET


@attrs.define
class DiscoveryOutcome:
    """How a discovery over real sockets ended.

    ``result`` is the DirectoryServerListResult (None when the time bound ended the run first);
    ``requests`` the datagrams broadcast; ``discarded`` the replies the handlers discarded, by
    reason; ``send_errors`` the broadcasts the socket refused; ``warnings`` what the replies show
    their senders broke of the server's rules (:func:`server_rule_breaks`).
    """

    result: DirectoryServerListResult | None
    requests: int = 0
    discarded: collections.Counter = attrs.field(factory=collections.Counter)
    send_errors: int = 0
    elapsed: float = 0.0
    warnings: list[str] = attrs.field(factory=list)

    @property
    def success(self) -> bool:
        return self.result is not None and self.result.success


def server_rule_breaks(data: bytes, site: Guid, request_ids: set[Guid]) -> list[str]:
    """What a reply received over UDP/IP shows its sender broke of MS-MQSD 3.2.5.1, as far as a client
    of ``site`` can tell: a ConnectedNetworkMask set over IP, a server list in a reply from the client's
    own site. Only a reply to one of ``request_ids`` (the requests sent) is judged; one that does not
    decode is the client's to discard (3.1.5.2), not judged here."""
    from mqspec.model.errors import DecodeError
    from mqspec.model.mqsd import decode_server_reply

    try:
        reply = decode_server_reply(data, lenient=True)
    except DecodeError:
        return []
    if reply.correlation_id not in request_ids:
        return []
    out = []
    if reply.connected_network_mask:
        out.append(f"ConnectedNetworkMask is {reply.connected_network_mask:#010x} in a reply over IP; {rule('ip_mask')}")
    if reply.responding_site_id == site:
        out.append(f"the reply names the client's own site {site} as RespondingSiteID and lists "
                   f"{plural(len(reply.servers), 'directory server')}; {rule('same_site')}")
    return out


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def discover(
    client: MqsdClient,
    networks: Sequence[Network],
    *,
    mode: Mode = Mode.CLARIFIED,
    node: str = "mqsd-client",
    new_guid: Callable[[], Guid] = random_guid,
    max_seconds: float | None = None,
    log: Callable[[str], None] | None = None,
    record: Callable[[dict[str, Any]], object] | None = None,
) -> DiscoveryOutcome:
    """Run Get Directory Server List (3.1.4.1) over one UDP socket per network, until it completes.

    The run is bounded by ``max_seconds`` (by default twice the Wait For Response Timer per
    network, plus one timer: the longest a conformant run takes is two timer periods per network,
    case (D) of 3.1.5.2 restarting the timer once). ``record`` receives the run as trace events
    of ``node`` (:mod:`mqspec.oracle.trace_format`): ``discover``, each ``datagram`` sent and
    received (with its ``network``), and ``discovered``; ``t`` counts from the start.
    """
    log = log or (lambda _line: None)
    note = record or (lambda _event: None)
    timeout = client.wait_for_response_timeout
    bound = max_seconds if max_seconds is not None else timeout * (2 * len(networks) + 1) + 1.0
    t0 = time.monotonic()
    outcome = DiscoveryOutcome(None)
    timer = TimerInstances(WAIT_FOR_RESPONSE)
    selector = selectors.DefaultSelector()
    sockets: dict[NetworkAddress, socket.socket] = {}

    def now() -> float:
        return time.monotonic() - t0

    sent_ids: set[Guid] = set()

    def perform(effects: list[Any]) -> None:
        for effect in effects:
            kind = type(effect)
            if kind is BroadcastRequest:
                sent_ids.add(effect.request.request_id)
                sock = sockets.get(effect.network)
                destinations = by_address[effect.network].destinations if sock is not None else ()
                for destination in destinations:
                    try:
                        sock.sendto(effect.data, destination)
                        outcome.requests += 1
                        note({"event": "datagram", "t": round(now(), 6), "node": node, "direction": "send",
                              "body": effect.data.hex(), "to": format_address(destination),
                              "network": effect.network.name})
                    except OSError as exc:
                        # the client's text has no send-error rule: the request is lost, the timer runs
                        outcome.send_errors += 1
                        log(f"send error to {format_address(destination)}: {exc}")
            elif kind is StartTimer or kind is CancelTimer:
                timer.apply(effect, now())
            elif kind is PacketDiscarded:
                outcome.discarded[effect.reason.value] += 1
                log(f"reply discarded: {effect.reason.value}: {effect.detail}")
            elif kind is DirectoryServerListResult and outcome.result is None:
                outcome.result = effect
                note({"event": "discovered", "t": round(now(), 6), "node": node,
                      "result": "success" if effect.success else "failure",
                      "servers": list(effect.directory_server_list),
                      "connected_networks": [str(g) for g in effect.connected_network_identifier_list],
                      **({"network": effect.network.name} if effect.network is not None else {})})

    def run(handler: Callable[..., None], *args: Any) -> None:
        ctx = Context(node, mode, now())
        handler(client, ctx, *args)
        perform(ctx.effects)

    by_address = {n.address: n for n in networks}
    try:
        for n in networks:
            family = n.family
            sock = socket.socket(family, socket.SOCK_DGRAM)
            sockets[n.address] = sock
            if family == socket.AF_INET:  # IPv6 has no broadcast (and no SO_BROADCAST)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
            loopback = bool(n.destinations) and all(_is_loopback(h) for h, _ in n.destinations)
            local = ("::1" if family == socket.AF_INET6 else "127.0.0.1") if loopback else ""
            sock.bind((local, 0))
            sock.setblocking(False)
            selector.register(sock, selectors.EVENT_READ, n.address)
        note({"event": "discover", "t": round(now(), 6), "node": node, "networks": [n.address.name for n in networks],
              **({"ras": [n.address.name for n in networks if n.address.ras]} if any(n.address.ras for n in networks)
                 else {})})
        run(get_directory_server_list, [n.address for n in networks], new_guid)
        while outcome.result is None:
            due = timer.next_due()
            left = bound - now()
            if left <= 0:
                log(f"no result within {bound:g} s")
                break
            if due is None:
                log("no timer armed and no result: the event cannot progress")
                break
            wait = min(left, max(0.0, due - now()))
            for key, _events in selector.select(wait):
                try:
                    data, sender = key.fileobj.recvfrom(MAX_DATAGRAM)  # type: ignore[union-attr]
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError as exc:  # e.g. an ICMP port-unreachable reported on the socket
                    log(f"receive error on {key.data}: {exc}")
                    continue
                note({"event": "datagram", "t": round(now(), 6), "node": node, "direction": "receive",
                      "body": data.hex(), "from": format_address(sender), "network": key.data.name})
                for warning in server_rule_breaks(data, client.site_identifier, sent_ids):
                    outcome.warnings.append(f"reply from {format_address(sender)}: {warning}")
                    log(f"warning: reply from {format_address(sender)}: {warning}")
                run(receive_topology_server_reply, data, key.data)
                if outcome.result is not None:
                    break
            if outcome.result is None and timer.pop_due(now()):
                run(no_server_response)
    finally:
        selector.close()
        for sock in sockets.values():
            sock.close()
    outcome.elapsed = now()
    return outcome


# --------------------------------------------------------------------------- local interfaces


def local_broadcast_addresses() -> list[str]:
    """The broadcast address of every local interface that is up and can broadcast.

    Linux only (SIOCGIFFLAGS / SIOCGIFBRDADDR); elsewhere, or when none is found, the limited
    broadcast address 255.255.255.255.
    """
    found: list[str] = []
    try:
        import fcntl
        import struct

        siocgifflags, siocgifbrdaddr, iff_up, iff_broadcast = 0x8913, 0x8919, 0x1, 0x2
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            for _index, name in socket.if_nameindex():
                request = struct.pack("256s", name.encode()[:15])
                try:
                    flags = struct.unpack_from("H", fcntl.ioctl(s.fileno(), siocgifflags, request), 16)[0]
                    if not (flags & iff_up and flags & iff_broadcast):
                        continue
                    address = socket.inet_ntoa(fcntl.ioctl(s.fileno(), siocgifbrdaddr, request)[20:24])
                except OSError:
                    continue  # no IPv4 address on this interface
                if address not in found and address != "0.0.0.0":
                    found.append(address)
    except (ImportError, OSError, AttributeError):
        pass
    return found or ["255.255.255.255"]
