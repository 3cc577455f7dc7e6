"""The [MS-MQDS] events MC-MQDSRP raises and handles, modelled on the local directory store.

[MS-MQDS] is not among the documents here, so this module is the small, documented model the
handlers stand on (register entries E-180 .. E-189):

* Create / Update / Delete / Read Directory Object and Reset Directory Partition act on the
  node's :class:`~mqspec.refimpl.directory.DirectoryStore` and record a DirectoryOperation effect.
* When a handler raises Create / Update / Delete Directory Object with ``iReplicate`` true (the
  object authority changing its own partition), the MQDS server then raises Propagate Directory
  Change (3.1.7.1.2) with the same arguments: that is the only way the text gives for a change
  applied at the authority to reach the neighbors' AvailableChangeCollection (E-180).
* :func:`directory_client_request` is the MQDS server receiving a directory client's create,
  update or delete: at the object authority it applies the change under Read Next Sequence
  Number (3.1.7.1.3) and raises Propagate Directory Change; elsewhere it raises Change Remote
  Object (3.1.7.1.1), as 4.3 describes (E-181).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from mqspec.model.errors import ModelError
from mqspec.model.guid import Guid
from mqspec.model.mqdsrp_changes import unchecked_constructor
from mqspec.model.propids import PROPIDS, ObjectType
from mqspec.model.propvalue import Property
from mqspec.model.seqnum import SequenceNumber

from . import status as st
from .effects import Context, DirectoryOperation, RequestCompleted
from .mqdsrp_state import PEC_PARTITION_ID, SCOPE_ENTERPRISE, SCOPE_SITE, QueueManager

P = {name: pdef.propid for name, pdef in PROPIDS.items()}

#: the property a DirectoryChange of each type carries the object's GUID in (modelling E-182)
IDENTITY_PROPID = {
    ObjectType.MQDS_QUEUE: P["PROPID_Q_INSTANCE"],
    ObjectType.MQDS_MACHINE: P["PROPID_QM_MACHINE_ID"],
    ObjectType.MQDS_SITE: P["PROPID_S_SITEID"],
    ObjectType.MQDS_CN: P["PROPID_CN_GUID"],
    ObjectType.MQDS_ENTERPRISE: P["PROPID_E_ID"],
    ObjectType.MQDS_USER: P["PROPID_U_ID"],
    ObjectType.MQDS_ROUTINGLINK: P["PROPID_L_ID"],
}
#: "the object authority for enterprise-wide objects (Enterprise, Site, RoutingLink,
#: ConnectedNetwork, and User) is the PEC ... for site-wide objects (Machine and Queue) is the PSC" (1.3.1.2)
ENTERPRISE_TYPES = (
    ObjectType.MQDS_ENTERPRISE,
    ObjectType.MQDS_SITE,
    ObjectType.MQDS_ROUTINGLINK,
    ObjectType.MQDS_CN,
    ObjectType.MQDS_USER,
)


#: DirectoryOperation has no validators: built field by field (attrs' frozen __init__ goes
#: through object.__setattr__ per field), as every replica records two per change it applies
_directory_operation = unchecked_constructor(DirectoryOperation)


def _record(
    qm: QueueManager, ctx: Context, operation: str, status: int, *, object_type: int | None = None,
    path_name: str | None = None, guid: Guid | None = None, partition_id: Guid | None = None,
    seq_number: SequenceNumber | None = None,
) -> None:
    # every caller passes the SequenceNumber it was given (or none): the trace carries its value
    ctx.emit(_directory_operation(
        qm.machine_name, operation, status, object_type, path_name, guid, partition_id,
        seq_number.value if seq_number is not None else None,
    ))


def create_directory_object(
    qm: QueueManager, ctx: Context, object_type: int, path_name: str | None,
    properties: Sequence[Property], partition_id: Guid, seq_number: SequenceNumber, replicate: bool,
    guid: Guid | None = None,
) -> int:
    """[MS-MQDS] Create Directory Object (as raised by 3.1.7.2.5 and 3.1.7.2.8); see E-180."""
    # the store builds its own PROPID -> value dict from the Property values
    status = qm.directory.create(object_type, path_name, guid, properties, partition_id, seq_number)
    _record(qm, ctx, "create", status, object_type=object_type, path_name=path_name, guid=guid,
            partition_id=partition_id, seq_number=seq_number)
    if status == st.MQ_OK and replicate:
        from .mqdsrp_common import propagate_directory_change

        propagate_directory_change(qm, ctx, 0x00, object_type, path_name, None, partition_id,
                                   tuple(properties), seq_number)
    return status


def update_directory_object(
    qm: QueueManager, ctx: Context, object_type: int, path_name: str | None, guid: Guid | None,
    properties: Sequence[Property], partition_id: Guid, seq_number: SequenceNumber, replicate: bool,
) -> int:
    """[MS-MQDS] Update Directory Object (as raised by 3.1.7.2.6 and 3.1.7.2.8); see E-180."""
    status = qm.directory.update(object_type, path_name, guid, properties, partition_id, seq_number)
    _record(qm, ctx, "update", status, object_type=object_type, path_name=path_name, guid=guid,
            partition_id=partition_id, seq_number=seq_number)
    if status == st.MQ_OK and replicate:
        from .mqdsrp_common import propagate_directory_change

        propagate_directory_change(qm, ctx, 0x01, object_type, path_name, guid, partition_id,
                                   tuple(properties), seq_number)
    return status


def delete_directory_object(
    qm: QueueManager, ctx: Context, object_type: int, path_name: str | None, guid: Guid | None,
    scope: int, replicate: bool, partition_id: Guid | None = None,
    seq_number: SequenceNumber | None = None,
) -> tuple[int, object | None]:
    """[MS-MQDS] Delete Directory Object (as raised by 3.1.7.2.7); returns the status and the object.

    The event's arguments in 3.1.7.2.7 carry no partition or sequence number; they are passed
    here only so that, with ``replicate``, the raised Propagate Directory Change has them (E-180).
    """
    status, removed = qm.directory.delete(object_type, path_name, guid)
    _record(qm, ctx, "delete", status, object_type=object_type, path_name=path_name,
            guid=getattr(removed, "guid", guid))
    if status == st.MQ_OK and replicate and partition_id is not None and seq_number is not None:
        from .mqdsrp_common import propagate_directory_change

        removed_guid = getattr(removed, "guid", guid)
        # the deleted object's path name too: Handle Directory Delete (iPostDelete true) matches
        # a BSC neighbor by iPathName, which a delete by GUID alone would leave NULL (3.1.7.2.7)
        removed_path = getattr(removed, "path_name", None) or path_name
        propagate_directory_change(qm, ctx, 0x02, object_type, removed_path, removed_guid, partition_id,
                                   delete_properties(scope, int(object_type)), seq_number)
    return status, removed


def read_directory_object(
    qm: QueueManager, ctx: Context, object_type: int, path_name: str | None, guid: Guid | None,
) -> int:
    """[MS-MQDS] Read Directory Object, as Handle Directory Sync (3.1.7.2.8) uses it: does it exist?"""
    obj = qm.directory.find(guid=guid, path_name=path_name, object_type=object_type)
    status = st.MQ_OK if obj is not None else st.MQDS_OBJECT_NOT_FOUND
    _record(qm, ctx, "read", status, object_type=object_type, path_name=path_name, guid=guid)
    return status


def reset_directory_partition(qm: QueueManager, ctx: Context, partition_id: Guid, operation: int) -> int:
    """MQDS Reset Directory Partition (3.3.7.10 operation 1, 3.3.7.11 operation 2)."""
    status = qm.directory.reset_partition(partition_id, operation)
    _record(qm, ctx, f"reset{operation}", status, partition_id=partition_id)
    return status


def delete_properties(scope: int, object_type: int) -> tuple[Property, ...]:
    """The two values a delete carries: "iScope := the property value of the first element",
    "iObjectType := the property value of the second element" (3.1.7.1.2, 3.2.7.2)."""
    return (Property(P["PROPID_D_SCOPE"], scope), Property(P["PROPID_D_OBJTYPE"], object_type))


@attrs.frozen
class ClientRequest:
    """A directory client's create / update / delete, as the MQDS server at ``node`` receives it.

    ``partition`` is the partition the object belongs to (the MQDS server derives it from the
    object's path, as 4.3 describes for "C14\\testq"; the simulator resolves it).
    """

    operation: str  # create | update | delete
    object_type: ObjectType
    partition: Guid
    path_name: str | None = None
    guid: Guid | None = None
    properties: tuple[Property, ...] = ()
    scope: int = SCOPE_ENTERPRISE

    def __attrs_post_init__(self) -> None:
        # a request the authority does not own travels as a DirectoryChange, which names its object by PathName or
        # by GuidIdentifier, "This field MUST NOT be present if UseGuid is set to 0x01" (2.2.4): a request naming
        # both would be applied by its path at the authority and by one name only elsewhere
        if self.path_name is not None and self.guid is not None:
            raise ModelError("a client request names its object by path_name or by guid, not both")


def directory_client_request(qm: QueueManager, ctx: Context, request: ClientRequest, new_guid: Guid) -> int:
    """The MQDS server handles a directory client's change request; returns the client request number.

    At the authority the change is applied with the next sequence number and propagated
    (3.1.7.1.3, 3.1.7.1.2); elsewhere Change Remote Object (3.1.7.1.1) sends it to the authority
    and the result arrives later as a RequestCompleted effect.
    """
    from .mqdsrp_common import change_remote_object, read_next_sequence_number

    number = qm.next_client_request
    qm.next_client_request += 1
    partition = qm.find_partition(request.partition)
    op = {"create": 0x00, "update": 0x01, "delete": 0x02}[request.operation]
    properties = request.properties
    if request.operation == "create":
        properties = _with_identity(request.object_type, properties, new_guid)
    elif request.operation == "delete":
        properties = delete_properties(request.scope, int(request.object_type))
    if partition is not None and qm.is_authority_of(partition):
        seq = read_next_sequence_number(qm, ctx, request.partition)
        if request.operation == "create":
            status = create_directory_object(qm, ctx, request.object_type, request.path_name, properties,
                                             request.partition, seq, True)
        elif request.operation == "update":
            status = update_directory_object(qm, ctx, request.object_type, request.path_name, request.guid,
                                             properties, request.partition, seq, True)
        else:
            status, _ = delete_directory_object(qm, ctx, request.object_type, request.path_name, request.guid,
                                                request.scope, True, request.partition, seq)
        ctx.emit(RequestCompleted(qm.machine_name, number, status))
        return number
    change_remote_object(qm, ctx, op, request.object_type, request.path_name, request.guid,
                         request.partition, properties, client_request=number)
    return number


def _with_identity(object_type: ObjectType, properties: tuple[Property, ...], guid: Guid) -> tuple[Property, ...]:
    """Add the object's identity property (its GUID) to a create when the client gave none (E-182)."""
    pid = IDENTITY_PROPID[object_type]  # every ObjectType has one
    if any(p.propid == pid for p in properties):
        return properties
    return (*properties, Property(pid, guid))


def default_scope(object_type: ObjectType, partition: Guid) -> int:
    """SCOPE_ENTERPRISE for enterprise-partition objects and queues, SCOPE_SITE otherwise (E-183)."""
    if partition == PEC_PARTITION_ID or object_type is ObjectType.MQDS_QUEUE:
        return SCOPE_ENTERPRISE
    return SCOPE_SITE
