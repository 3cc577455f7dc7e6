"""Decode the directory protocols' messages out of a packet capture (``mqspec decode --pcap``).

* MS-MQSD: UDP datagrams to or from port 1801, each one TopologyClientRequest/ServerReply.
* MC-MQDSRP and MS-MQCN: MSMQ messages carried by the binary transport (MQQB) over TCP port
  1801. Each direction of each connection is reassembled in sequence-number order (the first
  copy of a retransmitted byte wins), cut into MQQB packets, and the body of every UserMessage
  whose destination is the replication queue (``mqis_queue$``) or the notification queue
  (``notify_queue$``) is decoded (identification rule: modelling E-045, E-046; gaps and
  retransmissions: E-047; acknowledgments: E-048).

A message that does not decode is not fatal: its row carries ``"error"`` instead of
``"decoded"``. A capture cut off in the middle of a frame (a capture tool stopped mid-write) gives
the messages of the frames before the cut, and :attr:`CaptureSummary.cut` says where it ends. Only
a capture file that cannot be read (bad magic, a bad file header, a corrupt record) raises
:class:`CaptureError`. :class:`CaptureSummary` accounts for every frame and every message.
"""

from __future__ import annotations

import importlib
import io
import socket
import struct
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import dpkt

from mqspec.capture import mqqb
from mqspec.clauses import clause
from mqspec.model.errors import DecodeError
from mqspec.wording import plural

MSMQ_PORT = 1801
REPLICATION_QUEUE = "mqis_queue$"  # MC-MQDSRP 1.9 REPLICATION_QUEUE_NAME
NOTIFICATION_QUEUE = "notify_queue$"  # MS-MQCN 3.3.3 QueuePathName
REPLICATION_QUEUE_ID = 1  # MC-MQDSRP 1.9 REPLICATION_QUEUE_PRIVATE: PRIVATE=<QM GUID>\1
NOTIFICATION_QUEUE_ID = 3  # MS-MQCN 1.9 NOTIFY_QUEUE_PRIVATE: PRIVATE=<QM GUID>\3
_MAX_RECORD = 1 << 24  # a classic pcap record longer than this is corruption, not a frame


class CaptureError(Exception):
    """A capture file that cannot be read; ``frame`` 0 means the file header.

    ``cut`` is True when the file ends inside frame ``frame`` (the frames before it are whole).
    """

    def __init__(self, path: Path | str, frame: int, reason: str, *, cut: bool = False) -> None:
        super().__init__(path, frame, reason)
        self.path, self.frame, self.reason, self.cut = str(path), frame, reason, cut

    def __str__(self) -> str:
        where = f"frame {self.frame}" if self.frame else "file header (before frame 1)"
        return f"{self.path}: {where}: {self.reason}"


@attrs.frozen
class Frame:
    """One captured frame: its 1-based number, time (seconds), bytes, and length on the wire."""

    number: int
    time: float
    data: bytes
    wire_length: int


@attrs.define
class CaptureSummary:
    """Where every frame and every message went.

    Two accounts must balance (checked by :meth:`reconciles`):
    ``frames == sum(frame_uses.values())``: each frame was a UDP/1801 datagram, added bytes to a
    TCP/1801 stream, or was skipped for a reason; and
    ``datagrams + stream_units == decoded + errors + sum(skipped.values())``: each MQSD datagram
    and each MQQB stream unit (a framed packet, or a stretch of stream that could not be framed)
    gave a decoded row, an error row, or was skipped for a reason. A capture of UDP alone gives
    ``frames == decoded + errors + skipped``; TCP cannot, since one message may span many
    frames and one frame may end several messages.
    """

    frames: int = 0
    frame_uses: Counter[str] = attrs.Factory(Counter)
    datagrams: int = 0
    stream_units: int = 0
    decoded: int = 0
    errors: int = 0
    skipped: Counter[str] = attrs.Factory(Counter)
    stream_bytes_skipped: int = 0
    #: where the capture is cut off ("FILE: frame 34: truncated frame: ..."), None when whole
    cut: str | None = None

    @property
    def skipped_frames(self) -> int:
        """Frames that carried nothing decodable (not IP, not port 1801, retransmissions, ...)."""
        return sum(n for use, n in self.frame_uses.items() if use.startswith("skipped"))

    @property
    def reconciles(self) -> bool:
        frames_ok = self.frames == sum(self.frame_uses.values())
        messages = self.decoded + self.errors + sum(self.skipped.values())
        return frames_ok and self.datagrams + self.stream_units == messages

    def to_json(self) -> dict[str, Any]:
        out = attrs.asdict(self)
        out["frame_uses"], out["skipped"] = dict(self.frame_uses), dict(self.skipped)
        out["reconciles"] = self.reconciles
        return out


def decode_capture(path: Path, *, lenient: bool = False) -> list[dict[str, Any]]:
    """The rows of :func:`scan_capture` (one per decoded or undecodable message)."""
    rows, _summary = scan_capture(path, lenient=lenient)
    return rows


def scan_capture(path: Path, lenient: bool = False) -> tuple[list[dict[str, Any]], CaptureSummary]:
    """Decode every MQSD, MQDSRP and MQCN message in the capture at ``path``.

    Rows are ordered by the frame that completed each message. Raises CaptureError only for
    a file that is not a readable pcap/pcapng capture; a capture cut off mid-frame gives the
    rows of the frames before the cut, and the summary's ``cut`` names where it ends.
    """
    path = Path(path)
    scan = _Scan(lenient)
    linktype, frames = read_frames(path)
    try:
        for frame in frames:
            scan.frame(linktype, frame)
    except CaptureError as exc:
        if not exc.cut:
            raise
        scan.summary.cut = str(exc)
    scan.finish_streams()
    if not scan.summary.reconciles:  # a bookkeeping bug in this module, never the capture's fault
        raise RuntimeError(f"capture summary does not reconcile: {scan.summary.to_json()}")
    rows = [row for _key, row in sorted(scan.rows, key=lambda kr: kr[0])]
    return rows, scan.summary


# --- reading the capture file ---------------------------------------------------------------


def read_frames(path: Path) -> tuple[int, Iterator[Frame]]:
    """The link type and frames of a classic pcap or pcapng file (CaptureError if unreadable)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise CaptureError(path, 0, exc.strerror or str(exc)) from exc
    if len(data) >= 4 and data[:4] == b"\x0a\x0d\x0d\x0a":
        return _pcapng(path, data)
    return _classic(path, data)


_CLASSIC_MAGIC = {
    b"\xd4\xc3\xb2\xa1": ("<", 10**6),
    b"\xa1\xb2\xc3\xd4": (">", 10**6),
    b"\x4d\x3c\xb2\xa1": ("<", 10**9),
    b"\xa1\xb2\x3c\x4d": (">", 10**9),
}


def _classic(path: Path, data: bytes) -> tuple[int, Iterator[Frame]]:
    """Classic libpcap: a 24-byte file header, then 16-byte record headers and their bytes.

    dpkt's reader returns a record cut short by the end of the file as if it were whole, so
    the record framing is read here, to say exactly which frame is truncated.
    """
    if not data:
        raise CaptureError(path, 0, "empty file, not a pcap capture")
    magic = data[:4]
    if magic not in _CLASSIC_MAGIC:
        raise CaptureError(path, 0, f"not a pcap or pcapng file (magic {magic.hex()})")
    if len(data) < 24:
        raise CaptureError(path, 0, f"truncated file header: {len(data)} of 24 bytes")
    order, scale = _CLASSIC_MAGIC[magic]
    linktype = struct.unpack_from(order + "I", data, 20)[0] & 0x0FFFFFFF
    _check_linktype(path, linktype)
    record = struct.Struct(order + "IIII")

    def frames() -> Iterator[Frame]:
        pos, number = 24, 0
        while pos < len(data):
            number += 1
            if len(data) - pos < 16:
                raise CaptureError(path, number, f"truncated record header: {len(data) - pos} of 16 bytes", cut=True)
            sec, frac, caplen, wirelen = record.unpack_from(data, pos)
            if caplen > _MAX_RECORD:
                raise CaptureError(path, number, f"record claims {caplen} captured bytes: corrupt file")
            pos += 16
            if len(data) - pos < caplen:
                raise CaptureError(
                    path, number, f"truncated frame: record says {plural(caplen, 'byte')}, file has {len(data) - pos}", cut=True
                )
            yield Frame(number, sec + frac / scale, data[pos : pos + caplen], max(wirelen, caplen))
            pos += caplen

    return linktype, frames()


def _pcapng(path: Path, data: bytes) -> tuple[int, Iterator[Frame]]:
    """pcapng through dpkt (the first interface's link type applies to every packet)."""
    try:
        reader = dpkt.pcapng.Reader(io.BytesIO(data))
    except (ValueError, struct.error, dpkt.UnpackError) as exc:
        raise CaptureError(path, 0, f"unreadable pcapng header: {exc}") from exc
    linktype = reader.datalink()
    _check_linktype(path, linktype)

    def frames() -> Iterator[Frame]:
        it, number = iter(reader), 0
        while True:
            number += 1
            try:
                ts, buf = next(it)
            except StopIteration:
                return
            except (ValueError, struct.error, dpkt.UnpackError) as exc:
                raise CaptureError(path, number, f"truncated or malformed pcapng block: {exc}", cut=True) from exc
            yield Frame(number, float(ts), bytes(buf), len(buf))

    return linktype, frames()


_LINKTYPES = {0: "null", 1: "ethernet", 12: "raw", 14: "raw", 101: "raw", 108: "loop", 113: "sll",
              228: "raw", 229: "raw", 276: "sll2"}  # fmt: skip


def _check_linktype(path: Path, linktype: int) -> None:
    if linktype not in _LINKTYPES:
        raise CaptureError(path, 0, f"unsupported link type {linktype} (Ethernet, raw IP, Linux SLL, loopback)")


def _network(linktype: int, data: bytes) -> Any:
    """The IPv4/IPv6 packet of a frame, or None; dpkt errors propagate as dpkt.UnpackError."""
    kind = _LINKTYPES[linktype]
    if kind == "ethernet":
        layer = dpkt.ethernet.Ethernet(data).data
    elif kind == "raw":
        version = data[0] >> 4 if data else 0
        layer = dpkt.ip.IP(data) if version == 4 else dpkt.ip6.IP6(data) if version == 6 else None
    elif kind in ("null", "loop"):
        layer = dpkt.loopback.Loopback(data).data
    elif kind == "sll":
        layer = dpkt.sll.SLL(data).data
    else:
        layer = dpkt.sll2.SLL2(data).data
    return layer if isinstance(layer, dpkt.ip.IP | dpkt.ip6.IP6) else None


def _endpoint(ip: Any, which: str, port: int) -> str:
    raw = getattr(ip, which)
    if isinstance(ip, dpkt.ip6.IP6):
        return f"[{socket.inet_ntop(socket.AF_INET6, raw)}]:{port}"
    return f"{socket.inet_ntop(socket.AF_INET, raw)}:{port}"


# --- TCP reassembly -------------------------------------------------------------------------


@attrs.define
class _Run:
    """A contiguous stretch of one direction's stream and the frames that supplied it."""

    start: int
    data: bytearray
    spans: list[tuple[int, int, int, float]]  # (start, end, frame, time), sorted
    span_starts: list[int] = attrs.Factory(list)
    delivered: list[tuple[int, float]] = attrs.Factory(list)  # running max of (frame, time)

    def append(self, span: tuple[int, int, int, float]) -> None:
        self.spans.append(span)
        self.span_starts.append(span[0])
        last = self.delivered[-1] if self.delivered else (0, 0.0)
        self.delivered.append(max(last, (span[2], span[3])))


class _Direction:
    """One direction of one TCP connection: stream bytes by offset from the first data byte."""

    def __init__(self, src: str, dst: str) -> None:
        self.src, self.dst = src, dst
        self.base: int | None = None
        self.high = 0  # the highest stream offset held so far
        self.saw_syn = False
        self.starts: list[int] = []  # covered intervals, disjoint and sorted
        self.ends: list[int] = []
        self.pieces: list[tuple[int, bytes, int, float]] = []

    def offset(self, seq: int) -> int:
        """Stream offset of ``seq``: of the values congruent modulo 2**32, the one nearest the
        highest offset seen so far (so sequence numbers may wrap, and streams exceed 4 GiB)."""
        rel = (seq - self.base) % 2**32
        return rel + (self.high - rel + 2**31) // 2**32 * 2**32

    def add(self, seq: int, payload: bytes, frame: int, time: float) -> int:
        """Store the bytes of ``payload`` not already held (first copy wins); return how many."""
        if self.base is None:
            self.base = seq
        a = self.offset(seq)
        b = a + len(payload)
        self.high = max(self.high, b)
        new = 0
        i = bisect_right(self.ends, a)
        pos = a
        while pos < b:
            s = self.starts[i] if i < len(self.starts) else b
            if s > pos:
                e = min(s, b)
                self.pieces.append((pos, payload[pos - a : e - a], frame, time))
                new += e - pos
            if i >= len(self.starts):
                break
            pos = max(pos, self.ends[i])
            i += 1
        if new:
            j = bisect_left(self.ends, a)
            k = j
            while k < len(self.starts) and self.starts[k] <= b:
                a, b = min(a, self.starts[k]), max(b, self.ends[k])
                k += 1
            self.starts[j:k], self.ends[j:k] = [a], [b]
        return new

    def runs(self) -> list[_Run]:
        runs: list[_Run] = []
        for start, data, frame, time in sorted(self.pieces, key=lambda p: p[0]):
            end = start + len(data)
            if not runs or runs[-1].start + len(runs[-1].data) != start:
                runs.append(_Run(start, bytearray(), []))
            runs[-1].data += data
            runs[-1].append((start, end, frame, time))
        return runs


def _completed_by(run: _Run, b: int) -> tuple[int, float]:
    """The frame (and its time) at which TCP could deliver the run's bytes up to ``b``, in order:
    the last frame, in capture order, that supplied any of them (modelling E-047)."""
    j = bisect_left(run.span_starts, b) - 1  # the last span starting before b
    return run.delivered[max(j, 0)]


# --- the scan -------------------------------------------------------------------------------


class _Scan:
    """The state of one pass over a capture: rows so far, open TCP directions, the summary."""

    def __init__(self, lenient: bool) -> None:
        self.lenient = lenient
        self.summary = CaptureSummary()
        self.rows: list[tuple[tuple[int, int], dict[str, Any]]] = []
        self.open: dict[tuple[str, str], _Direction] = {}
        self.directions: list[_Direction] = []

    def add_row(self, frame: int, time: float, src: str, dst: str, protocol: str, **fields: Any) -> None:
        row = {"frame": frame, "time": time, "src": src, "dst": dst, "protocol": protocol, **fields}
        if "error" in row:
            self.summary.errors += 1
        else:
            self.summary.decoded += 1
        self.rows.append(((frame, len(self.rows)), row))

    def frame(self, linktype: int, frame: Frame) -> None:
        self.summary.frames += 1
        use = self._frame_use(linktype, frame)
        self.summary.frame_uses[use] += 1

    def _frame_use(self, linktype: int, frame: Frame) -> str:
        try:
            ip = _network(linktype, frame.data)
        except (dpkt.UnpackError, struct.error, IndexError, KeyError, ValueError):
            return "skipped: malformed link or IP header"
        if ip is None:
            return "skipped: not IP"
        if isinstance(ip, dpkt.ip.IP) and (ip.mf or ip.offset):
            return "skipped: IP fragment (not reassembled)"
        transport = ip.data
        if not isinstance(transport, dpkt.udp.UDP | dpkt.tcp.TCP):
            return "skipped: not UDP or TCP" if ip.p not in (6, 17) else "skipped: malformed UDP or TCP header"
        if MSMQ_PORT not in (transport.sport, transport.dport):
            return "skipped: not port 1801"
        src, dst = _endpoint(ip, "src", transport.sport), _endpoint(ip, "dst", transport.dport)
        missing = frame.wire_length - len(frame.data)  # cut off by the capture's snap length
        if isinstance(transport, dpkt.udp.UDP):
            self._datagram(frame, src, dst, bytes(transport.data)[: max(transport.ulen - 8, 0)], missing)
            return "mqsd datagram"
        return self._segment(frame, src, dst, transport)

    def _datagram(self, frame: Frame, src: str, dst: str, payload: bytes, missing: int) -> None:
        """MS-MQSD 2.1: one TopologyClientRequest or TopologyServerReply per UDP datagram (E-028)."""
        self.summary.datagrams += 1
        if missing > 0:
            reason = f"datagram cut short by the capture: {plural(len(payload), 'byte')} kept, {missing} lost"
            self.add_row(frame.number, frame.time, src, dst, "mqsd", error=reason)
            return
        self._decoded_row(frame.number, frame.time, src, dst, "mqsd", lambda: decode_datagram(payload, self.lenient))

    def _segment(self, frame: Frame, src: str, dst: str, tcp: Any) -> str:
        key = (src, dst)
        direction = self.open.get(key)
        if tcp.flags & dpkt.tcp.TH_SYN:
            # a SYN opens a connection; one reusing the 4-tuple of an earlier one starts afresh
            if direction is not None and direction.base != (tcp.seq + 1) % 2**32:
                direction = None
            if direction is None:
                direction = self.open[key] = _Direction(src, dst)
                self.directions.append(direction)
            direction.base, direction.saw_syn = (tcp.seq + 1) % 2**32, True
        payload = bytes(tcp.data)
        if not payload:
            return "skipped: TCP without payload"
        if direction is None:
            direction = self.open[key] = _Direction(src, dst)
            self.directions.append(direction)
        seq = tcp.seq + 1 if tcp.flags & dpkt.tcp.TH_SYN else tcp.seq  # data on a SYN follows it
        if direction.add(seq % 2**32, payload, frame.number, frame.time) == 0:
            return "skipped: TCP retransmission"
        return "tcp segment"

    def _decoded_row(self, frame: int, time: float, src: str, dst: str, protocol: str, decode: Any, **extra: Any) -> None:
        from mqspec.model.jsonform import to_json

        try:
            message = decode()
        except DecodeError as exc:
            self.add_row(frame, time, src, dst, protocol, **extra, error=str(exc))
            return
        self.add_row(frame, time, src, dst, protocol, **extra, decoded=to_json(message))

    # --- MQQB streams -----------------------------------------------------------------------

    def finish_streams(self) -> None:
        """Cut every direction's runs into packets; one error row per hole in a stream (E-047)."""
        for direction in self.directions:
            runs = direction.runs()
            for k, run in enumerate(runs):
                tail = self._walk(direction, run, resync=k > 0 or not direction.saw_syn, first=k == 0)
                if k + 1 < len(runs):
                    gap_end = runs[k + 1].start
                    have = len(run.data) - tail
                    lost = (f"{plural(have, 'byte')} of a packet before it {'is' if have == 1 else 'are'} lost"
                            if have else "whole packets may be lost")
                    gap = plural(gap_end - run.start - len(run.data), "byte")
                    self._stream_error(direction, run, run.start + len(run.data),
                                       f"the capture lacks TCP stream bytes {run.start + len(run.data)}.."
                                       f"{gap_end - 1} ({gap}); {lost}")
                elif tail < len(run.data):
                    at = run.start + tail
                    size = _declared_size(run.data, tail)
                    what = f"a {size}-byte MQQB packet" if size else "an MQQB BaseHeader"
                    self._stream_error(direction, run, run.start + len(run.data),
                                       f"the capture ends {plural(len(run.data) - tail, 'byte')} into {what} "
                                       f"at stream offset {at}")

    def _stream_error(self, direction: _Direction, run: _Run, upto: int, reason: str) -> None:
        """An "mqqb" error row, at the frame that delivered the stream up to offset ``upto``."""
        self.summary.stream_units += 1
        frame, time = _completed_by(run, upto)
        self.add_row(frame, time, direction.src, direction.dst, "mqqb", error=reason)

    def _walk(self, direction: _Direction, run: _Run, *, resync: bool, first: bool) -> int:
        """Cut one contiguous run of stream into MQQB packets; return where an incomplete tail starts.

        After a gap, or when the capture began mid-connection, the run may start inside a
        packet, so the walk starts at the first plausible BaseHeader (modelling E-047); a bad
        BaseHeader gives an error row and the walk resumes at the next plausible one.
        """
        data, end = bytes(run.data), len(run.data)
        pos = 0
        if resync:
            pos = mqqb.find_signature(data, 0)
            if pos < 0 and first:  # never in step with the stream: say so rather than drop it
                self._stream_error(direction, run, run.start + end,
                                   f"no MQQB BaseHeader in {end} TCP stream bytes (capture began mid-connection)")
                return end
            pos = end if pos < 0 else pos
            self.summary.stream_bytes_skipped += pos
        while end - pos >= mqqb.BASE_HEADER_SIZE:
            at = run.start + pos
            try:
                flags, size = mqqb.read_base_header(data, pos)
            except DecodeError as exc:
                nxt = mqqb.find_signature(data, pos + 1)
                nxt = end if nxt < 0 else nxt
                exc.offset += run.start
                self._stream_error(direction, run, at + mqqb.BASE_HEADER_SIZE,
                                   f"{exc} [{nxt - pos} stream bytes skipped to the next packet]")
                pos = nxt
                continue
            total = size + (mqqb.SESSION_HEADER_SIZE if flags & mqqb.BF_SESSION else 0)
            if end - pos < total:
                break
            self.summary.stream_units += 1
            frame, time = _completed_by(run, at + total)
            self._packet(direction, frame, time, data[pos : pos + total], flags)
            pos += total
        return pos

    def _packet(self, direction: _Direction, frame: int, time: float, packet: bytes, flags: int) -> None:
        """One framed packet: skip internal ones, find the queue, decode the body."""
        if flags & mqqb.BF_INTERNAL:
            self.summary.skipped["mqqb internal packet"] += 1
            return
        src, dst = direction.src, direction.dst
        try:
            message = mqqb.decode_user_message(packet)
        except DecodeError as exc:
            self._broken_user_message(frame, time, src, dst, packet, exc)
            return
        protocol, reason = identify_queue(message.destination)
        if protocol is None:
            self.summary.skipped[reason] += 1
            return
        extra: dict[str, Any] = {"queue": message.format_name("destination")}
        if message.properties.message_class != 0:
            # a Nack carries the original message as its body (MC-MQDSRP 3.1.5.1): say so (E-048)
            extra["message_class"] = message.properties.message_class
        if not message.body and (protocol == "mqdsrp" or "message_class" in extra):
            # "If repMessage is empty: Take no further action" (MC-MQDSRP 3.1.5.1); an
            # acknowledgment without a body has nothing to decode either (E-048)
            self.summary.skipped["mqqb empty body"] += 1
            return
        if message.security is not None and message.security.encrypted_body:
            self.add_row(frame, time, src, dst, protocol, **extra,
                         error="SecurityHeader.Flags.EB is set: the body is encrypted and cannot be decoded")
            return
        decode_body = decode_replication_body if protocol == "mqdsrp" else decode_notification_body
        self._decoded_row(frame, time, src, dst, protocol, lambda: decode_body(message.body, self.lenient), **extra)

    def _broken_user_message(self, frame: int, time: float, src: str, dst: str, packet: bytes, exc: DecodeError) -> None:
        """A UserMessage that does not decode: skipped if it is plainly for another queue, else an error row."""
        try:
            destination = mqqb.read_destination(packet)
        except DecodeError:
            self.add_row(frame, time, src, dst, "mqqb", error=str(exc))
            return
        protocol, reason = identify_queue(destination)
        if protocol is None:
            self.summary.skipped[reason] += 1
            return
        queue = mqqb.UserMessage(destination).format_name() if destination.kind in (5, 6, 7) else None
        self.add_row(frame, time, src, dst, protocol, **({"queue": queue} if queue else {}), error=str(exc))


class RawScan(_Scan):
    """The capture scan, keeping each message's own bytes and MSMQ header next to its row.

    :func:`scan_capture` rows carry the decoded message only; a trace needs the bytes as sent
    (a message that does not decode too) and the MSMQ properties of the UserMessage.
    """

    def __init__(self, lenient: bool = False) -> None:
        super().__init__(lenient)
        self._extra: dict[str, Any] | None = None

    def _datagram(self, frame: Any, src: str, dst: str, payload: bytes, missing: int) -> None:
        self._extra = {"bytes": payload}
        try:
            super()._datagram(frame, src, dst, payload, missing)
        finally:
            self._extra = None

    def _packet(self, direction: Any, frame: int, time: float, packet: bytes, flags: int) -> None:
        self._extra = None
        if not flags & mqqb.BF_INTERNAL:
            try:
                message = mqqb.decode_user_message(packet)
                self._extra = {"bytes": message.body, "message": message}
            except DecodeError:
                pass
        try:
            super()._packet(direction, frame, time, packet, flags)
        finally:
            self._extra = None

    def add_row(self, frame: int, time: float, src: str, dst: str, protocol: str, **fields: Any) -> None:
        if self._extra is not None:
            fields["_raw"] = self._extra
        super().add_row(frame, time, src, dst, protocol, **fields)


def scan_raw(path: str | Path, *, lenient: bool = False) -> list[dict[str, Any]]:
    """The capture's rows with ``_raw`` (the message bytes and, for MQQB, the UserMessage)."""
    path = Path(path)
    raw = RawScan(lenient)
    linktype, frames = read_frames(path)
    for frame in frames:
        raw.frame(linktype, frame)
    raw.finish_streams()
    return [row for _key, row in sorted(raw.rows, key=lambda kr: kr[0])]


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


def _declared_size(data: bytes | bytearray, pos: int) -> int | None:
    """The bytes a packet starting at ``pos`` declares (SessionHeader included), if readable."""
    try:
        flags, size = mqqb.read_base_header(bytes(data), pos)
    except DecodeError:
        return None
    return size + (mqqb.SESSION_HEADER_SIZE if flags & mqqb.BF_SESSION else 0)


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
