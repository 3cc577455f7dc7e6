"""MC-MQDSRP 3.1.1: the abstract data model, as attrs classes.

Each attribute is marked persisted or not (``metadata={"persisted": False}``) exactly as 3.1.1
says, so :func:`lose_volatile_state` models a crash: it resets what the text calls "not
persisted" to its initial value and keeps the rest; initialization then runs again.

* :class:`DirectoryPartition` (3.1.1.2.3), :class:`DirectoryNeighbor` (3.1.1.2.4),
  :class:`DeletedObject` (3.1.1.2.2);
* :class:`QueueManager` holds the four collections of 3.1.1.3 (DirectoryPartitionCollection,
  PSCNeighborCollection, BSCNeighborCollection, DeletedObjectCollection), the attributes
  MyEnterprisePartition / MySitePartition / MyPSCName that 3.1.1.1 adds ("not persisted ... MUST
  be computed during protocol initialization"), the local directory (persisted by [MS-MQDS]) and
  the continuations of Process Change Request events (3.3.7.1) that are waiting for a reply.
"""

from __future__ import annotations

import enum
from typing import Any

import attrs

from mqspec import memos
from mqspec.model.guid import Guid
from mqspec.model.mqdsrp import ChangeRequestMessage, DirectoryChange
from mqspec.model.seqnum import MAX_SEQ_NUMBER, MIN_SEQ_NUMBER, SequenceNumber

#: PEC_PARTITION_ID (1.9): GUID_NULL identifies the enterprise partition
PEC_PARTITION_ID = Guid.NULL
#: SCOPE_ENTERPRISE / SCOPE_SITE (1.9)
SCOPE_ENTERPRISE = 1
SCOPE_SITE = 0
#: PROPID_QM_SERVICE value of a BSC (3.1.7.2.5 "SERVICE_BSC (0x2)")
SERVICE_BSC = 0x2


def volatile(**kwargs: Any) -> Any:
    """An attribute 3.1.1 says is not persisted: a crash resets it to its default."""
    return attrs.field(metadata={"persisted": False}, **kwargs)


class Role(str, enum.Enum):
    """The directory server roles of 1.3.1.1; "when a statement is made about a PSC, it also applies to the PEC"."""

    PEC = "PEC"
    PSC = "PSC"
    BSC = "BSC"


_PEC, _BSC = Role.PEC, Role.BSC


class PurgeState(enum.IntEnum):
    """DirectoryPartition.PurgeState (3.1.1.2.3)."""

    NORMAL = 0
    STARTSYNC0 = 1
    SYNC0 = 2
    COMPLETESYNC0 = 3


@attrs.define(eq=False)
class DirectoryPartition:
    """3.1.1.2.3: the replication state of one directory partition at one server."""

    partition_id: Guid
    authority_name: str
    last_seq_number: SequenceNumber = MIN_SEQ_NUMBER
    purged_seq_number: SequenceNumber = MIN_SEQ_NUMBER
    allowed_purge_seq_number: SequenceNumber = MIN_SEQ_NUMBER
    purge_state: PurgeState = PurgeState.NORMAL
    # "The following attributes are not persisted and are updated by the directory server during runtime"
    previous_purged_seq_number: SequenceNumber = volatile(default=MIN_SEQ_NUMBER)
    change_missing_window: SequenceNumber = volatile(default=MAX_SEQ_NUMBER)
    pending_changes: list[DirectoryChange] = volatile(factory=list)


#: how many times a DirectoryPartition's PartitionID was set (built, copied or assigned): the
#: index of QueueManager.find_partition holds only while this stays the same
_partition_ids_set = [0]
_partition_id_slot = DirectoryPartition.__dict__["partition_id"]


def _set_partition_id(partition: DirectoryPartition, value: Guid) -> None:
    _partition_ids_set[0] += 1
    _partition_id_slot.__set__(partition, value)


# PartitionID is read as the slot is (a C getter); every way of setting it (attrs' __init__ and
# copies go through object.__setattr__, which finds this property) counts the change. An attrs
# on_setattr hook would do the same through a __setattr__ that every attribute pays for.
DirectoryPartition.partition_id = property(  # type: ignore[method-assign,assignment]
    _partition_id_slot.__get__, _set_partition_id, None, "PartitionID (3.1.1.2.3)",
)


@attrs.define(eq=False)
class DirectoryNeighbor:
    """3.1.1.2.4: a PSC or BSC neighbor and what it has acknowledged."""

    partition_id: Guid
    machine_name: str
    acked_seq_number: SequenceNumber = MIN_SEQ_NUMBER
    acked_pec_seq_number: SequenceNumber = MIN_SEQ_NUMBER
    last_acked_time: float = 0.0
    # "The following attribute is not persisted"
    available_changes: list[DirectoryChange] = volatile(factory=list)


@attrs.define(eq=False)
class DeletedObject:
    """3.1.1.2.2: the tombstone of a deletion, kept until Purge Deleted Objects removes it."""

    identifier: Guid | None
    partition_id: Guid
    seq_number: SequenceNumber
    object_type: int
    scope: int


@attrs.define(eq=False)
class PendingChangeRequest:
    """A Process Change Request event (3.3.7.1) waiting for its reply: the wait as a continuation.

    ``origin`` is ``"client"`` when a directory client's request (Change Remote Object, 3.1.7.1.1)
    started it, or ``"forward"`` when Receive Change Request (3.2.7.2) forwarded a request and must
    send the Change Reply when the wait ends.
    """

    request_identifier: int
    message: ChangeRequestMessage
    origin: str
    client_request: int | None = None


@attrs.define(eq=False)
class QueueManager:
    """One directory server (PEC, PSC or BSC) and all of its MC-MQDSRP state."""

    machine_name: str
    identifier: Guid
    site_identifier: Guid
    role: Role
    #: the PEC machine name "typically provided by the administrator" (3.1.3.1)
    pec_name: str
    #: how a BSC learns its PSC's name before it has the site partition "is implementation-specific" (3.1.3.1)
    configured_psc_name: str | None = None
    # 3.1.1.3 Protocol State Data Elements: persisted
    partitions: list[DirectoryPartition] = attrs.field(factory=list)
    psc_neighbors: list[DirectoryNeighbor] = attrs.field(factory=list)
    bsc_neighbors: list[DirectoryNeighbor] = attrs.field(factory=list)
    deleted_objects: list[DeletedObject] = attrs.field(factory=list)
    #: the local [MS-MQDS] directory (a mqspec.refimpl.directory.DirectoryStore), persisted by MS-MQDS
    directory: Any = None
    # 3.1.1.1: "These attributes are not persisted in the directory and MUST be computed during protocol initialization"
    my_enterprise_partition: DirectoryPartition | None = volatile(default=None)
    my_site_partition: DirectoryPartition | None = volatile(default=None)
    my_psc_name: str | None = volatile(default=None)
    # runtime state of the event machinery (not protocol state the text persists)
    replication_queue_open: bool = volatile(default=False)
    pending_requests: dict[tuple[str, int], PendingChangeRequest] = volatile(factory=dict)
    #: modelling E-163: kept across a crash, so a late reply to a request from before the crash
    #: cannot complete a new request that reused its RequestIdentifier
    next_request_identifier: int = 1
    #: the simulator's numbering of directory client requests (not protocol state): kept across a crash
    next_client_request: int = 1
    last_seq_number_header_time: float | None = volatile(default=None)
    #: clarification E-137: when each neighbor last got a SeqNumberHeader, per (machine, scope)
    last_seq_number_header_sent: dict[tuple[str, str], float] = volatile(factory=dict)

    # the roles are module constants here: reading a member off an Enum class goes through
    # EnumType.__getattr__'s slow path in Python 3.11, and the handlers ask these on every change

    @property
    def is_pec(self) -> bool:
        return self.role is _PEC

    @property
    def is_psc(self) -> bool:
        """1.3.1.1: a statement about a PSC also applies to the PEC."""
        return self.role is not _BSC

    @property
    def is_bsc(self) -> bool:
        return self.role is _BSC

    def find_partition(self, partition_id: Guid) -> DirectoryPartition | None:
        """The first partition whose PartitionID equals ``partition_id`` (None when there is none).

        Every change a replica applies looks its partition up, so a GUID is looked up in an index
        of the partitions list (:func:`_partition_index`) instead of scanning it.
        """
        if partition_id.__class__ is Guid:
            return _partition_index(self.partitions).get(partition_id.bytes_le)
        for partition in self.partitions:
            if partition.partition_id == partition_id:
                return partition
        return None

    def is_authority_of(self, partition: DirectoryPartition) -> bool:
        """The queue manager owns ``partition``: the PEC's enterprise partition or its own site partition."""
        return (self.is_pec and partition is self.my_enterprise_partition) or (
            self.is_psc and partition is self.my_site_partition
        )


#: _partition_index's entries: id(partitions list) -> (the list, a copy of its items when indexed,
#: _partition_ids_set then, the index); an entry holds its list, so no other list takes that id
#: while it lives. Emptied when it holds PARTITION_INDEX_LIMIT entries.
_PARTITION_INDEXES: dict[int, tuple[list[DirectoryPartition], list[DirectoryPartition], int,
                                    dict[bytes, DirectoryPartition]]] = {}
PARTITION_INDEX_LIMIT = 1 << 12
memos.register(f"{__name__}._PARTITION_INDEXES", "a partitions list -> find_partition's index of it",
               _PARTITION_INDEXES)


def _partition_index(partitions: list[DirectoryPartition]) -> dict[bytes, DirectoryPartition]:
    """The first partition of each GUID PartitionID in ``partitions``, by the GUID's bytes.

    The lists are changed in many places (handlers append and remove, drivers and tests assign
    them), so the index is not kept up to date by them: it is checked instead. It is the one
    built for this list object when the list still holds the same partitions in the same order
    (a comparison of object identities) and no PartitionID was set since; otherwise it is built
    again, first partition first, as the scan it replaces would find them.
    """
    entry = _PARTITION_INDEXES.get(id(partitions))
    if (entry is not None and entry[0] is partitions and entry[2] == _partition_ids_set[0]
            and entry[1] == partitions):
        return entry[3]
    index: dict[bytes, DirectoryPartition] = {}
    for partition in partitions:
        pid = partition.partition_id
        if pid.__class__ is Guid and pid.bytes_le not in index:
            index[pid.bytes_le] = partition
    if partitions.__class__ is not list or any(p.__class__ is not DirectoryPartition for p in partitions):
        return index  # the check above compares DirectoryPartitions (compared by identity) in a list
    if len(_PARTITION_INDEXES) >= PARTITION_INDEX_LIMIT:
        _PARTITION_INDEXES.clear()
    _PARTITION_INDEXES[id(partitions)] = (partitions, list(partitions), _partition_ids_set[0], index)
    return index


def lose_volatile_state(obj: Any) -> None:
    """Reset every attribute 3.1.1 marks as not persisted to its initial value (a crash)."""
    for field in attrs.fields(type(obj)):
        if field.metadata.get("persisted", True):
            continue
        default = field.default
        value = default.factory() if isinstance(default, attrs.Factory) else default  # type: ignore[union-attr]
        setattr(obj, field.name, value)
    if isinstance(obj, QueueManager):
        for child in (*obj.partitions, *obj.psc_neighbors, *obj.bsc_neighbors):
            lose_volatile_state(child)
