"""Every machine run records its inputs and trace; replaying the inputs reproduces the trace exactly."""

import json

from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test
from mqspec.refimpl import scenario, scenario_run

from mqspec.proofs.explore.driver import NOTE_EVENTS, Driver, enterprise_input, replay, to_scenario
from mqspec.proofs.explore.machine import ReplicationMachine, Stats

RUNS = settings(max_examples=6, stateful_step_count=30, deadline=None, phases=[Phase.generate], database=None,
                suppress_health_check=list(HealthCheck))


class RecordingMachine(ReplicationMachine):
    """The replication machine with its checks off, keeping every run's inputs and trace."""

    CHECKED = frozenset()
    RECORD = True
    stats = Stats()


def _recorded() -> list[tuple[list[dict], list[dict]]]:
    if not RecordingMachine.stats.recorded:
        run_state_machine_as_test(RecordingMachine, settings=RUNS)
    return RecordingMachine.stats.recorded


def test_recorded_trace_replays_identically():
    """Replaying a run's inputs (through JSON) on a fresh World gives the run's trace record for record."""
    recorded = _recorded()
    assert len(recorded) >= 3
    for inputs, trace in recorded:
        again = replay(json.loads(json.dumps(inputs)))
        assert again == trace


def test_recorded_inputs_replay_as_a_scenario_file():
    """The scenario file written from a run's inputs makes `mqspec scenario run` produce the run's trace."""
    for inputs, trace in _recorded()[:3]:
        records: list[dict] = []
        parsed = scenario.parse(json.loads(json.dumps(to_scenario(inputs))), "replay")
        scenario_run.run(parsed, trace=records.append)
        assert [r for r in records if r["event"] not in NOTE_EVENTS] == trace


def test_built_enterprise_copy_behaves_as_a_fresh_build():
    """A run started from a copy of a cached built enterprise traces exactly as one built from scratch."""
    sites = [{"site": "site0", "psc": "PEC0", "bscs": ["BSC01"], "machines": ["C0"]},
             {"site": "site1", "psc": "PSC1", "bscs": [], "machines": ["C1"]}]
    tail = [{"input": "request", "at": "BSC01", "operation": "create", "type": "queue", "site": "site1",
             "path": "C1\\q", "properties": {"PROPID_Q_LABEL": "q", "PROPID_Q_SCOPE": 1}},
            {"input": "drop", "from": "PEC0", "times": 2},
            {"input": "advance", "seconds": 1300.0}]
    built = Driver()
    built.apply(enterprise_input(sites))
    copied = built.copy()
    for inp in tail:
        copied.apply(inp)
    assert copied.trace == replay([enterprise_input(sites), *tail])
