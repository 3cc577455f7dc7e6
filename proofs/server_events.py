"""The server layer's events: what one directory server does when it starts, a client asks, a message arrives or a timer fires.

:func:`run` is the model's transition for one event of a :class:`~mqspec.proofs.server_model.Server`
(the events a simulated World raises: ``("start",)``, ``("client_request", request, guid)``,
``("receive", message)``, ``("timer", key)``). It dispatches as 3.1.5.1 does and runs the
section of each event, calling the core model (:mod:`mqspec.proofs.z3_model`) for the replication
state of a partition and :mod:`mqspec.proofs.server_objects` for what changes mean. The state is
changed in place; the returned :class:`~mqspec.proofs.server_model.Event` holds what was emitted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mqspec.model import mqdsrp
from mqspec.model.errors import DecodeError
from mqspec.model.guid import Guid
from mqspec.model.mqdsrp import (
    AlreadyPurgedMessage,
    BSCAckMessage,
    ChangePropagationMessage,
    ChangeReplyMessage,
    ChangeRequestMessage,
    Command,
    CompleteSync0,
    DirectoryChange,
    Operation,
    PartitionSeqNumbers,
    PSCAckMessage,
    Scope,
    SeqNumberHeader,
    SyncReplyMessage,
    SyncRequestMessage,
)
from mqspec.model.propids import ObjectType
from mqspec.model.propvalue import Property

from . import z3_model as m
from .server_model import (
    BSC_ACK_FIRST,
    BSC_ACK_NEXT,
    HEADER_INTERVAL,
    INTERSITE,
    INTRASITE,
    MAX,
    MQ_OK,
    MQDS_NO_RSP_FROM_OWNER,
    MQDS_OWNER_NOT_REACHED,
    MQDS_UNKNOWN_SOURCE,
    PEC_PARTITION_ID,
    P,
    PROPAGATION_INTERVAL,
    WAIT_AUTHORITY,
    WAIT_FORWARDED,
    Completed,
    Event,
    Neighbor,
    Partition,
    Server,
    Waiting,
    core_change,
    delete_properties,
    first_value,
    new_partition,
    object_type_of_change,
    prop_value,
    second_value,
    seq,
    tombstone,
)
from .server_objects import (
    IDENTITY,
    Propagated,
    ServerEnvironment,
    compact,
    create_directory_object,
    created,
    delete_directory_object,
    deleted,
    focus,
    send_sync_request,
    sync_directory_object,
    update_directory_object,
    updated,
)

NACK_FIRST, NACK_LAST, NACK_BAD_SIGNATURE = 0x8000, 0xC003, 0x8006
ENTERPRISE_TYPES = (ObjectType.MQDS_SITE, ObjectType.MQDS_CN, ObjectType.MQDS_ENTERPRISE, ObjectType.MQDS_USER,
                    ObjectType.MQDS_ROUTINGLINK)
SITE_TYPES = (ObjectType.MQDS_MACHINE, ObjectType.MQDS_QUEUE)


def run(server: Server, event: tuple[Any, ...], clarified: bool, now: float) -> Event:
    """The model's transition for one event of ``server`` (changed in place); what it emitted."""
    ev = Event(server, clarified, now)
    ev.env = ServerEnvironment(ev)
    kind = event[0]
    if kind == "start":
        server_initialization(ev)
        client_initialization(ev)
    elif kind == "client_request":
        directory_client_request(ev, event[1], event[2])
    elif kind == "receive":
        message = event[1]
        receiving_replication_messages(ev, message.body, int(message.klass), message.destination_format_name)
    elif kind == "timer":
        fire_timer(ev, event[1].kind, event[1].args)
    else:
        raise ValueError(f"no model of the event {kind!r}")
    compact(ev)
    return ev


# --- 3.1.3, 3.2.3, 3.3.3 Initialization -----------------------------------------------------------


def common_initialization(ev: Event) -> None:
    """3.1.3: the enterprise partition on first start, the not-persisted attributes, the queue."""
    s = ev.server
    if not s.partitions:
        s.partitions.append(new_partition(PEC_PARTITION_ID, s.machine_name if s.is_pec else s.pec_name))
    for p in s.partitions:
        p.previous_purged_seq_number = 0
        p.change_missing_window = MAX
        p.pending_changes = []
    if s.is_pec:
        s.my_enterprise_partition = s.find_partition(PEC_PARTITION_ID)
    own = s.find_partition(s.site_identifier)
    if own is not None:
        s.my_site_partition = own
        if s.is_bsc:
            s.my_psc_name = own.authority_name
    else:
        s.my_site_partition = None
        if s.is_bsc:  # "implementation-specific": configuration
            s.my_psc_name = s.configured_psc_name
    for n in (*s.psc_neighbors, *s.bsc_neighbors):  # 3.1.3.2
        n.available_changes = []
    s.replication_queue_open = True  # 3.1.3.3


def server_initialization(ev: Event) -> None:
    """3.2.3: "The server MUST perform the initializations specified in section 3.1.3"."""
    common_initialization(ev)


def client_initialization(ev: Event) -> None:
    """3.3.3: 3.1.3, the timers, and a sync request for each partition this server does not own."""
    s = ev.server
    common_initialization(ev)
    if s.is_bsc:
        ev.start_timer("bsc_ack", (), BSC_ACK_FIRST)
    if s.is_psc:
        for n in s.bsc_neighbors:
            ev.start_timer("change_propagation", (n.machine_name, INTRASITE), PROPAGATION_INTERVAL[INTRASITE])
        for n in s.psc_neighbors:
            ev.start_timer("change_propagation", (n.machine_name, INTERSITE), PROPAGATION_INTERVAL[INTERSITE])
    for p in list(s.partitions):
        if p.authority_name != s.machine_name or s.is_bsc:
            send_sync_request(ev, p)


# --- [MS-MQDS] directory clients (E-181) and 3.1.7.1 ---------------------------------------------------------


def directory_client_request(ev: Event, request: Any, new_guid: Guid) -> None:
    """The MQDS server: at the authority the change is numbered and applied (3.1.7.1.3), elsewhere sent on (3.1.7.1.1)."""
    s = ev.server
    number = s.next_client_request
    s.next_client_request += 1
    partition = s.find_partition(request.partition)
    operation = {"create": 0x00, "update": 0x01, "delete": 0x02}[request.operation]
    object_type = int(request.object_type)
    properties = tuple(request.properties)
    if request.operation == "create":
        identity = IDENTITY.get(object_type)
        if identity is not None and not any(p.propid == identity for p in properties):
            properties = (*properties, Property(identity, new_guid))  # E-182
    elif request.operation == "delete":
        properties = delete_properties(request.scope, object_type)
    if partition is not None and s.is_authority_of(partition):
        number_of_change = read_next_sequence_number(ev, request.partition)
        if request.operation == "create":
            status = create_directory_object(ev, object_type, request.path_name, properties, request.partition,
                                             number_of_change, True)
        elif request.operation == "update":
            status = update_directory_object(ev, object_type, request.path_name, request.guid, properties,
                                             request.partition, number_of_change, True)
        else:
            status, _ = delete_directory_object(ev, object_type, request.path_name, request.guid, request.scope, True,
                                                request.partition, number_of_change)
        ev.emit(Completed(number, status))
        return
    change_remote_object(ev, operation, object_type, request.path_name, request.guid, request.partition,
                         properties, number)


def read_next_sequence_number(ev: Event, partition_id: Guid) -> int:
    """3.1.7.1.3: "Set rNextSeqNumber to dirPartition.LastSeqNumber. Increment rNextSeqNumber"."""
    s = ev.server
    if s.is_pec and s.my_enterprise_partition is not None and partition_id == s.my_enterprise_partition.partition_id:
        part = s.my_enterprise_partition
    elif s.is_psc and s.my_site_partition is not None and partition_id == s.my_site_partition.partition_id:
        part = s.my_site_partition
    else:
        return 0
    return int(m.add(part.last_seq_number, 1))


def change_remote_object(ev: Event, operation: int, object_type: int, path: str | None, guid: Guid | None,
                         partition_id: Guid, properties: tuple[Property, ...], client_request: int) -> None:
    """3.1.7.1.1: a ChangeRequestMessage for the authority, then Process Change Request."""
    s = ev.server
    use_guid = None
    if path is None:  # clarification E-101: a request named by GUID only
        use_guid = guid if guid is not None else prop_value(properties, IDENTITY.get(object_type, -1))
    request_identifier = s.next_request_identifier
    s.next_request_identifier += 1
    change = DirectoryChange(Command(operation), partition_id, seq(0), seq(0), seq(0), properties,
                             path_name=path, guid_identifier=use_guid)
    message = ChangeRequestMessage(s.site_identifier, partition_id, request_identifier, s.machine_name,
                                   s.my_psc_name if s.is_bsc else None, change)
    process_change_request(ev, message, "client", client_request)


# --- 3.3.7.1 Process Change Request and its ends --------------------------------------------------------


def _key(message: ChangeRequestMessage) -> tuple[str, int]:
    return (message.requester_name, message.request_identifier)


def process_change_request(ev: Event, message: ChangeRequestMessage, origin: str,
                           client_request: int | None = None) -> None:
    """3.3.7.1: send the request one hop on and wait (10 s to the authority, 20 s otherwise)."""
    s = ev.server
    if s.is_bsc:
        next_hop = s.my_psc_name
    else:
        partition = s.find_partition(message.partition_id)
        if partition is None:  # "Set rStatus to MQDS_UNKNOWN_SOURCE. Take no further action"
            _return_status(ev, Waiting(message.request_identifier, message, origin, client_request),
                           MQDS_UNKNOWN_SOURCE)
            return
        next_hop = partition.authority_name
    ev.send(next_hop, message, 10, 8, ack=True, queues=True)
    s.pending_requests[_key(message)] = Waiting(message.request_identifier, message, origin, client_request)
    partition = s.find_partition(message.partition_id)
    to_authority = partition is not None and partition.authority_name == next_hop
    ev.start_timer("change_request_wait", (_key(message),), WAIT_AUTHORITY if to_authority else WAIT_FORWARDED)


def _return_status(ev: Event, waiting: Waiting, status: int) -> None:
    """rStatus goes to whoever raised Process Change Request: a Change Reply (3.2.7.2) or the client."""
    if waiting.origin == "forward":
        send_change_reply(ev, status, waiting.message)
    else:
        ev.emit(Completed(waiting.client_request or 0, status))


def _resume(ev: Event, waiting: Waiting, status: int) -> None:
    ev.server.pending_requests.pop(_key(waiting.message), None)
    ev.cancel_timer("change_request_wait", (_key(waiting.message),))
    _return_status(ev, waiting, status)


def _find_waiting(ev: Event, requester: str, identifier: int) -> Waiting | None:
    if ev.clarified:  # clarification E-125: by (RequesterName, RequestIdentifier)
        return ev.server.pending_requests.get((requester, identifier))
    return next((w for k, w in ev.server.pending_requests.items() if k[1] == identifier), None)


def send_change_reply(ev: Event, status: int, request: ChangeRequestMessage) -> None:
    """3.2.7.6: to the requester, or to its PSC when the requester is no neighbor of this server."""
    s = ev.server
    name = request.requester_name
    reply = ChangeReplyMessage(s.site_identifier, request.request_identifier, status, name)
    if not any(n.machine_name == name for n in (*s.psc_neighbors, *s.bsc_neighbors)):
        # clarification E-165: not to this server itself (the BSC's own PSC); E-122: a PSC has no PSCName
        if request.psc_name is not None and not (ev.clarified and request.psc_name == s.machine_name):
            name = request.psc_name
    ev.send(name, reply, 10, 8, ack=True, queues=True)


# --- 3.1.5 Message processing ------------------------------------------------------------------------


def receiving_replication_messages(ev: Event, body: bytes, message_class: int, format_name: str) -> None:
    """3.1.5.1: dispatch on the class and the BaseReplicationHeader.Operation (Version 0x00 only)."""
    if not body or body[0] != 0x00:
        return
    if message_class == 0:
        try:
            message = mqdsrp.decode(body)
        except DecodeError:
            return
        {
            Operation.CHANGE_PROPAGATION: receive_change_propagation,
            Operation.CHANGE_REQUEST: receive_change_request,
            Operation.SYNC_REQUEST: receive_sync_request,
            Operation.SYNC_REPLY: receive_sync_reply,
            Operation.CHANGE_REPLY: receive_change_reply,
            Operation.ALREADY_PURGED: receive_already_purged,
            Operation.PSC_ACK: receive_psc_ack,
            Operation.BSC_ACK: receive_bsc_ack,
        }[message.operation](ev, message)
    elif NACK_FIRST <= message_class <= NACK_LAST:
        operation = body[17] if len(body) > 17 else None
        if operation == Operation.CHANGE_REQUEST:
            try:
                request = mqdsrp.decode(body)
            except DecodeError:
                return
            waiting = _find_waiting(ev, request.requester_name, request.request_identifier)  # 3.3.7.8
            if waiting is not None:
                _resume(ev, waiting, MQDS_OWNER_NOT_REACHED)
        elif operation in (0x00, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07):
            receive_request_nack(ev, body, message_class, format_name)


def processing_directory_changes(ev: Event, changes: Sequence[DirectoryChange], flush: bool) -> None:
    """3.1.5.2: each change to its own partition's Handle Directory Change (none: no action)."""
    for change in changes:
        partition = ev.server.find_partition(change.partition_id)
        if partition is None:
            continue
        if ev.focused is not partition:  # the environment's hooks focus again whatever they change
            focus(ev, partition)
        m.handle_directory_change(partition, ev.out, True, core_change(change), ev.reading, flush)


def receive_request_nack(ev: Event, body: bytes, message_class: int, format_name: str) -> None:
    """3.3.7.9: a NackBadSignature's message is sent again to the machine of its destination queue."""
    if message_class != NACK_BAD_SIGNATURE:
        return
    try:
        message = mqdsrp.decode(body)
    except DecodeError:
        return
    machine = format_name.split(":", 1)[-1].split("\\", 1)[0]
    ev.send(machine, message, 10, 3, ack=True, queues=True)


# --- 3.2.7 the server's events --------------------------------------------------------------------------


def receive_change_propagation(ev: Event, message: ChangePropagationMessage) -> None:
    """3.2.7.1: the changes (iCheckFlush when Flush is 0x00), then the SeqNumberHeader's numbers."""
    processing_directory_changes(ev, message.changes, not message.flush)
    header = message.seq_numbers
    for entry in header.partitions:
        partition = ev.server.find_partition(entry.partition_id)
        if partition is None:
            continue
        focus(ev, partition)
        m.receive_change_propagation(partition, ev.out, True, True, entry.last_seq_number.value,
                                     entry.purged_seq_number.value, ev.reading, header.machine_name)


def _my_partition_for_request(ev: Event, partition_id: Guid) -> Partition | None:
    s = ev.server
    mine = (s.is_pec and s.my_enterprise_partition is not None
            and partition_id == s.my_enterprise_partition.partition_id) or (
        s.is_psc and partition_id == s.site_identifier)
    return s.find_partition(partition_id) if mine else None


def receive_change_request(ev: Event, message: ChangeRequestMessage) -> None:
    """3.2.7.2: the authority applies the request as LastSeqNumber + 1 and replies; anyone else forwards it."""
    s = ev.server
    mine = _my_partition_for_request(ev, message.partition_id)
    if mine is None:
        process_change_request(ev, message, "forward")
        return
    change = message.change
    object_type = object_type_of_change(change)
    number = int(m.add(mine.last_seq_number, 1))
    path, guid = change.path_name, change.guid_identifier
    props = change.properties
    removed = None
    # the directory event of 3.1.7.2.5 / .6 / .7 / .8 (iPost... false); with iReplicate at the authority it
    # raises Propagate Directory Change, which the core's Receive Change Request raises below
    if change.command is Command.CREATE:
        status = ev.server.directory.create(ev, object_type, path, props, mine.partition_id, number)
        info = Propagated(0x00, object_type, path, None, mine.partition_id, props, 0, change)
    elif change.command is Command.UPDATE:
        status = ev.server.directory.update(ev, object_type, path, guid, props, mine.partition_id, number)
        info = Propagated(0x01, object_type, path, guid, mine.partition_id, props, 0, change)
    elif change.command is Command.DELETE:
        status, removed = ev.server.directory.delete(ev, second_value(props), path, guid)
        info = Propagated(0x02, second_value(props), getattr(removed, "path_name", None) or path,
                          getattr(removed, "guid", guid), mine.partition_id,
                          delete_properties(first_value(props), second_value(props)), first_value(props), change)
    else:  # E-164: no related protocol sends a synchronize request, but a peer's message can carry one
        status = sync_directory_object(ev, mine, object_type, path, guid, props, number)
        info = None  # Handle Directory Sync replicates nothing (3.1.7.2.8), so nothing is propagated
    focus(ev, mine)
    ev.env.removed = removed
    m.receive_change_request(mine, ev.out, True, change.command is Command.DELETE, status == MQ_OK,
                             change.guid_identifier is not None, ev.reading, info,
                             is_sync=change.command is Command.SYNC)
    if status == MQ_OK:  # the rest of the handler with iPost... false
        if change.command is Command.CREATE:
            created(ev, mine, object_type, path, props)
        elif change.command is Command.UPDATE:
            updated(ev, mine, object_type, path, guid, props, sync=False)
        elif change.command is Command.DELETE:
            if ev.clarified:  # E-108 (a second time: the same deletion is recorded once)
                identifier = getattr(removed, "guid", None) or guid
                if identifier is not None and not any(
                        t.present and t.payload.identifier == identifier and t.seq_number == number
                        for t in s.deleted_objects):
                    s.deleted_objects.append(tombstone(identifier, mine.partition_id, number, second_value(props),
                                                       first_value(props)))
            deleted(ev, mine, second_value(props), path, guid, removed)
        else:
            updated(ev, mine, object_type, path, guid, props, sync=True)
    send_change_reply(ev, status, message)


def _sync_object_types(ev: Event, partition: Partition) -> tuple[ObjectType, ...]:
    s = ev.server
    if s.is_pec and partition is s.my_enterprise_partition:
        return ENTERPRISE_TYPES
    if s.is_psc and partition is s.my_site_partition:
        return SITE_TYPES
    if ev.clarified:  # clarification E-117: a replicated partition's types
        return ENTERPRISE_TYPES if partition.partition_id == PEC_PARTITION_ID else SITE_TYPES
    return ()


def lookup_directory_objects(ev: Event, partition: Partition, object_type: ObjectType, from_seq: int, to_seq: int,
                             scope: int) -> list[m.DirObject]:
    """3.2.7.8: the objects of the type in the partition with From <= SEQNUM <= To, each with the properties
    a sync change carries (refTable's DirectoryChangePropID column that the LookupPropID column reads)."""
    from mqspec.refimpl.mqdsrp_server import REF_IDS, _zero

    lookup_ids, change_ids = REF_IDS[object_type]
    found = []
    for obj in ev.server.directory.store.objects_in(partition.partition_id):
        number = obj.seq_number.value
        if obj.object_type != int(object_type) or not from_seq <= number <= to_seq:
            continue
        if (object_type is ObjectType.MQDS_QUEUE and scope == Scope.ENTERPRISE and ev.literal
                and obj.properties.get(P["PROPID_Q_SCOPE"]) != 0x01):  # E-263 literal: enterprise-scope queues only
            continue
        values = {propid: obj.properties.get(propid) for propid in lookup_ids}
        properties = []
        for propid in change_ids:
            value = values.get(propid)
            if value is None:
                if ev.clarified:  # clarification E-124: a value not read is left out
                    continue
                value = _zero(propid)
            properties.append(Property(propid, value))
        if not properties:
            properties.append(Property(change_ids[0], _zero(change_ids[0])))
        found.append(m.DirObject(True, number, True, (values[lookup_ids[1]], tuple(properties))))
    return found


def receive_sync_request(ev: Event, message: SyncRequestMessage) -> None:
    """3.2.7.3: AlreadyPurged, or the changes in [From, To] rebuilt from the directory and the tombstones."""
    s = ev.server
    partition = s.find_partition(message.partition_id)
    if partition is None or partition.purge_state != m.NORMAL:
        return
    from_seq, to_seq = message.from_seq_number.value, message.to_seq_number.value
    upto = partition.last_seq_number if to_seq == MAX else to_seq
    objects = [o for t in _sync_object_types(ev, partition)
               for o in lookup_directory_objects(ev, partition, t, from_seq, upto, message.scope)]
    focus(ev, partition, objects)
    out = ev.out
    m.receive_sync_request(partition, out, True, from_seq, to_seq, message.known_purged_seq_number.value,
                           message.is_sync0, ev.reading)
    if out.already_purged[-1][0] is True:  # 3.2.7.7 Send Already Purged
        ev.send(message.requester_name,
                AlreadyPurgedMessage(s.site_identifier, partition.partition_id, seq(partition.purged_seq_number)),
                20 * 60, 3, ack=False, queues=False)
        return
    reply = out.replies[-1]
    if reply.sent is not True:
        return
    ascending = ev.reading("E-119")
    chosen = sorted(((e, i) for i, e in enumerate(reply.elements) if e.included is True),
                    key=lambda x: (x[0].seq_number if ascending else -x[0].seq_number, x[1]))
    changes = []
    for element, _ in chosen:
        if element.is_delete:
            t = element.payload
            changes.append(DirectoryChange(Command.DELETE, partition.partition_id, seq(element.previous_seq_number),
                                           seq(element.seq_number), seq(reply.purged_seq_number),
                                           delete_properties(t.scope, t.object_type), guid_identifier=t.identifier))
        else:
            guid, properties = element.payload
            changes.append(DirectoryChange(Command.SYNC, partition.partition_id, seq(element.previous_seq_number),
                                           seq(element.seq_number), seq(reply.purged_seq_number), properties,
                                           guid_identifier=guid))
    body = SyncReplyMessage(s.site_identifier, partition.partition_id, seq(from_seq), seq(reply.to_seq_number),
                            seq(reply.purged_seq_number), CompleteSync0(reply.complete_sync0), tuple(changes))
    ev.send(message.requester_name, body, 20 * 60, 3, ack=False, queues=False)


def receive_psc_ack(ev: Event, message: PSCAckMessage) -> None:
    """3.2.7.4: the PSC neighbor's AckedPECSeqNumber or AckedSeqNumber of a partition this server owns."""
    s = ev.server
    if not s.is_psc:
        return
    neighbor = next((n for n in s.psc_neighbors if n.machine_name == message.psc_name), None)
    if neighbor is None:
        return
    if s.is_pec and s.my_enterprise_partition is not None and (
            message.acked_partition_id == s.my_enterprise_partition.partition_id):
        neighbor.acked_pec_seq_number = message.acked_seq_number.value
    if s.my_site_partition is not None and message.acked_partition_id == s.my_site_partition.partition_id:
        neighbor.acked_seq_number = message.acked_seq_number.value


def receive_bsc_ack(ev: Event, message: BSCAckMessage) -> None:
    """3.2.7.5: "Set dirBSCNeighbor.LastAckedTime to the current time"."""
    s = ev.server
    if not s.is_psc:
        return
    neighbor = next((n for n in s.bsc_neighbors if n.machine_name == message.bsc_name), None)
    if neighbor is not None:
        neighbor.last_acked_time = ev.now


# --- 3.3.7 the client's events ----------------------------------------------------------------------------


def receive_sync_reply(ev: Event, message: SyncReplyMessage) -> None:
    """3.3.7.5: the changes, then sync0's end or the missing-change window."""
    partition = ev.server.find_partition(message.partition_id)
    if partition is None or message.purged_seq_number.value < partition.purged_seq_number:
        return
    focus(ev, partition)
    m.receive_sync_reply(partition, ev.out, True, message.from_seq_number.value, message.to_seq_number.value,
                         message.purged_seq_number.value, int(message.complete_sync0),
                         [core_change(c) for c in message.changes], ev.reading)


def receive_change_reply(ev: Event, message: ChangeReplyMessage) -> None:
    """3.3.7.6: the waiting Process Change Request ends with the reply's Result (E-129)."""
    waiting = _find_waiting(ev, message.requester_name, message.request_identifier)
    if waiting is not None:
        _resume(ev, waiting, message.result)


def receive_already_purged(ev: Event, message: AlreadyPurgedMessage) -> None:
    """3.3.7.7: Start Sync0 State when the authority purged history this replica needs (E-134)."""
    partition = ev.server.find_partition(message.partition_id)
    if partition is None:
        return
    focus(ev, partition)
    m.receive_already_purged(partition, ev.out, True, message.purged_seq_number.value, ev.reading)


# --- 3.3.6 timers and 3.3.7.2 Send Change Propagation --------------------------------------------------------


def fire_timer(ev: Event, kind: str, args: tuple[Any, ...]) -> None:
    s = ev.server
    if kind == "change_propagation":  # 3.3.6.1
        name, scope = args
        neighbors = s.psc_neighbors if scope == INTERSITE else s.bsc_neighbors
        neighbor = next((n for n in neighbors if n.machine_name == name), None)
        if neighbor is None:
            return
        send_change_propagation(ev, neighbor, scope)
        ev.start_timer("change_propagation", (neighbor.machine_name, scope), PROPAGATION_INTERVAL[scope])
    elif kind == "bsc_ack":  # 3.3.6.2
        if s.my_psc_name:
            ev.send(s.my_psc_name, BSCAckMessage(s.site_identifier, s.identifier, s.machine_name), 20 * 60, 3,
                    ack=True, queues=True)
        ev.start_timer("bsc_ack", (), BSC_ACK_NEXT)
    elif kind == "change_request_wait":  # 3.3.7.1: "An implementation-specific waiting time has elapsed"
        waiting = s.pending_requests.get(tuple(args[0]))  # type: ignore[arg-type]
        if waiting is not None:
            _resume(ev, waiting, MQDS_NO_RSP_FROM_OWNER)


def header_entries(ev: Event, scope: str) -> tuple[PartitionSeqNumbers, ...]:
    """3.3.7.2's SeqNumberHeader: intersite, the partitions this server owns; intrasite, every partition
    (the ones it does not own with their AllowedPurgeSeqNumber)."""
    s = ev.server
    entries = []
    if scope == INTERSITE:
        if s.is_pec and s.my_enterprise_partition is not None:
            p = s.my_enterprise_partition
            entries.append(PartitionSeqNumbers(PEC_PARTITION_ID, seq(p.last_seq_number), seq(p.purged_seq_number)))
        if s.my_site_partition is not None:
            p = s.my_site_partition
            entries.append(PartitionSeqNumbers(p.partition_id, seq(p.last_seq_number), seq(p.purged_seq_number)))
    else:
        for p in s.partitions:
            own = p is s.my_enterprise_partition or p is s.my_site_partition
            entries.append(PartitionSeqNumbers(p.partition_id, seq(p.last_seq_number),
                                               seq(p.purged_seq_number if own else p.allowed_purge_seq_number)))
    return tuple(entries)


def send_change_propagation(ev: Event, neighbor: Neighbor, scope: str) -> None:
    """3.3.7.2: the neighbor's AvailableChangeCollection, with a SeqNumberHeader every 20 minutes (per neighbor: E-137)."""
    s = ev.server
    header = SeqNumberHeader(None, ())
    last = s.last_seq_number_header_sent.get((neighbor.machine_name, scope)) if ev.clarified \
        else s.last_seq_number_header_time
    if last is None or ev.now - last >= HEADER_INTERVAL:
        entries = header_entries(ev, scope)
        if entries:
            header = SeqNumberHeader(s.machine_name, entries)
            s.last_seq_number_header_time = ev.now
            s.last_seq_number_header_sent[(neighbor.machine_name, scope)] = ev.now
    body = ChangePropagationMessage(s.site_identifier, False, tuple(neighbor.available_changes), header)
    ev.send(neighbor.machine_name, body, 20 * 60, 3, ack=False, queues=False)
    neighbor.available_changes = []
