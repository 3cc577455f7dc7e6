"""Benchmark the simulator at enterprise scale: build and settle enterprises of many directory servers.

Each point builds an enterprise of ``servers`` directory servers: sites of one PSC (the PEC in the
first site) and up to 19 BSCs. It bootstraps the PEC, adds every other site (4.1) and settles, adds
every BSC (4.2) and settles until the enterprise is quiet for 22 simulated minutes (World.settle's
defaults: long enough for a SeqNumberHeader round), then checks that every replica converged.
Each point runs in its own process, so ``peak_rss_mb`` is that point's own peak. Prints (with
--json)::

    {"points": [{"servers", "sites", "build_settle_seconds", "peak_rss_mb", "converged",
                 "replica_changes_applied", "object_replicas_created", "us_per_replica_change", ...}],
     "exponent": E, "exponent_in_replica_changes": R, ...}

``build_settle_seconds`` is process CPU time (one core); ``replica_changes_applied`` counts the
DirectoryChanges the replicas applied from the messages they received (a change applied at one
replica counts once: a copy that arrives again is not applied again), ``object_replicas_created``
those of them that created an object, and ``us_per_replica_change`` is the time over them.
``exponent`` is the least-squares slope of log(seconds) over log(servers), the growth exponent of
the time in the number of servers; ``exponent_in_replica_changes`` the slope over log(replica
changes applied), the growth of the time in the work the protocol asks for.
``--no-skip`` runs every idle Change Propagation Timer firing (World's fast path off).

    python bench/scale.py --json [--servers 10 100 300 1000] [--per-site 20] [--seed 1] [--no-skip]
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import platform
import resource
import time

from mqspec.refimpl.effects import Mode
from mqspec.refimpl.world import World, add_bsc, add_site, bootstrap_pec, convergence_problems

#: how the build settles between its phases (scenario_run's BUILD_SETTLE)
BUILD_SETTLE = {"window": 10.0, "quiet": 30.0, "limit": 3600.0}


def layout(servers: int, per_site: int) -> list[tuple[str, str, list[str]]]:
    """(site, PSC, BSCs) of each site: ``per_site`` servers a site, the PEC the first site's PSC."""
    sites = []
    placed = 0
    while placed < servers:
        size = min(per_site, servers - placed)
        i = len(sites)
        sites.append((f"site{i}", "PEC0" if i == 0 else f"PSC{i}", [f"BSC{i}_{j}" for j in range(1, size)]))
        placed += size
    return sites


def build_and_settle(servers: int, per_site: int, seed: int, skip: bool, mode: Mode) -> tuple[World, bool]:
    """The enterprise, built and settled (see the module docstring), and whether it reached quiet."""
    sites = layout(servers, per_site)
    world = World(mode=mode, seed=seed, skip_idle_timers=skip)
    bootstrap_pec(world, sites[0][1], sites[0][0])
    world.settle(**BUILD_SETTLE)
    for site, psc, _bscs in sites[1:]:
        add_site(world, site, psc)
    world.settle(**BUILD_SETTLE)
    for site, _psc, bscs in sites:
        for bsc in bscs:
            add_bsc(world, site, bsc)
    return world, world.settle()


def point(servers: int, per_site: int, seed: int, skip: bool, mode: Mode) -> dict[str, object]:
    """One point, measured in this process."""
    start = time.process_time()
    world, quiet = build_and_settle(servers, per_site, seed, skip, mode)
    seconds = time.process_time() - start
    problems = convergence_problems(world)
    objects = sum(len(qm.directory) for qm in world.nodes.values())
    return {
        "servers": len(world.nodes),
        "sites": len(layout(servers, per_site)),
        "build_settle_seconds": round(seconds, 3),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "converged": quiet and not problems,
        "replica_changes_applied": world.changes_applied,
        "object_replicas_created": world.replicas_created,
        "us_per_replica_change": round(seconds / max(world.changes_applied, 1) * 1e6, 2),
        "simulated_seconds": round(world.now, 3),
        "messages_processed": world.messages_processed,
        "timers_skipped": world.timers_skipped,
        "object_replicas": objects,
    }


def _point_in_child(args: tuple) -> dict[str, object]:
    return point(*args)


def exponent(points: list[dict[str, object]], over: str = "servers") -> float:
    """The least-squares slope of log(seconds) over log(``over``: servers, or replica changes applied)."""
    xs = [math.log(float(p[over])) for p in points]  # type: ignore[arg-type]
    ys = [math.log(max(float(p["build_settle_seconds"]), 1e-3)) for p in points]  # type: ignore[arg-type]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--servers", type=int, nargs="+", default=[10, 100, 300, 1000])
    ap.add_argument("--per-site", type=int, default=20, help="servers a site: one PSC and the rest BSCs")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--mode", choices=[m.value for m in Mode], default="clarified")
    ap.add_argument("--no-skip", action="store_true", help="run every idle timer firing (no fast path)")
    args = ap.parse_args()
    if min(args.servers) < 1 or args.per_site < 1:
        ap.error("--servers and --per-site are positive counts")

    ctx = multiprocessing.get_context("spawn")
    points = []
    for n in args.servers:  # one process a point, one after the other: its own peak memory, one core
        with ctx.Pool(1) as pool:
            points.append(pool.apply(_point_in_child, ((n, args.per_site, args.seed, not args.no_skip,
                                                        Mode(args.mode)),)))
    result = {
        "benchmark": "scale",
        "mode": args.mode,
        "seed": args.seed,
        "per_site": args.per_site,
        "skip_idle_timers": not args.no_skip,
        "points": points,
        "exponent": round(exponent(points), 3) if len(points) > 1 else None,
        "exponent_in_replica_changes": (round(exponent(points, "replica_changes_applied"), 3)
                                        if len(points) > 1 else None),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for p in points:
            print(" ".join(f"{k}={v}" for k, v in p.items()))
        print(f"exponent {result['exponent']}")


if __name__ == "__main__":
    main()
