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

The ledger (``--ledger bench/proof_mutation_ledger.json``) keeps, per function, the run that judged every one of its
mutants: the commit, the counts, its survivors, and a digest of the function's source. It is written as each
function's last mutant is judged, so a run stopped part way keeps the functions it finished. ``--rejudge`` judges
only the survivors the ledger still holds (after a scenario file was added, say) and records each one's new status
and commit. ``--status`` prints, without running anything, which functions are measured whole on their current
source, which are stale (their source changed since) or unmeasured, and the survivors left. ``--runs`` prints the
ledger's figures per run that measured them, and what became of each run's survivors since (bench/README.md's table).

    python bench/proof_mutation.py --json [--document MC-MQDSRP|MS-MQSD|MS-MQCN] [--function NAME ...]
                                          [--workers 2] [--no-bounded] [--every-run] [--progress OUT.jsonl]
                                          [--ledger LEDGER.json [--rejudge | --status | --runs]]
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path
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
    return {"document": document, "key": key, "mutant": mutant.name, "line": mutant.line, "failing": failing,
            "seconds": round(time.monotonic() - started, 1),
            # the runs that ran (to the first departure), of those the baseline recorded
            "runs": [len(selection.reached), len(recorded)] if selection else [0, 0]}


def _jobs(document: str, functions: list[str], bounded: bool, reached: dict[str, set[tuple[str, int]]],
          select: bool, only: frozenset[str] | None = None,
          ) -> list[tuple[str, str, int, bool, frozenset[str] | None, frozenset[str]]]:
    """One job per mutant of ``document`` (of ``functions``, when given; named in ``only``, when given): with
    ``select``, to be judged on the runs that reached its statement on the reference
    (:func:`mqspec.proofs.refinement.mutation.selection`)."""
    from mqspec.proofs.refinement import mutation as pm

    jobs = []
    counts: dict[str, int] = {}
    recorded = frozenset(reached)
    for fn, mutant in pm.mutants(document):
        key = f"{fn.__module__}.{fn.__name__}"
        index, counts[key] = counts.get(key, 0), counts.get(key, 0) + 1
        if (functions and fn.__name__ not in functions) or (only is not None and mutant.name not in only):
            continue
        lines = pm.statement_lines(fn, mutant)
        wanted = frozenset(n for n, seen in reached.items() if seen & lines) if select and reached else None
        jobs.append((document, key, index, bounded, wanted, recorded))
    return jobs


#: the states of a survivor the ledger keeps: still to be caught or listed (a timeout is one too)
OPEN = ("survived", "timeout")


def _entry_key(document: str, fn: Any) -> str:
    return f"{document} {fn.__module__.rsplit('.', 1)[-1]}.{fn.__name__}"


def _source_digest(fn: Any) -> str:
    """Which source a ledger entry measured: an entry whose function has changed since is stale."""
    return hashlib.sha256(inspect.getsource(fn).encode("utf-8")).hexdigest()[:16]


def _commit(ledger: str | None = None) -> str:
    """The checkout's commit, ``+changes`` when tracked files other than the ``ledger`` differ from it (the ledger
    says what it measured; its own edits by earlier runs change nothing measured)."""
    here = Path(__file__).resolve().parent

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(here), *args], capture_output=True, text=True, check=True).stdout

    try:
        head, top = git("rev-parse", "--short=7", "HEAD").strip(), Path(git("rev-parse", "--show-toplevel").strip())
        changed = [top / line[3:] for line in git("status", "--porcelain", "--untracked-files=no").splitlines()]
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    mine = Path(ledger).resolve() if ledger else None
    return head + ("+changes" if any(path.resolve() != mine for path in changed) else "")


def read_ledger(path: str) -> dict[str, Any]:
    """The ledger at ``path`` (empty when the file does not exist yet); ValueError naming the file if it is not
    one."""
    try:
        with open(path, encoding="utf-8") as f:
            ledger = json.load(f)
    except FileNotFoundError:
        return {"functions": {}}
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: not a ledger: {exc}") from None
    if not isinstance(ledger, dict) or not isinstance(ledger.get("functions"), dict):
        raise ValueError(f"{path}: not a ledger: no \"functions\" object")
    return ledger


def write_ledger(path: str, ledger: dict[str, Any]) -> None:
    """Written whole, then renamed over the old file: a run stopped mid-write leaves the previous ledger."""
    ledger["about"] = ("bench/proof_mutation.py --ledger: per function, the run that judged all its mutants "
                       "(measured), and each of that run's survivors with its latest judgement")
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as out:
        out.write(json.dumps(ledger, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, path)


def record_function(ledger: dict[str, Any], document: str, fn: Any, outcomes: list[Any], commit: str) -> None:
    """Every mutant of ``fn`` judged (``outcomes``): its entry is replaced by this run's."""
    counts = {s: sum(o.status == s for o in outcomes) for s in ("caught", "equivalent", "survived", "timeout")}
    ledger["functions"][_entry_key(document, fn)] = {
        "source": _source_digest(fn), "mutants": len(outcomes), "measured": {"commit": commit, **counts},
        "survivors": {o.mutant: {"line": o.line, "status": o.status, "commit": commit}
                      for o in outcomes if o.status in OPEN}}


def record_rejudged(ledger: dict[str, Any], document: str, fn: Any, outcome: Any, commit: str) -> None:
    """A survivor judged again: its latest status and the commit it was judged on."""
    survivor = ledger["functions"][_entry_key(document, fn)]["survivors"][outcome.mutant]
    survivor.update(status=outcome.status, commit=commit)


def ledger_status(ledger: dict[str, Any], documents: list[str], listed: dict[str, str]) -> dict[str, Any]:
    """Each function of ``documents`` against the ledger: ``whole`` (measured on its current source), ``stale``
    (measured, source changed since), ``unmeasured``, or ``no mutants`` (the engine makes none of it), with the
    survivors still open (``open``: last judged survived or timed out) and of those the ones left (``left``: not listed
    as equivalent since)."""
    from mqspec.proofs.refinement import mutation as pm
    from mqspec.vectors import mutation as vm

    rows = []
    for document in documents:
        for fn in pm.functions(document):
            entry = ledger["functions"].get(_entry_key(document, fn))
            count = sum(1 for _ in vm.mutants_of(fn, pm.OPERATORS))
            state = "no mutants" if not count else "unmeasured" if entry is None else \
                "whole" if entry["source"] == _source_digest(fn) else "stale"
            still = [] if entry is None else sorted(
                name for name, s in entry["survivors"].items() if s["status"] in OPEN)
            rows.append({"function": _entry_key(document, fn), "state": state, "mutants": count,
                         "commit": entry["measured"]["commit"] if entry else None, "open": still,
                         "left": [name for name in still if name not in listed]})
    return {"functions": rows,
            **{s: sum(r["state"] == s for r in rows) for s in ("whole", "stale", "unmeasured", "no mutants")},
            "left": sum(len(r["left"]) for r in rows)}


def ledger_runs(ledger: dict[str, Any], listed: dict[str, str]) -> list[dict[str, Any]]:
    """The ledger's entries grouped by the run that measured them (its commit, per document): how many functions and
    mutants, the counts that run judged, and what became of its survivors since (``since``: caught on a later
    judgement, listed as equivalent, ``left``). Whole or stale alike: an entry is what its run measured."""
    runs: dict[tuple[str, str], dict[str, Any]] = {}
    for key, entry in ledger["functions"].items():
        document = key.split(" ", 1)[0]
        measured = entry["measured"]
        run = runs.setdefault((document, measured["commit"]), {
            "document": document, "commit": measured["commit"], "functions": 0, "mutants": 0,
            **{s: 0 for s in ("caught", "equivalent", "survived", "timeout")},
            "since": {"caught": 0, "equivalent": 0, "left": 0}})
        run["functions"] += 1
        run["mutants"] += entry["mutants"]
        for s in ("caught", "equivalent", "survived", "timeout"):
            run[s] += measured[s]
        for name, survivor in entry["survivors"].items():
            became = "caught" if survivor["status"] == "caught" else \
                "equivalent" if survivor["status"] == "equivalent" or name in listed else "left"
            run["since"][became] += 1
    return [runs[k] for k in sorted(runs)]


def runs_table(runs: list[dict[str, Any]]) -> str:
    """:func:`ledger_runs` as the Markdown table bench/README.md shows (tests/bench keep the two equal), with a last
    row summing them all."""
    counts = ("functions", "mutants", "caught", "equivalent", "survived", "timeout")
    total = {"document": "all", "commit": "", **{k: sum(r[k] for r in runs) for k in counts},
             "since": {k: sum(r["since"][k] for r in runs) for k in ("caught", "equivalent", "left")}}
    lines = ["| document | measured on | functions | mutants | caught | equivalent | survived | since: caught, "
             "listed, left |", "|---|---|---|---|---|---|---|---|"]
    for r in (*runs, total):
        since = r["since"]
        cells = (r["document"], r["commit"], *(r[k] for k in counts[:-2]), r["survived"] + r["timeout"],
                 f"{since['caught']}, {since['equivalent']}, **{since['left']}**")
        lines.append("|" + "|".join(f" {c} " if c != "" else " " for c in cells) + "|")
    return "\n".join(lines)


def _print_status(status: dict[str, Any]) -> None:
    for row in status["functions"]:
        if row["state"] == "no mutants":  # counted below
            continue
        print(f"{row['state']:10} {row['mutants']:3} {row['commit'] or '-':14} {row['function']}"
              + (f"  ({len(row['left'])} left)" if row["left"] else ""))
        for name in row["left"]:
            print(f"    left: {name}")
    print(f"{status['whole']} whole, {status['stale']} stale, {status['unmeasured']} unmeasured (of "
          f"{len(status['functions']) - status['no mutants']} functions with mutants); {status['left']} survivors left")


def main(argv: list[str] | None = None) -> int:
    from mqspec.proofs.refinement import mutation as pm

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the whole report as JSON")
    parser.add_argument("--document", action="append", choices=sorted(pm.DOCUMENTS),
                        help="mutate this document's handlers only (repeatable; default: all three)")
    parser.add_argument("--function", action="append", default=[], metavar="NAME",
                        help="mutate only this function (repeatable)")
    parser.add_argument("--ledger", metavar="LEDGER.json",
                        help="record each function whose mutants are all judged (bench/proof_mutation_ledger.json)")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--rejudge", action="store_true", help="judge only the survivors the ledger holds")
    what.add_argument("--status", action="store_true",
                      help="print which functions the ledger has measured whole on their current source; run nothing")
    what.add_argument("--runs", action="store_true",
                      help="print the ledger's figures per run that measured them (bench/README.md's table); "
                           "run nothing")
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
    reading = "--rejudge" if args.rejudge else "--status" if args.status else "--runs" if args.runs else None
    if reading and not args.ledger:
        print(f"proof_mutation: {reading} reads the ledger: give --ledger", file=sys.stderr)
        return 2
    ledger, only, commit = None, None, ""
    if args.ledger:
        try:
            ledger = read_ledger(args.ledger)
        except ValueError as exc:
            print(f"proof_mutation: {exc}", file=sys.stderr)
            return 2
        if not (args.status or args.runs):  # a run that writes the ledger
            if not os.access(os.path.dirname(os.path.abspath(args.ledger)), os.W_OK):
                print(f"proof_mutation: {args.ledger}: its folder cannot be written", file=sys.stderr)
                return 2
            commit = _commit(args.ledger)  # what the entries written below measured (two git calls)
    if args.status:
        status = ledger_status(ledger, documents, listed)
        print(json.dumps(status, indent=1)) if args.json else _print_status(status)
        return 0
    if args.runs:
        runs = ledger_runs(ledger, listed)
        print(json.dumps(runs, indent=1) if args.json else runs_table(runs))
        return 0
    if args.rejudge:
        status = ledger_status(ledger, documents, listed)
        # every open survivor, those listed as equivalent since included: judged again, they are recorded as such
        chosen = [r for r in status["functions"] if r["open"] and
                  (not args.function or r["function"].rsplit(".", 1)[-1] in args.function)]
        for row in chosen:
            if row["state"] == "stale":  # its survivors may not be mutants any more: the function is measured again
                print(f"proof_mutation: {row['function']} changed since the ledger measured it: its "
                      f"{len(row['open'])} survivors are not judged; measure it again with --function", file=sys.stderr)
        only = frozenset(name for row in chosen if row["state"] == "whole" for name in row["open"])
        if not only:
            print("proof_mutation: the ledger holds no survivor to judge", file=sys.stderr)
            return 0
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
            jobs += _jobs(document, args.function, not args.no_bounded, reached[document], not args.every_run, only)
        # a function is recorded in the ledger when its last mutant is judged: a run stopped part way keeps those done
        functions = {(d, f"{fn.__module__}.{fn.__name__}"): fn for d in documents for fn in pm.functions(d)}
        pending: dict[tuple[str, str], int] = {}
        for document, key, *_ in jobs:
            pending[document, key] = pending.get((document, key), 0) + 1
        judged: dict[tuple[str, str], list[pm.Outcome]] = {}
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
            if ledger is not None:
                function = (document, result["key"])
                judged.setdefault(function, []).append(outcome)
                if args.rejudge:
                    record_rejudged(ledger, document, functions[function], outcome, commit)
                    write_ledger(args.ledger, ledger)
                elif len(judged[function]) == pending[function]:  # written only when an entry changes
                    record_function(ledger, document, functions[function], judged[function], commit)
                    write_ledger(args.ledger, ledger)
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
