"""What a proof row claims: its kind, how many servers it covers, and whether it could have failed.

Every row of ``mqspec prove`` carries, besides its status:

* ``kind``: ``lemma`` (2.2.2 arithmetic), ``initiation`` / ``consecution`` (the per-server model,
  one server and one partition, :mod:`mqspec.proofs.z3_model`), ``enterprise-initiation`` /
  ``enterprise-consecution`` (the enterprise model, :mod:`mqspec.proofs.enterprise`), or
  ``bounded`` (every short schedule of one small enterprise run on the simulator);
* ``servers``: ``"one"``, ``"any"`` (quantified over every enterprise) or the number of servers of
  a bounded run;
* ``trivial``: the goal holds without the transition, from the obligation's assumptions alone
  (the pre-state's invariants, the event's assumptions), with every term the transition defines
  (the post-state, the messages sent) left free. A trivial row proves nothing about the handler;
  the summary does not count it as proved work;
* ``vacuous``: the obligation's assumptions are unsatisfiable, so any goal would be "proved".

:func:`havoc` is how "without the transition" is built for the per-server model, whose
post-state is a term over the pre-state: each term is replaced by a fresh constant of its sort.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

import attrs
import z3

KINDS = ("lemma", "initiation", "consecution", "enterprise-initiation", "enterprise-consecution", "bounded")

_FRESH = itertools.count()


def havoc(obj: Any, prefix: str = "havoc") -> Any:
    """A copy of ``obj`` (attrs objects, lists, tuples) with each Z3 term replaced by a fresh constant.

    Python values (a guard that is statically ``False``, a reason string, a constant number) stay:
    they are the transition's shape, known before any solving; the terms are what it computes.
    """
    if isinstance(obj, z3.ExprRef):
        return z3.Const(f"{prefix}!{next(_FRESH)}", obj.sort())
    if isinstance(obj, list):
        return [havoc(x, prefix) for x in obj]
    if isinstance(obj, tuple):
        return tuple(havoc(x, prefix) for x in obj)
    if attrs.has(type(obj)):
        return attrs.evolve(obj, **{f.name: havoc(getattr(obj, f.name), prefix)
                                    for f in attrs.fields(type(obj)) if f.init})
    return obj


def holds_from(assumptions: Iterable[Any], goal: Any, timeout_ms: int) -> bool:
    """True when Z3 proves ``goal`` from ``assumptions`` (``unknown`` is not a proof)."""
    solver = z3.Solver()
    solver.set("timeout", timeout_ms)
    solver.add(*assumptions)
    solver.add(z3.Not(goal) if isinstance(goal, z3.ExprRef) else z3.BoolVal(not goal))
    return solver.check() == z3.unsat


def satisfiable(assumptions: Iterable[Any], timeout_ms: int) -> bool:
    """False only when Z3 shows the assumptions contradictory (``unknown`` counts as satisfiable: not vacuous)."""
    solver = z3.Solver()
    solver.set("timeout", timeout_ms)
    solver.add(*assumptions)
    return solver.check() != z3.unsat


def counts(results: list[Any]) -> dict[str, int]:
    """proved (non-trivial, non-vacuous), trivial, vacuous, violated, unknown."""
    out = {"proved": 0, "trivial": 0, "vacuous": 0, "violated": 0, "unknown": 0}
    for r in results:
        if r.status == "proved" and r.vacuous:
            out["vacuous"] += 1
        elif r.status == "proved" and r.trivial:
            out["trivial"] += 1
        else:
            out[r.status] += 1
    return out


def table(results: list[Any]) -> list[str]:
    """Rows ``kind x family``: obligations proved with work (non-trivial, non-vacuous), trivial ones, the rest."""
    cells: dict[tuple[str, str], dict[str, int]] = {}
    for r in results:
        key = (r.obligation.kind, r.obligation.family)
        cell = cells.setdefault(key, {"proved": 0, "trivial": 0, "vacuous": 0, "violated": 0, "unknown": 0})
        for name, n in counts([r]).items():
            cell[name] += n
    lines = [f"{'kind':24} {'family':12} {'servers':>7} {'proved':>7} {'trivial':>7} {'vacuous':>7} "
             f"{'violated':>8} {'unknown':>7}"]
    servers = {(r.obligation.kind, r.obligation.family): r.obligation.servers for r in results}
    for (kind, family), c in sorted(cells.items(), key=lambda kv: (_kind_order(kv[0][0]), kv[0][1])):
        lines.append(f"{kind:24} {family:12} {servers[kind, family]:>7} {c['proved']:>7} {c['trivial']:>7} "
                     f"{c['vacuous']:>7} {c['violated']:>8} {c['unknown']:>7}")
    return lines


def _kind_order(kind: str) -> int:
    return KINDS.index(kind) if kind in KINDS else len(KINDS)
