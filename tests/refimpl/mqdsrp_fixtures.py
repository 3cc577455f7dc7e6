"""Builders the MC-MQDSRP handler tests share: queue managers, partitions, changes, effect filters.

A test builds one small enterprise by hand (no simulator), calls ONE handler with a fresh
:class:`Context` and asserts on the state it changed and on ``ctx.effects``.

The standard nodes, as 4.1 and 4.2 describe them:

* ``PEC0`` in site0: authority of the enterprise partition and of site0's partition;
* ``PSC1`` in site1: replica of the enterprise partition, authority of site1's partition;
* ``BSC11`` in site1: replica of both, its PSC is PSC1.
"""

from __future__ import annotations

from collections.abc import Iterable

from mqspec.model.guid import Guid
from mqspec.model.mqdsrp import Command, DirectoryChange
from mqspec.model.propids import PROPIDS, ObjectType
from mqspec.model.propvalue import Property
from mqspec.model.seqnum import SequenceNumber
from mqspec.refimpl.directory import DirectoryStore
from mqspec.refimpl.effects import (
    CancelTimer,
    Clarified,
    Context,
    DirectoryOperation,
    EnqueueMessage,
    Mode,
    RequestCompleted,
    StartTimer,
)
from mqspec.refimpl.mqdsrp_common import common_initialization
from mqspec.refimpl.mqdsrp_state import (
    PEC_PARTITION_ID,
    SCOPE_ENTERPRISE,
    SCOPE_SITE,
    SERVICE_BSC,
    DeletedObject,
    DirectoryNeighbor,
    DirectoryPartition,
    QueueManager,
    Role,
)

P = {name: pdef.propid for name, pdef in PROPIDS.items()}
ENT = PEC_PARTITION_ID
SITE0 = Guid.from_name("site:site0")
SITE1 = Guid.from_name("site:site1")
SITE2 = Guid.from_name("site:site2")
PEC, PSC, BSC = "PEC0", "PSC1", "BSC11"
MODES = (Mode.CLARIFIED, Mode.LITERAL)

QUEUE, MACHINE, SITE = ObjectType.MQDS_QUEUE, ObjectType.MQDS_MACHINE, ObjectType.MQDS_SITE
ENTERPRISE, USER, CN = ObjectType.MQDS_ENTERPRISE, ObjectType.MQDS_USER, ObjectType.MQDS_CN

__all__ = [
    "BSC",
    "CN",
    "ENT",
    "ENTERPRISE",
    "MACHINE",
    "MODES",
    "PEC",
    "PSC",
    "QUEUE",
    "SCOPE_ENTERPRISE",
    "SCOPE_SITE",
    "SERVICE_BSC",
    "SITE",
    "SITE0",
    "SITE1",
    "SITE2",
    "USER",
    "DeletedObject",
    "DirectoryNeighbor",
    "DirectoryPartition",
    "Mode",
    "P",
    "Property",
    "add_object",
    "bsc_node",
    "cancels",
    "change",
    "clarified_ids",
    "context",
    "delete_props",
    "dir_ops",
    "enterprise_props",
    "guid_of",
    "machine_props",
    "make_qm",
    "messages",
    "pec_node",
    "psc_node",
    "queue_props",
    "request_completions",
    "seq",
    "site_props",
    "timers",
    "tombstone",
    "user_props",
]


def seq(n: int) -> SequenceNumber:
    return SequenceNumber(n)


def guid_of(name: str) -> Guid:
    """The GUID the tests give the object called ``name``."""
    return Guid.from_name(f"object:{name}")


# --- queue managers -------------------------------------------------------------------------


def make_qm(name: str, role: Role, site: Guid, *, pec: str = PEC, psc: str | None = None,
            partitions: Iterable[DirectoryPartition] = ()) -> QueueManager:
    """A queue manager as World.add_node builds it, not yet initialized."""
    return QueueManager(
        machine_name=name, identifier=Guid.from_name(f"qm:{name}"), site_identifier=site, role=role,
        pec_name=pec, configured_psc_name=psc, partitions=list(partitions), directory=DirectoryStore(),
    )


def _initialized(qm: QueueManager) -> QueueManager:
    common_initialization(qm, Context(qm.machine_name))
    return qm


def pec_node() -> QueueManager:
    """PEC0, initialized: the enterprise partition and site0's partition, both its own."""
    return _initialized(make_qm(PEC, Role.PEC, SITE0, partitions=[
        DirectoryPartition(ENT, PEC), DirectoryPartition(SITE0, PEC)]))


def psc_node(*, site_partition: bool = True) -> QueueManager:
    """PSC1 of site1, initialized: a replica of the enterprise partition and (by default) its own site1 partition."""
    partitions = [DirectoryPartition(ENT, PEC)]
    if site_partition:
        partitions.append(DirectoryPartition(SITE1, PSC))
    return _initialized(make_qm(PSC, Role.PSC, SITE1, partitions=partitions))


def bsc_node() -> QueueManager:
    """BSC11 of site1, initialized: a replica of the enterprise partition and of site1's partition."""
    return _initialized(make_qm(BSC, Role.BSC, SITE1, psc=PSC, partitions=[
        DirectoryPartition(ENT, PEC), DirectoryPartition(SITE1, PSC)]))


def context(qm: QueueManager, mode: Mode = Mode.CLARIFIED, now: float = 0.0) -> Context:
    return Context(qm.machine_name, mode, now)


# --- directory objects and their properties ----------------------------------------------------


def queue_props(path: str, guid: Guid | None = None, label: str = "label") -> tuple[Property, ...]:
    props = [Property(P["PROPID_Q_PATHNAME"], path), Property(P["PROPID_Q_LABEL"], label)]
    if guid is not None:
        props.append(Property(P["PROPID_Q_INSTANCE"], guid))
    return tuple(props)


def site_props(path: str, site_id: Guid | None, psc: str | None) -> tuple[Property, ...]:
    props = [Property(P["PROPID_S_PATHNAME"], path)]
    if site_id is not None:
        props.append(Property(P["PROPID_S_SITEID"], site_id))
    if psc is not None:
        props.append(Property(P["PROPID_S_PSC"], psc))
    return tuple(props)


def machine_props(name: str, site_id: Guid, service: int | None, guid: Guid | None = None) -> tuple[Property, ...]:
    props = [Property(P["PROPID_QM_PATHNAME"], name), Property(P["PROPID_QM_SITE_ID"], site_id)]
    if service is not None:
        props.append(Property(P["PROPID_QM_SERVICE"], service))
    if guid is not None:
        props.append(Property(P["PROPID_QM_MACHINE_ID"], guid))
    return tuple(props)


def enterprise_props(pec_name: str | None, name: str = "enterprise") -> tuple[Property, ...]:
    props = [Property(P["PROPID_E_NAME"], name)]
    if pec_name is not None:
        props.append(Property(P["PROPID_E_PECNAME"], pec_name))
    return tuple(props)


def user_props(guid: Guid | None) -> tuple[Property, ...]:
    props = [Property(P["PROPID_U_SID"], b"\x01\x05")]
    if guid is not None:
        props.append(Property(P["PROPID_U_ID"], guid))
    return tuple(props)


def delete_props(scope: int, object_type: int) -> tuple[Property, ...]:
    """A delete's two values: "iScope := ... first element", "iObjectType := ... second element"."""
    return (Property(P["PROPID_D_SCOPE"], scope), Property(P["PROPID_D_OBJTYPE"], int(object_type)))


def add_object(qm: QueueManager, object_type: int, path: str | None, guid: Guid, props: Iterable[Property],
               partition: Guid, at: int = 1) -> None:
    """Put an object straight into the node's directory (test setup, not a protocol event)."""
    status = qm.directory.create(object_type, path, guid, tuple(props), partition, seq(at))
    if status != 0:
        raise RuntimeError(f"fixture object {path or guid} not created: 0x{status:08X}")


def tombstone(partition: Guid, at: int, name: str = "gone") -> DeletedObject:
    return DeletedObject(guid_of(f"{name}{at}"), partition, seq(at), int(QUEUE), SCOPE_ENTERPRISE)


# --- directory changes ----------------------------------------------------------------------


def change(command: Command | int, partition: Guid, previous: int, at: int, purged: int = 0,
           properties: Iterable[Property] = (), *, path: str | None = None,
           guid: Guid | None = None) -> DirectoryChange:
    """A DirectoryChange (2.2.4); named by ``path`` (UseGuid 0x00) or else by ``guid`` (0x01)."""
    if path is None and guid is None:
        path = "q-default"
    return DirectoryChange(Command(command), partition, seq(previous), seq(at), seq(purged), tuple(properties),
                           path_name=path, guid_identifier=guid if path is None else None)


# --- effects --------------------------------------------------------------------------------


def messages(ctx: Context) -> list[EnqueueMessage]:
    return [e for e in ctx.effects if type(e) is EnqueueMessage]


def timers(ctx: Context) -> list[StartTimer]:
    return [e for e in ctx.effects if type(e) is StartTimer]


def cancels(ctx: Context) -> list[CancelTimer]:
    return [e for e in ctx.effects if type(e) is CancelTimer]


def dir_ops(ctx: Context) -> list[DirectoryOperation]:
    return [e for e in ctx.effects if type(e) is DirectoryOperation]


def request_completions(ctx: Context) -> list[RequestCompleted]:
    return [e for e in ctx.effects if type(e) is RequestCompleted]


def clarified_ids(ctx: Context) -> list[str]:
    return [e.erratum for e in ctx.effects if type(e) is Clarified]
