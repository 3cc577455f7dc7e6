"""[MS-MQSD] section 2: the Directory Service Discovery packets and their wire codecs.

Covered: TopologyPacketHeader (2.2.1), TopologyClientRequest in its IP and IPX forms (2.2.2),
TopologyServerReply (2.2.3) with the DirectoryServiceServerArray ABNF. Every MUST that bytes
can break is checked: the header's Version, Type and Reserved, the 1..32 ranges of
IPXNetworkCount and ConnectedNetworkCount, the ConnectedNetworkMask population count,
DirectoryServiceServerSize against the bytes present, the ABNF of the server list, exact
lengths and trailing bytes. Not covered: transport (2.1) and which values a *given* exchange
must carry (CorrelationID == RequestID, size 0 for the local site); those are the client and
server rules of section 3.

A packet is one UDP or IPX datagram, so the datagram's length delimits it: a 52-byte request is
the IP form, a longer one the IPX form (clarification E-021). Messages do not keep the header:
its Version and Reserved are always 0 when encoded and its Type follows from the message class.

Leniency (``lenient=True``) applies exactly what the text lets a *receiver* accept, and nothing
else ("If an improperly formatted TopologyServerReply packet is received ... the protocol MUST
discard the received packet", 3.1.5.2):

* TopologyClientRequest header Version and Reserved are ignored: "MQSD servers MUST ignore this
  field." / "MUST be ignored by MQSD servers." (2.2.1)
* a request of 53..59 bytes is read as the IP form: "If the length of the data packet received
  is less than the length of a TopologyClientRequest packet, including the IPXNetworkCount
  field and at least one IPXNetworkNumberArray field entry, the ... IPXNetworkCount and
  IPXNetworkNumberArray fields are considered as not present and MUST be ignored." (3.2.5.1)
* TopologyServerReply header Version and Reserved are ignored: 2.2.1 binds only clients to zero
  them and 1.7 says the version "is not used" (clarification E-020).

>>> from mqspec.model.examples_mqsd import CLIENT_REQUEST
>>> str(decode(CLIENT_REQUEST).enterprise_id)
'e6eaba61-d1c6-11db-baac-0003ff4e2d22'
"""

from __future__ import annotations

import codecs
import enum
import re
import struct

import attrs

from mqspec.clauses import clause
from mqspec.wording import plural

from .errors import DecodeError, ModelError
from .guid import Guid

SECTION_HEADER = "MS-MQSD 2.2.1"
SECTION_REQUEST = "MS-MQSD 2.2.2"
SECTION_REPLY = "MS-MQSD 2.2.3"

HEADER_SIZE = 4
#: header + EnterpriseID + RequestID + SiteID: the whole IP form
REQUEST_IP_SIZE = HEADER_SIZE + 48
#: the IP form plus IPXNetworkCount and one entry: shorter packets have no IPX fields (3.2.5.1)
REQUEST_IPX_MIN_SIZE = REQUEST_IP_SIZE + 8
#: header + CorrelationID + ConnectedNetworkCount + ConnectedNetworkMask + DirectoryServiceServerSize
REPLY_FIXED_SIZE = HEADER_SIZE + 28
MAX_NETWORKS = 32

_HEADER = struct.Struct("<BBH")
_REQUEST = struct.Struct("<16s16s16s")
_REPLY = struct.Struct("<16sIII")
_U32 = struct.Struct("<I")


class PacketType(enum.IntEnum):
    """TopologyPacketHeader.Type (2.2.1)."""

    CLIENT_REQUEST = 0x01
    SERVER_REPLY = 0x02


# --------------------------------------------------------------------------- value types


def _is_guid(_inst: object, attr: attrs.Attribute, value: object) -> None:
    if not isinstance(value, Guid):
        raise ModelError(f"{attr.name} must be a Guid, not {value!r}")


def _uint(bits: int):
    def check(_inst: object, attr: attrs.Attribute, value: object) -> None:
        if type(value) is not int and not isinstance(value, enum.IntEnum):
            raise ModelError(f"{attr.name} must be an integer, not {value!r}")
        if not 0 <= value < (1 << bits):
            raise ModelError(f"{attr.name} = {value} does not fit in {bits} unsigned bits")

    return check


def _flag(_inst: object, attr: attrs.Attribute, value: object) -> None:
    if type(value) is not bool:
        raise ModelError(f"{attr.name} must be a bool, not {value!r}")


@attrs.frozen
class TopologyPacketHeader:
    """The 4 bytes in front of every packet (2.2.1); any Version/Reserved value is representable."""

    version: int = attrs.field(validator=_uint(8))
    type: int = attrs.field(validator=_uint(8))
    reserved: int = attrs.field(validator=_uint(16))


_SURROGATE = re.compile("[\ud800-\udfff]")


def _name(_inst: object, _attr: attrs.Attribute, value: object) -> None:
    if type(value) is not str or not value:
        raise ModelError(f"a directory server name is a non-empty str, not {value!r}")
    if "," in value or "\x00" in value:
        # "the comma (value 0x002C) or null (value 0x0000) character MUST NOT be allowed as
        # part of the name" (2.2.3)
        raise ModelError(f"directory server name {value!r} contains a comma or a NUL")
    # a str holding a surrogate pair as two chars would decode back as one char: refuse it so
    # that decode(encode(x)) == x
    if _SURROGATE.search(value) and value.encode("utf-16-le", "surrogatepass").decode(
        "utf-16-le", "surrogatepass"
    ) != value:
        raise ModelError(f"directory server name {value!r} splits a surrogate pair into two chars")


@attrs.frozen
class DirectoryServiceServer:
    """One Entry of the DirectoryServiceServerArray: ``IP IPX 1*NameChar`` (2.2.3)."""

    name: str = attrs.field(validator=_name)
    ip: bool = attrs.field(default=True, validator=_flag)
    ipx: bool = attrs.field(default=False, validator=_flag)


def _ipx_numbers(_inst: object, _attr: attrs.Attribute, value: tuple[int, ...]) -> None:
    # "When the field is present, the value MUST be in the range 1 to 32, inclusive." (2.2.2);
    # an empty tuple is the IP form, where the fields "MUST NOT be present"
    if len(value) > MAX_NETWORKS:
        raise ModelError(f"{len(value)} IPX network numbers; IPXNetworkCount MUST be 1..32")
    for v in value:
        if type(v) is not int or not 0 <= v <= 0xFFFFFFFF:
            raise ModelError(f"IPX network number {v!r} is not a 32-bit unsigned integer")


@attrs.frozen
class TopologyClientRequest:
    """A client's broadcast (2.2.2); ``ipx_network_numbers == ()`` is the IP form."""

    enterprise_id: Guid = attrs.field(validator=_is_guid)
    request_id: Guid = attrs.field(validator=_is_guid)
    site_id: Guid = attrs.field(validator=_is_guid)
    ipx_network_numbers: tuple[int, ...] = attrs.field(
        default=(), converter=tuple, validator=_ipx_numbers
    )

    @property
    def is_ipx(self) -> bool:
        """True for the IPX form (IPXNetworkCount and IPXNetworkNumberArray present)."""
        return bool(self.ipx_network_numbers)


def _networks(_inst: object, _attr: attrs.Attribute, value: tuple[Guid, ...]) -> None:
    # "The value MUST be in the range 1 to 32, inclusive." (2.2.3 ConnectedNetworkCount)
    if not 1 <= len(value) <= MAX_NETWORKS:
        raise ModelError(f"{len(value)} connected networks; ConnectedNetworkCount MUST be 1..32")
    for g in value:
        if not isinstance(g, Guid):
            raise ModelError(f"a ConnectedNetworkID must be a Guid, not {g!r}")


def _servers(_inst: object, _attr: attrs.Attribute, value: tuple[DirectoryServiceServer, ...]) -> None:
    for s in value:
        if not isinstance(s, DirectoryServiceServer):
            raise ModelError(f"a directory server entry must be a DirectoryServiceServer, not {s!r}")


@attrs.frozen
class TopologyServerReply:
    """A server's answer (2.2.3).

    ``connected_network_mask`` is 0 for a reply sent over IP and has exactly
    ``len(connected_networks)`` bits set over IPX. ``responding_site_id`` and ``servers`` are
    both absent (``None`` and ``()``, DirectoryServiceServerSize 0: the server is in the
    client's site) or both present.
    """

    correlation_id: Guid = attrs.field(validator=_is_guid)
    connected_networks: tuple[Guid, ...] = attrs.field(converter=tuple, validator=_networks)
    connected_network_mask: int = attrs.field(default=0, validator=_uint(32))
    responding_site_id: Guid | None = attrs.field(
        default=None, validator=attrs.validators.optional(_is_guid)
    )
    servers: tuple[DirectoryServiceServer, ...] = attrs.field(
        default=(), converter=tuple, validator=_servers
    )

    def __attrs_post_init__(self) -> None:
        mask, count = self.connected_network_mask, len(self.connected_networks)
        if mask and mask.bit_count() != count:
            raise ModelError(
                f"ConnectedNetworkMask {mask:#010x} has {mask.bit_count()} bits set; over IPX it "
                f"MUST equal ConnectedNetworkCount ({count}), over IP it MUST be 0"
            )
        if (self.responding_site_id is None) != (not self.servers):
            raise ModelError(
                "RespondingSiteID and DirectoryServiceServerArray are present together "
                "(DirectoryServiceServerSize != 0) or absent together (size 0)"
            )

    @property
    def directory_service_server_size(self) -> int:
        """DirectoryServiceServerSize: the bytes of the array, EndList included (0 if absent)."""
        return len(encode_server_array(self.servers)) if self.servers else 0


#: structure name -> model type, for the JSON form (``mqspec encode``)
MESSAGE_TYPES: dict[str, type] = {
    "TopologyClientRequest": TopologyClientRequest,
    "TopologyServerReply": TopologyServerReply,
}


# --------------------------------------------------------------------------- decoding

# The decoder checks every rule the validators above check (and more) before it builds a value,
# so it builds instances directly instead of running the validators a second time: this halves
# the cost of a decode. test_decoded_values_pass_the_model_validators keeps the two in step.
_new = object.__new__
_set = object.__setattr__
_utf16_decode = codecs.utf_16_le_decode


# the slot descriptors' setters: the cheapest way to fill a frozen slotted instance
_SET_GUID = Guid.__dict__["bytes_le"].__set__
_SET_NAME = DirectoryServiceServer.__dict__["name"].__set__
_SET_IP = DirectoryServiceServer.__dict__["ip"].__set__
_SET_IPX = DirectoryServiceServer.__dict__["ipx"].__set__


def _guid(raw: bytes) -> Guid:
    g = _new(Guid)
    _SET_GUID(g, raw)  # 16 bytes: sliced or unpacked as "16s" by the caller
    return g


def _request(enterprise: Guid, request: Guid, site: Guid, ipx: tuple[int, ...]) -> TopologyClientRequest:
    m = _new(TopologyClientRequest)
    _set(m, "enterprise_id", enterprise)
    _set(m, "request_id", request)
    _set(m, "site_id", site)
    _set(m, "ipx_network_numbers", ipx)
    return m


def _reply(
    correlation: Guid, networks: tuple[Guid, ...], mask: int, site: Guid | None,
    servers: tuple[DirectoryServiceServer, ...],
) -> TopologyServerReply:
    m = _new(TopologyServerReply)
    _set(m, "correlation_id", correlation)
    _set(m, "connected_networks", networks)
    _set(m, "connected_network_mask", mask)
    _set(m, "responding_site_id", site)
    _set(m, "servers", servers)
    return m


def _truncated(data: bytes, layout: tuple[tuple[str, int, int], ...], section: str) -> DecodeError:
    """The error for a buffer that ends inside the fixed ``layout`` (field, offset, size)."""
    n = len(data)
    for field, offset, size in layout:
        if offset + size > n:
            left = max(0, n - offset)
            return DecodeError(field, offset, section, f"needs {plural(size, 'byte')}, {left} left")
    raise AssertionError("unreachable: the buffer holds the whole layout")  # pragma: no cover


_HEADER_LAYOUT = (
    ("TopologyPacketHeader.Version", 0, 1),
    ("TopologyPacketHeader.Type", 1, 1),
    ("TopologyPacketHeader.Reserved", 2, 2),
)


def _check_header(data: bytes, lenient: bool) -> tuple[int, int, int]:
    """Version, Type, Reserved of the header at the start of ``data``, checked (see read_header)."""
    if len(data) < HEADER_SIZE:
        raise _truncated(data, _HEADER_LAYOUT, SECTION_HEADER)
    version, ptype, reserved = _HEADER.unpack_from(data, 0)
    if ptype != 0x01 and ptype != 0x02:
        raise DecodeError(
            "TopologyPacketHeader.Type", 1, SECTION_HEADER,
            f"type {ptype:#04x} is neither 0x01 (TopologyClientRequest) nor 0x02 (TopologyServerReply)",
        )
    if not lenient:
        if version != 0:
            raise DecodeError(
                "TopologyPacketHeader.Version", 0, SECTION_HEADER, f"version {version:#04x} MUST be 0"
            )
        if reserved != 0:
            raise DecodeError(
                "TopologyPacketHeader.Reserved", 2, SECTION_HEADER, f"reserved {reserved:#06x} MUST be 0x0000"
            )
    return version, ptype, reserved


@clause("MS-MQSD", "2.2.1", "TopologyPacketHeader")
def read_header(data: bytes, *, lenient: bool = False) -> TopologyPacketHeader:
    """Read the header at the start of ``data`` (the packet body may follow).

    "MQSD clients MUST set all bit positions to 0." (Version) "The value 0x01 MUST be used to
    specify a TopologyClientRequest ... The value 0x02 MUST be used to specify a
    TopologyServerReply" (Type) "It MUST be set to 0x0000 by MQSD clients" (Reserved).
    ``lenient`` ignores Version and Reserved, as an MQSD server MUST (E-020); Type is always
    checked because it says what follows.
    """
    version, ptype, reserved = _check_header(data, lenient)
    return TopologyPacketHeader(version, PacketType(ptype), reserved)


def decode_header(data: bytes, *, lenient: bool = False) -> TopologyPacketHeader:
    """Decode exactly one 4-byte TopologyPacketHeader."""
    data = bytes(data)
    header = read_header(data, lenient=lenient)
    if len(data) != HEADER_SIZE:
        raise DecodeError(
            "TopologyPacketHeader", HEADER_SIZE, SECTION_HEADER,
            f"{len(data) - HEADER_SIZE} trailing bytes after the structure",
        )
    return header


def _expect(data: bytes, want: PacketType, lenient: bool) -> None:
    """Check the header of a ``want`` packet; errors name the message they occur in."""
    try:
        ptype = _check_header(data, lenient)[1]
    except DecodeError as e:
        raise e.within(_NAMES[want]) from None
    if ptype != want:
        raise DecodeError(
            "TopologyPacketHeader.Type", 1, SECTION_HEADER,
            f"type {ptype:#04x} is a {_NAMES[PacketType(ptype)]}, not a {_NAMES[want]}",
            (_NAMES[want],),
        )


_NAMES = {
    PacketType.CLIENT_REQUEST: "TopologyClientRequest",
    PacketType.SERVER_REPLY: "TopologyServerReply",
}

_REQUEST_LAYOUT = (
    ("TopologyClientRequest.EnterpriseID", 4, 16),
    ("TopologyClientRequest.RequestID", 20, 16),
    ("TopologyClientRequest.SiteID", 36, 16),
    ("TopologyClientRequest.IPXNetworkCount", 52, 4),
)


@clause("MS-MQSD", "2.2.2", "TopologyClientRequest")
def decode_client_request(data: bytes, *, lenient: bool = False) -> TopologyClientRequest:
    """Decode a whole TopologyClientRequest datagram.

    "When IP networking is being used, this field MUST NOT be present. When the field is
    present, the value MUST be in the range 1 to 32, inclusive." (IPXNetworkCount) "When the
    array is present, the number of entries is specified by the IPXNetworkCount field."
    (IPXNetworkNumberArray). The packet is 52 bytes (IP) or 56 + 4 * IPXNetworkCount (IPX).
    ``lenient`` ignores the header's Version and Reserved and reads 53..59 bytes as the IP form
    (3.2.5.1, E-021).
    """
    if type(data) is not bytes:
        data = bytes(data)
    n = len(data)
    if data[:HEADER_SIZE] != _REQUEST_HEADER:  # the canonical header needs no further look
        _expect(data, PacketType.CLIENT_REQUEST, lenient)
    if n < REQUEST_IP_SIZE:
        raise _truncated(data, _REQUEST_LAYOUT, SECTION_REQUEST)
    enterprise, request, site = _REQUEST.unpack_from(data, HEADER_SIZE)
    if n == REQUEST_IP_SIZE or (lenient and n < REQUEST_IPX_MIN_SIZE):
        # lenient: "considered as not present and MUST be ignored" (3.2.5.1)
        return _request(_guid(enterprise), _guid(request), _guid(site), ())
    if n < REQUEST_IP_SIZE + 4:
        raise _truncated(data, _REQUEST_LAYOUT, SECTION_REQUEST)
    count = _U32.unpack_from(data, REQUEST_IP_SIZE)[0]
    if not 1 <= count <= MAX_NETWORKS:
        raise DecodeError(
            "TopologyClientRequest.IPXNetworkCount", REQUEST_IP_SIZE, SECTION_REQUEST,
            f"IPXNetworkCount = {count} MUST be in the range 1 to 32",
        )
    start = REQUEST_IP_SIZE + 4
    fits = (n - start) // 4
    if count > fits:
        raise DecodeError(
            "TopologyClientRequest.IPXNetworkCount", REQUEST_IP_SIZE, SECTION_REQUEST,
            f"{count} IPX network numbers declared, bytes for {fits}",
        )
    end = start + 4 * count
    if end != n:
        raise DecodeError(
            "TopologyClientRequest", end, SECTION_REQUEST, f"{n - end} trailing bytes after the structure"
        )
    numbers = struct.unpack_from(f"<{count}I", data, start)
    return _request(_guid(enterprise), _guid(request), _guid(site), numbers)


_REPLY_LAYOUT = (
    ("TopologyServerReply.CorrelationID", 4, 16),
    ("TopologyServerReply.ConnectedNetworkCount", 20, 4),
    ("TopologyServerReply.ConnectedNetworkMask", 24, 4),
    ("TopologyServerReply.DirectoryServiceServerSize", 28, 4),
)


@clause("MS-MQSD", "2.2.3", "TopologyServerReply")
def decode_server_reply(data: bytes, *, lenient: bool = False) -> TopologyServerReply:
    """Decode a whole TopologyServerReply datagram.

    "The value MUST be in the range 1 to 32, inclusive." (ConnectedNetworkCount) "This entire
    field MUST be set to all zeros if the networking protocol being used is IP. When the
    networking protocol used is IPX, the count of 1-valued bit positions MUST equal the value
    contained in the ConnectedNetworkCount field." (ConnectedNetworkMask) "The value of this
    field MUST specify the number of bytes occupied by the DirectoryServiceServerArray ...
    [if] zero ... the RespondingSiteID and DirectoryServiceServerArray fields MUST NOT be
    present." (DirectoryServiceServerSize; E-024: present iff the size is not zero)
    ``lenient`` ignores only the header's Version and Reserved (E-020).
    """
    if type(data) is not bytes:
        data = bytes(data)
    n = len(data)
    if data[:HEADER_SIZE] != _REPLY_HEADER:  # the canonical header needs no further look
        _expect(data, PacketType.SERVER_REPLY, lenient)
    if n < REPLY_FIXED_SIZE:
        raise _truncated(data, _REPLY_LAYOUT, SECTION_REPLY)
    correlation, count, mask, size = _REPLY.unpack_from(data, HEADER_SIZE)
    if not 1 <= count <= MAX_NETWORKS:
        raise DecodeError(
            "TopologyServerReply.ConnectedNetworkCount", 20, SECTION_REPLY,
            f"ConnectedNetworkCount = {count} MUST be in the range 1 to 32",
        )
    # mask 0 is an IP reply; any other mask is an IPX reply (E-022)
    if mask and mask.bit_count() != count:
        raise DecodeError(
            "TopologyServerReply.ConnectedNetworkMask", 24, SECTION_REPLY,
            f"mask {mask:#010x} has {mask.bit_count()} bits set; MUST be 0 (IP) or have "
            f"ConnectedNetworkCount = {count} bits set (IPX)",
        )
    if size & 1:
        raise DecodeError(
            "TopologyServerReply.DirectoryServiceServerSize", 28, SECTION_REPLY,
            f"{plural(size, 'byte')} is not a whole number of Unicode (2-byte) characters",
        )
    pos = REPLY_FIXED_SIZE
    fits = (n - pos) // 16
    if count > fits:
        raise DecodeError(
            "TopologyServerReply.ConnectedNetworkCount", 20, SECTION_REPLY,
            f"{count} connected network IDs declared, bytes for {fits}",
        )
    networks = tuple([_guid(data[p : p + 16]) for p in range(pos, pos + 16 * count, 16)])
    pos += 16 * count
    if size == 0:
        if pos != n:
            raise DecodeError(
                "TopologyServerReply", pos, SECTION_REPLY,
                f"{n - pos} trailing bytes after the structure (DirectoryServiceServerSize is 0, so "
                "RespondingSiteID and DirectoryServiceServerArray MUST NOT be present)",
            )
        return _reply(_guid(correlation), networks, mask, None, ())
    if n - pos < 16:
        raise DecodeError(
            "TopologyServerReply.RespondingSiteID", pos, SECTION_REPLY,
            f"needs 16 bytes, {n - pos} left (DirectoryServiceServerSize is {size}, not 0)",
        )
    site = _guid(data[pos : pos + 16])
    pos += 16
    if n - pos < size:
        raise DecodeError(
            "TopologyServerReply.DirectoryServiceServerSize", 28, SECTION_REPLY,
            f"{plural(size, 'byte')} of DirectoryServiceServerArray declared, {n - pos} left",
        )
    if n - pos > size:
        if _array_ends_at(data, pos, n) and not _array_ends_at(data, pos, pos + size):
            # the array runs on to the datagram's end (its EndList is there), past the size: the size
            # does not count the array's bytes (a count of characters, say)
            raise DecodeError(
                "TopologyServerReply.DirectoryServiceServerSize", 28, SECTION_REPLY,
                f"{plural(size, 'byte')} declared, but the DirectoryServiceServerArray runs to the end of the "
                f"datagram ({plural(n - pos, 'byte')}, EndList last): the value MUST specify the number of bytes "
                "occupied by the DirectoryServiceServerArray",
            )
        raise DecodeError(
            "TopologyServerReply", pos + size, SECTION_REPLY,
            f"{n - pos - size} trailing bytes after the structure",
        )
    try:
        servers = decode_server_array(data[pos:], base=pos)
    except DecodeError as e:
        raise e.within("TopologyServerReply") from None
    return _reply(_guid(correlation), networks, mask, site, servers)


_ARRAY = "DirectoryServiceServerArray"


def _array_ends_at(data: bytes, start: int, end: int) -> bool:
    """Whether ``data[start:end]`` is a whole number of characters ending with EndList (0x0000)."""
    return end - start >= 2 and not (end - start) & 1 and data[end - 2:end] == b"\x00\x00"


def decode_server_array(data: bytes, *, base: int = 0) -> tuple[DirectoryServiceServer, ...]:
    """Parse exactly the DirectoryServiceServerSize bytes of a DirectoryServiceServerArray.

    ``DirectoryServiceServerArray = Entry 0*ContinuedEntry Endlist``, ``Entry = IP IPX
    1*NameChar``, ``ContinuedEntry = Delim Entry``: IP and IPX are "1" or "0", a NameChar is any
    UTF-16LE code unit but 0x0000 and 0x002C (E-025), Delim is "," and EndList 0x0000. Errors
    give offsets from ``base`` (where the array starts in the packet).
    """
    if type(data) is not bytes:
        data = bytes(data)
    if len(data) & 1:
        raise DecodeError(
            f"{_ARRAY}.EndList", base + len(data) - 1, SECTION_REPLY,
            "the array ends inside a Unicode (2-byte) character",
        )
    try:
        text = _utf16_decode(data, "surrogatepass", True)[0]
    except UnicodeDecodeError as exc:  # pragma: no cover - even-length UTF-16 always decodes so
        raise DecodeError(_ARRAY, base + exc.start, SECTION_REPLY, str(exc)) from None
    body, endlist, rest = text.partition("\x00")
    if not endlist:
        raise DecodeError(
            f"{_ARRAY}.EndList", base + len(data), SECTION_REPLY,
            "the list does not end with EndList (0x0000) within DirectoryServiceServerSize",
        )
    if rest:
        at = base + _units(body) * 2 + 2
        raise DecodeError(
            f"{_ARRAY}.EndList", at, SECTION_REPLY,
            f"{plural(len(data) - (at - base), 'byte')} follow EndList within DirectoryServiceServerSize",
        )
    servers: list[DirectoryServiceServer] = []
    append = servers.append
    new, set_name, set_ip, set_ipx = _new, _SET_NAME, _SET_IP, _SET_IPX
    for entry in body.split(","):
        # Entry = IP IPX 1*NameChar; the split already excludes commas and NULs from names
        flags = _FLAG_PAIRS.get(entry[:2])
        if flags is None or len(entry) < 3:
            raise _bad_entry(body, len(servers), base)
        server = new(DirectoryServiceServer)
        set_name(server, entry[2:])
        set_ip(server, flags[0])
        set_ipx(server, flags[1])
        append(server)
    return tuple(servers)


_FLAGS = ("0", "1")
#: the IP and IPX characters of an entry -> (ip, ipx)
_FLAG_PAIRS = {ip + ipx: (ip == "1", ipx == "1") for ip in _FLAGS for ipx in _FLAGS}


def _units(text: str) -> int:
    """The number of UTF-16 code units in ``text`` (a surrogate pair is one char, two units)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _bad_entry(body: str, index: int, base: int) -> DecodeError:
    """Say which part of entry ``index`` breaks ``Entry = IP IPX 1*NameChar``."""
    entries = body.split(",")
    at = base + 2 * sum(_units(e) + 1 for e in entries[:index])
    entry = entries[index]
    for k, part in enumerate(("IP", "IPX")):
        c = entry[k : k + 1]
        if c not in _FLAGS:
            what = f"U+{ord(c):04X}" if c else "the end of the entry (Delim or EndList)"
            return DecodeError(
                f"Entry.{part}", at + 2 * k, SECTION_REPLY,
                f"{part} MUST be Unicode '1' (0x0031) or '0' (0x0030), found {what}",
                (f"{_ARRAY}[{index}]",),
            )
    return DecodeError(
        "Entry.NameChar", at + 4, SECTION_REPLY,
        "an entry MUST name its server (1*NameChar), found an empty name",
        (f"{_ARRAY}[{index}]",),
    )


def decode(data: bytes, *, lenient: bool = False) -> TopologyClientRequest | TopologyServerReply:
    """Decode one MQSD datagram, choosing the message by TopologyPacketHeader.Type.

    ``lenient`` applies the receiver-side leniency listed in the module docstring.
    """
    if type(data) is not bytes:
        data = bytes(data)
    ptype = data[1] if len(data) > 1 else None
    if ptype == PacketType.CLIENT_REQUEST:
        return decode_client_request(data, lenient=lenient)
    if ptype == PacketType.SERVER_REPLY:
        return decode_server_reply(data, lenient=lenient)
    _check_header(data, lenient)  # raises: too short for a Type, or an unknown Type
    raise AssertionError("unreachable")  # pragma: no cover


# --------------------------------------------------------------------------- encoding


def encode_header(ptype: PacketType | int, *, version: int = 0, reserved: int = 0) -> bytes:
    """The 4-byte header; non-zero Version/Reserved are for building test packets only."""
    header = TopologyPacketHeader(version, ptype, reserved)
    return _HEADER.pack(header.version, header.type, header.reserved)


_REQUEST_HEADER = encode_header(PacketType.CLIENT_REQUEST)
_REPLY_HEADER = encode_header(PacketType.SERVER_REPLY)


def encode_client_request(msg: TopologyClientRequest) -> bytes:
    """The IP form (52 bytes) or the IPX form (56 + 4 * count bytes) of ``msg``."""
    ids = (msg.enterprise_id, msg.request_id, msg.site_id)
    out = _REQUEST_HEADER + b"".join(g.bytes_le for g in ids)
    nums = msg.ipx_network_numbers
    if nums:
        out += struct.pack(f"<I{len(nums)}I", len(nums), *nums)
    return out


def encode_server_array(servers: tuple[DirectoryServiceServer, ...]) -> bytes:
    """``Entry 0*ContinuedEntry EndList`` in UTF-16LE."""
    if not servers:
        raise ModelError("a DirectoryServiceServerArray holds at least one Entry")
    text = ",".join(f"{'1' if s.ip else '0'}{'1' if s.ipx else '0'}{s.name}" for s in servers)
    return (text + "\x00").encode("utf-16-le", "surrogatepass")


def encode_server_reply(msg: TopologyServerReply) -> bytes:
    """Fixed fields, the ConnectedNetworkArray, then RespondingSiteID and the array if present."""
    array = encode_server_array(msg.servers) if msg.servers else b""
    if len(array) > 0xFFFFFFFF:
        raise ModelError(f"DirectoryServiceServerArray of {len(array)} bytes overflows its 32-bit size")
    parts = [
        _REPLY_HEADER,
        _REPLY.pack(
            msg.correlation_id.bytes_le, len(msg.connected_networks), msg.connected_network_mask, len(array)
        ),
        *(g.bytes_le for g in msg.connected_networks),
    ]
    if array:
        parts += (msg.responding_site_id.bytes_le, array)  # type: ignore[union-attr]
    return b"".join(parts)


def encode(msg: TopologyClientRequest | TopologyServerReply) -> bytes:
    """Encode either message."""
    if isinstance(msg, TopologyClientRequest):
        return encode_client_request(msg)
    if isinstance(msg, TopologyServerReply):
        return encode_server_reply(msg)
    raise ModelError(f"not an MQSD message: {type(msg).__name__}")
