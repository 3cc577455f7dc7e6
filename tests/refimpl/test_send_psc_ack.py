"""MC-MQDSRP 3.3.7.4 Send PSC Ack: tell a partition's authority how far this PSC has applied it."""

from mqspec.model.mqdsrp import PSCAckMessage
from mqspec.refimpl.mqdsrp_client import send_psc_ack

from mqspec.clauses import covers

from .mqdsrp_fixtures_client import (
    ENT,
    PEC,
    PSC1,
    SITE0,
    SITE1,
    ctx_for,
    expect_send,
    partition,
    psc_qm,
    seq,
)


@covers("MC-MQDSRP", "3.3.7.4")
def test_the_ack_goes_to_the_authority_with_the_given_sequence_number():
    """AckedPartitionID := iPartition.PartitionID, AckedSeqNumber := iLastSeqNumber, PSCName := MachineName."""
    qm = psc_qm()
    ctx = ctx_for(qm)
    send_psc_ack(qm, ctx, partition(qm, ENT), seq(256))
    ack = PSCAckMessage(SITE1, SITE1, ENT, seq(256), PSC1)
    assert ctx.effects == [expect_send(qm, PEC, ack, 20 * 60, 3, "AckNackReachQueue", acked_queues=True)]


@covers("MC-MQDSRP", "3.3.7.4")
def test_psc_site_id_is_the_queue_managers_site_identifier():
    """E-126: "PSCPartitionID := QueueManager.PartitionID" is read as PSCSiteID := QueueManager.SiteIdentifier."""
    qm = psc_qm()
    ctx = ctx_for(qm)
    send_psc_ack(qm, ctx, partition(qm, SITE0), seq(512))
    [effect] = ctx.effects
    assert (effect.body.psc_site_id, effect.body.acked_partition_id, effect.destination) == (SITE1, SITE0, PEC)


@covers("MC-MQDSRP", "3.3.7.4")
def test_the_ack_follows_a_changed_authority_name():
    """iDestination := iPartition.AuthorityName as it is when the ack is sent."""
    qm = psc_qm()
    p = partition(qm, ENT)
    p.authority_name = "PEC-new"
    ctx = ctx_for(qm)
    send_psc_ack(qm, ctx, p, seq(256))
    assert [e.destination for e in ctx.effects] == ["PEC-new"]
