"""Proof obligations: initiation and consecution of every invariant for every handler, per mode.

mypyvy-style: each (invariant, handler, mode) is checked in its own ``z3.Solver``. A consecution
obligation asserts the pre-state's shape (64-bit sequence numbers, ``replication_state_well_formed``),
every state invariant of the pre-state (the inductive invariant), the event's assumptions, the
transition (the post-state is a function of the pre-state and the event's arguments) and the
negation of the invariant in the post-state (or of the step invariant over the pair). ``unsat``
is ``proved``; ``sat`` is ``violated`` with the model as a counterexample ("invariant X is not
preserved by Y"); anything else (timeout, ``unknown``) is ``unknown``, never proved.

Each result also says whether it is ``trivial`` (the goal holds with the post-state and the
messages sent left free) or ``vacuous`` (the assumptions are contradictory); see
:mod:`mqspec.proofs.accounting`. Also here: the 2.2.2 lemmas (:mod:`mqspec.proofs.z3_seqnum`), initiation (every state invariant
holds in a server's first state, an authority's and a replica's; a replica that loses all its
replication state starts there again), and the bounded model checking of several servers
(:mod:`mqspec.proofs.bmc`, on the simulator).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Executor
from typing import Any

import attrs
import z3

from . import z3_events as ev
from . import z3_invariants as zi
from . import z3_seqnum
from .accounting import counts, havoc, holds_from, satisfiable
from .pool import processes
from .z3_model import (
    DELETION_SLOTS,
    ERRATA,
    NEIGHBOR_SLOTS,
    Deletion,
    Neighbor,
    Reading,
)
from .z3_ops import bl, ne, not_, or_

MODES = ("clarified", "literal")
TIMEOUT_MS = 60_000


@attrs.frozen
class Obligation:
    """What must hold: ``kind`` one of :data:`accounting.KINDS`; ``family`` the invariant's (sequence, purge,
    authority, acks, structure; seqnum for the lemmas); ``servers`` "one", "any" or a bounded run's number."""

    name: str
    invariant: str
    handler: str
    mode: str
    kind: str
    family: str = ""
    servers: str = "one"


@attrs.define
class Result:
    """An obligation's outcome; ``trivial`` and ``vacuous`` say when a ``proved`` proves nothing (accounting)."""

    obligation: Obligation
    status: str  # proved | violated | unknown
    seconds: float
    counterexample: dict[str, Any] | None = None
    trivial: bool = False
    vacuous: bool = False
    #: what a refinement row checked (proofs/refinement/campaign.py): section, steps, states, branches, ...
    detail: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        o = self.obligation
        out = {"name": o.name, "invariant": o.invariant, "handler": o.handler, "mode": o.mode, "kind": o.kind,
               "family": o.family, "servers": o.servers, "status": self.status, "trivial": self.trivial,
               "vacuous": self.vacuous, "seconds": round(self.seconds, 3), "counterexample": self.counterexample}
        if self.detail is not None:
            out["detail"] = self.detail
        return out


def obligation_name(invariant: str, handler: str) -> str:
    """``<invariant>-by-<handler>``: also the stem of the counterexample scenario file."""
    return f"{invariant}-by-{handler}"


def obligations(mode: str) -> list[Obligation]:
    """Every obligation of one mode, in a stable order."""
    out = [Obligation(f"seqnum-{lemma.name}", lemma.name, "SEQUENCE_NUMBER", mode, "lemma", "seqnum")
           for lemma in z3_seqnum.LEMMAS]
    out += [Obligation(obligation_name(inv.name, "initialization"), inv.name, "initialization", mode, "initiation",
                       inv.family) for inv in zi.STATE_INVARIANTS]
    out += [_consecution(inv, event.name, mode) for event in ev.EVENTS for inv in zi.INVARIANTS
            if inv.checked_by(event.name)]
    from . import bmc

    out += [bmc.obligation(prop, mode) for prop in bmc.PROPERTIES]
    from .enterprise import check as enterprise

    return out + enterprise.obligations(mode)


def _consecution(inv: zi.Invariant, handler: str, mode: str) -> Obligation:
    return Obligation(obligation_name(inv.name, handler), inv.name, handler, mode, "consecution", inv.family)


# --- checking -----------------------------------------------------------------------------------------


def verdict(solver: z3.Solver) -> tuple[str, z3.ModelRef | None]:
    """``proved`` (unsat), ``violated`` with the model (sat), or ``unknown`` (never proved)."""
    answer = solver.check()
    if answer == z3.unsat:
        return "proved", None
    if answer == z3.sat:
        return "violated", solver.model()
    return "unknown", None


def check_lemma(ob: Obligation, timeout_ms: int = TIMEOUT_MS) -> Result:
    lemma = next(lm for lm in z3_seqnum.LEMMAS if lm.name == ob.invariant)
    r = z3_seqnum.prove_lemma(lemma, timeout_ms)
    cex = None if r.counterexample is None else {"values": r.counterexample}
    return Result(ob, r.status, r.seconds, cex)


def check_initiation(ob: Obligation, timeout_ms: int = TIMEOUT_MS) -> Result:
    """The invariant holds in the first state of an authority's and of a replica's partition (3.1.3.1)."""
    from .counterexample import initiation_counterexample

    inv = zi.BY_NAME[ob.invariant]
    started = time.perf_counter()
    trivial = vacuous = True
    for authority in (True, False):
        solver = z3.Solver()
        solver.set("timeout", timeout_ms)
        neighbors = [Neighbor(z3.Bool(f"qm.psc_neighbors[{i}].present"), 0) for i in range(NEIGHBOR_SLOTS)]
        deletions = [Deletion(z3.Bool(f"ghost.deletions[{d}].present"), z3.Int(f"ghost.deletions[{d}].seq_number"))
                     for d in range(DELETION_SLOTS)]
        ghost_last, ghost_purged = z3.Int("ghost.authority_last_seq"), z3.Int("ghost.authority_purged_seq")
        s0 = ev.initial_state(authority, z3.Bool("qm.is_psc"), z3.Bool("partition.is_enterprise"), neighbors,
                              ghost_last, ghost_purged, deletions)
        # the rest of the enterprise may be anywhere: only the ghost part of the shape is assumed
        assumptions = [bl(ev.bounded(s0)), bl(_ghost_shape(s0))]
        solver.add(*assumptions)
        solver.add(bl(not_(inv.formula(s0))))
        status, model = verdict(solver)
        if status != "proved":
            cex = initiation_counterexample(model, s0, authority) if model is not None else None
            return Result(ob, status, time.perf_counter() - started, cex)
        # trivial: the invariant holds of any state with that ghost shape, not only of the first one
        free = ev.symbolic_state("initial.")
        trivial = trivial and holds_from([bl(ev.bounded(free)), bl(_ghost_shape(free))], bl(inv.formula(free)),
                                         timeout_ms)
        vacuous = vacuous and not satisfiable(assumptions, timeout_ms)
    return Result(ob, "proved", time.perf_counter() - started, trivial=trivial, vacuous=vacuous)


def _ghost_shape(s: Any) -> Any:
    from .z3_ops import MAX_SEQ, and_, implies, ne, ugt, ule, ult

    d = s.ghost_deletions
    return and_(ule(s.ghost_authority_purged_seq, s.ghost_authority_last_seq), ult(s.ghost_authority_last_seq, MAX_SEQ),
                *(implies(x.present, and_(ugt(x.seq_number, 0), ule(x.seq_number, s.ghost_authority_last_seq)))
                  for x in d),
                *(implies(and_(a.present, b.present), ne(a.seq_number, b.seq_number))
                  for i, a in enumerate(d) for b in d[i + 1:]))


def check_event(event_name: str, mode: str, invariants: Iterable[str] | None = None,
                timeout_ms: int = TIMEOUT_MS) -> list[Result]:
    """Every consecution obligation of one event in one mode (the transition is built once, each check in its own solver)."""
    from .counterexample import consecution_counterexample, render

    event = ev.EVENTS_BY_NAME[event_name]
    clarified = Reading.of(mode)
    pre = ev.symbolic_state()
    params = ev.symbolic_params(event)
    post, out = ev.step(event, pre, params, clarified)
    base = [bl(ev.bounded(pre, params)), bl(zi.well_formed(pre)), bl(zi.inductive_invariant(pre)),
            bl(event.assume(pre, params, clarified))]
    vacuous = not satisfiable(base, timeout_ms)
    # without the transition: the post-state and what the event sent are free terms
    free_post, free_out = havoc(post, "post"), havoc(out, "out")
    results = []
    for inv in zi.INVARIANTS:
        if (invariants is not None and inv.name not in invariants) or not inv.checked_by(event.name):
            continue
        ob = _consecution(inv, event.name, mode)
        started = time.perf_counter()
        solver = z3.Solver()
        solver.set("timeout", timeout_ms)
        solver.add(*base)
        goal = inv.formula(post) if inv.kind == "state" else inv.formula(pre, post, out, event.name)
        solver.add(bl(not_(goal)))
        status, model = verdict(solver)
        cex = None
        if model is not None:
            model = _small_model(solver, pre, params) or model
            cex = consecution_counterexample(model, ob, event, pre, params, post, out)
            if mode == "literal":
                alone = errata_alone(event, inv.name, timeout_ms)
                cex["errata_alone"] = alone
                cex["errata"] = sorted(set(cex["errata"]) | set(alone))
                cex["trace"] = render(ob, cex)
        free_goal = inv.formula(free_post) if inv.kind == "state" else inv.formula(pre, free_post, free_out, event.name)
        trivial = holds_from(base, bl(free_goal), timeout_ms)
        results.append(Result(ob, status, time.perf_counter() - started, cex, trivial, vacuous))
    return results


def branch_guards(event_name: str, mode: str) -> dict[str, Any]:
    """The event's modelled branches, each by what it does (a change applied, a message sent, a tombstone removed,
    sync0 started, ...), with the condition under which the transition takes it.

    The model is bounded: a branch that can happen several times in one event is written once per slot (a
    pending change, a tombstone, a neighbor), and which slot a state uses is an accident of the encoding, not a
    branch of the pseudo-code. A branch is therefore the disjunction of its slots' guards: reachable when some
    slot can take it (a slot that no state uses, such as the fourth tombstone slot of an event that removes at
    most three, is not a branch the model leaves out)."""
    event = ev.EVENTS_BY_NAME[event_name]
    pre = ev.symbolic_state()
    params = ev.symbolic_params(event)
    post, out = ev.step(event, pre, params, Reading.of(mode))
    lists = {"applies a change": [g for g, _c, _l in out.applied], "assigns a number": [g for g, _ in out.assigned],
             "propagates a change": [g for g, _ in out.sent_changes],
             "sends a sync request": [r[0] for r in out.sync_requests], "sends a PSC ack": [g for g, _ in out.psc_acks],
             "answers AlreadyPurged": [g for g, _ in out.already_purged], "sends a sync reply": [r.sent for r in out.replies],
             "purges a tombstone": [g for g, _s, why, _l in out.removed_tombstones if why == "purge"],
             "completes sync0": [g for g, _s, why, _l in out.removed_tombstones if why == "sync0"],
             "forwards a change request": list(out.forwarded), "starts sync0": list(out.sync0_started),
             # Receive PSC Ack sends nothing: what it does is the neighbor's acknowledgement it records
             "records a PSC ack": [ne(a.acked, b.acked) for a, b in zip(pre.psc_neighbors, post.psc_neighbors)
                                   if not z3.eq(a.acked, b.acked)]}
    joined = {what: or_(*guards) for what, guards in lists.items()}
    return {what: guard for what, guard in joined.items() if guard is not False}


def branch_reachability(event_name: str, mode: str, timeout_ms: int = TIMEOUT_MS) -> dict[str, str]:
    """Each branch of :func:`branch_guards`: ``reachable`` when a state satisfying every invariant and the event's
    assumptions takes it, ``unreachable`` when none does, else ``unknown``."""
    event = ev.EVENTS_BY_NAME[event_name]
    reading = Reading.of(mode)
    pre = ev.symbolic_state()
    params = ev.symbolic_params(event)
    base = [bl(ev.bounded(pre, params)), bl(zi.well_formed(pre)), bl(zi.inductive_invariant(pre)),
            bl(event.assume(pre, params, reading))]
    result = {}
    for name, guard in branch_guards(event_name, mode).items():  # the same symbolic state: the same constants
        solver = z3.Solver()
        solver.set("timeout", timeout_ms)
        solver.add(*base, bl(guard))
        answer = solver.check()
        result[name] = "reachable" if answer == z3.sat else "unreachable" if answer == z3.unsat else "unknown"
    return result


def _small_model(solver: z3.Solver, pre: Any, params: Any) -> z3.ModelRef | None:
    """A counterexample with sequence numbers of at most 64 (or MAX) when there is one: easier to read."""
    from .z3_ops import MAX_SEQ

    solver.push()
    solver.set("timeout", 5_000)
    for x in ev.sequence_numbers(pre) + ev.sequence_numbers(params):
        solver.add(z3.Or(x <= 64, x == MAX_SEQ))
    model = solver.model() if solver.check() == z3.sat else None
    solver.pop()
    return model


def errata_alone(event: ev.Event, invariant: str, timeout_ms: int = TIMEOUT_MS) -> list[str]:
    """The register entries whose literal reading ALONE (everything else clarified) violates the obligation."""
    inv = zi.BY_NAME[invariant]
    found = []
    for erratum in ERRATA:
        reading = Reading(frozenset({erratum}))
        pre = ev.symbolic_state()
        params = ev.symbolic_params(event)
        post, out = ev.step(event, pre, params, reading)
        if not any(g is not False for g, e in out.literal if e == erratum):
            continue  # this handler never takes that branch
        solver = z3.Solver()
        solver.set("timeout", timeout_ms)
        solver.add(bl(ev.bounded(pre, params)), bl(zi.well_formed(pre)), bl(zi.inductive_invariant(pre)),
                   bl(event.assume(pre, params, reading)))
        goal = inv.formula(post) if inv.kind == "state" else inv.formula(pre, post, out, event.name)
        solver.add(bl(not_(goal)))
        if solver.check() == z3.sat:
            found.append(erratum)
    return found


def _job(args: tuple[str, str, str, int, str]) -> Any:
    """One unit of the pool's work: a per-server event's obligations (of one invariant only, when named), an enterprise
    transition's, the enterprise initiation obligations, or whether an enterprise invariant holds without any
    transition."""
    what, name, mode, timeout_ms, invariant = args
    if what == "event":
        only = [invariant] if invariant else None
        return [r.to_json() for r in check_event(name, mode, only, timeout_ms=timeout_ms)]
    from .enterprise import check as enterprise

    if what == "transition":
        return [r.to_json() for r in enterprise.check_transition(name, mode, with_trivial=False)]
    if what == "enterprise-initiation":
        return [r.to_json() for r in enterprise.run_initiation(mode)]
    return enterprise.holds_without_transition(name)


def _result_from_json(data: dict[str, Any]) -> Result:
    ob = Obligation(data["name"], data["invariant"], data["handler"], data["mode"], data["kind"], data["family"],
                    data["servers"])
    return Result(ob, data["status"], data["seconds"], data["counterexample"], data["trivial"], data["vacuous"])


#: the per-server transitions that take longest: first in the pool, one task per invariant (a literal violation of
#: Receive Sync Reply takes minutes, the rest of the event seconds), so that the workers end together
_HEAVY_EVENTS = ("receive_sync_reply", "handle_directory_change", "check_pending_changes", "complete_sync0_state")
#: the enterprise transitions that take longest (literal Receive Sync Reply: a minute and a half for one invariant):
#: the first task of the pool
_HEAVY_TRANSITIONS = ("receive_sync_reply",)
ALL_KINDS = ("lemma", "initiation", "consecution", "enterprise-initiation", "enterprise-consecution", "bounded")


def run(mode: str, *, jobs: int | None = None, timeout_ms: int = TIMEOUT_MS, bmc: bool = True,
        kinds: tuple[str, ...] = ALL_KINDS, events: Iterable[str] | None = None,
        pool: Executor | None = None, then: Callable[[Executor | None], None] | None = None) -> list[Result]:
    """Check every obligation of ``mode`` of the ``kinds`` asked (consecution only for the handlers ``events``
    names, per server and in the enterprise model), in ``pool`` (`mqspec prove`'s) or in a pool of ``jobs``
    processes. ``then`` is given the pool once the longest obligations are queued: work that shares it (the
    refinement campaign) goes in between them and the rest, so that every process ends at about the same time."""
    from .enterprise import check as enterprise
    from .enterprise import invariants as enterprise_invariants

    results: list[Result] = []
    obs = obligations(mode)
    if "lemma" in kinds:
        results += [check_lemma(o, timeout_ms) for o in obs if o.kind == "lemma"]
    if "initiation" in kinds:
        results += [check_initiation(o, timeout_ms) for o in obs if o.kind == "initiation"]
    wanted = None if events is None else set(events)
    tasks: list[tuple[str, str, str, int, str]] = []
    if "consecution" in kinds:
        chosen = [e.name for e in ev.EVENTS if wanted is None or e.name in wanted]
        tasks += [("event", e, mode, timeout_ms, inv.name) for e in _HEAVY_EVENTS if e in chosen
                  for inv in zi.INVARIANTS if inv.checked_by(e)]
        tasks += [("event", e, mode, timeout_ms, "") for e in chosen if e not in _HEAVY_EVENTS]
    if "enterprise-consecution" in kinds:
        transitions = [t.name for t in enterprise.TRANSITIONS if wanted is None or t.name in wanted]
        tasks[:0] = [("transition", t, mode, timeout_ms, "") for t in transitions if t in _HEAVY_TRANSITIONS]
        tasks += [("transition", t, mode, timeout_ms, "") for t in transitions if t not in _HEAVY_TRANSITIONS]
        tasks += [("trivial", inv.name, mode, timeout_ms, "") for inv in enterprise_invariants.INVARIANTS]
    if "enterprise-initiation" in kinds:
        tasks.append(("enterprise-initiation", "", mode, timeout_ms, ""))
    jobs = jobs or min(2, os.cpu_count() or 1)
    # the heavy tasks (above) before ``then``'s work, the rest after it
    heavy = sum(t[0] == "transition" and t[1] in _HEAVY_TRANSITIONS or t[0] == "event" and t[1] in _HEAVY_EVENTS
                for t in tasks)
    with processes(jobs) if pool is None else contextlib.nullcontext(pool) as workers:
        first = [workers.submit(_job, t) for t in tasks[:heavy]] if workers else [_job(t) for t in tasks[:heavy]]
        if then is not None:
            then(workers)
        rest = [workers.submit(_job, t) for t in tasks[heavy:]] if workers else [_job(t) for t in tasks[heavy:]]
        outcomes = [f.result() for f in first + rest] if workers else first + rest
    done: dict[tuple[str, str], Any] = {}
    for t, outcome in zip(tasks, outcomes, strict=True):
        if t[0] == "event":
            done.setdefault((t[0], t[1]), []).extend(outcome)
        else:
            done[t[0], t[1]] = outcome
    if "consecution" in kinds:
        order = {inv.name: i for i, inv in enumerate(zi.INVARIANTS)}
        results += [_result_from_json(d) for e in ev.EVENTS if ("event", e.name) in done
                    for d in sorted(done["event", e.name], key=lambda d: order[d["invariant"]])]
    if "enterprise-initiation" in kinds:
        results += [_result_from_json(d) for d in done["enterprise-initiation", ""]]
    if "enterprise-consecution" in kinds:
        for t in enterprise.TRANSITIONS:
            for d in done.get(("transition", t.name), []):
                row = _result_from_json(d)
                row.trivial = row.status == "proved" and done["trivial", row.obligation.invariant]
                results.append(row)
    if "bounded" in kinds and bmc:
        from . import bmc as bmc_module

        results += bmc_module.run(mode, pool=pool)
    return results


def summary(results: list[Result]) -> dict[str, int]:
    """proved (with work: neither trivial nor vacuous), trivial, vacuous, violated, unknown."""
    return counts(results)
