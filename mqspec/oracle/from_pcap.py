"""A trace built from a packet capture (``mqspec trace from-pcap``), read through :mod:`mqspec.capture`.

Every message the capture holds becomes events of the published format:

* an MS-MQSD datagram: a ``datagram`` event (``direction`` send) at its sender and one (``direction``
  receive) at its destination, or, for a broadcast, at every declared MS-MQSD server it reaches
  (:meth:`~mqspec.oracle.topology.Topology.receivers`); a node declared with ``"mqsd": {"role":
  "server", ...}`` has its replies checked against 3.2.5.1;
* an MC-MQDSRP message to a replication queue: a ``send`` at its sender (with the MSMQ properties the
  capture shows: destination queue, priority, class, administration and response queues, hash
  algorithm) and a ``receive`` at its destination; an acknowledgment or Nack (class not Normal,
  made by the MSMQ transport, not by the directory service) only the ``receive``;
* an MS-MQCN notification: a ``notification`` send at its sender and receive at its destination;
* a hole in the capture (a datagram or segment the snap length cut, a TCP gap, an IP fragment never
  seen, a message the capture began or ended inside of, the file cut mid-record): a ``hole`` event
  at the nodes it touches, which ``mqspec check`` judges up to it and no further (verdict
  ``incomplete-capture``).

A message whose bytes do not decode keeps its bytes (``mqspec check`` then reports the decode error
with the section); a stretch of TCP stream that cannot be framed becomes a ``note``. Which endpoint
is which node, and which endpoints are peers (not judged), the topology says
(:mod:`mqspec.oracle.topology`); ``names`` (``--node NAME=ADDRESS``) names undeclared ones. A server
the topology gives a ``role`` and a ``start`` is replayed through the MC-MQDSRP reference from that
start; its timer expiries, which no capture shows, are taken from the sends they explain (E-333).

The capture is read twice, streaming both times: once to learn the machine names the ``DIRECT=OS:``
format names give (so the header can declare every node), once to write the trace line by line.
Memory does not grow with the capture.
"""

from __future__ import annotations

import io
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs

from mqspec.capture import mqqb
from mqspec.capture.scan import Ports, Scan
from mqspec.capture.summary import CaptureSummary
from mqspec.wording import plural

from .source import LineSource
from .topology import Topology, load, split
from .trace_format import TraceError, TraceWriter, header


def host(address: str) -> str:
    """The IP address of an ``address:port`` endpoint (``[v6]:port`` too)."""
    return split(address)[0]


def _direct_machine(queue: str | None) -> str | None:
    """``DIRECT=OS:pec0\\private$\\mqis_queue$`` names machine ``pec0``; other forms name none."""
    if not queue or not queue.upper().startswith("DIRECT=OS:"):
        return None
    machine = queue[10:].replace("/", "\\").split("\\", 1)[0]
    return machine or None


@attrs.define
class Conversion:
    """What converting a capture did: trace lines written, the capture's summary, nodes, peers."""

    lines: int
    summary: CaptureSummary
    nodes: list[str]
    peer_messages: int = 0  # messages between endpoints the topology does not declare: not in the trace
    codec_only: list[str] = attrs.Factory(list)  # nodes with a role but no start: checked at codec level

    def to_json(self) -> dict[str, Any]:
        return {"lines": self.lines, "nodes": self.nodes, "peer_messages": self.peer_messages,
                "codec_only": self.codec_only, "capture": self.summary.to_json()}

    def notes(self) -> list[str]:
        out = []
        if self.peer_messages:
            out.append(f"left out of the trace, as peers are not judged: {plural(self.peer_messages, 'message')} "
                       "between endpoints the topology does not declare")
        for name in self.codec_only:
            out.append(f"{name} has a role but no \"start\": checked at codec level (declare when it starts to "
                       "replay it through the MC-MQDSRP reference)")
        return out


class _Names:
    """Which node each endpoint is (see :mod:`mqspec.oracle.topology`), learned in the first pass."""

    def __init__(self, topology: Topology, names: dict[str, str], ports: Ports) -> None:
        self.topology, self.ports = topology, ports
        self.names = {k.lower(): v for k, v in names.items()}
        self.direct: dict[str, str] = {}  # IP -> the machine DIRECT=OS: format names give it
        self.learned: dict[str, str] = {}  # undeclared node -> its address, in order of appearance
        self.cache: dict[tuple[str, bool], str | None] = {}
        self.seen: dict[tuple[str, bool], None] = {}  # the endpoints of messages, in order

    def learn(self, row: dict[str, Any]) -> None:
        """The first pass: machine names from format names, and the endpoints of messages."""
        if "hole" in row or row.get("src") is None:
            return
        udp = row["protocol"] == "mqsd"
        if row["protocol"] == "mqdsrp":
            machine = _direct_machine(row.get("queue"))
            if machine is not None:
                self.direct.setdefault(host(row["dst"]), machine)
        self.seen[(row["src"], udp)] = None
        if not (udp and self.broadcast(row) is not None):
            self.seen[(row["dst"], udp)] = None

    def learned_nodes(self) -> None:
        """After the first pass: the undeclared nodes, in order of appearance."""
        for endpoint, udp in self.seen:
            name = self.node(endpoint, udp)
            if name is not None and name not in self.learned and name not in self.topology.addresses:
                self.learned[name] = endpoint if udp and name == endpoint else host(endpoint)
        self.seen.clear()

    def node(self, endpoint: str, udp: bool) -> str | None:
        """The node an endpoint is, or None for a peer (an endpoint a topology does not declare)."""
        key = (endpoint, udp)
        if key in self.cache:
            return self.cache[key]
        name = self.topology.node_of(endpoint, udp)
        if name is None:
            named = self.names.get(endpoint.lower()) or self.names.get(host(endpoint).lower())
            if named is not None:
                name = named
            elif not self.topology.declares:
                name = self.label(endpoint, udp)
        self.cache[key] = name
        return name

    def label(self, endpoint: str, udp: bool) -> str:
        """The name an undeclared endpoint goes by (a peer's too, in ``from`` and ``to``)."""
        named = self.names.get(endpoint.lower()) or self.names.get(host(endpoint).lower())
        if named is not None:
            return named
        ip, port = split(endpoint)
        if not udp:
            return self.direct.get(ip, ip)
        return endpoint if port in self.ports.mqsd else ip

    def broadcast(self, row: dict[str, Any]) -> list[str] | None:
        return self.topology.receivers(row["src"], row["dst"], bool(row.get("broadcast")))

    def at(self, endpoint: str | None, udp: bool) -> list[str]:
        """The nodes at an endpoint (at an address without a port: every node there)."""
        if endpoint is None:
            return []
        ip, port = split(endpoint)
        if port is not None:
            name = self.node(endpoint, udp)
            return [name] if name is not None else []
        found = [n for n, addrs in self.topology.addresses.items() if any(a == ip for a, _ in addrs)]
        found += [n for n, a in self.learned.items() if host(a) == ip]
        return found


def convert(path: str | Path, *, trace_id: str | None = None, names: dict[str, str] | None = None,
            topology: Topology | Iterable[dict[str, Any]] | None = None, lenient: bool = False,
            ports: Ports | None = None) -> str:
    """The NDJSON text of the trace a capture shows (CaptureError for an unreadable file)."""
    out = io.StringIO()
    write_trace(path, out.write, trace_id=trace_id, names=names, topology=topology, lenient=lenient, ports=ports)
    return out.getvalue()


@contextmanager
def capture_trace(path: str | Path, *, topology: Topology | None = None, names: dict[str, str] | None = None,
                  ports: Ports | None = None, lenient: bool = False) -> Iterator[tuple[LineSource, Conversion]]:
    """A capture as a trace the checker can read (twice, streaming), written to a temporary file that is
    removed on leaving; the source is named after the capture."""
    with tempfile.TemporaryDirectory(prefix="mqspec-capture-") as tmp:
        trace = Path(tmp) / "trace.ndjson"
        with open(trace, "w", encoding="utf-8") as out:
            conversion = write_trace(path, out.write, topology=topology, names=names, ports=ports, lenient=lenient)
        name = str(path)

        def lines() -> Iterator[str]:
            try:
                with open(trace, encoding="utf-8") as f:
                    yield from f
            except OSError as exc:
                raise TraceError(name, 0, "(file)", exc.strerror or str(exc)) from exc

        yield LineSource(name, lines), conversion


def write_trace(path: str | Path, write: Callable[[str], object], *, trace_id: str | None = None,
                names: dict[str, str] | None = None, topology: Topology | Iterable[dict[str, Any]] | None = None,
                lenient: bool = False, ports: Ports | None = None) -> Conversion:
    """Write the trace a capture shows line by line through ``write`` (see the module docstring).

    A CaptureError (a file that is not a readable capture) comes before anything is written.
    """
    topo = topology if isinstance(topology, Topology) else load(list(topology or []), "topology")
    ports = ports or topo.ports
    known = _Names(topo, names or {}, ports)
    for row in Scan(ports=ports, decode=False).rows(path):
        known.learn(row)
    known.learned_nodes()
    name = Path(path).name
    writer = _Writer(known, TraceWriter(trace_id or f"pcap:{name}", write))
    scan = Scan(ports=ports, decode=False, raw=True, lenient=lenient)
    declared = [*topo.nodes, *({"name": n, "addresses": [a]} for n, a in known.learned.items())]
    extra = {k: v for k, v in (("window", topo.window), ("mode", topo.mode)) if v is not None}
    writer.out(header(source=f"pcap {name}", nodes=declared, **extra))
    writer.starts = sorted(((t, n) for n, t in topo.starts.items() if t != "first"), key=lambda s: (s[0], s[1]))
    writer.at_first = {n for n, t in topo.starts.items() if t == "first"}
    for row in scan.rows(path):
        writer.row(row)
    writer.finish()
    codec_only = [d["name"] for d in topo.nodes if d.get("role") is not None and d["name"] not in topo.starts]
    return Conversion(writer.out.count, scan.summary, [d["name"] for d in declared], writer.peer_messages,
                      codec_only)


class _Writer:
    """The second pass: rows to events, in order, with the declared starts in their place."""

    def __init__(self, known: _Names, out: TraceWriter) -> None:
        self.known, self.out = known, out
        self.t0: float | None = None
        self.last = 0.0
        self.starts: list[tuple[float, str]] = []
        self.at_first: set[str] = set()
        self.peer_messages = 0

    def _t(self, time: float) -> float:
        if self.t0 is None:
            self.t0 = time
        t = round(time - self.t0, 6)
        self.last = max(self.last, t)  # a capture's clock can step back; a trace's cannot
        return self.last

    def _emit(self, event: dict[str, Any]) -> None:
        node = event.get("node")
        while self.starts and self.starts[0][0] <= event["t"]:
            when, name = self.starts.pop(0)
            self.out({"event": "start", "t": when, "node": name})
        if node in self.at_first:
            self.at_first.discard(node)
            self.out({"event": "start", "t": event["t"], "node": node})
        self.out(event)

    def finish(self) -> None:
        for when, name in self.starts:
            self.out({"event": "start", "t": max(when, self.last), "node": name})

    def row(self, row: dict[str, Any]) -> None:
        t = self._t(row["time"])
        udp = row["protocol"] == "mqsd"
        known = self.known
        if "hole" in row:
            event: dict[str, Any] = {"event": "hole", "t": t, "kind": row["hole"], "text": row["error"],
                                     "frame": row["frame"]}
            if row["hole"] != "cut":
                event["nodes"] = list(dict.fromkeys([*known.at(row["src"], udp), *known.at(row["dst"], udp)]))
                event.update({k: row[k] for k in ("src", "dst") if row.get(k)})
                for old, new in (("src", "from"), ("dst", "to")):
                    if old in event:
                        event[new] = event.pop(old)
            if row.get("lost"):
                event["bytes"] = row["lost"]
            self._emit(event)
            return
        raw = row.get("_raw")
        if raw is None:  # a stretch of TCP stream that is not a message: nothing a server did
            self._emit({"event": "note", "t": t, "text": f"frame {row['frame']}: {row.get('error', row['protocol'])}"})
            return
        body = raw["bytes"].hex()
        if udp:
            self._datagram(row, t, body)
            return
        src, dst = known.node(row["src"], False), known.node(row["dst"], False)
        if src is None and dst is None:
            self.peer_messages += 1
            return
        sender, receiver = src or known.label(row["src"], False), dst or known.label(row["dst"], False)
        for event in _message_events(row, t, body, raw.get("message"), sender, receiver):
            if event["node"] in (src, dst):
                self._emit(event)

    def _datagram(self, row: dict[str, Any], t: float, body: str) -> None:
        known = self.known
        sender = known.node(row["src"], True)
        receivers = known.broadcast(row)
        if receivers is None:
            receiver = known.node(row["dst"], True)
            receivers = [receiver] if receiver is not None else []
        if sender is None and not receivers:
            self.peer_messages += 1
            return
        common = {"event": "datagram", "t": t, "from": row["src"], "to": row["dst"], "body": body, "transport": "ip"}
        if sender is not None:
            self._emit({**common, "node": sender, "direction": "send"})
        for name in receivers:
            if name != sender:
                self._emit({**common, "node": name, "direction": "receive"})


def _message_events(row: dict[str, Any], t: float, body: str, message: mqqb.UserMessage | None, src: str,
                    dst: str) -> list[dict[str, Any]]:
    """The events of an MC-MQDSRP or MS-MQCN message from ``src`` to ``dst``."""
    protocol = row["protocol"]
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
