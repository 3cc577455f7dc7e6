"""MC-MQDSRP section 2: the eight replication messages and their strict codec.

Every message starts with the 18-byte BaseReplicationHeader (2.2.5.1): Version (MUST be 0x00),
SiteID, Operation. mqspec does not model the header as a nested object: each message class
carries ``site_id`` as its first field and its Operation as the class constant ``operation``.
Counts, offsets and flags the spec derives from other fields (Count, PSCNameOffset, UseGuid,
NumberOfProperties) are computed on encode and checked on decode.

:func:`decode` refuses every byte string that breaks a MUST of section 2, naming the field, its
offset and the section; :func:`encode` is its inverse, so ``decode(encode(m)) == m`` and
``encode(decode(b)) == b`` for every ``b`` that decodes.

>>> msg = AlreadyPurgedMessage(Guid.NULL, Guid.NULL, SequenceNumber(7))
>>> wire = encode(msg)
>>> len(wire), wire[17], wire[-8:].hex()
(42, 5, '0000000000000007')
>>> decode(wire) == msg
True
"""

from __future__ import annotations

import enum
import struct
from typing import ClassVar, Union

import attrs

from mqspec import memos
from mqspec.clauses import clause

from .errors import DecodeError, ModelError
from .guid import Guid
from .mqdsrp_changes import (
    DIRECTORY_CHANGE_MIN_SIZE,
    EMPTY_SEQ_NUMBER_HEADER,
    Command,
    DirectoryChange,
    PartitionSeqNumbers,
    SeqNumberHeader,
    _check_bool,
    _check_changes,
    _check_guid,
    _check_instance,
    _check_opt_wstr,
    _check_seqnum,
    _check_u32,
    _check_wstr,
    _guid,
    _seq,
    _to_tuple,
    decode_directory_change,
    decode_partition_seq_numbers,
    decode_seq_number_header,
    encode_directory_change,
    encode_partition_seq_numbers,
    encode_seq_number_header,
    enum_converter,
    read_wstr,
    unchecked_constructor,
)
from .seqnum import SequenceNumber
from .wire import Reader, pack_u16, pack_wstr

__all__ = [
    "AlreadyPurgedMessage", "BSCAckMessage", "ChangePropagationMessage", "ChangeReplyMessage",
    "ChangeRequestMessage", "Command", "CompleteSync0", "DirectoryChange",
    "EMPTY_SEQ_NUMBER_HEADER",
    "MESSAGE_TYPES", "Operation", "PSCAckMessage", "PartitionSeqNumbers", "ReplicationMessage",
    "Scope", "SeqNumberHeader", "SyncReplyMessage", "SyncRequestMessage", "decode", "decode_shared",
    "decode_directory_change", "decode_partition_seq_numbers", "decode_seq_number_header",
    "encode", "encode_directory_change", "encode_partition_seq_numbers",
    "encode_seq_number_header",
]

S_BASE = "MC-MQDSRP 2.2.5.1"
S_CRH = "MC-MQDSRP 2.2.5.2"
S_SRH = "MC-MQDSRP 2.2.5.3"
S_CREQ = "MC-MQDSRP 2.2.6.2"
S_CREP = "MC-MQDSRP 2.2.6.3"
S_SREQ = "MC-MQDSRP 2.2.6.4"
S_SREP = "MC-MQDSRP 2.2.6.5"
S_BSC = "MC-MQDSRP 2.2.6.6"
S_PSC = "MC-MQDSRP 2.2.6.7"
S_PURGED = "MC-MQDSRP 2.2.6.8"
S_PROP = "MC-MQDSRP 2.2.6.9"


class Operation(enum.IntEnum):
    """BaseReplicationHeader.Operation (2.2.5.1): "MUST be set to one of the following values"."""

    CHANGE_PROPAGATION = 0
    CHANGE_REQUEST = 1
    SYNC_REQUEST = 2
    SYNC_REPLY = 3
    CHANGE_REPLY = 4
    ALREADY_PURGED = 5
    PSC_ACK = 6
    BSC_ACK = 7


class CompleteSync0(enum.IntEnum):
    """SyncReplyHeader.CompleteSync0 (2.2.5.3), a 32-bit value (printed with 7 digits: E-014)."""

    NOT_IN_SYNC0 = 0
    COMPLETING = 1
    COMPLETED = 2


class Scope(enum.IntEnum):
    """SyncRequestMessage.Scope (2.2.6.4): 0x00 no scope flag, 0x01 enterprise (E-019)."""

    NONE = 0
    ENTERPRISE = 1


_OPERATIONS = tuple(Operation)
_COMPLETE_SYNC0 = tuple(CompleteSync0)
_SCOPES = tuple(Scope)

#: Version, SiteID, Operation
_BASE = struct.Struct("<B16sB")
#: a GUID then three SEQUENCE_NUMBERs (byte 1 most significant, 2.2.2)
_GUID_3SEQ = struct.Struct(">16sQQQ")
#: a GUID then one SEQUENCE_NUMBER
_GUID_SEQ = struct.Struct(">16sQ")
_GUID_GUID_SEQ = struct.Struct(">16s16sQ")
#: ... then IsSync0 and Scope (SyncRequestMessage)
_GUID_3SEQ_2U8 = struct.Struct(">16sQQQBB")
_U32_U32 = struct.Struct("<II")
#: PartitionID, RequestIdentifier, PSCNameOffset (ChangeRequestHeader)
_GUID_U32_U32 = struct.Struct("<16sII")
_SYNC_REPLY_HEADER_SIZE = _GUID_3SEQ.size + _U32_U32.size  # 48: the 66 bytes of 2.2.6.5 less 18


def _base(site_id: Guid, op: int) -> bytes:
    return _BASE.pack(0, site_id.bytes_le, op)


# --- the eight messages ----------------------------------------------------------------------

@attrs.frozen
class ChangeRequestMessage:
    """ChangeRequestMessage (2.2.6.2): ChangeRequestHeader (2.2.5.2) then one DirectoryChange.

    ``psc_name`` is set only when the requester is a BSC; PSCNameOffset is derived from it
    (:attr:`psc_name_offset`).
    """

    operation: ClassVar[Operation] = Operation.CHANGE_REQUEST
    site_id: Guid = attrs.field(validator=_check_guid)
    partition_id: Guid = attrs.field(validator=_check_guid)
    request_identifier: int = attrs.field(validator=_check_u32)
    requester_name: str = attrs.field(validator=_check_wstr)
    psc_name: str | None = attrs.field(validator=_check_opt_wstr)
    change: DirectoryChange = attrs.field(validator=_check_instance(DirectoryChange))

    @property
    def psc_name_offset(self) -> int:
        """PSCNameOffset: WCHARs from RequesterName to PSCName, 0 when PSCName is not set."""
        if self.psc_name is None:
            return 0
        # WCHARs are UTF-16 code units (an astral character takes two), plus the terminator
        return len(self.requester_name.encode("utf-16-le", "surrogatepass")) // 2 + 1


@attrs.frozen
class ChangeReplyMessage:
    """ChangeReplyMessage (2.2.6.3): the object authority's result for a change request.

    ``result`` is the HRESULT's 32 bits read unsigned (0x80070005, not -2147024891).
    """

    operation: ClassVar[Operation] = Operation.CHANGE_REPLY
    site_id: Guid = attrs.field(validator=_check_guid)
    request_identifier: int = attrs.field(validator=_check_u32)
    result: int = attrs.field(validator=_check_u32)
    requester_name: str = attrs.field(validator=_check_wstr)


@attrs.frozen
class SyncRequestMessage:
    """SyncRequestMessage (2.2.6.4): ask the object authority for changes in a range."""

    operation: ClassVar[Operation] = Operation.SYNC_REQUEST
    site_id: Guid = attrs.field(validator=_check_guid)
    partition_id: Guid = attrs.field(validator=_check_guid)
    from_seq_number: SequenceNumber = attrs.field(validator=_check_seqnum)
    to_seq_number: SequenceNumber = attrs.field(validator=_check_seqnum)
    known_purged_seq_number: SequenceNumber = attrs.field(validator=_check_seqnum)
    is_sync0: bool = attrs.field(validator=_check_bool)
    scope: Scope = attrs.field(converter=enum_converter(Scope))
    requester_name: str = attrs.field(validator=_check_wstr)


@attrs.frozen
class SyncReplyMessage:
    """SyncReplyMessage (2.2.6.5): SyncReplyHeader (2.2.5.3) then Count DirectoryChanges."""

    operation: ClassVar[Operation] = Operation.SYNC_REPLY
    site_id: Guid = attrs.field(validator=_check_guid)
    partition_id: Guid = attrs.field(validator=_check_guid)
    from_seq_number: SequenceNumber = attrs.field(validator=_check_seqnum)
    to_seq_number: SequenceNumber = attrs.field(validator=_check_seqnum)
    purged_seq_number: SequenceNumber = attrs.field(validator=_check_seqnum)
    complete_sync0: CompleteSync0 = attrs.field(converter=enum_converter(CompleteSync0))
    changes: tuple[DirectoryChange, ...] = attrs.field(
        converter=_to_tuple, validator=_check_changes(32)
    )


@attrs.frozen
class BSCAckMessage:
    """BSCAckMessage (2.2.6.6): a BSC acknowledges to its PSC."""

    operation: ClassVar[Operation] = Operation.BSC_ACK
    site_id: Guid = attrs.field(validator=_check_guid)
    bsc_machine_id: Guid = attrs.field(validator=_check_guid)
    bsc_name: str = attrs.field(validator=_check_wstr)


@attrs.frozen
class PSCAckMessage:
    """PSCAckMessage (2.2.6.7): a PSC acknowledges a partition's sequence number."""

    operation: ClassVar[Operation] = Operation.PSC_ACK
    site_id: Guid = attrs.field(validator=_check_guid)
    psc_site_id: Guid = attrs.field(validator=_check_guid)
    acked_partition_id: Guid = attrs.field(validator=_check_guid)
    acked_seq_number: SequenceNumber = attrs.field(validator=_check_seqnum)
    psc_name: str = attrs.field(validator=_check_wstr)


@attrs.frozen
class AlreadyPurgedMessage:
    """AlreadyPurgedMessage (2.2.6.8): the requested range is older than the purge horizon."""

    operation: ClassVar[Operation] = Operation.ALREADY_PURGED
    site_id: Guid = attrs.field(validator=_check_guid)
    partition_id: Guid = attrs.field(validator=_check_guid)
    purged_seq_number: SequenceNumber = attrs.field(validator=_check_seqnum)


@attrs.frozen
class ChangePropagationMessage:
    """ChangePropagationMessage (2.2.6.9): Flush, Count DirectoryChanges, a SeqNumberHeader.

    The SeqNumberHeader is always on the wire, with Count 0x0000 when it carries nothing
    (clarification E-016).
    """

    operation: ClassVar[Operation] = Operation.CHANGE_PROPAGATION
    site_id: Guid = attrs.field(validator=_check_guid)
    flush: bool = attrs.field(validator=_check_bool)
    changes: tuple[DirectoryChange, ...] = attrs.field(
        converter=_to_tuple, validator=_check_changes(16)
    )
    seq_numbers: SeqNumberHeader = attrs.field(
        default=EMPTY_SEQ_NUMBER_HEADER, validator=_check_instance(SeqNumberHeader)
    )


ReplicationMessage = Union[  # noqa: UP007 - a runtime alias other modules annotate with
    ChangeRequestMessage, ChangeReplyMessage, SyncRequestMessage, SyncReplyMessage,
    BSCAckMessage, PSCAckMessage, AlreadyPurgedMessage, ChangePropagationMessage,
]

_BY_OPERATION: dict[int, type] = {
    cls.operation: cls
    for cls in (ChangeRequestMessage, ChangeReplyMessage, SyncRequestMessage, SyncReplyMessage,
                BSCAckMessage, PSCAckMessage, AlreadyPurgedMessage, ChangePropagationMessage)
}

#: every structure :func:`mqspec.model.jsonform.from_json` can rebuild, by name
MESSAGE_TYPES: dict[str, type] = {
    **{cls.__name__: cls for cls in _BY_OPERATION.values()},
    "DirectoryChange": DirectoryChange,
    "SeqNumberHeader": SeqNumberHeader,
    "PartitionSeqNumbers": PartitionSeqNumbers,
}


# --- decoding -------------------------------------------------------------------------------
# Each decoder reads a fixed run of fields with one struct call when the bytes are there, and
# falls back to field-by-field reads only to name the field that runs out. Decoded values are
# built with unchecked constructors: every value has been bounded or checked by the time it is
# stored (see mqspec.model.mqdsrp_changes).

_change_request = unchecked_constructor(ChangeRequestMessage)
_change_reply = unchecked_constructor(ChangeReplyMessage)
_sync_request = unchecked_constructor(SyncRequestMessage)
_sync_reply = unchecked_constructor(SyncReplyMessage)
_bsc_ack = unchecked_constructor(BSCAckMessage)
_psc_ack = unchecked_constructor(PSCAckMessage)
_already_purged = unchecked_constructor(AlreadyPurgedMessage)
_change_propagation = unchecked_constructor(ChangePropagationMessage)


@clause("MC-MQDSRP", "2.2.5.1", "BaseReplicationHeader")
def decode_base_replication_header(r: Reader) -> tuple[Guid, Operation]:
    """Version ("MUST be set to 0x00"), SiteID, Operation ("MUST be set to one of the following
    values", 0x00..0x07); returns (SiteID, Operation).

    A wrong Version names the message in its context when the Operation byte identifies one.
    """
    start = r.pos
    if r.end - start < _BASE.size:
        # short buffer: a wrong Version is still reported first, then the field that runs out
        version = r.u8("BaseReplicationHeader.Version", S_BASE)
        if version != 0:
            raise r.fail("BaseReplicationHeader.Version", S_BASE,
                         f"Version {version:#04x}, MUST be 0x00", start)
        r.guid("BaseReplicationHeader.SiteID", S_BASE)
        r.u8("BaseReplicationHeader.Operation", S_BASE)
    version, site_b, op = _BASE.unpack_from(r.data, start)
    if version != 0:
        err = r.fail("BaseReplicationHeader.Version", S_BASE,
                     f"Version {version:#04x}, MUST be 0x00", start)
        raise err.within(_BY_OPERATION[op].__name__) if op in _BY_OPERATION else err
    if op > 7:
        raise r.fail("BaseReplicationHeader.Operation", S_BASE,
                     f"unknown Operation {op:#04x} (0x00..0x07 are defined)", start + 17)
    r.pos = start + _BASE.size
    return _guid(site_b), _OPERATIONS[op]


@clause("MC-MQDSRP", "2.2.5.2", "ChangeRequestHeader")
def decode_change_request_header(r: Reader) -> tuple[Guid, int, str, str | None]:
    """The ChangeRequestHeader after its BaseReplicationHeader: (PartitionID, RequestIdentifier,
    RequesterName, PSCName or None).

    PSCName "is only set when the requester is a Backup Site Controller (BSC); otherwise it MUST
    NOT be set and the PSCNameOffset field MUST be 0x00". A nonzero PSCNameOffset MUST point just
    past RequesterName's terminator, where PSCName is (clarification E-013).
    """
    pos = r.pos
    if r.end - pos >= _GUID_U32_U32.size:
        pid_b, request_identifier, psc_offset = _GUID_U32_U32.unpack_from(r.data, pos)
        r.pos = pos + _GUID_U32_U32.size
        partition_id = _guid(pid_b)
    else:
        partition_id = r.guid("ChangeRequestHeader.PartitionID", S_CRH)
        request_identifier = r.u32("ChangeRequestHeader.RequestIdentifier", S_CRH)
        psc_offset = r.u32("ChangeRequestHeader.PSCNameOffset", S_CRH)
    name_at = r.pos
    requester_name = read_wstr(r, "ChangeRequestHeader.RequesterName", S_CRH)
    if psc_offset == 0:
        return partition_id, request_identifier, requester_name, None
    wchars = (r.pos - name_at) // 2  # RequesterName with its terminator
    if psc_offset != wchars:
        raise r.fail(
            "ChangeRequestHeader.PSCNameOffset", S_CRH,
            f"PSCNameOffset {psc_offset}, but PSCName would start {wchars} WCHARs after the"
            " beginning of RequesterName (0 when PSCName is not set)", name_at - 4,
        )
    psc_name = read_wstr(r, "ChangeRequestHeader.PSCName", S_CRH)
    return partition_id, request_identifier, requester_name, psc_name


@clause("MC-MQDSRP", "2.2.5.3", "SyncReplyHeader")
def decode_sync_reply_header(
    r: Reader,
) -> tuple[Guid, SequenceNumber, SequenceNumber, SequenceNumber, int, CompleteSync0]:
    """The SyncReplyHeader after its BaseReplicationHeader: (PartitionID, FromSeqNumber,
    ToSeqNumber, PurgedSeqNumber, Count, CompleteSync0).

    CompleteSync0 "MUST be set to one of the following values" (0, 1, 2).
    """
    pos = r.pos
    if r.end - pos < _SYNC_REPLY_HEADER_SIZE:
        # short buffer: one of these reads fails, naming the field that runs out
        r.guid("SyncReplyHeader.PartitionID", S_SRH)
        r.seqnum("SyncReplyHeader.FromSeqNumber", S_SRH)
        r.seqnum("SyncReplyHeader.ToSeqNumber", S_SRH)
        r.seqnum("SyncReplyHeader.PurgedSeqNumber", S_SRH)
        r.u32("SyncReplyHeader.Count", S_SRH)
        r.u32("SyncReplyHeader.CompleteSync0", S_SRH)
    pid_b, from_v, to_v, purged_v = _GUID_3SEQ.unpack_from(r.data, pos)
    count, cs0 = _U32_U32.unpack_from(r.data, pos + _GUID_3SEQ.size)
    if cs0 > 2:
        raise r.fail("SyncReplyHeader.CompleteSync0", S_SRH,
                     f"CompleteSync0 {cs0:#010x} is not 0x00000000..0x00000002",
                     pos + _SYNC_REPLY_HEADER_SIZE - 4)
    r.pos = pos + _SYNC_REPLY_HEADER_SIZE
    return (_guid(pid_b), _seq(from_v), _seq(to_v), _seq(purged_v), count,
            _COMPLETE_SYNC0[cs0])


@clause("MC-MQDSRP", "2.2.6.2", "ChangeRequestMessage")
def decode_change_request_message(r: Reader, site_id: Guid) -> ChangeRequestMessage:
    """ChangeRequestHeader (2.2.5.2) then one DirectoryChange (2.2.4)."""
    try:
        partition_id, request_identifier, requester, psc = decode_change_request_header(r)
        change = decode_directory_change(r)
    except DecodeError as e:
        raise e.within("ChangeRequestMessage") from None
    return _change_request(site_id, partition_id, request_identifier, requester, psc, change)


@clause("MC-MQDSRP", "2.2.6.3", "ChangeReplyMessage")
def decode_change_reply_message(r: Reader, site_id: Guid) -> ChangeReplyMessage:
    """RequestIdentifier, Result (HRESULT), RequesterName; nothing lies between the
    BaseReplicationHeader and RequestIdentifier (the field list's "..." is E-017)."""
    request_identifier = r.u32("ChangeReplyMessage.RequestIdentifier", S_CREP)
    result = r.u32("ChangeReplyMessage.Result", S_CREP)
    requester = read_wstr(r, "ChangeReplyMessage.RequesterName", S_CREP)
    return _change_reply(site_id, request_identifier, result, requester)


@clause("MC-MQDSRP", "2.2.6.4", "SyncRequestMessage")
def decode_sync_request_message(r: Reader, site_id: Guid) -> SyncRequestMessage:
    """PartitionID, From/To/KnownPurgedSeqNumber, IsSync0 and Scope (each "MUST be set to one of
    the following values": 0x00 or 0x01), RequesterName."""
    pos = r.pos
    if r.end - pos < _GUID_3SEQ_2U8.size:
        # short buffer: one of these reads fails, naming the field that runs out
        r.guid("SyncRequestMessage.PartitionID", S_SREQ)
        r.seqnum("SyncRequestMessage.FromSeqNumber", S_SREQ)
        r.seqnum("SyncRequestMessage.ToSeqNumber", S_SREQ)
        r.seqnum("SyncRequestMessage.KnownPurgedSeqNumber", S_SREQ)
        r.u8("SyncRequestMessage.IsSync0", S_SREQ)
        r.u8("SyncRequestMessage.Scope", S_SREQ)
    pid_b, from_v, to_v, known_v, is_sync0, scope = _GUID_3SEQ_2U8.unpack_from(r.data, pos)
    if is_sync0 > 1:
        raise r.fail("SyncRequestMessage.IsSync0", S_SREQ,
                     f"IsSync0 {is_sync0:#04x} is not 0x00 or 0x01", pos + 40)
    if scope > 1:
        raise r.fail("SyncRequestMessage.Scope", S_SREQ,
                     f"Scope {scope:#04x} is not 0x00 or 0x01", pos + 41)
    r.pos = pos + _GUID_3SEQ_2U8.size
    requester = read_wstr(r, "SyncRequestMessage.RequesterName", S_SREQ)
    return _sync_request(site_id, _guid(pid_b), _seq(from_v), _seq(to_v), _seq(known_v),
                         is_sync0 == 1, _SCOPES[scope], requester)


def _decode_changes(r: Reader, n: int, where: str) -> tuple[DirectoryChange, ...]:
    changes = []
    i = 0
    try:
        for i in range(n):
            changes.append(_decode_known_change(r))
    except DecodeError as e:
        raise e.within(f"{where}[{i}]") from None
    return tuple(changes)


#: DirectoryChanges already decoded, by their bytes: their first DIRECTORY_CHANGE_MIN_SIZE bytes
#: -> [(all their bytes, the change)]; emptied when it holds KNOWN_CHANGES_LIMIT keys
_KNOWN_CHANGES: dict[bytes, list[tuple[bytes, DirectoryChange]]] = {}
KNOWN_CHANGES_LIMIT = 1 << 14
memos.register(f"{__name__}._KNOWN_CHANGES", "a DirectoryChange's bytes -> the change decoded from them",
               _KNOWN_CHANGES)


def _decode_known_change(r: Reader) -> DirectoryChange:
    """:func:`decode_directory_change`, giving bytes decoded before the value they gave then.

    A PSC passes every change it applies on to each of its BSCs, batched differently per BSC,
    so the same change bytes arrive inside many different messages. Decoding reads a change
    front to back and stops where it ends (the encoding is prefix-free), so bytes that start
    with a change's bytes decode to that same change and end at the same place; the value is
    immutable, so it is shared. Bytes that fail to decode are never remembered.
    """
    if decode_directory_change.__code__ is not _DECODE_CHANGE_CODE:
        return decode_directory_change(r)  # its code swapped (clause coverage): it must run
    data, pos = r.data, r.pos
    head = data[pos : pos + DIRECTORY_CHANGE_MIN_SIZE]
    known = _KNOWN_CHANGES.get(head)
    if known is not None:
        for wire, change in known:
            end = pos + len(wire)
            if end <= r.end and data.startswith(wire, pos):
                r.pos = end
                return change
    change = decode_directory_change(r)
    entry = (data[pos : r.pos], change)
    if known is None:
        if len(_KNOWN_CHANGES) >= KNOWN_CHANGES_LIMIT:
            _KNOWN_CHANGES.clear()
        _KNOWN_CHANGES[head] = [entry]
    elif len(known) < 8:
        known.append(entry)
    return change


@clause("MC-MQDSRP", "2.2.6.5", "SyncReplyMessage")
def decode_sync_reply_message(r: Reader, site_id: Guid) -> SyncReplyMessage:
    """SyncReplyHeader (2.2.5.3) then DirectoryChanges: "The number of elements in the array MUST
    be the same as SyncReplyHeader.Count"."""
    count_at = r.pos + _GUID_3SEQ.size
    try:
        partition_id, from_seq, to_seq, purged, n, cs0 = decode_sync_reply_header(r)
        # fail before building anything when Count cannot fit in the bytes left
        r.count(n, DIRECTORY_CHANGE_MIN_SIZE, "SyncReplyHeader.Count", S_SREP, "changes", count_at)
    except DecodeError as e:
        raise e.within("SyncReplyMessage") from None
    changes = _decode_changes(r, n, "SyncReplyMessage.DirectoryChanges")
    return _sync_reply(site_id, partition_id, from_seq, to_seq, purged, cs0, changes)


@clause("MC-MQDSRP", "2.2.6.6", "BSCAckMessage")
def decode_bsc_ack_message(r: Reader, site_id: Guid) -> BSCAckMessage:
    """BSCMachineID, BSCName."""
    machine_id = _guid(r.raw(16, "BSCAckMessage.BSCMachineID", S_BSC))
    name = read_wstr(r, "BSCAckMessage.BSCName", S_BSC)
    return _bsc_ack(site_id, machine_id, name)


@clause("MC-MQDSRP", "2.2.6.7", "PSCAckMessage")
def decode_psc_ack_message(r: Reader, site_id: Guid) -> PSCAckMessage:
    """PSCSiteID, AckedPartitionID, AckedSeqNumber, PSCName."""
    pos = r.pos
    if r.end - pos < _GUID_GUID_SEQ.size:
        # short buffer: one of these reads fails, naming the field that runs out
        r.guid("PSCAckMessage.PSCSiteID", S_PSC)
        r.guid("PSCAckMessage.AckedPartitionID", S_PSC)
        r.seqnum("PSCAckMessage.AckedSeqNumber", S_PSC)
    psc_site_b, pid_b, acked_v = _GUID_GUID_SEQ.unpack_from(r.data, pos)
    r.pos = pos + _GUID_GUID_SEQ.size
    name = read_wstr(r, "PSCAckMessage.PSCName", S_PSC)
    return _psc_ack(site_id, _guid(psc_site_b), _guid(pid_b), _seq(acked_v), name)


@clause("MC-MQDSRP", "2.2.6.8", "AlreadyPurgedMessage")
def decode_already_purged_message(r: Reader, site_id: Guid) -> AlreadyPurgedMessage:
    """PartitionID, PurgedSeqNumber."""
    pos = r.pos
    if r.end - pos < _GUID_SEQ.size:
        # short buffer: one of these reads fails, naming the field that runs out
        r.guid("AlreadyPurgedMessage.PartitionID", S_PURGED)
        r.seqnum("AlreadyPurgedMessage.PurgedSeqNumber", S_PURGED)
    pid_b, purged_v = _GUID_SEQ.unpack_from(r.data, pos)
    r.pos = pos + _GUID_SEQ.size
    return _already_purged(site_id, _guid(pid_b), _seq(purged_v))


@clause("MC-MQDSRP", "2.2.6.9", "ChangePropagationMessage")
def decode_change_propagation_message(r: Reader, site_id: Guid) -> ChangePropagationMessage:
    """Flush, Count, Count DirectoryChanges, SeqNumberHeader (2.2.5.4).

    Flush "MUST be set to one of the following values" (0x00, 0x01); "The number of elements in
    this array MUST be the same as Count".
    """
    flush = r.u8("ChangePropagationMessage.Flush", S_PROP)
    if flush > 1:
        raise r.fail("ChangePropagationMessage.Flush", S_PROP,
                     f"Flush {flush:#04x} is not 0x00 or 0x01", r.pos - 1)
    count_at = r.pos
    n = r.u16("ChangePropagationMessage.Count", S_PROP)
    # fail before building anything when Count cannot fit in the bytes left
    r.count(n, DIRECTORY_CHANGE_MIN_SIZE, "ChangePropagationMessage.Count", S_PROP, "changes",
            count_at)
    changes = _decode_changes(r, n, "ChangePropagationMessage.DirectoryChanges")
    try:
        seq_numbers = decode_seq_number_header(r)
    except DecodeError as e:
        raise e.within("ChangePropagationMessage") from None
    return _change_propagation(site_id, flush == 1, changes, seq_numbers)


#: Operation -> (body decoder, message name, section), indexed by the Operation value
_DECODERS = (
    (decode_change_propagation_message, "ChangePropagationMessage", S_PROP),
    (decode_change_request_message, "ChangeRequestMessage", S_CREQ),
    (decode_sync_request_message, "SyncRequestMessage", S_SREQ),
    (decode_sync_reply_message, "SyncReplyMessage", S_SREP),
    (decode_change_reply_message, "ChangeReplyMessage", S_CREP),
    (decode_already_purged_message, "AlreadyPurgedMessage", S_PURGED),
    (decode_psc_ack_message, "PSCAckMessage", S_PSC),
    (decode_bsc_ack_message, "BSCAckMessage", S_BSC),
)


@clause("MC-MQDSRP", "2.2.6.1", "BaseReplicationMessage")
def decode(data: bytes, *, lenient: bool = False) -> ReplicationMessage:
    """Decode one replication message (an MSMQ message body), dispatching on Operation.

    Section 2 gives a receiver no leniency (no field it SHOULD ignore or MAY accept out of
    range), so ``lenient`` is accepted for the common decode signature and has no effect.
    Raises :class:`DecodeError`, and nothing else, for bytes that section 2 forbids, trailing
    bytes included.
    """
    r = Reader(data)
    if r.end >= _BASE.size and r.data[0] == 0 and r.data[17] < 8:
        # a well-formed BaseReplicationHeader, read inline (the common case)
        site_id, op = _guid(r.data[1:17]), r.data[17]
        r.pos = _BASE.size
    else:
        site_id, op = decode_base_replication_header(r)  # raises the header's error
    decoder, name, section = _DECODERS[op]
    msg = decoder(r, site_id)
    r.finish(name, section)
    return msg


#: decode_shared's memo, bytes -> their message; emptied when it holds SHARED_DECODE_LIMIT
_SHARED: dict[bytes, ReplicationMessage] = {}
SHARED_DECODE_LIMIT = 4096
memos.register(f"{__name__}._SHARED", "a message's bytes -> the message decode_shared decoded from them", _SHARED)


def decode_shared(data: bytes) -> ReplicationMessage:
    """:func:`decode`, giving the same value to every caller with equal bytes.

    A decoded message is immutable all the way down (frozen attrs values holding tuples, str,
    bytes, int and other frozen values), so the receivers of one set of bytes (a PSC's change
    propagation to each BSC, the same sync reply sent to several servers) can share one value
    instead of each building an equal one. Bytes that do not decode are not remembered: every
    call raises its DecodeError afresh. The memo is emptied when full, so it only ever costs
    the last few thousand messages. While any decoder runs other code than its own (clause
    coverage swaps in code that notes each call), every call decodes: what runs is then observed.
    """
    if type(data) is not bytes or not _decoders_as_written():
        return decode(data)
    msg = _SHARED.get(data)
    if msg is None:
        msg = decode(data)
        if len(_SHARED) >= SHARED_DECODE_LIMIT:
            _SHARED.clear()
        _SHARED[data] = msg
    return msg


# --- encoders ----------------------------------------------------------------------------------

def _encode_change_request(m: ChangeRequestMessage) -> bytes:
    parts = [
        _base(m.site_id, Operation.CHANGE_REQUEST), m.partition_id.bytes_le,
        _U32_U32.pack(m.request_identifier, m.psc_name_offset), pack_wstr(m.requester_name),
    ]
    if m.psc_name is not None:
        parts.append(pack_wstr(m.psc_name))
    parts.append(encode_directory_change(m.change))
    return b"".join(parts)


def _encode_change_reply(m: ChangeReplyMessage) -> bytes:
    return b"".join((_base(m.site_id, Operation.CHANGE_REPLY),
                     _U32_U32.pack(m.request_identifier, m.result), pack_wstr(m.requester_name)))


def _encode_sync_request(m: SyncRequestMessage) -> bytes:
    return b"".join((
        _base(m.site_id, Operation.SYNC_REQUEST),
        _GUID_3SEQ.pack(m.partition_id.bytes_le, m.from_seq_number.value, m.to_seq_number.value,
                        m.known_purged_seq_number.value),
        bytes((int(m.is_sync0), m.scope)), pack_wstr(m.requester_name),
    ))


def _encode_sync_reply(m: SyncReplyMessage) -> bytes:
    return b"".join((
        _base(m.site_id, Operation.SYNC_REPLY),
        _GUID_3SEQ.pack(m.partition_id.bytes_le, m.from_seq_number.value, m.to_seq_number.value,
                        m.purged_seq_number.value),
        _U32_U32.pack(len(m.changes), m.complete_sync0),
        *(encode_directory_change(c) for c in m.changes),
    ))


def _encode_bsc_ack(m: BSCAckMessage) -> bytes:
    return b"".join((_base(m.site_id, Operation.BSC_ACK), m.bsc_machine_id.bytes_le,
                     pack_wstr(m.bsc_name)))


def _encode_psc_ack(m: PSCAckMessage) -> bytes:
    return b"".join((
        _base(m.site_id, Operation.PSC_ACK),
        _GUID_GUID_SEQ.pack(m.psc_site_id.bytes_le, m.acked_partition_id.bytes_le,
                            m.acked_seq_number.value),
        pack_wstr(m.psc_name),
    ))


def _encode_already_purged(m: AlreadyPurgedMessage) -> bytes:
    return _base(m.site_id, Operation.ALREADY_PURGED) + _GUID_SEQ.pack(
        m.partition_id.bytes_le, m.purged_seq_number.value)


def _encode_change_propagation(m: ChangePropagationMessage) -> bytes:
    return b"".join((
        _base(m.site_id, Operation.CHANGE_PROPAGATION), bytes((int(m.flush),)),
        pack_u16(len(m.changes)), *(encode_directory_change(c) for c in m.changes),
        encode_seq_number_header(m.seq_numbers),
    ))


_ENCODERS = {
    ChangeRequestMessage: _encode_change_request,
    ChangeReplyMessage: _encode_change_reply,
    SyncRequestMessage: _encode_sync_request,
    SyncReplyMessage: _encode_sync_reply,
    BSCAckMessage: _encode_bsc_ack,
    PSCAckMessage: _encode_psc_ack,
    AlreadyPurgedMessage: _encode_already_purged,
    ChangePropagationMessage: _encode_change_propagation,
}


def encode(msg: ReplicationMessage) -> bytes:
    """The wire form of a replication message, BaseReplicationHeader first (Version 0x00)."""
    encoder = _ENCODERS.get(type(msg))
    if encoder is None:
        raise ModelError(f"not an MC-MQDSRP replication message: {msg!r}")
    return encoder(msg)


#: the decoders decode_shared and _decode_known_change stand in for, with their own code: the
#: memos answer only while every one of them still runs it (clause coverage, for one, replaces
#: a registered function's code while it counts calls, and then each call must happen)
_DECODERS_WRITTEN = tuple(
    (f, f.__code__) for f in (
        decode, decode_base_replication_header, decode_change_request_header, decode_sync_reply_header,
        *(d for d, _name, _section in _DECODERS), decode_directory_change, decode_seq_number_header,
        decode_partition_seq_numbers,
    )
)
_DECODE_CHANGE_CODE = decode_directory_change.__code__


def _decoders_as_written() -> bool:
    """Whether every decoder a shared decoding stands in for runs its own code."""
    for function, code in _DECODERS_WRITTEN:
        if function.__code__ is not code:
            return False
    return True
