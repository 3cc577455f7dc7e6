"""The events the obligations check: each handler of the model with its arguments and what it may assume.

An :class:`Event` names the reference handler it models (``name``, as in refimpl), its section,
its arguments (``params``: name and kind) and ``assume``: what the event's callers guarantee and
what the incoming message satisfies. Incoming-message assumptions are the same statements the
``changes_*`` / ``sync_requests_*`` step invariants check at every modelled sender, so the
proof is assume-guarantee: a receiver may rely on what every sender is proved to send.

Assumptions that no modelled sender discharges (they need more than one node) are listed in
``ENVIRONMENT_ASSUMPTIONS`` and printed by ``mqspec prove``; bounded model checking on the
simulator (:mod:`mqspec.proofs.bmc`) exercises them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import z3

from . import z3_model as m
from .z3_invariants import change_is_authority_change
from .z3_model import Change, Deletion, DirObject, Neighbor, NodeState, Out, Tombstone
from .z3_ops import (
    MAX_SEQ,
    Bool,
    and_,
    eq,
    implies,
    in_range,
    ite,
    not_,
    or_,
    seq_var,
    uge,
    ugt,
    ule,
    ult,
)


@attrs.frozen
class Event:
    name: str
    section: str
    title: str
    params: tuple[tuple[str, str], ...]
    run: Callable[[NodeState, Out, dict[str, Any], m.Reading], None]
    assume: Callable[[NodeState, dict[str, Any], m.Reading], Bool]


# --- states and arguments, symbolic or concrete -------------------------------------------------------


def _seq(name: str) -> z3.ArithRef:
    return seq_var(name)


def symbolic_change(name: str) -> Change:
    return Change(z3.Bool(f"{name}.present"), _seq(f"{name}.previous_seq_number"), _seq(f"{name}.seq_number"),
                  _seq(f"{name}.purged_seq_number"), z3.Bool(f"{name}.is_delete"), z3.Bool(f"{name}.applies"))


def symbolic_state(tag: str = "") -> NodeState:
    """A pre-state of fresh Z3 constants named by attrs field (``partition.last_seq_number``)."""
    p = f"{tag}partition"
    q = f"{tag}qm"
    return NodeState(
        is_psc=z3.Bool(f"{q}.is_psc"), is_authority=z3.Bool(f"{q}.is_authority_of(partition)"),
        is_enterprise=z3.Bool(f"{p}.is_enterprise"),
        last_seq_number=_seq(f"{p}.last_seq_number"), purged_seq_number=_seq(f"{p}.purged_seq_number"),
        allowed_purge_seq_number=_seq(f"{p}.allowed_purge_seq_number"),
        previous_purged_seq_number=_seq(f"{p}.previous_purged_seq_number"),
        change_missing_window=_seq(f"{p}.change_missing_window"), purge_state=_seq(f"{p}.purge_state"),
        pending_changes=[symbolic_change(f"{p}.pending_changes[{k}]") for k in range(m.PENDING_SLOTS)],
        psc_neighbors=[Neighbor(z3.Bool(f"{q}.psc_neighbors[{i}].present"), _seq(f"{q}.psc_neighbors[{i}].acked"))
                       for i in range(m.NEIGHBOR_SLOTS)],
        deleted_objects=[Tombstone(z3.Bool(f"{q}.deleted_objects[{t}].present"),
                                   _seq(f"{q}.deleted_objects[{t}].seq_number"),
                                   z3.Bool(f"{q}.deleted_objects[{t}].in_partition"),
                                   z3.Bool(f"{q}.deleted_objects[{t}].named")) for t in range(m.TOMBSTONE_SLOTS)],
        objects=[DirObject(z3.Bool(f"{q}.directory[{o}].present"), _seq(f"{q}.directory[{o}].seq_number"),
                           z3.Bool(f"{q}.directory[{o}].in_partition")) for o in range(m.OBJECT_SLOTS)],
        ghost_authority_last_seq=_seq(f"{tag}ghost.authority_last_seq"),
        ghost_authority_purged_seq=_seq(f"{tag}ghost.authority_purged_seq"),
        ghost_max_assigned_seq=_seq(f"{tag}ghost.max_assigned_seq"),
        ghost_deletions=[Deletion(z3.Bool(f"{tag}ghost.deletions[{d}].present"),
                                  _seq(f"{tag}ghost.deletions[{d}].seq_number")) for d in range(m.DELETION_SLOTS)],
    )


def symbolic_params(event: Event) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, kind in event.params:
        label = f"event.{name}"
        if kind == "seq":
            out[name] = _seq(label)
        elif kind == "bool":
            out[name] = z3.Bool(label)
        elif kind == "change":
            out[name] = symbolic_change(label)
        elif kind == "changes":
            out[name] = [symbolic_change(f"{label}[{k}]") for k in range(m.CHANGE_SLOTS)]
        else:  # pragma: no cover - a typo in the table below
            raise ValueError(kind)
    return out


def initial_state(authority: bool, is_psc: Bool, is_enterprise: Bool, neighbors: list[Neighbor],
                  ghost_last: Any, ghost_purged: Any, deletions: list[Deletion]) -> NodeState:
    """3.1.3.1: a partition starts at MIN with the window MAX, NORMAL, nothing queued or deleted."""
    return NodeState(
        is_psc=True if authority else is_psc, is_authority=authority, is_enterprise=is_enterprise,
        last_seq_number=0, purged_seq_number=0, allowed_purge_seq_number=0, previous_purged_seq_number=0,
        change_missing_window=MAX_SEQ, purge_state=m.NORMAL,
        pending_changes=[Change(False, 0, 0, 0, False, False) for _ in range(m.PENDING_SLOTS)],
        psc_neighbors=[Neighbor(n.present, 0) for n in neighbors],
        deleted_objects=[Tombstone(False, 0, False, False) for _ in range(m.TOMBSTONE_SLOTS)],
        objects=[DirObject(False, 0, False) for _ in range(m.OBJECT_SLOTS)],
        ghost_authority_last_seq=0 if authority else ghost_last,
        ghost_authority_purged_seq=0 if authority else ghost_purged,
        ghost_max_assigned_seq=0,
        ghost_deletions=[Deletion(False, 0) for _ in deletions] if authority else deletions,
    )


def step(event: Event, pre: NodeState, params: dict[str, Any],
         clarified: bool | str | m.Reading) -> tuple[NodeState, Out]:
    """Run one event on a copy of ``pre``: the post-state and what the event did."""
    post = pre.copy()
    out = Out()
    event.run(post, out, params, m.Reading.of(clarified))
    m.sync_authority_ghost(post)
    for g, seq in out.assigned:
        post.ghost_max_assigned_seq = ite(and_(g, ugt(seq, post.ghost_max_assigned_seq)), seq,
                                          post.ghost_max_assigned_seq)
    return post, out


# --- what receivers may assume -----------------------------------------------------------------------------


def _discard(_result: object) -> None:
    """An event's return value (rStatus, the number assigned) is not state."""


def _propagated(s: NodeState, c: Change) -> Bool:
    return implies(c.present, change_is_authority_change(s, c))


def _below_wrap(s: NodeState) -> Bool:
    """E-260: the authority's next number is below MAX (fewer than 2**64 - 1 changes in the partition)."""
    return implies(s.is_authority, ult(s.last_seq_number, MAX_SEQ - 1))


def _not_authority(s: NodeState) -> Bool:
    return not_(s.is_authority)


def _sync_reply_ok(s: NodeState, p: dict[str, Any], clarified: m.Reading) -> Bool:
    """A SyncReplyMessage from the server this replica asked (3.3.7.3), answering its request.

    ToSeqNumber and PurgedSeqNumber are the authority's at most; the reply answers a request this
    server sent since its last Start Sync0 State (FromSeqNumber <= LastSeqNumber), or is older and
    its PurgedSeqNumber is below ours (it is dropped); its changes chain forward from FromSeqNumber
    and hold every deletion in (From, To] this server has not purged.
    """
    changes: list[Change] = p["changes"]
    frm, to, purged = p["from_seq"], p["to_seq"], p["purged"]
    # sync0_reply_reaches_purged_seq (assumed, listed by mqspec prove): a reply that completes sync0 carries
    # changes chained from FromSeqNumber that apply and reach the requester's PurgedSeqNumber
    first, *rest = changes
    completes = and_(eq(s.purge_state, m.SYNC0), eq(p["complete"], 2), not_(ult(purged, s.purged_seq_number)))
    reaches = implies(completes, or_(
        ule(s.purged_seq_number, s.last_seq_number),
        and_(implies(first.present, eq(first.previous_seq_number, frm)),
             *(implies(c.present, c.applies) for c in changes),
             *(implies(b.present, and_(a.present, eq(b.previous_seq_number, a.seq_number)))
               for a, b in zip(changes, rest, strict=False)),
             or_(*(and_(c.present, uge(c.seq_number, s.purged_seq_number)) for c in changes)))))
    return and_(
        reaches,
        _not_authority(s),
        ule(to, s.ghost_authority_last_seq), ule(purged, s.ghost_authority_purged_seq),
        ule(p["complete"], 2),
        or_(ule(frm, s.last_seq_number), ult(purged, s.purged_seq_number)),
        *(implies(c.present, and_(change_is_authority_change(s, c, floor=frm), eq(c.purged_seq_number, purged)))
          for c in changes),
        *(implies(and_(d.present, ugt(d.seq_number, frm), ule(d.seq_number, to), ugt(d.seq_number, s.purged_seq_number)),
                  or_(*(and_(c.present, eq(c.seq_number, d.seq_number)) for c in changes)))
          for d in s.ghost_deletions),
    )


def _environment(s: NodeState, out: Out, p: dict[str, Any], clarified: m.Reading) -> None:
    """The rest of the enterprise moves on: the authority assigns and purges, maybe deletes once more."""
    new = p["deletion"]
    s.ghost_authority_last_seq = p["authority_last"]
    s.ghost_authority_purged_seq = p["authority_purged"]
    s.ghost_deletions.append(Deletion(p["deletes"], new))


def _environment_ok(s: NodeState, p: dict[str, Any], clarified: m.Reading) -> Bool:
    ga, gp = p["authority_last"], p["authority_purged"]
    return and_(_not_authority(s), ule(s.ghost_authority_last_seq, ga), ule(s.ghost_authority_purged_seq, gp),
                ule(gp, ga), ult(ga, MAX_SEQ),
                implies(p["deletes"], and_(ugt(p["deletion"], s.ghost_authority_last_seq), ule(p["deletion"], ga))))


EVENTS: tuple[Event, ...] = (
    Event("handle_directory_change", "3.1.7.2.2", "Handle Directory Change", (("change", "change"),),
          lambda s, o, p, c: m.handle_directory_change(s, o, True, p["change"], c),
          lambda s, p, c: and_(_not_authority(s), p["change"].present, _propagated(s, p["change"]))),
    Event("handle_in_sync_change", "3.1.7.2.3", "Handle In-Sync Change", (("change", "change"),),
          lambda s, o, p, c: _discard(m.handle_in_sync_change(s, o, True, p["change"], c)),
          # the callers' guard: 3.1.7.2.2 and 3.1.7.2.4 raise it for PreviousSeqNumber <= LastSeqNumber < SeqNumber
          lambda s, p, c: and_(_not_authority(s), p["change"].present, _propagated(s, p["change"]),
                               ule(p["change"].previous_seq_number, s.last_seq_number),
                               ult(s.last_seq_number, p["change"].seq_number),
                               ule(s.purged_seq_number, p["change"].purged_seq_number))),
    Event("check_pending_changes", "3.1.7.2.4", "Check Pending Changes", (),
          lambda s, o, p, c: m.check_pending_changes(s, o, True, c), lambda s, p, c: True),
    Event("propagate_directory_change", "3.1.7.1.2", "Propagate Directory Change", (("is_delete", "bool"),),
          lambda s, o, p, c: _discard(m.propagate_directory_change(s, o, True, p["is_delete"], c)),
          # raised by the MQDS server for a change numbered by Read Next Sequence Number (3.1.7.1.3, E-180)
          lambda s, p, c: and_(s.is_authority, _below_wrap(s))),
    Event("receive_change_request", "3.2.7.2", "Receive Change Request",
          (("is_delete", "bool"), ("applies", "bool"), ("names_guid", "bool"), ("is_sync", "bool")),
          lambda s, o, p, c: m.receive_change_request(s, o, True, p["is_delete"], p["applies"], p["names_guid"], c,
                                                      is_sync=p["is_sync"]),
          # a request has one command: SYNC is not DELETE
          lambda s, p, c: and_(_below_wrap(s), not_(and_(p["is_sync"], p["is_delete"])))),
    Event("receive_sync_request", "3.2.7.3", "Receive Sync Request",
          (("from_seq", "seq"), ("to_seq", "seq"), ("known_purged", "seq"), ("is_sync0", "bool")),
          lambda s, o, p, c: m.receive_sync_request(s, o, True, p["from_seq"], p["to_seq"], p["known_purged"],
                                                    p["is_sync0"], c),
          # the requester asks up to MAX or to a number this server has (its window came from this server)
          lambda s, p, c: or_(eq(p["to_seq"], MAX_SEQ), ule(p["to_seq"], s.last_seq_number))),
    Event("receive_sync_reply", "3.3.7.5", "Receive Sync Reply",
          (("from_seq", "seq"), ("to_seq", "seq"), ("purged", "seq"), ("complete", "seq"), ("changes", "changes")),
          lambda s, o, p, c: m.receive_sync_reply(s, o, True, p["from_seq"], p["to_seq"], p["purged"], p["complete"],
                                                  p["changes"], c),
          _sync_reply_ok),
    Event("purge_deleted_objects", "3.1.7.2.9", "Purge Deleted Objects", (),
          lambda s, o, p, c: m.purge_deleted_objects(s, o, True, c), lambda s, p, c: True),
    Event("receive_psc_ack", "3.2.7.4", "Receive PSC Ack",
          (("second_neighbor", "bool"), ("for_this_partition", "bool"), ("acked", "seq")),
          lambda s, o, p, c: m.receive_psc_ack(s, o, True, p["second_neighbor"], p["for_this_partition"], p["acked"], c),
          # sent by Send PSC Ack (psc_acks_are_truthful): at most the neighbor's, so the authority's, LastSeqNumber
          lambda s, p, c: ule(p["acked"], s.ghost_authority_last_seq)),
    Event("send_psc_ack", "3.3.7.4", "Send PSC Ack", (),
          lambda s, o, p, c: m.send_psc_ack(s, o, True, s.last_seq_number), lambda s, p, c: s.is_psc),
    Event("start_sync0_state", "3.3.7.10", "Start Sync0 State", (("purged", "seq"),),
          lambda s, o, p, c: m.start_sync0_state(s, o, True, p["purged"], c),
          # raised by Receive Already Purged with the AlreadyPurgedMessage's PurgedSeqNumber (E-134)
          lambda s, p, c: and_(_not_authority(s), ule(p["purged"], s.ghost_authority_purged_seq))),
    Event("complete_sync0_state", "3.3.7.11", "Complete Sync0 State", (),
          lambda s, o, p, c: m.complete_sync0_state(s, o, True, c),
          # raised by Receive Sync Reply once the reply's changes reached PurgedSeqNumber (sync0_reply_reaches_purged_seq)
          lambda s, p, c: ule(s.purged_seq_number, s.last_seq_number)),
    Event("receive_already_purged", "3.3.7.7", "Receive Already Purged", (("purged", "seq"),),
          lambda s, o, p, c: m.receive_already_purged(s, o, True, p["purged"], c),
          # Send Already Purged carries the sender's PurgedSeqNumber (changes_carry_authority_purged_seq)
          lambda s, p, c: ule(p["purged"], s.ghost_authority_purged_seq)),
    Event("receive_change_propagation", "3.2.7.1", "Receive Change Propagation (SeqNumberHeader)",
          (("header_present", "bool"), ("header_last", "seq"), ("header_purged", "seq")),
          lambda s, o, p, c: m.receive_change_propagation(s, o, True, p["header_present"], p["header_last"],
                                                          p["header_purged"], c),
          # 3.3.7.2 fills the header with the sender's LastSeqNumber and Purged/AllowedPurgeSeqNumber
          lambda s, p, c: and_(_not_authority(s), ule(p["header_last"], s.ghost_authority_last_seq),
                               ule(p["header_purged"], s.ghost_authority_purged_seq))),
    Event("send_sync_request", "3.3.7.3", "Send Sync Request", (),
          lambda s, o, p, c: m.send_sync_request(s, o, True), lambda s, p, c: True),
    Event("crash_losing_volatile_state", "3.1.1", "Crash (volatile state lost) and 3.3.3 Initialization", (),
          lambda s, o, p, c: m.crash_losing_volatile_state(s, o, True, c), lambda s, p, c: True),
    Event("environment_advances", "3.1.1", "The authority assigns, purges and deletes elsewhere",
          (("authority_last", "seq"), ("authority_purged", "seq"), ("deletes", "bool"), ("deletion", "seq")),
          _environment, _environment_ok),
)
EVENTS_BY_NAME = {e.name: e for e in EVENTS}

#: what the single-server proofs assume and only runs of several servers can show (bounded model checking)
ENVIRONMENT_ASSUMPTIONS: tuple[str, ...] = (
    "E-260: fewer than 2**64 - 1 changes are ever made in one partition (Increment wraps at MAX).",
    "A sync request's ToSeqNumber is MAX or a number the answering server has (its window came from that server).",
    ("A server's LastSeqNumber and PurgedSeqNumber of a partition survive a crash (3.1.1 persists them); "
     "a server that loses all replication state starts over as a new replica (initiation)."),
    "The authority of a partition never loses its persisted replication state (E-262).",
    "_my_partition_for_request (3.2.7.2) and QueueManager.is_authority_of agree (one authority per partition).",
)




_SEQ_FIELDS = {
    NodeState: ("last_seq_number", "purged_seq_number", "allowed_purge_seq_number", "previous_purged_seq_number",
                "change_missing_window", "purge_state", "ghost_authority_last_seq", "ghost_authority_purged_seq",
                "ghost_max_assigned_seq"),
    Change: ("previous_seq_number", "seq_number", "purged_seq_number"),
    Neighbor: ("acked",), Tombstone: ("seq_number",), DirObject: ("seq_number",), Deletion: ("seq_number",),
}


def sequence_numbers(obj: Any) -> list[Any]:
    """Every sequence-number term of a state, a change or an event's arguments (to bound them to 64 bits)."""
    if isinstance(obj, dict):
        return [x for v in obj.values() for x in sequence_numbers(v)]
    if isinstance(obj, list):
        return [x for v in obj for x in sequence_numbers(v)]
    if type(obj) in _SEQ_FIELDS:
        found = [getattr(obj, f) for f in _SEQ_FIELDS[type(obj)]]
        if isinstance(obj, NodeState):
            for part in (obj.pending_changes, obj.psc_neighbors, obj.deleted_objects, obj.objects,
                         obj.ghost_deletions):
                found.extend(sequence_numbers(part))
        return found
    if isinstance(obj, z3.ArithRef):
        return [obj]
    return []


def bounded(*objs: Any) -> Bool:
    """Every sequence number of the pre-state and the arguments is a 64-bit unsigned value."""
    return and_(*(in_range(x) for o in objs for x in sequence_numbers(o)))
