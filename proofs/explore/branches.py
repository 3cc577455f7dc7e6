"""Which branches of the MC-MQDSRP handlers a run reached: the clause and branch counts of bench/stateful.py.

A *branch* is a block of statements a handler runs or skips as a whole: a function's body, and
each body of an ``if`` / ``elif`` / ``else``, ``for`` / ``while`` (and their ``else``), ``try``
(its handlers, ``else`` and ``finally``) and ``with`` inside it. It is reached when its first
statement runs. Branches are counted per function of the handler modules and, for a function
registered with ``@clause``, per clause (MC-MQDSRP section). :class:`Reach` records the lines
that run (``sys.settrace``, handler modules only) while it is active; :func:`vector_reach` is what
the handler vectors reach (:mod:`mqspec.vectors.handlers`), the measure a workload is held to.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable
from pathlib import Path
from types import FrameType
from typing import Any

import attrs

REFIMPL = Path(__file__).resolve().parents[2] / "refimpl"
HANDLER_MODULES = ("mqdsrp_common.py", "mqdsrp_objects.py", "mqdsrp_server.py", "mqdsrp_client.py")
#: the fields of a compound statement that hold a block of statements
_BLOCKS = ("body", "orelse", "finalbody")


@attrs.frozen(order=True)
class Branch:
    """One block of a handler module: where its first statement is, the function and its clause."""

    module: str
    line: int
    function: str
    section: str | None  # the @clause section of the function, if it has one
    text: str  # the first statement's first line

    def __str__(self) -> str:
        where = f"{self.section} " if self.section else ""
        return f"{self.module}:{self.line} {where}{self.function}: {self.text}"


def _section(fn: ast.FunctionDef) -> str | None:
    for deco in fn.decorator_list:
        if (isinstance(deco, ast.Call) and getattr(deco.func, "id", None) == "clause" and len(deco.args) >= 2
                and isinstance(deco.args[1], ast.Constant)):
            return str(deco.args[1].value)
    return None


def _first(block: list[ast.stmt]) -> ast.stmt | None:
    for node in block:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # a docstring runs nothing
        return node
    return None


def module_branches(path: Path) -> list[Branch]:
    """Every branch of the functions in one module, in line order."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    found: list[Branch] = []
    for fn in ast.walk(ast.parse(source)):
        if not isinstance(fn, ast.FunctionDef):
            continue
        section = _section(fn)
        blocks: list[list[ast.stmt]] = [fn.body]
        for node in ast.walk(fn):
            if node is fn or isinstance(node, ast.FunctionDef):
                continue
            blocks.extend(getattr(node, f) for f in _BLOCKS if isinstance(getattr(node, f, None), list))
            if isinstance(node, ast.Try):
                blocks.extend(h.body for h in node.handlers)
        for block in blocks:
            first = _first(block)
            if first is not None and _owner(fn, first) is fn:
                found.append(Branch(path.name, first.lineno, fn.name, section, lines[first.lineno - 1].strip()))
    return sorted(set(found))


def _owner(fn: ast.FunctionDef, stmt: ast.stmt) -> ast.FunctionDef:
    """The innermost function of ``fn`` (itself or a nested one) whose lines hold ``stmt``."""
    for node in ast.walk(fn):
        if isinstance(node, ast.FunctionDef) and node is not fn and node.lineno < stmt.lineno <= (node.end_lineno or 0):
            return node
    return fn


def handler_branches() -> list[Branch]:
    """The branches of every handler module."""
    return [b for name in HANDLER_MODULES for b in module_branches(REFIMPL / name)]


class Reach:
    """The handler lines that run while active (``with Reach() as r: ...``; then ``r.reached(branches)``)."""

    def __init__(self) -> None:
        self.files = {str(REFIMPL / name): name for name in HANDLER_MODULES}
        self.lines: set[tuple[str, int]] = set()
        self._previous: Any = None

    def _trace(self, frame: FrameType, event: str, arg: object) -> Any:
        name = self.files.get(frame.f_code.co_filename)
        if name is None:
            return None
        lines = self.lines

        def local(frame: FrameType, event: str, arg: object) -> Any:
            if event == "line":
                lines.add((name, frame.f_lineno))
            return local

        return local

    def __enter__(self) -> Reach:
        self._previous = sys.gettrace()
        sys.settrace(self._trace)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.settrace(self._previous)

    def reached(self, branches: Iterable[Branch]) -> set[Branch]:
        return {b for b in branches if (b.module, b.line) in self.lines}


def vector_reach(mode: Any) -> set[Branch]:
    """The branches the handler vectors of ``mode`` (a refimpl Mode) reach."""
    from mqspec.vectors.handlers import all_situations, build_vector, run_event

    built = [build_vector(s, mode) for s in all_situations()]
    with Reach() as reach:
        for vector in built:
            run_event(vector.pre, vector.event)
    return reach.reached(handler_branches())


def summary(reached: set[Branch], against: set[Branch] | None = None) -> dict[str, Any]:
    """Clause and branch counts of ``reached``; with ``against``, the branches of it not reached."""
    branches = handler_branches()
    clauses = {b.section for b in branches if b.section}
    out: dict[str, Any] = {
        "branches": len(branches), "branches_reached": len(reached),
        "clauses": len(clauses), "clauses_reached": len({b.section for b in reached if b.section}),
    }
    if against is not None:
        missed = sorted(against - reached)
        out.update(vector_branches=len(against), vector_branches_missed=len(missed),
                   missed=[str(b) for b in missed])
    return out
