"""MC-MQDSRP 3.1: the events both sides share (initialization, dispatch, directory changes, purging).

One function per event, named after it, in the order of its pseudo-code; each cites its section
and quotes the MUST it implements. Where mqspec departs from the literal text the code says
``# clarification E-NNN`` and branches on ``ctx.clarified``; the register holds the why.
Handlers that return values in the text (rStatus, rNeedFlush) return them here.
"""

from __future__ import annotations

from collections.abc import Sequence

from mqspec.clauses import clause
from mqspec.model import mqdsrp
from mqspec.model.errors import DecodeError
from mqspec.model.guid import Guid
from mqspec.model.mqdsrp import (
    ChangeRequestMessage,
    Command,
    DirectoryChange,
    Operation,
)
from mqspec.model.propids import object_type_of
from mqspec.model.propvalue import Property
from mqspec.model.seqnum import MAX_SEQ_NUMBER, MIN_SEQ_NUMBER, SequenceNumber

from . import mqds
from .mqdsrp_base import DOC, first_value, prop_value, replication_queue_direct, second_value
from . import status as st
from .mqdsrp_objects import (
    handle_directory_create,
    handle_directory_delete,
    handle_directory_sync,
    handle_directory_update,
    purge_deleted_objects,
)
from .effects import AckRequested, Context, EnqueueMessage, TimerScope
from .mqdsrp_state import (
    PEC_PARTITION_ID,
    DirectoryPartition,
    PurgeState,
    QueueManager,
)









# --- 3.1.3 Initialization ---------------------------------------------------------------------


@clause(DOC, "3.1.3.1", "Replication State Initialization")
def replication_state_initialization(qm: QueueManager, ctx: Context) -> None:
    """Create the enterprise partition on first start and compute the non-persisted attributes.

    "If DirectoryPartitionCollection is empty: Create a new DirectoryPartition object ...
    PartitionID := PEC_PARTITION_ID" (3.1.3.1).
    """
    if not qm.partitions:
        qm.partitions.append(
            DirectoryPartition(
                PEC_PARTITION_ID,
                # "If the queue manager is a PEC, set it to QueueManager.MachineName; otherwise set
                # it to the PEC machine name (typically provided by the administrator)"
                qm.machine_name if qm.is_pec else qm.pec_name,
            )
        )
    for partition in qm.partitions:
        partition.previous_purged_seq_number = MIN_SEQ_NUMBER
        partition.change_missing_window = MAX_SEQ_NUMBER
        partition.pending_changes = []
    if qm.is_pec:
        qm.my_enterprise_partition = qm.find_partition(PEC_PARTITION_ID)
    my_site = qm.find_partition(qm.site_identifier)
    if my_site is not None:
        qm.my_site_partition = my_site
        if qm.is_bsc:
            qm.my_psc_name = my_site.authority_name
    else:
        # "It will be initialized when a ChangePropagationMessage ... or SyncRequestMessage ... is received"
        qm.my_site_partition = None
        if qm.is_bsc:
            # "How the PSC machine name is obtained is implementation-specific": configuration here
            qm.my_psc_name = qm.configured_psc_name


@clause(DOC, "3.1.3.2", "Directory Neighbor Initialization")
def directory_neighbor_initialization(qm: QueueManager, ctx: Context) -> None:
    """"Set dirPSCNeighbor.AvailableChangeCollection to empty" (and the same for BSC neighbors)."""
    for neighbor in qm.psc_neighbors:
        neighbor.available_changes = []
    for neighbor in qm.bsc_neighbors:
        neighbor.available_changes = []


@clause(DOC, "3.1.3.3", "Replication Queue Initialization")
def replication_queue_initialization(qm: QueueManager, ctx: Context) -> None:
    """Open the replication queue REPLICATION_QUEUE_PRIVATE for receive and start dequeuing.

    Open Queue and Dequeue Message are [MS-MQDMPR] events; the simulator delivers each message
    of the node's replication queue to :func:`receiving_replication_messages` once this has run.
    """
    qm.replication_queue_open = True


@clause(DOC, "3.1.3", "Initialization")
def common_initialization(qm: QueueManager, ctx: Context) -> None:
    """3.1.3: "Replication state initialization, Directory neighbor initialization, Replication queue initialization"."""
    replication_state_initialization(qm, ctx)
    directory_neighbor_initialization(qm, ctx)
    replication_queue_initialization(qm, ctx)


# --- 3.1.5 Message Processing -----------------------------------------------------------------


NACK_FIRST, NACK_LAST = 0x8000, 0xC003  # NackBadDestQueue .. NackReceiveTimeoutAtSender ([MS-MQDMPR] 3.1.1.12)


@clause(DOC, "3.1.5.1", "Receiving Replication Messages")
def receiving_replication_messages(
    qm: QueueManager, ctx: Context, body: bytes, message_class: int, destination_format_name: str = "",
) -> None:
    """Dispatch one dequeued message on its class and its BaseReplicationHeader.Operation.

    "If repMessage is empty: Take no further action. If ...Version is not 0x00: Take no further
    action. If rMessage.Class is Normal: Case ...Operation of ... Else if rMessage.Class is a Nack ..."
    """
    if not body:
        return
    if body[0] != 0x00:
        return
    if message_class == 0:  # Normal
        try:
            # one immutable value for equal bytes: a fan-out's receivers share one decoding
            message = mqdsrp.decode_shared(body)
        except DecodeError:
            return  # bytes no replication message can have: "Others: take no further action"
        handler = {
            Operation.CHANGE_PROPAGATION: server.receive_change_propagation,
            Operation.CHANGE_REQUEST: server.receive_change_request,
            Operation.SYNC_REQUEST: server.receive_sync_request,
            Operation.SYNC_REPLY: client.receive_sync_reply,
            Operation.CHANGE_REPLY: client.receive_change_reply,
            Operation.ALREADY_PURGED: client.receive_already_purged,
            Operation.PSC_ACK: server.receive_psc_ack,
            Operation.BSC_ACK: server.receive_bsc_ack,
        }[message.operation]
        handler(qm, ctx, message)
    elif NACK_FIRST <= message_class <= NACK_LAST:
        operation = body[17] if len(body) > 17 else None
        if operation == Operation.CHANGE_REQUEST:
            try:
                message = mqdsrp.decode(body)
            except DecodeError:
                return
            client.receive_change_request_nack(qm, ctx, message)
        elif operation in (0x00, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07):
            client.receive_request_nack(qm, ctx, body, message_class, destination_format_name)
    # Else: Take no further action.


@clause(DOC, "3.1.5.2", "Processing Directory Changes")
def processing_directory_changes(
    qm: QueueManager, ctx: Context, changes: Sequence[DirectoryChange], check_flush: bool,
) -> None:
    """For each change, find its partition and raise Handle Directory Change.

    "If dirPartition is not found: Take no further action." iCheckFlush is true for a Receive
    Sync Reply and for a propagation whose Flush is 0x00 (the caller passes it).
    """
    for change in changes:
        partition = qm.find_partition(change.partition_id)
        if partition is None:
            continue
        handle_directory_change(qm, ctx, partition, change, check_flush)


# --- 3.1.7.1 Events raised by related protocols -----------------------------------------------


@clause(DOC, "3.1.7.1.1", "Change Remote Object")
def change_remote_object(
    qm: QueueManager, ctx: Context, operation: int, object_type: int, path_name: str | None,
    guid: Guid | None, partition_id: Guid, properties: tuple[Property, ...], client_request: int | None = None,
) -> None:
    """Build a ChangeRequestMessage for a change this server cannot apply and raise Process Change Request.

    "PSCNameOffset: If the queue manager is a PSC, set this field to 0x0. If ... a BSC, set this
    field to the length, in WCHAR, of QueueManager.MachineName"; "UseGuid := 0x00. PathName :=
    iPathName" (3.1.7.1.1). The result (rStatus) reaches the client when the wait of Process
    Change Request ends (a RequestCompleted effect).
    """
    from .mqdsrp_client import process_change_request

    use_path = path_name
    use_guid = None
    if path_name is None:
        # clarification E-101: "UseGuid := 0x00, PathName := iPathName" cannot encode an object
        # named only by its GUID (a NULL iPathName); mqspec sends the GUID instead (for a create,
        # the GUID the client's properties carry: the identity property of E-182)
        use_guid = guid
        if use_guid is None:
            use_guid = prop_value(properties, mqds.IDENTITY_PROPID.get(object_type, -1))  # type: ignore[arg-type,assignment]
        ctx.clarify("E-101", "change request names the object by GUID: it has no path name")
    request_identifier = qm.next_request_identifier
    qm.next_request_identifier += 1
    change = DirectoryChange(
        Command(operation), partition_id, MIN_SEQ_NUMBER, MIN_SEQ_NUMBER, MIN_SEQ_NUMBER,
        tuple(properties), path_name=use_path, guid_identifier=use_guid,
    )
    message = ChangeRequestMessage(
        qm.site_identifier, partition_id, request_identifier, qm.machine_name,
        qm.my_psc_name if qm.is_bsc else None, change,
    )
    process_change_request(qm, ctx, message, origin="client", client_request=client_request)


@clause(DOC, "3.1.7.1.2", "Propagate Directory Change")
def propagate_directory_change(
    qm: QueueManager, ctx: Context, operation: int, object_type: int, path_name: str | None,
    guid: Guid | None, partition_id: Guid, properties: tuple[Property, ...], seq_number: SequenceNumber,
) -> None:
    """At the authority: update replication state and queue the change for every neighbor.

    "For each DirectoryNeighbor ... in PSCNeighborCollection: Append dirChange to
    dirPSCNeighbor.AvailableChangeCollection" (and BSCNeighborCollection); "Set
    dirPartition.LastSeqNumber to iSeqNumber" (3.1.7.1.2).
    """
    if qm.is_pec and qm.my_enterprise_partition is not None and partition_id == qm.my_enterprise_partition.partition_id:
        partition = qm.my_enterprise_partition
    elif qm.is_psc and qm.my_site_partition is not None and partition_id == qm.my_site_partition.partition_id:
        partition = qm.my_site_partition
    else:
        return
    status = st.MQ_OK
    if operation == 0x00:
        status, _ = handle_directory_create(qm, ctx, partition, object_type, path_name, properties,
                                            seq_number, post_create=True)
    elif operation == 0x01:
        r_status, _ = handle_directory_update(qm, ctx, partition, object_type, path_name, guid, properties,
                                              seq_number, post_update=True)
        # clarification E-100: the text sets rStatus, not status, in the update, delete and
        # sync branches, so a failed update would still be propagated; mqspec uses the result
        if ctx.clarified:
            status = r_status
    elif operation == 0x02:
        r_status, _ = handle_directory_delete(
            qm, ctx, partition, second_value(properties), first_value(properties), path_name, guid,
            seq_number, post_delete=True,
        )
        if ctx.clarified:  # clarification E-100
            status = r_status
    elif operation == 0x03:
        # clarification E-139: "iObjectType := the property value of the second element" is copied
        # from the delete branch; a sync change's second value is a property, not a type
        sync_type = object_type if ctx.clarified else second_value(properties)
        r_status, _ = handle_directory_sync(qm, ctx, partition, sync_type, path_name, guid, properties, seq_number)
        if ctx.clarified:  # clarification E-100
            status = r_status
    if status != st.MQ_OK:
        return
    if path_name is not None and guid is not None:
        # clarification E-102: the text sets both PathName and GuidIdentifier when both are
        # given, which 2.2.4 forbids ("MUST NOT be present if UseGuid is set to 0x01"); no literal
        # reading can be encoded, so both modes send the GUID
        path_name = None
    if path_name is None and guid is None:
        # E-182: a created object with no path name is named by its identity property's GUID
        guid = prop_value(properties, mqds.IDENTITY_PROPID.get(object_type, -1))  # type: ignore[arg-type,assignment]
    change = DirectoryChange(
        Command(operation), partition_id, partition.last_seq_number, seq_number,
        # clarification E-103: the text sets PurgedSeqNumber := iSeqNumber; 2.2.4 says the field
        # "contains the purged sequence number of the associated directory partition"
        partition.purged_seq_number if ctx.clarified else seq_number,
        tuple(properties), path_name=path_name, guid_identifier=guid,
    )
    for neighbor in qm.psc_neighbors:
        neighbor.available_changes.append(change)
    for neighbor in qm.bsc_neighbors:
        neighbor.available_changes.append(change)
    partition.last_seq_number = seq_number
    if ctx.clarified:
        # clarification E-131: nothing in the text ever raises Purge Deleted Objects at the
        # authority (only Handle In-Sync Change does, for received changes), so its tombstones
        # would never be purged; mqspec applies the same every-256-changes trigger here
        _maybe_purge(qm, ctx, partition)






@clause(DOC, "3.1.7.1.3", "Read Next Sequence Number")
def read_next_sequence_number(qm: QueueManager, ctx: Context, partition_id: Guid) -> SequenceNumber:
    """"Set rNextSeqNumber to dirPartition.LastSeqNumber. Increment rNextSeqNumber" (3.1.7.1.3)."""
    if qm.is_pec and qm.my_enterprise_partition is not None and partition_id == qm.my_enterprise_partition.partition_id:
        partition = qm.my_enterprise_partition
    elif qm.is_psc and qm.my_site_partition is not None and partition_id == qm.my_site_partition.partition_id:
        partition = qm.my_site_partition
    else:
        return MIN_SEQ_NUMBER
    return partition.last_seq_number.increment()


# --- 3.1.7.2 Shared events --------------------------------------------------------------------


@clause(DOC, "3.1.7.2.1", "Send Replication Message")
def send_replication_message(
    qm: QueueManager, ctx: Context, destination: str, message: object, timeout: int, priority: int,
    ack_requested: AckRequested, admin_queue: str | None, response_queue: str | None,
) -> None:
    """Create the Message object and enqueue it to the destination's replication queue.

    "Class := Normal. TimeToReachQueue := iTimeout. TimeToBeReceived := iTimeout ...
    DeliveryGuarantee := Express ... HashAlgorithm := CALG_MD5. The queue manager MUST sign the
    message ... SenderIdentifierType := 2. SenderIdentifier := QueueManager.Identifier" (3.1.7.2.1).
    """
    # iPriority 8 (3.2.7.6, 3.3.7.1) does not fit MSMQ's 0..7: the transport sends it as 7 (E-055)
    ctx.emit(
        EnqueueMessage(
            node=qm.machine_name, destination=destination,
            format_name=replication_queue_direct(destination) if destination else "", body=message,
            time_to_reach_queue=timeout, time_to_be_received=timeout, priority=priority,
            ack_requested=ack_requested, admin_queue=admin_queue, response_queue=response_queue,
            sender_identifier=qm.identifier,
        )
    )


@clause(DOC, "3.1.7.2.2", "Handle Directory Change")
def handle_directory_change(
    qm: QueueManager, ctx: Context, partition: DirectoryPartition, change: DirectoryChange, check_flush: bool,
) -> None:
    """Apply an in-order change, or queue an out-of-order one and ask the authority for the gap.

    "If iChange.SeqNumber <= iPartition.LastSeqNumber or iChange.PurgedSeqNumber <
    iPartition.PurgedSeqNumber: Take no further action" (3.1.7.2.2).
    """
    if change.seq_number <= partition.last_seq_number or change.purged_seq_number < partition.purged_seq_number:
        return
    if change.previous_seq_number <= partition.last_seq_number:
        status = handle_in_sync_change(qm, ctx, partition, change, check_flush)
        if status != st.MQ_OK:
            return
        check_pending_changes(qm, ctx, partition)
    else:
        # "The change is out of order. Queue and process it when the previous ones come"
        if not partition.pending_changes:
            partition.pending_changes.append(change)
            # E-109: the nesting of the next two steps is lost in the text; mqspec reads the
            # sync request as part of widening the window (asked-for changes are not re-asked)
            if change.seq_number > partition.change_missing_window:
                partition.change_missing_window = change.seq_number
                client.send_sync_request(qm, ctx, partition)
            elif (ctx.clarified and partition.change_missing_window == MAX_SEQ_NUMBER
                  and partition.purge_state is PurgeState.NORMAL):
                # clarification E-311: a window of MAX means a request for everything is out, but
                # its reply may never come (a new site's PSC drops the PEC's first request, 3.2.7.3);
                # nothing exceeds MAX, so the text waits for the next SeqNumberHeader (20 minutes);
                # mqspec asks for the gap now, with the window at this change
                ctx.clarify("E-311", "out-of-order change while the window is MAX: ask for the gap")
                partition.change_missing_window = change.seq_number
                client.send_sync_request(qm, ctx, partition)
        elif len(partition.pending_changes) < 100:
            if not any(p.seq_number == change.seq_number for p in partition.pending_changes):
                partition.pending_changes.append(change)
                partition.pending_changes.sort(key=lambda p: p.seq_number)
        else:
            return


@clause(DOC, "3.1.7.2.3", "Handle In-Sync Change")
def handle_in_sync_change(
    qm: QueueManager, ctx: Context, partition: DirectoryPartition, change: DirectoryChange, flush: bool,
) -> int:
    """Apply a change whose predecessor is applied, pass it on to the BSCs, purge and acknowledge.

    "Set iPartition.LastSeqNumber to iChange.SeqNumber ... If the queue manager is a PSC and the
    eighth element in iPartition.LastSeqNumber is 0x00: Raise a Send PSC Ack event" (3.1.7.2.3).
    """
    need_flush = False
    first = change.properties[0].propid if change.properties else 0
    object_type = object_type_of(first)
    object_type_value = int(object_type) if object_type is not None else 0
    path_name = change.path_name if change.path_name is not None else None
    guid = change.guid_identifier if change.path_name is None else None
    if change.command is Command.CREATE:
        # E-112: the GUID of a GUID-named create is passed on (3.1.7.2.5 takes none)
        status, need_flush = handle_directory_create(qm, ctx, partition, object_type_value, path_name,
                                                     change.properties, change.seq_number, post_create=False,
                                                     guid=guid)
    elif change.command is Command.UPDATE:
        status, need_flush = handle_directory_update(qm, ctx, partition, object_type_value, path_name, guid,
                                                     change.properties, change.seq_number, post_update=False)
    elif change.command is Command.DELETE:
        status, need_flush = handle_directory_delete(
            qm, ctx, partition, second_value(change.properties), first_value(change.properties),
            path_name, guid, change.seq_number, post_delete=False,
        )
    else:
        status, need_flush = handle_directory_sync(qm, ctx, partition, object_type_value, path_name, guid,
                                                   change.properties, change.seq_number)
    if status != st.MQ_OK:
        return status
    partition.last_seq_number = change.seq_number
    if partition.purge_state is PurgeState.NORMAL:
        for neighbor in qm.bsc_neighbors:
            neighbor.available_changes.append(change)
            if flush and need_flush:
                client.send_change_propagation(qm, ctx, neighbor, TimerScope.INTRASITE)
    _maybe_purge(qm, ctx, partition)
    if partition.purge_state is PurgeState.NORMAL or partition.last_seq_number >= partition.purged_seq_number:
        if qm.is_psc and partition.last_seq_number.to_bytes()[7] == 0x00:
            client.send_psc_ack(qm, ctx, partition, partition.last_seq_number)
    return st.MQ_OK


def _maybe_purge(qm: QueueManager, ctx: Context, partition: DirectoryPartition) -> None:
    """"If iPartition.LastSeqNumber > (iPartition.PreviousPurgedSeqNumber + 256): Raise a Purge
    Deleted Objects event ... Set iPartition.PreviousPurgedSeqNumber to iPartition.LastSeqNumber"."""
    if partition.last_seq_number > partition.previous_purged_seq_number.add(256):
        purge_deleted_objects(qm, ctx, partition)
        partition.previous_purged_seq_number = partition.last_seq_number


@clause(DOC, "3.1.7.2.4", "Check Pending Changes")
def check_pending_changes(qm: QueueManager, ctx: Context, partition: DirectoryPartition) -> None:
    """Apply queued changes that have become in order; ask for what is still missing.

    "If dirPendingChange.PreviousSeqNumber is the same as iPartition.LastSeqNumber: Raise a
    Handle In-Sync Change event" (3.1.7.2.4).
    """
    for pending in list(partition.pending_changes):
        if pending not in partition.pending_changes:
            continue  # removed by a nested event while this loop ran
        if pending.purged_seq_number < partition.purged_seq_number:
            partition.pending_changes.remove(pending)
            continue
        if pending.seq_number > partition.last_seq_number:
            if ctx.clarified and pending.previous_seq_number <= partition.last_seq_number:
                # clarification E-136: the window test comes first in the text, so a change that is
                # in order but beyond the window is never applied and every sync reply asks again
                partition.pending_changes.remove(pending)
                handle_in_sync_change(qm, ctx, partition, pending, True)
                continue
            # E-110: the nesting is lost; mqspec reads "Take no further action" as part of the
            # window branch, the only reading under which a pending change is ever applied
            if ctx.clarified:
                # clarification E-136: ask for the gap only when it reaches past the outstanding
                # window, and widen the window up to this change
                if pending.previous_seq_number > partition.change_missing_window:
                    partition.change_missing_window = pending.seq_number
                    client.send_sync_request(qm, ctx, partition)
                return  # a gap remains; keep the change until it is filled
            if pending.seq_number > partition.change_missing_window:
                client.send_sync_request(qm, ctx, partition)
                return
        partition.pending_changes.remove(pending)
        if pending.previous_seq_number == partition.last_seq_number:
            handle_in_sync_change(qm, ctx, partition, pending, True)


# The client and server events raised above (Send Sync Request, Send Change Propagation, Send PSC
# Ack, the Receive events of 3.1.5.1) live in modules that import this one, so they are imported
# here, last, once: an import statement inside a handler runs again on every call, and these
# handlers run for every change every replica applies.
from . import mqdsrp_client as client  # noqa: E402
from . import mqdsrp_server as server  # noqa: E402
