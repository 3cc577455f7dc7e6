"""The server layer's handling of directory changes: 3.1.7.1.2, 3.1.7.2.5 .. 3.1.7.2.12, and the core's environment.

:class:`ServerEnvironment` is what the core model (:mod:`mqspec.proofs.z3_model`) calls where a
partition's event reaches beyond the partition: the directory event a change raises (its status
is the core's "applies"), what the change's object means to replication state (a site's partition
and PSC neighbor, a BSC neighbor, the enterprise's PEC name, a site's new PSC), the neighbors'
AvailableChangeCollections, and the messages the core records (sync requests, PSC acks) sent to
the server the pseudo-code names. Each step is written in the order of its section, as the
handlers are; the model's own structure is the core's (guards as values), not the reference's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from mqspec.model.guid import Guid
from mqspec.model.mqdsrp import (
    Command,
    DirectoryChange,
    PSCAckMessage,
    Scope,
    SyncRequestMessage,
)
from mqspec.model.propids import ObjectType
from mqspec.model.propvalue import Property

from . import z3_model as m
from .server_model import (
    INTERSITE,
    INTRASITE,
    MQ_OK,
    MQDS_OBJECT_NOT_FOUND,
    PEC_PARTITION_ID,
    PROPAGATION_INTERVAL,
    SERVICE_BSC,
    Event,
    Neighbor,
    P,
    Partition,
    TombstoneId,
    delete_properties,
    first_value,
    new_partition,
    object_type_of_change,
    prop_value,
    second_value,
    seq,
)

SITE, MACHINE, ENTERPRISE = int(ObjectType.MQDS_SITE), int(ObjectType.MQDS_MACHINE), int(ObjectType.MQDS_ENTERPRISE)
#: the property a change of each type names its object's GUID by (modelling E-182)
IDENTITY = {
    int(ObjectType.MQDS_QUEUE): P["PROPID_Q_INSTANCE"], MACHINE: P["PROPID_QM_MACHINE_ID"], SITE: P["PROPID_S_SITEID"],
    int(ObjectType.MQDS_CN): P["PROPID_CN_GUID"], ENTERPRISE: P["PROPID_E_ID"], int(ObjectType.MQDS_USER): P["PROPID_U_ID"],
    int(ObjectType.MQDS_ROUTINGLINK): P["PROPID_L_ID"],
}


@attrs.frozen
class Propagated:
    """What Propagate Directory Change (3.1.7.1.2) is raised with: the core's change carries it."""

    operation: int
    object_type: int
    path_name: str | None
    guid: Guid | None
    partition_id: Guid
    properties: tuple[Property, ...]
    scope: int = 0
    #: the change of the Receive Change Request that raised it (3.2.7.2), if one did
    request: DirectoryChange | None = None


# --- focusing the core on one partition ----------------------------------------------------------------


def focus(ev: Event, p: Partition, objects: Sequence[m.DirObject] = ()) -> Partition:
    """Make ``p`` the core's state of this server's partition as it is now (what the core reads beyond it).

    Whether the server is its authority, the PSC neighbors' acknowledgements of it (AckedPECSeqNumber
    for the enterprise partition), which tombstones are its, and the directory objects a sync
    reply is built from (only Receive Sync Request passes any).
    """
    s = ev.server
    p.is_psc = s.is_psc
    p.is_authority = s.is_authority_of(p)
    p.is_enterprise = p.partition_id == PEC_PARTITION_ID
    ent = p.is_enterprise
    p.psc_neighbors = [m.Neighbor(True, n.acked_pec_seq_number if ent else n.acked_seq_number)
                       for n in s.psc_neighbors]
    for t in s.deleted_objects:
        t.in_partition = t.payload.partition_id == p.partition_id
    p.deleted_objects = s.deleted_objects
    p.objects = list(objects)
    p.env = ev.env
    ev.focused = p
    return p


def compact(ev: Event) -> None:
    """Drop the tombstones and queued changes the core marked absent (it marks; the collections remove)."""
    s = ev.server
    s.deleted_objects[:] = [t for t in s.deleted_objects if t.present]
    for p in s.partitions:
        p.pending_changes = [c for c in p.pending_changes if c.present]


# --- the directory events with iReplicate ([MS-MQDS], E-180) ---------------------------------------------


def create_directory_object(ev: Event, object_type: int, path: str | None, properties: Sequence[Property],
                            partition_id: Guid, number: int, replicate: bool, guid: Guid | None = None) -> int:
    status = ev.server.directory.create(ev, object_type, path, properties, partition_id, number, guid)
    if status == MQ_OK and replicate:
        propagate_directory_change(ev, 0x00, object_type, path, None, partition_id, tuple(properties), number)
    return status


def update_directory_object(ev: Event, object_type: int, path: str | None, guid: Guid | None,
                            properties: Sequence[Property], partition_id: Guid, number: int, replicate: bool) -> int:
    status = ev.server.directory.update(ev, object_type, path, guid, properties, partition_id, number)
    if status == MQ_OK and replicate:
        propagate_directory_change(ev, 0x01, object_type, path, guid, partition_id, tuple(properties), number)
    return status


def delete_directory_object(ev: Event, object_type: int, path: str | None, guid: Guid | None, scope: int,
                            replicate: bool, partition_id: Guid | None = None,
                            number: int | None = None) -> tuple[int, Any]:
    status, removed = ev.server.directory.delete(ev, object_type, path, guid)
    if status == MQ_OK and replicate and partition_id is not None and number is not None:
        propagate_directory_change(ev, 0x02, object_type, getattr(removed, "path_name", None) or path,
                                   getattr(removed, "guid", guid), partition_id,
                                   delete_properties(scope, int(object_type)), number, scope)
    return status, removed


def propagate_directory_change(ev: Event, operation: int, object_type: int, path: str | None, guid: Guid | None,
                               partition_id: Guid, properties: tuple[Property, ...], number: int,
                               scope: int = 0) -> None:
    """3.1.7.1.2 at the authority: the core numbers the change, purges; the environment follows and queues it."""
    s = ev.server
    if s.is_pec and s.my_enterprise_partition is not None and partition_id == s.my_enterprise_partition.partition_id:
        part = s.my_enterprise_partition
    elif s.is_psc and s.my_site_partition is not None and partition_id == s.my_site_partition.partition_id:
        part = s.my_site_partition
    else:
        return
    focus(ev, part)
    # "SeqNumber := iSeqNumber" (3.1.7.1.2): LastSeqNumber + 1 from Read Next Sequence Number, but the sender's
    # number for a replicated change that the authority applies to its own partition (E-337)
    m.propagate_directory_change(part, ev.out, True, operation == 0x02, ev.reading,
                                 Propagated(operation, object_type, path, guid, partition_id, properties, scope),
                                 number=number)


# --- 3.1.7.2.5 .. 3.1.7.2.12: what a change's object means ------------------------------------------


def site_created(ev: Event, part: Partition, properties: Sequence[Property]) -> bool:
    """3.1.7.2.5's site branch: the site's partition, a sync request and (at a PSC) its PSC neighbor."""
    s = ev.server
    psc_name = prop_value(properties, P["PROPID_S_PSC"])
    site_id = prop_value(properties, P["PROPID_S_SITEID"])
    if ev.clarified and any(p.partition_id == site_id for p in s.partitions):
        return True  # clarification E-104: the partition exists (the second run of this event at the authority)
    new = new_partition(site_id, psc_name)
    s.partitions.append(new)
    if psc_name is None and ev.clarified:
        pass  # clarification E-336: no PROPID_S_PSC, no machine to ask or to add as a PSC neighbor
    elif psc_name != s.machine_name:
        send_sync_request(ev, new)
        if s.is_psc or ev.literal:  # clarification E-106: a BSC has no PSC neighbors
            # clarification E-105: the neighbor's PartitionID is the site's, not iPartition's
            neighbor = Neighbor(new.partition_id if ev.clarified else part.partition_id, psc_name)
            s.psc_neighbors.append(neighbor)
            ev.start_timer("change_propagation", (psc_name, INTERSITE), PROPAGATION_INTERVAL[INTERSITE])
    else:
        s.my_site_partition = new
    return True


def machine_created(ev: Event, part: Partition, path: str | None, properties: Sequence[Property]) -> None:
    """3.1.7.2.5's machine branch: a BSC of this PSC's own site becomes a BSC neighbor (once: E-104)."""
    s = ev.server
    if prop_value(properties, P["PROPID_QM_SERVICE"]) != SERVICE_BSC or part is not s.my_site_partition:
        return
    if ev.literal or not any(n.machine_name == path for n in s.bsc_neighbors):
        s.bsc_neighbors.append(Neighbor(part.partition_id, path or ""))
        ev.start_timer("change_propagation", (path or "", INTRASITE), PROPAGATION_INTERVAL[INTRASITE])


def created(ev: Event, part: Partition, object_type: int, path: str | None, properties: Sequence[Property]) -> bool:
    """3.1.7.2.5 after Create Directory Object; returns rNeedFlush."""
    need = False
    if object_type == SITE:
        need = site_created(ev, part, properties)
    if ev.server.is_psc and object_type == MACHINE:
        machine_created(ev, part, path, properties)
    return need


def updated(ev: Event, part: Partition, object_type: int, path: str | None, guid: Guid | None,
            properties: Sequence[Property], sync: bool) -> bool:
    """3.1.7.2.6 / 3.1.7.2.8 after the update (or the sync's create or update); returns rNeedFlush."""
    s = ev.server
    need = False
    if sync:  # 3.1.7.2.8 tests the enterprise first (E-113)
        if object_type == ENTERPRISE:
            need = enterprise_update(ev, part, properties)
        if object_type == SITE:
            need = site_update(ev, path, guid, properties, sync=True)
        if s.is_psc and object_type == MACHINE:
            need = machine_update(ev, part, path, guid, properties)
        return need
    if object_type == SITE:
        need = site_update(ev, path, guid, properties, sync=False)
    if object_type == ENTERPRISE:
        need = enterprise_update(ev, part, properties)
    if s.is_psc and object_type == MACHINE and part is s.my_site_partition:
        need = machine_update(ev, part, path, guid, properties)
    return need


def deleted(ev: Event, part: Partition, object_type: int, path: str | None, guid: Guid | None,
            removed: Any) -> bool:
    """3.1.7.2.7 after the deletion (the tombstone is the core's, E-108); returns rNeedFlush."""
    s = ev.server
    need = False
    if ev.clarified:
        identifier = getattr(removed, "guid", None) or guid
        if path is None and removed is not None:
            path = getattr(removed, "path_name", None)
        guid = identifier
    if object_type == SITE and (s.is_pec or ev.clarified):  # clarification E-318: every server
        site = s.find_partition(guid)
        if site is not None and (s.is_pec or (site.partition_id != s.site_identifier
                                              and site.authority_name != s.pec_name)):
            s.partitions.remove(site)
            s.psc_neighbors = [n for n in s.psc_neighbors if n.machine_name != site.authority_name]
            need = True
    if s.is_psc and object_type == MACHINE:
        s.bsc_neighbors = [n for n in s.bsc_neighbors if n.machine_name != path]
    return need


def enterprise_update(ev: Event, part: Partition, properties: Sequence[Property]) -> bool:
    """3.1.7.2.10: the enterprise partition's AuthorityName follows PROPID_E_PECNAME."""
    name = prop_value(properties, P["PROPID_E_PECNAME"])
    if name is not None and name != part.authority_name:
        part.authority_name = name
        return True
    return False


def site_update(ev: Event, path: str | None, guid: Guid | None, properties: Sequence[Property], sync: bool) -> bool:
    """3.1.7.2.11: the site's partition names its new PSC, its PSC neighbor is renamed; a synced site is created."""
    s = ev.server
    psc = prop_value(properties, P["PROPID_S_PSC"])
    if psc is None:
        return False
    site_id = guid
    if site_id is None and ev.clarified:  # clarification E-162: a path-named update
        site_id = prop_value(properties, P["PROPID_S_SITEID"])
        if site_id is None and path is not None:
            site_id = getattr(s.directory.find(path_name=path, object_type=SITE), "guid", None)
    partition = s.find_partition(site_id) if site_id is not None else None
    if partition is not None:
        partition.authority_name = psc
        if ev.clarified and s.is_psc and psc == s.machine_name and partition.partition_id == s.site_identifier:
            take_site_authority(ev, partition)  # clarification E-315
            return True
        for neighbor in s.psc_neighbors:
            if neighbor.partition_id == partition.partition_id:
                old = neighbor.machine_name
                neighbor.machine_name = psc
                if old != psc:  # modelling E-310: the neighbor's timer follows its new name
                    ev.cancel_timer("change_propagation", (old, INTERSITE))
                    ev.start_timer("change_propagation", (psc, INTERSITE), PROPAGATION_INTERVAL[INTERSITE])
                break
        if ev.clarified and s.is_bsc and partition.partition_id == s.site_identifier:
            s.my_psc_name = psc  # clarification E-312
        return True
    if not sync:
        return False
    partition_id = prop_value(properties, P["PROPID_S_SITEID"])
    if partition_id is None and ev.clarified:
        partition_id = guid  # clarification E-114: a sync change names the site by GuidIdentifier
    if partition_id is None:
        return False
    new = new_partition(partition_id, psc)
    s.partitions.append(new)
    if psc != s.machine_name:
        send_sync_request(ev, new)
        if s.is_psc or ev.literal:  # clarification E-106
            s.psc_neighbors.append(Neighbor(new.partition_id, psc))
            ev.start_timer("change_propagation", (psc, INTERSITE), PROPAGATION_INTERVAL[INTERSITE])
    elif new.partition_id == s.site_identifier:
        s.my_site_partition = new
    return True


def take_site_authority(ev: Event, partition: Partition) -> None:
    """E-315: the server named its own site's new PSC owns the partition; its PSC neighbor for it goes."""
    s = ev.server
    s.my_site_partition = partition
    leaving = [n for n in s.psc_neighbors if n.partition_id == partition.partition_id]
    s.psc_neighbors = [n for n in s.psc_neighbors if n.partition_id != partition.partition_id]
    for neighbor in leaving:
        if not any(n.machine_name == neighbor.machine_name for n in s.psc_neighbors):
            ev.cancel_timer("change_propagation", (neighbor.machine_name, INTERSITE))


def machine_update(ev: Event, part: Partition, path: str | None, guid: Guid | None,
                   properties: Sequence[Property]) -> bool:
    """3.1.7.2.12: a machine of this PSC's site became a BSC (a neighbor) or stopped being one. rNeedFlush false (E-115)."""
    s = ev.server
    service = prop_value(properties, P["PROPID_QM_SERVICE"])
    if service is None:
        return False
    if path is None and guid is not None:  # E-160: the machine's path from the directory
        path = getattr(s.directory.find(guid=guid), "path_name", None)
    if part is s.my_site_partition:
        if service == SERVICE_BSC:
            if not any(n.machine_name == path for n in s.bsc_neighbors):
                s.bsc_neighbors.append(Neighbor(part.partition_id, path or ""))
                ev.start_timer("change_propagation", (path or "", INTRASITE), PROPAGATION_INTERVAL[INTRASITE])
        else:
            s.bsc_neighbors = [n for n in s.bsc_neighbors if n.machine_name != path]
    return False


# --- applying a change ([MS-MQDS] event and its status) -----------------------------------------------


def apply_change(ev: Event, part: Partition, change: DirectoryChange) -> tuple[int, Any]:
    """The directory event 3.1.7.2.3 raises for ``change`` through 3.1.7.2.5 .. 3.1.7.2.8: (rStatus, removed)."""
    s = ev.server
    object_type = object_type_of_change(change)
    path = change.path_name
    guid = change.guid_identifier if path is None else None
    mine = s.is_authority_of(part)
    number = change.seq_number.value
    if change.command is Command.CREATE:  # E-112: a GUID-named create passes its GUID on
        return create_directory_object(ev, object_type, path, change.properties, part.partition_id, number, mine,
                                       guid), None
    if change.command is Command.UPDATE:
        return update_directory_object(ev, object_type, path, guid, change.properties, part.partition_id, number,
                                       mine), None
    if change.command is Command.DELETE:
        return delete_directory_object(ev, second_value(change.properties), path, guid,
                                       first_value(change.properties), mine, part.partition_id, number)
    return sync_directory_object(ev, part, object_type, path, guid, change.properties, number), None


def sync_directory_object(ev: Event, part: Partition, object_type: int, path: str | None, guid: Guid | None,
                          properties: Sequence[Property], number: int) -> int:
    """3.1.7.2.8's directory part: create the object this replica lacks, else update it."""
    s = ev.server
    status = s.directory.read(ev, object_type, path, guid)
    if status == MQDS_OBJECT_NOT_FOUND:
        if ev.clarified and part.purge_state == m.SYNC0:
            # clarification E-317: the namesake the sync0 reset marked is deleted first
            from mqspec.refimpl.directory import created_path

            name = created_path(object_type, path, {p.propid: p.value for p in properties})
            holder = s.directory.find(path_name=name, object_type=object_type)
            if holder is not None and holder.partition_id == part.partition_id and holder.seq_number.value == 0:
                delete_directory_object(ev, object_type, None, holder.guid, 1, False)
        return create_directory_object(ev, object_type, path, properties, part.partition_id, number, False,
                                       guid if ev.clarified else None)  # clarification E-112
    if status == MQ_OK:
        return update_directory_object(ev, object_type, path, guid, properties, part.partition_id, number, False)
    return status


def follow_change(ev: Event, part: Partition, change: DirectoryChange, removed: Any) -> bool:
    """What ``change``'s object means once the directory accepted it (3.1.7.2.5 .. 3.1.7.2.12); rNeedFlush."""
    object_type = object_type_of_change(change)
    path = change.path_name
    guid = change.guid_identifier if path is None else None
    if change.command is Command.CREATE:
        return created(ev, part, object_type, path, change.properties)
    if change.command is Command.UPDATE:
        return updated(ev, part, object_type, path, guid, change.properties, sync=False)
    if change.command is Command.DELETE:
        return deleted(ev, part, second_value(change.properties), path, guid, removed)
    return updated(ev, part, object_type, path, guid, change.properties, sync=True)


# --- messages the core records ------------------------------------------------------------------------


def send_sync_request(ev: Event, part: Partition) -> None:
    """3.3.7.3 for a partition outside a core event (a new site's partition, initialization)."""
    focus(ev, part)
    m.send_sync_request(part, ev.out, True)


def sync_request_message(ev: Event, part: Partition) -> tuple[str | None, SyncRequestMessage]:
    """3.3.7.3's message and iDestination (a BSC asks MyPSCName, a PSC the partition's AuthorityName)."""
    s = ev.server
    request = SyncRequestMessage(
        s.site_identifier, part.partition_id, seq(part.last_seq_number), seq(part.change_missing_window),
        seq(part.purged_seq_number), part.purge_state == m.SYNC0, Scope.NONE if s.is_bsc else Scope.ENTERPRISE,
        s.machine_name)
    return (s.my_psc_name if s.is_bsc else part.authority_name), request


class ServerEnvironment(m.Environment):
    """The core's environment on a real server (see :class:`mqspec.proofs.z3_model.Environment`)."""

    def __init__(self, ev: Event) -> None:
        self.ev = ev
        self.removed: Any = None  # the object the last Delete Directory Object removed
        self.need_flush = False

    def apply(self, s: m.NodeState, out: m.Out, g: m.Bool, c: m.Change, flush: m.Bool) -> tuple[m.Bool, m.Bool]:
        if g is False:
            return False, False
        status, self.removed = apply_change(self.ev, s, c.payload)  # type: ignore[arg-type]
        return status == MQ_OK, status == MQDS_OBJECT_NOT_FOUND

    def tombstone(self, s: m.NodeState, g: m.Bool, number: m.Seq, named: m.Bool, c: m.Change | None) -> m.Tombstone:
        absent = m.Tombstone(False, number, True, named, TombstoneId(None, s.partition_id, 0, 0))  # type: ignore[attr-defined]
        payload = c.payload if c is not None else None
        if isinstance(payload, Propagated) and self.ev.literal and payload.request is not None:
            # literal Receive Change Request (E-108): "Identifier := dirChange.GuidIdentifier"
            change = payload.request
            return m.Tombstone(g, number, True, change.guid_identifier is not None,
                               TombstoneId(change.guid_identifier, s.partition_id, second_value(change.properties),  # type: ignore[attr-defined]
                                           first_value(change.properties)))
        if isinstance(payload, Propagated):  # 3.1.7.2.7 with iPostDelete true: the propagated GUID
            identifier = payload.guid
            object_type, scope = payload.object_type, payload.scope
        else:  # a received change (3.1.7.2.7 with iPostDelete false)
            change = payload
            guid = change.guid_identifier if change.path_name is None else None
            identifier = getattr(self.removed, "guid", None) or guid
            object_type, scope = second_value(change.properties), first_value(change.properties)
        # clarification E-108: a tombstone with the object's identity, once per deletion
        if identifier is None or any(t.present and t.payload.identifier == identifier and t.seq_number == number
                                     for t in self.ev.server.deleted_objects):
            return absent
        return m.Tombstone(g, number, True, True,
                           TombstoneId(identifier, s.partition_id, int(object_type), int(scope)))  # type: ignore[attr-defined]

    def follow(self, s: m.NodeState, out: m.Out, g: m.Bool, c: m.Change) -> None:
        if g is not True:
            self.need_flush = False
            return
        self.need_flush = follow_change(self.ev, s, c.payload, self.removed)  # type: ignore[arg-type]
        focus(self.ev, s)  # type: ignore[arg-type]

    def applied(self, s: m.NodeState, out: m.Out, g: m.Bool, c: m.Change, flush: m.Bool) -> None:
        if g is not True or s.purge_state != m.NORMAL:
            return
        from .server_events import send_change_propagation

        for neighbor in list(self.ev.server.bsc_neighbors):
            neighbor.available_changes.append(c.payload)
            if flush and self.need_flush:
                send_change_propagation(self.ev, neighbor, INTRASITE)

    def propagated(self, s: m.NodeState, out: m.Out, g: m.Bool, c: m.Change) -> None:
        if g is not True:
            return
        ev, info = self.ev, c.payload
        server = ev.server
        op = info.operation
        status = MQ_OK
        # the handlers with iPostCreate / iPostUpdate / iPostDelete true: only what the object means
        if op == 0x00:
            created(ev, s, info.object_type, info.path_name, info.properties)  # type: ignore[arg-type]
        elif op == 0x01:
            updated(ev, s, info.object_type, info.path_name, info.guid, info.properties, sync=False)  # type: ignore[arg-type]
        elif op == 0x02:
            deleted(ev, s, info.object_type, info.path_name, info.guid, None)  # type: ignore[arg-type]
        else:
            r = sync_directory_object(ev, s, info.object_type, info.path_name, info.guid, info.properties,  # type: ignore[arg-type]
                                      c.seq_number)
            if r == MQ_OK:
                updated(ev, s, info.object_type, info.path_name, info.guid, info.properties, sync=True)  # type: ignore[arg-type]
            if ev.clarified:  # clarification E-100
                status = r
        if status != MQ_OK:
            return
        path, guid = info.path_name, info.guid
        if path is not None and guid is not None:
            path = None  # E-102: the change names its object by GUID
        if path is None and guid is None:
            guid = prop_value(info.properties, IDENTITY.get(info.object_type, -1))  # E-182
        change = DirectoryChange(Command(op), info.partition_id, seq(c.previous_seq_number), seq(c.seq_number),
                                 seq(c.purged_seq_number), info.properties, path_name=path, guid_identifier=guid)
        for neighbor in server.psc_neighbors:
            neighbor.available_changes.append(change)
        for neighbor in server.bsc_neighbors:
            neighbor.available_changes.append(change)
        focus(ev, s)  # type: ignore[arg-type]

    def sync_request(self, s: m.NodeState, out: m.Out, g: m.Bool) -> None:
        if g is not True:
            return
        destination, request = sync_request_message(self.ev, s)  # type: ignore[arg-type]
        self.ev.send(destination, request, 20 * 60, 3, ack=True, queues=True)

    def psc_ack(self, s: m.NodeState, out: m.Out, g: m.Bool, acked: m.Seq) -> None:
        if g is not True:
            return
        server = self.ev.server
        ack = PSCAckMessage(server.site_identifier, server.site_identifier, s.partition_id,  # type: ignore[attr-defined]
                            seq(acked), server.machine_name)  # type: ignore[arg-type]
        self.ev.send(s.authority_name, ack, 20 * 60, 3, ack=True, queues=True)  # type: ignore[attr-defined]

    def reset(self, s: m.NodeState, out: m.Out, g: m.Bool, operation: int) -> None:
        if g is True:
            self.ev.server.directory.reset(self.ev, s.partition_id, operation)  # type: ignore[attr-defined]

    def header(self, s: m.NodeState, out: m.Out, g: m.Bool, machine: Any, bsc_only: bool) -> None:
        if g is not True:
            return
        server = self.ev.server
        if bsc_only:
            if server.is_bsc:  # clarification E-316
                server.my_psc_name = machine
        elif server.is_psc:
            s.authority_name = machine  # type: ignore[attr-defined]
        else:
            server.my_psc_name = machine

    def changes(self, s: m.NodeState, out: m.Out, g: m.Bool, changes: list[m.Change], clarified: m.Reading) -> None:
        if g is not True:
            return
        from .server_events import processing_directory_changes

        processing_directory_changes(self.ev, [c.payload for c in changes if c.present], True)
        focus(self.ev, s)  # type: ignore[arg-type]
