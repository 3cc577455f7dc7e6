"""The published trace format, version 2: what a directory server logs, one JSON object per line.

A trace is NDJSON. Every line carries ``"trace"`` (the trace id: lines of several traces may
share a file) and ``"format": 2`` (or ``1``: see *Versions* below), an ``"event"`` kind and ``"t"``, the trace clock in seconds
(non-decreasing). Events that happen at a server carry ``"node"``, its machine name. The first
line of each trace is its ``header``. Field names starting with ``x-`` are extensions: allowed
anywhere, never read. GUIDs are dashed text (either case), bytes are hexadecimal text, integers
are JSON integers (``1``, never ``1.0``). This module is the one definition of the format: the line validator
below and ``mqspec/schema/trace.schema.json`` (JSON Schema draft 2020-12, written by
``python -m mqspec.oracle.trace_format --schema``) are generated from the same tables.

Event kinds (I: an input the checker replays through the reference; O: an output it compares):

=====================  ==  ===============================================================
``header``                 first line: ``mode`` (clarified|literal), ``window``, ``observes``,
                           ``nodes`` (declarations, as ``node`` below), ``source``, ``generator``
``node``                   declares a server: ``name``, ``role`` (PEC|PSC|BSC; absent: the node
                           is checked at codec level only), ``site`` (GUID), ``identifier`` (QM
                           GUID), ``pec``, ``psc`` (a BSC's configured PSC), ``addresses``,
                           ``observes`` (the event kinds logged for it); format 2 adds
                           ``mqsd`` and ``mqcn``, the node's MS-MQSD and MS-MQCN configuration
                           (below): with one, the node's datagrams or notifications are
                           replayed through that protocol's reference, not only decoded
``start``              I   the server starts (3.2.3 / 3.3.3); a start of a running server is a restart
``crash``              I   the server stops; ``lose``: ``volatile`` (what 3.1.1 does not persist)
                           or ``all`` (a rebuilt server)
``clock``                  a reading of the node's own clock (``clock``, seconds): the reference
                           runs the node's handlers at ``t + (clock - t_of_reading)``
``client_request``     I   a directory client's create/update/delete at the node: ``request`` (the
                           server's id for it), ``operation``, ``object_type`` (MQDS_* value),
                           ``partition``, ``path``, ``guid``, ``properties`` (``{"propid": NAME or
                           number, "value"}`` as ``mqspec decode`` prints them), ``scope``, and
                           ``new_guid``: the GUID the server gave a created object
``request_completed``  O   the request ``request`` finished with HRESULT ``status``
``receive``            I   the server dequeued a message from its replication queue: ``body``
                           (hex), ``class`` (MSMQ message class, 0 Normal, 0x8000.. Nacks),
                           ``queue`` (the destination format name), ``from``
``send``               O   the server enqueued a replication message (3.1.7.2.1): ``to``, ``body``
                           (hex) and the MSMQ properties the text sets: ``queue`` (destination
                           format name), ``priority`` (0..7 as sent), ``timeout``
                           (TimeToReachQueue, s), ``time_to_be_received``, ``ack``
                           (AcknowledgmentRequested bits), ``admin_queue``, ``response_queue``,
                           ``class``, ``delivery`` (0 Express), ``hash_algorithm``,
                           ``sender_id_type``, ``sender_id``; every property is optional
``timer``              I   a timer expired: ``timer`` (change_propagation | bsc_ack |
                           change_request_wait) and ``args`` ([neighbor, Intrasite|Intersite],
                           [], [[requester, request identifier]])
``directory``          O   an [MS-MQDS] event the node raised on its directory: ``operation``,
                           ``status``, ``type``, ``path``, ``guid``, ``seq``, ``partition``
``snapshot``               a reading of (part of) the node's replication state: ``state`` as
                           :mod:`mqspec.oracle.state` describes; only the fields given are compared
``datagram``               an MS-MQSD packet (UDP): ``direction`` (send|receive), ``body``, ``from``,
                           ``to``, ``transport``; sent packets are checked against the codec;
                           format 2: ``network``, the network an MQSD client sent or received it on
``discover``           I   format 2: Get Directory Server List (MS-MQSD 3.1.4.1) at an MQSD client:
                           ``networks`` (NetworkAddressList, in order), ``ras`` (those that are
                           Remote Access Service addresses)
``discovered``         O   format 2: Get Directory Server List completed: ``result`` (success |
                           failure), ``servers`` (DirectoryServerList), ``connected_networks``,
                           ``network`` (LastSuccessfulNetworkAddress, when valid)
``notification``           an MS-MQCN message body: ``direction``, ``body``, ``from``, ``to``, ``queue``;
                           format 2: ``timeout``, ``delivery``, ``class``, ``hash_algorithm``
                           (the Message attributes of 3.3.5.3), ``sender_id_type``, ``sender_id``,
                           ``authentication`` (what a queue manager side reads), ``read`` (a received
                           version 0x02 message: the answer of the Directory Read it made,
                           3.2.5.2: ``[{"propid", "value"}, ...]`` or null for not found)
``notify``             I   format 2: Send Change Notification (MS-MQCN 3.3.4.1) at a directory
                           side: ``operation`` (iOperation: QueueCreation | QueueUpdate |
                           QueueDeletion | QueueManagerUpdate) and iDirectoryObject:
                           ``identifier``, ``owner`` (the owning queue manager's GUID: the
                           destination; absent, a queue's PROPID_Q_QMID or the machine itself),
                           ``path``, ``properties``, ``modified`` (PROPIDs an update changed),
                           ``domain_controller``
``queue``              O   format 2: an [MS-MQDMPR] event an MS-MQCN queue manager side raised:
                           ``operation`` (create | update | delete | update_queue_manager),
                           ``identifier`` (the queue GUID), ``attributes`` (those an update set)
``handover``               format 2: a site's PSC moved to another machine (modelling E-313):
                           ``site``, ``old`` (the old PSC) and, at the new PSC, ``state``, what
                           it takes over, or, at a BSC of the site, ``new``, the new PSC's
                           name, its configured PSC from now on (below)
``hole``                   format 2: bytes a capture lost (``mqspec trace from-pcap``): ``kind``
                           (truncated | tcp-gap | fragment | cut | mid-message), ``text``, ``nodes``
                           (the servers it touches; absent: every server), ``from``, ``to``,
                           ``bytes`` (how many were lost, when known), ``frame``; each node it
                           touches is judged up to it and no further (verdict ``incomplete-capture``)
``note``                   free text (``text``), ignored
=====================  ==  ===============================================================

MS-MQSD and MS-MQCN declarations (format 2), fields of a ``node`` declaration:

* ``"mqsd": {"role": "server", "enterprise": GUID, "site": GUID, "connected_networks": [GUID,
  ...], "servers": ["NAME[:ip|ipx|ip+ipx]", ...]}``: an MQSD server configured as 3.2.1 says
  (Enterprise.Identifier, Site.Identifier, ConnectedNetworkIdentifierList, DirectoryServerList
  with each name's IP/IPX flags, as ``mqspec mqsd serve`` takes them). Each ``datagram`` it
  receives (``from``: the sender, ``transport``: ip or ipx) is an input of 3.2.5 / 3.2.5.1; each
  it sends must be the reply the reference sends, to the sender, before the node's next received
  datagram (or the ``window``-th next); a reply where the reference stays silent, a missing
  reply, a wrong field (CorrelationID, a server list in a same-site reply, the mask) or a wrong
  destination is a divergence naming 3.2.5 or 3.2.5.1.
* ``"mqsd": {"role": "client", "enterprise": GUID, "site": GUID, "ipx_networks": [u32, ...],
  "wait_for_response": s, "timer_slack": s}``: an MQSD client's request parameters (3.1.3,
  3.1.5.1). Each request it sends must decode under the strict codec (2.2.1 binds clients) and
  carry that EnterpriseID and SiteID (and IPX network numbers, when given). When the node
  ``observes`` ``discover``, the client is replayed through the reference state machine of 3.1
  on the trace clock: its requests (RequestID: a new GUID per discovery, then kept), the Wait
  For Response Timer (``wait_for_response``, default 15 s, fires within ``timer_slack``, default
  1 s: a retry too early or missing diverges, naming 3.1.6.1), what it does with each received
  reply (3.1.5.2: a reply it MUST discard, such as a wrong CorrelationID, may lead to nothing)
  and, when it observes ``discovered``, its completion and lists (3.1.4.1, 3.1.7.1, 3.1.7.2).
* ``"mqcn": {"side": "directory" | "queue_manager", "version": 1 | 2}``: the MS-MQCN side the node
  runs and the Change Notification Message version it sends (directory side, 3.3.5) or
  processes (queue manager side, note <4>: ``version`` 1 means it processes only version 0x01).
  A directory side's sent notifications must decode and carry that version; when it also
  ``observes`` ``notify`` (the higher-layer input), each ``notify`` is run through 3.3.4.1 and the
  message the reference sends must follow: to NOTIFY_QUEUE_PRIVATE of the owner (``queue``), with
  the fields of 3.3.5.1 / 3.3.5.2 and the Message attributes of 3.3.5.3 the event gives
  (``directory_service``, default the node's name, is the DomainController of version 0x02; the
  node's ``identifier`` is the SenderIdentifier and GuidMasterId of version 0x01; without a
  ``version`` the replay expects 0x01, a directory service's). A queue manager
  side's received notifications are replayed through 3.2.5 and its ``queue`` events (the
  [MS-MQDMPR] Create/Update/Delete Queue and queue manager updates it raised) are compared with
  the reference's (QueueManager.Identifier is the node's ``identifier``). A version 0x02 message
  is replayed only with its ``read`` (the directory's answer the queue manager got; 3.2.5.2);
  without it the node's later queue events are not compared. The replay uses the properties of
  a version 0x01 update (3.2.5.1's "can use the property identifiers and values") and does not
  batch (notes <3>/<13>).

A PSC handover (format 2): when a site's PSC moves to another machine, the new machine takes over the
old PSC's persisted replication state and directory, and the site's BSCs are configured with its name;
no input explains that, so the trace declares it, one ``handover`` event per server concerned, after the
new PSC's declaration and before its first ``start`` (:mod:`mqspec.oracle.handover` gives the ``state``
and what ``mqspec check`` verifies of it).

Versions: mqspec writes format 3, which is format 2 with every SEQUENCE_NUMBER (a ``directory``
event's ``seq``, a ``snapshot``'s and a ``handover``'s sequence numbers) written as a decimal
string: they are 64 bits, and a JSON number above 2**53 loses precision in many languages
(:mod:`mqspec.json64`). A reader accepts either form in every format. ``"format": 1`` lines are
read as they always were (the ``mqsd``/``mqcn`` declarations and the ``queue``, ``handover``,
``notify``, ``discover``, ``discovered`` and ``hole`` events are format 2 and later only).

Partial traces are first-class: a trace may cover only some servers (undeclared events are an
error; declared servers without events are simply not checked), log only some kinds (a kind a
node does not ``observe`` is never expected of it), and snapshot only some fields.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import attrs

from .fields import (
    GUID_PATTERN,
    Anything,
    Choice,
    Fields,
    Hex,
    Integer,
    Items,
    Keyed,
    Number,
    Spec,
    Text,
    Wide,
    _object_schema,
    _show,
    check_fields,
    convert_fields,
    fast_validator,
)

#: the version mqspec writes in every line's "format"
FORMAT_VERSION = 3
#: the versions a reader accepts (format 1 lacks the MS-MQSD/MS-MQCN declarations and ``queue``)
READ_VERSIONS = (1, 2, 3)
SCHEMA_ID = "https://mqspec.invalid/schema/trace.schema.json"

ROLES = ("PEC", "PSC", "BSC")
TIMER_KINDS = ("change_propagation", "bsc_ack", "change_request_wait")
PURGE_STATES = ("NORMAL", "STARTSYNC0", "SYNC0", "COMPLETESYNC0")
#: the [MS-MQDMPR] events an MS-MQCN queue manager side raises (3.2.5.1, 3.2.5.2)
QUEUE_OPERATIONS = ("create", "update", "delete", "update_queue_manager")
DIRECTORY_OPERATIONS = ("create", "update", "delete", "read", "lookup", "reset1", "reset2")
#: the kinds a node can be said to "observe" (log); inputs and outputs of the checker
INPUT_KINDS = ("start", "crash", "client_request", "receive", "timer")
OUTPUT_KINDS = ("send", "request_completed", "directory")
NODE_KINDS = (*INPUT_KINDS, *OUTPUT_KINDS, "clock", "snapshot", "datagram", "notification", "queue", "notify",
              "discover", "discovered")
#: iOperation of MS-MQCN 3.3.4.1 Send Change Notification
NOTIFY_OPERATIONS = ("QueueCreation", "QueueUpdate", "QueueDeletion", "QueueManagerUpdate")
#: what a capture lost (a ``hole``): a frame cut by the snap length, stream bytes never captured, an IP
#: fragment never captured, the capture file cut mid-record, a stream first seen inside a message
HOLE_KINDS = ("truncated", "tcp-gap", "fragment", "cut", "mid-message")


class TraceError(ValueError):
    """A malformed trace line: ``path:line: field: reason`` (``mqspec check`` exits 2)."""

    def __init__(self, path: str, line: int, field: str, reason: str) -> None:
        super().__init__(path, line, field, reason)
        self.path, self.line, self.field, self.reason = path, line, field, reason

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.field}: {self.reason}"


# --- the events -------------------------------------------------------------------------------

GUID = Text(pattern=GUID_PATTERN)
OPT_GUID = Text(nullable=True, pattern=GUID_PATTERN)
NAME = Text()
OPT_TEXT = Text(nullable=True)
U32 = Integer(0, 0xFFFFFFFF)
BODY = Hex(description="the message bytes as hexadecimal text")
DIRECTION = Choice(("send", "receive"), description="whether the node sent or received it")
#: a SEQUENCE_NUMBER (MC-MQDSRP 2.2.2): 64 bits, written as a decimal string, read in either form
SEQ = Wide(description="a SEQUENCE_NUMBER (2.2.2)")
OBSERVES = Items(Choice(NODE_KINDS), description="the event kinds logged (absent: every kind the trace shows)")

NODE_FIELDS: dict[str, Spec] = {
    "name": Text(description="the machine name"),
    "role": Choice(ROLES, nullable=True, description="PEC, PSC or BSC; absent or null: codec-level checks only"),
    "site": Text(pattern=GUID_PATTERN, description="the site GUID (QueueManager.SiteIdentifier)"),
    "identifier": Text(pattern=GUID_PATTERN, description="the queue manager GUID (QueueManager.Identifier)"),
    "pec": Text(description="the PEC's machine name (3.1.3.1)"),
    "psc": Text(nullable=True, description="a BSC's configured PSC name (3.1.3.1, implementation-specific)"),
    "addresses": Items(Text(), description="network addresses of the machine (for captures)"),
    "observes": OBSERVES,
}
NODE_REQUIRED = ("name",)
#: a DirectoryServerList entry as ``mqspec mqsd serve --server`` takes it
SERVER_PATTERN = r"[^:]+(?::(?:ip|ipx|ip\+ipx|ipx\+ip))?"
MQSD_DECLARATION = Fields({
    "role": Choice(("server", "client"), description="the MS-MQSD role the node plays"),
    "enterprise": Text(pattern=GUID_PATTERN, description="Enterprise.Identifier"),
    "site": Text(pattern=GUID_PATTERN, description="Site.Identifier (a client's: its request's SiteID)"),
    "connected_networks": Items(Text(pattern=GUID_PATTERN),
                                description="a server's ConnectedNetworkIdentifierList (3.2.1)"),
    "servers": Items(Text(pattern=SERVER_PATTERN),
                     description="a server's DirectoryServerList: NAME[:ip|ipx|ip+ipx] (IP when not given)"),
    "ipx_networks": Items(Integer(0, 0xFFFFFFFF), description="a client's IPX network numbers (2.2.2)"),
    "wait_for_response": Number(lo=0, description="a client's Wait For Response Timer, s (3.1.2.1: 15)"),
    "timer_slack": Number(lo=0, description="how far from its due time a client's timer may fire, s (default 1)"),
}, required=("role", "enterprise", "site"), description="the node's MS-MQSD configuration (format 2)")
MQCN_DECLARATION = Fields({
    "side": Choice(("directory", "queue_manager"), description="3.3 (sends) or 3.2 (receives)"),
    "version": Choice((1, 2), description="the Change Notification Message version sent, or processed"),
    "directory_service": Text(description="a directory side's DomainController (3.3.5.1; default: the node's name)"),
}, required=("side",), description="the node's MS-MQCN side (format 2)")
NODE_FIELDS_2: dict[str, Spec] = {**NODE_FIELDS, "mqsd": MQSD_DECLARATION, "mqcn": MQCN_DECLARATION}

PROPERTY = Fields({"propid": Anything(description="a PROPID name or number"),
                   "value": Anything(description="its value as mqspec decode prints it")},
                  required=("propid", "value"))

NEIGHBOR = Fields({
    "name": Text(description="DirectoryNeighbor.MachineName"),
    "partition": GUID,
    "acked_seq": SEQ,
    "acked_pec_seq": SEQ,
    "available": Integer(0, description="how many changes AvailableChangeCollection holds"),
})
STATE = Fields({
    "role": Choice(ROLES),
    "site": GUID,
    "partitions": Keyed(GUID_PATTERN, Fields({
        "authority": Text(description="DirectoryPartition.AuthorityName"),
        "last_seq": SEQ,
        "purged_seq": SEQ,
        "allowed_purge_seq": SEQ,
        "purge_state": Choice(PURGE_STATES),
        "pending": Integer(0, description="how many changes PendingChangeCollection holds"),
        "objects": Keyed(GUID_PATTERN, Fields({"type": Integer(0), "path": OPT_TEXT, "seq": SEQ}),
                         description="every directory object of the partition, by GUID (compared as a whole)"),
    }), description="partitions by PartitionID; only those given are compared"),
    "psc_neighbors": Items(NEIGHBOR, same_keys=True, description="PSCNeighborCollection (compared as a whole)"),
    "bsc_neighbors": Items(NEIGHBOR, same_keys=True, description="BSCNeighborCollection (compared as a whole)"),
    "tombstones": Items(Fields({"guid": OPT_GUID, "partition": GUID, "seq": SEQ, "type": Integer(0),
                                "scope": Integer(0)}), same_keys=True,
                        description="DeletedObjectCollection (compared as a whole)"),
}, description="a node's replication state, any part of it")

#: format 2: the Message attributes an MS-MQCN sender sets (3.3.5.3) and a queue manager side reads (3.2.5.1)
NOTIFICATION_SENDER: dict[str, Spec] = {
    "timeout": U32, "delivery": Integer(0, 1), "class": Integer(0, 0xFFFF), "hash_algorithm": U32,
    "sender_id_type": Integer(0, 2, description="rMessage.SenderIdentifierType (2: QueueManagerIdentifier)"),
    "sender_id": GUID,
    "authentication": Integer(0, 3, description="rMessage.AuthenticationLevel (0: None, not signed)"),
    "read": Items(PROPERTY, nullable=True,
                  description="a received version 0x02 message: what the Directory Read of 3.2.5.2 returned "
                              "(the object's properties; null: not found)"),
}

#: format 2: a PSC handover (mqspec.oracle.handover), the state a new PSC takes over, whole
_HANDOVER_PARTITION = Fields({
    "partition": GUID, "authority": Text(description="DirectoryPartition.AuthorityName"),
    "last_seq": SEQ, "purged_seq": SEQ, "allowed_purge_seq": SEQ,
    "purge_state": Choice(PURGE_STATES),
}, required=("partition", "authority", "last_seq", "purged_seq", "allowed_purge_seq", "purge_state"))
_HANDOVER_NEIGHBOR = Fields({
    "name": Text(description="DirectoryNeighbor.MachineName"), "partition": GUID, "acked_seq": SEQ,
    "acked_pec_seq": SEQ, "acked_time": Number(description="LastAckedTime, trace clock seconds"),
}, required=("name", "partition", "acked_seq", "acked_pec_seq", "acked_time"))
HANDOVER_STATE = Fields({
    "partitions": Items(_HANDOVER_PARTITION, description="DirectoryPartitionCollection (persisted attributes)"),
    "psc_neighbors": Items(_HANDOVER_NEIGHBOR, description="PSCNeighborCollection (persisted attributes)"),
    "bsc_neighbors": Items(_HANDOVER_NEIGHBOR, description="BSCNeighborCollection (persisted attributes)"),
    "tombstones": Items(Fields({"guid": OPT_GUID, "partition": GUID, "seq": SEQ, "type": Integer(0),
                                "scope": Integer(0)}, required=("guid", "partition", "seq", "type", "scope")),
                        description="DeletedObjectCollection"),
    "objects": Items(Fields({
        "guid": GUID, "type": Integer(1, 0xFFFF), "path": OPT_TEXT, "partition": GUID, "seq": SEQ,
        "properties": Items(PROPERTY, description="by PROPID, less the identity, partition, sequence and path"),
    }, required=("guid", "type", "path", "partition", "seq", "properties")),
        description="the directory's objects, by GUID"),
}, required=("partitions", "psc_neighbors", "bsc_neighbors", "tombstones", "objects"),
    description="at the new PSC (node): what it takes over")
HANDOVER_FIELDS: dict[str, Spec] = {
    "site": Text(pattern=GUID_PATTERN, description="the site whose PSC moved"),
    "old": Text(description="the old PSC's machine name"),
    "new": Text(description="at a BSC of the site: the new PSC's machine name, its configured PSC from now on"),
    "state": HANDOVER_STATE,
}

#: event kind -> (fields other than the common ones, required ones)
EVENTS: dict[str, tuple[dict[str, Spec], tuple[str, ...]]] = {
    "header": ({
        "mode": Choice(("clarified", "literal"), description="the reading the implementation claims (default clarified)"),
        "window": Integer(0, description="how many later inputs of a node its outputs may lag (default 0)"),
        "observes": OBSERVES,
        "nodes": Items(Fields(NODE_FIELDS_2, NODE_REQUIRED)),
        "source": Text(description="where the trace comes from"),
        "generator": Anything(description="the tool that wrote it"),
    }, ()),
    "node": (NODE_FIELDS_2, NODE_REQUIRED),
    "start": ({}, ()),
    "crash": ({"lose": Choice(("volatile", "all"))}, ()),
    "clock": ({"clock": Number(description="the node's own clock, seconds")}, ("clock",)),
    "client_request": ({
        "request": U32,
        "operation": Choice(("create", "update", "delete")),
        "object_type": Integer(1, 0xFFFF),
        "partition": GUID,
        "path": OPT_TEXT,
        "guid": OPT_GUID,
        "properties": Items(PROPERTY),
        "scope": Integer(0, 1),
        "new_guid": OPT_GUID,
    }, ("request", "operation", "object_type", "partition")),
    "request_completed": ({"request": U32, "status": U32}, ("request", "status")),
    "receive": ({"body": BODY, "class": Integer(0, 0xFFFF), "queue": Text(), "from": OPT_TEXT}, ("body",)),
    "send": ({
        "to": Text(description="the destination machine"),
        "body": BODY,
        "queue": Text(description="DestinationQueueFormatName"),
        "priority": Integer(0, 7),
        "timeout": U32,
        "time_to_be_received": U32,
        "ack": Integer(0, 0xFF),
        "admin_queue": OPT_TEXT,
        "response_queue": OPT_TEXT,
        "class": Integer(0, 0xFFFF),
        "delivery": Integer(0, 1),
        "hash_algorithm": U32,
        "sender_id_type": Integer(0, 2),
        "sender_id": GUID,
    }, ("to", "body")),
    "timer": ({"timer": Choice(TIMER_KINDS), "args": Items(Anything())}, ("timer",)),
    "directory": ({
        "operation": Choice(DIRECTORY_OPERATIONS), "status": U32, "type": Integer(0, nullable=True),
        "path": OPT_TEXT, "guid": OPT_GUID, "seq": Wide(nullable=True, description="a SEQUENCE_NUMBER (2.2.2)"),
        "partition": OPT_GUID,
    }, ("operation", "status")),
    "snapshot": ({"state": STATE}, ("state",)),
    "datagram": ({"direction": DIRECTION, "body": BODY, "from": OPT_TEXT, "to": OPT_TEXT,
                  "transport": Choice(("ip", "ipx")),
                  "network": Text(description="an MQSD client's network the datagram went out or came in on")},
                 ("direction", "body")),
    "discover": ({"networks": Items(Text(), description="NetworkAddressList: the networks, in order"),
                  "ras": Items(Text(), description="those of them that are Remote Access Service addresses")},
                 ("networks",)),
    "discovered": ({"result": Choice(("success", "failure")),
                    "network": Text(description="LastSuccessfulNetworkAddress, when valid"),
                    "servers": Items(Text(), description="QueueManager.DirectoryServerList"),
                    "connected_networks": Items(GUID, description="QueueManager.ConnectedNetworkIdentifierList")},
                   ("result",)),
    "notification": ({"direction": DIRECTION, "body": BODY, "from": OPT_TEXT, "to": OPT_TEXT,
                      "queue": OPT_TEXT, **NOTIFICATION_SENDER}, ("direction", "body")),
    "notify": ({"operation": Choice(NOTIFY_OPERATIONS, description="iOperation"),
                "identifier": Text(pattern=GUID_PATTERN, description="the queue or machine object's GUID"),
                "owner": Text(pattern=GUID_PATTERN, description="the GUID of the queue manager that owns it "
                                                                "(absent: a queue's PROPID_Q_QMID, a machine itself)"),
                "path": OPT_TEXT, "properties": Items(PROPERTY, description="the object's attributes and values"),
                "modified": Items(Anything(), description="the PROPIDs (names or numbers) an update changed"),
                "domain_controller": Text(description="the directory service where the object changed")},
               ("operation", "identifier")),
    "queue": ({"operation": Choice(QUEUE_OPERATIONS), "identifier": OPT_GUID,
               "attributes": Items(Text(), description="the attributes an update changed")},
              ("operation",)),
    "handover": (HANDOVER_FIELDS, ("site", "old")),
    "hole": ({"kind": Choice(HOLE_KINDS), "text": Text(description="what was lost, where"),
              "nodes": Items(Text(), description="the servers the hole touches (absent: every server)"),
              "from": OPT_TEXT, "to": OPT_TEXT,
              "bytes": Integer(0, description="how many bytes were lost, when the capture tells"),
              "frame": Integer(1, description="the capture's frame number nearest the hole")},
             ("kind", "text")),
    "note": ({"text": Text()}, ()),
}
#: what format 1 lacks
FORMAT_2_ONLY = frozenset({"queue", "notify", "discover", "discovered", "handover", "hole"})
#: events that happen at a node (they carry "node")
AT_NODE = frozenset(("start", "crash", "clock", "client_request", "request_completed", "receive", "send",
                     "timer", "directory", "snapshot", "datagram", "notification", "queue", "notify",
                     "discover", "discovered", "handover"))
COMMON: dict[str, Spec] = {
    "trace": Text(description="the trace id"),
    "format": Choice(READ_VERSIONS, description="the format version"),
    "event": Choice(tuple(EVENTS)),
    "t": Number(description="the trace clock, seconds; non-decreasing"),
    "node": Text(description="the machine name of the server the event happened at"),
}
_FIELDS = {kind: ({**COMMON, **fields}, ("trace", "format", "event", "t",
                                         *(("node",) if kind in AT_NODE else ()), *required))
           for kind, (fields, required) in EVENTS.items()}
#: format 1: the same events without the format 2 additions
_FIELDS_1 = {kind: ({k: v for k, v in fields.items() if k not in ("mqsd", "mqcn", "network", *NOTIFICATION_SENDER)}
                    if kind in ("node", "notification", "datagram") else
                    {**fields, "nodes": Items(Fields(NODE_FIELDS, NODE_REQUIRED))} if kind == "header" else fields,
                    required)
             for kind, (fields, required) in _FIELDS.items() if kind not in FORMAT_2_ONLY}
#: format 3 is format 2 written with 64-bit values as decimal strings; both are read in either form
_BY_VERSION = {1: _FIELDS_1, 2: _FIELDS, 3: _FIELDS}
_FAST = {version: {kind: fast_validator(*entry) for kind, entry in table.items()}
         for version, table in _BY_VERSION.items()}
#: per version, the kinds with a 64-bit field: their fields (converted between the two JSON forms)
_WIDE = {version: {kind: fields for kind, (fields, _) in table.items() if any(s.wide for s in fields.values())}
         for version, table in _BY_VERSION.items()}


# --- reading ----------------------------------------------------------------------------------


@attrs.define(eq=False)
class Trace:
    """One trace: its header and events (the header is event 0) and where each line came from."""

    trace_id: str
    path: str
    events: list[dict[str, Any]]
    lines: list[int]

    @property
    def header(self) -> dict[str, Any]:
        return self.events[0]

    def where(self, index: int) -> str:
        """``path:line`` of event ``index`` (the end of the file for an index past the last)."""
        line = self.lines[index] if index < len(self.lines) else (self.lines[-1] + 1 if self.lines else 1)
        return f"{self.path}:{line}"


def validate(record: Any, path: str = "<trace>", line: int = 0) -> dict[str, Any]:
    """Check one decoded line; TraceError names the first bad field."""
    if type(record) is not dict:
        raise TraceError(path, line, "(line)", "a trace line is a JSON object")
    version = record.get("format")
    if type(version) is not int or version not in _BY_VERSION:
        if version is None:
            raise TraceError(path, line, "format", "is required")
        raise TraceError(path, line, "format", f"unsupported format version {_show(version)} "
                                               f"(this mqspec reads {' and '.join(map(str, READ_VERSIONS))})")
    kind = record.get("event")
    table = _BY_VERSION[version]
    entry = table.get(kind) if type(kind) is str else None
    if entry is None:
        if type(kind) is str and kind in EVENTS:
            raise TraceError(path, line, "event", f"{_show(kind)} is an event of format 2 and later, "
                                                  f"not of format {version}")
        raise TraceError(path, line, "event", f"{_show(kind)} is not an event kind ({', '.join(EVENTS)})")
    if not _FAST[version][kind](record):
        bad = check_fields(record, *entry)
        raise TraceError(path, line, *(bad or ("(line)", "is not a valid trace line")))
    if kind == "handover":
        _check_handover(record, path, line)
    elif kind in ("header", "node"):
        for i, node in enumerate(record.get("nodes", ())) if kind == "header" else [(None, record)]:
            _check_declaration(node, path, line, "" if i is None else f"nodes[{i}].")
    return readable(record)


def readable(record: dict[str, Any]) -> dict[str, Any]:
    """A valid record as the checker reads it: its 64-bit values integers, whichever form the line gave."""
    table = _WIDE.get(record.get("format"))  # type: ignore[arg-type]
    fields = table.get(record.get("event")) if table is not None else None  # type: ignore[arg-type]
    return record if fields is None else convert_fields(record, fields, False)


def _check_declaration(node: dict[str, Any], path: str, line: int, prefix: str) -> None:
    if node.get("role") is not None:
        for name in ("site", "pec"):
            if name not in node:
                raise TraceError(path, line, f"{prefix}{name}", "is required when a role is given")


def _check_handover(record: dict[str, Any], path: str, line: int) -> None:
    # at the new PSC (node) the state it takes over; at a BSC of the site the new PSC's name
    if "state" in record and "new" in record:
        raise TraceError(path, line, "new", "is given at a BSC only (at the new PSC, node names it)")
    if "state" not in record and "new" not in record:
        raise TraceError(path, line, "state", "is required at the new PSC (or new, at a BSC of the site)")


def read_lines(path: str | Path, text: str | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, validated record) for every non-blank line of an NDJSON file (or of ``text``)."""
    from .source import LineSource

    source = LineSource.from_path(path) if text is None else LineSource.from_text(text, str(path))
    return source.records()


def load(path: str | Path, text: str | None = None) -> list[Trace]:
    """Every trace of one file, in memory, in order of first appearance; TraceError for a malformed line.

    Checks what a line alone cannot show (:func:`mqspec.oracle.source.survey`): each trace starts
    with its header, has one header, declares each node before its events, and its clock never
    runs backwards. ``mqspec check`` does not load traces: it streams them.
    """
    from .source import LineSource, survey

    source = LineSource.from_path(path) if text is None else LineSource.from_text(text, str(path))
    traces: dict[str, Trace] = {}

    def on_header(s: Any) -> Callable[[int, int, dict[str, Any]], None]:
        trace = traces[s.trace_id] = Trace(s.trace_id, source.name, [s.header], [s.first_line])

        def keep(index: int, line: int, record: dict[str, Any]) -> None:
            trace.events.append(record)
            trace.lines.append(line)

        return keep

    survey(source, on_header)
    return list(traces.values())


# --- writing ----------------------------------------------------------------------------------


class TraceWriter:
    """Writes one trace's lines: each record gets the trace id and the format version first, and
    its 64-bit values are written as decimal strings (format 3)."""

    def __init__(self, trace_id: str, write: Callable[[str], object]) -> None:
        self.trace_id = trace_id
        self._write = write
        self._head = {"trace": trace_id, "format": FORMAT_VERSION}
        self._wide = _WIDE[FORMAT_VERSION]
        self.count = 0

    def __call__(self, record: dict[str, Any]) -> None:
        fields = self._wide.get(record.get("event"))  # type: ignore[arg-type]
        if fields is not None:
            record = convert_fields(record, fields, True)
        self._write(json.dumps({**self._head, **record}, separators=(",", ":")) + "\n")
        self.count += 1


def header(*, source: str, mode: str = "clarified", window: int = 0, observes: Iterable[str] | None = None,
           nodes: Iterable[dict[str, Any]] = (), t: float = 0.0) -> dict[str, Any]:
    """A header record (without the trace id and format, which the writer adds)."""
    from mqspec import __version__

    record: dict[str, Any] = {"event": "header", "t": t, "source": source, "mode": mode, "window": window,
                              "generator": {"tool": "mqspec", "version": __version__}}
    if observes is not None:
        record["observes"] = list(observes)
    nodes = list(nodes)
    if nodes:
        record["nodes"] = nodes
    return record


# --- the JSON Schema --------------------------------------------------------------------------


def schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one trace line, generated from the tables above."""
    defs = {kind: _object_schema(*_FIELDS[kind]) for kind in EVENTS}
    differs = [kind for kind in _FIELDS_1 if _FIELDS_1[kind] != _FIELDS[kind]]
    defs.update({f"{kind}-format-1": _object_schema(*_FIELDS_1[kind]) for kind in differs})
    # a declaration with a role needs site and pec (_check_declaration)
    role_rule = {"if": {"properties": {"role": {"enum": list(ROLES)}}, "required": ["role"]},
                 "then": {"required": ["site", "pec"]}}
    for name in ("node", "node-format-1"):
        defs[name]["allOf"] = [role_rule]
    for name in ("header", "header-format-1"):
        defs[name]["properties"]["nodes"]["items"]["allOf"] = [role_rule]
    # a handover gives state (at the new PSC) or new (at a BSC), never both (_check_handover)
    defs["handover"]["if"] = {"required": ["state"]}
    defs["handover"]["then"] = {"properties": {"new": False}}
    defs["handover"]["else"] = {"required": ["new"]}
    format_1 = {"properties": {"format": {"const": 1}}, "required": ["format"]}
    rules: list[dict[str, Any]] = []
    for kind in EVENTS:
        rule: dict[str, Any] = {"if": {"properties": {"event": {"const": kind}}, "required": ["event"]}}
        if kind in differs:
            rule["then"] = {"if": format_1, "then": {"$ref": f"#/$defs/{kind}-format-1"},
                            "else": {"$ref": f"#/$defs/{kind}"}}
        elif kind in FORMAT_2_ONLY:
            rule["then"] = {"$ref": f"#/$defs/{kind}", "properties": {"format": {"enum": [2, 3]}}}
        else:
            rule["then"] = {"$ref": f"#/$defs/{kind}"}
        rules.append(rule)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": f"mqspec trace line, format {FORMAT_VERSION} (and formats 1 and 2)",
        "description": (__doc__ or "").split("\n\n")[0].replace("\n", " "),
        "type": "object",
        "required": ["trace", "format", "event"],
        "properties": {"event": {"enum": list(EVENTS)}, "format": {"enum": list(READ_VERSIONS)}},
        "allOf": rules,
        "$defs": defs,
    }


def schema_text() -> str:
    return json.dumps(schema(), indent=2, ensure_ascii=False) + "\n"


SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schema" / "trace.schema.json"


if __name__ == "__main__":  # pragma: no cover - the generator of mqspec/schema/trace.schema.json
    if sys.argv[1:] == ["--schema"]:
        sys.stdout.write(schema_text())
    elif sys.argv[1:] == ["--write"]:
        SCHEMA_PATH.write_text(schema_text(), encoding="utf-8")
    else:
        sys.exit("usage: python -m mqspec.oracle.trace_format --schema | --write")
