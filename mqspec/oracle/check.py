"""``mqspec check``: replay each trace's inputs through the reference and compare every output.

For each trace: the header and ``node`` events declare the servers; each server with a role is
replayed on its own from its first ``start`` (:mod:`mqspec.oracle.replay`); each node with an
``mqsd`` or ``mqcn`` declaration has its datagrams or notifications replayed through the MS-MQSD
or MS-MQCN reference (:mod:`mqspec.oracle.replay_mqsd`, :mod:`mqspec.oracle.replay_mqcn`); every
other MS-MQSD datagram or MS-MQCN notification a node sends is checked at codec level (its bytes
must decode under the strict codec; a server's reply header is mqspec's policy, E-020, not a
MUST). The verdict of a trace is one of:

* ``conformant``: every event the checker could replay or compare agreed with the reference;
* ``divergent``: the first divergence (event index, node, expected versus actual as a
  field-level diff of the decoded messages, and the clause whose rule was broken);
* ``nothing-checked``: the trace has no event the checker could replay or compare (a header
  alone, notes, events of nodes checked at no level): it is not evidence of conformance;
* ``incomplete-capture``: no divergence, but the trace (a capture's) has ``hole`` events: bytes the
  capture lost (a datagram cut by the snap length, a TCP gap, a fragment never seen, a file cut
  mid-record). Each node a hole touches is judged up to the hole and no further: the outputs it
  still owed there are undetermined, never missing, and its later events are not replayed (they
  may answer what the hole hid). The report lists the holes and says up to where each node was
  judged. A divergence before a node's hole (or at a node no hole touches) is still ``divergent``;
* ``error``: the reference could not take an event.

The report also lists the registered clauses the trace exercised (unless ``coverage`` is off),
and notes where a check is mqspec's policy rather than a MUST (``policy: E-020``).

The checker streams: it reads each source line by line (:mod:`mqspec.oracle.source`), a first
time to validate it and a second time to replay it, and holds only the reference's state, so
its memory does not grow with the size of the trace.

Exit status of ``mqspec check``: 0 every trace conforms, 1 one diverges, 2 malformed input
(:class:`~mqspec.oracle.trace_format.TraceError`) or a reference error, 4 no divergence and no
error but a capture with holes, 3 none of those but a trace in which nothing was checked.

The public entry point is :func:`check`: a path (or an iterable of NDJSON lines) in, a
:class:`CheckReport` out, with one :class:`TraceReport` per trace.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import attrs

from mqspec.clauses import Clause
from mqspec.errata import marks
from mqspec.model.errors import DecodeError
from mqspec.refimpl.effects import Mode

from . import attribution
from .attribution import describe
from .coverage import ClauseCoverage, section_key
from .replay import _HANDLERS as _NODE_HANDLERS
from .replay import Divergence, InputError, NodeReplay, blamed
from .source import LineSource, Survey, survey
from .trace_format import INPUT_KINDS, NODE_KINDS, OUTPUT_KINDS, Trace, TraceError

#: the most policy notes a trace report keeps (the rest are counted)
MAX_NOTES = 20
#: exit status by verdict, most severe first
EXIT = {"error": 2, "divergent": 1, "incomplete-capture": 4, "nothing-checked": 3, "conformant": 0}
#: the most holes a trace report lists (the rest are counted)
MAX_HOLES = 50

@attrs.frozen
class TraceReport:
    """The outcome of checking one trace (``verdict``: conformant | divergent | incomplete-capture |
    nothing-checked | error)."""

    trace_id: str
    path: str
    verdict: str
    events: int
    nodes: dict[str, str]
    divergence: Divergence | None = None
    line: int | None = None
    error: str | None = None
    coverage: tuple[Clause, ...] = ()
    errata: tuple[str, ...] = ()
    checked: int = 0  # events replayed through the reference or compared with it
    notes: tuple[str, ...] = ()  # where a check is mqspec's policy, not a MUST (policy: E-NNN)
    coverage_computed: bool = True
    #: the capture's holes the checker reached (``hole`` events: event, t, kind, text, nodes, ...)
    holes: tuple[dict[str, Any], ...] = ()
    holes_total: int = 0  # holes reached, when more than the report lists
    #: with check --all: every divergence found, up to the limit, in event order (each with its line),
    #: and how many were found in all
    divergences: tuple[tuple[Divergence, int], ...] = ()
    divergence_count: int = 0
    all_asked: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"trace": self.trace_id, "file": self.path, "verdict": self.verdict,
                               "events": self.events, "checked": self.checked, "nodes": self.nodes}
        if self.divergence is not None:
            out["divergence"] = divergence_json(self.divergence, self.line)
        if self.all_asked:
            out["divergences"] = [divergence_json(d, line) for d, line in self.divergences]
            out["divergence_count"] = self.divergence_count
        if self.error is not None:
            out["error"] = self.error
        if self.notes:
            out["notes"] = list(self.notes)
        if self.holes:
            out["holes"] = list(self.holes)
            out["holes_total"] = self.holes_total
        if self.coverage_computed:
            out["coverage"] = {"clauses": [f"{c.document} {c.section}" for c in self.coverage],
                               "count": len(self.coverage), "errata": list(self.errata)}
        else:
            out["errata"] = list(self.errata)
        return out


def divergence_json(d: Divergence, line: int | None) -> dict[str, Any]:
    """One divergence in a report: where, what, the clause, its MUST (``rule``) or the register entries
    it rests on (``rests_on``: id, kind and title each)."""
    out = {"event": d.index, "line": line, "node": d.node, "kind": d.kind, "summary": d.summary,
           "expected": d.expected, "actual": d.actual, "diff": list(d.diff),
           "clause": describe(d.clause), "via": [describe(c) for c in d.via], "caused_by_event": d.cause}
    if d.rule:
        out["rule"] = d.rule
    if d.rests_on:
        out["rests_on"] = marks(d.rests_on)
    return out


@attrs.frozen
class CheckReport:
    """The outcome of checking files: one report per trace, and the clauses all of them exercised."""

    traces: tuple[TraceReport, ...]
    registered: int
    coverage_computed: bool = True

    @property
    def exit_status(self) -> int:
        """2 error, else 1 divergent, else 4 a capture with holes, else 3 nothing checked in some trace, else 0."""
        verdicts = {t.verdict for t in self.traces}
        return next((code for verdict, code in EXIT.items() if verdict in verdicts), 0)

    @property
    def coverage(self) -> tuple[Clause, ...]:
        seen = {(c.document, c.section): c for t in self.traces for c in t.coverage}
        return tuple(seen[k] for k in sorted(seen, key=section_key))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"conformant": self.exit_status == 0, "traces": [t.to_json() for t in self.traces]}
        if self.coverage_computed:
            covered = self.coverage
            out["coverage"] = {"clauses": [f"{c.document} {c.section}" for c in covered], "count": len(covered),
                               "registered": self.registered}
        return out


#: called with (trace id, event index, line, record) for every event checked (pipelines build rows from it)
EventHook = Callable[[str, int, int, dict[str, Any]], None]


def check(source: str | Path | Iterable[str], *, name: str | None = None, coverage: bool = True,
          on_event: EventHook | None = None, all_divergences: int = 0) -> CheckReport:
    """Check every trace of one source: a path, or an iterable of NDJSON lines (read once).

    ``all_divergences`` above 0 reports every divergence of a trace up to that many (and counts
    them all), not only the first. TraceError (malformed input) propagates. Memory stays bounded
    whatever the trace's size.
    """
    if isinstance(source, str | Path):
        lines = LineSource.from_path(source)
    else:
        lines = LineSource.from_lines(source, name or "<lines>")
    return _report(check_source(lines, coverage=coverage, on_event=on_event, all_divergences=all_divergences),
                   coverage)


def check_paths(paths: Iterable[str | Path], *, coverage: bool = True, on_event: EventHook | None = None,
                all_divergences: int = 0) -> CheckReport:
    """Check every trace of every file (``all_divergences``: as :func:`check`); TraceError (malformed
    input) propagates."""
    return check_sources((LineSource.from_path(p) for p in paths), coverage=coverage, on_event=on_event,
                         all_divergences=all_divergences)


def check_sources(sources: Iterable[LineSource], *, coverage: bool = True, on_event: EventHook | None = None,
                  all_divergences: int = 0) -> CheckReport:
    """Check every trace of every source (a capture converted by :func:`mqspec.oracle.from_pcap.capture_trace`
    is one); TraceError (malformed input) propagates."""
    reports: list[TraceReport] = []
    for source in sources:
        reports.extend(check_source(source, coverage=coverage, on_event=on_event, all_divergences=all_divergences))
    return _report(reports, coverage)


def _report(reports: list[TraceReport], coverage: bool) -> CheckReport:
    from mqspec.clauses import load_all

    return CheckReport(tuple(reports), len(load_all()), coverage)


def check_text(text: str, name: str = "<trace>", *, coverage: bool = True) -> list[TraceReport]:
    """Check the traces of NDJSON text (for tests and tools)."""
    return check_source(LineSource.from_text(text, name), coverage=coverage)


def check_source(source: LineSource, *, coverage: bool = True, on_event: EventHook | None = None,
                 all_divergences: int = 0) -> list[TraceReport]:
    """Check every trace of a source, streaming.

    The first pass validates every line (:func:`mqspec.oracle.source.survey`) and, when the first
    trace's header says what its nodes log (``observes``), replays that trace at the same time;
    every other trace (and the first, without ``observes``: each node's default is every kind
    the trace shows for it) is replayed in a pass of its own.
    """
    first: list[_TraceCheck] = []

    def on_header(s: Survey) -> Callable[[int, int, dict[str, Any]], None] | None:
        if first or s.header.get("observes") is None:
            return None
        run = _TraceCheck(s.trace_id, source.name, s.header, s.kinds, on_event, coverage, all_divergences)
        first.append(run)
        return run.push

    try:
        surveys = survey(source, on_header)
    finally:
        if first:
            first[0].close()  # a TraceError leaves the coverage it entered
    reports = []
    for s in surveys:
        feed = _StreamFeed(source, s)
        if first and first[0].trace_id == s.trace_id:
            reports.append(first[0].finish(feed))
        else:
            reports.append(_checked(feed, coverage, on_event, all_divergences))
    return reports


def check_trace(trace: Trace, *, coverage: bool = True) -> TraceReport:
    """Replay one trace held in memory (its events already validated); TraceError for an event
    the reference cannot take as input.

    With ``coverage`` the report lists every registered clause whose code ran while the
    trace's events were replayed (:mod:`mqspec.oracle.coverage`).
    """
    return _checked(_ListFeed(trace), coverage, None)


def _checked(feed: _Feed, coverage: bool, on_event: EventHook | None, all_divergences: int = 0) -> TraceReport:
    run = _TraceCheck(feed.trace_id, feed.path, feed.header, feed.kinds, on_event, coverage, all_divergences)
    try:
        for index, line, record in feed.events():
            if not run.push(index, line, record):
                break
    finally:
        run.close()
    return run.finish(feed)


# --- where a trace's events come from ---------------------------------------------------------


class _Feed:
    """One trace's events, readable more than once: (index, line, record), the header first."""

    trace_id: str
    path: str
    header: dict[str, Any]
    kinds: dict[str, set[str]]
    count: int

    def events(self, until: int | None = None) -> Iterator[tuple[int, int, dict[str, Any]]]:
        raise NotImplementedError

    def line(self, index: int) -> int:
        raise NotImplementedError


class _StreamFeed(_Feed):
    def __init__(self, source: LineSource, s: Survey) -> None:
        self.source, self.survey = source, s
        self.trace_id, self.path, self.header, self.kinds, self.count = (
            s.trace_id, source.name, s.header, s.kinds, s.events)

    def events(self, until: int | None = None) -> Iterator[tuple[int, int, dict[str, Any]]]:
        return self.source.events(self.survey, until=until)

    def line(self, index: int) -> int:
        return self.source.line_of(self.survey, index)


class _ListFeed(_Feed):
    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.trace_id, self.path, self.header, self.count = trace.trace_id, trace.path, trace.header, len(trace.events)
        self.kinds = {}
        for record in trace.events:
            node = record.get("node")
            if node is not None and record["event"] in NODE_KINDS:
                self.kinds.setdefault(node, set()).add(record["event"])

    def events(self, until: int | None = None) -> Iterator[tuple[int, int, dict[str, Any]]]:
        events, lines = self.trace.events, self.trace.lines
        for index in range(len(events) if until is None else min(until, len(events))):
            yield index, lines[index], events[index]

    def line(self, index: int) -> int:
        lines = self.trace.lines
        return lines[index] if index < len(lines) else (lines[-1] + 1)


# --- one trace -----------------------------------------------------------------------------------


_PROTOCOL_OF = {"datagram": "mqsd", "notification": "mqcn", "queue": "mqcn", "notify": "mqcn",
                "discover": "mqsd", "discovered": "mqsd"}
#: the event kinds NodeReplay takes
_REPLAYED = frozenset(("start", "crash", "clock", "client_request", "request_completed", "receive", "send", "timer",
                       "directory", "snapshot", "handover"))
#: what a node's replay again (to attribute a divergence) takes: its inputs, outputs and handovers
_AGAIN = frozenset((*INPUT_KINDS, *OUTPUT_KINDS, "handover"))
#: what it takes to find an output's clause stack (no handover comes before: see _with_stack)
_STACK_AGAIN = frozenset((*INPUT_KINDS, *OUTPUT_KINDS, "clock"))


class _TraceCheck:
    """One trace's replay, fed one event at a time (:meth:`push`), reported by :meth:`finish`.

    ``kinds`` (each node's logged kinds, for the default ``observes``) may still be filling in
    while events are pushed: it is read only for a node declared without ``observes`` in a trace
    whose header gives none, and such a trace is pushed only after its survey is complete.
    """

    def __init__(self, trace_id: str, path: str, header: dict[str, Any], kinds: dict[str, set[str]],
                 on_event: EventHook | None, coverage: bool, all_divergences: int = 0) -> None:
        self.trace_id, self.path, self.header, self.kinds, self.on_event = trace_id, path, header, kinds, on_event
        #: check --all: every divergence up to this many (0: the first only, and the replay stops there)
        self.limit = all_divergences
        self.mode = Mode(header.get("mode", "clarified"))
        self.window = header.get("window", 0)
        self.default_observes = header.get("observes")
        self.replays: dict[str, NodeReplay] = {}  # MC-MQDSRP, and codec-level checks, of every node
        self.others: dict[str, dict[str, Any]] = {}  # node -> protocol -> its MS-MQSD / MS-MQCN replay
        self.notes: list[str] = []
        self.checked = 0
        self.clock = 0.0  # the last event's t
        self.first = 1 << 62  # the earliest divergence found so far
        self.stopped: int | None = None
        self.done = False
        self.failure: tuple[int, int, str, Exception] | None = None  # a reference error: index, line, kind, exc
        self.holes: list[dict[str, Any]] = []
        self.hole_count = 0
        self.cut: dict[str, int] = {}  # node -> the hole it is judged up to (its later events are skipped)
        self.cut_all: int | None = None  # a hole that touches every node (one declared later too)
        # this trace's clause coverage, entered until close(): the reference runs only while
        # one trace is pushed (the others of a file are replayed later, each in its own pass)
        self.cover = ClauseCoverage().__enter__() if coverage else None
        self.open = coverage
        for decl in header.get("nodes", ()):
            self.declare(decl, 0)

    def close(self) -> None:
        """Leave the clause coverage (idempotent); finish() reports what it saw."""
        if self.open and self.cover is not None:
            self.open = False
            self.cover.__exit__(None, None, None)

    def declare(self, decl: dict[str, Any], index: int) -> None:
        from . import replay_mqcn, replay_mqsd

        name, mode, window = decl["name"], self.mode, self.window
        if self.cut_all is not None:
            self.cut.setdefault(name, self.cut_all)
        observes = decl.get("observes", self.default_observes)
        seen = observes if observes is not None else self.kinds.get(name, set())
        replay = self.replays[name] = NodeReplay(decl, mode, window, frozenset(seen), stacks=False)
        replay.peers, replay.since = self.replays, index
        mine = self.others[name] = {}
        if "mqsd" in decl:
            mine["mqsd"] = replay_mqsd.replay_for(name, decl["mqsd"], mode, window, observes=frozenset(seen))
        if "mqcn" in decl:
            mine["mqcn"] = replay_mqcn.replay_for(name, decl["mqcn"], mode, window, node=decl, observes=frozenset(seen))
        for unit in (replay, *mine.values()):
            unit.limit = self.limit

    def units(self) -> Iterator[Any]:
        yield from self.replays.values()
        for mine in self.others.values():
            yield from mine.values()

    def push(self, index: int, line: int, record: dict[str, Any]) -> bool:
        """Take event ``index``; False once the trace needs no more events."""
        kind = record["event"]
        if index < self.first and kind in _REPLAYED and self.on_event is None and index:
            # the common case, first: an MC-MQDSRP event before any divergence
            if self.cut and record["node"] in self.cut:
                return True  # judged up to a hole: this event may answer what the hole hid
            unit = self.replays[record["node"]]
            self.clock = record["t"]
            try:
                if not unit.halted:  # NodeReplay.event, inlined
                    _NODE_HANDLERS[kind](unit, index, record)
            except InputError as exc:
                raise TraceError(self.path, line, exc.field, exc.reason) from None
            except Exception as exc:  # noqa: BLE001 - the reference failed on this event: its own outcome
                self.failure, self.done, self.first = (index, line, kind, exc), True, -1  # -1: no fast path
                return False
            if unit.divergence is not None and unit.divergence.index < self.first and not self.limit:
                self.first = unit.divergence.index
            return True
        if self.done or index == 0:
            return not self.done
        self.clock = record["t"]  # the trace clock (non-decreasing) reached: what was due by then is owed
        self._event(index, line, record)
        return not self.done

    def _event(self, index: int, line: int, record: dict[str, Any]) -> None:
        kind = record["event"]
        if kind == "hole":
            self._hole(index, record)
            return
        if index > self.first:
            # past the first divergence, only an output still owed by an earlier input can
            # diverge earlier (a missing output): follow the nodes that owe one, then stop
            owing = {u.name for u in self.units() if u.name not in self.cut and u.owes_before(self.first)}
            if not owing:
                self.stopped, self.done = self.first, True
                return
            if record.get("node") not in owing:
                return
        if self.on_event is not None:
            self.on_event(self.trace_id, index, line, record)
        try:
            if kind == "node":
                self.declare(record, index)
                return
            if kind == "note":
                return
            node = record["node"]
            if node in self.cut:
                return
            protocol = _PROTOCOL_OF.get(kind)
            unit = self.others[node].get(protocol) if protocol is not None else self.replays[node]
            if unit is None:
                if kind in ("datagram", "notification"):
                    self.checked += _codec_event(self.replays[node], index, record, self.notes)
                return
            unit.event(index, record)
        except InputError as exc:
            raise TraceError(self.path, line, exc.field, exc.reason) from None
        except Exception as exc:  # noqa: BLE001 - the reference failed on this event: its own outcome, never "passed"
            self.failure, self.done, self.first = (index, line, kind, exc), True, -1
            return
        if unit.divergence is not None and unit.divergence.index < self.first and not self.limit:
            # the first divergence ends the replay (check --all goes on to the end)
            self.first = unit.divergence.index

    def _hole(self, index: int, record: dict[str, Any]) -> None:
        """A hole in the capture: each node it touches (every node, without ``nodes``) is judged up to
        here. What such a node still owed is undetermined: it is not finished as missing."""
        self.hole_count += 1
        names = record.get("nodes")
        if len(self.holes) < MAX_HOLES:
            self.holes.append({"event": index, "t": record["t"], "kind": record.get("kind", "unknown"),
                               "text": record.get("text", ""), "nodes": names,
                               **{k: record[k] for k in ("from", "to", "bytes", "frame") if k in record}})
        if names is None:
            self.cut_all = index if self.cut_all is None else self.cut_all
            names = list(self.replays)
        for name in names:
            self.cut.setdefault(name, index)

    def finish(self, feed: _Feed) -> TraceReport:
        """The report, once every event was pushed and close() was called (``feed`` reads the
        trace again if need be; the work done here is not counted as coverage)."""
        self.close()
        report = self._finish(feed)
        if self.cover is None:
            return attrs.evolve(report, coverage_computed=False)
        return attrs.evolve(report, coverage=self.cover.clauses())

    def _finish(self, feed: _Feed) -> TraceReport:
        count = feed.count
        if self.failure is None:
            try:
                for unit in self.units():
                    if unit.name not in self.cut:  # a node judged up to a hole owes nothing past it
                        unit.finish(count, self.clock)
            except Exception as exc:  # noqa: BLE001 - as in _event
                self.failure = (count, feed.line(count), "", exc)
        if self.failure is not None:
            index, where, kind, exc = self.failure
            what = f"event {index} ({kind})" if index < count else "the end of the trace"
            return TraceReport(self.trace_id, self.path, "error", count,
                               _node_states(self.replays, self.others, cut=self.cut),
                               line=where, error=f"{self.path}:{where}: the reference could not take {what}: "
                                              f"{type(exc).__name__}: {exc}")
        units = list(self.units())
        divergences = [u.divergence for u in units if u.divergence is not None]
        found = min(divergences, key=lambda d: (d.index, d.node)) if divergences else None
        errata = sorted({e for u in units for e in u.errata})
        notes = list(self.notes)
        for u in units:
            notes.extend(getattr(u, "notes", ()))
        checked = self.checked + sum(u.checked for u in units)
        listed: list[tuple[Divergence, int]] = []
        if self.limit:
            every = sorted((d for u in units for d in u.found), key=lambda d: (d.index, d.node))[:self.limit]
            listed = [(self._explained(feed, d), feed.line(d.index)) for d in every]
            found = listed[0][0] if listed else None
        elif found is not None:
            found = self._explained(feed, found)
        # a capture with holes is never conformant; a divergence before them still stands
        verdict = ("divergent" if found else "incomplete-capture" if self.hole_count
                   else "conformant" if checked else "nothing-checked")
        if len(notes) > MAX_NOTES:
            notes[MAX_NOTES:] = [f"... and {len(notes) - MAX_NOTES} more notes"]
        return TraceReport(
            self.trace_id, self.path, verdict, count,
            _node_states(self.replays, self.others, self.stopped, self.cut),
            divergence=found, line=feed.line(found.index) if found else None, errata=tuple(errata), checked=checked,
            notes=tuple(notes), holes=tuple(self.holes), holes_total=self.hole_count,
            divergences=tuple(listed), divergence_count=sum(u.count for u in units), all_asked=bool(self.limit),
        )

    def _explained(self, feed: _Feed, found: Divergence) -> Divergence:
        """A divergence with the clause whose rule it breaks worked out (the node replayed again if need be)."""
        if found.blame is not None:
            found = _with_stack(feed, self.replays[found.node], found, self.mode, self.window)
        if found.kind == "state":
            return _attribute_state(feed, self.replays[found.node], found, self.mode, self.window)
        if found.refine and found.cause is not None and found.node in self.replays:
            return _attribute_unexpected(feed, self.replays[found.node], found, self.mode, self.window)
        return found


def _codec_event(replay: NodeReplay, index: int, record: dict[str, Any], notes: list[str]) -> int:
    """A sent MS-MQSD datagram or MS-MQCN notification must decode under the strict codec; a
    server reply's header Version and Reserved are mqspec's policy (E-020), noted, not divergent.
    1 when the event was checked."""
    if record["direction"] != "send" or replay.halted:
        return 0
    from mqspec.model import mqcn

    from .replay_mqsd import decode_sent

    data = bytes.fromhex(record["body"])
    try:
        if record["event"] == "datagram":
            _, note = decode_sent(data)
            if note is not None:
                notes.append(f"event {index}: {note}")
        else:
            mqcn.decode_body(data)
    except DecodeError as exc:
        replay._decode_divergence(index, record, exc)
    return 1


def _node_states(replays: dict[str, NodeReplay], others: dict[str, dict[str, Any]],
                 stopped: int | None = None, cut: dict[str, int] | None = None) -> dict[str, str]:
    out = {}
    for name, r in replays.items():
        extra = others.get(name, {})
        if r.divergence is not None or any(u.divergence is not None for u in extra.values()):
            out[name] = "divergent"
        elif cut and name in cut:
            level = "conformant" if r.qm is not None or extra else "codec-only"
            out[name] = f"{level} up to the hole at event {cut[name]}"
        elif stopped is not None and (r.qm is not None or extra):
            out[name] = f"conformant up to event {stopped}"
        elif extra and r.qm is None:
            out[name] = "conformant (" + ", ".join(f"MS-{p.upper()}" for p in extra) + ")"
        elif not r.behavioural:
            out[name] = "codec-only"
        elif r.qm is None:
            out[name] = "not-started" if r.inputs == 0 else "codec-only (never started)"
        else:
            out[name] = "conformant"
    return out


# --- explaining a divergence --------------------------------------------------------------------


def _again(decl: dict[str, Any], mode: Mode, window: int, observes: frozenset[str]) -> NodeReplay:
    """A node's replay run again to explain a divergence: it does not stop at a divergence of its own
    (with check --all, an earlier one may lie on the way to the one explained)."""
    again = NodeReplay(decl, mode, window, observes)
    again.limit = 1
    return again


def _with_stack(feed: _Feed, replay: NodeReplay, divergence: Divergence, mode: Mode, window: int) -> Divergence:
    """Name the clause of a divergence about an output from the reference's stack when it made it.

    The checker's pass does not record stacks (:class:`~mqspec.oracle.replay.NodeReplay`): the node
    is replayed again from its declaration up to the input that made the output, this time with
    them. Its events up to that input are those the pass gave it (none after the divergence it
    is looking at), and no handover comes before it (a handover turns stacks on in the pass).
    """
    cause, order, innermost = divergence.blame  # type: ignore[misc]
    again = _again(replay.first_decl, mode, window, replay.observes)
    for i, _, record in feed.events(until=cause + 1):
        if i > replay.since and record.get("node") == replay.name and record["event"] in _STACK_AGAIN:
            again.event(i, record)
    # in its batch: an output whose input was inferred from the send itself (a timer, E-333) is taken there
    made = [*again.pending, *(e for outputs in again.batches.values() for e in outputs)]
    stack = next((e.stack for e in made if e.order == order), None) or ()
    return attrs.evolve(divergence, blame=None, **blamed(stack, innermost))


def _attribute_state(feed: _Feed, replay: NodeReplay, divergence: Divergence, mode: Mode,
                     window: int) -> Divergence:
    """Name the handler that last changed the divergent field in the reference.

    The node is replayed again up to the snapshot (its events read once more from the source),
    reading the field after each input; then once more, with a profile hook on the last input
    that changed it, to find the innermost registered function during which it changed. If the
    reference never changed it, the report keeps the handler of the node's last input before the
    snapshot.
    """
    from .state import reference_value

    field = divergence.diff[0]["field"] if divergence.diff else ""
    kinds = _AGAIN

    def mine() -> Iterator[tuple[int, dict[str, Any]]]:
        for i, _, record in feed.events(until=divergence.index):
            if i and record.get("node") == replay.name and record["event"] in kinds:
                yield i, record

    again = _again(replay.decl, mode, window, replay.observes)
    value: Any = _UNSET
    last = None
    for i, record in mine():
        again.event(i, record)
        if record["event"] in INPUT_KINDS:
            now = _safe(reference_value, again.qm, field)
            if now != value:
                last, value = i, now
    if last is None:
        return divergence
    again = _again(replay.decl, mode, window, replay.observes)
    watch = attribution.FieldWatch(lambda: _safe(reference_value, again.qm, field))
    for i, record in mine():
        if i == last:
            again.watch = watch
            again.event(i, record)
            break
        again.event(i, record)
    changed = watch.changed_in or ()
    clause = attribution.responsible(changed) if changed else again._entry_of_last_input()
    return attrs.evolve(divergence, clause=clause, via=changed, cause=last,
                        summary=f"{divergence.summary}; the reference last changed it at event {last}")


def _attribute_unexpected(feed: _Feed, replay: NodeReplay, divergence: Divergence, mode: Mode,
                          window: int) -> Divergence:
    """Name the rule that decided to make no such output: the node is replayed again up to the
    input it answers, and that input once more under :class:`~mqspec.oracle.attribution.DecisionWatch`."""
    kinds = _AGAIN
    again = _again(replay.decl, mode, window, replay.observes)
    watch = attribution.DecisionWatch()
    for i, _, record in feed.events(until=divergence.cause + 1):
        if i and record.get("node") == replay.name and record["event"] in kinds:
            if i == divergence.cause:
                again.watch = watch
            again.event(i, record)
    decider = watch.decider()
    if decider is None or decider == divergence.clause:
        return divergence
    return attrs.evolve(divergence, clause=decider, via=(decider, *((divergence.clause,) if divergence.clause else ())),
                        summary=f"{divergence.summary}; the reference took no further action in "
                                f"{decider.document} {decider.section} {decider.title}")


_UNSET = object()


def _safe(function: Any, *args: Any) -> Any:
    try:
        return function(*args)
    except Exception:  # noqa: BLE001 - the field's partition does not exist (yet): no value
        return None
