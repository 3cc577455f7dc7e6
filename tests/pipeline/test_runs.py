"""One exploration run is a pure function of its arguments, and its row says what it did and found."""

from __future__ import annotations

import json

import pytest
import yaml

from mqspec.oracle.check import check, check_text
from mqspec.pipeline.runs import RUN_SCHEMA, TIMING_COLUMNS, Campaign, derive_seed, run_rows, run_trace, store_trace
from mqspec.pipeline.store import Location
from mqspec.proofs.explore.minimize import violations
from mqspec.proofs.explore.run import check_arguments, explore_run, shrink
from mqspec.refimpl import scenario, scenario_run
from mqspec.refimpl.effects import Mode


def _untimed(row: dict) -> dict:
    row = {k: v for k, v in row.items() if k not in TIMING_COLUMNS}
    row["violations"] = [{k: v for k, v in x.items() if k not in TIMING_COLUMNS} for x in row["violations"]]
    return row


def test_a_run_is_a_function_of_its_seed():
    """The same seed gives the same record twice in one process, timing aside; another seed another run."""
    first, again, other = explore_run(11), explore_run(11), explore_run(12)
    assert _untimed(first.to_row()) == _untimed(again.to_row())
    assert first.inputs != other.inputs


def test_a_clarified_run_converges_and_says_what_it_did():
    """A clarified ci-profile run converges with every invariant held, and counts its steps, handlers, wire and clauses."""
    record = explore_run(5)
    assert record.converged and record.violations == ()
    assert record.steps == len(record.inputs) and record.steps > 3
    assert record.handler_runs > 0 and record.messages > 0 and record.wire_bytes > record.messages
    assert record.simulated_seconds > 22 * 60  # every run ends with a settle of 22 quiet minutes
    assert "MC-MQDSRP 3.1.7.2.2" in record.clauses and "MC-MQDSRP 3.1.3.1" in record.clauses


def test_a_literal_run_is_violated_with_its_errata_and_shrinks_to_a_scenario_that_fails():
    """Read literally, a run breaks an invariant the register explains (E-142, E-108, ...); the shrunk scenario replays it."""
    record = explore_run(3, mode=Mode.LITERAL)
    first = next(v for v in record.violations if v.errata)
    assert set(first.errata) <= {"E-142", "E-119", "E-108", "E-104"} and not record.converged
    small = shrink(record, first, replays=8)
    assert len(small.inputs) <= len(record.inputs)
    assert violations(list(small.inputs), Mode.LITERAL, stop=first.invariant)
    parsed = scenario.parse(yaml.safe_load(small.scenario), "shrunk")
    assert not scenario_run.run(parsed, mode=Mode.LITERAL).converged
    assert small.key == shrink(record, first, replays=8).key


def test_seeds_derive_from_the_campaign_seed_and_the_run_index_alone():
    """Run i's seed depends on (seed, i) only: distinct per run and per campaign, 63 bits."""
    seeds = {derive_seed(s, i) for s in (0, 1) for i in range(50)}
    assert len(seeds) == 100 and all(0 <= x < 2**63 for x in seeds)
    assert derive_seed(7, 3) == derive_seed(7, 3)


def test_run_rows_match_the_arrow_schema_and_keep_a_trace_that_conforms(tmp_path):
    """A row has every column of RUN_SCHEMA once its trace is stored: compressed, under traces/, named in the
    row, and a trace the checker finds conformant (read back through the compression)."""
    campaign = Campaign(runs=2, seed=4, traces=True)
    (row,) = run_rows([1], campaign)
    (report,) = check_text(row["trace"], "run-1.ndjson")
    assert report.verdict == "conformant", report.to_json().get("divergence")
    assert json.loads(row["trace"].splitlines()[0])["event"] == "header"
    stored = store_trace(row, campaign, Location(tmp_path))
    assert set(stored) == set(RUN_SCHEMA.names)
    path = tmp_path / "traces" / "run-000000001.ndjson.zst"
    assert stored["trace_file"] == path.name and stored["trace_bytes"] == path.stat().st_size
    assert path.stat().st_size * 5 < len(row["trace"])
    assert [r.verdict for r in check(path).traces] == ["conformant"]


def test_a_trace_of_a_run_that_moves_a_psc_conforms():
    """The differential test the pipeline runs (explore --traces, then check) holds on a run with move_psc:
    the trace declares the handover (E-313) and the new PSC's replay takes it over."""
    (row,) = run_rows([0], Campaign(runs=1, seed=4, traces=True))
    assert '"event":"handover"' in row["trace"]
    (report,) = check_text(row["trace"], "run-0.ndjson")
    assert report.verdict == "conformant", report.to_json().get("divergence")


def test_a_selective_trace_is_recorded_under_its_reading():
    """run_trace replays under the record's reading (literal inside the named handlers only)."""
    record = explore_run(2, reading=("receive_sync_request",))
    assert record.reading == ("receive_sync_request",)
    assert run_trace(record, "t").count("\n") > 10


@pytest.mark.parametrize(("profile", "mode", "reading", "message"), [
    ("nightly", Mode.CLARIFIED, (), "profile 'nightly'"),
    ("ci", Mode.LITERAL, ("receive_sync_request",), "use it with the clarified mode"),
    ("ci", Mode.CLARIFIED, ("no_such_handler",), "no_such_handler is not an MC-MQDSRP handler"),
])
def test_arguments_that_cannot_be_explored_are_refused_by_name(profile, mode, reading, message):
    """An unknown profile, a reading in literal mode or an unknown handler is a ValueError naming it."""
    with pytest.raises(ValueError, match=message):
        check_arguments(profile, mode, reading)
