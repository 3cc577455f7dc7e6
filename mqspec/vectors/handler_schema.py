"""The JSON Schema of a handler vector's files: ``pre.json``/``post.json``, ``event.json``, ``effects.json``.

Every key, effect, timer and value these files use is described, with the register entry it rests
on where it is mqspec's modelling, in ``vocabulary.json`` (:mod:`mqspec.vectors.schemas`,
``vocabulary.yaml``). A state is an MC-MQDSRP directory server (``mqdsrp_state``), an MS-MQSD server or client
(``mqsd_server``, ``mqsd_client``) or an MS-MQCN server's queue manager or client
(``mqcn_queue_manager``, ``mqcn_client``); ``side`` says which of the last four; an effect is one of theirs.

:data:`HANDLER_SCHEMA` (draft 2020-12) is written to ``handler.schema.json`` at the top of a
vectors tree; its ``$defs`` ``state``, ``event`` and ``effects`` are the three documents (the
state is the same shape before and after). The runner validates every handler case's files
against it with :func:`mqspec.vectors.manifest.validate`, so the schema and the files cannot
drift apart. A decoded message or DirectoryChange (a message argument, a body, a pending change)
is the tagged form of the codec vectors (``{"message": "<structure>", ...}``); the codec vectors'
``expected.json`` files show each structure's fields, so this schema checks only the tag.
"""

from __future__ import annotations

from typing import Any

from mqspec.json64 import u64_schema

GUID = {"type": "string", "pattern": "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"}
SEQ = u64_schema("a SEQUENCE_NUMBER (8 bytes, most significant first, on the wire)")
_NULL = {"type": "null"}


def _obj(properties: dict[str, Any], *, optional: tuple[str, ...] = (), description: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": properties,
                           "required": [p for p in properties if p not in optional], "additionalProperties": False}
    if description:
        out["description"] = description
    return out


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {"oneOf": [schema, _NULL]}


_STR, _INT, _BOOL, _NUM = {"type": "string"}, {"type": "integer"}, {"type": "boolean"}, {"type": "number"}
_REF = {name: {"$ref": f"#/$defs/{name}"} for name in (
    "guid", "seq", "tagged", "property", "partition", "neighbor", "state", "timer", "effect", "mqdsrp_state")}

_PARTITION = _obj({
    "partition_id": _REF["guid"], "authority_name": _nullable(_STR),
    "last_seq_number": _REF["seq"], "purged_seq_number": _REF["seq"], "allowed_purge_seq_number": _REF["seq"],
    "purge_state": {"enum": ["NORMAL", "STARTSYNC0", "SYNC0", "COMPLETESYNC0"]},
    "previous_purged_seq_number": _REF["seq"], "change_missing_window": _REF["seq"],
    "pending_changes": {"type": "array", "items": _REF["tagged"]},
}, description="a DirectoryPartition (MC-MQDSRP 3.1.1.2)")

_NEIGHBOR = _obj({
    "partition_id": _REF["guid"],
    "machine_name": {**_nullable(_STR), "description": "null only in the literal reading of a site created without "
                     "PROPID_S_PSC (erratum E-336): Handle Directory Create adds a PSC neighbor named by no machine"},
    "acked_seq_number": _REF["seq"],
    "acked_pec_seq_number": _REF["seq"], "last_acked_time": _NUM,
    "available_changes": {"type": "array", "items": _REF["tagged"]},
}, description="a DirectoryNeighbor (MC-MQDSRP 3.1.1.3), in psc_neighbors or bsc_neighbors")

_REFERENCE = {"oneOf": [
    {"type": "integer", "minimum": 0, "description": "an index into partitions"},
    _obj({"detached": _REF["partition"]}, description="a partition no longer in partitions, still referenced"),
    _NULL,
]}

_STATE = _obj({
    "machine_name": _STR, "identifier": _REF["guid"], "site_identifier": _REF["guid"],
    "role": {"enum": ["PEC", "PSC", "BSC"],
             "description": "the server's role (1.3.1.1); a statement about a PSC applies to the PEC too"},
    "pec_name": _nullable(_STR), "configured_psc_name": _nullable(_STR),
    "partitions": {"type": "array", "items": _REF["partition"]},
    "psc_neighbors": {"type": "array", "items": _REF["neighbor"]},
    "bsc_neighbors": {"type": "array", "items": _REF["neighbor"]},
    "deleted_objects": {"type": "array", "items": _obj({
        "identifier": _nullable(_REF["guid"]), "partition_id": _REF["guid"], "seq_number": _REF["seq"],
        "object_type": _INT, "scope": _INT})},
    "directory": {"type": "array", "items": _obj({
        "guid": _REF["guid"], "object_type": _INT, "path_name": _nullable(_STR),
        "partition_id": _nullable(_REF["guid"]), "seq_number": _REF["seq"],
        "properties": {"type": "array", "items": _REF["property"]}})},
    "my_enterprise_partition": _REFERENCE, "my_site_partition": _REFERENCE,
    "my_psc_name": _nullable(_STR), "replication_queue_open": _BOOL,
    "pending_requests": {"type": "array", "items": _obj({
        "key": {"type": "array", "items": {"oneOf": [_STR, _INT]}}, "request_identifier": _INT,
        "message": _REF["tagged"], "origin": _nullable(_STR), "client_request": _nullable(_INT)})},
    "next_request_identifier": _INT, "next_client_request": _INT,
    "last_seq_number_header_time": _nullable(_NUM),
    "last_seq_number_header_sent": {"type": "array", "items": _obj({"machine": _STR, "scope": _STR, "time": _NUM})},
}, description="one directory server's state (MC-MQDSRP 3.1.1 and mqspec's runtime attributes)")

# --- MS-MQSD (mqspec.vectors.handlers_mqsd) --------------------------------------------------------

_SERVER_ENTRY = _obj({"name": _STR, "ip": _BOOL, "ipx": _BOOL})
_NETWORK = _obj({"name": _STR, "ras": _BOOL}, description="a network address of the client (3.1.1.2)")
_GUIDS = {"type": "array", "items": _REF["guid"]}
_REPLY = _obj({"correlation_id": _REF["guid"], "connected_networks": _GUIDS, "connected_network_mask": _INT,
               "responding_site_id": _nullable(_REF["guid"]), "servers": {"type": "array", "items": _SERVER_ENTRY}},
              description="a TopologyServerReply (MS-MQSD 2.2.3), field by field")
_MQSD_SERVER = _obj({
    "side": {"const": "server"}, "enterprise_identifier": _REF["guid"], "site_identifier": _REF["guid"],
    "directory_server_list": {"type": "array", "items": _SERVER_ENTRY}, "connected_network_identifier_list": _GUIDS,
    "listening": _BOOL, "terminated": _BOOL,
}, description="an MS-MQSD server's state (3.2.1) and its thread (3.2.5)")
_MQSD_CLIENT = _obj({
    "side": {"const": "client"}, "enterprise_identifier": _REF["guid"], "site_identifier": _REF["guid"],
    "directory_server_list": {"type": "array", "items": _STR}, "connected_network_identifier_list": _GUIDS,
    "request_id": _nullable(_REF["guid"]), "last_successful_network_address": _nullable(_NETWORK),
    "valid_last_successful_network_address": _BOOL, "last_topology_server_reply": _nullable(_REPLY),
    "topology_server_reply_received": _BOOL, "network_address_list": {"type": "array", "items": _NETWORK},
    "number_of_network_addresses": _INT, "current_network_index": _INT, "wait_for_response_timeout": _NUM,
    "earlier_network_reply": _nullable(_REPLY),
}, description="an MS-MQSD client's state (3.1.1)")
_MQSD_EFFECT = {"oneOf": [
    _obj({"effect": {"enum": ["StartTimer", "CancelTimer"]}, "node": _STR, "timer": _STR, "delay": _NUM},
         optional=("delay",), description="a timer by name: MS-MQSD's wait_for_response (3.1.2.1), MS-MQCN's batch"),
    {"type": "object", "required": ["effect", "node"],
     "properties": {"effect": {"enum": ["BroadcastRequest", "DirectoryServerListResult", "SendReply", "OpenSocket",
                                        "CloseSocket", "TerminateThread", "PacketDiscarded"]},
                    "node": _STR, "data_hex": {"type": "string", "pattern": "^([0-9a-f]{2})*$"}},
     "description": "an MS-MQSD effect and its fields, each described in vocabulary.json (scope effect); "
                    "data_hex: the packet sent"},
]}

# --- MS-MQCN (mqspec.vectors.handlers_mqcn) --------------------------------------------------------

_MQCN_QUEUE_MANAGER = {
    "type": "object", "required": ["side", "machine_name", "identifier", "queue_collection", "options"],
    "properties": {"side": {"const": "queue_manager"}, "machine_name": _STR, "identifier": _REF["guid"],
                   "queue_collection": {"type": "object", "description": "Queue.Identifier -> the queue's attributes"},
                   "options": {"type": "object"}},
    "description": "an MS-MQCN server's queue manager (3.2.1, 3.1.1.2.1) with its QueueCollection and options",
}
_MQCN_CLIENT = {
    "type": "object", "required": ["side", "machine_name", "identifier", "version", "outgoing"],
    "properties": {"side": {"const": "client"}, "machine_name": _STR, "identifier": _REF["guid"],
                   "version": {"enum": [1, 2]},
                   "outgoing": {"type": "object", "description": "destination GUID -> OutgoingQueue descriptor"}},
    "description": "an MS-MQCN client (3.3.1): its version, directory service and OutgoingQueues",
}
_MQCN_EFFECT = {
    "type": "object", "required": ["effect", "node"],
    "properties": {"effect": {"enum": ["OpenQueue", "CreateQueue", "UpdateQueue", "DeleteQueue", "UpdateQueueManager",
                                       "DirectoryRead", "Disregarded", "IgnoredProperties", "EnqueueNotification"]},
                   "node": _STR},
    "description": "an MS-MQCN effect and its fields, each described in vocabulary.json (scope effect)",
}

_ARG_TYPES = ["partition", "neighbor", "message", "change", "changes", "properties", "guid", "seq", "int", "bool",
              "str", "bytes", "object_type", "scope", "ack", "wait_key",
              # MS-MQSD
              "transport", "network", "networks", "new_guid", "request",
              # MS-MQCN
              "notification", "directory", "operation", "object", "changes"]

_EVENT = _obj({
    "handler": _STR, "document": {"enum": ["MC-MQDSRP", "MS-MQSD", "MS-MQCN"]}, "section": {"type": "string", "pattern": "^[0-9.]+$"},
    "mode": {"enum": ["clarified", "literal", "both"],
             "description": "both: the two readings give the same outcome; run in either"},
    "now": _NUM,
    "args": {"type": "array", "items": _obj({"name": _STR, "type": {"enum": _ARG_TYPES}, "value": {},
                                            "hex": {"type": "string", "pattern": "^([0-9a-f]{2})*$"}},
                                           optional=("hex",))},
})

_TIMER = _obj({"kind": _STR, "args": {}})
_EFFECT = {"oneOf": [
    _obj({"effect": {"const": "EnqueueMessage"}, "node": _STR, "destination": _STR, "format_name": _STR,
          "body": _REF["tagged"], "body_hex": _nullable({"type": "string", "pattern": "^([0-9a-f]{2})*$"}),
          "time_to_reach_queue": _INT, "time_to_be_received": _INT, "priority": _INT,
          "ack_requested": {"enum": ["None", "AckNackReachQueue"]}, "admin_queue": _nullable(_STR),
          "response_queue": _nullable(_STR), "message_class": _STR, "delivery": _STR, "hash_algorithm": _STR,
          "sender_identifier_type": _INT, "sender_identifier": _STR},
         description="a replication message sent (3.1.7.2.1), with every MSMQ message property it sets"),
    _obj({"effect": {"const": "StartTimer"}, "node": _STR, "timer": _REF["timer"], "delay": _NUM}),
    _obj({"effect": {"const": "CancelTimer"}, "node": _STR, "timer": _REF["timer"]}),
    _obj({"effect": {"const": "DirectoryOperation"}, "node": _STR, "operation": _STR, "status": _INT,
          "object_type": _nullable(_INT), "path_name": _nullable(_STR), "guid": _nullable(_REF["guid"]),
          "partition_id": _nullable(_REF["guid"]), "seq_number": _nullable(_REF["seq"])}),
    _obj({"effect": {"const": "RequestCompleted"}, "node": _STR, "request": _INT, "status": _INT}),
    _obj({"effect": {"const": "Clarified"}, "node": _STR, "erratum": _STR, "detail": _STR},
         description="a place where the clarified reading departs from the text (an errata register entry)"),
]}

HANDLER_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://mqspec.invalid/vectors/handler.schema.json",
    "title": "mqspec handler vector files",
    "description": "pre.json and post.json are a state, event.json an event, effects.json the effects; "
                   "vocabulary.json says what every key, effect, timer and value means and what it rests on",
    "oneOf": [{"$ref": "#/$defs/state"}, {"$ref": "#/$defs/event"}, {"$ref": "#/$defs/effects"}],
    "$defs": {
        "guid": GUID, "seq": SEQ,
        "tagged": {"type": "object", "required": ["message"], "properties": {"message": _STR},
                   "description": "a decoded structure, tagged with its name (as in the codec vectors)"},
        "property": _obj({"propid": _STR, "value": {}},
                         description="{propid: PROPID name, value: in the shape of the PROPID's VARTYPE}"),
        "partition": _PARTITION, "neighbor": _NEIGHBOR, "mqdsrp_state": _STATE, "event": _EVENT, "timer": _TIMER,
        "mqdsrp_effect": _EFFECT, "mqsd_server": _MQSD_SERVER, "mqsd_client": _MQSD_CLIENT, "mqsd_effect": _MQSD_EFFECT,
        "mqcn_queue_manager": _MQCN_QUEUE_MANAGER, "mqcn_client": _MQCN_CLIENT, "mqcn_effect": _MQCN_EFFECT,
        "state": {"oneOf": [{"$ref": "#/$defs/mqdsrp_state"}, {"$ref": "#/$defs/mqsd_server"},
                            {"$ref": "#/$defs/mqsd_client"}, {"$ref": "#/$defs/mqcn_queue_manager"},
                            {"$ref": "#/$defs/mqcn_client"}]},
        "effect": {"oneOf": [{"$ref": "#/$defs/mqdsrp_effect"}, {"$ref": "#/$defs/mqsd_effect"},
                             {"$ref": "#/$defs/mqcn_effect"}]},
        "effects": _obj({"effects": {"type": "array", "items": _REF["effect"]}, "returned": {}}),
    },
}

#: which definition each handler file follows
FILE_DEFS = {"pre.json": "state", "post.json": "state", "event.json": "event", "effects.json": "effects"}


def validate_file(name: str, document: Any) -> list[str]:
    """The ways one handler file breaks its definition of :data:`HANDLER_SCHEMA` (empty when valid)."""
    from .manifest import validate

    schema = {**HANDLER_SCHEMA, "$ref": f"#/$defs/{FILE_DEFS[name]}"}
    del schema["oneOf"]
    return [p.replace("manifest", name, 1) for p in validate(document, schema)]
