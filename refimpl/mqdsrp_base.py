"""Names and small helpers the MC-MQDSRP handler modules share (no handlers here)."""

from __future__ import annotations

from collections.abc import Sequence

from mqspec.model.propids import PROPIDS
from mqspec.model.propvalue import Property

# REPLICATION_QUEUE_DIRECT and REPLICATION_QUEUE_PRIVATE (1.9) are the transport's format names
from .transport import replication_queue_direct, replication_queue_private  # noqa: F401

DOC = "MC-MQDSRP"
P = {name: pdef.propid for name, pdef in PROPIDS.items()}


def prop_value(properties: Sequence[Property], propid: int) -> object | None:
    """The value associated with ``propid`` in a PROPID/PROPVARIANT array pair, or None."""
    for p in properties:
        if p.propid == propid:
            return p.value
    return None


def _as_number(properties: Sequence[Property], index: int) -> int:
    # a change from the wire may carry any property there; a value that is not a number
    # names no scope and no object type (0), it must not stop the handler
    if len(properties) <= index or not isinstance(properties[index].value, int):
        return 0
    return int(properties[index].value)  # type: ignore[call-overload]


def first_value(properties: Sequence[Property]) -> int:
    """"the property value of the first element" of a delete: the scope."""
    return _as_number(properties, 0)


def second_value(properties: Sequence[Property]) -> int:
    """"the property value of the second element" of a delete: the object type."""
    return _as_number(properties, 1)
