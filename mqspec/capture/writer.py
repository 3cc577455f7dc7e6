"""Write classic libpcap files of Ethernet/IPv4 UDP and TCP frames (for tests and trace tooling).

A capture is built from frames (the bytes of one link-layer frame each) and timestamps;
:class:`TcpConversation` keeps the sequence numbers of both directions of one connection so a
test can cut a byte stream into segments, retransmit one, or deliver them out of order.
Checksums are computed (by dpkt) so that the files open cleanly in Wireshark.
"""

from __future__ import annotations

import ipaddress
import struct
from collections.abc import Iterable
from os import PathLike
from typing import BinaryIO

import dpkt

LINKTYPE_ETHERNET = 1
LINKTYPE_RAW = 101
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


def ethernet_frame(ip: dpkt.ip.IP) -> bytes:
    src, dst = (ipaddress.IPv4Address(a).compressed for a in (ip.src, ip.dst))
    return bytes(dpkt.ethernet.Ethernet(src=_mac(src), dst=_mac(dst), type=dpkt.ethernet.ETH_TYPE_IP, data=ip))


def udp_frame(src: str, sport: int, dst: str, dport: int, payload: bytes, *, ethernet: bool = True) -> bytes:
    """One Ethernet/IPv4/UDP frame (or a raw IPv4 packet when ``ethernet`` is False)."""
    udp = dpkt.udp.UDP(sport=sport, dport=dport, data=payload)
    udp.ulen = 8 + len(payload)
    ip = ipv4_packet(src, dst, udp, dpkt.ip.IP_PROTO_UDP)
    return ethernet_frame(ip) if ethernet else bytes(ip)


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


def pcap_bytes(
    frames: Iterable[bytes | tuple[float, bytes]],
    *, linktype: int = LINKTYPE_ETHERNET, start: float = 1_700_000_000.0, step: float = 0.001,
    snaplen: int = 65535, nanosecond: bool = False,
) -> bytes:
    """A classic pcap file: a frame is bytes (timed ``start + i*step``) or (time, bytes).

    A frame longer than ``snaplen`` is cut to it, with its original length recorded.
    """
    magic = PCAP_MAGIC_NS if nanosecond else PCAP_MAGIC
    out = bytearray(struct.pack("<IHHiIII", magic, 2, 4, 0, 0, snaplen, linktype))
    scale = 10**9 if nanosecond else 10**6
    for i, item in enumerate(frames):
        when, frame = item if isinstance(item, tuple) else (start + i * step, item)
        ticks = round(when * scale)
        kept = frame[:snaplen]
        out += struct.pack("<IIII", ticks // scale, ticks % scale, len(kept), len(frame)) + kept
    return bytes(out)


def write_pcap(
    target: str | PathLike[str] | BinaryIO, frames: Iterable[bytes | tuple[float, bytes]], **options: object
) -> None:
    """Write :func:`pcap_bytes` of ``frames`` to a path or a binary file object."""
    data = pcap_bytes(frames, **options)  # type: ignore[arg-type]
    if hasattr(target, "write"):
        target.write(data)  # type: ignore[union-attr]
    else:
        with open(target, "wb") as f:  # type: ignore[arg-type]
            f.write(data)
