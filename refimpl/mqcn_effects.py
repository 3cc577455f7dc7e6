"""The effects of the MS-MQCN handlers, as data (the MC-MQDSRP ones are in :mod:`.effects`).

The handlers use the same :class:`~mqspec.refimpl.effects.Context` (node, mode, clock, effects)
and its StartTimer / CancelTimer / Clarified; this module adds what MS-MQCN raises:

* the [MS-MQDMPR] events the text names: Open Queue (3.2.3, 3.3.3), Create Queue / Delete Queue
  with ``iSkipDirectory`` (3.2.5.1, 3.2.5.2), the updates of a Queue or of the QueueManager, the
  Directory Read of 3.2.5.2, and Enqueue Message of a notification (3.3.5.3);
* two records a reader of a trace needs: a message the server disregarded and why, and the
  properties it ignored ("All other PROPIDs are not used, and they MUST be ignored").
"""

from __future__ import annotations

from typing import Any

import attrs
from mqspec.model.guid import Guid

from .mqcn_state import AuthenticationLevel, Queue

#: the timer of the batching of notes <3>/<13>
BATCH_TIMER_KIND = "mqcn_batch"


@attrs.frozen
class OpenQueue:
    """[MS-MQDMPR] Open Queue: iFormatName, iRequiredAccess, iSharedMode and what it returned."""

    node: str
    format_name: str
    access: str  # "ReceiveAccess" (3.2.3) | "SendAccess" (3.3.3)
    share_mode: str  # "DenyNone"
    status: int
    descriptor: int | None


@attrs.frozen
class CreateQueue:
    """[MS-MQDMPR] Create Queue raised with iQueue and iSkipDirectory (3.2.5.1, 3.2.5.2)."""

    node: str
    queue: Queue
    skip_directory: bool
    status: int


@attrs.frozen
class UpdateQueue:
    """A Queue of QueueManager.QueueCollection updated: (attribute, new value) pairs."""

    node: str
    identifier: Guid | None
    changes: tuple[tuple[str, Any], ...]
    status: int


@attrs.frozen
class DeleteQueue:
    """[MS-MQDMPR] Delete Queue raised with iQueue (by identifier) and iSkipDirectory."""

    node: str
    identifier: Guid | None
    skip_directory: bool
    status: int


@attrs.frozen
class UpdateQueueManager:
    """The QueueManager's attributes updated (3.2.5.1 command 0x01 / 3.2.5.2 event 4)."""

    node: str
    changes: tuple[tuple[str, Any], ...]


@attrs.frozen
class DirectoryRead:
    """A Directory Read event (3.2.5.2): iDirectoryObjectType, iFilter, iAttributeList, the outcome."""

    node: str
    server: str
    object_type: int
    identifier: Guid | None
    path_name: str | None
    attributes: tuple[str, ...]
    status: int


@attrs.frozen
class Disregarded:
    """The server disregarded a Change Notification Message (or one update of it) and says why."""

    node: str
    section: str
    reason: str


@attrs.frozen
class IgnoredProperties:
    """Properties of a Notification Update the server MUST ignore (or the text gives no use)."""

    node: str
    section: str
    propids: tuple[int, ...]


@attrs.frozen
class EnqueueNotification:
    """Enqueue Message of a notification (3.3.5.3): the Message attributes the section sets.

    ``body`` is the Message.Body bytes (the Change Notification Message plus one unused byte);
    ``message`` the model value it encodes.
    """

    node: str
    destination: Guid  # the queue manager the OutgoingQueue leads to (clarification E-244)
    format_name: str  # DestinationFormatName: NOTIFY_QUEUE_PRIVATE of the destination
    descriptor: int  # openNotifyQueueDescriptor
    message: Any  # a mqspec.model.mqcn.ChangeNotificationMessage
    body: bytes
    time_to_reach_queue: int  # seconds: "TimeToReachQueue := 5 minutes"
    hash_algorithm: int
    authentication_level: AuthenticationLevel
    sender_identifier_type: int
    sender_identifier: Guid
    delivery: str = "Express"
    message_class: str = "Normal"


MqcnEffect = (
    OpenQueue | CreateQueue | UpdateQueue | DeleteQueue | UpdateQueueManager | DirectoryRead | Disregarded
    | IgnoredProperties | EnqueueNotification
)
