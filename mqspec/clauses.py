"""The clause registry: which code implements which section of which document.

Code registers with the :func:`clause` decorator; tests name the clause they check with
``covers(document, section)`` (found by reading the test files, so the registry never
imports the test suite). ``mqspec clauses --json`` prints the joined view.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

import attrs

F = TypeVar("F", bound=Callable[..., Any])

#: modules whose import registers every clause (extended as protocol chapters land)
REGISTERED_MODULES: tuple[str, ...] = (
    "mqspec.model.mqdsrp",
    "mqspec.model.mqsd",
    "mqspec.model.mqcn",
    "mqspec.model.query",
    "mqspec.capture.scan",
    "mqspec.model.seqnum",
    "mqspec.model.propids",
    "mqspec.refimpl.transport",
    "mqspec.refimpl.mqdsrp_common",
    "mqspec.refimpl.mqdsrp_objects",
    "mqspec.refimpl.mqdsrp_server",
    "mqspec.refimpl.mqdsrp_client",
    "mqspec.refimpl.mqsd_client",
    "mqspec.refimpl.mqsd_server",
    "mqspec.refimpl.mqcn_state",
    "mqspec.refimpl.mqcn_server",
    "mqspec.refimpl.mqcn_client",
    "mqspec.refimpl.notify",
)

_ROOT = Path(__file__).resolve().parent.parent


@attrs.frozen
class Clause:
    """One registered implementation of a section."""

    document: str
    section: str
    title: str
    code: str  # "path:line", relative to the repository root


_REGISTRY: dict[tuple[str, str], Clause] = {}


def clause(document: str, section: str, title: str) -> Callable[[F], F]:
    """Register the decorated function or class as the implementation of ``document`` ``section``."""

    def register(obj: F) -> F:
        target = inspect.unwrap(obj)
        path = Path(inspect.getsourcefile(target) or "?").resolve()
        try:
            where = path.relative_to(_ROOT).as_posix()
        except ValueError:
            where = path.name
        line = inspect.getsourcelines(target)[1]
        key = (document, section)
        if key in _REGISTRY and _REGISTRY[key].code != f"{where}:{line}":
            raise ValueError(f"{document} {section} registered twice: {_REGISTRY[key].code}")
        _REGISTRY[key] = Clause(document, section, title, f"{where}:{line}")
        return obj

    return register


def load_all() -> list[Clause]:
    """Import every registered module and return the clauses sorted by document and section."""
    for name in REGISTERED_MODULES:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
    return sorted(_REGISTRY.values(), key=lambda c: (c.document, _section_key(c.section)))


def _section_key(section: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else 0 for p in section.split("."))


def test_references(tests_dir: Path | None = None) -> dict[tuple[str, str], list[str]]:
    """Map (document, section) to the tests that call ``covers(document, section)``."""
    tests_dir = tests_dir or _ROOT / "tests"
    found: dict[tuple[str, str], list[str]] = {}
    for path in sorted(tests_dir.rglob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.ClassDef):
                continue
            for deco in node.decorator_list:
                for key in _covers_args(deco):
                    rel = path.relative_to(tests_dir.parent).as_posix()
                    found.setdefault(key, []).append(f"{rel}::{node.name}")
    return found


def _covers_args(deco: ast.expr) -> Iterable[tuple[str, str]]:
    if (
        isinstance(deco, ast.Call)
        and getattr(deco.func, "id", getattr(deco.func, "attr", None)) == "covers"
        and len(deco.args) >= 2
        and all(isinstance(a, ast.Constant) for a in deco.args[:2])
    ):
        yield (deco.args[0].value, deco.args[1].value)


def tests_available() -> bool:
    """True in a source checkout; an installed mqspec has no tests/ to count (its ``site-packages``
    may hold another project's ``tests``, hence the check for the checkout's pyproject.toml)."""
    return (_ROOT / "pyproject.toml").is_file() and (_ROOT / "tests").is_dir()


def report() -> list[dict[str, Any]]:
    """The joined view printed by ``mqspec clauses --json``; ``tests`` is None without a source checkout."""
    tests = test_references() if tests_available() else None
    return [
        {**attrs.asdict(c), "tests": tests.get((c.document, c.section), []) if tests is not None else None}
        for c in load_all()
    ]


def covers(document: str, section: str) -> Callable[[F], F]:
    """Mark a test as checking ``document`` ``section`` (read statically by :func:`report`)."""

    def mark(fn: F) -> F:
        fn.__dict__.setdefault("covers", []).append((document, section))
        return fn

    return mark
