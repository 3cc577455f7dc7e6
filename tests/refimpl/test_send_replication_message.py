"""MC-MQDSRP 3.1.7.2.1 Send Replication Message: the Message object and where it is enqueued."""

from mqspec.model.mqdsrp import AlreadyPurgedMessage
from mqspec.refimpl.effects import AckRequested, EnqueueMessage
from mqspec.refimpl.mqdsrp_base import replication_queue_private
from mqspec.refimpl.mqdsrp_common import send_replication_message

from mqspec.clauses import covers

from .mqdsrp_fixtures import ENT, PSC, SITE1, context, messages, psc_node, seq


@covers("MC-MQDSRP", "3.1.7.2.1")
def test_message_carries_every_attribute_the_section_sets():
    """Class Normal, TimeToReachQueue = TimeToBeReceived = iTimeout, Priority, Express, CALG_MD5, SenderIdentifierType 2 and the QM's Identifier."""
    qm = psc_node()
    body = AlreadyPurgedMessage(SITE1, ENT, seq(3))
    admin = replication_queue_private(qm.identifier)
    ctx = context(qm)
    send_replication_message(qm, ctx, "PEC0", body, 1200, 3, AckRequested.ACK_NACK_REACH_QUEUE, admin, admin)
    assert ctx.effects == [EnqueueMessage(
        node=PSC, destination="PEC0", format_name="DIRECT=OS:PEC0\\private$\\mqis_queue$", body=body,
        time_to_reach_queue=1200, time_to_be_received=1200, priority=3,
        ack_requested=AckRequested.ACK_NACK_REACH_QUEUE, admin_queue=admin, response_queue=admin,
        message_class="Normal", delivery="Express", hash_algorithm="CALG_MD5", sender_identifier_type=2,
        sender_identifier=qm.identifier,
    )]


@covers("MC-MQDSRP", "3.1.7.2.1")
def test_null_admin_and_response_queues_are_not_set():
    """"If iAdminQueueFormatName is not NULL, set this field ...; otherwise do not set the field" (and the same for the response queue)."""
    qm = psc_node()
    ctx = context(qm)
    send_replication_message(qm, ctx, "BSC11", AlreadyPurgedMessage(SITE1, ENT, seq(3)), 10, 8, AckRequested.NONE,
                             None, None)
    [sent] = messages(ctx)
    assert (sent.admin_queue, sent.response_queue, sent.ack_requested) == (None, None, AckRequested.NONE)
    assert (sent.time_to_reach_queue, sent.priority) == (10, 8)


@covers("MC-MQDSRP", "3.1.7.2.1")
def test_destination_queue_is_replication_queue_direct_of_the_destination():
    """outFormatName := REPLICATION_QUEUE_DIRECT with <Machine Name> := iDestination; sending changes no protocol state."""
    qm = psc_node()
    before = [(p.partition_id, p.last_seq_number) for p in qm.partitions]
    ctx = context(qm)
    send_replication_message(qm, ctx, "Other", AlreadyPurgedMessage(SITE1, ENT, seq(3)), 10, 3, AckRequested.NONE,
                             None, None)
    assert messages(ctx)[0].format_name == "DIRECT=OS:Other\\private$\\mqis_queue$"
    assert [(p.partition_id, p.last_seq_number) for p in qm.partitions] == before
