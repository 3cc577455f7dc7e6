"""The per-input work of ``mqspec pipeline check``, as plain functions (no Spark here).

:func:`check_rows` judges one input (a trace, or a capture converted as ``mqspec trace from-pcap``
converts it) with the checker of ``mqspec check`` and yields tagged rows, one table per tag:

- ``verdict``: one per input that could be read (path, kind, verdict, events, nodes, and the
  first divergence: event, node, clause, diff summary; for a capture, what it held: frames read,
  messages, frames skipped by reason, holes);
- ``divergence``: one per divergent trace of the input;
- ``coverage``: one per clause the input exercised;
- ``message``: one per wire message in the input (time, node, direction, protocol, message type
  and its key header fields: partition, sequence numbers, counts);
- ``quarantine``: one per input that is not a valid trace or capture, with the one-line error
  ``mqspec check`` would print.

Every input gives exactly one ``verdict`` or one ``quarantine`` row, so the counts reconcile.
An input is read once: the checker's first, validating pass over it also makes its message rows.
On Spark the inputs arrive as their bytes (read by Spark's file systems on the executors:
:func:`arrow_batches`); compressed traces (``.ndjson.gz``, ``.ndjson.zst``) are decompressed as
they are read.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pyarrow as pa

from mqspec.oracle.source import LineSource

TRACE_SUFFIXES = (".ndjson", ".ndjson.gz", ".ndjson.zst")
#: captures are read by their content (pcap or pcapng, plain or compressed), found by these names
CAPTURE_SUFFIXES = (".pcap", ".pcapng", ".cap", ".pcap.gz", ".pcapng.gz", ".cap.gz")
#: a capture's node declarations, beside it: ``capture.pcap`` -> ``capture.topology.json``
TOPOLOGY_SUFFIX = ".topology.json"

SEQ = pa.decimal128(20, 0)  # a SEQUENCE_NUMBER is unsigned 64-bit: wider than Spark's LongType
ROW_SCHEMA = pa.schema([
    ("table", pa.string()), ("path", pa.string()), ("kind", pa.string()), ("trace", pa.string()),
    ("verdict", pa.string()), ("conformant", pa.bool_()), ("events", pa.int64()), ("nodes", pa.int64()),
    ("event", pa.int64()), ("node", pa.string()), ("clause", pa.string()), ("summary", pa.string()),
    ("divergence_kind", pa.string()), ("diff", pa.list_(pa.string())), ("error", pa.string()),
    ("t", pa.float64()), ("direction", pa.string()), ("peer", pa.string()), ("protocol", pa.string()),
    ("message_type", pa.string()), ("partition", pa.string()), ("seq_low", SEQ), ("seq", SEQ),
    ("purged", SEQ), ("count", pa.int64()),
    # a capture's verdict row: what it held
    ("frames", pa.int64()), ("capture_messages", pa.int64()), ("holes", pa.int64()),
    ("frames_skipped", pa.map_(pa.string(), pa.int64())),
])
TABLES = ("verdict", "divergence", "coverage", "message", "quarantine")


def find_inputs(paths: Iterable[str | Path]) -> list[str]:
    """The inputs named: files as given, directories searched recursively for traces and captures (sorted)."""
    return search_inputs(paths)[0]


def search_inputs(paths: Iterable[str | Path]) -> tuple[list[str], list[str]]:
    """(the inputs, the files the folder search skipped): files named are inputs as given; in a folder,
    traces and captures by their names, every other file skipped (a capture's topology sidecar is read
    with its capture, not skipped)."""
    found: list[str] = []
    skipped: list[str] = []
    for p in map(Path, paths):
        if p.is_dir():
            for f in sorted(p.rglob("*")):
                if not f.is_file():
                    continue
                name = f.name.lower()
                if name.endswith(TRACE_SUFFIXES + CAPTURE_SUFFIXES):
                    found.append(str(f))
                elif not name.endswith(TOPOLOGY_SUFFIX):
                    skipped.append(str(f))
        else:
            found.append(str(p))
    return sorted(dict.fromkeys(found)), sorted(dict.fromkeys(skipped))


def is_input(name: str) -> bool:
    return name.lower().endswith(TRACE_SUFFIXES + CAPTURE_SUFFIXES)


def sidecar_of(path: str) -> str:
    """Where a capture's topology is, as a string of the same form (a URI stays a URI): ``lab.pcap`` ->
    ``lab.topology.json`` (``lab.pcapng``, ``lab.pcap.gz``, ``lab.cap`` alike)."""
    suffix = next((s for s in CAPTURE_SUFFIXES if path.lower().endswith(s)), Path(path).suffix)
    return path[: len(path) - len(suffix)] + TOPOLOGY_SUFFIX


def input_kind(path: str) -> str:
    """A capture by its name, or (a file named otherwise) by its first bytes; else a trace."""
    from mqspec.capture.reader import sniff

    lower = path.lower()
    if lower.endswith(TRACE_SUFFIXES):
        return "trace"
    return "capture" if lower.endswith(CAPTURE_SUFFIXES) or sniff(path) is not None else "trace"


def check_rows(path: str, data: bytes | None = None, topology: str | None = None) -> Iterator[dict[str, Any]]:
    """The rows of one input (see the module docstring); never raises for a bad input.

    ``data``: the input's bytes (else it is read from ``path``); ``topology``: a capture's sidecar text
    (else the sidecar beside ``path`` is read, if there is one).
    """
    heads, messages = judge(path, data, topology)
    yield from heads
    for batch in messages:
        for row in batch.to_pylist():
            yield {k: v for k, v in row.items() if v is not None or k in ("table", "path", "kind")}


def judge(path: str, data: bytes | None = None,
          topology: str | None = None) -> tuple[list[dict[str, Any]], list[pa.RecordBatch]]:
    """An input's verdict (or quarantine), divergence and coverage rows, and its message rows as Arrow
    batches (compact: a long trace has many), from the checker's one pass over it."""
    if data is not None and not path.lower().endswith(TRACE_SUFFIXES):
        # a capture (or a file named neither way) is read from a file: these bytes, under its name
        with tempfile.TemporaryDirectory(prefix="mqspec-input-") as tmp:
            local = Path(tmp) / Path(unquote(urlsplit(path).path)).name
            local.write_bytes(data)
            heads, messages = judge(str(local), None, topology if topology is not None else "")
        return [_renamed(row, str(local), path) for row in heads], [
            pa.RecordBatch.from_pylist([_renamed(r, str(local), path) for r in b.to_pylist()], schema=ROW_SCHEMA)
            for b in messages]
    kind = input_kind(path)
    messages = _Messages(path, kind)
    if kind == "capture":
        return _capture_rows(path, topology, messages), messages.close()
    from mqspec.oracle.check import check_source

    try:  # streamed, decompressed as its extension says (a BOM, bad bytes: the checker's own errors)
        source = LineSource.from_path(path) if data is None else LineSource.from_bytes(data, path)
        reports = check_source(_Teed(source, messages.add))
    except RecursionError:
        return [_row("quarantine", path, kind, error="trace error: a trace line is nested too deeply")], []
    except Exception as exc:  # noqa: BLE001 - every failure to read an input is that input's quarantine
        return [_row("quarantine", path, kind, error=_one_line(exc))], []
    return list(_verdict(path, kind, reports)), messages.close()


def _renamed(row: dict[str, Any], local: str, path: str) -> dict[str, Any]:
    """A row made from a temporary copy, naming the input instead."""
    row = dict(row, path=path)
    if row.get("error"):
        row["error"] = row["error"].replace(local, path)
    return row


class _Teed(LineSource):
    """A source whose validating pass (the checker's first, and only full, read) also hands each record on."""

    def __init__(self, inner: LineSource, each: Callable[[dict[str, Any]], None]) -> None:
        super().__init__(inner.name, inner._open)
        self._each = each

    def records(self, *, check: bool = True) -> Iterator[tuple[int, dict[str, Any]]]:
        for number, record in super().records(check=check):
            if check:
                self._each(record)
            yield number, record


def _capture_rows(path: str, topology_text: str | None, messages: _Messages) -> list[dict[str, Any]]:
    """A capture, converted (with its topology: ``topology_text``, else the sidecar beside it) into a
    temporary trace the checker streams; its verdict row carries what it held. A file cut mid-record is
    used up to the cut (incomplete-capture)."""
    from mqspec.oracle import topology
    from mqspec.oracle.check import check_source
    from mqspec.oracle.from_pcap import capture_trace

    try:
        declared = (topology.for_capture(path) if topology_text is None else
                    topology.load(json.loads(topology_text), sidecar_of(path)) if topology_text else topology.Topology())
        with capture_trace(path, topology=declared) as (source, conversion):
            reports = check_source(_Teed(source, messages.add))
            held = conversion.summary
            counts = {"frames": held.frames, "capture_messages": held.decoded, "holes": held.holes_total,
                      "frames_skipped": dict(sorted(held.skipped.items()))}
            return list(_verdict(path, "capture", reports, counts))
    except RecursionError:
        messages.clear()
        return [_row("quarantine", path, "capture", error="trace error: a trace line is nested too deeply")]
    except Exception as exc:  # noqa: BLE001 - every failure to read an input is that input's quarantine
        messages.clear()
        return [_row("quarantine", path, "capture", error=_one_line(exc))]


def _one_line(exc: Exception) -> str:
    """The error line ``mqspec check`` (or ``trace from-pcap``) prints, without its ``mqspec:`` prefix."""
    from mqspec.capture import CaptureError
    from mqspec.model.errors import DecodeError
    from mqspec.oracle.topology import TopologyError
    from mqspec.oracle.trace_format import TraceError

    label = ("trace error" if isinstance(exc, TraceError) else "capture error" if isinstance(exc, CaptureError)
             else "topology error" if isinstance(exc, TopologyError)
             else "decode error" if isinstance(exc, DecodeError)
             else "json error" if isinstance(exc, json.JSONDecodeError) else "error")
    return f"{label}: {' '.join(str(exc).split())}"


def _verdict(path: str, kind: str, reports: list[Any], counts: dict[str, Any] | None = None) -> Iterator[dict[str, Any]]:
    # a file of several traces: its worst verdict (an error, a divergence, holes, nothing checked)
    bad = [r.verdict for r in reports if r.verdict != "conformant"]
    overall = next((v for v in ("error", "divergent", "incomplete-capture") if v in bad), bad[0]) if bad else "conformant"
    first = next((r for r in reports if r.divergence is not None), None)
    errored = next((r for r in reports if r.error), None)
    row = _row("verdict", path, kind, trace=",".join(r.trace_id for r in reports), verdict=overall,
               conformant=overall == "conformant", events=sum(r.events for r in reports),
               nodes=sum(len(r.nodes) for r in reports), error=errored.error if errored else None)
    if first is not None:
        row.update(_divergence_fields(first))
    row.update(counts or {})
    yield row
    for r in reports:
        if r.divergence is not None:
            yield {**_row("divergence", path, kind, trace=r.trace_id, verdict=r.verdict), **_divergence_fields(r)}
    for clause in sorted({f"{c.document} {c.section}" for r in reports for c in r.coverage}):
        yield _row("coverage", path, kind, clause=clause)


def _divergence_fields(report: Any) -> dict[str, Any]:
    d = report.divergence
    return {"event": d.index, "node": d.node, "divergence_kind": d.kind, "summary": d.summary,
            "clause": f"{d.clause.document} {d.clause.section}" if d.clause is not None else None,
            "diff": [json.dumps(item, sort_keys=True, default=str) for item in d.diff]}


def _row(table: str, path: str, kind: str, **fields: Any) -> dict[str, Any]:
    return {"table": table, "path": path, "kind": kind, **fields}


# --- messages ---------------------------------------------------------------------------------

_EVENT_PROTOCOL = {"send": "mqdsrp", "receive": "mqdsrp", "datagram": "mqsd", "notification": "mqcn"}


class _Messages:
    """Message rows of one input, made from its records as the checker validates them, kept as Arrow batches."""

    def __init__(self, path: str, kind: str) -> None:
        self.path, self.kind = path, kind
        self.rows: list[dict[str, Any]] = []
        self.batches: list[pa.RecordBatch] = []

    def add(self, record: dict[str, Any]) -> None:
        row = message_row(self.path, self.kind, record)
        if row is not None:
            self.rows.append(row)
            if len(self.rows) >= 4096:
                self.batches.append(pa.RecordBatch.from_pylist(self.rows, schema=ROW_SCHEMA))
                self.rows = []

    def clear(self) -> None:
        self.rows, self.batches = [], []

    def close(self) -> list[pa.RecordBatch]:
        if self.rows:
            self.batches.append(pa.RecordBatch.from_pylist(self.rows, schema=ROW_SCHEMA))
            self.rows = []
        return self.batches


def message_row(path: str, kind: str, record: dict[str, Any]) -> dict[str, Any] | None:
    """A wire message's row (replication sends and receives, MS-MQSD datagrams, MS-MQCN bodies), or None.

    Every message of the input has one, also past a divergence (where the checker stops replaying).
    """
    protocol = _EVENT_PROTOCOL.get(record["event"])
    if protocol is None:
        return None
    direction = record.get("direction") or record["event"]
    row = _row("message", path, kind, trace=record["trace"], t=float(record["t"]), node=record.get("node"),
               direction=direction, protocol=protocol,
               peer=record.get("to") if direction == "send" else record.get("from"))
    row.update(message_fields(protocol, record.get("body", "")))
    return row


def message_fields(protocol: str, body_hex: str) -> dict[str, Any]:
    """The message type and key header fields of one body (``error`` when it does not decode)."""
    from mqspec.protocols import codec

    try:
        message = codec(protocol).decode(bytes.fromhex(body_hex), lenient=True)
    except Exception as exc:  # noqa: BLE001 - an undecodable body is a row with its error, not a failure
        return {"message_type": None, "error": _one_line(exc)}
    fields: dict[str, Any] = {"message_type": type(message).__name__}
    changes = getattr(message, "changes", None)
    if changes:
        seqs = [int(c.seq_number) for c in changes]
        fields.update(partition=str(changes[0].partition_id), seq_low=Decimal(min(seqs)), seq=Decimal(max(seqs)),
                      purged=Decimal(max(int(c.purged_seq_number) for c in changes)), count=len(changes))
    partition = getattr(message, "partition_id", None) or getattr(message, "acked_partition_id", None)
    if partition is not None:
        fields["partition"] = str(partition)
    for name, column in (("from_seq_number", "seq_low"), ("to_seq_number", "seq"), ("acked_seq_number", "seq"),
                         ("purged_seq_number", "purged"), ("known_purged_seq_number", "purged")):
        value = getattr(message, name, None)
        if value is not None:
            fields[column] = Decimal(int(value))
    if changes is not None:
        fields["count"] = len(changes)
    header = getattr(message, "seq_numbers", None)
    if header is not None and not changes and header.partitions:
        fields["count"] = len(header.partitions)
    return fields


def arrow_batches(batches: Iterable[pa.RecordBatch], topologies: dict[str, str]) -> Iterator[pa.RecordBatch]:
    """The ``mapInArrow`` function: inputs (columns ``path`` and ``content``, as Spark's ``binaryFile``
    source reads them) in, tagged rows out; ``topologies``: capture path -> its sidecar's text."""
    for batch in batches:
        for path, content in zip(batch.column("path").to_pylist(), batch.column("content").to_pylist()):
            heads, messages = judge(path, content, topologies.get(path))
            yield pa.RecordBatch.from_pylist(heads, schema=ROW_SCHEMA)
            yield from messages
