"""MC-MQDSRP 3.3.6.1 Change Propagation Timer Event: send the neighbor its changes and start the next instance."""

from mqspec.model.mqdsrp import ChangePropagationMessage, Command
from mqspec.refimpl.effects import StartTimer, TimerKey, TimerScope
from mqspec.refimpl.mqdsrp_client import change_propagation_timer_event

from mqspec.clauses import covers

from .mqdsrp_fixtures_client import (
    BSC11,
    PEC,
    PSC1,
    SITE1,
    change,
    ctx_for,
    psc_qm,
    sent,
    started,
)


@covers("MC-MQDSRP", "3.3.6.1")
def test_an_intersite_timer_propagates_to_its_psc_neighbor_and_restarts():
    """"Raise a Send Change Propagation event ... Initialize another instance ... with the same arguments" (10 s)."""
    qm = psc_qm()
    pending = change(Command.CREATE, SITE1, 1)
    qm.psc_neighbors[0].available_changes = [pending]
    ctx = ctx_for(qm)
    change_propagation_timer_event(qm, ctx, PEC, TimerScope.INTERSITE)
    [message] = sent(ctx)
    assert (message.destination, type(message.body), message.body.changes) == (
        PEC, ChangePropagationMessage, (pending,))
    assert started(ctx) == [StartTimer(PSC1, TimerKey("change_propagation", (PEC, "Intersite")), 10.0)]
    assert ctx.effects.index(message) < ctx.effects.index(started(ctx)[0])
    assert qm.psc_neighbors[0].available_changes == []


@covers("MC-MQDSRP", "3.3.6.1")
def test_an_intrasite_timer_propagates_to_its_bsc_neighbor_and_restarts():
    """An Intrasite timer serves a BSC neighbor and restarts with the intrasite interval (2 s, <6>)."""
    qm = psc_qm()
    ctx = ctx_for(qm)
    change_propagation_timer_event(qm, ctx, BSC11, TimerScope.INTRASITE)
    assert [e.destination for e in sent(ctx)] == [BSC11]
    assert started(ctx) == [StartTimer(PSC1, TimerKey("change_propagation", (BSC11, "Intrasite")), 2.0)]


@covers("MC-MQDSRP", "3.3.6.1")
def test_a_timer_of_a_removed_neighbor_stops():
    """A neighbor removed since (a deleted site or BSC) is not found: nothing is sent and no timer restarts."""
    qm = psc_qm(bsc_neighbors=[])
    ctx = ctx_for(qm)
    change_propagation_timer_event(qm, ctx, BSC11, TimerScope.INTRASITE)
    assert ctx.effects == []


@covers("MC-MQDSRP", "3.3.6.1")
def test_the_scope_chooses_the_neighbor_collection():
    """Intrasite looks in BSCNeighborCollection only: a PSC neighbor's name there finds nothing."""
    qm = psc_qm()
    ctx = ctx_for(qm)
    change_propagation_timer_event(qm, ctx, PEC, TimerScope.INTRASITE)
    assert ctx.effects == []
