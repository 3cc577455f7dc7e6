"""The MC-MQDSRP invariants, each stated once: name, prose, formula and an executable checker.

Covered: the three families of the design card (monotone sequence numbers, purge safety,
single authority) and the strengthening invariants that make them inductive, plus convergence
at quiescence. Not covered: timing (how soon a replica catches up), message contents beyond
sequence numbers and deletions, the [MS-MQDS] directory itself.

Every invariant has one snake_case ``name`` used identically by the Z3 obligations
(``proofs/z3_*.py``), the hypothesis state machine (``proofs/explore``: one ``@invariant()``
method per name), the docs and the pipeline's result columns. ``formula`` is a short
mathematical statement over per-server state and ghost state (:mod:`mqspec.proofs.ghost`), in
this notation:

* ``S`` the servers, ``p`` a partition, ``auth(p)`` its owner (1.3.1.2: the PEC for the
  enterprise partition, the site's PSC for a site partition);
* for a server ``s`` holding ``p``: ``Last(s,p)``, ``Purged(s,p)``, ``State(s,p)``,
  ``Auth(s,p)`` (LastSeqNumber, PurgedSeqNumber, PurgeState, AuthorityName of 3.1.1.2.3);
  ``Tomb(s)`` its DeletedObjectCollection as (identifier, partition, SeqNumber) triples;
  ``Obj(s,p)`` its directory objects of ``p`` with their sequence numbers;
  ``Acked(a,m,p)`` what PSC neighbor ``m`` has acknowledged of ``p`` at ``a`` (3.1.1.2.4);
* ghost state: ``hi(p)`` the highest number ``auth(p)`` has assigned; for an object ``o``
  created by an authority, ``part(o)``, ``created(o)`` and (once deleted) ``deleted(o)``;
* ``x -e-> x'``: the state before and after one event (one handler run, or finer: the checker
  sees every move of LastSeqNumber or PurgedSeqNumber as the effect after it is emitted).

Inductiveness. The safety properties the design card names are not inductive on their own.
Purge safety in particular is not: a state with no lingering object can step to one where the
authority has purged the tombstone of a deletion that a replica has not seen, and from there no
event brings the deletion back. The set below is strengthened until every member is preserved
by every event given all the others (the Z3 side checks initiation and consecution per handler
for this set):

* ``no_lingering_deleted_objects_at_quiescence`` follows from
  ``no_incremental_history_skips_purged_deletion`` and convergence;
* ``no_incremental_history_skips_purged_deletion`` follows from
  ``authority_tombstone_covers_unacked_deletions`` (every deletion above the authority's
  PurgedSeqNumber still has its tombstone, so an incremental reply from the authority carries
  it), ``replica_tombstone_covers_applied_deletions`` (the same at a PSC answering its BSCs),
  and ``purged_seq_at_most_last_seq`` at the requester (a replica whose LastSeqNumber is below
  the responder's PurgedSeqNumber cannot claim a KnownPurgedSeqNumber at or above it, so it
  gets AlreadyPurged and goes through sync0);
* ``authority_tombstone_covers_unacked_deletions`` is preserved because a purge removes only
  tombstones at or below the PurgedSeqNumber it sets (E-133), and only after
  ``tombstone_purged_only_after_all_psc_acks``, whose acknowledgments are sound by
  ``acked_seq_at_most_replica_last_seq``;
* the sequence-number invariants need ``only_authority_assigns_sequence_numbers`` (no replica is
  ever ahead of ``hi(p)``: E-116) and ``partition_held_once_per_server`` (E-104).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from mqspec import memos
from mqspec.refimpl.mqdsrp_state import PEC_PARTITION_ID, PurgeState, Role

from .ghost import ChangeRequestHandled, Observation, SeqMove, SyncReplySent, TombstonesPurged

Checker = Callable[[Observation], list[str]]

MONOTONE = "monotone"
PURGE_SAFETY = "purge_safety"
SINGLE_AUTHORITY = "single_authority"
STRENGTHENING = "strengthening"
CONVERGENCE = "convergence"
REFINEMENT = "refinement"
FAMILIES = (MONOTONE, PURGE_SAFETY, SINGLE_AUTHORITY, STRENGTHENING, CONVERGENCE, REFINEMENT)


@attrs.frozen
class Invariant:
    """One invariant: its stable name, family, prose, formula and executable checker.

    ``quiescent``: the invariant speaks only of a quiescent enterprise (checked after a settle
    that reached quiescence). ``literal_errata``: the register entries whose literal reading
    violates it (what the literal-mode machine is expected to find).
    """

    name: str
    family: str = attrs.field(validator=attrs.validators.in_(FAMILIES))
    prose: str
    formula: str
    check: Checker = attrs.field(eq=False, repr=False)
    quiescent: bool = False
    literal_errata: tuple[str, ...] = ()


def _label(pid: Any) -> str:
    return "enterprise" if pid == PEC_PARTITION_ID else f"site {pid}"


def _moves(obs: Observation, field: str) -> list[SeqMove]:
    """The step's moves of ``field`` ("last" or "purged"), in event order (five checkers read them)."""
    global _MOVES
    if _MOVES[0] is not obs:
        split: dict[str, list[SeqMove]] = {"last": [], "purged": []}
        for e in obs.events:
            if type(e) is SeqMove:
                split[e.field].append(e)
        _MOVES = (obs, split)
    return _MOVES[1][field]


#: the observation _moves last split, and its moves by field
_MOVES: tuple[Observation | None, dict[str, list[SeqMove]]] = (None, {})


def _forget_moves() -> None:
    global _MOVES
    _MOVES = (None, {})


memos.register(f"{__name__}._MOVES", "the observation _moves last split -> its moves by field", _MOVES, _forget_moves)


# --- monotone sequence numbers ---------------------------------------------------------------


def _authority_last_seq_strictly_increases(obs: Observation) -> list[str]:
    """Checks that the authority's LastSeqNumber moves only by +1, and only with an applied change."""
    out = []
    for m in _moves(obs, "last"):
        if not m.owner:
            continue
        if m.new != m.old + 1 or m.cause != "apply":
            out.append(f"{m.node}: own {_label(m.partition)} LastSeqNumber {m.old} -> {m.new} "
                       f"({m.cause}) in {m.handler}")
    return out


def _sequence_numbers_used_once_per_partition(obs: Observation) -> list[str]:
    """Checks that the authority never assigns a sequence number it assigned before."""
    return [
        f"{m.node}: assigns {m.new} in {_label(m.partition)} again (already assigned up to {m.hi_before}) "
        f"in {m.handler}"
        for m in _moves(obs, "last") if m.owner and m.new > m.old and m.new <= m.hi_before
    ]


def _replica_last_seq_monotone_except_sync0(obs: Observation) -> list[str]:
    """Checks that a replica's LastSeqNumber never decreases except when Start Sync0 State resets it."""
    return [
        f"{m.node}: {_label(m.partition)} LastSeqNumber {m.old} -> {m.new} ({m.cause}) in {m.handler}"
        for m in _moves(obs, "last") if not m.owner and m.new < m.old and m.cause != "sync0"
    ]


def _replica_purged_seq_monotone_except_sync0(obs: Observation) -> list[str]:
    """Checks that no server's PurgedSeqNumber ever decreases (sync0 only raises it)."""
    return [
        f"{m.node}: {_label(m.partition)} PurgedSeqNumber {m.old} -> {m.new} ({m.cause}) in {m.handler}"
        for m in _moves(obs, "purged") if m.new < m.old
    ]


def _applied_change_follows_last_seq(obs: Observation) -> list[str]:
    """Checks that each change a replica applies has PreviousSeqNumber <= LastSeqNumber < SeqNumber."""
    out = []
    for m in _moves(obs, "last"):
        if m.owner or m.cause != "apply":
            continue
        if not m.new > m.old:
            out.append(f"{m.node}: applies change {m.new} in {_label(m.partition)} at LastSeqNumber {m.old} "
                       f"in {m.handler}")
        elif not any(prev <= m.old for prev in m.previous):
            shown = list(m.previous) if m.previous else "no delivered change"
            out.append(f"{m.node}: applies change {m.new} in {_label(m.partition)} at LastSeqNumber {m.old}, "
                       f"PreviousSeqNumber {shown} in {m.handler}")
    return out


def _purged_seq_at_most_last_seq(obs: Observation) -> list[str]:
    """Checks that 0 <= PurgedSeqNumber <= LastSeqNumber in every NORMAL partition."""
    out = []
    for name, qm in obs.nodes():
        for p in qm.partitions:
            if p.purge_state is PurgeState.NORMAL and p.purged_seq_number > p.last_seq_number:
                out.append(f"{name}: {_label(p.partition_id)} PurgedSeqNumber {p.purged_seq_number.value} > "
                           f"LastSeqNumber {p.last_seq_number.value}")
    return out


# --- purge safety ---------------------------------------------------------------------------


def _tombstone_purged_only_after_all_psc_acks(obs: Observation) -> list[str]:
    """Checks that the authority purges a tombstone only when every PSC neighbor acked at or above it."""
    out = []
    for e in obs.events:
        if type(e) is not TombstonesPurged:
            continue
        for identifier, pid, seq in e.removed:
            acks = e.acks.get(pid)
            if acks is None:
                continue  # not this server's own partition
            short = [(n, a) for n, a in acks if a < seq]
            if short:
                out.append(f"{e.node}: purges the tombstone of {identifier} (seq {seq}) in {_label(pid)} "
                           f"before {short} acknowledged it, in {e.handler}")
    return out


def _no_incremental_history_skips_purged_deletion(obs: Observation) -> list[str]:
    """Checks that an incremental SyncReplyMessage carries every deletion a requester may still need."""
    out = []
    ghost = obs.ghost
    for e in obs.events:
        if type(e) is not SyncReplySent or e.complete != 0:
            continue
        for deleted, guid, created in ghost.deletions_after(e.partition, e.from_seq, e.to_seq):
            if created <= e.from_seq and guid not in e.deleted:
                out.append(f"{e.node}: sync reply to {e.to} for {_label(e.partition)} [{e.from_seq}, {e.to_seq}] "
                           f"skips the deletion of {guid} (seq {deleted})")
    return out


def _no_lingering_deleted_objects_at_quiescence(obs: Observation) -> list[str]:
    """Checks that, at quiescence, no server holds an object its authority has deleted."""
    if not obs.quiescent:
        return []
    out = []
    deleted = [o for o in obs.ghost.objects.values() if o.deleted is not None]
    for name, qm in obs.world.nodes.items():
        if not obs.world.up.get(name):
            continue
        objects = qm.directory.objects
        for o in deleted:
            if o.guid in objects:
                out.append(f"{name}: keeps {o.guid} of {_label(o.partition)}, deleted at seq {o.deleted}")
    return out


# --- single authority -------------------------------------------------------------------------


def _one_authority_per_partition(obs: Observation) -> list[str]:
    """Checks that a server acts as authority of a partition exactly when 1.3.1.2 makes it the owner."""
    out = []
    ghost = obs.ghost
    for name, qm in obs.nodes():
        for p in qm.partitions:
            owner = ghost.owner_name(p.partition_id) == name
            if qm.is_authority_of(p) != owner:
                out.append(f"{name}: acts as {'authority' if not owner else 'replica'} of {_label(p.partition_id)}, "
                           f"owned by {ghost.owner_name(p.partition_id)}")
    return out


def _servers_agree_on_authority_at_quiescence(obs: Observation) -> list[str]:
    """Checks that, at quiescence, every server names the partition's owner as its AuthorityName."""
    if not obs.quiescent:
        return []
    out = []
    ghost = obs.ghost
    for name, qm in obs.world.nodes.items():
        if not obs.world.up.get(name):
            continue
        for p in qm.partitions:
            owner = ghost.owner_name(p.partition_id)
            if owner is not None and p.authority_name != owner:
                out.append(f"{name}: names {p.authority_name} as authority of {_label(p.partition_id)}, not {owner}")
    return out


def _only_authority_assigns_sequence_numbers(obs: Observation) -> list[str]:
    """Checks that no sequence number at a replica is one its authority has not assigned yet."""
    out = []
    ghost = obs.ghost
    for name, qm in obs.nodes():
        mine = {}
        for p in qm.partitions:
            pid = p.partition_id
            if ghost.owner_name(pid) == name or ghost.owner_name(pid) is None:
                continue
            hi = ghost.hi.get(pid, 0)
            mine[pid] = hi
            if p.last_seq_number.value > hi:
                out.append(f"{name}: {_label(pid)} LastSeqNumber {p.last_seq_number.value} beyond the "
                           f"authority's {hi}")
        if not mine:
            continue
        for o in qm.directory.objects.values():
            hi = mine.get(o.partition_id)
            if hi is not None and o.seq_number.value > hi:
                out.append(f"{name}: object {o.guid} at seq {o.seq_number.value} beyond the authority's {hi}")
        for d in qm.deleted_objects:
            hi = mine.get(d.partition_id)
            if hi is not None and d.seq_number.value > hi:
                out.append(f"{name}: tombstone {d.identifier} at seq {d.seq_number.value} beyond the authority's {hi}")
    return out


def _bsc_never_applies_change_request(obs: Observation) -> list[str]:
    """Checks that a BSC never applies a change request itself."""
    return [
        f"{e.node}: BSC applies {e.via} change request {e.requester}#{e.request_id} for {_label(e.partition)}"
        for e in obs.events if type(e) is ChangeRequestHandled and e.role == Role.BSC.value and e.applied
    ]


def _change_request_at_non_authority_is_forwarded(obs: Observation) -> list[str]:
    """Checks that a change request at a server that does not own its partition is forwarded, never applied."""
    out = []
    for e in obs.events:
        if type(e) is not ChangeRequestHandled or e.owner:
            continue
        if e.applied:
            out.append(f"{e.node}: applies {e.via} change request {e.requester}#{e.request_id} for "
                       f"{_label(e.partition)} it does not own")
        elif e.forwarded_to is None and (e.replied is None or e.replied == 0):
            out.append(f"{e.node}: neither forwards nor refuses {e.via} change request "
                       f"{e.requester}#{e.request_id} for {_label(e.partition)}")
    return out


# --- strengthening ---------------------------------------------------------------------------


def _tombstones(qm: Any, pid: Any) -> set[tuple[Any, int]]:
    return {(d.identifier, d.seq_number.value) for d in qm.deleted_objects if d.partition_id == pid}


def _authority_tombstone_covers_unacked_deletions(obs: Observation) -> list[str]:
    """Checks that the authority keeps the tombstone of every deletion above its PurgedSeqNumber."""
    out = []
    ghost = obs.ghost
    for name, qm in obs.nodes():
        for p in qm.partitions:
            pid = p.partition_id
            if ghost.owner_name(pid) != name:
                continue
            pending = ghost.deletions_after(pid, p.purged_seq_number.value)
            if not pending:
                continue
            have = _tombstones(qm, pid)
            for deleted, guid, _created in pending:
                if (guid, deleted) not in have:
                    out.append(f"{name}: no tombstone for {guid} deleted at seq {deleted} in {_label(pid)} "
                               f"(PurgedSeqNumber {p.purged_seq_number.value})")
    return out


def _replica_tombstone_covers_applied_deletions(obs: Observation) -> list[str]:
    """Checks that a PSC replica keeps the tombstone of every deletion it passed above its PurgedSeqNumber."""
    out = []
    ghost = obs.ghost
    for name, qm in obs.nodes():
        if qm.role is Role.BSC:
            continue
        for p in qm.partitions:
            pid = p.partition_id
            if ghost.owner_name(pid) in (name, None) or p.purge_state is not PurgeState.NORMAL:
                continue
            passed = ghost.deletions_after(pid, p.purged_seq_number.value, p.last_seq_number.value)
            if not passed:
                continue
            have = _tombstones(qm, pid)
            for deleted, guid, _created in passed:
                if (guid, deleted) not in have:
                    out.append(f"{name}: passed the deletion of {guid} (seq {deleted}) in {_label(pid)} "
                               f"without keeping its tombstone (PurgedSeqNumber {p.purged_seq_number.value})")
    return out


def _acked_seq_at_most_replica_last_seq(obs: Observation) -> list[str]:
    """Checks that what a PSC neighbor has acknowledged at the authority it has applied."""
    out = []
    world = obs.world
    ghost = obs.ghost
    check = set(obs.touched) if not obs.full else set(world.nodes)
    for name, qm in world.nodes.items():
        if name not in check and not any(n.machine_name in check for n in qm.psc_neighbors):
            continue  # neither this server nor any of its PSC neighbors is checked
        for p in qm.partitions:
            pid = p.partition_id
            if ghost.owner_name(pid) != name:
                continue
            for n in qm.psc_neighbors:
                replica = world.nodes.get(n.machine_name)
                if replica is None or (name not in check and n.machine_name not in check):
                    continue
                rp = replica.find_partition(pid)
                if rp is None or rp.purge_state is not PurgeState.NORMAL:
                    continue
                acked = (n.acked_pec_seq_number if pid == PEC_PARTITION_ID else n.acked_seq_number).value
                if acked > rp.last_seq_number.value:
                    out.append(f"{name}: {n.machine_name} acknowledged {acked} of {_label(pid)} but is at "
                               f"{rp.last_seq_number.value}")
    return out


def _partition_held_once_per_server(obs: Observation) -> list[str]:
    """Checks that a server holds one partition object per PartitionID and one PSC neighbor per machine."""
    out = []
    for name, qm in obs.nodes():
        # a Guid's bytes: equal exactly when the Guids are, and hashed without a Python call
        ids = [p.partition_id.bytes_le for p in qm.partitions]
        if len(ids) != len(set(ids)):
            out.append(f"{name}: holds {len(ids) - len(set(ids))} duplicate partition(s)")
        pairs = [(n.partition_id.bytes_le, n.machine_name) for n in qm.psc_neighbors]
        if len(pairs) != len(set(pairs)):
            out.append(f"{name}: holds duplicate PSC neighbors {sorted(n for _p, n in pairs)}")
    return out


# --- convergence ----------------------------------------------------------------------------


def _replicas_converge_at_quiescence(obs: Observation) -> list[str]:
    """Checks that, at quiescence, every replica equals its authority and every partition is NORMAL."""
    if not obs.quiescent:
        return []
    from mqspec.refimpl.world import convergence_problems

    out = [] if obs.settled else ["the enterprise did not become quiet within the settle limit"]
    return out + convergence_problems(obs.world)


def _handlers_refine_model(obs: Observation) -> list[str]:
    """Checks that every handler run of the step did what the model's transition does on its pre-state."""
    return [d.text() for d in obs.departures]


# --- the list --------------------------------------------------------------------------------


INVARIANTS: tuple[Invariant, ...] = (
    Invariant(
        "authority_last_seq_strictly_increases", MONOTONE,
        "At a partition's authority LastSeqNumber strictly increases with every applied change: it moves "
        "only when a change is applied there, and then by exactly one (3.1.7.1.3 Read Next Sequence Number).",
        "∀p, a = auth(p), a -e-> a': Last(a',p) ≠ Last(a,p) ⇒ e applies a change to p ∧ Last(a',p) = Last(a,p) + 1",
        _authority_last_seq_strictly_increases,
        literal_errata=("E-100",),
    ),
    Invariant(
        "sequence_numbers_used_once_per_partition", MONOTONE,
        "Every sequence number of a partition is assigned once: the authority never assigns a number it "
        "has assigned before.",
        "∀p, a = auth(p), a -e-> a': Last(a',p) > Last(a,p) ⇒ Last(a',p) > hi(p); hi'(p) = max(hi(p), Last(a',p))",
        _sequence_numbers_used_once_per_partition,
    ),
    Invariant(
        "replica_last_seq_monotone_except_sync0", MONOTONE,
        "At a replica LastSeqNumber never decreases, except through the explicit reset of Start Sync0 "
        "State (3.3.7.10); losing all replication state removes the partition, which is no decrease.",
        "∀p, s ≠ auth(p), s -e-> s': Last(s',p) < Last(s,p) ⇒ e = StartSync0(s,p)",
        _replica_last_seq_monotone_except_sync0,
        literal_errata=("E-166",),
    ),
    Invariant(
        "replica_purged_seq_monotone_except_sync0", MONOTONE,
        "PurgedSeqNumber never decreases at any server (the authority included); Start Sync0 State "
        "only raises it to the AlreadyPurgedMessage's value (3.3.7.7, 3.3.7.10).",
        "∀p, s, s -e-> s': Purged(s',p) ≥ Purged(s,p)",
        _replica_purged_seq_monotone_except_sync0,
    ),
    Invariant(
        "applied_change_follows_last_seq", MONOTONE,
        "Every change a replica applies satisfies PreviousSeqNumber <= LastSeqNumber < SeqNumber at the "
        "moment it is applied (3.1.7.2.2, 3.1.7.2.4), and LastSeqNumber becomes its SeqNumber (3.1.7.2.3).",
        "∀p, s ≠ auth(p), change c applied at s: c.Previous ≤ Last(s,p) < c.Seq ∧ Last(s',p) = c.Seq",
        _applied_change_follows_last_seq,
        literal_errata=("E-110", "E-136"),
    ),
    Invariant(
        "purged_seq_at_most_last_seq", MONOTONE,
        "0 <= PurgedSeqNumber <= LastSeqNumber wherever the text guarantees it: in every NORMAL partition "
        "(during sync0 LastSeqNumber restarts from MIN below the PurgedSeqNumber just received).",
        "∀s, p: State(s,p) = NORMAL ⇒ 0 ≤ Purged(s,p) ≤ Last(s,p)",
        _purged_seq_at_most_last_seq,
    ),
    Invariant(
        "tombstone_purged_only_after_all_psc_acks", PURGE_SAFETY,
        "A deleted object's tombstone is purged at the authority only when every PSC neighbor has "
        "acknowledged a sequence number at or above it (3.1.7.2.9).",
        "∀p, a = auth(p), (o,p,n) ∈ Tomb(a) \\ Tomb(a'): ∀m ∈ PSCNeighbors(a): Acked(a,m,p) ≥ n",
        _tombstone_purged_only_after_all_psc_acks,
    ),
    Invariant(
        "no_incremental_history_skips_purged_deletion", PURGE_SAFETY,
        "A replica never receives an incremental history that skips a deletion it may need: every "
        "SyncReplyMessage outside sync0 over [From, To] carries the deletion of every object created at "
        "or before From and deleted after it, up to To; when the responder has purged it, it must answer "
        "AlreadyPurged so that the replica goes through sync0 (3.2.7.3).",
        "∀ SyncReply r for p over [f,t] with CompleteSync0(r) = 0, ∀o: part(o) = p ∧ created(o) ≤ f < deleted(o) ≤ t "
        "⇒ o ∈ Deletes(r)",
        _no_incremental_history_skips_purged_deletion,
        literal_errata=("E-118", "E-133"),
    ),
    Invariant(
        "no_lingering_deleted_objects_at_quiescence", PURGE_SAFETY,
        "At quiescence no server holds an object its authority has deleted: no lingering object, no "
        "resurrection.",
        "quiescent ⇒ ∀o: deleted(o) defined ⇒ ∀s ∈ S up: o ∉ Obj(s)",
        _no_lingering_deleted_objects_at_quiescence,
        quiescent=True, literal_errata=("E-108", "E-119", "E-133"),
    ),
    Invariant(
        "one_authority_per_partition", SINGLE_AUTHORITY,
        "Each partition has exactly one authority: a server acts as the authority of a partition exactly "
        "when it is the PEC and the partition is the enterprise partition, or it is the site's PSC and the "
        "partition is its site's (1.3.1.2, 3.1.3.1).",
        "∀s, p ∈ Partitions(s): is_authority(s,p) ⇔ s = auth(p)",
        _one_authority_per_partition,
    ),
    Invariant(
        "servers_agree_on_authority_at_quiescence", SINGLE_AUTHORITY,
        "At quiescence every server names the partition's owner as the partition's AuthorityName.",
        "quiescent ⇒ ∀s up, p ∈ Partitions(s), auth(p) defined: Auth(s,p) = auth(p)",
        _servers_agree_on_authority_at_quiescence,
        quiescent=True, literal_errata=("E-106",),
    ),
    Invariant(
        "only_authority_assigns_sequence_numbers", SINGLE_AUTHORITY,
        "Only the authority assigns sequence numbers: no replica's LastSeqNumber, object or tombstone "
        "carries a number the authority has not assigned yet.",
        "∀p, s ≠ auth(p): Last(s,p) ≤ hi(p) ∧ ∀(o,n) ∈ Obj(s,p) ∪ Tomb(s,p): n ≤ hi(p)",
        _only_authority_assigns_sequence_numbers,
        literal_errata=("E-116", "E-118"),
    ),
    Invariant(
        "bsc_never_applies_change_request", SINGLE_AUTHORITY,
        "A BSC never applies a change request itself: it forwards it to its PSC (3.2.7.2, 3.3.7.1).",
        "∀ change request q handled at s: Role(s) = BSC ⇒ ¬applied(s,q)",
        _bsc_never_applies_change_request,
    ),
    Invariant(
        "change_request_at_non_authority_is_forwarded", SINGLE_AUTHORITY,
        "A change request (a ChangeRequestMessage or a directory client's request) at a server that does "
        "not own its partition is forwarded towards the authority, or refused, never applied (3.1.7.1.1, "
        "3.2.7.2).",
        "∀ change request q handled at s ≠ auth(part(q)): ¬applied(s,q) ∧ (forwarded(s,q) ∨ status(s,q) ≠ MQ_OK)",
        _change_request_at_non_authority_is_forwarded,
    ),
    Invariant(
        "authority_tombstone_covers_unacked_deletions", STRENGTHENING,
        "The authority keeps the tombstone of every deletion above its PurgedSeqNumber (so of every "
        "deletion not yet acknowledged by all PSCs): what an incremental sync reply must carry is still "
        "there (strengthens purge safety).",
        "∀p, a = auth(p), o: part(o) = p ∧ deleted(o) > Purged(a,p) ⇒ (o, p, deleted(o)) ∈ Tomb(a)",
        _authority_tombstone_covers_unacked_deletions,
        literal_errata=("E-108", "E-133"),
    ),
    Invariant(
        "replica_tombstone_covers_applied_deletions", STRENGTHENING,
        "A PSC replica keeps the tombstone of every deletion it has passed above its PurgedSeqNumber, so "
        "that its sync replies to its BSCs carry it (strengthens purge safety; 3.2.7.3 answers from the "
        "replica's own DeletedObjectCollection).",
        "∀p, PSC s ≠ auth(p), State(s,p) = NORMAL, o: part(o) = p ∧ Purged(s,p) < deleted(o) ≤ Last(s,p) "
        "⇒ (o, p, deleted(o)) ∈ Tomb(s)",
        _replica_tombstone_covers_applied_deletions,
        literal_errata=("E-108", "E-133"),
    ),
    Invariant(
        "acked_seq_at_most_replica_last_seq", STRENGTHENING,
        "What a PSC neighbor has acknowledged at the authority it has applied: its LastSeqNumber is at or "
        "above the acknowledgment while its partition is NORMAL (makes the purge rule sound).",
        "∀p, a = auth(p), m ∈ PSCNeighbors(a): State(m,p) = NORMAL ⇒ Acked(a,m,p) ≤ Last(m,p)",
        _acked_seq_at_most_replica_last_seq,
    ),
    Invariant(
        "partition_held_once_per_server", STRENGTHENING,
        "A server holds at most one DirectoryPartition per PartitionID and one PSC neighbor per (partition, "
        "machine) (needed for the sequence-number invariants to speak of one LastSeqNumber).",
        "∀s: PartitionID is injective on Partitions(s) ∧ (PartitionID, MachineName) is injective on PSCNeighbors(s)",
        _partition_held_once_per_server,
        literal_errata=("E-104",),
    ),
    Invariant(
        "replicas_converge_at_quiescence", CONVERGENCE,
        "At quiescence every replica equals its authority (same LastSeqNumber, same objects at the same "
        "sequence numbers, the same AuthorityName) and every partition is NORMAL.",
        "quiescent ⇒ ∀p, s up holding p: Last(s,p) = Last(auth(p),p) ∧ Obj(s,p) = Obj(auth(p),p) ∧ State(s,p) = NORMAL",
        _replicas_converge_at_quiescence,
        quiescent=True, literal_errata=("E-119", "E-142"),
    ),
    Invariant(
        "handlers_refine_model", REFINEMENT,
        "Every handler run of the reference does what the model's transition for the same event does on the "
        "same pre-state: the same post-state (every field of 3.1.1 the model holds), the same messages, "
        "timers, directory events and request completions, the same directory (proofs/refinement: the "
        "per-partition core the obligations prove, and the server layer around it). Checked when the "
        "refinement check is on (the explorer's default).",
        "∀s, e, s -e-> s' in the reference: proj(s') = model_e(proj(s)) ∧ out(e) = model_out_e(proj(s))",
        _handlers_refine_model,
    ),
)

BY_NAME: dict[str, Invariant] = {inv.name: inv for inv in INVARIANTS}
NAMES: tuple[str, ...] = tuple(BY_NAME)


def check(obs: Observation, names: tuple[str, ...] | None = None) -> dict[str, list[str]]:
    """Run the checkers (all, or those named); returns name -> violations, only for those violated."""
    out = {}
    for inv in INVARIANTS if names is None else (BY_NAME[n] for n in names):
        problems = inv.check(obs)
        if problems:
            out[inv.name] = problems
    return out
