"""Benchmark the memory of ``mqspec check`` and of trace recording on a trace of any size.

Writes (streaming) a generated trace of at least ``--megabytes`` MB to ``--trace`` (default in the
temporary directory; reused when it is already large enough), then runs ``mqspec check`` on it in a
child process and reports the child's peak resident set size, its CPU seconds and events per
CPU second. When it writes the trace it runs the recorder in a child too and reports the same for
recording (each child's own peak, from ``os.wait4``). The limit is 300 MB whatever the trace's size (issue 12); the figures depend on the
machine's load, so note ``uptime`` beside them.

    python bench/check_memory.py --json [--megabytes 110] [--trace PATH] [--coverage]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LIMIT_MB = 300
#: bytes of generated trace per client request (3 sites, 2 BSCs each; measured, roughly)
BYTES_PER_CHANGE = 20_000

_GENERATE = """
import sys
from mqspec.oracle.generate import generate
with open(sys.argv[1], "w", encoding="utf-8") as f:
    generate(seed=5, sites=3, bscs=2, changes=int(sys.argv[2]), interval=2.0, snapshot_every=600.0, write=f.write)
"""


def child(args: list[str]) -> dict[str, float]:
    """Run a child process; its own peak RSS (MB), CPU and wall seconds, and exit status."""
    t0 = time.monotonic()
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    stderr = proc.stderr.read()  # type: ignore[union-attr]
    proc.stderr.close()  # type: ignore[union-attr]
    _, status, usage = os.wait4(proc.pid, 0)  # this child's resources alone, not the largest child so far
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - t0
    if proc.returncode not in (0, 3) and "mqspec" in " ".join(args[:3]):
        sys.exit(f"bench/check_memory.py: {' '.join(args)} exited {proc.returncode}: {stderr.strip()}")
    return {"peak_rss_mb": round(usage.ru_maxrss / 1024, 1), "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 2),
            "wall_seconds": round(wall, 2), "exit": proc.returncode}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--megabytes", type=float, default=110.0)
    ap.add_argument("--trace", default=str(Path(tempfile.gettempdir()) / "mqspec-check-memory.ndjson"))
    ap.add_argument("--coverage", action="store_true", help="work out clause coverage too (slower)")
    args = ap.parse_args()
    path = Path(args.trace)
    result: dict[str, object] = {"benchmark": "check_memory", "trace": str(path), "limit_mb": LIMIT_MB,
                                 "load_average": list(os.getloadavg())}
    if not path.exists() or path.stat().st_size < args.megabytes * 1e6:
        changes = int(args.megabytes * 1e6 / BYTES_PER_CHANGE) + 1
        result["record"] = {**child([sys.executable, "-c", _GENERATE, str(path), str(changes)]), "changes": changes}
    with path.open("rb") as f:
        events = sum(1 for _ in f)
    run = child([sys.executable, "-m", "mqspec", "check", str(path), *(() if args.coverage else ("--no-coverage",))])
    run["events_per_cpu_second"] = round(events / run["cpu_seconds"]) if run["cpu_seconds"] else None
    result.update({"bytes": path.stat().st_size, "events": events, "coverage": args.coverage, "check": run,
                   "within_limit": run["peak_rss_mb"] < LIMIT_MB
                   and all(r["peak_rss_mb"] < LIMIT_MB for r in [result.get("record", run)])})  # type: ignore[index]
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for key, value in result.items():
            print(f"{key:16} {value}")


if __name__ == "__main__":
    main()
