"""Where the pipeline keeps its results: Parquet datasets under one output folder, written atomically.

A campaign computes in *waves* (one Spark job each) and stores each wave in its own folder under
``DIR/_waves``; Spark's committer writes ``_SUCCESS`` last, so a wave folder without it is a
wave that was interrupted. Resuming keeps the complete waves, removes the incomplete ones (only
folders this module names, never anything else) and computes what is missing. The datasets a
user reads (``runs/``, ``violations/``, ...) are derived from the waves at the end of every
invocation, sorted, so they are the same whatever the waves, the partitioning or the master.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

WAVES = "_waves"
_WAVE = re.compile(r"^wave-(\d{9})-(\d{9})$")


def wave_name(first: int, end: int) -> str:
    return f"wave-{first:09d}-{end:09d}"


def complete_waves(out: Path) -> list[Path]:
    """The wave folders whose job committed (sorted by their first run)."""
    root = out / WAVES
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if _WAVE.match(p.name) and (p / "_SUCCESS").exists())


def remove_incomplete_waves(out: Path) -> list[str]:
    """Delete the wave folders an interrupted job left (named by :func:`wave_name`, no ``_SUCCESS``)."""
    root = out / WAVES
    removed = []
    if root.is_dir():
        for p in sorted(root.iterdir()):
            if p.is_dir() and _WAVE.match(p.name) and not (p / "_SUCCESS").exists():
                shutil.rmtree(p)
                removed.append(p.name)
    return removed


def missing_ranges(done: set[int], total: int, wave: int) -> list[tuple[int, int]]:
    """The runs in [0, total) not in ``done``, as [first, end) ranges of at most ``wave`` runs."""
    ranges: list[tuple[int, int]] = []
    run = 0
    while run < total:
        if run in done:
            run += 1
            continue
        first = run
        while run < total and run not in done and run - first < wave:
            run += 1
        ranges.append((first, run))
    return ranges


def write_dataset(df: Any, path: Path, order: list[str]) -> None:
    """Write ``df`` sorted by ``order`` as one Parquet file set, replacing what a previous invocation wrote."""
    df.orderBy(*order).coalesce(1).write.mode("overwrite").parquet(str(path))


def write_json(path: Path, data: Any) -> None:
    """Deterministic JSON (sorted keys, a final newline), written through a temporary file."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))
