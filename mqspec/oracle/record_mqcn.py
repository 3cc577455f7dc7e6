"""Writing the MS-MQCN part of a simulated enterprise's run as a published trace (format 2).

:class:`MqcnRecorder` registers with ``World.observers`` and watches the MS-MQCN wiring of
:mod:`mqspec.refimpl.notify` (its ``mqcn`` hook): at the object authority that notifies, each
Send Change Notification (``notify``: iOperation and iDirectoryObject) and the message it sends
(``notification``, with the destination queue and the Message attributes of 3.3.5.3); at each
queue manager, each message it dequeues (``notification`` with the rMessage attributes and, when
it made a Directory Read, what the read returned: ``read``) and the [MS-MQDMPR] events it raised
(``queue``). Nodes are declared as they first appear, with their ``mqcn`` side, and ``observes``
the kinds written for them. The trace it writes is what ``mqspec check`` replays through
:mod:`mqspec.oracle.replay_mqcn_client` and :mod:`mqspec.oracle.replay_mqcn`.

Covered: the default queue manager options (processing both versions, or the versions set,
without batching); a batching queue manager (notes <3>/<13>) is recorded but not replayable.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mqspec.model.guid import Guid
from mqspec.model.jsonform import converter
from mqspec.model.propids import PROPID_BY_VALUE
from mqspec.model.propvalue import Property
from mqspec.refimpl.mqcn_effects import CreateQueue, DeleteQueue, UpdateQueue, UpdateQueueManager
from mqspec.refimpl.world import World

_OPERATION = {CreateQueue: "create", UpdateQueue: "update", DeleteQueue: "delete",
              UpdateQueueManager: "update_queue_manager"}
_UNSET = object()


class MqcnRecorder:
    """A World observer writing MS-MQCN trace records (see the module docstring)."""

    def __init__(self, world: World, write: Callable[[dict[str, Any]], object]) -> None:
        self.write = write
        self.declared: set[str] = set()
        self.receiving: dict[str, dict[str, Any]] = {}  # queue manager -> its dequeued message, until handled
        self.read: Any = _UNSET
        world.observers.append(self)

    # --- the MC-MQDSRP observer protocol of World: nothing of MS-MQCN happens there ------------------

    def before(self, *_: Any) -> None:
        pass

    def effect(self, *_: Any) -> None:
        pass

    def after(self, *_: Any) -> None:
        pass

    def crashed(self, *_: Any) -> None:
        pass

    def skipped(self, *_: Any) -> None:
        pass

    # --- MS-MQCN --------------------------------------------------------------------------------

    def mqcn(self, world: World, event: str, node: str, detail: Any) -> None:
        t = round(world.now, 6)
        if event == "notify":
            operation, obj, client = detail
            self._declare(t, node, {"identifier": str(client.identifier), "observes": ["notify", "notification"],
                                 "mqcn": {"side": "directory", "version": int(client.version),
                                          **({"directory_service": client.directory_service_name}
                                             if client.directory_service_name else {})}})
            record = {"event": "notify", "t": t, "node": node, "operation": operation.value,
                      "identifier": str(obj.identifier), "owner": str(obj.owner),
                      "properties": [_property(p) for p in obj.properties]}
            if obj.path_name is not None:
                record["path"] = obj.path_name
            if obj.modified is not None:
                record["modified"] = [_name(p) for p in obj.modified]
            self.write(record)
        elif event == "send":
            e = detail
            self.write({"event": "notification", "t": t, "node": node, "direction": "send", "body": e.body.hex(),
                        "queue": e.format_name, "timeout": e.time_to_reach_queue, "delivery": 0, "class": 0,
                        "hash_algorithm": e.hash_algorithm, "authentication": int(e.authentication_level),
                        "sender_id_type": e.sender_identifier_type, "sender_id": str(e.sender_identifier)})
        elif event == "receive":
            qm = world.queue_managers[node.casefold()].state
            versions = sorted(qm.options.versions)
            self._declare(t, node, {"identifier": str(qm.identifier), "observes": ["notification", "queue"],
                                 "mqcn": {"side": "queue_manager",
                                          **({"version": versions[0]} if len(versions) == 1 else {})}})
            m = detail
            self.receiving[node] = {"event": "notification", "t": t, "node": node, "direction": "receive",
                                    "body": m.body.hex(), "from": m.source_machine or None,
                                    "sender_id_type": m.sender_identifier_type,
                                    "sender_id": str(m.sender_identifier),
                                    "authentication": int(m.authentication_level)}
            self.read = _UNSET
        elif event == "read":
            self.read = detail
        elif event == "handled":
            received = self.receiving.pop(node, None)
            if received is not None:
                if self.read is not _UNSET:
                    received["read"] = None if self.read is None else [
                        _property(Property(pid, v)) for pid, v in self.read.items() if pid in PROPID_BY_VALUE]
                self.write(received)
            self.read = _UNSET
            for effect in detail:
                kind = _OPERATION.get(type(effect))
                if kind is None:
                    continue
                record = {"event": "queue", "t": t, "node": node, "operation": kind}
                identifier = effect.queue.identifier if kind == "create" else getattr(effect, "identifier", None)
                if isinstance(identifier, Guid):
                    record["identifier"] = str(identifier)
                if kind in ("update", "update_queue_manager"):
                    record["attributes"] = [name for name, _ in effect.changes]
                self.write(record)

    def _declare(self, t: float, node: str, fields: dict[str, Any]) -> None:
        if node not in self.declared:
            self.declared.add(node)
            self.write({"event": "node", "t": t, "name": node, **fields})


def _name(propid: int) -> str | int:
    pdef = PROPID_BY_VALUE.get(propid)
    return pdef.name if pdef is not None else propid


def _property(p: Property) -> dict[str, Any]:
    return converter.unstructure(p, Property)  # type: ignore[no-any-return]
