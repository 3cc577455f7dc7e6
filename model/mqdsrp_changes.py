"""MC-MQDSRP 2.2.3, 2.2.4, 2.2.5.4: the structures carrying directory changes and partition state.

``PARTITION_SEQ_NUMBERS`` (2.2.3), ``DirectoryChange`` (2.2.4) and ``SeqNumberHeader`` (2.2.5.4)
are nested in the replication messages of :mod:`mqspec.model.mqdsrp`, which re-exports every
public name here. Integers are little-endian (2.2); a SEQUENCE_NUMBER is a UCHAR[8] with byte 1
most significant, so its integer value reads big-endian (clarification E-018).

A DirectoryChange's PropertyValue array is the flat PROPVALUE encoding of [MS-MQCN] 2.2.3, each
value typed by its PROPID, not a tagged PROPVARIANT (clarification E-010).

>>> change = DirectoryChange(Command.DELETE, Guid.NULL, SequenceNumber(1), SequenceNumber(2),
...                          SequenceNumber(0), (), guid_identifier=Guid.NULL)
>>> wire = encode_directory_change(change)
>>> len(wire), wire[:2].hex()
(59, '0201')
>>> decode_directory_change(Reader(wire)) == change
True
"""

from __future__ import annotations

import codecs
import enum
import functools
import struct

import attrs

from mqspec import memos
from mqspec.clauses import clause

from .errors import DecodeError, ModelError
from .guid import Guid
from .propids import PROPID_BY_VALUE, PropertyDef, VarType
from .propvalue import Property, decode_value, encode_value
from .seqnum import SequenceNumber
from .wire import Reader, pack_u16, pack_wstr

S_PSN = "MC-MQDSRP 2.2.3"
S_CHANGE = "MC-MQDSRP 2.2.4"
S_SEQHDR = "MC-MQDSRP 2.2.5.4"

#: PartitionID (GUID bytes) then two SEQUENCE_NUMBERs; the GUID is a byte string, so the
#: big-endian format only affects the sequence numbers, which 2.2.2 orders byte 1 first
_PSN = struct.Struct(">16sQQ")
#: DirectoryChange from PartitionID to NumberOfProperties: GUID, three SEQUENCE_NUMBERs, a UCHAR
_CHANGE_FIXED = struct.Struct(">16sQQQB")
#: the fewest bytes one DirectoryChange can take: Command, UseGuid, an empty PathName (0x0000),
#: PartitionID, three SEQUENCE_NUMBERs and NumberOfProperties
DIRECTORY_CHANGE_MIN_SIZE = 1 + 1 + 2 + _CHANGE_FIXED.size
#: the fewest bytes one property takes: a 4-byte PROPID and a value of at least one byte (VT_UI1)
PROPERTY_MIN_SIZE = 5
MAX_PROPERTIES = 255  # NumberOfProperties is a UCHAR

# --- constructors for decoded values -------------------------------------------------------
# A decoder builds thousands of GUIDs, sequence numbers and properties per message, and their
# attrs validators would re-check what the bounded reads already guarantee (16 bytes for a
# GUID, 0..2**64-1 from a ">Q", a value of the PROPID's VARTYPE from its flat reader). Decoded
# values therefore get their slots set directly; every other caller, encode included, goes
# through the validating __init__. The round-trip tests compare the two paths for equality.
_new = object.__new__


def unchecked_constructor(cls: type):
    """A positional constructor for the frozen, slotted attrs class ``cls`` that skips its
    validators and converters: only for values a decoder has already checked.

    The function is generated (as attrs generates ``__init__`` and collections.namedtuple its
    ``__new__``) so that it costs one slot store per field and no loop.
    """
    names = [a.name for a in attrs.fields(cls)]
    stores = "".join(f"    _set_{n}(obj, {n})\n" for n in names)
    name = f"unchecked_{cls.__name__}"
    source = f"def {name}({', '.join(names)}):\n    obj = _new(cls)\n{stores}    return obj\n"
    namespace = {"_new": _new, "cls": cls, **{f"_set_{n}": cls.__dict__[n].__set__ for n in names}}
    exec(source, namespace)  # noqa: S102 - source built from the class's own field names
    return namespace[name]


# the C codec without bytes.decode's codec lookup; called with final=True, or a trailing lone high
# surrogate would be held back as the start of an incomplete pair and silently dropped
_utf16_decode = codecs.utf_16_le_decode


def _wstr_end(data: bytes, pos: int, end: int) -> int:
    """Where the 0x0000 terminator of the WCHAR buffer at ``pos`` starts, or -1."""
    i = data.find(b"\x00\x00", pos, end)
    while i >= 0 and (i - pos) & 1:
        # the pair straddles two WCHARs, as after any ASCII character: the WCHAR at i - 1 is
        # not 0x0000 (the pair would have been found there), so the next WCHAR, at i + 1, is
        # the terminator exactly when byte i + 2 is 0x00
        if i + 2 < end and data[i + 2] == 0:
            return i + 1
        i = data.find(b"\x00\x00", i + 1, end)
    return i


def read_wstr(r: Reader, field: str, section: str) -> str:
    """A null-terminated WCHAR buffer, as :meth:`Reader.wstr` reads it, a little faster."""
    pos = r.pos
    z = _wstr_end(r.data, pos, r.end)
    if z < 0:
        return r.wstr(field, section)  # raises the error naming the missing terminator
    r.pos = z + 2
    return _utf16_decode(r.data[pos:z], "surrogatepass", True)[0]


_guid = unchecked_constructor(Guid)
_seq = unchecked_constructor(SequenceNumber)


class Command(enum.IntEnum):
    """DirectoryChange.Command (2.2.4): "It MUST be one of the following values"."""

    CREATE = 0
    UPDATE = 1
    DELETE = 2
    SYNC = 3


_COMMANDS = tuple(Command)


# --- validators shared with mqspec.model.mqdsrp: a model value that could not go on the wire is
# a ModelError at construction, so encode never meets it

def _check_guid(inst: object, attr: attrs.Attribute, value: object) -> None:
    if type(value) is not Guid:
        raise ModelError(f"{type(inst).__name__}.{attr.name} must be a Guid, not {value!r}")


def _check_opt_guid(inst: object, attr: attrs.Attribute, value: object) -> None:
    if value is not None and type(value) is not Guid:
        raise ModelError(f"{type(inst).__name__}.{attr.name} must be a Guid or None, not {value!r}")


def _check_seqnum(inst: object, attr: attrs.Attribute, value: object) -> None:
    if type(value) is not SequenceNumber:
        raise ModelError(
            f"{type(inst).__name__}.{attr.name} must be a SequenceNumber, not {value!r}"
        )


def _check_wstr(inst: object, attr: attrs.Attribute, value: object) -> None:
    if type(value) is not str or "\x00" in value:
        raise ModelError(
            f"{type(inst).__name__}.{attr.name} must be a str without NUL (a null-terminated"
            f" WCHAR buffer), not {value!r}"
        )


def _check_opt_wstr(inst: object, attr: attrs.Attribute, value: object) -> None:
    if value is not None:
        _check_wstr(inst, attr, value)


def _check_bool(inst: object, attr: attrs.Attribute, value: object) -> None:
    if type(value) is not bool:
        raise ModelError(f"{type(inst).__name__}.{attr.name} must be a bool, not {value!r}")


def _check_u32(inst: object, attr: attrs.Attribute, value: object) -> None:
    if type(value) is not int or not 0 <= value <= 0xFFFFFFFF:
        raise ModelError(
            f"{type(inst).__name__}.{attr.name} must be a 32-bit unsigned integer, not {value!r}"
        )


def _check_instance(cls: type):
    def check(inst: object, attr: attrs.Attribute, value: object) -> None:
        if type(value) is not cls:
            raise ModelError(
                f"{type(inst).__name__}.{attr.name} must be a {cls.__name__}, not {value!r}"
            )

    return check


def _check_changes(bits: int):
    """Validator of a message's DirectoryChange tuple, whose Count field has ``bits`` bits."""

    def check(inst: object, _attr: attrs.Attribute, value: tuple) -> None:
        if len(value) >= 1 << bits:
            raise ModelError(
                f"{type(inst).__name__}: {len(value)} changes do not fit a {bits}-bit Count"
            )
        for c in value:
            if type(c) is not DirectoryChange:
                raise ModelError(f"{type(inst).__name__}.changes holds DirectoryChange, not {c!r}")

    return check


def _to_tuple(value: object) -> tuple:
    return value if type(value) is tuple else tuple(value)  # type: ignore[arg-type]


def enum_converter(cls: type[enum.IntEnum]):
    """An attrs converter taking a member of ``cls`` or its integer value (JSON, scenarios)."""

    def convert(value: object) -> enum.IntEnum:
        if type(value) is cls:
            return value  # type: ignore[return-value]
        try:
            return cls(value)
        except ValueError as exc:
            raise ModelError(f"{value!r} is not a {cls.__name__}") from exc

    return convert


# --- 2.2.3 PARTITION_SEQ_NUMBERS -----------------------------------------------------------

@attrs.frozen
class PartitionSeqNumbers:
    """PARTITION_SEQ_NUMBERS (2.2.3): a partition's last and purged sequence numbers (32 bytes)."""

    partition_id: Guid = attrs.field(validator=_check_guid)
    last_seq_number: SequenceNumber = attrs.field(validator=_check_seqnum)
    purged_seq_number: SequenceNumber = attrs.field(validator=_check_seqnum)


_partition_seq_numbers = unchecked_constructor(PartitionSeqNumbers)


@clause("MC-MQDSRP", "2.2.3", "PARTITION_SEQ_NUMBERS")
def decode_partition_seq_numbers(r: Reader) -> PartitionSeqNumbers:
    """PartitionID (16 bytes), LastSeqNumber (8 bytes), PurgedSeqNumber (8 bytes)."""
    if r.end - r.pos < _PSN.size:
        # short buffer: read field by field so the error names the field that runs out
        r.guid("PARTITION_SEQ_NUMBERS.PartitionID", S_PSN)
        r.seqnum("PARTITION_SEQ_NUMBERS.LastSeqNumber", S_PSN)
        r.seqnum("PARTITION_SEQ_NUMBERS.PurgedSeqNumber", S_PSN)
    pid_b, last_v, purged_v = _PSN.unpack_from(r.data, r.pos)
    r.pos += _PSN.size
    return _partition_seq_numbers(_guid(pid_b), _seq(last_v), _seq(purged_v))


def encode_partition_seq_numbers(p: PartitionSeqNumbers) -> bytes:
    return _PSN.pack(p.partition_id.bytes_le, p.last_seq_number.value, p.purged_seq_number.value)


# --- 2.2.4 DirectoryChange -----------------------------------------------------------------

def _check_properties(inst: object, _attr: attrs.Attribute, value: tuple) -> None:
    if len(value) > MAX_PROPERTIES:
        raise ModelError(
            f"a DirectoryChange carries at most {MAX_PROPERTIES} properties (NumberOfProperties"
            f" is a UCHAR), not {len(value)}"
        )
    for p in value:
        if type(p) is not Property:
            raise ModelError(f"DirectoryChange.properties holds Property values, not {p!r}")


@attrs.frozen
class DirectoryChange:
    """DirectoryChange (2.2.4): one change to one directory object.

    Exactly one of ``path_name`` and ``guid_identifier`` is set: UseGuid 0x00 puts PathName on
    the wire and no GuidIdentifier, 0x01 the GuidIdentifier and no PathName (clarification
    E-011). NumberOfProperties is derived from ``properties``.
    """

    command: Command = attrs.field(converter=enum_converter(Command))
    partition_id: Guid = attrs.field(validator=_check_guid)
    previous_seq_number: SequenceNumber = attrs.field(validator=_check_seqnum)
    seq_number: SequenceNumber = attrs.field(validator=_check_seqnum)
    purged_seq_number: SequenceNumber = attrs.field(validator=_check_seqnum)
    properties: tuple[Property, ...] = attrs.field(
        converter=_to_tuple, validator=_check_properties
    )
    path_name: str | None = attrs.field(default=None, validator=_check_opt_wstr)
    guid_identifier: Guid | None = attrs.field(default=None, validator=_check_opt_guid)

    def __attrs_post_init__(self) -> None:
        # "PathName ... MUST NOT be present if UseGuid is set to 0x01. Instead, GuidIdentifier
        # MUST be set with a value." (2.2.4)
        if (self.path_name is None) == (self.guid_identifier is None):
            raise ModelError(
                "a DirectoryChange names its object by exactly one of path_name (UseGuid 0x00)"
                " and guid_identifier (UseGuid 0x01)"
            )

    @property
    def use_guid(self) -> bool:
        """The UseGuid flag this change goes on the wire with."""
        return self.guid_identifier is not None

    def property_value(self, propid: int) -> object:
        """The value of the first property with ``propid`` (KeyError when absent)."""
        for p in self.properties:
            if p.propid == propid:
                return p.value
        raise KeyError(propid)


#: field names with their array index, built once so decoding a property allocates no text
_PROPID_FIELDS = tuple(f"DirectoryChange.PropertyID[{i}]" for i in range(MAX_PROPERTIES))
_VALUE_FIELDS = tuple(f"DirectoryChange.PropertyValue[{i}]" for i in range(MAX_PROPERTIES))
_PROPID_ARRAYS = tuple(struct.Struct(f"<{n}I") for n in range(MAX_PROPERTIES + 1))

#: the fixed-size flat encodings ([MS-MQCN] 2.2.3), read here without a call per value
_FIXED_FORMATS = {
    VarType.VT_I1: "<b", VarType.VT_UI1: "<B", VarType.VT_I2: "<h", VarType.VT_UI2: "<H",
    VarType.VT_BOOL: "<H", VarType.VT_I4: "<i", VarType.VT_UI4: "<I", VarType.VT_I8: "<q",
    VarType.VT_UI8: "<Q",
}
_GUID_VALUE = 0  # "size" marking VT_CLSID
_OTHER_VALUE = -1  # the other vectors: read by propvalue.decode_value
_WSTR_VALUE = -2  # VT_LPWSTR
_BLOB_VALUE = -3  # VT_BLOB and VT_UI1|VT_VECTOR: a ULONG size and the bytes
_GUIDS_VALUE = -4  # VT_CLSID|VT_VECTOR: a ULONG count and the GUIDs
_SET_PROPID = Property.__dict__["propid"].__set__
_SET_VALUE = Property.__dict__["value"].__set__
_SET_GUID = Guid.__dict__["bytes_le"].__set__
_SET_SEQ = SequenceNumber.__dict__["value"].__set__
_CHANGE_FIXED_SIZE = _CHANGE_FIXED.size
_CHANGE_FIXED_UNPACK = _CHANGE_FIXED.unpack_from
_U32 = struct.Struct("<I")


def _value_reader(pdef: PropertyDef) -> tuple[int, PropertyDef, int, object]:
    fmt = _FIXED_FORMATS.get(pdef.vartype)
    if fmt is not None:
        st = struct.Struct(fmt)
        return pdef.propid, pdef, st.size, st.unpack_from
    if pdef.vartype is VarType.VT_CLSID:
        return pdef.propid, pdef, _GUID_VALUE, None
    if pdef.vartype is VarType.VT_LPWSTR:
        return pdef.propid, pdef, _WSTR_VALUE, None
    if pdef.vartype is VarType.VT_BLOB or pdef.vartype is VarType.VT_UI1_VECTOR:
        return pdef.propid, pdef, _BLOB_VALUE, None
    if pdef.vartype is VarType.VT_CLSID_VECTOR:
        return pdef.propid, pdef, _GUIDS_VALUE, None
    return pdef.propid, pdef, _OTHER_VALUE, None


#: PROPID -> (PROPID, definition, fixed size or marker, unpack_from)
_VALUE_READERS = {propid: _value_reader(pdef) for propid, pdef in PROPID_BY_VALUE.items()}

_directory_change = unchecked_constructor(DirectoryChange)


def _decode_properties(r: Reader, n: int) -> tuple[Property, ...]:
    """NumberOfProperties PROPIDs, then as many flat values, each typed by its PROPID."""
    # N PROPIDs and N values of at least one byte each must fit before anything is built
    r.count(n, PROPERTY_MIN_SIZE, "DirectoryChange.NumberOfProperties", S_CHANGE,
            "properties", r.pos - 1)
    data, end = r.data, r.end
    ids_at = r.pos
    propids = _PROPID_ARRAYS[n].unpack_from(data, ids_at)
    readers = list(map(_VALUE_READERS.get, propids))
    if None in readers:
        i = readers.index(None)
        raise DecodeError(
            _PROPID_FIELDS[i], ids_at + 4 * i, S_CHANGE, f"unknown PROPID {propids[i]}"
        )
    pos = ids_at + 4 * n
    props: list[Property] = []
    append = props.append
    # the Property and Guid slots are set inline (as unchecked_constructor does), one call
    # fewer per value in the hottest loop of the codec
    new, set_propid, set_value, set_guid = _new, _SET_PROPID, _SET_VALUE, _SET_GUID
    for propid, pdef, size, unpack in readers:  # type: ignore[misc]
        if size > 0 and end - pos >= size:
            value = unpack(data, pos)[0]
            pos += size
        elif size == _GUID_VALUE and end - pos >= 16:
            value = new(Guid)
            set_guid(value, data[pos : pos + 16])
            pos += 16
        elif size == _WSTR_VALUE and (z := _wstr_end(data, pos, end)) >= 0:
            value = _utf16_decode(data[pos:z], "surrogatepass", True)[0]
            pos = z + 2
        elif (
            size == _BLOB_VALUE and end - pos >= 4
            and end - pos - 4 >= (length := _U32.unpack_from(data, pos)[0])
        ):
            value = data[pos + 4 : pos + 4 + length]
            pos += 4 + length
        elif (
            size == _GUIDS_VALUE and end - pos >= 4
            and (end - pos - 4) >> 4 >= (length := _U32.unpack_from(data, pos)[0])
        ):
            first = pos + 4
            pos = first + 16 * length
            guids = []
            for at in range(first, pos, 16):
                guid = new(Guid)
                set_guid(guid, data[at : at + 16])
                guids.append(guid)
            value = tuple(guids)
        else:
            # other vectors, and any value that runs out (decode_value raises the precise
            # error); the index of this value is the number of properties read so far
            r.pos = pos
            value = decode_value(r, pdef, _VALUE_FIELDS[len(props)], S_CHANGE)
            pos = r.pos
        prop = new(Property)
        set_propid(prop, propid)
        set_value(prop, value)
        append(prop)
    r.pos = pos
    return tuple(props)


@clause("MC-MQDSRP", "2.2.4", "DirectoryChange")
def decode_directory_change(r: Reader) -> DirectoryChange:
    """Read one DirectoryChange at the reader's position.

    Command "MUST be one of the following values" (0x00..0x03); UseGuid "MUST be set as follows"
    (0x00 PathName, 0x01 GuidIdentifier); the PropertyID and PropertyValue arrays each hold
    exactly NumberOfProperties elements, every value encoded as its PROPID's VARTYPE.
    """
    start = r.pos
    data, end = r.data, r.end
    if end - start < 2:
        # fewer than two bytes: read byte by byte so the error names the field that runs out
        command = r.u8("DirectoryChange.Command", S_CHANGE)
        if command > 3:
            raise r.fail("DirectoryChange.Command", S_CHANGE,
                         f"Command {command:#04x} is not 0x00..0x03", start)
        r.u8("DirectoryChange.UseGuid", S_CHANGE)  # raises: no byte left
    # the common case reads the fields straight from the buffer and sets the slots of the
    # values it builds inline (see unchecked_constructor); every bound is checked before a read
    new, set_guid, set_seq = _new, _SET_GUID, _SET_SEQ
    command = data[start]
    if command > 3:
        raise r.fail(
            "DirectoryChange.Command", S_CHANGE, f"Command {command:#04x} is not 0x00..0x03", start
        )
    use_guid = data[start + 1]
    pos = start + 2
    path_name: str | None = None
    guid_identifier: Guid | None = None
    if use_guid == 0:
        z = _wstr_end(data, pos, end)
        if z < 0:
            r.pos = pos
            r.wstr("DirectoryChange.PathName", S_CHANGE)  # raises: no terminator
        path_name = _utf16_decode(data[pos:z], "surrogatepass", True)[0]
        pos = z + 2
    elif use_guid == 1:
        if end - pos < 16:
            r.pos = pos
            r.raw(16, "DirectoryChange.GuidIdentifier", S_CHANGE)  # raises: too short
        guid_identifier = new(Guid)
        set_guid(guid_identifier, data[pos : pos + 16])
        pos += 16
    else:
        raise r.fail(
            "DirectoryChange.UseGuid", S_CHANGE, f"UseGuid {use_guid:#04x} is not 0x00 or 0x01",
            start + 1,
        )
    if end - pos >= _CHANGE_FIXED_SIZE:
        pid_b, prev_v, seq_v, purged_v, n = _CHANGE_FIXED_UNPACK(data, pos)
        r.pos = pos + _CHANGE_FIXED_SIZE
        partition_id = new(Guid)
        set_guid(partition_id, pid_b)
        prev = new(SequenceNumber)
        set_seq(prev, prev_v)
        seq = new(SequenceNumber)
        set_seq(seq, seq_v)
        purged = new(SequenceNumber)
        set_seq(purged, purged_v)
    else:
        # short buffer: read field by field so the error names the field that runs out
        r.pos = pos
        partition_id = r.guid("DirectoryChange.PartitionID", S_CHANGE)
        prev = r.seqnum("DirectoryChange.PreviousSeqNumber", S_CHANGE)
        seq = r.seqnum("DirectoryChange.SeqNumber", S_CHANGE)
        purged = r.seqnum("DirectoryChange.PurgedSeqNumber", S_CHANGE)
        n = r.u8("DirectoryChange.NumberOfProperties", S_CHANGE)
    properties = _decode_properties(r, n) if n else ()
    return _directory_change(
        _COMMANDS[command], partition_id, prev, seq, purged, properties, path_name,
        guid_identifier,
    )


def _value_writer(pdef: PropertyDef):
    """The flat encoder of one PROPID's values, for values its Property validator accepted."""
    fmt = _FIXED_FORMATS.get(pdef.vartype)
    if fmt is not None:
        return struct.Struct(fmt).pack
    if pdef.vartype is VarType.VT_CLSID:
        return _guid_bytes
    if pdef.vartype is VarType.VT_LPWSTR:
        return _wstr_bytes
    if pdef.vartype is VarType.VT_BLOB or pdef.vartype is VarType.VT_UI1_VECTOR:
        return _blob_bytes
    return functools.partial(encode_value, pdef)


def _guid_bytes(value: Guid) -> bytes:
    return value.bytes_le


def _wstr_bytes(value: str) -> bytes:
    return value.encode("utf-16-le", "surrogatepass") + b"\x00\x00"


def _blob_bytes(value: bytes) -> bytes:
    return _U32.pack(len(value)) + value


#: PROPID -> the encoder of its flat PROPVALUE. A Property is frozen and its validator has
#: checked the value against the VARTYPE (propvalue.check_value), or a decoder built it from
#: bytes of that VARTYPE, so encoding does not check it again; VARTYPEs with no flat encoding
#: cannot be in a Property, and fall back to encode_value, which refuses them.
_VALUE_WRITERS = {propid: _value_writer(pdef) for propid, pdef in PROPID_BY_VALUE.items()}


#: encode_directory_change's memo, id(change) -> (change, its wire form): an entry holds its
#: change, so no other object can take that id while the entry lives; emptied when full
_ENCODED: dict[int, tuple[DirectoryChange, bytes]] = {}
ENCODED_LIMIT = 1 << 14
memos.register(f"{__name__}._ENCODED", "a DirectoryChange object -> its wire form", _ENCODED)


def encode_directory_change(change: DirectoryChange) -> bytes:
    """The wire form of one DirectoryChange (2.2.4).

    A DirectoryChange is frozen, so its wire form is computed once per object: an authority
    queues one change object for every neighbor, and a PSC passes each change it applies on to
    every BSC, so the same object is encoded into many messages.
    """
    hit = _ENCODED.get(id(change))
    if hit is not None and hit[0] is change:
        return hit[1]
    wire = _encode_directory_change(change)
    if len(_ENCODED) >= ENCODED_LIMIT:
        _ENCODED.clear()
    _ENCODED[id(change)] = (change, wire)
    return wire


def _encode_directory_change(change: DirectoryChange) -> bytes:
    props = change.properties
    n = len(props)
    if change.guid_identifier is not None:
        head = bytes((change.command, 1)) + change.guid_identifier.bytes_le
    else:
        head = bytes((change.command, 0)) + pack_wstr(change.path_name)  # type: ignore[arg-type]
    fixed = _CHANGE_FIXED.pack(
        change.partition_id.bytes_le, change.previous_seq_number.value,
        change.seq_number.value, change.purged_seq_number.value, n,
    )
    if not n:
        return head + fixed
    writers = _VALUE_WRITERS
    return b"".join([
        head, fixed, _PROPID_ARRAYS[n].pack(*[p.propid for p in props]),
        *[writers[p.propid](p.value) for p in props],
    ])


# --- 2.2.5.4 SeqNumberHeader ---------------------------------------------------------------

def _check_partitions(inst: object, _attr: attrs.Attribute, value: tuple) -> None:
    if len(value) > 0xFFFF:
        raise ModelError(f"SeqNumberHeader.Count is 16 bits; {len(value)} partitions do not fit")
    for p in value:
        if type(p) is not PartitionSeqNumbers:
            raise ModelError(f"SeqNumberHeader.partitions holds PartitionSeqNumbers, not {p!r}")


@attrs.frozen
class SeqNumberHeader:
    """SeqNumberHeader (2.2.5.4): the sender's machine name and its partitions' sequence numbers.

    "MachineName ... MUST NOT be present if Count is set to 0x0000", so ``machine_name`` is None
    exactly when ``partitions`` is empty. Count is derived from ``partitions``.
    """

    machine_name: str | None = attrs.field(validator=_check_opt_wstr)
    partitions: tuple[PartitionSeqNumbers, ...] = attrs.field(
        converter=_to_tuple, validator=_check_partitions
    )

    def __attrs_post_init__(self) -> None:
        if (self.machine_name is None) != (not self.partitions):
            raise ModelError(
                "SeqNumberHeader.machine_name is present exactly when there are partitions"
                " (MachineName MUST NOT be present if Count is 0x0000)"
            )


_seq_number_header = unchecked_constructor(SeqNumberHeader)

#: the header with Count 0x0000, as Send Change Propagation (3.3.7.2) creates it between updates
EMPTY_SEQ_NUMBER_HEADER = SeqNumberHeader(None, ())


@clause("MC-MQDSRP", "2.2.5.4", "SeqNumberHeader")
def decode_seq_number_header(r: Reader) -> SeqNumberHeader:
    """Count (2 bytes), then MachineName and Count PARTITION_SEQ_NUMBERS when Count > 0.

    The section has no diagram; the order is that of its field list (clarification E-015).
    """
    count_at = r.pos
    n = r.u16("SeqNumberHeader.Count", S_SEQHDR)
    if n == 0:
        return EMPTY_SEQ_NUMBER_HEADER
    machine_name = read_wstr(r, "SeqNumberHeader.MachineName", S_SEQHDR)
    # "the number of elements in this array MUST be the same as Count"
    r.count(n, _PSN.size, "SeqNumberHeader.Count", S_SEQHDR, "partition sequence numbers",
            count_at)
    partitions = tuple(decode_partition_seq_numbers(r) for _ in range(n))
    return _seq_number_header(machine_name, partitions)


def encode_seq_number_header(h: SeqNumberHeader) -> bytes:
    """The wire form of a SeqNumberHeader (2.2.5.4)."""
    if not h.partitions:
        return b"\x00\x00"
    return b"".join((
        pack_u16(len(h.partitions)), pack_wstr(h.machine_name),  # type: ignore[arg-type]
        *(encode_partition_seq_numbers(p) for p in h.partitions),
    ))
