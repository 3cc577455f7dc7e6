"""MC-MQDSRP 3.3.6.2 BSC Ack Timer Event: a BSC acknowledges to its PSC and starts the next timer."""

from mqspec.model.mqdsrp import BSCAckMessage
from mqspec.refimpl.effects import StartTimer, TimerKey
from mqspec.refimpl.mqdsrp_client import bsc_ack_timer_event

from mqspec.clauses import covers

from .mqdsrp_fixtures_client import BSC11, PSC1, SITE1, bsc_qm, ctx_for, expect_send


@covers("MC-MQDSRP", "3.3.6.2")
def test_the_bsc_ack_goes_to_my_psc_name_and_the_next_timer_is_12_hours():
    """BSCMachineID := Identifier, BSCName := MachineName; sent to MyPSCName; the next instance after 12 hours (<7>)."""
    qm = bsc_qm()
    ctx = ctx_for(qm)
    bsc_ack_timer_event(qm, ctx)
    ack = BSCAckMessage(SITE1, qm.identifier, BSC11)
    assert ctx.effects == [
        expect_send(qm, PSC1, ack, 20 * 60, 3, "AckNackReachQueue", acked_queues=True),
        StartTimer(BSC11, TimerKey("bsc_ack"), 12 * 3600.0),
    ]


@covers("MC-MQDSRP", "3.3.6.2")
def test_the_ack_follows_a_changed_my_psc_name():
    """The destination is read when the timer fires: a PSC learned from a SeqNumberHeader (3.2.7.1) gets it."""
    qm = bsc_qm()
    qm.my_psc_name = "PSC1-new"
    ctx = ctx_for(qm)
    bsc_ack_timer_event(qm, ctx)
    assert [e.destination for e in ctx.effects if hasattr(e, "destination")] == ["PSC1-new"]


@covers("MC-MQDSRP", "3.3.6.2")
def test_without_a_psc_name_nothing_is_sent_but_the_timer_restarts():
    """A BSC that does not know its PSC yet has no iDestination: no message, the timer still restarts."""
    qm = bsc_qm(psc=None, site_partition=False)
    ctx = ctx_for(qm)
    bsc_ack_timer_event(qm, ctx)
    assert ctx.effects == [StartTimer(BSC11, TimerKey("bsc_ack"), 12 * 3600.0)]
