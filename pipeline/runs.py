"""The per-run work of ``mqspec pipeline explore``, as plain functions (no Spark here).

:func:`run_rows` takes run indices and yields one row per run: the run's record
(:func:`mqspec.proofs.explore.run.explore_run` with the seed :func:`derive_seed` gives it), its
violations each shrunk to a scenario file (:func:`mqspec.proofs.explore.run.shrink`), and, when
asked, its trace in the published format. A Spark task calls it through :func:`arrow_batches`,
which writes each trace, compressed, straight into the campaign's ``traces/`` folder (the row names
the file: a trace is stored once, and never travels through the driver); the tests call it directly.
"""

from __future__ import annotations

import hashlib
import io
import json
import time
from collections.abc import Iterable, Iterator
from typing import Any

import attrs
import pyarrow as pa

#: what a violation row holds (nested in a run row)
VIOLATION_TYPE = pa.struct([
    ("invariant", pa.string()), ("step", pa.int64()), ("step_label", pa.string()),
    ("errata", pa.list_(pa.string())), ("problem", pa.string()), ("key", pa.string()),
    ("scenario", pa.string()), ("shrunk_inputs", pa.int64()), ("shrink_complete", pa.bool_()),
    ("shrink_seconds", pa.float64()), ("inputs", pa.string()),
])
#: one row per run, as the executors write them (the campaign's raw store, DIR/_waves)
RUN_SCHEMA = pa.schema([
    ("run", pa.int64()), ("seed", pa.int64()), ("profile", pa.string()), ("mode", pa.string()),
    ("reading", pa.string()), ("steps", pa.int64()), ("handler_runs", pa.int64()),
    ("simulated_seconds", pa.float64()), ("messages", pa.int64()), ("wire_bytes", pa.int64()),
    ("converged", pa.bool_()), ("violation_count", pa.int64()), ("violations", pa.list_(VIOLATION_TYPE)),
    ("clauses", pa.list_(pa.string())), ("cpu_seconds", pa.float64()),
    ("trace_file", pa.string()), ("trace_bytes", pa.int64()),  # under DIR/traces, as the executor wrote it
])
#: columns that measure time: the only ones that may differ between two runs of one campaign
TIMING_COLUMNS = ("cpu_seconds", "shrink_seconds")


@attrs.frozen
class Campaign:
    """What defines a campaign's rows (``runs`` aside: a campaign can be extended)."""

    runs: int
    seed: int
    mode: str = "clarified"
    reading: tuple[str, ...] = ()
    profile: str = "ci"
    traces: bool = False
    trace_compression: str = "zstd"  # zstd, gzip or none: the traces' extension says which
    shrink_seconds: float = 60.0
    shrink_replays: int = 400

    def identity(self) -> dict[str, Any]:
        """The arguments a stored campaign must share with a run that resumes it."""
        return {"seed": self.seed, "mode": self.mode, "reading": list(self.reading), "profile": self.profile,
                "traces": self.traces, "trace_compression": self.trace_compression,
                "shrink_replays": self.shrink_replays}

    def to_json(self) -> dict[str, Any]:
        return {**attrs.asdict(self), "reading": list(self.reading)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Campaign:
        return cls(**{**data, "reading": tuple(data.get("reading", ()))})

    def trace_file(self, run: int) -> str:
        """Run ``run``'s trace file name under ``DIR/traces``."""
        from mqspec.oracle.compression import TRACE_SUFFIX

        return f"run-{run:09d}{TRACE_SUFFIX[self.trace_compression]}"


def derive_seed(seed: int, run: int) -> int:
    """Run ``run``'s seed: independent of how runs are split into tasks, waves or machines."""
    digest = hashlib.sha256(f"mqspec-explore:{seed}:{run}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def run_rows(runs: Iterable[int], campaign: Campaign) -> Iterator[dict[str, Any]]:
    """One row per run index: :data:`RUN_SCHEMA`'s columns but the trace file's, and its ``trace`` text
    (None without ``campaign.traces``)."""
    from mqspec.proofs.explore.run import explore_run, shrink
    from mqspec.refimpl.effects import Mode

    mode = Mode(campaign.mode)
    for run in runs:
        record = explore_run(derive_seed(campaign.seed, run), campaign.profile, mode, campaign.reading)
        violations = []
        for violation in record.violations:
            start = time.process_time()
            small = shrink(record, violation, seconds=campaign.shrink_seconds, replays=campaign.shrink_replays)
            violations.append({
                "invariant": violation.invariant, "step": violation.step, "step_label": violation.step_label,
                "errata": list(violation.errata), "problem": violation.problem, "key": small.key,
                "scenario": small.scenario, "shrunk_inputs": len(small.inputs) - 1,
                "shrink_complete": small.complete, "shrink_seconds": round(time.process_time() - start, 3),
                "inputs": json.dumps(list(record.inputs), sort_keys=True, separators=(",", ":")),
            })
        yield {
            "run": run, "seed": record.seed, "profile": record.profile, "mode": record.mode,
            "reading": ",".join(record.reading), "steps": record.steps, "handler_runs": record.handler_runs,
            "simulated_seconds": record.simulated_seconds, "messages": record.messages,
            "wire_bytes": record.wire_bytes, "converged": record.converged, "violation_count": len(violations),
            "violations": violations, "clauses": list(record.clauses), "cpu_seconds": record.cpu_seconds,
            "trace": run_trace(record, f"explore:{campaign.seed}:{run}") if campaign.traces else None,
        }


def run_trace(record: Any, trace_id: str) -> str:
    """The run's trace in the published format: its inputs replayed as a scenario, with a recorder attached."""
    from mqspec.oracle.record import record_scenario
    from mqspec.proofs.explore.driver import to_scenario
    from mqspec.proofs.explore.run import reading_context
    from mqspec.refimpl import scenario as sc
    from mqspec.refimpl.effects import Mode

    parsed = sc.parse(json.loads(json.dumps(to_scenario(list(record.inputs)))), trace_id)
    out = io.StringIO()
    with reading_context(record.reading):
        record_scenario(parsed, mode=Mode(record.mode), trace_id=trace_id, write=out.write)
    return out.getvalue()


def store_trace(row: dict[str, Any], campaign: Campaign, out: Any) -> dict[str, Any]:
    """The row with its trace written, compressed, as ``out/traces/run-NNNNNNNNN.ndjson.zst`` (``out``: a
    :class:`~mqspec.pipeline.store.Location`) and named in ``trace_file`` / ``trace_bytes``."""
    from mqspec.oracle.compression import compress

    row = dict(row)
    text = row.pop("trace", None)
    row["trace_file"] = row["trace_bytes"] = None
    if text is not None:
        name = campaign.trace_file(row["run"])
        data = compress(text.encode("utf-8"), name)
        out.child("traces", name).write_bytes(data)
        row.update(trace_file=name, trace_bytes=len(data))
    return row


def arrow_batches(batches: Iterable[pa.RecordBatch], campaign: dict[str, Any], out: str) -> Iterator[pa.RecordBatch]:
    """The ``mapInArrow`` function: run indices (column ``id``) in, run rows out, a batch per run; each
    trace written under ``out`` (the campaign's URI) by the executor that made it."""
    from .store import Location

    camp, where = Campaign.from_json(campaign), Location(out)
    for batch in batches:
        for row in run_rows(batch.column("id").to_pylist(), camp):
            yield pa.RecordBatch.from_pylist([store_trace(row, camp, where)], schema=RUN_SCHEMA)
