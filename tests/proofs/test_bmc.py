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


@pytest.mark.slow
def test_clarified_bmc_proves_every_property():
    """Every schedule of at most two actions satisfies every multi-server property in clarified mode."""
    results = bmc.run("clarified")
    assert [(r.obligation.name, r.status) for r in results] == [(f"{p}-by-bmc", "proved") for p in bmc.PROPERTIES]


@pytest.mark.slow
def test_literal_bmc_never_converges():
    """Read literally, the enterprise never forms (E-142): convergence is violated by the first schedule."""
    results = {r.obligation.invariant: r for r in bmc.run("literal")}
    assert results["replicas_converge_at_quiescence"].status == "violated"
    assert results["replicas_converge_at_quiescence"].counterexample["errata"] == ["E-142"]
