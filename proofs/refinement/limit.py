"""The CPU limit of one handler run in the refinement campaigns, and what a run that raises becomes.

The model's transition takes every event, so a handler run that cannot finish one departs from it: one that
raises, and one that never returns. The campaigns' handler runs take milliseconds, traced; a loop whose exit
guard is wrong (Lookup Directory Objects' "if not rows: break") would otherwise hang `mqspec prove` instead of
failing it. The limit is CPU time, not wall time: a loaded machine is no loop. It is a SIGVTALRM timer
(ITIMER_VIRTUAL), so it is armed only in the main thread, where Python delivers signals; elsewhere a run has no
limit.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

#: CPU seconds one handler run may use before it counts as one that never returns
HANDLER_CPU_SECONDS = 60.0


class HandlerRanTooLong(Exception):
    """Raised inside a handler run that used :data:`HANDLER_CPU_SECONDS` of CPU time: it departs as any raise
    does, so the run's row is violated and names the handler."""


def _ran_too_long(signum: int, frame: Any) -> None:
    raise HandlerRanTooLong(f"the handler run used {HANDLER_CPU_SECONDS:g} s of CPU time without returning")


class CpuLimit:
    """Entered in the main thread, :meth:`arm` starts a handler run's CPU limit and :meth:`disarm` ends it;
    entered in another thread, both do nothing. A line tracer on at :meth:`arm` is on again after :meth:`disarm`:
    the limit's exception may land in the trace function, and Python then unsets it."""

    def __init__(self) -> None:
        self._timed = False
        self._previous: Any = None
        self._tracing: Any = None

    def __enter__(self) -> CpuLimit:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGVTALRM, _ran_too_long)
            self._timed = True
        return self

    def __exit__(self, *exc: object) -> None:
        if self._timed:
            signal.setitimer(signal.ITIMER_VIRTUAL, 0)
            signal.signal(signal.SIGVTALRM, self._previous)
            self._timed = False

    def arm(self) -> None:
        if self._timed:
            self._tracing = sys.gettrace()
            signal.setitimer(signal.ITIMER_VIRTUAL, HANDLER_CPU_SECONDS)

    def disarm(self) -> None:
        if self._timed:
            signal.setitimer(signal.ITIMER_VIRTUAL, 0)
            if self._tracing is not None and sys.gettrace() is None:
                sys.settrace(self._tracing)
            self._tracing = None


def raised(exc: BaseException) -> str:
    """A raising handler run's departure, as the campaigns word it."""
    return f"the reference raised {type(exc).__name__}: {exc}"


def run_handler(call: Callable[[], Any]) -> str | None:
    """Run one handler run (``call``) under the CPU limit: None when it returned, else its departure
    (:func:`raised`)."""
    with CpuLimit() as limit:
        limit.arm()
        try:
            call()
        except Exception as exc:  # any raise is the run's departure, named in its row
            return raised(exc)
        finally:
            limit.disarm()
    return None
