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
     "baseline_failing", "workers", "seconds", "load"}

A survivor is a mutant no row catches that proofs/refinement/equivalent_mutants.yaml does not list as
equivalent. Each document's unmutated reference is run first (its baseline). A mutant is caught by a row only where
the reference passes it: the bounded runs of literal mode find the literal reading's violations on the reference
itself (``baseline_failing``), and those rows catch nothing. When a refinement row fails on the reference, or the
harness raises there, no catch would mean anything: the benchmark stops with exit status 2. Otherwise exit status
0 when there is no survivor and no stale entry, 1 otherwise. ``seconds`` is
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

import attrs


def _judge(job: tuple[str, str, int, bool]) -> dict[str, Any]:
    """The rows that fail with the ``index``-th mutant of ``document`` installed (in a worker process: the mutant
    is installed there), or, for index -1, on the unmutated reference (its baseline)."""
    from mqspec.proofs.refinement import mutation as pm

    document, wanted, index, bounded = job
    started = time.monotonic()
    if index < 0:
        try:
            return {"document": document, "baseline": pm.baseline(document, bounded=bounded)}
        except Exception as exc:  # noqa: BLE001 - reported by the parent as the harness's own failure
            return {"document": document, "baseline": [("harness", f"{type(exc).__name__}: {str(exc)[:300]}")]}
    fn, mutant = [(f, m) for f, m in pm.mutants(document) if f"{f.__module__}.{f.__name__}" == wanted][index]
    failing = pm.run_mutant(document, fn, mutant, bounded=bounded)  # the parent classifies, against the baseline
    return {"document": document, "mutant": mutant.name, "line": mutant.line, "failing": failing,
            "seconds": round(time.monotonic() - started, 1)}


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
        # the unmutated reference first: a mutant's failure counts as a catch only where the baseline has none
        jobs.append((document, "", -1, not args.no_bounded))
        counts: dict[str, int] = {}
        for fn, _ in pm.mutants(document):
            key = f"{fn.__module__}.{fn.__name__}"
            if args.function and fn.__name__ not in args.function:
                counts[key] = counts.get(key, 0) + 1
                continue
            jobs.append((document, key, counts.get(key, 0), not args.no_bounded))
            counts[key] = counts.get(key, 0) + 1
    listed = pm.equivalent_mutants()
    outcomes: list[pm.Outcome] = []
    baselines: dict[str, list[str]] = {}
    known: dict[str, frozenset[str]] = {}
    with multiprocessing.get_context("fork").Pool(max(1, args.workers), maxtasksperchild=20) as pool:
        for result in pool.imap(_judge, jobs):  # in order: a document's baseline before its mutants
            document = result["document"]
            if "baseline" in result:
                broken = [row for kind, row in result["baseline"] if kind != "bounded"]
                if broken:
                    print(f"proof_mutation: the unmutated {document} does not pass its rows, so no mutant can be "
                          f"judged: {'; '.join(broken[:3])}", file=sys.stderr)
                    pool.terminate()
                    return 2
                baselines[document] = [row for _, row in result["baseline"]]
                known[document] = frozenset(pm.row_key(row) for row in baselines[document])
                continue
            if result["failing"] is None:
                outcome = pm.Outcome(document, result["mutant"], result["line"], "timeout", seconds=result["seconds"])
            else:
                outcome = pm.classify(document, result["mutant"], result["line"], [tuple(f) for f in result["failing"]],
                                      known[document], listed, result["seconds"])
            outcomes.append(outcome)
            if args.progress:
                with open(args.progress, "a", encoding="utf-8") as out:
                    out.write(json.dumps(attrs.asdict(outcome)) + "\n")
            if not args.json:
                print(f"{outcome.status:10} {outcome.seconds:7.1f}s  {outcome.mutant}", file=sys.stderr)
    report = pm.report(outcomes, listed)
    # the rows the unmutated reference fails already (literal mode's bounded runs): they catch no mutant
    report["baseline_failing"] = baselines
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
