"""The refinement campaign of MS-MQSD: the reference's discovery server and client against :mod:`mqspec.proofs.mqsd_model`.

MS-MQSD has no simulated enterprise: a server answers datagrams, a client runs Get Directory Server
List over replies and timer expiries. Each run here is a seeded sequence of such events on one
server or one client (requests from its own site, another site, another enterprise, over IP and
IPX, truncated, garbage, a reply instead of a request; replies on the right and the wrong network,
from the local site and others, for the current request and an old one; timer expiries; send and
open failures), so every state checked is one the handlers reach; a few fixed runs (:data:`BOUNDARY`)
go first, to states the seeded runs seldom or never reach (a server with exactly MAX_NETWORKS
connected networks; an expiry after the clarified case (C) kept a reply with TopologyServerReplyReceived
FALSE; a new discovery once the last successful network is gone), each where a one-line mutant of a
guard departs (tests/proofs/test_refinement.py). At every event the reference's handler runs on the
real object and the model's transition on its projection; the states and the effects (the register
entries of the clarifications taken among them) must agree; a handler run that raises, or that runs past
:data:`.limit.HANDLER_CPU_SECONDS` of CPU time, departs (:func:`.limit.run_handler`). Rows as
:mod:`mqspec.proofs.refinement.campaign` makes them, one per handler and mode, and one for the
branches of refimpl/mqsd_server.py and refimpl/mqsd_client.py.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

import attrs

from mqspec.model import mqsd
from mqspec.model.guid import Guid
from mqspec.model.mqsd import MAX_NETWORKS, DirectoryServiceServer, TopologyClientRequest, TopologyServerReply
from mqspec.proofs import mqsd_model as model
from mqspec.proofs.explore import branches as br
from mqspec.refimpl import mqsd_client as client
from mqspec.refimpl import mqsd_server as server
from mqspec.refimpl.effects import CancelTimer, Clarified, Context, Mode, StartTimer
from mqspec.refimpl.mqsd_effects import (
    BroadcastRequest,
    CloseSocket,
    DirectoryServerListResult,
    NetworkAddress,
    OpenSocket,
    PacketDiscarded,
    SendReply,
    TerminateThread,
    Transport,
)

from .campaign import Tally, Tracer, _branch_counts
from .limit import run_handler

MODULES = ("mqsd_server.py", "mqsd_client.py")
HANDLERS = (
    ("server_initialization", "3.2.3"), ("receive_datagram", "3.2.5"), ("send_failed", "3.2.5"),
    ("socket_open_failed", "3.2.5"), ("client_initialization", "3.1.3"), ("get_directory_server_list", "3.1.4.1"),
    ("receive_topology_server_reply", "3.1.5.2"), ("no_server_response", "3.1.6.1"),
)
PROFILES = {"default": {"runs": 120, "events": 14}, "soak": {"runs": 2000, "events": 20}}
#: the functions of the two modules that handle events (the rest: the data model's validators, the MUSTs quoted)
FUNCTIONS = frozenset({
    "server_initialization", "receive_datagram", "send_failed", "socket_open_failed", "receive_topology_client_request",
    "_discard", "client_initialization", "get_directory_server_list", "send_topology_client_request",
    "receive_topology_server_reply", "_remember_network", "_populate", "_populate_and_complete", "no_server_response",
    "populate_directory_server_list", "populate_connected_network_identifier_list",
    "complete_get_directory_server_list", "current_network",
})
#: the branches of those no event reaches, and why
UNREACHABLE = (
    br.Unreachable("mqsd_client.py", "populate_directory_server_list", "if last is None or not last.servers:", "return",
                   "its only caller (_populate) raises it for a LastTopologyServerReply whose DirectoryServiceServerSize "
                   "is not zero, which has servers", ("clarified", "literal")),
)

ENTERPRISE, OTHER_ENTERPRISE = Guid.from_name("mqsd-ref:enterprise"), Guid.from_name("mqsd-ref:other")
SITES = tuple(Guid.from_name(f"mqsd-ref:site{i}") for i in range(3))
NETWORK_IDS = tuple(Guid.from_name(f"mqsd-ref:network{i}") for i in range(3))
SERVERS = (DirectoryServiceServer("ds1", True, False), DirectoryServiceServer("ds2", True, True),
           DirectoryServiceServer("ds3", False, True))
ADDRESSES = (NetworkAddress("10.0.0.255"), NetworkAddress("192.168.1.255"), NetworkAddress("172.16.0.255", ras=True))


def _fields(obj: Any) -> dict[str, Any]:
    return {f.name: getattr(obj, f.name) for f in attrs.fields(type(obj))}


def emitted(effects: list[Any]) -> list[tuple[Any, ...]]:
    """The reference's effects as the model emits them (free-text details aside).

    The records of the clarifications taken are compared by register entry: which entry's clarified reading
    changed what happens, and where among the effects, is the reference's to get right as much as the rest.
    """
    out: list[tuple[Any, ...]] = []
    for e in effects:
        kind = type(e)
        if kind is OpenSocket:
            out.append(("open",))
        elif kind is CloseSocket:
            out.append(("close",))
        elif kind is TerminateThread:
            out.append(("terminate",))
        elif kind is PacketDiscarded:
            out.append(("discard", e.reason.value, e.section))
        elif kind is SendReply:
            out.append(("reply", e.destination, e.reply, e.transport))
        elif kind is BroadcastRequest:
            out.append(("broadcast", e.network, e.request))
        elif kind is StartTimer:
            out.append(("start", e.delay))
        elif kind is CancelTimer:
            out.append(("stop",))
        elif kind is DirectoryServerListResult:
            out.append(("result", e.success, e.directory_server_list, e.connected_network_identifier_list, e.network))
        elif kind is Clarified:
            out.append(("clarify", e.erratum))
    return out


# --- the events a run draws ---------------------------------------------------------------------------


def _request_bytes(rng: random.Random, me: dict[str, Any]) -> bytes:
    roll = rng.random()
    site = rng.choice((me["site_identifier"], *SITES))
    enterprise = OTHER_ENTERPRISE if roll < 0.1 else ENTERPRISE
    ipx = tuple(rng.randrange(1, 1 << 32) for _ in range(rng.choice((0, 0, 1, 3))))
    data = mqsd.encode(TopologyClientRequest(enterprise, Guid.from_name(f"req{rng.random()}"), site, ipx))
    if roll < 0.15:
        return data[:rng.randrange(len(data))]  # truncated
    if roll < 0.2:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 60)))  # garbage
    if roll < 0.25:
        return mqsd.encode(TopologyServerReply(Guid.NULL, NETWORK_IDS[:1], 0))  # a reply, not a request
    if roll < 0.3:
        return bytes([1]) + data[1:]  # Version 1
    return data


def server_events(rng: random.Random, n: int) -> tuple[dict[str, Any], list[tuple[Any, ...]]]:
    """A server's configuration and a sequence of events for it."""
    config = {"site_identifier": rng.choice(SITES), "servers": SERVERS[:rng.choice((0, 1, 2, 3))],
              "networks": rng.choice(((), NETWORK_IDS[:1], NETWORK_IDS, tuple(Guid.from_name(f"n{i}") for i in range(33))))}
    events: list[tuple[Any, ...]] = [("init",)]
    for _ in range(n):
        roll = rng.random()
        if roll < 0.06:
            events.append(("send_failed",))
        elif roll < 0.1:
            events.append(("open_failed",))
        elif roll < 0.13:
            events.append(("init",))
        else:
            events.append(("datagram", _request_bytes(rng, config), f"10.0.0.{rng.randrange(9)}:2101",
                           rng.choice((Transport.IP, Transport.IP, Transport.IPX))))
    return config, events


def _reply_bytes(rng: random.Random, c: client.MqsdClient) -> bytes:
    correlation = c.request_id if c.request_id is not None and rng.random() < 0.85 else Guid.from_name("old")
    networks = NETWORK_IDS[:rng.choice((1, 2, 3))]
    roll = rng.random()
    if roll < 0.45:
        reply = TopologyServerReply(correlation, networks, 0)
    else:
        reply = TopologyServerReply(correlation, networks, 0, rng.choice(SITES), SERVERS[:rng.choice((1, 2, 3))])
    data = mqsd.encode(reply)
    if rng.random() < 0.05:
        return data[:rng.randrange(len(data))]
    return data


def client_step_event(rng: random.Random, c: client.MqsdClient, counter: list[int]) -> tuple[Any, ...]:
    """One event for the client as it is now (replies mostly on the network it waits on)."""
    roll = rng.random()
    if roll < 0.15 or c.request_id is None and roll < 0.5:
        counter[0] += 1
        addresses = tuple(rng.sample(ADDRESSES[:2], rng.choice((0, 1, 2, 2, 2))))
        if rng.random() < 0.1:
            addresses += (ADDRESSES[2],)
        return ("get_list", addresses, Guid.from_name(f"mqsd-ref:request{counter[0]}"))
    if roll < 0.35:
        return ("timeout",)
    if roll < 0.38:
        return ("init", ENTERPRISE)
    on = c.current_network() if rng.random() < 0.85 else rng.choice(ADDRESSES)
    return ("reply", _reply_bytes(rng, c), on)


# --- the boundary runs ------------------------------------------------------------------------------------


@attrs.frozen
class Boundary:
    """A fixed run, in both modes, to a state the seeded runs seldom or never reach: a server's configuration
    (``config``, None for a client) and its events, each computed from the server or client as it is then."""

    name: str
    config: dict[str, Any] | None
    events: tuple[Callable[[Any], tuple[Any, ...]], ...]


def _request(site: Guid, ipx: tuple[int, ...] = ()) -> bytes:
    return mqsd.encode(TopologyClientRequest(ENTERPRISE, Guid.from_name(f"mqsd-ref:boundary:{site}"), site, ipx))


#: MAX_NETWORKS connected networks: the most a reply carries (the seeded servers have 0, 1, 3 or 33)
_ALL_NETWORKS = tuple(Guid.from_name(f"mqsd-ref:network-of-{MAX_NETWORKS}:{i}") for i in range(MAX_NETWORKS))

#: a discovery on one network that a local-site reply completes (case (C))
_ONE_NETWORK_LOCAL_REPLY: tuple[Callable[[Any], tuple[Any, ...]], ...] = (
    lambda c: ("init", ENTERPRISE),
    lambda c: ("get_list", ADDRESSES[:1], Guid.from_name("mqsd-ref:boundary:request")),
    lambda c: ("reply", mqsd.encode(TopologyServerReply(c.request_id, NETWORK_IDS[:2], 0)), c.current_network()),
)

BOUNDARY = (
    # 3.2.5.1 / E-209: ConnectedNetworkCount "MUST be in the range 1 to 32": 32 networks are answered (33 are not),
    # to a client of the server's site over IP and of another site over IPX (a mask of 32 bits)
    Boundary("a server with exactly MAX_NETWORKS connected networks",
             {"site_identifier": SITES[0], "servers": SERVERS, "networks": _ALL_NETWORKS},
             (lambda s: ("init",),
              lambda s: ("datagram", _request(SITES[0]), "10.0.0.1:2101", Transport.IP),
              lambda s: ("datagram", _request(SITES[1], (7,)), "10.0.0.2:2101", Transport.IPX))),
    # 3.1.6.1 / E-203: on the only network, the clarified case (C) stops the timer and keeps the local-site reply
    # with TopologyServerReplyReceived still FALSE; a late expiry (the seeded runs send expiries at any time too)
    # completes from that reply (success), not with a failure
    Boundary("an expiry after a local-site reply on the only network completed the event", None,
             (*_ONE_NETWORK_LOCAL_REPLY, lambda c: ("timeout",))),
    # 3.1.4.1 / E-206: the network of the last success is no longer connected: the clarified reading looks again
    # (and records E-206) instead of completing with the lists obtained on it
    Boundary("a new Get Directory Server List after the last successful network went away", None,
             (*_ONE_NETWORK_LOCAL_REPLY,
              lambda c: ("get_list", ADDRESSES[1:2], Guid.from_name("mqsd-ref:boundary:second")))),
)


def _server(config: dict[str, Any]) -> server.MqsdServer:
    return server.MqsdServer(ENTERPRISE, config["site_identifier"], config["servers"], config["networks"])


def _run_boundary(scenario: Boundary, clarified: bool, tracer: Tracer | None,
                  check: Callable[[str, list[str], tuple[Any, ...]], None]) -> None:
    """Run ``scenario``'s events, checking each against the model (``check(handler, problems, event)``)."""
    if scenario.config is not None:
        node: Any = _server(scenario.config)
        step: Callable[..., tuple[str, list[str]]] = _check_server
    else:
        node, step = client.MqsdClient(site_identifier=SITES[0]), _check_client
    for make in scenario.events:
        event = make(node)
        if tracer is not None:
            tracer.called = set()
        check(*step(node, event, clarified), event)


def boundary_departures(name: str, mode: str) -> list[tuple[str, tuple[Any, ...], list[str]]]:
    """The departures from the model of the boundary run ``name`` in ``mode``: (handler, event, differences)."""
    scenario = next(b for b in BOUNDARY if b.name == name)
    out: list[tuple[str, tuple[Any, ...], list[str]]] = []
    _run_boundary(scenario, mode == "clarified", None,
                  lambda handler, problems, event: out.append((handler, event, problems)) if problems else None)
    return out


# --- checking one event -----------------------------------------------------------------------------------


def _check_server(s: server.MqsdServer, event: tuple[Any, ...], clarified: bool) -> tuple[str, list[str]]:
    pre = _fields(s)
    ctx = Context("server", Mode.CLARIFIED if clarified else Mode.LITERAL)
    kind = event[0]
    call: Callable[[], Any]
    if kind == "init":
        name, call = "server_initialization", lambda: server.server_initialization(s, ctx)
    elif kind == "send_failed":
        name, call = "send_failed", lambda: server.send_failed(s, ctx, "send error")
    elif kind == "open_failed":
        name, call = "socket_open_failed", lambda: server.socket_open_failed(s, ctx, "open error")
    else:
        name, call = "receive_datagram", lambda: server.receive_datagram(s, ctx, event[1], event[2], event[3])
    if (departure := run_handler(call)) is not None:
        return name, [departure]
    want, out = model.server_step(_model_server(pre), event, clarified)
    return name, _compare(want, _model_server(_fields(s)), out, emitted(ctx.effects))


def _model_server(fields: dict[str, Any]) -> dict[str, Any]:
    return dict(fields)


def _check_client(c: client.MqsdClient, event: tuple[Any, ...], clarified: bool) -> tuple[str, list[str]]:
    pre = _fields(c)
    ctx = Context("client", Mode.CLARIFIED if clarified else Mode.LITERAL)
    kind = event[0]
    call: Callable[[], Any]
    if kind == "init":
        name, call = "client_initialization", lambda: client.client_initialization(c, ctx, event[1])
    elif kind == "get_list":
        name, call = "get_directory_server_list", lambda: client.get_directory_server_list(
            c, ctx, event[1], lambda g=event[2]: g)
    elif kind == "reply":
        name, call = "receive_topology_server_reply", lambda: client.receive_topology_server_reply(
            c, ctx, event[1], event[2])
    else:
        name, call = "no_server_response", lambda: client.no_server_response(c, ctx)
    if (departure := run_handler(call)) is not None:
        return name, [departure]
    want, out = model.client_step(pre, event, clarified)
    return name, _compare(want, _fields(c), out, emitted(ctx.effects))


def _compare(model_state: dict[str, Any], reference: dict[str, Any], model_out: list[Any],
             reference_out: list[Any]) -> list[str]:
    problems = [f"{k}: model {model_state.get(k)!r}, reference {reference.get(k)!r}"
                for k in sorted(set(model_state) | set(reference)) if model_state.get(k) != reference.get(k)]
    if model_out != reference_out:
        problems.append(f"emitted: model {model_out!r}, reference {reference_out!r}")
    return problems


def run(mode: str, profile: str = "default", *, stop_at_first: bool = False) -> tuple[list[Any], set[tuple[str, int]]]:
    """The MS-MQSD rows of ``mode`` (fixed seeds: the same rows for the same profile) and the lines reached."""
    from mqspec.proofs.obligations import Obligation, Result

    clarified = mode == "clarified"
    conf = PROFILES[profile]
    tracer = Tracer(MODULES)
    tallies: dict[str, Tally] = {name: Tally() for name, _ in HANDLERS}
    started = time.perf_counter()
    steps = 0

    def check(name: str, problems: list[str], event: tuple[Any, ...]) -> None:
        nonlocal steps
        steps += 1
        _tally(tallies[name], tracer, problems, name, event)

    with tracer:
        # the boundary runs first: each reaches a state the seeded runs seldom or never reach
        for scenario in BOUNDARY:
            _run_boundary(scenario, clarified, tracer, check)
        for i in range(conf["runs"]):
            if stop_at_first and any(t.departures for t in tallies.values()):
                break
            rng = random.Random(f"mqsd:{mode}:{i}")
            if i % 2 == 0:
                config, events = server_events(rng, conf["events"])
                s = _server(config)
                for event in events:
                    tracer.called = set()
                    check(*_check_server(s, event, clarified), event)
            else:
                c = client.MqsdClient(site_identifier=rng.choice(SITES))
                counter = [0]
                for event in [("init", ENTERPRISE)] + [None] * conf["events"]:  # type: ignore[list-item]
                    event = event or client_step_event(rng, c, counter)
                    tracer.called = set()
                    check(*_check_client(c, event, clarified), event)
    seconds = time.perf_counter() - started
    return _rows(mode, tallies, tracer, steps, seconds, "MS-MQSD", MODULES, HANDLERS, Obligation, Result), tracer.lines


def _tally(tally: Tally, tracer: Tracer, problems: list[str], name: str, event: tuple[Any, ...]) -> None:
    tally.states += 1
    tally.called |= tracer.called
    if problems:
        tally.departures.append((name, event, problems, sorted(tracer.called)))


def _rows(mode: str, tallies: dict[str, Tally], tracer: Tracer, steps: int, seconds: float, document: str,
          modules: tuple[str, ...], handlers: tuple[tuple[str, str], ...], obligation: Any, result: Any) -> list[Any]:
    """One row per handler and one for the branches (the shape of proofs/refinement/campaign.py's rows)."""
    rows = []
    for name, section in handlers:
        tally = tallies[name]
        reached, total = _branch_counts(tally.called, tracer.lines, modules)
        detail = {"section": f"{document} {section}", "steps": steps, "states": tally.states,
                  "branches_reached": reached, "branches": total, "handlers_run": sorted(tally.called)}
        counterexample = None
        if tally.departures:
            handler, event, problems, ran = tally.departures[0]
            status = "violated"
            text = "\n    ".join(problems[:12])
            counterexample = {"departures": len(tally.departures), "event": repr(event)[:400],
                              "differences": problems, "handlers_run": ran,
                              "trace": f"{handler} ({document} {section}) departs from the model on "
                                       f"{repr(event)[:300]}\n    {text}\n    handlers run: {', '.join(ran)}"}
        else:
            status = "refined" if tally.states else "unreached"
        rows.append(result(obligation(f"refinement-{name}", "handlers_refine_model", name, mode, "refinement",
                                      "refinement", "one"), status, seconds / len(handlers), counterexample,
                           detail=detail))
    return rows


def branch_row(lines: set[tuple[str, int]], steps: int) -> Any:
    """Whether the runs of both modes reached every branch of the MS-MQSD handlers."""
    from .campaign import branch_row as row

    return row("MS-MQSD", MODULES, lines, steps, FUNCTIONS, UNREACHABLE)
