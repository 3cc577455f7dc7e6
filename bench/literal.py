"""How long the stateful machine takes to find and shrink each literal-mode violation.

For each invariant of :mod:`mqspec.proofs.invariants` (or those named), runs the hunt of
:mod:`tests.stateful.hunt`: the machine reads the text literally and checks that invariant only,
hypothesis generates runs until one violates it (at most ``--search-seconds``), and delta
debugging shrinks the failing run's inputs (at most ``--shrink-seconds``). Prints (with --json)
one row per invariant::

    {"invariant", "errata", "found", "find_steps", "find_runs", "find_seconds",
     "first_problem", "failing_run_inputs", "shrunk_inputs", "shrink_seconds"}

Seconds are process CPU seconds (one core). ``--out DIR`` also writes each shrunk run as a
scenario file (``DIR/<invariant>.yaml``) that ``mqspec scenario run --mode literal`` replays.

    python bench/literal.py --json [--invariant NAME ...] [--seed 0] [--search-seconds 300]
                                   [--shrink-seconds 120] [--out DIR] [--workers 1]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: tests.stateful

from mqspec.proofs import invariants as inv
from mqspec.refimpl.effects import Mode

from tests.stateful.hunt import LITERAL_SETTLE, hunt
from tests.stateful.minimize import scenario_for


def one(invariant: str, seed: int, search: float, shrink: float, out: str | None) -> dict[str, object]:
    row = hunt(invariant, seed=seed, search_seconds=search, shrink_seconds=shrink)
    small = row.pop("shrunk", None)
    if small and out:
        path = Path(out) / f"{invariant}.yaml"
        data = scenario_for(small, Mode.LITERAL, LITERAL_SETTLE,
                            description=f"literal-mode violation of {invariant} found by bench/literal.py")
        comment = (f"A literal-mode counterexample to {invariant}, found by the stateful machine (seed {seed},\n"
                   f"{row['find_steps']} steps, {row['find_seconds']} s) and shrunk by delta debugging to "
                   f"{row['shrunk_inputs']} input(s).\nFirst problem: {row['first_problem']}\n"
                   f"Replay: mqspec scenario run {path.name} --mode literal")
        lead = "".join(f"# {line}".rstrip() + "\n" for line in comment.splitlines())
        path.write_text(lead + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=110), encoding="utf-8")
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--invariant", action="append", choices=inv.NAMES, help="hunt only these (default: all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--search-seconds", type=float, default=300.0)
    ap.add_argument("--shrink-seconds", type=float, default=120.0)
    ap.add_argument("--out", metavar="DIR", help="write each shrunk counterexample as DIR/<invariant>.yaml")
    ap.add_argument("--workers", type=int, default=1, help="hunt this many invariants at once (one per core)")
    args = ap.parse_args()
    if args.workers < 1:
        ap.error("--workers must be at least 1")
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
    names = args.invariant or list(inv.NAMES)
    jobs = [(name, args.seed, args.search_seconds, args.shrink_seconds, args.out) for name in names]
    if args.workers == 1:
        rows = [one(*job) for job in jobs]
    else:
        with multiprocessing.get_context("fork").Pool(args.workers) as pool:
            rows = pool.starmap(one, jobs, chunksize=1)
    report = {"benchmark": "literal", "seed": args.seed, "search_seconds": args.search_seconds,
              "shrink_seconds": args.shrink_seconds, "found": sum(bool(r["found"]) for r in rows), "rows": rows}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for r in rows:
            shown = (f"found after {r['find_steps']} steps / {r['find_seconds']} s, shrunk {r['failing_run_inputs']}"
                     f" -> {r['shrunk_inputs']} inputs in {r['shrink_seconds']} s" if r["found"]
                     else f"not found in {r['find_steps']} steps / {r['find_seconds']} s")
            print(f"{r['invariant']:48} {shown}")


if __name__ == "__main__":
    main()
