"""What a pass over a capture did with every frame and every message, and where the capture has holes.

Every consumer of a capture (``decode --pcap``, ``trace from-pcap``, ``check``, ``pipeline check``)
prints :meth:`CaptureSummary.lines` and puts :meth:`CaptureSummary.to_json` in its JSON.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import attrs

from mqspec.wording import plural

#: what a frame was used for (the rest are ``SKIPPED`` reasons)
USES = ("mqsd datagram", "tcp segment", "tcp control", "ip fragment")
#: why a frame carried nothing decodable, in the order the summary lists them
SKIPPED = ("other port", "not IP", "not UDP or TCP", "unknown link type", "truncated", "fragment incomplete",
           "TCP gap", "TCP retransmission", "IP fragment copy", "TCP message unfinished at the end", "malformed")
#: the most holes a summary keeps (the rest are counted)
MAX_HOLES = 1000


@attrs.define
class Hole:
    """Bytes the capture lost: ``kind`` (truncated | tcp-gap | fragment | cut | mid-message), where
    (frame, time, the connection or datagram's endpoints), how many bytes when known, and what."""

    kind: str
    frame: int
    time: float
    src: str | None
    dst: str | None
    bytes: int | None
    text: str

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)


@attrs.define
class CaptureSummary:
    """Where every frame and every message went; the capture's holes.

    Two accounts balance (:attr:`reconciles`): ``frames == sum(used.values()) + sum(skipped.values())``
    (each frame was used or skipped for one reason; a TCP segment is counted once its bytes are
    framed or given up, an IP fragment once its datagram is complete or given up); and
    ``units == decoded + errors + lost + sum(messages_skipped.values())`` (each MQSD datagram and each
    MQQB stream unit, a framed packet or a stretch of stream that could not be framed or was lost, gave
    a message, an error row, a hole row, or was skipped for a reason).
    """

    frames: int = 0
    used: Counter[str] = attrs.Factory(Counter)
    skipped: Counter[str] = attrs.Factory(Counter)
    units: int = 0
    decoded: int = 0
    errors: int = 0
    lost: int = 0  # units that are holes (a cut datagram, a TCP gap, a datagram never whole, ...)
    messages_skipped: Counter[str] = attrs.Factory(Counter)
    unknown_link_types: Counter[int] = attrs.Factory(Counter)
    stream_bytes_lost: int = 0  # TCP stream bytes never captured (gaps, truncated segments)
    stream_bytes_skipped: int = 0  # captured stream bytes that could not be framed (resynchronising)
    holes: list[Hole] = attrs.Factory(list)
    holes_total: int = 0
    #: where the capture file is cut off ("FILE: frame 34: truncated frame: ..."), None when whole
    cut: str | None = None
    bytes_read: int = 0

    @property
    def reconciles(self) -> bool:
        frames_ok = self.frames == sum(self.used.values()) + sum(self.skipped.values())
        return frames_ok and self.units == self.decoded + self.errors + self.lost + sum(self.messages_skipped.values())

    @property
    def incomplete(self) -> bool:
        """Whether the capture has holes (or is cut): no verdict from it can be ``conformant``."""
        return self.holes_total > 0 or self.cut is not None

    def add_hole(self, hole: Hole) -> None:
        self.holes_total += 1
        if len(self.holes) < MAX_HOLES:
            self.holes.append(hole)

    def to_json(self) -> dict[str, Any]:
        return {"frames": self.frames, "messages": self.decoded, "errors": self.errors, "lost": self.lost,
                "frames_used": dict(self.used), "frames_skipped": _ordered(self.skipped),
                "units": self.units, "messages_skipped": dict(sorted(self.messages_skipped.items())),
                "unknown_link_types": {str(k): v for k, v in sorted(self.unknown_link_types.items())},
                "stream_bytes_lost": self.stream_bytes_lost, "stream_bytes_skipped": self.stream_bytes_skipped,
                "holes": [h.to_json() for h in self.holes], "holes_total": self.holes_total, "cut": self.cut,
                "incomplete": self.incomplete, "reconciles": self.reconciles}

    def counts(self) -> dict[str, int]:
        """The flat counts a pipeline row carries (frames, messages, errors, holes, skipped by reason)."""
        out = {"frames": self.frames, "messages": self.decoded, "errors": self.errors, "holes": self.holes_total}
        for reason in SKIPPED:
            out["skipped " + reason] = self.skipped.get(reason, 0)
        return out

    def lines(self, what: str = "messages decoded") -> list[str]:
        """The summary as text: frames read, messages, frames skipped by reason, holes, the cut."""
        skipped = sum(self.skipped.values())
        head = (f"{plural(self.frames, 'frame')} read: {self.decoded} {what}"
                + (f", {plural(self.errors, 'message')} that did not decode" if self.errors else "")
                + f"; {plural(skipped, 'frame')} skipped")
        if skipped:
            head += " (" + ", ".join(f"{n} {reason}" for reason, n in _ordered(self.skipped).items()) + ")"
        out = [head]
        if self.unknown_link_types:
            out.append("unknown link types: " + ", ".join(f"{k} ({plural(n, 'frame')})"
                                                          for k, n in sorted(self.unknown_link_types.items()))
                       + " (read: Ethernet, raw IP, Linux SLL and SLL2, BSD loopback)")
        if self.messages_skipped:
            out.append("not directory messages: " + ", ".join(f"{n} {reason}"
                                                               for reason, n in sorted(self.messages_skipped.items())))
        if self.holes_total:
            kinds = Counter(h.kind for h in self.holes)
            out.append(f"{plural(self.holes_total, 'hole')} in the capture ("
                       + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
                       + (f"; {self.stream_bytes_lost} TCP stream bytes never captured" if self.stream_bytes_lost
                          else "") + "):")
            for h in self.holes[:10]:
                out.append(f"  frame {h.frame} (t={h.time:.6f}) {h.kind}: {h.text}")
            if self.holes_total > 10:
                out.append(f"  ... {self.holes_total - 10} more")
        if self.cut is not None:
            out.append(f"warning: {self.cut}; the capture ends there (cut off?): the {plural(self.frames, 'frame')} "
                       "before it were used")
        return out


def _ordered(counter: Counter[str]) -> dict[str, int]:
    order = {reason: i for i, reason in enumerate(SKIPPED)}
    return {k: counter[k] for k in sorted(counter, key=lambda k: (order.get(k, len(order)), k)) if counter[k]}
