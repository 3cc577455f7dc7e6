"""Which register entries a handler vector rests on, and which make its two readings differ.

A handler of ``refimpl/`` departs from the literal text where it tests the reading (``ctx.clarified``
or ``ctx.literal``), and the code names the register entry beside the test (``# clarification
E-NNN`` on the line, in the comment block just above it, or in the comment that opens its branch):
:func:`mode_tests` finds every such test and its entries, and refuses one that names none. When a
situation's two readings give different outcomes, :func:`differing_entries` names the entries the
clarified run reports itself (a ``Clarified`` effect) and, from a line tracer on ``refimpl/`` in
both runs, those of the tests that read the state and took a different way in the two runs (a test
followed by another line in one run than in the other). A test on the reading alone (``if
ctx.clarified:``) takes a different way in every pair, so its entries are named only when nothing
more telling is found; when no test branched apart (the test sits inside an expression, ``x if
ctx.clarified else y``), every test either run passed is named: the readings differ, so one of them
made it.

:func:`resting_entries` names what a run rests on whatever the reading: the register entry an
effect carries (an MS-MQSD ``PacketDiscarded`` of a malformed datagram rests on policy E-211).
"""

from __future__ import annotations

import ast
import io
import re
import sys
import tokenize
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from types import FrameType
from typing import Any

from mqspec import memos

_ENTRY = re.compile(r"\bE-\d{3}\b")
#: the attributes of a Context that test the reading
_MODE_ATTRIBUTES = frozenset({"clarified", "literal"})
REFIMPL = Path(__file__).resolve().parent.parent.parent / "refimpl"


def _comments(source: str) -> dict[int, str]:
    """Line number -> the comment on that line."""
    out: dict[int, str] = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            out[tok.start[0]] = tok.string
    return out


def _tests_in(tree: ast.AST) -> dict[int, bool]:
    """Line -> whether the reading test there is *pure*: a branch on the reading alone (``if ctx.clarified:``,
    ``x if ctx.literal else y``, ``lenient=ctx.clarified``), taken differently by the two readings whatever
    the state; a test that also reads the state (``if ctx.clarified and ...``) is not pure."""
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found: dict[int, bool] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in _MODE_ATTRIBUTES and isinstance(node.value, ast.Name) \
                and node.value.id == "ctx":
            parent = parents.get(node)
            if isinstance(parent, ast.UnaryOp):
                node, parent = parent, parents.get(parent)
            pure = not isinstance(parent, ast.BoolOp | ast.Compare)
            found[node.lineno] = found.get(node.lineno, True) and pure
    return found


@cache
def mode_tests(folder: Path = REFIMPL) -> dict[tuple[str, int], tuple[str, ...]]:
    """(file name, line) of every reading test in ``folder`` -> the register entries the code names for it.

    ValueError for a test that names none (a departure from the text must say which entry it implements).
    """
    return {place: entries for place, (entries, _) in _mode_tests(folder).items()}


@cache
def pure_tests(folder: Path = REFIMPL) -> frozenset[tuple[str, int]]:
    """The reading tests of ``folder`` that branch on the reading alone (see :func:`_tests_in`)."""
    return frozenset(place for place, (_, pure) in _mode_tests(folder).items() if pure)


@cache
def _mode_tests(folder: Path) -> dict[tuple[str, int], tuple[tuple[str, ...], bool]]:
    out: dict[tuple[str, int], tuple[tuple[str, ...], bool]] = {}
    missing = []
    for path in sorted(folder.glob("*.py")):
        source = path.read_text(encoding="utf-8")
        comments = _comments(source)
        lines = source.splitlines()
        for line, pure in sorted(_tests_in(ast.parse(source)).items()):
            entries = _entries_near(line, comments, lines)
            if not entries:
                missing.append(f"{path.name}:{line}")
            out[(path.name, line)] = (entries, pure)
    if missing:
        raise ValueError("reading tests that name no register entry: " + ", ".join(missing))
    return out


def _entries_near(line: int, comments: dict[int, str], lines: list[str]) -> tuple[str, ...]:
    """The entries named on ``line``, in the comment block just above it, or in the comments that open
    its branch (the lines below it up to the first line of code)."""
    found: list[str] = []
    found += _ENTRY.findall(comments.get(line, ""))
    above = line - 1
    while above >= 1 and lines[above - 1].strip().startswith("#"):
        found += _ENTRY.findall(lines[above - 1])
        above -= 1
    below = line + 1
    while below <= len(lines) and (not lines[below - 1].strip() or lines[below - 1].strip().startswith("#")
                                   or _continues(lines[below - 2])):
        found += _ENTRY.findall(comments.get(below, ""))
        below += 1
    return tuple(dict.fromkeys(found))


memos.register_cache(_mode_tests, "the reference's reading tests and their register entries, from refimpl/'s source")
memos.register_cache(mode_tests, "as _mode_tests: the entries of each reading test")
memos.register_cache(pure_tests, "as _mode_tests: the tests on the reading alone")


def _continues(previous: str) -> bool:
    """Whether the line after ``previous`` continues its statement (an open bracket or a trailing operator)."""
    code = previous.split("#")[0].rstrip()
    return code.count("(") > code.count(")") or code.endswith(("and", "or", "\\", ",", "("))


def traced(run: Callable[[], Any]) -> tuple[Any, dict[tuple[str, int], set[tuple[str, int]]]]:
    """``run()``'s result and, for each reading test it passed, the lines that followed it."""
    tests = mode_tests()
    after: dict[tuple[str, int], set[tuple[str, int]]] = {}
    last: dict[int, tuple[str, int]] = {}  # per frame: the reading test just passed

    def local(frame: FrameType, event: str, _arg: Any) -> Any:
        if event == "line":
            here = (Path(frame.f_code.co_filename).name, frame.f_lineno)
            pending = last.pop(id(frame), None)
            if pending is not None and pending != here:
                after.setdefault(pending, set()).add(here)
            if here in tests:
                after.setdefault(here, set())
                last[id(frame)] = here
        elif event == "return":
            pending = last.pop(id(frame), None)
            if pending is not None:
                after.setdefault(pending, set()).add(("return", 0))
        return local

    def calls(frame: FrameType, event: str, _arg: Any) -> Any:
        if event == "call" and Path(frame.f_code.co_filename).parent == REFIMPL:
            return local
        return None

    previous = sys.gettrace()
    sys.settrace(calls)
    try:
        result = run()
    finally:
        sys.settrace(previous)
    return result, after


def differing_entries(clarified: dict[tuple[str, int], set[tuple[str, int]]],
                      literal: dict[tuple[str, int], set[tuple[str, int]]],
                      reported: Iterable[str] = ()) -> list[str]:
    """The entries that make two runs of one situation differ (see the module docstring): those the
    clarified run reports, and those of the tests that read the state and took a different way; when
    there are none, those of the tests that branch on the reading alone and took a different way (such
    a test always does, so it is named only when nothing more telling is found); when there are none
    either, every test either run passed."""
    tests, pure = mode_tests(), pure_tests()
    apart = [t for t in {*clarified, *literal} if clarified.get(t, set()) != literal.get(t, set())]
    entries = set(reported)
    entries.update(e for t in apart if t not in pure for e in tests[t])
    if not entries:
        entries.update(e for t in apart for e in tests[t])
    if not entries:
        entries.update(e for t in {*clarified, *literal} for e in tests[t])
    return sorted(entries)


def resting_entries(effects: Iterable[dict[str, Any]]) -> list[str]:
    """The register entries the effects carry themselves (``erratum`` of a discard; a ``Clarified`` effect)."""
    return sorted({e["erratum"] for e in effects if e.get("erratum")})
