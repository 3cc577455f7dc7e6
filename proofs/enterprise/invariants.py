"""The enterprise invariants: universally quantified over servers, partitions, objects, sequence numbers, replies.

Four families, as the design card names them, each with the strengthening that makes it inductive:

* ``authority`` (single authority): at most one server is a partition's authority, and every
  AuthorityName a server holds or a message carries names the partition's owner: its authority,
  or a PSC that a handover stopped for good;
* ``sequence`` (in-order replication, monotone sequence numbers): no server and no message carries a
  sequence number the authority has not assigned, and a replica's objects of a partition are
  versions of the authority's history at or below its LastSeqNumber, not deleted there (the safety
  half of convergence);
* ``purge`` (purge safety): the authority purges a tombstone only after every PSC neighbor
  acknowledged past it, every server's tombstones cover the deletions it applied above its
  PurgedSeqNumber, and no sync reply skips a deletion its requester may still need (a replica behind
  the purge point is answered AlreadyPurged and resynchronizes: sync0);
* ``acks`` (truthful acknowledgements): no acknowledgement claims more than its sender applied.

Each :class:`Invariant` has one line "checks that ..." (its ``prose``), its formula, and its
``statement``: the formula as the docs print it. ``step`` invariants speak of a pre- and a post-state.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import z3

from .vocabulary import N, O, P, R, S, State, auth, lt, owner, var

FAMILIES = ("authority", "sequence", "purge", "acks")


@attrs.frozen
class Invariant:
    name: str
    family: str
    prose: str  # "checks that ..."
    statement: str
    formula: Callable[..., Any]
    kind: str = "state"  # or "step" (formula(pre, post))
    strengthening: bool = False  # needed to make the family inductive rather than the family's statement itself


s1, s2, t, n = var("s1", S), var("s2", S), var("t", S), var("n", S)
p = var("p", P)
o, o2 = var("o", O), var("o2", O)
x, y, d, u, v, z = var("x", N), var("y", N), var("d", N), var("u", N), var("v", N), var("z", N)
rr = var("r", R)


def A(vs: list[Any], body: Any) -> Any:
    return z3.ForAll(vs, body)


def imp(a: Any, b: Any) -> Any:
    return z3.Implies(a, b)


def real(st: State, x_: Any) -> Any:
    return x_ != st.zero


# --- authority ------------------------------------------------------------------------------------------------


def _one_authority(st: State) -> Any:
    return A([s1, s2, p], imp(z3.And(auth(st, s1, p), auth(st, s2, p)), s1 == s2))


def _one_running_owner(st: State) -> Any:
    return z3.And(A([s1, s2, p], imp(z3.And(st.alive(s1), st.alive(s2), owner(st, s1, p), owner(st, s2, p)),
                                     s1 == s2)),
                  st.alive(st.pec), A([s1], imp(st.alive(s1), st.used(s1))))


def _names_owner(st: State) -> Any:
    return A([s1, p, t], imp(st.authname(s1, p, t), z3.And(owner(st, t, p), st.used(t))))


def _headers_from_owner(st: State) -> Any:
    return A([s1, p, x, u], imp(st.hdr_i(s1, p, x, u), z3.And(owner(st, s1, p), st.used(s1))))


def _answers_to_replicas(st: State) -> Any:
    return z3.And(
        A([rr], imp(st.rsent(rr), z3.Not(owner(st, st.rdst(rr), st.rpart(rr))))),
        A([s1, t, p, x], imp(st.ap(s1, t, p, x), z3.Not(owner(st, t, p)))),
        A([s1, p, x, y, u], imp(z3.Or(st.sreq(s1, p, x, y, u), st.sreq0(s1, p, x, y, u)), z3.Not(owner(st, s1, p)))),
    )


def _acks_to_owner(st: State) -> Any:
    return A([s1, t, p, x], imp(st.ack(s1, t, p, x), owner(st, t, p)))


def _handed_within_site(st: State) -> Any:
    return A([s1, t], imp(st.handed(s1, t), z3.And(st.site(s1) == st.site(t), z3.Not(st.bsc(s1)), z3.Not(st.bsc(t)),
                                                   st.used(t), st.used(s1), z3.Not(st.alive(s1)))))


# --- sequence ----------------------------------------------------------------------------------------------------


def _authority_is_ghost(st: State) -> Any:
    return A([s1, p], imp(auth(st, s1, p), z3.And(st.last(s1, p) == st.alast(p), st.purged(s1, p) == st.apurged(p),
                                                  z3.Not(st.sync0(s1, p)))))


def _owner_without_partition(st: State) -> Any:
    return A([s1, p, t], imp(z3.And(st.alive(s1), owner(st, s1, p), z3.Not(st.has(s1, p))),
                             z3.And(st.alast(p) == st.zero, st.apurged(p) == st.zero, st.acked(s1, t, p) == st.zero,
                                    imp(z3.And(st.used(t), owner(st, t, p)), z3.Or(t == s1, st.handed(t, s1))))))


def _ghost_order(st: State) -> Any:
    return A([p], z3.And(st.le(st.apurged(p), st.alast(p)), lt(st, st.alast(p), st.top)))


def _last_at_most_authority(st: State) -> Any:
    return A([s1, p], imp(st.has(s1, p), z3.And(st.le(st.last(s1, p), st.alast(p)),
                                                st.le(st.purged(s1, p), st.apurged(p)),
                                                st.le(st.allowed(s1, p), st.apurged(p)))))


def _purged_at_most_last(st: State) -> Any:
    return A([s1, p], imp(z3.And(st.has(s1, p), z3.Not(st.sync0(s1, p))), st.le(st.purged(s1, p), st.last(s1, p))))


def _held_once(st: State) -> Any:
    return A([s1, p], z3.Not(st.twice(s1, p)))


def _acked_at_most_last(st: State) -> Any:
    return A([s1, n, p], imp(z3.And(auth(st, s1, p), st.pscnb(s1, n), st.has(n, p), z3.Not(st.sync0(n, p))),
                             st.le(st.acked(s1, n, p), st.last(n, p))))


def _window_known(st: State) -> Any:
    w = st.window(s1, p)
    return A([s1, p], imp(st.has(s1, p), z3.Or(w == st.top, st.le(w, st.alast(p)))))


def _history_well_formed(st: State) -> Any:
    return z3.And(
        A([o, x], imp(st.hist(o, x), z3.And(real(st, x), st.le(x, st.alast(st.part(o)))))),
        A([o, o2, x], imp(z3.And(st.hist(o, x), st.hist(o2, x), st.part(o) == st.part(o2)), o == o2)),
        A([o, x], imp(st.hdel(o, x), st.hist(o, x))),
        A([o, x, d], imp(z3.And(st.hdel(o, d), st.hist(o, x)), st.le(x, d))),
    )


def _absent_partition_empty(st: State) -> Any:
    q = st.part(o)
    return z3.And(
        A([s1, p], imp(z3.Not(st.has(s1, p)), z3.And(st.last(s1, p) == st.zero, st.purged(s1, p) == st.zero,
                                                    st.allowed(s1, p) == st.zero, st.window(s1, p) == st.top,
                                                    z3.Not(st.sync0(s1, p))))),
        A([s1, o], imp(z3.Or(st.held(s1, o), st.tombd(s1, o)), st.has(s1, q))),
        A([s1, p], imp(st.has(s1, p), st.used(s1))),
        A([s1, t, p], imp(z3.Not(st.used(s1)), z3.And(st.acked(s1, t, p) == st.zero, z3.Not(st.pscnb(s1, t)),
                                                      z3.Not(st.authname(s1, p, t))))),
    )


def _already_purged(st: State) -> Any:
    return A([s1, t, p, u], imp(st.ap(s1, t, p, u), st.le(u, st.apurged(p))))


def _propagated(st: State) -> Any:
    return A([p, x, u], imp(st.prop(p, x, u), z3.And(real(st, x), st.le(x, st.alast(p)), st.le(u, st.apurged(p)),
                                                     lt(st, u, x))))


def _headers_assigned(st: State) -> Any:
    return A([s1, p, x, u], imp(z3.Or(st.hdr_i(s1, p, x, u), st.hdr_b(s1, p, x, u)),
                                z3.And(st.le(x, st.alast(p)), st.le(u, st.apurged(p)))))


def _requests_assigned(st: State) -> Any:
    def ok(f: Any, to: Any, k: Any) -> Any:
        return z3.And(st.le(f, st.alast(p)), z3.Or(to == st.top, st.le(to, st.alast(p))), st.le(k, st.apurged(p)),
                      st.le(k, st.purged(s1, p)))

    return A([s1, p, x, y, u], imp(z3.Or(st.sreq(s1, p, x, y, u), st.sreq0(s1, p, x, y, u)), ok(x, y, u)))


def _replies_assigned(st: State) -> Any:
    q = st.rpart(rr)
    return A([rr], imp(st.rsent(rr), z3.And(
        st.le(st.rto(rr), st.alast(q)), st.le(st.rpur(rr), st.apurged(q)), st.le(st.rknown(rr), st.purged(st.rdst(rr), q)),
        A([o], imp(st.rhas(rr, o), z3.And(st.part(o) == q, st.le(st.rfrom(rr), st.rseq(rr, o)),
                                          st.le(st.rseq(rr, o), st.rto(rr)), real(st, st.rseq(rr, o))))))))


def _objects_in_history(st: State) -> Any:
    q = st.part(o)
    return A([s1, o], imp(z3.And(st.held(s1, o), real(st, st.ver(s1, o))),
                          z3.And(st.has(s1, q), st.hist(o, st.ver(s1, o)), st.le(st.ver(s1, o), st.last(s1, q)))))


def _marks_only_in_sync0(st: State) -> Any:
    return A([s1, o], z3.And(imp(z3.And(st.held(s1, o), st.ver(s1, o) == st.zero), st.sync0(s1, st.part(o))),
                             imp(z3.And(st.tombd(s1, o), st.tseq(s1, o) == st.zero), st.sync0(s1, st.part(o)))))


def _reply_objects_in_history(st: State) -> Any:
    return A([rr, o], imp(z3.And(st.rsent(rr), st.rhas(rr, o), z3.Not(st.rdl(rr, o))),
                          z3.And(st.hist(o, st.rseq(rr, o)),
                                 A([d], imp(st.hdel(o, d), lt(st, st.rto(rr), d))))))


# --- purge ------------------------------------------------------------------------------------------------------


def _no_deleted_object_kept(st: State) -> Any:
    q = st.part(o)
    return A([s1, o, d], imp(z3.And(st.held(s1, o), real(st, st.ver(s1, o)), st.hdel(o, d)),
                             z3.And(lt(st, st.last(s1, q), d), lt(st, st.purged(s1, q), d))))


def _tombstones_are_deletions(st: State) -> Any:
    q = st.part(o)
    return A([s1, o], imp(z3.And(st.tombd(s1, o), real(st, st.tseq(s1, o))), z3.And(
        z3.Not(st.held(s1, o)), st.hdel(o, st.tseq(s1, o)), st.le(st.tseq(s1, o), st.last(s1, q)))))


def _tombstones_cover(st: State) -> Any:
    q = st.part(o)
    return A([s1, o, d], imp(z3.And(st.has(s1, q), st.hdel(o, d), lt(st, st.purged(s1, q), d),
                                    st.le(d, st.last(s1, q))),
                             z3.And(st.tombd(s1, o), st.tseq(s1, o) == d)))


def _reply_deletions(st: State) -> Any:
    return A([rr, o], imp(z3.And(st.rsent(rr), st.rhas(rr, o), st.rdl(rr, o)), st.hdel(o, st.rseq(rr, o))))


def _no_skipped_deletion(st: State) -> Any:
    return A([rr, o, d], imp(z3.And(st.rsent(rr), st.part(o) == st.rpart(rr), st.hdel(o, d), lt(st, st.rfrom(rr), d),
                                    st.le(d, st.rto(rr)), lt(st, st.rknown(rr), d)),
                             z3.And(st.rhas(rr, o), st.rdl(rr, o), st.rseq(rr, o) == d)))


def _purge_after_acks(pre: State, post: State) -> Any:
    q = pre.part(o)
    return A([s1, o, n], imp(z3.And(pre.tombd(s1, o), z3.Not(post.tombd(s1, o)), auth(pre, s1, q), pre.pscnb(s1, n)),
                             pre.le(pre.tseq(s1, o), pre.acked(s1, n, q))))


def _history_grows(pre: State, post: State) -> Any:
    return z3.And(
        A([p], z3.And(pre.le(pre.alast(p), post.alast(p)), pre.le(pre.apurged(p), post.apurged(p)))),
        A([o, x], z3.And(imp(pre.hist(o, x), post.hist(o, x)), imp(pre.hdel(o, x), post.hdel(o, x)),
                         imp(z3.And(post.hist(o, x), z3.Not(pre.hist(o, x))), lt(pre, pre.alast(pre.part(o)), x)))))


def _authority_steps_by_one(pre: State, post: State) -> Any:
    # "by exactly one, only when a change is applied": the next number, and the change numbered with it is recorded
    last, last2 = pre.last(s1, p), post.last(s1, p)
    return A([s1, p, z], imp(z3.And(auth(pre, s1, p), auth(post, s1, p), last != last2),
                             z3.And(lt(pre, last, last2), z3.Not(z3.And(lt(pre, last, z), lt(pre, z, last2))),
                                    z3.Exists([o], z3.And(pre.part(o) == p, post.hist(o, last2),
                                                          z3.Not(pre.hist(o, last2)))))))


def _replica_monotone(pre: State, post: State) -> Any:
    # Start Sync0 State: LastSeqNumber back to MIN, in SYNC0, with a higher PurgedSeqNumber
    reset = z3.And(post.last(s1, p) == pre.zero, post.sync0(s1, p), lt(pre, pre.purged(s1, p), post.purged(s1, p)))
    return A([s1, p], imp(pre.has(s1, p), z3.And(z3.Or(pre.le(pre.last(s1, p), post.last(s1, p)), reset),
                                                 pre.le(pre.purged(s1, p), post.purged(s1, p)))))


# --- acks -------------------------------------------------------------------------------------------------------


def _applied(st: State, s: Any, q: Any, value: Any) -> Any:
    """``value`` is at most what ``s`` applied of ``q``: its LastSeqNumber, or a PurgedSeqNumber sync0 set above it."""
    return z3.Or(st.le(value, st.last(s, q)), st.le(value, st.purged(s, q)))


def _acks_truthful(st: State) -> Any:
    return A([s1, t, p, x], imp(st.ack(s1, t, p, x), _applied(st, s1, p, x)))


def _recorded_acks_truthful(st: State) -> Any:
    return A([s1, n, p], imp(z3.And(auth(st, s1, p), st.pscnb(s1, n)), _applied(st, n, p, st.acked(s1, n, p))))


def _successor_dominates(st: State) -> Any:
    return A([s1, t, p], imp(st.handed(s1, t), z3.And(_applied(st, t, p, st.last(s1, p)),
                                                      st.le(st.purged(s1, p), st.purged(t, p)))))


INVARIANTS: tuple[Invariant, ...] = (
    # authority
    Invariant("one_authority_per_partition", "authority",
              "checks that at most one server is the authority of a partition",
              "∀ s1 s2 p. auth(s1,p) ∧ auth(s2,p) → s1 = s2", _one_authority),
    Invariant("one_running_owner_per_partition", "authority",
              "checks that at most one running server owns a partition by its role (1.3.1.2), the PEC runs, and "
              "every running server is one the enterprise has known",
              "∀ s1 s2 p. alive(s1) ∧ alive(s2) ∧ owner(s1,p) ∧ owner(s2,p) → s1 = s2; alive(pec)",
              _one_running_owner, strengthening=True),
    Invariant("authority_names_name_the_owner", "authority",
              "checks that every AuthorityName a server holds names the partition's owner: its authority, or a PSC "
              "a handover stopped for good",
              "∀ s p t. authname(s,p,t) → owner(t,p) ∧ used(t)", _names_owner),
    Invariant("headers_to_pscs_come_from_the_owner", "authority",
              "checks that an intersite SeqNumberHeader (which sets a PSC's AuthorityName, 3.2.7.1) comes from the "
              "partition's owner",
              "∀ s p l u. hdr_i(s,p,l,u) → owner(s,p)", _headers_from_owner),
    Invariant("acks_go_to_the_owner", "authority",
              "checks that every PSCAckMessage goes to the server its sender names as authority: the partition's owner",
              "∀ s t p v. ack(s,t,p,v) → owner(t,p)", _acks_to_owner),
    Invariant("sync_answers_go_to_replicas", "authority",
              "checks that no owner of a partition asks for its history or is answered (sync requests, replies and "
              "AlreadyPurged concern replicas only)",
              "∀ r. rsent(r) → ¬owner(rdst(r), rpart(r)); ap(s,t,p,u) → ¬owner(t,p); sreq(s,p,...) → ¬owner(s,p)",
              _answers_to_replicas, strengthening=True),
    Invariant("handovers_stay_within_the_site", "authority",
              "checks that a site's PSC hands over only to another PSC of the same site and stops for good",
              "∀ s t. handed(s,t) → site(s) = site(t) ∧ ¬bsc(s) ∧ ¬bsc(t) ∧ ¬alive(s)", _handed_within_site, strengthening=True),
    # sequence
    Invariant("authority_state_is_the_authority_history", "sequence",
              "checks that the authority's LastSeqNumber and PurgedSeqNumber are the partition's (ghost) history's "
              "and it is NORMAL",
              "∀ s p. auth(s,p) → last(s,p) = alast(p) ∧ purged(s,p) = apurged(p) ∧ ¬sync0(s,p)",
              _authority_is_ghost, strengthening=True),
    Invariant("owner_without_its_partition_has_no_history", "sequence",
              "checks that a running owner that does not yet hold its partition is its first owner (or took over from "
              "those before it), has no history "
              "to lose and has recorded no acknowledgement of it",
              "∀ s p t. alive(s) ∧ owner(s,p) ∧ ¬has(s,p) → alast(p) = MIN ∧ acked(s,t,p) = MIN ∧ "
              "(used(t) ∧ owner(t,p) → t = s ∨ handed(t,s))", _owner_without_partition,
              strengthening=True),
    Invariant("authority_history_below_max", "sequence",
              "checks that the authority's PurgedSeqNumber is at most its LastSeqNumber, which is below MAX",
              "∀ p. apurged(p) ≤ alast(p) < MAX", _ghost_order, strengthening=True),
    Invariant("no_server_ahead_of_the_authority", "sequence",
              "checks that no server's LastSeqNumber, PurgedSeqNumber or AllowedPurgeSeqNumber passes the authority's",
              "∀ s p. has(s,p) → last(s,p) ≤ alast(p) ∧ purged(s,p) ≤ apurged(p) ∧ allowed(s,p) ≤ apurged(p)",
              _last_at_most_authority),
    Invariant("purged_seq_at_most_last_seq", "sequence",
              "checks that MIN <= PurgedSeqNumber <= LastSeqNumber in every NORMAL partition, at the authority and "
              "at every replica",
              "∀ s p. has(s,p) ∧ ¬sync0(s,p) → purged(s,p) ≤ last(s,p)", _purged_at_most_last),
    Invariant("partition_held_once_per_server", "sequence",
              "checks that a server holds at most one DirectoryPartition per PartitionID (and one PSC neighbor per "
              "machine)",
              "∀ s p. ¬twice(s,p)", _held_once),
    Invariant("window_within_authority_history", "sequence",
              "checks that every ChangeMissingWindow is MAX or a number the authority has assigned",
              "∀ s p. has(s,p) → window(s,p) = MAX ∨ window(s,p) ≤ alast(p)", _window_known, strengthening=True),
    Invariant("authority_history_well_formed", "sequence",
              "checks that the authority's history numbers each change once, within its LastSeqNumber, and changes "
              "no object after its deletion",
              "hist(o,x) → MIN < x ≤ alast(part o); one object per number; hdel ⊆ hist; hdel(o,d) ∧ hist(o,x) → x ≤ d",
              _history_well_formed, strengthening=True),
    Invariant("absent_partition_is_empty", "sequence",
              "checks that a server holds no replication state, object or tombstone of a partition it does not hold, "
              "and a server not yet in the enterprise holds nothing",
              "∀ s p. ¬has(s,p) → last = purged = allowed = MIN ∧ window = MAX; held(s,o) ∨ tombd(s,o) → has(s, part o); "
              "a server never in the enterprise has no neighbor, acknowledgement or AuthorityName",
              _absent_partition_empty, strengthening=True),
    Invariant("already_purged_carries_at_most_the_authority_purged_seq", "purge",
              "checks that every AlreadyPurgedMessage carries a PurgedSeqNumber at most the authority's",
              "∀ s t p u. ap(s,t,p,u) → u ≤ apurged(p)", _already_purged, strengthening=True),
    Invariant("propagated_changes_carry_assigned_numbers", "sequence",
              "checks that every change in flight carries a number the authority assigned and a PurgedSeqNumber at "
              "most the authority's, below the change's own",
              "∀ p x u. prop(p,x,u) → MIN < x ≤ alast(p) ∧ u ≤ apurged(p) ∧ u < x", _propagated),
    Invariant("headers_carry_at_most_the_authority_numbers", "sequence",
              "checks that every SeqNumberHeader carries a LastSeqNumber and PurgedSeqNumber at most the authority's",
              "∀ s p l u. hdr(s,p,l,u) → l ≤ alast(p) ∧ u ≤ apurged(p)", _headers_assigned),
    Invariant("sync_requests_ask_assigned_numbers", "sequence",
              "checks that every SyncRequest asks from and up to numbers the authority assigned (or MAX) and "
              "claims a KnownPurgedSeqNumber its requester has",
              "∀ s p f t k. sreq(s,p,f,t,k) → f ≤ alast(p) ∧ (t = MAX ∨ t ≤ alast(p)) ∧ k ≤ purged(s,p)",
              _requests_assigned),
    Invariant("sync_replies_carry_assigned_numbers", "sequence",
              "checks that every SyncReply's ToSeqNumber, PurgedSeqNumber and changes are within the authority's "
              "history and its [From, To]",
              "∀ r. rsent(r) → rto(r) ≤ alast ∧ rpur(r) ≤ apurged ∧ ∀ o. rhas(r,o) → rfrom(r) ≤ rseq(r,o) ≤ rto(r)",
              _replies_assigned),
    Invariant("replica_objects_are_authority_history", "sequence",
              "checks that every object a server holds (unmarked) is a version the authority's history gave it, at "
              "or below the server's LastSeqNumber",
              "∀ s o. held(s,o) ∧ ver(s,o) ≠ MIN → hist(o, ver(s,o)) ∧ ver(s,o) ≤ last(s, part o)",
              _objects_in_history),
    Invariant("reset_marks_only_in_sync0", "sequence",
              "checks that only a partition in sync0 holds objects and tombstones Reset Directory Partition marked",
              "∀ s o. held(s,o) ∧ ver(s,o) = MIN → sync0(s, part o)", _marks_only_in_sync0, strengthening=True),
    Invariant("reply_objects_are_authority_history", "sequence",
              "checks that every object a SyncReply carries is a version of the authority's history not deleted "
              "up to the reply's ToSeqNumber",
              "∀ r o. rsent(r) ∧ rhas(r,o) ∧ ¬rdl(r,o) → hist(o, rseq(r,o)) ∧ ∀ d. hdel(o,d) → rto(r) < d",
              _reply_objects_in_history, strengthening=True),
    Invariant("authority_history_only_grows", "sequence",
              "checks that the authority's LastSeqNumber, PurgedSeqNumber and history only grow, and a new change is "
              "numbered above every earlier one",
              "alast ≤ alast', apurged ≤ apurged', hist ⊆ hist', hdel ⊆ hdel', hist'(o,x) ∧ ¬hist(o,x) → alast < x",
              _history_grows, kind="step"),
    Invariant("authority_last_seq_strictly_increases", "sequence",
              "checks that the authority's LastSeqNumber moves only to the next number, and only with a change it "
              "numbers",
              "∀ s p. auth(s,p) ∧ auth'(s,p) ∧ last(s,p) ≠ last'(s,p) → last' is last + 1 ∧ ∃ o. hist'(o, last') ∧ "
              "¬hist(o, last')", _authority_steps_by_one, kind="step"),
    Invariant("replica_last_seq_monotone_except_sync0", "sequence",
              "checks that a server's LastSeqNumber never decreases except when Start Sync0 State resets it, and its "
              "PurgedSeqNumber never decreases",
              "∀ s p. has(s,p) → (last ≤ last' ∨ (last' = MIN ∧ sync0' ∧ purged < purged')) ∧ purged ≤ purged'",
              _replica_monotone, kind="step"),
    # purge
    Invariant("no_server_keeps_an_object_deleted_below_its_last_seq", "purge",
              "checks that no server holds (unmarked) an object the authority deleted at or below its LastSeqNumber "
              "or its PurgedSeqNumber",
              "∀ s o d. held(s,o) ∧ ver(s,o) ≠ MIN ∧ hdel(o,d) → last(s, part o) < d ∧ purged(s, part o) < d",
              _no_deleted_object_kept),
    Invariant("tombstones_are_authority_deletions", "purge",
              "checks that every tombstone (unmarked) is a deletion of the authority's history the server applied",
              "∀ s o. tombd(s,o) ∧ tseq(s,o) ≠ MIN → ¬held(s,o) ∧ hdel(o, tseq(s,o)) ∧ tseq(s,o) ≤ last(s, part o)",
              _tombstones_are_deletions, strengthening=True),
    Invariant("tombstones_cover_deletions_above_purged_seq", "purge",
              "checks that every server holds the tombstone of each deletion in (PurgedSeqNumber, LastSeqNumber]",
              "∀ s o d. has(s, part o) ∧ hdel(o,d) ∧ purged(s, part o) < d ≤ last(s, part o) → tombd(s,o) ∧ tseq(s,o) = d",
              _tombstones_cover),
    Invariant("reply_deletions_are_authority_deletions", "purge",
              "checks that every tombstone a SyncReply carries is a deletion of the authority's history",
              "∀ r o. rsent(r) ∧ rhas(r,o) ∧ rdl(r,o) → hdel(o, rseq(r,o))", _reply_deletions, strengthening=True),
    Invariant("no_incremental_history_skips_purged_deletion", "purge",
              "checks that every SyncReply carries each deletion in (From, To] above its requester's "
              "KnownPurgedSeqNumber (a requester behind the responder's purge point is answered AlreadyPurged)",
              "∀ r o d. rsent(r) ∧ hdel(o,d) ∧ rfrom(r) < d ≤ rto(r) ∧ rknown(r) < d → rhas(r,o) ∧ rdl(r,o) ∧ "
              "rseq(r,o) = d", _no_skipped_deletion),
    Invariant("tombstone_purged_only_after_all_psc_acks", "purge",
              "checks that the authority removes a tombstone only when every PSC neighbor acknowledged at or above it",
              "∀ s o n. tombd(s,o) ∧ ¬tombd'(s,o) ∧ auth(s, part o) ∧ pscnb(s,n) → tseq(s,o) ≤ acked(s,n,part o)",
              _purge_after_acks, kind="step"),
    # acks
    Invariant("psc_acks_are_truthful", "acks",
              "checks that every PSCAckMessage in flight acknowledges at most what its sender applied (its "
              "LastSeqNumber, or the PurgedSeqNumber a later sync0 set above it)",
              "∀ s t p v. ack(s,t,p,v) → v ≤ last(s,p) ∨ v ≤ purged(s,p)", _acks_truthful),
    Invariant("recorded_psc_acks_are_truthful", "acks",
              "checks that what an authority records of a PSC neighbor's acknowledgement is at most what the neighbor "
              "applied",
              "∀ s n p. auth(s,p) ∧ pscnb(s,n) → acked(s,n,p) ≤ last(n,p) ∨ acked(s,n,p) ≤ purged(n,p)",
              _recorded_acks_truthful),
    Invariant("acked_seq_at_most_replica_last_seq", "acks",
              "checks that what a PSC neighbor acknowledged at the authority it has applied: its LastSeqNumber is at "
              "or above the acknowledgement while its partition is NORMAL",
              "∀ s n p. auth(s,p) ∧ pscnb(s,n) ∧ has(n,p) ∧ ¬sync0(n,p) → acked(s,n,p) ≤ last(n,p)",
              _acked_at_most_last),
    Invariant("handover_successor_has_applied_more", "acks",
              "checks that a PSC that took a site over has applied at least what its predecessor had",
              "∀ s t p. handed(s,t) → last(s,p) ≤ last(t,p) ∨ last(s,p) ≤ purged(t,p); purged(s,p) ≤ purged(t,p)",
              _successor_dominates, strengthening=True),
)
BY_NAME = {inv.name: inv for inv in INVARIANTS}
STATE_INVARIANTS = tuple(i for i in INVARIANTS if i.kind == "state")


def inductive_invariant(st: State) -> list[Any]:
    return [inv.formula(st) for inv in STATE_INVARIANTS]
