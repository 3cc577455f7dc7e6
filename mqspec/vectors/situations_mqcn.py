"""Handler situations for MS-MQCN: the change-notification server (3.2) and client (3.3), one branch each.

Each builder returns the queue manager (its notification queue opened by 3.2.3 unless said
otherwise) and the event's arguments; its docstring names the branch.
"""

from __future__ import annotations

from mqspec.model import mqcn
from mqspec.model.guid import Guid
from mqspec.model.mqcn import ChangeNotificationMessage, Command, Event, NotificationBody, NotificationUpdate, Version
from mqspec.model.propids import PROPIDS, ObjectType
from mqspec.model.propvalue import Property
from mqspec.refimpl.effects import Context
from mqspec.refimpl.mqcn_client import DirectoryObject, NotificationClient, Operation
from mqspec.refimpl.mqcn_server import BATCH_OVERFLOW, server_initialization
from mqspec.refimpl.mqcn_state import AuthenticationLevel, MappingDirectory, Queue, QueueManager, ReceivedMessage, ServerOptions

from .handlers import mqcn_situation as situation

P = {name: pdef.propid for name, pdef in PROPIDS.items()}
QM_ID, DS_ID = Guid.from_name("qm:C14"), Guid.from_name("qm:PSC1")
Q1 = Guid.from_name("queue:C14\\q1")
SD = bytes.fromhex("0100048000000000000000000000000000000000")


def _qm(*, opened: bool = True, queues: tuple[Queue, ...] = (), **options) -> QueueManager:
    qm = QueueManager(machine_name="C14", identifier=QM_ID, options=ServerOptions(**options), directory_server="PSC1")
    if opened:
        server_initialization(qm, Context("C14"))
    for q in queues:
        qm.queue_collection[q.identifier] = q
    return qm


def _queue(label: str = "q1") -> Queue:
    return Queue(identifier=Q1, base_priority=0, journaling=0, quota=100, journal_quota=200, security=SD,
                 pathname="C14\\q1", label=label, authentication=0, privacy_level=1, transactional=0, scope=1)


def _create() -> NotificationUpdate:
    values = {"PROPID_Q_TYPE": Guid.from_name("type"), "PROPID_Q_INSTANCE": Q1, "PROPID_Q_BASEPRIORITY": 3,
              "PROPID_Q_JOURNAL": 1, "PROPID_Q_QUOTA": 1000, "PROPID_Q_JOURNAL_QUOTA": 2000,
              "PROPID_Q_CREATE_TIME": 11, "PROPID_Q_MODIFY_TIME": 12, "PROPID_Q_SCOPE": 1, "PROPID_Q_SECURITY": SD,
              "PROPID_Q_PATHNAME": "C14\\q1", "PROPID_Q_LABEL": "label", "PROPID_Q_AUTHENTICATE": 1,
              "PROPID_Q_PRIV_LEVEL": 2, "PROPID_Q_TRANSACTION": 1}
    return NotificationUpdate(command=Command.CREATE, path_name="C14\\q1", guid_master_id=DS_ID,
                              properties=[Property(P[n], v) for n, v in values.items()])


def _change(**values) -> NotificationUpdate:
    props = [Property(P["PROPID_Q_QMID"], QM_ID)] + [Property(P[n], v) for n, v in values.items()]
    return NotificationUpdate(command=Command.CHANGE, guid_identifier=Q1, guid_master_id=DS_ID, properties=props)


def _delete() -> NotificationUpdate:
    props = [Property(P["PROPID_D_SCOPE"], 1), Property(P["PROPID_D_OBJTYPE"], 1)]
    return NotificationUpdate(command=Command.DELETE, guid_identifier=Q1, guid_master_id=DS_ID, properties=props)


def _v1(*updates: NotificationUpdate) -> ChangeNotificationMessage:
    return ChangeNotificationMessage(version=Version.DIRECTORY_SERVICE, updates=updates)


def _v2(event: Event) -> ChangeNotificationMessage:
    return ChangeNotificationMessage(version=Version.QUEUE_MANAGER,
                                     body=NotificationBody(event=event, object_guid=Q1, domain_controller="PSC1"))


def _received(message: ChangeNotificationMessage | bytes, *, signed: bool = True) -> ReceivedMessage:
    body = message if isinstance(message, bytes) else mqcn.encode_body(message)
    return ReceivedMessage(body=body, sender_identifier_type=2 if signed else 0,
                           sender_identifier=DS_ID if signed else Guid.NULL,
                           authentication_level=AuthenticationLevel.SIG20 if signed else AuthenticationLevel.NONE)


def _directory(label: str = "from-the-directory") -> MappingDirectory:
    values = {P["PROPID_Q_INSTANCE"]: Q1, P["PROPID_Q_PATHNAME"]: "C14\\q1", P["PROPID_Q_LABEL"]: label,
              P["PROPID_Q_QMID"]: QM_ID}
    return MappingDirectory({"PSC1": {Q1: (int(ObjectType.MQDS_QUEUE), values)}}, {DS_ID: "PSC1"})


EMPTY = MappingDirectory({})


@situation("server_initialization", "opens-the-notification-queue")
def _init():
    """Initialization opens the local notification queue for receiving (3.2.3)."""
    return _qm(opened=False), {}


# what "this protocol cannot work correctly" does in workgroup mode is mqspec's modelling (E-241)
@situation("server_initialization", "workgroup-mode", rests_on=("E-241",))
def _init_workgroup():
    """In workgroup mode the notification queue is not created and nothing is initialized (note <8>)."""
    return _qm(opened=False, workgroup=True), {}


@situation("receive_change_notification", "v1-create-queue")
def _v1_create():
    """A signed version 0x01 create from a directory server adds the queue with the listed attributes."""
    return _qm(), {"message": _received(_v1(_create())), "directory": EMPTY}


@situation("receive_change_notification", "v1-change-queue")
def _v1_change():
    """A signed version 0x01 change updates the queue's attributes from the property values."""
    return _qm(queues=(_queue(),)), {"message": _received(_v1(_change(PROPID_Q_LABEL="new"))), "directory": EMPTY}


@situation("receive_change_notification", "v1-delete-queue")
def _v1_delete():
    """A signed version 0x01 delete removes the queue."""
    return _qm(queues=(_queue(),)), {"message": _received(_v1(_delete())), "directory": EMPTY}


@situation("receive_change_notification", "v1-unsigned")
def _v1_unsigned():
    """An unauthenticated version 0x01 notification is disregarded when its property values would be used."""
    return _qm(queues=(_queue(),)), {"message": _received(_v1(_change(PROPID_Q_LABEL="new")), signed=False),
                                     "directory": EMPTY}


@situation("receive_change_notification", "not-a-notification")
def _garbage():
    """A body that is no Change Notification Message is disregarded."""
    return _qm(), {"message": _received(b"\x07\x00\x00"), "directory": EMPTY}


@situation("receive_change_notification", "v2-queue-changed")
def _v2_changed():
    """A version 0x02 QUEUE_CHANGED reads the queue from the named directory server and updates it."""
    return _qm(queues=(_queue(),)), {"message": _received(_v2(Event.QUEUE_CHANGED)), "directory": _directory()}


@situation("receive_change_notification", "v2-queue-deleted")
def _v2_deleted():
    """A version 0x02 QUEUE_DELETED removes the queue."""
    return _qm(queues=(_queue(),)), {"message": _received(_v2(Event.QUEUE_DELETED)), "directory": EMPTY}


@situation("receive_change_notification", "v2-ignored-by-nt")
def _v2_nt():
    """A Windows NT or 2000 server processes only version 0x01 (note <4>): a version 0x02 message is disregarded."""
    return _qm(versions=(1,)), {"message": _received(_v2(Event.QUEUE_CREATED)), "directory": _directory()}


@situation("receive_change_notification", "batching-defers")
def _batching():
    """With batching (notes <3>/<13>) the message is held for the batch timer."""
    return _qm(batching=True), {"message": _received(_v1(_create())), "directory": EMPTY}


@situation("process_change_notification_v1", "create-then-change")
def _v1_two():
    """Two Notification Updates are applied in order: the queue is created, then changed."""
    notification = _v1(_create(), _change(PROPID_Q_LABEL="second"))
    return _qm(), {"message": _received(notification), "notification": notification, "directory": EMPTY}


@situation("process_change_notification_v2", "queue-created")
def _v2_created():
    """A QUEUE_CREATED reads the new queue from the directory server and creates it."""
    return _qm(), {"notification": _v2(Event.QUEUE_CREATED), "directory": _directory()}


@situation("process_change_notification_v2", "queue-not-in-the-directory")
def _v2_missing():
    """A QUEUE_CREATED of a queue the directory server does not hold changes nothing."""
    return _qm(), {"notification": _v2(Event.QUEUE_CREATED), "directory": EMPTY}


@situation("defer_change_notification", "starts-the-batch", now=5.0)
def _defer():
    """The first held message starts the batch timer."""
    return _qm(batching=True), {"message": _received(_v1(_create()))}


@situation("batch_timer_expired", "processes-the-held-message", now=60.0)
def _batch_expired():
    """The batch timer processes the one message it held (fewer than 100 arrived, note <3>) and empties the batch."""
    qm = _qm(batching=True, queues=(_queue(),))
    qm.batch = [_received(_v1(_change(PROPID_Q_LABEL="held")))]
    qm.batch_count, qm.batch_timer_running = 1, True
    return qm, {"directory": _directory("refreshed")}


@situation("batch_timer_expired", "refreshes-after-100-messages", now=60.0)
def _batch_overflow():
    """After 100 or more held messages the batch timer ignores them and refreshes the public queues from the
    directory server (note <3>), then empties the batch."""
    qm = _qm(batching=True, queues=(_queue(),))
    qm.batch = [_received(_v1(_change(PROPID_Q_LABEL=f"held{i}"))) for i in range(BATCH_OVERFLOW)]
    qm.batch_count, qm.batch_timer_running = BATCH_OVERFLOW, True
    return qm, {"directory": _directory("refreshed")}


# --- the client (3.3) ----------------------------------------------------------------------------


def _client(version: int = 1) -> NotificationClient:
    c = NotificationClient("PSC1", DS_ID, version=version, directory_service_name="PSC1", directory_service_guid=DS_ID)
    c.outgoing[QM_ID] = 1
    c.next_descriptor = 2
    return c


def _object(**values) -> DirectoryObject:
    props = [Property(P["PROPID_Q_INSTANCE"], Q1), Property(P["PROPID_Q_PATHNAME"], "C14\\q1")]
    props += [Property(P[n], v) for n, v in values.items()]
    return DirectoryObject(object_type=ObjectType.MQDS_QUEUE, identifier=Q1, owner=QM_ID, path_name="C14\\q1",
                           properties=props)


@situation("client_initialization", "opens-an-outgoing-queue")
def _client_init():
    """Opening the OutgoingQueue to a destination's notification queue (one per destination, E-244)."""
    return NotificationClient("PSC1", DS_ID), {"destination": QM_ID}


@situation("send_change_notification", "v1-queue-update")
def _send_v1_update():
    """A directory service's queue update goes out as a version 0x01 Notification Update to the owner."""
    return _client(), {"operation": Operation.QUEUE_UPDATE, "directory_object": _object(PROPID_Q_LABEL="new")}


@situation("send_change_notification", "v2-queue-deletion")
def _send_v2_delete():
    """A queue manager's queue deletion goes out as a version 0x02 Notification Body."""
    return _client(version=2), {"operation": Operation.QUEUE_DELETION, "directory_object": _object()}


@situation("prepare_change_notification_v1", "create-and-update")
def _prepare_v1():
    """Two changes make one version 0x01 message with two Notification Updates, in order."""
    return _client(), {"changes": [(Operation.QUEUE_CREATION, _object(PROPID_Q_LABEL="q1")),
                                   (Operation.QUEUE_UPDATE, _object(PROPID_Q_LABEL="q1b"))]}


@situation("send_change_notification_message", "to-a-new-destination")
def _send_message_new():
    """A message to a destination with no OutgoingQueue yet opens one, then enqueues the message."""
    return _client(), {"message": _v2(Event.QUEUE_CHANGED), "destination": Guid.from_name("qm:C22")}
