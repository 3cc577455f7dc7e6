"""One exploration run as a pure function: (seed, profile, mode, reading) -> a :class:`RunRecord`.

The replication machine (:mod:`.machine`) draws its enterprise and its steps from hypothesis;
with hypothesis's seed forced to ``seed`` and one example per call, a run is a function of its
arguments alone (the same arguments give the same steps, the same violations and the same
record, timing aside). This is the unit of work of ``mqspec pipeline explore``: a Spark task calls
:func:`explore_run` per seed, so nothing here knows about Spark.

The record says what the run did (steps, handler runs, simulated seconds, messages and wire bytes
sent, whether the enterprise converged), what it broke (every invariant violated at the first
failing step, with the register entries that explain it), which registered clauses ran, and its
CPU seconds. :func:`shrink` turns a violation into a small scenario file.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import json
import time
from collections.abc import Iterator
from typing import Any, ClassVar

import attrs
import hypothesis.core
import yaml
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from mqspec import memos
from mqspec.oracle.coverage import ClauseCoverage, section_key
from mqspec.proofs import invariants as inv
from mqspec.proofs.counterexample_scenarios import literal_in
from mqspec.refimpl.effects import Mode

from .driver import Driver
from .hunt import LITERAL_SETTLE, PREDICTED, SELECTIVE
from .machine import PROFILES, InvariantViolation, ReplicationMachine, Stats
from .minimize import minimize, scenario_for

#: the modules whose functions a reading can name (the MC-MQDSRP handlers with literal branches)
HANDLER_MODULES = ("mqdsrp_common", "mqdsrp_objects", "mqdsrp_server", "mqdsrp_client")


@attrs.frozen
class Violation:
    """An invariant violated at a run's first failing step."""

    invariant: str
    step: int  # the step's index in the run (0: the enterprise's build)
    step_label: str
    errata: tuple[str, ...]  # the register entries that explain it (none: an unexplained finding)
    problem: str  # the checker's first message


@attrs.frozen
class RunRecord:
    """What one exploration run did and found."""

    seed: int
    profile: str
    mode: str
    reading: tuple[str, ...]
    steps: int
    handler_runs: int
    simulated_seconds: float
    messages: int  # replication messages sent
    wire_bytes: int  # their body bytes
    converged: bool
    violations: tuple[Violation, ...]
    clauses: tuple[str, ...]  # "MC-MQDSRP 3.1.7.2.2", sorted by document and section
    cpu_seconds: float
    inputs: tuple[dict[str, Any], ...]  # the run's inputs (a failing run's, up to the failure)

    def to_row(self) -> dict[str, Any]:
        """A flat, JSON-ready row (nested values as lists of dicts; inputs as one JSON text)."""
        row = attrs.asdict(self, recurse=True)
        row["reading"] = list(self.reading)
        row["clauses"] = list(self.clauses)
        row["inputs"] = json.dumps(list(self.inputs), sort_keys=True, separators=(",", ":"))
        return row


def handler_names() -> frozenset[str]:
    """The function names a reading may read literally (every function of the MC-MQDSRP handler modules)."""
    import importlib

    names: set[str] = set()
    for module_name in HANDLER_MODULES:
        module = importlib.import_module(f"mqspec.refimpl.{module_name}")
        names.update(n for n, f in inspect.getmembers(module, inspect.isfunction) if f.__module__ == module.__name__)
    return frozenset(names)


def errata_for(invariant: str, mode: Mode, reading: tuple[str, ...]) -> tuple[str, ...]:
    """The register entries that explain ``invariant`` failing under this reading (none when clarified)."""
    if reading:
        handlers, errata = SELECTIVE.get(invariant, ((), ()))
        return errata if set(handlers) <= set(reading) else ()
    return PREDICTED.get(invariant, ()) if mode is Mode.LITERAL else ()


def reading_context(reading: tuple[str, ...]) -> contextlib.AbstractContextManager[None]:
    return literal_in(*reading) if reading else contextlib.nullcontext()


class _Example:
    """What one example (one machine run) of a hypothesis call did: its steps and its first failing step."""

    __slots__ = ("clauses", "cover", "driver", "found", "handler_runs", "steps")

    def __init__(self) -> None:
        self.found: list[Violation] = []
        self.steps = 0
        self.handler_runs = 0
        self.driver: Any = None
        self.cover = ClauseCoverage().__enter__()
        self.clauses: set[tuple[str, str]] = set()


#: the clauses that building an enterprise ran, by the machine's cache key of built enterprises: a run
#: that starts from a cached copy ran them too, so a run's clauses do not depend on what ran before it
_BUILD_CLAUSES: dict[tuple[Any, ...], set[tuple[str, str]]] = {}
memos.register(f"{__name__}._BUILD_CLAUSES", "(mode, reading, build input) -> the clauses building it runs", _BUILD_CLAUSES)


def _keys(clauses: Any) -> set[tuple[str, str]]:
    return {(c.document, c.section) for c in clauses}


def _build_clauses(mode: Mode, reading: tuple[str, ...], build: dict[str, Any]) -> set[tuple[str, str]]:
    """The clauses the run's first input (its enterprise) runs, built once per process aside from the run."""
    key = (mode, reading, json.dumps(build, sort_keys=True))
    if key not in _BUILD_CLAUSES:
        with ClauseCoverage() as cover:
            Driver(mode, ghost=False).apply(build)
        _BUILD_CLAUSES[key] = _keys(cover.clauses())
    return _BUILD_CLAUSES[key]


class _Recorder(ReplicationMachine):
    """The machine keeping what each of its examples did (:class:`_Example`), in order."""

    EXPLAIN_SECONDS = 0.0
    examples: ClassVar[list[_Example]]

    def __init__(self) -> None:
        super().__init__()
        type(self).examples.append(_Example())
        self._started_at = type(self).stats.steps

    def _fail(self, name: str) -> None:
        example = type(self).examples[-1]
        if self._violated(name) and not example.found:
            step = type(self).stats.steps - self._started_at - 1
            # sorted: CHECKED is a frozenset of names, whose order follows the process's hash seed
            for other in sorted(self.CHECKED):
                if self._violated(other):
                    example.found.append(Violation(other, step, self.step_label,
                                                   errata_for(other, self.MODE, self.LITERAL_IN),
                                                   self._problems[other][0]))
        super()._fail(name)

    def teardown(self) -> None:
        try:
            super().teardown()
        finally:
            example = type(self).examples[-1]
            example.cover.__exit__(None, None, None)
            example.clauses |= _keys(example.cover.clauses())
            example.steps = type(self).stats.steps - self._started_at
            if self.driver is not None:
                example.clauses |= _build_clauses(self.MODE, self.LITERAL_IN, self.driver.inputs[0])
                example.driver = self.driver
                example.handler_runs = self.driver.ghost.handler_runs  # type: ignore[union-attr]


_MACHINES: dict[tuple[str, Mode, tuple[str, ...]], type[_Recorder]] = {}
memos.register(f"{__name__}._MACHINES", "(profile, mode, reading) -> the machine class (with its built enterprises)", _MACHINES)


def machine_for(profile: str, mode: Mode, reading: tuple[str, ...]) -> type[_Recorder]:
    """The machine class of a profile, mode and reading (made once per process: it caches built enterprises)."""
    key = (profile, mode, reading)
    cls = _MACHINES.get(key)
    if cls is None:
        attributes: dict[str, Any] = dict(PROFILES[profile]["machine"])
        attributes.update(MODE=mode, LITERAL_IN=reading)
        if mode is Mode.LITERAL and not reading:  # literal mode's sync storms: settle briefly (see hunt.py)
            attributes.update(FINAL_SETTLE=LITERAL_SETTLE, LONG_WAITS=False)
        cls = _MACHINES[key] = type(f"Explore_{profile}_{mode.value}", (_Recorder,), attributes)
    return cls


def check_arguments(profile: str, mode: Mode, reading: tuple[str, ...]) -> None:
    """ValueError naming the argument when a profile, mode or reading cannot be explored."""
    if profile not in PROFILES:
        raise ValueError(f"profile {profile!r}: known profiles are {', '.join(sorted(PROFILES))}")
    if reading and mode is not Mode.CLARIFIED:
        raise ValueError("a reading names the handlers read literally in an otherwise clarified run: "
                         "use it with the clarified mode")
    unknown = sorted(set(reading) - handler_names())
    if unknown:
        raise ValueError(f"reading: {', '.join(unknown)} is not an MC-MQDSRP handler function")


@contextlib.contextmanager
def install_independent() -> Iterator[None]:
    """Draw from the seed alone, not from where mqspec is installed or what the process imported before.

    Hypothesis (6.131 on) mixes into its draws constants read from the source of every imported
    module it calls *local*: any file outside ``site-packages`` and the standard library. The same
    seed then gave other runs from an editable checkout than from a wheel (run 0 of seed 1: 61 steps
    and 290 handler runs against 60 and 620), and could change with the modules a worker had
    imported. Inside this context that pool is empty: only hypothesis's own global constants
    remain, the same for every install. The hypothesis version is pinned (pyproject.toml): its
    generation differs between versions, and this reaches into its internals.
    """
    from hypothesis.internal.conjecture import providers

    saved = providers._get_local_constants
    empty = providers.Constants()
    providers._get_local_constants = lambda: empty
    providers.CONSTANTS_CACHE.cache.clear()  # it caches the pools per kind of draw
    try:
        yield
    finally:
        providers._get_local_constants = saved
        providers.CONSTANTS_CACHE.cache.clear()


def explore_run(seed: int, profile: str = "ci", mode: Mode = Mode.CLARIFIED,
                reading: tuple[str, ...] = ()) -> RunRecord:
    """Run the replication machine once from ``seed``; every invariant is checked after every step."""
    check_arguments(profile, mode, reading)
    cls = machine_for(profile, mode, reading)
    cls.stats, cls.examples = Stats(), []
    # hypothesis's first example is always its simplest (a build and a settle); the second is the
    # random run drawn from the seed. A failure stops the call (and is replayed once more: the
    # first failing example is the run).
    # parent: hypothesis's own defaults, not whichever profile is loaded (CI=1 loads its "ci" profile)
    config = settings(settings.get_profile("default"), max_examples=2,
                      stateful_step_count=PROFILES[profile]["settings"]["stateful_step_count"],
                      deadline=None, phases=[Phase.generate], database=None, derandomize=False,
                      suppress_health_check=list(HealthCheck), print_blob=False)
    saved = hypothesis.core.global_force_seed
    start = time.process_time()
    hypothesis.core.global_force_seed = seed
    try:
        with reading_context(reading), install_independent(), contextlib.suppress(InvariantViolation):
                run_state_machine_as_test(cls, settings=config)
    finally:
        hypothesis.core.global_force_seed = saved
    cpu = time.process_time() - start
    failing = [e for e in cls.examples if e.found]
    run = failing[0] if failing else cls.examples[-1]
    world = run.driver.world
    violations = tuple(run.found)
    return RunRecord(
        seed=seed, profile=profile, mode=mode.value, reading=reading, steps=run.steps, handler_runs=run.handler_runs,
        simulated_seconds=round(world.now, 6), messages=world.network.sent, wire_bytes=world.network.bytes_sent,
        converged=not violations and world.converged(), violations=violations,
        clauses=tuple(f"{d} {s}" for d, s in sorted(run.clauses, key=section_key)), cpu_seconds=round(cpu, 3),
        inputs=tuple(run.driver.inputs),
    )


@attrs.frozen
class Shrunk:
    """A violation's inputs shrunk by delta debugging, as a scenario file."""

    inputs: tuple[dict[str, Any], ...]
    scenario: str  # YAML text for ``mqspec scenario run``
    key: str  # sha256 of (invariant, errata, shrunk inputs): equal keys are one counterexample
    complete: bool  # False when a budget stopped shrinking (the inputs may not be minimal)


def shrink(record: RunRecord, violation: Violation, *, seconds: float = 60.0, replays: int = 400) -> Shrunk:
    """Shrink ``record``'s failing inputs for ``violation`` (at most ``replays`` replays and ``seconds``).

    The replay bound makes the result deterministic; the time bound is a safety net, and a run it
    stops says so (``complete`` False).
    """
    mode = Mode(record.mode)
    settle = LITERAL_SETTLE if mode is Mode.LITERAL and not record.reading else None
    budget = _Budget(seconds, replays)
    with reading_context(record.reading):
        try:
            small = minimize(list(record.inputs), violation.invariant, mode, settle=settle, should_stop=budget)
        except ValueError:  # the violation needs the run's exact history: keep it whole
            small = list(record.inputs)
        header = _header(record, violation, len(small) - 1, budget)
        text = header + yaml.safe_dump(scenario_for(small, mode, settle), sort_keys=False, width=110)
    key = hashlib.sha256(json.dumps([violation.invariant, list(violation.errata), small], sort_keys=True,
                                    separators=(",", ":")).encode()).hexdigest()
    return Shrunk(tuple(small), text, key, not budget.stopped)


class _Budget:
    """Stop shrinking after ``replays`` replays (deterministic) or ``seconds`` of CPU time (safety net)."""

    def __init__(self, seconds: float, replays: int) -> None:
        self.deadline = time.process_time() + seconds
        self.left = replays
        self.stopped = False

    def __call__(self) -> bool:
        self.left -= 1
        if self.left < 0 or time.process_time() > self.deadline:
            self.stopped = True
        return self.stopped


def _header(record: RunRecord, violation: Violation, inputs: int, budget: _Budget) -> str:
    replay = "literal in " + ", ".join(record.reading) if record.reading else record.mode
    lines = [
        f"Found by mqspec pipeline explore: seed {record.seed}, profile {record.profile}, mode {record.mode}.",
        f"Invariant {violation.invariant} ({inv.BY_NAME[violation.invariant].prose.splitlines()[0]})",
        f"is violated after step {violation.step} ({violation.step_label}): {violation.problem}",
        f"Register entries: {', '.join(violation.errata) or 'none (an unexplained finding)'}.",
        f"Shrunk by delta debugging to {inputs} inputs{'' if not budget.stopped else ' (budget reached: may not be minimal)'}.",
        f"replay: {replay}",
    ]
    return "".join(f"# {line}\n" for line in lines)

