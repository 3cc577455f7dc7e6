"""TCP reassembly, streaming: each direction's bytes handed on in order as soon as they are contiguous.

One :class:`Direction` per direction of a connection. Bytes are placed by stream offset (the
sequence number less the first one: the SYN's plus one, or the first seen when the capture began
mid-connection); of the values congruent modulo 2**32, the offset nearest the highest seen so far
is taken, so sequence numbers wrap and streams exceed 4 GiB. The first copy of a byte wins
(retransmissions add nothing; modelling E-047).

Bytes that arrive beyond a hole wait (out of order) until the hole fills; the reassembly hands on
``(offset, bytes, frame, delivered frame, delivered time)`` pieces in order, each with the frame it
came in and the frame at which TCP could deliver it. A hole that does not fill is *given up* by
the caller (:meth:`Direction.give_up`): after :data:`GAP_SECONDS` of capture time, beyond
:data:`GAP_BYTES` waiting bytes, or at the end of the capture; the stream goes on after it and
the hole is reported (time, connection, bytes). A segment the snap length cut short is a hole
at once: its lost bytes are known. Memory per direction is bounded by the bytes waiting.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from typing import NamedTuple

GAP_SECONDS = 30.0
GAP_BYTES = 4 << 20
SYN, FIN, RST = 0x02, 0x01, 0x04


class Piece(NamedTuple):
    """Stream bytes (or, with ``data`` None, ``lost`` bytes the capture never had) and their frames."""

    offset: int
    data: bytes | None
    lost: int
    frame: int  # the frame that carried them
    delivered: int  # the frame at which they could be delivered in order
    time: float  # that frame's time


class Gap(NamedTuple):
    """Stream bytes ``start .. end - 1`` the capture lacks, after ``frame`` (at ``time``)."""

    start: int
    end: int
    frame: int
    time: float


class Direction:
    """One direction of one TCP connection (see the module docstring)."""

    __slots__ = ("base", "dst", "framer", "gap_at", "gap_since", "high", "last", "next", "syn", "src",
                 "waiting", "waiting_bytes")

    def __init__(self, src: str, dst: str, frame: int, time: float) -> None:
        self.src, self.dst = src, dst
        self.base: int | None = None
        self.next = 0  # the next stream offset to hand on
        self.high = 0  # the highest stream offset seen
        self.syn = False
        self.waiting: list[tuple[int, int, bytes | None, int, float]] = []  # (start, end, data, frame, time)
        self.waiting_bytes = 0
        self.last = (frame, time)  # the frame (and time) that handed on the last byte (at first: the first seen)
        self.gap_at: tuple[int, float] | None = None  # where the hole waiting to fill opened: its place
        self.gap_since = 0.0  # the capture time it opened at
        self.framer: object = None  # the caller's framing state for this direction

    def offset(self, seq: int) -> int:
        rel = (seq - self.base) % 2**32  # type: ignore[operator]
        return rel + (self.high - rel + 2**31) // 2**32 * 2**32

    def start(self, seq: int) -> None:
        """A SYN: the stream starts at ``seq + 1``."""
        self.base, self.syn, self.next, self.high = (seq + 1) % 2**32, True, 0, 0

    def add(self, seq: int, data: bytes, lost: int, frame: int, time: float) -> tuple[int, list[Piece]]:
        """Take a segment's ``data`` at ``seq`` (and ``lost`` bytes after it the snap length cut off):
        (how many pieces of it are new, the pieces now in order)."""
        if self.base is None:
            self.base = seq
        a = self.offset(seq)
        b = a + len(data) + lost
        if b > self.high:
            self.high = b
        if b <= self.next:
            return 0, []
        if a < self.next:  # partly a retransmission: the first copy wins
            cut = self.next - a
            if cut >= len(data):
                lost, data = lost - (cut - len(data)), b""
            else:
                data = data[cut:]
            a = self.next
        if a == self.next and not self.waiting:  # in order, nothing waiting: the common case
            out: list[Piece] = []
            if data:
                out.append(Piece(a, data, 0, frame, frame, time))
            if lost:
                out.append(Piece(a + len(data), None, lost, frame, frame, time))
            self.next = b
            self.last = (frame, time)
            return len(out), out
        new = self._hold(a, data, lost, frame, time)
        if not new:
            return 0, []
        if self.gap_at is None and self.waiting and self.waiting[0][0] > self.next:
            self.gap_at, self.gap_since = self.last, time
        return new, self._deliver(frame, time)

    def _hold(self, a: int, data: bytes, lost: int, frame: int, time: float) -> int:
        """Keep the parts of [a, a + len(data) + lost) no waiting piece holds yet; how many pieces."""
        pieces = [(a, a + len(data), data), *([(a + len(data), a + len(data) + lost, None)] if lost else [])]
        new = 0
        for start, end, chunk in pieces:
            if end <= start:
                continue
            pos = start
            i = bisect_left(self.waiting, (start,)) - 1
            i = max(i, 0)
            while pos < end:
                while i < len(self.waiting) and self.waiting[i][1] <= pos:
                    i += 1
                nxt = self.waiting[i][0] if i < len(self.waiting) else end
                if nxt > pos:
                    stop = min(nxt, end)
                    part = None if chunk is None else chunk[pos - start:stop - start]
                    insort(self.waiting, (pos, stop, part, frame, time))
                    self.waiting_bytes += stop - pos
                    new += 1
                    i += 1
                    pos = stop
                else:
                    pos = max(pos, self.waiting[i][1])
        return new

    def _deliver(self, frame: int, time: float) -> list[Piece]:
        """The waiting pieces that now start at ``next``, handed on at ``frame``."""
        out = []
        while self.waiting and self.waiting[0][0] <= self.next:
            start, end, data, f, _t = self.waiting.pop(0)
            self.waiting_bytes -= end - start
            if end <= self.next:
                continue
            if start < self.next:
                if data is not None:
                    data = data[self.next - start:]
                start = self.next
            out.append(Piece(start, data, 0 if data is not None else end - start, f, frame, time))
            self.next = end
        if out:
            self.last = (frame, time)
        if not self.waiting:
            self.gap_at = None
        elif out:
            self.gap_at, self.gap_since = self.last, time
        return out

    def overdue(self, now: float) -> bool:
        """Whether the hole waiting to fill is to be given up now (too old, or too much waits)."""
        return self.gap_at is not None and (now - self.gap_since > GAP_SECONDS or self.waiting_bytes > GAP_BYTES)

    def give_up(self) -> tuple[Gap, list[Piece]]:
        """Give up the first hole: (the hole, the pieces after it now in order). The pieces are
        handed on at the latest frame among them, never before the hole's place."""
        assert self.gap_at is not None and self.waiting
        frame, time = self.gap_at
        gap = Gap(self.next, self.waiting[0][0], frame, time)
        self.next = self.waiting[0][0]
        latest = max(self.waiting, key=lambda w: w[3])
        when = max((latest[3], latest[4]), (frame, time))
        self.gap_at = None
        out = self._deliver(*when)
        return gap, out
