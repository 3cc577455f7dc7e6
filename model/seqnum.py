"""SEQUENCE_NUMBER (MC-MQDSRP 2.2.2): an 8-byte array, byte 1 the most significant.

The section defines the operations byte by byte; they amount to arithmetic on the unsigned
64-bit big-endian integer the 8 bytes spell, which is how this type stores it:

* Increment adds 1 modulo 2**64: the loop "For i := 8 to 1: sn[i] := sn[i] + 1; If sn[i] is not
  0: Take no further action" carries into the next byte exactly when a byte wraps from 0xFF to
  0x00, and after byte 1 wraps there is nowhere to carry, so MAX + 1 = MIN (wraparound).
* Decrement subtracts 1 modulo 2**64 (MIN - 1 = MAX). The section prints ``sn[i] := sn[i] 1``
  without its minus sign: errata E-001.
* Addition and Subtraction are n-fold Increment and Decrement, so they also wrap modulo 2**64.
* Compare looks at byte 1 first, so it is the unsigned order on the 64-bit integer.

The section prints MIN_SEQ_NUMBER and MAX_SEQ_NUMBER with seven bytes; a SEQUENCE_NUMBER has
eight, so mqspec uses eight 0x00 and eight 0xFF (errata E-001).

>>> SequenceNumber(1).increment()
SequenceNumber(value=2)
>>> SequenceNumber.MAX.increment() == SequenceNumber.MIN
True
>>> SequenceNumber.from_bytes(bytes([0, 0, 0, 0, 0, 0, 1, 0])).value
256
"""

from __future__ import annotations

from typing import ClassVar

import attrs

from mqspec.clauses import clause

from .errors import ModelError

_MOD = 1 << 64
_MASK = _MOD - 1


def _check_value(_inst: object, _attr: attrs.Attribute, value: int) -> None:
    if type(value) is not int or not 0 <= value <= _MASK:
        raise ModelError(f"a SEQUENCE_NUMBER holds 0..2**64-1, not {value!r}")


@clause("MC-MQDSRP", "2.2.2", "SEQUENCE_NUMBER")
@attrs.frozen(order=False)
class SequenceNumber:
    """One sequence number; ``value`` is the 8 bytes read as an unsigned big-endian integer."""

    value: int = attrs.field(validator=_check_value)

    MIN: ClassVar[SequenceNumber]
    MAX: ClassVar[SequenceNumber]

    @classmethod
    def from_bytes(cls, data: bytes) -> SequenceNumber:
        """Read the 8-byte array (byte 1 first, most significant)."""
        if len(data) != 8:
            raise ModelError(f"a SEQUENCE_NUMBER is 8 bytes, not {len(data)}")
        return cls(int.from_bytes(data, "big"))

    def to_bytes(self) -> bytes:
        """The 8-byte array as it appears on the wire (byte 1 first)."""
        return self.value.to_bytes(8, "big")

    # The arithmetic below builds its results with _masked: a value masked to 64 bits is an
    # int in 0..2**64-1, which is all the validator checks (the handlers do this on every change).

    def increment(self) -> SequenceNumber:
        """Increment (2.2.2): add one; MAX wraps to MIN."""
        return _masked((self.value + 1) & _MASK)

    def decrement(self) -> SequenceNumber:
        """Decrement (2.2.2): subtract one; MIN wraps to MAX."""
        return _masked((self.value - 1) & _MASK)

    def add(self, n: int) -> SequenceNumber:
        """Addition (2.2.2): Increment ``n`` times, i.e. add ``n`` modulo 2**64."""
        if n < 0:
            raise ModelError(f"Addition takes an unsigned integer, not {n}")
        return _masked(int((self.value + n) & _MASK))

    def sub(self, n: int) -> SequenceNumber:
        """Subtraction (2.2.2): Decrement ``n`` times, i.e. subtract ``n`` modulo 2**64."""
        if n < 0:
            raise ModelError(f"Subtraction takes an unsigned integer, not {n}")
        return _masked(int((self.value - n) & _MASK))

    def compare(self, other: SequenceNumber) -> int:
        """Compare (2.2.2): -1, 0 or 1 as ``self`` is less than, equal to or greater than ``other``."""
        return (self.value > other.value) - (self.value < other.value)

    def __int__(self) -> int:
        return self.value

    # Compare (2.2.2) is the unsigned order of the 64-bit value; written out rather than generated
    # by attrs because the handlers compare sequence numbers on every change (hot path)
    def __lt__(self, other: SequenceNumber) -> bool:
        if other.__class__ is not SequenceNumber:
            return NotImplemented
        return self.value < other.value

    def __le__(self, other: SequenceNumber) -> bool:
        if other.__class__ is not SequenceNumber:
            return NotImplemented
        return self.value <= other.value

    def __gt__(self, other: SequenceNumber) -> bool:
        if other.__class__ is not SequenceNumber:
            return NotImplemented
        return self.value > other.value

    def __ge__(self, other: SequenceNumber) -> bool:
        if other.__class__ is not SequenceNumber:
            return NotImplemented
        return self.value >= other.value


_set_value = SequenceNumber.__dict__["value"].__set__


def _masked(value: int) -> SequenceNumber:
    """A SequenceNumber of a value already masked to 64 bits, without the validator's check."""
    seq = object.__new__(SequenceNumber)
    _set_value(seq, value)
    return seq


SequenceNumber.MIN = SequenceNumber(0)
SequenceNumber.MAX = SequenceNumber(_MASK)
MIN_SEQ_NUMBER = SequenceNumber.MIN
MAX_SEQ_NUMBER = SequenceNumber.MAX
