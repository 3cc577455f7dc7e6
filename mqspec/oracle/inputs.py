"""The trace's inputs as the reference takes them: timer keys, client requests, and the
SeqNumberHeader rule the checker needs when an implementation's period differs.

Each function turns one validated event's fields into the arguments a handler takes, or raises
:class:`InputError` (``mqspec check`` exits 2 naming the event's line and field).
"""

from __future__ import annotations

from typing import Any

from mqspec.model.errors import ModelError
from mqspec.model.guid import Guid
from mqspec.model.jsonform import converter
from mqspec.model.propids import ObjectType
from mqspec.model.propvalue import Property
from mqspec.refimpl.effects import TimerKey
from mqspec.refimpl.mqds import IDENTITY_PROPID, ClientRequest, default_scope


class InputError(Exception):
    """An event the reference cannot take as input (a field that does not make sense): exit 2."""

    def __init__(self, index: int, field: str, reason: str) -> None:
        super().__init__(index, field, reason)
        self.index, self.field, self.reason = index, field, reason



def timer_key(index: int, record: dict[str, Any]) -> TimerKey:
    kind, args = record["timer"], record.get("args", [])
    if kind == "change_propagation":
        if len(args) != 2 or type(args[0]) is not str or args[1] not in ("Intrasite", "Intersite"):
            raise InputError(index, "args", "a change_propagation timer's args are [neighbor, Intrasite|Intersite]")
        return TimerKey(kind, (args[0], args[1]))
    if kind == "bsc_ack":
        if args:
            raise InputError(index, "args", "a bsc_ack timer has no args")
        return TimerKey(kind)
    if (len(args) != 1 or type(args[0]) is not list or len(args[0]) != 2 or type(args[0][0]) is not str
            or type(args[0][1]) is not int):
        raise InputError(index, "args", "a change_request_wait timer's args are [[requester, request identifier]]")
    return TimerKey(kind, ((args[0][0], args[0][1]),))


def client_request(index: int, record: dict[str, Any]) -> tuple[ClientRequest, Guid]:
    try:
        object_type = ObjectType(record["object_type"])
    except ValueError:
        raise InputError(index, "object_type", f"{record['object_type']} is not an MQDS object type") from None
    properties = []
    for i, p in enumerate(record.get("properties", ())):
        try:
            properties.append(converter.structure(p, Property))
        except (ModelError, ValueError, TypeError, KeyError) as exc:
            raise InputError(index, f"properties[{i}]", f"not a property value: {exc}") from None
    partition = Guid.parse(record["partition"])
    guid = Guid.parse(record["guid"]) if record.get("guid") else None
    operation = record["operation"]
    if operation != "create" and record.get("path") is None and guid is None:
        raise InputError(index, "guid", f"an {operation} names its object by path or guid")
    if record.get("path") is not None and guid is not None:
        raise InputError(index, "guid", f"an {operation} names its object by path or by guid, not both")
    new_guid = record.get("new_guid")
    identity = IDENTITY_PROPID.get(object_type)
    if operation == "create" and new_guid is None and not any(p.propid == identity for p in properties):
        raise InputError(index, "new_guid", "a create whose properties carry no identity needs the GUID "
                                            "the server gave the object")
    scope = record.get("scope", default_scope(object_type, partition))
    request = ClientRequest(operation, object_type, partition, path_name=record.get("path"), guid=guid,
                            properties=tuple(properties), scope=scope)
    return request, Guid.parse(new_guid) if new_guid else Guid.NULL
