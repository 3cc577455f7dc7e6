"""Do the handler vectors tell a wrong MC-MQDSRP implementation from the reference?

Writes the handler vectors to a temporary tree (``mqspec vectors --kinds handler``), mutates the
guards of every MC-MQDSRP handler one at a time (:mod:`mqspec.vectors.mutation`: a negated
condition, a dropped operand or branch, a comparison shifted by one) and runs each mutant against
the vectors through mqspec's own runner. Prints (with ``--json``)::

    {"handlers", "mutants", "killed", "equivalent", "survived", "survivors": [{"mutant", "line", "reason"}],
     "equivalents": [{"mutant", "line", "reason"}], "stale_equivalents": [...], "handler_cases", "seconds"}

A survivor is a mutant no vector tells apart that ``mqspec/vectors/equivalent_mutants.yaml`` does
not list as equivalent; ``stale_equivalents`` are entries of that file that name no mutant or one a
vector kills. Exit status 0 when there is neither, 1 otherwise. Seconds are wall-clock.

    python bench/vector_mutation.py --json [--handler NAME ...] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    from mqspec.vectors import mutation
    from mqspec.vectors.writer import OutputError, check_output, generate

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the whole report as JSON")
    parser.add_argument("--handler", action="append", default=[], metavar="NAME",
                        help="mutate only this handler (repeatable; default: every MC-MQDSRP handler)")
    parser.add_argument("--keep", metavar="DIR", help="write the handler vectors here and keep them")
    args = parser.parse_args(argv)
    functions = mutation.handler_functions()
    if args.handler:
        unknown = sorted(set(args.handler) - {f.__name__ for f in functions})
        if unknown:
            print(f"vector_mutation: no handler {', '.join(unknown)}", file=sys.stderr)
            return 2
        functions = [f for f in functions if f.__name__ in args.handler]
    if args.keep:
        try:  # now, not after the minute the vectors take to build
            check_output(Path(args.keep))
            Path(args.keep).mkdir(parents=True, exist_ok=True)
        except (OutputError, OSError) as exc:
            print(f"vector_mutation: --keep {args.keep}: {getattr(exc, 'strerror', None) or exc}", file=sys.stderr)
            return 2
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mqspec-mutation-") as tmp:
        root = Path(args.keep or tmp) / ("" if args.keep else "tree")
        index = generate(root, ("handler",))
        outcomes = mutation.run_mutants(root, functions=functions,
                                        progress=None if args.json else lambda line: print(line, file=sys.stderr))
    result = mutation.report(outcomes)
    if args.handler:  # a partial run cannot tell which listed equivalents are stale
        result["stale_equivalents"] = [n for n in result["stale_equivalents"]
                                       if any(n.split(" ", 1)[0].endswith("." + h) for h in args.handler)]
    result["handler_cases"] = index["counts"]["handler"]
    result["seconds"] = round(time.monotonic() - started, 1)
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print(f"{result['mutants']} mutants of {result['handlers']} handlers: {result['killed']} killed, "
              f"{result['equivalent']} equivalent, {result['survived']} survived ({result['seconds']} s)")
        for s in result["survivors"]:
            print(f"  survivor: {s['mutant']} (line {s['line']})")
        for name in result["stale_equivalents"]:
            print(f"  stale equivalent entry: {name}")
    return 0 if not result["survivors"] and not result["stale_equivalents"] else 1


if __name__ == "__main__":
    sys.exit(main())
