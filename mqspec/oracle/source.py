"""Where ``mqspec check`` reads traces from, line by line: a file, text, or any iterable of lines.

The checker never holds a trace in memory: it reads its source twice (or more), each time as a
stream. :func:`survey` is the first pass: it validates every line (a malformed line anywhere is
exit 2 before anything is replayed), checks what a line alone cannot show (each trace begins
with its one header, declares each node before its events, and its clock never runs
backwards), and keeps per trace only what the replay needs in advance: the header, the event
kinds each node logs (its default ``observes``), the number of events and the first and last
line. The later passes (:meth:`LineSource.events`) read one trace's records again, without
validating them twice. An iterable of lines that cannot be read twice is spooled to a temporary
file first (kept in memory up to 8 MB).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

import attrs

from .compression import codec, open_text, stream_errors, text_of
from .trace_format import AT_NODE, NODE_KINDS, TraceError, readable, validate


#: json.loads's own scanner (the C one), called without json.loads's layers and whitespace matches
_SCAN = json.JSONDecoder().scan_once


class LineSource:
    """A re-readable source of NDJSON lines; ``name`` is what messages call it."""

    def __init__(self, name: str, open_lines: Callable[[], Iterator[str]]) -> None:
        self.name = name
        self._open = open_lines

    @classmethod
    def from_path(cls, path: str | Path) -> LineSource:
        """A file, decompressed as its extension says (``.gz``, ``.zst``; :mod:`.compression`)."""
        return cls(str(path), lambda: _decoded(str(path), lambda: open_text(path)))

    @classmethod
    def from_bytes(cls, data: bytes, name: str) -> LineSource:
        """A file's bytes (read by someone else, e.g. Spark), decompressed as ``name``'s extension says."""
        return cls(name, lambda: _decoded(name, lambda: text_of(data, name)))

    @classmethod
    def from_text(cls, text: str, name: str = "<trace>") -> LineSource:
        return cls(name, lambda: iter(text.removeprefix("\ufeff").splitlines()))

    @classmethod
    def from_lines(cls, lines: Iterable[str], name: str = "<lines>") -> LineSource:
        """Lines read once (a pipe, a generator): spooled to a temporary file to be read again."""
        spool: IO[str] = tempfile.SpooledTemporaryFile(max_size=8 << 20, mode="w+", encoding="utf-8")
        for line in lines:
            spool.write(line if line.endswith("\n") else line + "\n")

        def again() -> Iterator[str]:
            spool.seek(0)
            for line in spool:  # not "yield from": closing this generator must not close the spool
                yield line

        return cls(name, again)

    def records(self, *, check: bool = True) -> Iterator[tuple[int, dict[str, Any]]]:
        """(line number, record) of every non-blank line, validated unless ``check`` is False."""
        loads = json.loads
        scan = _SCAN
        name = self.name
        number = 0
        try:
            for raw in self._open():
                number += 1
                try:
                    # the common case: one JSON value from the first character to the end of the
                    # line; anything else (a blank line, spaces, bad JSON) takes json.loads's path
                    record, end = scan(raw, 0)
                    if end != len(raw) and raw[end:] != "\n":
                        record = loads(raw)
                except Exception:  # noqa: BLE001 - json.loads says what is wrong, as it always did
                    try:
                        record = loads(raw)
                    except ValueError as exc:  # json.JSONDecodeError, or a blank line
                        if not raw.strip():
                            continue
                        raise TraceError(name, number, "(line)", f"not JSON: {exc}") from exc
                    except RecursionError:
                        raise TraceError(name, number, "(line)", "not JSON: nested too deeply") from None
                # unchecked (a trace read again): valid already, its 64-bit values made integers
                yield number, (validate(record, name, number) if check else readable(record))
        except UnicodeDecodeError as exc:
            raise TraceError(name, number + 1, "(file)",
                             f"not UTF-8 text ({exc.reason} at byte {exc.start} of the block read)") from None

    def events(self, survey: Survey, *, until: int | None = None) -> Iterator[tuple[int, int, dict[str, Any]]]:
        """(event index, line number, record) of one surveyed trace (the header is event 0),
        read again without validation, up to event index ``until`` (excluded)."""
        tid = survey.trace_id
        index = 0
        limit = survey.events if until is None else min(until, survey.events)
        for number, record in self.records(check=False):
            if number < survey.first_line:
                continue
            if record.get("trace") != tid:
                continue
            if index >= limit:
                return
            yield index, number, record
            index += 1
            if number >= survey.last_line:
                return

    def line_of(self, survey: Survey, index: int) -> int:
        """The line of event ``index`` of a surveyed trace (one past the last line for an index past the end)."""
        if index >= survey.events:
            return survey.last_line + 1
        for i, number, _ in self.events(survey, until=index + 1):
            if i == index:
                return number
        return survey.last_line + 1  # pragma: no cover - index < events always finds its line


def _decoded(name: str, open_stream: Callable[[], IO[str]]) -> Iterator[str]:
    """The lines of a text stream; a file that cannot be opened, or a broken compressed stream, is a TraceError."""
    broken = stream_errors()
    try:
        # utf-8-sig (in open_text / text_of): a byte order mark, as Windows tools write, reads as none
        with open_stream() as f:
            yield from f
    except OSError as exc:  # gzip's "not a gzipped file" is one too
        raise TraceError(name, 0, "(file)", exc.strerror or str(exc)) from exc
    except broken as exc:
        raise TraceError(name, 0, "(file)", f"not a whole {codec(name)} stream: {exc}") from exc


@attrs.define(eq=False)
class Survey:
    """What the first pass learned of one trace (see the module docstring)."""

    trace_id: str
    header: dict[str, Any]
    first_line: int
    last_line: int
    events: int = 1
    kinds: dict[str, set[str]] = attrs.field(factory=dict)  # node -> the NODE_KINDS it logs
    declared: set[str] = attrs.field(factory=set)
    last_t: float = 0.0


#: given a trace's survey as its header is read: None, or where to push its events as they are validated
OnHeader = Callable[["Survey"], Callable[[int, int, dict[str, Any]], object] | None]


def survey(source: LineSource, on_header: OnHeader | None = None) -> list[Survey]:
    """Validate every line of the source; one :class:`Survey` per trace, in order of first appearance.

    ``on_header`` lets a caller replay a trace during this pass: the function it returns for a
    trace receives (event index, line, record) of each of its events once the line is validated.
    """
    name = source.name
    traces: dict[str, Survey] = {}
    node_kinds = frozenset(NODE_KINDS)
    pushing: dict[str, Callable[[int, int, dict[str, Any]], object]] = {}
    batch: list[tuple[Callable[[int, int, dict[str, Any]], object], int, int, dict[str, Any]]] = []
    for number, record in source.records():  # the hot loop of mqspec check: keep it lean
        tid = record["trace"]
        kind = record["event"]
        trace = traces.get(tid)
        if trace is None:
            if kind != "header":
                raise TraceError(name, number, "event", f"trace {tid!r} must begin with a header, not {kind!r}")
            trace = traces[tid] = Survey(tid, record, number, number,
                                         declared={n["name"] for n in record.get("nodes", ())}, last_t=record["t"])
            push = on_header(trace) if on_header is not None else None
            if push is not None:
                pushing[tid] = push
            continue
        if kind == "header":
            raise TraceError(name, number, "event", f"trace {tid!r} already has a header (line {trace.first_line})")
        t = record["t"]
        if t < trace.last_t:
            raise TraceError(name, number, "t", f"{t} is earlier than the previous event's {trace.last_t}")
        trace.last_t = t
        if kind == "node":
            trace.declared.add(record["name"])
        elif kind in AT_NODE:
            node = record["node"]
            if node not in trace.declared:
                raise TraceError(name, number, "node", f"{node!r} is not declared (header nodes or a node event)")
            if kind in node_kinds:
                seen = trace.kinds.get(node)
                if seen is None:
                    seen = trace.kinds[node] = set()
                seen.add(kind)
        push = pushing.get(tid)
        if push is not None:
            # pushed in batches: reading and replaying alternate in long runs, which is faster
            # than line by line (a bounded buffer: BATCH events, none after a snapshot)
            batch.append((push, trace.events, number, record))
            if len(batch) >= BATCH or kind == "snapshot":  # a snapshot can be large: not held
                _flush(batch)
        trace.events += 1
        trace.last_line = number
    _flush(batch)
    if not traces:
        raise TraceError(name, 0, "(file)", "no trace lines")
    return list(traces.values())


#: how many validated events survey() holds before pushing them
BATCH = 4096


def _flush(batch: list[tuple[Callable[[int, int, dict[str, Any]], object], int, int, dict[str, Any]]]) -> None:
    for push, index, number, record in batch:
        push(index, number, record)
    batch.clear()
