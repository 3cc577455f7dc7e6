"""Simulated time: a clock and a deterministic event scheduler, plus the text's timer defaults.

Nothing here reads the wall clock. Time is a float count of seconds since the start of a run
(errata E-057: MC-MQDSRP 3.3.2.1 and 3.3.2.2 say their timers count milliseconds, while every
default the product notes give, and every ``iTimeout`` of 3.1.7.2.1, is in seconds).

Events are opaque objects. Two events due at the same instant fire in the order they were
scheduled, so a run is a pure function of its inputs:

>>> s = Scheduler()
>>> _ = s.schedule(2.0, "b"); _ = s.schedule(1.0, "a"); _ = s.schedule(2.0, "c")
>>> [s.pop_due(5.0) for _ in range(4)]
[(1.0, 'a'), (2.0, 'b'), (2.0, 'c'), None]
>>> s.now
2.0
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from typing import NamedTuple

import attrs

from mqspec.model.errors import ModelError

# ---------------------------------------------------------------------------------------------
# Timer defaults, in seconds. Each is "implementation-specific" in the protocol text; the values
# are the Windows NT / Windows 2000 defaults of the product-behaviour notes in MC-MQDSRP section 6.

#: Change Propagation Timer, intersite (a PSC to its PSC neighbor): "10 seconds" (<6> on 3.3.2.1;
#: also <2>, <3> on 3.1.7.2.5, <4> on 3.1.7.2.11, <5> on 3.1.7.2.12, <9>, <10> on 3.3.3)
CHANGE_PROPAGATION_INTERSITE = 10.0
#: Change Propagation Timer, intrasite (a PSC to its BSC neighbor): "2 seconds" (same notes)
CHANGE_PROPAGATION_INTRASITE = 2.0
#: BSC Ack Timer, first instance: "5 seconds for initialization" (<7> on 3.3.2.2, <8> on 3.3.3)
BSC_ACK_FIRST = 5.0
#: BSC Ack Timer, later instances: "12 hours for the next instances" (<7>, <8>). 3.3.2.2 itself
#: says the next instance has "the same expiration time" as the first: errata E-056.
BSC_ACK_NEXT = 12 * 60 * 60.0
#: Process Change Request waiting time when the next hop is the object authority: "10 seconds"
#: (<11> on 3.3.7.1)
CHANGE_REQUEST_WAIT_AUTHORITY = 10.0
#: ... and when it is not ("a BSC sends the request to its PSC and the PSC forwards the request to
#: the object authority"): "20 seconds" (<11> on 3.3.7.1)
CHANGE_REQUEST_WAIT_FORWARDED = 20.0
#: Interval for sending the SeqNumberHeader in a ChangePropagationMessage: "20 minutes"
#: (<12> on 3.3.7.2)
SEQ_NUMBER_HEADER_INTERVAL = 20 * 60.0


@attrs.frozen
class TimerDefaults:
    """The timer values one simulated queue manager uses; the defaults are the product's.

    A scenario that wants faster or slower timers builds ``attrs.evolve(PRODUCT_TIMERS, ...)``.
    """

    change_propagation_intersite: float = CHANGE_PROPAGATION_INTERSITE
    change_propagation_intrasite: float = CHANGE_PROPAGATION_INTRASITE
    bsc_ack_first: float = BSC_ACK_FIRST
    bsc_ack_next: float = BSC_ACK_NEXT
    change_request_wait_authority: float = CHANGE_REQUEST_WAIT_AUTHORITY
    change_request_wait_forwarded: float = CHANGE_REQUEST_WAIT_FORWARDED
    seq_number_header_interval: float = SEQ_NUMBER_HEADER_INTERVAL

    def __attrs_post_init__(self) -> None:
        for field in attrs.fields(type(self)):
            value = getattr(self, field.name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < math.inf:
                raise ModelError(f"timer {field.name} is a positive finite seconds count, not {value!r}")


PRODUCT_TIMERS = TimerDefaults()


# ---------------------------------------------------------------------------------------------
# The scheduler


class TimerHandle(NamedTuple):
    """Names one scheduled event so that it can be cancelled; ``at`` is when it is due.

    A named tuple, not an attrs class: one is made for every timer started (the hot path).
    """

    at: float
    seq: int


_CANCELLED = object()  # marks a heap entry whose event was cancelled (lazy deletion)


class Scheduler:
    """A simulated clock with a queue of future events.

    ``now`` only moves forward, and only when an event is popped (:meth:`pop_due`) or the clock
    is advanced explicitly (:meth:`advance_to`, :meth:`run_until`). The queue is a binary heap
    of ``[at, seq, event]`` entries; ``seq`` is a counter, so ties fire in insertion order.
    """

    __slots__ = ("_now", "_heap", "_live", "_seq")

    def __init__(self, start: float = 0.0) -> None:
        if isinstance(start, bool) or not isinstance(start, int | float) or not math.isfinite(start):
            raise ModelError(f"a clock starts at a finite number of seconds, not {start!r}")
        self._now = float(start)
        self._heap: list[list] = []
        self._live: dict[int, list] = {}  # seq -> heap entry, for events that can be cancelled
        self._seq = 0

    @property
    def now(self) -> float:
        """The current simulated time, in seconds."""
        return self._now

    def __len__(self) -> int:
        """The number of events still due (cancelled ones are not counted)."""
        return sum(1 for entry in self._heap if entry[2] is not _CANCELLED)

    def _check_at(self, at: float) -> float:
        # "not at >= now" also refuses NaN
        if isinstance(at, bool) or not isinstance(at, int | float) or at == math.inf:
            raise ModelError(f"cannot schedule at {at!r}: not a finite time")
        if not at >= self._now:
            raise ModelError(f"cannot schedule at {at!r}: the clock is at {self._now} already")
        return float(at)

    def schedule(self, at: float, event: object) -> TimerHandle:
        """Schedule ``event`` at absolute time ``at`` (not before ``now``) and return its handle."""
        if type(at) is not float or not self._now <= at < math.inf:  # the common case needs no more checks
            at = self._check_at(at)
        seq = self._seq
        self._seq = seq + 1
        entry = [at, seq, event]
        heapq.heappush(self._heap, entry)
        self._live[seq] = entry
        return TimerHandle(at, seq)

    def schedule_in(self, delay: float, event: object) -> TimerHandle:
        """Schedule ``event`` ``delay`` seconds from now (``delay`` >= 0)."""
        if type(delay) is float and delay >= 0.0:  # the common case (every timer default is a float)
            return self.schedule(self._now + delay, event)
        if isinstance(delay, bool) or not isinstance(delay, int | float) or not delay >= 0:
            raise ModelError(f"a timer delay is a non-negative number of seconds, not {delay!r}")
        return self.schedule(self._now + delay, event)

    def post(self, at: float, event: object) -> None:
        """Schedule ``event`` at ``at`` without a handle (it cannot be cancelled): the hot path."""
        if not at >= self._now or at == math.inf:
            self._check_at(at)
        at = float(at)
        seq = self._seq
        self._seq = seq + 1
        heapq.heappush(self._heap, [at, seq, event])

    def cancel(self, handle: TimerHandle) -> bool:
        """Cancel a scheduled event; False if it already fired or was already cancelled."""
        entry = self._live.pop(handle.seq, None)
        if entry is None:
            return False
        entry[2] = _CANCELLED
        return True

    def peek_time(self) -> float | None:
        """When the next event is due, or None if nothing is scheduled."""
        heap = self._heap
        while heap and heap[0][2] is _CANCELLED:
            heapq.heappop(heap)
        return heap[0][0] if heap else None

    def pop_due(self, until: float) -> tuple[float, object] | None:
        """Pop the next event due at or before ``until``, move ``now`` to its time, return it.

        Returns None (and leaves ``now`` alone) when nothing is due by ``until``. Events that
        the caller schedules while handling one are seen by the next call, so a loop of
        ``pop_due`` processes causally ordered events in time order.
        """
        heap = self._heap
        while heap:
            entry = heap[0]
            if entry[2] is _CANCELLED:
                heapq.heappop(heap)
                continue
            if entry[0] > until:
                return None
            heapq.heappop(heap)
            self._live.pop(entry[1], None)
            self._now = entry[0]
            return entry[0], entry[2]
        return None

    def advance_to(self, at: float) -> None:
        """Move the clock to ``at`` without firing anything; refused if an event is due before."""
        at = self._check_at(at)
        due = self.peek_time()
        if due is not None and due < at:
            raise ModelError(f"cannot advance to {at}: an event is due at {due}")
        self._now = at

    def run_until(self, until: float, dispatch: Callable[[object], object]) -> int:
        """Fire every event due by ``until`` through ``dispatch``, then move the clock to ``until``.

        Returns the number of events fired. The loop is :meth:`pop_due`'s, written out: it runs
        once per event of a simulation.
        """
        fired = 0
        heap = self._heap
        live = self._live
        heappop = heapq.heappop
        while heap:
            entry = heap[0]
            if entry[2] is _CANCELLED:
                heappop(heap)
                continue
            if entry[0] > until:
                break
            heappop(heap)
            live.pop(entry[1], None)
            self._now = entry[0]
            dispatch(entry[2])
            fired += 1
        if self._now < until < math.inf:
            self.advance_to(until)
        return fired

    def pending(self) -> list[tuple[float, object]]:
        """The events still due, in the order they will fire (for traces and tests)."""
        live = sorted(entry for entry in self._heap if entry[2] is not _CANCELLED)
        return [(entry[0], entry[2]) for entry in live]
