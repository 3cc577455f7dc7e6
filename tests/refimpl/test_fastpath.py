"""The fast path (refimpl/fastpath.py) changes nothing: the same states, expectations and invariant verdicts."""

import json
from pathlib import Path

import hypothesis.core
import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test
from mqspec.clauses import covers
from mqspec.oracle.record import TraceRecorder
from mqspec.proofs import invariants as inv
from mqspec.proofs.explore.driver import Driver, enterprise_input
from mqspec.proofs.explore.machine import ReplicationMachine, Stats
from mqspec.proofs.scenario_watch import InvariantWatch
from mqspec.refimpl import clock, scenario, scenario_run
from mqspec.refimpl.effects import Mode
from mqspec.refimpl.transport import Network
from mqspec.refimpl.world import TimerFired, World

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
    assert result.world.firings_unrun == 0 and result.world.messages_skipped == 0
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


class _Shadowed(ReplicationMachine):
    """The replication machine on the slow path with a World trace, checks off, shadowed by two fresh
    Drivers on the fast path (traced, and untraced as the machine runs it) that perform each of its
    inputs: after every step their states, settle outcomes and invariant verdicts must equal its own."""

    CHECKED = frozenset()
    RECORD = True  # the machine's own World keeps its trace and runs every firing (no fast path)
    EXPLAIN_SECONDS = 0.0
    stats = Stats()
    #: over the runs of a test: steps compared, and firings and receipts the shadows skipped
    compared = 0
    skipped = 0

    def __init__(self) -> None:
        super().__init__()
        self.shadows: tuple[Driver, Driver] | None = None

    def _observe(self, label: str, **kwargs) -> None:
        super()._observe(label, **kwargs)
        slow, obs = self.driver, self.obs
        if self.shadows is None:  # the build's observation: the shadows build the same enterprise afresh
            self.shadows = (Driver(self.MODE, skip_idle_timers=True),
                            Driver(self.MODE, skip_idle_timers=True, trace=False))
        verdicts, state = inv.check(obs), slow.world.snapshot()
        for shadow in self.shadows:
            for inp in slow.inputs[len(shadow.inputs):]:
                shadow.apply(inp)
            seen = shadow.ghost.observe(obs.step, quiescent=obs.quiescent, full=obs.full, settled=obs.settled)
            where = f"input {len(slow.inputs) - 1} {slow.inputs[-1]}, {'' if shadow.world.tracing else 'un'}traced"
            assert shadow.last_settle_quiet == slow.last_settle_quiet, where
            assert inv.check(seen) == verdicts, where
            assert shadow.world.snapshot() == state, where
        type(self).compared += 1

    def teardown(self) -> None:
        super().teardown()
        type(self).stats.recorded.clear()  # RECORD's copy of the run's inputs and trace: not needed here
        if self.driver is None:
            return
        # every input was performed and compared by both shadows (a renamed _observe would compare nothing)
        assert self.shadows is not None
        for shadow in self.shadows:
            assert shadow.inputs == self.driver.inputs and shadow.world.now == self.driver.world.now
            type(self).skipped += shadow.world.timers_skipped + shadow.world.firings_unrun + shadow.world.messages_skipped


class _LiteralShadowed(_Shadowed):
    MODE = Mode.LITERAL
    FINAL_SETTLE = {"limit": 1800.0, "quiet": 1320.0, "window": 60.0}
    stats = Stats()


def _shadowed_runs(machine: type[_Shadowed], seed: int, runs: int, steps: int) -> None:
    """``runs`` random runs of ``machine`` of up to ``steps`` steps, drawn from hypothesis seed ``seed``."""
    machine.stats, machine.compared, machine.skipped = Stats(), 0, 0
    forced = hypothesis.core.global_force_seed
    hypothesis.core.global_force_seed = seed  # derandomize off: it would draw the same runs whatever the seed
    try:
        run_state_machine_as_test(machine, settings=settings(
            max_examples=runs, stateful_step_count=steps, deadline=None, phases=[Phase.generate], database=None,
            derandomize=False, print_blob=False, suppress_health_check=list(HealthCheck)))
    finally:
        hypothesis.core.global_force_seed = forced
    assert machine.stats.runs >= runs and machine.compared == machine.stats.steps
    # the fast path was taken, so the comparison could have failed
    assert machine.skipped > 0


def _replay_both(inputs: list, mode: Mode) -> None:
    """Replay one run's inputs with and without the fast path (traced, and untraced as the machine runs it);
    compare state and verdicts after each."""
    slow, fast, untraced = Driver(mode), Driver(mode, skip_idle_timers=True), Driver(mode, skip_idle_timers=True,
                                                                                      trace=False)
    for i, inp in enumerate(inputs):
        for d in (slow, fast, untraced):
            d.apply(inp)
        quiescent = inp["input"] == "settle" and slow.last_settle_quiet
        checks = [inv.check(d.ghost.observe(inp["input"], quiescent=quiescent, full=i == 0))  # type: ignore[union-attr]
                  for d in (slow, fast, untraced)]
        assert checks[0] == checks[1] == checks[2], f"input {i} {inp}"
        assert fast.world.snapshot() == slow.world.snapshot() == untraced.world.snapshot(), f"input {i} {inp}"
        assert fast.last_settle_quiet == slow.last_settle_quiet == untraced.last_settle_quiet
    assert fast.world.now == slow.world.now == untraced.world.now


@covers("MC-MQDSRP", "3.3.6.1")
def test_random_machine_runs_are_the_same_with_the_fast_path():
    """Random runs of the replication machine (faults, crashes, cut links) give equal states and verdicts after every input."""
    _shadowed_runs(_Shadowed, seed=0, runs=5, steps=40)


#: (runs, steps, timeout in seconds) per seed. A literal run costs about 30 times a clarified one (its
#: sync-request storms keep every settle busy to its limit, with or without the fast path), and the
#: first run of a seed is hypothesis's empty one; the timeouts leave room for a loaded machine
RANDOM_RUNS = {Mode.CLARIFIED: (8, 80, 1800), Mode.LITERAL: (3, 80, 3600)}


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("mode", [pytest.param(m, id=m.value, marks=pytest.mark.timeout(RANDOM_RUNS[m][2]))
                                  for m in Mode])
def test_many_random_machine_runs_are_the_same_with_the_fast_path(mode, seed):
    """More random machine runs, one hypothesis seed per test, with equal states and verdicts after every input."""
    runs, steps, _timeout = RANDOM_RUNS[mode]
    _shadowed_runs(_Shadowed if mode is Mode.CLARIFIED else _LiteralShadowed, seed, runs, steps)


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


def _sites(*bscs: str) -> list:
    return [{"site": "site0", "psc": "PEC0", "bscs": list(bscs), "machines": []},
            {"site": "site1", "psc": "PSC1", "bscs": [], "machines": []}]


def _nowhere_site() -> dict:
    """A site object naming a PSC that is never installed: the PEC gets a PSC neighbor no machine answers for."""
    return {"input": "request", "at": "PEC0", "operation": "create", "type": "site", "path": "xsite",
            "properties": {"PROPID_S_PATHNAME": "xsite", "PROPID_S_SITEID": "{6a5b4e2c-0000-4000-8000-00000000000a}",
                           "PROPID_S_PSC": "Xnowhere"}}


@covers("MC-MQDSRP", "3.3.6.1")
def test_idle_firings_whose_message_must_travel_send_it_without_the_handler():
    """Idle firings at a machine nobody runs, across a cut link or at a stopped server send the real message, with the same states and verdicts."""
    inputs = [enterprise_input(_sites("BSC01")), _nowhere_site(), {"input": "advance", "seconds": 60.0},
              {"input": "partition", "a": "PEC0", "b": "BSC01"}, {"input": "advance", "seconds": 30.0},
              {"input": "crash", "node": "PSC1"}, {"input": "advance", "seconds": 45.0},
              {"input": "heal"}, {"input": "restart", "node": "PSC1"}, {"input": "advance", "seconds": 30.0},
              {"input": "settle"}]
    _replay_both(inputs, Mode.CLARIFIED)
    fast = Driver(skip_idle_timers=True)
    for inp in inputs:
        fast.apply(inp)
    assert fast.world.firings_unrun > 0 and fast.world.messages_skipped > 0
    # what went for real went to the same places as in a run without the fast path
    slow = Driver()
    for inp in inputs:
        slow.apply(inp)
    sent = [(r["node"], r["to"], r["body"]) for r in slow.trace if r["event"] == "send" and r["to"] == "Xnowhere"]
    assert sent and sent == [(r["node"], r["to"], r["body"]) for r in fast.trace
                             if r["event"] == "send" and r["to"] == "Xnowhere"]


def test_an_empty_propagation_is_recognised_by_its_bytes():
    """Only a ChangePropagationMessage with no change and no SeqNumberHeader counts as empty (its receipt changes nothing)."""
    from mqspec.model import mqdsrp
    from mqspec.model.guid import Guid
    from mqspec.model.mqdsrp import ChangePropagationMessage, SeqNumberHeader
    from mqspec.refimpl import fastpath

    site = Guid.from_name("site:x")
    empty = mqdsrp.encode(ChangePropagationMessage(site, False, (), SeqNumberHeader(None, ())))
    assert fastpath.is_empty_propagation(empty)
    assert fastpath.is_empty_propagation(mqdsrp.encode(ChangePropagationMessage(site, True, (), SeqNumberHeader(None, ()))))
    assert not fastpath.is_empty_propagation(empty[:-1])
    assert not fastpath.is_empty_propagation(bytes([1]) + empty[1:])  # another version
    assert not fastpath.is_empty_propagation(empty[:17] + bytes([2]) + empty[18:])  # another operation
    assert not fastpath.is_empty_propagation(empty[:20] + bytes([1]) + empty[21:])  # one change announced


def _heap(world) -> list:
    """The scheduler's queue as (time, insertion number, what) in firing order, cancelled entries left out."""
    def what(event):
        if type(event) is TimerFired:
            return ("timer", event.node, event.timer)
        return (type(event).__name__, getattr(event, "source", None), getattr(event, "destination", None))
    return sorted((at, seq, what(ev)) for at, seq, ev in world.scheduler._heap if ev is not clock._CANCELLED)


def test_skipping_on_a_finding_queues_exactly_what_skipping_each_firing_does(monkeypatch):
    """World.run_until's loop on the fast path leaves the same events, times and order in the queue as the skip of each firing."""
    inputs = [enterprise_input(_sites("BSC01", "BSC02")), {"input": "advance", "seconds": 250.0},
              {"input": "request", "at": "PEC0", "operation": "create", "type": "cn", "path": "cn1",
               "properties": {"PROPID_CN_PROTOCOLID": 1, "PROPID_CN_GUID": "{6a5b4e2c-0000-4000-8000-00000000000b}"}},
              {"input": "advance", "seconds": 0.05}, {"input": "advance", "seconds": 1300.0},
              {"input": "partition", "a": "PEC0", "b": "BSC02"}, {"input": "advance", "seconds": 31.0}]
    loop = Driver(skip_idle_timers=True)
    for inp in inputs:
        loop.apply(inp)
    monkeypatch.setattr(World, "run_until", lambda self, until: self.scheduler.run_until(until, self._dispatch))
    each = Driver(skip_idle_timers=True)
    for inp in inputs:
        each.apply(inp)
    assert loop.world.timers_skipped == each.world.timers_skipped > 1000
    assert _heap(loop.world) == _heap(each.world)
    assert loop.trace == each.trace
    assert loop.world.snapshot() == each.world.snapshot()


def test_an_untraced_run_takes_quiet_arrivals_at_once_with_the_same_observations(monkeypatch):
    """Without a trace, quiet arrivals due within the call are taken at once: each step's touched servers, events and verdicts, the counts and the queue's order are those of skipping each firing."""
    inputs = [enterprise_input(_sites("BSC01", "BSC02")), {"input": "advance", "seconds": 250.0},
              {"input": "request", "at": "PEC0", "operation": "create", "type": "cn", "path": "cn1",
               "properties": {"PROPID_CN_PROTOCOLID": 1, "PROPID_CN_GUID": "{6a5b4e2c-0000-4000-8000-00000000000b}"}},
              {"input": "advance", "seconds": 0.03}, {"input": "advance", "seconds": 2.0},
              {"input": "advance", "seconds": 1300.0}, {"input": "crash", "node": "BSC01"},
              {"input": "advance", "seconds": 31.0}, {"input": "restart", "node": "BSC01"}, {"input": "settle"}]
    loop = Driver(skip_idle_timers=True, trace=False)
    seen = []
    for inp in inputs:
        loop.apply(inp)
        obs = loop.ghost.observe(inp["input"], full=inp["input"] == "enterprise")
        seen.append((obs.touched, obs.events, inv.check(obs)))
    monkeypatch.setattr(World, "run_until", lambda self, until: self.scheduler.run_until(until, self._dispatch))
    each = Driver(skip_idle_timers=True)
    for inp, (touched, events, verdicts) in zip(inputs, seen):
        each.apply(inp)
        obs = each.ghost.observe(inp["input"], full=inp["input"] == "enterprise")
        assert (obs.touched, obs.events, inv.check(obs)) == (touched, events, verdicts), inp
    assert (loop.world.timers_skipped, loop.world.messages_skipped) == (each.world.timers_skipped,
                                                                        each.world.messages_skipped)
    assert loop.world.messages_skipped > 1000
    assert [(at, what) for at, _seq, what in _heap(loop.world)] == [(at, what) for at, _seq, what in _heap(each.world)]
    assert loop.world.snapshot() == each.world.snapshot()
