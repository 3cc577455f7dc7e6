"""MC-MQDSRP 3.2.7.5 Receive BSC Ack: "Set dirBSCNeighbor.LastAckedTime to the current time"."""

from mqspec.model.guid import Guid
from mqspec.model.mqdsrp import BSCAckMessage
from mqspec.refimpl.mqdsrp_server import receive_bsc_ack

from mqspec.clauses import covers

from .mqdsrp_fixtures_client import BSC11, SITE0, SITE1, bsc_qm, ctx_for, pec_qm, psc_qm


def ack(name=BSC11, site=SITE1):
    return BSCAckMessage(site, Guid.from_name(f"qm:{name}"), name)


@covers("MC-MQDSRP", "3.2.7.5")
def test_a_bsc_ignores_bsc_acks():
    """"If the queue manager is not a PSC: Take no further action"."""
    qm = bsc_qm()
    ctx = ctx_for(qm, now=50.0)
    receive_bsc_ack(qm, ctx, ack())
    assert ctx.effects == [] and qm.bsc_neighbors == []


@covers("MC-MQDSRP", "3.2.7.5")
def test_an_ack_from_no_bsc_neighbor_is_ignored():
    """"If dirBSCNeighbor is not found: Take no further action"."""
    qm = psc_qm()
    ctx = ctx_for(qm, now=50.0)
    receive_bsc_ack(qm, ctx, ack(name="BSC99"))
    assert qm.bsc_neighbors[0].last_acked_time == 0.0
    assert ctx.effects == []


@covers("MC-MQDSRP", "3.2.7.5")
def test_a_psc_records_the_time_of_the_ack():
    """The BSC neighbor's LastAckedTime becomes the current time; nothing is sent."""
    qm = psc_qm()
    ctx = ctx_for(qm, now=1234.5)
    receive_bsc_ack(qm, ctx, ack())
    assert qm.bsc_neighbors[0].last_acked_time == 1234.5
    assert ctx.effects == []


@covers("MC-MQDSRP", "3.2.7.5")
def test_the_pec_records_the_time_of_its_bscs_ack():
    """A statement about a PSC also applies to the PEC (1.3.1.1)."""
    qm = pec_qm(bsc_neighbors=["BSC01"])
    receive_bsc_ack(qm, ctx_for(qm, now=7.0), ack(name="BSC01", site=SITE0))
    assert qm.bsc_neighbors[0].last_acked_time == 7.0
