"""MS-MQCN 3.1.1 / 3.2.1 / 3.3.1: the data the change-notification handlers read and change.

MS-MQCN manipulates three [MS-MQDMPR] elements (3.1.1.1): the **QueueManager**, its **Queue**
objects (QueueManager.QueueCollection) and the **Message** a notification travels in. [MS-MQDMPR]
is not among the documents here, so only the attributes MS-MQCN names are modelled:

* :class:`Queue`: the seventeen attributes of the mapping table 3.1.1.3 (PROPID -> attribute), a
  frozen value changed with ``attrs.evolve`` by the handlers, plus ``public`` (MS-MQCN applies to
  public queues only, 1.6; the batching refresh of note <3> walks "the public queue objects");
* :class:`QueueManager`: the eight attributes of 3.1.1.2.1, the QueueCollection, and the server's
  local element, the Change Notification Queue (3.2.1.2: here its open descriptor), plus the
  state of the batching of notes <3>/<13> (an option, off by default);
* :class:`ReceivedMessage`: the rMessage attributes 3.2.5 / 3.2.5.1 read (Body,
  SenderIdentifierType, SenderIdentifier, AuthenticationLevel);
* :class:`DirectoryReader`: the Directory Read event of 3.2.5.2, as an interface the environment
  provides (:class:`MappingDirectory` here for tests, ``notify.WorldDirectory`` in a World).

The client's element (3.3.1, OutgoingQueue) is :class:`mqspec.refimpl.mqcn_client.NotificationClient`.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

import attrs
from mqspec.model.errors import ModelError
from mqspec.model.guid import Guid
from mqspec.model.propids import PROPIDS, ObjectType

from mqspec.clauses import clause

P = {name: pdef.propid for name, pdef in PROPIDS.items()}

#: MSMQ's INFINITE quota (a ULONG): the default of every quota attribute
INFINITE = 0xFFFFFFFF
#: an empty self-relative SECURITY_DESCRIPTOR (revision 1, SE_SELF_RELATIVE, no owner/group/ACLs)
EMPTY_SECURITY_DESCRIPTOR = bytes.fromhex("01000080") + bytes(16)
#: SenderIdentifierType.QueueManagerIdentifier ([MS-MQDMPR]; transport.SENDER_ID_TYPE_QM)
SENDER_ID_TYPE_QM = 2


class AuthenticationLevel(enum.IntEnum):
    """Message.AuthenticationLevel of [MS-MQDMPR] (modelling E-247): 0x0 is None, others are signed."""

    NONE = 0x0
    SIG10 = 0x1
    SIG20 = 0x2
    SIG30 = 0x3


# ---------------------------------------------------------------------------------------------
# 3.1.1.3 Queue Attributes Mapping and 3.1.1.2.1 Queue Manager Attributes Mapping

#: "Queue.Identifier: Maps to PROPID_Q_INSTANCE" ... (3.1.1.3), attribute name -> PROPID
QUEUE_ATTRIBUTE_PROPID: dict[str, int] = {
    "identifier": P["PROPID_Q_INSTANCE"],
    "type": P["PROPID_Q_TYPE"],
    "base_priority": P["PROPID_Q_BASEPRIORITY"],
    "journaling": P["PROPID_Q_JOURNAL"],
    "quota": P["PROPID_Q_QUOTA"],
    "journal_quota": P["PROPID_Q_JOURNAL_QUOTA"],
    "create_time": P["PROPID_Q_CREATE_TIME"],
    "modify_time": P["PROPID_Q_MODIFY_TIME"],
    "security": P["PROPID_Q_SECURITY"],
    "pathname": P["PROPID_Q_PATHNAME"],
    "label": P["PROPID_Q_LABEL"],
    "authentication": P["PROPID_Q_AUTHENTICATE"],
    "privacy_level": P["PROPID_Q_PRIV_LEVEL"],
    "transactional": P["PROPID_Q_TRANSACTION"],
    "multicast_address": P["PROPID_Q_MULTICAST_ADDRESS"],
    "directory_path": P["PROPID_Q_ADS_PATH"],
    "scope": P["PROPID_Q_SCOPE"],
}
QUEUE_PROPID_ATTRIBUTE = {v: k for k, v in QUEUE_ATTRIBUTE_PROPID.items()}

#: "QueueManager.Identifier: Defined in PROPID_QM_MACHINE_ID" ... (3.1.1.2.1)
QUEUE_MANAGER_ATTRIBUTE_PROPID: dict[str, int] = {
    "identifier": P["PROPID_QM_MACHINE_ID"],
    "foreign_system": P["PROPID_QM_FOREIGN"],
    "queue_manager_quota": P["PROPID_QM_QUOTA"],
    "journal_quota": P["PROPID_QM_JOURNAL_QUOTA"],
    "security": P["PROPID_QM_SECURITY"],
    "connected_network_identifier_list": P["PROPID_QM_CNS"],
    "queue_manager_version": P["PROPID_QM_MACHINE_TYPE"],
    "operating_system_type": P["PROPID_QM_OS"],
}
QUEUE_MANAGER_PROPID_ATTRIBUTE = {v: k for k, v in QUEUE_MANAGER_ATTRIBUTE_PROPID.items()}


@clause("MS-MQCN", "3.1.1.3", "Queue Attributes Mapping")
def queue_attributes(values: Mapping[int, object], attributes: Iterable[str]) -> dict[str, object]:
    """The named Queue attributes read from PROPID values ("Queue.Quota: Maps to PROPID_Q_QUOTA").

    An attribute whose PROPID has no value is None (the caller decides what an absent value
    means, clarification E-232).
    """
    return {name: values.get(QUEUE_ATTRIBUTE_PROPID[name]) for name in attributes}


@clause("MS-MQCN", "3.1.1.2.1", "Queue Manager Attributes Mapping")
def queue_manager_attributes(values: Mapping[int, object], attributes: Iterable[str]) -> dict[str, object]:
    """The named QueueManager attributes read from PROPID values ("QueueManagerQuota: PROPID_QM_QUOTA")."""
    return {name: values.get(QUEUE_MANAGER_ATTRIBUTE_PROPID[name]) for name in attributes}


# ---------------------------------------------------------------------------------------------
# The ADM elements


@attrs.frozen(kw_only=True)
class Queue:
    """A [MS-MQDMPR] 3.1.1.2 Queue with the attributes MS-MQCN 3.1.1.3 maps (None: not known)."""

    identifier: Guid = attrs.field(validator=attrs.validators.instance_of(Guid))
    type: Guid | None = None
    base_priority: int | None = None
    journaling: int | None = None
    quota: int | None = None
    journal_quota: int | None = None
    create_time: int | None = None
    modify_time: int | None = None
    security: bytes | None = None
    pathname: str | None = None
    label: str | None = None
    authentication: int | None = None
    privacy_level: int | None = None
    transactional: int | None = None
    multicast_address: str | None = None
    directory_path: str | None = None
    scope: int | None = None
    #: a public queue (published in the directory); MS-MQCN never creates private ones
    public: bool = True


def _versions(value: Iterable[int]) -> frozenset[int]:
    versions = frozenset(int(v) for v in value)
    if not versions <= {1, 2}:
        raise ModelError(f"a server accepts versions 1 and/or 2, not {sorted(versions)}")
    return versions


def _guids(value: Iterable[Guid]) -> frozenset[Guid]:
    guids = frozenset(value)
    if not all(isinstance(g, Guid) for g in guids):
        raise ModelError("directory_servers are queue manager GUIDs")
    return guids


@attrs.frozen(kw_only=True)
class ServerOptions:
    """How a queue manager runs the server side; every default is the text's plain reading."""

    #: 3.2.5.1 "The server can use the property identifiers and values for the updating process,
    #: or it can request information from the directory service"
    use_properties: bool = attrs.field(default=True, converter=bool)
    #: notes <3>/<13>: hold notifications for 1 minute (or the rest of 15) and process them together
    batching: bool = attrs.field(default=False, converter=bool)
    #: note <4>: Windows NT / 2000 process only version 0x01 (from the directory service)
    versions: frozenset[int] = attrs.field(default=(1, 2), converter=_versions)
    #: note <8>: in workgroup mode the notification queue is not created, nothing is initialized
    workgroup: bool = attrs.field(default=False, converter=bool)
    #: clarification E-239: the queue managers that are directory servers (empty: not known)
    directory_servers: frozenset[Guid] = attrs.field(default=(), converter=_guids)


@clause("MS-MQCN", "3.2.1", "Abstract Data Model")
@attrs.define(eq=False)
class QueueManager:
    """A [MS-MQDMPR] 3.1.1.1 QueueManager as the server side of MS-MQCN sees it.

    The attributes are those of 3.1.1.2.1; ``queue_collection`` is QueueManager.QueueCollection
    (by Queue.Identifier, in insertion order); ``notification_queue`` is the open descriptor of
    the Change Notification Queue (3.2.1.2.1), None until 3.2.3 opened it.
    """

    machine_name: str
    identifier: Guid
    foreign_system: int | None = 0
    queue_manager_quota: int | None = INFINITE
    journal_quota: int | None = INFINITE
    security: bytes | None = EMPTY_SECURITY_DESCRIPTOR
    connected_network_identifier_list: tuple[Guid, ...] | None = ()
    queue_manager_version: str | None = None
    operating_system_type: int | None = None
    queue_collection: dict[Guid, Queue] = attrs.field(factory=dict)
    options: ServerOptions = attrs.field(factory=ServerOptions)
    #: the directory server a batching refresh reads from (note <3> names none; modelling E-249)
    directory_server: str | None = None
    #: whether the private queue notify_queue$ exists (it does unless <8> workgroup mode)
    notification_queue_exists: bool = True
    notification_queue: int | None = None
    # notes <3>/<13> batching state
    batch: list[ReceivedMessage] = attrs.field(factory=list)
    batch_count: int = 0
    batch_timer_running: bool = False
    last_processed: float | None = None

    def find_queue(self, *, identifier: Guid | None = None, pathname: str | None = None) -> Queue | None:
        """The queue with ``identifier``, else the one whose path name matches (case-insensitively)."""
        if identifier is not None:
            return self.queue_collection.get(identifier)
        if pathname is not None:
            folded = pathname.casefold()
            for queue in self.queue_collection.values():
                if queue.pathname is not None and queue.pathname.casefold() == folded:
                    return queue
        return None


@attrs.frozen(kw_only=True)
class ReceivedMessage:
    """The rMessage a Dequeue Message event returns, with the attributes 3.2.5 and 3.2.5.1 read."""

    body: bytes = attrs.field(validator=attrs.validators.instance_of(bytes))
    sender_identifier_type: int = 0
    sender_identifier: Guid = Guid.NULL
    authentication_level: AuthenticationLevel = attrs.field(
        default=AuthenticationLevel.NONE, converter=AuthenticationLevel
    )
    source_machine: str = ""


# ---------------------------------------------------------------------------------------------
# The Directory Read event (3.2.5.2)


class DirectoryReader(Protocol):
    """What a Directory Read reaches: one object's PROPID values on a named directory server."""

    def read(
        self, server: str | Guid, object_type: ObjectType, identifier: Guid | None, path_name: str | None = None
    ) -> Mapping[int, object] | None:
        """The object's properties (PROPID -> value) on ``server``, or None if it or the server is unknown."""

    def queues_owned_by(self, server: str | Guid, owner: Guid, machine_name: str) -> Sequence[Guid]:
        """The identifiers of the public queues of queue manager ``owner`` that ``server`` holds."""


class MappingDirectory:
    """A :class:`DirectoryReader` over dicts: server name -> {object GUID: (type, {PROPID: value})}.

    ``guids`` optionally names servers by their queue manager GUID too (v1 GuidMasterId).
    """

    def __init__(
        self,
        servers: Mapping[str, Mapping[Guid, tuple[int, Mapping[int, object]]]],
        guids: Mapping[Guid, str] | None = None,
    ) -> None:
        self.servers = {name: dict(objects) for name, objects in servers.items()}
        self.guids = dict(guids or {})

    def _objects(self, server: str | Guid) -> dict[Guid, tuple[int, Mapping[int, object]]] | None:
        name = self.guids.get(server) if isinstance(server, Guid) else server
        return self.servers.get(name) if name is not None else None

    def read(
        self, server: str | Guid, object_type: ObjectType, identifier: Guid | None, path_name: str | None = None
    ) -> Mapping[int, object] | None:
        objects = self._objects(server)
        if objects is None:
            return None
        for guid, (kind, values) in objects.items():
            if kind != object_type:
                continue
            if identifier is not None and guid == identifier:
                return values
            path = values.get(P["PROPID_Q_PATHNAME"] if kind == ObjectType.MQDS_QUEUE else P["PROPID_QM_PATHNAME"])
            if identifier is None and path_name is not None and isinstance(path, str) \
                    and path.casefold() == path_name.casefold():
                return values
        return None

    def queues_owned_by(self, server: str | Guid, owner: Guid, machine_name: str) -> Sequence[Guid]:
        objects = self._objects(server) or {}
        return [guid for guid, (kind, values) in objects.items()
                if kind == ObjectType.MQDS_QUEUE and owned_by(values, owner, machine_name)]


def owned_by(values: Mapping[int, object], owner: Guid, machine_name: str) -> bool:
    """A queue belongs to ``owner``: its PROPID_Q_QMID, else the machine part of its path name."""
    qmid = values.get(P["PROPID_Q_QMID"])
    if isinstance(qmid, Guid):
        return qmid == owner
    path = values.get(P["PROPID_Q_PATHNAME"])
    return isinstance(path, str) and path.split("\\", 1)[0].casefold() == machine_name.casefold()

