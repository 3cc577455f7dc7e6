"""Benchmark the stateful replication machine: steps per second, invariant checks included.

Runs :class:`tests.stateful.machine.ReplicationMachine` (hypothesis, generation only, no
shrinking) batch after batch until ``--steps`` rule steps have run, and prints (with --json)::

    {"steps", "seconds", "steps_per_second", "violations", ...}

A *step* is one rule of the machine (a client request, a burst, a delivery, a clock advance, a
fault, a crash, a restart, a settle) followed by every invariant check; ``handler_runs`` counts
the MC-MQDSRP event handlers those steps ran (``handler_runs_per_second``), ``check_seconds``
the time spent in the invariant checkers. ``seconds`` is process CPU time (one core). A batch
that finds a violation is counted in ``violations`` (by invariant) and the next batch goes on.

    python bench/stateful.py --json [--steps 20000] [--mode clarified|literal] [--profile soak|ci]
                                    [--step-count N] [--batch 50] [--save-failures OUT.jsonl]

Each violation's inputs can be shrunk with ``python -m tests.stateful.minimize`` (one JSON list).
"""

from __future__ import annotations

import argparse
import collections
import json
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: tests.stateful

from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test
from mqspec.refimpl.effects import Mode

from tests.stateful import machine as m


def run(steps: int, mode: Mode, step_count: int, batch: int, profile: str,
        save: str | None = None) -> dict[str, object]:
    class Bench(m.ReplicationMachine):
        MODE = mode
        EXPLAIN_SECONDS = 0.0
        stats = m.Stats()

    for key, value in m.PROFILES[profile]["machine"].items():
        setattr(Bench, key, value)
    step_count = step_count or m.PROFILES[profile]["settings"]["stateful_step_count"]

    config = settings(max_examples=batch, stateful_step_count=step_count, deadline=None, phases=[Phase.generate],
                      database=None, derandomize=False, suppress_health_check=list(HealthCheck),
                      print_blob=False)
    violations: collections.Counter[str] = collections.Counter()
    batches = 0
    start = time.process_time()
    while Bench.stats.steps < steps:
        batches += 1
        try:
            run_state_machine_as_test(Bench, settings=config)
        except m.InvariantViolation as exc:
            violations[exc.name] += 1
            if save:
                with open(save, "a", encoding="utf-8") as out:
                    out.write(json.dumps({"invariant": exc.name, "step": exc.step, "problems": exc.problems[:20],
                                          "inputs": Bench.stats.last_failure}) + "\n")
    seconds = time.process_time() - start
    stats = Bench.stats
    return {
        "benchmark": "stateful",
        "mode": mode.value,
        "profile": profile,
        "stateful_step_count": step_count,
        "steps": stats.steps,
        "runs": stats.runs,
        "batches": batches,
        "seconds": round(seconds, 3),
        "steps_per_second": round(stats.steps / seconds, 1),
        "handler_runs": stats.handler_runs,
        "handler_runs_per_second": round(stats.handler_runs / seconds, 1),
        "check_seconds": round(stats.check_seconds, 3),
        "steps_per_run": round(stats.steps / max(stats.runs, 1), 1),
        "violations": sum(violations.values()),
        "violated": dict(violations),
        "python": platform.python_version(),
    }


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
    args = ap.parse_args()
    result = run(args.steps, Mode(args.mode), args.step_count, args.batch, args.profile, args.save_failures)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for key, value in result.items():
            print(f"{key:26} {value}")


if __name__ == "__main__":
    main()
