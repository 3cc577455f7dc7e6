"""The fast path (refimpl/fastpath.py) changes nothing: the same states, expectations and invariant verdicts."""

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test
from mqspec.clauses import covers
from mqspec.oracle.record import TraceRecorder
from mqspec.proofs import invariants as inv
from mqspec.proofs.explore.driver import Driver, enterprise_input
from mqspec.proofs.explore.machine import ReplicationMachine, Stats
from mqspec.proofs.scenario_watch import InvariantWatch
from mqspec.refimpl import scenario, scenario_run
from mqspec.refimpl.effects import Mode
from mqspec.refimpl.transport import Network
from mqspec.refimpl.world import TimerFired

SCENARIOS = sorted(Path(__file__).parents[2].joinpath("scenarios").rglob("*.yaml"))
#: the default tier runs these; the slow tier every scenario file
QUICK = {"4.3-creating-a-remote-queue", "4.5-full-partition-sync", "e137-seqnumberheader-per-neighbor",
         "replicas_converge_at_quiescence-site-scope-queue"}


def _scenario_run(path: Path, mode: Mode, fast: bool) -> tuple[dict, list, int]:
    watch = InvariantWatch()
    result = scenario_run.run(scenario.load(path), mode=mode, trace=watch.record, attach=watch.attach,
                              skip_idle_timers=fast)
    watch.finish()
    outcome = result.to_json()
    outcome.pop("messages")  # the skipped messages are not processed, so not counted
    return outcome, watch.history, result.world.timers_skipped


def _quick(path: Path, mode: Mode) -> bool:
    # literal runs are long (sync-request storms): the default tier keeps one of them
    return path.stem in QUICK and (mode is Mode.CLARIFIED or path.stem.startswith("4.3"))


def _assert_same_scenario(path: Path, mode: Mode) -> None:
    slow, slow_verdicts, none = _scenario_run(path, mode, False)
    fast, fast_verdicts, skipped = _scenario_run(path, mode, True)
    assert none == 0
    assert json.dumps(fast, sort_keys=True) == json.dumps(slow, sort_keys=True)
    assert fast_verdicts == slow_verdicts


@covers("MC-MQDSRP", "3.3.6.1")
@pytest.mark.parametrize("path, mode", [(p, m) for p in SCENARIOS for m in Mode if _quick(p, m)],
                         ids=lambda v: getattr(v, "stem", getattr(v, "value", None)))
def test_scenario_runs_the_same_with_the_fast_path(path, mode):
    """A scenario file gives the same final states, expectation results and invariant verdicts after every step with the fast path."""
    _assert_same_scenario(path, mode)


@pytest.mark.slow
@pytest.mark.parametrize("mode", list(Mode), ids=lambda m: m.value)
@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_every_scenario_file_runs_the_same_with_the_fast_path(path, mode):
    """Every scenario file gives the same final states, expectation results and invariant verdicts after every step with the fast path."""
    _assert_same_scenario(path, mode)


def test_the_fast_path_skips_idle_firings_of_a_quiet_enterprise():
    """A settled enterprise's propagation timers mostly fire idle, and the fast path skips them with the same clock."""
    scen = scenario.load(next(p for p in SCENARIOS if p.stem == "4.3-creating-a-remote-queue"))
    slow = scenario_run.run(scen)
    fast = scenario_run.run(scen, skip_idle_timers=True)
    assert fast.world.timers_skipped > 100
    assert fast.world.now == slow.world.now

    def timers(world):
        return [(t, e.node, e.timer) for t, e in world.scheduler.pending() if type(e) is TimerFired]

    assert timers(fast.world) == timers(slow.world)


def test_a_trace_recorder_turns_the_fast_path_off():
    """With the published-trace recorder attached every timer firing runs and is recorded (mqspec check replays them)."""
    scen = scenario.load(next(p for p in SCENARIOS if p.stem == "4.3-creating-a-remote-queue"))
    lines: list = []
    result = scenario_run.run(scen, skip_idle_timers=True, attach=lambda w: TraceRecorder(w, lines.append))
    assert result.world.skip_idle_timers and result.world.timers_skipped == 0
    assert sum(1 for r in lines if r.get("event") == "timer") > 100


def test_the_world_trace_names_what_was_skipped():
    """The World's own trace records each skipped firing and receipt, and expectations count them as messages."""
    records: list = []
    scen = scenario.load(next(p for p in SCENARIOS if p.stem == "4.3-creating-a-remote-queue"))
    result = scenario_run.run(scen, skip_idle_timers=True, trace=records.append)
    skipped = [r for r in records if r["event"] == "timer_skipped"]
    assert len(skipped) == result.world.timers_skipped
    assert {"node", "timer", "args", "to", "operation"} <= skipped[0].keys()
    assert sum(1 for r in records if r["event"] == "receive_skipped") == result.world.messages_skipped
    assert result.failures == []


class _Recording(ReplicationMachine):
    """The replication machine, checks off, keeping every run's inputs."""

    CHECKED = frozenset()
    RECORD = True
    EXPLAIN_SECONDS = 0.0
    stats = Stats()


class _LiteralRecording(_Recording):
    MODE = Mode.LITERAL
    FINAL_SETTLE = {"limit": 1800.0, "quiet": 1320.0, "window": 60.0}
    stats = Stats()


def _replay_both(inputs: list, mode: Mode) -> None:
    """Replay one run's inputs with and without the fast path; compare state and verdicts after each."""
    slow, fast = Driver(mode), Driver(mode, skip_idle_timers=True)
    for i, inp in enumerate(inputs):
        for d in (slow, fast):
            d.apply(inp)
        quiescent = inp["input"] == "settle" and slow.last_settle_quiet
        checks = [inv.check(d.ghost.observe(inp["input"], quiescent=quiescent, full=i == 0))  # type: ignore[union-attr]
                  for d in (slow, fast)]
        assert checks[0] == checks[1], f"input {i} {inp}"
        assert fast.world.snapshot() == slow.world.snapshot(), f"input {i} {inp}"
        assert fast.last_settle_quiet == slow.last_settle_quiet
    assert fast.world.now == slow.world.now


@covers("MC-MQDSRP", "3.3.6.1")
def test_random_machine_runs_are_the_same_with_the_fast_path():
    """Random runs of the replication machine (faults, crashes, cut links) give equal states and verdicts after every input."""
    machine = _Recording
    machine.stats = Stats()
    run_state_machine_as_test(machine, settings=settings(
        max_examples=5, stateful_step_count=40, deadline=None, phases=[Phase.generate], database=None,
        derandomize=True, suppress_health_check=list(HealthCheck)))
    assert machine.stats.recorded
    for inputs, _trace in machine.stats.recorded:
        _replay_both(inputs, machine.MODE)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_many_random_machine_runs_are_the_same_with_the_fast_path(seed):
    """More random machine runs, in both modes, with equal states and verdicts after every input."""
    for machine in (_Recording, _LiteralRecording):
        machine.stats = Stats()
        run_state_machine_as_test(machine, settings=settings(
            max_examples=8, stateful_step_count=80, deadline=None, phases=[Phase.generate], database=None,
            suppress_health_check=list(HealthCheck)))
        for inputs, _trace in machine.stats.recorded:
            _replay_both(inputs, machine.MODE)


def test_a_quiet_arrival_at_a_stopped_server_becomes_the_real_message(monkeypatch):
    """When the receiver stops while a skipped message is on its way, the real message is made and held as it would be."""
    made = []
    late_arrival = Network.late_arrival
    monkeypatch.setattr(Network, "late_arrival", lambda self, *a: made.append(a) or late_arrival(self, *a))
    sites = [{"site": "site0", "psc": "PEC0", "bscs": ["BSC01"], "machines": []}]
    drivers = [Driver(skip_idle_timers=fast) for fast in (False, True)]
    for d in drivers:
        d.apply(enterprise_input(sites))
        d.apply({"input": "settle"})
    for offset in (0.01, 0.03, 0.049):
        world = drivers[0].world
        due = min(t for t, e in world.scheduler.pending() if type(e) is TimerFired and e.node == "PEC0")
        for d in drivers:
            # stop the BSC inside the 50 ms the firing's message is on its way, restart it later
            d.apply({"input": "advance", "seconds": due + offset - world.now})
            d.apply({"input": "crash", "node": "BSC01"})
            d.apply({"input": "advance", "seconds": 30.0})
            d.apply({"input": "restart", "node": "BSC01"})
            d.apply({"input": "advance", "seconds": 5.0})
        assert drivers[1].world.snapshot() == drivers[0].world.snapshot()
        assert drivers[1].world.network.queue_depth("BSC01") == drivers[0].world.network.queue_depth("BSC01")
    assert made and drivers[1].world.timers_skipped > 0
