"""A capture's topology: which endpoints are which servers, on which ports and networks, from when.

``mqspec trace from-pcap --topology FILE`` and ``pipeline check`` (the sidecar ``CAPTURE.topology.json``
beside a capture) read it. A JSON object (or, as before, the list of ``nodes`` alone)::

    {"nodes": [{"name": "DC1", "addresses": ["10.0.0.1", "10.0.0.1:2101"],
                "mqsd": {"role": "server", ...}, "role": "PSC", "site": GUID, "pec": "PEC0",
                "identifier": GUID, "start": 0.0}, ...],
     "ports": {"mqsd": [2101], "mqqb": 1801},
     "networks": ["10.0.0.0/24"],
     "window": 2, "mode": "clarified"}

* ``nodes``: trace node declarations (``mqspec trace schema``), with ``addresses`` as ``IP`` or
  ``IP:PORT`` (``[IPv6]:PORT``) and, for a server with a ``role``, ``start``: the trace time (seconds
  from the capture's first message) at which it starts fresh (3.2.3), or ``"first"`` (just before
  its first message). A role without ``start`` is checked at codec level only: a capture shows no
  server start, and the state of a server already running is unknown;
* ``ports``: the ports of MS-MQSD (UDP) and MQQB (TCP) in the capture (default 1801);
* ``networks``: the IP networks, so that a datagram to a network's broadcast address reaches the
  servers in it (with 255.255.255.255 and link-layer broadcasts);
* ``window`` and ``mode``: the trace header's.

Endpoints become nodes (:meth:`Topology.node_of`): an address ``IP:PORT`` declared matches that
endpoint only; an ``IP`` declared matches every port of it, except that a node declared as an
MS-MQSD server takes its MS-MQSD port only and one declared as an MS-MQSD client the others, so a
client and a server on one host (or behind one NAT) stay two nodes. When the topology declares
nodes, every other endpoint is a *peer*: not judged, its messages seen only where a declared node
receives them (a prober's deliberate garbage is the prober's affair). Without declarations, each
endpoint is a node checked at codec level: an MQQB endpoint is its machine (named by the
``DIRECT=OS:`` format names sent to it, else its address), an MS-MQSD one on the MS-MQSD port is
``IP:PORT`` and any other (a client) its address.
"""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path
from typing import Any

import attrs

from mqspec.capture.scan import Ports

#: the kinds a capture shows of a node (what ``observes`` says when a declaration does not)
CAPTURE_OBSERVES = ("start", "receive", "send", "datagram", "notification")
#: the keys a topology node may carry beyond a trace declaration's
CAPTURE_ONLY = ("start",)
#: what a capture file's name ends with (the longest first): its sidecar is the name without it
CAPTURE_SUFFIXES = (".pcapng.gz", ".pcap.gz", ".cap.gz", ".pcapng", ".pcap", ".cap", ".gz")
SIDECAR_SUFFIX = ".topology.json"


class TopologyError(ValueError):
    """A topology that cannot be used: ``where: what`` (exit status 2)."""


def split(endpoint: str) -> tuple[str, int | None]:
    """``10.0.0.1:1801`` -> ("10.0.0.1", 1801); ``[fe80::1]:1801`` -> ("fe80::1", 1801); an address alone -> (it, None)."""
    if endpoint.startswith("["):
        host, _, rest = endpoint[1:].partition("]")
        return host, int(rest[1:]) if rest.startswith(":") else None
    if endpoint.count(":") == 1:
        host, _, port = endpoint.partition(":")
        return host, int(port)
    return endpoint, None


def address(text: Any, where: str) -> tuple[str, int | None]:
    """An ``IP`` or ``IP:PORT`` as a capture shows it (TopologyError naming ``where`` otherwise)."""
    if not isinstance(text, str):
        raise TopologyError(f"{where}: {text!r} is not an IP address")
    try:
        host, port = split(text)
        if port is not None and not 0 < port < 65536:
            raise ValueError
        return str(ipaddress.ip_address(host)), port
    except ValueError:
        raise TopologyError(f"{where}: {text!r} is not an IP address (or IP:PORT)") from None


@attrs.define
class Topology:
    """What a capture's sidecar declares (see the module docstring)."""

    nodes: list[dict[str, Any]] = attrs.Factory(list)
    ports: Ports = Ports()
    networks: list[Any] = attrs.Factory(list)
    window: int | None = None
    mode: str | None = None
    starts: dict[str, float | str] = attrs.Factory(dict)
    #: per node: (IP, port or None) it declares
    addresses: dict[str, list[tuple[str, int | None]]] = attrs.Factory(dict)

    @property
    def declares(self) -> bool:
        return bool(self.nodes)

    def declaration(self, name: str) -> dict[str, Any]:
        return next(d for d in self.nodes if d["name"] == name)

    def node_of(self, endpoint: str, udp: bool) -> str | None:
        """The declared node an endpoint is (None: no declaration covers it)."""
        host, port = split(endpoint)
        host = host.lower()
        loose = []
        for decl in self.nodes:
            for ip, declared_port in self.addresses[decl["name"]]:
                if ip != host:
                    continue
                if declared_port is not None:
                    if declared_port == port:
                        return decl["name"]
                    continue
                loose.append(decl)
        for decl in loose:
            role = (decl.get("mqsd") or {}).get("role")
            if not udp or role is None or (role == "server") == (port in self.ports.mqsd):
                return decl["name"]
        return None

    def receivers(self, sender: str | None, destination: str, link_broadcast: bool) -> list[str] | None:
        """The declared MS-MQSD servers a datagram to ``destination`` reaches when it is a broadcast
        (255.255.255.255, a declared network's broadcast address, a link-layer broadcast); None when
        it is not one."""
        host, port = split(destination)
        ip = ipaddress.ip_address(host)
        network = next((n for n in self.networks if n.version == ip.version and n.prefixlen < n.max_prefixlen - 1
                        and ip == n.broadcast_address), None)
        if network is None and not (link_broadcast or host == "255.255.255.255"):
            return None
        if network is None and sender is not None:  # a limited or link broadcast stays on the sender's network
            source = ipaddress.ip_address(split(sender)[0])
            network = next((n for n in self.networks if source in n), None)
        out = []
        for decl in self.nodes:
            if (decl.get("mqsd") or {}).get("role") != "server":
                continue
            for declared, declared_port in self.addresses[decl["name"]]:
                at = ipaddress.ip_address(declared)
                if (declared_port in (None, port) and at.version == ip.version
                        and (network is None or at in network) and str(at) != split(sender or "")[0]):
                    out.append(decl["name"])
                    break
        return out


def load(data: Any, where: str) -> Topology:
    """A topology from its JSON value (TopologyError naming the field for a bad one)."""
    if isinstance(data, list):
        data = {"nodes": data}
    if not isinstance(data, dict):
        raise TopologyError(f"{where}: a topology is a JSON object with \"nodes\" (or a list of node declarations)")
    unknown = sorted(set(data) - {"nodes", "ports", "networks", "window", "mode"})
    if unknown:
        raise TopologyError(f"{where}: {unknown[0]}: not a topology field (nodes, ports, networks, window, mode)")
    nodes = data.get("nodes", [])
    if not isinstance(nodes, list) or not all(isinstance(d, dict) and isinstance(d.get("name"), str) for d in nodes):
        raise TopologyError(f"{where}: nodes: a list of node declarations with a name")
    window, mode = data.get("window"), data.get("mode")
    if window is not None and (type(window) is not int or window < 0):
        raise TopologyError(f"{where}: window: how many later inputs a node's outputs may lag (an integer, 0 or more)")
    if mode not in (None, "clarified", "literal"):
        raise TopologyError(f"{where}: mode: clarified or literal, not {mode!r}")
    topology = Topology(ports=_ports(data.get("ports"), where), window=window, mode=mode)
    for i, net in enumerate(data.get("networks", [])):
        try:
            topology.networks.append(ipaddress.ip_network(net, strict=False))
        except (TypeError, ValueError):
            raise TopologyError(f"{where}: networks[{i}]: {net!r} is not an IP network (a.b.c.d/len)") from None
    seen: set[str] = set()
    for i, given in enumerate(nodes):
        decl = {k: v for k, v in given.items() if k not in CAPTURE_ONLY}
        addresses = decl.get("addresses", [])
        if not isinstance(addresses, list):
            raise TopologyError(f"{where}: nodes[{i}].addresses: expected a list of IP addresses")
        parsed = [address(a, f"{where}: nodes[{i}].addresses[{j}]") for j, a in enumerate(addresses)]
        decl["addresses"] = [ip if port is None else (f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}")
                             for ip, port in parsed]
        if decl["name"] in seen:
            raise TopologyError(f"{where}: nodes[{i}].name: {decl['name']!r} is declared twice")
        seen.add(decl["name"])
        if "start" in given:
            start = given["start"]
            if given.get("role") is None:
                raise TopologyError(f"{where}: nodes[{i}].start: a start is for a server with a role")
            if start != "first" and (type(start) not in (int, float) or start < 0):
                raise TopologyError(f"{where}: nodes[{i}].start: seconds from the capture's first message, or \"first\"")
            topology.starts[decl["name"]] = start
            decl.setdefault("observes", list(CAPTURE_OBSERVES))
        topology.nodes.append(decl)
        topology.addresses[decl["name"]] = parsed
    return topology


def _ports(value: Any, where: str) -> Ports:
    if value is None:
        return Ports()
    if not isinstance(value, dict) or set(value) - {"mqsd", "mqqb"}:
        raise TopologyError(f"{where}: ports: {{\"mqsd\": PORT or [PORT, ...], \"mqqb\": PORT or [PORT, ...]}}")
    out = {}
    for key in ("mqsd", "mqqb"):
        given = value.get(key, [1801])
        ports = given if isinstance(given, list) else [given]
        if not ports or not all(type(p) is int and 0 < p < 65536 for p in ports):
            raise TopologyError(f"{where}: ports.{key}: port numbers (1 to 65535)")
        out[key] = frozenset(ports)
    return Ports(out["mqsd"], out["mqqb"])


def sidecar_of(capture: str | Path) -> Path:
    """Where a capture's topology is: ``lab.pcap`` (``lab.pcapng``, ``lab.pcap.gz``, ``lab.cap``) -> ``lab.topology.json``."""
    name = str(capture)
    suffix = next((s for s in CAPTURE_SUFFIXES if name.lower().endswith(s)), Path(name).suffix)
    return Path(name[: len(name) - len(suffix)] + SIDECAR_SUFFIX)


def read(path: str | Path) -> Topology:
    """The topology in a JSON file (TopologyError, or OSError / ValueError for a file that is not JSON)."""
    return load(json.loads(Path(path).read_text(encoding="utf-8-sig")), str(path))


def for_capture(capture: str | Path) -> Topology:
    """The topology of the sidecar beside a capture, or an empty one when there is none."""
    sidecar = sidecar_of(capture)
    return read(sidecar) if sidecar.exists() else Topology()
