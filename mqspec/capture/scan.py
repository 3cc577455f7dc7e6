"""Decode the directory protocols' messages out of a packet capture, streaming (``mqspec decode --pcap``).

* MS-MQSD: UDP datagrams to or from an MQSD port (1801 unless told otherwise), each one
  TopologyClientRequest/ServerReply;
* MC-MQDSRP and MS-MQCN: MSMQ messages carried by the binary transport (MQQB) over TCP (port 1801
  unless told otherwise). Each direction of each connection is reassembled in order
  (:mod:`~mqspec.capture.tcp`), cut into MQQB packets (:mod:`~mqspec.capture.framing`), and the body
  of every UserMessage whose destination is the replication queue (``mqis_queue$``) or the
  notification queue (``notify_queue$``) is decoded (identification rule: modelling E-045, E-046;
  gaps and retransmissions: E-047; acknowledgments: E-048).

Each stage hands the next one frame, piece or packet at a time: reader (:mod:`~mqspec.capture.reader`)
-> link layer (:mod:`~mqspec.capture.links`) -> IP and fragments (:mod:`~mqspec.capture.ip`) -> TCP ->
MQQB framing -> rows, so memory does not grow with the capture. Rows come out in the order of the
frame that completed each message. Where the capture lost bytes (a datagram or segment the snap
length cut, a TCP gap, a fragment never seen, a message the capture began or ended inside of, the
file cut mid-record) a *hole* row says so, in its place: rows after a TCP gap or a missing fragment
wait until the hole fills or is given up (bounded: :data:`~mqspec.capture.tcp.GAP_SECONDS` of capture
time, :data:`~mqspec.capture.tcp.GAP_BYTES`, :data:`MAX_WAITING` rows).

A message that does not decode is not fatal: its row carries ``"error"`` instead of ``"decoded"``.
Only a file that cannot be read at all raises :class:`~mqspec.capture.reader.CaptureError`.
:class:`~mqspec.capture.summary.CaptureSummary` accounts for every frame and every message.
"""

from __future__ import annotations

import heapq
import importlib
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs

from mqspec.clauses import clause
from mqspec.model.errors import DecodeError
from mqspec.wording import plural

from . import ip, links, mqqb
from .framing import Framer
from .reader import CaptureError, Frame, read_frames
from .summary import CaptureSummary, Hole
from .tcp import SYN, Direction, Piece

MSMQ_PORT = 1801
REPLICATION_QUEUE = "mqis_queue$"  # MC-MQDSRP 1.9 REPLICATION_QUEUE_NAME
NOTIFICATION_QUEUE = "notify_queue$"  # MS-MQCN 3.3.3 QueuePathName
REPLICATION_QUEUE_ID = 1  # MC-MQDSRP 1.9 REPLICATION_QUEUE_PRIVATE: PRIVATE=<QM GUID>\1
NOTIFICATION_QUEUE_ID = 3  # MS-MQCN 1.9 NOTIFY_QUEUE_PRIVATE: PRIVATE=<QM GUID>\3
#: rows waiting behind an unresolved hole before the oldest hole is given up
MAX_WAITING = 20_000
_AFTER = 1 << 60  # the sort key of rows made when a hole is given up: after it, at its frame


@attrs.frozen
class Ports:
    """The ports the directory protocols use in a capture: MS-MQSD over UDP, MQQB over TCP."""

    mqsd: frozenset[int] = frozenset({MSMQ_PORT})
    mqqb: frozenset[int] = frozenset({MSMQ_PORT})

    @classmethod
    def of(cls, mqsd: Any = None, mqqb: Any = None) -> Ports:
        """Ports from numbers or lists of numbers (None: 1801)."""
        def many(value: Any) -> frozenset[int]:
            if value is None:
                return frozenset({MSMQ_PORT})
            return frozenset(value if isinstance(value, list | tuple | set | frozenset) else [value])
        return cls(many(mqsd), many(mqqb))

    def describe(self) -> str:
        def show(ports: frozenset[int]) -> str:
            return ", ".join(map(str, sorted(ports)))
        return f"MS-MQSD on UDP {show(self.mqsd)}, MQQB on TCP {show(self.mqqb)}"


def decode_capture(path: Path | str, *, lenient: bool = False, ports: Ports = Ports()) -> list[dict[str, Any]]:
    """The rows of :func:`scan_capture` (one per decoded or undecodable message, and per hole)."""
    rows, _summary = scan_capture(path, lenient=lenient, ports=ports)
    return rows


def scan_capture(path: Path | str, lenient: bool = False, *, ports: Ports = Ports()
                 ) -> tuple[list[dict[str, Any]], CaptureSummary]:
    """Every MQSD, MQDSRP and MQCN message in the capture at ``path``, decoded, and the summary.

    Holds every row: :class:`Scan` streams them. Raises CaptureError only for a file that is not
    a readable capture; a file cut mid-record gives the rows of the frames before the cut.
    """
    scan = Scan(ports=ports, lenient=lenient)
    return list(scan.rows(path)), scan.summary


def scan_raw(path: Path | str, *, lenient: bool = False, ports: Ports = Ports()) -> list[dict[str, Any]]:
    """The rows with ``_raw`` (each message's own bytes and, for MQQB, its UserMessage), undecoded."""
    return list(Scan(ports=ports, lenient=lenient, decode=False, raw=True).rows(path))


class Scan:
    """One streaming pass over a capture: :meth:`rows` yields rows, :attr:`summary` accounts for them.

    ``decode``: decode each message body to JSON (``"decoded"``); ``raw``: keep its bytes (and the
    UserMessage) in ``"_raw"``, as a trace needs them.
    """

    def __init__(self, *, ports: Ports = Ports(), lenient: bool = False, decode: bool = True,
                 raw: bool = False) -> None:
        self.ports, self.lenient, self.decode, self.raw = ports, lenient, decode, raw
        self.summary = CaptureSummary()
        self._heap: list[tuple[int, int, dict[str, Any]]] = []
        self._count = 0
        self._sub = 0  # _AFTER while a hole is given up: what it releases sorts after it
        self._directions: dict[tuple[str, str], Direction] = {}
        self._gapped: set[Direction] = set()
        self._fragments = ip.Fragments()
        self._pending: dict[int, list[Any]] = {}  # TCP frame -> [pieces not yet framed, any framed]
        self._names: dict[bytes, str] = {}
        self._hosts: set[bytes] = set()  # addresses seen on the directory protocols' ports
        self._last: tuple[int, float] = (0, 0.0)
        self._expiry = 0.0

    # --- the pass -----------------------------------------------------------------------------

    def rows(self, path: Path | str) -> Iterator[dict[str, Any]]:
        """The rows, in order, as the capture is read (CaptureError before the first for a bad file)."""
        summary = self.summary
        frames = read_frames(path)
        try:
            for frame in frames:
                summary.frames += 1
                summary.bytes_read += len(frame.data)
                use = self._frame(frame)
                if use is not None:
                    (summary.used if use in _USED else summary.skipped)[use] += 1
                self._last = (frame.number, frame.time)
                if self._gapped or len(self._fragments):
                    self._overdue(frame.time)
                if self._heap:
                    yield from self._release()
        except CaptureError as exc:
            if not exc.cut:
                raise
            summary.cut = str(exc)
        self._finish()
        yield from self._release(everything=True)
        if not summary.reconciles:  # a bookkeeping bug in this module, never the capture's fault
            raise RuntimeError(f"capture summary does not reconcile: {summary.to_json()}")

    def _frame(self, frame: Frame) -> str | None:
        """What the frame was used for, or why it was skipped (None: decided later)."""
        parse = links.PARSERS.get(frame.linktype)
        if parse is None:
            self.summary.unknown_link_types[frame.linktype] += 1
            return "unknown link type"
        data = frame.data
        cut = frame.wire_length > len(data)
        found = parse(data)
        if type(found) is str:
            return "truncated" if cut and found == links.MALFORMED else found
        offset, link_broadcast = found
        packet = ip.parse(data, offset)
        if type(packet) is str:
            return ("truncated" if cut else "malformed") if packet in (ip.SHORT, "malformed") else packet
        if packet.fragment:
            if self._fragments.duplicate(packet, frame.time):
                return "IP fragment copy"
            whole, numbers = self._fragments.add(packet, frame.number, frame.time)
            if whole is None:
                return None
            use = self._transport(frame, whole, link_broadcast)
            others = len(numbers) - 1
            if use in _USED or use is None:
                self.summary.used["ip fragment"] += others
                return "ip fragment" if use is not None else None
            self.summary.skipped[use] += others
            return use
        return self._transport(frame, packet, link_broadcast)

    def _transport(self, frame: Frame, packet: ip.Packet, link_broadcast: bool) -> str | None:
        if packet.proto == ip.UDP:
            header = ip.udp(packet.payload)
            if header is None:
                return "truncated" if packet.missing else "malformed"
            sport, dport, payload, lost = header
            if sport not in self.ports.mqsd and dport not in self.ports.mqsd:
                return "other port"
            return self._datagram(frame, packet, sport, dport, payload, lost, link_broadcast)
        if packet.proto == ip.TCP:
            header = ip.tcp(packet.payload)
            if header is None:
                return "truncated" if packet.missing else "malformed"
            sport, dport, seq, flags, payload = header
            if sport not in self.ports.mqqb and dport not in self.ports.mqqb:
                return "other port"
            return self._segment(frame, packet, sport, dport, seq, flags, payload)
        return "not UDP or TCP"

    def _endpoint(self, packet: ip.Packet, which: str, port: int) -> str:
        raw = packet.src if which == "src" else packet.dst
        name = self._names.get(raw)
        if name is None:
            name = socket.inet_ntop(socket.AF_INET if len(raw) == 4 else socket.AF_INET6, raw)
            name = self._names[raw] = f"[{name}]" if len(raw) == 16 else name
            self._hosts.add(raw)
        return f"{name}:{port}"

    # --- MS-MQSD --------------------------------------------------------------------------------

    def _datagram(self, frame: Frame, packet: ip.Packet, sport: int, dport: int, payload: bytes, lost: int,
                  link_broadcast: bool) -> str:
        """One TopologyClientRequest or TopologyServerReply per UDP datagram: MS-MQSD's messages carry no length,
        and mqspec reads them over "Connectionless communications" (2.1) one per datagram (E-028)."""
        src, dst = self._endpoint(packet, "src", sport), self._endpoint(packet, "dst", dport)
        self.summary.units += 1
        if lost:
            text = (f"datagram cut short by the capture: {plural(len(payload), 'byte')} kept, {lost} lost "
                    f"(snap length)")
            self._hole("truncated", frame.number, frame.time, src, dst, lost, text, "mqsd")
            return "truncated"
        extra: dict[str, Any] = {"broadcast": True} if link_broadcast else {}
        if self.raw:
            extra["_raw"] = {"bytes": payload}
        self._message(frame.number, frame.time, src, dst, "mqsd", lambda: decode_datagram(payload, self.lenient),
                      **extra)
        return "mqsd datagram"

    # --- MQQB over TCP --------------------------------------------------------------------------

    def _segment(self, frame: Frame, packet: ip.Packet, sport: int, dport: int, seq: int, flags: int,
                 payload: bytes) -> str | None:
        src, dst = self._endpoint(packet, "src", sport), self._endpoint(packet, "dst", dport)
        key = (src, dst)
        direction = self._directions.get(key)
        if flags & SYN:
            # a SYN opens a connection; one reusing the 4-tuple of an earlier one starts afresh
            if direction is not None and direction.base != (seq + 1) % 2**32:
                self._close(direction)
                direction = None
            if direction is None:
                direction = self._open(key, frame, synced=True)
                direction.start(seq)
            seq += 1  # data on a SYN follows it
        lost = packet.missing
        if not payload and not lost:
            return "tcp control"
        if direction is None:
            direction = self._open(key, frame, synced=False)
        new, pieces = direction.add(seq % 2**32, payload, lost, frame.number, frame.time)
        if not new:
            return "TCP retransmission"
        if not lost:
            self._pending[frame.number] = [new, False]
        self._hand_on(direction, pieces)
        if direction.gap_at is not None:
            self._gapped.add(direction)
        else:
            self._gapped.discard(direction)
        return "truncated" if lost else None

    def _open(self, key: tuple[str, str], frame: Frame, synced: bool) -> Direction:
        direction = self._directions[key] = Direction(key[0], key[1], frame.number, frame.time)
        direction.framer = Framer(self, direction, synced)
        return direction

    def _close(self, direction: Direction) -> None:
        """An old connection the 4-tuple is reused for: give up its holes, finish its framing."""
        while direction.gap_at is not None:
            self._give_up(direction)
        self._gapped.discard(direction)
        direction.framer.finish()  # type: ignore[attr-defined]

    def _hand_on(self, direction: Direction, pieces: list[Piece]) -> None:
        framer: Framer = direction.framer  # type: ignore[assignment]
        for piece in pieces:
            if piece.data is not None:
                framer.feed(piece)
            else:
                self.summary.stream_bytes_lost += piece.lost
                framer.lose(piece.offset, piece.offset + piece.lost, "truncated", piece.delivered, piece.time)

    def _give_up(self, direction: Direction) -> None:
        """Give up the first hole of a direction: a hole row in its place, then what follows it."""
        self._sub = _AFTER
        try:
            gap, pieces = direction.give_up()
            self.summary.stream_bytes_lost += gap.end - gap.start
            direction.framer.lose(gap.start, gap.end, "tcp-gap", gap.frame, gap.time)  # type: ignore[attr-defined]
            self._hand_on(direction, pieces)
        finally:
            self._sub = 0
        if direction.gap_at is None:
            self._gapped.discard(direction)

    # the framing's sink --------------------------------------------------------------------------

    def packet(self, direction: Direction, data: bytes, flags: int, frame: int, time: float) -> None:
        """One framed packet: skip internal ones, find the queue, decode the body."""
        self.summary.units += 1
        if flags & mqqb.BF_INTERNAL:
            self.summary.messages_skipped["mqqb internal packet"] += 1
            return
        src, dst = direction.src, direction.dst
        try:
            message = mqqb.decode_user_message(data)
        except DecodeError as exc:
            self._broken_user_message(frame, time, src, dst, data, exc)
            return
        protocol, reason = identify_queue(message.destination)
        if protocol is None:
            self.summary.messages_skipped[reason] += 1
            return
        extra: dict[str, Any] = {"queue": message.format_name("destination")}
        if message.properties.message_class != 0:
            # a Nack carries the original message as its body (MC-MQDSRP 3.1.5.1): say so (E-048)
            extra["message_class"] = message.properties.message_class
        if not message.body and (protocol == "mqdsrp" or "message_class" in extra):
            # "If repMessage is empty: Take no further action" (MC-MQDSRP 3.1.5.1); an
            # acknowledgment without a body has nothing to decode either (E-048)
            self.summary.messages_skipped["mqqb empty body"] += 1
            return
        if self.raw:
            extra["_raw"] = {"bytes": message.body, "message": message}
        if message.security is not None and message.security.encrypted_body:
            self._row(frame, time, src, dst, protocol, **extra,
                      error="SecurityHeader.Flags.EB is set: the body is encrypted and cannot be decoded")
            return
        decode_body = decode_replication_body if protocol == "mqdsrp" else decode_notification_body
        body = message.body
        self._message(frame, time, src, dst, protocol, lambda: decode_body(body, self.lenient), **extra)

    def error(self, direction: Direction, reason: str, frame: int, time: float) -> None:
        """A stretch of stream that is not a packet."""
        self.summary.units += 1
        self._row(frame, time, direction.src, direction.dst, "mqqb", error=reason)

    def hole(self, direction: Direction, kind: str, text: str, lost: int | None, frame: int, time: float) -> None:
        self.summary.units += 1
        if kind == "mid-message" and text.startswith("the capture ends"):
            frame, time = self._last  # the capture's end: what the node did until then is judged
        self._hole(kind, frame, time, direction.src, direction.dst, lost, text, "mqqb")

    def skipped_bytes(self, n: int) -> None:
        self.summary.stream_bytes_skipped += n

    def piece_done(self, frame: int, framed: bool, use: str | None) -> None:
        entry = self._pending.get(frame)
        if entry is None:
            return  # a truncated segment, counted when it came
        entry[0] -= 1
        entry[1] = entry[1] or framed
        if entry[0] == 0:
            del self._pending[frame]
            if entry[1]:
                self.summary.used["tcp segment"] += 1
            else:
                self.summary.skipped[use or "TCP gap"] += 1

    def _broken_user_message(self, frame: int, time: float, src: str, dst: str, packet: bytes,
                             exc: DecodeError) -> None:
        """A UserMessage that does not decode: skipped if it is plainly for another queue, else an error row."""
        try:
            destination = mqqb.read_destination(packet)
        except DecodeError:
            self._row(frame, time, src, dst, "mqqb", error=str(exc))
            return
        protocol, reason = identify_queue(destination)
        if protocol is None:
            self.summary.messages_skipped[reason] += 1
            return
        queue = mqqb.UserMessage(destination).format_name() if destination.kind in (5, 6, 7) else None
        self._row(frame, time, src, dst, protocol, **({"queue": queue} if queue else {}), error=str(exc))

    # --- rows and holes -------------------------------------------------------------------------

    def _row(self, frame: int, time: float, src: str | None, dst: str | None, protocol: str,
             **fields: Any) -> None:
        row = {"frame": frame, "time": time, "src": src, "dst": dst, "protocol": protocol, **fields}
        if "hole" not in row:
            if "error" in row:
                self.summary.errors += 1
            else:
                self.summary.decoded += 1
        self._count += 1
        heapq.heappush(self._heap, (frame, self._sub + self._count, row))

    def _message(self, frame: int, time: float, src: str, dst: str, protocol: str, decode: Any,
                 **extra: Any) -> None:
        if not self.decode:  # found, not decoded: a trace's checker decodes it and names any error
            self._row(frame, time, src, dst, protocol, **extra)
            return
        from mqspec.model.jsonform import to_json

        try:
            message = decode()
        except DecodeError as exc:
            self._row(frame, time, src, dst, protocol, **extra, error=str(exc))
            return
        self._row(frame, time, src, dst, protocol, **extra, decoded=to_json(message))

    def _hole(self, kind: str, frame: int, time: float, src: str | None, dst: str | None, lost: int | None,
              text: str, protocol: str) -> None:
        self.summary.add_hole(Hole(kind, frame, time, src, dst, lost, text))
        if kind != "cut":
            self.summary.lost += 1
        self._row(frame, time, src, dst, protocol, error=text, hole=kind, **({"lost": lost} if lost else {}))

    def _release(self, everything: bool = False) -> Iterator[dict[str, Any]]:
        """The rows no unresolved hole can still come before."""
        limit = None
        if not everything:
            places = [d.gap_at[0] for d in self._gapped if d.gap_at is not None]
            first = self._fragments.first_frame()
            if first is not None:
                places.append(first)
            limit = min(places) if places else None
        heap = self._heap
        while heap and (limit is None or heap[0][0] <= limit):
            yield heapq.heappop(heap)[2]
        if len(heap) > MAX_WAITING and self._gapped:  # too much waits behind a hole: give the oldest up
            oldest = min(self._gapped, key=lambda d: d.gap_at or (0, 0.0))
            self._give_up(oldest)
            yield from self._release()

    def _overdue(self, now: float) -> None:
        for direction in [d for d in self._gapped if d.overdue(now)]:
            while direction.overdue(now):
                self._give_up(direction)
        if len(self._fragments) and (now - self._expiry >= 1.0 or self._fragments.held > ip.MAX_HELD):
            self._expiry = now
            self._given_up_fragments(now)

    def _given_up_fragments(self, now: float, everything: bool = False) -> None:
        for first, datagram in self._fragments.expired(now, everything):
            self.summary.skipped["fragment incomplete"] += len(datagram.frames)
            ours, where = self._fragment_ours(first)
            if ours:
                self.summary.units += 1
                missing = "" if datagram.end is None else f" of {datagram.end}"
                got = sum(len(p) for p in datagram.pieces.values())
                self._hole("fragment", datagram.first, datagram.time, *where, None,
                           f"an IP datagram never whole: {plural(len(datagram.frames), 'fragment')} "
                           f"({plural(got, 'byte')}{missing}) captured, the rest never"
                           + ("" if first.frag_offset == 0 else " (its first fragment, with the ports, too)"),
                           "ip")

    def _fragment_ours(self, first: ip.Packet) -> tuple[bool, tuple[str | None, str | None]]:
        """Whether a datagram given up was the directory protocols' (by its ports, or, its first
        fragment missing, by its hosts), and its endpoints as far as known."""
        if first.frag_offset == 0:
            header = ip.udp(first.payload) if first.proto == ip.UDP else ip.tcp(first.payload) \
                if first.proto == ip.TCP else None
            if header is not None:
                sport, dport = header[0], header[1]
                ports = self.ports.mqsd if first.proto == ip.UDP else self.ports.mqqb
                ours = sport in ports or dport in ports
                return ours, (self._endpoint(first, "src", sport), self._endpoint(first, "dst", dport))
        ours = first.proto in (ip.UDP, ip.TCP) and (first.src in self._hosts or first.dst in self._hosts)
        return ours, (first.address("src"), first.address("dst"))

    def _finish(self) -> None:
        """The capture ended: give up every hole and fragment, finish every stream, account for the cut."""
        for direction in sorted(self._gapped, key=lambda d: d.gap_at or (0, 0.0)):
            while direction.gap_at is not None:
                self._give_up(direction)
        self._gapped.clear()
        self._given_up_fragments(0.0, everything=True)
        for direction in self._directions.values():
            direction.framer.finish()  # type: ignore[attr-defined]
        if self.summary.cut is not None:
            frame, time = self._last
            self._sub = _AFTER
            self._hole("cut", frame, time, None, None, None, f"the capture file is cut: {self.summary.cut}",
                       "capture")
            self._sub = 0


_USED = frozenset(("mqsd datagram", "tcp segment", "tcp control", "ip fragment"))


@clause("MS-MQSD", "2.1", "Transport")
def decode_datagram(payload: bytes, lenient: bool = False) -> Any:
    """One UDP datagram to or from port 1801 is one MQSD packet (connectionless; E-028)."""
    return importlib.import_module("mqspec.model.mqsd").decode(payload, lenient=lenient)


@clause("MC-MQDSRP", "2.1", "Transport")
def decode_replication_body(body: bytes, lenient: bool = False) -> Any:
    """"The replication data is described by a replication message, which is carried in the body
    of an MSMQ message" sent over [MS-MQQB] to the replication queue (E-045, E-046)."""
    return importlib.import_module("mqspec.model.mqdsrp").decode(body, lenient=lenient)


@clause("MS-MQCN", "2.1", "Transport")
def decode_notification_body(body: bytes, lenient: bool = False) -> Any:
    """"Notifications are sent within messages that are transported as MSMQ messages over ...
    [MS-MQQB]": the body is the message plus one unused byte (3.3.5.3, decoded by mqcn)."""
    return importlib.import_module("mqspec.model.mqcn").decode_body(body, lenient=lenient)


def queue_name(destination: mqqb.QueueFormat) -> str | None:
    """The queue name a direct format name ends with (lower case), or None for other types."""
    if not isinstance(destination, mqqb.DirectQueue):
        return None
    name = mqqb.strip_direct_prefix(destination.name)
    return name.replace("/", "\\").rsplit("\\", 1)[-1].lower()


def identify_queue(destination: mqqb.QueueFormat) -> tuple[str | None, str]:
    """Which protocol a destination queue carries: (protocol, "") or (None, the skip reason).

    Modelling E-045: a direct format name is identified by its last path component, compared
    case-insensitively with ``mqis_queue$`` and ``notify_queue$``. Modelling E-046: a private
    format name with queue number 1 or 3 is REPLICATION_QUEUE_PRIVATE or NOTIFY_QUEUE_PRIVATE,
    the names MC-MQDSRP 1.9 and MS-MQCN 1.9 assign. Any other type (public) is unknown.
    """
    if isinstance(destination, mqqb.DirectQueue):
        name = queue_name(destination)
        if name == REPLICATION_QUEUE:
            return "mqdsrp", ""
        if name == NOTIFICATION_QUEUE:
            return "mqcn", ""
        return None, "mqqb other queue"
    if isinstance(destination, mqqb.PrivateQueue) or (
        isinstance(destination, mqqb.PrivateQueueId)
        and destination.relative_to == mqqb.QueueType.PRIVATE_AT_DESTINATION
    ):
        if destination.queue_id == REPLICATION_QUEUE_ID:
            return "mqdsrp", ""
        if destination.queue_id == NOTIFICATION_QUEUE_ID:
            return "mqcn", ""
        return None, "mqqb other queue"
    return None, "mqqb unknown queue"
