"""The MC-MQDSRP handlers that change replication state, tombstones or neighbor acks, as a transition relation.

What the model covers: ONE directory server and ONE of its directory partitions, the state 3.1.1
gives them, and the rest of the enterprise summarized by ghost variables:

* the partition (3.1.1.2.3): LastSeqNumber, PurgedSeqNumber, AllowedPurgeSeqNumber,
  PreviousPurgedSeqNumber, ChangeMissingWindow, PurgeState and up to two pending changes;
* up to two PSC neighbors (3.1.1.2.4) with the acknowledgment of this partition (AckedSeqNumber,
  or AckedPECSeqNumber for the enterprise partition);
* up to three tombstones (3.1.1.2.2) and two tracked directory objects (what a sync reply is
  rebuilt from, 3.2.7.8), each in this partition or another;
* ghost state: the authority's LastSeqNumber and PurgedSeqNumber of the partition, the largest
  sequence number the authority ever assigned, and up to two of the authority's deletions in
  the partition (their sequence numbers).

Every handler is written in the order of its pseudo-code against :mod:`mqspec.proofs.z3_ops`,
so the same function yields the Z3 transition relation (symbolic pre-state) and the concrete
post-state (Python ints), which tests/proofs/test_model_vs_refimpl.py compares with the
reference handlers. Where the reference branches on ``ctx.clarified`` the model branches on
``clarified`` and records, under the guard where the literal reading acts differently, which
register entry it follows (``Out.literal``): a violated literal obligation cites those ids.

What it does not cover: directory objects beyond the two tracked ones (a change names an object
of its own; whether the local directory accepts it is the change's ``applies`` flag), the
AuthorityName and neighbor membership (single authority is checked by bounded model checking on
the simulator, :mod:`mqspec.proofs.bmc`), BSC neighbors' AvailableChangeCollection, timers. The
PendingChangeCollection has as many slots as the state has (2 in the proofs, 4 in the anti-drift
test) instead of the text's 100: a change that finds every slot taken is dropped, as the text
drops the 101st.
"""

from __future__ import annotations

from typing import Any

import attrs

from .z3_ops import (
    MAX_SEQ,
    MIN_SEQ,
    Bool,
    Seq,
    add,
    and_,
    eq,
    implies,
    is_concrete,
    ite,
    low_byte_zero,
    ne,
    not_,
    or_,
    sub,
    uge,
    ugt,
    ule,
    ult,
    umin,
)
from .z3_reading import ERRATA, NOT_MODELLED, READ_ONE_WAY, Reading  # noqa: F401  (re-exported)

NORMAL, STARTSYNC0, SYNC0, COMPLETESYNC0 = 0, 1, 2, 3

PENDING_SLOTS, NEIGHBOR_SLOTS, TOMBSTONE_SLOTS, OBJECT_SLOTS, DELETION_SLOTS, CHANGE_SLOTS = 2, 2, 3, 2, 2, 2
PURGE_BUFFER = 1024
PURGE_EVERY = 256


@attrs.define
class Change:
    """A DirectoryChange (2.2.4) of this partition; ``applies``: the local directory accepts it."""

    present: Bool
    previous_seq_number: Seq
    seq_number: Seq
    purged_seq_number: Seq
    is_delete: Bool
    applies: Bool
    #: the whole change where the server layer (proofs/server_model.py, server_objects.py, server_events.py) runs the model on a real state
    payload: Any = attrs.field(default=None, eq=False)


@attrs.define
class Neighbor:
    present: Bool
    acked: Seq  # AckedSeqNumber (site partition) or AckedPECSeqNumber (enterprise partition)


@attrs.define
class Tombstone:
    present: Bool
    seq_number: Seq
    in_partition: Bool  # PartitionID is this partition
    named: Bool  # Identifier is set (E-108: the literal text can leave it unset)
    #: the tombstone's identity (identifier, partition, type, scope) in the server layer
    payload: Any = attrs.field(default=None, eq=False)


@attrs.define
class DirObject:
    present: Bool
    seq_number: Seq
    in_partition: Bool
    #: the directory object in the server layer (what a sync reply carries of it)
    payload: Any = attrs.field(default=None, eq=False)


@attrs.define
class Deletion:
    """Ghost: a deletion the authority made in this partition (its sequence number)."""

    present: Bool
    seq_number: Seq


@attrs.define
class NodeState:
    """One server's state of one partition, plus the ghost state of the enterprise around it."""

    is_psc: Bool
    is_authority: Bool
    is_enterprise: Bool
    last_seq_number: Seq
    purged_seq_number: Seq
    allowed_purge_seq_number: Seq
    previous_purged_seq_number: Seq
    change_missing_window: Seq
    purge_state: Seq
    pending_changes: list[Change]
    psc_neighbors: list[Neighbor]
    deleted_objects: list[Tombstone]
    objects: list[DirObject]
    ghost_authority_last_seq: Seq
    ghost_authority_purged_seq: Seq
    ghost_max_assigned_seq: Seq
    ghost_deletions: list[Deletion]
    #: what the rest of the server does where the partition's events reach beyond it (default: the
    #: abstraction the obligations prove over); the server layer plugs its own in (:class:`Environment`)
    env: Any = attrs.field(default=None, eq=False)
    #: how many changes PendingChangeCollection holds (None: as many as ``pending_changes`` has slots)
    pending_capacity: Any = attrs.field(default=None, eq=False)

    def copy(self) -> NodeState:
        return attrs.evolve(
            self,
            pending_changes=[attrs.evolve(c) for c in self.pending_changes],
            psc_neighbors=[attrs.evolve(n) for n in self.psc_neighbors],
            deleted_objects=[attrs.evolve(t) for t in self.deleted_objects],
            objects=[attrs.evolve(o) for o in self.objects],
            ghost_deletions=[attrs.evolve(d) for d in self.ghost_deletions],
        )


@attrs.define
class ReplyElement:
    included: Bool
    previous_seq_number: Seq
    seq_number: Seq
    is_delete: Bool
    payload: Any = attrs.field(default=None, eq=False)  # the object or tombstone it was built from


@attrs.define
class Reply:
    sent: Bool
    from_seq_number: Seq
    to_seq_number: Seq
    purged_seq_number: Seq
    complete_sync0: Seq
    elements: list[ReplyElement]
    known_purged_seq_number: Seq  # the request's KnownPurgedSeqNumber (what the reply may leave out)


@attrs.define
class Out:
    """What one event did besides changing state: messages, applications, removals, literal branches taken."""

    applied: list[tuple[Bool, Change, Seq]] = attrs.field(factory=list)  # (guard, change, LastSeqNumber then)
    assigned: list[tuple[Bool, Seq]] = attrs.field(factory=list)
    sent_changes: list[tuple[Bool, Change]] = attrs.field(factory=list)
    sync_requests: list[tuple[Bool, Seq, Seq, Seq, Bool]] = attrs.field(factory=list)  # from, to, known purged, sync0
    psc_acks: list[tuple[Bool, Seq]] = attrs.field(factory=list)
    already_purged: list[tuple[Bool, Seq]] = attrs.field(factory=list)
    replies: list[Reply] = attrs.field(factory=list)
    #: guard, seq, why (purge | sync0), LastSeqNumber then
    removed_tombstones: list[tuple[Bool, Seq, str, Seq]] = attrs.field(factory=list)
    forwarded: list[Bool] = attrs.field(factory=list)
    sync0_started: list[Bool] = attrs.field(factory=list)
    literal: list[tuple[Bool, str]] = attrs.field(factory=list)  # (guard, erratum id)

    def lit(self, guard: Bool, erratum: str) -> None:
        self.literal.append((guard, erratum))


def _set(guard: Bool, old: Any, new: Any) -> Any:
    return ite(guard, new, old)


class Environment:
    """What the partition's events leave to the rest of the server, and the abstraction the proofs take of it.

    The obligations run the model with this default: the local directory accepts a change or not
    (the change's free ``applies`` flag; a delete it refuses names an object it does not hold), a
    tombstone has no identity beyond being named or not, and the messages, neighbors and directory
    events the server layer adds are not modelled. The server layer (:mod:`mqspec.proofs.server_model`)
    plugs in its own, which raises the directory events, keeps the neighbors' AvailableChangeCollections
    and sends the messages, at the point of the pseudo-code where each happens. Every hook is called
    with its guard; a concrete False guard means nothing happens.
    """

    def apply(self, s: NodeState, out: Out, g: Bool, c: Change, flush: Bool) -> tuple[Bool, Bool]:
        """Apply ``c`` to the directory (3.1.7.2.5 .. 3.1.7.2.8): (MQ_OK, MQDS_OBJECT_NOT_FOUND)."""
        return c.applies, not_(c.applies)

    def tombstone(self, s: NodeState, g: Bool, seq: Seq, named: Bool, c: Change | None) -> Tombstone:
        """The DeletedObject a deletion numbered ``seq`` leaves (``c``: the change applied, if any)."""
        return Tombstone(g, seq, True, named)

    def follow(self, s: NodeState, out: Out, g: Bool, c: Change) -> None:
        """What the applied change's object means to replication state (3.1.7.2.5 .. 3.1.7.2.12: sites,
        machines, the enterprise), after the directory accepted it."""

    def applied(self, s: NodeState, out: Out, g: Bool, c: Change, flush: Bool) -> None:
        """3.1.7.2.3 after LastSeqNumber moved: the BSC neighbors get the change (NORMAL only) and a flush."""

    def propagated(self, s: NodeState, out: Out, g: Bool, c: Change) -> None:
        """3.1.7.1.2: the authority's change goes to every neighbor's AvailableChangeCollection."""

    def sync_request(self, s: NodeState, out: Out, g: Bool) -> None:
        """3.3.7.3 sends the request ``out.sync_requests`` records last."""

    def psc_ack(self, s: NodeState, out: Out, g: Bool, acked: Seq) -> None:
        """3.3.7.4 sends the ack ``out.psc_acks`` records last."""

    def reset(self, s: NodeState, out: Out, g: Bool, operation: int) -> None:
        """[MS-MQDS] Reset Directory Partition (3.3.7.10 operation 1, 3.3.7.11 operation 2)."""

    def header(self, s: NodeState, out: Out, g: Bool, machine: Any, bsc_only: bool) -> None:
        """3.2.7.1: a SeqNumberHeader names the partition's authority (a PSC) or this BSC's PSC."""

    def changes(self, s: NodeState, out: Out, g: Bool, changes: list[Change], clarified: Reading) -> None:
        """3.1.5.2 for a Sync Reply's changes (iCheckFlush true): each is handled by its own partition's
        Handle Directory Change; the model's are all this partition's."""
        for c in changes:
            handle_directory_change(s, out, g, c, clarified)


ABSTRACT = Environment()


def _env(s: NodeState) -> Environment:
    return s.env if s.env is not None else ABSTRACT


# --- shared steps -------------------------------------------------------------------------------


def send_sync_request(s: NodeState, out: Out, g: Bool) -> None:
    """3.3.7.3: "If iPartition.PurgeState is not NORMAL or SYNC0: Take no further action"; From = LastSeqNumber, To = window."""
    if g is False:
        return
    sends = and_(g, or_(eq(s.purge_state, NORMAL), eq(s.purge_state, SYNC0)))
    out.sync_requests.append((sends, s.last_seq_number, s.change_missing_window, s.purged_seq_number,
                              eq(s.purge_state, SYNC0)))
    _env(s).sync_request(s, out, sends)


def send_psc_ack(s: NodeState, out: Out, g: Bool, acked: Seq) -> None:
    """3.3.7.4: AckedSeqNumber := iLastSeqNumber, to the partition's authority."""
    if g is False:
        return
    out.psc_acks.append((g, acked))
    _env(s).psc_ack(s, out, g, acked)


def add_tombstone(s: NodeState, g: Bool, seq: Seq, named: Bool, c: Change | None = None) -> None:
    if g is False:
        return
    s.deleted_objects.append(_env(s).tombstone(s, g, seq, named, c))


def purge_deleted_objects(s: NodeState, out: Out, g: Bool, clarified: Reading) -> None:
    """3.1.7.2.9: remove tombstones every PSC neighbor acknowledged (authority) or the authority allows (replica)."""
    if g is False:
        return
    last = s.last_seq_number
    wraps = ult(last, PURGE_BUFFER)
    if clarified("E-130"):  # clarification E-130: stop the buffer at MIN instead of wrapping
        buffer_end = ite(wraps, MIN_SEQ, sub(last, PURGE_BUFFER))
    else:
        buffer_end = sub(last, PURGE_BUFFER)
        out.lit(and_(g, wraps), "E-130")
    stop = or_(ne(s.purge_state, NORMAL), uge(s.purged_seq_number, buffer_end))
    g1 = and_(g, not_(stop))
    # authority: minAckedSeqNumber over the PSC neighbors (E-132: LastSeqNumber when there are none)
    min_acked: Seq = last
    have: Bool = False
    for n in s.psc_neighbors:
        min_acked = ite(n.present, ite(have, umin(min_acked, n.acked), n.acked), min_acked)
        have = or_(have, n.present)
    auth_go = not_(ule(min_acked, s.purged_seq_number))
    if clarified("E-130"):  # clarification E-130: keep the buffer at the authority too
        auth_purge = umin(min_acked, buffer_end)
    else:
        auth_purge = min_acked
        out.lit(and_(g1, s.is_authority, ult(buffer_end, min_acked)), "E-130")
    # replica: no further than AllowedPurgeSeqNumber
    below = ult(s.allowed_purge_seq_number, buffer_end)
    rep_go = not_(and_(below, ult(s.allowed_purge_seq_number, s.purged_seq_number)))
    rep_purge = ite(below, s.allowed_purge_seq_number, buffer_end)
    go = and_(g1, ite(s.is_authority, auth_go, rep_go))
    purge_seq = ite(s.is_authority, auth_purge, rep_purge)
    for t in s.deleted_objects:
        gone = and_(go, t.present, t.in_partition, ule(t.seq_number, purge_seq))
        out.removed_tombstones.append((gone, t.seq_number, "purge", last))
        t.present = _set(gone, t.present, False)
    advance = and_(go, ugt(purge_seq, s.purged_seq_number))
    if clarified("E-133"):  # clarification E-133: PurgedSeqNumber follows the tombstones removed
        s.purged_seq_number = _set(advance, s.purged_seq_number, purge_seq)
    else:
        out.lit(advance, "E-133")


def maybe_purge(s: NodeState, out: Out, g: Bool, clarified: Reading) -> None:
    """"If iPartition.LastSeqNumber > (iPartition.PreviousPurgedSeqNumber + 256): Raise a Purge Deleted Objects event"."""
    if g is False:
        return
    due = and_(g, ugt(s.last_seq_number, add(s.previous_purged_seq_number, PURGE_EVERY)))
    purge_deleted_objects(s, out, due, clarified)
    s.previous_purged_seq_number = _set(due, s.previous_purged_seq_number, s.last_seq_number)


def handle_in_sync_change(s: NodeState, out: Out, g: Bool, c: Change, clarified: Reading, flush: Bool = True) -> Bool:
    """3.1.7.2.3: apply the change, move LastSeqNumber, purge every 256 changes, acknowledge at multiples of 256.

    Returns the condition under which the change was applied (rStatus MQ_OK). ``flush``: iFlush,
    whether a BSC neighbor gets the change at once when the directory asks for it (rNeedFlush).
    """
    if g is False:
        return False
    out.applied.append((g, c, s.last_seq_number))
    env = _env(s)
    applies, not_found = env.apply(s, out, g, c, flush)
    ok = and_(g, applies)
    # a replicated delete (3.1.7.2.7 with iPostDelete false, at a server that is not the
    # partition's authority) of an object this server does not hold: MQDS_OBJECT_NOT_FOUND
    missing = and_(g, not_(applies), not_found, c.is_delete, not_(s.is_authority))
    if clarified("E-261"):  # clarification E-261: the deletion's outcome holds, so it counts as applied
        ok = or_(ok, missing)
    else:
        out.lit(missing, "E-261")
    deleting = and_(ok, c.is_delete)
    if clarified("E-108"):  # clarification E-108: every successful delete records its tombstone
        add_tombstone(s, deleting, c.seq_number, True, c)
    else:
        out.lit(deleting, "E-108")
    env.follow(s, out, ok, c)
    s.last_seq_number = _set(ok, s.last_seq_number, c.seq_number)
    env.applied(s, out, ok, c, flush)
    maybe_purge(s, out, ok, clarified)
    may_ack = or_(eq(s.purge_state, NORMAL), uge(s.last_seq_number, s.purged_seq_number))
    send_psc_ack(s, out, and_(ok, may_ack, s.is_psc, low_byte_zero(s.last_seq_number)), s.last_seq_number)
    return ok


def _remove_pending(s: NodeState, k: int, g: Bool) -> None:
    s.pending_changes[k].present = _set(g, s.pending_changes[k].present, False)


def _compact_pending(s: NodeState) -> None:
    """Keep the present changes first, in order (the collection is a list; slots are its elements)."""
    slots = s.pending_changes
    if all(type(c.present) is bool for c in slots):  # concrete: the same list, without the n**3 terms
        s.pending_changes = [c for c in slots if c.present] + [c for c in slots if not c.present]
        return
    out = []
    for i in range(len(slots)):
        # the i-th present change: the slot j with exactly i present slots before it
        chosen: Change | None = None
        for j in range(len(slots) - 1, i - 1, -1):
            before = [slots[k].present for k in range(j)]
            exactly = _exactly(before, i)
            hit = and_(slots[j].present, exactly)
            if chosen is None:
                chosen = Change(hit, *(getattr(slots[j], f) for f in _CHANGE_FIELDS[1:]))
            else:
                chosen = Change(or_(hit, chosen.present),
                                *(ite(hit, getattr(slots[j], f), getattr(chosen, f)) for f in _CHANGE_FIELDS[1:]))
        out.append(chosen)
    s.pending_changes = out  # type: ignore[assignment]


def _exactly(flags: list[Bool], n: int) -> Bool:
    """Exactly ``n`` of ``flags`` are true."""
    if n < 0 or n > len(flags):
        return False
    if not flags:
        return n == 0
    head, rest = flags[0], flags[1:]
    return or_(and_(head, _exactly(rest, n - 1)), and_(not_(head), _exactly(rest, n)))


_CHANGE_FIELDS = ("present", "previous_seq_number", "seq_number", "purged_seq_number", "is_delete", "applies")


def check_pending_changes(s: NodeState, out: Out, g: Bool, clarified: Reading) -> None:
    """3.1.7.2.4: apply queued changes that are now in order; ask for what is still missing."""
    if g is False:
        return
    snapshot = [attrs.evolve(p) for p in s.pending_changes]
    running = g
    for k, p in enumerate(snapshot):
        if running is False:
            break
        live = and_(running, p.present, s.pending_changes[k].present)
        if live is False:
            continue
        stale = ult(p.purged_seq_number, s.purged_seq_number)
        _remove_pending(s, k, and_(live, stale))
        g2 = and_(live, not_(stale))
        last, window = s.last_seq_number, s.change_missing_window
        beyond = ugt(p.seq_number, last)
        if clarified("E-136"):
            # clarification E-136: an in-order change is applied before the window test; for a
            # gap, ask only when it reaches past the outstanding window, widening it to this change
            in_order = and_(g2, beyond, ule(p.previous_seq_number, last))
            gap = and_(g2, beyond, not_(ule(p.previous_seq_number, last)))
            ask = and_(gap, ugt(p.previous_seq_number, window))
            rest = and_(g2, not_(beyond))
            _remove_pending(s, k, in_order)
            handle_in_sync_change(s, out, in_order, p, clarified)
            s.change_missing_window = _set(ask, s.change_missing_window, p.seq_number)
            send_sync_request(s, out, ask)
            _remove_pending(s, k, rest)
            handle_in_sync_change(s, out, and_(rest, eq(p.previous_seq_number, last)), p, clarified)
            running = and_(running, not_(gap))
        else:
            ask = and_(g2, beyond, ugt(p.seq_number, window))
            fall = and_(g2, not_(ask))
            out.lit(and_(g2, beyond, ule(p.previous_seq_number, last), ugt(p.seq_number, window)), "E-136")
            out.lit(and_(g2, beyond, not_(ule(p.previous_seq_number, last)), not_(ugt(p.seq_number, window))),
                    "E-136")
            send_sync_request(s, out, ask)
            _remove_pending(s, k, fall)
            handle_in_sync_change(s, out, and_(fall, eq(p.previous_seq_number, last)), p, clarified)
            running = and_(running, not_(ask))
    _compact_pending(s)


def _queue_out_of_order(s: NodeState, out: Out, g: Bool, c: Change, clarified: Reading) -> None:
    """3.1.7.2.2's else branch: queue the change; ask for the gap when the window widens (E-109),
    or, clarified (E-311), when the window is MAX in NORMAL: the request for everything went unanswered.

    The collection is sorted by SeqNumber with its present elements first; a change is inserted at
    its place unless one with its SeqNumber is queued or the slots are full (the text's "less than
    100", with as many slots as the state has).
    """
    if g is False:
        return
    old = s.pending_changes
    concrete = all(type(p.present) is bool for p in old)
    if concrete:  # the collection may hold only its present changes (pending_capacity says how many fit)
        held = [p for p in old if p.present]
        empty: Bool = not held
        room: Bool = len(held) < (s.pending_capacity or len(old))
    else:
        empty = not_(old[0].present)
        room = not_(old[-1].present)
    first = and_(g, empty)
    widen = and_(first, ugt(c.seq_number, s.change_missing_window))
    stuck = and_(first, eq(s.change_missing_window, MAX_SEQ), eq(s.purge_state, NORMAL))
    if clarified("E-311"):  # clarification E-311: a window of MAX asks for the gap at once
        widen = or_(widen, stuck)
    else:
        out.lit(stuck, "E-311")
    fresh = and_(*(implies(p.present, ne(p.seq_number, c.seq_number)) for p in old))
    insert = and_(g, or_(empty, and_(room, fresh)))
    if concrete and type(insert) is bool:
        if insert:  # after every queued change with a smaller SeqNumber
            at = sum(1 for p in held if p.seq_number < c.seq_number)
            new_held = [*held[:at], attrs.evolve(c, present=True), *held[at:]]
            free = [p for p in old if not p.present]
            s.pending_changes = new_held + free[1:]  # a free slot is taken, or the list grows (no padding)
        s.change_missing_window = _set(widen, s.change_missing_window, c.seq_number)
        send_sync_request(s, out, widen)
        return
    # c goes at index j: after every present change with a smaller SeqNumber
    below = [and_(p.present, ult(p.seq_number, c.seq_number)) for p in old]
    new = []
    for i in range(len(old)):
        at = and_(not_(below[i]), True if i == 0 else below[i - 1])
        after = not_(or_(below[i], at))
        slot = Change(*(ite(and_(insert, at), getattr(c, f),
                            ite(and_(insert, after), getattr(old[i - 1], f) if i > 0 else getattr(old[i], f),
                                getattr(old[i], f)))
                        for f in _CHANGE_FIELDS))
        slot.present = ite(insert, or_(old[i].present, at, and_(after, old[i - 1].present) if i > 0 else False),
                           old[i].present)
        new.append(slot)
    s.pending_changes = new
    s.change_missing_window = _set(widen, s.change_missing_window, c.seq_number)
    send_sync_request(s, out, widen)


def handle_directory_change(s: NodeState, out: Out, g: Bool, c: Change, clarified: Reading,
                            flush: Bool = True) -> None:
    """3.1.7.2.2: ignore an old change, apply an in-order one, queue an out-of-order one."""
    g = and_(g, c.present)
    if g is False:
        return
    stale = or_(ule(c.seq_number, s.last_seq_number), ult(c.purged_seq_number, s.purged_seq_number))
    g1 = and_(g, not_(stale))
    in_order = ule(c.previous_seq_number, s.last_seq_number)
    ga = and_(g1, in_order)
    applied = handle_in_sync_change(s, out, ga, c, clarified, flush)
    check_pending_changes(s, out, applied, clarified)
    _queue_out_of_order(s, out, and_(g1, not_(in_order)), c, clarified)


def start_sync0_state(s: NodeState, out: Out, g: Bool, purged: Seq, clarified: Reading) -> None:
    """3.3.7.10: reset the partition to MIN and ask the authority for everything."""
    if g is False:
        return
    go = and_(g, not_(or_(uge(s.last_seq_number, purged), uge(s.purged_seq_number, purged))))
    out.sync0_started.append(go)
    s.last_seq_number = _set(go, s.last_seq_number, MIN_SEQ)
    s.change_missing_window = _set(go, s.change_missing_window, MAX_SEQ)
    s.purged_seq_number = _set(go, s.purged_seq_number, purged)
    for p in s.pending_changes:
        p.present = _set(go, p.present, False)
    # MQDS Reset Directory Partition, operation 1: the partition's objects get MIN_SEQ_NUMBER
    _env(s).reset(s, out, go, 1)
    for o in s.objects:
        o.seq_number = _set(and_(go, o.present, o.in_partition), o.seq_number, MIN_SEQ)
    for t in s.deleted_objects:
        t.seq_number = _set(and_(go, t.present, t.in_partition), t.seq_number, MIN_SEQ)
    s.purge_state = _set(go, s.purge_state, SYNC0)
    send_sync_request(s, out, go)


def complete_sync0_state(s: NodeState, out: Out, g: Bool, clarified: Reading) -> None:
    """3.3.7.11: delete what was not resent, return to NORMAL (E-135: the values 2 and 3) and raise Check
    Pending Changes."""
    if g is False:
        return
    go = and_(g, or_(eq(s.purge_state, SYNC0), eq(s.purge_state, COMPLETESYNC0)))
    _env(s).reset(s, out, go, 2)  # MQDS Reset Directory Partition, operation 2: the marked objects go
    for o in s.objects:
        o.present = _set(and_(go, o.present, o.in_partition, eq(o.seq_number, MIN_SEQ)), o.present, False)
    for t in s.deleted_objects:
        gone = and_(go, t.present, t.in_partition, eq(t.seq_number, MIN_SEQ))
        out.removed_tombstones.append((gone, t.seq_number, "sync0", s.last_seq_number))
        t.present = _set(gone, t.present, False)
    s.purge_state = _set(go, s.purge_state, NORMAL)
    s.change_missing_window = _set(go, s.change_missing_window, MIN_SEQ)
    check_pending_changes(s, out, go, clarified)


# --- the events raised by other events or by the outside world ---------------------------------


def propagate_directory_change(s: NodeState, out: Out, g: Bool, is_delete: Bool, clarified: Reading,
                               payload: Any = None, number: Seq | None = None) -> Seq:
    """3.1.7.1.2 at the authority, for a change numbered by Read Next Sequence Number (3.1.7.1.3).

    Returns the sequence number assigned. The MQDS server raises this event after the directory
    accepted the change (E-180), so the change here always applies. ``payload``: the whole change
    (the server layer's), which the sent change carries. ``number``: iSeqNumber, which the server
    layer passes: LastSeqNumber + 1 from Read Next Sequence Number, or the sender's number for a
    replicated change applied at its own authority (E-337). The obligations leave it None, LastSeqNumber
    + 1: their receivers assume no such replicated change.
    """
    seq = add(s.last_seq_number, 1) if number is None else number
    g1 = and_(g, s.is_authority)
    if g1 is False:
        return seq
    deleting = and_(g1, is_delete)
    if clarified("E-108"):  # clarification E-108 (Handle Directory Delete with iPostDelete true)
        add_tombstone(s, deleting, seq, True, Change(deleting, s.last_seq_number, seq, s.purged_seq_number,
                                                     is_delete, True, payload))
    else:
        out.lit(deleting, "E-108")
    if clarified("E-103"):  # clarification E-103: the change carries the partition's PurgedSeqNumber
        purged = s.purged_seq_number
    else:
        purged = seq
        out.lit(and_(g1, ugt(seq, s.purged_seq_number)), "E-103")
    change = Change(g1, s.last_seq_number, seq, purged, is_delete, True, payload)
    out.sent_changes.append((g1, change))
    _env(s).propagated(s, out, g1, change)
    out.assigned.append((g1, seq))
    s.ghost_deletions.append(Deletion(deleting, seq))
    s.last_seq_number = _set(g1, s.last_seq_number, seq)
    if clarified("E-131"):  # clarification E-131: the authority purges every 256 changes too
        maybe_purge(s, out, g1, clarified)
    else:
        out.lit(and_(g1, ugt(s.last_seq_number, add(s.previous_purged_seq_number, PURGE_EVERY))), "E-131")
    return seq


def receive_change_request(s: NodeState, out: Out, g: Bool, is_delete: Bool, applies: Bool, names_guid: Bool,
                           clarified: Reading, payload: Any = None, is_sync: Bool = False) -> None:
    """3.2.7.2: apply a request to an owned partition with LastSeqNumber + 1, or forward it.

    ``is_sync``: the request's command is SYNC (0x03), which no related protocol sends (E-164) but a peer can.
    """
    mine = and_(g, s.is_authority)
    ok = and_(mine, applies)
    # the directory operation with iReplicate true raises Propagate Directory Change (E-180)
    new_seq = propagate_directory_change(s, out, and_(ok, not_(is_sync)), is_delete, clarified, payload)
    # a SYNC request goes through Handle Directory Sync, which replicates nothing (3.1.7.2.8: "iReplicate :=
    # false"); the request still takes newSeqNumber and sets "myPartition.LastSeqNumber to newSeqNumber"
    out.assigned.append((and_(ok, is_sync), new_seq))
    if not clarified("E-108"):
        # literal: "Identifier := dirChange.GuidIdentifier", unset for a path-named request (E-108)
        add_tombstone(s, and_(ok, is_delete), new_seq, names_guid,
                      Change(ok, new_seq, new_seq, s.purged_seq_number, is_delete, True, payload))
        out.lit(and_(ok, is_delete, not_(names_guid)), "E-108")
    s.last_seq_number = _set(ok, s.last_seq_number, new_seq)
    out.forwarded.append(and_(g, not_(s.is_authority)))


def _chained(items: list[tuple[Any, ...]], from_seq: Seq, g: Bool, ascending: bool) -> list[ReplyElement] | None:
    """The reply's elements for concrete items: sorted (stable) and chained by PreviousSeqNumber.

    The same elements as :func:`_chained_terms` builds as terms (tests/proofs/test_model_vs_refimpl.py
    evaluates those on concrete states); None when an item is symbolic.
    """
    if not all(type(i[0]) is bool and type(i[1]) is int for i in items) or not is_concrete(from_seq):
        return None
    order = sorted((i for i in items if i[0]), key=lambda i: (i[1] if ascending else -i[1], i[3]))
    prev_of: dict[int, Seq] = {}
    prev = from_seq
    for i in order:
        prev_of[i[3]] = prev
        prev = i[1]
    return [ReplyElement(and_(g, i[0]), prev_of.get(i[3], from_seq), i[1], i[2], i[4]) for i in items]


def _chained_terms(items: list[tuple[Any, ...]], from_seq: Seq, g: Bool, ascending: bool) -> list[ReplyElement]:
    """:func:`_chained` as terms: each element's PreviousSeqNumber is the one immediately before it."""
    elements = []
    for e in items:
        prev: Seq = from_seq
        for f in items:
            if f is e:
                continue
            between = [h for h in items if h is not e and h is not f]
            immediate = and_(f[0], _precedes(f, e, ascending),
                             *(not_(and_(h[0], _precedes(f, h, ascending), _precedes(h, e, ascending)))
                               for h in between))
            prev = ite(immediate, f[1], prev)
        elements.append(ReplyElement(and_(g, e[0]), prev, e[1], e[2], e[4]))
    return elements


def _precedes(f: tuple[Any, ...], e: tuple[Any, ...], ascending: bool) -> Bool:
    """Sort order of the reply (stable): by SeqNumber, then by position before sorting."""
    (_, sf, _, i_f, _), (_, se, _, i_e, _) = f, e
    first = ult(sf, se) if ascending else ugt(sf, se)
    return or_(first, and_(eq(sf, se), i_f < i_e))


def receive_sync_request(s: NodeState, out: Out, g: Bool, from_seq: Seq, to_seq: Seq, known_purged: Seq,
                         is_sync0: Bool, clarified: Reading) -> None:
    """3.2.7.3: answer AlreadyPurged, or the objects and tombstones in [From, To] chained by PreviousSeqNumber."""
    if g is False:
        return
    g1 = and_(g, eq(s.purge_state, NORMAL))
    purged = and_(ult(from_seq, s.purged_seq_number), ult(known_purged, s.purged_seq_number))
    out.already_purged.append((and_(g1, purged), s.purged_seq_number))
    g2 = and_(g1, not_(purged))
    to2 = ite(eq(to_seq, MAX_SEQ), s.last_seq_number, to_seq)
    items: list[tuple[Bool, Seq, Bool, int, Any]] = []
    for o in s.objects:
        in_range = and_(o.present, o.in_partition, uge(o.seq_number, from_seq), ule(o.seq_number, to2))
        if clarified("E-117"):  # clarification E-117: a replicated partition's objects are sent too
            items.append((in_range, o.seq_number, False, len(items), o.payload))
        else:
            out.lit(and_(g2, in_range, not_(s.is_authority)), "E-117")
            items.append((and_(in_range, s.is_authority), o.seq_number, False, len(items), o.payload))
    for t in s.deleted_objects:
        in_range = and_(t.present, t.in_partition, uge(t.seq_number, from_seq), ule(t.seq_number, to2), t.named)
        if clarified("E-118"):  # clarification E-118: only this partition's tombstones in [From, To]
            items.append((in_range, t.seq_number, True, len(items), t.payload))
        else:
            every = and_(t.present, t.named)
            out.lit(and_(g2, every, not_(in_range)), "E-118")
            items.append((every, t.seq_number, True, len(items), t.payload))
    # clarification E-119: ascending order, the one the PreviousSeqNumber chain needs
    ascending = clarified("E-119")
    elements = _chained(items, from_seq, g2, ascending)
    if elements is None:
        elements = _chained_terms(items, from_seq, g2, ascending)
    if not ascending:  # E-119: descending order chains each change to a larger one
        out.lit(and_(g2, or_(*(and_(a[0], b[0]) for i, a in enumerate(items) for b in items[i + 1:]))), "E-119")
    complete = ite(not_(is_sync0), 0, ite(ne(to2, s.last_seq_number), 1, 2))
    lower = and_(not_(s.is_authority), ugt(s.allowed_purge_seq_number, s.purged_seq_number))
    if clarified("E-314"):  # clarification E-314: a replica stamps the purge point its headers allow
        stamp = ite(lower, s.allowed_purge_seq_number, s.purged_seq_number)
    else:
        out.lit(and_(g2, lower), "E-314")
        stamp = s.purged_seq_number
    out.replies.append(Reply(g2, from_seq, to2, stamp, complete, elements, known_purged))


def receive_sync_reply(s: NodeState, out: Out, g: Bool, from_seq: Seq, to_seq: Seq, purged: Seq, complete: Seq,
                       changes: list[Change], clarified: Reading) -> None:
    """3.3.7.5: apply the changes, then complete sync0 or close the missing-change window."""
    del from_seq  # the reply's FromSeqNumber is not read (only the assumptions about it use it)
    g1 = and_(g, not_(ult(purged, s.purged_seq_number)))
    if g1 is False:
        return
    _env(s).changes(s, out, g1, changes, clarified)
    in_sync0 = and_(g1, eq(s.purge_state, SYNC0))
    normal = and_(g1, eq(s.purge_state, NORMAL))
    gs = and_(in_sync0, not_(ult(purged, s.purged_seq_number)))
    complete_sync0_state(s, out, and_(gs, eq(complete, 2)), clarified)
    send_sync_request(s, out, and_(gs, eq(complete, 1)))
    window = s.change_missing_window
    was_max = eq(window, MAX_SEQ)
    s.change_missing_window = _set(and_(normal, was_max), s.change_missing_window, MIN_SEQ)
    empty = not_(or_(*(c.present for c in changes)))
    answers = and_(normal, not_(was_max), empty, eq(window, to_seq))
    s.change_missing_window = _set(answers, s.change_missing_window, MIN_SEQ)
    if clarified("E-166"):  # clarification E-166: never backwards
        moves = and_(answers, ugt(to_seq, s.last_seq_number))
    else:
        moves = answers
        out.lit(and_(answers, ult(to_seq, s.last_seq_number)), "E-166")
    s.last_seq_number = _set(moves, s.last_seq_number, to_seq)
    check_pending_changes(s, out, normal, clarified)


def receive_psc_ack(s: NodeState, out: Out, g: Bool, second: Bool, for_this: Bool, acked: Seq,
                    clarified: Reading) -> None:
    """3.2.7.4: record the acknowledgment of a PSC neighbor for a partition this server owns."""
    go = and_(g, s.is_psc, s.is_authority, for_this)
    for i, n in enumerate(s.psc_neighbors):
        # the ack names the first or the second neighbor; a third (a state the explorer reached) is neither
        hit = and_(go, n.present, second if i == 1 else not_(second) if i == 0 else False)
        n.acked = _set(hit, n.acked, acked)


def receive_change_propagation(s: NodeState, out: Out, g: Bool, present: Bool, last: Seq, purged: Seq,
                               clarified: Reading, machine: Any = None) -> None:
    """3.2.7.1 (the SeqNumberHeader part): raise AllowedPurgeSeqNumber, ask for changes this replica missed.

    "If seqNumber.LastSeqNumber <= dirPartition.LastSeqNumber or seqNumber.LastSeqNumber <
    dirPartition.ChangeMissingWindow: continue" (3.2.7.1). Clarified (E-264), a window of MAX holds
    no header back in NORMAL, and in SYNC0 the header asks again for everything (a lost sync0 reply).
    """
    g1 = and_(g, present, not_(ult(purged, s.purged_seq_number)))
    if g1 is False:
        return
    s.allowed_purge_seq_number = _set(and_(g1, ugt(purged, s.allowed_purge_seq_number)),
                                      s.allowed_purge_seq_number, purged)
    window = s.change_missing_window
    behind = ugt(last, s.last_seq_number)
    is_max = eq(window, MAX_SEQ)
    literal_skip = ult(last, window)  # "seqNumber.LastSeqNumber < dirPartition.ChangeMissingWindow: continue"
    in_sync0 = eq(s.purge_state, SYNC0)
    if clarified("E-264"):
        # clarification E-264: a window of MAX (a sync for everything outstanding, its reply maybe
        # lost) holds no newer header back: in NORMAL the header asks as below; in SYNC0 it asks
        # again for everything, the window staying MAX; in any other state it is held back
        max_skip = ne(s.purge_state, NORMAL)
        again = and_(g1, behind, is_max, in_sync0)
        # clarification E-316: a BSC asks the PSC whose header this is (the server layer's MyPSCName)
        _env(s).header(s, out, again, machine, True)
        send_sync_request(s, out, again)
    else:
        max_skip = literal_skip
        # the readings differ in SYNC0 always (clarified asks, keeping the window), elsewhere when
        # the literal test and the clarified one disagree
        out.lit(and_(g1, behind, is_max, or_(in_sync0, ne(literal_skip, ne(s.purge_state, NORMAL)))), "E-264")
    # both readings keep the text's "<": with the clarified window (the header's own number, E-116) a
    # header at the window asks again, the only way back after a lost reply (E-265); the literal
    # window, one more, holds that header back
    g2 = and_(g1, behind, not_(ite(is_max, max_skip, literal_skip)))
    # "If the queue manager is a PSC: Set dirPartition.AuthorityName to machineName. Else: Set
    # QueueManager.MyPSCName to machineName" (the server layer's names)
    _env(s).header(s, out, g2, machine, False)
    if clarified("E-116"):  # clarification E-116: the window is the header's LastSeqNumber, not one more
        s.change_missing_window = _set(g2, s.change_missing_window, last)
    else:
        s.change_missing_window = _set(g2, s.change_missing_window, add(last, 1))
        out.lit(g2, "E-116")
    send_sync_request(s, out, g2)


def receive_already_purged(s: NodeState, out: Out, g: Bool, purged: Seq, clarified: Reading) -> None:
    """3.3.7.7: start sync0 when the authority purged history this replica still needs (E-134)."""
    go = and_(g, not_(uge(s.last_seq_number, purged)), not_(uge(s.purged_seq_number, purged)))
    start_sync0_state(s, out, go, purged, clarified)


def crash_losing_volatile_state(s: NodeState, out: Out, g: Bool, clarified: Reading) -> None:
    """A crash (lose_volatile_state) then 3.3.3 Initialization: reset what 3.1.1 does not persist, resync."""
    s.previous_purged_seq_number = _set(g, s.previous_purged_seq_number, MIN_SEQ)
    s.change_missing_window = _set(g, s.change_missing_window, MAX_SEQ)
    for p in s.pending_changes:
        p.present = _set(g, p.present, False)
    # "If dirPartition.AuthorityName is different from QueueManager.MachineName or ... a BSC"
    send_sync_request(s, out, and_(g, not_(s.is_authority)))


def sync_authority_ghost(s: NodeState) -> None:
    """At the authority the ghost LastSeqNumber / PurgedSeqNumber are its own; the largest assigned number follows."""
    s.ghost_authority_last_seq = ite(s.is_authority, s.last_seq_number, s.ghost_authority_last_seq)
    s.ghost_authority_purged_seq = ite(s.is_authority, s.purged_seq_number, s.ghost_authority_purged_seq)
