"""Write captures (classic pcap, pcapng, gzip-compressed) of IPv4 UDP and TCP frames: tests, samples, benchmarks.

A capture is built from frames (the bytes of one link-layer frame each) and timestamps;
:class:`TcpConversation` keeps the sequence numbers of both directions of one connection so a
test can cut a byte stream into segments, retransmit one, or deliver them out of order.
:func:`udp_fragments` cuts a datagram into IPv4 fragments; :func:`sll_frame` and
:func:`sll2_frame` give Linux "cooked" frames (``tcpdump -i any``); :func:`pcapng_bytes` writes
several interfaces with their own link types and timestamp resolutions. Checksums are computed
(by dpkt) so that the files open cleanly in Wireshark.
"""

from __future__ import annotations

import gzip
import ipaddress
import struct
from collections.abc import Iterable, Sequence
from os import PathLike
from typing import BinaryIO

import dpkt

LINKTYPE_ETHERNET = 1
LINKTYPE_RAW = 101
LINKTYPE_LINUX_SLL = 113
LINKTYPE_LINUX_SLL2 = 276
PCAP_MAGIC = 0xA1B2C3D4
PCAP_MAGIC_NS = 0xA1B23C4D

MSMQ_PORT = 1801

# TCP flags
FIN, SYN, RST, PSH, ACK = dpkt.tcp.TH_FIN, dpkt.tcp.TH_SYN, dpkt.tcp.TH_RST, dpkt.tcp.TH_PUSH, dpkt.tcp.TH_ACK


def _mac(ip: str) -> bytes:
    """A stable locally administered MAC address derived from an IPv4 address."""
    return b"\x02\x00" + ipaddress.IPv4Address(ip).packed


def ipv4_packet(src: str, dst: str, transport: dpkt.Packet, proto: int, *, ident: int = 0) -> dpkt.ip.IP:
    ip = dpkt.ip.IP(
        src=ipaddress.IPv4Address(src).packed,
        dst=ipaddress.IPv4Address(dst).packed,
        p=proto,
        ttl=128,
        id=ident,
        data=transport,
    )
    ip.len = 20 + len(bytes(transport))
    return ip


def ethernet_frame(ip: dpkt.ip.IP | bytes, *, broadcast: bool = False) -> bytes:
    """An Ethernet frame around an IPv4 packet; ``broadcast``: to ff:ff:ff:ff:ff:ff."""
    raw = bytes(ip)
    src, dst = (ipaddress.IPv4Address(raw[at:at + 4]).compressed for at in (12, 16))
    return (b"\xff" * 6 if broadcast else _mac(dst)) + _mac(src) + struct.pack(">H", 0x0800) + raw


def udp_frame(src: str, sport: int, dst: str, dport: int, payload: bytes, *, ethernet: bool = True,
              broadcast: bool = False) -> bytes:
    """One Ethernet/IPv4/UDP frame (or a raw IPv4 packet when ``ethernet`` is False)."""
    ip = udp_packet(src, sport, dst, dport, payload)
    return ethernet_frame(ip, broadcast=broadcast) if ethernet else bytes(ip)


def udp_packet(src: str, sport: int, dst: str, dport: int, payload: bytes, *, ident: int = 0) -> dpkt.ip.IP:
    udp = dpkt.udp.UDP(sport=sport, dport=dport, data=payload)
    udp.ulen = 8 + len(payload)
    return ipv4_packet(src, dst, udp, dpkt.ip.IP_PROTO_UDP, ident=ident)


def udp_fragments(src: str, sport: int, dst: str, dport: int, payload: bytes, *, size: int = 512,
                  ident: int = 1, ethernet: bool = True) -> list[bytes]:
    """A UDP datagram as IPv4 fragments of at most ``size`` payload bytes (a multiple of 8), in order."""
    assert size % 8 == 0
    whole = bytes(udp_packet(src, sport, dst, dport, payload, ident=ident))
    header, data = bytearray(whole[:20]), whole[20:]
    frames = []
    for offset in range(0, len(data), size):
        part = data[offset:offset + size]
        more = offset + size < len(data)
        head = bytearray(header)
        struct.pack_into(">HHH", head, 2, 20 + len(part), ident, (0x2000 if more else 0) | offset // 8)
        struct.pack_into(">H", head, 10, 0)
        struct.pack_into(">H", head, 10, _checksum(bytes(head)))
        packet = bytes(head) + part
        frames.append(ethernet_frame(packet) if ethernet else packet)
    return frames


def _checksum(data: bytes) -> int:
    total = sum(struct.unpack(f">{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def sll_frame(ip_packet: bytes, *, packet_type: int = 0) -> bytes:
    """A Linux "cooked" (SLL, link type 113) frame: ``packet_type`` 0 to us, 1 broadcast, 4 outgoing."""
    return struct.pack(">HHH8sH", packet_type, 1, 6, b"\x02\x00\x00\x00\x00\x01", 0x0800) + ip_packet


def sll2_frame(ip_packet: bytes, *, packet_type: int = 0, interface: int = 1) -> bytes:
    """A Linux "cooked" v2 (SLL2, link type 276) frame, as ``tcpdump -i any`` writes today."""
    return struct.pack(">HHIHBB8s", 0x0800, 0, interface, 1, packet_type, 6, b"\x02\x00\x00\x00\x00\x01") + ip_packet


def tcp_frame(
    src: str, sport: int, dst: str, dport: int, seq: int, ack: int = 0, payload: bytes = b"",
    *, flags: int = ACK | PSH, ethernet: bool = True,
) -> bytes:
    """One Ethernet/IPv4/TCP frame (or a raw IPv4 packet when ``ethernet`` is False)."""
    tcp = dpkt.tcp.TCP(
        sport=sport, dport=dport, seq=seq % 2**32, ack=ack % 2**32, flags=flags, win=65535, data=payload
    )
    ip = ipv4_packet(src, dst, tcp, dpkt.ip.IP_PROTO_TCP)
    return ethernet_frame(ip) if ethernet else bytes(ip)


class TcpConversation:
    """Both directions of one TCP connection; methods return frames, in the order sent.

    ``client`` and ``server`` are (address, port). Sequence numbers wrap modulo 2**32, so an
    initial sequence number near 2**32 exercises the reader's wrap-around.
    """

    def __init__(
        self, client: tuple[str, int], server: tuple[str, int] = ("10.0.0.2", MSMQ_PORT),
        *, client_isn: int = 1000, server_isn: int = 500_000, ethernet: bool = True,
    ) -> None:
        self.client, self.server = client, server
        self.isn = {True: client_isn, False: server_isn}
        self.next_seq = {True: client_isn + 1, False: server_isn + 1}
        self.ethernet = ethernet

    def _ends(self, from_client: bool) -> tuple[str, int, str, int]:
        a, b = (self.client, self.server) if from_client else (self.server, self.client)
        return a[0], a[1], b[0], b[1]

    def handshake(self) -> list[bytes]:
        """SYN, SYN-ACK, ACK."""
        c, s = self.isn[True], self.isn[False]
        return [
            tcp_frame(*self._ends(True), c, 0, flags=SYN, ethernet=self.ethernet),
            tcp_frame(*self._ends(False), s, c + 1, flags=SYN | ACK, ethernet=self.ethernet),
            tcp_frame(*self._ends(True), c + 1, s + 1, flags=ACK, ethernet=self.ethernet),
        ]

    def segment(self, from_client: bool, offset: int, payload: bytes, *, flags: int = ACK | PSH) -> bytes:
        """A segment carrying ``payload`` at stream ``offset`` (0 = the first data byte)."""
        seq = self.isn[from_client] + 1 + offset
        return tcp_frame(
            *self._ends(from_client), seq, self.next_seq[not from_client], payload,
            flags=flags, ethernet=self.ethernet,
        )

    def send(self, from_client: bool, data: bytes, *, segment_size: int | None = None) -> list[bytes]:
        """Send ``data`` in order, cut into segments of at most ``segment_size`` bytes."""
        start = self.next_seq[from_client] - self.isn[from_client] - 1
        size = segment_size or max(len(data), 1)
        frames = [
            self.segment(from_client, start + i, data[i : i + size]) for i in range(0, len(data), size)
        ]
        self.next_seq[from_client] += len(data)
        return frames

    def ack(self, from_client: bool) -> bytes:
        """A pure acknowledgment (no payload)."""
        offset = self.next_seq[from_client] - self.isn[from_client] - 1
        return self.segment(from_client, offset, b"", flags=ACK)


def _pcap_records(
    frames: Iterable[bytes | tuple[float, bytes]], *, linktype: int = LINKTYPE_ETHERNET,
    start: float = 1_700_000_000.0, step: float = 0.001, snaplen: int = 65535, nanosecond: bool = False,
) -> Iterable[bytes]:
    """The file header, then one record (header and bytes) per frame."""
    magic = PCAP_MAGIC_NS if nanosecond else PCAP_MAGIC
    yield struct.pack("<IHHiIII", magic, 2, 4, 0, 0, snaplen, linktype)
    scale = 10**9 if nanosecond else 10**6
    for i, item in enumerate(frames):
        when, frame = item if isinstance(item, tuple) else (start + i * step, item)
        ticks = round(when * scale)
        kept = frame[:snaplen]
        yield struct.pack("<IIII", ticks // scale, ticks % scale, len(kept), len(frame)) + kept


def pcap_bytes(frames: Iterable[bytes | tuple[float, bytes]], **options: object) -> bytes:
    """A classic pcap file: a frame is bytes (timed ``start + i*step``) or (time, bytes).

    Options: ``linktype``, ``start``, ``step``, ``snaplen`` (a frame longer than it is cut to it, with
    its original length recorded) and ``nanosecond``.
    """
    return b"".join(_pcap_records(frames, **options))  # type: ignore[arg-type]


def write_pcap(
    target: str | PathLike[str] | BinaryIO, frames: Iterable[bytes | tuple[float, bytes]], *,
    compress: bool = False, **options: object
) -> None:
    """Write :func:`pcap_bytes` of ``frames`` to a path or a binary file object, a frame at a time
    (gzip when ``compress``)."""
    if hasattr(target, "write"):
        _write_all(target, frames, compress, options)  # type: ignore[arg-type]
        return
    with open(target, "wb") as f:  # type: ignore[arg-type]
        _write_all(f, frames, compress, options)


def _write_all(out: BinaryIO, frames: Iterable[bytes | tuple[float, bytes]], compress: bool,
               options: dict[str, object]) -> None:
    if compress:  # mtime 0: the same frames give the same bytes
        with gzip.GzipFile(fileobj=out, mode="wb", mtime=0) as zipped:
            for record in _pcap_records(frames, **options):  # type: ignore[arg-type]
                zipped.write(record)
        return
    for record in _pcap_records(frames, **options):  # type: ignore[arg-type]
        out.write(record)


# --- pcapng -----------------------------------------------------------------------------------


def _block(kind: int, body: bytes) -> bytes:
    body += b"\x00" * (-len(body) % 4)
    length = 12 + len(body)
    return struct.pack("<II", kind, length) + body + struct.pack("<I", length)


def _option(code: int, value: bytes) -> bytes:
    return struct.pack("<HH", code, len(value)) + value + b"\x00" * (-len(value) % 4)


def pcapng_bytes(interfaces: Sequence[tuple[int, int]],
                 frames: Iterable[tuple[int, float, bytes] | tuple[int, float, bytes, int]], *,
                 snaplen: int = 0) -> bytes:
    """A pcapng file: ``interfaces`` as (link type, if_tsresol exponent of 10, e.g. 6 for µs, 9 for ns),
    then Enhanced Packet Blocks (interface, time, bytes[, original length]); a frame longer than
    ``snaplen`` (when not 0) is cut to it, with its original length recorded."""
    out = bytearray(_block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1)))
    scales = []
    for linktype, resolution in interfaces:
        options = _option(9, bytes([resolution])) + _option(0, b"") if resolution != 6 else b""
        out += _block(1, struct.pack("<HHI", linktype, 0, snaplen) + options)
        scales.append(10**resolution)
    for item in frames:
        interface, when, data = item[0], item[1], item[2]
        original = item[3] if len(item) > 3 else len(data)  # type: ignore[misc]
        kept = data[:snaplen] if snaplen else data
        ticks = round(when * scales[interface])
        out += _block(6, struct.pack("<IIIII", interface, ticks >> 32, ticks & 0xFFFFFFFF, len(kept), original) + kept)
    return bytes(out)
