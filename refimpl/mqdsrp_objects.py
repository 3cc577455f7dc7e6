"""MC-MQDSRP 3.1.7.2.5 to 3.1.7.2.12: applying directory changes to objects and to replication state.

One function per event, in the order of its pseudo-code, citing its section. Where mqspec departs
from the literal text the code says ``# clarification E-NNN`` and branches on ``ctx.clarified``.
"""

from __future__ import annotations

from collections.abc import Sequence

from mqspec.clauses import clause
from mqspec.model.guid import Guid
from mqspec.model.propids import ObjectType
from mqspec.model.propvalue import Property
from mqspec.model.seqnum import MIN_SEQ_NUMBER, SequenceNumber

from . import mqds
from . import status as st
from .directory import DirectoryObject, created_path
from .effects import Context, TimerScope
from .mqdsrp_base import DOC, P, prop_value
from .mqdsrp_state import (
    PEC_PARTITION_ID,
    SCOPE_ENTERPRISE,
    SERVICE_BSC,
    DeletedObject,
    DirectoryNeighbor,
    DirectoryPartition,
    PurgeState,
    QueueManager,
)


def _site_partition_exists(qm: QueueManager, partition_id: object) -> bool:
    return any(p.partition_id == partition_id for p in qm.partitions)


@clause(DOC, "3.1.7.2.5", "Handle Directory Create")
def handle_directory_create(
    qm: QueueManager, ctx: Context, partition: DirectoryPartition, object_type: int, path_name: str | None,
    properties: Sequence[Property], seq_number: SequenceNumber, post_create: bool, guid: Guid | None = None,
) -> tuple[int, bool]:
    """Create the object (unless already created) and the site partition / neighbors it implies.

    "If iObjectType is MQDS_SITE: ... Create a new DirectoryPartition object ... If pscName is
    different from QueueManager.MachineName: Raise a Send Sync Request event ... Add
    newPSCNeighbor to PSCNeighborCollection. Start a Change Propagation Timer" (3.1.7.2.5).
    """
    from .mqdsrp_client import send_sync_request, start_change_propagation_timer

    need_flush = False
    my_partition = qm.is_authority_of(partition)
    if not post_create:
        status = mqds.create_directory_object(qm, ctx, object_type, path_name, properties, partition.partition_id,
                                              seq_number, my_partition, guid=guid)
        if status != st.MQ_OK:
            return status, need_flush
    if object_type == ObjectType.MQDS_SITE:
        psc_name = prop_value(properties, P["PROPID_S_PSC"])
        site_id = prop_value(properties, P["PROPID_S_SITEID"])
        if ctx.clarified and _site_partition_exists(qm, site_id):
            # clarification E-104: at the authority Create Directory Object raises Propagate
            # Directory Change, which runs this event again with iPostCreate true; the text would
            # create the partition and the neighbor twice
            ctx.clarify("E-104", f"site partition {site_id} already exists")
        else:
            new_partition = DirectoryPartition(site_id, psc_name)  # type: ignore[arg-type]
            qm.partitions.append(new_partition)
            if psc_name is None and ctx.clarified:
                # clarification E-336: a site created without PROPID_S_PSC leaves pscName undefined, and
                # "different from QueueManager.MachineName" would ask, and add as a PSC neighbor, no machine;
                # as Handle Site Update does without it (3.1.7.2.11), nothing is asked or added
                ctx.clarify("E-336", f"site {site_id} created without PROPID_S_PSC")
            elif psc_name != qm.machine_name:
                send_sync_request(qm, ctx, new_partition)
                if qm.is_psc or ctx.literal:
                    # clarification E-106: a BSC has no PSC neighbors (3.3.3 starts their timers
                    # only "If the queue manager is a PSC"); the text adds them here at a BSC too
                    neighbor = DirectoryNeighbor(
                        # clarification E-105: the text uses iPartition.PartitionID (the enterprise
                        # partition), so Handle Site Update can never find this neighbor by site
                        new_partition.partition_id if ctx.clarified else partition.partition_id,
                        psc_name,  # type: ignore[arg-type]
                    )
                    qm.psc_neighbors.append(neighbor)
                    start_change_propagation_timer(qm, ctx, neighbor, TimerScope.INTERSITE)
            else:
                qm.my_site_partition = new_partition
        need_flush = True
    if qm.is_psc and object_type == ObjectType.MQDS_MACHINE:
        qm_service = prop_value(properties, P["PROPID_QM_SERVICE"])
        if qm_service == SERVICE_BSC and partition is qm.my_site_partition:
            # E-107: "MachineName := pathName" names an undefined variable; iPathName is meant
            # clarification E-104: at the authority this event runs twice for one create (once
            # from Receive Change Request, once from Propagate Directory Change); the text would
            # add the BSC neighbor twice
            if not any(n.machine_name == path_name for n in qm.bsc_neighbors) or ctx.literal:
                neighbor = DirectoryNeighbor(partition.partition_id, path_name or "", last_acked_time=0.0)
                qm.bsc_neighbors.append(neighbor)
                start_change_propagation_timer(qm, ctx, neighbor, TimerScope.INTRASITE)
    return st.MQ_OK, need_flush


@clause(DOC, "3.1.7.2.6", "Handle Directory Update")
def handle_directory_update(
    qm: QueueManager, ctx: Context, partition: DirectoryPartition, object_type: int, path_name: str | None,
    guid: Guid | None, properties: Sequence[Property], seq_number: SequenceNumber, post_update: bool,
) -> tuple[int, bool]:
    """Update the object and follow site, enterprise and machine changes into replication state."""
    need_flush = False
    status = st.MQ_OK
    my_partition = qm.is_authority_of(partition)
    if not post_update:
        status = mqds.update_directory_object(qm, ctx, object_type, path_name, guid, properties,
                                              partition.partition_id, seq_number, my_partition)
        if status != st.MQ_OK:
            return status, need_flush
    if object_type == ObjectType.MQDS_SITE:
        status, need_flush = handle_site_update(qm, ctx, path_name, guid, properties, sync=False)
    if object_type == ObjectType.MQDS_ENTERPRISE:
        status, need_flush = handle_enterprise_update(qm, ctx, partition, properties)
    if qm.is_psc and object_type == ObjectType.MQDS_MACHINE and partition is qm.my_site_partition:
        status, need_flush = handle_machine_update(qm, ctx, partition, path_name, guid, properties, sync=False)
    return status, need_flush


@clause(DOC, "3.1.7.2.7", "Handle Directory Delete")
def handle_directory_delete(
    qm: QueueManager, ctx: Context, partition: DirectoryPartition, object_type: int, scope: int,
    path_name: str | None, guid: Guid | None, seq_number: SequenceNumber, post_delete: bool,
) -> tuple[int, bool]:
    """Delete the object; a deleted site drops its partition and PSC neighbor, a deleted BSC its neighbor.

    "If queue manager is a PEC and iObjectType is MQDS_SITE: ... Remove dirPartition from
    DirectoryPartitionCollection. Remove any DirectoryNeighbor object whose <MachineName> is the same
    as dirPartition.AuthorityName from PSCNeighborCollection" (3.1.7.2.7); clarified, every server (E-318).
    """
    need_flush = False
    my_partition = qm.is_authority_of(partition)
    removed = None
    if not post_delete:
        status, removed = mqds.delete_directory_object(qm, ctx, object_type, path_name, guid, scope, my_partition,
                                                       partition.partition_id, seq_number)
        if status == st.MQDS_OBJECT_NOT_FOUND and not my_partition and ctx.clarified:
            # clarification E-261: a replica that never had the object (it missed the create, or
            # rebuilt its state) would fail this change for ever and stop the partition here; the
            # deletion's outcome already holds, so it counts as applied (its tombstone is kept below)
            ctx.clarify("E-261", "replicated delete of an object this replica does not hold")
            status = st.MQ_OK
        if status != st.MQ_OK:
            return status, need_flush
    if ctx.clarified:
        # clarification E-108: the text records a DeletedObject only in Receive Change Request,
        # with the GuidIdentifier a path-named request does not have, and never at replicas or
        # for the authority's own deletes; every successful delete records its tombstone here
        identifier = getattr(removed, "guid", None) or guid
        if identifier is not None and not any(
            d.identifier == identifier and d.seq_number == seq_number for d in qm.deleted_objects
        ):
            qm.deleted_objects.append(DeletedObject(identifier, partition.partition_id, seq_number, object_type, scope))
        if path_name is None and removed is not None:
            path_name = getattr(removed, "path_name", None)
        guid = identifier
    if object_type == ObjectType.MQDS_SITE and (qm.is_pec or ctx.clarified):
        # clarification E-318: the text undoes a site only "If queue manager is a PEC", but every
        # server made its partition and every PSC its PSC neighbor (3.1.7.2.5); a PSC keeping the
        # neighbor waits for its acks for ever and never purges again (3.1.7.2.9). A server's own
        # site and the PEC's stay: the PEC is also the enterprise partition's authority
        site_partition = qm.find_partition(guid)
        if site_partition is not None and (qm.is_pec or (site_partition.partition_id != qm.site_identifier
                                                         and site_partition.authority_name != qm.pec_name)):
            qm.partitions.remove(site_partition)
            qm.psc_neighbors = [n for n in qm.psc_neighbors if n.machine_name != site_partition.authority_name]
            need_flush = True
    if qm.is_psc and object_type == ObjectType.MQDS_MACHINE:
        qm.bsc_neighbors = [n for n in qm.bsc_neighbors if n.machine_name != path_name]
    return st.MQ_OK, need_flush


#: 3.1.7.2.8's iPropertyID for the Read Directory Object of each type; the text names PROPIDs
#: that do not exist (PROPID_S_ID, PROPID_CN_ID, PROPID_QM_ID, PROPID_Q_ID: E-111)
SYNC_READ_PROPID = {
    ObjectType.MQDS_ENTERPRISE: "PROPID_E_ID",
    ObjectType.MQDS_SITE: "PROPID_S_SITEID",
    ObjectType.MQDS_ROUTINGLINK: "PROPID_L_ID",
    ObjectType.MQDS_CN: "PROPID_CN_GUID",
    ObjectType.MQDS_USER: "PROPID_U_ID",
    ObjectType.MQDS_MACHINE: "PROPID_QM_MACHINE_ID",
    ObjectType.MQDS_QUEUE: "PROPID_Q_INSTANCE",
}


@clause(DOC, "3.1.7.2.8", "Handle Directory Sync")
def handle_directory_sync(
    qm: QueueManager, ctx: Context, partition: DirectoryPartition, object_type: int, path_name: str | None,
    guid: Guid | None, properties: Sequence[Property], seq_number: SequenceNumber,
) -> tuple[int, bool]:
    """Create the object if this replica lacks it, else update it; then follow site/enterprise/machine changes.

    "If rStatus is MQDS_OBJECT_NOT_FOUND: Raise a [MS-MQDS] Create Directory Object event ...
    Else if rStatus is MQ_OK: Raise an [MS-MQDS] Update Directory Object event" (3.1.7.2.8).
    """
    need_flush = False
    status = mqds.read_directory_object(qm, ctx, object_type, path_name, guid)
    if status == st.MQDS_OBJECT_NOT_FOUND:
        if ctx.clarified and partition.purge_state is PurgeState.SYNC0:
            # clarification E-317: Reset Directory Partition only marks the objects deleted
            # (3.3.7.10), so one the authority deleted while this replica was away still holds
            # its name, and the create of its successor under that name would be refused; the
            # authority's names are unique, so the marked holder is gone there (Complete Sync0
            # State would delete it anyway) and is deleted first, not replicated
            holder = _namesake(qm, object_type, path_name, properties)
            if (holder is not None and holder.partition_id == partition.partition_id
                    and holder.seq_number == MIN_SEQ_NUMBER):
                mqds.delete_directory_object(qm, ctx, object_type, None, holder.guid, SCOPE_ENTERPRISE, False)
        # clarification E-112: Create Directory Object gets no iGuidIdentifier, so a replica would
        # give the object a GUID of its own and later changes by GUID would miss it
        status = mqds.create_directory_object(qm, ctx, object_type, path_name, properties, partition.partition_id,
                                              seq_number, False, guid=guid if ctx.clarified else None)  # E-112
    elif status == st.MQ_OK:
        # E-161: the text passes no iGuidIdentifier, leaving a GUID-named sync change no name
        status = mqds.update_directory_object(qm, ctx, object_type, path_name, guid, properties,
                                              partition.partition_id, seq_number, False)
    if status != st.MQ_OK:
        return status, need_flush
    # E-113: the text tests "objectType", which this event does not define; iObjectType is meant
    if object_type == ObjectType.MQDS_ENTERPRISE:
        status, need_flush = handle_enterprise_update(qm, ctx, partition, properties)
    if object_type == ObjectType.MQDS_SITE:
        status, need_flush = handle_site_update(qm, ctx, path_name, guid, properties, sync=True)
    if qm.is_psc and object_type == ObjectType.MQDS_MACHINE:
        status, need_flush = handle_machine_update(qm, ctx, partition, path_name, guid, properties, sync=True)
    return status, need_flush


def _namesake(
    qm: QueueManager, object_type: int, path_name: str | None, properties: Sequence[Property],
) -> DirectoryObject | None:
    """The object of this directory holding the name Create Directory Object would give the change's
    object: ``path_name``, or the path-name property a GUID-named sync change carries (3.2.7.8)."""
    name = created_path(object_type, path_name, {p.propid: p.value for p in properties})
    return qm.directory.find(path_name=name, object_type=object_type)


#: "Set purgeSeqNumber to (iPartition.LastSeqNumber 1024)": the buffer of recent changes never purged
PURGE_BUFFER = 1024


@clause(DOC, "3.1.7.2.9", "Purge Deleted Objects")
def purge_deleted_objects(qm: QueueManager, ctx: Context, partition: DirectoryPartition) -> None:
    """Remove the tombstones every PSC neighbor has acknowledged (authority) or the authority allows (replica).

    "Remove each object ... from DeletedObjectCollection, where: objDeleted.PartitionID is equal
    to iPartition.PartitionID and objDeleted.SeqNumber <= purgeSeqNumber" (3.1.7.2.9).
    """
    if ctx.clarified:
        # clarification E-130: LastSeqNumber - 1024 wraps to a huge value below 1024 (2.2.2
        # Subtraction), which removes the buffer the step exists for; mqspec stops at MIN
        buffer_end = (
            partition.last_seq_number.sub(PURGE_BUFFER)
            if partition.last_seq_number.value >= PURGE_BUFFER
            else MIN_SEQ_NUMBER
        )
    else:
        buffer_end = partition.last_seq_number.sub(PURGE_BUFFER)
    purge_seq_number = buffer_end
    if partition.purge_state is not PurgeState.NORMAL or partition.purged_seq_number >= purge_seq_number:
        return
    if qm.is_authority_of(partition):
        acks = [
            n.acked_pec_seq_number if partition.partition_id == PEC_PARTITION_ID else n.acked_seq_number
            for n in qm.psc_neighbors
        ]
        if not acks:
            # E-132: the minimum over an empty PSCNeighborCollection is undefined; with no PSC
            # neighbor no other authority's replica waits for these tombstones
            min_acked = partition.last_seq_number
        else:
            min_acked = min(acks)
        if min_acked <= partition.purged_seq_number:
            return  # "not all PSCs have acknowledged the deletion operations"
        # clarification E-130: the text replaces the buffer by minAckedSeqNumber; mqspec keeps both
        purge_seq_number = min(min_acked, buffer_end) if ctx.clarified else min_acked
    else:
        if partition.allowed_purge_seq_number < purge_seq_number:
            if partition.allowed_purge_seq_number < partition.purged_seq_number:
                return
            purge_seq_number = partition.allowed_purge_seq_number
    qm.deleted_objects = [
        d for d in qm.deleted_objects
        if not (d.partition_id == partition.partition_id and d.seq_number <= purge_seq_number)
    ]
    if ctx.clarified and purge_seq_number > partition.purged_seq_number:
        # clarification E-133: the text never advances PurgedSeqNumber when it removes
        # tombstones, so Receive Sync Request can never answer AlreadyPurged and a replica that
        # missed a purged deletion keeps the object forever
        partition.purged_seq_number = purge_seq_number


@clause(DOC, "3.1.7.2.10", "Handle Enterprise Update")
def handle_enterprise_update(
    qm: QueueManager, ctx: Context, partition: DirectoryPartition, properties: Sequence[Property],
) -> tuple[int, bool]:
    """"If newPECName is different from iPartition.AuthorityName: Set iPartition.AuthorityName to newPECName"."""
    need_flush = False
    new_pec_name = prop_value(properties, P["PROPID_E_PECNAME"])
    if new_pec_name is not None and new_pec_name != partition.authority_name:
        partition.authority_name = new_pec_name  # type: ignore[assignment]
        need_flush = True
    return st.MQ_OK, need_flush


@clause(DOC, "3.1.7.2.11", "Handle Site Update")
def handle_site_update(
    qm: QueueManager, ctx: Context, path_name: str | None, guid: Guid | None,
    properties: Sequence[Property], sync: bool,
) -> tuple[int, bool]:
    """Follow a site's PSC: update the partition's authority and neighbor, or create the partition.

    "Else if iSync is true: Create a new DirectoryPartition object ... If newPSCName is different
    from QueueManager.MachineName: Raise a Send Sync Request event" (3.1.7.2.11).
    """
    from .mqdsrp_client import (
        rename_change_propagation_timer,
        send_sync_request,
        start_change_propagation_timer,
        take_site_authority,
    )

    need_flush = False
    new_psc_name = prop_value(properties, P["PROPID_S_PSC"])
    if new_psc_name is None:
        return st.MQ_OK, need_flush
    site_id = guid
    if site_id is None and ctx.clarified:
        # clarification E-162: the partition is found only "where dirPartition.PartitionID is equal
        # to iGuidIdentifier", which a path-named update (3.1.7.1.1 sends UseGuid 0x00) leaves NULL;
        # mqspec takes PROPID_S_SITEID, else the GUID of the site object named by the path
        site_id = prop_value(properties, P["PROPID_S_SITEID"])  # type: ignore[assignment]
        if site_id is None and path_name is not None:
            obj = qm.directory.find(path_name=path_name, object_type=int(ObjectType.MQDS_SITE))
            site_id = getattr(obj, "guid", None)
    partition = qm.find_partition(site_id) if site_id is not None else None
    if partition is not None:
        partition.authority_name = new_psc_name  # type: ignore[assignment]
        need_flush = True
        if ctx.clarified and qm.is_psc and new_psc_name == qm.machine_name and partition.partition_id == qm.site_identifier:
            # clarification E-315: this server is named the new PSC of its own site, whose partition it
            # held as a replica; the text would rename the partition's PSC neighbor to the server
            # itself and leave MySitePartition unset (computed only at initialization, 3.1.3.1), so
            # the server would go on as a replica of the partition it now owns
            take_site_authority(qm, ctx, partition)
            return st.MQ_OK, need_flush
        for neighbor in qm.psc_neighbors:
            if neighbor.partition_id == partition.partition_id:
                old_name = neighbor.machine_name
                neighbor.machine_name = new_psc_name  # type: ignore[assignment]
                if old_name != new_psc_name:
                    # modelling E-310: the Change Propagation Timer holds "a reference to a
                    # DirectoryNeighbor" (3.3.6.1), which a rename does not break; mqspec's timer is
                    # named by the neighbor's machine name, so it moves to the new name with it
                    rename_change_propagation_timer(qm, ctx, neighbor, old_name)
                break
        if ctx.clarified and qm.is_bsc and partition.partition_id == qm.site_identifier:
            # clarification E-312: the text sets MyPSCName only at initialization (3.1.3.1) and from
            # a SeqNumberHeader showing missed changes (3.2.7.1); a BSC would send its change
            # requests, sync requests and acks to the old PSC until then
            qm.my_psc_name = new_psc_name  # type: ignore[assignment]
    elif sync:
        # clarification E-114: a sync change names the site by GuidIdentifier and carries no
        # PROPID_S_SITEID (3.2.7.8's DirectoryChangePropID for MQDS_SITE lacks it)
        partition_id = prop_value(properties, P["PROPID_S_SITEID"])
        if partition_id is None and ctx.clarified:  # clarification E-114
            partition_id = guid
        if partition_id is None:
            return st.MQ_OK, need_flush  # literal: the new partition has no identifier to take
        new_partition = DirectoryPartition(partition_id, new_psc_name)  # type: ignore[arg-type]
        qm.partitions.append(new_partition)
        if new_psc_name != qm.machine_name:
            send_sync_request(qm, ctx, new_partition)
            if qm.is_psc or ctx.literal:  # clarification E-106
                neighbor = DirectoryNeighbor(new_partition.partition_id, new_psc_name)  # type: ignore[arg-type]
                qm.psc_neighbors.append(neighbor)
                start_change_propagation_timer(qm, ctx, neighbor, TimerScope.INTERSITE)
        elif new_partition.partition_id == qm.site_identifier:
            qm.my_site_partition = new_partition
        need_flush = True
    return st.MQ_OK, need_flush


@clause(DOC, "3.1.7.2.12", "Handle Machine Update")
def handle_machine_update(
    qm: QueueManager, ctx: Context, partition: DirectoryPartition, path_name: str | None, guid: Guid | None,
    properties: Sequence[Property], sync: bool,
) -> tuple[int, bool]:
    """A machine of this PSC's site became (or stopped being) a BSC: add or remove its BSC neighbor.

    Returns (rStatus, rNeedFlush); the text lists only rStatus, but its callers read rNeedFlush
    (E-115), which mqspec returns as false.
    """
    from .mqdsrp_client import start_change_propagation_timer

    qm_service = prop_value(properties, P["PROPID_QM_SERVICE"])
    if qm_service is None:
        return st.MQ_OK, False
    if path_name is None and guid is not None:
        # E-160: this event takes no iGuidIdentifier although its callers pass one, and sync
        # changes name machines by GUID only; the machine's path comes from the directory
        obj = qm.directory.find(guid=guid)
        path_name = getattr(obj, "path_name", None)
    if partition is qm.my_site_partition:
        if qm_service == SERVICE_BSC:
            if not any(n.machine_name == path_name for n in qm.bsc_neighbors):
                neighbor = DirectoryNeighbor(partition.partition_id, path_name or "", last_acked_time=0.0)
                qm.bsc_neighbors.append(neighbor)
                start_change_propagation_timer(qm, ctx, neighbor, TimerScope.INTRASITE)
        else:
            qm.bsc_neighbors = [n for n in qm.bsc_neighbors if n.machine_name != path_name]
    return st.MQ_OK, False
