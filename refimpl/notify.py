"""MS-MQCN wired to the simulated MC-MQDSRP enterprise of :mod:`.world` (opt-in).

MS-MQCN exists to close one loop: a directory change to a queue or machine object reaches the
queue manager that owns it. On Windows NT and 2000 "the MSMQ Directory Service notifies the
destination queue manager" (note <1>): when the object authority (the PSC of the object's site)
applies a create, update or delete of such an object, its directory service sends a version
0x01 notification to the owner's ``notify_queue$``. Later Windows versions have "the local queue
manager" send version 0x02 instead; :func:`install_notifier` with ``version=2`` models that as
the authority's own queue manager sending it, naming itself as DomainController.

Nothing here runs unless a caller opts in: :func:`add_queue_manager` (``World.add_queue_manager``)
adds a queue manager that is not a directory server, with its notification queue, and installs a
:class:`Notifier` in ``World.notifier`` (the World calls it after performing each
DirectoryOperation effect). A World without queue managers behaves and traces exactly as before.

* :class:`Notifier`: at the authority, turns a DirectoryOperation on an object owned by a
  registered queue manager into Send Change Notification (3.3.4.1) and puts the message on the
  network;
* :class:`NotifiedQueueManager`: the owner; its Dequeue Message loop (3.2.3) hands each message
  to Receive Change Notification (3.2.5), and its batch timer (notes <3>/<13>) fires through the
  World's scheduler;
* :class:`WorldDirectory`: the Directory Read of 3.2.5.2 on a directory server of the World.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs
from mqspec.model.errors import ModelError
from mqspec.model.guid import Guid
from mqspec.model.mqcn import Version
from mqspec.model.propids import PROPID_BY_VALUE, PROPIDS, ObjectType
from mqspec.model.propvalue import Property, check_value

from . import status as st
from .clock import TimerHandle
from .effects import (
    CancelTimer,
    Clarified,
    Context,
    DirectoryOperation,
    Mode,
    StartTimer,
    TimerKey,
)
from .mqcn_client import (
    CALG_MD5,
    DirectoryObject,
    NotificationClient,
    Operation,
    send_change_notification,
)
from .mqcn_effects import EnqueueNotification
from .mqcn_server import (
    NOTIFY_QUEUE_NUMBER,
    NOTIFY_QUEUE_PATH,
    batch_timer_expired,
    receive_change_notification,
    server_initialization,
)
from .mqcn_state import QueueManager, ReceivedMessage, ServerOptions, owned_by
from .transport import MsmqMessage

if TYPE_CHECKING:
    from .world import World

P = {name: pdef.propid for name, pdef in PROPIDS.items()}
QUEUE, MACHINE = int(ObjectType.MQDS_QUEUE), int(ObjectType.MQDS_MACHINE)
#: directory bookkeeping, never "a property that was modified" (MC-MQDSRP keeps these itself)
_BOOKKEEPING = frozenset(P[n] for n in (
    "PROPID_Q_INSTANCE", "PROPID_Q_PARTITIONID", "PROPID_Q_SEQNUM", "PROPID_Q_QMID", "PROPID_Q_PATHNAME",
    "PROPID_QM_MACHINE_ID", "PROPID_QM_PARTITIONID", "PROPID_QM_SEQNUM", "PROPID_QM_PATHNAME",
))


@attrs.frozen(kw_only=True)
class NotificationMsmqMessage(MsmqMessage):
    """An MSMQ message that also carries Message.AuthenticationLevel (3.2.5.1 reads it)."""

    authentication_level: int = 0


@attrs.frozen
class QueueManagerTimerFired:
    """A timer of an MS-MQCN queue manager expired (a World scheduler event)."""

    node: str
    timer: TimerKey

    def fire(self, world: World) -> None:
        world.queue_managers[self.node.casefold()].timer_fired(world, self.timer)


class WorldDirectory:
    """The Directory Read event (3.2.5.2) against the directory servers of a World.

    A server is named by machine name (DomainController) or queue manager GUID (GuidMasterId);
    a server that is unknown or down answers nothing (clarification E-242).
    """

    def __init__(self, world: World) -> None:
        self.world = world

    def _store(self, server: str | Guid) -> Any:
        nodes = self.world.nodes
        if isinstance(server, Guid):
            name = next((n for n, qm in nodes.items() if qm.identifier == server), None)
        else:
            name = next((n for n in nodes if n.casefold() == server.casefold()), None)
        if name is None or not self.world.up.get(name):
            return None
        return nodes[name].directory

    def read(
        self, server: str | Guid, object_type: ObjectType, identifier: Guid | None, path_name: str | None = None
    ) -> Mapping[int, object] | None:
        store = self._store(server)
        if store is None:
            return None
        obj = store.find(guid=identifier, path_name=None if identifier is not None else path_name,
                         object_type=int(object_type))
        values = dict(obj.properties) if obj is not None else None
        _observe(self.world, "read", str(server), values)
        return values

    def queues_owned_by(self, server: str | Guid, owner: Guid, machine_name: str) -> Sequence[Guid]:
        store = self._store(server)
        if store is None:
            return []
        return [o.guid for o in store.objects.values()
                if o.object_type == QUEUE and owned_by(o.properties, owner, machine_name)]


class NotifiedQueueManager:
    """A queue manager of the World that runs the MS-MQCN server side (not a directory server)."""

    def __init__(self, state: QueueManager, site: str, mode: Mode) -> None:
        self.state = state
        self.site = site
        self.mode = mode
        self._timers: dict[TimerKey, TimerHandle] = {}

    @property
    def name(self) -> str:
        return self.state.machine_name

    @property
    def queues(self) -> dict[Guid, Any]:
        """QueueManager.QueueCollection."""
        return self.state.queue_collection

    def find_queue(self, pathname: str) -> Any:
        return self.state.find_queue(pathname=pathname)

    def drain(self, world: World) -> None:
        """The Dequeue Message loop of 3.2.3: each message of notify_queue$ goes to 3.2.5."""
        if self.state.notification_queue is None:
            return  # modelling E-241: the queue was never opened, its messages wait
        directory = WorldDirectory(world)
        while (msg := world.network.dequeue(self.name, NOTIFY_QUEUE_PATH)) is not None:
            received = ReceivedMessage(
                body=msg.body, sender_identifier_type=msg.sender_identifier_type,
                sender_identifier=msg.sender_identifier,
                authentication_level=getattr(msg, "authentication_level", 0), source_machine=msg.source_machine,
            )
            world.note("mqcn_receive", node=self.name, body=msg.body.hex(), **{"from": msg.source_machine})
            _observe(world, "receive", self.name, received)
            self.run(world, lambda ctx, m=received: receive_change_notification(self.state, ctx, m, directory))

    def timer_fired(self, world: World, timer: TimerKey) -> None:
        self._timers.pop(timer, None)
        world.note("mqcn_timer", node=self.name, timer=timer.kind)
        self.run(world, lambda ctx: batch_timer_expired(self.state, ctx, WorldDirectory(world)))

    def run(self, world: World, handler: Callable[[Context], object]) -> None:
        """Run one handler and perform its effects (timers on the World's scheduler, the rest traced)."""
        ctx = Context(self.name, self.mode, world.now)
        handler(ctx)
        _observe(world, "handled", self.name, ctx.effects)
        for effect in ctx.effects:
            if type(effect) is StartTimer:
                old = self._timers.pop(effect.timer, None)
                if old is not None:
                    world.scheduler.cancel(old)
                self._timers[effect.timer] = world.scheduler.schedule_in(
                    effect.delay, QueueManagerTimerFired(self.name, effect.timer))
            elif type(effect) is CancelTimer:
                old = self._timers.pop(effect.timer, None)
                if old is not None:
                    world.scheduler.cancel(old)
            else:
                _trace(world, effect)


def _trace(world: World, effect: object) -> None:
    if type(effect) is Clarified:
        world.note("clarified", node=effect.node, erratum=effect.erratum, detail=effect.detail)
        return
    fields = {f.name: _plain(getattr(effect, f.name)) for f in attrs.fields(type(effect))
              if f.name not in ("node", "message")}
    world.note("mqcn", node=getattr(effect, "node", ""), effect=type(effect).__name__, **fields)


def _observe(world: World, event: str, node: str, detail: object) -> None:
    """Show an MS-MQCN step to the World's observers that watch MS-MQCN (a ``mqcn`` method):
    ``notify`` (iOperation, iDirectoryObject, the client), ``send`` (EnqueueNotification),
    ``receive`` (the ReceivedMessage), ``read`` (what a Directory Read returned) and ``handled``
    (a queue manager handler's effects). Used by the trace recorder (mqspec.oracle.record_mqcn)."""
    for observer in world.observers:
        hook = getattr(observer, "mqcn", None)
        if hook is not None:
            hook(world, event, node, detail)


def _plain(value: object) -> object:
    if isinstance(value, Guid):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, int | str | float | bool) or value is None:
        return value
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return repr(value)


class Notifier:
    """The directory side of note <1>: a World.notifier callback (see the module docstring).

    ``version`` 1: the authority's directory service sends Notification Updates (Windows NT,
    2000); 2: the authority's queue manager sends a Notification Body naming itself as
    DomainController. ``sent`` keeps every EnqueueNotification, for tests and traces.
    """

    def __init__(self, *, version: int = 1, mode: Mode | None = None, hash_algorithm: int = CALG_MD5) -> None:
        self.version = Version(version)
        self.mode = mode
        self.hash_algorithm = hash_algorithm
        self.clients: dict[str, NotificationClient] = {}
        #: object GUID -> (owner machine, properties when last notified): what an update modified
        self.known: dict[Guid, tuple[str, dict[int, object]]] = {}
        self.sent: list[EnqueueNotification] = []

    def __call__(self, world: World, node: str, op: DirectoryOperation) -> None:
        if op.status != st.MQ_OK or op.operation not in ("create", "update", "delete"):
            return
        if op.object_type not in (QUEUE, MACHINE):
            return
        qm = world.nodes.get(node)
        if qm is None:
            return
        target = self._target(world, qm, op)
        if target is None:
            return
        owner, operation, obj = target
        # only the object authority notifies: the PSC of the owner's site (MC-MQDSRP 1.3.1.2)
        partition = qm.find_partition(op.partition_id or world.site_guid(owner.site))
        if partition is None or not qm.is_authority_of(partition):
            return
        client = self._client(qm)
        ctx = Context(node, self.mode or world.mode, world.now)
        _observe(world, "notify", node, (operation, obj, client))
        send_change_notification(client, ctx, operation, obj)
        for effect in ctx.effects:
            if type(effect) is EnqueueNotification:
                self._send(world, effect)
            else:
                _trace(world, effect)

    def _client(self, qm: Any) -> NotificationClient:
        client = self.clients.get(qm.machine_name)
        if client is None:
            client = NotificationClient(machine_name=qm.machine_name, identifier=qm.identifier, version=self.version,
                                        directory_service_name=qm.machine_name,
                                        directory_service_guid=qm.identifier, hash_algorithm=self.hash_algorithm)
            self.clients[qm.machine_name] = client
        return client

    def _target(self, world: World, qm: Any, op: DirectoryOperation) -> tuple[NotifiedQueueManager, Operation,
                                                                                  DirectoryObject] | None:
        """The owner, the iOperation and the iDirectoryObject of a directory change (None: no notification)."""
        if op.object_type == QUEUE and op.operation == "delete":
            known = self.known.pop(op.guid, None) if op.guid is not None else None
            owner = _by_name(world, known[0]) if known else _owner_of_path(world, op.path_name)
            if owner is None or op.guid is None:
                return None
            return owner, Operation.QUEUE_DELETION, DirectoryObject(
                object_type=QUEUE, identifier=op.guid, owner=owner.state.identifier, path_name=op.path_name)
        if op.operation == "delete" or (op.object_type == MACHINE and op.operation == "create"):
            return None  # MS-MQCN has no notification for a machine created or deleted
        found = qm.directory.find(guid=op.guid, path_name=op.path_name, object_type=op.object_type)
        if found is None:
            return None
        values = dict(found.properties)
        if op.object_type == QUEUE:
            owner = _owner_of_queue(world, values, found.path_name)
            operation = Operation.QUEUE_CREATION if op.operation == "create" else Operation.QUEUE_UPDATE
        else:
            owner = next((m for m in world.queue_managers.values()
                          if m.state.identifier == found.guid
                          or (found.path_name or "").casefold() == m.name.casefold()), None)
            operation = Operation.QUEUE_MANAGER_UPDATE
        if owner is None:
            return None
        before = self.known.get(found.guid)
        modified = None
        if operation is not Operation.QUEUE_CREATION and before is not None:
            modified = tuple(pid for pid, value in values.items()
                             if pid not in _BOOKKEEPING and before[1].get(pid, _MISSING) != value)
        self.known[found.guid] = (owner.name, values)
        properties = tuple(Property(pid, v) for pid, v in values.items() if _sendable(pid, v))
        obj = DirectoryObject(object_type=op.object_type, identifier=found.guid, owner=owner.state.identifier,
                              path_name=found.path_name, properties=properties, modified=modified)
        return owner, operation, obj

    def _send(self, world: World, effect: EnqueueNotification) -> None:
        """Perform Enqueue Message: put the notification on the simulated network."""
        self.sent.append(effect)
        _observe(world, "send", effect.node, effect)
        target = world.network.resolve(effect.format_name)
        if target is None:
            world.note("unsent", node=effect.node, why=f"no queue {effect.format_name}")
            return
        msg = NotificationMsmqMessage(
            source_machine=effect.node, destination_machine=target[0], destination_format_name=effect.format_name,
            body=effect.body, time_to_reach_queue=effect.time_to_reach_queue, hash_algorithm=effect.hash_algorithm,
            sender_identifier_type=effect.sender_identifier_type, sender_identifier=effect.sender_identifier,
            authentication_level=int(effect.authentication_level),
        )
        world.note("mqcn_send", node=effect.node, to=target[0], body=effect.body.hex())
        world.network.send(msg)


_MISSING = object()


def _sendable(propid: int, value: object) -> bool:
    pdef = PROPID_BY_VALUE.get(propid)
    if pdef is None:
        return False
    try:
        check_value(pdef, value)
    except ModelError:
        return False
    return True


def _by_name(world: World, name: str) -> NotifiedQueueManager | None:
    return world.queue_managers.get(name.casefold())


def _owner_of_path(world: World, path: str | None) -> NotifiedQueueManager | None:
    """The queue manager a queue path name ``machine\\queue`` belongs to."""
    if not path or "\\" not in path:
        return None
    return _by_name(world, path.split("\\", 1)[0])


def _owner_of_queue(world: World, values: Mapping[int, object], path: str | None) -> NotifiedQueueManager | None:
    for m in world.queue_managers.values():
        if owned_by(values, m.state.identifier, m.name):
            return m
    return _owner_of_path(world, path)


def install_notifier(world: World, *, version: int = 1, mode: Mode | None = None,
                     hash_algorithm: int = CALG_MD5) -> Notifier:
    """Add a :class:`Notifier` to ``world.notifier`` (replacing an earlier one) and return it."""
    world.notifier[:] = [cb for cb in world.notifier if not isinstance(cb, Notifier)]
    notifier = Notifier(version=version, mode=mode, hash_algorithm=hash_algorithm)
    world.notifier.append(notifier)
    return notifier


def notifier_of(world: World) -> Notifier | None:
    return next((cb for cb in world.notifier if isinstance(cb, Notifier)), None)


def add_queue_manager(world: World, name: str, site: str, *, mode: Mode | None = None,
                      options: ServerOptions | None = None) -> NotifiedQueueManager:
    """Add queue manager ``name`` of ``site``: its machine, its notify_queue$, and 3.2.3 initialization.

    Its identifier is the one ``create_machine`` gives the machine object (``qm:<name>``), so the
    directory's machine object and this queue manager are the same machine. Installs a version
    0x01 :class:`Notifier` if the World has none.
    """
    options = options or ServerOptions()
    identifier = Guid.from_name(f"qm:{name}")
    world.network.add_machine(name, identifier)
    psc = next((n for n, qm in world.nodes.items() if qm.is_psc and qm.site_identifier == world.site_guid(site)),
               None)
    state = QueueManager(machine_name=name, identifier=identifier, options=options, directory_server=psc,
                         notification_queue_exists=not options.workgroup)
    if not options.workgroup:  # note <8>: in workgroup mode the queue is not created
        world.network.add_queue(name, NOTIFY_QUEUE_PATH, NOTIFY_QUEUE_NUMBER)
    node = NotifiedQueueManager(state, site, mode or world.mode)
    world.queue_managers[name.casefold()] = node
    if notifier_of(world) is None:
        install_notifier(world)
    world.note("mqcn_start", node=name)
    node.run(world, lambda ctx: server_initialization(state, ctx))
    return node


def directory_server_ids(world: World) -> frozenset[Guid]:
    """The queue manager GUIDs of the World's directory servers (for ServerOptions.directory_servers)."""
    return frozenset(qm.identifier for qm in world.nodes.values())
