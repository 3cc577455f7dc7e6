"""The MQDS query structures and what they mean: restrictions, column sets and sort sets.

"Begin Directory Lookup" (MC-MQDSRP 3.2.7.8) receives these [MS-MQDS] structures; this module
holds them as value types and gives the pure semantics a lookup needs:

* :class:`PropertyRestriction` (MQPROPERTYRESTRICTION): "the binary relation to be computed
  between the MSMQ object property identified by prop and the constant specified by prval";
  :meth:`PropertyRestriction.matches` computes it over an object's properties.
* :class:`Restriction` (MQRESTRICTION): "An object is deemed to satisfy the constraint if all the
  binary expressions specified by the MQPROPERTYRESTRICTION array evaluate to TRUE".
* :class:`ColumnSet` (MQCOLUMNSET), :class:`SortKey` (MQSORTKEY), :class:`SortSet` (MQSORTSET),
  with :meth:`SortSet.sort` ordering a result set.

How values compare (the text says only "less than", "equal to"...; clarifications E-040..E-043):
integers by value; strings ordinally by UTF-16 code unit, case-sensitive (as ``wcscmp``); GUIDs
by their 16 bytes in the [MS-DTYP] wire layout (as ``memcmp``), so PRLT on a GUID is defined
and total; the VT_BLOB ``*_SEQNUM`` properties as 8-byte sequence numbers (MC-MQDSRP 2.2.2),
other blobs byte by byte; vectors element by element (whole-value equality, not "any element").
A property the object does not have never matches, whatever the relation (PRNE included).

The source text is a Go binding's documentation of [MS-MQDS] (MS-MQDS-query-types.txt); it
cites the object property table (2.2.10.1) and S_DSLookupBegin (3.1.4.17) but not the structures'
own section numbers. MQSORTSET is [MS-MQDS] 2.2.15 (with ``[range(0,128)] cCol``); the other four
take 2.2.11-2.2.14 in the document's alphabetical order (modelling entry E-044).

>>> from mqspec.model.propids import PROPIDS
>>> quota = PROPIDS["PROPID_Q_QUOTA"].propid
>>> big = PropertyRestriction.of(Relation.PRGT, quota, 1000)
>>> big.matches({quota: 5000}), big.matches({quota: 10}), big.matches({})
(True, False, False)
"""

from __future__ import annotations

import enum
import operator
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

import attrs

from mqspec import memos
from mqspec.clauses import clause

from .errors import ModelError
from .guid import Guid
from .jsonform import converter
from .propids import PROPID_BY_VALUE, PropertyDef, VarType
from .propvalue import Property, check_value
from .seqnum import SequenceNumber

M = TypeVar("M", bound=Mapping[int, Any])


class Relation(enum.IntEnum):
    """MQPROPERTYRESTRICTION ``rel``: the relation between the object's property and prval."""

    PRLT = 0x00000000  # less than
    PRLE = 0x00000001  # less than or equal to
    PRGT = 0x00000002  # greater than
    PRGE = 0x00000003  # greater than or equal to
    PREQ = 0x00000004  # equal to
    PRNE = 0x00000005  # not equal to


class SortOrder(enum.IntEnum):
    """MQSORTKEY ``dwOrder``."""

    QUERY_SORTASCEND = 0x00000000
    QUERY_SORTDESCEND = 0x00000001


_OPERATORS: dict[Relation, Callable[[Any, Any], bool]] = {
    Relation.PRLT: operator.lt,
    Relation.PRLE: operator.le,
    Relation.PRGT: operator.gt,
    Relation.PRGE: operator.ge,
    Relation.PREQ: operator.eq,
    Relation.PRNE: operator.ne,
}

#: the VT_BLOB PROPIDs that hold a SEQUENCE_NUMBER (PROPID_Q_SEQNUM ... PROPID_D_SEQNUM)
SEQNUM_PROPIDS: frozenset[int] = frozenset(
    p.propid
    for p in PROPID_BY_VALUE.values()
    if p.name.endswith("_SEQNUM") and p.vartype is VarType.VT_BLOB
)

#: how a compiled matcher (Restriction.matcher) reads a term's stored value: as a sequence number,
#: as a GUID's bytes, or through _stored_key
_SEQNUM_TERM, _GUID_TERM, _OTHER_TERM = "seqnum", "guid", "other"

_INTEGER_TYPES = frozenset(
    {
        VarType.VT_I1,
        VarType.VT_UI1,
        VarType.VT_I2,
        VarType.VT_UI2,
        VarType.VT_BOOL,
        VarType.VT_I4,
        VarType.VT_UI4,
        VarType.VT_I8,
        VarType.VT_UI8,
    }
)


def _utf16(text: str) -> bytes:
    # big-endian code units compare bytewise in code-unit order (ordinal, as wcscmp)
    return text.encode("utf-16-be", "surrogatepass")


def comparison_key(pdef: PropertyDef, value: object) -> Any:
    """The key by which values of ``pdef`` are ordered, or None when ``value`` cannot be ordered.

    The only value that cannot is a ``*_SEQNUM`` blob that is not 8 bytes long (no sequence
    number can be read from it); a stored :class:`SequenceNumber` is also accepted for those.
    """
    vt = pdef.vartype
    if vt in _INTEGER_TYPES:
        return value
    if vt is VarType.VT_LPWSTR:
        return _utf16(value)  # type: ignore[arg-type]
    if vt is VarType.VT_CLSID:
        return value.bytes_le  # type: ignore[union-attr]
    if pdef.propid in SEQNUM_PROPIDS:
        if isinstance(value, SequenceNumber):
            return value
        if len(value) != 8:  # type: ignore[arg-type]
            return None
        return SequenceNumber.from_bytes(value)  # type: ignore[arg-type]
    if vt is VarType.VT_BLOB or vt is VarType.VT_UI1_VECTOR:
        return value
    if vt is VarType.VT_CLSID_VECTOR:
        return tuple(g.bytes_le for g in value)  # type: ignore[union-attr]
    if vt is VarType.VT_UI4_VECTOR:
        return tuple(value)  # type: ignore[call-overload]
    if vt is VarType.VT_LPWSTR_VECTOR:
        return tuple(_utf16(s) for s in value)  # type: ignore[union-attr]
    raise ModelError(f"{pdef.name} ({vt.name}) has no defined order")


def _definition(propid: object) -> PropertyDef:
    pdef = PROPID_BY_VALUE.get(propid) if type(propid) is int else None  # type: ignore[arg-type]
    if pdef is None:
        raise ModelError(f"{propid!r} is not a PROPID of the object property table")
    return pdef


def _stored_key(pdef: PropertyDef, value: object) -> Any:
    """The key of a value held by a directory object; a value of the wrong type is bad model use."""
    if not (pdef.propid in SEQNUM_PROPIDS and isinstance(value, SequenceNumber)):
        check_value(pdef, value)
    return comparison_key(pdef, value)


def _to_enum(kind: type[enum.IntEnum]) -> Callable[[Any], Any]:
    def convert(value: Any) -> enum.IntEnum:
        try:
            return kind(value)
        except ValueError as exc:
            raise ModelError(
                f"{value!r} is not a {kind.__name__} ({list(map(int, kind))})"
            ) from exc

    return convert


def _check_propid(_inst: object, _attr: attrs.Attribute, value: object) -> None:
    _definition(value)


def _check_value(inst: PropertyRestriction, _attr: attrs.Attribute, value: object) -> None:
    Property(inst.propid, value)  # the registry's VARTYPE check (ModelError when it fails)
    if inst.propid in SEQNUM_PROPIDS and len(value) != 8:  # type: ignore[arg-type]
        name = PROPID_BY_VALUE[inst.propid].name
        raise ModelError(f"{name} is compared as an 8-byte sequence number, not {value!r}")


@clause("MS-MQDS", "2.2.12", "MQPROPERTYRESTRICTION")
@attrs.frozen
class PropertyRestriction:
    """One comparison: the object's property ``propid`` ``relation`` the constant ``value``.

    Fields in the structure's order (rel, prop, prval). "The variant type of prval MUST match the
    variant type of the MSMQ object property identified by prop": ``value`` is validated against
    the PROPID registry, so a mismatched type cannot be built.
    """

    relation: Relation = attrs.field(converter=_to_enum(Relation))
    propid: int = attrs.field(validator=_check_propid)
    value: object = attrs.field(validator=_check_value)

    @classmethod
    def of(cls, relation: Relation | int, propid: int, value: object) -> PropertyRestriction:
        """Build from (rel, prop, prval) as the structure lists them (same as the constructor).

        The value is frozen, so equal arguments may share one: a Relation, an int PROPID and a
        value of one of the immutable types 3.2.7.8's lookups pass (a GUID, a blob, a string, an
        int) give the restriction built the first time (the memo keys on the value's type, as
        True == 1 and a bool is refused where an int is taken; a refused value is never kept).
        """
        kind = value.__class__
        if cls is PropertyRestriction and kind in _SHAREABLE and relation.__class__ is Relation and (
            propid.__class__ is int
        ):
            key = (relation, propid, value, kind)
            hit = _RESTRICTIONS.get(key)
            if hit is None:
                hit = cls(relation, propid, value)
                if len(_RESTRICTIONS) >= RESTRICTIONS_LIMIT:
                    _RESTRICTIONS.clear()
                _RESTRICTIONS[key] = hit
            return hit
        return cls(relation, propid, value)

    @property
    def constant(self) -> Property:
        """The (PROPID, value) pair the object's property is compared with."""
        return Property(self.propid, self.value)

    def matches(self, properties: Mapping[int, object]) -> bool:
        """Whether an object with these property values satisfies the relation (E-040, E-041)."""
        if self.propid not in properties:
            return False  # a property the object lacks satisfies no relation
        pdef = PROPID_BY_VALUE[self.propid]
        left = _stored_key(pdef, properties[self.propid])
        if left is None:
            return False  # a malformed sequence number compares with nothing
        return _OPERATORS[self.relation](left, comparison_key(pdef, self.value))


#: PropertyRestriction.of's memo: (relation, propid, value, value type) -> the restriction;
#: emptied when it holds RESTRICTIONS_LIMIT entries
_RESTRICTIONS: dict[tuple[Relation, int, object, type], PropertyRestriction] = {}
RESTRICTIONS_LIMIT = 1 << 12
memos.register(f"{__name__}._RESTRICTIONS", "(relation, PROPID, value, its type) -> the PropertyRestriction",
               _RESTRICTIONS)
_SHAREABLE = frozenset({Guid, bytes, str, int})


# The JSON form: ``value`` is typed by ``propid``, so the pair goes through Property's hooks
# ({"relation": 4, "propid": "PROPID_Q_LABEL", "value": "x"}).
def _restriction_to_json(r: PropertyRestriction) -> dict[str, Any]:
    return {"relation": int(r.relation), **converter.unstructure(r.constant)}


def _restriction_from_json(data: Any, _t: type) -> PropertyRestriction:
    if not isinstance(data, dict) or set(data) != {"relation", "propid", "value"}:
        raise ModelError(f"a property restriction is {{relation, propid, value}}, not {data!r}")
    pair = converter.structure({"propid": data["propid"], "value": data["value"]}, Property)
    return PropertyRestriction(data["relation"], pair.propid, pair.value)


converter.register_unstructure_hook(PropertyRestriction, _restriction_to_json)
converter.register_structure_hook(PropertyRestriction, _restriction_from_json)


def _tuple_of(kind: type, what: str) -> Callable[[Any, attrs.Attribute, tuple], None]:
    def check(_inst: object, _attr: attrs.Attribute, value: tuple) -> None:
        for item in value:
            if not isinstance(item, kind):
                raise ModelError(f"{what} holds {kind.__name__} values, not {item!r}")

    return check


@clause("MS-MQDS", "2.2.13", "MQRESTRICTION")
@attrs.frozen
class Restriction:
    """A conjunction of property restrictions (``cRes`` is ``len(restrictions)``).

    With no restrictions every object matches (clarification E-041).
    """

    restrictions: tuple[PropertyRestriction, ...] = attrs.field(
        default=(), converter=tuple, validator=_tuple_of(PropertyRestriction, "paPropRes")
    )

    def matches(self, properties: Mapping[int, object]) -> bool:
        """True when every property restriction evaluates to TRUE for these property values."""
        return all(r.matches(properties) for r in self.restrictions)

    def matcher(self) -> Callable[[Mapping[int, object]], bool]:
        """:meth:`matches` as a function, for testing one restriction against many objects.

        It gives the same answers and raises the same errors, in the same order: each term is
        still tested in turn and stops at the first that fails. What it does once instead of
        once per object is look up each term's definition and operator and work out the
        constant's comparison key; and a ``*_SEQNUM`` blob is compared as the integer its 8
        bytes spell, which orders exactly as the SequenceNumber :func:`comparison_key` gives.
        A stored value of the exact type the VARTYPE holds (8 bytes for a ``*_SEQNUM``, a Guid
        for VT_CLSID) passes :func:`check_value` as it is, so it is read without the call.
        """
        terms = []
        for r in self.restrictions:
            pdef = PROPID_BY_VALUE[r.propid]
            if r.propid in SEQNUM_PROPIDS:
                right = comparison_key(pdef, r.value)
                terms.append((r.propid, pdef, _OPERATORS[r.relation], _SEQNUM_TERM, right.value))
            else:
                kind = _GUID_TERM if pdef.vartype is VarType.VT_CLSID else _OTHER_TERM
                terms.append((r.propid, pdef, _OPERATORS[r.relation], kind, comparison_key(pdef, r.value)))

        def matches(properties: Mapping[int, object]) -> bool:
            for propid, pdef, op, kind, right in terms:
                if propid not in properties:
                    return False  # a property the object lacks satisfies no relation
                value = properties[propid]
                if kind is _SEQNUM_TERM:
                    if value.__class__ is bytes and len(value) == 8:  # type: ignore[arg-type]
                        left = int.from_bytes(value, "big")  # type: ignore[arg-type]  # passes check_value
                    elif isinstance(value, SequenceNumber):
                        left = value.value
                    else:
                        check_value(pdef, value)
                        if len(value) != 8:  # type: ignore[arg-type]
                            return False  # a malformed sequence number compares with nothing
                        left = int.from_bytes(value, "big")  # type: ignore[arg-type]
                elif kind is _GUID_TERM and value.__class__ is Guid:
                    left = value.bytes_le  # type: ignore[attr-defined]  # what _stored_key gives a Guid
                else:
                    left = _stored_key(pdef, value)
                if not op(left, right):
                    return False
            return True

        return matches

    def select(self, objects: Iterable[M]) -> list[M]:
        """The objects that satisfy the restriction, in their given order."""
        return [o for o in objects if self.matches(o)]


def _check_columns(_inst: object, _attr: attrs.Attribute, value: tuple) -> None:
    for propid in value:
        _definition(propid)


@clause("MS-MQDS", "2.2.11", "MQCOLUMNSET")
@attrs.frozen
class ColumnSet:
    """The properties a lookup returns, in order; each "MUST be one of the values specified in
    the object property identifier table" (``cCol`` is ``len(columns)``)."""

    columns: tuple[int, ...] = attrs.field(converter=tuple, validator=_check_columns)


def _check_sort_propid(_inst: object, _attr: attrs.Attribute, value: object) -> None:
    _definition(value)


@clause("MS-MQDS", "2.2.14", "MQSORTKEY")
@attrs.frozen
class SortKey:
    """One sort key: a property and QUERY_SORTASCEND or QUERY_SORTDESCEND."""

    propid: int = attrs.field(validator=_check_sort_propid)
    order: SortOrder = attrs.field(
        default=SortOrder.QUERY_SORTASCEND, converter=_to_enum(SortOrder)
    )

    def key(self, properties: Mapping[int, object]) -> tuple:
        """Ascending sort key: present values by their order, then objects lacking the property."""
        if self.propid not in properties:
            return (1,)
        k = _stored_key(PROPID_BY_VALUE[self.propid], properties[self.propid])
        return (1,) if k is None else (0, k)


MAX_SORT_KEYS = 128  # MQSORTSET: [range(0,128)] unsigned long cCol


def _check_keys(inst: SortSet, attr: attrs.Attribute, value: tuple) -> None:
    _tuple_of(SortKey, "aCol")(inst, attr, value)
    if len(value) > MAX_SORT_KEYS:
        raise ModelError(f"MQSORTSET holds at most {MAX_SORT_KEYS} keys, not {len(value)}")


@clause("MS-MQDS", "2.2.15", "MQSORTSET")
@attrs.frozen
class SortSet:
    """A multipart sort key, most significant first (``cCol`` is ``len(keys)``)."""

    keys: tuple[SortKey, ...] = attrs.field(default=(), converter=tuple, validator=_check_keys)

    def sort(self, objects: Iterable[M]) -> list[M]:
        """The objects ordered by the keys (clarification E-043).

        Descending is the exact reverse of ascending: objects lacking a key's property (or holding
        a malformed sequence number) come after all others ascending and before them descending.
        Objects equal on every key keep their given order.
        """
        result = list(objects)
        for k in reversed(self.keys):  # stable sorts, least significant key first
            result.sort(key=k.key, reverse=k.order is SortOrder.QUERY_SORTDESCEND)
        return result


#: structure name -> model type, for the JSON form
QUERY_TYPES: dict[str, type] = {
    "PropertyRestriction": PropertyRestriction,
    "Restriction": Restriction,
    "ColumnSet": ColumnSet,
    "SortKey": SortKey,
    "SortSet": SortSet,
}

__all__ = [
    "QUERY_TYPES",
    "SEQNUM_PROPIDS",
    "ColumnSet",
    "PropertyRestriction",
    "Relation",
    "Restriction",
    "SortKey",
    "SortOrder",
    "SortSet",
    "comparison_key",
]
