"""A minimal MQQB UserMessage codec: enough to find a message's body and its queues.

The directory protocols ride inside MSMQ messages ([MC-MQDSRP] 2.1, [MS-MQCN] 2.1), which the
binary transport [MS-MQQB] carries over TCP port 1801 as UserMessage packets ([MS-MQMQ] 2.2.20).
This module reads and builds the part of a UserMessage packet between the BaseHeader and the
end of the message body; the layout follows the appendix of ``propid-types.md``:

* BaseHeader (16 bytes, [MS-MQMQ] 2.2.19.1), then for user (non-internal) packets
* UserHeader ([MS-MQMQ] 2.2.19.2) with the destination, admin and response queue format names,
* TransactionHeader (2.2.20.5) and SecurityHeader (2.2.20.6) when their flags say so,
* MessagePropertiesHeader (2.2.19.3), whose label and extension precede the body.

What is covered: every field up to the body is decoded and re-encoded byte for byte; the
optional headers after the body (DebugHeader, SRMP, SOAP, MultiQueueFormat...) are kept as raw
``trailer`` bytes. What is not: internal (session) packets are only framed, never decoded;
signatures and encryption are carried, never checked. All integers are little-endian and bit
fields are numbered least significant bit first.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from enum import IntEnum
from typing import Any

import attrs

from mqspec.model.errors import DecodeError, ModelError
from mqspec.model.guid import Guid
from mqspec.model.wire import Reader, check_range, pack_u16, pack_u32
from mqspec.wording import plural

BASE = "MS-MQMQ 2.2.19.1"
USER = "MS-MQMQ 2.2.19.2"
FORMAT_NAME = "MS-MQMQ 2.2.18.1.5"
DIRECT = "MS-MQMQ 2.2.18.1.5.2"
TRANSACTION = "MS-MQMQ 2.2.20.5"
SECURITY = "MS-MQMQ 2.2.20.6"
PROPERTIES = "MS-MQMQ 2.2.19.3"

VERSION = 0x10
SIGNATURE = b"LIOR"  # 0x524F494C little-endian
BASE_HEADER_SIZE = 16
SESSION_HEADER_SIZE = 16
USER_HEADER_START = 16  # the UserHeader follows the BaseHeader
USER_HEADER_FIXED = 48
PROPERTIES_FIXED = 56

# BaseHeader.Flags
BF_PRIORITY = 0x0007  # PR, bits 0-2
BF_INTERNAL = 0x0008  # IN: an internal (session) packet, not a UserMessage
BF_SESSION = 0x0010  # SH: a 16-byte SessionHeader follows the packet, outside PacketSize
BF_DEBUG = 0x0020  # DH
BF_TRACE = 0x0100  # TR

# UserHeader.Flags: the fields this codec derives from the message's structure
UF_DQ_SHIFT, UF_AQ_SHIFT, UF_RQ_SHIFT = 10, 13, 16
UF_SECURITY = 1 << 19  # SH
UF_TRANSACTION = 1 << 20  # TH
UF_PROPERTIES = 1 << 21  # MP, "always 1"
UF_CONNECTOR = 1 << 22  # CQ
UF_DERIVED = (7 << UF_DQ_SHIFT) | (7 << UF_AQ_SHIFT) | (7 << UF_RQ_SHIFT) | UF_SECURITY
UF_DERIVED |= UF_TRANSACTION | UF_PROPERTIES | UF_CONNECTOR

TX_CONNECTOR = 0x1  # TransactionHeader.Flags.CG: a ConnectorQMGuid follows
SECURITY_ENCRYPTED_BODY = 0x20  # SecurityHeader.Flags.EB (bit 5)

#: BaseHeader.TimeToReachQueue and the UserHeader's fixed fields, read at once (offset 12)
_FIXED = struct.Struct("<I16s16sIIII")
#: the MessagePropertiesHeader's fixed fields, read at once
_PROPERTIES = struct.Struct("<BBH20sIIIIIIII")


def _uint(bits: int):
    """An attrs validator: a ModelError unless the value fits ``bits`` unsigned bits."""

    def check(_inst: object, attr: attrs.Attribute, value: int) -> None:
        if type(value) is not int:
            raise ModelError(f"{attr.name} must be an int, not {value!r}")
        check_range(value, bits, attr.name)

    return check


def _instance(cls: type, *, optional: bool = False):
    """An attrs validator: a ModelError unless the value is a ``cls`` (or None if ``optional``)."""

    def check(_inst: object, attr: attrs.Attribute, value: object) -> None:
        if not isinstance(value, cls) and not (optional and value is None):
            raise ModelError(f"{attr.name} must be a {cls.__name__}{' or None' if optional else ''}, not {value!r}")

    return check


_opt_guid = _instance(Guid, optional=True)


def _bytes(_inst: object, attr: attrs.Attribute, value: object) -> None:
    if type(value) is not bytes:
        raise ModelError(f"{attr.name} must be bytes, not {value!r}")


class QueueType(IntEnum):
    """The 3-bit DQ/AQ/RQ values of UserHeader.Flags: which queue format name follows."""

    NONE = 0
    SAME_AS_ADMIN = 1  # RQ only: the response queue is the admin queue, 0 bytes (E-049)
    PRIVATE_AT_SOURCE = 2  # PrivateQueueFormatNameId on the source QM (4 bytes)
    PRIVATE_AT_DESTINATION = 3  # ... on the destination QM (4 bytes)
    PRIVATE_AT_ADMIN = 4  # ... on the admin queue's QM (4 bytes)
    PUBLIC = 5  # PublicQueueFormatName: the queue GUID (16 bytes)
    PRIVATE = 6  # PrivateQueueFormatName: QM GUID + queue id (20 bytes)
    DIRECT = 7  # DirectQueueFormatName: counted WCHAR string, padded to 4


def _queue_type_of(value: object) -> QueueType:
    try:
        return QueueType(value)
    except ValueError as exc:
        raise ModelError(f"{value!r} is not a queue type (0-7)") from exc


@attrs.frozen
class PrivateQueueId:
    """A private queue named by its number on a QM the message already names (types 2-4)."""

    relative_to: QueueType = attrs.field(converter=_queue_type_of)
    queue_id: int = attrs.field(validator=_uint(32))

    def __attrs_post_init__(self) -> None:
        if self.relative_to not in (2, 3, 4):
            raise ModelError(f"a PrivateQueueFormatNameId is type 2, 3 or 4, not {self.relative_to!r}")

    @property
    def kind(self) -> QueueType:
        return self.relative_to


@attrs.frozen
class PublicQueue:
    """A public queue named by its GUID (type 5)."""

    queue: Guid = attrs.field(validator=_instance(Guid))
    kind = QueueType.PUBLIC


@attrs.frozen
class PrivateQueue:
    """``PRIVATE=<machine GUID>\\<queue id>`` (type 6)."""

    machine: Guid = attrs.field(validator=_instance(Guid))
    queue_id: int = attrs.field(validator=_uint(32))
    kind = QueueType.PRIVATE


@attrs.frozen
class DirectQueue:
    """``DIRECT=...`` (type 7): the format name string itself."""

    name: str = attrs.field(validator=_instance(str))
    kind = QueueType.DIRECT

    def __attrs_post_init__(self) -> None:
        if "\x00" in self.name:
            raise ModelError("a direct format name cannot contain NUL")
        if len(self.name.encode("utf-16-le", "surrogatepass")) + 2 > 0xFFFF:
            raise ModelError("a direct format name is at most 32766 WCHARs")


@attrs.frozen
class SameAsAdmin:
    """The response queue is the admin queue (RQ = 1; nothing on the wire)."""

    kind = QueueType.SAME_AS_ADMIN


QueueFormat = PrivateQueueId | PublicQueue | PrivateQueue | DirectQueue
_QUEUE_TYPES = (PrivateQueueId, PublicQueue, PrivateQueue, DirectQueue)


@attrs.frozen
class TransactionHeader:
    """[MS-MQMQ] 2.2.20.5, kept whole so the packet re-encodes; ``connector_qm`` iff Flags.CG."""

    flags: int = attrs.field(default=0, validator=_uint(32))
    tx_sequence_id: int = attrs.field(default=0, validator=_uint(64))
    tx_sequence_number: int = attrs.field(default=0, validator=_uint(32))
    previous_tx_sequence_number: int = attrs.field(default=0, validator=_uint(32))
    connector_qm: Guid | None = attrs.field(default=None, validator=_opt_guid)

    def __attrs_post_init__(self) -> None:
        if bool(self.flags & TX_CONNECTOR) != (self.connector_qm is not None):
            raise ModelError("TransactionHeader.connector_qm is present exactly when Flags.CG is set")


@attrs.frozen
class SecurityHeader:
    """[MS-MQMQ] 2.2.20.6: flags and the five SecurityData items, each padded to 4 bytes."""

    flags: int = attrs.field(default=0, validator=_uint(16))
    sender_id: bytes = attrs.field(default=b"", validator=_bytes)
    encryption_key: bytes = attrs.field(default=b"", validator=_bytes)
    signature: bytes = attrs.field(default=b"", validator=_bytes)
    sender_cert: bytes = attrs.field(default=b"", validator=_bytes)
    provider_info: bytes = attrs.field(default=b"", validator=_bytes)

    def __attrs_post_init__(self) -> None:
        if max(len(self.sender_id), len(self.encryption_key), len(self.signature)) > 0xFFFF:
            raise ModelError("SenderId, EncryptionKey and Signature sizes are 16-bit")

    @property
    def encrypted_body(self) -> bool:
        return bool(self.flags & SECURITY_ENCRYPTED_BODY)


@attrs.frozen
class MessageProperties:
    """The MessagePropertiesHeader fields other than the body ([MS-MQMQ] 2.2.19.3)."""

    flags: int = attrs.field(default=0, validator=_uint(8))
    message_class: int = attrs.field(default=0, validator=_uint(16))  # 0 = Normal
    correlation_id: bytes = attrs.field(default=bytes(20), validator=_bytes)
    body_type: int = attrs.field(default=0x11, validator=_uint(32))  # VT_UI1|VT_VECTOR: bytes
    application_tag: int = attrs.field(default=0, validator=_uint(32))
    allocation_body_size: int = attrs.field(default=0, validator=_uint(32))
    privacy_level: int = attrs.field(default=0, validator=_uint(32))
    hash_algorithm: int = attrs.field(default=0, validator=_uint(32))
    encryption_algorithm: int = attrs.field(default=0, validator=_uint(32))
    label: str | None = attrs.field(  # None: LabelLength 0; "" is a lone NUL (LabelLength 1)
        default=None, validator=_instance(str, optional=True)
    )
    extension: bytes = attrs.field(default=b"", validator=_bytes)

    def __attrs_post_init__(self) -> None:
        if len(self.correlation_id) != 20:
            raise ModelError("CorrelationID is 20 bytes")
        if self.label is not None and len(self.label.encode("utf-16-le", "surrogatepass")) // 2 + 1 > 0xFF:
            raise ModelError("a label is at most 254 WCHARs (LabelLength is one byte, NUL included)")


@attrs.frozen
class UserMessage:
    """One UserMessage packet, up to and including the body; later headers stay raw in ``trailer``.

    ``base_flags`` and ``user_flags`` hold the flag bits this codec does not derive from the
    structure (priority, tracing, delivery mode, journaling, AH, HH, ...).
    """

    destination: QueueFormat
    body: bytes = attrs.field(default=b"", validator=_bytes)
    admin: QueueFormat | None = None
    response: QueueFormat | SameAsAdmin | None = None
    source_qm: Guid = attrs.field(default=Guid.NULL, validator=_instance(Guid))
    qm_address: Guid = attrs.field(default=Guid.NULL, validator=_instance(Guid))
    time_to_reach_queue: int = attrs.field(default=300, validator=_uint(32))
    time_to_be_received: int = attrs.field(default=0xFFFFFFFF, validator=_uint(32))
    sent_time: int = attrs.field(default=0, validator=_uint(32))
    message_id: int = attrs.field(default=1, validator=_uint(32))
    base_flags: int = attrs.field(default=3, validator=_uint(16))  # priority 3, the default
    user_flags: int = attrs.field(default=0, validator=_uint(32))
    connector_type: Guid | None = attrs.field(default=None, validator=_opt_guid)
    transaction: TransactionHeader | None = attrs.field(
        default=None, validator=_instance(TransactionHeader, optional=True)
    )
    security: SecurityHeader | None = attrs.field(
        default=None, validator=_instance(SecurityHeader, optional=True)
    )
    properties: MessageProperties = attrs.field(
        default=MessageProperties(), validator=_instance(MessageProperties)
    )
    trailer: bytes = attrs.field(default=b"", validator=_bytes)
    session_header: bytes | None = None

    def __attrs_post_init__(self) -> None:
        if self.base_flags & (BF_INTERNAL | BF_SESSION):
            raise ModelError("base_flags cannot set IN or SH (SH follows session_header)")
        if self.user_flags & UF_DERIVED:
            raise ModelError("user_flags cannot set DQ, AQ, RQ, SH, TH, MP or CQ (they follow the fields)")
        if not isinstance(self.destination, _QUEUE_TYPES) or self.destination.kind not in (3, 5, 6, 7):
            raise ModelError(f"the destination queue cannot be {self.destination!r} (types 3, 5, 6, 7)")
        if self.admin is not None and (not isinstance(self.admin, _QUEUE_TYPES) or self.admin.kind == 4):
            raise ModelError(f"the admin queue cannot be {self.admin!r}")
        if self.response is not None and not isinstance(self.response, (*_QUEUE_TYPES, SameAsAdmin)):
            raise ModelError(f"the response queue is a queue format name or SameAsAdmin, not {self.response!r}")
        if self.admin is None and self.response is not None and self.response.kind in (1, 4):
            raise ModelError("a response queue relative to the admin queue needs an admin queue")
        header = self.session_header
        if header is not None and (type(header) is not bytes or len(header) != SESSION_HEADER_SIZE):
            raise ModelError("a SessionHeader is 16 bytes")

    def format_name(self, which: str = "destination") -> str | None:
        """The text form of a queue (``destination``, ``admin`` or ``response``), or None."""
        queue = getattr(self, which)
        if isinstance(queue, SameAsAdmin):
            queue = self.admin
        if queue is None:
            return None
        if isinstance(queue, DirectQueue):
            return f"DIRECT={strip_direct_prefix(queue.name)}"
        if isinstance(queue, PublicQueue):
            return f"PUBLIC={queue.queue}"
        if isinstance(queue, PrivateQueue):
            return f"PRIVATE={queue.machine}\\{queue.queue_id:x}"
        # a PrivateQueueFormatNameId names its machine only by reference to this message
        machine = {
            QueueType.PRIVATE_AT_SOURCE: self.source_qm,
            QueueType.PRIVATE_AT_DESTINATION: self.qm_address,
        }.get(queue.relative_to)
        if machine is None:  # private at the admin queue's QM
            admin = self.admin
            machine = admin.machine if isinstance(admin, PrivateQueue) else None
        return f"PRIVATE={machine if machine is not None else '?'}\\{queue.queue_id:x}"


@attrs.frozen
class Packet:
    """One framed MQQB packet of a TCP stream: where it starts and all its bytes.

    ``data`` is the PacketSize bytes plus, when BaseHeader.Flags.SH is set, the 16-byte
    SessionHeader that follows them.
    """

    offset: int
    flags: int
    data: bytes

    @property
    def internal(self) -> bool:
        return bool(self.flags & BF_INTERNAL)


def strip_direct_prefix(name: str) -> str:
    """The wire form of a direct format name: without its ``DIRECT=`` prefix (any case)."""
    return name[7:] if name[:7].upper() == "DIRECT=" else name


# --- framing ------------------------------------------------------------------------------


def read_base_header(data: bytes, offset: int = 0) -> tuple[int, int]:
    """Check the BaseHeader at ``offset`` and return (Flags, PacketSize).

    "Signature ... MUST be set to 0x524F494C"; "VersionNumber ... MUST be set to 0x10";
    PacketSize covers the whole packet, so it is at least the 16-byte BaseHeader.
    """
    r = Reader(data, offset)
    version = r.u8("BaseHeader.VersionNumber", BASE)
    if version != VERSION:
        raise DecodeError("BaseHeader.VersionNumber", offset, BASE, f"is 0x{version:02x}, not 0x10")
    r.u8("BaseHeader.Reserved", BASE)
    flags = r.u16("BaseHeader.Flags", BASE)
    signature = r.raw(4, "BaseHeader.Signature", BASE)
    if signature != SIGNATURE:
        raise DecodeError("BaseHeader.Signature", offset + 4, BASE, f"is {signature.hex()}, not 'LIOR'")
    size = r.u32("BaseHeader.PacketSize", BASE)
    if size < BASE_HEADER_SIZE:
        raise DecodeError("BaseHeader.PacketSize", offset + 8, BASE, f"{size} is less than the 16-byte BaseHeader")
    return flags, size


def split_packets(stream: bytes, offset: int = 0) -> Iterator[Packet]:
    """Frame the packets of a byte stream, stopping cleanly at a packet the stream cuts short.

    Raises DecodeError for a bad BaseHeader; the caller decides how to resynchronise
    (:func:`find_signature`). The bytes after the last whole packet are not read.
    """
    end = len(stream)
    while end - offset >= BASE_HEADER_SIZE:
        flags, size = read_base_header(stream, offset)
        total = size + (SESSION_HEADER_SIZE if flags & BF_SESSION else 0)
        if end - offset < total:
            return
        yield Packet(offset, flags, stream[offset : offset + total])
        offset += total


def find_signature(stream: bytes, start: int) -> int:
    """The offset of the next plausible BaseHeader (version 0x10, 'LIOR') at or after ``start``, or -1."""
    i = stream.find(SIGNATURE, start + 4)
    while i >= 0:
        if stream[i - 4] == VERSION:
            return i - 4
        i = stream.find(SIGNATURE, i + 1)
    return -1


# --- queue format names -------------------------------------------------------------------


def _read_queue(r: Reader, kind: int, field: str, header_start: int) -> QueueFormat:
    """Read one queue format name of type ``kind`` ([MS-MQMQ] 2.2.18.1.5)."""
    if kind in (2, 3, 4):
        return PrivateQueueId(QueueType(kind), r.u32(f"{field}.PrivateQueueIdentifier", FORMAT_NAME))
    if kind == 5:
        return PublicQueue(r.guid(f"{field}.QueueIdentifier", FORMAT_NAME))
    if kind == 6:
        machine = r.guid(f"{field}.SourceQueueManager", FORMAT_NAME)
        return PrivateQueue(machine, r.u32(f"{field}.PrivateQueueIdentifier", FORMAT_NAME))
    start = r.pos
    count = r.u16(f"{field}.Count", DIRECT)
    # "Count ... the length, in bytes, of the following null-terminated WCHAR buffer ...
    # up to and including the terminating null character"
    if count < 2 or count % 2:
        raise DecodeError(f"{field}.Count", start, DIRECT, f"{count} is not a whole, terminated WCHAR buffer")
    text = r.raw(count, f"{field}.DirectFormatName", DIRECT)
    if text[-2:] != b"\x00\x00":
        raise DecodeError(f"{field}.DirectFormatName", start + 2, DIRECT, "is not null-terminated")
    name = text[:-2].decode("utf-16-le", "surrogatepass")
    if "\x00" in name:
        raise DecodeError(f"{field}.DirectFormatName", start + 2, DIRECT, "has a NUL before its terminator")
    # "padded up to the next 4-byte boundary relative to the start of the header"; the
    # padding's value is unrestricted, so it is skipped, not checked
    r.raw(-(r.pos - header_start) % 4, f"{field}.Padding", DIRECT)
    return DirectQueue(name)


def _pack_queue(queue: QueueFormat, header_len: int) -> bytes:
    if isinstance(queue, PrivateQueueId):
        return pack_u32(queue.queue_id)
    if isinstance(queue, PublicQueue):
        return queue.queue.bytes_le
    if isinstance(queue, PrivateQueue):
        return queue.machine.bytes_le + pack_u32(queue.queue_id)
    text = queue.name.encode("utf-16-le", "surrogatepass") + b"\x00\x00"
    out = pack_u16(len(text)) + text
    return out + bytes(-(header_len + len(out)) % 4)


def _queue_type(queue: QueueFormat | SameAsAdmin | None) -> int:
    return 0 if queue is None else int(queue.kind)


# --- UserMessage ----------------------------------------------------------------------------


def decode_user_message(data: bytes) -> UserMessage:
    """Decode one UserMessage packet: PacketSize bytes, then the SessionHeader if SH is set.

    Bytes after the body and its padding, up to PacketSize, are kept as ``trailer``.
    """
    data = bytes(data)
    flags, size = read_base_header(data)
    if flags & BF_INTERNAL:
        raise DecodeError("BaseHeader.Flags", 2, BASE, "IN is set: an internal packet, not a UserMessage")
    # "PacketSize ... excludes the SessionHeader", which follows the packet when SH is set
    total = size + (SESSION_HEADER_SIZE if flags & BF_SESSION else 0)
    if total != len(data):
        raise DecodeError("BaseHeader.PacketSize", 8, BASE, f"says {plural(total, 'byte')}, the packet has {len(data)}")
    session_header = data[size:] if flags & BF_SESSION else None
    r = Reader(data, 12, size)
    user_start = USER_HEADER_START
    flags_at = user_start + 44
    if size >= user_start + USER_HEADER_FIXED:  # the fixed fields in one read (short packets: field by field)
        time_to_reach_queue, source, address, time_to_be_received, sent_time, message_id, user_flags = \
            _FIXED.unpack_from(data, 12)
        source_qm, qm_address = Guid(source), Guid(address)
        r.pos = user_start + USER_HEADER_FIXED
    else:
        time_to_reach_queue = r.u32("BaseHeader.TimeToReachQueue", BASE)
        source_qm = r.guid("UserHeader.SourceQueueManager", USER)
        qm_address = r.guid("UserHeader.QueueManagerAddress", USER)
        time_to_be_received = r.u32("UserHeader.TimeToBeReceived", USER)
        sent_time = r.u32("UserHeader.SentTime", USER)
        message_id = r.u32("UserHeader.MessageID", USER)
        user_flags = r.u32("UserHeader.Flags", USER)
    dq, aq, rq = ((user_flags >> s) & 7 for s in (UF_DQ_SHIFT, UF_AQ_SHIFT, UF_RQ_SHIFT))
    # the types each queue may take; the appendix leaves them open (clarification E-049)
    if dq not in (3, 5, 6, 7):
        raise DecodeError("UserHeader.Flags.DQ", flags_at, USER, f"destination queue type {dq} is not 3, 5, 6 or 7")
    if aq in (1, 4):
        raise DecodeError("UserHeader.Flags.AQ", flags_at, USER, f"admin queue type {aq} is not allowed")
    if rq == 4 and aq == 0:
        raise DecodeError("UserHeader.Flags.RQ", flags_at, USER, "response queue is private at an absent admin QM")
    if rq == 1 and aq == 0:
        raise DecodeError("UserHeader.Flags.RQ", flags_at, USER, "response queue is 'same as admin', with no admin queue")
    # "MP ... MUST be set": without a MessagePropertiesHeader there is no body to find
    if not user_flags & UF_PROPERTIES:
        raise DecodeError("UserHeader.Flags.MP", flags_at, USER, "is clear: no MessagePropertiesHeader")
    destination = _read_queue(r, dq, "UserHeader.DestinationQueue", user_start)
    admin = _read_queue(r, aq, "UserHeader.AdminQueue", user_start) if aq else None
    response: QueueFormat | SameAsAdmin | None = None
    if rq == 1:
        response = SameAsAdmin()
    elif rq:
        response = _read_queue(r, rq, "UserHeader.ResponseQueue", user_start)
    connector = r.guid("UserHeader.ConnectorType", USER) if user_flags & UF_CONNECTOR else None

    transaction = _read_transaction(r) if user_flags & UF_TRANSACTION else None
    security = _read_security(r) if user_flags & UF_SECURITY else None
    properties, body = _read_properties(r)
    # the body is followed by padding to a multiple of 4; what remains are later headers
    body_end = r.pos
    padded = min(body_end + (-body_end % 4), size)
    trailer = data[padded:size]
    return _decoded(
        UserMessage,
        destination=destination,
        body=body,
        admin=admin,
        response=response,
        source_qm=source_qm,
        qm_address=qm_address,
        time_to_reach_queue=time_to_reach_queue,
        time_to_be_received=time_to_be_received,
        sent_time=sent_time,
        message_id=message_id,
        base_flags=flags & ~BF_SESSION,
        user_flags=user_flags & ~UF_DERIVED,
        connector_type=connector,
        transaction=transaction,
        security=security,
        properties=properties,
        trailer=trailer,
        session_header=session_header,
    )


def read_destination(data: bytes) -> QueueFormat:
    """Only the destination queue of a UserMessage packet (to tell whose a broken packet is)."""
    r = Reader(bytes(data), USER_HEADER_START)
    r.raw(44, "UserHeader", USER)  # SourceQueueManager .. MessageID
    flags_at = r.pos
    dq = (r.u32("UserHeader.Flags", USER) >> UF_DQ_SHIFT) & 7
    if dq not in (3, 5, 6, 7):
        raise DecodeError("UserHeader.Flags.DQ", flags_at, USER, f"destination queue type {dq} is not 3, 5, 6 or 7")
    return _read_queue(r, dq, "UserHeader.DestinationQueue", USER_HEADER_START)


def _read_transaction(r: Reader) -> TransactionHeader:
    flags = r.u32("TransactionHeader.Flags", TRANSACTION)
    tx_id = r.u64("TransactionHeader.TxSequenceID", TRANSACTION)
    tx_number = r.u32("TransactionHeader.TxSequenceNumber", TRANSACTION)
    previous = r.u32("TransactionHeader.PreviousTxSequenceNumber", TRANSACTION)
    connector = r.guid("TransactionHeader.ConnectorQMGuid", TRANSACTION) if flags & TX_CONNECTOR else None
    return TransactionHeader(flags, tx_id, tx_number, previous, connector)


_SECURITY_ITEMS = ("SenderId", "EncryptionKey", "Signature", "SenderCert", "ProviderInfo")


def _read_security(r: Reader) -> SecurityHeader:
    """The SecurityHeader; "each item in SecurityData is 4-byte aligned"."""
    flags = r.u16("SecurityHeader.Flags", SECURITY)
    sizes = [r.u16(f"SecurityHeader.{n}Size", SECURITY) for n in _SECURITY_ITEMS[:3]]
    sizes += [r.u32(f"SecurityHeader.{n}Size", SECURITY) for n in _SECURITY_ITEMS[3:]]
    items = []
    for name, n in zip(_SECURITY_ITEMS, sizes, strict=True):
        items.append(r.raw(n, f"SecurityHeader.SecurityData.{name}", SECURITY))
        r.raw(-n % 4, f"SecurityHeader.SecurityData.{name}.Padding", SECURITY)
    return SecurityHeader(flags, *items)


def _read_properties(r: Reader) -> tuple[MessageProperties, bytes]:
    """The MessagePropertiesHeader; body offset = start + 56 + 2*LabelLength + ExtensionSize."""
    size_at = r.pos + 32
    if r.remaining >= PROPERTIES_FIXED:  # the fixed fields in one read (a short header: field by field)
        (flags, label_length, message_class, correlation, body_type, tag, message_size, allocation, privacy,
         hash_alg, encryption, extension_size) = _PROPERTIES.unpack_from(r.data, r.pos)
        r.pos += PROPERTIES_FIXED
    else:
        flags = r.u8("MessagePropertiesHeader.Flags", PROPERTIES)
        label_length = r.u8("MessagePropertiesHeader.LabelLength", PROPERTIES)
        message_class = r.u16("MessagePropertiesHeader.MessageClass", PROPERTIES)
        correlation = r.raw(20, "MessagePropertiesHeader.CorrelationID", PROPERTIES)
        body_type = r.u32("MessagePropertiesHeader.BodyType", PROPERTIES)
        tag = r.u32("MessagePropertiesHeader.ApplicationTag", PROPERTIES)
        message_size = r.u32("MessagePropertiesHeader.MessageSize", PROPERTIES)
        allocation = r.u32("MessagePropertiesHeader.AllocationBodySize", PROPERTIES)
        privacy = r.u32("MessagePropertiesHeader.PrivacyLevel", PROPERTIES)
        hash_alg = r.u32("MessagePropertiesHeader.HashAlgorithm", PROPERTIES)
        encryption = r.u32("MessagePropertiesHeader.EncryptionAlgorithm", PROPERTIES)
        extension_size = r.u32("MessagePropertiesHeader.ExtensionSize", PROPERTIES)
    label_at = r.pos
    raw_label = r.raw(2 * label_length, "MessagePropertiesHeader.Label", PROPERTIES)
    # LabelLength counts WCHARs including the terminating NUL, so a label ends with one
    if raw_label and raw_label[-2:] != b"\x00\x00":
        raise DecodeError("MessagePropertiesHeader.Label", label_at, PROPERTIES, "is not null-terminated")
    label = raw_label[:-2].decode("utf-16-le", "surrogatepass") if raw_label else None
    extension = r.raw(extension_size, "MessagePropertiesHeader.ExtensionData", PROPERTIES)
    if message_size > r.remaining:
        raise DecodeError(
            "MessagePropertiesHeader.MessageSize", size_at, PROPERTIES,
            f"{message_size} body bytes declared, {r.remaining} left in the packet",
        )
    body = r.raw(message_size, "MessagePropertiesHeader.MessageBody", PROPERTIES)
    props = _decoded(
        MessageProperties, flags=flags, message_class=message_class, correlation_id=correlation, body_type=body_type,
        application_tag=tag, allocation_body_size=allocation, privacy_level=privacy, hash_algorithm=hash_alg,
        encryption_algorithm=encryption, label=label, extension=extension,
    )
    return props, body


def _decoded(cls: type, **values: object) -> Any:
    """An instance of ``cls`` from every field's value as the decoder read it. The validators are not run
    again: each value is in range by construction (read from so many bytes), and the decoder has
    refused what the class's other checks refuse (queue types, IN and SH, a label's length); this is
    most of a capture's decoding time otherwise."""
    made = object.__new__(cls)
    for name, value in values.items():
        object.__setattr__(made, name, value)
    return made


def encode_user_message(msg: UserMessage) -> bytes:
    """The UserMessage packet bytes (with its SessionHeader after PacketSize, if any)."""
    p = msg.properties
    user = bytearray()
    user += msg.source_qm.bytes_le + msg.qm_address.bytes_le
    flags = (
        msg.user_flags
        | _queue_type(msg.destination) << UF_DQ_SHIFT
        | _queue_type(msg.admin) << UF_AQ_SHIFT
        | _queue_type(msg.response) << UF_RQ_SHIFT
        | UF_PROPERTIES
        | (UF_SECURITY if msg.security is not None else 0)
        | (UF_TRANSACTION if msg.transaction is not None else 0)
        | (UF_CONNECTOR if msg.connector_type is not None else 0)
    )
    user += struct.pack("<IIII", msg.time_to_be_received, msg.sent_time, msg.message_id, flags)
    for queue in (msg.destination, msg.admin, msg.response):
        if queue is not None and not isinstance(queue, SameAsAdmin):
            user += _pack_queue(queue, len(user))
    if msg.connector_type is not None:
        user += msg.connector_type.bytes_le
    out = bytearray(user)
    if (t := msg.transaction) is not None:
        out += struct.pack("<IQII", t.flags, t.tx_sequence_id, t.tx_sequence_number, t.previous_tx_sequence_number)
        out += t.connector_qm.bytes_le if t.connector_qm is not None else b""
    if (s := msg.security) is not None:
        items = (s.sender_id, s.encryption_key, s.signature, s.sender_cert, s.provider_info)
        out += struct.pack("<HHHHII", s.flags, *(len(i) for i in items))
        for item in items:
            out += item + bytes(-len(item) % 4)
    label = b"" if p.label is None else p.label.encode("utf-16-le", "surrogatepass") + b"\x00\x00"
    out += struct.pack(
        "<BBH", p.flags, len(label) // 2, p.message_class
    ) + p.correlation_id + struct.pack(
        "<IIIIIIII", p.body_type, p.application_tag, len(msg.body), p.allocation_body_size,
        p.privacy_level, p.hash_algorithm, p.encryption_algorithm, len(p.extension),
    )
    out += label + p.extension + msg.body
    out += bytes(-(BASE_HEADER_SIZE + len(out)) % 4) + msg.trailer
    base_flags = msg.base_flags | (BF_SESSION if msg.session_header is not None else 0)
    size = BASE_HEADER_SIZE + len(out)
    head = struct.pack("<BBH4sII", VERSION, 0, base_flags, SIGNATURE, size, msg.time_to_reach_queue)
    return head + bytes(out) + (msg.session_header or b"")


def build_user_message(destination: QueueFormat | str, body: bytes, **fields: object) -> bytes:
    """Encode a UserMessage to ``destination`` (a format name string means a direct one).

    ``AllocationBodySize`` defaults to the body length; other fields as in :class:`UserMessage`.
    """
    if isinstance(destination, str):
        destination = DirectQueue(strip_direct_prefix(destination))
    props = fields.pop("properties", None) or MessageProperties(allocation_body_size=len(body))
    label = fields.pop("label", None)
    if label is not None:
        props = attrs.evolve(props, label=label)
    return encode_user_message(UserMessage(destination, body, properties=props, **fields))


def encode_internal_packet(payload: bytes, *, flags: int = BF_INTERNAL, time_to_reach_queue: int = 0) -> bytes:
    """An internal (IN) packet carrying ``payload`` after its BaseHeader, for building streams."""
    size = BASE_HEADER_SIZE + len(payload)
    return struct.pack("<BBH4sII", VERSION, 0, flags | BF_INTERNAL, SIGNATURE, size, time_to_reach_queue) + payload
