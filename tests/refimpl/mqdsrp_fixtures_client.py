"""Builders for the unit tests of the MC-MQDSRP server (3.2) and client (3.3) handlers.

Each test builds one queue manager by hand (no simulator), runs ONE handler with a fresh
:class:`Context`, and asserts on the state it changed and on ``ctx.effects``. The topology is
that of section 4: the PEC ``PEC0`` in site0, the PSC ``PSC1`` of site1 (with the BSC ``BSC11``)
and the PSC ``PSC2`` of site2. Queue managers are built with their replication state already in
place, then given the 3.1.3 initialization, as a server that has run for a while would be.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from mqspec.model.guid import Guid
from mqspec.model.mqdsrp import ChangeRequestMessage, Command, DirectoryChange
from mqspec.model.propids import ObjectType
from mqspec.model.propvalue import Property
from mqspec.model.seqnum import MIN_SEQ_NUMBER
from mqspec.refimpl.effects import (
    Clarified,
    Context,
    DirectoryOperation,
    EnqueueMessage,
    Mode,
)
from mqspec.refimpl.mqdsrp_base import (
    replication_queue_direct,
    replication_queue_private,
)
from mqspec.refimpl.mqdsrp_common import common_initialization
from mqspec.refimpl.mqdsrp_state import (
    PEC_PARTITION_ID,
    SERVICE_BSC,
    DirectoryNeighbor,
    DirectoryPartition,
    QueueManager,
    Role,
)

# shared with the section 3.1 handler tests: builders, effect filters (under this module's names)
from tests.refimpl.mqdsrp_fixtures import MODES, P, seq  # noqa: E402,F401
from tests.refimpl.mqdsrp_fixtures import cancels as cancelled  # noqa: E402,F401
from tests.refimpl.mqdsrp_fixtures import context as ctx_for  # noqa: E402,F401
from tests.refimpl.mqdsrp_fixtures import dir_ops as directory_ops  # noqa: E402,F401
from tests.refimpl.mqdsrp_fixtures import make_qm as new_qm  # noqa: E402,F401
from tests.refimpl.mqdsrp_fixtures import messages as sent  # noqa: E402,F401
from tests.refimpl.mqdsrp_fixtures import request_completions as completed  # noqa: E402,F401
from tests.refimpl.mqdsrp_fixtures import timers as started  # noqa: E402,F401

ENT = PEC_PARTITION_ID
SITE0 = Guid.from_name("site:site0")
SITE1 = Guid.from_name("site:site1")
SITE2 = Guid.from_name("site:site2")
PEC, PSC1, PSC2, BSC11 = "PEC0", "PSC1", "PSC2", "BSC11"


# --- queue managers ---------------------------------------------------------------------------


def initialized(qm: QueueManager) -> QueueManager:
    """Run the 3.1.3 common initialization (computes MyEnterprisePartition, MySitePartition, MyPSCName)."""
    common_initialization(qm, Context(qm.machine_name))
    return qm


def pec_qm(*, psc_neighbors: Iterable[tuple[str, Guid]] = ((PSC1, SITE1),),
           bsc_neighbors: Iterable[str] = ()) -> QueueManager:
    """PEC0: authority of the enterprise partition and of site0's partition."""
    qm = new_qm(PEC, Role.PEC, SITE0)
    qm.partitions = [DirectoryPartition(ENT, PEC), DirectoryPartition(SITE0, PEC)]
    for name, site in psc_neighbors:
        qm.partitions.append(DirectoryPartition(site, name))
        qm.psc_neighbors.append(DirectoryNeighbor(site, name))
    qm.bsc_neighbors = [DirectoryNeighbor(SITE0, name) for name in bsc_neighbors]
    return initialized(qm)


def psc_qm(*, bsc_neighbors: Iterable[str] = (BSC11,), site_partition: bool = True) -> QueueManager:
    """PSC1 of site1: authority of site1, replica of the enterprise partition and of site0."""
    qm = new_qm(PSC1, Role.PSC, SITE1)
    qm.partitions = [DirectoryPartition(ENT, PEC), DirectoryPartition(SITE0, PEC)]
    if site_partition:
        qm.partitions.append(DirectoryPartition(SITE1, PSC1))
    qm.psc_neighbors = [DirectoryNeighbor(SITE0, PEC)]
    qm.bsc_neighbors = [DirectoryNeighbor(SITE1, name) for name in bsc_neighbors]
    return initialized(qm)


def bsc_qm(*, psc: str | None = PSC1, site_partition: bool = True) -> QueueManager:
    """BSC11 of site1: a replica of every partition; its PSC is PSC1."""
    qm = new_qm(BSC11, Role.BSC, SITE1, psc=psc)
    qm.partitions = [DirectoryPartition(ENT, PEC), DirectoryPartition(SITE0, PEC)]
    if site_partition:
        qm.partitions.append(DirectoryPartition(SITE1, PSC1))
    return initialized(qm)


def partition(qm: QueueManager, partition_id: Guid) -> DirectoryPartition:
    found = qm.find_partition(partition_id)
    if found is None:
        raise LookupError(f"{qm.machine_name} has no partition {partition_id}")
    return found


def private(qm: QueueManager) -> str:
    """REPLICATION_QUEUE_PRIVATE of ``qm`` (the admin and response queue of acknowledged messages)."""
    return replication_queue_private(qm.identifier)


def direct(machine: str) -> str:
    return replication_queue_direct(machine)


# --- effects ----------------------------------------------------------------------------------


def bodies(ctx: Context, kind: type | None = None) -> list[object]:
    return [e.body for e in sent(ctx) if kind is None or type(e.body) is kind]


def clarified(ctx: Context) -> list[Clarified]:
    return [e for e in ctx.effects if type(e) is Clarified]


def protocol_effects(ctx: Context) -> list[object]:
    """Everything but the DirectoryOperation records (messages, timers, completions)."""
    return [e for e in ctx.effects if type(e) is not DirectoryOperation]


def expect_send(qm: QueueManager, destination: str, body: object, timeout: int, priority: int,
                ack: str, *, acked_queues: bool) -> EnqueueMessage:
    """The EnqueueMessage Send Replication Message (3.1.7.2.1) makes for these arguments."""
    from mqspec.refimpl.effects import AckRequested

    queue = private(qm) if acked_queues else None
    return EnqueueMessage(
        node=qm.machine_name, destination=destination, format_name=direct(destination), body=body,
        time_to_reach_queue=timeout, time_to_be_received=timeout, priority=priority,
        ack_requested=AckRequested(ack), admin_queue=queue, response_queue=queue,
        sender_identifier=qm.identifier,
    )


# --- changes and properties -------------------------------------------------------------------


def change(command: Command | int, partition_id: Guid, seq_number: int, *, previous: int | None = None,
           purged: int = 0, properties: Sequence[Property] = (), path: str | None = None,
           guid: Guid | None = None) -> DirectoryChange:
    """A DirectoryChange; PreviousSeqNumber defaults to SeqNumber - 1 (an in-order change)."""
    if path is None and guid is None:
        path = f"object{seq_number}"
    return DirectoryChange(
        Command(command), partition_id, seq(seq_number - 1 if previous is None else previous), seq(seq_number),
        seq(purged), tuple(properties), path_name=path, guid_identifier=guid,
    )


def machine_properties(name: str, site: Guid, service: int = 0) -> tuple[Property, ...]:
    return (
        Property(P["PROPID_QM_PATHNAME"], name), Property(P["PROPID_QM_SITE_ID"], site),
        Property(P["PROPID_QM_SERVICE"], service), Property(P["PROPID_QM_MACHINE_ID"], Guid.from_name(f"qm:{name}")),
    )


def queue_properties(path: str, guid: Guid, *, scope: int = 1, label: str = "label") -> tuple[Property, ...]:
    return (
        Property(P["PROPID_Q_PATHNAME"], path), Property(P["PROPID_Q_INSTANCE"], guid),
        Property(P["PROPID_Q_SCOPE"], scope), Property(P["PROPID_Q_LABEL"], label),
    )


def site_properties(name: str, site: Guid, psc: str) -> tuple[Property, ...]:
    return (Property(P["PROPID_S_PATHNAME"], name), Property(P["PROPID_S_SITEID"], site),
            Property(P["PROPID_S_PSC"], psc))


def delete_properties(scope: int, object_type: ObjectType) -> tuple[Property, ...]:
    return (Property(P["PROPID_D_SCOPE"], scope), Property(P["PROPID_D_OBJTYPE"], int(object_type)))


def change_request(requester: str, partition_id: Guid, request_id: int, dir_change: DirectoryChange, *,
                   site: Guid = SITE1, psc_name: str | None = None) -> ChangeRequestMessage:
    return ChangeRequestMessage(site, partition_id, request_id, requester, psc_name, dir_change)


def machine_update_request(requester: str, request_id: int, psc_name: str | None = None) -> ChangeRequestMessage:
    """``requester``'s change request ``request_id`` updating machine M in the enterprise partition."""
    update = change(Command.UPDATE, ENT, 0, previous=0, properties=machine_properties("M", SITE1), path="M")
    return change_request(requester, ENT, request_id, update, psc_name=psc_name)


def two_waits_with_one_identifier(mode: Mode) -> QueueManager:
    """PSC1 waits for its own request 7 and for BSC11's request 7 that it forwarded (E-125)."""
    from mqspec.refimpl.mqdsrp_client import process_change_request

    qm = psc_qm()
    process_change_request(qm, ctx_for(qm, mode), machine_update_request(PSC1, 7), origin="client", client_request=1)
    process_change_request(qm, ctx_for(qm, mode), machine_update_request(BSC11, 7, psc_name=PSC1), origin="forward")
    return qm


def store_object(qm: QueueManager, object_type: ObjectType, path: str | None, properties: Sequence[Property],
                 partition_id: Guid, seq_number: int) -> int:
    """Put an object straight into the local directory (state set-up, not a protocol event)."""
    return qm.directory.create(int(object_type), path, None, list(properties), partition_id, seq(seq_number))


__all__ = [
    "BSC11",
    "ENT",
    "MIN_SEQ_NUMBER",
    "MODES",
    "PEC",
    "PSC1",
    "PSC2",
    "SERVICE_BSC",
    "SITE0",
    "SITE1",
    "SITE2",
    "P",
    "bodies",
    "bsc_qm",
    "cancelled",
    "change",
    "change_request",
    "clarified",
    "completed",
    "ctx_for",
    "delete_properties",
    "direct",
    "directory_ops",
    "expect_send",
    "initialized",
    "machine_properties",
    "machine_update_request",
    "new_qm",
    "partition",
    "pec_qm",
    "private",
    "protocol_effects",
    "psc_qm",
    "queue_properties",
    "sent",
    "seq",
    "site_properties",
    "started",
    "store_object",
    "two_waits_with_one_identifier",
]
