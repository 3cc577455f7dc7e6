"""Reading the pipeline's Parquet datasets back as sorted plain rows, timing columns aside (for comparisons)."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from mqspec.pipeline.runs import TIMING_COLUMNS


def rows(path: Path, order: tuple[str, ...]) -> list[dict]:
    table = pq.read_table(str(path))
    keep = [c for c in table.column_names if c not in TIMING_COLUMNS]
    return sorted(table.select(keep).to_pylist(), key=lambda r: tuple(str(r.get(k)) for k in order))


def explore_output(out: Path) -> dict[str, list[dict]]:
    return {"runs": rows(out / "runs", ("run",)), "violations": rows(out / "violations", ("run", "invariant")),
            "coverage": rows(out / "coverage", ("clause",)),
            "counterexamples": sorted((p.name, p.read_text()) for p in (out / "counterexamples").glob("*.yaml"))}


def check_output(out: Path) -> dict[str, list[dict]]:
    return {name: rows(out / name, ("path", "trace", "t", "node", "clause"))
            for name in ("verdicts", "divergences", "coverage", "messages", "quarantine")}
