"""MS-MQCN 3.2: the server side, a queue manager told that objects it owns changed.

One function per event, named after it, in the order of the text's steps; each docstring quotes
the MUST it implements. Where mqspec departs from the literal text the code says
``# clarification E-NNN`` and branches on ``ctx.clarified`` (register: mqcn-handlers.yaml,
E-230 .. E-259). Handlers change the :class:`~mqspec.refimpl.mqcn_state.QueueManager` they are
given and append effects (:mod:`.mqcn_effects`) to the Context.

* 3.2.3 :func:`server_initialization` opens the Change Notification Queue; the Dequeue Message
  loop is the driver's (a World, a test) calling :func:`receive_change_notification` for each
  message while the queue is open;
* 3.2.5 :func:`receive_change_notification` parses rMessage.Body and dispatches on Version to
  3.2.5.1 :func:`process_change_notification_v1` and 3.2.5.2 :func:`process_change_notification_v2`;
* notes <3>/<13> (an option, off by default): :func:`defer_change_notification` holds messages
  and :func:`batch_timer_expired` processes them, or refreshes every public queue after 100.

The [MS-MQDMPR] events these handlers raise (Create / Delete Queue, the updates, Directory Read)
are modelled in :mod:`.mqcn_dmpr`.

Covered: the text's rules for both versions, the options the text leaves to the implementation
(use the properties or read the directory, batching, accepted versions, workgroup mode). Not
covered: [MS-MQDMPR] itself (Create/Delete Queue act on QueueCollection only), real signatures
(the AuthenticationLevel of rMessage says whether it was signed and verified).
"""

from __future__ import annotations

from mqspec.model import mqcn
from mqspec.model.errors import DecodeError, ModelError
from mqspec.model.guid import Guid
from mqspec.model.mqcn import (
    ChangeNotificationMessage,
    Command,
    Event,
    NotificationUpdate,
    Version,
)
from mqspec.model.propids import ObjectType

from mqspec.clauses import clause

from . import status as st
from .effects import Context, TimerKey
from .mqcn_dmpr import (
    create_queue,
    delete_queue,
    directory_read,
    update_queue,
    update_queue_manager,
)
from .mqcn_effects import BATCH_TIMER_KIND, Disregarded, IgnoredProperties, OpenQueue
from .mqcn_state import (
    QUEUE_ATTRIBUTE_PROPID,
    QUEUE_MANAGER_ATTRIBUTE_PROPID,
    SENDER_ID_TYPE_QM,
    AuthenticationLevel,
    DirectoryReader,
    QueueManager,
    ReceivedMessage,
    queue_attributes,
)

DOC = "MS-MQCN"

#: NOTIFY_QUEUE_PRIVATE (1.9): "PRIVATE=<queue manager guid>\3"
NOTIFY_QUEUE_NUMBER = 3
#: the Change Notification Queue below its computer (3.2.1.2.1)
NOTIFY_QUEUE_PATH = "private$\\notify_queue$"
#: MQDS_QUEUE, the object type a delete names in PropertyValue[1] (3.2.5.1, 3.3.5.2)
MQDS_QUEUE = int(ObjectType.MQDS_QUEUE)
MQDS_MACHINE = int(ObjectType.MQDS_MACHINE)
BATCH_TIMER = TimerKey(BATCH_TIMER_KIND)
#: notes <3>/<13>: the timer, the window, and how many messages make the server refresh instead
BATCH_SHORT_DELAY = 60.0
BATCH_WINDOW = 15 * 60.0
BATCH_OVERFLOW = 100

#: 3.2.5.1 Create Queue, command 0x00: the attributes "A new Queue ... with the following attributes"
V1_CREATE_ATTRIBUTES = (
    "type", "identifier", "base_priority", "journaling", "quota", "journal_quota", "create_time",
    "modify_time", "security", "pathname", "label", "authentication", "privacy_level", "transactional",
    "scope",
)
#: 3.2.5.1 command 0x01 on a queue: "BasePriority ... PrivacyLevel"; "All other PROPIDs ... MUST be ignored"
V1_QUEUE_UPDATE_ATTRIBUTES = (
    "base_priority", "journaling", "quota", "journal_quota", "security", "authentication", "privacy_level",
)
#: 3.2.5.1 command 0x01 on a queue manager: "QueueManagerQuota, JournalQuota, Security"
QM_UPDATE_ATTRIBUTES = ("queue_manager_quota", "journal_quota", "security")
#: the PROPIDs behind each list (3.1.1.3, 3.1.1.2.1): the ones a rule uses; the others it ignores
_V1_CREATE_PROPIDS = tuple(QUEUE_ATTRIBUTE_PROPID[name] for name in V1_CREATE_ATTRIBUTES)
_V1_QUEUE_UPDATE_PROPIDS = {name: QUEUE_ATTRIBUTE_PROPID[name] for name in V1_QUEUE_UPDATE_ATTRIBUTES}
_QM_UPDATE_PROPIDS = {name: QUEUE_MANAGER_ATTRIBUTE_PROPID[name] for name in QM_UPDATE_ATTRIBUTES}
#: 3.2.5.2 events 1 and 2: iAttributeList ("Journal" is Queue.Journaling, "Pathname" is PathName: E-243)
V2_QUEUE_ATTRIBUTES = (
    "type", "identifier", "base_priority", "journaling", "quota", "journal_quota", "create_time",
    "modify_time", "security", "pathname", "label", "authentication", "privacy_level", "transactional",
    "multicast_address", "directory_path",
)


# --- 1.9 and 3.2.1.2.1: the notification queue's names -----------------------------------------


@clause(DOC, "1.9", "Standards Assignments")
def notify_queue_private(qm_guid: Guid) -> str:
    """NOTIFY_QUEUE_PRIVATE: ``PRIVATE=<queue manager guid>\\3`` (1.9)."""
    if not isinstance(qm_guid, Guid):
        raise ModelError(f"a queue manager GUID is a Guid, not {qm_guid!r}")
    return f"PRIVATE={qm_guid}\\{NOTIFY_QUEUE_NUMBER}"


@clause(DOC, "3.2.1.2.1", "Change Notification Queue")
def notification_queue_path_name(computer: str) -> str:
    """``QueuePathName = (Computer "\\private$\\notify_queue$")``, ``Computer = 1*256(VCHAR)``."""
    if not isinstance(computer, str) or not 1 <= len(computer) <= 256 \
            or not all("\x21" <= c <= "\x7e" for c in computer) or "\\" in computer:
        raise ModelError(f"Computer is 1*256(VCHAR) without a backslash, not {computer!r}")
    return f"{computer}\\{NOTIFY_QUEUE_PATH}"


# --- 3.2.3 Initialization -----------------------------------------------------------------------


@clause(DOC, "3.2.3", "Initialization")
def server_initialization(qm: QueueManager, ctx: Context) -> int:
    """Open the Change Notification Queue for receiving; returns rStatus.

    "The implementation of this protocol SHOULD open the local private change notification queue.
    This queue MUST be opened by raising an Open Queue event ... iFormatName :=
    NOTIFY_QUEUE_PRIVATE ... iRequiredAccess := ReceiveAccess. iSharedMode := DenyNone." If the
    status is not MQ_OK "this protocol cannot work correctly": the queue stays closed and no
    message is ever dequeued (modelling E-241). Note <8>: in workgroup mode "the notification
    queue is not created, and the protocol is not initialized" (no Open Queue at all).
    """
    if qm.options.workgroup:
        qm.notification_queue = None
        return st.MQ_ERROR_QUEUE_NOT_FOUND
    status = st.MQ_OK if qm.notification_queue_exists else st.MQ_ERROR_QUEUE_NOT_FOUND
    # "If rStatus is MQ_OK, the value of rOpenQueueDescriptor is stored for reuse"
    qm.notification_queue = 1 if status == st.MQ_OK else None
    ctx.emit(OpenQueue(qm.machine_name, notify_queue_private(qm.identifier), "ReceiveAccess", "DenyNone",
                       status, qm.notification_queue))
    return status


# --- 3.2.5 Processing Events and Sequencing Rules -------------------------------------------------


@clause(DOC, "3.2.5", "Processing Events and Sequencing Rules")
def receive_change_notification(
    qm: QueueManager, ctx: Context, message: ReceivedMessage, directory: DirectoryReader
) -> None:
    """A Dequeue Message event returned ``message``: parse its body and dispatch on Version.

    "Let NotificationMessage be initialized to rMessage.Body parsed as a Change Notification
    Message ... If the value of field NotificationMessage.Version is 0x01 ... see section 3.2.5.1.
    Otherwise, if ... 0x02 ... see section 3.2.5.2." With the batching option (notes <3>/<13>)
    the message is held for :func:`batch_timer_expired` instead.
    """
    if qm.notification_queue is None:
        raise ModelError(f"{qm.machine_name}: nothing is dequeued before 3.2.3 opened the queue")
    if qm.options.batching:
        defer_change_notification(qm, ctx, message)
        return
    dispatch_change_notification(qm, ctx, message, directory)


def dispatch_change_notification(
    qm: QueueManager, ctx: Context, message: ReceivedMessage, directory: DirectoryReader
) -> None:
    """The body of 3.2.5 for one message: parse, check the version, hand to 3.2.5.1 or 3.2.5.2."""
    # clarification E-240: the body is the message plus the unused byte of 3.3.5.3; literal
    # parsing takes exactly that shape, clarified parsing tolerates any tail; a body that does
    # not parse (the text has no rule for it) is disregarded and the loop goes on
    try:
        notification = mqcn.decode_body(message.body, lenient=ctx.clarified)  # clarification E-240
    except DecodeError as exc:
        ctx.emit(Disregarded(qm.machine_name, "3.2.5", f"the body is not a Change Notification Message: {exc}"))
        return
    if int(notification.version) not in qm.options.versions:
        # note <4>: Windows NT and 2000 "process messages only from directory service"
        ctx.emit(Disregarded(qm.machine_name, "3.2.5",
                             f"version {int(notification.version):#04x} is not processed here (note <4>)"))
        return
    if notification.version is Version.DIRECTORY_SERVICE:
        process_change_notification_v1(qm, ctx, message, notification, directory)
    else:
        process_change_notification_v2(qm, ctx, notification, directory)


# --- 3.2.5.1 version 0x01 -----------------------------------------------------------------------


@clause(DOC, "3.2.5.1", "Processing a Change Notification Message version 0x01")
def process_change_notification_v1(
    qm: QueueManager, ctx: Context, message: ReceivedMessage, notification: ChangeNotificationMessage,
    directory: DirectoryReader,
) -> None:
    """Apply each Notification Update to the queue or queue manager it names.

    "To process the update, the server MUST perform the following steps for each Notification
    Update in the array": verify the sender and its authentication when the property values are
    used, derive the object type ("If the object type does not equal 1 ... or 2 ..., the server
    MUST disregard the Change Notification Message and perform no further processing"), then
    create, update or delete.
    """
    updates = notification.updates
    if ctx.clarified:
        # clarification E-231: "disregard the Change Notification Message" is decided for the
        # whole message before any update is applied, not after the earlier updates took effect
        for i, update in enumerate(updates):
            reason = _refusal_v1(qm, ctx, message, update)
            if reason is not None:
                ctx.emit(Disregarded(qm.machine_name, "3.2.5.1", f"Notification Update {i}: {reason}"))
                if i > 0:
                    ctx.clarify("E-231", f"updates 0..{i - 1} not applied: update {i} disregards the message")
                return
        for update in updates:
            _apply_update_v1(qm, ctx, message, update, directory)
        return
    for i, update in enumerate(updates):
        reason = _refusal_v1(qm, ctx, message, update)
        if reason is not None:  # literal: the updates before it stay applied
            ctx.emit(Disregarded(qm.machine_name, "3.2.5.1", f"Notification Update {i}: {reason}"))
            return
        _apply_update_v1(qm, ctx, message, update, directory)


def notification_object_type(propid: int) -> int:
    """The object type of a Notification Update from its PropertyId[0] (3.2.5.1).

    "If the value of PropertyId[0] is greater than 1,000, the object type MUST be set to
    (PropertyId[0] 1,000) / 100 ... less than or equal to 1,000 ... PropertyId[0] / 100."
    The first formula has lost its operator; it is a subtraction, as in MC-MQDSRP 3.1.1.4
    (erratum E-230), and the division is an integer one (1101 gives 1, PROPID_Q_SECURITY).
    """
    return (propid - 1000) // 100 if propid > 1000 else propid // 100


def _uses_properties(qm: QueueManager, ctx: Context, update: NotificationUpdate) -> bool:
    # clarification E-238: a delete reads PropertyValue[1], so it always "uses the property
    # identifiers and values" and always needs the sender checks
    return qm.options.use_properties or (ctx.clarified and update.command is Command.DELETE)


def _refusal_v1(qm: QueueManager, ctx: Context, message: ReceivedMessage, update: NotificationUpdate) -> str | None:
    """Why this update makes the server disregard the message (None: go on)."""
    if _uses_properties(qm, ctx, update):
        # "If rMessage.SenderIdentifierType does not equal SenderIdentifierType.QueueManagerIdentifier,
        # the server MUST disregard the Change Notification Message"
        if message.sender_identifier_type != SENDER_ID_TYPE_QM:
            return f"SenderIdentifierType is {message.sender_identifier_type}, not QueueManagerIdentifier"
        # "If rMessage.AuthenticationLevel has a value of 0x0 (AuthenticationLevel.None), ... disregard"
        if message.authentication_level == AuthenticationLevel.NONE:
            return "AuthenticationLevel is None: the message is not signed"
    servers = qm.options.directory_servers
    if ctx.clarified and servers and message.sender_identifier not in servers:
        # clarification E-239: any queue manager can sign; only a directory service sends 0x01
        ctx.clarify("E-239", f"sender {message.sender_identifier} is not a directory server")
        return f"SenderIdentifier {message.sender_identifier} is not a directory server (note <4>)"
    if update.command in (Command.CREATE, Command.CHANGE):
        if not update.properties:
            # clarification E-234: no PropertyId[0], so no object type
            return "NumberOfProperties is 0: there is no PropertyId[0] to derive the object type from"
        object_type = notification_object_type(update.properties[0].propid)
        if object_type not in (MQDS_QUEUE, MQDS_MACHINE):
            return f"object type {object_type} (from PropertyId[0] {update.properties[0].propid}) is not 1 or 2"
        return None
    # "If the Command field equals 0x02 (deleted), the object type MUST be set to the value of
    # PropertyValue[ 1 ]. If the object type does not equal MQDS_QUEUE, ... disregard"
    object_type = _delete_object_type(update)
    if object_type is None:
        # clarification E-234: there is no PropertyValue[1] to read
        return "a delete without a numeric PropertyValue[1] names no object type"
    if object_type != MQDS_QUEUE:
        return f"a delete of object type {object_type}, not MQDS_QUEUE"
    return None


def _delete_object_type(update: NotificationUpdate) -> int | None:
    if len(update.properties) < 2:
        return None
    value = update.properties[1].value
    return value if type(value) is int else None


def _values(update: NotificationUpdate) -> dict[int, object]:
    """PropertyValue[ IndexOf(PROPID) ]: the value of the first occurrence of each PROPID."""
    values: dict[int, object] = {}
    for p in update.properties:
        values.setdefault(p.propid, p.value)
    return values


def _ignore(qm: QueueManager, ctx: Context, update: NotificationUpdate, used: tuple[int, ...]) -> None:
    """Record the properties a rule does not use ("they MUST be ignored")."""
    ignored = tuple(dict.fromkeys(p.propid for p in update.properties if p.propid not in used))
    if ignored:
        ctx.emit(IgnoredProperties(qm.machine_name, "3.2.5.1", ignored))


def _apply_update_v1(
    qm: QueueManager, ctx: Context, message: ReceivedMessage, update: NotificationUpdate,
    directory: DirectoryReader,
) -> None:
    """The second half of 3.2.5.1 for one update whose checks passed."""
    if update.command is Command.DELETE:
        _delete_queue_v1(qm, ctx, update)
        return
    object_type = notification_object_type(update.properties[0].propid)
    if update.command is Command.CREATE and object_type == MQDS_QUEUE:
        _create_queue_v1(qm, ctx, update, directory)
    elif update.command is Command.CHANGE and object_type == MQDS_QUEUE:
        _update_queue_v1(qm, ctx, update, directory)
    elif update.command is Command.CHANGE and object_type == MQDS_MACHINE:
        _update_queue_manager_v1(qm, ctx, update, directory)
    else:
        # clarification E-234: a created machine object has no rule in 3.2.5.1
        ctx.emit(Disregarded(qm.machine_name, "3.2.5.1",
                             "Command 0x00 on a queue manager object: the text gives no action"))


def _read_v1(
    qm: QueueManager, ctx: Context, update: NotificationUpdate, directory: DirectoryReader, object_type: int,
    attributes: tuple[str, ...],
) -> dict[str, object] | None:
    """The directory's values instead of the update's (the server "can request information")."""
    return directory_read(qm, ctx, directory, update.guid_master_id, object_type, update.guid_identifier,
                          attributes, path_name=update.path_name)


def _create_queue_v1(qm: QueueManager, ctx: Context, update: NotificationUpdate, directory: DirectoryReader) -> None:
    """Command 0x00 on a queue: "Raise a Create Queue event ... iQueue := A new Queue ... Type :=
    PropertyValue[ IndexOf(PROPID_Q_TYPE) ] ... iSkipDirectory := True"."""
    if qm.options.use_properties:
        attributes = queue_attributes(_values(update), V1_CREATE_ATTRIBUTES)
        # PROPID_Q_ADS_PATH "MUST NOT be included. The receiving queue manager MUST ignore this
        # property if received" (3.3.5.2); the other properties have no attribute in the list
        _ignore(qm, ctx, update, _V1_CREATE_PROPIDS)
    else:
        attributes = _read_v1(qm, ctx, update, directory, MQDS_QUEUE, V1_CREATE_ATTRIBUTES)
        if attributes is None:
            return  # clarification E-242: nothing to create from
    create_queue(qm, ctx, attributes, skip_directory=True)



def _update_queue_v1(qm: QueueManager, ctx: Context, update: NotificationUpdate, directory: DirectoryReader) -> None:
    """Command 0x01 on a queue: "Update the corresponding Queue ADM element instance in
    QueueManager.QueueCollection with the following values: BasePriority := ... PrivacyLevel :=
    ... All other PROPIDs are not used, and they MUST be ignored."."""
    # "the queue ... referenced by the PathName or GuidIdentifier field" (3.2.5.1)
    queue = qm.find_queue(identifier=update.guid_identifier, pathname=update.path_name)
    if qm.options.use_properties:
        values = _values(update)
        new = {name: values.get(prop) for name, prop in _V1_QUEUE_UPDATE_PROPIDS.items()}
        present = {name for name, prop in _V1_QUEUE_UPDATE_PROPIDS.items() if prop in values}
        _ignore(qm, ctx, update, tuple(_V1_QUEUE_UPDATE_PROPIDS.values()))
    else:
        read = _read_v1(qm, ctx, update, directory, MQDS_QUEUE, V1_QUEUE_UPDATE_ATTRIBUTES)
        if read is None:
            return  # clarification E-242
        new = read
        present = {name for name, value in read.items() if value is not None}
    update_queue(qm, ctx, queue, new, present, identifier=update.guid_identifier)



def _update_queue_manager_v1(
    qm: QueueManager, ctx: Context, update: NotificationUpdate, directory: DirectoryReader
) -> None:
    """Command 0x01 on a queue manager: "Update the attributes of the QueueManager ...
    QueueManagerQuota := ... JournalQuota := ... Security := ... All other PROPIDs are not used,
    and they MUST be ignored." (PROPID_QM_ADDRESS, _CNS, _MACHINE_TYPE and _OS among them, 3.3.5.2)."""
    named = _other_machine(qm, update)
    if named is not None and ctx.clarified:
        # clarification E-236: the update names another machine; it is not this QueueManager's
        ctx.clarify("E-236", f"machine {named} is not {qm.identifier} ({qm.machine_name})")
        ctx.emit(Disregarded(qm.machine_name, "3.2.5.1", f"the update names machine {named}, not this one"))
        return
    if qm.options.use_properties:
        values = _values(update)
        new = {name: values.get(prop) for name, prop in _QM_UPDATE_PROPIDS.items()}
        present = {name for name, prop in _QM_UPDATE_PROPIDS.items() if prop in values}
        _ignore(qm, ctx, update, tuple(_QM_UPDATE_PROPIDS.values()))
    else:
        read = directory_read(qm, ctx, directory, update.guid_master_id, MQDS_MACHINE, update.guid_identifier,
                              QM_UPDATE_ATTRIBUTES, path_name=update.path_name)
        if read is None:
            return  # clarification E-242
        new, present = read, {name for name, value in read.items() if value is not None}
    update_queue_manager(qm, ctx, new, present)


def _other_machine(qm: QueueManager, update: NotificationUpdate) -> object | None:
    """The machine a queue-manager update names when it is not this one: by GuidIdentifier or, when the update
    names it by PathName (UseGuid 0x00), by name (machine names compare without regard to case), else None."""
    if update.guid_identifier is not None:
        return update.guid_identifier if update.guid_identifier != qm.identifier else None
    path_name = str(update.path_name)  # a NotificationUpdate names its object by exactly one of the two
    return path_name if path_name.casefold() != qm.machine_name.casefold() else None


def _delete_queue_v1(qm: QueueManager, ctx: Context, update: NotificationUpdate) -> None:
    """Command 0x02: "Raise a Delete Queue event ... iQueue := A reference to the Queue ADM element
    instance from QueueManager.QueueCollection whose identifier is equal to GuidIdentifier"."""
    queue = qm.find_queue(identifier=update.guid_identifier)
    if queue is None and update.guid_identifier is None and ctx.clarified:
        # clarification E-235: a delete that names its queue by PathName (UseGuid 0x00)
        queue = qm.find_queue(pathname=update.path_name)
        if queue is not None:
            ctx.clarify("E-235", f"delete by PathName {update.path_name!r}")
    delete_queue(qm, ctx, queue.identifier if queue is not None else update.guid_identifier, skip_directory=True)


# --- 3.2.5.2 version 0x02 -----------------------------------------------------------------------


@clause(DOC, "3.2.5.2", "Processing a Change Notification Message version 0x02")
def process_change_notification_v2(
    qm: QueueManager, ctx: Context, notification: ChangeNotificationMessage, directory: DirectoryReader
) -> None:
    """Update the queue or machine named by ObjectGuid from the directory service.

    "If the value contained in Event indicates creation or update, the queue manager MUST request
    information from the directory service specified within DomainController". Event 1: Directory
    Read then Create Queue; 2: Directory Read then update the queue; 3: Delete Queue; 4: Directory
    Read of the QueueManager then update it.
    """
    body = notification.body
    if body is None:  # the codec never builds one: a version 0x02 message has exactly one body
        raise ModelError("a version 0x02 message without a Notification Body")
    server, guid = body.domain_controller, body.object_guid
    if body.event is Event.QUEUE_CREATED:
        values = directory_read(qm, ctx, directory, server, MQDS_QUEUE, guid, V2_QUEUE_ATTRIBUTES)
        if values is not None:  # clarification E-242: nothing read, nothing to create
            create_queue(qm, ctx, values, skip_directory=True)
    elif body.event is Event.QUEUE_CHANGED:
        values = directory_read(qm, ctx, directory, server, MQDS_QUEUE, guid, V2_QUEUE_ATTRIBUTES)
        if values is not None:
            present = {name for name, value in values.items() if value is not None}
            update_queue(qm, ctx, qm.find_queue(identifier=guid), values, present, identifier=guid)
    elif body.event is Event.QUEUE_DELETED:
        if ctx.clarified:
            # clarification E-237: "queue managers do not have to be trusted" (2.2.5) only holds
            # if the deletion, too, is checked against the directory before it is applied
            still = directory_read(qm, ctx, directory, server, MQDS_QUEUE, guid, ("identifier",))
            if still is not None:
                ctx.clarify("E-237", f"queue {guid} is still in the directory of {server}")
                ctx.emit(Disregarded(qm.machine_name, "3.2.5.2",
                                     f"delete of queue {guid}, which {server} still holds"))
                return
        delete_queue(qm, ctx, guid, skip_directory=True)
    else:  # Event.MACHINE_CHANGED
        if guid != qm.identifier and ctx.clarified:  # clarification E-236
            ctx.clarify("E-236", f"machine {guid} is not {qm.identifier}")
            ctx.emit(Disregarded(qm.machine_name, "3.2.5.2", f"event 4 names machine {guid}, not this one"))
            return
        values = directory_read(qm, ctx, directory, server, MQDS_MACHINE, guid, QM_UPDATE_ATTRIBUTES)
        if values is not None:
            update_queue_manager(qm, ctx, values, {n for n, v in values.items() if v is not None})


# --- notes <3> and <13>: batching (an option, off by default) ------------------------------------


@clause(DOC, "5.1", "Security Considerations for Implementers")
def defer_change_notification(qm: QueueManager, ctx: Context, message: ReceivedMessage) -> None:
    """Hold a notification until the batch timer expires (note <13>, "process notifications only
    every few minutes").

    "If the last change notification message was processed more than 14 minutes ago, the queue
    manager sets a timer for 1 minute ... If the last change notification message was processed
    14 or fewer minutes ago, the timer is set for the remainder of the 15 minutes". A queue
    manager that never processed one waits 1 minute (clarification E-249). From the 100th
    message on, messages are not kept: "it ignores the messages".
    """
    if not qm.batch_timer_running:
        since = None if qm.last_processed is None else ctx.now - qm.last_processed
        if since is None or since > BATCH_WINDOW - BATCH_SHORT_DELAY:
            delay = BATCH_SHORT_DELAY
        else:
            delay = BATCH_WINDOW - since
        ctx.start_timer(BATCH_TIMER, delay)
        qm.batch_timer_running = True
    qm.batch_count += 1
    if qm.batch_count < BATCH_OVERFLOW:
        qm.batch.append(message)
    else:
        qm.batch.clear()


@clause(DOC, "1.6", "Applicability Statement")
def batch_timer_expired(qm: QueueManager, ctx: Context, directory: DirectoryReader) -> None:
    """The batch timer expired: process what arrived, or refresh every public queue (note <3>).

    "When the timer expires, the queue manager processes all received change notification
    messages. If 100 or more change notification messages arrive while the queue manager is
    waiting for the timer to expire, it ignores the messages and instead updates the state of all
    the public queue objects that it owns with the state of those objects that is stored in the
    directory service (as described in section 3.2.5.2 for a change queue event)".
    """
    messages, count = qm.batch, qm.batch_count
    qm.batch, qm.batch_count, qm.batch_timer_running = [], 0, False
    if count >= BATCH_OVERFLOW:
        refresh_public_queues(qm, ctx, directory)
    else:
        for message in messages:
            dispatch_change_notification(qm, ctx, message, directory)
    qm.last_processed = ctx.now


def refresh_public_queues(qm: QueueManager, ctx: Context, directory: DirectoryReader) -> None:
    """Note <3>: a change-queue event (3.2.5.2 event 2) for every public queue the manager owns.

    Clarification E-249: a queue the directory no longer holds is deleted, and a queue of this
    manager that the directory holds but QueueCollection lacks is created; the literal refresh
    only re-reads the queues already in the collection.
    """
    server = qm.directory_server
    if server is None:
        ctx.emit(Disregarded(qm.machine_name, "1.6", "no directory server to refresh the public queues from"))
        return
    for queue in [q for q in qm.queue_collection.values() if q.public]:
        values = directory_read(qm, ctx, directory, server, MQDS_QUEUE, queue.identifier, V2_QUEUE_ATTRIBUTES)
        if values is not None:
            update_queue(qm, ctx, queue, values, {n for n, v in values.items() if v is not None},
                         identifier=queue.identifier)
        elif ctx.clarified:  # clarification E-249
            ctx.clarify("E-249", f"queue {queue.identifier} is gone from {server}")
            delete_queue(qm, ctx, queue.identifier, skip_directory=True)
    if ctx.clarified:  # clarification E-249: queues of this manager the collection lacks are created
        for guid in directory.queues_owned_by(server, qm.identifier, qm.machine_name):
            if guid in qm.queue_collection:
                continue
            values = directory_read(qm, ctx, directory, server, MQDS_QUEUE, guid, V2_QUEUE_ATTRIBUTES)
            if values is not None:
                ctx.clarify("E-249", f"queue {guid} of {server} was missing here")
                create_queue(qm, ctx, values, skip_directory=True)
