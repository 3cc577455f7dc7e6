"""The trace format's specification page: an example line of every event, and the words for each field.

:mod:`mqspec.oracle.trace_format` is the one definition of the format (the fields, their types, which are
required, the JSON Schema); this module adds what a reader of the docs page "Trace format" needs beside
it: one valid example line per event kind (:data:`EXAMPLES`, format 3, checked against the validator by
the tests) and, for the fields whose specification carries no description, what they hold and in which
unit (:data:`NOTES`). The page (``docs/trace_format.rst``, rendered by ``docs/_ext/mqspec_contract.py``)
is built from the tables of both modules, so it lists every event and field the reader accepts.
"""

from __future__ import annotations

from typing import Any

_G1, _G2, _G3 = ("0d252ca3-da77-59d3-b012-a238236a6878", "c8e0591f-7003-54fc-8830-3d24a6e7a2f6",
                 "92a79be6-9089-5b90-82ff-086970fc04b0")
_HEAD = {"trace": "4.2-adding-a-bsc:clarified:0", "format": 3}

#: event kind -> one valid line of that kind (as mqspec writes it: format 3, sequence numbers as strings)
EXAMPLES: dict[str, dict[str, Any]] = {kind: {**_HEAD, **record} for kind, record in {
    "header": {"event": "header", "t": 0.0, "source": "mqspec scenario run", "mode": "clarified", "window": 0,
               "observes": ["start", "receive", "send", "timer", "directory", "snapshot"],
               "generator": {"tool": "mqspec", "version": "0.1.0"}},
    "node": {"event": "node", "t": 0.0, "name": "PSC1", "role": "PSC", "site": _G1, "identifier": _G3,
             "pec": "PEC0", "addresses": ["10.0.0.2"]},
    "start": {"event": "start", "t": 0.0, "node": "PSC1"},
    "crash": {"event": "crash", "t": 40.5, "node": "PSC1", "lose": "volatile"},
    "clock": {"event": "clock", "t": 12.0, "node": "PSC1", "clock": 1712.25},
    "client_request": {"event": "client_request", "t": 3.0, "node": "PSC1", "request": 1, "operation": "create",
                       "object_type": 1, "partition": _G1, "path": "C14\\q1",
                       "properties": [{"propid": "PROPID_Q_LABEL", "value": "orders"}], "new_guid": _G2},
    "request_completed": {"event": "request_completed", "t": 3.0, "node": "PSC1", "request": 1, "status": 0},
    "receive": {"event": "receive", "t": 4.1, "node": "BSC11", "body": "00" * 18, "class": 0,
                "queue": "DIRECT=OS:BSC11\\private$\\mqis_queue$", "from": "PSC1"},
    "send": {"event": "send", "t": 4.0, "node": "PSC1", "to": "BSC11", "body": "00" * 18,
             "queue": "DIRECT=OS:BSC11\\private$\\mqis_queue$", "priority": 3, "timeout": 600, "ack": 0,
             "class": 0, "delivery": 0, "sender_id_type": 2, "sender_id": _G3},
    "timer": {"event": "timer", "t": 10.0, "node": "PSC1", "timer": "change_propagation",
              "args": ["BSC11", "Intrasite"]},
    "directory": {"event": "directory", "t": 3.0, "node": "PSC1", "operation": "create", "status": 0, "type": 1,
                  "path": "C14\\q1", "guid": _G2, "seq": "18446744073709551615", "partition": _G1},
    "snapshot": {"event": "snapshot", "t": 60.0, "node": "BSC11", "state": {
        "role": "BSC", "site": _G1, "partitions": {_G1: {"authority": "PSC1", "last_seq": "7", "purged_seq": "0",
                                                         "allowed_purge_seq": "0", "purge_state": "NORMAL"}}}},
    "datagram": {"event": "datagram", "t": 0.5, "node": "DS1", "direction": "receive", "body": "0001" + "00" * 50,
                 "from": "[::1]:50123", "to": "[::1]:1801", "transport": "ip"},
    "discover": {"event": "discover", "t": 0.0, "node": "mqsd-client", "networks": ["127.0.0.1:1801"]},
    "discovered": {"event": "discovered", "t": 0.2, "node": "mqsd-client", "result": "success",
                   "servers": ["DS1"], "connected_networks": [_G2], "network": "127.0.0.1:1801"},
    "notification": {"event": "notification", "t": 5.0, "node": "C14", "direction": "receive",
                     "body": "02010000", "from": "PSC1", "queue": "PRIVATE=" + _G3 + "\\3", "timeout": 300,
                     "delivery": 0, "class": 0, "sender_id_type": 2, "sender_id": _G3, "authentication": 0},
    "notify": {"event": "notify", "t": 5.0, "node": "PSC1", "operation": "QueueUpdate", "identifier": _G2,
               "owner": _G3, "path": "C14\\q1", "properties": [{"propid": "PROPID_Q_LABEL", "value": "new"}],
               "modified": ["PROPID_Q_LABEL"]},
    "queue": {"event": "queue", "t": 5.1, "node": "C14", "operation": "update", "identifier": _G2,
              "attributes": ["label"]},
    "handover": {"event": "handover", "t": 100.0, "node": "BSC11", "site": _G1, "old": "PSC1", "new": "PSC1b"},
    "hole": {"event": "hole", "t": 7.0, "kind": "tcp-gap", "text": "bytes 1200..1460 of 10.0.0.2:1801 -> "
             "10.0.0.3:2101 were never captured", "from": "10.0.0.2:1801", "to": "10.0.0.3:2101", "bytes": 260,
             "frame": 41},
    "note": {"event": "note", "t": 1.0, "text": "the operator restarted BSC11 by hand"},
}.items()}

#: the common fields every line carries
COMMON_NOTES = {
    "trace": "the trace id: lines of several traces may share a file, each carries its own",
    "format": "the format version of the line: 1, 2 or 3 (mqspec writes 3)",
    "event": "the event kind (the sections below)",
    "t": "the trace clock, seconds (a JSON number; non-decreasing along a trace)",
    "node": "the machine name of the server the event happened at (every event but header, node, hole, note)",
}

#: (event, field) -> what it holds, for the fields whose specification says nothing (units in it)
NOTES: dict[tuple[str, str], str] = {
    ("header", "nodes"): "the servers' declarations, each with the fields of a node event (but event and t)",
    ("crash", "lose"): "what the crash loses: volatile (the state 3.1.1 does not persist; the default) or all",
    ("client_request", "request"): "the server's number for the request (request_completed names it)",
    ("client_request", "operation"): "create, update or delete",
    ("client_request", "object_type"): "the MQDS_* object type value",
    ("client_request", "partition"): "the partition's GUID (the null GUID: the enterprise partition)",
    ("client_request", "path"): "the object's path name, or null (a request names its object by path or by guid)",
    ("client_request", "guid"): "the object's GUID, or null (null when path is given)",
    ("client_request", "properties"): "[{propid: NAME or number, value}] as mqspec decode prints them",
    ("client_request", "scope"): "a delete's scope: 0 or 1",
    ("client_request", "new_guid"): "the GUID the server gave a created object",
    ("request_completed", "request"): "the request's number",
    ("request_completed", "status"): "the HRESULT the request finished with",
    ("receive", "class"): "the MSMQ message class (0 Normal, 0x8000 and up Nacks; E-052)",
    ("receive", "queue"): "the destination format name",
    ("receive", "from"): "the sending machine, when known",
    ("send", "priority"): "iPriority as sent, 0..7",
    ("send", "timeout"): "TimeToReachQueue, seconds",
    ("send", "time_to_be_received"): "TimeToBeReceived, seconds",
    ("send", "ack"): "the AcknowledgmentRequested bits (E-053)",
    ("send", "admin_queue"): "AdministrationQueueFormatName, or null",
    ("send", "response_queue"): "ResponseQueueFormatName, or null",
    ("send", "class"): "the message class",
    ("send", "delivery"): "0: Express",
    ("send", "hash_algorithm"): "the hash algorithm of a signed message",
    ("send", "sender_id_type"): "SenderIdentifierType (2: QueueManagerIdentifier)",
    ("send", "sender_id"): "the sender's queue manager GUID",
    ("timer", "timer"): "change_propagation, bsc_ack or change_request_wait",
    ("timer", "args"): "change_propagation: [neighbor, Intrasite | Intersite]; bsc_ack: []; "
                       "change_request_wait: [[requester, request identifier]]",
    ("directory", "operation"): "create, update, delete, read, lookup, reset1 or reset2",
    ("directory", "status"): "the HRESULT the operation returned",
    ("directory", "type"): "the object type, or null",
    ("directory", "path"): "the object's path name, or null",
    ("directory", "guid"): "the object's GUID, or null",
    ("directory", "partition"): "the partition's GUID, or null",
    ("datagram", "from"): "the sender, HOST:PORT ([IPV6]:PORT for IPv6)",
    ("datagram", "to"): "the destination, HOST:PORT ([IPV6]:PORT for IPv6)",
    ("datagram", "transport"): "ip (UDP over IP, the default) or ipx",
    ("discovered", "result"): "success or failure",
    ("notification", "from"): "the sending machine",
    ("notification", "to"): "the destination machine",
    ("notification", "queue"): "the destination format name",
    ("notification", "timeout"): "TimeToReachQueue, seconds",
    ("notification", "delivery"): "0: Express",
    ("notification", "class"): "the message class",
    ("notification", "hash_algorithm"): "Message.HashAlgorithm",
    ("notification", "sender_id"): "the sender's queue manager GUID",
    ("notify", "path"): "the object's path name, or null",
    ("queue", "operation"): "create, update, delete or update_queue_manager",
    ("queue", "identifier"): "the queue's GUID, or null",
    ("hole", "kind"): "truncated, tcp-gap, fragment, cut or mid-message",
    ("hole", "from"): "HOST:PORT of the stream or frame's sender, when known",
    ("hole", "to"): "HOST:PORT of its destination, when known",
    ("note", "text"): "free text, never read",
}
