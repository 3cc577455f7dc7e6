"""MC-MQDSRP 3.2.7.7 Send Already Purged: tell a requester that the history it asks for is gone."""

from mqspec.model.mqdsrp import AlreadyPurgedMessage
from mqspec.refimpl.mqdsrp_server import send_already_purged

from mqspec.clauses import covers

from .mqdsrp_fixtures_client import (
    ENT,
    PSC1,
    SITE0,
    ctx_for,
    expect_send,
    partition,
    pec_qm,
    seq,
)


@covers("MC-MQDSRP", "3.2.7.7")
def test_already_purged_names_the_partition_and_its_purged_seq_number():
    """"PartitionID := iPartition.PartitionID, PurgedSeqNumber := iPartition.PurgedSeqNumber", sent unacknowledged."""
    qm = pec_qm()
    ent = partition(qm, ENT)
    ent.purged_seq_number = seq(300)
    ctx = ctx_for(qm)
    send_already_purged(qm, ctx, ent, PSC1)
    message = AlreadyPurgedMessage(SITE0, ENT, seq(300))
    assert ctx.effects == [expect_send(qm, PSC1, message, 20 * 60, 3, "None", acked_queues=False)]


@covers("MC-MQDSRP", "3.2.7.7")
def test_already_purged_changes_no_state():
    """Sending the message leaves the partition's replication state as it was."""
    qm = pec_qm()
    ent = partition(qm, ENT)
    ent.purged_seq_number, ent.last_seq_number = seq(3), seq(9)
    send_already_purged(qm, ctx_for(qm), ent, "anyone")
    assert (ent.purged_seq_number, ent.last_seq_number) == (seq(3), seq(9))
