"""One arithmetic for two uses: the transition relation as Z3 terms, and the same code on Python ints.

The handlers of :mod:`mqspec.proofs.z3_model` are written once against these functions. Given
Z3 terms they build the symbolic transition relation the obligations check; given Python ints
and bools they compute the concrete post-state, which is what the anti-drift test compares with
the reference handlers on thousands of random states (and :func:`is_concrete` tells which).

Sequence numbers are the unsigned values 0 .. 2**64 - 1 that the eight bytes spell. The lemmas of
:mod:`mqspec.proofs.z3_seqnum` prove, over bit-vectors, that 2.2.2 Compare is the order of these
values and that Increment, Decrement, Addition and Subtraction are + and - modulo 2**64; so the
transition relation may use Z3 integers bounded to [0, 2**64) with ``add``/``sub`` wrapping
explicitly, which the solver handles far faster than 64-bit vectors (linear arithmetic instead
of bit-blasted comparators) and is the same arithmetic. Booleans are Python bools or ``z3.BoolRef``; a guard that is a Python ``True`` or
``False`` is folded away, so the concrete evaluation never builds a Z3 term.
"""

from __future__ import annotations

from typing import Any

import z3

BITS = 64
MASK = (1 << BITS) - 1
MAX_SEQ = MASK
MIN_SEQ = 0

Seq = int | z3.ArithRef
MOD = 1 << BITS
Bool = bool | z3.BoolRef


_PLAIN = (bool, int)


def is_concrete(*xs: Any) -> bool:
    for x in xs:  # a loop, not all(...): the concrete model asks this for every comparison it makes
        if x.__class__ is not int and x.__class__ is not bool and not isinstance(x, _PLAIN):
            return False
    return True


def bv(x: Seq) -> z3.ArithRef:
    """A sequence number as a Z3 term (an integer in [0, 2**64))."""
    return z3.IntVal(x) if isinstance(x, int) else x


def seq_var(name: str) -> z3.ArithRef:
    return z3.Int(name)


def in_range(x: Seq) -> Bool:
    """0 <= x <= MAX_SEQ_NUMBER: what every symbolic sequence number satisfies."""
    if isinstance(x, int):
        return 0 <= x <= MASK
    return z3.And(x >= 0, x <= MASK)


def bl(x: Bool) -> z3.BoolRef:
    return z3.BoolVal(x) if isinstance(x, bool) else x


def ite(c: Bool, a: Any, b: Any) -> Any:
    """``a`` if ``c`` else ``b``; folds a concrete condition (and equal branches)."""
    if c is True:
        return a
    if c is False:
        return b
    if a is b:
        return a
    if isinstance(a, (bool, z3.BoolRef)) or isinstance(b, z3.BoolRef):
        return z3.If(c, bl(a), bl(b))
    return z3.If(c, bv(a), bv(b))


def and_(*xs: Bool) -> Bool:
    rest = []
    for x in xs:
        if x is False:
            return False
        if x is True:
            continue
        rest.append(x)
    if not rest:
        return True
    return rest[0] if len(rest) == 1 else z3.And(*rest)


def or_(*xs: Bool) -> Bool:
    rest = []
    for x in xs:
        if x is True:
            return True
        if x is False:
            continue
        rest.append(x)
    if not rest:
        return False
    return rest[0] if len(rest) == 1 else z3.Or(*rest)


def not_(x: Bool) -> Bool:
    if isinstance(x, bool):
        return not x
    return z3.Not(x)


def implies(a: Bool, b: Bool) -> Bool:
    return or_(not_(a), b)


def eq(a: Any, b: Any) -> Bool:
    if (a.__class__ is int and b.__class__ is int) or is_concrete(a, b):
        return a == b
    if isinstance(a, (bool, z3.BoolRef)) and isinstance(b, (bool, z3.BoolRef)):
        return bl(a) == bl(b)
    return bv(a) == bv(b)


def ne(a: Seq, b: Seq) -> Bool:
    return not_(eq(a, b))


def ult(a: Seq, b: Seq) -> Bool:
    """Compare (2.2.2): ``a`` is less than ``b`` (unsigned)."""
    if (a.__class__ is int and b.__class__ is int) or is_concrete(a, b):
        return a < b
    return bv(a) < bv(b)


def ule(a: Seq, b: Seq) -> Bool:
    if (a.__class__ is int and b.__class__ is int) or is_concrete(a, b):
        return a <= b
    return bv(a) <= bv(b)


def ugt(a: Seq, b: Seq) -> Bool:
    return ult(b, a)


def uge(a: Seq, b: Seq) -> Bool:
    return ule(b, a)


def add(a: Seq, n: int) -> Seq:
    """Addition (2.2.2): Increment ``n`` times, modulo 2**64."""
    if isinstance(a, int):
        return (a + n) & MASK
    return z3.If(a + n > MASK, a + n - MOD, a + n)


def sub(a: Seq, n: int) -> Seq:
    """Subtraction (2.2.2): Decrement ``n`` times, modulo 2**64."""
    if isinstance(a, int):
        return (a - n) & MASK
    return z3.If(a >= n, a - n, a - n + MOD)


def umin(a: Seq, b: Seq) -> Seq:
    return ite(ult(a, b), a, b)


def low_byte_zero(a: Seq) -> Bool:
    """"the eighth element in ... LastSeqNumber is 0x00" (lemma eighth_element_zero_is_multiple_of_256)."""
    if isinstance(a, int):
        return a & 0xFF == 0
    return a % 256 == 0
