"""``mqspec check``: replay each trace's inputs through the reference and compare every output.

For each trace: the header and ``node`` events declare the servers; each server with a role is
replayed on its own from its first ``start`` (:mod:`mqspec.oracle.replay`), every other server
and every MS-MQSD datagram or MS-MQCN notification it sends is checked at codec level (its
bytes must decode under the strict codec). The verdict is ``conformant``, ``divergent`` with
the first divergence (event index, node, expected versus actual as a field-level diff of the
decoded messages, and the clause whose rule was broken), or ``error`` when the reference could
not take an event. The report also lists the registered clauses the trace exercised.

Exit status of ``mqspec check``: 0 every trace conforms, 1 one diverges, 2 malformed input
(:class:`~mqspec.oracle.trace_format.TraceError`) or a reference error.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import attrs

from mqspec.clauses import Clause
from mqspec.model.errors import DecodeError
from mqspec.refimpl.effects import Mode

from . import attribution
from .attribution import describe
from .coverage import ClauseCoverage, section_key
from .replay import Divergence, InputError, NodeReplay
from .trace_format import INPUT_KINDS, NODE_KINDS, OUTPUT_KINDS, Trace, TraceError, load


@attrs.frozen
class TraceReport:
    """The outcome of checking one trace."""

    trace_id: str
    path: str
    verdict: str  # conformant | divergent | error
    events: int
    nodes: dict[str, str]
    divergence: Divergence | None = None
    line: int | None = None
    error: str | None = None
    coverage: tuple[Clause, ...] = ()
    errata: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"trace": self.trace_id, "file": self.path, "verdict": self.verdict,
                               "events": self.events, "nodes": self.nodes}
        if self.divergence is not None:
            d = self.divergence
            out["divergence"] = {
                "event": d.index, "line": self.line, "node": d.node, "kind": d.kind, "summary": d.summary,
                "expected": d.expected, "actual": d.actual, "diff": list(d.diff),
                "clause": describe(d.clause), "via": [describe(c) for c in d.via], "caused_by_event": d.cause,
            }
        if self.error is not None:
            out["error"] = self.error
        out["coverage"] = {"clauses": [f"{c.document} {c.section}" for c in self.coverage],
                           "count": len(self.coverage), "errata": list(self.errata)}
        return out


@attrs.frozen
class CheckReport:
    """The outcome of checking files: one report per trace, and the clauses all of them exercised."""

    traces: tuple[TraceReport, ...]
    registered: int

    @property
    def exit_status(self) -> int:
        verdicts = {t.verdict for t in self.traces}
        return 2 if "error" in verdicts else 1 if "divergent" in verdicts else 0

    @property
    def coverage(self) -> tuple[Clause, ...]:
        seen = {(c.document, c.section): c for t in self.traces for c in t.coverage}
        return tuple(seen[k] for k in sorted(seen, key=section_key))

    def to_json(self) -> dict[str, Any]:
        covered = self.coverage
        return {
            "conformant": self.exit_status == 0,
            "traces": [t.to_json() for t in self.traces],
            "coverage": {"clauses": [f"{c.document} {c.section}" for c in covered], "count": len(covered),
                         "registered": self.registered},
        }


def check_paths(paths: Iterable[str | Path], *, coverage: bool = True) -> CheckReport:
    """Check every trace of every file; TraceError (malformed input) propagates."""
    reports = []
    for path in paths:
        for trace in load(path):
            reports.append(check_trace(trace, coverage=coverage))
    from mqspec.clauses import load_all

    return CheckReport(tuple(reports), len(load_all()))


def check_text(text: str, name: str = "<trace>", *, coverage: bool = True) -> list[TraceReport]:
    """Check the traces of NDJSON text (for tests and tools)."""
    return [check_trace(trace, coverage=coverage) for trace in load(name, text)]


def check_trace(trace: Trace, *, coverage: bool = True) -> TraceReport:
    """Replay one trace; TraceError for an event the reference cannot take as input.

    With ``coverage`` the report lists every registered clause whose code ran while the
    trace's events were replayed (:mod:`mqspec.oracle.coverage`).
    """
    if not coverage:
        return _check(trace, None)
    with ClauseCoverage() as cover:
        report = _check(trace, cover)
    return attrs.evolve(report, coverage=cover.clauses())


def _check(trace: Trace, cover: ClauseCoverage | None) -> TraceReport:
    header = trace.header
    mode = Mode(header.get("mode", "clarified"))
    window = header.get("window", 0)
    kinds_of = _kinds_by_node(trace)
    default_observes = header.get("observes")
    replays: dict[str, NodeReplay] = {}

    def declare(decl: dict[str, Any]) -> None:
        observes = decl.get("observes", default_observes)
        seen = kinds_of.get(decl["name"], set())
        replays[decl["name"]] = NodeReplay(decl, mode, window, frozenset(observes if observes is not None else seen))

    for decl in header.get("nodes", ()):
        declare(decl)
    events = trace.events
    index = 0
    first = len(events)  # the earliest divergence found so far
    stopped = None
    try:
        for index in range(1, len(events)):
            record = events[index]
            kind = record["event"]
            if index > first:
                # past the first divergence, only an output still owed by an earlier input can
                # diverge earlier (a missing output): follow the nodes that owe one, then stop
                owing = [name for name, r in replays.items() if r.owes_before(first)]
                if not owing:
                    stopped = first
                    break
                if record.get("node") not in owing:
                    continue
            if kind == "node":
                declare(record)
            elif kind in ("datagram", "notification"):
                _codec_event(replays[record["node"]], index, record)
            elif kind != "note":
                replay = replays[record["node"]]
                replay.event(index, record)
                if replay.divergence is not None and replay.divergence.index < first:
                    first = replay.divergence.index
        index = len(events)
        for replay in replays.values():
            replay.finish(len(events))
    except InputError as exc:
        raise TraceError(trace.path, _line(trace, exc.index), exc.field, exc.reason) from None
    except Exception as exc:  # noqa: BLE001 - the reference failed on this event: its own outcome, never "passed"
        what = events[index]["event"] if index < len(events) else "(end of trace)"
        return TraceReport(trace.trace_id, trace.path, "error", len(events), _node_states(replays),
                           line=_line(trace, index),
                           error=f"{trace.where(index)}: the reference could not take event {index} "
                                 f"({what}): {type(exc).__name__}: {exc}")
    divergences = [r.divergence for r in replays.values() if r.divergence is not None]
    found = min(divergences, key=lambda d: (d.index, d.node)) if divergences else None
    errata = sorted({e for r in replays.values() for e in r.errata})
    if found is not None and found.kind == "state":
        found = _attribute_state(trace, replays[found.node], found, mode, window)
    return TraceReport(
        trace.trace_id, trace.path, "divergent" if found else "conformant", len(events),
        _node_states(replays, stopped), divergence=found, line=_line(trace, found.index) if found else None,
        errata=tuple(errata),
    )


def _kinds_by_node(trace: Trace) -> dict[str, set[str]]:
    kinds: dict[str, set[str]] = {}
    for record in trace.events:
        node = record.get("node")
        if node is not None and record["event"] in NODE_KINDS:
            kinds.setdefault(node, set()).add(record["event"])
    return kinds


def _codec_event(replay: NodeReplay, index: int, record: dict[str, Any]) -> None:
    """A sent MS-MQSD datagram or MS-MQCN notification must decode under the strict codec."""
    if record["direction"] != "send" or replay.divergence is not None:
        return
    from mqspec.model import mqcn, mqsd

    data = bytes.fromhex(record["body"])
    try:
        if record["event"] == "datagram":
            mqsd.decode(data)
        else:
            mqcn.decode_body(data)
    except DecodeError as exc:
        replay._decode_divergence(index, record, exc)


def _node_states(replays: dict[str, NodeReplay], stopped: int | None = None) -> dict[str, str]:
    out = {}
    for name, r in replays.items():
        if r.divergence is not None:
            out[name] = "divergent"
        elif stopped is not None and r.qm is not None:
            out[name] = f"conformant up to event {stopped}"
        elif not r.behavioural:
            out[name] = "codec-only"
        elif r.qm is None:
            out[name] = "not-started" if r.inputs == 0 else "codec-only (never started)"
        else:
            out[name] = "conformant"
    return out


def _line(trace: Trace, index: int) -> int:
    return trace.lines[index] if index < len(trace.lines) else (trace.lines[-1] + 1)


# --- explaining a state divergence ------------------------------------------------------------


def _attribute_state(trace: Trace, replay: NodeReplay, divergence: Divergence, mode: Mode,
                     window: int) -> Divergence:
    """Name the handler that last changed the divergent field in the reference.

    The node is replayed again up to the snapshot, reading the field after each input; then once
    more, with a profile hook on the last input that changed it, to find the innermost registered
    function during which it changed. If the reference never changed it, the report keeps the
    handler of the node's last input before the snapshot.
    """
    from .state import reference_value

    field = divergence.diff[0]["field"] if divergence.diff else ""
    events = trace.events
    mine = [i for i in range(1, divergence.index)
            if events[i].get("node") == replay.name and events[i]["event"] in (*INPUT_KINDS, *OUTPUT_KINDS)]
    again = NodeReplay(replay.decl, mode, window, replay.observes)
    value: Any = _UNSET
    last = None
    for i in mine:
        again.event(i, events[i])
        if events[i]["event"] in INPUT_KINDS:
            now = _safe(reference_value, again.qm, field)
            if now != value:
                last, value = i, now
    if last is None:
        return divergence
    again = NodeReplay(replay.decl, mode, window, replay.observes)
    watch = attribution.FieldWatch(lambda: _safe(reference_value, again.qm, field))
    for i in mine:
        if i == last:
            again.watch = watch
            again.event(i, events[i])
            break
        again.event(i, events[i])
    changed = watch.changed_in or ()
    clause = attribution.responsible(changed) if changed else again._entry_of_last_input()
    return attrs.evolve(divergence, clause=clause, via=changed, cause=last,
                        summary=f"{divergence.summary}; the reference last changed it at event {last}")


_UNSET = object()


def _safe(function: Any, *args: Any) -> Any:
    try:
        return function(*args)
    except Exception:  # noqa: BLE001 - the field's partition does not exist (yet): no value
        return None
