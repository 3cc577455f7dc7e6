"""Record the result of every proof obligation, in both modes, for the annotated spec.

    python tools/obligation_results.py                      # runs mqspec prove in both modes (~3 min)
    python tools/obligation_results.py CLARIFIED.json LITERAL.json   # or reads `mqspec prove --json` outputs

Writes ``docs/_data/obligations.json``: ``made_by`` (the command and the mqspec version) and, per
obligation and mode, its status (proved, violated or unknown) and whether it is trivial or vacuous. The docs build reads this file
instead of running the solver (the proofs take minutes; the build must take seconds); an
obligation added since the file was made shows as ``not run`` on its section page.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "docs" / "_data" / "obligations.json"
MODES = ("clarified", "literal")
#: what each row of `mqspec prove --json` gives that this file keeps
FIELDS = {"name", "mode", "status", "trivial", "vacuous"}


def main(argv: list[str]) -> int:
    from mqspec import __version__

    results: list[dict[str, str]] = []
    if argv:
        if len(argv) != len(MODES):
            print("obligation_results: give one `mqspec prove --json` output per mode (clarified, literal)",
                  file=sys.stderr)
            return 2
        for mode, path in zip(MODES, argv, strict=True):
            try:
                rows = json.loads(Path(path).read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                print(f"obligation_results: {path}: {exc}", file=sys.stderr)
                return 2
            if not isinstance(rows, list) or not all(isinstance(r, dict) and FIELDS <= r.keys() for r in rows) \
                    or any(r["mode"] != mode for r in rows):
                print(f"obligation_results: {path}: not a `mqspec prove --json --mode {mode}` output", file=sys.stderr)
                return 2
            results += [{"name": r["name"], "mode": mode, "status": r["status"], "trivial": r["trivial"],
                         "vacuous": r["vacuous"]} for r in rows]
        made_by = f"mqspec prove --json --mode clarified / --mode literal (mqspec {__version__})"
    else:
        from mqspec.proofs import obligations

        for mode in MODES:
            results += [{"name": r.obligation.name, "mode": mode, "status": r.status, "trivial": r.trivial,
                         "vacuous": r.vacuous} for r in obligations.run(mode, jobs=2)]
        made_by = f"tools/obligation_results.py (mqspec {__version__})"
    results.sort(key=lambda r: (r["name"], r["mode"]))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"made_by": made_by, "results": results}, indent=1) + "\n", encoding="utf-8")
    print(f"{OUT}: {len(results)} results")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
