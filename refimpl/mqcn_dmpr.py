"""The [MS-MQDMPR] events the MS-MQCN server raises, modelled on its QueueManager (modelling E-233).

[MS-MQDMPR] is not among the documents here. MS-MQCN raises four of its events and one of the
directory: Create Queue and Delete Queue (with ``iSkipDirectory``), the update of a Queue of
QueueCollection or of the QueueManager's attributes, and Directory Read (3.2.5.2). Each acts on
the :class:`~mqspec.refimpl.mqcn_state.QueueManager` it is given and records an effect
(:mod:`.mqcn_effects`) with the status it returned.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs
from mqspec.model.errors import ModelError
from mqspec.model.guid import Guid
from mqspec.model.propids import ObjectType

from . import status as st
from .effects import Context
from .mqcn_effects import (
    CreateQueue,
    DeleteQueue,
    DirectoryRead,
    Disregarded,
    UpdateQueue,
    UpdateQueueManager,
)
from .mqcn_state import (
    DirectoryReader,
    Queue,
    QueueManager,
    queue_attributes,
    queue_manager_attributes,
)

MQDS_QUEUE = int(ObjectType.MQDS_QUEUE)


def directory_read(
    qm: QueueManager, ctx: Context, directory: DirectoryReader, server: str | Guid, object_type: int,
    identifier: Guid | None, attributes: tuple[str, ...], *, path_name: str | None = None,
) -> dict[str, object] | None:
    """Directory Read: iDirectoryObjectType, iFilter { Identifier == ... }, iAttributeList.

    Returns the listed attributes (None for one the object lacks), or None when the server or
    the object is not found (clarification E-242: the text gives no outcome for that).
    """
    values = directory.read(server, ObjectType(object_type), identifier, path_name)
    status = st.MQ_OK if values is not None else st.MQDS_OBJECT_NOT_FOUND
    ctx.emit(DirectoryRead(qm.machine_name, str(server), object_type, identifier, path_name, attributes, status))
    if values is None:
        return None
    read = queue_attributes if object_type == MQDS_QUEUE else queue_manager_attributes
    return read(values, attributes)


def create_queue(qm: QueueManager, ctx: Context, attributes: Mapping[str, object], *, skip_directory: bool) -> int:
    """[MS-MQDMPR] Create Queue with iSkipDirectory (modelling E-233): add the queue to QueueCollection.

    A queue needs its Identifier; one already in the collection is not replaced
    (MQ_ERROR_QUEUE_EXISTS: a repeated notification changes nothing).
    """
    identifier = attributes.get("identifier")
    if not isinstance(identifier, Guid):
        ctx.emit(Disregarded(qm.machine_name, "3.2.5", "Create Queue without a queue Identifier"))
        return st.MQ_ERROR
    try:
        queue = Queue(**{k: v for k, v in attributes.items()})
    except (TypeError, ModelError) as exc:
        raise ModelError(f"not Queue attributes: {attributes!r}") from exc
    status = st.MQ_ERROR_QUEUE_EXISTS if identifier in qm.queue_collection else st.MQ_OK
    if status == st.MQ_OK:
        qm.queue_collection[identifier] = queue
    ctx.emit(CreateQueue(qm.machine_name, queue, skip_directory, status))
    return status


def update_queue(
    qm: QueueManager, ctx: Context, queue: Queue | None, new: Mapping[str, object], present: set[str],
    *, identifier: Guid | None,
) -> int:
    """Set a queue's attributes; ``present`` are those the notification or the directory gave.

    An attribute whose PROPID is absent ("PropertyValue[ IndexOf(PROPID_Q_QUOTA) ]" with no
    PROPID_Q_QUOTA) keeps its value (clarification E-232); the literal reading assigns it the
    nothing IndexOf finds (None). A queue not in QueueCollection is not updated (E-233).
    """
    if queue is None:
        ctx.emit(UpdateQueue(qm.machine_name, identifier, (), st.MQ_ERROR_QUEUE_NOT_FOUND))
        return st.MQ_ERROR_QUEUE_NOT_FOUND
    changes = _changes(ctx, new, present, "E-232")
    changes = {k: v for k, v in changes.items() if k != "identifier" or v == queue.identifier}
    qm.queue_collection[queue.identifier] = attrs.evolve(queue, **changes)
    ctx.emit(UpdateQueue(qm.machine_name, queue.identifier, tuple(changes.items()), st.MQ_OK))
    return st.MQ_OK


def update_queue_manager(qm: QueueManager, ctx: Context, new: Mapping[str, object], present: set[str]) -> None:
    """Set the QueueManager's attributes (same absent-value rule as :func:`update_queue`)."""
    changes = _changes(ctx, new, present, "E-232")
    for name, value in changes.items():
        setattr(qm, name, value)
    ctx.emit(UpdateQueueManager(qm.machine_name, tuple(changes.items())))


def _changes(ctx: Context, new: Mapping[str, object], present: set[str], erratum: str) -> dict[str, object]:
    if ctx.literal:  # clarification E-232 (the caller's erratum, which ctx.clarify reports)
        return dict(new)
    absent = [name for name in new if name not in present]
    if absent:
        ctx.clarify(erratum, f"absent {', '.join(absent)} kept")
    return {name: value for name, value in new.items() if name in present}


def delete_queue(qm: QueueManager, ctx: Context, identifier: Guid | None, *, skip_directory: bool) -> int:
    """[MS-MQDMPR] Delete Queue: remove the queue from QueueCollection (E-233: absent, nothing happens)."""
    removed = qm.queue_collection.pop(identifier, None) if identifier is not None else None
    status = st.MQ_OK if removed is not None else st.MQ_ERROR_QUEUE_NOT_FOUND
    ctx.emit(DeleteQueue(qm.machine_name, identifier, skip_directory, status))
    return status
