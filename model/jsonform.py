"""JSON form of every model value: what ``mqspec decode`` prints and ``mqspec encode`` reads.

GUIDs are lowercase dashed strings, sequence numbers decimal strings (they are 64 bits: see
:mod:`mqspec.json64`; an integer is read too), byte strings lowercase hex, enumerations their
numeric value, properties ``{"propid": NAME, "value": ...}``. A decoded message is tagged with
its structure name under ``"message"`` so it can be encoded back.
"""

from __future__ import annotations

from typing import Any

import cattrs

from mqspec.json64 import wide_int

from .errors import ModelError
from .guid import Guid
from .propids import PROPID_BY_VALUE, VarType, propid_value
from .propvalue import Property
from .seqnum import SequenceNumber

converter = cattrs.Converter(forbid_extra_keys=True)

converter.register_unstructure_hook(Guid, str)
converter.register_structure_hook(Guid, lambda v, _t: Guid.parse(v))
converter.register_unstructure_hook(SequenceNumber, lambda s: str(s.value))


def _seq_from_json(value: Any, _t: type) -> SequenceNumber:
    try:
        return SequenceNumber(wide_int(value, what="a SEQUENCE_NUMBER"))
    except ValueError as exc:
        raise ModelError(str(exc)) from None


converter.register_structure_hook(SequenceNumber, _seq_from_json)
converter.register_unstructure_hook(bytes, bytes.hex)
converter.register_structure_hook(bytes, lambda v, _t: bytes.fromhex(v))


def _value_to_json(value: object) -> Any:
    if isinstance(value, Guid):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, tuple):
        return [_value_to_json(v) for v in value]
    return value


def _value_from_json(vt: VarType, value: Any) -> object:
    if vt is VarType.VT_CLSID:
        return Guid.parse(value)
    if vt in (VarType.VT_BLOB, VarType.VT_UI1_VECTOR):
        return bytes.fromhex(value)
    if vt is VarType.VT_CLSID_VECTOR:
        return tuple(Guid.parse(v) for v in value)
    if vt in (VarType.VT_UI4_VECTOR, VarType.VT_LPWSTR_VECTOR):
        return tuple(value)
    return value


def _property_to_json(p: Property) -> dict[str, Any]:
    return {"propid": p.name, "value": _value_to_json(p.value)}


def _property_from_json(data: Any, _t: type) -> Property:
    try:
        propid = propid_value(data["propid"])
    except KeyError as exc:
        raise ModelError(str(exc)) from exc
    pdef = PROPID_BY_VALUE.get(propid)
    if pdef is None:
        raise ModelError(f"unknown PROPID {data['propid']!r}")
    return Property(propid, _value_from_json(pdef.vartype, data["value"]))


converter.register_unstructure_hook(Property, _property_to_json)
converter.register_structure_hook(Property, _property_from_json)


def to_json(obj: object) -> dict[str, Any]:
    """Unstructure ``obj`` and tag it with its structure name."""
    return {"message": type(obj).__name__, **converter.unstructure(obj)}


def from_json(data: dict[str, Any], types: dict[str, type]) -> object:
    """Structure a tagged JSON object back into the model type its ``"message"`` names."""
    if not isinstance(data, dict) or "message" not in data:
        raise ModelError('a JSON message is an object with a "message" key naming its structure')
    name = data["message"]
    if name not in types:
        raise ModelError(f"unknown structure {name!r}; known: {', '.join(sorted(types))}")
    body = {k: v for k, v in data.items() if k != "message"}
    try:
        return converter.structure(body, types[name])
    except ModelError:
        raise
    except (cattrs.BaseValidationError, ValueError, TypeError, KeyError) as exc:
        raise ModelError(f"{name}: {_describe(exc)}") from exc


def _describe(exc: BaseException) -> str:
    if isinstance(exc, cattrs.BaseValidationError):
        parts = cattrs.transform_error(exc, format_exception=_one_error)
        # a validator's own message names the field ("X.requester_name must ..."): no "@ $" after it
        return "; ".join(part.removesuffix(" @ $") for part in parts)
    return str(exc)


def _one_error(exc: BaseException, type_: type | None) -> str:
    """A model validator's message as it is (it names the field); cattrs' wording for the rest."""
    if isinstance(exc, ModelError):
        return str(exc)
    return cattrs.v.format_exception(exc, type_)
