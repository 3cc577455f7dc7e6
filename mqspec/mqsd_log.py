"""What ``mqspec mqsd serve`` prints while it answers: bounded, however fast datagrams come.

Each datagram gets one line (what was asked, what was answered or why nothing was), but at
most ``lines_per_interval`` lines are printed in each ``interval`` seconds; an interval that
left lines out ends with one summary line counting its datagrams, replies, drops and send
errors. With ``quiet``, no line is printed per datagram and every busy interval is summarised.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from mqspec.wording import plural

if TYPE_CHECKING:
    from mqspec.mqsd_net import ResponderStats

#: the lines printed one by one in an interval before the rest are only counted
LINES_PER_INTERVAL = 20


class ServeLog:
    """The log of one responder: call :meth:`line` for each of its lines, :meth:`tick` every ``interval``."""

    def __init__(self, write: Callable[[str], None], stats: ResponderStats, *, interval: float = 5.0,
                 quiet: bool = False, lines_per_interval: int = LINES_PER_INTERVAL,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.write = write
        self.stats = stats
        self.interval = interval
        self.quiet = quiet
        self.lines_per_interval = lines_per_interval
        self.clock = clock
        self.shown = 0
        self.hidden = 0
        self.since = clock()
        self.seen = self._counts()

    def _counts(self) -> tuple[int, int, int, int]:
        st = self.stats
        return st.datagrams, st.replies, sum(st.discarded.values()), st.send_errors

    def line(self, text: str) -> None:
        """Print one responder line, unless the interval has had its share (or ``quiet``)."""
        if not self.quiet and self.shown < self.lines_per_interval:
            self.shown += 1
            self.write(text)
        else:
            self.hidden += 1

    def tick(self) -> None:
        """End the interval: summarise it in one line when lines were left out of it."""
        now = self._counts()
        datagrams, replies, dropped, errors = (b - a for a, b in zip(self.seen, now, strict=True))
        if self.hidden and (datagrams or errors):
            left_out = "" if self.quiet else f"; {plural(self.hidden, 'line')} not shown"
            self.write(f"in the last {self.clock() - self.since:.1f} s: {plural(datagrams, 'datagram')}, "
                       f"{plural(replies, 'reply', 'replies')}, {dropped} dropped, "
                       f"{plural(errors, 'send error')}{left_out}")
        self.seen, self.shown, self.hidden, self.since = now, 0, 0, self.clock()
