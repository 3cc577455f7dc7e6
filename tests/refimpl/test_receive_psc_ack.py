"""MC-MQDSRP 3.2.7.4 Receive PSC Ack: record what a PSC neighbor acknowledged of a partition this server owns."""

from mqspec.model.mqdsrp import PSCAckMessage
from mqspec.model.seqnum import MIN_SEQ_NUMBER
from mqspec.refimpl.mqdsrp_server import receive_psc_ack

from mqspec.clauses import covers

from .mqdsrp_fixtures_client import (
    ENT,
    PEC,
    PSC1,
    PSC2,
    SITE0,
    SITE1,
    SITE2,
    bsc_qm,
    ctx_for,
    pec_qm,
    psc_qm,
    seq,
)


def ack(partition_id, n, name=PSC1, site=SITE1):
    return PSCAckMessage(site, site, partition_id, seq(n), name)


def acked(neighbor):
    return (neighbor.acked_seq_number, neighbor.acked_pec_seq_number)


@covers("MC-MQDSRP", "3.2.7.4")
def test_a_bsc_ignores_psc_acks():
    """"If queue manager is not PSC: Take no further action"."""
    qm = bsc_qm()
    ctx = ctx_for(qm)
    receive_psc_ack(qm, ctx, ack(SITE1, 5))
    assert ctx.effects == [] and qm.psc_neighbors == []


@covers("MC-MQDSRP", "3.2.7.4")
def test_an_ack_from_no_neighbor_is_ignored():
    """"If dirPSCNeighbor is not found: Take no further action"."""
    qm = pec_qm()
    ctx = ctx_for(qm)
    receive_psc_ack(qm, ctx, ack(ENT, 5, name=PSC2, site=SITE2))
    assert acked(qm.psc_neighbors[0]) == (MIN_SEQ_NUMBER, MIN_SEQ_NUMBER)
    assert ctx.effects == []


@covers("MC-MQDSRP", "3.2.7.4")
def test_the_pec_records_an_enterprise_ack_in_acked_pec_seq_number():
    """PEC and AckedPartitionID = MyEnterprisePartition.PartitionID: "Set dirPSCNeighbor.AckedPECSeqNumber"."""
    qm = pec_qm()
    ctx = ctx_for(qm)
    receive_psc_ack(qm, ctx, ack(ENT, 256))
    assert acked(qm.psc_neighbors[0]) == (MIN_SEQ_NUMBER, seq(256))
    assert ctx.effects == []


@covers("MC-MQDSRP", "3.2.7.4")
def test_the_pec_records_a_site_ack_in_acked_seq_number():
    """AckedPartitionID = MySitePartition.PartitionID: "Set dirPSCNeighbor.AckedSeqNumber"."""
    qm = pec_qm()
    receive_psc_ack(qm, ctx_for(qm), ack(SITE0, 512))
    assert acked(qm.psc_neighbors[0]) == (seq(512), MIN_SEQ_NUMBER)


@covers("MC-MQDSRP", "3.2.7.4")
def test_a_psc_records_an_ack_of_its_site():
    """A PSC (not the PEC) records the ack of its own site partition."""
    qm = psc_qm()
    receive_psc_ack(qm, ctx_for(qm), ack(SITE1, 256, name=PEC, site=SITE0))
    assert acked(qm.psc_neighbors[0]) == (seq(256), MIN_SEQ_NUMBER)


@covers("MC-MQDSRP", "3.2.7.4")
def test_a_psc_ignores_an_ack_of_the_enterprise_partition():
    """Only the PEC records enterprise acks; a PSC's enterprise partition is no MySitePartition either."""
    qm = psc_qm()
    receive_psc_ack(qm, ctx_for(qm), ack(ENT, 256, name=PEC, site=SITE0))
    assert acked(qm.psc_neighbors[0]) == (MIN_SEQ_NUMBER, MIN_SEQ_NUMBER)


@covers("MC-MQDSRP", "3.2.7.4")
def test_an_ack_of_a_replicated_partition_is_ignored():
    """An ack of a partition this server does not own changes nothing."""
    qm = pec_qm()
    receive_psc_ack(qm, ctx_for(qm), ack(SITE1, 256))
    assert acked(qm.psc_neighbors[0]) == (MIN_SEQ_NUMBER, MIN_SEQ_NUMBER)
