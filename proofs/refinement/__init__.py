"""Refinement: the reference's handlers checked against the model on the states they reach.

``check`` (the World observer), ``project`` (the reference's state in the model's terms), ``campaign``
(the MC-MQDSRP runs of `mqspec prove`), ``mqsd`` and ``mqcn`` (the MS-MQSD and MS-MQCN runs),
``enterprise`` (the enterprise model's invariants on the campaign's projected states), ``exemptions`` (what is
left out, and why), ``limit`` (the CPU limit of a handler run, and what a raising run becomes), ``mutation``
(bench/proof_mutation.py's engine).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any

#: the campaign's runs, one process each: (document, mode); the MC-MQDSRP ones, the longest, first
UNITS = tuple((document, mode) for document in ("MC-MQDSRP", "MS-MQSD", "MS-MQCN") for mode in ("clarified", "literal"))


def start(pool: Executor | None, profile: str = "default", *, log: Any = None) -> Callable[[], list[Any]]:
    """Start the refinement rows of `mqspec prove` in ``pool`` (the one the obligations use, so that the
    campaign and the obligations share its processes): every handler and mode of the three documents, and each
    document's branch row. The result is a function that waits for them; with no pool, it runs them then."""
    units = [(document, mode, profile, log is not None) for document, mode in UNITS]
    if pool is None:
        return lambda: _assemble(units, [_run_unit(u, log) for u in units])
    futures = [pool.submit(_run_unit, u) for u in units]
    return lambda: _assemble(units, [f.result() for f in futures])


def _run_unit(unit: tuple[str, str, str, bool], log: Any = None) -> tuple[list[Any], set[tuple[str, int]]]:
    """One document's campaign in one mode: its rows and the handler lines it reached. In a pool's process,
    progress lines go to stderr (the parent's log cannot cross the process boundary)."""
    from . import campaign, mqcn, mqsd

    document, mode, profile, progress = unit
    if document == "MC-MQDSRP":
        return campaign.run(mode, profile, log=log or (campaign.progress_to_stderr if progress else None))
    return (mqsd if document == "MS-MQSD" else mqcn).run(mode, profile)


def _assemble(units: list[tuple[str, str, str, bool]], outcomes: list[tuple[list[Any], set[tuple[str, int]]]]) -> list[Any]:
    """The rows of every unit, each document's followed by its branch row (over the lines of both modes)."""
    from . import campaign, mqcn, mqsd

    branch_rows = {"MC-MQDSRP": lambda lines, steps: campaign.branch_row("MC-MQDSRP", campaign.MODULES, lines, steps),
                   "MS-MQSD": mqsd.branch_row, "MS-MQCN": mqcn.branch_row}
    rows: list[Any] = []
    for document, row in branch_rows.items():
        rows += campaign.joined([outcome for (unit_document, *_), outcome in zip(units, outcomes, strict=True)
                                 if unit_document == document], row)
    return rows
