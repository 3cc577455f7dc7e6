"""The enterprise obligations: initiation of every invariant, and every (invariant, transition) pair, each in its own solver.

A consecution obligation asserts the axioms, every state invariant of the pre-state (the
inductive invariant), the transition (its guard, its named assumptions and the definition of
every symbol it changes) and the negation of the invariant in the post-state (or of the step
invariant over the pair). ``unsat`` is ``proved`` for every enterprise, whatever its number of
servers (``servers: "any"``); ``sat`` is ``violated``, with the model as a counterexample of
finitely many servers; anything else is ``unknown``, never proved. As for the per-server rows,
``trivial`` says the goal holds without the transition (its post-state left free) and
``vacuous`` that the assumptions (axioms, invariants, transition) are contradictory.

Initiation: every state invariant holds in a new enterprise (:func:`initial`).
"""

from __future__ import annotations

import functools
import time
from typing import Any

import z3

from ..obligations import Obligation, Result, obligation_name, verdict
from ..z3_reading import Reading
from . import invariants as ei
from .render import render_model
from .transitions import BY_TRANSITION, TRANSITIONS, Transition, params_of, relation
from .transitions import reading as mode_reading
from .vocabulary import MUTABLE, N, O, P, R, S, State, axioms, owner, var



def initial(st: State) -> list[Any]:
    """A new enterprise (3.1.3.1): running servers each hold the enterprise partition (its AuthorityName the PEC)
    and perhaps their own site's partition, everything at MIN and NORMAL, nothing deleted, nothing in flight; at
    most one running owner per partition (the enterprise's configuration)."""
    s, t, n = var("s", S), var("t", S), var("n", S)
    p, o, r = var("p", P), var("o", O), var("r", R)
    x, y, k = var("x", N), var("y", N), var("k", N)
    a = z3.ForAll
    return [
        a([s], st.alive(s) == st.used(s)), st.alive(st.pec),
        a([s, t, p], z3.Implies(z3.And(st.alive(s), st.alive(t), owner(st, s, p), owner(st, t, p)), s == t)),
        a([s], z3.Implies(st.alive(s), st.has(s, st.ent))),
        a([s, p], z3.Implies(st.has(s, p), z3.And(st.alive(s), z3.Or(p == st.ent, owner(st, s, p))))),
        a([s, p, t], st.authname(s, p, t) == z3.And(st.has(s, p), t == z3.If(p == st.ent, st.pec, s))),
        a([s, p], z3.And(z3.Not(st.twice(s, p)), st.last(s, p) == st.zero, st.purged(s, p) == st.zero, st.allowed(s, p) == st.zero,
                         st.window(s, p) == st.top, z3.Not(st.sync0(s, p)))),
        a([s, o], z3.And(z3.Not(st.held(s, o)), z3.Not(st.tombd(s, o)))),
        a([s, n, p], z3.And(st.acked(s, n, p) == st.zero, z3.Implies(st.pscnb(s, n), st.alive(s)))),
        a([p, x, y], z3.Not(st.prop(p, x, y))),
        a([s, p, x, y], z3.And(z3.Not(st.hdr_i(s, p, x, y)), z3.Not(st.hdr_b(s, p, x, y)))),
        a([s, p, x, y, k], z3.And(z3.Not(st.sreq(s, p, x, y, k)), z3.Not(st.sreq0(s, p, x, y, k)))),
        a([s, t, p, x], z3.And(z3.Not(st.ap(s, t, p, x)), z3.Not(st.ack(s, t, p, x)))),
        a([r], z3.Not(st.rsent(r))),
        a([p], z3.And(st.alast(p) == st.zero, st.apurged(p) == st.zero)),
        a([o, x], z3.And(z3.Not(st.hist(o, x)), z3.Not(st.hdel(o, x)))),
        a([s, t], z3.Not(st.handed(s, t))),
    ]


#: the solver's budget for a proof, in Z3's deterministic resource units (a proof takes under 10**6; a wall-clock
#: timeout would make the verdict depend on the machine's load)
PROOF_RLIMIT = 1_000_000
#: the second attempt's budget, after the bounded searches found no counterexample
LONG_PROOF_RLIMIT = 40_000_000
#: the sizes of the bounded searches (Server, Partition, Object, SeqNumber, SyncReply), smallest first, each with
#: its budget, when the proof neither closes nor fails
SEARCHES = (((2, 2, 1, 4, 1), 10_000_000), ((3, 3, 2, 5, 1), 40_000_000), ((4, 3, 2, 7, 2), 40_000_000))


def _solver(rlimit: int) -> z3.Solver:
    solver = z3.Solver()
    solver.set("rlimit", rlimit)
    return solver


def _bounded(sizes: tuple[int, ...]) -> list[Any]:
    """At most ``sizes`` elements of each sort (a small universe: model search is then finite)."""
    out = []
    for sort, k in zip((S, P, O, N, R), sizes, strict=True):
        elems = [z3.Const(f"{sort}!bound{i}", sort) for i in range(k)]
        x = z3.Const(f"{sort}!any", sort)
        out.append(z3.ForAll([x], z3.Or(*(x == e for e in elems))))
    return out


def solve(hyps: list[Any], negated_goal: Any, rlimit: int = PROOF_RLIMIT) -> tuple[str, z3.ModelRef | None]:
    """``proved`` (unsat: for every enterprise), ``violated`` with a model, or ``unknown``.

    The proof comes first; when its budget runs out, small universes are searched for a counterexample by
    model-based quantifier instantiation alone (which finds finite models where E-matching goes round in circles).
    A bounded search that finds none proves nothing: the verdict stays ``unknown``.
    """
    solver = _solver(rlimit)
    solver.add(*hyps, negated_goal)
    status, model = verdict(solver)
    if status != "unknown":
        return status, model
    for sizes, rlimit in SEARCHES:
        bounded = _solver(rlimit)
        bounded.set("smt.ematching", False)
        bounded.add(*hyps, negated_goal, *_bounded(sizes))
        if bounded.check() == z3.sat:
            return "violated", bounded.model()
    solver = _solver(LONG_PROOF_RLIMIT)
    solver.add(*hyps, negated_goal)
    return verdict(solver)


def obligation(inv: ei.Invariant, handler: str, mode: str) -> Obligation:
    kind = "enterprise-initiation" if handler == "initialization" else "enterprise-consecution"
    return Obligation(obligation_name(f"enterprise-{inv.name}", handler), inv.name, handler, mode, kind,
                      inv.family, "any")


def obligations(mode: str) -> list[Obligation]:
    out = [obligation(inv, "initialization", mode) for inv in ei.STATE_INVARIANTS]
    out += [obligation(inv, tr.name, mode) for tr in TRANSITIONS for inv in ei.INVARIANTS]
    return out


def check_initiation(inv: ei.Invariant, mode: str) -> Result:
    ob = obligation(inv, "initialization", mode)
    started = time.perf_counter()
    st = State("")
    base = axioms(st) + initial(st)
    status, model = solve(base, z3.Not(inv.formula(st)))
    cex = None if model is None else {"trace": render_model(model, ob, st, None, None, {}),
                                      "errata": []}
    free = State("~")  # trivial: the invariant holds of any state, not only of a new enterprise
    trivial = status == "proved" and solve(axioms(free), z3.Not(inv.formula(free)))[0] == "proved"
    vacuous = status == "proved" and contradictory(base)
    return Result(ob, status, time.perf_counter() - started, cex, trivial, vacuous)


def transition_formulas(tr: Transition, mode: str, reading: Reading | None = None
                        ) -> tuple[State, State, dict[str, Any], Any, list[Any]]:
    """Pre-state, post-state, arguments, the step, and the hypotheses of every consecution obligation of ``tr``."""
    reading = reading or mode_reading(mode)
    pre = State("")
    params = params_of(tr)
    post, step, trans = relation(tr, pre, params, reading)
    hyps = axioms(pre) + ei.inductive_invariant(pre) + list(step.assumptions.values()) + trans
    return pre, post, params, step, hyps


def check_transition(name: str, mode: str, invariants: list[str] | None = None, *,
                     with_trivial: bool = True) -> list[Result]:
    """Every consecution obligation of one transition in one mode, each in its own solver (``with_trivial``: also
    whether each holds without the transition, else the caller fills ``trivial`` in)."""
    tr = BY_TRANSITION[name]
    pre, post, params, step, hyps = transition_formulas(tr, mode)
    vacuous = contradictory(hyps)
    results = []
    for inv in ei.INVARIANTS:
        if invariants is not None and inv.name not in invariants:
            continue
        ob = obligation(inv, tr.name, mode)
        started = time.perf_counter()
        goal = inv.formula(post) if inv.kind == "state" else inv.formula(pre, post)
        status, model = solve(hyps, z3.Not(goal))
        cex = None
        if model is not None:
            # the entries whose literal reading alone breaks it (a verdict each: the same in every run, which the
            # model's guards are not), else those whose literal branch the model takes
            errata = errata_alone(tr, inv, sorted({e for _g, e in step.literal if _g is not False}))
            errata = errata or sorted({e for g, e in step.literal if z3.is_true(model.eval(g, model_completion=True))})
            cex = {"errata": errata, "trace": render_model(model, ob, pre, post, tr, params, errata)}
        trivial = with_trivial and status == "proved" and holds_without_transition(inv.name)
        results.append(Result(ob, status, time.perf_counter() - started, cex, trivial, vacuous))
    return results


def errata_alone(tr: Transition, inv: ei.Invariant, candidates: list[str]) -> list[str]:
    """The register entries among ``candidates`` whose literal reading alone (every other one clarified) violates
    the invariant in the transition."""
    found = []
    for erratum in candidates:
        pre, post, _params, _step, hyps = transition_formulas(tr, "literal", Reading(frozenset({erratum})))
        goal = inv.formula(post) if inv.kind == "state" else inv.formula(pre, post)
        if solve(hyps, z3.Not(goal))[0] == "violated":
            found.append(erratum)
    return found


@functools.lru_cache(maxsize=None)
def holds_without_transition(name: str) -> bool:
    """The invariant holds in a post-state left free, from the axioms and the pre-state's invariants alone.

    The post-state of "no transition" is the same for every transition and both readings, so this is one check per
    invariant. A new enterprise (every invariant holds there) as the pre-state usually shows at once that it does not.
    """
    inv = ei.BY_NAME[name]
    pre, free = State(""), State("~")
    goal = inv.formula(free) if inv.kind == "state" else inv.formula(pre, free)
    base = axioms(pre) + ei.inductive_invariant(pre)
    if find_model(base + initial(pre) + [z3.Not(goal)])[0] == "sat":
        return False
    return solve(base, z3.Not(goal))[0] == "proved"


def find_model(formulas: list[Any]) -> tuple[str, z3.ModelRef | None]:
    """``sat`` with a model, ``unsat`` or ``unknown``: for queries expected satisfiable (a branch is reachable, the
    assumptions are consistent), the small universes are searched first, then the solver tries to refute them."""
    for sizes, rlimit in SEARCHES:
        bounded = _solver(rlimit)
        bounded.set("smt.ematching", False)
        bounded.add(*formulas, *_bounded(sizes))
        if bounded.check() == z3.sat:
            return "sat", bounded.model()
    solver = _solver(PROOF_RLIMIT)
    solver.add(*formulas)
    answer = solver.check()
    return ("unsat", None) if answer == z3.unsat else ("sat", solver.model()) if answer == z3.sat else ("unknown", None)


def contradictory(formulas: list[Any]) -> bool:
    """The formulas have no model (``unknown`` is not shown contradictory; the branch reachability test shows each
    transition's branches satisfiable)."""
    return find_model(formulas)[0] == "unsat"


def branch_reachability(name: str, mode: str) -> dict[str, str]:
    """Each branch of a transition: ``reachable`` when some state satisfying every invariant takes it, ``unreachable``
    when none does, ``unknown`` when the solver gives up."""
    tr = BY_TRANSITION[name]
    pre, post, params, step, hyps = transition_formulas(tr, mode)
    out = {}
    for branch, cond in step.branches.items():
        status, _ = find_model(hyps + [cond])
        out[branch] = {"sat": "reachable", "unsat": "unreachable"}.get(status, "unknown")
    return out


def run_initiation(mode: str) -> list[Result]:
    return [check_initiation(inv, mode) for inv in ei.STATE_INVARIANTS]


def run(mode: str, transitions: list[str] | None = None) -> list[Result]:
    """Every enterprise obligation of ``mode`` in this process (``mqspec prove`` spreads them over a pool)."""
    results = run_initiation(mode)
    for tr in TRANSITIONS:
        if transitions is None or tr.name in transitions:
            results += check_transition(tr.name, mode)
    return results


_ = MUTABLE
