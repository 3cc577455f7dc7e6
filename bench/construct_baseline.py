"""The peer baseline: the same MC-MQDSRP and MS-MQSD structures as declarative ``construct`` 2.10.

This is what a competent engineer would write with construct to parse and build the messages
the benchmark measures: one ``Struct`` per structure, ``CString("utf_16_le")`` for the
null-terminated WCHAR buffers, ``Array``/``PrefixedArray`` for counted arrays, ``Rebuild`` for
the counts derived on build, ``If`` for the optional fields, and a ``Switch`` on the PROPID's
VARTYPE for each flat PROPVALUE ([MS-MQCN] 2.2.3). GUIDs stay 16-byte strings and
SEQUENCE_NUMBERs are ``Int64ub`` (MC-MQDSRP 2.2.2: byte 1 most significant), exactly the wire
values the mqspec model holds.

It checks less than mqspec (no Command/UseGuid/Flush ranges, no trailing-byte check inside the
server list, strict UTF-16 instead of surrogatepass), which only makes it faster: the
comparison is conservative for mqspec. The parse result is construct's idiomatic
``Container``; :func:`to_construct` turns an mqspec model value into the same shape, which is
both the input of ``build`` and the reference the benchmark compares decodes against.
"""

from __future__ import annotations

from construct import (
    Adapter,
    Array,
    Bytes,
    Const,
    CString,
    FixedSized,
    Flag,
    GreedyBytes,
    If,
    Int8sl,
    Int8ul,
    Int16sl,
    Int16ul,
    Int32sl,
    Int32ul,
    Int64sl,
    Int64ub,
    Int64ul,
    Prefixed,
    PrefixedArray,
    Rebuild,
    Struct,
    Switch,
    len_,
    this,
)
from mqspec.model import mqdsrp, mqsd
from mqspec.model.propids import PROPID_BY_VALUE, VarType

WStr = CString("utf_16_le")
Guid = Bytes(16)
SeqNum = Int64ub

# --- [MS-MQCN] 2.2.3 flat PROPVALUE: the PROPID's VARTYPE picks the encoding ---------------------

PROPVALUE_BY_VARTYPE = {
    VarType.VT_I1: Int8sl,
    VarType.VT_UI1: Int8ul,
    VarType.VT_I2: Int16sl,
    VarType.VT_UI2: Int16ul,
    VarType.VT_BOOL: Int16ul,
    VarType.VT_I4: Int32sl,
    VarType.VT_UI4: Int32ul,
    VarType.VT_I8: Int64sl,
    VarType.VT_UI8: Int64ul,
    VarType.VT_LPWSTR: WStr,
    VarType.VT_CLSID: Guid,
    VarType.VT_BLOB: Prefixed(Int32ul, GreedyBytes),
    VarType.VT_UI1_VECTOR: Prefixed(Int32ul, GreedyBytes),
    VarType.VT_CLSID_VECTOR: PrefixedArray(Int32ul, Guid),
    VarType.VT_UI4_VECTOR: PrefixedArray(Int32ul, Int32ul),
    VarType.VT_LPWSTR_VECTOR: PrefixedArray(Int32ul, WStr),
}
#: PROPID -> VARTYPE, the Switch key of each value
VARTYPE_OF = {propid: int(pdef.vartype) for propid, pdef in PROPID_BY_VALUE.items()}

PropertyValue = Switch(
    lambda this: VARTYPE_OF[this.PropertyID[this._index]],
    {int(vt): sub for vt, sub in PROPVALUE_BY_VARTYPE.items()},
)

# --- MC-MQDSRP 2.2.3, 2.2.4, 2.2.5.4 -------------------------------------------------------------

PartitionSeqNumbers = Struct(
    "PartitionID" / Guid,
    "LastSeqNumber" / SeqNum,
    "PurgedSeqNumber" / SeqNum,
)

DirectoryChange = Struct(
    "Command" / Int8ul,
    "UseGuid" / Int8ul,
    "PathName" / If(this.UseGuid == 0, WStr),
    "GuidIdentifier" / If(this.UseGuid == 1, Guid),
    "PartitionID" / Guid,
    "PreviousSeqNumber" / SeqNum,
    "SeqNumber" / SeqNum,
    "PurgedSeqNumber" / SeqNum,
    "NumberOfProperties" / Rebuild(Int8ul, len_(this.PropertyID)),
    "PropertyID" / Array(this.NumberOfProperties, Int32ul),
    "PropertyValue" / Array(this.NumberOfProperties, PropertyValue),
)

SeqNumberHeader = Struct(
    "Count" / Rebuild(Int16ul, len_(this.Partitions)),
    "MachineName" / If(this.Count > 0, WStr),
    "Partitions" / Array(this.Count, PartitionSeqNumbers),
)

# --- MC-MQDSRP 2.2.5.1 and the eight message bodies of 2.2.6 -------------------------------------

ChangePropagationBody = Struct(
    "Flush" / Flag,
    "Count" / Rebuild(Int16ul, len_(this.DirectoryChanges)),
    "DirectoryChanges" / Array(this.Count, DirectoryChange),
    "SeqNumbers" / SeqNumberHeader,
)

ChangeRequestBody = Struct(
    "PartitionID" / Guid,
    "RequestIdentifier" / Int32ul,
    "PSCNameOffset" / Int32ul,
    "RequesterName" / WStr,
    "PSCName" / If(this.PSCNameOffset != 0, WStr),
    "Change" / DirectoryChange,
)

SyncRequestBody = Struct(
    "PartitionID" / Guid,
    "FromSeqNumber" / SeqNum,
    "ToSeqNumber" / SeqNum,
    "KnownPurgedSeqNumber" / SeqNum,
    "IsSync0" / Flag,
    "Scope" / Int8ul,
    "RequesterName" / WStr,
)

SyncReplyBody = Struct(
    "PartitionID" / Guid,
    "FromSeqNumber" / SeqNum,
    "ToSeqNumber" / SeqNum,
    "PurgedSeqNumber" / SeqNum,
    "Count" / Rebuild(Int32ul, len_(this.DirectoryChanges)),
    "CompleteSync0" / Int32ul,
    "DirectoryChanges" / Array(this.Count, DirectoryChange),
)

ChangeReplyBody = Struct(
    "RequestIdentifier" / Int32ul,
    "Result" / Int32ul,
    "RequesterName" / WStr,
)

AlreadyPurgedBody = Struct("PartitionID" / Guid, "PurgedSeqNumber" / SeqNum)

PSCAckBody = Struct(
    "PSCSiteID" / Guid,
    "AckedPartitionID" / Guid,
    "AckedSeqNumber" / SeqNum,
    "PSCName" / WStr,
)

BSCAckBody = Struct("BSCMachineID" / Guid, "BSCName" / WStr)

ReplicationMessage = Struct(
    "Version" / Const(0, Int8ul),
    "SiteID" / Guid,
    "Operation" / Int8ul,
    "Body" / Switch(this.Operation, {
        0: ChangePropagationBody,
        1: ChangeRequestBody,
        2: SyncRequestBody,
        3: SyncReplyBody,
        4: ChangeReplyBody,
        5: AlreadyPurgedBody,
        6: PSCAckBody,
        7: BSCAckBody,
    }),
)

# --- [MS-MQSD] 2.2.3 TopologyServerReply ---------------------------------------------------------


class ServerListAdapter(Adapter):
    """DirectoryServiceServerArray = Entry *(Delim Entry) EndList, Entry = IP IPX 1*NameChar."""

    def _decode(self, obj, context, path):
        return [
            {"IP": e[0] == "1", "IPX": e[1] == "1", "Name": e[2:]} for e in obj.split(",")
        ]

    def _encode(self, obj, context, path):
        return ",".join(
            f"{'1' if e['IP'] else '0'}{'1' if e['IPX'] else '0'}{e['Name']}" for e in obj
        )


ServerList = ServerListAdapter(WStr)


def _server_list_size(this) -> int:
    """DirectoryServiceServerSize: the UTF-16 bytes of the list and its EndList, 0 if absent."""
    servers = this.Servers
    if not servers:
        return 0
    return len(ServerList._encode(servers, this, "").encode("utf_16_le")) + 2


TopologyServerReply = Struct(
    "Version" / Const(0, Int8ul),
    "Type" / Const(2, Int8ul),
    "Reserved" / Const(0, Int16ul),
    "CorrelationID" / Guid,
    "ConnectedNetworkCount" / Rebuild(Int32ul, len_(this.ConnectedNetworks)),
    "ConnectedNetworkMask" / Int32ul,
    "DirectoryServiceServerSize" / Rebuild(Int32ul, _server_list_size),
    "ConnectedNetworks" / Array(this.ConnectedNetworkCount, Guid),
    "RespondingSiteID" / If(this.DirectoryServiceServerSize != 0, Guid),
    "Servers" / If(
        this.DirectoryServiceServerSize != 0,
        FixedSized(this.DirectoryServiceServerSize, ServerList),
    ),
)

# --- the mqspec model in construct's shape --------------------------------------------------------


def _change(c: mqdsrp.DirectoryChange) -> dict:
    return {
        "Command": int(c.command),
        "UseGuid": int(c.use_guid),
        "PathName": c.path_name,
        "GuidIdentifier": None if c.guid_identifier is None else c.guid_identifier.bytes_le,
        "PartitionID": c.partition_id.bytes_le,
        "PreviousSeqNumber": c.previous_seq_number.value,
        "SeqNumber": c.seq_number.value,
        "PurgedSeqNumber": c.purged_seq_number.value,
        "NumberOfProperties": len(c.properties),
        "PropertyID": [p.propid for p in c.properties],
        "PropertyValue": [_value(p.value) for p in c.properties],
    }


def _value(v: object) -> object:
    if isinstance(v, tuple):
        return [_value(x) for x in v]
    return getattr(v, "bytes_le", v)  # a Guid is its 16 wire bytes


def _seq_header(h: mqdsrp.SeqNumberHeader) -> dict:
    return {
        "Count": len(h.partitions),
        "MachineName": h.machine_name,
        "Partitions": [
            {"PartitionID": p.partition_id.bytes_le, "LastSeqNumber": p.last_seq_number.value,
             "PurgedSeqNumber": p.purged_seq_number.value}
            for p in h.partitions
        ],
    }


def to_construct(msg: object) -> dict:
    """``msg`` (an mqspec message the baseline covers) as the dict its construct Struct builds
    from, and parses back to."""
    if isinstance(msg, mqdsrp.ChangePropagationMessage):
        body = {"Flush": msg.flush, "Count": len(msg.changes),
                "DirectoryChanges": [_change(c) for c in msg.changes],
                "SeqNumbers": _seq_header(msg.seq_numbers)}
    elif isinstance(msg, mqdsrp.SyncReplyMessage):
        body = {"PartitionID": msg.partition_id.bytes_le,
                "FromSeqNumber": msg.from_seq_number.value,
                "ToSeqNumber": msg.to_seq_number.value,
                "PurgedSeqNumber": msg.purged_seq_number.value, "Count": len(msg.changes),
                "CompleteSync0": int(msg.complete_sync0),
                "DirectoryChanges": [_change(c) for c in msg.changes]}
    elif isinstance(msg, mqsd.TopologyServerReply):
        return {
            "Version": 0, "Type": 2, "Reserved": 0,
            "CorrelationID": msg.correlation_id.bytes_le,
            "ConnectedNetworkCount": len(msg.connected_networks),
            "ConnectedNetworkMask": msg.connected_network_mask,
            "DirectoryServiceServerSize": msg.directory_service_server_size,
            "ConnectedNetworks": [g.bytes_le for g in msg.connected_networks],
            "RespondingSiteID": None if msg.responding_site_id is None
            else msg.responding_site_id.bytes_le,
            "Servers": [{"IP": s.ip, "IPX": s.ipx, "Name": s.name} for s in msg.servers] or None,
        }
    else:
        raise TypeError(f"the construct baseline does not cover {type(msg).__name__}")
    return {"Version": 0, "SiteID": msg.site_id.bytes_le, "Operation": int(msg.operation),
            "Body": body}


def plain(obj: object) -> object:
    """A construct parse result as plain dicts and lists, without construct's ``_io`` keys."""
    if isinstance(obj, dict):
        return {k: plain(v) for k, v in obj.items() if not k.startswith("_")}
    if isinstance(obj, list):
        return [plain(v) for v in obj]
    return obj


#: the construct Struct for each protocol the benchmark measures
STRUCTS = {"mqdsrp": ReplicationMessage, "mqsd": TopologyServerReply}
