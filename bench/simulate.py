"""Benchmark the MC-MQDSRP reference: a 4-site enterprise, 2 BSCs per site, a random workload.

Prints (with --json) replication messages processed per second and DirectoryChanges applied per
second of wall time on one core, with the bytes that crossed the simulated wire. Deterministic in
everything but the timings: the same seed gives the same messages and the same final state.

    python bench/simulate.py --json [--seconds 600] [--rate 2] [--seed 1] [--mode clarified]
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import time

from mqspec.model.propids import PROPIDS, ObjectType
from mqspec.model.propvalue import Property
from mqspec.refimpl.effects import Mode
from mqspec.refimpl.mqds import ClientRequest
from mqspec.refimpl.world import (
    World,
    add_bsc,
    add_site,
    bootstrap_pec,
    convergence_problems,
    create_machine,
)

P = {name: pdef.propid for name, pdef in PROPIDS.items()}
SITES = [("site0", "PEC0"), ("site1", "PSC1"), ("site2", "PSC2"), ("site3", "PSC3")]


def build(mode: Mode, seed: int, queues_per_site: int) -> tuple[World, list[tuple[str, str, str]]]:
    """The enterprise, each site with two BSCs, a client machine and some queues; settled."""
    world = World(mode=mode, seed=seed)
    bootstrap_pec(world, "PEC0", "site0")
    for site, psc in SITES[1:]:
        add_site(world, site, psc)
        world.settle(limit=3600)
    for i, (site, _psc) in enumerate(SITES):
        for j in (1, 2):
            add_bsc(world, site, f"BSC{i}{j}")
    world.settle(limit=3600)
    queues = []
    for i, (site, psc) in enumerate(SITES):
        machine = f"C{i}"
        create_machine(world, psc, machine, site)
        for q in range(queues_per_site):
            path = f"{machine}\\q{q}"
            world.client_request(psc, ClientRequest(
                "create", ObjectType.MQDS_QUEUE, world.site_guid(site), path_name=path,
                properties=(Property(P["PROPID_Q_PATHNAME"], path), Property(P["PROPID_Q_SCOPE"], 1),
                            Property(P["PROPID_Q_LABEL"], f"queue {q} of {machine}")),
            ))
            queues.append((site, psc, path))
    world.settle(limit=3600)
    return world, queues


def workload(world: World, queues: list, rng: random.Random, seconds: float, rate: float) -> None:
    """``rate`` queue updates per simulated second, at the authority or at one of its BSCs."""
    step = 1.0
    t_end = world.now + seconds
    while world.now < t_end:
        for _ in range(int(rate * step)):
            site, psc, path = rng.choice(queues)
            at = psc if rng.random() < 0.9 else f"BSC{SITES.index((site, psc))}{rng.choice((1, 2))}"
            world.client_request(at, ClientRequest(
                "update", ObjectType.MQDS_QUEUE, world.site_guid(site), path_name=path,
                properties=(Property(P["PROPID_Q_QUOTA"], rng.randrange(1 << 20)),
                            Property(P["PROPID_Q_LABEL"], f"label {rng.randrange(1 << 30):x}")),
            ))
        world.advance(step)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--seconds", type=float, default=600.0, help="simulated seconds of workload")
    ap.add_argument("--rate", type=float, default=2.0, help="directory changes per simulated second")
    ap.add_argument("--queues", type=int, default=50, help="queues per site")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--mode", choices=[m.value for m in Mode], default="clarified")
    args = ap.parse_args()

    world, queues = build(Mode(args.mode), args.seed, args.queues)
    rng = random.Random(args.seed)
    before_msgs, before_applied, before_bytes = world.messages_processed, world.changes_applied, world.network.bytes_sent
    t0 = time.process_time()
    workload(world, queues, rng, args.seconds, args.rate)
    world.advance(60.0)  # let the last propagations drain
    elapsed = time.process_time() - t0
    messages = world.messages_processed - before_msgs
    applied = world.changes_applied - before_applied
    wire = world.network.bytes_sent - before_bytes
    settled = world.settle(limit=3600)
    result = {
        "benchmark": "simulate",
        "mode": args.mode,
        "seed": args.seed,
        "nodes": len(world.nodes),
        "simulated_seconds": args.seconds,
        "client_changes": int(args.seconds * args.rate),
        "messages_processed": messages,
        "changes_applied": applied,
        "wire_bytes": wire,
        "cpu_seconds": round(elapsed, 3),
        "messages_per_second": round(messages / elapsed, 1),
        "changes_applied_per_second": round(applied / elapsed, 1),
        "wire_megabytes_per_second": round(wire / elapsed / 1e6, 3),
        "converged_after": settled and not convergence_problems(world),
        "python": platform.python_version(),
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for key, value in result.items():
            print(f"{key:28} {value}")


if __name__ == "__main__":
    main()
