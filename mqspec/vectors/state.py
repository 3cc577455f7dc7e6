"""The JSON form of MC-MQDSRP handler state, handler arguments and effects (handler vectors).

A handler vector holds a queue manager before (``pre.json``) and after (``post.json``) one
handler ran, the event that ran it (``event.json``) and what it did (``effects.json``). This
module turns each of those into plain JSON and back, so that the state a vector starts from can
be rebuilt exactly, in mqspec or in any other language:

* a :class:`~mqspec.refimpl.mqdsrp_state.QueueManager` is an object with one key per attribute
  of MC-MQDSRP 3.1.1 (and the runtime attributes mqspec adds); GUIDs are lowercase dashed text,
  sequence numbers decimal strings (64 bits: :mod:`mqspec.json64`), DirectoryChanges the tagged
  form of :mod:`mqspec.model.jsonform`;
* MyEnterprisePartition / MySitePartition are references (an index into ``partitions``), because
  the handlers compare them by identity (``partition is qm.my_site_partition``);
* the local directory is the list of its objects, each with its properties in PROPID order;
* an effect is an object tagged ``"effect"`` with the fields of its class; a replication message
  it carries is given both as JSON and as the bytes the codec sends (``body_hex``).

:func:`qm_to_json` refuses a QueueManager with an attribute it does not know, so a new state
attribute cannot be left out of the vectors unnoticed.
"""

from __future__ import annotations

from typing import Any

import attrs

from mqspec.json64 import wide_int
from mqspec.model import mqdsrp
from mqspec.model.errors import ModelError
from mqspec.model.guid import Guid
from mqspec.model.jsonform import converter, from_json, to_json
from mqspec.model.mqdsrp import DirectoryChange
from mqspec.model.propids import ObjectType
from mqspec.model.propvalue import Property
from mqspec.model.seqnum import SequenceNumber
from mqspec.refimpl.directory import DirectoryStore
from mqspec.refimpl.effects import (
    AckRequested,
    CancelTimer,
    Clarified,
    DirectoryOperation,
    EnqueueMessage,
    RequestCompleted,
    StartTimer,
    TimerKey,
    TimerScope,
)
from mqspec.refimpl.mqdsrp_state import (
    DeletedObject,
    DirectoryNeighbor,
    DirectoryPartition,
    PendingChangeRequest,
    PurgeState,
    QueueManager,
    Role,
)

# the attributes each JSON form covers: a class that gains one fails loudly (see the docstring)
_KNOWN = {
    QueueManager: {
        "machine_name", "identifier", "site_identifier", "role", "pec_name", "configured_psc_name",
        "partitions", "psc_neighbors", "bsc_neighbors", "deleted_objects", "directory",
        "my_enterprise_partition", "my_site_partition", "my_psc_name", "replication_queue_open",
        "pending_requests", "next_request_identifier", "next_client_request",
        "last_seq_number_header_time", "last_seq_number_header_sent",
    },
    DirectoryPartition: {
        "partition_id", "authority_name", "last_seq_number", "purged_seq_number",
        "allowed_purge_seq_number", "purge_state", "previous_purged_seq_number",
        "change_missing_window", "pending_changes",
    },
    DirectoryNeighbor: {
        "partition_id", "machine_name", "acked_seq_number", "acked_pec_seq_number", "last_acked_time",
        "available_changes",
    },
    DeletedObject: {"identifier", "partition_id", "seq_number", "object_type", "scope"},
    PendingChangeRequest: {"request_identifier", "message", "origin", "client_request"},
}


def check_known_attributes() -> None:
    """Raise ModelError when a state class has an attribute the JSON form does not cover."""
    for cls, known in _KNOWN.items():
        have = {f.name for f in attrs.fields(cls)}
        if have != known:
            raise ModelError(
                f"{cls.__name__} attributes changed ({sorted(have ^ known)}): "
                "update mqspec/vectors/state.py so the handler vectors carry them"
            )


# --- small values -------------------------------------------------------------------------------


def _guid(value: Guid | None) -> str | None:
    return None if value is None else str(value)


def _guid_in(value: str | None) -> Guid | None:
    return None if value is None else Guid.parse(value)


def _seq(value: SequenceNumber) -> str:
    """A sequence number as its decimal string (64 bits: mqspec.json64)."""
    return str(value.value)


def _seq_in(value: int | str) -> SequenceNumber:
    return SequenceNumber(wide_int(value, what="a SEQUENCE_NUMBER"))


def _changes(changes: list[DirectoryChange]) -> list[dict[str, Any]]:
    return [to_json(c) for c in changes]


def _changes_in(data: list[dict[str, Any]]) -> list[DirectoryChange]:
    return [from_json(c, mqdsrp.MESSAGE_TYPES) for c in data]  # type: ignore[misc]


def value_to_json(value: object) -> Any:
    """A handler's return value (or any model value) as JSON: the generic form.

    GUIDs as text, sequence numbers as decimal strings, model structures in their tagged JSON form,
    enumerations as their value, tuples and lists as lists.
    """
    if isinstance(value, TimerScope | AckRequested | Role):  # str enumerations: their text
        return value.value
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, Guid):
        return str(value)
    if isinstance(value, SequenceNumber):
        return _seq(value)
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, tuple | list):
        return [value_to_json(v) for v in value]
    if attrs.has(type(value)) and type(value).__name__ in mqdsrp.MESSAGE_TYPES:
        return to_json(value)
    raise ModelError(f"no JSON form for {value!r}")


# --- the replication state ---------------------------------------------------------------------


def partition_to_json(p: DirectoryPartition) -> dict[str, Any]:
    return {
        "partition_id": _guid(p.partition_id),
        "authority_name": p.authority_name,
        "last_seq_number": _seq(p.last_seq_number),
        "purged_seq_number": _seq(p.purged_seq_number),
        "allowed_purge_seq_number": _seq(p.allowed_purge_seq_number),
        "purge_state": p.purge_state.name,
        "previous_purged_seq_number": _seq(p.previous_purged_seq_number),
        "change_missing_window": _seq(p.change_missing_window),
        "pending_changes": _changes(p.pending_changes),
    }


def partition_from_json(d: dict[str, Any]) -> DirectoryPartition:
    return DirectoryPartition(
        _guid_in(d["partition_id"]), d["authority_name"],  # type: ignore[arg-type]
        last_seq_number=_seq_in(d["last_seq_number"]),
        purged_seq_number=_seq_in(d["purged_seq_number"]),
        allowed_purge_seq_number=_seq_in(d["allowed_purge_seq_number"]),
        purge_state=PurgeState[d["purge_state"]],
        previous_purged_seq_number=_seq_in(d["previous_purged_seq_number"]),
        change_missing_window=_seq_in(d["change_missing_window"]),
        pending_changes=_changes_in(d["pending_changes"]),
    )


def neighbor_to_json(n: DirectoryNeighbor) -> dict[str, Any]:
    return {
        "partition_id": _guid(n.partition_id),
        "machine_name": n.machine_name,
        "acked_seq_number": _seq(n.acked_seq_number),
        "acked_pec_seq_number": _seq(n.acked_pec_seq_number),
        "last_acked_time": float(n.last_acked_time),
        "available_changes": _changes(n.available_changes),
    }


def neighbor_from_json(d: dict[str, Any]) -> DirectoryNeighbor:
    return DirectoryNeighbor(
        _guid_in(d["partition_id"]), d["machine_name"],  # type: ignore[arg-type]
        acked_seq_number=_seq_in(d["acked_seq_number"]),
        acked_pec_seq_number=_seq_in(d["acked_pec_seq_number"]),
        last_acked_time=float(d["last_acked_time"]),
        available_changes=_changes_in(d["available_changes"]),
    )


def _deleted_to_json(d: DeletedObject) -> dict[str, Any]:
    return {"identifier": _guid(d.identifier), "partition_id": _guid(d.partition_id),
            "seq_number": _seq(d.seq_number), "object_type": int(d.object_type), "scope": int(d.scope)}


def _deleted_from_json(d: dict[str, Any]) -> DeletedObject:
    return DeletedObject(_guid_in(d["identifier"]), _guid_in(d["partition_id"]),  # type: ignore[arg-type]
                         _seq_in(d["seq_number"]), d["object_type"], d["scope"])


def _directory_to_json(store: DirectoryStore) -> list[dict[str, Any]]:
    out = []
    for obj in store.objects.values():
        props = [Property(pid, obj.properties[pid]) for pid in sorted(obj.properties)]
        out.append({
            "guid": str(obj.guid), "object_type": int(obj.object_type), "path_name": obj.path_name,
            "partition_id": _guid(obj.partition_id), "seq_number": _seq(obj.seq_number),
            "properties": [property_to_json(p) for p in props],
        })
    return out


def property_to_json(p: Property) -> dict[str, Any]:
    """``{"propid": NAME, "value": ...}``, as :mod:`mqspec.model.jsonform` writes a property."""
    return converter.unstructure(p)  # type: ignore[no-any-return]


def _property_from_json(d: dict[str, Any]) -> Property:
    return converter.structure(d, Property)  # type: ignore[no-any-return]


def _directory_from_json(objects: list[dict[str, Any]]) -> DirectoryStore:
    """Rebuild the store with Create Directory Object; the result must say MQ_OK for each object."""
    store = DirectoryStore()
    for o in objects:
        props = {p.propid: p.value for p in map(_property_from_json, o["properties"])}
        status = store.create(o["object_type"], o["path_name"], Guid.parse(o["guid"]), props,
                              Guid.parse(o["partition_id"]), _seq_in(o["seq_number"]))
        if status != 0:
            raise ModelError(f"directory object {o['guid']} cannot be rebuilt: status {status:#010x}")
    return store


def _reference(qm: QueueManager, partition: DirectoryPartition | None) -> Any:
    """MyEnterprisePartition / MySitePartition: the index of the partition they are, by identity."""
    if partition is None:
        return None
    for i, p in enumerate(qm.partitions):
        if p is partition:
            return i
    # removed from the collection while still referenced (a deleted site partition)
    return {"detached": partition_to_json(partition)}


def _reference_in(partitions: list[DirectoryPartition], ref: Any) -> DirectoryPartition | None:
    if ref is None:
        return None
    if isinstance(ref, dict):
        return partition_from_json(ref["detached"])
    return partitions[ref]


def qm_to_json(qm: QueueManager) -> dict[str, Any]:
    """The whole state of one directory server as JSON (see the module docstring)."""
    check_known_attributes()
    return {
        "machine_name": qm.machine_name,
        "identifier": str(qm.identifier),
        "site_identifier": str(qm.site_identifier),
        "role": qm.role.value,
        "pec_name": qm.pec_name,
        "configured_psc_name": qm.configured_psc_name,
        "partitions": [partition_to_json(p) for p in qm.partitions],
        "psc_neighbors": [neighbor_to_json(n) for n in qm.psc_neighbors],
        "bsc_neighbors": [neighbor_to_json(n) for n in qm.bsc_neighbors],
        "deleted_objects": [_deleted_to_json(d) for d in qm.deleted_objects],
        "directory": _directory_to_json(qm.directory),
        "my_enterprise_partition": _reference(qm, qm.my_enterprise_partition),
        "my_site_partition": _reference(qm, qm.my_site_partition),
        "my_psc_name": qm.my_psc_name,
        "replication_queue_open": qm.replication_queue_open,
        "pending_requests": [
            {"key": list(key), "request_identifier": p.request_identifier, "message": to_json(p.message),
             "origin": p.origin, "client_request": p.client_request}
            for key, p in qm.pending_requests.items()
        ],
        "next_request_identifier": qm.next_request_identifier,
        "next_client_request": qm.next_client_request,
        "last_seq_number_header_time": (None if qm.last_seq_number_header_time is None
                                        else float(qm.last_seq_number_header_time)),
        "last_seq_number_header_sent": [
            {"machine": machine, "scope": scope, "time": float(t)}
            for (machine, scope), t in qm.last_seq_number_header_sent.items()
        ],
    }


def qm_from_json(d: dict[str, Any]) -> QueueManager:
    """Rebuild a QueueManager from :func:`qm_to_json`'s form (KeyError/ModelError when malformed)."""
    partitions = [partition_from_json(p) for p in d["partitions"]]
    qm = QueueManager(
        machine_name=d["machine_name"], identifier=Guid.parse(d["identifier"]),
        site_identifier=Guid.parse(d["site_identifier"]), role=Role(d["role"]), pec_name=d["pec_name"],
        configured_psc_name=d["configured_psc_name"], partitions=partitions,
        psc_neighbors=[neighbor_from_json(n) for n in d["psc_neighbors"]],
        bsc_neighbors=[neighbor_from_json(n) for n in d["bsc_neighbors"]],
        deleted_objects=[_deleted_from_json(o) for o in d["deleted_objects"]],
        directory=_directory_from_json(d["directory"]),
    )
    qm.my_enterprise_partition = _reference_in(partitions, d["my_enterprise_partition"])
    qm.my_site_partition = _reference_in(partitions, d["my_site_partition"])
    qm.my_psc_name = d["my_psc_name"]
    qm.replication_queue_open = d["replication_queue_open"]
    for p in d["pending_requests"]:
        message = from_json(p["message"], mqdsrp.MESSAGE_TYPES)
        qm.pending_requests[tuple(p["key"])] = PendingChangeRequest(  # type: ignore[index]
            p["request_identifier"], message, p["origin"], p["client_request"])  # type: ignore[arg-type]
    qm.next_request_identifier = d["next_request_identifier"]
    qm.next_client_request = d["next_client_request"]
    qm.last_seq_number_header_time = d["last_seq_number_header_time"]
    qm.last_seq_number_header_sent = {(s["machine"], s["scope"]): s["time"]
                                      for s in d["last_seq_number_header_sent"]}
    return qm


# --- effects ------------------------------------------------------------------------------------


def _timer(timer: TimerKey) -> dict[str, Any]:
    return {"kind": timer.kind, "args": value_to_json(timer.args)}


def effect_to_json(effect: object) -> dict[str, Any]:
    """One effect as JSON, tagged with its class name under ``"effect"``."""
    t = type(effect)
    if t is EnqueueMessage:
        e: EnqueueMessage = effect  # type: ignore[assignment]
        try:
            body_hex: str | None = mqdsrp.encode(e.body).hex()
        except ModelError:
            body_hex = None
        return {
            "effect": "EnqueueMessage", "node": e.node, "destination": e.destination,
            "format_name": e.format_name, "body": to_json(e.body), "body_hex": body_hex,
            "time_to_reach_queue": e.time_to_reach_queue, "time_to_be_received": e.time_to_be_received,
            "priority": e.priority, "ack_requested": e.ack_requested.value, "admin_queue": e.admin_queue,
            "response_queue": e.response_queue, "message_class": e.message_class, "delivery": e.delivery,
            "hash_algorithm": e.hash_algorithm, "sender_identifier_type": e.sender_identifier_type,
            "sender_identifier": str(e.sender_identifier),
        }
    if t is StartTimer:
        return {"effect": "StartTimer", "node": effect.node, "timer": _timer(effect.timer),  # type: ignore[attr-defined]
                "delay": float(effect.delay)}  # type: ignore[attr-defined]
    if t is CancelTimer:
        return {"effect": "CancelTimer", "node": effect.node, "timer": _timer(effect.timer)}  # type: ignore[attr-defined]
    if t is DirectoryOperation:
        d: DirectoryOperation = effect  # type: ignore[assignment]
        return {
            "effect": "DirectoryOperation", "node": d.node, "operation": d.operation, "status": d.status,
            "object_type": None if d.object_type is None else int(d.object_type), "path_name": d.path_name,
            "guid": _guid(d.guid), "partition_id": _guid(d.partition_id),
            "seq_number": None if d.seq_number is None else str(int(d.seq_number)),
        }
    if t is RequestCompleted:
        return {"effect": "RequestCompleted", "node": effect.node, "request": effect.request,  # type: ignore[attr-defined]
                "status": effect.status}  # type: ignore[attr-defined]
    if t is Clarified:
        return {"effect": "Clarified", "node": effect.node, "erratum": effect.erratum,  # type: ignore[attr-defined]
                "detail": effect.detail}  # type: ignore[attr-defined]
    raise ModelError(f"no JSON form for the effect {effect!r}")


# --- handler arguments ----------------------------------------------------------------------------

#: argument types of the handler table (mqspec.vectors.handlers) and their JSON forms
ARG_TYPES = (
    "partition",  # {"index": i} into pre-state partitions (the handler gets that very object)
    "neighbor",  # {"collection": "psc_neighbors" | "bsc_neighbors", "index": i}
    "message",  # a replication message: its JSON form, and "hex" its bytes
    "change", "changes",  # DirectoryChange(s) in the tagged JSON form
    "properties",  # a list of {"propid": NAME, "value": ...}
    "guid", "seq", "int", "bool", "str", "bytes",  # text / integer / integer / true|false / text / hex
    "object_type",  # an ObjectType value (1, 2, 3, 5, 6, 7, 8)
    "scope",  # a TimerScope: "Intrasite" | "Intersite"
    "ack",  # an AckRequested: "None" | "AckNackReachQueue"
    "wait_key",  # [RequesterName, RequestIdentifier]
)


def arg_to_json(kind: str, value: object, qm: QueueManager) -> dict[str, Any]:
    """One handler argument as ``{"type": kind, "value": ...}`` (plus "hex" for a message)."""
    if kind == "partition":
        index = next((i for i, p in enumerate(qm.partitions) if p is value), None)
        if index is None:
            raise ModelError("a partition argument must be one of the queue manager's partitions")
        return {"type": kind, "value": {"index": index, "partition_id": _guid(value.partition_id)}}  # type: ignore[attr-defined]
    if kind == "neighbor":
        for collection in ("psc_neighbors", "bsc_neighbors"):
            for i, n in enumerate(getattr(qm, collection)):
                if n is value:
                    return {"type": kind, "value": {"collection": collection, "index": i,
                                                    "machine_name": n.machine_name}}
        raise ModelError("a neighbor argument must be one of the queue manager's neighbors")
    if kind == "message":
        return {"type": kind, "value": to_json(value), "hex": mqdsrp.encode(value).hex()}  # type: ignore[arg-type]
    if kind == "properties":
        return {"type": kind, "value": [property_to_json(p) for p in value]}  # type: ignore[attr-defined]
    if kind in ARG_TYPES:
        return {"type": kind, "value": value_to_json(value)}
    raise ModelError(f"unknown argument type {kind!r}")


def arg_from_json(arg: dict[str, Any], qm: QueueManager) -> object:
    """The Python value of one argument of ``event.json``, resolved against the rebuilt ``qm``."""
    kind, value = arg["type"], arg["value"]
    if kind == "partition":
        return qm.partitions[value["index"]]
    if kind == "neighbor":
        return getattr(qm, value["collection"])[value["index"]]
    if kind == "message":
        message = mqdsrp.decode(bytes.fromhex(arg["hex"]))
        if to_json(message) != value:
            raise ModelError("a message argument's JSON and its bytes (hex) disagree")
        return message
    if kind == "change":
        return from_json(value, mqdsrp.MESSAGE_TYPES)
    if kind == "changes":
        return tuple(from_json(c, mqdsrp.MESSAGE_TYPES) for c in value)
    if kind == "properties":
        return tuple(_property_from_json(p) for p in value)
    if kind == "guid":
        return _guid_in(value)
    if kind == "seq":
        return _seq_in(value)
    if kind == "bytes":
        return bytes.fromhex(value)
    if kind == "object_type":
        return ObjectType(value)
    if kind == "scope":
        return TimerScope(value)
    if kind == "ack":
        return AckRequested(value)
    if kind == "wait_key":
        return tuple(value)
    if kind in ("int", "bool", "str"):
        return value
    raise ModelError(f"unknown argument type {kind!r}")
