"""Writing published traces from the simulated enterprise: a World observer.

:class:`TraceRecorder` registers with ``World.observers`` (the observation hook of
:mod:`mqspec.refimpl.world`) and turns every handler run into the events a real server would
log: the input (start, client request with the GUID given to a created object, received
message with its class and queue, timer expiry), then its outputs in the order the handlers
produced them (sends with every MSMQ property 3.1.7.2.1 sets, request completions, directory
events), crashes, and PSC handovers (:meth:`TraceRecorder.handover`). :meth:`TraceRecorder.snapshot` adds full state snapshots of the running
nodes. :func:`record_scenario` records a scenario file's run, with a snapshot after every
settle and at the end.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

from mqspec.model import mqdsrp
from mqspec.model.jsonform import converter
from mqspec.refimpl.effects import (
    DirectoryOperation,
    EnqueueMessage,
    Mode,
    RequestCompleted,
)
from mqspec.refimpl.mqds import ClientRequest
from mqspec.refimpl.mqdsrp_state import QueueManager
from mqspec.refimpl.transport import CALG_MD5, AckRequested, msmq_priority
from mqspec.refimpl.world import World

from .state import node_state
from .trace_format import INPUT_KINDS, OUTPUT_KINDS, TraceWriter, header

#: what a recorded trace observes at every node (snapshots and clocks are always welcome)
RECORDED_KINDS = (*INPUT_KINDS, *OUTPUT_KINDS, "snapshot")


class TraceRecorder:
    """A World observer writing the published trace (see the module docstring)."""

    def __init__(self, world: World, write: Callable[[dict[str, Any]], object], *, directory: bool = True) -> None:
        self.world = world
        self.write = write
        self.directory = directory
        self.declared: set[str] = set()
        self._last_guid: Any = None
        new_guid = world.new_guid

        def remember(kind: str = "object") -> Any:
            # the GUID World.client_request gives a created object: an input the trace must carry
            self._last_guid = new_guid(kind)
            return self._last_guid

        world.new_guid = remember  # type: ignore[method-assign]
        world.observers.append(self)

    # --- the observer protocol of World ---------------------------------------------------------

    def before(self, world: World, qm: QueueManager, event: tuple[Any, ...]) -> None:
        name = qm.machine_name
        if name not in self.declared:
            self.declare(qm)
        kind = event[0] if event else ""
        t = round(world.now, 6)
        if kind == "start":
            self.write({"event": "start", "t": t, "node": name})
        elif kind == "client_request":
            self.write(_client_request(t, name, qm.next_client_request, event[1], self._last_guid))
        elif kind == "receive":
            msg = event[1]
            self.write({"event": "receive", "t": t, "node": name, "from": msg.source_machine, "class": int(msg.klass),
                        "queue": msg.destination_format_name, "body": msg.body.hex()})
        elif kind == "timer":
            key = event[1]
            self.write({"event": "timer", "t": t, "node": name, "timer": key.kind,
                        "args": [list(a) if isinstance(a, tuple) else a for a in key.args]})

    def effect(self, world: World, qm: QueueManager, effect: object) -> None:
        pass

    def after(self, world: World, qm: QueueManager, event: tuple[Any, ...], effects: list[Any]) -> None:
        t = round(world.now, 6)
        name = qm.machine_name
        for effect in effects:
            kind = type(effect)
            if kind is EnqueueMessage:
                if effect.destination and world.up.get(effect.node):
                    self.write(_send(t, name, effect))
            elif kind is RequestCompleted:
                self.write({"event": "request_completed", "t": t, "node": name, "request": effect.request,
                            "status": effect.status})
            elif kind is DirectoryOperation and self.directory:
                self.write({"event": "directory", "t": t, "node": name, "operation": effect.operation,
                            "status": effect.status, "type": effect.object_type, "path": effect.path_name,
                            "guid": str(effect.guid) if effect.guid else None, "seq": effect.seq_number,
                            "partition": str(effect.partition_id) if effect.partition_id is not None else None})

    def crashed(self, world: World, name: str, lose: str) -> None:
        self.write({"event": "crash", "t": round(world.now, 6), "node": name, "lose": lose})

    # --- more -------------------------------------------------------------------------------------

    def declare(self, qm: QueueManager) -> None:
        """A ``node`` event with the server's role and identities."""
        self.declared.add(qm.machine_name)
        self.write({"event": "node", "t": round(self.world.now, 6), **declaration(qm)})

    def snapshot(self, names: list[str] | None = None) -> None:
        """A full state snapshot of each running node (all of them by default)."""
        t = round(self.world.now, 6)
        for name, qm in self.world.nodes.items():
            if (names is None or name in names) and self.world.up.get(name) and name in self.declared:
                self.write({"event": "snapshot", "t": t, "node": name, "state": node_state(qm)})

    def handover(self, site: str, old: str, new: str) -> None:
        """``handover`` events where ``site``'s PSC moved from ``old`` to ``new`` (modelling E-313):
        the new PSC, declared now, with the state it took over; each declared BSC of the site."""
        from .handover import records

        world = self.world
        qm = world.nodes[new]
        if new not in self.declared:
            self.declare(qm)
        bscs = [name for name, other in world.nodes.items()
                if other.is_bsc and other.site_identifier == qm.site_identifier and name in self.declared]
        t = round(world.now, 6)
        for record in records(qm, world.site_guid(site), old, bscs):
            self.write({"event": "handover", "t": t, **record})

    def note(self, text: str) -> None:
        self.write({"event": "note", "t": round(self.world.now, 6), "text": text})


def declaration(qm: QueueManager) -> dict[str, Any]:
    """The ``node`` fields of a server: what the checker needs to build its reference copy."""
    decl: dict[str, Any] = {"name": qm.machine_name, "role": qm.role.value, "site": str(qm.site_identifier),
                            "identifier": str(qm.identifier), "pec": qm.pec_name}
    if qm.configured_psc_name is not None:
        decl["psc"] = qm.configured_psc_name
    return decl


def _client_request(t: float, node: str, number: int, request: ClientRequest, new_guid: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "event": "client_request", "t": t, "node": node, "request": number, "operation": request.operation,
        "object_type": int(request.object_type), "partition": str(request.partition),
        "path": request.path_name, "guid": str(request.guid) if request.guid else None,
        "properties": [converter.unstructure(p) for p in request.properties], "scope": request.scope,
    }
    if request.operation == "create":
        record["new_guid"] = str(new_guid) if new_guid is not None else None
    return record


def _send(t: float, node: str, effect: EnqueueMessage) -> dict[str, Any]:
    return {
        "event": "send", "t": t, "node": node, "to": effect.destination, "body": mqdsrp.encode(effect.body).hex(),
        "queue": effect.format_name, "priority": msmq_priority(effect.priority),
        "timeout": effect.time_to_reach_queue, "time_to_be_received": effect.time_to_be_received,
        "ack": int(AckRequested.from_text(effect.ack_requested.value)),
        "admin_queue": effect.admin_queue, "response_queue": effect.response_queue,
        "class": 0, "delivery": 0, "hash_algorithm": CALG_MD5,
        "sender_id_type": effect.sender_identifier_type, "sender_id": str(effect.sender_identifier),
    }


def record_scenario(scenario: Any, *, mode: Mode = Mode.CLARIFIED, seed: int = 0, trace_id: str | None = None,
                    write: Callable[[str], object], snapshots: bool = True, directory: bool = True,
                    watch: Any = None) -> Any:
    """Run a parsed scenario with a recorder attached; returns the scenario's RunResult.

    The trace gets a snapshot of every running node after each ``settle`` and at the end.
    ``watch`` (an :class:`mqspec.proofs.scenario_watch.InvariantWatch`) is attached too.
    """
    from mqspec.refimpl import scenario_run

    tid = trace_id or scenario_run.trace_id(scenario.name, mode, seed)
    writer = TraceWriter(tid, write)
    writer(header(source=f"mqspec scenario {scenario.name}", mode=mode.value, observes=RECORDED_KINDS))
    recorder: list[TraceRecorder] = []

    def on_world_record(record: dict[str, Any]) -> None:
        if watch is not None:
            watch.record(record)
        if recorder and snapshots and record.get("event") == "settled":
            recorder[0].snapshot()
        if recorder and record.get("event") == "handover":
            recorder[0].handover(record["site"], record["old"], record["new"])

    def attach(world: World) -> None:
        if watch is not None:
            watch.attach(world)
        recorder.append(TraceRecorder(world, writer, directory=directory))

    result = scenario_run.run(scenario, mode=mode, seed=seed, trace=on_world_record, attach=attach)
    if snapshots:
        recorder[0].snapshot()
    return result


def scenario_trace(path: str, *, mode: Mode = Mode.CLARIFIED, seed: int = 0, **options: Any) -> str:
    """The NDJSON text of a scenario file's recorded trace."""
    from mqspec.refimpl import scenario as sc

    out = io.StringIO()
    record_scenario(sc.load(path), mode=mode, seed=seed, write=out.write, **options)
    return out.getvalue()

