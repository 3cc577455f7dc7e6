"""Benchmark the stateful replication machine: steps per second, invariant checks included.

Runs :class:`mqspec.proofs.explore.machine.ReplicationMachine` (hypothesis, generation only, no
shrinking) batch after batch until ``--steps`` rule steps have run, and prints (with --json)::

    {"steps", "seconds", "steps_per_second", "violations", ...}

A *step* is one rule of the machine (a client request, a burst, a delivery, a clock advance, a
fault, a crash, a restart, a settle) followed by every invariant check; ``handler_runs`` counts
the MC-MQDSRP event handlers those steps ran (``handler_runs_per_second``), ``check_seconds``
the (wall) time spent in the invariant checkers. ``seconds`` is process CPU time (one core). A batch
that finds a violation is counted in ``violations`` (by invariant) and the next batch goes on.

    python bench/stateful.py --json [--steps 20000] [--mode clarified|literal] [--profile soak|ci]
                                    [--step-count N] [--batch 50] [--save-failures OUT.jsonl]
                                    [--seed 0] [--workers 1] [--branches] [--progress OUT.jsonl]
                                    [--refine | --no-refine]

``--refine`` checks every handler run against the model (:mod:`mqspec.proofs.refinement`: the
invariant ``handlers_refine_model``, a departure counted in ``violations``); ``refine`` in the report
says whether it was on, and ``refinement_checks`` counts the handler runs checked (0 with it off).
Compare ``steps_per_second`` of two runs, one each way, for its cost.

``--branches`` also reports which MC-MQDSRP handler branches the runs reached
(:mod:`mqspec.proofs.explore.branches`: ``clauses_reached`` of ``clauses``, ``branches_reached`` of
``branches``) and, against the branches the handler vectors of the same mode reach,
``vector_branches_missed`` and each one ``missed``, apart from those no conforming enterprise can reach
(``vector_branches_unreachable``, each ``unreachable`` with its reason:
:data:`mqspec.proofs.explore.branches.UNREACHABLE`); line tracing makes the run a few times slower.

The soak (issue 5: at least 1,000,000 steps in clarified mode without a violation) is

    python bench/stateful.py --json --profile soak --steps 1000000 --workers 2

``--seed`` fixes hypothesis's seed (batch *i* of worker *w* uses seed*1000003 + w*10007 + i), so a
run is repeatable; ``--workers`` splits the steps over that many processes (one per core) and
sums their counts; ``steps_per_second`` stays per core (steps over the workers' total CPU time).
``--progress`` appends one JSON line per finished batch of each worker (``worker``, ``batches``,
``steps``, ``runs``, ``seconds`` of CPU, ``violations``, ``at``), so a long soak shows how far it is.

Each violation's inputs can be shrunk with ``python -m mqspec.proofs.explore.minimize`` (one JSON list).
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import functools
import json
import multiprocessing
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import hypothesis.core
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test
from mqspec.refimpl.effects import Mode
from mqspec import memos
from mqspec.proofs.explore import branches
from mqspec.proofs.explore import machine as m


#: the memos a run may find full of what earlier runs computed: the built enterprise every run starts
#: from a copy of (the copy is timed; the build's handler runs are counted once, in the run that built
#: it) and the machine classes; every other memo is emptied before each run (bench/README.md)
KEPT_MEMOS = ("mqspec.proofs.explore.machine._BUILT", "mqspec.proofs.explore.run._MACHINES")
#: the cost lines that are no rule: the invariant checkers (after every input), the settle and checks
#: that end each run, and the rest (hypothesis drawing the steps, the preconditions, the step loop)
CHECKS, FINAL, REST = "invariant checks", "final settle (teardown)", "hypothesis and the rest"


class RuleCosts:
    """CPU seconds, calls and handler runs of each rule of a machine, the invariant checks apart."""

    def __init__(self) -> None:
        self.rules: dict[str, list[float]] = {}  # name -> [calls, CPU seconds, handler runs]

    def add(self, name: str, seconds: float, handler_runs: int) -> None:
        line = self.rules.setdefault(name, [0, 0.0, 0])
        line[0] += 1
        line[1] += seconds
        line[2] += handler_runs


def _performed(machine: m.ReplicationMachine) -> int:
    """The handler runs a machine's run performed so far (those of a copied build left out)."""
    driver = machine.driver
    return 0 if driver is None else driver.ghost.handler_runs - machine.copied_handler_runs  # type: ignore[union-attr]


def _timed(function: Callable[..., Any], costs: RuleCosts, first: bool) -> Callable[..., Any]:
    """``function`` (a rule), adding each call's CPU seconds (less its invariant checks) and handler
    runs to ``costs``; an initialize rule (``first``) empties the memos first (KEPT_MEMOS aside)."""
    name = "build (initialize)" if first else function.__name__

    @functools.wraps(function)
    def rule(machine: m.ReplicationMachine, **data: Any) -> Any:
        if first:
            memos.clear_all(keep=KEPT_MEMOS)
        stats = type(machine).stats
        runs, checks, start = _performed(machine), stats.check_seconds, time.process_time()
        try:
            return function(machine, **data)
        finally:
            spent = time.process_time() - start - (stats.check_seconds - checks)
            costs.add(name, spent, _performed(machine) - runs)
    return rule


def timed_machine(base: type[m.ReplicationMachine], costs: RuleCosts) -> None:
    """Make ``base``'s rules (its own copies of them) and its teardown add their costs to ``costs``."""
    state = base.setup_state()
    base._setup_state_per_class[base] = dataclasses.replace(
        state,
        rules=[dataclasses.replace(r, function=_timed(r.function, costs, False)) for r in state.rules],
        initializers=[dataclasses.replace(r, function=_timed(r.function, costs, True)) for r in state.initializers],
    )
    teardown = base.teardown

    def timed_teardown(machine: m.ReplicationMachine) -> None:
        stats = type(machine).stats
        runs, checks, start = _performed(machine), stats.check_seconds, time.process_time()
        try:
            teardown(machine)
        finally:
            costs.add(FINAL, time.process_time() - start - (stats.check_seconds - checks),
                      _performed(machine) - runs)
    base.teardown = timed_teardown  # type: ignore[method-assign]


def cost_shares(rules: dict[str, list[float]], check_seconds: float, seconds: float) -> dict[str, dict[str, float]]:
    """Each rule's calls, CPU seconds, share of the run's CPU time and handler runs, most costly
    first; then the invariant checks and the rest (what no rule and no check spent)."""
    lines = {name: {"calls": int(calls), "seconds": round(spent, 3), "share": round(spent / seconds, 4),
                    "handler_runs": int(runs)}
             for name, (calls, spent, runs) in sorted(rules.items(), key=lambda item: -item[1][1])}
    lines[CHECKS] = {"seconds": round(check_seconds, 3), "share": round(check_seconds / seconds, 4)}
    rest = seconds - check_seconds - sum(spent for _calls, spent, _runs in rules.values())
    lines[REST] = {"seconds": round(rest, 3), "share": round(rest / seconds, 4)}
    return lines


def run(steps: int, mode: Mode, step_count: int, batch: int, profile: str,
        save: str | None = None, seed: int = 0, worker: int = 0, trace_branches: bool = False,
        progress: str | None = None, refine: bool = False) -> dict[str, object]:
    class Bench(m.ReplicationMachine):
        MODE = mode
        EXPLAIN_SECONDS = 0.0
        REFINE = refine
        stats = m.Stats()

    for key, value in m.PROFILES[profile]["machine"].items():
        setattr(Bench, key, value)
    costs = RuleCosts()
    timed_machine(Bench, costs)
    step_count = step_count or m.PROFILES[profile]["settings"]["stateful_step_count"]

    config = settings(max_examples=batch, stateful_step_count=step_count, deadline=None, phases=[Phase.generate],
                      database=None, derandomize=False, suppress_health_check=list(HealthCheck),
                      print_blob=False)
    violations: collections.Counter[str] = collections.Counter()
    batches = 0
    reach = branches.Reach()
    if trace_branches:
        reach.__enter__()
    start = time.process_time()
    while Bench.stats.steps < steps:
        # a seed per batch: derandomize would repeat one batch, an unseeded run could not be repeated
        hypothesis.core.global_force_seed = seed * 1_000_003 + worker * 10_007 + batches
        batches += 1
        try:
            run_state_machine_as_test(Bench, settings=config)
        except m.InvariantViolation as exc:
            violations[exc.name] += 1
            if save:
                with open(save, "a", encoding="utf-8") as out:
                    out.write(json.dumps({"invariant": exc.name, "step": exc.step, "problems": exc.problems[:20],
                                          "inputs": Bench.stats.last_failure}) + "\n")
        if progress:
            with open(progress, "a", encoding="utf-8") as out:
                out.write(json.dumps({"worker": worker, "batches": batches, "steps": Bench.stats.steps,
                                      "runs": Bench.stats.runs, "refinement_checks": Bench.stats.refinement_checks,
                                      "seconds": round(time.process_time() - start, 3),
                                      "violations": sum(violations.values()),
                                      "at": time.strftime("%H:%M:%S", time.gmtime())}) + "\n")
    seconds = time.process_time() - start
    if trace_branches:
        reach.__exit__()
    stats = Bench.stats
    return {
        "reached_lines": sorted(reach.lines),
        "rule_costs": {name: list(line) for name, line in costs.rules.items()},
        "benchmark": "stateful",
        "mode": mode.value,
        "profile": profile,
        "refine": refine,
        "stateful_step_count": step_count,
        "steps": stats.steps,
        "runs": stats.runs,
        "batches": batches,
        "seconds": round(seconds, 3),
        "steps_per_second": round(stats.steps / seconds, 1),
        "handler_runs": stats.handler_runs,
        "handler_runs_per_second": round(stats.handler_runs / seconds, 1),
        "refinement_checks": stats.refinement_checks,
        "invariant_checks": stats.invariant_checks,
        "invariant_checks_per_second": round(stats.invariant_checks / seconds, 1),
        "check_seconds": round(stats.check_seconds, 3),
        "steps_per_run": round(stats.steps / max(stats.runs, 1), 1),
        "violations": sum(violations.values()),
        "violated": dict(violations),
        "seed": seed,
        "python": platform.python_version(),
    }


#: counts that add up over workers (the rest are recomputed from them or are the same in every worker)
SUMMED = ("steps", "runs", "batches", "seconds", "handler_runs", "refinement_checks", "invariant_checks",
          "check_seconds", "violations")


def gather_failures(save: str, workers: int) -> None:
    """Append each worker's failure lines (``OUT.jsonl.<worker>``, written apart so that no two processes
    append to one file) to ``save``, in worker order, and remove the worker files."""
    with open(save, "a", encoding="utf-8") as out:
        for w in range(workers):
            part = Path(f"{save}.{w}")
            if part.exists():
                out.write(part.read_text(encoding="utf-8"))
                part.unlink()


def run_workers(workers: int, steps: int, mode: Mode, step_count: int, batch: int, profile: str,
                save: str | None, seed: int, trace_branches: bool = False,
                progress: str | None = None, refine: bool = False) -> dict[str, object]:
    """Run ``steps`` split over ``workers`` processes and combine their reports (counts summed, rates per core)."""
    if workers == 1:
        return run(steps, mode, step_count, batch, profile, save, seed, 0, trace_branches, progress, refine)
    share = -(-steps // workers)
    jobs = [(share, mode, step_count, batch, profile, f"{save}.{w}" if save else None, seed, w, trace_branches,
             progress, refine) for w in range(workers)]
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        parts = pool.starmap(run, jobs)
    if save:
        gather_failures(save, workers)
    total: dict[str, object] = dict(parts[0])
    for key in SUMMED:
        total[key] = round(sum(p[key] for p in parts), 3)  # type: ignore[misc]
    rule_costs: dict[str, list[float]] = {}
    for p in parts:
        for name, line in p["rule_costs"].items():  # type: ignore[attr-defined]
            rule_costs[name] = [a + b for a, b in zip(rule_costs.get(name, [0, 0.0, 0]), line)]
    total["rule_costs"] = rule_costs
    violated: collections.Counter[str] = collections.Counter()
    for p in parts:
        violated.update(p["violated"])  # type: ignore[arg-type]
    seconds = float(total["seconds"])  # type: ignore[arg-type]
    total.update(
        violated=dict(violated), workers=workers,
        reached_lines=sorted({tuple(line) for p in parts for line in p["reached_lines"]}),  # type: ignore[attr-defined]
        steps_per_second=round(int(total["steps"]) / seconds, 1),  # type: ignore[call-overload]
        handler_runs_per_second=round(int(total["handler_runs"]) / seconds, 1),  # type: ignore[call-overload]
        invariant_checks_per_second=round(int(total["invariant_checks"]) / seconds, 1),  # type: ignore[call-overload]
        steps_per_run=round(int(total["steps"]) / max(int(total["runs"]), 1), 1),  # type: ignore[call-overload]
    )
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--steps", type=int, default=20_000, help="rule steps to run (at least)")
    ap.add_argument("--mode", choices=[mode.value for mode in Mode], default="clarified")
    ap.add_argument("--profile", choices=sorted(m.PROFILES), default="soak", help="rule frequencies and run length")
    ap.add_argument("--step-count", type=int, default=0, help="hypothesis stateful_step_count (default: the profile's)")
    ap.add_argument("--batch", type=int, default=50, help="runs per hypothesis call")
    ap.add_argument("--save-failures", metavar="OUT.jsonl",
                    help="append each violation (invariant, problems, the run's inputs) as a JSON line")
    ap.add_argument("--seed", type=int, default=0, help="hypothesis seed (each batch and worker derives its own)")
    ap.add_argument("--workers", type=int, default=1, help="processes to split the steps over (one per core)")
    ap.add_argument("--progress", metavar="OUT.jsonl",
                    help="append a JSON line after each batch of each worker (its steps, runs, CPU seconds, violations so far)")
    ap.add_argument("--branches", action="store_true",
                    help="report the handler branches reached, and those the handler vectors reach that the runs missed")
    ap.add_argument("--refine", action=argparse.BooleanOptionalAction, default=m.ReplicationMachine.REFINE,
                    help="check every handler run against the model (proofs/refinement; default: MQSPEC_REFINE=1)")
    args = ap.parse_args()
    if args.workers < 1 or args.steps < 1 or args.batch < 1:
        ap.error("--workers, --steps and --batch must be at least 1")
    for path in filter(None, (args.save_failures, args.progress)):
        try:  # now, not when the first batch ends (or, for a violation, hours into a soak)
            open(path, "a", encoding="utf-8").close()
        except OSError as exc:
            ap.error(f"{path}: {exc.strerror}")
    wall = time.monotonic()
    result = run_workers(args.workers, args.steps, Mode(args.mode), args.step_count, args.batch, args.profile,
                         args.save_failures, args.seed, args.branches, args.progress, args.refine)
    lines = {tuple(line) for line in result.pop("reached_lines")}  # type: ignore[union-attr]
    result["cost_shares"] = cost_shares(result.pop("rule_costs"), float(result["check_seconds"]),  # type: ignore[arg-type]
                                        float(result["seconds"]))  # type: ignore[arg-type]
    if args.branches:
        reached = {b for b in branches.handler_branches() if (b.module, b.line) in lines}
        result["branch_coverage"] = branches.summary(reached, branches.vector_reach(Mode(args.mode)),
                                                     args.mode)
    result["wall_seconds"] = round(time.monotonic() - wall, 1)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for key, value in result.items():
            print(f"{key:26} {value}")


if __name__ == "__main__":
    main()
