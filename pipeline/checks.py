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
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa

TRACE_SUFFIXES = (".ndjson",)
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


def input_kind(path: str) -> str:
    """A capture by its name, or (a file named otherwise) by its first bytes; else a trace."""
    from mqspec.capture.reader import sniff

    return "capture" if path.lower().endswith(CAPTURE_SUFFIXES) or sniff(path) is not None else "trace"


def check_rows(path: str) -> Iterator[dict[str, Any]]:
    """The rows of one input (see the module docstring); never raises for a bad input."""
    from mqspec.oracle.check import check

    kind = input_kind(path)
    if kind == "capture":
        yield from _capture_rows(path)
        return
    try:  # streamed from the file by the checker (a BOM, unreadable bytes: its errors)
        reports = list(check(path).traces)
    except RecursionError:
        yield _row("quarantine", path, kind, error="trace error: a trace line is nested too deeply")
        return
    except Exception as exc:  # noqa: BLE001 - every failure to read an input is that input's quarantine
        yield _row("quarantine", path, kind, error=_one_line(exc))
        return
    yield from _verdict(path, kind, reports)
    yield from message_rows(path, kind)


def _capture_rows(path: str) -> Iterator[dict[str, Any]]:
    """A capture, converted (with its topology sidecar) into a temporary trace the checker streams;
    its verdict row carries what it held. A file cut mid-record is used up to the cut (incomplete-capture)."""
    from mqspec.oracle import topology
    from mqspec.oracle.check import check_source
    from mqspec.oracle.from_pcap import capture_trace

    try:
        with capture_trace(path, topology=topology.for_capture(path)) as (source, conversion):
            reports = check_source(source)
            held = conversion.summary
            counts = {"frames": held.frames, "capture_messages": held.decoded, "holes": held.holes_total,
                      "frames_skipped": dict(sorted(held.skipped.items()))}
            yield from _verdict(path, "capture", reports, counts)
            yield from message_rows(path, "capture", source=source)
    except RecursionError:
        yield _row("quarantine", path, "capture", error="trace error: a trace line is nested too deeply")
    except Exception as exc:  # noqa: BLE001 - every failure to read an input is that input's quarantine
        yield _row("quarantine", path, "capture", error=_one_line(exc))


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


def message_rows(path: str, kind: str, source: Any = None) -> Iterator[dict[str, Any]]:
    """One row per wire message (replication sends and receives, MS-MQSD datagrams, MS-MQCN bodies).

    The file is read again rather than through the checker's events: the checker stops at a trace's
    first divergence, and ``messages/`` holds every message. ``source``: a capture's converted trace.
    """
    from mqspec.oracle.trace_format import read_lines

    for _, record in (source.records() if source is not None else read_lines(path)):
        protocol = _EVENT_PROTOCOL.get(record["event"])
        if protocol is None:
            continue
        direction = record.get("direction") or record["event"]
        row = _row("message", path, kind, trace=record["trace"], t=float(record["t"]), node=record.get("node"),
                   direction=direction, protocol=protocol,
                   peer=record.get("to") if direction == "send" else record.get("from"))
        row.update(message_fields(protocol, record.get("body", "")))
        yield row


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


def arrow_batches(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """The ``mapInArrow`` function: input paths (column ``path``) in, tagged rows out."""
    for batch in batches:
        for path in batch.column("path").to_pylist():
            rows: list[dict[str, Any]] = []
            for row in check_rows(path):
                rows.append(row)
                if len(rows) >= 4096:  # a long trace's messages leave in bounded batches
                    yield pa.RecordBatch.from_pylist(rows, schema=ROW_SCHEMA)
                    rows = []
            if rows:
                yield pa.RecordBatch.from_pylist(rows, schema=ROW_SCHEMA)
