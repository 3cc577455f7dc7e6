"""Hunt one invariant's violation in literal mode: hypothesis finds a failing run, delta debugging shrinks it.

The machine reads the text literally and checks one invariant only; hypothesis generates runs
(no shrinking: at literal mode's message storms it costs minutes) batch after batch, each batch
with its own seed, until a run violates the invariant or the search budget is spent. The failing
run's inputs are then shrunk by :func:`~mqspec.proofs.explore.minimize.minimize`. :func:`hunt` reports
what both took (steps, runs, seconds), so that the closing report of issue 5 can say, per
violation, how long finding and shrinking it takes (``bench/literal.py`` prints the table).

Read wholly literally the enterprise never forms (E-142: replicas ask for partitions in storms
and never get them), so nothing reaches a replica and the replica-side defects cannot show.
For those, :data:`SELECTIVE` names the handlers whose literal branch the register blames; the
hunt then reads the text literally inside those handlers only, everything else clarified
(:func:`mqspec.proofs.counterexample_scenarios.literal_in`, the reading the proofs' per-handler
counterexamples replay with).
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

import hypothesis.core
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test
from mqspec.proofs.counterexample_scenarios import literal_in
from mqspec.refimpl.effects import Mode

from .machine import InvariantViolation, ReplicationMachine, Stats
from .minimize import minimize

#: literal mode's sync-request storms (E-136, E-142) make each simulated second costly: settle briefly
LITERAL_SETTLE = {"quiet": 300.0, "limit": 1800.0}
#: short runs: a literal violation shows early, and a short run shrinks fast
STEPS_PER_RUN = 40
RUNS_PER_BATCH = 25

#: invariant -> the register entries a wholly literal run's violation of it is evidence of (the
#: invariants bench/literal.py finds read wholly literally; the others hold there or are masked by E-142)
PREDICTED: dict[str, tuple[str, ...]] = {
    "replicas_converge_at_quiescence": ("E-142", "E-119"),
    "authority_tombstone_covers_unacked_deletions": ("E-108",),
    "partition_held_once_per_server": ("E-104",),
}
#: invariant -> (the handlers read literally, the register entries) for the replica-side defects
#: that a wholly literal run never reaches (E-142)
SELECTIVE: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "replica_tombstone_covers_applied_deletions": (("handle_directory_delete",), ("E-108",)),
    "replica_last_seq_monotone_except_sync0": (("check_pending_changes", "receive_sync_reply"), ("E-166",)),
    "no_lingering_deleted_objects_at_quiescence": (("purge_deleted_objects",), ("E-133",)),
    "replicas_converge_at_quiescence": (("receive_sync_request",), ("E-119",)),
}


def literal_machine(invariant: str, reading: tuple[str, ...] = ()) -> type[ReplicationMachine]:
    """The machine reading the text literally (only inside ``reading`` if given), checking ``invariant`` only."""

    class LiteralMachine(ReplicationMachine):
        MODE = Mode.CLARIFIED if reading else Mode.LITERAL
        LITERAL_IN = reading
        CHECKED = frozenset({invariant})
        FINAL_SETTLE = None if reading else LITERAL_SETTLE
        LONG_WAITS = bool(reading)
        EXPLAIN_SECONDS = 0.0
        stats = Stats()

    LiteralMachine.__name__ = LiteralMachine.__qualname__ = f"Literal_{invariant}"
    return LiteralMachine


def hunt(invariant: str, *, seed: int = 0, search_seconds: float = 300.0,
         shrink_seconds: float = 120.0, reading: tuple[str, ...] = ()) -> dict[str, Any]:
    """Search for a literal-mode violation of ``invariant`` (at most ``search_seconds``), then shrink it.

    ``reading``: read the text literally inside these handlers only (:data:`SELECTIVE`).
    Returns ``{"invariant", "reading", "found", "find_steps", "find_runs", "find_seconds", ...}``;
    when found, also the first problem, the failing run's and the shrunk input counts, and the
    shrink time. Times are process CPU seconds (one core), like the other benchmarks.
    """
    with read_as(reading):
        return _hunt(invariant, seed, search_seconds, shrink_seconds, reading)


def read_as(reading: tuple[str, ...]) -> contextlib.AbstractContextManager[None]:
    """The literal reading confined to ``reading``'s handlers; with none, the machine's own mode decides."""
    return literal_in(*reading) if reading else contextlib.nullcontext()


def _hunt(invariant: str, seed: int, search_seconds: float, shrink_seconds: float,
          reading: tuple[str, ...]) -> dict[str, Any]:
    machine = literal_machine(invariant, reading)
    config = settings(max_examples=RUNS_PER_BATCH, stateful_step_count=STEPS_PER_RUN, deadline=None,
                      phases=[Phase.generate], database=None, derandomize=False,
                      suppress_health_check=list(HealthCheck), print_blob=False)
    start = time.process_time()
    found: InvariantViolation | None = None
    batch = 0
    saved = hypothesis.core.global_force_seed
    try:
        while found is None and time.process_time() - start < search_seconds:
            hypothesis.core.global_force_seed = seed * 1_000_003 + batch
            batch += 1
            try:
                run_state_machine_as_test(machine, settings=config)
            except InvariantViolation as exc:
                found = exc
    finally:
        hypothesis.core.global_force_seed = saved
    stats = machine.stats
    errata = SELECTIVE[invariant][1] if reading else PREDICTED.get(invariant, ())
    report: dict[str, Any] = {
        "invariant": invariant, "reading": "literal in " + ", ".join(reading) if reading else "literal",
        "errata": list(errata), "found": found is not None,
        "find_steps": stats.steps, "find_runs": stats.runs, "find_seconds": round(time.process_time() - start, 1),
        "seed": seed,
    }
    if found is None:
        return report
    inputs = stats.last_failure or []
    start = time.process_time()
    small = minimize(inputs, invariant, machine.MODE, settle=machine.FINAL_SETTLE, budget=shrink_seconds)
    report.update(first_problem=found.problems[0], failing_run_inputs=len(inputs) - 1,
                  shrunk_inputs=len(small) - 1, shrink_seconds=round(time.process_time() - start, 1),
                  shrunk=small)
    return report
