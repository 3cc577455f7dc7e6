"""Mutation testing of the proofs: does `mqspec prove` fail when a handler of the reference is wrong?

Every function of the handler modules (MC-MQDSRP: refimpl/mqdsrp_*.py and the MQDS server of
refimpl/mqds.py; MS-MQSD: refimpl/mqsd_server.py, mqsd_client.py; MS-MQCN: refimpl/mqcn_server.py,
mqcn_dmpr.py) is mutated one change at a time as :mod:`mqspec.vectors.mutation` mutates handlers
for the vectors (a condition negated, an operand of ``and``/``or`` negated or dropped, a branch
dropped, an ordering comparison shifted by one) and, here too, ``min`` and ``max`` swapped. Each
mutant is installed in place of the function (every caller runs it) and the rows of `mqspec prove`
that run reference code are computed with it:

* ``refinement``: the campaign of the mutated document (:mod:`mqspec.proofs.refinement.campaign`
  for MC-MQDSRP, :mod:`~mqspec.proofs.refinement.mqsd`, :mod:`~mqspec.proofs.refinement.mqcn`),
  both modes, stopping at the first departure; a row ``violated`` (a departure) makes `mqspec prove`
  exit 1 (a handler or branch no longer reached is a gap prove prints, not a failure);
* ``bounded``: bounded model checking on the simulator (:mod:`mqspec.proofs.bmc`), for the
  MC-MQDSRP mutants the campaign did not catch;
* ``per-server`` and ``enterprise`` (the Z3 obligations) read no reference code (their modules import
  nothing from refimpl), so no mutant changes them: they are not run per mutant.

For MC-MQDSRP, :func:`baseline` records which handler lines each of the campaign's runs (a scenario file, a seed)
and the bounded runs reach on the unmutated reference, and a mutant is judged on the runs that reached the statement
it changes (:func:`statement_lines`, :func:`selection`): the others execute the same code with it installed and
cannot depart.

A mutant the rows do not catch is a survivor, unless ``equivalent_mutants.yaml`` (beside this
module) names it and says why it behaves as the reference on every state a conforming enterprise
reaches.
"""

from __future__ import annotations

import importlib
import inspect
import textwrap
from collections.abc import Callable, Iterator
from importlib import resources
from typing import Any

import attrs
import yaml

from mqspec.vectors import mutation as vm

OPERATORS = (*vm.OPERATORS, *vm.EXTRA_OPERATORS)
#: document -> the refimpl modules of its handlers
DOCUMENTS: dict[str, tuple[str, ...]] = {
    "MC-MQDSRP": ("mqdsrp_common", "mqdsrp_objects", "mqdsrp_server", "mqdsrp_client", "mqds"),
    "MS-MQSD": ("mqsd_server", "mqsd_client"),
    "MS-MQCN": ("mqcn_server", "mqcn_dmpr"),
}
#: seconds a mutant's rows may take before it counts as a timeout (`mqspec prove` would not finish)
TIMEOUT = 1800.0


#: functions of the handler modules that no handler runs, with why: mutating them changes the inputs the simulator
#: gives the handlers, which the check takes as they come (`mqspec prove` checks handlers, not the environment)
ENVIRONMENT: dict[str, str] = {
    "mqds.default_scope": "the scope the simulated directory client puts in its request (E-183): the World, "
    "the scenario runner, the explorer's driver and the oracle's inputs call it to build a ClientRequest; no "
    "handler does",
}


def functions(document: str) -> list[Callable[..., Any]]:
    """The functions of ``document``'s handler modules that the campaign covers, in module order (less
    :data:`ENVIRONMENT`)."""
    from . import mqcn, mqsd

    only = {"MS-MQSD": mqsd.FUNCTIONS, "MS-MQCN": mqcn.FUNCTIONS}.get(document)
    out = []
    for name in DOCUMENTS[document]:
        module = importlib.import_module(f"mqspec.refimpl.{name}")
        for fname, fn in inspect.getmembers(module, inspect.isfunction):
            if fn.__module__ == module.__name__ and (only is None or fname in only) \
                    and f"{name}.{fname}" not in ENVIRONMENT:
                out.append(fn)
    return sorted(out, key=lambda f: (f.__module__, f.__code__.co_firstlineno))


def mutants(document: str) -> Iterator[tuple[Callable[..., Any], vm.Mutant]]:
    for fn in functions(document):
        for mutant in vm.mutants_of(fn, OPERATORS):
            yield fn, mutant


@attrs.frozen
class Outcome:
    document: str
    mutant: str
    line: int
    status: str  # caught | equivalent | survived | timeout
    caught_by: tuple[str, ...] = ()  # the row kinds that failed: refinement, bounded
    rows: tuple[str, ...] = ()  # the failing rows (name, mode, status)
    reason: str | None = None  # why it is equivalent
    seconds: float = 0.0
    #: the campaign's runs (and bounded runs) that ran with it installed, to its first departure, and those the
    #: baseline recorded
    runs: tuple[int, int] = (0, 0)


def equivalent_mutants() -> dict[str, str]:
    """The committed list: mutant name -> why it behaves as the reference on every reachable state."""
    text = (resources.files("mqspec.proofs.refinement") / "equivalent_mutants.yaml").read_text(encoding="utf-8")
    return {e["mutant"]: textwrap.dedent(e["reason"]).strip() for e in (yaml.safe_load(text) or [])}


def refinement_rows(document: str, profile: str = "default", selection: Any = None) -> list[Any]:
    """The campaign rows of ``document`` in both modes, stopping at the first departure (for MC-MQDSRP, only the
    runs ``selection`` wants: a :class:`.campaign.Selection`)."""
    from . import campaign, mqcn, mqsd
    from mqspec.proofs.explore import machine as em

    rows: list[Any] = []
    if document == "MC-MQDSRP":
        em._BUILT.clear()  # built enterprises are cached per machine class: a mutant must build its own
        # in this process (jobs=1): the mutant is installed here only, and a judging worker may have no children
        return campaign.rows(profile, stop_at_first=True, shrink=False, jobs=1, selection=selection)
    runner = {"MS-MQSD": mqsd, "MS-MQCN": mqcn}[document]
    lines: set[tuple[str, int]] = set()
    for mode in ("clarified", "literal"):
        found, reached = runner.run(mode, profile, stop_at_first=True)
        rows += found
        lines |= reached
        if any(r.status == "violated" for r in found):
            return rows
    rows.append(runner.branch_row(lines, 0))
    return rows


def bounded_rows(selection: Any = None) -> list[Any]:
    """The bounded model checking rows of both modes (with a ``selection``: only if it wants the run named
    ``bounded``, and recording the handler lines they reach under that name when it records)."""
    from mqspec.proofs import bmc

    from . import campaign

    def rows() -> list[Any]:
        return [r for mode in ("clarified", "literal") for r in bmc.run(mode, jobs=1)]  # here, as refinement_rows

    if selection is None:
        return rows()
    if not selection.record:  # tracing would only slow the runs down: nobody reads their lines
        if not selection.wanted("bounded"):
            selection.skipped.append("bounded")
            return []
        selection.reached["bounded"] = set()
        return rows()
    tracer = campaign.Tracer()
    with tracer, selection.run("bounded", tracer) as wanted:
        return rows() if wanted else []


def failing_rows(document: str, profile: str = "default", bounded: bool = True,
                 selection: Any = None) -> list[tuple[str, str]]:
    """The rows that would make `mqspec prove` exit 1 with the code as installed now, each as (row kind, "name
    (mode): status"): the refinement campaign's departures (unreached handlers and branches are printed gaps, not
    failures), its enterprise invariants that fail on a projected state (kind ``enterprise``, campaign.py's
    ``enterprise-`` rows) and, for MC-MQDSRP when the campaign found none, the bounded runs that are not proved.
    ``selection`` (MC-MQDSRP): the runs to run, and where to record the lines each reached."""
    bad = _departures(refinement_rows(document, profile, selection))
    if not bad and bounded and document == "MC-MQDSRP":
        bad = _not_proved(bounded_rows(selection))
    return bad


def _departures(rows: list[Any]) -> list[tuple[str, str]]:
    """The campaign's violated rows, each as (kind, "name (mode): status"): kind ``enterprise`` for its
    ``enterprise-`` rows, ``refinement`` for the others."""
    return [("enterprise" if r.obligation.name.startswith("enterprise-") else "refinement", _shown(r))
            for r in rows if r.status == "violated"]


def _not_proved(rows: list[Any]) -> list[tuple[str, str]]:
    return [("bounded", _shown(r)) for r in rows if r.status != "proved"]


def _shown(row: Any) -> str:
    return f"{row.obligation.name} ({row.obligation.mode}): {row.status}"


def statement_lines(fn: Callable[..., Any], mutant: vm.Mutant) -> set[tuple[str, int]]:
    """The lines, as the campaign's tracer names them (file name, line), of the innermost statement of ``fn`` that
    holds the mutant's line. A run that reached none of them never ran the statement the mutant changes: with the
    mutant installed it runs the same code, and cannot depart where the reference does not."""
    import ast

    module = inspect.getmodule(fn)
    assert module is not None and module.__file__ is not None
    tree = ast.parse(inspect.getsource(module))
    holders = [node for node in ast.walk(tree) if isinstance(node, ast.stmt)
               and node.lineno <= mutant.line <= (node.end_lineno or node.lineno)
               and fn.__code__.co_firstlineno <= node.lineno]
    inner = max(holders, key=lambda node: node.lineno - (node.end_lineno or node.lineno), default=None)
    first, last = (inner.lineno, inner.end_lineno or inner.lineno) if inner else (mutant.line, mutant.line)
    name = module.__file__.rsplit("/", 1)[-1]
    return {(name, line) for line in range(first, last + 1)}


def selection(reached: dict[str, set[tuple[str, int]]], lines: set[tuple[str, int]]) -> Any:
    """The campaign's runs (and the bounded runs) a mutant of ``lines`` is judged on: those that reached one of the
    lines on the reference (``reached``: what the :func:`baseline` recorded), and any run the baseline did not
    record."""
    from . import campaign

    return campaign.Selection(wanted=lambda name: name not in reached or bool(reached[name] & lines), record=False)


def row_key(row: str) -> str:
    """A failing row without its status: "name (mode)"."""
    return row.rsplit(": ", 1)[0]


#: the parts of a document's baseline that can run apart (in parallel): MC-MQDSRP's two campaign modes and its
#: bounded runs; the other documents' campaigns take seconds, in one part
PARTS: dict[str, tuple[str, ...]] = {"MC-MQDSRP": ("clarified", "literal", "bounded")}


def baseline(document: str, profile: str = "default", bounded: bool = True,
             record: Any = None, part: str | None = None) -> list[tuple[str, str]]:
    """The rows that fail on the unmutated reference. No refinement row may (the campaign is clean in both
    modes, or no departure would mean anything); bounded rows may: literal mode's bounded runs find the
    literal reading's violations, and a mutant is caught by a row only where the reference passes it. An
    exception here is the harness's own (no mutant is installed): it propagates, and is never a catch.
    ``record``: a :class:`.campaign.Selection` that wants every run, where each run's lines are recorded.
    ``part``: one of :data:`PARTS` only (a mode's campaign, or the bounded runs), for MC-MQDSRP."""
    if part is None:
        return failing_rows(document, profile, bounded, record)
    if part == "bounded":
        return _not_proved(bounded_rows(record)) if bounded else []
    from . import campaign
    from mqspec.proofs.explore import machine as em

    em._BUILT.clear()
    return _departures(campaign.run(part, profile, stop_at_first=True, shrink=False, selection=record)[0])


def run_mutant(document: str, fn: Callable[..., Any], mutant: vm.Mutant, profile: str = "default",
               bounded: bool = True, selection: Any = None) -> list[tuple[str, str]] | None:
    """:func:`failing_rows` with ``mutant`` of ``fn`` installed (None: it ran past :data:`TIMEOUT`), on the runs
    ``selection`` wants (all by default). An exception is a failing row too (the mutated handler made prove itself
    fail): meaningful only once the :func:`baseline` ran without one."""
    try:
        with vm.installed(fn, vm.mutant_code(fn, mutant)), vm.time_limit(TIMEOUT):
            return failing_rows(document, profile, bounded, selection)
    except vm.MutantTimeout:
        return None
    except Exception as exc:  # noqa: BLE001 - a mutant that makes prove itself fail is caught too
        return [("refinement", f"prove fails: {type(exc).__name__}: {str(exc)[:200]}")]


def classify(document: str, name: str, line: int, failing: list[tuple[str, str]], known: frozenset[str],
             equivalent: dict[str, str], seconds: float) -> Outcome:
    """A mutant's outcome from the rows that failed with it installed (:func:`run_mutant`), less those the reference
    fails too (``known``: their :func:`row_key`, from its :func:`baseline`)."""
    new = [(kind, row) for kind, row in failing if row_key(row) not in known]
    if new:
        kinds = tuple(dict.fromkeys(kind for kind, _ in new))
        return Outcome(document, name, line, "caught", kinds, tuple(row for _, row in new[:5]), seconds=seconds)
    if name in equivalent:
        return Outcome(document, name, line, "equivalent", reason=equivalent[name], seconds=seconds)
    return Outcome(document, name, line, "survived", seconds=seconds)


def report(outcomes: list[Outcome], listed: dict[str, str]) -> dict[str, Any]:
    """The JSON report: counts, caught per row kind, survivors, equivalents with their reasons, stale entries."""
    caught = [o for o in outcomes if o.status == "caught"]
    names = {o.mutant for o in outcomes}
    return {
        "mutants": len(outcomes),
        "caught": len(caught),
        "caught_by": {kind: sum(kind in o.caught_by for o in caught)
                      for kind in ("refinement", "bounded", "per-server", "enterprise")},
        "not_mutated": dict(ENVIRONMENT),
        "not_run_per_mutant": {"per-server": "the Z3 obligations import nothing from refimpl: no mutant changes them",
                               "enterprise": "the enterprise obligations import nothing from refimpl (the enterprise "
                                             "invariants on the campaign's projected states are run: kind enterprise)"},
        "equivalent": sum(o.status == "equivalent" for o in outcomes),
        "survived": sum(o.status == "survived" for o in outcomes),
        "timeouts": sum(o.status == "timeout" for o in outcomes),
        "by_document": {d: {s: sum(o.document == d and o.status == s for o in outcomes)
                            for s in ("caught", "equivalent", "survived", "timeout")} for d in DOCUMENTS},
        # runs [0, n]: no run reached the mutated statement on the reference
        "survivors": [{"mutant": o.mutant, "line": o.line, "equivalent": False, "runs": list(o.runs)}
                      for o in outcomes if o.status == "survived"],
        "runs": {"judged": sum(o.runs[0] for o in outcomes), "recorded": sum(o.runs[1] for o in outcomes)},
        "equivalents": [{"mutant": o.mutant, "line": o.line, "equivalent": True, "reason": o.reason}
                        for o in outcomes if o.status == "equivalent"],
        "stale_equivalents": sorted(n for n in listed if n not in names
                                    or any(o.mutant == n and o.status == "caught" for o in outcomes)),
        "caught_rows": [{"mutant": o.mutant, "by": list(o.caught_by), "rows": list(o.rows)} for o in caught],
    }
