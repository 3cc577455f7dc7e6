"""Handler vectors for MS-MQCN: one change-notification event, its state before and after.

The server side of MS-MQCN (``refimpl/mqcn_server.py``) acts on a
:class:`~mqspec.refimpl.mqcn_state.QueueManager` (3.2.1): the queue manager's attributes of
3.1.1.2.1, its QueueCollection (by Queue.Identifier) and the server's options, by name, in the
JSON forms of :mod:`mqspec.model.jsonform` (``"side": "queue_manager"``); the client side
(``refimpl/mqcn_client.py``) on a :class:`~mqspec.refimpl.mqcn_client.NotificationClient`
(3.3.1, ``"side": "client"``), with the arguments ``operation`` (3.3.4.1's iOperation),
``object`` (the directory object notified about) and ``changes`` (``[operation, object]`` pairs). Effects and the
generic argument types are those of :mod:`.handlers_mqsd`; the MS-MQCN ones are ``message``
(the received rMessage: ``body`` hex, sender, authentication level), ``notification`` (a Change
Notification Message, JSON and ``hex``) and ``directory`` (the Directory Read event's answers:
``servers``, each a list of ``{"guid", "object_type", "properties"}``, and ``guids``, which
server name a queue manager GUID stands for).
"""

from __future__ import annotations

from typing import Any

from mqspec.model import mqcn
from mqspec.model.errors import ModelError
from mqspec.model.guid import Guid
from mqspec.model.jsonform import converter, to_json
from mqspec.model.propvalue import Property
from mqspec.refimpl import mqcn_client as client
from mqspec.refimpl import mqcn_server as server
from mqspec.refimpl.mqcn_client import DirectoryObject, NotificationClient, Operation
from mqspec.refimpl.mqcn_state import MappingDirectory, QueueManager, ReceivedMessage

from .handlers_mqsd import MqsdHandler as DocumentHandler
from .handlers_mqsd import effect_to_json, plain

DOC = "MS-MQCN"


def _h(section: str, function: Any, *params: tuple[str, str], side: str = "queue_manager") -> DocumentHandler:
    return DocumentHandler(function.__name__, section, function, side, params)


_MSG, _DIR = ("message", "message"), ("directory", "directory")

#: every MS-MQCN handler a vector can run, by function name
MQCN_HANDLERS: dict[str, DocumentHandler] = {h.name: h for h in (
    _h("3.2.3", server.server_initialization),
    _h("3.2.5", server.receive_change_notification, _MSG, _DIR),
    _h("3.2.5.1", server.process_change_notification_v1, _MSG, ("notification", "notification"), _DIR),
    _h("3.2.5.2", server.process_change_notification_v2, ("notification", "notification"), _DIR),
    _h("5.1", server.defer_change_notification, _MSG),
    _h("1.6", server.batch_timer_expired, _DIR),
    _h("3.3.3", client.client_initialization, ("destination", "guid"), side="client"),
    _h("3.3.4.1", client.send_change_notification, ("operation", "operation"), ("directory_object", "object"),
       side="client"),
    _h("3.3.5.2", client.prepare_change_notification_v1, ("changes", "changes"), side="client"),
    _h("3.3.5.3", client.send_change_notification_message, ("message", "notification"), ("destination", "guid"),
       side="client"),
)}


def state_to_json(state: QueueManager | NotificationClient) -> dict[str, Any]:
    data = converter.unstructure(state)
    if isinstance(state, NotificationClient):
        return plain({"side": "client", **data})
    options = data["options"]
    options["versions"] = sorted(options["versions"])
    options["directory_servers"] = sorted(options["directory_servers"])
    return plain({"side": "queue_manager", **data})


def state_from_json(d: dict[str, Any]) -> QueueManager | NotificationClient:
    kind = NotificationClient if d["side"] == "client" else QueueManager
    return converter.structure({k: v for k, v in d.items() if k != "side"}, kind)  # type: ignore[no-any-return]


def _directory_to_json(directory: MappingDirectory) -> dict[str, Any]:
    servers = {name: [{"guid": str(guid), "object_type": int(kind),
                       "properties": [converter.unstructure(Property(pid, v)) for pid, v in sorted(values.items())]}
                      for guid, (kind, values) in objects.items()]
               for name, objects in sorted(directory.servers.items())}
    return {"servers": servers, "guids": [[str(g), name] for g, name in directory.guids.items()]}


def _directory_from_json(d: dict[str, Any]) -> MappingDirectory:
    servers = {}
    for name, objects in d["servers"].items():
        servers[name] = {}
        for o in objects:
            props = [converter.structure(p, Property) for p in o["properties"]]
            servers[name][Guid.parse(o["guid"])] = (o["object_type"], {p.propid: p.value for p in props})
    return MappingDirectory(servers, {Guid.parse(g): name for g, name in d["guids"]})


def arg_to_json(kind: str, value: Any) -> dict[str, Any]:
    if kind == "message":
        return {"type": kind, "value": plain(converter.unstructure(value))}
    if kind == "notification":
        return {"type": kind, "value": to_json(value), "hex": mqcn.encode(value).hex()}
    if kind == "directory":
        return {"type": kind, "value": _directory_to_json(value)}
    if kind == "guid":
        return {"type": kind, "value": str(value)}
    if kind == "operation":
        return {"type": kind, "value": value.value}
    if kind == "object":
        return {"type": kind, "value": plain(converter.unstructure(value))}
    if kind == "changes":
        return {"type": kind, "value": [[op.value, plain(converter.unstructure(obj))] for op, obj in value]}
    raise ModelError(f"unknown MS-MQCN argument type {kind!r}")


def arg_from_json(arg: dict[str, Any]) -> object:
    kind, value = arg["type"], arg["value"]
    if kind == "message":
        return converter.structure(value, ReceivedMessage)
    if kind == "notification":
        message = mqcn.decode(bytes.fromhex(arg["hex"]))
        if to_json(message) != value:
            raise ModelError("a notification argument's JSON and its bytes (hex) disagree")
        return message
    if kind == "directory":
        return _directory_from_json(value)
    if kind == "guid":
        return Guid.parse(value)
    if kind == "operation":
        return Operation(value)
    if kind == "object":
        return converter.structure(value, DirectoryObject)
    if kind == "changes":
        return [(Operation(op), converter.structure(obj, DirectoryObject)) for op, obj in value]
    raise ModelError(f"unknown MS-MQCN argument type {kind!r}")


def run_event(pre: dict[str, Any], event: dict[str, Any]) -> dict[str, Any]:
    """Rebuild the queue manager of ``pre.json``, run the MS-MQCN event of ``event.json``."""
    from mqspec.refimpl.effects import Context, Mode

    state = state_from_json(pre)
    spec = MQCN_HANDLERS[event["handler"]]
    if (spec.side, [(a["name"], a["type"]) for a in event["args"]]) != (pre["side"], list(spec.params)):
        raise ValueError(f"{spec.name} acts on a {spec.side} and takes {list(spec.params)}")
    args = [arg_from_json(a) for a in event["args"]]
    ctx = Context(state.machine_name, Mode(event["mode"]), event["now"])
    returned = spec.function(state, ctx, *args)
    return {"post": state_to_json(state), "effects": [effect_to_json(e) for e in ctx.effects],
            "returned": _returned(returned)}


def _returned(value: object) -> Any:
    """The return value as JSON: rStatus, a prepared message (tagged JSON) or the enqueued effect."""
    if value is None or isinstance(value, int):
        return value
    if isinstance(value, mqcn.ChangeNotificationMessage):
        return to_json(value)
    return effect_to_json(value)


#: the names :mod:`mqspec.vectors.handlers` looks up in each document's module
TABLE, encode_arg = MQCN_HANDLERS, arg_to_json
