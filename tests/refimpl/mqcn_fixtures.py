"""Shared builders for the MS-MQCN handler tests: queue managers, messages, updates, directories."""

from __future__ import annotations

from mqspec.model import mqcn
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
from mqspec.refimpl.effects import Context, Mode
from mqspec.refimpl.mqcn_server import server_initialization
from mqspec.refimpl.mqcn_state import (
    EMPTY_SECURITY_DESCRIPTOR,
    AuthenticationLevel,
    MappingDirectory,
    Queue,
    QueueManager,
    ReceivedMessage,
    ServerOptions,
)

P = {name: pdef.propid for name, pdef in PROPIDS.items()}
MODES = [Mode.CLARIFIED, Mode.LITERAL]

QM_ID = Guid.from_name("qm:C14")
OTHER_QM = Guid.from_name("qm:C22")
DS_ID = Guid.from_name("qm:PSC1")
Q1 = Guid.from_name("queue:C14\\q1")
Q2 = Guid.from_name("queue:C14\\q2")
SD = bytes.fromhex("0100048000000000000000000000000000000000")


def ctx(mode: Mode = Mode.CLARIFIED, now: float = 0.0, node: str = "C14") -> Context:
    return Context(node, mode, now)


def opened_qm(**options) -> QueueManager:
    """C14 with its notification queue opened (3.2.3 already ran)."""
    qm = QueueManager(machine_name="C14", identifier=QM_ID, options=ServerOptions(**options), directory_server="PSC1")
    server_initialization(qm, ctx())
    return qm


def queue(identifier: Guid = Q1, path: str = "C14\\q1", **attributes) -> Queue:
    base = {"base_priority": 0, "journaling": 0, "quota": 100, "journal_quota": 200, "security": SD,
            "pathname": path, "label": "q1", "authentication": 0, "privacy_level": 1, "transactional": 0,
            "scope": 1}
    base.update(attributes)
    return Queue(identifier=identifier, **base)


def with_queues(qm: QueueManager, *queues: Queue) -> QueueManager:
    for q in queues:
        qm.queue_collection[q.identifier] = q
    return qm


def create_properties(identifier: Guid = Q1, path: str = "C14\\q1", **extra) -> list[Property]:
    """The fifteen PROPIDs 3.3.5.2 requires for a created queue."""
    values = {
        "PROPID_Q_TYPE": Guid.from_name("type"), "PROPID_Q_INSTANCE": identifier, "PROPID_Q_BASEPRIORITY": 3,
        "PROPID_Q_JOURNAL": 1, "PROPID_Q_QUOTA": 1000, "PROPID_Q_JOURNAL_QUOTA": 2000, "PROPID_Q_CREATE_TIME": 11,
        "PROPID_Q_MODIFY_TIME": 12, "PROPID_Q_SCOPE": 1, "PROPID_Q_SECURITY": SD, "PROPID_Q_PATHNAME": path,
        "PROPID_Q_LABEL": "label", "PROPID_Q_AUTHENTICATE": 1, "PROPID_Q_PRIV_LEVEL": 2, "PROPID_Q_TRANSACTION": 1,
    }
    values.update(extra)
    return [Property(P[name], value) for name, value in values.items()]


def create_update(identifier: Guid = Q1, path: str = "C14\\q1", properties=None) -> NotificationUpdate:
    return NotificationUpdate(command=Command.CREATE, path_name=path, guid_master_id=DS_ID,
                              properties=create_properties(identifier, path) if properties is None else properties)


def change_update(identifier: Guid = Q1, **values) -> NotificationUpdate:
    props = [Property(P["PROPID_Q_QMID"], QM_ID)] + [Property(P[name], v) for name, v in values.items()]
    return NotificationUpdate(command=Command.CHANGE, guid_identifier=identifier, guid_master_id=DS_ID,
                              properties=props)


def machine_update(identifier: Guid = QM_ID, **values) -> NotificationUpdate:
    props = [Property(P["PROPID_QM_MACHINE_ID"], identifier), Property(P["PROPID_QM_FOREIGN"], 0)]
    props += [Property(P[name], v) for name, v in values.items()]
    return NotificationUpdate(command=Command.CHANGE, guid_identifier=identifier, guid_master_id=DS_ID,
                              properties=props)


def delete_update(identifier: Guid | None = Q1, object_type: int = 1, path: str | None = None,
                  properties=None) -> NotificationUpdate:
    if properties is None:
        properties = [Property(P["PROPID_D_SCOPE"], 1), Property(P["PROPID_D_OBJTYPE"], object_type)]
    if identifier is None:
        return NotificationUpdate(command=Command.DELETE, path_name=path, guid_master_id=DS_ID, properties=properties)
    return NotificationUpdate(command=Command.DELETE, guid_identifier=identifier, guid_master_id=DS_ID,
                              properties=properties)


def v1(*updates: NotificationUpdate) -> ChangeNotificationMessage:
    return ChangeNotificationMessage(version=Version.DIRECTORY_SERVICE, updates=updates)


def v2(event: Event, guid: Guid = Q1, dc: str = "PSC1") -> ChangeNotificationMessage:
    return ChangeNotificationMessage(version=Version.QUEUE_MANAGER,
                                     body=NotificationBody(event=event, object_guid=guid, domain_controller=dc))


def received(message: ChangeNotificationMessage | bytes, *, signed: bool = True, sender: Guid = DS_ID,
             sender_type: int | None = None) -> ReceivedMessage:
    """rMessage carrying ``message`` plus the unused byte, signed by ``sender`` unless told otherwise."""
    body = message if isinstance(message, bytes) else mqcn.encode_body(message)
    return ReceivedMessage(
        body=body, sender_identifier_type=(2 if signed else 0) if sender_type is None else sender_type,
        sender_identifier=sender if signed else Guid.NULL,
        authentication_level=AuthenticationLevel.SIG10 if signed else AuthenticationLevel.NONE,
    )


def directory_queue(identifier: Guid = Q1, path: str = "C14\\q1", **values) -> tuple[int, dict[int, object]]:
    """A queue object as a directory server holds it (PROPID -> value)."""
    props = {P["PROPID_Q_INSTANCE"]: identifier, P["PROPID_Q_PATHNAME"]: path, P["PROPID_Q_LABEL"]: "from-ds",
             P["PROPID_Q_QUOTA"]: 4321, P["PROPID_Q_BASEPRIORITY"]: 5, P["PROPID_Q_JOURNAL"]: 1,
             P["PROPID_Q_JOURNAL_QUOTA"]: 99, P["PROPID_Q_TYPE"]: Guid.NULL, P["PROPID_Q_CREATE_TIME"]: 1,
             P["PROPID_Q_MODIFY_TIME"]: 2, P["PROPID_Q_SECURITY"]: SD, P["PROPID_Q_AUTHENTICATE"]: 1,
             P["PROPID_Q_PRIV_LEVEL"]: 2, P["PROPID_Q_TRANSACTION"]: 1, P["PROPID_Q_SCOPE"]: 1,
             P["PROPID_Q_MULTICAST_ADDRESS"]: "234.1.1.1:8001", P["PROPID_Q_ADS_PATH"]: "LDAP://q1"}
    props.update({P[name]: v for name, v in values.items()})
    return int(ObjectType.MQDS_QUEUE), props


def directory_machine(identifier: Guid = QM_ID, **values) -> tuple[int, dict[int, object]]:
    props = {P["PROPID_QM_MACHINE_ID"]: identifier, P["PROPID_QM_PATHNAME"]: "C14", P["PROPID_QM_QUOTA"]: 7,
             P["PROPID_QM_JOURNAL_QUOTA"]: 8, P["PROPID_QM_SECURITY"]: SD}
    props.update({P[name]: v for name, v in values.items()})
    return int(ObjectType.MQDS_MACHINE), props


def directory(*objects: tuple[Guid, tuple[int, dict[int, object]]], server: str = "PSC1") -> MappingDirectory:
    return MappingDirectory({server: dict(objects)}, guids={DS_ID: server})


EMPTY_DIRECTORY = MappingDirectory({"PSC1": {}}, guids={DS_ID: "PSC1"})


def effects_of(c: Context, kind: type) -> list:
    return [e for e in c.effects if isinstance(e, kind)]


__all__ = [
    "DS_ID",
    "EMPTY_DIRECTORY",
    "EMPTY_SECURITY_DESCRIPTOR",
    "MODES",
    "OTHER_QM",
    "Q1",
    "Q2",
    "QM_ID",
    "SD",
    "P",
    "change_update",
    "create_properties",
    "create_update",
    "ctx",
    "delete_update",
    "directory",
    "directory_machine",
    "directory_queue",
    "effects_of",
    "machine_update",
    "opened_qm",
    "queue",
    "received",
    "v1",
    "v2",
    "with_queues",
]
