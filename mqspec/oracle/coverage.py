"""Clause coverage: which registered functions ran while a trace was checked.

A profiler sees every call and halves the checker's speed; only the registered functions matter.
While a :class:`ClauseCoverage` is active, each registered function (and each method of a
registered class) runs through a trampoline that notes its clause and calls the original code:
the function object keeps its identity, so every module that imported it, and every call made
from anywhere, goes through the trampoline. A function's first call is all coverage needs to
know, so the trampoline then gives the function its original code back: later calls cost
nothing. Leaving the block restores the original code everywhere.

The original code objects still run (in a copy of each function), so stack frames, clause
lookups by code object and tracebacks are unchanged; :func:`mqspec.oracle.attribution.clause_of`
reads a function's original code while it is instrumented.
"""

from __future__ import annotations

import importlib
import inspect
import linecache
import types
from typing import Any, Self

from mqspec import clauses
from mqspec.clauses import Clause

_HIT = "_mqspec_coverage_hit"
_ORIG = "_mqspec_coverage_original_"


class _Target:
    """One instrumentable function: its original code and the trampoline that replaces it."""

    __slots__ = ("clause", "code", "function", "name", "number", "trampoline")

    def __init__(self, function: types.FunctionType, number: int, clause: Clause) -> None:
        self.function = function
        self.code = function.__code__
        self.number = number
        self.clause = clause
        self.name = f"{_ORIG}{number}"
        source = (f"def {function.__name__}(*args, **kwargs):\n"
                  f"    {_HIT}({number})\n"
                  f"    return {self.name}(*args, **kwargs)\n")
        namespace: dict[str, Any] = {}
        exec(compile(source, "<mqspec coverage>", "exec"), namespace)  # noqa: S102 - fixed source above
        self.trampoline = namespace[function.__name__].__code__


_TARGETS: list[_Target] | None = None
_ACTIVE: list[ClauseCoverage] = []


def _targets() -> list[_Target]:
    """Every registered function, and every method of a registered class, that can be instrumented."""
    global _TARGETS
    if _TARGETS is not None:
        return _TARGETS
    targets: list[_Target] = []
    for c in clauses.load_all():
        obj = _registered_object(c)
        functions = [obj] if isinstance(obj, types.FunctionType) else _methods(obj) if isinstance(obj, type) else []
        for function in functions:
            if function.__closure__ is None:  # a closure's code cannot be swapped for one without cells
                targets.append(_Target(function, len(targets), c))
    _TARGETS = targets
    return targets


def _registered_object(c: Clause) -> Any:
    """The function or class registered at ``c.code`` ("refimpl/x.py:12"), found in its module.

    The line is the first decorator's; the ``def`` or ``class`` after the decorators names it.
    """
    path, _, line = c.code.rpartition(":")
    top, _, rest = path.removesuffix(".py").partition("/")
    module_name = "mqspec." + rest.replace("/", ".") if top == "mqspec" else f"mqspec.{top}.{rest.replace('/', '.')}"
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return None
    lines = linecache.getlines(str(clauses._ROOT / path))
    for text in lines[int(line) - 1:int(line) + 20]:
        words = text.replace("(", " ").replace(":", " ").split()
        if len(words) >= 2 and words[0] in ("def", "class"):
            target = getattr(module, words[1], None)
            return inspect.unwrap(target) if callable(target) else target
        if len(words) >= 3 and words[:2] == ["async", "def"]:
            return None
    return None


def _methods(cls: type) -> list[types.FunctionType]:
    out = []
    source = inspect.getsourcefile(cls)
    for value in vars(cls).values():
        function = value.__func__ if isinstance(value, classmethod | staticmethod) else value
        if isinstance(function, property):
            function = function.fget
        if isinstance(function, types.FunctionType) and function.__code__.co_filename == source:
            out.append(function)
    return out


class ClauseCoverage:
    """While active, note the clause of every registered function that runs (see the module docstring).

    Coverages nest: while an inner one is active, the clauses that run are noted in it alone (as
    before it was entered, the outer one notes what runs once the inner one is left).
    """

    def __init__(self) -> None:
        self.hits: dict[int, None] = {}

    def __enter__(self) -> Self:
        targets = _targets()
        if not _ACTIVE:
            for t in targets:
                module = t.function.__globals__
                original = types.FunctionType(t.code, module, t.function.__name__, t.function.__defaults__,
                                              t.function.__closure__)
                original.__kwdefaults__ = t.function.__kwdefaults__
                module[t.name] = original
                module[_HIT] = _hit
                t.function.__mqspec_code__ = t.code  # type: ignore[attr-defined]
        _ACTIVE.append(self)
        _instrument(targets, self.hits)
        _forget_shared_decodings()
        return self

    def __exit__(self, *exc: object) -> None:
        _ACTIVE.remove(self)
        targets = _targets()
        if _ACTIVE:  # an enclosing coverage notes the hits again, from where it was
            _instrument(targets, _ACTIVE[-1].hits)
            return
        for t in targets:
            t.function.__code__ = t.code
            del t.function.__mqspec_code__  # type: ignore[attr-defined]
            module = t.function.__globals__
            module.pop(t.name, None)
            module.pop(_HIT, None)

    def clauses(self) -> tuple[Clause, ...]:
        """The clauses whose code ran, sorted by document and section."""
        targets = _targets()
        found = {(targets[n].clause.document, targets[n].clause.section): targets[n].clause for n in self.hits}
        return tuple(found[k] for k in sorted(found, key=section_key))


def _instrument(targets: list[_Target], hits: dict[int, None]) -> None:
    """Route every target not yet in ``hits`` through its trampoline, the others to their own code."""
    for t in targets:
        t.function.__code__ = t.code if t.number in hits else t.trampoline


def _forget_shared_decodings() -> None:
    """Empty the codec's memos of decoded bytes (:func:`mqspec.model.mqdsrp.decode_shared`).

    They answer only while every decoder runs its own code, which a trampoline gives back after
    the first call: a value decoded before this coverage began would then stand in for decoder
    code that never runs in it, and what a trace exercises would depend on what the process
    checked before. Emptied, they answer only for bytes this coverage saw decoded.
    """
    from mqspec.model import mqdsrp

    for memo in (getattr(mqdsrp, "_SHARED", None), getattr(mqdsrp, "_KNOWN_CHANGES", None)):
        if memo:
            memo.clear()


def _hit(number: int) -> None:
    """A trampoline's first call: note the clause in the innermost coverage and restore the code."""
    _ACTIVE[-1].hits[number] = None
    t = _TARGETS[number]  # type: ignore[index]
    t.function.__code__ = t.code


def section_key(key: tuple[str, str]) -> tuple[str, tuple[int, ...]]:
    return key[0], tuple(int(p) if p.isdigit() else 0 for p in key[1].split("."))
