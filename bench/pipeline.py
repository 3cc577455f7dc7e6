"""Benchmark the Spark pipeline against a plain in-process loop, on one and on two cores.

Runs the same exploration workload (``--runs`` generated runs, ci profile) and, separately, checks
the same corpus of traces (the section 4 examples in both modes and the workload's own traces),
three ways in one invocation: a plain in-process loop over the per-run / per-input functions
(:func:`mqspec.pipeline.runs.run_rows`, :func:`mqspec.pipeline.checks.check_rows`), then
``mqspec pipeline explore`` / ``check`` on ``local[1]`` and on ``local[2]``. Session start-up is
timed apart; every other figure is wall-clock seconds of the job (its Parquet output included).

    python bench/pipeline.py --json [--runs 64] [--seed 1]

prints ``scaling_local2_vs_local1`` (throughput ratio, goal >= 1.8) and
``overhead_local1_vs_inprocess`` (throughput ratio, goal >= 0.9) for each workload, plus the
raw figures and the machine's load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

from mqspec.pipeline.check import check
from mqspec.pipeline.checks import check_rows, find_inputs
from mqspec.pipeline.explore import explore
from mqspec.pipeline.runs import Campaign, run_rows
from mqspec.pipeline.session import session


def corpus(folder: Path, traces: Path) -> list[str]:
    """The section 4 examples recorded in both modes, plus the exploration workload's traces."""
    from mqspec.oracle.record import scenario_trace
    from mqspec.refimpl.effects import Mode

    from mqspec.vectors.scenarios import SCENARIO_DIR

    for path in sorted(SCENARIO_DIR.glob("4.*.yaml")):
        for mode in (Mode.CLARIFIED, Mode.LITERAL):
            (folder / f"{path.stem}.{mode.value}.ndjson").write_text(scenario_trace(str(path), mode=mode),
                                                                   encoding="utf-8")
    return find_inputs([folder, traces])


def timed(function, *args, **kwargs) -> tuple[float, object]:
    start = time.monotonic()
    result = function(*args, **kwargs)
    return time.monotonic() - start, result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--runs", type=int, default=64, help="runs of the exploration workload")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    say = [].append
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="mqspec-bench-") as tmp:
        root = Path(tmp)
        campaign = Campaign(runs=args.runs, seed=args.seed, traces=True)
        explore_s: dict[str, float] = {}
        explore_s["inprocess"], _ = timed(lambda: list(run_rows(range(args.runs), campaign)))
        check_s: dict[str, float] = {}
        startup: dict[str, float] = {}
        inputs: list[str] = []
        for master in ("local[1]", "local[2]"):
            startup[master], spark = timed(session, master)
            spark.range(4).count()  # the JVM's first job (class loading) is start-up, not workload
            key = master
            folder = master.replace("[", "").replace("]", "")  # Spark reads paths as glob patterns
            explore_s[key], _ = timed(explore, spark, campaign, root / f"explore-{folder}", master=master,
                                      wave=args.runs, progress=say)
            if not inputs:
                (root / "corpus").mkdir()
                inputs = corpus(root / "corpus", root / f"explore-{folder}" / "traces")
                check_s["inprocess"], _ = timed(lambda: [list(check_rows(p)) for p in inputs])
            check_s[key], _ = timed(check, spark, inputs, root / f"check-{folder}", master=master)
            spark.stop()

    def rates(seconds: dict[str, float], units: int) -> dict[str, float]:
        return {k: round(units / v, 3) for k, v in seconds.items()}

    explore_rate, check_rate = rates(explore_s, args.runs), rates(check_s, len(inputs))
    result = {
        "benchmark": "pipeline",
        "explore": {"runs": args.runs, "seconds": {k: round(v, 2) for k, v in explore_s.items()},
                    "runs_per_second": explore_rate,
                    "scaling_local2_vs_local1": round(explore_rate["local[2]"] / explore_rate["local[1]"], 3),
                    "overhead_local1_vs_inprocess": round(explore_rate["local[1]"] / explore_rate["inprocess"], 3)},
        "check": {"inputs": len(inputs), "seconds": {k: round(v, 2) for k, v in check_s.items()},
                  "inputs_per_second": check_rate,
                  "scaling_local2_vs_local1": round(check_rate["local[2]"] / check_rate["local[1]"], 3),
                  "overhead_local1_vs_inprocess": round(check_rate["local[1]"] / check_rate["inprocess"], 3)},
        "session_startup_seconds": {k: round(v, 2) for k, v in startup.items()},
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "cpus": os.cpu_count(), "python": platform.python_version(),
    }
    result["scaling_local2_vs_local1"] = result["explore"]["scaling_local2_vs_local1"]
    result["overhead_local1_vs_inprocess"] = result["explore"]["overhead_local1_vs_inprocess"]
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for key, value in result.items():
            print(f"{key:32} {value}")


if __name__ == "__main__":
    main()
