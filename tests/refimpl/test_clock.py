"""The simulated clock and scheduler: time order, insertion-order ties, cancellation, no wall clock."""

import math

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mqspec.model.errors import ModelError
from mqspec.refimpl import clock
from mqspec.refimpl.clock import PRODUCT_TIMERS, Scheduler, TimerDefaults


def drain(s: Scheduler, until: float = math.inf) -> list:
    out = []
    while (due := s.pop_due(until)) is not None:
        out.append(due)
    return out


def test_events_fire_in_time_order():
    """Events come out sorted by their due time, whatever order they were scheduled in."""
    s = Scheduler()
    for at in (3.0, 1.0, 2.0):
        s.schedule(at, f"e{at}")
    assert drain(s) == [(1.0, "e1.0"), (2.0, "e2.0"), (3.0, "e3.0")]


def test_ties_fire_in_insertion_order():
    """Events due at the same instant fire in the order they were scheduled."""
    s = Scheduler()
    for name in "dcab":
        s.schedule(5.0, name)
    assert [e for _, e in drain(s)] == list("dcab")


def test_pop_due_moves_the_clock_to_the_event():
    """Popping an event sets now to its due time; nothing due leaves now alone and returns None."""
    s = Scheduler()
    s.schedule(4.5, "x")
    assert s.pop_due(4.0) is None and s.now == 0.0
    assert s.pop_due(10.0) == (4.5, "x") and s.now == 4.5
    assert s.pop_due(10.0) is None and s.now == 4.5


def test_schedule_in_is_relative_to_now():
    """schedule_in(d) is due d seconds after the current time."""
    s = Scheduler(start=100.0)
    handle = s.schedule_in(2.5, "x")
    assert handle.at == 102.5 and s.peek_time() == 102.5


@pytest.mark.parametrize("at", [-1.0, math.nan, math.inf, "1", True])
def test_scheduling_in_the_past_or_nowhere_is_refused(at):
    """An event before now, at NaN or infinity, or at a non-number is a ModelError."""
    s = Scheduler()
    with pytest.raises(ModelError):
        s.schedule(at, "x")


def test_negative_delay_is_refused():
    """A negative delay would be in the past."""
    with pytest.raises(ModelError):
        Scheduler().schedule_in(-0.1, "x")


def test_cancel_removes_the_event_once():
    """A cancelled event never fires; cancelling again, or after firing, returns False."""
    s = Scheduler()
    a = s.schedule(1.0, "a")
    b = s.schedule(2.0, "b")
    assert s.cancel(a) is True and s.cancel(a) is False
    assert drain(s) == [(2.0, "b")]
    assert s.cancel(b) is False


def test_peek_time_skips_cancelled_events():
    """peek_time reports the next live event, not a cancelled one ahead of it."""
    s = Scheduler()
    a = s.schedule(1.0, "a")
    s.schedule(3.0, "b")
    s.cancel(a)
    assert s.peek_time() == 3.0 and len(s) == 1


def test_peek_time_of_an_empty_scheduler_is_none():
    """With nothing scheduled there is no next time."""
    assert Scheduler().peek_time() is None


def test_events_scheduled_while_dispatching_fire_in_the_same_run():
    """run_until sees events that a handler schedules, in time order, then moves the clock to until."""
    s = Scheduler()
    seen = []

    def dispatch(event):
        seen.append((s.now, event))
        if event == "tick" and s.now < 3:
            s.schedule_in(1.0, "tick")

    s.schedule(1.0, "tick")
    s.schedule(2.5, "other")
    assert s.run_until(10.0, dispatch) == 4
    assert seen == [(1.0, "tick"), (2.0, "tick"), (2.5, "other"), (3.0, "tick")]
    assert s.now == 10.0


def test_advance_to_refuses_to_skip_a_due_event():
    """Moving the clock past a pending event would lose it, so it is refused."""
    s = Scheduler()
    s.schedule(1.0, "x")
    with pytest.raises(ModelError):
        s.advance_to(2.0)
    s.advance_to(1.0)
    assert s.now == 1.0


def test_post_schedules_without_a_handle():
    """post is schedule without a handle, with the same ordering and checks."""
    s = Scheduler()
    s.post(2.0, "b")
    s.schedule(2.0, "c")
    s.post(1.0, "a")
    assert [e for _, e in drain(s)] == ["a", "b", "c"]
    with pytest.raises(ModelError):
        s.post(0.5, "late")


def test_pending_lists_live_events_in_firing_order():
    """pending shows what will fire, cancelled events excluded."""
    s = Scheduler()
    s.schedule(2.0, "b")
    x = s.schedule(1.0, "x")
    s.schedule(2.0, "c")
    s.cancel(x)
    assert s.pending() == [(2.0, "b"), (2.0, "c")]


ops = st.lists(
    st.one_of(
        st.tuples(st.just("at"), st.integers(0, 20)),
        st.tuples(st.just("cancel"), st.integers(0, 30)),
    ),
    max_size=40,
)


@settings(max_examples=200)
@given(ops)
def test_firing_order_is_time_then_insertion(program):
    """Any mix of schedules and cancels fires the live events sorted by (time, insertion index)."""
    s = Scheduler()
    handles, expected = [], {}
    for kind, n in program:
        if kind == "at":
            handles.append(s.schedule(float(n), len(handles)))
            expected[len(handles) - 1] = float(n)
        elif n < len(handles):
            s.cancel(handles[n])
            expected.pop(n, None)
    assert [e for _, e in drain(s)] == sorted(expected, key=lambda i: (expected[i], i))


def test_product_timer_defaults():
    """The defaults are those of the product notes: <6> 10 s / 2 s, <7> 5 s then 12 h, <11> 10 s / 20 s, <12> 20 min."""
    assert (clock.CHANGE_PROPAGATION_INTERSITE, clock.CHANGE_PROPAGATION_INTRASITE) == (10.0, 2.0)
    assert (clock.BSC_ACK_FIRST, clock.BSC_ACK_NEXT) == (5.0, 43_200.0)
    assert (clock.CHANGE_REQUEST_WAIT_AUTHORITY, clock.CHANGE_REQUEST_WAIT_FORWARDED) == (10.0, 20.0)
    assert clock.SEQ_NUMBER_HEADER_INTERVAL == 1_200.0
    assert PRODUCT_TIMERS == TimerDefaults()
    assert PRODUCT_TIMERS.bsc_ack_next == clock.BSC_ACK_NEXT


def test_timer_defaults_can_be_changed_but_not_to_nonsense():
    """A scenario may shorten a timer; zero, negative or infinite values are refused."""
    fast = attrs.evolve(PRODUCT_TIMERS, bsc_ack_next=60.0)
    assert fast.bsc_ack_next == 60.0 and fast.bsc_ack_first == 5.0
    for bad in (0, -1.0, math.inf, math.nan, True):
        with pytest.raises(ModelError):
            attrs.evolve(PRODUCT_TIMERS, change_propagation_intrasite=bad)


def test_the_clock_module_never_reads_the_wall_clock():
    """No time, datetime or monotonic source is imported: runs depend on their inputs only."""
    source = open(clock.__file__, encoding="utf-8").read()
    for forbidden in ("import time", "datetime", "monotonic", "perf_counter"):
        assert forbidden not in source
