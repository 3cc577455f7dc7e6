"""Benchmark the Spark pipeline against a plain in-process loop, on one and on two cores, and the driver's memory.

Runs the same exploration workload (``--runs`` generated runs, ci profile, traces kept and written
compressed) and, separately, checks one corpus (the section 4 examples in both modes, the workload's
own traces, and one large generated trace of ``--large-megabytes``, zstd-compressed), three ways in
one invocation: a plain in-process loop over the per-run / per-input functions
(:func:`mqspec.pipeline.runs.run_rows` with :func:`~mqspec.pipeline.runs.store_trace`,
:func:`mqspec.pipeline.checks.judge`), then ``mqspec pipeline explore`` / ``check`` on ``local[1]``
and on ``local[2]``. Session start-up (and Spark's first job) is timed apart; every other figure is
wall-clock seconds of the job (its output files included).

    python bench/pipeline.py --json [--runs 64] [--seed 1] [--large-megabytes 40]

prints ``scaling_local2_vs_local1`` (throughput ratio, goal >= 1.8) and
``overhead_local1_vs_inprocess`` (throughput ratio, goal >= 0.9) for each workload, the driver's
peak memory (this Python process, and the JVM pyspark started for it, which in local mode also runs
the tasks), the raw figures and the machine's load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import tempfile
import time
from pathlib import Path

from mqspec.oracle.compression import compress
from mqspec.pipeline.check import check, list_inputs
from mqspec.pipeline.checks import judge
from mqspec.pipeline.explore import explore
from mqspec.pipeline.runs import Campaign, run_rows, store_trace
from mqspec.pipeline.session import session
from mqspec.pipeline.store import Location

#: bytes of generated trace per client request (as bench/check_memory.py measured, roughly)
BYTES_PER_CHANGE = 20_000


def corpus(folder: Path, traces: Path, large_mb: float) -> list[Path]:
    """The section 4 examples recorded in both modes, one large generated trace, and the workload's traces."""
    from mqspec.oracle.generate import generate
    from mqspec.oracle.record import scenario_trace
    from mqspec.refimpl.effects import Mode
    from mqspec.vectors.scenarios import SCENARIO_DIR

    for path in sorted(SCENARIO_DIR.glob("4.*.yaml")):
        for mode in (Mode.CLARIFIED, Mode.LITERAL):
            (folder / f"{path.stem}.{mode.value}.ndjson").write_text(scenario_trace(str(path), mode=mode),
                                                                   encoding="utf-8")
    parts: list[str] = []
    generate(seed=5, sites=3, bscs=2, changes=max(1, int(large_mb * 1e6 / BYTES_PER_CHANGE)), interval=2.0,
             snapshot_every=600.0, write=parts.append)
    (folder / "large.ndjson.zst").write_bytes(compress("".join(parts).encode("utf-8"), "large.ndjson.zst"))
    return sorted(folder.iterdir()) + sorted(traces.iterdir())


def timed(function, *args, **kwargs) -> tuple[float, object]:
    start = time.monotonic()
    result = function(*args, **kwargs)
    return time.monotonic() - start, result


def jvm_peak_mb() -> float | None:
    """The peak resident set of the JVM pyspark started for this process (VmHWM), in MB."""
    from pyspark import SparkContext

    proc = getattr(SparkContext._gateway, "proc", None)
    try:
        with open(f"/proc/{proc.pid}/status", encoding="ascii") as f:
            return next(round(int(line.split()[1]) / 1024, 1) for line in f if line.startswith("VmHWM:"))
    except (AttributeError, OSError, StopIteration):
        return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--runs", type=int, default=64, help="runs of the exploration workload")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--large-megabytes", type=float, default=40.0, help="the large trace of the check corpus")
    args = ap.parse_args()
    say = [].append
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="mqspec-bench-") as tmp:
        root = Path(tmp)
        campaign = Campaign(runs=args.runs, seed=args.seed, traces=True)
        plain = Location(root / "inprocess")
        explore_s: dict[str, float] = {}
        explore_s["inprocess"], _ = timed(lambda: [store_trace(r, campaign, plain)
                                                   for r in run_rows(range(args.runs), campaign)])
        (root / "corpus").mkdir()
        inputs = corpus(root / "corpus", root / "inprocess" / "traces", args.large_megabytes)
        check_s: dict[str, float] = {"inprocess": timed(lambda: [judge(str(p)) for p in inputs])[0]}
        startup: dict[str, float] = {}
        for master, cores in (("local[1]", 1), ("local[2]", 2)):
            startup[master], spark = timed(session, master)
            spark.range(4).count()  # the JVM's first job (class loading) is start-up, not workload
            folder = master.replace("[", "").replace("]", "")  # Spark reads paths as glob patterns
            explore_s[master], _ = timed(explore, spark, campaign, Location(root / f"explore-{folder}"),
                                         master=master, wave=args.runs, progress=say)
            listing = list_inputs(spark, [p.as_uri() for p in inputs])
            check_s[master], _ = timed(check, spark, listing, Location(root / f"check-{folder}"), master=master,
                                       parallelism=cores)
            spark.stop()
        sizes = {p.name: p.stat().st_size for p in inputs}

    def rates(seconds: dict[str, float], units: int) -> dict[str, float]:
        return {k: round(units / v, 3) for k, v in seconds.items()}

    explore_rate, check_rate = rates(explore_s, args.runs), rates(check_s, len(inputs))
    result = {
        "benchmark": "pipeline",
        "explore": {"runs": args.runs, "seconds": {k: round(v, 2) for k, v in explore_s.items()},
                    "runs_per_second": explore_rate,
                    "scaling_local2_vs_local1": round(explore_rate["local[2]"] / explore_rate["local[1]"], 3),
                    "overhead_local1_vs_inprocess": round(explore_rate["local[1]"] / explore_rate["inprocess"], 3)},
        "check": {"inputs": len(inputs), "bytes": sum(sizes.values()), "largest_bytes": sizes.get("large.ndjson.zst"),
                  "seconds": {k: round(v, 2) for k, v in check_s.items()}, "inputs_per_second": check_rate,
                  "scaling_local2_vs_local1": round(check_rate["local[2]"] / check_rate["local[1]"], 3),
                  "overhead_local1_vs_inprocess": round(check_rate["local[1]"] / check_rate["inprocess"], 3)},
        "driver_peak_rss_mb": {"python": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                               "jvm": jvm_peak_mb()},
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
