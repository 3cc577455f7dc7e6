"""The refinement check: every handler run of a World against the model's transition for the same event.

:class:`Refinement` is an observer of a :class:`~mqspec.refimpl.world.World` (its observation hook,
as :class:`~mqspec.proofs.ghost.Ghost` is one). Before each handler run it projects the server's
state into the model (:mod:`mqspec.proofs.refinement.project`); after it, it runs the model's
transition for the same event on that state (:func:`mqspec.proofs.server_events.run`: the core model
of :mod:`mqspec.proofs.z3_model` for each partition, the server layer for the rest) and compares, field
by field, the model's post-state with the reference's, the messages, timers, directory events and
request completions each emitted in order, and the directory each leaves. A difference is a
:class:`Departure`: the handler and its section, the server, the pre-state, the event and the
differences. It never changes the world.

What it does not see: the runs the World's fast path skips (refimpl/fastpath.py: Change Propagation
Timer firings and empty propagations that change nothing; the campaign runs with the fast path off,
so every firing runs and is checked); a crash (3.1.1's persisted marks, data, not a handler) and the
PSC handover's copying of state (E-313, the simulator's), whose following Initialization is checked;
the records of clarifications (``Clarified`` effects, annotations of the trace). ``proofs/refinement/
exemptions.py`` lists them with the handlers left out.
"""

from __future__ import annotations

import collections
from typing import Any

import attrs

from mqspec.model import mqdsrp
from mqspec.model.errors import DecodeError
from mqspec.model.mqdsrp import (
    AlreadyPurgedMessage,
    ChangePropagationMessage,
    ChangeRequestMessage,
    SyncReplyMessage,
)
from mqspec.proofs import server_events
from mqspec.refimpl.effects import Mode

from . import limit
from .project import emitted_of, server_of, view, view_of

#: the handler each event of a World runs first, and its section
RECEIVERS = {
    "ChangePropagationMessage": ("receive_change_propagation", "3.2.7.1"),
    "ChangeRequestMessage": ("receive_change_request", "3.2.7.2"),
    "SyncRequestMessage": ("receive_sync_request", "3.2.7.3"),
    "PSCAckMessage": ("receive_psc_ack", "3.2.7.4"),
    "BSCAckMessage": ("receive_bsc_ack", "3.2.7.5"),
    "SyncReplyMessage": ("receive_sync_reply", "3.3.7.5"),
    "ChangeReplyMessage": ("receive_change_reply", "3.3.7.6"),
    "AlreadyPurgedMessage": ("receive_already_purged", "3.3.7.7"),
}
TIMERS = {
    "change_propagation": ("change_propagation_timer_event", "3.3.6.1"),
    "bsc_ack": ("bsc_ack_timer_event", "3.3.6.2"),
    "change_request_wait": ("change_request_wait_expired", "3.3.7.1"),
}
#: a listener of every check (the campaign's tally): ``begin(check)`` before a handler run, ``end(handler,
#: departure or None)`` after its check, ``called()`` the handler functions the run called (or None)
WATCH: Any = None
#: the messages whose handler may change the directory (the others only read it)
_WRITERS = (ChangePropagationMessage, ChangeRequestMessage, SyncReplyMessage, AlreadyPurgedMessage)


def handler_of(event: tuple[Any, ...]) -> tuple[str, str]:
    """(handler, section) of the handler a World event runs first (3.1.5.1 dispatches a message)."""
    kind = event[0] if event else ""
    if kind == "start":
        return "initialization", "3.2.3"
    if kind == "client_request":
        return "directory_client_request", "3.1.7.1"
    if kind == "timer":
        return TIMERS.get(event[1].kind, (f"timer {event[1].kind}", "3.3.6"))
    if kind == "receive":
        message = event[1]
        if int(message.klass) != 0:
            if len(message.body) > 17 and message.body[17] == mqdsrp.Operation.CHANGE_REQUEST:
                return "receive_change_request_nack", "3.3.7.8"
            return "receive_request_nack", "3.3.7.9"
        body = _decoded(message.body)
        if body is None:
            return "receiving_replication_messages", "3.1.5.1"
        return RECEIVERS.get(type(body).__name__, ("receiving_replication_messages", "3.1.5.1"))
    return kind or "?", "?"


def _decoded(body: bytes) -> Any:
    if not body or body[0] != 0:
        return None
    try:
        return mqdsrp.decode_shared(body)
    except DecodeError:
        return None


def _writes_directory(event: tuple[Any, ...]) -> bool:
    kind = event[0] if event else ""
    if kind == "client_request":
        return True
    if kind != "receive" or int(event[1].klass) != 0:
        return False
    body = _decoded(event[1].body)
    if isinstance(body, ChangePropagationMessage):
        return bool(body.changes)
    return isinstance(body, _WRITERS)


def describe(event: tuple[Any, ...]) -> dict[str, Any]:
    """The event as a departure shows it (a message decoded, its sender and class)."""
    kind = event[0] if event else ""
    if kind == "receive":
        message = event[1]
        return {"event": "receive", "from": message.source_machine, "class": int(message.klass),
                "message": _decoded(message.body) if int(message.klass) == 0 else message.body.hex()}
    if kind == "timer":
        return {"event": "timer", "timer": event[1].kind, "args": list(event[1].args)}
    if kind == "client_request":
        return {"event": "client_request", "request": event[1], "guid": str(event[2]) if len(event) > 2 else None}
    return {"event": kind}


@attrs.frozen
class Departure:
    """A handler run whose outcome differs from the model's transition on the same pre-state and event."""

    handler: str
    section: str
    node: str
    time: float
    event: dict[str, Any]
    pre: dict[str, Any] | None  # the server's state before the run (None: not kept, see Refinement.keep_pre)
    differences: tuple[str, ...]
    #: the handler functions the run called, when the campaign traces them (the departure is in one of them)
    ran: tuple[str, ...] = ()

    def text(self, limit: int = 12) -> str:
        shown = "\n    ".join(self.differences[:limit])
        more = f"\n    ... and {len(self.differences) - limit} more" if len(self.differences) > limit else ""
        ran = f"\n    handlers run: {', '.join(self.ran)}" if self.ran else ""
        return (f"{self.handler} ({self.section}) at {self.node} departs from the model at t={self.time:g}: "
                f"{_short(self.event)}\n    {shown}{more}{ran}")


def _short(event: dict[str, Any], limit: int = 300) -> str:
    text = repr(event)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def differences(model: dict[str, Any], reference: dict[str, Any], path: str = "") -> list[str]:
    """Field-level differences of two views: ``path: model X, reference Y``."""
    out: list[str] = []
    if isinstance(model, dict) and isinstance(reference, dict):
        for key in list(model) + [k for k in reference if k not in model]:
            if key not in model or key not in reference:
                out.append(f"{path}{key}: model {model.get(key, '(none)')!r}, reference {reference.get(key, '(none)')!r}")
            elif model[key] != reference[key]:
                out.extend(differences(model[key], reference[key], f"{path}{key}."))
        return out
    if isinstance(model, list) and isinstance(reference, list):
        for i in range(max(len(model), len(reference))):
            if i >= len(model) or i >= len(reference):
                out.append(f"{path.rstrip('.')}[{i}]: model {model[i] if i < len(model) else '(none)'!r}, "
                           f"reference {reference[i] if i < len(reference) else '(none)'!r}")
            elif model[i] != reference[i]:
                out.extend(differences(model[i], reference[i], f"{path.rstrip('.')}[{i}]."))
        return out
    if attrs.has(type(model)) and type(model) is type(reference):
        fields = [f.name for f in attrs.fields(type(model))]
        return differences({f: getattr(model, f) for f in fields}, {f: getattr(reference, f) for f in fields}, path)
    return [f"{path.rstrip('.')}: model {model!r}, reference {reference!r}"]


class Refinement:
    """Checks every handler run of ``world`` against the model; attach before the world's first event."""

    def __init__(self, world: Any, *, keep_pre: bool = False) -> None:
        self.world = world
        #: keep each run's pre-state in the departure (it costs as much again as the check: the campaign runs
        #: without it; a departure's shrunk scenario file replays the run up to its pre-state)
        self.keep_pre = keep_pre
        self.clarified = world.mode is Mode.CLARIFIED
        self.departures: list[Departure] = []
        #: handler -> how many of its runs were checked
        self.checked: collections.Counter[str] = collections.Counter()
        self._pre: dict[str, tuple[Any, dict[str, Any], Any]] = {}
        world.observers.append(self)

    def take(self) -> list[Departure]:
        """The departures found since the last call (a step's). Called between handler runs, so a run still open is
        one that raised into a caller that went on (:meth:`_unfinished`)."""
        self._unfinished()
        found, self.departures = self.departures, []
        return found

    # --- the World observer protocol -------------------------------------------------------------

    def before(self, world: Any, qm: Any, event: tuple[Any, ...]) -> None:
        self._unfinished()
        if WATCH is not None:
            WATCH.begin(self)
        store = qm.directory
        if _writes_directory(event):
            server = server_of(qm, store.copy())
            mark = None
        else:
            server = server_of(qm, store)
            mark = _digest(store)
        self._pre[qm.machine_name] = (server, view(server) if self.keep_pre else None, mark, event)

    def effect(self, world: Any, qm: Any, effect: object) -> None:
        pass

    def after(self, world: Any, qm: Any, event: tuple[Any, ...], effects: list[Any]) -> None:
        entry = self._pre.pop(qm.machine_name, None)
        if entry is None:
            return
        server, pre, mark, _ = entry
        handler, section = handler_of(event)
        self.checked[handler] += 1
        problems: list[str] = []
        try:
            ev = server_events.run(server, event, self.clarified, world.now)
        except Exception as exc:  # noqa: BLE001 - the model cannot take this event: a departure too
            problems.append(f"the model fails on this event: {type(exc).__name__}: {exc}")
        else:
            try:
                model, reference = view(server), view_of(qm)
                if model != reference:
                    problems += differences(model, reference, "")
                problems += _emitted(ev.emitted, emitted_of(qm, effects))
                if mark is None:
                    problems += _directories(server.directory.store, qm.directory)
                elif _digest(qm.directory) != mark:
                    problems.append("directory: an event that only reads the directory changed it")
            except Exception as exc:  # noqa: BLE001 - a state or message of the reference the projection cannot
                # read (a destination that is no machine name, say) is a departure, not a failure of prove
                problems.append(f"the reference left what the check cannot read: {type(exc).__name__}: {exc}")
        departure = None
        if problems:
            ran = tuple(sorted(WATCH.called())) if WATCH is not None else ()
            departure = Departure(handler, section, qm.machine_name, world.now, describe(event), pre,
                                  tuple(problems), ran)
            self.departures.append(departure)
        if WATCH is not None:
            WATCH.end(handler, section, departure)

    def crashed(self, world: Any, name: str, lose: str) -> None:
        self._pre.pop(name, None)

    def raised(self, exc: BaseException) -> list[Departure]:
        """The handler runs the reference began and never finished because it raised ``exc``: each is a departure
        (the model's transition is total, a handler that raises takes none of them). The World cannot go on."""
        return self._abandoned(limit.raised(exc))

    def _unfinished(self) -> None:
        """A handler run that began and never ended raised into a caller that went on: the scenario runner refuses
        a step on a ModelError (a message the simulator will not carry, say) and runs the next one. It departs as
        any raise does; before, nothing was recorded and the run's row could stay refined."""
        if self._pre:
            self._abandoned("the reference raised, and the step that ran it was refused (the scenario's failures "
                            "say why); the run never finished")

    def _abandoned(self, problem: str) -> list[Departure]:
        found = []
        runs, self._pre = self._pre, {}  # WATCH.end may end the scenario's run (FirstDeparture)
        for node, (_, pre, _, event) in runs.items():
            handler, section = handler_of(event)
            self.checked[handler] += 1
            ran = tuple(sorted(WATCH.called())) if WATCH is not None else ()
            departure = Departure(handler, section, node, self.world.now, describe(event), pre, (problem,), ran)
            self.departures.append(departure)
            found.append(departure)
            if WATCH is not None:
                WATCH.end(handler, section, departure)
        return found

    def skipped(self, world: Any, qm: Any, event: tuple[Any, ...]) -> None:
        pass

    def topology_changed(self, world: Any) -> None:
        pass


def _digest(store: Any) -> tuple[int, int]:
    return len(store.objects), sum(part.digest for part in store._parts.values()) % (1 << 64)


def _emitted(model: list[Any], reference: list[Any]) -> list[str]:
    if model == reference:
        return []
    out = []
    for i in range(max(len(model), len(reference))):
        a = model[i] if i < len(model) else None
        b = reference[i] if i < len(reference) else None
        if a != b:
            if a is not None and b is not None and type(a) is type(b):
                out += [f"emitted[{i}] {type(a).__name__}.{d}" for d in differences(a, b, "")]
            else:
                out.append(f"emitted[{i}]: model {a!r}, reference {b!r}")
            if len(out) > 8:
                break
    out.append(f"emitted: the model {len(model)}, the reference {len(reference)}")
    return out


def _directories(model: Any, reference: Any) -> list[str]:
    if model.objects == reference.objects:
        return []
    out = []
    for guid in sorted(set(model.objects) | set(reference.objects), key=str):
        a, b = model.objects.get(guid), reference.objects.get(guid)
        if a != b:
            out.append(f"directory[{guid}]: model {a!r}, reference {b!r}")
    return out[:8]
