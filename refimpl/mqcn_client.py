"""MS-MQCN 3.3: the client side, which tells a queue manager that an object it owns changed.

The client is a directory service (version 0x01 messages of Notification Updates, Windows NT
and 2000, note <1>) or a queue manager (version 0x02 messages of one Notification Body, later
Windows). One function per event, in the text's order; each docstring quotes the MUST it
implements; departures say ``# clarification E-NNN`` (register: mqcn-handlers.yaml).

* 3.3.3 :func:`client_initialization` opens the OutgoingQueue to a destination's notification
  queue (once per destination: clarification E-244);
* 3.3.4.1 :func:`send_change_notification` (iOperation, iDirectoryObject) prepares and sends;
* 3.3.5.1 :func:`prepare_change_notification_v2`, 3.3.5.2 :func:`prepare_change_notification_v1`
  (the PROPID sets each command requires), 3.3.5.3 :func:`send_change_notification_message`
  (the Message attributes, the unused byte, the signature of version 0x01).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

import attrs
from mqspec.model import mqcn
from mqspec.model.errors import ModelError
from mqspec.model.guid import Guid
from mqspec.model.mqcn import (
    ChangeNotificationMessage,
    Command,
    Event,
    NotificationBody,
    NotificationUpdate,
    Version,
)
from mqspec.model.propids import PROPIDS, ObjectType
from mqspec.model.propvalue import Property

from mqspec.clauses import clause

from . import status as st
from .effects import Context
from .mqcn_effects import EnqueueNotification, OpenQueue
from .mqcn_server import notify_queue_private
from .mqcn_state import (
    EMPTY_SECURITY_DESCRIPTOR,
    INFINITE,
    SENDER_ID_TYPE_QM,
    AuthenticationLevel,
)

DOC = "MS-MQCN"
P = {name: pdef.propid for name, pdef in PROPIDS.items()}

#: "TimeToReachQueue := 5 minutes" (3.3.5.3), in seconds
TIME_TO_REACH_QUEUE = 5 * 60
#: HashAlgorithm values of note <12>: MD5 (MSMQ 1.0 and 2.0, the NT directory service), SHA1
CALG_MD5 = 0x00008003
CALG_SHA1 = 0x00008004
#: MQDS_ENTERPRISESCOPE, PropertyValue[0] of a delete (3.3.5.2; the value is MC-MQDSRP's SCOPE_ENTERPRISE, E-246)
MQDS_ENTERPRISESCOPE = 1
MQDS_QUEUE = int(ObjectType.MQDS_QUEUE)
SENDER_ID_TYPE_NONE = 0


class Operation(str, enum.Enum):
    """iOperation of Send Change Notification (3.3.4.1)."""

    QUEUE_CREATION = "QueueCreation"
    QUEUE_UPDATE = "QueueUpdate"
    QUEUE_DELETION = "QueueDeletion"
    QUEUE_MANAGER_UPDATE = "QueueManagerUpdate"


#: iOperation -> the Notification Body's Event (3.3.5.1) and the Notification Update's Command (3.3.5.2)
EVENT_OF = {
    Operation.QUEUE_CREATION: Event.QUEUE_CREATED,
    Operation.QUEUE_UPDATE: Event.QUEUE_CHANGED,
    Operation.QUEUE_DELETION: Event.QUEUE_DELETED,
    Operation.QUEUE_MANAGER_UPDATE: Event.MACHINE_CHANGED,
}
COMMAND_OF = {
    Operation.QUEUE_CREATION: Command.CREATE,
    Operation.QUEUE_UPDATE: Command.CHANGE,
    Operation.QUEUE_DELETION: Command.DELETE,
    Operation.QUEUE_MANAGER_UPDATE: Command.CHANGE,
}

#: 3.3.5.2, Command 0x00 on a queue: "the following property ids MUST be included ... in any order"
QUEUE_CREATE_PROPIDS = tuple(P[f"PROPID_Q_{n}"] for n in (
    "TYPE", "INSTANCE", "BASEPRIORITY", "JOURNAL", "QUOTA", "JOURNAL_QUOTA", "CREATE_TIME", "MODIFY_TIME",
    "SCOPE", "SECURITY", "PATHNAME", "LABEL", "AUTHENTICATE", "PRIV_LEVEL", "TRANSACTION",
))
#: "This property MUST NOT be included" in a create
QUEUE_CREATE_EXCLUDED = P["PROPID_Q_ADS_PATH"]
#: 3.3.5.2, Command 0x01 on a queue: "These properties may be modified"
QUEUE_MODIFIABLE_PROPIDS = tuple(P[f"PROPID_Q_{n}"] for n in (
    "JOURNAL", "QUOTA", "BASEPRIORITY", "JOURNAL_QUOTA", "SECURITY", "AUTHENTICATE", "PRIV_LEVEL",
))
#: 3.3.5.2, Command 0x01 on a machine: required, modifiable, and "may be included but will be ignored"
MACHINE_REQUIRED_PROPIDS = (P["PROPID_QM_MACHINE_ID"], P["PROPID_QM_FOREIGN"])
MACHINE_MODIFIABLE_PROPIDS = (P["PROPID_QM_QUOTA"], P["PROPID_QM_JOURNAL_QUOTA"], P["PROPID_QM_SECURITY"])
MACHINE_IGNORED_PROPIDS = (P["PROPID_QM_ADDRESS"], P["PROPID_QM_CNS"], P["PROPID_QM_MACHINE_TYPE"], P["PROPID_QM_OS"])


def default_queue_values(identifier: Guid, path_name: str, now: float) -> dict[int, object]:
    """Values for the create PROPIDs a directory object does not hold (modelling E-246).

    The [MS-MQMQ] 2.3.1 defaults: no type, priority 0, no journal, INFINITE quotas, created and
    modified now, enterprise scope, an empty security descriptor, an empty label, no
    authentication, MQ_PRIV_LEVEL_OPTIONAL (1), not transactional.
    """
    return {
        P["PROPID_Q_TYPE"]: Guid.NULL, P["PROPID_Q_INSTANCE"]: identifier, P["PROPID_Q_BASEPRIORITY"]: 0,
        P["PROPID_Q_JOURNAL"]: 0, P["PROPID_Q_QUOTA"]: INFINITE, P["PROPID_Q_JOURNAL_QUOTA"]: INFINITE,
        P["PROPID_Q_CREATE_TIME"]: int(now), P["PROPID_Q_MODIFY_TIME"]: int(now),
        P["PROPID_Q_SCOPE"]: MQDS_ENTERPRISESCOPE, P["PROPID_Q_SECURITY"]: EMPTY_SECURITY_DESCRIPTOR,
        P["PROPID_Q_PATHNAME"]: path_name, P["PROPID_Q_LABEL"]: "", P["PROPID_Q_AUTHENTICATE"]: 0,
        P["PROPID_Q_PRIV_LEVEL"]: 1, P["PROPID_Q_TRANSACTION"]: 0,
    }


def _object_type(value: object) -> ObjectType:
    kind = ObjectType(value)
    if kind not in (ObjectType.MQDS_QUEUE, ObjectType.MQDS_MACHINE):
        raise ModelError(f"MS-MQCN notifies about queues and machines, not {kind.name}")
    return kind


@attrs.frozen(kw_only=True)
class DirectoryObject:
    """iDirectoryObject (3.3.4.1): "a queue or QueueManager object that contains the attributes and values".

    ``owner`` is the queue manager that owns the object, the notification's destination
    (clarification E-245); ``modified`` lists the PROPIDs an update changed (None: every
    modifiable property the object holds).
    """

    object_type: ObjectType = attrs.field(converter=_object_type)
    identifier: Guid = attrs.field(validator=attrs.validators.instance_of(Guid))
    owner: Guid = attrs.field(validator=attrs.validators.instance_of(Guid))
    path_name: str | None = None
    properties: tuple[Property, ...] = attrs.field(default=(), converter=tuple)
    modified: tuple[int, ...] | None = None

    def values(self) -> dict[int, object]:
        """PROPID -> value (the first occurrence of each)."""
        out: dict[int, object] = {}
        for p in self.properties:
            out.setdefault(p.propid, p.value)
        return out


@clause(DOC, "3.3.1", "Abstract Data Model")
@attrs.define(eq=False)
class NotificationClient:
    """The sender of notifications: a directory service (version 0x01) or a queue manager (0x02).

    ``identifier`` is QueueManager.Identifier (SenderIdentifier of a version 0x01 message);
    ``directory_service_name`` the DomainController a version 0x02 body names, and
    ``directory_service_guid`` the GuidMasterId of a Notification Update (both default to the
    client's own); ``outgoing`` maps each destination queue manager to the openNotifyQueueDescriptor
    of its OutgoingQueue (3.3.1.1).
    """

    machine_name: str
    identifier: Guid
    version: Version = attrs.field(default=Version.DIRECTORY_SERVICE, converter=Version)
    directory_service_name: str | None = None
    directory_service_guid: Guid | None = None
    hash_algorithm: int = CALG_MD5
    outgoing: dict[Guid, int] = attrs.field(factory=dict)
    next_descriptor: int = 1


# --- 3.3.3 Initialization -----------------------------------------------------------------------


@clause(DOC, "3.3.3", "Initialization")
def client_initialization(client: NotificationClient, ctx: Context, destination: Guid) -> int:
    """Open the OutgoingQueue to ``destination``'s notification queue; returns rStatus.

    "This queue MUST be opened by raising an Open Queue event ... iFormatName := OutgoingQueue
    with ... DestinationFormatName := NOTIFY_QUEUE_PRIVATE ... NextHops := Empty string.
    iRequiredAccess := SendAccess. iSharedMode := DenyNone." NOTIFY_QUEUE_PRIVATE needs the
    destination queue manager's GUID, which initialization does not know; mqspec opens one
    OutgoingQueue per destination, the first time a notification goes there (clarification E-244).
    """
    descriptor = client.next_descriptor
    client.next_descriptor += 1
    client.outgoing[destination] = descriptor
    ctx.emit(OpenQueue(client.machine_name, notify_queue_private(destination), "SendAccess", "DenyNone",
                       st.MQ_OK, descriptor))
    return st.MQ_OK


# --- 3.3.4.1 Send Change Notification -------------------------------------------------------------


@clause(DOC, "3.3.4.1", "Send Change Notification")
def send_change_notification(
    client: NotificationClient, ctx: Context, operation: Operation, directory_object: DirectoryObject
) -> EnqueueNotification:
    """Prepare a version 0x01 or 0x02 message for iOperation on iDirectoryObject and send it.

    "Prepare a change notification message of either version 0x01 or 0x02 ... Send the prepared
    change notification message following the rules specified in section 3.3.5.3." The event has
    no argument choosing the version or the destination: the version is the sender's role (2.2.4:
    0x01 "for messages sent by an MSMQ Directory Service", 0x02 "by an MSMQ queue manager") and
    the destination is the object's owner (clarification E-245).
    """
    operation = Operation(operation)
    if client.version is Version.DIRECTORY_SERVICE:
        message = prepare_change_notification_v1(client, ctx, [(operation, directory_object)])
    else:
        message = prepare_change_notification_v2(client, operation, directory_object)
    return send_change_notification_message(client, ctx, message, directory_object.owner)


def _check_operation(operation: Operation, obj: DirectoryObject) -> None:
    want = ObjectType.MQDS_MACHINE if operation is Operation.QUEUE_MANAGER_UPDATE else ObjectType.MQDS_QUEUE
    if obj.object_type is not want:
        raise ModelError(f"{operation.value} is about a {want.name} object, not {obj.object_type.name}")


# --- 3.3.5.1 / 3.3.5.2 preparing -----------------------------------------------------------------


@clause(DOC, "3.3.5.1", "Preparing a Change Notification Message Version 0x02")
def prepare_change_notification_v2(
    client: NotificationClient, operation: Operation, directory_object: DirectoryObject
) -> ChangeNotificationMessage:
    """One Notification Body in a version 0x02 message.

    "Event MUST contain 1 to indicate that a queue object was created; or 2 ... changed; or 3 ...
    deleted; or 4 to indicate that a machine object was changed. ObjectGuid MUST contain the GUID
    of the queue or the machine object ... DomainController MUST contain the directory service
    name where the queue or a machine object was changed ... Field Version MUST be set to 0x02.
    Field NumberOfUpdateNotifications MUST be set to 0x01".
    """
    operation = Operation(operation)
    _check_operation(operation, directory_object)
    body = NotificationBody(
        event=EVENT_OF[operation], object_guid=directory_object.identifier,
        domain_controller=client.directory_service_name or client.machine_name,
    )
    return ChangeNotificationMessage(version=Version.QUEUE_MANAGER, body=body)


@clause(DOC, "3.3.5.2", "Preparing a Change Notification Message Version 0x01")
def prepare_change_notification_v1(
    client: NotificationClient, ctx: Context, changes: Sequence[tuple[Operation, DirectoryObject]]
) -> ChangeNotificationMessage:
    """Notification Updates in a version 0x01 message.

    "Field Version MUST be set to 0x01. Field NumberOfUpdateNotifications MUST be set to the
    number of Notification Update instances to be included in field Data. A directory service can
    send more than one notification message at a time." Each update follows
    :func:`notification_update`.
    """
    updates = [notification_update(client, ctx, Operation(op), obj) for op, obj in changes]
    return ChangeNotificationMessage(version=Version.DIRECTORY_SERVICE, updates=updates)


def notification_update(
    client: NotificationClient, ctx: Context, operation: Operation, obj: DirectoryObject
) -> NotificationUpdate:
    """One Notification Update (3.3.5.2).

    "Field UseGuid MUST be set to 0x00 if Command is set to 0x00 ... For other values of Command,
    UseGuid MUST be set to 0x01"; "Field GuidMasterId MUST be set with the GUID of the directory
    service that originated the change notification message"; the PROPID set per command:

    * create queue: the fifteen of :data:`QUEUE_CREATE_PROPIDS`, never PROPID_Q_ADS_PATH;
    * update queue: "PROPID_Q_QMID" then "the identifiers of the properties that were modified";
    * update machine: "PROPID_QM_MACHINE_ID, PROPID_QM_FOREIGN" then the modified properties;
    * delete queue: "PropertyId[0] = PROPID_D_SCOPE, PropertyId[1] = PROPID_D_OBJTYPE" with
      "PropertyValue[0] = MQDS_ENTERPRISESCOPE, PropertyValue[1] = MQDS_QUEUE".
    """
    _check_operation(operation, obj)
    master = client.directory_service_guid or client.identifier
    values = obj.values()
    command = COMMAND_OF[operation]
    if operation is Operation.QUEUE_CREATION:
        if not obj.path_name:
            raise ModelError("a queue creation is named by its PathName (UseGuid 0x00)")
        # modelling E-246: a value the directory object lacks takes its [MS-MQMQ] default
        defaults = default_queue_values(obj.identifier, obj.path_name, ctx.now)
        properties = [Property(pid, values.get(pid, defaults[pid])) for pid in QUEUE_CREATE_PROPIDS]
        return NotificationUpdate(command=command, path_name=obj.path_name, guid_master_id=master,
                                  properties=properties)
    if operation is Operation.QUEUE_DELETION:
        properties = [Property(P["PROPID_D_SCOPE"], MQDS_ENTERPRISESCOPE), Property(P["PROPID_D_OBJTYPE"], MQDS_QUEUE)]
    elif operation is Operation.QUEUE_UPDATE:
        # "the following property MUST be included within PropertyId[]: PROPID_Q_QMID"
        head = [Property(P["PROPID_Q_QMID"], values.get(P["PROPID_Q_QMID"], obj.owner))]
        properties = head + _modified(obj, values, QUEUE_MODIFIABLE_PROPIDS, (P["PROPID_Q_QMID"],))
    else:
        head = [Property(P["PROPID_QM_MACHINE_ID"], obj.identifier),
                Property(P["PROPID_QM_FOREIGN"], values.get(P["PROPID_QM_FOREIGN"], 0))]
        properties = head + _modified(obj, values, MACHINE_MODIFIABLE_PROPIDS, MACHINE_REQUIRED_PROPIDS)
    return NotificationUpdate(command=command, guid_identifier=obj.identifier, guid_master_id=master,
                              properties=properties)


def _modified(
    obj: DirectoryObject, values: dict[int, object], modifiable: tuple[int, ...], already: tuple[int, ...]
) -> list[Property]:
    """"The rest of PropertyId[] MUST be filled with the identifiers of the properties that were modified"."""
    if obj.modified is None:
        chosen = [pid for pid in modifiable if pid in values]
    else:
        chosen = [pid for pid in dict.fromkeys(obj.modified) if pid not in already]
        missing = [pid for pid in chosen if pid not in values]
        if missing:
            raise ModelError(f"modified PROPIDs {missing} have no value in the directory object")
    if QUEUE_CREATE_EXCLUDED in chosen:
        chosen.remove(QUEUE_CREATE_EXCLUDED)  # a directory path is never sent (3.3.5.2)
    return [Property(pid, values[pid]) for pid in chosen]


# --- 3.3.5.3 Sending -------------------------------------------------------------------------------


@clause(DOC, "3.3.5.3", "Sending a Change Notification Message")
def send_change_notification_message(
    client: NotificationClient, ctx: Context, message: ChangeNotificationMessage, destination: Guid
) -> EnqueueNotification:
    """Wrap the message in a Message and raise Enqueue Message on the OutgoingQueue.

    "TimeToReachQueue := 5 minutes, DeliveryGuarantee := Express, Class := Normal, HashAlgorithm
    MUST be set. The sender MUST create a buffer of bytes of the size of the Change Notification
    Message plus 1 ... This buffer MUST be assigned to Message.Body. If the message is version
    0x01, the MSMQ message MUST be signed ...: The field Message.SenderIdentifier MUST contain
    QueueManager.Identifier. The field Message.SenderIdentifierType MUST be set to
    QueueManagerIdentifier." A signed message carries an AuthenticationLevel other than None
    (Sig10 here; the text names none, erratum E-247).
    """
    descriptor = client.outgoing.get(destination)
    if descriptor is None:  # clarification E-244: the OutgoingQueue of this destination
        client_initialization(client, ctx, destination)
        descriptor = client.outgoing[destination]
    signed = message.version is Version.DIRECTORY_SERVICE
    effect = EnqueueNotification(
        node=client.machine_name, destination=destination, format_name=notify_queue_private(destination),
        descriptor=descriptor, message=message, body=mqcn.encode_body(message),
        time_to_reach_queue=TIME_TO_REACH_QUEUE, hash_algorithm=client.hash_algorithm,
        authentication_level=AuthenticationLevel.SIG10 if signed else AuthenticationLevel.NONE,
        sender_identifier_type=SENDER_ID_TYPE_QM if signed else SENDER_ID_TYPE_NONE,
        sender_identifier=client.identifier if signed else Guid.NULL,
    )
    ctx.emit(effect)
    return effect
