"""The server layer of the per-server model: one directory server's whole MC-MQDSRP state and its messages.

The core of the model (:mod:`mqspec.proofs.z3_model`) is one partition's replication state, the
state the obligations prove the invariants of. This layer is the rest of a server that 3.1.1 gives
it, on concrete values: the DirectoryPartitionCollection with each partition's AuthorityName, the
PSC and BSC neighbors with their names, acknowledgements and AvailableChangeCollections, the
DeletedObjectCollection with each tombstone's identity, MyEnterprisePartition, MySitePartition and
MyPSCName, the Process Change Request waits, the SeqNumberHeader times; and, as their outputs, the
messages, timers, directory events and request completions the server's events emit.

Every partition of a :class:`Server` *is* a core :class:`~mqspec.proofs.z3_model.NodeState`
(:class:`Partition` adds its PartitionID and AuthorityName): the events below run the core's
handlers on it for everything sequence numbers, pending changes, purging and sync0 decide, with an
:class:`~mqspec.proofs.z3_model.Environment` (:class:`ServerEnvironment`) that performs, at the
point of the pseudo-code where each happens, what the core leaves to the server: the directory
event a change raises and what its object means (sites, machines, the enterprise), the neighbors'
AvailableChangeCollections, the messages' destinations and contents. So the refinement check
(:mod:`mqspec.proofs.refinement`) compares the reference with the very transition functions the
obligations are about, extended here to the fields they abstract away.

The [MS-MQDS] directory is the environment of MC-MQDSRP, not part of it: the model raises its
events (create, update, delete, read, reset, lookup) on :class:`Directory`, a copy of the server's
directory run by the same store the reference uses (:class:`mqspec.refimpl.directory.DirectoryStore`,
modelling E-190 .. E-198), and compares the events raised and the directory they leave.

This layer runs on concrete states only (Python values, the wire model's messages); its
symbolic counterpart is the core it drives. Events: :mod:`mqspec.proofs.server_events`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from mqspec.model.guid import Guid
from mqspec.model.mqdsrp import Command, DirectoryChange
from mqspec.model.propids import PROPIDS, ObjectType
from mqspec.model.propvalue import Property
from mqspec.model.seqnum import SequenceNumber
# the HRESULTs of the handlers and of [MS-MQDS]: a table of constants (E-199)
from mqspec.refimpl.status import (
    MQ_ERROR,
    MQ_OK,
    MQDS_NO_RSP_FROM_OWNER,
    MQDS_OBJECT_NOT_FOUND,
    MQDS_OWNER_NOT_REACHED,
    MQDS_UNKNOWN_SOURCE,
)

from . import z3_model as m

P = {name: pdef.propid for name, pdef in PROPIDS.items()}
PEC_PARTITION_ID = Guid.NULL
SERVICE_BSC = 0x2
SCOPE_ENTERPRISE, SCOPE_SITE = 1, 0
MAX = m.MAX_SEQ
#: "If the length of PendingChangeCollection is less than 100" (3.1.7.2.2)
PENDING_LIMIT = 100
#: the product defaults of the timers (notes <2> .. <12>)
INTERSITE, INTRASITE = "Intersite", "Intrasite"
PROPAGATION_INTERVAL = {INTERSITE: 10.0, INTRASITE: 2.0}
BSC_ACK_FIRST, BSC_ACK_NEXT = 5.0, 12 * 3600.0
WAIT_AUTHORITY, WAIT_FORWARDED = 10.0, 20.0
HEADER_INTERVAL = 20 * 60.0


# --- the state ------------------------------------------------------------------------------------


@attrs.define(eq=False)
class Partition(m.NodeState):
    """A DirectoryPartition (3.1.1.2.3): the core's replication state plus PartitionID and AuthorityName.

    ``pending_changes`` holds core Changes whose payload is the DirectoryChange queued.
    """

    partition_id: Guid = Guid.NULL
    authority_name: str = ""

    # a partition is an object of the collection: compared by identity (as the reference's are), not
    # by the core's fields, which two new partitions share
    __eq__ = object.__eq__
    __hash__ = object.__hash__


def new_partition(partition_id: Guid, authority: str) -> Partition:
    """"Create a new DirectoryPartition object": MIN everywhere, the window MAX, NORMAL (3.1.1.2.3, 3.1.3.1)."""
    return Partition(
        is_psc=False, is_authority=False, is_enterprise=partition_id == PEC_PARTITION_ID,
        last_seq_number=0, purged_seq_number=0, allowed_purge_seq_number=0, previous_purged_seq_number=0,
        change_missing_window=MAX, purge_state=m.NORMAL, pending_changes=[], psc_neighbors=[],
        deleted_objects=[], objects=[], ghost_authority_last_seq=0, ghost_authority_purged_seq=0,
        ghost_max_assigned_seq=0, ghost_deletions=[], pending_capacity=PENDING_LIMIT,
        partition_id=partition_id, authority_name=authority,
    )


@attrs.define(eq=False)
class Neighbor:
    """A DirectoryNeighbor (3.1.1.2.4)."""

    partition_id: Guid
    machine_name: str
    acked_seq_number: int = 0
    acked_pec_seq_number: int = 0
    last_acked_time: float = 0.0
    available_changes: list[DirectoryChange] = attrs.field(factory=list)


@attrs.frozen
class TombstoneId:
    """What a DeletedObject (3.1.1.2.2) holds besides its SeqNumber: Identifier, PartitionID, ObjectType, Scope."""

    identifier: Guid | None
    partition_id: Guid
    object_type: int
    scope: int


def tombstone(identifier: Guid | None, partition_id: Guid, seq: int, object_type: int, scope: int) -> m.Tombstone:
    """A DeletedObject as the core sees it (``in_partition`` is set for each partition an event works on)."""
    return m.Tombstone(True, seq, False, identifier is not None,
                       TombstoneId(identifier, partition_id, object_type, scope))


@attrs.define(eq=False)
class Waiting:
    """A Process Change Request event waiting for its reply (3.3.7.1): where the request came from."""

    request_identifier: int
    message: Any  # ChangeRequestMessage
    origin: str  # "client" | "forward"
    client_request: int | None


@attrs.define(eq=False)
class Server:
    """One directory server: 3.1.1.1 and 3.1.1.3, the waits of 3.3.7.1 and the directory it runs on."""

    machine_name: str
    identifier: Guid
    site_identifier: Guid
    role: str  # PEC | PSC | BSC
    pec_name: str
    configured_psc_name: str | None
    partitions: list[Partition]
    psc_neighbors: list[Neighbor]
    bsc_neighbors: list[Neighbor]
    deleted_objects: list[m.Tombstone]
    my_enterprise_partition: Partition | None
    my_site_partition: Partition | None
    my_psc_name: str | None
    replication_queue_open: bool
    pending_requests: dict[tuple[str, int], Waiting]
    next_request_identifier: int
    next_client_request: int
    last_seq_number_header_time: float | None
    last_seq_number_header_sent: dict[tuple[str, str], float]
    directory: Any  # Directory

    @property
    def is_pec(self) -> bool:
        return self.role == "PEC"

    @property
    def is_psc(self) -> bool:
        """"when a statement is made about a PSC, it also applies to the PEC" (1.3.1.1)."""
        return self.role != "BSC"

    @property
    def is_bsc(self) -> bool:
        return self.role == "BSC"

    def find_partition(self, partition_id: Any) -> Partition | None:
        """The first partition with PartitionID ``partition_id``."""
        return next((p for p in self.partitions if p.partition_id == partition_id), None)

    def is_authority_of(self, partition: Partition) -> bool:
        """The object authority of ``partition`` (1.3.1.2): the PEC's enterprise partition, a PSC's own site's."""
        return (self.is_pec and partition is self.my_enterprise_partition) or (
            self.is_psc and partition is self.my_site_partition)


# --- what an event emits --------------------------------------------------------------------------


@attrs.frozen
class Send:
    """Send Replication Message (3.1.7.2.1): the arguments that are not the same for every message."""

    destination: str
    body: Any  # a wire message value (mqspec.model.mqdsrp)
    timeout: int  # TimeToReachQueue
    time_to_be_received: int
    priority: int
    ack: str  # None | AckNackReachQueue
    admin_queue: str | None
    response_queue: str | None
    format_name: str  # REPLICATION_QUEUE_DIRECT of the destination


@attrs.frozen
class StartTimer:
    kind: str
    args: tuple[Any, ...]
    delay: float


@attrs.frozen
class CancelTimer:
    kind: str
    args: tuple[Any, ...]


@attrs.frozen
class DirectoryEvent:
    """An [MS-MQDS] event raised on the local directory, and its status."""

    operation: str  # create | update | delete | read | reset1 | reset2
    status: int
    object_type: int | None = None
    path_name: str | None = None
    guid: Guid | None = None
    partition_id: Guid | None = None
    seq_number: int | None = None


@attrs.frozen
class Completed:
    """A directory client's change request finished with ``status`` (rStatus to the MQDS server)."""

    request: int
    status: int


Emitted = Send | StartTimer | CancelTimer | DirectoryEvent | Completed


def private_queue(identifier: Guid) -> str:
    """REPLICATION_QUEUE_PRIVATE of a queue manager (1.9)."""
    from mqspec.refimpl.transport import replication_queue_private

    return replication_queue_private(identifier)


class Event:
    """One event being run: the server, the mode, the clock and what it emitted so far."""

    def __init__(self, server: Server, clarified: bool, now: float) -> None:
        self.server = server
        self.clarified = clarified
        self.literal = not clarified
        self.reading = m.Reading.of(clarified)
        self.now = now
        self.emitted: list[Emitted] = []
        self.out = m.Out()
        self.env: Any = None  # the core's environment (server_objects.ServerEnvironment)
        #: the partition the core was last focused on (server_objects.focus), while nothing else changed
        self.focused: Any = None
        #: the model's handlers entered, innermost last (a departure names the one that wrote a field)
        self.stack: list[str] = []
        self.writers: dict[tuple[int, str], str] = {}

    def emit(self, item: Emitted) -> None:
        self.emitted.append(item)

    def send(self, destination: str | None, body: Any, timeout: int, priority: int, ack: bool,
             queues: bool) -> None:
        """Send Replication Message with the server's private queue as admin and response queue (``queues``)."""
        from mqspec.refimpl.transport import replication_queue_direct

        queue = private_queue(self.server.identifier) if queues else None
        # 3.1.7.2.1: "TimeToReachQueue := iTimeout. TimeToBeReceived := iTimeout"
        self.emit(Send(destination or "", body, timeout, timeout, priority, "AckNackReachQueue" if ack else "None",
                       queue, queue, replication_queue_direct(destination) if destination else ""))

    def start_timer(self, kind: str, args: tuple[Any, ...], delay: float) -> None:
        self.emit(StartTimer(kind, args, delay))

    def cancel_timer(self, kind: str, args: tuple[Any, ...]) -> None:
        self.emit(CancelTimer(kind, args))


# --- the directory ([MS-MQDS], the environment) -------------------------------------------------------


class Directory:
    """The local directory the model raises [MS-MQDS] events on: the reference's store, run on a copy.

    ``store`` is a :class:`~mqspec.refimpl.directory.DirectoryStore` (the modelled [MS-MQDS] of
    E-190 .. E-198); each event is also emitted as a :class:`DirectoryEvent` with its status.
    """

    def __init__(self, store: Any) -> None:
        self.store = store

    def create(self, ev: Event, object_type: int, path_name: str | None, properties: Sequence[Property],
               partition_id: Guid, seq: int, guid: Guid | None = None) -> int:
        status = self.store.create(object_type, path_name, guid, properties, partition_id, SequenceNumber(seq))
        ev.emit(DirectoryEvent("create", status, object_type, path_name, guid, partition_id, seq))
        return int(status)

    def update(self, ev: Event, object_type: int, path_name: str | None, guid: Guid | None,
               properties: Sequence[Property], partition_id: Guid, seq: int) -> int:
        status = self.store.update(object_type, path_name, guid, properties, partition_id, SequenceNumber(seq))
        ev.emit(DirectoryEvent("update", status, object_type, path_name, guid, partition_id, seq))
        return int(status)

    def delete(self, ev: Event, object_type: int, path_name: str | None, guid: Guid | None) -> tuple[int, Any]:
        status, removed = self.store.delete(object_type, path_name, guid)
        ev.emit(DirectoryEvent("delete", status, object_type, path_name, getattr(removed, "guid", guid)))
        return int(status), removed

    def read(self, ev: Event, object_type: int, path_name: str | None, guid: Guid | None) -> int:
        found = self.store.find(guid=guid, path_name=path_name, object_type=object_type)
        status = MQ_OK if found is not None else MQDS_OBJECT_NOT_FOUND
        ev.emit(DirectoryEvent("read", status, object_type, path_name, guid))
        return status

    def reset(self, ev: Event, partition_id: Guid, operation: int) -> int:
        status = self.store.reset_partition(partition_id, operation)
        ev.emit(DirectoryEvent(f"reset{operation}", status, partition_id=partition_id))
        return int(status)

    def find(self, **how: Any) -> Any:
        """A read of the directory that raises no event (the handlers' own look-ups by path or GUID)."""
        return self.store.find(**how)


# --- small helpers the events share ---------------------------------------------------------------------


def prop_value(properties: Sequence[Property], propid: int) -> Any:
    """The value of ``propid`` in a PROPID/PROPVARIANT pair of arrays, or None."""
    return next((p.value for p in properties if p.propid == propid), None)


def _number(properties: Sequence[Property], index: int) -> int:
    value = properties[index].value if len(properties) > index else None
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def first_value(properties: Sequence[Property]) -> int:
    """A delete's scope: "the property value of the first element"."""
    return _number(properties, 0)


def second_value(properties: Sequence[Property]) -> int:
    """A delete's object type: "the property value of the second element"."""
    return _number(properties, 1)


def delete_properties(scope: int, object_type: int) -> tuple[Property, ...]:
    return (Property(P["PROPID_D_SCOPE"], scope), Property(P["PROPID_D_OBJTYPE"], object_type))


def object_type_of_change(change: DirectoryChange) -> int:
    """3.1.1.4: the object type of a change is the type its first PROPID belongs to (0: none)."""
    from mqspec.model.propids import object_type_of

    if not change.properties:
        return 0
    found = object_type_of(change.properties[0].propid)
    return int(found) if found is not None else 0


def core_change(change: DirectoryChange) -> m.Change:
    """A DirectoryChange as the core sees it (numbers and whether it deletes), the change itself its payload."""
    return m.Change(True, change.previous_seq_number.value, change.seq_number.value,
                    change.purged_seq_number.value, change.command is Command.DELETE, True, change)


def seq(n: int) -> SequenceNumber:
    return SequenceNumber(n)
