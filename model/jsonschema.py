"""The JSON Schema (draft 2020-12) of every decoded structure: the contract of ``mqspec decode``'s output,
of ``mqspec encode``'s input and of the codec vectors' ``expected.json``.

Generated from the attrs classes the codecs decode into (:data:`STRUCTURES`) and the JSON form of
:mod:`mqspec.model.jsonform`, so the schema and the JSON cannot drift apart; every field says which
field of the specification it holds (:data:`FIELDS`), and the few that are mqspec's, not the
text's, name the register entry that adds them. A top-level message is tagged with its structure
name under ``"message"``; a structure nested in another (a DirectoryChange in a message, a
DirectoryServiceServer in a reply) is not.

>>> s = schema()
>>> s["$defs"]["TopologyServerReply"]["properties"]["connected_network_mask"]["maximum"]
4294967295
"""

from __future__ import annotations

import enum
import types
import typing
from typing import Any

import attrs

from mqspec.json64 import u64_schema

from . import mqcn, mqdsrp, mqsd
from .guid import Guid
from .propids import PROPIDS
from .propvalue import Property
from .seqnum import SequenceNumber

SCHEMA_ID = "https://mqspec.invalid/schema/messages.schema.json"
GUID = {"type": "string", "pattern": "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$",
        "description": "a GUID, lowercase dashed text ([MS-DTYP] 2.3.4.3 field order)"}
HEX = {"type": "string", "pattern": "^([0-9a-f]{2})*$", "description": "bytes as lowercase hexadecimal"}
U32 = {"type": "integer", "minimum": 0, "maximum": 0xFFFFFFFF}

#: protocol -> structure name -> class: every top-level message and every structure nested in one
STRUCTURES: dict[str, dict[str, type]] = {
    "mqdsrp": {**mqdsrp.MESSAGE_TYPES},
    "mqsd": {**mqsd.MESSAGE_TYPES, "DirectoryServiceServer": mqsd.DirectoryServiceServer},
    "mqcn": {**mqcn.MESSAGE_TYPES, "NotificationUpdate": mqcn.NotificationUpdate,
             "NotificationBody": mqcn.NotificationBody},
}

#: (structure, field) -> the specification's field and what the JSON holds
FIELDS: dict[tuple[str, str], str] = {
    ("ChangeRequestMessage", "site_id"): "BaseReplicationHeader.SiteID (MC-MQDSRP 2.2.5.1)",
    ("ChangeRequestMessage", "partition_id"): "ChangeRequestHeader.PartitionID (2.2.5.2)",
    ("ChangeRequestMessage", "request_identifier"): "ChangeRequestHeader.RequestIdentifier (2.2.5.2)",
    ("ChangeRequestMessage", "requester_name"): "ChangeRequestHeader.RequesterName (2.2.5.2)",
    ("ChangeRequestMessage", "psc_name"): "ChangeRequestHeader.PSCName (2.2.5.2; null: PSCNameOffset 0; E-013)",
    ("ChangeRequestMessage", "change"): "the DirectoryChange of the request (2.2.6.2)",
    ("ChangeReplyMessage", "site_id"): "BaseReplicationHeader.SiteID (2.2.5.1)",
    ("ChangeReplyMessage", "request_identifier"): "RequestIdentifier (2.2.6.3)",
    ("ChangeReplyMessage", "result"): "Result, an HRESULT (2.2.6.3)",
    ("ChangeReplyMessage", "requester_name"): "RequesterName (2.2.6.3)",
    ("SyncRequestMessage", "site_id"): "BaseReplicationHeader.SiteID (2.2.5.1)",
    ("SyncRequestMessage", "partition_id"): "PartitionID (2.2.6.4)",
    ("SyncRequestMessage", "from_seq_number"): "FromSeqNumber (2.2.6.4)",
    ("SyncRequestMessage", "to_seq_number"): "ToSeqNumber (2.2.6.4)",
    ("SyncRequestMessage", "known_purged_seq_number"): "KnownPurgedSeqNumber (2.2.6.4)",
    ("SyncRequestMessage", "is_sync0"): "IsSync0 (2.2.6.4): 0x01 true",
    ("SyncRequestMessage", "scope"): "Scope (2.2.6.4): 0 no restriction, 1 enterprise (E-019)",
    ("SyncRequestMessage", "requester_name"): "RequesterName (2.2.6.4)",
    ("SyncReplyMessage", "site_id"): "BaseReplicationHeader.SiteID (2.2.5.1)",
    ("SyncReplyMessage", "partition_id"): "SyncReplyHeader.PartitionID (2.2.5.3)",
    ("SyncReplyMessage", "from_seq_number"): "SyncReplyHeader.FromSeqNumber (2.2.5.3)",
    ("SyncReplyMessage", "to_seq_number"): "SyncReplyHeader.ToSeqNumber (2.2.5.3)",
    ("SyncReplyMessage", "purged_seq_number"): "SyncReplyHeader.PurgedSeqNumber (2.2.5.3)",
    ("SyncReplyMessage", "complete_sync0"): "SyncReplyHeader.CompleteSync0 (2.2.5.3): 0, 1 or 2 (E-014)",
    ("SyncReplyMessage", "changes"): "the DirectoryChanges of the reply, SyncReplyHeader.Count of them (2.2.6.5)",
    ("BSCAckMessage", "site_id"): "BaseReplicationHeader.SiteID (2.2.5.1)",
    ("BSCAckMessage", "bsc_machine_id"): "BSCMachineID (2.2.6.6)",
    ("BSCAckMessage", "bsc_name"): "BSCName (2.2.6.6)",
    ("PSCAckMessage", "site_id"): "BaseReplicationHeader.SiteID (2.2.5.1)",
    ("PSCAckMessage", "psc_site_id"): "PSCSiteID (2.2.6.7)",
    ("PSCAckMessage", "acked_partition_id"): "AckedPartitionID (2.2.6.7)",
    ("PSCAckMessage", "acked_seq_number"): "AckedSeqNumber (2.2.6.7)",
    ("PSCAckMessage", "psc_name"): "PSCName (2.2.6.7)",
    ("AlreadyPurgedMessage", "site_id"): "BaseReplicationHeader.SiteID (2.2.5.1)",
    ("AlreadyPurgedMessage", "partition_id"): "PartitionID (2.2.6.8)",
    ("AlreadyPurgedMessage", "purged_seq_number"): "PurgedSeqNumber (2.2.6.8)",
    ("ChangePropagationMessage", "site_id"): "BaseReplicationHeader.SiteID (2.2.5.1)",
    ("ChangePropagationMessage", "flush"): "Flush (2.2.6.9): 0x01 true",
    ("ChangePropagationMessage", "changes"): "the DirectoryChanges, Count of them (2.2.6.9)",
    ("ChangePropagationMessage", "seq_numbers"): "the SeqNumberHeader (2.2.5.4; always present, E-016)",
    ("DirectoryChange", "command"): "Command (2.2.4): 0 create, 1 update, 2 delete, 3 sync",
    ("DirectoryChange", "partition_id"): "PartitionID (2.2.4)",
    ("DirectoryChange", "previous_seq_number"): "PreviousSeqNumber (2.2.4)",
    ("DirectoryChange", "seq_number"): "SeqNumber (2.2.4)",
    ("DirectoryChange", "purged_seq_number"): "PurgedSeqNumber (2.2.4)",
    ("DirectoryChange", "properties"): "PropertyID and PropertyValue, NumberOfProperties pairs in order (2.2.4)",
    ("DirectoryChange", "path_name"): "PathName (2.2.4; null when UseGuid is 0x01)",
    ("DirectoryChange", "guid_identifier"): "GuidIdentifier (2.2.4; null when UseGuid is 0x00): UseGuid follows",
    ("SeqNumberHeader", "machine_name"): "MachineName (2.2.5.4; null when Count is 0)",
    ("SeqNumberHeader", "partitions"): "the PARTITION_SEQ_NUMBERS, Count of them (2.2.5.4)",
    ("PartitionSeqNumbers", "partition_id"): "PartitionID (2.2.5.4)",
    ("PartitionSeqNumbers", "last_seq_number"): "LastSeqNumber (2.2.5.4)",
    ("PartitionSeqNumbers", "purged_seq_number"): "PurgedSeqNumber (2.2.5.4)",
    ("TopologyClientRequest", "enterprise_id"): "EnterpriseID (MS-MQSD 2.2.2)",
    ("TopologyClientRequest", "request_id"): "RequestID (2.2.2)",
    ("TopologyClientRequest", "site_id"): "SiteID (2.2.2)",
    ("TopologyClientRequest", "ipx_network_numbers"): "IPXNetworkNumberArray (2.2.2; empty: the IP form, "
                                                      "IPXNetworkCount absent; E-021)",
    ("TopologyServerReply", "correlation_id"): "CorrelationID (2.2.3)",
    ("TopologyServerReply", "connected_networks"): "ConnectedNetworkArray, ConnectedNetworkCount GUIDs (2.2.3)",
    ("TopologyServerReply", "connected_network_mask"): "ConnectedNetworkMask (2.2.3): 0 over IP, "
                                                       "ConnectedNetworkCount bits set over IPX (E-022)",
    ("TopologyServerReply", "responding_site_id"): "RespondingSiteID (2.2.3; null when DirectoryServiceServerSize "
                                                   "is 0, E-024)",
    ("TopologyServerReply", "servers"): "DirectoryServiceServerArray, entry by entry (2.2.3; "
                                        "DirectoryServiceServerSize follows from it)",
    ("DirectoryServiceServer", "name"): "an Entry's name (2.2.3 ABNF: 1*NameChar)",
    ("DirectoryServiceServer", "ip"): "an Entry's IP character: true for \"1\" (2.2.3)",
    ("DirectoryServiceServer", "ipx"): "an Entry's IPX character: true for \"1\" (2.2.3)",
    ("ChangeNotificationMessage", "version"): "Version (MS-MQCN 2.2.4): 1 directory service, 2 queue manager",
    ("ChangeNotificationMessage", "updates"): "Data of version 0x01: the Notification Updates, "
                                              "NumberOfUpdateNotifications of them (2.2.4, 2.2.6)",
    ("ChangeNotificationMessage", "body"): "Data of version 0x02: the Notification Body (2.2.4, 2.2.5); "
                                           "null for version 0x01",
    ("NotificationUpdate", "command"): "Command (2.2.6): 0 create, 1 change, 2 delete",
    ("NotificationUpdate", "path_name"): "PathName (2.2.6; null when UseGuid is 0x01)",
    ("NotificationUpdate", "guid_identifier"): "GuidIdentifier (2.2.6; null when UseGuid is 0x00)",
    ("NotificationUpdate", "guid_master_id"): "GuidMasterId (2.2.6)",
    ("NotificationUpdate", "reserved"): "Reserved (2.2.6), its bytes as received",
    ("NotificationUpdate", "properties"): "PropertyId and PropertyValue pairs in order (2.2.6)",
    ("NotificationBody", "event"): "Event (2.2.5): 1 queue created, 2 queue changed, 3 queue deleted, 4 machine changed",
    ("NotificationBody", "object_guid"): "ObjectGuid (2.2.5)",
    ("NotificationBody", "domain_controller"): "DirectoryServiceServer, the text between the DomainController tags "
                                               "(2.2.5)",
    ("NotificationBody", "object_guid_text"): "mqspec's (policy E-032): the ObjectGuid text as received when it is "
                                              "not the lowercase form, so that the body encodes back as received; "
                                              "null otherwise",
    ("NotificationBody", "spaced_end_tag"): "mqspec's (erratum E-030): whether the body closed ObjectGuid with the "
                                            "ABNF's \"</ObjectGuid >\"",
}

#: integer fields and their ranges (the others are enumerations or booleans)
_INTEGERS: dict[tuple[str, str], dict[str, Any]] = {
    ("ChangeRequestMessage", "request_identifier"): U32,
    ("ChangeReplyMessage", "request_identifier"): U32,
    ("ChangeReplyMessage", "result"): U32,
    ("TopologyServerReply", "connected_network_mask"): U32,
    ("TopologyClientRequest", "ipx_network_numbers"): U32,
}


def _field_schema(owner: str, name: str, hint: Any) -> dict[str, Any]:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(hint) if a is not type(None)]
        return {"oneOf": [_field_schema(owner, name, options[0]), {"type": "null"}]}
    if origin is tuple:
        return {"type": "array", "items": _field_schema(owner, name, typing.get_args(hint)[0])}
    if hint is Guid:
        return {"$ref": "#/$defs/guid"}
    if hint is SequenceNumber:
        return {"$ref": "#/$defs/seq"}
    if hint is bytes:
        return {"$ref": "#/$defs/hex"}
    if hint is bool:
        return {"type": "boolean"}
    if hint is str:
        return {"type": "string"}
    if hint is Property:
        return {"$ref": "#/$defs/property"}
    if isinstance(hint, type) and issubclass(hint, enum.IntEnum):
        return {"enum": [int(m) for m in hint]}
    if hint is int:
        if (owner, name) not in _INTEGERS:
            raise KeyError(f"{owner}.{name}: an integer field with no range in model/jsonschema.py")
        return dict(_INTEGERS[(owner, name)])
    if attrs.has(hint):
        return {"$ref": f"#/$defs/{hint.__name__}"}
    raise TypeError(f"{owner}.{name}: no JSON Schema for {hint!r}")


def structure_schema(cls: type) -> dict[str, Any]:
    """One structure: its fields as :mod:`mqspec.model.jsonform` writes them, each described."""
    hints = typing.get_type_hints(cls)
    props: dict[str, Any] = {"message": {"const": cls.__name__,
                                         "description": "the structure's name (top-level messages only)"}}
    for field in attrs.fields(cls):
        key = (cls.__name__, field.name)
        if key not in FIELDS:
            raise KeyError(f"{cls.__name__}.{field.name} has no description in model/jsonschema.py FIELDS")
        props[field.name] = {**_field_schema(cls.__name__, field.name, hints[field.name]), "description": FIELDS[key]}
    return {"type": "object", "properties": props, "required": [f.name for f in attrs.fields(cls)],
            "additionalProperties": False, "description": (cls.__doc__ or "").strip().splitlines()[0]}


def schema() -> dict[str, Any]:
    """The schema of one decoded message of any protocol (``oneOf`` the messages; ``$defs`` every structure)."""
    defs: dict[str, Any] = {
        "guid": GUID, "hex": HEX,
        "seq": u64_schema("a SEQUENCE_NUMBER (MC-MQDSRP 2.2.2; 8 bytes, most significant first, on the wire)"),
        "property": {
            "type": "object", "required": ["propid", "value"], "additionalProperties": False,
            "properties": {
                "propid": {"enum": sorted(PROPIDS), "description": "the PROPID's name ([MS-MQMQ] 2.3)"},
                "value": {"type": ["integer", "string", "array"],
                          "description": "in the shape of the PROPID's VARTYPE (propids.json): an integer, text, "
                                         "GUID text, hex, or a list of those"}},
            "description": "one PROPID and its value (the flat PROPVALUE of MS-MQCN 2.2.3)"},
    }
    messages = []
    for protocol, table in STRUCTURES.items():
        for name, cls in table.items():
            defs[name] = structure_schema(cls)
    for protocol in STRUCTURES:
        module = {"mqdsrp": mqdsrp, "mqsd": mqsd, "mqcn": mqcn}[protocol]
        for name in module.MESSAGE_TYPES:
            messages.append({"allOf": [{"$ref": f"#/$defs/{name}"}, {"required": ["message"]}]})
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "mqspec decoded message",
        "description": "A message as mqspec decode prints it and mqspec encode reads it (codec vectors' "
                       "expected.json): tagged with its structure name under \"message\"; sequence numbers are "
                       "decimal strings.",
        "oneOf": [{"$ref": f"#/$defs/message-{name}"} for protocol in STRUCTURES
                  for name in {"mqdsrp": mqdsrp, "mqsd": mqsd, "mqcn": mqcn}[protocol].MESSAGE_TYPES],
        "$defs": {**defs, **{f"message-{m['allOf'][0]['$ref'].rsplit('/', 1)[1]}": m for m in messages}},
    }
