"""The refinement campaign of `mqspec prove`: fixed seeds of the explorer, every handler run checked against the model.

For each mode, the replication machine (:mod:`mqspec.proofs.explore.machine`) runs a fixed set of
seeds with the refinement check on (:class:`~mqspec.proofs.refinement.check.Refinement`: every
handler run against the model's transition for its event), half of them with the World's fast path
off so that every timer firing runs, and the handler modules traced line by line. It yields rows of
kind ``refinement`` (:class:`~mqspec.proofs.obligations.Result`), one per handler a World event runs
first (:data:`HANDLERS`) and mode:

* ``refined``: no run of it departed from the model, on ``states`` checked runs;
* ``violated``: a run departed: the departure (handler, section, server, event, the differences in
  post-state, messages, timers, directory events), the handlers that ran in it and the run's
  inputs, shrunk when there is time (:func:`mqspec.proofs.explore.minimize.minimize`). A handler run
  that raises is a departure too ("the reference raised ..."): the model's transition takes every
  event, so a handler that cannot finish one departs from it. So is one that never returns: it is
  stopped at :data:`.limit.HANDLER_CPU_SECONDS` of CPU time;
* ``unreached``: the campaign never ran it: nothing is claimed, and `mqspec prove` says so.

One more row per mode, ``refinement-branches``, says whether the runs reached every branch of the
handlers the model covers (:mod:`mqspec.proofs.explore.branches`; the branches no conforming
enterprise reaches are listed there with their reason): ``refined`` when they did, ``incomplete``
with the branches missed otherwise. A ``violated`` row makes `mqspec prove` exit 1; ``unreached`` and
``incomplete`` rows are printed as the campaign's gaps (what it does not check), not counted as refined.

In clarified mode the campaign's scenario files are also checked against the enterprise model
(:mod:`.enterprise`): after each top-level step the World is projected onto the enterprise model's state and
every state invariant of it evaluated there, one row ``enterprise-<invariant>`` each (``refined`` or
``violated``, with the file, the step and the instance that fails).

The seeds and run lengths are :data:`PROFILES` (``default``: a minute or two per mode on two cores;
``soak``: longer). The same profile and mode give the same rows (timings aside).
"""

from __future__ import annotations

import collections
import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import hypothesis.core
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from mqspec.proofs.explore import branches as br
from mqspec.proofs.explore import machine as em
from mqspec.proofs.pool import pool_map
from mqspec.refimpl.effects import Mode
from mqspec.wording import plural

from . import check, enterprise, limit

#: the handlers a World event runs first, with their sections: one row each per mode
HANDLERS: tuple[tuple[str, str], ...] = (
    ("initialization", "3.2.3"),
    ("directory_client_request", "3.1.7.1"),
    *sorted(check.RECEIVERS.values(), key=lambda h: h[1]),
    ("receive_change_request_nack", "3.3.7.8"),
    ("receive_request_nack", "3.3.7.9"),
    *sorted(check.TIMERS.values(), key=lambda h: h[1]),
)

#: the scenario files the default profile runs in literal mode: those whose literal run stays short (in literal
#: mode most files end in a sync storm the text cannot stop, tens of seconds each with the check on; the soak
#: profile runs them all)
LITERAL_QUICK = frozenset({
    "4.1-adding-a-site.yaml", "e261-replicated-delete-of-an-unknown-object-stalls.yaml",
    "e263-site-scoped-queue-update-lost-by-sync.yaml", "e264-lost-full-sync-reply-is-never-asked-again.yaml",
    "e264-lost-sync0-reply-leaves-the-replica-in-sync0.yaml", "e265-lost-reply-to-a-gap-request-is-never-asked-again.yaml",
    "replicas_converge_at_quiescence-delete-of-unseen-object.yaml", "replicas_converge_at_quiescence-by-bmc.literal.yaml",
    "replicas_converge_at_quiescence-lost-sync0-reply.yaml",
    "no_lingering_deleted_objects_at_quiescence-literal-in-purge_deleted_objects.yaml",
    "replica_last_seq_monotone_except_sync0-literal-in-check_pending_changes-receive_sync_reply.yaml",
    "changes_carry_authority_purged_seq-by-propagate_directory_change.yaml",
    "changes_skip_no_deletion-by-receive_sync_request.yaml", "changes_chain_forward-by-receive_sync_request.yaml",
    "change-request-nacked-after-its-wait.yaml", "literal-bsc-with-a-psc-neighbor.yaml",
    "a-bsc-acked-and-a-short-sync0-request.yaml", "a-tampered-change-reply-is-sent-again.yaml",
    "partition_held_once_per_server.yaml", "a-literal-psc-named-for-its-own-site.yaml",
    "a-site-with-the-enterprise-partitions-id.yaml", "a-site-created-with-no-psc.yaml",
    "a-pending-change-older-than-a-purge.yaml", "a-pec-whose-site-partition-has-the-enterprise-id.yaml",
})
#: the runs of a profile, per mode: the scenario files (``scenarios``: None, every file: the section 4 examples,
#: the errata's and the counterexamples, and the campaign's own, proofs/refinement/scenarios; or the names of
#: those to run), then explorer runs:
#: ``seeds`` (hypothesis's, as bench/stateful.py forces them) with ``examples`` runs of ``steps`` steps each,
#: the World's fast path on, and ``every``: (seed, examples, steps) with it off (every timer firing runs)
PROFILES: dict[str, dict[str, Any]] = {
    "default": {"scenarios": {"clarified": None, "literal": LITERAL_QUICK}, "seeds": {"clarified": (1,), "literal": (1,)},
                "examples": {"clarified": 6, "literal": 2}, "steps": 50,
                "every": {"clarified": (2, 2, 30), "literal": (2, 1, 20)}},
    "soak": {"scenarios": {"clarified": None, "literal": None}, "seeds": {"clarified": tuple(range(1, 9)), "literal": tuple(range(1, 5))},
             "examples": {"clarified": 25, "literal": 10}, "steps": 100,
             "every": {"clarified": (9, 10, 50), "literal": (9, 4, 40)}},
}
#: the handler modules whose branches the campaign must reach (mqds.py: the MQDS server's requests, E-181)
MODULES = (*br.HANDLER_MODULES, "mqds.py")
#: seconds to shrink a departure's run into a small scenario
SHRINK_SECONDS = 60.0


class Tracer(br.Reach):
    """The lines the handler modules run, and the functions each checked handler run called."""

    def __init__(self, modules: tuple[str, ...] = MODULES) -> None:
        super().__init__(modules)


@attrs.define
class Tally:
    """What the campaign saw of one handler in one mode."""

    section: str = "?"
    states: int = 0
    called: set[str] = attrs.field(factory=set)
    departures: list[Any] = attrs.field(factory=list)


class FirstDeparture(Exception):
    """Raised by a :class:`Watch` that stops at the first departure, from the handler run that departed: its run
    ends there (the rest of it cannot change the verdict, and a wrong handler may make it run for ever)."""


class Watch:
    """Listens to the refinement checks of the campaign's runs (check.WATCH) and tallies them by handler; with
    ``stop``, ends the run at its first departure (:class:`FirstDeparture`). Entered, it stops each handler run at
    :data:`~.limit.HANDLER_CPU_SECONDS` of CPU time (:class:`~.limit.HandlerRanTooLong`)."""

    def __init__(self, tracer: Tracer, stop: bool = False) -> None:
        self.tracer = tracer
        self.stop = stop
        self.tallies: dict[str, Tally] = collections.defaultdict(Tally)
        self.departures: list[Any] = []
        #: the check whose handler run is in progress (between its begin and end)
        self.running: Any = None
        self._limit = limit.CpuLimit()

    def __enter__(self) -> Watch:
        self._limit.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._limit.__exit__(*exc)

    def begin(self, refinement: Any) -> None:
        self.tracer.called = set()
        self.running = refinement
        # a run that raises into a caller that goes on (a step the scenario runner refuses) stays armed until the
        # check's next take or begin: the limit landing in between is still that run's (raised, below)
        self._limit.arm()

    def raised(self, exc: BaseException) -> bool:
        """Record the handler run in progress, which raised ``exc``, as a departure; False when none was in
        progress (the exception is the harness's own, and propagates)."""
        self._limit.disarm()  # tracing again if the limit landed in the tracer's own function
        running, self.running = self.running, None
        return running is not None and bool(running.raised(exc))

    def called(self) -> set[str]:
        return self.tracer.called

    def end(self, handler: str, section: str, departure: Any) -> None:
        self._limit.disarm()
        finishing, self.running = self.running, None  # None: a raising run's end (Watch.raised), already stopping
        tally = self.tallies[handler]
        tally.section = section
        tally.states += 1
        tally.called |= self.tracer.called
        if departure is not None:
            tally.departures.append(departure)
            self.departures.append(departure)
            if self.stop and finishing is not None:
                raise FirstDeparture(f"{handler} departed at {departure.node}")


@attrs.define
class Selection:
    """The campaign's runs one at a time (a scenario file, a seed): which of them to run (``wanted``, by name, such
    as ``clarified:4.1-adding-a-site.yaml`` or ``literal:seed 2 every``) and the handler lines each one reached
    (``reached``, filled as they run). bench/proof_mutation.py records the lines on the unmutated reference, then runs
    with a mutant installed only the runs that reached its statement: the others execute the same code as on the
    reference, from nothing another run built (each seed builds its own enterprises when a Selection is given), and
    the runs are deterministic, so they cannot depart."""

    wanted: Callable[[str], bool] = lambda name: True
    reached: dict[str, set[tuple[str, int]]] = attrs.field(factory=dict)
    #: False: runs that need no tracer for anything else (the bounded runs) are not traced, and record no line
    record: bool = True
    #: the runs ``wanted`` declined, by name
    skipped: list[str] = attrs.field(factory=list)

    @contextlib.contextmanager
    def run(self, name: str, tracer: Tracer) -> Iterator[bool]:
        """Yields whether to run ``name``; while it runs, the lines ``tracer`` records are its own."""
        if not self.wanted(name):
            self.skipped.append(name)
            yield False
            return
        # a handler frame keeps the set it started with: none is active between two runs
        kept, tracer.lines = tracer.lines, set()
        try:
            yield True
        finally:
            self.reached[name] = tracer.lines
            kept |= tracer.lines
            tracer.lines = kept


def _machine(mode: Mode, fast: bool, steps: int) -> type[em.ReplicationMachine]:
    attributes: dict[str, Any] = dict(em.PROFILES["ci"]["machine"])
    attributes.update(MODE=mode, REFINE=True, SKIP_IDLE_TIMERS=fast, EXPLAIN_SECONDS=0.0,
                      CHECKED=frozenset({"handlers_refine_model"}), stats=em.Stats())
    if mode is Mode.LITERAL:  # literal mode's sync storms: settle briefly (proofs/explore/hunt.py)
        from mqspec.proofs.explore.hunt import LITERAL_SETTLE

        attributes.update(FINAL_SETTLE=LITERAL_SETTLE)
    return type(f"Refinement_{mode.value}_{'fast' if fast else 'every'}", (em.ReplicationMachine,), attributes)


def run(mode: str, profile: str = "default", *, stop_at_first: bool = False, shrink: bool = True,
        log: Any = None, selection: Selection | None = None) -> tuple[list[Any], set[tuple[str, int]]]:
    """The campaign's rows for ``mode`` (see the module docstring) and the handler lines its runs reached;
    ``stop_at_first``: end the campaign at the first departure (without it, each scenario file's run still ends at
    its own first departure; a seeded run goes on to the invariant check that shrinks it); ``selection``: the runs
    to run (all by default), and where to record the lines each reached."""
    from mqspec.proofs.obligations import Obligation, Result

    conf = PROFILES[profile]
    the_mode = Mode(mode)
    tracer = Tracer()
    # a scenario file's run always ends at its first departure: the file is the counterexample, named as it is,
    # and a wrong handler may keep it running for hours of simulated time (a resend that is nacked again)
    watch = Watch(tracer, stop=True)
    failures: list[tuple[em.InvariantViolation, list[dict[str, Any]], bool]] = []
    steps = 0
    started = time.perf_counter()
    config = settings(deadline=None,
                      phases=[Phase.generate], database=None, derandomize=False,
                      suppress_health_check=list(HealthCheck), print_blob=False)
    previous, check.WATCH = check.WATCH, watch
    scenario_failures: list[str] = []
    raised = False  # a handler of a seeded run raised, or departed when stopping at the first (in watch)
    whole = enterprise.Tally() if the_mode is Mode.CLARIFIED else None
    every_seed, every_examples, every_steps = conf["every"][mode]
    plan = [(True, seed, conf["examples"][mode], conf["steps"]) for seed in conf["seeds"][mode]]
    plan.append((False, every_seed, every_examples, every_steps))
    try:
        with tracer, watch:
            steps += _scenarios(the_mode, scenario_failures, stop_at_first, log, conf["scenarios"][mode], whole,
                                selection, tracer)
            if log:
                log(f"refinement {mode}: the scenario files, {time.perf_counter() - started:.0f} s")
            # a seeded run's departure must reach the machine's invariant check, which shrinks it into a scenario
            watch.stop = stop_at_first
            for fast, seed, examples, length in plan:
                if (failures or scenario_failures or raised) and stop_at_first:
                    break
                machine = _machine(the_mode, fast, length)
                with _one(selection, f"{mode}:seed {seed}{'' if fast else ' every'}", tracer) as wanted:
                    if not wanted:
                        continue
                    if selection is not None:
                        em._BUILT.clear()  # this seed's enterprises built by this seed: the run stands alone
                    hypothesis.core.global_force_seed = seed * 1_000_003 + (0 if fast else 7)
                    try:
                        run_state_machine_as_test(machine, settings=settings(
                            config, max_examples=examples, stateful_step_count=length))
                    except em.InvariantViolation as exc:
                        failures.append((exc, list(machine.stats.last_failure or []), fast))
                    except FirstDeparture:  # recorded by the watch, which ended the run there
                        raised = True
                    except Exception as exc:  # noqa: BLE001 - as in _scenarios: a handler that raised departs
                        if not watch.raised(exc):
                            raise
                        raised = True
                steps += machine.stats.steps
                if log:
                    log(f"refinement {mode} seed {seed}{'' if fast else ' (every firing)'}: "
                        f"{plural(machine.stats.steps, 'step')}, {time.perf_counter() - started:.0f} s")
    finally:
        check.WATCH = previous
        hypothesis.core.global_force_seed = None
    seconds = time.perf_counter() - started
    rows = []
    scenario = _shrink(failures[0], the_mode) if shrink and failures else None
    first_departure = watch.departures[0] if watch.departures else None
    # a handler run the table does not name (an empty or undecodable message: 3.1.5.1's own dispatch) gets its row
    # too: a departure there must fail prove, not vanish with its tally
    listed = {h for h, _ in HANDLERS}
    extra = sorted((h, t.section) for h, t in watch.tallies.items() if h not in listed)
    for handler, section in (*HANDLERS, *extra):
        tally = watch.tallies.get(handler, Tally())
        reached, total = _branch_counts(tally.called, tracer.lines)
        detail = {"section": section, "steps": steps, "states": tally.states,
                  "branches_reached": reached, "branches": total, "handlers_run": sorted(tally.called)}
        counterexample = None
        if tally.departures:
            first = tally.departures[0]
            status = "violated"
            counterexample = {"departures": len(tally.departures), "trace": first.text(40), "node": first.node,
                              "event": repr(first.event), "differences": list(first.differences),
                              "handlers_run": list(first.ran)}
            if first is first_departure and scenario is not None:
                counterexample["scenario"] = scenario
            elif first is first_departure and scenario_failures:
                counterexample["scenario_file"] = scenario_failures[0]
        elif tally.states:
            status = "refined"
        else:
            status = "unreached"
        rows.append(Result(Obligation(f"refinement-{handler}", "handlers_refine_model", handler, mode, "refinement",
                                      "refinement", "one"), status, seconds / len(HANDLERS), counterexample,
                           detail=detail))
    if whole is not None:
        rows += whole.rows()
    return rows, tracer.lines


def _scenarios(mode: Mode, failures: list[str], stop_at_first: bool, log: Any = None,
               only: frozenset[str] | None = None, whole: enterprise.Tally | None = None,
               selection: Selection | None = None, tracer: Tracer | None = None) -> int:
    """Run the scenario files (``only`` those named, if given, and of those the ones ``selection`` wants) with the
    refinement check on; the files whose run departed go to ``failures``. With ``whole``, each file's states are also
    checked against the enterprise model's invariants (:mod:`.enterprise`)."""
    steps = 0
    for path in scenario_files():
        if only is not None and path.name not in only:
            continue
        started = time.perf_counter()
        with _one(selection, f"{mode.value}:{path.name}", tracer) as wanted:
            if not wanted:
                continue
            departed, checks = _scenario(path, mode, whole)
        if departed:
            failures.append(str(path))
            if stop_at_first:
                break
        steps += checks
        if log:
            log(f"refinement {mode.value}: {path.name}, {time.perf_counter() - started:.1f} s")
    return steps


def _scenario(path: Any, mode: Mode, whole: enterprise.Tally | None) -> tuple[bool, int]:
    """One scenario file's run with the refinement check on (and the enterprise invariants, with ``whole``):
    whether it departed, and the handler runs it checked."""
    from mqspec.proofs.scenario_watch import InvariantWatch
    from mqspec.refimpl import scenario_run
    from mqspec.refimpl.scenario import load

    watch = InvariantWatch(names=("handlers_refine_model",), refine=True)
    ent = whole.watch(path.name) if whole is not None else None
    trace, attach = watch.record, watch.attach
    if ent is not None:
        trace, attach = _both(watch.record, ent.record), _both(watch.attach, ent.attach)
    try:
        scenario_run.run(load(path), mode=mode, trace=trace, attach=attach, skip_idle_timers=True)
    except FirstDeparture:  # the watch recorded it and ended the run there
        return True, 0
    except Exception as exc:  # noqa: BLE001 - a handler that raises departs (Watch.raised), else it propagates
        if check.WATCH is None or not check.WATCH.raised(exc):
            raise
        return True, 0
    if ent is not None:
        ent.finish()
    return watch.finish(), watch.checks


def _one(selection: Selection | None, name: str, tracer: Tracer | None) -> Any:
    """``selection.run(name, tracer)``; with no selection, every run is wanted."""
    if selection is None:
        return contextlib.nullcontext(True)
    assert tracer is not None, "a selection records the lines of a tracer"
    return selection.run(name, tracer)


def _both(first: Any, second: Any) -> Any:
    def call(arg: Any) -> None:
        first(arg)
        second(arg)

    return call


def scenario_files() -> list[Any]:
    """The scenario files the campaign runs: the installed ones (mqspec.scenarios) and its own."""
    from importlib import resources

    found = []
    for package in ("mqspec.scenarios", "mqspec.proofs.refinement.scenarios"):
        try:
            root = resources.files(package)
        except ModuleNotFoundError:
            continue
        found += _yaml_files(root)
    return found


def _yaml_files(folder: Any) -> list[Any]:
    """The ``*.yaml`` files of a folder and of its folders (counterexamples/, counterexamples/literal/), by name."""
    out = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".yaml"):
            out.append(entry)
        elif entry.is_dir() and not entry.name.startswith(("_", ".")):
            out += _yaml_files(entry)
    return out


def rows(profile: str = "default", *, stop_at_first: bool = False, shrink: bool = True, log: Any = None,
         jobs: int = 2, selection: Selection | None = None) -> list[Any]:
    """Every MC-MQDSRP refinement row: the campaign in both modes (in ``jobs`` processes; with a ``selection``, in
    this one) and the branch row."""
    modes = ("clarified", "literal")
    if jobs > 1 and selection is None:
        parts = pool_map(_run_mode, [(m, profile, stop_at_first, shrink, log is not None) for m in modes],
                         jobs=min(jobs, len(modes)))
    else:
        parts = []
        for m in modes:
            parts.append(run(m, profile, stop_at_first=stop_at_first, shrink=shrink, log=log, selection=selection))
            if stop_at_first and any(r.status == "violated" for r in parts[-1][0]):
                break  # the other mode's rows would not change the verdict
    return joined(parts, lambda lines, steps: branch_row("MC-MQDSRP", MODULES, lines, steps))


def joined(parts: list[tuple[list[Any], set[tuple[str, int]]]], branch: Any) -> list[Any]:
    """The rows of one document's runs (``parts``: each run's rows and the handler lines it reached), then the
    document's branch row, ``branch(lines, steps)`` over the lines of them all."""
    out: list[Any] = []
    lines: set[tuple[str, int]] = set()
    steps = 0
    for found, reached in parts:
        out += found
        lines |= reached
        steps += max((r.detail or {}).get("steps", 0) for r in found)
    out.append(branch(lines, steps))
    return out


def _run_mode(args: tuple[str, str, bool, bool, bool]) -> tuple[list[Any], set[tuple[str, int]]]:
    mode, profile, stop_at_first, shrink, progress = args
    return run(mode, profile, stop_at_first=stop_at_first, shrink=shrink, log=progress_to_stderr if progress else None)


def progress_to_stderr(line: str) -> None:
    """A worker's progress line (the parent's log cannot cross the process boundary)."""
    print(line, file=sys.stderr, flush=True)


def branch_row(document: str, modules: tuple[str, ...], lines: set[tuple[str, int]], steps: int,
               functions: frozenset[str] | None = None, unreachable: tuple[br.Unreachable, ...] = ()) -> Any:
    """Whether the runs of both modes (``lines``) reached every branch of ``modules`` (of ``functions``, when
    given: the handlers and what they call) that one of the modes can reach
    (:data:`mqspec.proofs.explore.branches.UNREACHABLE` and ``unreachable`` list those neither can, with the reason)."""
    from mqspec.proofs.obligations import Obligation, Result

    def reachable(b: br.Branch, mode: str) -> bool:
        return br.unreachable_reason(b, mode) is None and not any(u.matches(b, mode) for u in unreachable)

    covered = [b for name in modules for b in br.module_branches(br.REFIMPL / name)
               if (functions is None or b.function in functions)
               and (reachable(b, "clarified") or reachable(b, "literal"))]
    missed = [b for b in covered if (b.module, b.line) not in lines]
    detail = {"section": document, "steps": steps, "branches_reached": len(covered) - len(missed),
              "branches": len(covered), "missed": [str(b) for b in missed]}
    return Result(Obligation(f"refinement-branches-{document}", "handlers_refine_model", f"(every {document} handler)",
                             "both", "refinement", "refinement", "one"), "incomplete" if missed else "refined", 0.0,
                  detail=detail)


def _branch_counts(functions: set[str], lines: set[tuple[str, int]],
                   modules: tuple[str, ...] = MODULES) -> tuple[int, int]:
    mine = [b for name in modules for b in br.module_branches(br.REFIMPL / name) if b.function in functions]
    return sum((b.module, b.line) in lines for b in mine), len(mine)


def _shrink(failure: tuple[em.InvariantViolation, list[dict[str, Any]], bool], mode: Mode) -> str | None:
    """A departing run's inputs shrunk (at most SHRINK_SECONDS) into a scenario file (YAML) that replays it."""
    import yaml

    from mqspec.proofs.explore.minimize import minimize, scenario_for

    _, inputs, fast = failure
    if not inputs:
        return None
    try:
        small = minimize(inputs, "handlers_refine_model", mode, budget=SHRINK_SECONDS, skip_idle_timers=fast)
    except ValueError:  # the departure needs this run's exact history: keep it all
        small = inputs
    return yaml.safe_dump(scenario_for(small, mode), sort_keys=False, width=110)
