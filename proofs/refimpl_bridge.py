"""The model of :mod:`mqspec.proofs.z3_model` and the reference handlers, side by side on one concrete state.

:func:`run_refimpl` builds a real :class:`~mqspec.refimpl.mqdsrp_state.QueueManager` (with its
DirectoryStore) from a concrete model state, raises the reference handler of an event with the
same arguments, and reads the post-state and the messages back in the model's terms;
:func:`run_model` runs the model's own code on Python ints. tests/proofs/test_model_vs_refimpl.py
compares the two on thousands of random states: that is what keeps the Z3 encoding from drifting
away from refimpl (issue 5: "cross-check encoding and refimpl on thousands of random states").

How a model state becomes a queue manager: the node is PEC0 (authority of the enterprise
partition), PSC1 (authority of site1, replica of the enterprise partition and of site2) or BSC11
(replica of both partitions of site1), chosen by ``is_authority`` / ``is_psc`` / ``is_enterprise``.
Each change (queued or arriving) names a queue of its own by GUID; ``applies`` decides whether that
queue exists in the directory (an update or delete of a missing queue fails). Tombstones are
DeletedObjects of queues; tracked directory objects are users (enterprise partition) or queues
(site partitions), so that Lookup Directory Objects (3.2.7.8) finds them; "another partition" is
a site no node holds. An authority also gets one BSC neighbor, whose AvailableChangeCollection
shows what Propagate Directory Change sent.
"""

from __future__ import annotations

import random
from typing import Any

import attrs

from mqspec.model.guid import Guid
from mqspec.model.mqdsrp import (
    AlreadyPurgedMessage,
    ChangePropagationMessage,
    ChangeRequestMessage,
    Command,
    CompleteSync0,
    DirectoryChange,
    PartitionSeqNumbers,
    PSCAckMessage,
    Scope,
    SeqNumberHeader,
    SyncReplyMessage,
    SyncRequestMessage,
)
from mqspec.model.propids import PROPIDS, ObjectType
from mqspec.model.propvalue import Property
from mqspec.model.seqnum import SequenceNumber
from mqspec.refimpl import mqds
from mqspec.refimpl import mqdsrp_client as client
from mqspec.refimpl import mqdsrp_common as common
from mqspec.refimpl import mqdsrp_objects as objects
from mqspec.refimpl import mqdsrp_server as server
from mqspec.refimpl.directory import DirectoryStore
from mqspec.refimpl.effects import Context, EnqueueMessage, Mode
from mqspec.refimpl.mqdsrp_state import (
    PEC_PARTITION_ID,
    DeletedObject,
    DirectoryNeighbor,
    DirectoryPartition,
    PurgeState,
    QueueManager,
    Role,
    lose_volatile_state,
)

from . import z3_events as ev
from . import z3_model as m

P = {name: pdef.propid for name, pdef in PROPIDS.items()}
SITE0, SITE1, SITE2 = (Guid.from_name(f"site:site{i}") for i in range(3))
ELSEWHERE = Guid.from_name("site:elsewhere")  # "another partition": no node holds it
QUEUE, USER = ObjectType.MQDS_QUEUE, ObjectType.MQDS_USER


def _guid(kind: str, i: int) -> Guid:
    return Guid.from_name(f"bridge:{kind}:{i}")


# --- model state -> queue manager ---------------------------------------------------------------


def _node(s: m.NodeState) -> tuple[QueueManager, DirectoryPartition]:
    ent = s.is_enterprise
    if s.is_authority:
        if ent:
            qm = QueueManager("PEC0", Guid.from_name("qm:PEC0"), SITE0, Role.PEC, "PEC0")
            part, other = DirectoryPartition(PEC_PARTITION_ID, "PEC0"), DirectoryPartition(SITE0, "PEC0")
        else:
            qm = QueueManager("PSC1", Guid.from_name("qm:PSC1"), SITE1, Role.PSC, "PEC0")
            other, part = DirectoryPartition(PEC_PARTITION_ID, "PEC0"), DirectoryPartition(SITE1, "PSC1")
        qm.partitions = [part, other] if ent else [other, part]
    elif s.is_psc:
        qm = QueueManager("PSC1", Guid.from_name("qm:PSC1"), SITE1, Role.PSC, "PEC0")
        own = DirectoryPartition(SITE1, "PSC1")
        part = DirectoryPartition(PEC_PARTITION_ID, "PEC0") if ent else DirectoryPartition(SITE2, "PSC2")
        qm.partitions = [part, own]
    else:
        qm = QueueManager("BSC11", Guid.from_name("qm:BSC11"), SITE1, Role.BSC, "PEC0", configured_psc_name="PSC1")
        part = DirectoryPartition(PEC_PARTITION_ID, "PEC0") if ent else DirectoryPartition(SITE1, "PSC1")
        qm.partitions = [part] if not ent else [part, DirectoryPartition(SITE1, "PSC1")]
    qm.directory = DirectoryStore()
    common.common_initialization(qm, Context(qm.machine_name))
    return qm, part


def _queue_props(label: str) -> dict[int, Any]:
    return {P["PROPID_Q_LABEL"]: label, P["PROPID_Q_SCOPE"]: 1}


def _refimpl_change(qm: QueueManager, part: DirectoryPartition, c: m.Change, key: str) -> DirectoryChange:
    """A DirectoryChange naming a queue of its own; the queue exists iff the change ``applies``."""
    guid = _guid("change", hash(key) & 0xFFFFFF)
    if c.applies:
        # in a partition no node holds, so that Reset Directory Partition (sync0) leaves it alone
        qm.directory.create(QUEUE, f"C\\{key}", guid, _queue_props(key), ELSEWHERE, SequenceNumber(1))
    if c.is_delete:
        props = mqds.delete_properties(1, int(QUEUE))
        command = Command.DELETE
    else:
        props = (Property(P["PROPID_Q_LABEL"], f"{key}-updated"),)
        command = Command.UPDATE
    return DirectoryChange(command, part.partition_id, SequenceNumber(c.previous_seq_number),
                           SequenceNumber(c.seq_number), SequenceNumber(c.purged_seq_number), props,
                           guid_identifier=guid)


def build(s: m.NodeState, observe_propagation: bool = False) -> tuple[QueueManager, DirectoryPartition, dict[str, Any]]:
    """A queue manager in the model state ``s`` (concrete); ``handles`` keeps what the reader needs back."""
    qm, part = _node(s)
    part.last_seq_number = SequenceNumber(s.last_seq_number)
    part.purged_seq_number = SequenceNumber(s.purged_seq_number)
    part.allowed_purge_seq_number = SequenceNumber(s.allowed_purge_seq_number)
    part.previous_purged_seq_number = SequenceNumber(s.previous_purged_seq_number)
    part.change_missing_window = SequenceNumber(s.change_missing_window)
    part.purge_state = PurgeState(s.purge_state)
    part.pending_changes = [_refimpl_change(qm, part, c, f"pending{k}")
                            for k, c in enumerate(s.pending_changes) if c.present]
    for i, n in enumerate(s.psc_neighbors):
        if n.present:
            neighbor = DirectoryNeighbor(part.partition_id, f"PSCN{i}")
            if part.partition_id == PEC_PARTITION_ID:
                neighbor.acked_pec_seq_number, neighbor.acked_seq_number = SequenceNumber(n.acked), SequenceNumber(7)
            else:
                neighbor.acked_seq_number, neighbor.acked_pec_seq_number = SequenceNumber(n.acked), SequenceNumber(7)
            qm.psc_neighbors.append(neighbor)
    if observe_propagation:
        qm.bsc_neighbors.append(DirectoryNeighbor(part.partition_id, "BSCX"))
    for t, d in enumerate(s.deleted_objects):
        if d.present:
            qm.deleted_objects.append(DeletedObject(
                _guid("tomb", t) if d.named else None, part.partition_id if d.in_partition else ELSEWHERE,
                SequenceNumber(d.seq_number), int(QUEUE), 1))
    tracked = []
    for o, obj in enumerate(s.objects):
        guid = _guid("object", o)
        tracked.append(guid)
        if not obj.present:
            continue
        pid = part.partition_id if obj.in_partition else ELSEWHERE
        if pid == PEC_PARTITION_ID:
            qm.directory.create(USER, None, guid, {P["PROPID_U_ID"]: guid, P["PROPID_U_SID"]: b"\x01"}, pid,
                                SequenceNumber(obj.seq_number))
        else:
            qm.directory.create(QUEUE, f"M\\obj{o}", guid, _queue_props(f"obj{o}"), pid, SequenceNumber(obj.seq_number))
    return qm, part, {"tracked": tracked, "in_partition": [o.in_partition for o in s.objects]}


def node_state_of(qm: QueueManager, part: DirectoryPartition) -> m.NodeState:
    """The model state of ``qm``'s partition ``part`` (a state a run reached): its numbers, its queued changes
    (each applies), its PSC neighbors' acknowledgements of it, its tombstones and its objects; no ghost."""
    pid = part.partition_id
    ent = pid == PEC_PARTITION_ID
    return m.NodeState(
        is_psc=qm.is_psc, is_authority=qm.is_authority_of(part), is_enterprise=ent,
        last_seq_number=part.last_seq_number.value, purged_seq_number=part.purged_seq_number.value,
        allowed_purge_seq_number=part.allowed_purge_seq_number.value,
        previous_purged_seq_number=part.previous_purged_seq_number.value,
        change_missing_window=part.change_missing_window.value, purge_state=int(part.purge_state),
        pending_changes=[m.Change(True, c.previous_seq_number.value, c.seq_number.value, c.purged_seq_number.value,
                                  c.command is Command.DELETE, True) for c in part.pending_changes],
        psc_neighbors=[m.Neighbor(True, (n.acked_pec_seq_number if ent else n.acked_seq_number).value)
                       for n in qm.psc_neighbors],
        deleted_objects=[m.Tombstone(True, d.seq_number.value, d.partition_id == pid, d.identifier is not None)
                         for d in qm.deleted_objects],
        objects=[m.DirObject(True, o.seq_number.value, True) for o in qm.directory.objects_in(pid)],
        ghost_authority_last_seq=0, ghost_authority_purged_seq=0, ghost_max_assigned_seq=0,
        ghost_deletions=[m.Deletion(False, 0) for _ in range(m.DELETION_SLOTS)],
        pending_capacity=100,
    )


# --- reading back ---------------------------------------------------------------------------------


def observe(qm: QueueManager, part: DirectoryPartition, handles: dict[str, Any], effects: list[Any]) -> dict[str, Any]:
    """The reference's post-state and messages in the model's terms."""
    pid = part.partition_id
    acks = [(n.acked_pec_seq_number if pid == PEC_PARTITION_ID else n.acked_seq_number).value for n in qm.psc_neighbors]
    tombs = [(d.seq_number.value, d.partition_id == pid, d.identifier is not None) for d in qm.deleted_objects]
    objs = []
    for guid in handles["tracked"]:
        o = qm.directory.objects.get(guid)
        objs.append(None if o is None else o.seq_number.value)
    pending = [(c.previous_seq_number.value, c.seq_number.value, c.purged_seq_number.value,
                c.command is Command.DELETE, qm.directory.objects.get(c.guid_identifier) is not None)
               for c in part.pending_changes]
    out: dict[str, Any] = {
        "last": part.last_seq_number.value, "purged": part.purged_seq_number.value,
        "allowed": part.allowed_purge_seq_number.value, "prev_purged": part.previous_purged_seq_number.value,
        "window": part.change_missing_window.value, "state": int(part.purge_state),
        "pending": pending, "acks": acks, "tombstones": tombs, "objects": objs,
        "sync_requests": [], "psc_acks": [], "replies": [], "already_purged": [], "forwarded": False,
        "propagated": [],
    }
    for e in effects:
        if not isinstance(e, EnqueueMessage):
            continue
        body = e.body
        if isinstance(body, SyncRequestMessage) and body.partition_id == pid:
            out["sync_requests"].append((body.from_seq_number.value, body.to_seq_number.value,
                                         body.known_purged_seq_number.value, body.is_sync0))
        elif isinstance(body, PSCAckMessage) and body.acked_partition_id == pid:
            out["psc_acks"].append(body.acked_seq_number.value)
        elif isinstance(body, SyncReplyMessage):
            out["replies"].append((body.from_seq_number.value, body.to_seq_number.value, body.purged_seq_number.value,
                                   int(body.complete_sync0),
                                   [(c.previous_seq_number.value, c.seq_number.value, c.command is Command.DELETE)
                                    for c in body.changes]))
        elif isinstance(body, AlreadyPurgedMessage):
            out["already_purged"].append(body.purged_seq_number.value)
        elif isinstance(body, ChangeRequestMessage):
            out["forwarded"] = True
    for n in qm.bsc_neighbors:
        if n.machine_name == "BSCX":
            out["propagated"] = [(c.previous_seq_number.value, c.seq_number.value, c.purged_seq_number.value,
                                  c.command is Command.DELETE) for c in n.available_changes]
    return out


def model_view(post: m.NodeState, out: m.Out, reading: m.Reading) -> dict[str, Any]:
    """The model's concrete post-state and messages in the same terms as :func:`observe`."""
    on = lambda g: g is True
    pending = [(c.previous_seq_number, c.seq_number, c.purged_seq_number, c.is_delete, c.applies)
               for c in post.pending_changes if c.present]
    replies = []
    ascending = reading("E-119")
    for r in out.replies:
        if not on(r.sent):
            continue
        keyed = [(e.seq_number, i, e) for i, e in enumerate(r.elements) if on(e.included)]
        keyed.sort(key=lambda x: (x[0] if ascending else -x[0], x[1]))
        replies.append((r.from_seq_number, r.to_seq_number, r.purged_seq_number, r.complete_sync0,
                        [(e.previous_seq_number, e.seq_number, e.is_delete) for _, _, e in keyed]))
    return {
        "last": post.last_seq_number, "purged": post.purged_seq_number, "allowed": post.allowed_purge_seq_number,
        "prev_purged": post.previous_purged_seq_number, "window": post.change_missing_window,
        "state": post.purge_state, "pending": pending,
        "acks": [n.acked for n in post.psc_neighbors if n.present],
        "tombstones": [(t.seq_number, t.in_partition, t.named) for t in post.deleted_objects if t.present],
        "objects": [o.seq_number if o.present else None for o in post.objects],
        "sync_requests": [(f, t, k, s0) for g, f, t, k, s0 in out.sync_requests if on(g)],
        "psc_acks": [a for g, a in out.psc_acks if on(g)],
        "replies": replies,
        "already_purged": [p for g, p in out.already_purged if on(g)],
        "forwarded": any(on(g) for g in out.forwarded),
        "propagated": [(c.previous_seq_number, c.seq_number, c.purged_seq_number, c.is_delete)
                       for g, c in out.sent_changes if on(g)],
    }


# --- running one event both ways ------------------------------------------------------------------------


def run_refimpl(event: str, s: m.NodeState, params: dict[str, Any], mode: str) -> dict[str, Any]:
    qm, part, handles = build(s, event in ("propagate_directory_change", "receive_change_request"))
    ctx = Context(qm.machine_name, Mode(mode))
    pid = part.partition_id
    seq = SequenceNumber
    if event in ("handle_directory_change", "handle_in_sync_change"):
        change = _refimpl_change(qm, part, params["change"], "incoming")
        handler = common.handle_directory_change if event == "handle_directory_change" else common.handle_in_sync_change
        handler(qm, ctx, part, change, True)
    elif event == "check_pending_changes":
        common.check_pending_changes(qm, ctx, part)
    elif event == "propagate_directory_change":
        guid = _guid("client", 1)
        qm.directory.create(QUEUE, "C\\client", guid, _queue_props("client"), pid, seq(0))
        if params["is_delete"]:
            request = mqds.ClientRequest("delete", QUEUE, pid, guid=guid, scope=1)
        else:
            request = mqds.ClientRequest("update", QUEUE, pid, guid=guid,
                                         properties=(Property(P["PROPID_Q_LABEL"], "new"),))
        mqds.directory_client_request(qm, ctx, request, _guid("new", 1))
    elif event == "receive_change_request":
        c = m.Change(True, 0, 0, 0, params["is_delete"], params["applies"])
        change = _refimpl_change(qm, part, c, "request")
        if params["is_sync"]:
            change = attrs.evolve(change, command=Command.SYNC)
        if not params["names_guid"]:
            change = attrs.evolve(change, path_name="C\\request", guid_identifier=None)
        message = ChangeRequestMessage(SITE2, pid, 77, "REQ", None, change)
        server.receive_change_request(qm, ctx, message)
    elif event == "receive_sync_request":
        message = SyncRequestMessage(SITE2, pid, seq(params["from_seq"]), seq(params["to_seq"]),
                                     seq(params["known_purged"]), params["is_sync0"], Scope.ENTERPRISE, "REQ")
        server.receive_sync_request(qm, ctx, message)
    elif event == "receive_sync_reply":
        changes = tuple(_refimpl_change(qm, part, c, f"reply{k}") for k, c in enumerate(params["changes"])
                        if c.present)
        message = SyncReplyMessage(SITE2, pid, seq(params["from_seq"]), seq(params["to_seq"]), seq(params["purged"]),
                                   CompleteSync0(params["complete"]), changes)
        client.receive_sync_reply(qm, ctx, message)
    elif event == "purge_deleted_objects":
        objects.purge_deleted_objects(qm, ctx, part)
    elif event == "receive_psc_ack":
        slot = 1 if params["second_neighbor"] else 0
        # a server with fewer neighbors than the slot (a state the explorer reached): an ack from a stranger
        present = slot < len(s.psc_neighbors) and s.psc_neighbors[slot].present
        name = f"PSCN{slot}" if present else "NOBODY"
        message = PSCAckMessage(SITE2, SITE2, pid if params["for_this_partition"] else ELSEWHERE,
                                seq(params["acked"]), name)
        server.receive_psc_ack(qm, ctx, message)
    elif event == "send_psc_ack":
        client.send_psc_ack(qm, ctx, part, part.last_seq_number)
    elif event == "start_sync0_state":
        client.start_sync0_state(qm, ctx, part, seq(params["purged"]))
    elif event == "complete_sync0_state":
        client.complete_sync0_state(qm, ctx, part)
    elif event == "receive_already_purged":
        client.receive_already_purged(qm, ctx, AlreadyPurgedMessage(SITE2, pid, seq(params["purged"])))
    elif event == "receive_change_propagation":
        entry_pid = pid if params["header_present"] else ELSEWHERE
        header = SeqNumberHeader("SENDER", (PartitionSeqNumbers(entry_pid, seq(params["header_last"]),
                                                                seq(params["header_purged"])),))
        server.receive_change_propagation(qm, ctx, ChangePropagationMessage(SITE2, False, (), header))
    elif event == "send_sync_request":
        client.send_sync_request(qm, ctx, part)
    elif event == "crash_losing_volatile_state":
        lose_volatile_state(qm)
        client.client_initialization(qm, ctx)
        part = qm.find_partition(pid)  # type: ignore[assignment]
    else:  # pragma: no cover - a model-only event
        raise ValueError(event)
    return observe(qm, part, handles, ctx.effects)


def run_model(event: str, s: m.NodeState, params: dict[str, Any], mode: str) -> dict[str, Any]:
    reading = m.Reading.of(mode)
    post, out = ev.step(ev.EVENTS_BY_NAME[event], s, params, reading)
    return model_view(post, out, reading)


#: the events with a reference handler to compare with (environment_advances is the model's own)
CHECKED_EVENTS = tuple(e.name for e in ev.EVENTS if e.name != "environment_advances")


# --- random concrete states and arguments -------------------------------------------------------------


def _seq(rng: random.Random, base: int) -> int:
    roll = rng.random()
    if roll < 0.08:
        return 0
    if roll < 0.12:
        return m.MAX_SEQ if rng.random() < 0.5 else m.MAX_SEQ - rng.randrange(3)
    return base + rng.randrange(-3, 9)


def _change(rng: random.Random, base: int) -> m.Change:
    prev = max(0, _seq(rng, base))
    nxt = prev + rng.randrange(0, 4) if rng.random() < 0.8 else max(0, _seq(rng, base))
    return m.Change(True, prev, min(nxt, m.MAX_SEQ), max(0, _seq(rng, base) - 4), rng.random() < 0.35,
                    rng.random() < 0.85)


def random_state(rng: random.Random, pending_slots: int = 4) -> m.NodeState:
    """A concrete state the model can represent (any values, not only reachable ones).

    Up to two changes are queued; ``pending_slots`` (default 4) leaves room for the two a sync
    reply may add, so that the model's bounded collection never fills where the text's holds 100.
    """
    base = rng.choice((4, 10, 250, 1030, 1300))
    auth = rng.random() < 0.3
    psc = auth or rng.random() < 0.6

    def seq() -> int:
        return max(0, min(m.MAX_SEQ, _seq(rng, base)))

    pending = sorted((_change(rng, base) for _ in range(rng.choice((0, 0, 1, 2)))), key=lambda c: c.seq_number)
    if len(pending) == 2 and pending[0].seq_number == pending[1].seq_number:
        pending = pending[:1]
    pending += [m.Change(False, 0, 0, 0, False, False) for _ in range(pending_slots - len(pending))]
    nn = rng.choice((0, 1, 2))
    neighbors = [m.Neighbor(i < nn, seq()) for i in range(m.NEIGHBOR_SLOTS)]
    tombs = [m.Tombstone(rng.random() < 0.6, seq(), rng.random() < 0.75, rng.random() < 0.85)
             for _ in range(m.TOMBSTONE_SLOTS)]
    obj_seqs = rng.sample(range(max(0, base - 3), base + 9), m.OBJECT_SLOTS)
    objs = [m.DirObject(rng.random() < 0.6, obj_seqs[i], rng.random() < 0.8) for i in range(m.OBJECT_SLOTS)]
    return m.NodeState(
        is_psc=psc, is_authority=auth, is_enterprise=rng.random() < 0.5,
        last_seq_number=seq(), purged_seq_number=seq(), allowed_purge_seq_number=seq(),
        previous_purged_seq_number=seq(), change_missing_window=rng.choice((seq(), 0, m.MAX_SEQ)),
        purge_state=rng.choice((0, 0, 2, 3)), pending_changes=pending, psc_neighbors=neighbors,
        deleted_objects=tombs, objects=objs, ghost_authority_last_seq=0, ghost_authority_purged_seq=0,
        ghost_max_assigned_seq=0, ghost_deletions=[m.Deletion(False, 0) for _ in range(m.DELETION_SLOTS)],
    )


def random_params(rng: random.Random, event: str, s: m.NodeState) -> dict[str, Any] | None:
    """Arguments for ``event`` on ``s``; None when the event's callers never raise it there."""
    base = s.last_seq_number if s.last_seq_number < m.MAX_SEQ - 20 else 5

    def seq() -> int:
        return max(0, min(m.MAX_SEQ, _seq(rng, base)))

    if event == "handle_directory_change":
        return {"change": _change(rng, base)}
    if event == "handle_in_sync_change":
        c = _change(rng, base)
        # the callers' guard (3.1.7.2.2): PreviousSeqNumber <= LastSeqNumber < SeqNumber
        if not (c.previous_seq_number <= s.last_seq_number < c.seq_number):
            return None
        return {"change": c}
    if event == "propagate_directory_change":
        if not s.is_authority or s.last_seq_number >= m.MAX_SEQ - 1:
            return None
        return {"is_delete": rng.random() < 0.4}
    if event == "receive_change_request":
        if s.is_authority and s.last_seq_number >= m.MAX_SEQ - 1:
            return None
        if rng.random() < 0.15:  # a SYNC request (E-164): Handle Directory Sync creates what it lacks, so it applies
            return {"is_delete": False, "applies": True, "names_guid": rng.random() < 0.5, "is_sync": True}
        return {"is_delete": rng.random() < 0.4, "applies": rng.random() < 0.8, "names_guid": rng.random() < 0.5,
                "is_sync": False}
    if event == "receive_sync_request":
        return {"from_seq": seq(), "to_seq": rng.choice((m.MAX_SEQ, seq())), "known_purged": seq(),
                "is_sync0": rng.random() < 0.3}
    if event == "receive_sync_reply":
        changes = [_change(rng, base) if rng.random() < 0.5 else m.Change(False, 0, 0, 0, False, False)
                   for _ in range(m.CHANGE_SLOTS)]
        return {"from_seq": seq(), "to_seq": rng.choice((seq(), s.change_missing_window)), "purged": seq(),
                "complete": rng.choice((0, 1, 2)), "changes": changes}
    if event == "receive_psc_ack":
        return {"second_neighbor": rng.random() < 0.5, "for_this_partition": rng.random() < 0.8, "acked": seq()}
    if event == "send_psc_ack":
        return {} if s.is_psc else None
    if event in ("start_sync0_state", "receive_already_purged"):
        return {"purged": seq()}
    if event == "receive_change_propagation":
        # a quarter of the headers at or just below a finite window (E-265: the header that re-asks or not)
        w = s.change_missing_window
        near = rng.random() < 0.25 and 0 < w < m.MAX_SEQ
        last = rng.choice((w, w - 1)) if near else seq()
        return {"header_present": rng.random() < 0.85, "header_last": last, "header_purged": seq()}
    return {}


# --- the Z3 terms against the concrete run --------------------------------------------------------------


def leaves(obj: Any) -> list[Any]:
    """Every leaf value of a state, change or argument dictionary, in a fixed order."""
    if attrs.has(type(obj)):
        return [x for f in attrs.fields(type(obj)) for x in leaves(getattr(obj, f.name))]
    if isinstance(obj, list):
        return [x for v in obj for x in leaves(v)]
    if isinstance(obj, dict):
        return [x for k in sorted(obj) for x in leaves(obj[k])]
    return [obj]


def symbolic_evaluator(event: str, mode: str) -> Any:
    """The Z3 post-state and outputs of ``event`` over a symbolic pre-state, as a function of a concrete one.

    Returns ``evaluate(state, params) -> view`` that substitutes the concrete values into the Z3
    terms and simplifies them: the view must equal :func:`run_model`'s (the Z3 side of every
    operation in :mod:`mqspec.proofs.z3_ops` computes what its Python side computes).
    """
    import z3

    from .z3_ops import MASK

    e = ev.EVENTS_BY_NAME[event]
    reading = m.Reading.of(mode)
    pre = ev.symbolic_state()
    params = ev.symbolic_params(e)
    post, out = ev.step(e, pre, params, reading)
    symbols = leaves(pre) + leaves(params)

    def evaluate(state: m.NodeState, args: dict[str, Any]) -> dict[str, Any]:
        values = leaves(state) + leaves(args)
        solver = z3.Solver()
        for sym, val in zip(symbols, values):
            if isinstance(sym, z3.BoolRef):
                solver.add(sym == z3.BoolVal(bool(val)))
            elif isinstance(sym, z3.ArithRef):
                solver.add(sym == z3.IntVal(int(val) & MASK))
        if solver.check() != z3.sat:  # pragma: no cover - equalities on fresh constants are satisfiable
            raise AssertionError("the concrete pre-state is not a model")
        model = solver.model()

        def conc(x: Any) -> Any:
            if isinstance(x, z3.ExprRef):
                v = model.eval(x, model_completion=True)
                if z3.is_true(v):
                    return True
                if z3.is_false(v):
                    return False
                return v.as_long()  # type: ignore[union-attr]
            return x

        def walk(obj: Any) -> Any:
            if attrs.has(type(obj)):
                return type(obj)(**{f.name: walk(getattr(obj, f.name)) for f in attrs.fields(type(obj))})
            if isinstance(obj, list):
                return [walk(v) for v in obj]
            if isinstance(obj, tuple):
                return tuple(walk(v) for v in obj)
            return conc(obj)

        return model_view(walk(post), walk(out), reading)

    return evaluate
