"""The second peer baseline: a hand-written MC-MQDSRP and MS-MQSD decoder on the ``struct`` module.

This is the decoder an engineer writes by hand when speed matters and nothing else does: one
precompiled ``struct.Struct`` per fixed run of fields read with ``unpack_from`` at an offset, a
``bytes.find`` for each null-terminated WCHAR buffer, a table from PROPID to the reader of its
flat PROPVALUE ([MS-MQCN] 2.2.3), and plain dicts and lists for the result, in the shape
:func:`construct_baseline.to_construct` gives an mqspec value (so the benchmark compares its
decodes with mqspec's field by field). It keeps no memo.

It checks what construct checks (the constant Version, Type and Reserved fields, and that the
bytes do not run out, through ``struct.error`` and the terminator search) and nothing more: no
Command, UseGuid, Flush or Scope ranges, no trailing bytes, strict UTF-16. It is the floor a
decoder that builds Python values can hardly go below, not a codec anyone should ship.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from mqspec.model.propids import PROPID_BY_VALUE, VarType

_BASE = struct.Struct("<B16sB")
_CHANGE_FIXED = struct.Struct(">16sQQQB")  # PartitionID, three SEQUENCE_NUMBERs (big-endian), Count
_GUID = struct.Struct("16s")
_U8 = struct.Struct("<B")
_U16 = struct.Struct("<H")
_U32 = struct.Struct("<I")
_FLUSH_COUNT = struct.Struct("<BH")
_PARTITION = struct.Struct(">16sQQ")
_SYNC_REPLY = struct.Struct(">16sQQQ")
_COUNT_CS0 = struct.Struct("<II")
_SYNC_REQUEST = struct.Struct(">16sQQQBB")
_CHANGE_REQUEST = struct.Struct("<16sII")
_CHANGE_REPLY = struct.Struct("<II")
_ALREADY_PURGED = struct.Struct(">16sQ")
_PSC_ACK = struct.Struct(">16s16sQ")
_MQSD_REPLY = struct.Struct("<BBH16sIII")


class BaselineError(ValueError):
    """Bytes the hand decoder cannot read."""


def wstr(data: bytes, pos: int) -> tuple[str, int]:
    """A null-terminated UTF-16LE string at ``pos`` and the position after its terminator."""
    z = data.find(b"\0\0", pos)
    while z >= 0 and (z - pos) & 1:
        z = data.find(b"\0\0", z + 1)
    if z < 0:
        raise BaselineError(f"no string terminator after offset {pos}")
    return data[pos:z].decode("utf_16_le"), z + 2


def _fixed(fmt: str) -> Callable[[bytes, int], tuple[Any, int]]:
    st = struct.Struct(fmt)
    unpack, size = st.unpack_from, st.size

    def read(data: bytes, pos: int) -> tuple[Any, int]:
        return unpack(data, pos)[0], pos + size
    return read


def _guid(data: bytes, pos: int) -> tuple[bytes, int]:
    if len(data) - pos < 16:
        raise BaselineError(f"a GUID runs out at offset {pos}")
    return data[pos:pos + 16], pos + 16


def _blob(data: bytes, pos: int) -> tuple[bytes, int]:
    (n,) = _U32.unpack_from(data, pos)
    end = pos + 4 + n
    if end > len(data):
        raise BaselineError(f"a blob runs out at offset {pos}")
    return data[pos + 4:end], end


def _guids(data: bytes, pos: int) -> tuple[list[bytes], int]:
    (n,) = _U32.unpack_from(data, pos)
    pos += 4
    end = pos + 16 * n
    if end > len(data):
        raise BaselineError(f"a GUID vector runs out at offset {pos}")
    return [data[at:at + 16] for at in range(pos, end, 16)], end


def _ui4s(data: bytes, pos: int) -> tuple[list[int], int]:
    (n,) = _U32.unpack_from(data, pos)
    return list(struct.unpack_from(f"<{n}I", data, pos + 4)), pos + 4 + 4 * n


def _wstrs(data: bytes, pos: int) -> tuple[list[str], int]:
    (n,) = _U32.unpack_from(data, pos)
    pos += 4
    out = []
    for _ in range(n):
        text, pos = wstr(data, pos)
        out.append(text)
    return out, pos


_READ_BY_VARTYPE: dict[VarType, Callable[[bytes, int], tuple[Any, int]]] = {
    VarType.VT_I1: _fixed("<b"), VarType.VT_UI1: _fixed("<B"), VarType.VT_I2: _fixed("<h"),
    VarType.VT_UI2: _fixed("<H"), VarType.VT_BOOL: _fixed("<H"), VarType.VT_I4: _fixed("<i"),
    VarType.VT_UI4: _fixed("<I"), VarType.VT_I8: _fixed("<q"), VarType.VT_UI8: _fixed("<Q"),
    VarType.VT_LPWSTR: wstr, VarType.VT_CLSID: _guid, VarType.VT_BLOB: _blob,
    VarType.VT_UI1_VECTOR: _blob, VarType.VT_CLSID_VECTOR: _guids, VarType.VT_UI4_VECTOR: _ui4s,
    VarType.VT_LPWSTR_VECTOR: _wstrs,
}
#: PROPID -> the reader of its flat value
_READERS = {propid: _READ_BY_VARTYPE[pdef.vartype] for propid, pdef in PROPID_BY_VALUE.items()
            if pdef.vartype in _READ_BY_VARTYPE}


def directory_change(data: bytes, pos: int) -> tuple[dict[str, Any], int]:
    """One DirectoryChange (MC-MQDSRP 2.2.4) at ``pos``, and the position after it."""
    command, use_guid = data[pos], data[pos + 1]
    pos += 2
    path_name = guid_identifier = None
    if use_guid == 0:
        path_name, pos = wstr(data, pos)
    else:
        guid_identifier, pos = _guid(data, pos)
    partition, prev, seq, purged, n = _CHANGE_FIXED.unpack_from(data, pos)
    pos += _CHANGE_FIXED.size
    propids = list(struct.unpack_from(f"<{n}I", data, pos))
    pos += 4 * n
    values = []
    for propid in propids:
        reader = _READERS.get(propid)
        if reader is None:
            raise BaselineError(f"PROPID {propid} has no flat encoding")
        value, pos = reader(data, pos)
        values.append(value)
    return {"Command": command, "UseGuid": use_guid, "PathName": path_name,
            "GuidIdentifier": guid_identifier, "PartitionID": partition, "PreviousSeqNumber": prev,
            "SeqNumber": seq, "PurgedSeqNumber": purged, "NumberOfProperties": n,
            "PropertyID": propids, "PropertyValue": values}, pos


def _changes(data: bytes, pos: int, n: int) -> tuple[list[dict[str, Any]], int]:
    out = []
    for _ in range(n):
        change, pos = directory_change(data, pos)
        out.append(change)
    return out, pos


def _change_propagation(data: bytes, pos: int) -> dict[str, Any]:
    flush, count = _FLUSH_COUNT.unpack_from(data, pos)
    changes, pos = _changes(data, pos + 3, count)
    (n,) = _U16.unpack_from(data, pos)
    pos += 2
    machine = None
    partitions = []
    if n:
        machine, pos = wstr(data, pos)
        for _ in range(n):
            pid, last, purged = _PARTITION.unpack_from(data, pos)
            pos += _PARTITION.size
            partitions.append({"PartitionID": pid, "LastSeqNumber": last, "PurgedSeqNumber": purged})
    return {"Flush": flush != 0, "Count": count, "DirectoryChanges": changes,
            "SeqNumbers": {"Count": n, "MachineName": machine, "Partitions": partitions}}


def _change_request(data: bytes, pos: int) -> dict[str, Any]:
    pid, request_id, offset = _CHANGE_REQUEST.unpack_from(data, pos)
    requester, pos = wstr(data, pos + _CHANGE_REQUEST.size)
    psc = None
    if offset:
        psc, pos = wstr(data, pos)
    change, _ = directory_change(data, pos)
    return {"PartitionID": pid, "RequestIdentifier": request_id, "PSCNameOffset": offset,
            "RequesterName": requester, "PSCName": psc, "Change": change}


def _sync_request(data: bytes, pos: int) -> dict[str, Any]:
    pid, first, last, known, sync0, scope = _SYNC_REQUEST.unpack_from(data, pos)
    requester, _ = wstr(data, pos + _SYNC_REQUEST.size)
    return {"PartitionID": pid, "FromSeqNumber": first, "ToSeqNumber": last,
            "KnownPurgedSeqNumber": known, "IsSync0": sync0 != 0, "Scope": scope,
            "RequesterName": requester}


def _sync_reply(data: bytes, pos: int) -> dict[str, Any]:
    pid, first, last, purged = _SYNC_REPLY.unpack_from(data, pos)
    count, cs0 = _COUNT_CS0.unpack_from(data, pos + _SYNC_REPLY.size)
    changes, _ = _changes(data, pos + _SYNC_REPLY.size + 8, count)
    return {"PartitionID": pid, "FromSeqNumber": first, "ToSeqNumber": last, "PurgedSeqNumber": purged,
            "Count": count, "CompleteSync0": cs0, "DirectoryChanges": changes}


def _change_reply(data: bytes, pos: int) -> dict[str, Any]:
    request_id, result = _CHANGE_REPLY.unpack_from(data, pos)
    requester, _ = wstr(data, pos + 8)
    return {"RequestIdentifier": request_id, "Result": result, "RequesterName": requester}


def _already_purged(data: bytes, pos: int) -> dict[str, Any]:
    pid, purged = _ALREADY_PURGED.unpack_from(data, pos)
    return {"PartitionID": pid, "PurgedSeqNumber": purged}


def _psc_ack(data: bytes, pos: int) -> dict[str, Any]:
    site, pid, acked = _PSC_ACK.unpack_from(data, pos)
    name, _ = wstr(data, pos + _PSC_ACK.size)
    return {"PSCSiteID": site, "AckedPartitionID": pid, "AckedSeqNumber": acked, "PSCName": name}


def _bsc_ack(data: bytes, pos: int) -> dict[str, Any]:
    (machine,) = _GUID.unpack_from(data, pos)
    name, _ = wstr(data, pos + 16)
    return {"BSCMachineID": machine, "BSCName": name}


_BODIES = (_change_propagation, _change_request, _sync_request, _sync_reply, _change_reply,
           _already_purged, _psc_ack, _bsc_ack)


def decode_mqdsrp(data: bytes) -> dict[str, Any]:
    """A replication message (MC-MQDSRP 2.2.6): BaseReplicationHeader, then the Operation's body."""
    version, site, operation = _BASE.unpack_from(data, 0)
    if version != 0 or operation >= len(_BODIES):
        raise BaselineError(f"Version {version}, Operation {operation}")
    return {"Version": 0, "SiteID": site, "Operation": operation,
            "Body": _BODIES[operation](data, _BASE.size)}


def decode_mqsd(data: bytes) -> dict[str, Any]:
    """A TopologyServerReply (MS-MQSD 2.2.3)."""
    version, kind, reserved, correlation, count, mask, size = _MQSD_REPLY.unpack_from(data, 0)
    if version != 0 or kind != 2 or reserved != 0:
        raise BaselineError(f"Version {version}, Type {kind}, Reserved {reserved}")
    pos = _MQSD_REPLY.size
    end = pos + 16 * count
    if end > len(data):
        raise BaselineError("the connected networks run out")
    networks = [data[at:at + 16] for at in range(pos, end, 16)]
    site = servers = None
    if size:
        site, pos = _guid(data, end)
        text, after = wstr(data, pos)
        if after > pos + size:
            raise BaselineError("the server list runs past DirectoryServiceServerSize")
        servers = [{"IP": e[0] == "1", "IPX": e[1] == "1", "Name": e[2:]} for e in text.split(",")]
    return {"Version": 0, "Type": 2, "Reserved": 0, "CorrelationID": correlation,
            "ConnectedNetworkCount": count, "ConnectedNetworkMask": mask,
            "DirectoryServiceServerSize": size, "ConnectedNetworks": networks,
            "RespondingSiteID": site, "Servers": servers}


#: the hand decoder for each protocol the benchmark measures
DECODERS = {"mqdsrp": decode_mqdsrp, "mqsd": decode_mqsd}
