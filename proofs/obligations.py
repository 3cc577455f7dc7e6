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

import os
import time
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import attrs
import z3

from . import z3_events as ev
from . import z3_invariants as zi
from . import z3_seqnum
from .accounting import counts, havoc, holds_from, satisfiable
from .z3_model import (
    DELETION_SLOTS,
    ERRATA,
    NEIGHBOR_SLOTS,
    Deletion,
    Neighbor,
    Reading,
)
from .z3_ops import bl, not_

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

    def to_json(self) -> dict[str, Any]:
        o = self.obligation
        return {"name": o.name, "invariant": o.invariant, "handler": o.handler, "mode": o.mode, "kind": o.kind,
                "family": o.family, "servers": o.servers, "status": self.status, "trivial": self.trivial,
                "vacuous": self.vacuous, "seconds": round(self.seconds, 3), "counterexample": self.counterexample}


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
    return out


def _consecution(inv: zi.Invariant, handler: str, mode: str) -> Obligation:
    return Obligation(obligation_name(inv.name, handler), inv.name, handler, mode, "consecution", inv.family)


# --- checking -----------------------------------------------------------------------------------------


def _solve(solver: z3.Solver) -> tuple[str, z3.ModelRef | None]:
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
        status, model = _solve(solver)
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
        status, model = _solve(solver)
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


def _event_job(args: tuple[str, str, int]) -> list[dict[str, Any]]:
    event_name, mode, timeout_ms = args
    return [r.to_json() for r in check_event(event_name, mode, timeout_ms=timeout_ms)]


def _result_from_json(data: dict[str, Any]) -> Result:
    ob = Obligation(data["name"], data["invariant"], data["handler"], data["mode"], data["kind"], data["family"],
                    data["servers"])
    return Result(ob, data["status"], data["seconds"], data["counterexample"], data["trivial"], data["vacuous"])


def run(mode: str, *, jobs: int | None = None, timeout_ms: int = TIMEOUT_MS, bmc: bool = True,
        kinds: tuple[str, ...] = ("lemma", "initiation", "consecution", "bounded"),
        events: Iterable[str] | None = None) -> list[Result]:
    """Check every obligation of ``mode`` (consecution only for ``events`` when given), one process per event."""
    results: list[Result] = []
    obs = obligations(mode)
    if "lemma" in kinds:
        results += [check_lemma(o, timeout_ms) for o in obs if o.kind == "lemma"]
    if "initiation" in kinds:
        results += [check_initiation(o, timeout_ms) for o in obs if o.kind == "initiation"]
    if "consecution" in kinds:
        jobs = jobs or min(2, os.cpu_count() or 1)
        # the biggest transitions first, so that the pool ends together
        chosen = [e for e in ev.EVENTS if events is None or e.name in set(events)]
        order = sorted(chosen, key=lambda e: e.name not in ("receive_sync_reply", "handle_directory_change",
                                                           "check_pending_changes", "complete_sync0_state"))
        args = [(e.name, mode, timeout_ms) for e in order]
        if jobs > 1:
            import multiprocessing

            with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool:
                batches = list(pool.map(_event_job, args))
        else:
            batches = [_event_job(a) for a in args]
        by_event = {a[0]: b for a, b in zip(args, batches, strict=True)}
        for e in chosen:
            results += [_result_from_json(d) for d in by_event[e.name]]
    if "bounded" in kinds and bmc:
        from . import bmc as bmc_module

        results += bmc_module.run(mode)
    return results


def summary(results: list[Result]) -> dict[str, int]:
    """proved (with work: neither trivial nor vacuous), trivial, vacuous, violated, unknown."""
    return counts(results)
