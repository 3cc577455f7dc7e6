"""A running World as a state of the enterprise model: the projection the refinement check (issue 22) compares.

:class:`EnterpriseRecorder` watches a :class:`~mqspec.refimpl.world.World` (its observation hook, as
:mod:`mqspec.proofs.ghost` does) for what no server stores and the model needs: every message sent
(the model's network keeps every message, so the projection of the network is every message ever
sent), the authority's history (each change it numbered: which object, and whether it deleted it),
the servers the enterprise has known and the handovers. :func:`project` then reads the World and
the recorder into a :class:`Snapshot`: one Python value per symbol of
:mod:`mqspec.proofs.enterprise.vocabulary`, keyed by server names, partition GUIDs, object GUIDs and
sequence numbers as integers:

========================  ==========================================================================
symbol                    refimpl
========================  ==========================================================================
``alive`` / ``used``      ``world.nodes`` (a node is alive from ``add_node`` until a handover removes
                          it, running or crashed); ``used``: every name ever added
``bsc``, ``site``, ...    ``QueueManager.role``, ``site_identifier``; ``pec``: the PEC's name;
                          ``ent``: ``PEC_PARTITION_ID``
``has``, ``authname``     ``qm.partitions`` (``partition_id``, ``authority_name``)
``last`` ... ``sync0``    ``DirectoryPartition`` fields; ``sync0``: ``purge_state is SYNC0``
``held`` / ``ver``        ``qm.directory.objects``: GUID, ``partition_id``, ``seq_number``
``tombd`` / ``tseq``      ``qm.deleted_objects`` with an identifier
``pscnb`` / ``acked``     ``qm.psc_neighbors``: ``machine_name``; ``acked_pec_seq_number`` for the
                          enterprise partition, ``acked_seq_number`` for its own site partition
``twice``                 a second ``DirectoryPartition`` with the same ``partition_id``
``prop``                  every DirectoryChange of a ChangePropagationMessage sent, and every change
                          still in an ``AvailableChangeCollection``: (partition, SeqNumber,
                          PurgedSeqNumber)
``hdr_i`` / ``hdr_b``     every SeqNumberHeader entry sent to a PSC / to a BSC: (sender, partition,
                          LastSeqNumber, PurgedSeqNumber)
``sreq`` / ``sreq0``      every SyncRequestMessage sent: (requester, partition, From, To, Known)
``ap``, ``ack``           every AlreadyPurgedMessage / PSCAckMessage sent: (sender, receiver,
                          partition, number)
``rsent`` + fields        every SyncReplyMessage sent (:class:`Reply`); ``rknown``: the
                          KnownPurgedSeqNumber of the request it answered
``alast`` / ``apurged``   the authority's LastSeqNumber / PurgedSeqNumber (kept after a handover
                          removes it, as the new PSC took them over)
``hist`` / ``hdel``       each DirectoryOperation an authority performed with a SeqNumber for its
                          own partition: (object GUID, SeqNumber), and the deletions
``handed``                the handovers, closed transitively
========================  ==========================================================================

What the model does not have is not projected: timers, BSC neighbors, MyPSCName, pending changes
(received again from the network in the model), property values, path names.
"""

from __future__ import annotations

from typing import Any

import attrs

from mqspec.model.mqdsrp import (
    AlreadyPurgedMessage,
    ChangePropagationMessage,
    Command,
    PSCAckMessage,
    SyncReplyMessage,
    SyncRequestMessage,
)
from mqspec.refimpl.effects import DirectoryOperation, EnqueueMessage
from mqspec.refimpl.mqdsrp_state import PEC_PARTITION_ID, PurgeState, QueueManager, Role


@attrs.frozen
class Reply:
    """A SyncReplyMessage sent (the model's ``SyncReply`` element): its fields and its changes by object."""

    src: str
    dst: str
    part: Any
    frm: int
    to: int
    pur: int
    known: int | None
    complete: bool  # CompleteSync0 is 2
    items: tuple[tuple[Any, int, bool], ...]  # (object GUID, SeqNumber, is a delete)


@attrs.define
class EnterpriseRecorder:
    """Records what :func:`project` needs beyond the World's state; attach before the World's first event."""

    world: Any
    used: set[str] = attrs.field(factory=set)
    roles: dict[str, tuple[Role, Any]] = attrs.field(factory=dict)
    handed: set[tuple[str, str]] = attrs.field(factory=set)
    hist: set[tuple[Any, int]] = attrs.field(factory=set)
    hdel: set[tuple[Any, int]] = attrs.field(factory=set)
    authority: dict[Any, tuple[int, int]] = attrs.field(factory=dict)
    prop: set[tuple[Any, int, int]] = attrs.field(factory=set)
    hdr_i: set[tuple[str, Any, int, int]] = attrs.field(factory=set)
    hdr_b: set[tuple[str, Any, int, int]] = attrs.field(factory=set)
    sreq: set[tuple[str, Any, int, int, int]] = attrs.field(factory=set)
    sreq0: set[tuple[str, Any, int, int, int]] = attrs.field(factory=set)
    ap: set[tuple[str, str, Any, int]] = attrs.field(factory=set)
    ack: set[tuple[str, str, Any, int]] = attrs.field(factory=set)
    replies: list[Reply] = attrs.field(factory=list)
    #: every server the enterprise had: one a handover stopped keeps its state in the model (``alive`` false)
    servers: dict[str, QueueManager] = attrs.field(factory=dict)
    #: the partition of each object in the authority's history (``part``, for one no server holds any more)
    parts: dict[Any, Any] = attrs.field(factory=dict)
    _deleting: set[str] = attrs.field(factory=set)
    _answering: dict[str, SyncRequestMessage] = attrs.field(factory=dict)
    _names: dict[tuple[Any, str], Any] = attrs.field(factory=dict)

    def __attrs_post_init__(self) -> None:
        self.world.observers.append(self)
        self.topology_changed(self.world)

    # --- the World's observation hook ---------------------------------------------------------------------

    def before(self, world: Any, qm: QueueManager, event: tuple[Any, ...]) -> None:
        if qm.machine_name not in self.roles:  # World.add_node tells no observer; a node's first run is its start
            self.topology_changed(world)
        self._answering.pop(qm.machine_name, None)
        if len(event) == 2 and event[0] == "receive":
            from mqspec.model import mqdsrp
            from mqspec.model.errors import DecodeError

            try:
                message = mqdsrp.decode_shared(event[1].body)
            except (DecodeError, AttributeError, ValueError):
                return
            if type(message) is SyncRequestMessage:
                self._answering[qm.machine_name] = message

    def effect(self, world: Any, qm: QueueManager, effect: object) -> None:
        kind = type(effect)
        if kind is DirectoryOperation:
            self._history(qm, effect)  # type: ignore[arg-type]
        elif kind is EnqueueMessage:
            self._sent(world, qm, effect)  # type: ignore[arg-type]

    def after(self, world: Any, qm: QueueManager, event: tuple[Any, ...], effects: list) -> None:
        for p in qm.partitions:
            if qm.is_authority_of(p):
                self.authority[p.partition_id] = (p.last_seq_number.value, p.purged_seq_number.value)
        if qm.machine_name in self._deleting:
            # a delete's DirectoryOperation carries no SeqNumber: the authority's new tombstone has it (E-108)
            self._deleting.discard(qm.machine_name)
            for d in qm.deleted_objects:
                partition = qm.find_partition(d.partition_id)
                if d.identifier is not None and partition is not None and qm.is_authority_of(partition):
                    self.parts.setdefault(d.identifier, d.partition_id)
                    self.hist.add((d.identifier, d.seq_number.value))
                    self.hdel.add((d.identifier, d.seq_number.value))

    def skipped(self, world: Any, qm: QueueManager, event: tuple[Any, ...]) -> None:
        """A handler run the fast path skipped changes nothing (its empty propagation is not recorded)."""

    def crashed(self, world: Any, name: str, lose: str) -> None:
        self._answering.pop(name, None)

    def topology_changed(self, world: Any) -> None:
        """Servers joined, or a handover replaced a site's PSC (refimpl/handover.py)."""
        gone = [n for n in self.roles if n not in world.nodes]
        for name, qm in world.nodes.items():
            if name not in self.roles:
                self.roles[name] = (qm.role, qm.site_identifier)
                self.servers[name] = qm
                self.used.add(name)
                for old in gone:
                    role, site = self.roles[old]
                    if role is not Role.BSC and qm.role is not Role.BSC and site == qm.site_identifier:
                        self.handed |= {(old, name)} | {(a, name) for a, b in self.handed if b == old}

    # --- what the hooks record -------------------------------------------------------------------------------

    def _history(self, qm: QueueManager, op: DirectoryOperation) -> None:
        if op.operation == "delete" and op.status == 0:
            self._deleting.add(qm.machine_name)
        if op.status != 0 or op.operation not in ("create", "update", "delete") or op.seq_number is None:
            return
        partition = qm.find_partition(op.partition_id) if op.partition_id is not None else None
        if partition is None or not qm.is_authority_of(partition):
            return
        key = (op.partition_id, op.path_name or "")
        guid = op.guid
        if guid is None and op.path_name is not None:
            # the object the path names now (a create may reuse the path of an object deleted before), else
            # the last one it named (a delete's object is gone)
            obj = qm.directory.find(path_name=op.path_name, object_type=op.object_type)
            guid = getattr(obj, "guid", None) or self._names.get(key)
        if guid is None and op.operation != "delete":
            # an object no path names (a routing link named by PROPID_L_ID): the one the change numbered
            guid = next((o.guid for o in qm.directory.objects.values()
                         if o.partition_id == op.partition_id and o.seq_number.value == op.seq_number), None)
        if guid is None:
            return
        if op.path_name is not None:
            self._names[key] = guid
        self.parts.setdefault(guid, op.partition_id)
        self.hist.add((guid, op.seq_number))
        if op.operation == "delete":
            self.hdel.add((guid, op.seq_number))

    def deletions(self, qm: QueueManager, changes: Any, hist: set[tuple[Any, int]],
                  hdel: set[tuple[Any, int]]) -> None:
        """Add to ``hist`` and ``hdel`` the deletions among ``changes`` that ``qm`` numbered as their partition's
        authority: a second record of the authority's history that does not depend on the tombstone it keeps."""
        for c in changes:
            if c.command is not Command.DELETE:
                continue
            partition = qm.find_partition(c.partition_id)
            if partition is None or not qm.is_authority_of(partition):
                continue
            guid = c.guid_identifier or self._names.get((c.partition_id, c.path_name or ""))
            if guid is not None:
                self.parts.setdefault(guid, c.partition_id)
                hist.add((guid, c.seq_number.value))
                hdel.add((guid, c.seq_number.value))

    def _sent(self, world: Any, qm: QueueManager, effect: EnqueueMessage) -> None:
        src, dst, msg = qm.machine_name, effect.destination, effect.body
        kind = type(msg)
        if kind is ChangePropagationMessage:
            for c in msg.changes:
                self.prop.add((c.partition_id, c.seq_number.value, c.purged_seq_number.value))
            self.deletions(qm, msg.changes, self.hist, self.hdel)
            header = msg.seq_numbers
            to_bsc = self.roles.get(dst, (None,))[0] is Role.BSC
            for entry in header.partitions:
                key = (header.machine_name or src, entry.partition_id, entry.last_seq_number.value,
                       entry.purged_seq_number.value)
                (self.hdr_b if to_bsc else self.hdr_i).add(key)
        elif kind is SyncRequestMessage:
            key = (msg.requester_name, msg.partition_id, msg.from_seq_number.value, msg.to_seq_number.value,
                   msg.known_purged_seq_number.value)
            (self.sreq0 if msg.is_sync0 else self.sreq).add(key)
        elif kind is SyncReplyMessage:
            asked = self._answering.get(src)
            known = asked.known_purged_seq_number.value if asked is not None else None
            items = tuple((c.guid_identifier, c.seq_number.value, c.command is Command.DELETE) for c in msg.changes)
            self.replies.append(Reply(src, dst, msg.partition_id, msg.from_seq_number.value, msg.to_seq_number.value,
                                      msg.purged_seq_number.value, known, int(msg.complete_sync0) == 2, items))
        elif kind is AlreadyPurgedMessage:
            self.ap.add((src, dst, msg.partition_id, msg.purged_seq_number.value))
        elif kind is PSCAckMessage:
            self.ack.add((msg.psc_name, dst, msg.acked_partition_id, msg.acked_seq_number.value))


@attrs.frozen
class Snapshot:
    """The enterprise model's state of a World: one value per symbol (see the module docstring)."""

    pec: str | None
    ent: Any
    alive: frozenset[str]
    used: frozenset[str]
    bsc: frozenset[str]
    site: dict[str, Any]
    part: dict[Any, Any]
    has: frozenset[tuple[str, Any]]
    twice: frozenset[tuple[str, Any]]
    authname: frozenset[tuple[str, Any, str]]
    last: dict[tuple[str, Any], int]
    purged: dict[tuple[str, Any], int]
    allowed: dict[tuple[str, Any], int]
    window: dict[tuple[str, Any], int]
    sync0: frozenset[tuple[str, Any]]
    ver: dict[tuple[str, Any], int]  # held objects and their SeqNumber
    tseq: dict[tuple[str, Any], int]  # tombstones and their SeqNumber
    pscnb: frozenset[tuple[str, str]]
    acked: dict[tuple[str, str, Any], int]
    prop: frozenset[tuple[Any, int, int]]
    hdr_i: frozenset[tuple[str, Any, int, int]]
    hdr_b: frozenset[tuple[str, Any, int, int]]
    sreq: frozenset[tuple[str, Any, int, int, int]]
    sreq0: frozenset[tuple[str, Any, int, int, int]]
    ap: frozenset[tuple[str, str, Any, int]]
    ack: frozenset[tuple[str, str, Any, int]]
    replies: tuple[Reply, ...]
    alast: dict[Any, int]
    apurged: dict[Any, int]
    hist: frozenset[tuple[Any, int]]
    hdel: frozenset[tuple[Any, int]]
    handed: frozenset[tuple[str, str]]


def project(world: Any, recorder: EnterpriseRecorder, server: str | None = None) -> Snapshot:
    """The enterprise model's state of ``world`` now (``recorder`` attached before its first event).

    With ``server``, the state of that server alone and the authority's history, every other server holding
    nothing and no message sent or queued to send (``prop`` empty): what a step invariant reads of a handler run
    there, which changes no other server's state.
    """
    recorder.topology_changed(world)  # servers added and not yet started
    nodes = recorder.servers if server is None else {server: recorder.servers[server]}
    pec = next((n for n, qm in recorder.servers.items() if qm.is_pec), None)
    has, twice, authname, sync0, pscnb = set(), set(), set(), set(), set()
    last, purged, allowed, window, ver, tseq, acked = {}, {}, {}, {}, {}, {}, {}
    hist, hdel = set(recorder.hist), set(recorder.hdel)
    part: dict[Any, Any] = {}
    prop = set(recorder.prop) if server is None else set()  # with a server: nothing sent, nothing queued to send
    for name, qm in nodes.items():
        for p in qm.partitions:
            key = (name, p.partition_id)
            if key in has:
                twice.add(key)
            has.add(key)
            authname.add((name, p.partition_id, p.authority_name))
            last[key], purged[key] = p.last_seq_number.value, p.purged_seq_number.value
            allowed[key], window[key] = p.allowed_purge_seq_number.value, p.change_missing_window.value
            if p.purge_state is PurgeState.SYNC0:
                sync0.add(key)
        for obj in qm.directory.objects.values():
            ver[(name, obj.guid)] = obj.seq_number.value
            part[obj.guid] = obj.partition_id
        for d in qm.deleted_objects:
            if d.identifier is not None:
                tseq[(name, d.identifier)] = d.seq_number.value
                part.setdefault(d.identifier, d.partition_id)
        for n in qm.psc_neighbors:
            pscnb.add((name, n.machine_name))
            acked[(name, n.machine_name, PEC_PARTITION_ID)] = n.acked_pec_seq_number.value
            # AckedSeqNumber: the neighbor's ack of this server's own site partition (3.2.7.4), whichever
            # partition the neighbor entry names (its own site's, E-105)
            acked[(name, n.machine_name, qm.site_identifier)] = n.acked_seq_number.value
        for n in (*qm.psc_neighbors, *qm.bsc_neighbors):
            if server is None:
                prop.update((c.partition_id, c.seq_number.value, c.purged_seq_number.value)
                            for c in n.available_changes)
            recorder.deletions(qm, n.available_changes, hist, hdel)
    for guid, partition_id in recorder.parts.items():  # objects of the history no server holds any more
        part.setdefault(guid, partition_id)
    return Snapshot(
        pec=pec, ent=PEC_PARTITION_ID, alive=frozenset(world.nodes), used=frozenset(recorder.used),
        bsc=frozenset(n for n, (role, _) in recorder.roles.items() if role is Role.BSC),
        site={n: site for n, (_, site) in recorder.roles.items()}, part=part,
        has=frozenset(has), twice=frozenset(twice), authname=frozenset(authname), last=last, purged=purged,
        allowed=allowed, window=window, sync0=frozenset(sync0), ver=ver, tseq=tseq, pscnb=frozenset(pscnb),
        acked=acked, prop=frozenset(prop), **_sent_messages(recorder if server is None else None),
        alast={p: v[0] for p, v in recorder.authority.items()},
        apurged={p: v[1] for p, v in recorder.authority.items()},
        hist=frozenset(hist), hdel=frozenset(hdel), handed=frozenset(recorder.handed),
    )


def _sent_messages(recorder: EnterpriseRecorder | None) -> dict[str, Any]:
    """The messages ``recorder`` saw sent (none without one), as :class:`Snapshot`'s fields."""
    if recorder is None:
        return {"hdr_i": frozenset(), "hdr_b": frozenset(), "sreq": frozenset(), "sreq0": frozenset(),
                "ap": frozenset(), "ack": frozenset(), "replies": ()}
    return {"hdr_i": frozenset(recorder.hdr_i), "hdr_b": frozenset(recorder.hdr_b), "sreq": frozenset(recorder.sreq),
            "sreq0": frozenset(recorder.sreq0), "ap": frozenset(recorder.ap), "ack": frozenset(recorder.ack),
            "replies": tuple(recorder.replies)}
