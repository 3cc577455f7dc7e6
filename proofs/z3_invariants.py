"""The invariants as formulas over the model of :mod:`mqspec.proofs.z3_model`.

Two kinds:

* a **state** invariant is a formula over one state (``formula(s)``); its obligations are
  initiation (it holds in the initial state) and consecution (every event preserves it, assuming
  every state invariant in the pre-state);
* a **step** invariant is a formula over a pre-state, the post-state and what the event did
  (``formula(pre, post, out, event)``): it checks the event's outputs (messages sent, changes
  applied, tombstones removed, sequence numbers assigned) and two-state properties.

The names of proofs/invariants.py are used for the invariants the issue names; the others are
the strengthening that makes them inductive ("purge safety alone is not"): each says why it is
needed. Messages in flight are summarized by what a receiving event may assume of them
(:func:`incoming_change_ok` and friends in :mod:`mqspec.proofs.z3_events`), and every modelled
sender is checked against the same statement (the ``changes_*`` and ``sync_requests_*`` steps).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import attrs

from .z3_model import MAX_SEQ, NORMAL, PURGE_BUFFER, Change, NodeState, Out
from .z3_ops import Bool, add, and_, eq, implies, ite, ne, not_, or_, sub, uge, ugt, ule, ult


@attrs.frozen
class Invariant:
    """One named invariant: ``kind`` is ``state`` or ``step``; ``family`` groups them (sequence, purge, authority, acks; structure)."""

    name: str
    family: str
    kind: str
    prose: str
    formula: Callable[..., Bool]
    named: bool = False  # stated in proofs/invariants.py (the names the issue, the stateful tests and the docs share)
    statement: str = ""  # the formula as proofs/invariants.py writes it
    #: the events a step invariant speaks of (empty: every event); it has no obligation for another event,
    #: where it would be the constant True
    events: tuple[str, ...] = ()

    def checked_by(self, event: str) -> bool:
        return not self.events or event in self.events


def _all(xs: Any) -> Bool:
    return and_(*xs)


def _any(xs: Any) -> Bool:
    return or_(*xs)


# --- state invariants ---------------------------------------------------------------------------


def well_formed(s: NodeState) -> Bool:
    """The shape every reachable state has (roles, enumerations, ordered collections, ghost ranges)."""
    pend = s.pending_changes
    in_part = [(and_(t.present, t.in_partition), t.seq_number) for t in s.deleted_objects] + \
        [(and_(o.present, o.in_partition), o.seq_number) for o in s.objects]
    dels = s.ghost_deletions
    return _all([
        implies(s.is_authority, s.is_psc),
        ule(s.purge_state, 3), ne(s.purge_state, 1),  # STARTSYNC0 never outlives Start Sync0 State
        *(and_(implies(b.present, a.present), implies(b.present, ult(a.seq_number, b.seq_number)))
          for a, b in itertools.pairwise(pend)),
        ule(s.ghost_authority_purged_seq, s.ghost_authority_last_seq),
        ult(s.ghost_authority_last_seq, MAX_SEQ),  # E-260: fewer than 2**64 - 1 changes per partition
        *(implies(d.present, and_(ugt(d.seq_number, 0), ule(d.seq_number, s.ghost_authority_last_seq)))
          for d in dels),
        *(implies(and_(a.present, b.present), ne(a.seq_number, b.seq_number))
          for i, a in enumerate(dels) for b in dels[i + 1:]),
        # objects and tombstones of the partition: numbered at most LastSeqNumber, distinct above MIN,
        # and above MIN outside sync0 (MIN marks what Start Sync0 State reset)
        *(implies(p, ule(q, s.last_seq_number)) for p, q in in_part),
        *(implies(and_(a[0], b[0], ne(a[1], 0)), ne(a[1], b[1])) for i, a in enumerate(in_part)
          for b in in_part[i + 1:]),
        *(implies(and_(p, eq(s.purge_state, NORMAL)), ne(q, 0)) for p, q in in_part),
        # a deleted object is gone: no object of the partition carries a deletion's number
        *(implies(and_(o.present, o.in_partition, d.present), ne(o.seq_number, d.seq_number))
          for o in s.objects for d in dels),
    ])


def _authority_ghost(s: NodeState) -> Bool:
    return implies(s.is_authority, and_(eq(s.ghost_authority_last_seq, s.last_seq_number),
                                        eq(s.ghost_authority_purged_seq, s.purged_seq_number),
                                        eq(s.purge_state, NORMAL),
                                        not_(s.pending_changes[0].present)))


def _purged_le_last(s: NodeState) -> Bool:
    return implies(eq(s.purge_state, NORMAL), ule(s.purged_seq_number, s.last_seq_number))


def _max_assigned(s: NodeState) -> Bool:
    return implies(s.is_authority, ule(s.ghost_max_assigned_seq, s.last_seq_number))


def _acks_le_last(s: NodeState) -> Bool:
    return implies(s.is_authority, _all(implies(n.present, ule(n.acked, s.last_seq_number))
                                        for n in s.psc_neighbors))


def _last_le_authority(s: NodeState) -> Bool:
    return ule(s.last_seq_number, s.ghost_authority_last_seq)


def _purged_le_authority(s: NodeState) -> Bool:
    return and_(ule(s.purged_seq_number, s.ghost_authority_purged_seq),
                ule(s.allowed_purge_seq_number, s.ghost_authority_purged_seq))


def _window_known(s: NodeState) -> Bool:
    w = s.change_missing_window
    return or_(eq(w, MAX_SEQ), ule(w, s.ghost_authority_last_seq))


def change_is_authority_change(s: NodeState, c: Change, floor: Any = None) -> Bool:
    """What every change in flight or queued satisfies (relative to the receiver's PurgedSeqNumber).

    Numbered by the authority (SeqNumber <= the authority's LastSeqNumber); chained forward
    (PreviousSeqNumber < SeqNumber, or, in a sync reply, the requester's own last change
    ``floor``); no tracked deletion strictly between PreviousSeqNumber and SeqNumber above the
    receiver's PurgedSeqNumber; a tracked deletion's number is a delete change.
    """
    prev, seq = c.previous_seq_number, c.seq_number
    forward = ult(prev, seq) if floor is None else or_(ult(prev, seq), and_(eq(prev, seq), ule(seq, floor)))
    return _all([
        ugt(seq, 0), ule(seq, s.ghost_authority_last_seq), forward,
        *(implies(d.present, not_(and_(ult(prev, d.seq_number), ult(d.seq_number, seq),
                                       ugt(d.seq_number, s.purged_seq_number))))
          for d in s.ghost_deletions),
        *(implies(and_(d.present, eq(d.seq_number, seq)), c.is_delete) for d in s.ghost_deletions),
    ])


def _pending_ok(s: NodeState) -> Bool:
    return _all(implies(p.present, change_is_authority_change(s, p)) for p in s.pending_changes)


def _coverage(s: NodeState) -> Bool:
    return _all(
        implies(and_(d.present, ugt(d.seq_number, s.purged_seq_number), ule(d.seq_number, s.last_seq_number)),
                _any(and_(t.present, t.in_partition, t.named, eq(t.seq_number, d.seq_number))
                     for t in s.deleted_objects))
        for d in s.ghost_deletions
    )


def _authority_coverage(s: NodeState) -> Bool:
    return implies(s.is_authority, _coverage(s))


def _replica_coverage(s: NodeState) -> Bool:
    return implies(not_(s.is_authority), _coverage(s))


STATE_INVARIANTS: tuple[Invariant, ...] = (
    Invariant("replication_state_well_formed", "structure", "state",
              "Roles, PurgeState values, the ordered PendingChangeCollection, the ghost deletions and the "
              "numbering of the partition's objects and tombstones have the shape every reachable state has.",
              well_formed),
    Invariant("purged_seq_at_most_last_seq", "sequence", "state",
              "In NORMAL, 0 <= PurgedSeqNumber <= LastSeqNumber, at the authority and at every replica (in sync0 "
              "Start Sync0 State sets LastSeqNumber to MIN and PurgedSeqNumber above it).",
              _purged_le_last, named=True),
    Invariant("authority_ghost_matches_state", "sequence", "state",
              "At the authority the enterprise's view of the partition is its own: the ghost LastSeqNumber "
              "and PurgedSeqNumber are the partition's, it is NORMAL and queues no change of its own partition.",
              _authority_ghost),
    Invariant("authority_max_assigned_at_most_last_seq", "sequence", "state",
              "Every sequence number the authority assigned is at most its LastSeqNumber (strengthens "
              "sequence_numbers_used_once_per_partition).", _max_assigned),
    Invariant("psc_acks_at_most_authority_last_seq", "acks", "state",
              "The authority's record of each PSC neighbor's acknowledgment is at most its LastSeqNumber "
              "(strengthens purged_seq_at_most_last_seq: the authority purges no further than the acks).",
              _acks_le_last),
    Invariant("only_authority_assigns_sequence_numbers", "authority", "state",
              "Only the authority assigns sequence numbers: no server's LastSeqNumber (nor, by "
              "replication_state_well_formed, any of its objects or tombstones of the partition) carries a number "
              "the authority has not assigned yet (E-116 and E-118 break it).",
              _last_le_authority, named=True),
    Invariant("replica_purged_seq_at_most_authority_purged_seq", "purge", "state",
              "A server's PurgedSeqNumber and AllowedPurgeSeqNumber never pass the authority's PurgedSeqNumber.",
              _purged_le_authority),
    Invariant("window_within_authority_history", "sequence", "state",
              "ChangeMissingWindow is MAX (everything) or a sequence number the authority has assigned "
              "(strengthens only_authority_assigns_sequence_numbers: an empty sync reply moves LastSeqNumber "
              "to the window).", _window_known),
    Invariant("pending_changes_are_authority_changes", "purge", "state",
              "Every queued change was numbered by the authority, chains forward, and skips no deletion above "
              "PurgedSeqNumber (strengthens replica_tombstone_covers_applied_deletions).", _pending_ok),
    Invariant("authority_tombstone_covers_unacked_deletions", "purge", "state",
              "At the authority every deletion of the partition above PurgedSeqNumber has a named tombstone: the "
              "strengthening purge safety needs, since Receive Sync Request sends an incremental history only "
              "from PurgedSeqNumber on (E-108 and E-133 break it).", _authority_coverage),
    Invariant("replica_tombstone_covers_applied_deletions", "purge", "state",
              "At a replica (PSC or BSC, in every PurgeState) every deletion numbered in (PurgedSeqNumber, "
              "LastSeqNumber] has a named tombstone, so that its sync replies to its BSCs carry it (E-108 and "
              "E-133 break it).", _replica_coverage),
)


# --- step invariants (outputs and two-state properties) --------------------------------------------


def _strictly_increases(pre: NodeState, post: NodeState, out: Out, event: str) -> Bool:
    # by exactly one, and only when a change is applied (a sequence number assigned to it)
    assigned = _any(g for g, _ in out.assigned)
    return implies(pre.is_authority, or_(eq(pre.last_seq_number, post.last_seq_number),
                                         and_(assigned, eq(post.last_seq_number, add(pre.last_seq_number, 1)))))


def _used_once(pre: NodeState, post: NodeState, out: Out, event: str) -> Bool:
    return _all(implies(g, ugt(seq, pre.ghost_max_assigned_seq)) for g, seq in out.assigned)


def _sync0_started(out: Out) -> Bool:
    return _any(out.sync0_started)


def _last_monotone(pre: NodeState, post: NodeState, out: Out, event: str) -> Bool:
    return implies(and_(not_(pre.is_authority), not_(_sync0_started(out))),
                   ule(pre.last_seq_number, post.last_seq_number))


def _purged_monotone(pre: NodeState, post: NodeState, out: Out, event: str) -> Bool:
    return ule(pre.purged_seq_number, post.purged_seq_number)


def _applied_follows(pre: NodeState, post: NodeState, out: Out, event: str) -> Bool:
    return _all(implies(g, and_(ule(c.previous_seq_number, last), ult(last, c.seq_number)))
                for g, c, last in out.applied)


def _purge_after_acks(pre: NodeState, post: NodeState, out: Out, event: str) -> Bool:
    return _all(
        implies(and_(g, why == "purge"),
                ite(pre.is_authority,
                    _all(implies(n.present, ule(seq, n.acked)) for n in pre.psc_neighbors),
                    ule(seq, pre.allowed_purge_seq_number)))
        for g, seq, why, _last in out.removed_tombstones
    )


def _purge_keeps_buffer(pre: NodeState, post: NodeState, out: Out, event: str) -> Bool:
    """"Deleted objects within this buffer are not purged": a purged tombstone is 1024 or more below LastSeqNumber."""
    return _all(implies(and_(g, why == "purge"), and_(uge(last, PURGE_BUFFER), ule(seq, sub(last, PURGE_BUFFER))))
                for g, seq, why, last in out.removed_tombstones)


def _only_authority_assigns(pre: NodeState, post: NodeState, out: Out, event: str) -> Bool:
    return _all(implies(g, pre.is_authority) for g, _ in out.assigned)


def _bsc_never_applies(pre: NodeState, post: NodeState, out: Out, event: str) -> Bool:
    if event != "receive_change_request":
        return True
    return implies(not_(pre.is_psc), and_(not_(_any(g for g, _ in out.assigned)),
                                          eq(pre.last_seq_number, post.last_seq_number)))


def _forwarded(pre: NodeState, post: NodeState, out: Out, event: str) -> Bool:
    if event != "receive_change_request":
        return True
    return implies(not_(pre.is_authority), and_(_any(out.forwarded), not_(_any(g for g, _ in out.assigned)),
                                                eq(pre.last_seq_number, post.last_seq_number)))


def _no_skipped_deletion(pre: NodeState, post: NodeState, out: Out, event: str) -> Bool:
    """Every incremental sync reply holds each deletion in (From, To] the requester has not purged."""
    if event != "receive_sync_request":
        return True
    return _all(
        implies(and_(r.sent, d.present, ugt(d.seq_number, r.from_seq_number), ule(d.seq_number, r.to_seq_number),
                     ugt(d.seq_number, r.known_purged_seq_number)),
                _any(and_(e.included, e.is_delete, eq(e.seq_number, d.seq_number)) for e in r.elements))
        for r in out.replies for d in pre.ghost_deletions
    )


def _changes_assigned(pre: NodeState, post: NodeState, out: Out, event: str) -> Bool:
    ga = post.ghost_authority_last_seq
    sent = [implies(g, and_(ugt(c.seq_number, 0), ule(c.seq_number, ga))) for g, c in out.sent_changes]
    replies = [implies(r.sent, and_(ule(r.to_seq_number, ga),
                                    _all(implies(e.included, ule(e.seq_number, ga)) for e in r.elements)))
               for r in out.replies]
    return _all(sent + replies)


def _changes_forward(pre: NodeState, post: NodeState, out: Out, event: str) -> Bool:
    sent = [implies(g, ult(c.previous_seq_number, c.seq_number)) for g, c in out.sent_changes]
    replies = [implies(e.included, or_(ult(e.previous_seq_number, e.seq_number),
                                       and_(eq(e.previous_seq_number, e.seq_number),
                                            eq(e.seq_number, r.from_seq_number))))
               for r in out.replies for e in r.elements]
    return _all(sent + replies)


def _changes_skip_nothing(pre: NodeState, post: NodeState, out: Out, event: str) -> Bool:
    dels = post.ghost_deletions
    sent = [implies(and_(g, d.present), and_(not_(and_(ult(c.previous_seq_number, d.seq_number),
                                                        ult(d.seq_number, c.seq_number))),
                                              implies(eq(d.seq_number, c.seq_number), c.is_delete)))
            for g, c in out.sent_changes for d in dels]
    replies = [implies(and_(e.included, d.present),
                       and_(not_(and_(ult(e.previous_seq_number, d.seq_number), ult(d.seq_number, e.seq_number),
                                      ugt(d.seq_number, r.known_purged_seq_number))),
                            implies(eq(d.seq_number, e.seq_number), e.is_delete)))
               for r in out.replies for e in r.elements for d in dels]
    return _all(sent + replies)


def _changes_purged(pre: NodeState, post: NodeState, out: Out, event: str) -> Bool:
    gp = post.ghost_authority_purged_seq
    return _all([implies(g, ule(c.purged_seq_number, gp)) for g, c in out.sent_changes] +
                [implies(r.sent, ule(r.purged_seq_number, gp)) for r in out.replies] +
                [implies(g, ule(p, gp)) for g, p in out.already_purged])


def _requests_assigned(pre: NodeState, post: NodeState, out: Out, event: str) -> Bool:
    ga = post.ghost_authority_last_seq
    return _all(implies(g, and_(or_(eq(to, MAX_SEQ), ule(to, ga)), ule(frm, ga)))
                for g, frm, to, _known, _s0 in out.sync_requests)


def _acks_truthful(pre: NodeState, post: NodeState, out: Out, event: str) -> Bool:
    return _all(implies(g, and_(ule(acked, post.last_seq_number), ule(acked, post.ghost_authority_last_seq)))
                for g, acked in out.psc_acks)


STEP_INVARIANTS: tuple[Invariant, ...] = (
    Invariant("authority_last_seq_strictly_increases", "sequence", "step",
              "At the authority LastSeqNumber never decreases and strictly increases with every change it applies.",
              _strictly_increases, named=True),
    Invariant("sequence_numbers_used_once_per_partition", "sequence", "step",
              "Every sequence number the authority assigns is above every number it assigned before.",
              _used_once, named=True),
    Invariant("replica_last_seq_monotone_except_sync0", "sequence", "step",
              "At a replica LastSeqNumber never decreases except through Start Sync0 State.", _last_monotone,
              named=True),
    Invariant("replica_purged_seq_monotone_except_sync0", "sequence", "step",
              "PurgedSeqNumber never decreases (Start Sync0 State raises it too).", _purged_monotone, named=True),
    Invariant("applied_change_follows_last_seq", "sequence", "step",
              "Every change applied (Handle In-Sync Change) has PreviousSeqNumber <= LastSeqNumber < SeqNumber "
              "at the moment it is applied.", _applied_follows, named=True),
    Invariant("tombstone_purged_only_after_all_psc_acks", "purge", "step",
              "Purge Deleted Objects removes a tombstone at the authority only when every PSC neighbor has "
              "acknowledged a sequence number at or above it (at a replica: only up to AllowedPurgeSeqNumber).",
              _purge_after_acks, named=True),
    Invariant("no_incremental_history_skips_purged_deletion", "purge", "step",
              "A sync reply that is not AlreadyPurged holds every deletion in (From, To] above the requester's "
              "KnownPurgedSeqNumber: a replica never receives an incremental history that skips a purged deletion.",
              _no_skipped_deletion, named=True, events=("receive_sync_request",)),
    Invariant("purge_keeps_last_1024_changes", "purge", "step",
              "Purge Deleted Objects keeps the tombstones of the last 1024 changes: \"This is to have a buffer for "
              "deleted objects. Deleted objects within this buffer are not purged\" (3.1.7.2.9; E-130 breaks it).",
              _purge_keeps_buffer),
    Invariant("assignments_only_at_authority", "authority", "step",
              "Only the partition's authority assigns a sequence number to a change (3.1.7.1.3, 3.2.7.2).",
              _only_authority_assigns),
    Invariant("bsc_never_applies_change_request", "authority", "step",
              "Receive Change Request at a BSC assigns no sequence number and leaves LastSeqNumber alone.",
              _bsc_never_applies, named=True, events=("receive_change_request",)),
    Invariant("change_request_at_non_authority_is_forwarded", "authority", "step",
              "Receive Change Request at a server that is not the authority forwards the request and applies nothing.",
              _forwarded, named=True, events=("receive_change_request",)),
    Invariant("changes_carry_assigned_sequence_numbers", "sequence", "step",
              "Every change sent (propagation or sync reply) and every sync reply's ToSeqNumber is a number the "
              "authority has assigned (what receivers assume; E-118 breaks it).", _changes_assigned),
    Invariant("changes_chain_forward", "sequence", "step",
              "Every change sent has PreviousSeqNumber < SeqNumber (a sync reply's first change may repeat the "
              "requester's FromSeqNumber); E-119 and E-118 break it.", _changes_forward),
    Invariant("changes_skip_no_deletion", "purge", "step",
              "No deletion lies strictly between a sent change's PreviousSeqNumber and SeqNumber (in a sync reply: "
              "above the requester's KnownPurgedSeqNumber), and a deletion's number is sent as a delete.",
              _changes_skip_nothing),
    Invariant("changes_carry_authority_purged_seq", "purge", "step",
              "The PurgedSeqNumber a change, a sync reply or an AlreadyPurged carries is at most the authority's "
              "(2.2.4: \"the purged sequence number of the associated directory partition\"; E-103 breaks it).",
              _changes_purged),
    Invariant("sync_requests_ask_assigned_sequence_numbers", "sequence", "step",
              "A sync request asks from LastSeqNumber up to MAX or to a number the authority has assigned "
              "(E-116 breaks it).", _requests_assigned),
    Invariant("psc_acks_are_truthful", "acks", "step",
              "A PSC acknowledges at most its own LastSeqNumber (what the authority's purge relies on).",
              _acks_truthful),
)

#: where the single-server encoding says less or more than the shared statement, and why
ENCODING_NOTES = {
    "purged_seq_at_most_last_seq": (
        "At every server in NORMAL. At a replica it rests on the assumption sync0_reply_reaches_purged_seq (a sync0 "
        "reply that completes sync0 takes LastSeqNumber to PurgedSeqNumber), which mqspec prove lists as not proved."),
    "replica_tombstone_covers_applied_deletions": (
        "Encoded for every replica (BSCs too) in every PurgeState: the sync0 states need it for Complete Sync0 "
        "State to return to NORMAL covered."),
    "no_incremental_history_skips_purged_deletion": (
        "Encoded at the server answering (3.2.7.3): every deletion in (From, To] above the request's "
        "KnownPurgedSeqNumber is in an incremental reply."),
    "authority_last_seq_strictly_increases": (
        "Encoded as: unchanged, or increased by exactly one with a number the authority assigns."),
}


def _stated_once(invs: tuple[Invariant, ...]) -> tuple[Invariant, ...]:
    """An invariant proofs/invariants.py states takes its prose and formula from there (one statement each)."""
    from . import invariants as stated

    out = []
    for inv in invs:
        shared = stated.BY_NAME.get(inv.name)
        if shared is not None:
            note = ENCODING_NOTES.get(inv.name)
            prose = shared.prose if note is None else f"{shared.prose} [Z3: {note}]"
            inv = attrs.evolve(inv, prose=prose, statement=shared.formula, named=True)
        out.append(inv)
    return tuple(out)


STATE_INVARIANTS = _stated_once(STATE_INVARIANTS)
STEP_INVARIANTS = _stated_once(STEP_INVARIANTS)
INVARIANTS: tuple[Invariant, ...] = STATE_INVARIANTS + STEP_INVARIANTS
BY_NAME = {inv.name: inv for inv in INVARIANTS}


def inductive_invariant(s: NodeState) -> Bool:
    """The conjunction every consecution obligation assumes of the pre-state."""
    return _all(inv.formula(s) for inv in STATE_INVARIANTS)
