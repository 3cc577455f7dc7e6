"""A deterministic simulated MSMQ enterprise running the MC-MQDSRP handlers.

The world owns a :class:`~mqspec.refimpl.clock.Scheduler`, a simulated Express
:class:`~mqspec.refimpl.transport.Network` and one :class:`QueueManager` per directory server.
It performs the handlers' effects: an EnqueueMessage is encoded with the MC-MQDSRP codec and
sent as bytes; a StartTimer schedules a timer event; a message arriving in a replication queue
is dequeued and given to Receiving Replication Messages (3.1.5.1). Same inputs and seed give
the same event order, the same bytes and the same final state.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

import attrs
from mqspec.model import mqdsrp
from mqspec.model.guid import Guid
from mqspec.model.propids import PROPIDS, ObjectType
from mqspec.model.propvalue import Property

from . import fastpath
from . import mqdsrp_client as client
from . import mqdsrp_server as server
from .clock import Scheduler, TimerHandle
from .directory import DirectoryStore, type_name
from .effects import AckRequested as EffectAck
from .effects import (
    CancelTimer,
    Context,
    DirectoryOperation,
    EnqueueMessage,
    Mode,
    RequestCompleted,
    StartTimer,
    TimerKey,
    TimerScope,
)
from .mqds import ClientRequest, default_scope, directory_client_request
from .mqdsrp_common import receiving_replication_messages
from .mqdsrp_state import (
    PEC_PARTITION_ID,
    SERVICE_BSC,
    PurgeState,
    QueueManager,
    Role,
    lose_volatile_state,
)
from .transport import AckRequested, Arrived, MessageClass, MsmqMessage, Network, msmq_priority, with_body

P = {name: pdef.propid for name, pdef in PROPIDS.items()}


@attrs.frozen
class TimerFired:
    """A timer of ``node`` expired."""

    node: str
    timer: TimerKey


class World:
    """Directory servers on a simulated network; see the module docstring."""

    def __init__(self, *, mode: Mode = Mode.CLARIFIED, seed: int = 0, latency: float = 0.05,
                 trace: Callable[[dict[str, Any]], None] | None = None, skip_idle_timers: bool = False) -> None:
        self.mode = mode
        #: the fast path of refimpl/fastpath.py: skip Change Propagation Timer firings that change nothing
        self.skip_idle_timers = skip_idle_timers
        self.timers_skipped = 0
        self.messages_skipped = 0
        self.firings_unrun = 0  # idle firings whose message was sent for real without running the handler
        self.quiet_messages: dict[tuple[Any, ...], tuple[EnqueueMessage, MsmqMessage]] = {}  # fastpath's messages
        self.quiet_verdicts: dict[tuple[Any, ...], tuple[Any, bool]] = {}  # fastpath: do the faults spare them
        #: fastpath.run_until: what skipped firings and quiet arrivals found, forgotten when a handler runs
        self.idle_runs: dict[Any, Any] = {}
        self.seed = seed
        self.scheduler = Scheduler()
        self.network = Network(self.scheduler, seed=seed, latency=latency)
        self.nodes: dict[str, QueueManager] = {}
        self.sites: dict[str, Guid] = {}
        self.up: dict[str, bool] = {}
        self.results: dict[tuple[str, int], int] = {}
        self.messages_processed = 0
        self.changes_applied = 0  # directory operations applied at replicas from received changes
        self.replicas_created = 0  # of which creates: the objects replicas made from received changes
        self._timers: dict[tuple[str, TimerKey], TimerHandle] = {}
        self._message_templates: dict[tuple[Any, ...], MsmqMessage] = {}  # message_of: validated attributes
        self._by_fold: dict[str, str] = {}  # casefolded machine name -> node name (the first added)
        self._changed: set[str] = set()  # nodes a handler ran at, or that crashed, since settle last looked
        self._guids = 0
        self._trace = trace
        self._receiving = False
        # --- MS-MQCN wiring (opt-in, refimpl/notify.py): both stay empty unless a caller adds to them
        self.notifier: list[Callable[[World, str, DirectoryOperation], None]] = []
        self.queue_managers: dict[str, Any] = {}  # casefolded machine name -> notify.NotifiedQueueManager
        # --- observation hook (proofs/ghost.py): begin -----------------------------------------
        #: Observers of every handler run, for the invariant checkers: ``before(world, qm, event)``
        #: just before it, ``effect(world, qm, effect)`` as each effect is emitted (the node's
        #: state at that moment), ``after(world, qm, event, effects)`` once its effects were
        #: performed, ``crashed(world, name, lose)`` after a crash. ``event`` is ("start",),
        #: ("client_request", request), ("receive", msg) or ("timer", key). With no observer
        #: registered nothing of this runs and the world behaves and traces exactly as before.
        self.observers: list[Any] = []
        # --- observation hook: end -----------------------------------------------------------

    # --- identities ---------------------------------------------------------------------------

    def new_guid(self, kind: str = "object") -> Guid:
        """A fresh GUID, the same for the same seed and call order."""
        self._guids += 1
        return Guid.from_name(f"{self.seed}:{kind}:{self._guids}")

    def site_guid(self, site: str) -> Guid:
        if site not in self.sites:
            self.sites[site] = Guid.from_name(f"site:{site}")
        return self.sites[site]

    # --- topology -----------------------------------------------------------------------------

    def add_node(self, name: str, role: Role, site: str, pec: str, psc: str | None = None) -> QueueManager:
        """Create a directory server (not started) and its machine on the network."""
        qm = QueueManager(
            machine_name=name, identifier=Guid.from_name(f"qm:{name}"), site_identifier=self.site_guid(site),
            role=role, pec_name=pec, configured_psc_name=psc, directory=DirectoryStore(),
        )
        self.nodes[name] = qm
        self._by_fold.setdefault(name.casefold(), name)
        self.up[name] = False
        self.network.add_machine(name, qm.identifier)
        return qm

    def add_queue_manager(self, name: str, site: str, **options: Any) -> Any:
        """MS-MQCN: a queue manager that is not a directory server, with its notify_queue$ (refimpl/notify.py)."""
        from .notify import add_queue_manager

        return add_queue_manager(self, name, site, **options)

    def start(self, name: str) -> None:
        """Run initialization (3.2.3 and 3.3.3) and let the node take messages from its queue."""
        qm = self.nodes[name]
        self.up[name] = True
        self._emit({"event": "start", "node": name})
        self._run(qm, lambda ctx: _initialize(qm, ctx), ("start",))
        self._drain(name)

    def crash(self, name: str, lose: str = "volatile") -> None:
        """Stop a node: its queued Express messages and timers are gone; it loses what 3.1.1 does not persist.

        ``lose="all"`` also loses the persisted replication state and the directory (a rebuilt server).
        """
        qm = self.nodes[name]
        self.up[name] = False
        self.idle_runs.clear()
        self.network.crash(name)
        for key in [k for k in self._timers if k[0] == name]:
            self.scheduler.cancel(self._timers.pop(key))
        lose_volatile_state(qm)
        self._changed.add(name)
        if lose == "all":
            qm.partitions.clear()
            qm.psc_neighbors.clear()
            qm.bsc_neighbors.clear()
            qm.deleted_objects.clear()
            qm.directory = DirectoryStore()
        self._emit({"event": "crash", "node": name, "lose": lose})
        for observer in self.observers:  # observation hook (proofs/ghost.py)
            observer.crashed(self, name, lose)

    def restart(self, name: str) -> None:
        self.network.restart(name)
        self.start(name)

    # --- directory clients ---------------------------------------------------------------------

    def client_request(self, node: str, request: ClientRequest) -> int:
        """A directory client's create/update/delete at ``node``; returns its request number there."""
        qm = self.nodes[node]
        kind = type_name(int(request.object_type))
        guid = self.new_guid(kind)
        holder: list[int] = []
        if self._trace is not None:  # records are built only when someone listens (hot path)
            self._emit({"event": "client_request", "node": node, "operation": request.operation,
                        "type": kind, "path": request.path_name,
                        "guid": str(request.guid) if request.guid else None})
        self._run(qm, lambda ctx: holder.append(directory_client_request(qm, ctx, request, guid)),
                  ("client_request", request, guid))
        return holder[0]

    # --- running ------------------------------------------------------------------------------

    @property
    def now(self) -> float:
        return self.scheduler.now

    def run_until(self, until: float) -> int:
        """Deliver messages and fire timers due by ``until``; returns how many events ran."""
        if self.skip_idle_timers and fastpath.fast_path_open(self):
            return fastpath.run_until(self, until)
        return self.scheduler.run_until(until, self._dispatch)

    def advance(self, seconds: float) -> int:
        return self.run_until(self.now + seconds)

    def fingerprint(self) -> str:
        """A digest of every node's replication state and directory (to detect quiescence)."""
        return hashlib.sha256(json.dumps(self.snapshot(), sort_keys=True).encode()).hexdigest()

    def settle(self, *, window: float = 60.0, quiet: float = 22 * 60.0, limit: float = 6 * 3600.0) -> bool:
        """Run until nothing changes for ``quiet`` seconds (long enough for a SeqNumberHeader round).

        Returns False when ``limit`` seconds pass first. Periodic timers never stop, so
        quiescence is judged on state, not on an empty event queue: "nothing changes" means an
        unchanged :meth:`snapshot`. After each window only the nodes a handler ran at are
        compared again (:func:`node_signature`, the snapshot in digest form), so a window costs
        what happened in it, not the size of the enterprise.
        """
        start = self.now
        last = {name: node_signature(qm) for name, qm in self.nodes.items()}
        self._changed.clear()
        still = 0.0
        while self.now - start < limit:
            self.advance(window)
            same = self._compare_changed(last)
            if same and not any(qm.pending_requests for qm in self.nodes.values()):
                still += window
                if still >= quiet:
                    return True
            else:
                still = 0.0
        return False

    def _compare_changed(self, last: dict[str, tuple]) -> bool:
        """Whether the nodes changed since ``last`` still equal it; ``last`` then holds their state."""
        same = True
        if last.keys() != self.nodes.keys():  # servers joined or left (a PSC handover, refimpl/handover.py)
            same = False
            for name in [n for n in last if n not in self.nodes]:
                del last[name]
        for name in self._changed:
            qm = self.nodes.get(name)
            if qm is None:
                continue
            current = node_signature(qm)
            if last.get(name) != current:
                same = False
                last[name] = current
        for name, qm in self.nodes.items():
            if name not in last:  # a node added during the window (not by a handler)
                last[name] = node_signature(qm)
        self._changed.clear()
        return same

    def _dispatch(self, event: object) -> None:
        if type(event) is TimerFired:
            self._timers.pop((event.node, event.timer), None)
            if not self.up.get(event.node):
                return
            qm = self.nodes[event.node]
            if (self.skip_idle_timers and event.timer.kind == "change_propagation" and fastpath.fast_path_open(self)
                    and fastpath.skip_idle_propagation(self, qm, event)):
                return
            if self._trace is not None:
                self._emit({"event": "timer", "node": event.node, "timer": event.timer.kind,
                            "args": list(event.timer.args)})
            self._run(qm, lambda ctx: fire_timer(qm, ctx, event.timer), ("timer", event.timer))
            return
        if not self.network.handles(event):
            event.fire(self)  # type: ignore[attr-defined]  # MS-MQCN timers (notify.py), fastpath.QuietArrival
            return
        self.arrived(self.network.handle(event))

    def arrived(self, arrived: Arrived | None) -> None:
        """A message was placed in a queue: the queue's owner takes it."""
        if arrived is not None:
            mqcn_qm = self.queue_managers.get(arrived.machine.casefold())
            if mqcn_qm is not None:  # MS-MQCN: the notify_queue$ Dequeue Message loop (notify.py)
                mqcn_qm.drain(self)
                return
            self._drain(arrived.machine)

    def _drain(self, machine: str) -> None:
        """The Dequeue Message loop of 3.1.3.3 / 3.1.5.1: process what the replication queue holds."""
        name = self._by_fold.get(machine.casefold())
        if name is None or self.nodes.get(name) is None:  # nodes replaced by hand: look them over
            name = next((n for n in self.nodes if n.casefold() == machine.casefold()), None)
        if name is None or not self.up[name] or not self.nodes[name].replication_queue_open:
            return
        qm = self.nodes[name]
        skip = self.skip_idle_timers and fastpath.fast_path_open(self)
        while (msg := self.network.dequeue(name)) is not None:
            if skip and msg.klass is MessageClass.NORMAL and fastpath.is_empty_propagation(msg.body):
                fastpath.skip_empty_receipt(self, qm, msg)
                continue
            self.messages_processed += 1
            if self._trace is not None:  # records are built only when someone listens (hot path)
                self._emit({"event": "receive", "node": name, "from": msg.source_machine,
                            "class": int(msg.klass), "body": msg.body.hex()})
            self._receiving = True
            try:
                self._run(qm, lambda ctx, m=msg: receiving_replication_messages(
                    qm, ctx, m.body, int(m.klass), m.destination_format_name), ("receive", msg))
            finally:
                self._receiving = False

    def _run(self, qm: QueueManager, handler: Callable[[Context], object], event: tuple[Any, ...] = ()) -> None:
        ctx = Context(qm.machine_name, self.mode, self.now)
        self._changed.add(qm.machine_name)
        if self.idle_runs:  # the fast path's findings hold only while no handler runs
            self.idle_runs.clear()
        observers = self.observers
        if observers:  # observation hook (proofs/ghost.py)
            ctx.effects = _ObservedEffects(self, qm, observers)
            for observer in observers:
                observer.before(self, qm, event)
        handler(ctx)
        perform = self._perform
        for effect in ctx.effects:
            perform(effect)
        if observers:  # observation hook (proofs/ghost.py)
            for observer in observers:
                observer.after(self, qm, event, ctx.effects)

    def _perform(self, effect: object) -> None:
        """Carry out one effect of a handler, in the order the handler emitted them.

        The kinds are tested most frequent first (a received change yields a DirectoryOperation;
        one message carries several), each test an exact type, so the order changes nothing.
        """
        if type(effect) is DirectoryOperation:
            if effect.status == 0 and effect.operation in ("create", "update", "delete") and self._receiving:
                self.changes_applied += 1
                if effect.operation == "create":
                    self.replicas_created += 1
            if self._trace is not None:
                self._emit({"event": "directory", "node": effect.node, "operation": effect.operation,
                            "status": effect.status, "type": effect.object_type,
                            "path": effect.path_name, "guid": str(effect.guid) if effect.guid else None,
                            "seq": effect.seq_number})
            for callback in self.notifier:  # MS-MQCN wiring (notify.py)
                callback(self, effect.node, effect)
        elif type(effect) is EnqueueMessage:
            if not effect.destination or not self.up.get(effect.node):
                self._emit({"event": "unsent", "node": effect.node, "why": "no destination"})
                return
            template, body = self._message_parts(effect)
            if self._trace is not None:
                self._emit({"event": "send", "node": effect.node, "to": effect.destination,
                            "priority": effect.priority, "timeout": effect.time_to_reach_queue,
                            "ack": effect.ack_requested.value, "body": body.hex()})
            self.network.send(template, body)
        elif type(effect) is StartTimer:
            key = (effect.node, effect.timer)
            old = self._timers.pop(key, None)
            if old is not None:
                self.scheduler.cancel(old)
            self._timers[key] = self.scheduler.schedule_in(effect.delay, TimerFired(effect.node, effect.timer))
        elif type(effect) is CancelTimer:
            old = self._timers.pop((effect.node, effect.timer), None)
            if old is not None:
                self.scheduler.cancel(old)
        elif type(effect) is RequestCompleted:
            self.results[(effect.node, effect.request)] = effect.status
            if self._trace is not None:
                self._emit({"event": "request_completed", "node": effect.node, "request": effect.request,
                            "status": effect.status})
        else:
            self._emit({"event": "clarified", "node": getattr(effect, "node", ""),
                        "erratum": getattr(effect, "erratum", ""), "detail": getattr(effect, "detail", "")})

    def message_of(self, effect: EnqueueMessage) -> MsmqMessage:
        """The MSMQ message an EnqueueMessage effect puts on the network (its body encoded)."""
        template, body = self._message_parts(effect)
        return template if template.body is body else with_body(template, body)

    def _message_parts(self, effect: EnqueueMessage) -> tuple[MsmqMessage, bytes]:
        """message_of's message as a checked message with the right attributes, and the body it carries.

        Every attribute but the body comes from the arguments a handler gave Send Replication
        Message, and these repeat: one set per sender, destination and kind of message. The
        message built (and validated) for the first effect of a set is kept, and a later effect
        with an equal set gets it with its own body (transport.with_body, or Network.send's
        ``body``). The set is compared with the numbers' types, since True or 3.0 would not pass
        where 1 or 3 does, and with the sender's GUID object itself (a node keeps one).
        """
        key = (effect.node, effect.destination, effect.format_name, effect.priority, effect.time_to_reach_queue,
               effect.time_to_be_received, effect.ack_requested, effect.admin_queue, effect.response_queue,
               effect.sender_identifier_type)
        template = self._message_templates.get(key)
        if (template is None or template.sender_identifier is not effect.sender_identifier
                or type(effect.priority) is not int or type(effect.time_to_reach_queue) is not int
                or type(effect.time_to_be_received) is not int or type(effect.sender_identifier_type) is not int
                or type(effect.ack_requested) is not EffectAck):
            message = self._new_message(effect)
            self._message_templates[key] = message
            return message, message.body
        return template, mqdsrp.encode(effect.body)

    def _new_message(self, effect: EnqueueMessage) -> MsmqMessage:
        """message_of's message built attribute by attribute, every value checked."""
        return MsmqMessage(
            source_machine=effect.node, destination_machine=effect.destination,
            destination_format_name=effect.format_name, body=mqdsrp.encode(effect.body),
            priority=msmq_priority(effect.priority),
            time_to_reach_queue=effect.time_to_reach_queue, time_to_be_received=effect.time_to_be_received,
            ack_requested=AckRequested.from_text(effect.ack_requested.value), admin_queue=effect.admin_queue,
            response_queue=effect.response_queue, sender_identifier_type=effect.sender_identifier_type,
            sender_identifier=effect.sender_identifier,
        )

    def rearm(self, event: TimerFired, delay: float) -> None:
        """Start the timer of a firing again, as a StartTimer effect of its handler would (fast path)."""
        self._timers[(event.node, event.timer)] = self.scheduler.schedule(self.scheduler.now + delay, event)

    @property
    def tracing(self) -> bool:
        """Whether someone receives the World's trace records."""
        return self._trace is not None

    def note_skip(self, record: dict[str, Any]) -> None:
        """Trace a firing or a receipt the fast path skipped (refimpl/fastpath.py)."""
        self._emit(record)

    def note(self, event: str, **fields: Any) -> None:
        """Add a record of the driver's own (a scenario step, a settle's outcome) to the trace."""
        self._emit({"event": event, **fields})

    def _emit(self, record: dict[str, Any]) -> None:
        if self._trace is not None:
            self._trace({"t": round(self.now, 6), **record})

    # --- state --------------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """The final-state JSON shape of ``mqspec scenario run --json`` (without "converged")."""
        return {name: node_snapshot(qm) for name, qm in self.nodes.items()}

    def converged(self) -> bool:
        """Every replica equals its authority, all partitions NORMAL, no lingering deleted objects."""
        return not convergence_problems(self)


class _ObservedEffects(list):  # observation hook (proofs/ghost.py)
    """A Context's effect list that shows each effect to the observers as it is emitted."""

    __slots__ = ("_world", "_qm", "_observers")

    def __init__(self, world: World, qm: QueueManager, observers: list[Any]) -> None:
        super().__init__()
        self._world = world
        self._qm = qm
        self._observers = observers

    def append(self, effect: object) -> None:
        super().append(effect)
        for observer in self._observers:
            observer.effect(self._world, self._qm, effect)


def fire_timer(qm: QueueManager, ctx: Context, timer: TimerKey) -> None:
    """Dispatch an expired timer of ``qm`` to its MC-MQDSRP timer event (3.3.6.1, 3.3.6.2, 3.3.7.1)."""
    if timer.kind == "change_propagation":
        client.change_propagation_timer_event(qm, ctx, timer.args[0], TimerScope(timer.args[1]))
    elif timer.kind == "bsc_ack":
        client.bsc_ack_timer_event(qm, ctx)
    elif timer.kind == "change_request_wait":
        client.change_request_wait_expired(qm, ctx, timer.args[0])


def node_snapshot(qm: QueueManager) -> dict[str, Any]:
    """One node's replication state and directory in the published JSON shape."""
    by_partition: dict[str, dict[str, Any]] = {}
    for guid, o in qm.directory.snapshot().items():
        objects = by_partition.get(o["partition"])
        if objects is None:
            objects = by_partition[o["partition"]] = {}
        objects[guid] = {"type": o["type"], "path": o["path"], "seq": o["seq"]}
    partitions = {}
    for p in qm.partitions:
        pid = str(p.partition_id)
        partitions[pid] = {
            "authority": p.authority_name,
            "last_seq": p.last_seq_number.value,
            "purged_seq": p.purged_seq_number.value,
            "allowed_purge_seq": p.allowed_purge_seq_number.value,
            "purge_state": p.purge_state.name,
            "pending": len(p.pending_changes),
            # a copy each: two partition objects with one PartitionID (E-104) share no dict
            "objects": dict(by_partition.get(pid, {})),
        }
    return {
        "role": qm.role.value,
        "site": str(qm.site_identifier),
        "partitions": partitions,
        "psc_neighbors": [n.machine_name for n in qm.psc_neighbors],
        "bsc_neighbors": [n.machine_name for n in qm.bsc_neighbors],
        "deleted_objects": [
            {"guid": str(d.identifier) if d.identifier else None, "partition": str(d.partition_id),
             "seq": d.seq_number.value, "type": type_name(d.object_type) if d.object_type else None}
            for d in qm.deleted_objects
        ],
    }


def published_snapshot(nodes: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """:func:`node_snapshot` of every node as ``--json`` and the vectors publish it: sequence numbers as
    decimal strings (64 bits; mqspec.json64), the rest as it is."""
    out = {}
    for name, node in nodes.items():
        partitions = {
            pid: {**p, **{k: str(p[k]) for k in ("last_seq", "purged_seq", "allowed_purge_seq")},
                  "objects": {g: {**o, "seq": str(o["seq"])} for g, o in p["objects"].items()}}
            for pid, p in node["partitions"].items()}
        out[name] = {**node, "partitions": partitions,
                     "deleted_objects": [{**d, "seq": str(d["seq"])} for d in node["deleted_objects"]]}
    return out


def node_signature(qm: QueueManager) -> tuple[Any, ...]:
    """:func:`node_snapshot` in digest form: equal signatures exactly when the snapshots are equal.

    The objects of each partition stand as their digest (DirectoryStore.partition_digest), the
    rest as the snapshot shows it, so it costs the partitions, neighbors and tombstones of the
    node, not its objects.
    """
    directory = qm.directory
    partitions = {}
    for p in qm.partitions:
        partitions[p.partition_id] = (
            p.authority_name, p.last_seq_number.value, p.purged_seq_number.value,
            p.allowed_purge_seq_number.value, p.purge_state.name, len(p.pending_changes),
            directory.partition_digest(p.partition_id),
        )
    return (
        qm.role.value, qm.site_identifier, partitions,
        [n.machine_name for n in qm.psc_neighbors], [n.machine_name for n in qm.bsc_neighbors],
        [(d.identifier, d.partition_id, d.seq_number.value, d.object_type or None) for d in qm.deleted_objects],
    )


def convergence_problems(world: World) -> list[str]:
    """What keeps the enterprise from being converged, one line per problem (empty: converged)."""
    problems: list[str] = []
    authorities: dict[Guid, QueueManager] = {}
    for qm in world.nodes.values():
        for p in qm.partitions:
            if qm.is_authority_of(p):
                authorities[p.partition_id] = qm
    for name, qm in world.nodes.items():
        if not world.up[name]:
            problems.append(f"{name} is down")
            continue
        for p in qm.partitions:
            if p.purge_state is not PurgeState.NORMAL:
                problems.append(f"{name}: partition {p.partition_id} is {p.purge_state.name}")
        for pid, owner in authorities.items():
            if owner is qm:
                continue
            mine = qm.find_partition(pid)
            theirs = owner.find_partition(pid)
            if mine is None:
                problems.append(f"{name}: has no replica of partition {pid} ({owner.machine_name})")
                continue
            if mine.last_seq_number != theirs.last_seq_number:  # type: ignore[union-attr]
                problems.append(f"{name}: partition {pid} at {mine.last_seq_number.value}, "
                                f"authority {owner.machine_name} at {theirs.last_seq_number.value}")  # type: ignore[union-attr]
            if mine.authority_name != owner.machine_name:
                problems.append(f"{name}: partition {pid} names {mine.authority_name} as authority, "
                                f"not {owner.machine_name}")
            want = {o.guid: o.seq_number for o in owner.directory.objects_in(pid)}
            have = {o.guid: o.seq_number for o in qm.directory.objects_in(pid)}
            for guid in have.keys() - want.keys():
                problems.append(f"{name}: keeps object {guid} of partition {pid} that {owner.machine_name} does not have")
            for guid in want.keys() - have.keys():
                problems.append(f"{name}: lacks object {guid} of partition {pid}")
            for guid in want.keys() & have.keys():
                if want[guid] != have[guid]:
                    problems.append(f"{name}: object {guid} at seq {have[guid].value}, authority at {want[guid].value}")
    return sorted(problems)


def bootstrap_pec(world: World, pec: str, site: str, enterprise_name: str = "enterprise") -> None:
    """Install the PEC: start it, create the enterprise object, its site and its machine object.

    [MS-MQDS] installation is out of scope of MC-MQDSRP; mqspec models it as directory client
    requests at the PEC, which is the authority of both partitions (E-184).
    """
    world.add_node(pec, Role.PEC, site, pec)
    world.start(pec)
    world.site_guid(site)
    world.client_request(pec, ClientRequest("create", ObjectType.MQDS_ENTERPRISE, PEC_PARTITION_ID,
                                            path_name=enterprise_name,
                                            properties=(Property(P["PROPID_E_NAME"], enterprise_name),
                                                        Property(P["PROPID_E_PECNAME"], pec))))
    create_site(world, pec, site, pec)
    create_machine(world, pec, pec, site, service=4)


def create_site(world: World, at: str, site: str, psc: str) -> int:
    """A site object in the enterprise partition: "a site object is created ... by PEC0" (4.1)."""
    site_id = world.site_guid(site)
    return world.client_request(at, ClientRequest(
        "create", ObjectType.MQDS_SITE, PEC_PARTITION_ID, path_name=site,
        properties=(Property(P["PROPID_S_PATHNAME"], site), Property(P["PROPID_S_SITEID"], site_id),
                    Property(P["PROPID_S_PSC"], psc)),
    ))


def create_machine(world: World, at: str, machine: str, site: str, service: int = 0) -> int:
    """A machine object in its site's partition; PROPID_QM_SERVICE 2 makes it a BSC (3.1.7.2.5)."""
    site_id = world.site_guid(site)
    return world.client_request(at, ClientRequest(
        "create", ObjectType.MQDS_MACHINE, site_id, path_name=machine,
        properties=(Property(P["PROPID_QM_PATHNAME"], machine), Property(P["PROPID_QM_SITE_ID"], site_id),
                    Property(P["PROPID_QM_SERVICE"], service),
                    Property(P["PROPID_QM_MACHINE_ID"], Guid.from_name(f"qm:{machine}"))),
    ))


def add_site(world: World, site: str, psc: str) -> None:
    """4.1: the PEC creates the site object, then the new PSC starts and synchronizes."""
    pec = next(n for n, qm in world.nodes.items() if qm.is_pec)
    world.add_node(psc, Role.PSC, site, pec)
    create_site(world, pec, site, psc)
    world.start(psc)


def add_bsc(world: World, site: str, bsc: str) -> None:
    """4.2: the PSC's site gets a machine object with the BSC service, then the BSC starts."""
    psc_name = next(n for n, qm in world.nodes.items() if qm.is_psc and qm.site_identifier == world.site_guid(site))
    pec = next(n for n, qm in world.nodes.items() if qm.is_pec)
    world.add_node(bsc, Role.BSC, site, pec, psc=psc_name)
    create_machine(world, psc_name, bsc, site, service=SERVICE_BSC)
    world.start(bsc)


def delete_request(world: World, at: str, object_type: ObjectType, partition: Guid, *, path: str | None = None,
                   guid: Guid | None = None) -> int:
    return world.client_request(at, ClientRequest("delete", object_type, partition, path_name=path, guid=guid,
                                                  scope=default_scope(object_type, partition)))


def _initialize(qm: QueueManager, ctx: Context) -> None:
    """A directory server is the protocol's server and its client: 3.2.3 ("The server MUST perform the
    initializations specified in section 3.1.3"), then 3.3.3, which begins with the same idempotent steps."""
    server.server_initialization(qm, ctx)
    client.client_initialization(qm, ctx)
