"""Every memo the code keeps, registered by name, so that a benchmark can empty them all.

A memo answers an input it has seen with the value it computed then. The simulator relies on
them (the N² replicas of a large enterprise share one decoding of each change, one sync change
per looked-up object, ...), and a benchmark must not time them by mistake: every cache the code
keeps is emptied before each timed repetition, or the inputs are fresh (CONVENTIONS.md). Each
module that keeps a memo registers it here with what it holds; :func:`clear_all` empties every
one; ``tests/test_memos.py`` fails when a module-level container fills during a workload and is
not registered. ``bench/README.md`` lists them and says how each benchmark treats them.

>>> import mqspec.model.mqdsrp
>>> "mqspec.model.mqdsrp._KNOWN_CHANGES" in MEMOS
True
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection
from typing import Any

import attrs

__all__ = ["MEMOS", "Memo", "clear_all", "register", "register_cache"]


@attrs.frozen
class Memo:
    """One memo: where it lives, what it holds, the object that holds it and how to empty it."""

    name: str
    holds: str
    target: object = attrs.field(eq=False, repr=False)
    clear: Callable[[], None] = attrs.field(eq=False, repr=False)


#: every registered memo by name (module and variable), in the order the modules were imported
MEMOS: dict[str, Memo] = {}


def register(name: str, holds: str, target: Any, clear: Callable[[], None] | None = None) -> None:
    """Register the memo ``target`` (a dict, or anything with ``clear``) under ``name``.

    ``clear`` empties it (``target.clear`` by default); a memo kept in a module global that is
    rebound passes its own.
    """
    MEMOS[name] = Memo(name, holds, target, clear or target.clear)


def register_cache(function: functools._lru_cache_wrapper, holds: str) -> None:  # type: ignore[type-arg]
    """Register a ``functools.lru_cache`` function's cache."""
    register(f"{function.__module__}.{function.__qualname__}", holds, function, function.cache_clear)


def clear_all(keep: Collection[str] = ()) -> None:
    """Empty every registered memo but those named in ``keep`` (of the modules imported so far:
    the others hold nothing)."""
    for memo in MEMOS.values():
        if memo.name not in keep:
            memo.clear()
