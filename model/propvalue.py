"""Flat PROPVALUE encoding ([MS-MQCN] 2.2.3) and the Property value type.

There is no VARTYPE tag on the wire: the PROPID says how its value is encoded. Everything is
little-endian and arrays are concatenated with no padding. [MS-MQCN] 2.2.3 does not cover
VT_UI1|VT_VECTOR (PROPID_QM_ENCRYPTION_PK); mqspec reads it as a ULONG count followed by that
many bytes (clarification E-003).

Python values by VARTYPE: integers for VT_I*/VT_UI*/VT_BOOL, ``str`` for VT_LPWSTR, ``bytes``
for VT_BLOB and VT_UI1|VT_VECTOR, :class:`Guid` for VT_CLSID, tuples for the other vectors.
"""

from __future__ import annotations

import struct

import attrs

from .errors import DecodeError, ModelError
from .guid import Guid
from .propids import PROPID_BY_VALUE, PropertyDef, VarType, propid_name
from .wire import Reader, pack_u32, pack_wstr

SECTION = "MS-MQCN 2.2.3"

# (struct format, low, high) for the fixed-size integer types
_INTS: dict[VarType, tuple[struct.Struct, int, int]] = {
    VarType.VT_I1: (struct.Struct("<b"), -(1 << 7), (1 << 7) - 1),
    VarType.VT_UI1: (struct.Struct("<B"), 0, (1 << 8) - 1),
    VarType.VT_I2: (struct.Struct("<h"), -(1 << 15), (1 << 15) - 1),
    VarType.VT_UI2: (struct.Struct("<H"), 0, (1 << 16) - 1),
    VarType.VT_BOOL: (struct.Struct("<H"), 0, (1 << 16) - 1),
    VarType.VT_I4: (struct.Struct("<i"), -(1 << 31), (1 << 31) - 1),
    VarType.VT_UI4: (struct.Struct("<I"), 0, (1 << 32) - 1),
    VarType.VT_I8: (struct.Struct("<q"), -(1 << 63), (1 << 63) - 1),
    VarType.VT_UI8: (struct.Struct("<Q"), 0, (1 << 64) - 1),
}


def decode_value(r: Reader, pdef: PropertyDef, field: str, section: str = SECTION) -> object:
    """Read one flat PROPVALUE of ``pdef``'s VARTYPE."""
    vt = pdef.vartype
    if vt in _INTS:
        st = _INTS[vt][0]
        return st.unpack(r.raw(st.size, field, section))[0]
    if vt is VarType.VT_LPWSTR:
        return r.wstr(field, section)
    if vt is VarType.VT_CLSID:
        return r.guid(field, section)
    if vt is VarType.VT_BLOB or vt is VarType.VT_UI1_VECTOR:
        start = r.pos
        size = r.u32(field, section)
        r.count(size, 1, field, section, "bytes", start)
        return r.raw(size, field, section)
    if vt is VarType.VT_CLSID_VECTOR:
        start = r.pos
        n = r.u32(field, section)
        r.count(n, 16, field, section, "GUIDs", start)
        return tuple(r.guid(f"{field}[{i}]", section) for i in range(n))
    if vt is VarType.VT_UI4_VECTOR:
        start = r.pos
        n = r.u32(field, section)
        r.count(n, 4, field, section, "ULONGs", start)
        return tuple(r.u32(f"{field}[{i}]", section) for i in range(n))
    if vt is VarType.VT_LPWSTR_VECTOR:
        start = r.pos
        n = r.u32(field, section)
        r.count(n, 2, field, section, "strings", start)
        return tuple(r.wstr(f"{field}[{i}]", section) for i in range(n))
    raise DecodeError(field, r.pos, section, f"{pdef.name} ({vt.name}) has no flat encoding")


def encode_value(pdef: PropertyDef, value: object) -> bytes:
    """Write one flat PROPVALUE; the value must already have the Python type of its VARTYPE."""
    check_value(pdef, value)
    vt = pdef.vartype
    if vt in _INTS:
        return _INTS[vt][0].pack(value)
    if vt is VarType.VT_LPWSTR:
        return pack_wstr(value)  # type: ignore[arg-type]
    if vt is VarType.VT_CLSID:
        return value.bytes_le  # type: ignore[union-attr]
    if vt is VarType.VT_BLOB or vt is VarType.VT_UI1_VECTOR:
        return pack_u32(len(value)) + value  # type: ignore[arg-type,operator]
    if vt is VarType.VT_CLSID_VECTOR:
        return pack_u32(len(value)) + b"".join(g.bytes_le for g in value)  # type: ignore
    if vt is VarType.VT_UI4_VECTOR:
        return pack_u32(len(value)) + b"".join(pack_u32(v) for v in value)  # type: ignore
    if vt is VarType.VT_LPWSTR_VECTOR:
        return pack_u32(len(value)) + b"".join(pack_wstr(s) for s in value)  # type: ignore
    raise ModelError(f"{pdef.name} ({vt.name}) has no flat encoding")


def check_value(pdef: PropertyDef, value: object) -> None:
    """Refuse a Python value that does not have the shape of ``pdef``'s VARTYPE."""
    vt = pdef.vartype
    if vt in _INTS:
        _, low, high = _INTS[vt]
        ok = type(value) is int and low <= value <= high
    elif vt is VarType.VT_LPWSTR:
        ok = isinstance(value, str) and "\x00" not in value
    elif vt is VarType.VT_CLSID:
        ok = isinstance(value, Guid)
    elif vt is VarType.VT_BLOB or vt is VarType.VT_UI1_VECTOR:
        ok = isinstance(value, bytes) and len(value) < (1 << 32)
    elif vt is VarType.VT_CLSID_VECTOR:
        ok = isinstance(value, tuple) and all(isinstance(g, Guid) for g in value)
    elif vt is VarType.VT_UI4_VECTOR:
        ok = isinstance(value, tuple) and all(type(v) is int and 0 <= v < 1 << 32 for v in value)
    elif vt is VarType.VT_LPWSTR_VECTOR:
        ok = isinstance(value, tuple) and all(isinstance(s, str) and "\x00" not in s for s in value)
    else:
        ok = False
    if not ok:
        raise ModelError(f"{pdef.name} ({vt.name}) cannot hold {value!r}")


def _check_property(inst: Property, _attr: attrs.Attribute, value: object) -> None:
    pdef = PROPID_BY_VALUE.get(inst.propid)
    if pdef is None:
        raise ModelError(f"unknown PROPID {inst.propid}")
    check_value(pdef, value)


@attrs.frozen
class Property:
    """One (PROPID, value) pair as a DirectoryChange or Notification Update carries it."""

    propid: int
    value: object = attrs.field(validator=_check_property)

    @property
    def name(self) -> str:
        return propid_name(self.propid)

    @property
    def definition(self) -> PropertyDef:
        return PROPID_BY_VALUE[self.propid]


def lookup_propid(propid: int, r: Reader, field: str, section: str, offset: int) -> PropertyDef:
    """The registry row for a PROPID read from the wire; unknown PROPIDs are a decode error."""
    pdef = PROPID_BY_VALUE.get(propid)
    if pdef is None:
        raise DecodeError(field, offset, section, f"unknown PROPID {propid}")
    return pdef
