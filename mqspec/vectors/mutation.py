"""Mutation testing of the handler vectors: do they tell a wrong implementation from the reference?

Each MC-MQDSRP handler of the vector table (:data:`mqspec.vectors.handlers.HANDLERS`) is mutated
the way a careless implementer would depart from its pseudo-code, one change at a time, with
the ``ast`` module on the handler's own source:

* ``negate``: a guard's condition is negated (``if``, ``while``, a conditional expression, a
  comprehension's ``if``);
* ``negate-operand`` / ``drop-operand``: one operand of an ``and``/``or`` is negated or left
  out ("ignores the 'is a PEC' condition");
* ``drop-then`` / ``drop-else``: the body of an ``if`` is replaced by ``pass``, or its ``else``
  (``elif``) dropped ("drops 'If queue manager is not PSC'");
* ``shift``: an ordering comparison moves its boundary by one (``<`` and ``<=``, ``>`` and
  ``>=`` swap): on sequence numbers and counts, the off-by-one.

A mutant replaces the handler's code object (``function.__code__``), so every caller (another
handler, the runner) runs the mutant; it is put back afterwards. Each mutant is then run
against the handler vectors through mqspec's own runner (:func:`mqspec.vectors.runner.check_cases`,
on a tree written to disk), restricted to the cases whose reference run calls the mutated
handler: a mutant of a handler a case never calls cannot change that case. The mutant is
*killed* when a case fails (a differing post-state, effect or return value, an exception, or
running past :data:`TIMEOUT`), *equivalent* when ``equivalent_mutants.yaml`` names it and says
why no vector can tell it apart, and a *survivor* otherwise.
"""

from __future__ import annotations

import ast
import copy
import inspect
import signal
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

import attrs
import yaml

from mqspec.wording import plural

#: seconds one mutant may run over its cases before it counts as killed (a loop that no longer ends)
TIMEOUT = 10.0

OPERATORS = ("negate", "negate-operand", "drop-operand", "drop-then", "drop-else", "shift")
_SHIFT: dict[type, type] = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}
_SYMBOL = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}


@attrs.frozen
class Mutant:
    """One change to one handler: where (the n-th site of the function), what, and its stable name."""

    module: str  # e.g. "mqdsrp_server"
    function: str
    operator: str
    site: int  # the index of the mutated node among the function's sites (ast.walk order)
    line: int  # the source line, for readers (not part of the name)
    before: str  # the code as written (one line)
    after: str  # the code of the mutant (one line)
    occurrence: int = 0  # tells apart mutants whose names would otherwise be the same

    @property
    def name(self) -> str:
        """``module.function operator: before -> after`` (plus ``#n``): stable across line moves."""
        suffix = f" #{self.occurrence}" if self.occurrence else ""
        return f"{self.module}.{self.function} {self.operator}: {self.before} -> {self.after}{suffix}"


def _one_line(node: ast.AST, limit: int = 100) -> str:
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _negated(test: ast.expr) -> ast.expr:
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return test.operand
    return ast.UnaryOp(ast.Not(), test)


def _sites(fn: ast.FunctionDef) -> Iterator[tuple[int, ast.AST]]:
    """Every node of the function a mutation can touch, numbered in ``ast.walk`` order."""
    for i, node in enumerate(ast.walk(fn)):
        if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.comprehension, ast.BoolOp, ast.Compare, ast.Call)):
            yield i, node


#: the operators every mutant set has; ``minmax`` (``min`` and ``max`` swapped) is asked for by name
#: (bench/proof_mutation.py does; the handler vectors' report keeps the set it was measured with)
EXTRA_OPERATORS = ("minmax",)
_SWAP = {"min": "max", "max": "min"}


def _edits(node: ast.AST) -> Iterator[tuple[str, str, str, Callable[[], None]]]:
    """(operator, before, after, apply) for each mutation of one site; ``apply`` edits the node in place."""
    if isinstance(node, (ast.If, ast.While, ast.IfExp)):
        keyword = {ast.If: "if", ast.While: "while", ast.IfExp: "if"}[type(node)]
        before = f"{keyword} {_one_line(node.test)}"
        yield "negate", before, f"{keyword} {_one_line(_negated(copy.deepcopy(node.test)))}", \
            lambda: setattr(node, "test", _negated(node.test))
    if isinstance(node, ast.If):
        before = f"if {_one_line(node.test)}"
        yield "drop-then", before, f"{before}: pass", lambda: setattr(node, "body", [ast.Pass()])
        if node.orelse:
            yield "drop-else", f"{before} ... else", f"{before} (no else)", lambda: setattr(node, "orelse", [])
    if isinstance(node, ast.comprehension):
        for k, cond in enumerate(node.ifs):
            yield "negate", f"for ... if {_one_line(cond)}", f"for ... if {_one_line(_negated(copy.deepcopy(cond)))}", \
                lambda k=k: node.ifs.__setitem__(k, _negated(node.ifs[k]))
    if isinstance(node, ast.BoolOp):
        word = "and" if isinstance(node.op, ast.And) else "or"
        for k, operand in enumerate(node.values):
            shown = f"{_one_line(operand, 60)} [{word} operand {k}]"
            yield "negate-operand", shown, f"not ({_one_line(operand, 60)})", \
                lambda k=k: node.values.__setitem__(k, _negated(node.values[k]))
            # dropped: the operand that changes nothing (True in an and, False in an or)
            yield "drop-operand", shown, "(dropped)", \
                lambda k=k, neutral=word == "and": node.values.__setitem__(k, ast.Constant(neutral))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _SWAP:
        other = _SWAP[node.func.id]
        yield "minmax", _one_line(node), f"{other}(...)", lambda: setattr(node.func, "id", other)
    if isinstance(node, ast.Compare):
        for k, op in enumerate(node.ops):
            if type(op) in _SHIFT:
                new = _SHIFT[type(op)]
                yield "shift", _one_line(node), f"{_SYMBOL[type(op)]} becomes {_SYMBOL[new]} (operator {k})", \
                    lambda k=k, new=new: node.ops.__setitem__(k, new())


def _function_node(source: str, function: str) -> ast.FunctionDef:
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name == function:
            return node
    raise LookupError(f"no top-level function {function}")


def _all_edits(fn: ast.FunctionDef, module: str,
               operators: tuple[str, ...] = OPERATORS) -> Iterator[tuple[Mutant, Callable[[], None]]]:
    """Every mutant of the parsed function with the callable that applies it to ``fn``, in site order."""
    seen: dict[str, int] = {}
    for site, node in _sites(fn):
        for operator, before, after, apply in _edits(node):
            if operator not in operators:
                continue
            m = Mutant(module, fn.name, operator, site, getattr(node, "lineno", fn.lineno), before, after)
            n = seen.get(m.name, 0)
            seen[m.name] = n + 1
            yield (attrs.evolve(m, occurrence=n) if n else m), apply


def _module_short(function: Callable[..., Any]) -> str:
    return function.__module__.rsplit(".", 1)[-1]


def mutants_of(function: Callable[..., Any], operators: tuple[str, ...] = OPERATORS) -> list[Mutant]:
    """Every mutant of one handler, in the order of its sites."""
    source = inspect.getsource(sys.modules[function.__module__])
    return [m for m, _ in _all_edits(_function_node(source, function.__name__), _module_short(function), operators)]


def mutant_code(function: Callable[..., Any], mutant: Mutant) -> CodeType:
    """The code object of ``function`` with ``mutant`` applied (compiled in the module's file and lines)."""
    import __future__

    module = sys.modules[function.__module__]
    fn = _function_node(inspect.getsource(module), function.__name__)
    apply = next((a for m, a in _all_edits(fn, _module_short(function), (*OPERATORS, *EXTRA_OPERATORS))
                  if m == mutant), None)
    if apply is None:
        raise LookupError(f"mutant {mutant.name} no longer applies")
    apply()
    fn.decorator_list = []
    tree = ast.fix_missing_locations(ast.Module([fn], type_ignores=[]))
    code = compile(tree, inspect.getsourcefile(module) or "<mutant>", "exec",
                   flags=__future__.annotations.compiler_flag, dont_inherit=True)
    namespace: dict[str, Any] = dict(vars(module))
    exec(code, namespace)  # noqa: S102  (our own source, changed by one node)
    return namespace[function.__name__].__code__  # type: ignore[no-any-return]


@contextmanager
def installed(function: Callable[..., Any], code: CodeType) -> Iterator[None]:
    """Run with ``function`` executing ``code``; the original code is put back afterwards."""
    original = function.__code__
    function.__code__ = code
    try:
        yield
    finally:
        function.__code__ = original


class MutantTimeout(Exception):
    """The mutant ran longer than :data:`TIMEOUT` (a loop that no longer ends)."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    def expire(signum: int, frame: FrameType | None) -> None:
        raise MutantTimeout(f"ran past {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# --- which cases call which handler ------------------------------------------------------------------


def callers_by_case(root: Path, cases: list[str], functions: list[Callable[..., Any]]) -> dict[str, set[str]]:
    """For each handler (by name), the cases whose reference run calls it."""
    import json

    from .handlers import event_modes, run_event

    codes = {f.__code__: f.__name__ for f in functions}
    reached: dict[str, set[str]] = {f.__name__: set() for f in functions}
    for case in cases:
        pre = json.loads((root / case / "pre.json").read_text())
        event = json.loads((root / case / "event.json").read_text())
        called: set[str] = set()

        def profile(frame: FrameType, what: str, arg: object, called: set[str] = called) -> None:
            if what == "call" and frame.f_code in codes:
                called.add(codes[frame.f_code])

        sys.setprofile(profile)
        try:
            for run in event_modes(event):
                run_event(pre, run)
        finally:
            sys.setprofile(None)
        for name in called:
            reached[name].add(case)
    return reached


# --- the run --------------------------------------------------------------------------------------------


@attrs.frozen
class Outcome:
    mutant: Mutant
    status: str  # killed | equivalent | survived
    killed_by: str | None = None  # the first case that failed, and how
    reason: str | None = None  # why it is equivalent (equivalent_mutants.yaml)


def equivalent_mutants() -> dict[str, str]:
    """The committed list: mutant name -> why no vector can tell it from the reference."""
    text = (resources.files("mqspec.vectors") / "equivalent_mutants.yaml").read_text(encoding="utf-8")
    entries = yaml.safe_load(text) or []
    return {e["mutant"]: textwrap.dedent(e["reason"]).strip() for e in entries}


def handler_functions() -> list[Callable[..., Any]]:
    """The MC-MQDSRP handlers of the vector table, each once, in table order."""
    from .handlers import HANDLERS

    seen: dict[str, Callable[..., Any]] = {}
    for spec in HANDLERS.values():
        seen.setdefault(spec.function.__name__, spec.function)
    return list(seen.values())


def run_mutants(root: Path, *, functions: list[Callable[..., Any]] | None = None,
                progress: Callable[[str], None] | None = None) -> list[Outcome]:
    """Generate every mutant of ``functions`` (default: every handler) and run it against the tree at ``root``."""
    import json

    from .runner import check_cases

    functions = functions if functions is not None else handler_functions()
    index = json.loads((root / "index.json").read_text())
    cases = [c["case"] for c in index["cases"] if c["kind"] == "handler"]
    reached = callers_by_case(root, cases, handler_functions())
    equivalent = equivalent_mutants()
    outcomes: list[Outcome] = []
    for function in functions:
        mine = sorted(reached[function.__name__])
        started = time.monotonic()
        for mutant in mutants_of(function):
            code = mutant_code(function, mutant)
            failures: list[Any] = []
            try:
                with installed(function, code), time_limit(TIMEOUT):
                    failures = check_cases(root, mine, first_only=True)
            except MutantTimeout as exc:
                failures = [f"(timeout) {exc}"]
            if failures:
                outcomes.append(Outcome(mutant, "killed", killed_by=str(failures[0])[:300]))
            elif mutant.name in equivalent:
                outcomes.append(Outcome(mutant, "equivalent", reason=equivalent[mutant.name]))
            else:
                outcomes.append(Outcome(mutant, "survived"))
        if progress:
            n = sum(1 for o in outcomes if o.mutant.function == function.__name__)
            progress(f"{function.__name__}: {plural(n, 'mutant')} over {plural(len(mine), 'case')} in {time.monotonic() - started:.1f} s")
    return outcomes


def report(outcomes: list[Outcome]) -> dict[str, Any]:
    """The JSON report: counts, the survivors, the equivalent mutants with their reasons, stale entries."""
    names = {o.mutant.name for o in outcomes}
    listed = equivalent_mutants()
    killed_but_listed = sorted(o.mutant.name for o in outcomes if o.status == "killed" and o.mutant.name in listed)
    return {
        "handlers": len({(o.mutant.module, o.mutant.function) for o in outcomes}),
        "mutants": len(outcomes),
        "killed": sum(o.status == "killed" for o in outcomes),
        "equivalent": sum(o.status == "equivalent" for o in outcomes),
        "survived": sum(o.status == "survived" for o in outcomes),
        "survivors": [{"mutant": o.mutant.name, "line": o.mutant.line,
                       "reason": "no vector's outcome changes (not listed as equivalent)"}
                      for o in outcomes if o.status == "survived"],
        "equivalents": [{"mutant": o.mutant.name, "line": o.mutant.line, "reason": o.reason}
                        for o in outcomes if o.status == "equivalent"],
        # entries of equivalent_mutants.yaml that no longer name a mutant, or name one a vector kills
        "stale_equivalents": sorted(set(listed) - names) + killed_but_listed,
    }
