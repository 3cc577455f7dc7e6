"""How long the stateful machine takes to find and shrink each literal-mode violation.

For each invariant of :mod:`mqspec.proofs.invariants` (or those named), runs the hunt of
:mod:`mqspec.proofs.explore.hunt`: the machine reads the text literally and checks that invariant only,
hypothesis generates runs until one violates it (at most ``--search-seconds``), and delta
debugging shrinks the failing run's inputs (at most ``--shrink-seconds``). Prints (with --json)
one row per invariant::

    {"invariant", "errata", "found", "find_steps", "find_runs", "find_seconds",
     "first_problem", "failing_run_inputs", "shrunk_inputs", "shrink_seconds"}

Read wholly literally the enterprise never forms (E-142), so replica-side defects cannot show;
``mqspec.proofs.explore.hunt.SELECTIVE`` names, for those invariants, the handlers whose literal branch
the register blames, and those hunts read the text literally inside them only (rows with
``"reading": "literal in ..."``). ``--reading`` picks the wholly literal hunts, the selective
ones or both (the default).

Seconds are process CPU seconds (one core). ``--out DIR`` also writes each shrunk run as a
scenario file that ``mqspec scenario run --mode literal --invariants`` replays to the violation
(``DIR/<invariant>.yaml``), or, for a selective hunt, that
``python -m mqspec.proofs.counterexample_scenarios replay`` replays with its ``# replay: literal
in ...`` header (``DIR/<invariant>-literal-in-<handler>.yaml``).

    python bench/literal.py --json [--invariant NAME ...] [--reading literal|selective|both] [--seed 0]
                                   [--search-seconds 300] [--shrink-seconds 120] [--out DIR] [--workers 1]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
from pathlib import Path

import yaml


from mqspec import memos
from mqspec.proofs import invariants as inv

from mqspec.proofs.explore.hunt import SELECTIVE, hunt, literal_machine, read_as
from mqspec.proofs.explore.minimize import scenario_for


def one(invariant: str, reading: tuple[str, ...], seed: int, search: float, shrink: float,
        out: str | None) -> dict[str, object]:
    memos.clear_all()  # each hunt starts as the first did, whatever hunted before it (bench/README.md)
    row = hunt(invariant, seed=seed, search_seconds=search, shrink_seconds=shrink, reading=reading)
    small = row.pop("shrunk", None)
    if small and out:
        machine = literal_machine(invariant, reading)
        stem = invariant + (f"-literal-in-{'-'.join(reading)}" if reading else "")
        path = Path(out) / f"{stem}.yaml"
        with read_as(reading):  # the run's ending is computed under the hunt's reading
            data = scenario_for(small, machine.MODE, machine.FINAL_SETTLE,
                                description=f"{row['reading']}: a violation of {invariant} found by bench/literal.py")
        replay = (f"python -m mqspec.proofs.counterexample_scenarios replay {path.name}" if reading
                  else f"mqspec scenario run {path.name} --mode literal --invariants")
        comment = (f"A counterexample to {invariant} ({row['reading']}; {', '.join(row['errata'])}), found by\n"
                   f"the stateful machine (seed {seed}, {row['find_steps']} steps, {row['find_seconds']} s) and "
                   f"shrunk by delta debugging to {row['shrunk_inputs']} input(s).\n"
                   f"First problem: {row['first_problem']}\nReplay: {replay}"
                   + (f"\nreplay: literal in {', '.join(reading)}" if reading else ""))
        lead = "".join(f"# {line}".rstrip() + "\n" for line in comment.splitlines())
        path.write_text(lead + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=110), encoding="utf-8")
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--invariant", action="append", choices=inv.NAMES, help="hunt only these (default: all)")
    ap.add_argument("--reading", choices=("literal", "selective", "both"), default="both",
                    help="wholly literal hunts, hunts with the literal reading confined to SELECTIVE's handlers, or both")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--search-seconds", type=float, default=300.0)
    ap.add_argument("--shrink-seconds", type=float, default=120.0)
    ap.add_argument("--out", metavar="DIR", help="write each shrunk counterexample as DIR/<invariant>.yaml")
    ap.add_argument("--workers", type=int, default=1, help="hunt this many invariants at once (one per core)")
    args = ap.parse_args()
    if args.workers < 1:
        ap.error("--workers must be at least 1")
    if args.out:
        try:
            Path(args.out).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            ap.error(f"--out {args.out}: {exc.strerror}")
    names = args.invariant or list(inv.NAMES)
    readings: list[tuple[str, tuple[str, ...]]] = []
    if args.reading in ("literal", "both"):
        readings += [(name, ()) for name in names]
    if args.reading in ("selective", "both"):
        readings += [(name, SELECTIVE[name][0]) for name in names if name in SELECTIVE]
    jobs = [(name, reading, args.seed, args.search_seconds, args.shrink_seconds, args.out) for name, reading in readings]
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
            print(f"{r['invariant']:48} {r['reading']:32} {shown}")


if __name__ == "__main__":
    main()
