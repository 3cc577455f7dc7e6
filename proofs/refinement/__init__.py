"""Refinement: the reference's handlers checked against the model on the states they reach.

``check`` (the World observer), ``project`` (the reference's state in the model's terms), ``campaign``
(the MC-MQDSRP runs of `mqspec prove`), ``mqsd`` and ``mqcn`` (the MS-MQSD and MS-MQCN runs),
``exemptions`` (what is left out, and why), ``mutation`` (bench/proof_mutation.py's engine).
"""

from __future__ import annotations

from typing import Any


def all_rows(profile: str = "default", *, log: Any = None, jobs: int = 2) -> list[Any]:
    """The refinement rows of `mqspec prove`: every handler and mode of the three documents, and each
    document's branch row."""
    from . import campaign, mqcn, mqsd

    rows = campaign.rows(profile, log=log, jobs=jobs)
    for runner in (mqsd, mqcn):
        lines: set[tuple[str, int]] = set()
        steps = 0
        for mode in ("clarified", "literal"):
            found, reached = runner.run(mode, profile)
            rows += found
            lines |= reached
            steps += max((r.detail or {}).get("steps", 0) for r in found)
        rows.append(runner.branch_row(lines, steps))
    return rows
