"""Which registered clause is responsible: for an output, for an input, for a changed state field.

The clause registry (:mod:`mqspec.clauses`) names the code implementing each section as
``path:line``; a Python code object knows its file and first line, so a frame on the stack can
be mapped to its clause. Three uses:

* :class:`ClauseEffects` is a Context's effect list that records, for every output effect, the
  registered clauses on the stack when it was emitted (innermost first): the handler that
  decided to send a message is the one whose rule a wrong message breaks;
* :func:`entry_clause` names the handler an input is dispatched to (3.1.5.1's table, the timer
  events, initialization, the directory client's request), for an output the reference never makes;
* :class:`FieldWatch` (a profile hook, used only once a snapshot diverged) finds the innermost
  registered function during which a state field last changed;
* :class:`DecisionWatch` (a profile hook, used only once an output the reference never makes was
  found) finds the rule that decided to make none: the deepest registered function that ran for
  the input and emitted nothing ("Take no further action").

Two more rules live where the divergence is found (:mod:`mqspec.oracle.replay`): an output the
reference made once and the trace shows twice is blamed on the clause that makes it; a request
that completes while the reference still waits for its reply is blamed on the wait of 3.3.7.1.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

from mqspec import clauses, memos
from mqspec.clauses import Clause
from mqspec.refimpl.effects import DirectoryOperation, EnqueueMessage, RequestCompleted

#: outputs whose producing clauses are recorded
OUTPUT_EFFECTS = (EnqueueMessage, RequestCompleted, DirectoryOperation)
#: clauses that carry out another handler's decision (the caller is the one responsible)
GENERIC = frozenset({
    ("MC-MQDSRP", "3.1.7.2.1"),  # Send Replication Message: every sender's message goes through it
    ("MC-MQDSRP", "3.1.5.1"),  # Receiving Replication Messages: the dispatch table
    ("MC-MQDSRP", "3.1.3"),  # Initialization: runs 3.1.3.1-3
})

_ROOT = Path(clauses.__file__).resolve().parent.parent
_BY_CODE: dict[CodeType, Clause | None] = {}
_BY_PLACE: dict[str, Clause] = {}
memos.register(f"{__name__}._BY_CODE", "a code object -> the clause registered for it", _BY_CODE)
memos.register(f"{__name__}._BY_PLACE", "a registered function's place -> its clause", _BY_PLACE)


def _places() -> dict[str, Clause]:
    if not _BY_PLACE:
        for c in clauses.load_all():
            _BY_PLACE[c.code] = c
    return _BY_PLACE


def clause_of_code(code: CodeType) -> Clause | None:
    """The clause registered for the function whose code object this is, if any (cached)."""
    try:
        return _BY_CODE[code]
    except KeyError:
        pass
    try:
        rel = Path(code.co_filename).resolve().relative_to(_ROOT).as_posix()
    except ValueError:
        rel = Path(code.co_filename).name
    found = _places().get(f"{rel}:{code.co_firstlineno}")
    _BY_CODE[code] = found
    return found


def clause_of(function: Callable[..., Any]) -> Clause | None:
    """The clause registered for a function (None when it is not registered)."""
    # while coverage instruments the function, its original code is kept aside (oracle.coverage)
    code = getattr(function, "__mqspec_code__", None) or getattr(function, "__code__", None)
    return clause_of_code(code) if code is not None else None


def clause_stack(frame: FrameType | None, stop: CodeType | None) -> tuple[Clause, ...]:
    """The registered clauses on the stack from ``frame`` outwards (innermost first), up to ``stop``."""
    out = []
    get = _BY_CODE.get
    while frame is not None:
        code = frame.f_code
        if code is stop:
            break
        found = get(code, False)
        if found is False:
            found = clause_of_code(code)
        if found is not None:
            out.append(found)
        frame = frame.f_back
    return tuple(out)


def responsible(stack: Iterable[Clause]) -> Clause | None:
    """The innermost clause that is not a generic carrier of another's decision."""
    first = None
    for c in stack:
        if first is None:
            first = c
        if (c.document, c.section) not in GENERIC:
            return c
    return first


class ClauseEffects(list):  # type: ignore[type-arg]
    """A Context's effect list that notes the registered clauses on the stack at each output.

    ``stacks[i]`` is the stack of ``self[i]`` (innermost first; empty for timers and notes).
    """

    __slots__ = ("stacks", "stop")

    def __init__(self, stop: CodeType | None) -> None:
        super().__init__()
        self.stop = stop
        self.stacks: list[tuple[Clause, ...]] = []

    def append(self, effect: object) -> None:
        self.stacks.append(clause_stack(sys._getframe(1), self.stop) if type(effect) in OUTPUT_EFFECTS else ())
        super().append(effect)


# --- the handler an input goes to -------------------------------------------------------------


_ENTRY: dict[tuple[str, Any], Clause | None] = {}
memos.register(f"{__name__}._ENTRY", "(input kind, detail) -> the handler's clause", _ENTRY)


def entry_clause(kind: str, detail: Any = None) -> Clause | None:
    """The handler an input is dispatched to: ``("receive", (class, operation byte))``,
    ``("timer", kind)``, ``("start", None)``, ``("client_request", at_authority)``."""
    key = (kind, detail)
    if key not in _ENTRY:
        _ENTRY[key] = _entry(kind, detail)
    return _ENTRY[key]


def _entry(kind: str, detail: Any) -> Clause | None:
    from mqspec.model.mqdsrp import Operation
    from mqspec.refimpl import mqdsrp_client as client
    from mqspec.refimpl import mqdsrp_common as common
    from mqspec.refimpl import mqdsrp_server as server

    if kind == "receive":
        klass, operation = detail
        if klass == 0:
            table = {
                Operation.CHANGE_PROPAGATION: server.receive_change_propagation,
                Operation.CHANGE_REQUEST: server.receive_change_request,
                Operation.SYNC_REQUEST: server.receive_sync_request,
                Operation.SYNC_REPLY: client.receive_sync_reply,
                Operation.CHANGE_REPLY: client.receive_change_reply,
                Operation.ALREADY_PURGED: client.receive_already_purged,
                Operation.PSC_ACK: server.receive_psc_ack,
                Operation.BSC_ACK: server.receive_bsc_ack,
            }
            function = table.get(operation, common.receiving_replication_messages)  # type: ignore[call-overload]
        elif operation == Operation.CHANGE_REQUEST:
            function = client.receive_change_request_nack
        else:
            function = client.receive_request_nack
        return clause_of(function)
    if kind == "timer":
        function = {"change_propagation": client.change_propagation_timer_event,
                    "bsc_ack": client.bsc_ack_timer_event,
                    "change_request_wait": client.process_change_request}.get(detail)
        return clause_of(function) if function is not None else None
    if kind == "start":
        return clause_of(client.client_initialization)
    if kind == "client_request":
        return clause_of(common.propagate_directory_change if detail else common.change_remote_object)
    return None


# --- profile hooks over one input's handlers --------------------------------------------------


class _Watch:
    """A profile hook around one input's handlers that sees each registered function called and
    returning: :meth:`entered` when it is called (its value is kept), :meth:`left` when it returns
    (with the kept value and the depth of the registered calls still open)."""

    def __init__(self) -> None:
        self.calls: list[tuple[CodeType, Any]] = []

    def wanted(self, clause: Clause) -> bool:
        return True

    def entered(self, frame: FrameType, clause: Clause) -> Any:
        raise NotImplementedError

    def left(self, frame: FrameType, clause: Clause, kept: Any, depth: int) -> None:
        raise NotImplementedError

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event not in ("call", "return"):
            return
        code = frame.f_code
        found = _BY_CODE.get(code, False)
        if found is False:
            found = clause_of_code(code)
        if found is None or not self.wanted(found):
            return
        if event == "call":
            self.calls.append((code, self.entered(frame, found)))
            return
        while self.calls and self.calls[-1][0] is not code:
            self.calls.pop()  # an exception unwound frames without a return event
        if not self.calls:
            return
        _, kept = self.calls.pop()
        self.left(frame, found, kept, len(self.calls))

    def run(self, action: Callable[[], None]) -> None:
        previous = sys.getprofile()
        sys.setprofile(self)
        try:
            action()
        finally:
            sys.setprofile(previous)


class FieldWatch(_Watch):
    """A profile hook: the innermost registered function during which ``value()`` changed.

    Installed with :func:`sys.setprofile` around one input's handlers; ``changed_in`` is the
    clause stack (innermost first) of the first registered function to return with the value
    different from when it was called. Slow, and used only to explain a divergent snapshot.
    """

    def __init__(self, value: Callable[[], Any]) -> None:
        super().__init__()
        self.value = value
        self.changed_in: tuple[Clause, ...] | None = None

    def entered(self, frame: FrameType, clause: Clause) -> Any:
        return self.value()

    def left(self, frame: FrameType, clause: Clause, kept: Any, depth: int) -> None:
        if self.changed_in is None and self.value() != kept:
            self.changed_in = clause_stack(frame, None)


class DecisionWatch(_Watch):
    """A profile hook: the registered functions that ran for one input and emitted no output.

    An output the reference never makes, after an input, breaks the rule that decided to make
    none: typically a guard that says "Take no further action" (3.1.7.2.2 for a change already
    applied). Installed around one input's handlers (like :class:`FieldWatch`), it records every
    registered function of the protocol's section 3 that returned without an output effect having
    been appended to the Context's effects while it ran, with its depth; :meth:`decider` is the
    deepest of them that is not a generic carrier (the last such, on a tie). Slow: used only to
    explain an unexpected output.
    """

    def __init__(self) -> None:
        super().__init__()
        self.silent: list[tuple[int, int, Clause]] = []  # (depth, order, clause)

    def wanted(self, clause: Clause) -> bool:
        return clause.code.startswith("refimpl/") and clause.section.startswith("3.")

    def entered(self, frame: FrameType, clause: Clause) -> Any:
        effects = getattr(frame.f_locals.get("ctx"), "effects", None)
        return effects, _outputs(effects)

    def left(self, frame: FrameType, clause: Clause, kept: Any, depth: int) -> None:
        effects, before = kept
        if effects is not None and _outputs(effects) == before and (clause.document, clause.section) not in GENERIC:
            self.silent.append((depth, len(self.silent), clause))

    def decider(self) -> Clause | None:
        """The deepest registered function that ran and emitted nothing (None: every one emitted)."""
        return max(self.silent, key=lambda x: (x[0], x[1]))[2] if self.silent else None


def _outputs(effects: Any) -> int:
    if effects is None:
        return 0
    return sum(1 for e in effects if type(e) in OUTPUT_EFFECTS)


def describe(c: Clause | None) -> dict[str, Any] | None:
    """The JSON form of a clause in reports."""
    if c is None:
        return None
    return {"document": c.document, "section": c.section, "title": c.title, "code": c.code}
