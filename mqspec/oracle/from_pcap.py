"""A trace built from a packet capture (``mqspec trace from-pcap``), through :mod:`mqspec.capture`.

Every message :func:`mqspec.capture.scan_capture` finds becomes events of the published format:

* an MS-MQSD datagram: a ``datagram`` event (``direction`` send) at its sender and, unless it
  was broadcast, one (``direction`` receive) at its destination: a destination declared with
  ``"mqsd": {"role": "server", ...}`` in the topology has its replies checked against 3.2.5.1;
* an MC-MQDSRP message to a replication queue: a ``send`` at its sender (with the MSMQ properties
  the capture shows: destination queue, priority, class, administration and response queues,
  hash algorithm) and a ``receive`` at its destination; an acknowledgment or Nack (class not
  Normal, made by the MSMQ transport, not by the directory service) only the ``receive``;
* an MS-MQCN notification: a ``notification`` send at its sender and receive at its destination.

A message whose bytes do not decode keeps its bytes (``mqspec check`` then reports the decode
error with the section); a stretch of TCP stream that cannot be framed becomes a ``note``.

Servers are named by address: ``names`` maps an IP address to a machine name; otherwise a
replication message's destination format name ``DIRECT=OS:<machine>\\...`` names the machine
at its destination address; otherwise the address itself is the name. A capture shows neither
roles nor server starts, so the servers are declared without a role and checked at codec level,
unless ``topology`` declarations (with ``role``, ``site``, ``identifier``, ``pec``) are given and
the trace is extended with their ``start`` events.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from mqspec.capture import mqqb
from mqspec.capture.scan import scan_raw

from .trace_format import TraceWriter, header


def host(address: str) -> str:
    """The IP address of an ``address:port`` endpoint (``[v6]:port`` too)."""
    if address.startswith("["):
        return address[1:address.index("]")]
    return address.rpartition(":")[0] or address


def _direct_machine(queue: str | None) -> str | None:
    """``DIRECT=OS:pec0\\private$\\mqis_queue$`` names machine ``pec0``; other forms name none."""
    if not queue or not queue.upper().startswith("DIRECT=OS:"):
        return None
    machine = queue[10:].replace("/", "\\").split("\\", 1)[0]
    return machine or None


def convert(path: str | Path, *, trace_id: str | None = None, names: dict[str, str] | None = None,
            topology: Iterable[dict[str, Any]] = (), lenient: bool = False) -> str:
    """The NDJSON text of the trace a capture shows (CaptureError for an unreadable file)."""
    out = io.StringIO()
    write_trace(path, out.write, trace_id=trace_id, names=names, topology=topology, lenient=lenient)
    return out.getvalue()


def write_trace(path: str | Path, write: Callable[[str], object], *, trace_id: str | None = None,
                names: dict[str, str] | None = None, topology: Iterable[dict[str, Any]] = (),
                lenient: bool = False) -> int:
    """Write the trace a capture shows line by line through ``write``; the number of lines.

    The capture is scanned first (a CaptureError comes before anything is written), then its
    rows are written (:func:`write_rows`).
    """
    name = Path(path).name
    return write_rows(scan_raw(path, lenient=lenient), write, trace_id=trace_id or f"pcap:{name}",
                      source=f"pcap {name}", names=names, topology=topology)


def write_rows(rows: list[dict[str, Any]], write: Callable[[str], object], *, trace_id: str, source: str,
               names: dict[str, str] | None = None, topology: Iterable[dict[str, Any]] = ()) -> int:
    """Write the trace of a capture's rows (:func:`~mqspec.capture.scan.scan_raw`) line by line; the
    number of lines.

    Each row's events are written as they are made: beyond the rows, memory does not grow with
    the capture. The header (which declares every server the capture shows) comes from a first
    look at the rows.
    """
    declared = {d["name"]: dict(d) for d in topology}
    name_of: dict[str, str] = dict(names or {})
    for decl in declared.values():
        for address in decl.get("addresses", ()):
            name_of.setdefault(address, decl["name"])
    for row in rows:  # a direct format name tells the destination's machine name
        machine = _direct_machine(row.get("queue"))
        if machine is not None and row["protocol"] == "mqdsrp":
            name_of.setdefault(host(row["dst"]), machine)

    def node(address: str) -> str:
        ip = host(address)
        name = name_of.setdefault(ip, ip)
        decl = declared.setdefault(name, {"name": name})
        if ip not in decl.setdefault("addresses", []):
            decl["addresses"].append(ip)
        return name

    for row in rows:  # every server a message names, in the order the events name them
        if row.get("_raw") is not None:
            node(row["src"])
            node(row["dst"])
    writer = TraceWriter(trace_id, write)
    writer(header(source=source, nodes=declared.values()))
    last_t = rows[0]["time"] if rows else 0.0
    start = last_t
    for row in rows:
        t = max(row["time"], last_t)  # a capture's clock can step back; a trace's cannot
        last_t = t
        for event in _events(row, round(t - start, 6), node):
            writer(event)
    return writer.count


def _events(row: dict[str, Any], t: float, node: Any) -> list[dict[str, Any]]:
    protocol = row["protocol"]
    raw = row.get("_raw")
    if raw is None:  # a stretch of TCP stream that is not a message: nothing a server did
        return [{"event": "note", "t": t, "text": f"frame {row['frame']}: {row.get('error', protocol)}"}]
    src, dst = node(row["src"]), node(row["dst"])
    body = raw["bytes"].hex()
    if protocol == "mqsd":
        common = {"event": "datagram", "t": t, "from": row["src"], "to": row["dst"], "body": body, "transport": "ip"}
        sent = {**common, "node": src, "direction": "send"}
        if host(row["dst"]).endswith(".255"):
            return [sent]  # a broadcast: which servers received it, the capture does not say
        return [sent, {**common, "node": dst, "direction": "receive"}]
    message: mqqb.UserMessage | None = raw.get("message")
    queue = message.format_name("destination") if message is not None else row.get("queue")
    klass = message.properties.message_class if message is not None else row.get("message_class", 0)
    if protocol == "mqcn":
        common = {"t": t, "body": body, "from": src, "to": dst, **({"queue": queue} if queue else {})}
        return [{"event": "notification", "node": src, "direction": "send", **common},
                {"event": "notification", "node": dst, "direction": "receive", **common}]
    received = {"event": "receive", "t": t, "node": dst, "from": src, "class": klass, "body": body}
    if queue:
        received["queue"] = queue
    if klass != 0:
        return [received]  # an acknowledgment is the transport's, not the sender's directory service
    sent: dict[str, Any] = {"event": "send", "t": t, "node": src, "to": dst, "body": body}
    if message is not None:
        sent.update({"priority": message.base_flags & mqqb.BF_PRIORITY, "class": klass,
                     "admin_queue": message.format_name("admin"), "response_queue": message.format_name("response"),
                     "hash_algorithm": message.properties.hash_algorithm})
    if queue:
        sent["queue"] = queue
    return [sent, received]
