"""MQQB framing of a reassembled TCP stream, streaming: packets cut as soon as their last byte is in.

The stream of one direction (:mod:`mqspec.capture.tcp`) is cut into MQQB packets by their
BaseHeader's PacketSize (plus the SessionHeader when its flag says so; [MS-MQMQ] 2.2.19.1). A stream
whose first bytes the capture lacks (it began mid-connection, or after a hole) may start inside a
packet: the framing then starts at the first plausible BaseHeader (version 0x10, "LIOR"; modelling
E-047). A bad BaseHeader is an error and the framing resumes at the next plausible one.

What the framing hands its sink:

* ``packet(direction, bytes, flags, frame, time)``: a whole packet, at the frame that delivered
  its last byte;
* ``error(direction, reason, frame, time)``: a stretch that is not a packet (bad BaseHeader);
* ``hole(direction, kind, reason, lost, frame, time)``: where the capture lost stream bytes: a TCP
  gap or a segment the snap length cut (the packet they cut is lost with them), a stream that
  began inside a packet, a packet the capture ends inside of;
* ``piece_done(frame, framed)``: every piece of stream has been framed (or given up), so the frame
  that carried it can be accounted for.

Memory is bounded by the largest packet (:data:`MAX_PACKET`) and a few hundred bytes of resync.
"""

from __future__ import annotations

import struct
from collections import deque
from typing import Any

from mqspec.model.errors import DecodeError
from mqspec.wording import plural

from . import mqqb
from .tcp import Piece

#: a PacketSize above this is no packet boundary (an MSMQ message body is at most 4 MB)
MAX_PACKET = 16 << 20
_COMPACT = 1 << 16
_BASE = struct.Struct("<BBH4sI")


def read_header(buf: bytes | bytearray, pos: int) -> tuple[int, int]:
    """(Flags, PacketSize) of the BaseHeader at ``pos`` (DecodeError, offsets from ``pos``, if bad),
    without copying the buffer."""
    version, _reserved, flags, signature, size = _BASE.unpack_from(buf, pos)
    if version == mqqb.VERSION and signature == mqqb.SIGNATURE and size >= mqqb.BASE_HEADER_SIZE:
        return flags, size
    return mqqb.read_base_header(bytes(buf[pos:pos + mqqb.BASE_HEADER_SIZE]))  # raises, naming the field


class Framer:
    """The MQQB framing of one direction's stream (see the module docstring)."""

    __slots__ = ("at", "began", "buf", "direction", "pos", "sink", "spans", "synced", "skipped")

    def __init__(self, sink: Any, direction: Any, synced: bool) -> None:
        self.sink, self.direction = sink, direction
        self.buf = bytearray()
        self.pos = 0  # buf[pos] is stream offset ``at``
        self.at = 0
        self.synced = synced  # False: the next byte may be inside a packet (mid-connection, after a hole)
        self.began = synced  # whether the stream's first packet boundary was found
        self.spans: deque[list[Any]] = deque()  # [start, end, frame, delivered, time, framed]
        self.skipped = 0  # bytes skipped looking for a BaseHeader since the last packet

    # --- input ------------------------------------------------------------------------------------

    def feed(self, piece: Piece) -> None:
        """Stream bytes, in order."""
        data = piece.data
        if not self.buf or self.pos == len(self.buf):
            self.buf, self.pos, self.at = bytearray(data), 0, piece.offset  # type: ignore[arg-type]
        else:
            self.buf += data  # type: ignore[operator]
        self.spans.append([piece.offset, piece.offset + len(data), piece.frame, piece.delivered,  # type: ignore[arg-type]
                           piece.time, False])
        self._cut()

    def lose(self, start: int, end: int, kind: str, frame: int, time: float, first: bool = False) -> None:
        """Stream bytes ``start .. end - 1`` the capture lacks: the packet they cut is lost."""
        have = len(self.buf) - self.pos
        lost = end - start
        if have:
            size = _declared(self.buf, self.pos) if self.synced else None
            what = (f"{plural(have, 'byte')} of {'a ' + str(size) + '-byte packet' if size else 'a packet'} "
                    f"before {'them' if lost > 1 else 'it'} {'are' if have > 1 else 'is'} lost")
        else:
            what = "whole packets may be lost"
        cause = ("the snap length cut a segment: " if kind == "truncated" else "")
        text = (f"{cause}the capture lacks TCP stream bytes {start}..{end - 1} ({plural(lost, 'byte')}); {what}")
        self._consume(len(self.buf) - self.pos, framed=False)
        self.at = end
        self.synced = False
        self.sink.hole(self.direction, kind, text, lost, frame, time)

    def finish(self) -> None:
        """The capture ended: a packet it ends inside of is a hole; its frames are accounted for."""
        have = len(self.buf) - self.pos
        if not have:
            return
        frame, time = self.spans[-1][3], self.spans[-1][4]
        if not self.began:
            text = (f"no MQQB BaseHeader in {plural(have + self.skipped, 'TCP stream byte')} (the capture began "
                    "mid-connection)")
        else:
            size = _declared(self.buf, self.pos) if self.synced else None
            what = f"a {size}-byte MQQB packet" if size else "an MQQB BaseHeader"
            text = f"the capture ends {plural(have, 'byte')} into {what} at stream offset {self.at}"
        self._consume(have, framed=False, use="TCP message unfinished at the end")
        self.sink.hole(self.direction, "mid-message", text, None, frame, time)

    # --- cutting ----------------------------------------------------------------------------------

    def _cut(self) -> None:
        buf = self.buf
        while True:
            if not self.synced and not self._resync():
                return
            left = len(buf) - self.pos
            if left < mqqb.BASE_HEADER_SIZE:
                return
            try:
                flags, size = read_header(buf, self.pos)
                if size > MAX_PACKET:
                    raise DecodeError("BaseHeader.PacketSize", 8, mqqb.BASE,
                                      f"{size} is more than any MSMQ packet ({plural(MAX_PACKET, 'byte')})")
            except DecodeError as exc:
                exc.offset += self.at
                frame, time = self._delivered(self.at + mqqb.BASE_HEADER_SIZE)
                self.synced = False
                self._consume(1, framed=False)
                self.skipped = 1
                self.sink.skipped_bytes(1)
                self.sink.error(self.direction, f"{exc} [stream bytes skipped to the next packet]", frame, time)
                continue
            total = size + (mqqb.SESSION_HEADER_SIZE if flags & mqqb.BF_SESSION else 0)
            if left < total:
                return
            packet = bytes(buf[self.pos:self.pos + total])
            frame, time = self._delivered(self.at + total)
            self._consume(total, framed=True)
            self.skipped = 0
            self.sink.packet(self.direction, packet, flags, frame, time)

    def _resync(self) -> bool:
        """Skip to the next plausible BaseHeader; False when the bytes held have none yet."""
        found = mqqb.find_signature(self.buf, self.pos)
        if found < 0:
            keep = min(7, len(self.buf) - self.pos)  # a BaseHeader may start in the last bytes
            drop = len(self.buf) - self.pos - keep
            self.skipped += drop
            self.sink.skipped_bytes(drop)
            self._consume(drop, framed=False)
            return False
        drop = found - self.pos
        if drop:
            self.skipped += drop
            self.sink.skipped_bytes(drop)
            if not self.began:
                frame, time = self._delivered(self.at + 1)
                self.sink.hole(self.direction, "mid-message",
                               f"the capture began inside a message: the first {plural(self.skipped, 'stream byte')} "
                               "precede the first MQQB packet", None, frame, time)
            self._consume(drop, framed=False)
        self.synced = self.began = True
        return True

    def _delivered(self, upto: int) -> tuple[int, float]:
        """The frame (and its time) that delivered stream offset ``upto - 1`` in order."""
        for span in self.spans:
            if span[1] >= upto:
                return span[3], span[4]
        last = self.spans[-1]
        return last[3], last[4]

    def _consume(self, n: int, *, framed: bool, use: str | None = None) -> None:
        """Take ``n`` held bytes off the front; account for the pieces whose bytes are all taken."""
        self.pos += n
        self.at += n
        upto, spans, done = self.at, self.spans, self.sink.piece_done
        while spans and spans[0][0] < upto:
            span = spans[0]
            if framed:
                span[5] = True
            if span[1] > upto:
                break
            spans.popleft()
            done(span[2], span[5], use)
        if self.pos >= _COMPACT and self.pos * 2 >= len(self.buf):
            del self.buf[:self.pos]
            self.pos = 0


def _declared(data: bytes | bytearray, pos: int) -> int | None:
    """The bytes a packet starting at ``pos`` declares (SessionHeader included), if readable."""
    if len(data) - pos < mqqb.BASE_HEADER_SIZE:
        return None
    try:
        flags, size = read_header(data, pos)
    except DecodeError:
        return None
    return size + (mqqb.SESSION_HEADER_SIZE if flags & mqqb.BF_SESSION else 0)
