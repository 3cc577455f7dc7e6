"""The process pool `mqspec prove` shares between its obligations, bounded runs and refinement campaign."""

from __future__ import annotations

import contextlib
import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from typing import Any


@contextlib.contextmanager
def processes(jobs: int) -> Iterator[Executor | None]:
    """A pool of ``jobs`` forked processes (None for one: the work runs in this process). Forked, so that the
    workers start with the Z3 encodings and the reference already imported."""
    if jobs <= 1:
        yield None
        return
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool:
        yield pool


def pool_map(fn: Callable[[Any], Any], tasks: Sequence[Any], *, pool: Executor | None = None, jobs: int = 1,
             chunksize: int = 1) -> list[Any]:
    """``fn`` over ``tasks``, in order: in ``pool``, else in a pool of ``jobs`` processes, else here."""
    if pool is not None:
        return list(pool.map(fn, tasks, chunksize=chunksize))
    if jobs > 1 and len(tasks) > 1:
        with processes(jobs) as own:
            return list(own.map(fn, tasks, chunksize=chunksize))  # type: ignore[union-attr]
    return [fn(t) for t in tasks]
