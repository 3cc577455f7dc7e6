"""Bounded model checking on the simulator: PEC + PSC + BSC, every short schedule of changes and faults."""

import pytest
from mqspec.proofs import bmc

from mqspec.clauses import covers


@covers("MC-MQDSRP", "3.2.7.1")
def test_a_fault_free_schedule_satisfies_every_property():
    """Changes at each server with no fault leave the enterprise converged, one authority per partition."""
    problems = bmc.check_schedule(("create C1\\r at BSC11", "update C1\\a at PEC0"), "clarified")
    assert problems == {p: [] for p in bmc.PROPERTIES}


KNOWN = sorted(bmc.KNOWN_FINDINGS.items())


@covers("MC-MQDSRP", "3.1.7.2.3")
@covers("MC-MQDSRP", "3.2.7.1")
@covers("MC-MQDSRP", "3.2.7.8")
@pytest.mark.parametrize("schedule,erratum", KNOWN, ids=[f"{e}:{' + '.join(s)}" for s, e in KNOWN])
def test_a_schedule_that_showed_an_erratum_satisfies_every_property_clarified(schedule, erratum):
    """The schedules that showed E-261, E-263 and E-264 leave the enterprise converged in clarified mode."""
    assert bmc.check_schedule(schedule, "clarified") == {p: [] for p in bmc.PROPERTIES}


@covers("MC-MQDSRP", "3.1.7.2.3")
@covers("MC-MQDSRP", "3.2.7.1")
@covers("MC-MQDSRP", "3.2.7.8")
@pytest.mark.parametrize("schedule,erratum", KNOWN, ids=[f"{e}:{' + '.join(s)}" for s, e in KNOWN])
def test_a_schedule_that_showed_an_erratum_fails_with_its_handler_read_literally(schedule, erratum):
    """Read literally only in the handler the entry's clarification changes, the schedule leaves a replica behind."""
    from mqspec.proofs.counterexample_scenarios import literal_in

    with literal_in(bmc.LITERAL_HANDLER[erratum]):
        problems = bmc.check_schedule(schedule, "clarified")
    assert problems["replicas_converge_at_quiescence"]


def test_a_schedule_is_a_runnable_scenario():
    """Every schedule becomes scenario data that the scenario parser accepts."""
    from mqspec.refimpl.scenario import parse

    for schedule in bmc.schedules(1):
        assert parse(bmc.scenario_data(schedule)).steps


@covers("MC-MQDSRP", "3.1.7.2.9")
@covers("MC-MQDSRP", "3.1.7.2.11")
@covers("MC-MQDSRP", "3.3.7.10")
def test_clarified_bmc_proves_every_property(prove_runs):
    """Every schedule of at most two actions (purge rounds, sync0, a handover among them) satisfies every
    multi-server property in clarified mode; the rows say the run covers three servers."""
    rows = prove_runs["clarified"].of_kind("bounded")
    assert [(r["name"], r["status"], r["servers"]) for r in rows] == [
        (f"{p}-by-bmc", "proved", str(bmc.SERVERS)) for p in bmc.PROPERTIES]


def test_the_schedules_reach_purges_sync0_and_a_handover():
    """The bounded schedules include a purge round that takes BSC11 through sync0, and PSC1's handover (last)."""
    names = {name for schedule in bmc.schedules() for name in schedule}
    assert bmc.MOVE in names and any(name.startswith("purge round") for name in names)
    assert all(bmc.MOVE not in s[:-1] for s in bmc.schedules())
    from mqspec.refimpl.effects import Mode
    from mqspec.refimpl.mqdsrp_state import PurgeState
    from mqspec.refimpl.scenario import parse
    from mqspec.refimpl.scenario_run import run

    purge = next(n for n in names if n.startswith("purge round"))
    world = run(parse(bmc.scenario_data((purge,)), "bmc"), mode=Mode.CLARIFIED).world
    site1 = world.site_guid("site1")
    assert world.nodes["PSC1"].find_partition(site1).purged_seq_number.value > 0
    partition = world.nodes["BSC11"].find_partition(site1)
    assert partition.purge_state is PurgeState.NORMAL and partition.purged_seq_number.value > 0


def test_literal_bmc_never_converges(prove_runs):
    """Read literally, the enterprise never forms (E-142): convergence is violated by the first schedule."""
    rows = {r["invariant"]: r for r in prove_runs["literal"].of_kind("bounded")}
    assert rows["replicas_converge_at_quiescence"]["status"] == "violated"
    assert rows["replicas_converge_at_quiescence"]["counterexample"]["errata"] == ["E-142"]
