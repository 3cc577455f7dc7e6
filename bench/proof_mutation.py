"""Does `mqspec prove` fail when a handler of the reference is wrong? Mutation figures of the proofs.

Mutates every function of the handler modules one change at a time (a negated condition, a
dropped operand or branch, a comparison shifted by one, min and max swapped:
:mod:`mqspec.proofs.refinement.mutation`) and computes, with each mutant installed, the rows of
`mqspec prove` that run reference code: the refinement campaign of the mutated document (both
modes, to its first departure) and, for MC-MQDSRP mutants the campaign did not catch, bounded model
checking. The Z3 obligations (per-server, enterprise) import nothing from refimpl and are not run per
mutant. Prints (with ``--json``)::

    {"mutants", "caught", "caught_by": {"refinement", "bounded", "per-server", "enterprise"},
     "equivalent", "survived", "timeouts", "by_document", "survivors": [{"mutant", "line", "equivalent", "runs"}],
     "runs": {"judged", "recorded"}, "equivalents": [{"mutant", "line", "equivalent", "reason"}],
     "stale_equivalents", "caught_rows", "baseline_failing", "workers", "seconds", "load"}

A survivor is a mutant no row catches that proofs/refinement/equivalent_mutants.yaml does not list as
equivalent. Each document's unmutated reference is run first (its baseline). A mutant is caught by a row only where
the reference passes it: the bounded runs of literal mode find the literal reading's violations on the reference
itself (``baseline_failing``), and those rows catch nothing. When a refinement row fails on the reference, or the
harness raises there, no catch would mean anything: the benchmark stops with exit status 2. Otherwise exit status
0 when there is no survivor and no stale entry, 1 otherwise. ``seconds`` is
wall-clock; ``load`` the 1-minute load average at the start and the end (the machine is shared).

The baseline also records which handler lines each of the MC-MQDSRP campaign's runs (a scenario file, a seed, in one
mode) and the bounded runs reach. A mutant is judged on the runs that reached the statement it changes, and on no
other (``--every-run``: on all of them): a run that never reached it executes the same code with the mutant
installed, from nothing another run built, and the runs are deterministic, so it cannot depart where the reference
does not. ``runs``: the runs that ran with a mutant installed (to its first departure), summed over the mutants,
and the runs recorded; a survivor's ``runs`` [0, n] says that no run reached its statement (MS-MQSD and MS-MQCN
record none: their mutants run every run, [0, 0]).

    python bench/proof_mutation.py --json [--document MC-MQDSRP|MS-MQSD|MS-MQCN] [--function NAME ...]
                                          [--workers 2] [--no-bounded] [--every-run] [--progress OUT.jsonl]
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


def _judge(job: tuple[str, str, int, bool, frozenset[str] | None, frozenset[str]]) -> dict[str, Any]:
    """The rows that fail with the ``index``-th mutant of ``document`` installed (in a worker process: the mutant
    is installed there), on the runs named in ``wanted`` and those not in ``recorded`` (None: every run); or, for
    index -1, on the unmutated reference (its baseline, or the part of it named ``key``), with the handler lines
    each run reached."""
    from mqspec.proofs.refinement import campaign
    from mqspec.proofs.refinement import mutation as pm

    document, key, index, bounded, wanted, recorded = job
    started = time.monotonic()
    if index < 0:  # key: the part of the baseline (pm.PARTS), or "" for all of it
        record = campaign.Selection()
        try:
            failing = pm.baseline(document, bounded=bounded, record=record, part=key or None)
        except Exception as exc:  # noqa: BLE001 - reported by the parent as the harness's own failure
            failing = [("harness", f"{type(exc).__name__}: {str(exc)[:300]}")]
        return {"document": document, "baseline": failing, "reached": record.reached}
    fn, mutant = [(f, m) for f, m in pm.mutants(document) if f"{f.__module__}.{f.__name__}" == key][index]
    selection = None if not recorded else campaign.Selection(
        wanted=(lambda name: True) if wanted is None else (lambda name: name in wanted or name not in recorded),
        record=False)
    failing = pm.run_mutant(document, fn, mutant, bounded=bounded, selection=selection)  # the parent classifies
    return {"document": document, "mutant": mutant.name, "line": mutant.line, "failing": failing,
            "seconds": round(time.monotonic() - started, 1),
            # the runs that ran (to the first departure), of those the baseline recorded
            "runs": [len(selection.reached), len(recorded)] if selection else [0, 0]}


def _jobs(document: str, functions: list[str], bounded: bool, reached: dict[str, set[tuple[str, int]]],
          select: bool) -> list[tuple[str, str, int, bool, frozenset[str] | None, frozenset[str]]]:
    """One job per mutant of ``document`` (of ``functions``, when given): with ``select``, to be judged on the runs
    that reached its statement on the reference (:func:`mqspec.proofs.refinement.mutation.selection`)."""
    from mqspec.proofs.refinement import mutation as pm

    jobs = []
    counts: dict[str, int] = {}
    recorded = frozenset(reached)
    for fn, mutant in pm.mutants(document):
        key = f"{fn.__module__}.{fn.__name__}"
        index, counts[key] = counts.get(key, 0), counts.get(key, 0) + 1
        if functions and fn.__name__ not in functions:
            continue
        lines = pm.statement_lines(fn, mutant)
        wanted = frozenset(n for n, seen in reached.items() if seen & lines) if select and reached else None
        jobs.append((document, key, index, bounded, wanted, recorded))
    return jobs


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
    parser.add_argument("--every-run", action="store_true",
                        help="judge each mutant on every run, not only on those that reached its statement")
    args = parser.parse_args(argv)
    started, load = time.monotonic(), [round(os.getloadavg()[0], 1)]
    documents = args.document or list(pm.DOCUMENTS)
    named = {fn.__name__ for d in documents for fn, _ in pm.mutants(d)}
    unknown = [name for name in args.function if name not in named]
    if unknown:  # refused before the baseline, which takes minutes and would then judge nothing
        print(f"proof_mutation: no function {', '.join(map(repr, unknown))} is mutated in "
              f"{', '.join(documents)}", file=sys.stderr)
        return 2
    if args.progress:
        try:  # now, not when the first mutant is judged after the minutes-long baseline
            open(args.progress, "a", encoding="utf-8").close()
        except OSError as exc:
            print(f"proof_mutation: {args.progress}: {exc.strerror}", file=sys.stderr)
            return 2
    listed = pm.equivalent_mutants()
    outcomes: list[pm.Outcome] = []
    baselines: dict[str, list[str]] = {}
    with multiprocessing.get_context("fork").Pool(max(1, args.workers), maxtasksperchild=20) as pool:
        # the unmutated reference first: a mutant's failure counts as a catch only where the baseline has none, and
        # its runs' lines select the runs each mutant is judged on
        parts = [(d, part, -1, not args.no_bounded, None, frozenset()) for d in documents
                 for part in pm.PARTS.get(d, ("",))]
        failing: dict[str, list[tuple[str, str]]] = {d: [] for d in documents}
        reached: dict[str, dict[str, set[tuple[str, int]]]] = {d: {} for d in documents}
        for result in pool.imap(_judge, parts):  # a document's parts (its campaign's modes, its bounded runs) apart
            failing[result["document"]] += result["baseline"]
            reached[result["document"]].update(result["reached"])
        jobs = []
        for document in documents:
            broken = [row for kind, row in failing[document] if kind != "bounded"]
            if broken:
                print(f"proof_mutation: the unmutated {document} does not pass its rows, so no mutant can be "
                      f"judged: {'; '.join(broken[:3])}", file=sys.stderr)
                pool.terminate()
                return 2
            baselines[document] = [row for _, row in failing[document]]
            jobs += _jobs(document, args.function, not args.no_bounded, reached[document], not args.every_run)
        known = {d: frozenset(pm.row_key(row) for row in rows) for d, rows in baselines.items()}
        for result in pool.imap_unordered(_judge, jobs):
            document = result["document"]
            if result["failing"] is None:
                outcome = pm.Outcome(document, result["mutant"], result["line"], "timeout", seconds=result["seconds"])
            else:
                outcome = pm.classify(document, result["mutant"], result["line"], [tuple(f) for f in result["failing"]],
                                      known[document], listed, result["seconds"])
            outcome = attrs.evolve(outcome, runs=tuple(result["runs"]))
            outcomes.append(outcome)
            if args.progress:
                with open(args.progress, "a", encoding="utf-8") as out:
                    out.write(json.dumps(attrs.asdict(outcome)) + "\n")
            if not args.json:
                print(f"{outcome.status:10} {outcome.seconds:7.1f}s  {outcome.mutant}", file=sys.stderr)
    outcomes.sort(key=lambda o: (documents.index(o.document), o.mutant))  # imap_unordered: the report in one order
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
