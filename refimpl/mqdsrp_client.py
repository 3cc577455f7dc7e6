"""MC-MQDSRP 3.3: the protocol client's events (timers, change requests, sync, acks, sync0).

One function per event, in the order of the pseudo-code, citing its section. Process Change
Request (3.3.7.1) "waits" for a reply; here the wait is a continuation: the request is kept in
``QueueManager.pending_requests`` with a wait timer, and Receive Change Reply, Receive Change
Request Nack or the timer's expiry resumes it.
"""

from __future__ import annotations

from mqspec.model.mqdsrp import (
    AlreadyPurgedMessage,
    BSCAckMessage,
    ChangePropagationMessage,
    ChangeReplyMessage,
    ChangeRequestMessage,
    CompleteSync0,
    PartitionSeqNumbers,
    PSCAckMessage,
    Scope,
    SeqNumberHeader,
    SyncReplyMessage,
    SyncRequestMessage,
)
from mqspec.model.seqnum import MAX_SEQ_NUMBER, MIN_SEQ_NUMBER, SequenceNumber

from mqspec.clauses import clause

from . import mqds
from . import status as st
from .effects import AckRequested, Context, RequestCompleted, TimerKey, TimerScope
from .mqdsrp_base import DOC, replication_queue_private
from .mqdsrp_common import (
    check_pending_changes,
    common_initialization,
    processing_directory_changes,
    send_replication_message,
)
from .mqdsrp_state import (
    PEC_PARTITION_ID,
    DirectoryNeighbor,
    DirectoryPartition,
    PendingChangeRequest,
    PurgeState,
    QueueManager,
)

#: product behaviour notes <2>-<10>: "The default value of an intersite ... Change Propagation
#: Timer is 10 seconds ... an intrasite ... Change Propagation Timer is 2 seconds"
CHANGE_PROPAGATION_INTERVAL = {TimerScope.INTERSITE: 10.0, TimerScope.INTRASITE: 2.0}
#: <7>/<8>: "The default value of a BSC Ack Timer is 5 seconds for initialization and 12 hours for the next instances"
BSC_ACK_FIRST, BSC_ACK_NEXT = 5.0, 12 * 3600.0
#: <11>: "10 seconds if the next hop is the object authority. 20 seconds if ... not"
CHANGE_REQUEST_WAIT_AUTHORITY, CHANGE_REQUEST_WAIT_FORWARDED = 10.0, 20.0
#: <12>: "The default value of the interval for sending the SeqNumberHeader ... is 20 minutes"
SEQ_NUMBER_HEADER_INTERVAL = 20 * 60.0


def change_propagation_timer(neighbor: DirectoryNeighbor, scope: TimerScope) -> TimerKey:
    return TimerKey("change_propagation", (neighbor.machine_name, scope.value))


def start_change_propagation_timer(qm: QueueManager, ctx: Context, neighbor: DirectoryNeighbor, scope: TimerScope) -> None:
    """Start a Change Propagation Timer (3.3.2.1) for one neighbor with the product default interval."""
    ctx.start_timer(change_propagation_timer(neighbor, scope), CHANGE_PROPAGATION_INTERVAL[scope])


def rename_change_propagation_timer(qm: QueueManager, ctx: Context, neighbor: DirectoryNeighbor, old_name: str) -> None:
    """The running intersite timer of a PSC neighbor renamed by Handle Site Update follows it (modelling E-310).

    3.3.6.1's timer refers to the DirectoryNeighbor itself; mqspec names it by the machine name
    (:func:`change_propagation_timer`), so the timer of the old name stops and one of the new name
    starts (its first propagation carries a SeqNumberHeader: E-137 counts headers per name).
    """
    scope = TimerScope.INTERSITE
    ctx.cancel_timer(TimerKey("change_propagation", (old_name, scope.value)))
    start_change_propagation_timer(qm, ctx, neighbor, scope)


def take_site_authority(qm: QueueManager, ctx: Context, partition: DirectoryPartition) -> None:
    """A PSC named the new PSC of its own site becomes the authority of the site partition (E-315).

    As at initialization, the partition is MySitePartition (3.1.3.1), which makes the server its
    authority (1.3.1.2); the PSC neighbor that stood for the old PSC is removed, with its running
    intersite timer, since a server is not its own neighbor (3.3.3 starts a timer for the others).
    """
    qm.my_site_partition = partition
    leaving = [n for n in qm.psc_neighbors if n.partition_id == partition.partition_id]
    qm.psc_neighbors = [n for n in qm.psc_neighbors if n.partition_id != partition.partition_id]
    for neighbor in leaving:
        if not any(n.machine_name == neighbor.machine_name for n in qm.psc_neighbors):
            ctx.cancel_timer(change_propagation_timer(neighbor, TimerScope.INTERSITE))


@clause(DOC, "3.3.3", "Initialization")
def client_initialization(qm: QueueManager, ctx: Context) -> None:
    """Common initialization, then the timers and a sync request for every partition this server does not own.

    "If dirPartition.AuthorityName is different from QueueManager.MachineName or the queue
    manager is a BSC: Raise a Send Sync Request event" (3.3.3).
    """
    common_initialization(qm, ctx)
    if qm.is_bsc:
        ctx.start_timer(TimerKey("bsc_ack"), BSC_ACK_FIRST)
    if qm.is_psc:
        for neighbor in qm.bsc_neighbors:
            start_change_propagation_timer(qm, ctx, neighbor, TimerScope.INTRASITE)
        for neighbor in qm.psc_neighbors:
            start_change_propagation_timer(qm, ctx, neighbor, TimerScope.INTERSITE)
    for partition in list(qm.partitions):
        if partition.authority_name != qm.machine_name or qm.is_bsc:
            send_sync_request(qm, ctx, partition)


@clause(DOC, "3.3.6.1", "Change Propagation Timer Event")
def change_propagation_timer_event(qm: QueueManager, ctx: Context, neighbor_name: str, scope: TimerScope) -> None:
    """"Raise a Send Change Propagation event ... Initialize another instance of the Change Propagation Timer"."""
    neighbors = qm.psc_neighbors if scope is TimerScope.INTERSITE else qm.bsc_neighbors
    neighbor = next((n for n in neighbors if n.machine_name == neighbor_name), None)
    if neighbor is None:
        return  # the neighbor was removed (3.1.7.2.7, 3.1.7.2.12): its timer stops with it
    send_change_propagation(qm, ctx, neighbor, scope)
    start_change_propagation_timer(qm, ctx, neighbor, scope)


@clause(DOC, "3.3.6.2", "BSC Ack Timer Event")
def bsc_ack_timer_event(qm: QueueManager, ctx: Context) -> None:
    """Send a BSCAckMessage to MyPSCName and start the next BSC Ack Timer (12 hours by default)."""
    ack = BSCAckMessage(qm.site_identifier, qm.identifier, qm.machine_name)
    private = replication_queue_private(qm.identifier)
    if qm.my_psc_name:
        send_replication_message(qm, ctx, qm.my_psc_name, ack, 20 * 60, 3, AckRequested.ACK_NACK_REACH_QUEUE,
                                 private, private)
    ctx.start_timer(TimerKey("bsc_ack"), BSC_ACK_NEXT)


def _wait_key(request: ChangeRequestMessage) -> tuple[str, int]:
    return (request.requester_name, request.request_identifier)


def change_request_wait_timer(request: ChangeRequestMessage) -> TimerKey:
    """The wait timer of one Process Change Request: TimerKey args ``((requester, request id),)``.

    The key is one argument (the simulator hands ``args[0]`` to :func:`change_request_wait_expired`).
    """
    return TimerKey("change_request_wait", (_wait_key(request),))


@clause(DOC, "3.3.7.1", "Process Change Request")
def process_change_request(
    qm: QueueManager, ctx: Context, request: ChangeRequestMessage, origin: str, client_request: int | None = None,
) -> None:
    """Send the request one hop towards the authority and wait (as a continuation) for its outcome.

    "Wait until one of the following conditions is true ... An implementation-specific waiting
    time has elapsed: Set rStatus to MQDS_NO_RSP_FROM_OWNER" (3.3.7.1).
    """
    if qm.is_bsc:
        next_hop = qm.my_psc_name
    else:
        partition = qm.find_partition(request.partition_id)
        if partition is None:
            # "Set rStatus to MQDS_UNKNOWN_SOURCE. Take no further action": nothing was sent, nothing waits
            _return_status(qm, ctx, PendingChangeRequest(request.request_identifier, request, origin, client_request),
                           st.MQDS_UNKNOWN_SOURCE)
            return
        next_hop = partition.authority_name
    private = replication_queue_private(qm.identifier)
    send_replication_message(qm, ctx, next_hop or "", request, 10, 8, AckRequested.ACK_NACK_REACH_QUEUE,
                             private, private)
    pending = PendingChangeRequest(request.request_identifier, request, origin, client_request)
    qm.pending_requests[_wait_key(request)] = pending
    partition = qm.find_partition(request.partition_id)
    to_authority = partition is not None and partition.authority_name == next_hop
    wait = CHANGE_REQUEST_WAIT_AUTHORITY if to_authority else CHANGE_REQUEST_WAIT_FORWARDED
    ctx.start_timer(change_request_wait_timer(request), wait)


def _find_pending(qm: QueueManager, ctx: Context, requester: str, identifier: int) -> PendingChangeRequest | None:
    if ctx.clarified:
        # clarification E-125: a forwarded request keeps its originator's RequestIdentifier, so an
        # intermediate PSC can hold two waits with one identifier; mqspec correlates a reply by
        # (RequesterName, RequestIdentifier), which the reply carries
        return qm.pending_requests.get((requester, identifier))
    for key, pending in qm.pending_requests.items():
        if key[1] == identifier:
            return pending
    return None


def _resume(qm: QueueManager, ctx: Context, pending: PendingChangeRequest, status: int) -> None:
    """The wait of Process Change Request ends with ``status``: stop waiting and return the status."""
    qm.pending_requests.pop(_wait_key(pending.message), None)
    ctx.cancel_timer(change_request_wait_timer(pending.message))
    _return_status(qm, ctx, pending, status)


def _return_status(qm: QueueManager, ctx: Context, pending: PendingChangeRequest, status: int) -> None:
    """rStatus of Process Change Request goes to whoever raised the event.

    A forwarded request (3.2.7.2) gets its Change Reply ("Set changeResult to the return result
    rStatus ... Send a reply to the requester"); a directory client's request completes.
    """
    from .mqdsrp_server import send_change_reply

    if pending.origin == "forward":
        send_change_reply(qm, ctx, status, pending.message)
    else:
        # a directory client's request always has its number (mqds.directory_client_request counts from 1)
        assert pending.client_request is not None
        ctx.emit(RequestCompleted(qm.machine_name, pending.client_request, status))


def change_request_wait_expired(qm: QueueManager, ctx: Context, key: tuple[str, int]) -> None:
    """3.3.7.1: "An implementation-specific waiting time has elapsed: Set rStatus to MQDS_NO_RSP_FROM_OWNER"."""
    pending = qm.pending_requests.get(tuple(key))  # type: ignore[arg-type]
    if pending is not None:
        _resume(qm, ctx, pending, st.MQDS_NO_RSP_FROM_OWNER)


@clause(DOC, "3.3.7.2", "Send Change Propagation")
def send_change_propagation(qm: QueueManager, ctx: Context, neighbor: DirectoryNeighbor, scope: TimerScope) -> None:
    """Send the neighbor's AvailableChangeCollection, with a SeqNumberHeader every 20 minutes.

    "Remove all elements in iNeighbor.AvailableChangeCollection" (3.3.7.2).
    """
    header = SeqNumberHeader(None, ())
    if ctx.clarified:
        # clarification E-137: "since the last time a SeqNumberHeader was sent" counted per server
        # gives every header to the one neighbor whose timer fires first; mqspec counts per neighbor
        last = qm.last_seq_number_header_sent.get((neighbor.machine_name, scope.value))
    else:
        last = qm.last_seq_number_header_time
    if last is None or ctx.now - last >= SEQ_NUMBER_HEADER_INTERVAL:
        entries = seq_number_header_entries(qm, scope)
        if entries:
            header = SeqNumberHeader(qm.machine_name, tuple(entries))
            qm.last_seq_number_header_time = ctx.now
            qm.last_seq_number_header_sent[(neighbor.machine_name, scope.value)] = ctx.now
    message = ChangePropagationMessage(qm.site_identifier, False, tuple(neighbor.available_changes), header)
    send_replication_message(qm, ctx, neighbor.machine_name, message, 20 * 60, 3, AckRequested.NONE, None, None)
    neighbor.available_changes = []


def seq_number_header_entries(qm: QueueManager, scope: TimerScope) -> tuple[PartitionSeqNumbers, ...]:
    """The PartitionSeqNumbers Send Change Propagation puts in a SeqNumberHeader (3.3.7.2).

    "If iScope is Intersite: If the queue manager is PEC: Set seqNumberHeader.Count to 2 ... Else:
    ... the size of the DirectoryPartitionCollection ... PurgedSeqNumber := dirPartition.AllowedPurgeSeqNumber"
    for partitions this server does not own. (The conformance checker uses it too.)
    """
    entries: list[PartitionSeqNumbers] = []
    if scope is TimerScope.INTERSITE:
        if qm.is_pec and qm.my_enterprise_partition is not None:
            p = qm.my_enterprise_partition
            entries.append(PartitionSeqNumbers(PEC_PARTITION_ID, p.last_seq_number, p.purged_seq_number))
        if qm.my_site_partition is not None:
            p = qm.my_site_partition
            entries.append(PartitionSeqNumbers(p.partition_id, p.last_seq_number, p.purged_seq_number))
    else:
        for p in qm.partitions:
            own = p is qm.my_enterprise_partition or p is qm.my_site_partition
            entries.append(PartitionSeqNumbers(
                p.partition_id, p.last_seq_number, p.purged_seq_number if own else p.allowed_purge_seq_number,
            ))
    return tuple(entries)


@clause(DOC, "3.3.7.3", "Send Sync Request")
def send_sync_request(qm: QueueManager, ctx: Context, partition: DirectoryPartition) -> None:
    """Ask for the changes after LastSeqNumber up to ChangeMissingWindow (MAX: all of them).

    "iDestination: If the queue manager is a BSC, set it to QueueManager.MyPSCName; otherwise,
    set it to iPartition.AuthorityName" (3.3.7.3).
    """
    if partition.purge_state not in (PurgeState.NORMAL, PurgeState.SYNC0):
        return
    request = SyncRequestMessage(
        qm.site_identifier, partition.partition_id, partition.last_seq_number, partition.change_missing_window,
        partition.purged_seq_number, partition.purge_state is PurgeState.SYNC0,
        Scope.NONE if qm.is_bsc else Scope.ENTERPRISE, qm.machine_name,
    )
    destination = qm.my_psc_name if qm.is_bsc else partition.authority_name
    private = replication_queue_private(qm.identifier)
    send_replication_message(qm, ctx, destination or "", request, 20 * 60, 3, AckRequested.ACK_NACK_REACH_QUEUE,
                             private, private)


@clause(DOC, "3.3.7.4", "Send PSC Ack")
def send_psc_ack(qm: QueueManager, ctx: Context, partition: DirectoryPartition, last_seq_number: SequenceNumber) -> None:
    """Acknowledge to the partition's authority how far this PSC has applied it.

    The text sets "PSCPartitionID := QueueManager.PartitionID"; the message field is PSCSiteID
    and the queue manager's attribute is SiteIdentifier (E-126).
    """
    ack = PSCAckMessage(qm.site_identifier, qm.site_identifier, partition.partition_id, last_seq_number,
                        qm.machine_name)
    private = replication_queue_private(qm.identifier)
    send_replication_message(qm, ctx, partition.authority_name, ack, 20 * 60, 3,
                             AckRequested.ACK_NACK_REACH_QUEUE, private, private)


@clause(DOC, "3.3.7.5", "Receive Sync Reply")
def receive_sync_reply(qm: QueueManager, ctx: Context, message: SyncReplyMessage) -> None:
    """Apply the reply's changes, then move the sync0 state or the missing-change window on.

    "If sync0State is 2 (PURGE_STATE_SYNC0): Raise a Complete Sync0 State event ... Else if
    sync0State is 1: ... Raise a Send Sync Request event" (3.3.7.5).
    """
    partition = qm.find_partition(message.partition_id)
    if partition is None:
        return
    if message.purged_seq_number < partition.purged_seq_number:
        return
    processing_directory_changes(qm, ctx, message.changes, check_flush=True)
    sync0_state = message.complete_sync0
    to_seq_number = message.to_seq_number
    purged_seq_number = message.purged_seq_number
    if partition.purge_state is PurgeState.SYNC0:
        if purged_seq_number < partition.purged_seq_number:
            return
        # E-127: the text compares CompleteSync0 with "2 (PURGE_STATE_SYNC0)"; 2 is CompleteSync0's
        # "completed now", a different enumeration that happens to share the number
        if sync0_state == CompleteSync0.COMPLETED:
            complete_sync0_state(qm, ctx, partition)
        elif sync0_state == CompleteSync0.COMPLETING:
            send_sync_request(qm, ctx, partition)
    elif partition.purge_state is PurgeState.NORMAL:
        if partition.change_missing_window == MAX_SEQ_NUMBER:
            partition.change_missing_window = MIN_SEQ_NUMBER
        elif not message.changes:
            # E-128: the nesting is lost; mqspec moves LastSeqNumber only when the reply answers
            # exactly the outstanding window
            if partition.change_missing_window == to_seq_number:
                partition.change_missing_window = MIN_SEQ_NUMBER
                if ctx.literal or to_seq_number > partition.last_seq_number:
                    # clarification E-166: a window of MIN sends ToSeqNumber MIN, and its empty reply
                    # would move LastSeqNumber back to MIN; mqspec never moves it backwards here
                    partition.last_seq_number = to_seq_number
        check_pending_changes(qm, ctx, partition)


@clause(DOC, "3.3.7.6", "Receive Change Reply")
def receive_change_reply(qm: QueueManager, ctx: Context, message: ChangeReplyMessage) -> None:
    """Resume the Process Change Request the reply answers with its status (3.3.7.6).

    The text passes "iChangeReplyMessage.Status"; the field is Result (E-129).
    """
    pending = _find_pending(qm, ctx, message.requester_name, message.request_identifier)
    if pending is None:
        return
    _resume(qm, ctx, pending, message.result)


@clause(DOC, "3.3.7.7", "Receive Already Purged")
def receive_already_purged(qm: QueueManager, ctx: Context, message: AlreadyPurgedMessage) -> None:
    """Start sync0 when the authority has purged history this replica still needs."""
    partition = qm.find_partition(message.partition_id)
    if partition is None:
        return
    if partition.last_seq_number >= message.purged_seq_number:
        return
    if partition.purged_seq_number >= message.purged_seq_number:
        return
    # E-134: Start Sync0 State takes iPurgedSeqNumber, which this event does not pass; the
    # AlreadyPurgedMessage's PurgedSeqNumber is the only value it can be
    start_sync0_state(qm, ctx, partition, message.purged_seq_number)


@clause(DOC, "3.3.7.8", "Receive Change Request Nack")
def receive_change_request_nack(qm: QueueManager, ctx: Context, request: ChangeRequestMessage) -> None:
    """Resume the Process Change Request with MQDS_OWNER_NOT_REACHED (3.3.7.8)."""
    pending = _find_pending(qm, ctx, request.requester_name, request.request_identifier)
    if pending is None:
        return
    _resume(qm, ctx, pending, st.MQDS_OWNER_NOT_REACHED)


@clause(DOC, "3.3.7.9", "Receive Request Nack")
def receive_request_nack(
    qm: QueueManager, ctx: Context, body: bytes, message_class: int, destination_format_name: str,
) -> None:
    """Resend a message whose signature was refused: "If iNackMessage.Class is not NackBadSignature: Take no further action"."""
    if message_class != NACK_BAD_SIGNATURE:
        return
    from mqspec.model import mqdsrp
    from mqspec.model.errors import DecodeError

    try:
        message = mqdsrp.decode(body)
    except DecodeError:
        # 3.1.5.1 looked only at Version and Operation; a body no replication message has cannot
        # be enqueued again (Send Replication Message takes a replication message): no action
        return
    destination = _machine_of(destination_format_name)
    private = replication_queue_private(qm.identifier)
    send_replication_message(qm, ctx, destination, message, 10, 3, AckRequested.ACK_NACK_REACH_QUEUE,
                             private, private)


NACK_BAD_SIGNATURE = 0x8006


def _machine_of(format_name: str) -> str:
    """The machine in ``DIRECT=OS:<machine>\\private$\\mqis_queue$``."""
    rest = format_name.split(":", 1)[-1]
    return rest.split("\\", 1)[0]


@clause(DOC, "3.3.7.10", "Start Sync0 State")
def start_sync0_state(qm: QueueManager, ctx: Context, partition: DirectoryPartition, purged_seq_number: SequenceNumber) -> None:
    """Reset the partition: mark every object deleted and ask the authority for everything.

    "Set iPartition.PurgeState to 1 (PURGE_STATE_STARTSYNC0). Set iPartition.LastSeqNumber to
    MIN_SEQ_NUMBER ... Raise an MQDS Reset Directory Partition event ... iOperation := 1" (3.3.7.10).
    """
    if partition.last_seq_number >= purged_seq_number or partition.purged_seq_number >= purged_seq_number:
        return
    partition.purge_state = PurgeState.STARTSYNC0
    partition.last_seq_number = MIN_SEQ_NUMBER
    partition.change_missing_window = MAX_SEQ_NUMBER
    partition.purged_seq_number = purged_seq_number
    partition.pending_changes = []
    # "Retry the Reset Directory Partition event with the same arguments until it succeeds": the
    # modelled store cannot fail a reset of a known operation
    mqds.reset_directory_partition(qm, ctx, partition.partition_id, 1)
    for deleted in qm.deleted_objects:
        if deleted.partition_id == partition.partition_id:
            deleted.seq_number = MIN_SEQ_NUMBER
    partition.purge_state = PurgeState.SYNC0
    send_sync_request(qm, ctx, partition)


@clause(DOC, "3.3.7.11", "Complete Sync0 State")
def complete_sync0_state(qm: QueueManager, ctx: Context, partition: DirectoryPartition) -> None:
    """Delete what the authority did not resend, return the partition to NORMAL, and apply what waited.

    "If iPartition.PurgeState is not 2 (PURGE_STATE_STARTSYNC0) or 3 (PURGE_STATE_SYNC0): Take no
    further condition" names the states wrongly: 2 is SYNC0 and 3 COMPLETESYNC0, which nothing
    ever sets (E-135); mqspec tests the values. "Set iPartition.ChangeMissingWindow to
    MIN_SEQ_NUMBER. Raise a Check Pending Changes event ... iPartition := iPartition" (3.3.7.11).
    """
    if partition.purge_state not in (PurgeState.SYNC0, PurgeState.COMPLETESYNC0):
        return
    mqds.reset_directory_partition(qm, ctx, partition.partition_id, 2)
    qm.deleted_objects = [
        d for d in qm.deleted_objects
        if not (d.partition_id == partition.partition_id and d.seq_number == MIN_SEQ_NUMBER)
    ]
    partition.purge_state = PurgeState.NORMAL
    partition.change_missing_window = MIN_SEQ_NUMBER
    check_pending_changes(qm, ctx, partition)
