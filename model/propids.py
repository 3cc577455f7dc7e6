"""The PROPID registry: every property of propid-types.md ([MS-MQMQ] 2.3) with its VARTYPE.

Each directory PROPID also carries the directory object type that MC-MQDSRP 3.1.1.4 derives
from it ("If propID > 1000: Set rType to ((propID - 1000) / 100). Else: Set rType to
(propID / 100)"); a value outside that section's table means an unknown object type (None).
The management PROPIDs of [MS-MQMQ] 2.3.11 / 2.3.12 live in their own 1..27 id space and are
kept out of the directory registry.

>>> PROPIDS["PROPID_Q_PATHNAME"].propid, hex(PROPIDS["PROPID_Q_PATHNAME"].vartype)
(103, '0x1f')
>>> object_type_of(1101)
<ObjectType.MQDS_QUEUE: 1>
>>> object_type_of(1401) is None  # deletion-notification PROPIDs map to rType 4, not in 3.1.1.4
True
"""

from __future__ import annotations

import enum

import attrs

from mqspec.clauses import clause

from .propid_table import ROWS


class VarType(enum.IntEnum):
    """VARENUM values used by the registry ([MS-MQMQ] 2.2.12)."""

    VT_I2 = 0x0002
    VT_I4 = 0x0003
    VT_BOOL = 0x000B
    VT_I1 = 0x0010
    VT_UI1 = 0x0011
    VT_UI2 = 0x0012
    VT_UI4 = 0x0013
    VT_I8 = 0x0014
    VT_UI8 = 0x0015
    VT_LPWSTR = 0x001F
    VT_BLOB = 0x0041
    VT_CLSID = 0x0048
    VT_VARIANT_VECTOR = 0x100C
    VT_UI1_VECTOR = 0x1011
    VT_UI4_VECTOR = 0x1013
    VT_LPWSTR_VECTOR = 0x101F
    VT_CLSID_VECTOR = 0x1048


class ObjectType(enum.IntEnum):
    """Directory object types ([MS-MQDS] 2.2.8) that MC-MQDSRP 3.1.1.4 can derive."""

    MQDS_QUEUE = 1
    MQDS_MACHINE = 2
    MQDS_SITE = 3
    MQDS_CN = 5
    MQDS_ENTERPRISE = 6
    MQDS_USER = 7
    MQDS_ROUTINGLINK = 8


@clause("MC-MQDSRP", "3.1.1.4", "PROPID and Object Type Mapping")
def object_type_of(propid: int) -> ObjectType | None:
    """MC-MQDSRP 3.1.1.4: the object type a PROPID belongs to, or None when unknown."""
    r_type = (propid - 1000) // 100 if propid > 1000 else propid // 100
    return _OBJECT_TYPES.get(r_type)


#: ObjectType by value (what ObjectType(value) finds, without the enum call: every change asks)
_OBJECT_TYPES: dict[int, ObjectType] = {t.value: t for t in ObjectType}


@attrs.frozen
class PropertyDef:
    """One row of the PROPID table."""

    name: str
    propid: int
    vartype: VarType
    section: str  # the [MS-MQMQ] section that defines it
    space: str = "directory"

    @property
    def object_type(self) -> ObjectType | None:
        return object_type_of(self.propid) if self.space == "directory" else None


def _build() -> tuple[dict[int, PropertyDef], dict[str, PropertyDef], dict[str, PropertyDef]]:
    by_id: dict[int, PropertyDef] = {}
    by_name: dict[str, PropertyDef] = {}
    management: dict[str, PropertyDef] = {}
    for space, name, value, vt, section in ROWS:
        pdef = PropertyDef(name, value, VarType(vt), section, space)
        if space == "directory":
            by_id[value] = pdef
            by_name[name] = pdef
        else:
            management[name] = pdef
    return by_id, by_name, management


#: directory PROPIDs by value, by name; management PROPIDs (separate id space) by name
PROPID_BY_VALUE, PROPIDS, MANAGEMENT_PROPIDS = _build()


def propid_name(propid: int) -> str:
    """The PROPID's name, or its number as text when it is not in the registry."""
    pdef = PROPID_BY_VALUE.get(propid)
    return pdef.name if pdef else str(propid)


def propid_value(name_or_value: str | int) -> int:
    """Accept a PROPID name or number (as a scenario or JSON file may give it)."""
    if isinstance(name_or_value, int):
        return name_or_value
    if name_or_value in PROPIDS:
        return PROPIDS[name_or_value].propid
    if name_or_value.isdigit():
        return int(name_or_value)
    raise KeyError(f"unknown PROPID name {name_or_value!r}")
