"""The per-input work of ``mqspec pipeline check``, as plain functions (no Spark here).

:func:`check_rows` judges one input (a trace, or a capture converted as ``mqspec trace from-pcap``
converts it) with the checker of ``mqspec check`` and yields tagged rows, one table per tag:

- ``verdict``: one per input that could be read (path, kind, verdict, events, nodes, and the
  first divergence: event, node, clause, diff summary);
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
CAPTURE_SUFFIXES = (".pcap", ".pcapng")
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
])
TABLES = ("verdict", "divergence", "coverage", "message", "quarantine")


def find_inputs(paths: Iterable[str | Path]) -> list[str]:
    """The inputs named: files as given, directories searched recursively for traces and captures (sorted)."""
    found: list[str] = []
    for p in map(Path, paths):
        if p.is_dir():
            found.extend(str(f) for f in sorted(p.rglob("*"))
                         if f.is_file() and f.name.lower().endswith(TRACE_SUFFIXES + CAPTURE_SUFFIXES))
        else:
            found.append(str(p))
    return sorted(dict.fromkeys(found))


def input_kind(path: str) -> str:
    return "capture" if path.lower().endswith(CAPTURE_SUFFIXES) else "trace"


def check_rows(path: str) -> Iterator[dict[str, Any]]:
    """The rows of one input (see the module docstring); never raises for a bad input."""
    from mqspec.oracle.check import check, check_text

    kind = input_kind(path)
    text = None
    try:
        if kind == "trace":  # streamed from the file by the checker (a BOM, unreadable bytes: its errors)
            reports = list(check(path).traces)
        else:
            text = _capture_text(path)
            reports = check_text(text, path)
    except RecursionError:
        yield _row("quarantine", path, kind, error="trace error: a trace line is nested too deeply")
        return
    except Exception as exc:  # noqa: BLE001 - every failure to read an input is that input's quarantine
        yield _row("quarantine", path, kind, error=_one_line(exc))
        return
    yield from _verdict(path, kind, reports)
    yield from message_rows(path, kind, text)


def _capture_text(path: str) -> str:
    """A capture as trace text, converted with its topology sidecar when there is one."""
    from mqspec.oracle.from_pcap import convert

    sidecar = Path(path[: -len(Path(path).suffix)] + TOPOLOGY_SUFFIX)
    topology: list[dict[str, Any]] = []
    if sidecar.exists():
        data = json.loads(sidecar.read_text(encoding="utf-8"))
        topology = data.get("nodes", []) if isinstance(data, dict) else data
    return convert(path, topology=topology)


def _one_line(exc: Exception) -> str:
    """The error line ``mqspec check`` (or ``trace from-pcap``) prints, without its ``mqspec:`` prefix."""
    from mqspec.capture import CaptureError
    from mqspec.model.errors import DecodeError
    from mqspec.oracle.trace_format import TraceError

    label = ("trace error" if isinstance(exc, TraceError) else "capture error" if isinstance(exc, CaptureError)
             else "decode error" if isinstance(exc, DecodeError)
             else "json error" if isinstance(exc, json.JSONDecodeError) else "error")
    return f"{label}: {' '.join(str(exc).split())}"


def _verdict(path: str, kind: str, reports: list[Any]) -> Iterator[dict[str, Any]]:
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


def message_rows(path: str, kind: str, text: str | None = None) -> Iterator[dict[str, Any]]:
    """One row per wire message (replication sends and receives, MS-MQSD datagrams, MS-MQCN bodies).

    The file is read again rather than through the checker's events: the checker stops at a trace's
    first divergence, and ``messages/`` holds every message. ``text``: a capture's converted trace.
    """
    from mqspec.oracle.trace_format import read_lines

    for _, record in read_lines(path, text):
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
