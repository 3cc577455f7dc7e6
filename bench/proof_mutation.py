"""Does `mqspec prove` fail when a handler of the reference is wrong? Mutation figures of the proofs.

Mutates every function of the handler modules one change at a time (a negated condition, a
dropped operand or branch, a comparison shifted by one, min and max swapped:
:mod:`mqspec.proofs.refinement.mutation`) and computes, with each mutant installed, the rows of
`mqspec prove` that run reference code: the refinement campaign of the mutated document (both
modes, to its first departure) and, for MC-MQDSRP mutants the campaign did not catch, bounded model
checking. The Z3 obligations (per-server, enterprise) import nothing from refimpl and are not run per
mutant. Prints (with ``--json``)::

    {"mutants", "caught", "caught_by": {"refinement", "bounded", "per-server", "enterprise"},
     "equivalent", "survived", "timeouts", "by_document", "survivors": [{"mutant", "line", "equivalent"}],
     "equivalents": [{"mutant", "line", "equivalent", "reason"}], "stale_equivalents", "caught_rows",
     "workers", "seconds", "load"}

A survivor is a mutant no row catches that proofs/refinement/equivalent_mutants.yaml does not list as
equivalent. Exit status 0 when there is no survivor and no stale entry, 1 otherwise. ``seconds`` is
wall-clock; ``load`` the 1-minute load average at the start and the end (the machine is shared).

    python bench/proof_mutation.py --json [--document MC-MQDSRP|MS-MQSD|MS-MQCN] [--function NAME ...]
                                          [--workers 2] [--no-bounded] [--progress OUT.jsonl]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import time
from typing import Any


def _judge(job: tuple[str, str, int, bool]) -> dict[str, Any]:
    """Judge the ``index``-th mutant of ``document`` (in a worker process: the mutant is installed there)."""
    from mqspec.proofs.refinement import mutation as pm

    document, wanted, index, bounded = job
    fn, mutant = [(f, m) for f, m in pm.mutants(document) if f"{f.__module__}.{f.__name__}" == wanted][index]
    outcome = pm.judge(document, fn, mutant, pm.equivalent_mutants(), bounded=bounded)
    return {"document": outcome.document, "mutant": outcome.mutant, "line": outcome.line, "status": outcome.status,
            "caught_by": list(outcome.caught_by), "rows": list(outcome.rows), "reason": outcome.reason,
            "seconds": round(outcome.seconds, 1)}


def main(argv: list[str] | None = None) -> int:
    from mqspec.proofs.refinement import mutation as pm

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the whole report as JSON")
    parser.add_argument("--document", action="append", choices=sorted(pm.DOCUMENTS),
                        help="mutate this document's handlers only (repeatable; default: all three)")
    parser.add_argument("--function", action="append", default=[], metavar="NAME",
                        help="mutate only this function (repeatable)")
    parser.add_argument("--workers", type=int, default=2, help="processes to judge the mutants in")
    parser.add_argument("--no-bounded", action="store_true", help="do not run bounded model checking on survivors")
    parser.add_argument("--progress", metavar="OUT.jsonl", help="append each mutant's outcome as a JSON line")
    args = parser.parse_args(argv)
    started, load = time.monotonic(), [round(os.getloadavg()[0], 1)]
    jobs = []
    for document in args.document or list(pm.DOCUMENTS):
        counts: dict[str, int] = {}
        for fn, _ in pm.mutants(document):
            key = f"{fn.__module__}.{fn.__name__}"
            if args.function and fn.__name__ not in args.function:
                counts[key] = counts.get(key, 0) + 1
                continue
            jobs.append((document, key, counts.get(key, 0), not args.no_bounded))
            counts[key] = counts.get(key, 0) + 1
    results = []
    with multiprocessing.get_context("fork").Pool(max(1, args.workers), maxtasksperchild=20) as pool:
        for result in pool.imap(_judge, jobs):
            results.append(result)
            if args.progress:
                with open(args.progress, "a", encoding="utf-8") as out:
                    out.write(json.dumps(result) + "\n")
            if not args.json:
                print(f"{result['status']:10} {result['seconds']:7.1f}s  {result['mutant']}", file=sys.stderr)
    outcomes = [pm.Outcome(r["document"], r["mutant"], r["line"], r["status"], tuple(r["caught_by"]),
                           tuple(r["rows"]), r["reason"], r["seconds"]) for r in results]
    listed = pm.equivalent_mutants()
    report = pm.report(outcomes, listed)
    if args.document or args.function:  # a partial run cannot tell which listed entries are stale
        judged = {o.mutant for o in outcomes}
        report["stale_equivalents"] = [n for n in report["stale_equivalents"] if n in judged]
    load.append(round(os.getloadavg()[0], 1))
    report.update(workers=args.workers, seconds=round(time.monotonic() - started, 1), load=load)
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        print(f"{report['mutants']} mutants: {report['caught']} caught ({report['caught_by']}), "
              f"{report['equivalent']} equivalent, {report['survived']} survived, {report['timeouts']} timeouts "
              f"({report['seconds']} s, load {load})")
        for s in report["survivors"]:
            print(f"  survivor: {s['mutant']} (line {s['line']})")
    return 0 if not report["survivors"] and not report["stale_equivalents"] else 1


if __name__ == "__main__":
    sys.exit(main())
