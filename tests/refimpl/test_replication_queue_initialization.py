"""MC-MQDSRP 3.1.3.3 Replication Queue Initialization."""

from mqspec.refimpl.mqdsrp_base import replication_queue_private
from mqspec.refimpl.mqdsrp_common import replication_queue_initialization
from mqspec.refimpl.mqdsrp_state import Role

from mqspec.clauses import covers

from .mqdsrp_fixtures import PSC, SITE1, context, make_qm


@covers("MC-MQDSRP", "3.1.3.3")
def test_replication_queue_is_opened_for_dequeuing():
    """Open Queue on REPLICATION_QUEUE_PRIVATE then Dequeue Message: the node starts taking messages, with no other effect."""
    qm = make_qm(PSC, Role.PSC, SITE1)
    assert not qm.replication_queue_open
    ctx = context(qm)
    replication_queue_initialization(qm, ctx)
    assert qm.replication_queue_open
    assert ctx.effects == []


@covers("MC-MQDSRP", "3.1.3.3")
def test_replication_queue_private_names_the_queue_manager_guid():
    """iFormatName := REPLICATION_QUEUE_PRIVATE "where <Queue Manager GUID> is set to QueueManager.Identifier" (1.9: PRIVATE=<GUID>\\1)."""
    qm = make_qm(PSC, Role.PSC, SITE1)
    assert replication_queue_private(qm.identifier) == f"PRIVATE={qm.identifier}\\1"
