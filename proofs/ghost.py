"""Ghost state: what the invariants need that no server stores, recorded from a running World.

A :class:`Ghost` registers itself as an observer of a :class:`~mqspec.refimpl.world.World`
(the observation hook of ``refimpl/world.py``) and watches every handler run of every node.
It never changes the world. It keeps:

* for each partition, ``hi``: the highest sequence number its authority has assigned so far
  (the authority assigns them one by one, so ``{1 .. hi}`` is the set of assigned numbers);
* for each object the authority created, its partition and the sequence numbers of its
  creation and (once deleted) of its deletion at the authority (:class:`GhostObject`);
* for each server and partition, the PreviousSeqNumber of every change delivered to it that it
  has not yet passed, so that an applied change can be named with the LastSeqNumber before it;
* the events of the current step (:data:`Event`), fine-grained: a LastSeqNumber or
  PurgedSeqNumber that moved (seen as each effect is emitted, so two moves inside one handler
  are two events), tombstones an authority purged and the acknowledgments at that moment, a
  change request and what the server did with it, a SyncReplyMessage sent.

:meth:`Ghost.observe` hands the events of a step to the invariant checkers as an
:class:`Observation` (:mod:`mqspec.proofs.invariants`).

Ownership is static, as 1.3.1.2 states it: the PEC owns the enterprise partition, the PSC of a
site owns that site's partition (:meth:`Ghost.owner_name`); a partition whose PSC is no server
of the world (a site object naming a machine that was never installed) has no owner here.
"""

from __future__ import annotations

import bisect
import operator
from typing import Any, NamedTuple

import attrs

from mqspec.model import mqdsrp
from mqspec.model.errors import DecodeError
from mqspec.model.guid import Guid
from mqspec.model.mqdsrp import (
    ChangeReplyMessage,
    ChangeRequestMessage,
    Command,
    Operation,
    SyncReplyMessage,
)
from mqspec.refimpl.effects import DirectoryOperation, EnqueueMessage, RequestCompleted
from mqspec.refimpl.mqdsrp_state import PEC_PARTITION_ID, QueueManager, Role

_APPLY_OPS = frozenset(("create", "update", "delete"))
_DECODED_OPS = frozenset((Operation.CHANGE_PROPAGATION, Operation.SYNC_REPLY, Operation.CHANGE_REQUEST))
#: what :meth:`Ghost._look` compares of each partition
_PARTITION_STATE = operator.attrgetter("partition_id", "last_seq_number", "purged_seq_number")


# --- events ----------------------------------------------------------------------------------


class SeqMove(NamedTuple):
    """LastSeqNumber (``field`` "last") or PurgedSeqNumber ("purged") of a server's partition moved.

    ``cause``: "apply" (a directory change was just applied there), "sync0" (Start Sync0 State
    reset it: seen with the Reset Directory Partition it raises), "other" (anything else: a
    Count-0 sync reply, a purge). ``owner``: the server owns the partition. ``hi_before``: the
    highest number the authority had assigned before this move. ``previous``: for an applied
    change, the PreviousSeqNumbers of the delivered changes with SeqNumber ``new``.

    A named tuple, not a frozen attrs class like the other events: the ghost records one for every
    change every server applies (the machine's bursts apply over a thousand at each server), and a
    tuple is built in a third of the time.
    """

    node: str
    partition: Guid
    field: str
    old: int
    new: int
    owner: bool
    cause: str
    hi_before: int
    handler: str
    previous: tuple[int, ...] = ()


@attrs.frozen(slots=True)
class TombstonesPurged:
    """Tombstones left ``node``'s DeletedObjectCollection in one handler run.

    ``removed``: (identifier, partition, seq) of each; ``acks``: for each partition the server
    owns, the (neighbor, acknowledged sequence number) of its PSC neighbors at that moment.
    """

    node: str
    removed: tuple[tuple[Guid | None, Guid, int], ...]
    acks: dict[Guid, tuple[tuple[str, int], ...]]
    handler: str


@attrs.frozen(slots=True)
class ChangeRequestHandled:
    """A change request reached ``node`` (a ChangeRequestMessage, or a directory client's request).

    ``owner``: the server owns the request's partition; ``applied``: it changed its directory or
    its LastSeqNumber while handling it; ``forwarded_to``: where it sent the request on;
    ``replied``: the Result of the ChangeReplyMessage it sent, if any.
    """

    node: str
    role: str
    partition: Guid
    via: str  # "message" | "client"
    requester: str
    request_id: int
    owner: bool
    applied: bool
    forwarded_to: str | None
    replied: int | None


@attrs.frozen(slots=True)
class SyncReplySent:
    """A SyncReplyMessage left ``node``: its range, its CompleteSync0 and the objects it deletes."""

    node: str
    to: str
    partition: Guid
    from_seq: int
    to_seq: int
    complete: int
    deleted: frozenset[Guid]


Event = SeqMove | TombstonesPurged | ChangeRequestHandled | SyncReplySent


@attrs.define(slots=True)
class GhostObject:
    """An object the authority created: its partition and the sequence numbers of its life there."""

    guid: Guid
    partition: Guid
    object_type: int
    created: int
    deleted: int | None = None


@attrs.frozen
class Observation:
    """What the invariant checkers see after a step: the world, the ghost and the step's events.

    ``touched``: the servers a handler ran at during the step (state checks may stop there);
    ``full``: check every server anyway; ``quiescent``: the step was a settle that reached
    quiescence (the ``*_at_quiescence`` invariants apply only then); ``settled``: whether that
    settle reached quiescence at all (False: it gave up at its time limit).
    """

    world: Any
    ghost: Ghost
    events: tuple[Event, ...]
    touched: frozenset[str]
    step: str = ""
    quiescent: bool = False
    full: bool = False
    settled: bool = True
    #: the handler runs of the step that departed from the model (proofs/refinement; empty when it is off)
    departures: tuple[Any, ...] = ()

    def nodes(self) -> list[tuple[str, QueueManager]]:
        """The running servers whose state the state invariants look at for this step."""
        world = self.world
        return [
            (name, qm) for name, qm in world.nodes.items()
            if world.up.get(name) and (self.full or name in self.touched)
        ]


class _Run:
    """The handler run in progress at one node."""

    __slots__ = ("node", "label", "tombstones", "request", "applied", "forwarded_to", "replied", "sync0")

    def __init__(self, node: str, label: str, tombstones: list) -> None:
        self.node = node
        self.label = label
        self.tombstones = tombstones
        self.request: tuple[str, Guid, str, int, bool] | None = None  # via, partition, requester, id, owner
        self.applied = False
        self.forwarded_to: str | None = None
        self.replied: int | None = None
        self.sync0: set[Guid] = set()


# --- the recorder ----------------------------------------------------------------------------


class Ghost:
    """The ghost-state recorder; attach it before the world's first event (``Ghost(world)``)."""

    def __init__(self, world: Any) -> None:
        self.world = world
        self.hi: dict[Guid, int] = {}
        self.objects: dict[Guid, GhostObject] = {}
        #: partition -> [(deletion seq, guid, creation seq)], in deletion order
        self.deletions: dict[Guid, list[tuple[int, Guid, int]]] = {}
        #: (server, partition) -> SeqNumber -> PreviousSeqNumber (a tuple when copies disagree)
        self.delivered: dict[tuple[str, Guid], dict[int, Any]] = {}
        self.events: list[Event] = []
        self.touched: set[str] = set()
        self.handler_runs = 0
        self._seen: dict[str, dict[bytes, tuple[Any, Any]]] = {}  # the SequenceNumber objects last seen
        #: node -> _PARTITION_STATE of each partition when _look last brought ``_seen`` up to date
        self._state: dict[str, list[tuple[Any, Any, Any]]] = {}
        self._pending_apply: dict[str, bool] = {}
        self._runs: dict[str, _Run] = {}
        self._owners: dict[Guid, str | None] = {}
        self._owners_for = -1
        #: the refinement check whose departures each observation carries (proofs/refinement), if one runs
        self.refinement: Any = None
        world.observers.append(self)

    # --- ownership ----------------------------------------------------------------------------

    def owner_name(self, partition: Guid) -> str | None:
        """The server that owns ``partition`` (1.3.1.2), or None when no server of the world does."""
        nodes = self.world.nodes
        if self._owners_for != len(nodes):
            self._owners = {}
            self._owners_for = len(nodes)
        owner = self._owners.get(partition, False)
        if owner is False:
            owner = None
            for name, qm in nodes.items():
                if partition == PEC_PARTITION_ID:
                    if qm.role is Role.PEC:
                        owner = name
                        break
                elif qm.role is not Role.BSC and qm.site_identifier == partition:
                    owner = name
                    break
            self._owners[partition] = owner
        return owner  # type: ignore[return-value]

    def owned(self, partition: Guid) -> QueueManager | None:
        """The owner's QueueManager, when it exists and holds the partition."""
        name = self.owner_name(partition)
        if name is None:
            return None
        qm = self.world.nodes[name]
        return qm if qm.find_partition(partition) is not None else None

    def deletions_after(self, partition: Guid, low: int, high: int | None = None) -> list[tuple[int, Guid, int]]:
        """The deletions of ``partition`` at its authority with low < seq (<= high)."""
        items = self.deletions.get(partition)
        if not items:
            return []
        start = bisect.bisect_right(items, low, key=_first)
        if high is None:
            return items[start:]
        return items[start:bisect.bisect_right(items, high, key=_first)]

    # --- the step boundary -------------------------------------------------------------------

    def observe(self, step: str = "", *, quiescent: bool = False, full: bool = False,
                settled: bool = True) -> Observation:
        """The events and touched servers since the last call, as an Observation; then start afresh."""
        departures = tuple(self.refinement.take()) if self.refinement is not None else ()
        obs = Observation(self.world, self, tuple(self.events), frozenset(self.touched), step,
                          quiescent, full, settled, departures)
        self.events = []
        self.touched = set()
        return obs

    # --- the World observer protocol ---------------------------------------------------------

    def before(self, world: Any, qm: QueueManager, event: tuple[Any, ...]) -> None:
        name = qm.machine_name
        self.handler_runs += 1
        self.touched.add(name)
        if name not in self._seen:
            self._seen[name] = {p.partition_id.bytes_le: (p.last_seq_number, p.purged_seq_number)
                                for p in qm.partitions}
            self._state.pop(name, None)
        kind = event[0] if event else ""
        run = _Run(name, kind, qm.deleted_objects)
        self._runs[name] = run
        if kind == "receive":
            msg = event[1]
            body = msg.body
            if int(msg.klass) == 0 and len(body) > 17 and body[0] == 0 and body[17] in _DECODED_OPS:
                op = body[17]
                if (op == Operation.CHANGE_PROPAGATION and body[19:21] == b"\0\0") or (
                        op == Operation.SYNC_REPLY and body[58:62] == b"\0\0\0\0"):
                    run.label = f"receive {Operation(op).name} from {msg.source_machine}"
                    return  # no DirectoryChange in it: nothing to remember
                try:
                    # the handler decodes the same bytes with decode_shared next: one decoding serves both
                    message = mqdsrp.decode_shared(body)
                except DecodeError:
                    return
                run.label = f"receive {type(message).__name__} from {msg.source_machine}"
                if type(message) is ChangeRequestMessage:
                    owner = self.owner_name(message.partition_id) == name
                    run.request = ("message", message.partition_id, message.requester_name,
                                   message.request_identifier, owner)
                else:
                    delivered = self.delivered
                    for change in message.changes:
                        key = (name, change.partition_id)
                        per = delivered.get(key)
                        if per is None:
                            per = delivered[key] = {}
                        seq = change.seq_number.value
                        previous = change.previous_seq_number.value
                        known = per.get(seq)
                        if known is None:
                            per[seq] = previous
                        elif known != previous and (type(known) is int or previous not in known):
                            per[seq] = (*((known,) if type(known) is int else known), previous)
            else:
                run.label = f"receive class {int(msg.klass):#x} from {msg.source_machine}"
        elif kind == "client_request":
            request = event[1]
            owner = self.owner_name(request.partition) == name
            run.label = f"client {request.operation} at {name}"
            run.request = ("client", request.partition, name, 0, owner)
        elif kind == "timer":
            run.label = f"timer {event[1].kind} at {name}"

    def effect(self, world: Any, qm: QueueManager, effect: object) -> None:
        run = self._runs.get(qm.machine_name)
        if run is None:
            return
        kind = type(effect)
        if kind is DirectoryOperation:
            if effect.operation == "reset1" and effect.partition_id is not None:
                run.sync0.add(effect.partition_id)
            self._look(qm, run)
            if effect.status == 0 and effect.operation in _APPLY_OPS:
                self._pending_apply[run.node] = True
                run.applied = True
                self._record_object(qm, effect)
        elif kind is EnqueueMessage:
            body = effect.body
            body_type = type(body)
            if body_type is ChangeRequestMessage:
                run.forwarded_to = effect.destination
            elif body_type is ChangeReplyMessage:
                run.replied = body.result
            elif body_type is SyncReplyMessage:
                self.events.append(SyncReplySent(
                    run.node, effect.destination, body.partition_id, body.from_seq_number.value,
                    body.to_seq_number.value, int(body.complete_sync0),
                    frozenset(c.guid_identifier for c in body.changes
                              if c.command is Command.DELETE and c.guid_identifier is not None),
                ))
        elif kind is RequestCompleted:
            self._look(qm, run)
            run.replied = effect.status

    def after(self, world: Any, qm: QueueManager, event: tuple[Any, ...], effects: list) -> None:
        name = qm.machine_name
        run = self._runs.pop(name, None)
        if run is None:
            return
        self._look(qm, run)
        self._pending_apply[name] = False
        if qm.deleted_objects is not run.tombstones:
            keep = {id(d) for d in qm.deleted_objects}
            removed = tuple((d.identifier, d.partition_id, d.seq_number.value)
                            for d in run.tombstones if id(d) not in keep)
            if removed:
                acks: dict[Guid, tuple[tuple[str, int], ...]] = {}
                for p in {r[1] for r in removed}:
                    if self.owner_name(p) == name:
                        acks[p] = tuple(
                            (n.machine_name,
                             (n.acked_pec_seq_number if p == PEC_PARTITION_ID else n.acked_seq_number).value)
                            for n in qm.psc_neighbors
                        )
                self.events.append(TombstonesPurged(name, removed, acks, run.label))
        if run.request is not None:
            via, partition, requester, request_id, owner = run.request
            self.events.append(ChangeRequestHandled(
                name, qm.role.value, partition, via, requester, request_id, owner, run.applied,
                run.forwarded_to, run.replied,
            ))
        # forget delivered changes this server has passed (they can no longer be applied)
        for p in qm.partitions:
            per = self.delivered.get((name, p.partition_id))
            if per:
                last = p.last_seq_number.value
                if min(per) <= last:
                    self.delivered[(name, p.partition_id)] = {s: v for s, v in per.items() if s > last}

    def topology_changed(self, world: Any) -> None:
        """Servers left or joined the world (a PSC handover, refimpl/handover.py): find owners afresh."""
        self._owners_for = -1

    def skipped(self, world: Any, qm: QueueManager, event: tuple[Any, ...]) -> None:
        """A handler run the World's fast path skipped because it changes nothing (refimpl/fastpath.py).

        It would have found no move, no request and no tombstone; only that it touched the server.
        """
        self.touched.add(qm.machine_name)

    def crashed(self, world: Any, name: str, lose: str) -> None:
        self._runs.pop(name, None)
        self._pending_apply[name] = False
        if lose == "all":
            # the persisted replication state is gone: what follows starts from nothing
            self._seen[name] = {}
            self._state.pop(name, None)
            for key in [k for k in self.delivered if k[0] == name]:
                del self.delivered[key]

    # --- internals ----------------------------------------------------------------------------

    def _look(self, qm: QueueManager, run: _Run) -> None:
        """Compare the node's partitions with what was last seen; record each move.

        Called as each directory operation or request completion is emitted, and after the
        handler: every application of a change emits a directory operation before the next one
        can move LastSeqNumber again, and Start Sync0 State emits its Reset Directory Partition
        right after its reset, so no move goes unseen or is given the wrong cause.
        """
        name = run.node
        partitions = qm.partitions
        state = list(map(_PARTITION_STATE, partitions))
        seen = self._seen[name]  # keyed by the PartitionID's bytes: their hash is cached, a Guid's is computed
        if len(seen) <= len(state) and state == self._state.get(name):
            # every partition as the last look left ``seen`` (equal PartitionIDs in the same order, equal
            # numbers): the loop below would record no move and delete nothing
            return
        self._state[name] = state
        if len(seen) > len(partitions):
            present = {p.partition_id.bytes_le for p in partitions}
            for key in [k for k in seen if k not in present]:
                del seen[key]
        first: set[bytes] | None = set() if len(partitions) > 1 else None
        for pid, last_obj, purged_obj in state:
            key = pid.bytes_le
            if first is not None:
                if key in first:
                    continue  # a second partition object with one PartitionID (E-104): find_partition's rule
                first.add(key)
            old = seen.get(key)
            if old is not None and old[0] is last_obj and old[1] is purged_obj:
                continue
            seen[key] = (last_obj, purged_obj)
            if old is None:
                continue
            old_last, old_purged = old[0].value, old[1].value
            last, purged = last_obj.value, purged_obj.value
            if old_last == last and old_purged == purged:
                continue
            owner = self.owner_name(pid) == name
            hi = self.hi.get(pid, 0)
            if pid in run.sync0:
                cause = "sync0"
            elif self._pending_apply.get(name):
                cause = "apply"
            else:
                cause = "other"
            if old_last != last:
                previous: tuple[int, ...] = ()
                if cause == "apply":
                    self._pending_apply[name] = False
                    if not owner:
                        known = self.delivered.get((name, pid), {}).get(last)
                        previous = () if known is None else (known,) if type(known) is int else tuple(sorted(known))
                self.events.append(SeqMove(name, pid, "last", old_last, last, owner, cause, hi, run.label, previous))
                if owner and last > hi:
                    self.hi[pid] = last
            if old_purged != purged:
                self.events.append(SeqMove(name, pid, "purged", old_purged, purged, owner, cause, hi, run.label))

    def _record_object(self, qm: QueueManager, op: DirectoryOperation) -> None:
        """At the authority: note an object's creation, or its deletion and the number it takes."""
        name = qm.machine_name
        if op.operation == "create":
            partition = op.partition_id
            if partition is None or self.owner_name(partition) != name or op.seq_number is None:
                return
            obj = qm.directory.find(guid=op.guid, path_name=op.path_name, object_type=op.object_type)
            if obj is None or obj.seq_number.value != op.seq_number:
                # a type without path names (users, routing links): the object just created
                obj = next((o for o in qm.directory.objects.values()
                            if o.partition_id == partition and o.seq_number.value == op.seq_number
                            and o.object_type == op.object_type), None)
            if obj is not None:
                self.objects[obj.guid] = GhostObject(obj.guid, partition, obj.object_type, op.seq_number)
        elif op.operation == "delete" and op.guid is not None:
            ghost = self.objects.get(op.guid)
            if ghost is None or ghost.deleted is not None or self.owner_name(ghost.partition) != name:
                return
            partition = qm.find_partition(ghost.partition)
            if partition is None:
                return
            # Read Next Sequence Number / Receive Change Request: the deletion takes LastSeqNumber + 1
            ghost.deleted = partition.last_seq_number.value + 1
            self.deletions.setdefault(ghost.partition, []).append((ghost.deleted, ghost.guid, ghost.created))


def _first(item: tuple[int, Guid, int]) -> int:
    return item[0]
