"""IPv4 and IPv6 packets and their UDP/TCP headers, read by hand; IP fragments reassembled.

A packet's bytes past its IP total length (Ethernet padding) are dropped; bytes the capture's
snap length cut off are counted in :attr:`Packet.missing`. Checksums are not verified: captures
taken where the network card computes them (``lo``, offload) carry wrong ones.

Fragments (IPv4 MF/offset, IPv6 Fragment header) are held by :class:`Fragments` until their datagram
is whole, then the datagram goes on as if it had come in one frame (RFC 791 and RFC 8200
reassembly: keyed by source, destination, protocol and identification; the first copy of a byte
wins). A datagram not whole within :data:`FRAGMENT_TIMEOUT` seconds of capture time (RFC 791's
upper bound is 15 s of TTL, Linux waits 30 s), or at the end of the capture, is given up: its
frames are skipped as "fragment incomplete". Memory is bounded by :data:`MAX_HELD` bytes held.
"""

from __future__ import annotations

import socket
import struct
from collections.abc import Iterator

FRAGMENT_TIMEOUT = 30.0
MAX_HELD = 32 << 20
MAX_DATAGRAM = 65535 + 40

UDP, TCP = 17, 6
_HHH = struct.Struct(">HHH")
_TCP = struct.Struct(">HHIIBB")
_EXTENSIONS = frozenset((0, 43, 60))  # hop-by-hop, routing, destination options
SHORT = "short"


class Packet:
    """An IP packet (or a reassembled datagram): addresses, protocol, payload, what the capture lost."""

    __slots__ = ("dst", "frag_offset", "ident", "more", "payload", "proto", "src", "version", "missing")

    def __init__(self, version: int, src: bytes, dst: bytes, proto: int, payload: bytes, missing: int,
                 ident: int = -1, frag_offset: int = 0, more: bool = False) -> None:
        self.version, self.src, self.dst, self.proto, self.payload = version, src, dst, proto, payload
        self.missing, self.ident, self.frag_offset, self.more = missing, ident, frag_offset, more

    @property
    def fragment(self) -> bool:
        return self.more or self.frag_offset > 0

    def address(self, which: str) -> str:
        raw = self.src if which == "src" else self.dst
        return socket.inet_ntop(socket.AF_INET if self.version == 4 else socket.AF_INET6, raw)


def parse(data: bytes, pos: int) -> Packet | str:
    """The IP packet at ``pos``, or a reason: ``short`` (ends early), ``malformed``, ``not IP``."""
    if len(data) <= pos:
        return SHORT
    version = data[pos] >> 4
    if version == 4:
        if len(data) < pos + 20:
            return SHORT
        ihl = (data[pos] & 0x0F) * 4
        total, ident, frag = _HHH.unpack_from(data, pos + 2)
        if ihl < 20:
            return "malformed"
        if total == 0:  # TCP segmentation offload: the length is left to the card
            total = len(data) - pos
        if total < ihl:
            return "malformed"
        end = pos + total
        have = min(end, len(data))
        if have < pos + ihl:
            return SHORT
        return Packet(4, data[pos + 12:pos + 16], data[pos + 16:pos + 20], data[pos + 9], data[pos + ihl:have],
                      end - have, ident, (frag & 0x1FFF) * 8, bool(frag & 0x2000))
    if version == 6:
        if len(data) < pos + 40:
            return SHORT
        length = _HHH.unpack_from(data, pos + 4)[0]
        end = pos + 40 + length if length else len(data)  # 0: a jumbogram, or offload
        nh, p = data[pos + 6], pos + 40
        ident, offset, more = -1, 0, False
        while nh in _EXTENSIONS or nh == 44 or nh == 51:
            if len(data) < p + 8:
                return SHORT
            if nh == 44:  # Fragment header: offset, M flag, identification
                value = _HHH.unpack_from(data, p + 2)[0]
                offset, more = value & 0xFFF8, bool(value & 1)
                ident = struct.unpack_from(">I", data, p + 4)[0]
                nh, p = data[p], p + 8
            elif nh == 51:  # Authentication Header: payload length in 4-byte units, less 2
                nh, p = data[p], p + (data[p + 1] + 2) * 4
            else:
                nh, p = data[p], p + (data[p + 1] + 1) * 8
        if p > end:
            return "malformed"
        have = min(end, len(data))
        return Packet(6, data[pos + 8:pos + 24], data[pos + 24:pos + 40], nh, data[p:have], end - have,
                      ident, offset, more)
    return "not IP"


def udp(payload: bytes) -> tuple[int, int, bytes, int] | None:
    """(source port, destination port, data, bytes of it not captured) of a UDP header, None if short."""
    if len(payload) < 8:
        return None
    sport, dport, length = _HHH.unpack_from(payload, 0)
    length = max(length, 8)
    return sport, dport, payload[8:length], max(length - len(payload), 0)


def tcp(payload: bytes) -> tuple[int, int, int, int, bytes] | None:
    """(source port, destination port, sequence number, flags, data) of a TCP header, None if short."""
    if len(payload) < 20:
        return None
    sport, dport, seq, _ack, offset, flags = _TCP.unpack_from(payload, 0)
    size = (offset >> 4) * 4
    if size < 20 or size > len(payload):
        return None
    return sport, dport, seq, flags, payload[size:]


class _Datagram:
    __slots__ = ("end", "first", "frames", "held", "pieces", "time", "truncated")

    def __init__(self, frame: int, time: float) -> None:
        self.pieces: dict[int, bytes] = {}
        self.end: int | None = None
        self.frames: list[int] = []
        self.first, self.time, self.held, self.truncated = frame, time, 0, False


class Fragments:
    """IP fragments waiting for the rest of their datagram (see the module docstring)."""

    def __init__(self) -> None:
        self.waiting: dict[tuple[object, ...], tuple[_Datagram, Packet]] = {}
        self.held = 0
        self.done: dict[tuple[object, ...], float] = {}  # datagrams completed lately: a late copy adds nothing

    def duplicate(self, packet: Packet, time: float) -> bool:
        """Whether the fragment is a copy of one of a datagram completed lately (a retransmission)."""
        return (packet.version, packet.src, packet.dst, packet.proto, packet.ident) in self.done

    def __len__(self) -> int:
        return len(self.waiting)

    def first_frame(self) -> int | None:
        """The earliest frame of a datagram still waiting (None: none waits)."""
        return min((d.first for d, _ in self.waiting.values()), default=None)

    def add(self, packet: Packet, frame: int, time: float) -> tuple[Packet | None, list[int]]:
        """Hold one fragment: (the whole datagram and its frames, once complete, else (None, []))."""
        key = (packet.version, packet.src, packet.dst, packet.proto, packet.ident)
        entry = self.waiting.get(key)
        if entry is None:
            entry = self.waiting[key] = (_Datagram(frame, time), packet)
        datagram = entry[0]
        datagram.frames.append(frame)
        if packet.missing:
            datagram.truncated = True  # a fragment the snap length cut: never whole
        if packet.frag_offset not in datagram.pieces:  # the first copy wins
            datagram.pieces[packet.frag_offset] = packet.payload
            datagram.held += len(packet.payload)
            self.held += len(packet.payload)
        if packet.frag_offset == 0:
            self.waiting[key] = (datagram, packet)  # the first fragment's header names the ports
        if not packet.more:
            datagram.end = packet.frag_offset + len(packet.payload) + packet.missing
        whole = self._whole(datagram)
        if whole is None:
            return None, []
        del self.waiting[key]
        self.held -= datagram.held
        self.done[key] = time
        if len(self.done) > 4096:  # forget the oldest (identifications are reused after a while anyway)
            for old in [k for k, t in self.done.items() if time - t > FRAGMENT_TIMEOUT] or list(self.done)[:1024]:
                del self.done[old]
        return Packet(packet.version, packet.src, packet.dst, packet.proto, whole, 0), datagram.frames

    @staticmethod
    def _whole(datagram: _Datagram) -> bytes | None:
        if datagram.end is None or datagram.truncated or datagram.end > MAX_DATAGRAM:
            return None
        parts, pos = [], 0
        for offset in sorted(datagram.pieces):
            piece = datagram.pieces[offset]
            if offset > pos:
                return None
            if offset + len(piece) > pos:
                parts.append(piece[pos - offset:])
                pos = offset + len(piece)
        return b"".join(parts) if pos >= datagram.end else None

    def expired(self, now: float, everything: bool = False) -> Iterator[tuple[Packet, _Datagram]]:
        """Give up the datagrams older than the timeout (every one, at the end; the oldest, beyond
        MAX_HELD): (the first fragment seen, when it is offset 0, else any; its record)."""
        for key, (datagram, packet) in list(self.waiting.items()):
            if everything or now - datagram.time > FRAGMENT_TIMEOUT or self.held > MAX_HELD:
                del self.waiting[key]
                self.held -= datagram.held
                yield packet, datagram
