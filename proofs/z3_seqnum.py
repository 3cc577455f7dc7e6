"""MC-MQDSRP 2.2.2 SEQUENCE_NUMBER as Z3 lemmas over bit-vectors.

2.2.2 defines its operations byte by byte on an 8-byte array, byte 1 the most significant. This
module writes each operation exactly as the section's loop does, over eight ``BitVec(8)``
bytes, and proves it equal to one operation on the 64-bit big-endian concatenation:

* Compare ("For i := 1 to 8: If sn1[i] > sn2[i] ...") is the unsigned order (``ULT``);
* Increment ("For i := 8 to 1: sn[i] := sn[i] + 1; If sn[i] is not 0: Take no further action")
  is ``+ 1`` modulo 2**64; Decrement (with the minus sign the text lost, E-001) is ``- 1``;
* Addition and Subtraction ("Increment rSeqNumber by n times") are n-fold Increment and
  Decrement: proved for symbolic ``n`` by induction (base case and inductive step of the
  closed form ``sn + n`` / ``sn - n`` modulo 2**64);
* Increment is strictly monotone except at MAX_SEQ_NUMBER, where it wraps to MIN: the one place
  the authority's "LastSeqNumber strictly increases" can fail (modelling E-260);
* the derived tests the handlers use: "the eighth element ... is 0x00" (3.1.7.2.3) is
  ``LastSeqNumber mod 256 == 0``; "LastSeqNumber - 1024" (3.1.7.2.9) exceeds LastSeqNumber
  exactly when LastSeqNumber < 1024 (the wrap of E-130).

Each lemma is a claim; :func:`prove_lemma` asks Z3 for a counterexample to it in its own solver
and reports ``proved``, ``violated`` (with the counterexample) or ``unknown``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import attrs
import z3

BITS = 64
MASK = (1 << BITS) - 1
MAX = z3.BitVecVal(MASK, BITS)
MIN = z3.BitVecVal(0, BITS)

Bytes = list[z3.BitVecRef]


def seq_bytes(name: str) -> Bytes:
    """Eight symbolic bytes ``name[1] .. name[8]`` (index 0 of the list is byte 1, the most significant)."""
    return [z3.BitVec(f"{name}[{i}]", 8) for i in range(1, 9)]


def value(sn: Sequence[z3.BitVecRef]) -> z3.BitVecRef:
    """The 64-bit big-endian integer the eight bytes spell (byte 1 first)."""
    return z3.Concat(*sn)


def increment_bytes(sn: Sequence[z3.BitVecRef]) -> Bytes:
    """Increment as 2.2.2 writes it: "For i := 8 to 1: sn[i] := sn[i] + 1. If sn[i] is not 0: Take no further action."

    ``going`` is true while the loop has not stopped yet.
    """
    out = list(sn)
    going: z3.BoolRef = z3.BoolVal(True)
    for i in range(7, -1, -1):
        bumped = sn[i] + 1
        out[i] = z3.If(going, bumped, sn[i])
        going = z3.And(going, bumped == 0)
    return out


def decrement_bytes(sn: Sequence[z3.BitVecRef]) -> Bytes:
    """Decrement: "For i := 8 to 1: Set tempVal to sn[i]. sn[i] := sn[i] - 1. If tempVal is not 0: stop" (E-001 restores the minus)."""
    out = list(sn)
    going: z3.BoolRef = z3.BoolVal(True)
    for i in range(7, -1, -1):
        temp = sn[i]
        out[i] = z3.If(going, sn[i] - 1, sn[i])
        going = z3.And(going, temp == 0)
    return out


def compare_bytes(sn1: Sequence[z3.BitVecRef], sn2: Sequence[z3.BitVecRef]) -> z3.ArithRef:
    """Compare as 2.2.2 writes it: -1, 0 or 1; "For i := 1 to 8: If sn1[i] > sn2[i]: sn1 is greater ..."."""
    result: z3.ArithRef = z3.IntVal(0)
    # built from byte 8 up, so that byte 1 (the first the loop looks at) is the outermost test
    for i in range(7, -1, -1):
        result = z3.If(z3.UGT(sn1[i], sn2[i]), 1, z3.If(z3.ULT(sn1[i], sn2[i]), -1, result))
    return result


def increment(x: z3.BitVecRef) -> z3.BitVecRef:
    """Increment on the 64-bit value (what the lemmas prove the byte loop equal to)."""
    return x + 1


@attrs.frozen
class Lemma:
    """One claim about 2.2.2: ``claim()`` builds the formula that must be valid."""

    name: str
    prose: str
    claim: Callable[[], z3.BoolRef]
    section: str = "2.2.2"


@attrs.frozen
class LemmaResult:
    name: str
    status: str  # proved | violated | unknown
    seconds: float
    counterexample: dict[str, int] | None = None


def _compare_is_unsigned_order() -> z3.BoolRef:
    a, b = seq_bytes("sn1"), seq_bytes("sn2")
    va, vb = value(a), value(b)
    expected = z3.If(z3.ULT(va, vb), -1, z3.If(va == vb, 0, 1))
    return compare_bytes(a, b) == expected


def _increment_is_plus_one() -> z3.BoolRef:
    a = seq_bytes("sn")
    return value(increment_bytes(a)) == value(a) + 1


def _decrement_is_minus_one() -> z3.BoolRef:
    a = seq_bytes("sn")
    return value(decrement_bytes(a)) == value(a) - 1


def _increment_then_decrement_is_identity() -> z3.BoolRef:
    a = seq_bytes("sn")
    return value(decrement_bytes(increment_bytes(a))) == value(a)


# Addition "Set rSeqNumber to sn. Increment rSeqNumber by n times": the n-fold iterate A(sn, n)
# is defined by A(sn, 0) = sn and A(sn, n + 1) = Increment(A(sn, n)). The closed form
# C(sn, n) = sn + n (mod 2**64) satisfies the same two equations: the base case and the
# inductive step below, for every sn and every n, so by induction on n, A = C. The step is
# proved with Increment written as the byte loop. n is a 64-bit unsigned value: the closed form
# has period 2**64 (2**64 Increments return sn, which is C at n = 0), so an n of any width acts
# as n modulo 2**64 and nothing is lost (the handlers use n = 256 and n = 1024).


def _as_bytes(x: z3.BitVecRef) -> Bytes:
    return [z3.Extract(63 - 8 * i, 56 - 8 * i, x) for i in range(8)]


def _addition_base() -> z3.BoolRef:
    sn = z3.BitVec("sn", BITS)
    return sn + z3.BitVecVal(0, BITS) == sn


def _addition_step() -> z3.BoolRef:
    sn, n = z3.BitVec("sn", BITS), z3.BitVec("n", BITS)
    prev = z3.BitVec("A(sn,n)", BITS)
    # A(sn, n) = C(sn, n)  =>  Increment(A(sn, n)) = C(sn, n + 1)
    return z3.Implies(prev == sn + n, value(increment_bytes(_as_bytes(prev))) == sn + (n + 1))


def _subtraction_base() -> z3.BoolRef:
    sn = z3.BitVec("sn", BITS)
    return sn - z3.BitVecVal(0, BITS) == sn


def _subtraction_step() -> z3.BoolRef:
    sn, n = z3.BitVec("sn", BITS), z3.BitVec("n", BITS)
    prev = z3.BitVec("S(sn,n)", BITS)
    return z3.Implies(prev == sn - n, value(decrement_bytes(_as_bytes(prev))) == sn - (n + 1))


def _addition_unrolled_matches_closed_form() -> z3.BoolRef:
    """A spot check of the induction: three Increments of the byte loop are + 3."""
    a = seq_bytes("sn")
    b = a
    for _ in range(3):
        b = increment_bytes(b)
    return value(b) == value(a) + 3


def _increment_monotone_except_at_max() -> z3.BoolRef:
    a = seq_bytes("sn")
    va, vi = value(a), value(increment_bytes(a))
    return z3.And(
        z3.Implies(va != MAX, z3.ULT(va, vi)),
        z3.Implies(va == MAX, vi == MIN),
    )


def _decrement_monotone_except_at_min() -> z3.BoolRef:
    a = seq_bytes("sn")
    va, vd = value(a), value(decrement_bytes(a))
    return z3.And(z3.Implies(va != MIN, z3.ULT(vd, va)), z3.Implies(va == MIN, vd == MAX))


def _addition_monotone_below_wrap() -> z3.BoolRef:
    sn, n = z3.BitVec("sn", BITS), z3.BitVec("n", BITS)
    return z3.Implies(z3.ULE(sn, MAX - n), z3.ULE(sn, sn + n))


def _eighth_byte_zero_is_multiple_of_256() -> z3.BoolRef:
    a = seq_bytes("LastSeqNumber")
    return (a[7] == 0) == (z3.URem(value(a), 256) == 0)


def _purge_buffer_wraps_below_1024() -> z3.BoolRef:
    last = z3.BitVec("LastSeqNumber", BITS)
    return (z3.UGT(last - 1024, last)) == z3.ULT(last, 1024)


LEMMAS: tuple[Lemma, ...] = (
    Lemma("compare_is_unsigned_big_endian_order",
          "Compare (byte 1 first) is the unsigned order of the 64-bit big-endian value.", _compare_is_unsigned_order),
    Lemma("increment_is_plus_one_mod_2_64",
          "The Increment byte loop is + 1 modulo 2**64 on the concatenation.", _increment_is_plus_one),
    Lemma("decrement_is_minus_one_mod_2_64",
          "The Decrement byte loop (with the minus sign of E-001) is - 1 modulo 2**64.", _decrement_is_minus_one),
    Lemma("decrement_undoes_increment", "Decrement(Increment(sn)) = sn.", _increment_then_decrement_is_identity),
    Lemma("addition_closed_form_base", "Adding 0 (no Increment) returns sn.", _addition_base),
    Lemma("addition_closed_form_step",
          "If n Increments give sn + n, n + 1 Increments give sn + (n + 1) (mod 2**64), for every unsigned n.",
          _addition_step),
    Lemma("addition_unrolled_three", "Three Increments of the byte loop are + 3.",
          _addition_unrolled_matches_closed_form),
    Lemma("subtraction_closed_form_base", "Subtracting 0 (no Decrement) returns sn.", _subtraction_base),
    Lemma("subtraction_closed_form_step",
          "If n Decrements give sn - n, n + 1 Decrements give sn - (n + 1) (mod 2**64), for every unsigned n.",
          _subtraction_step),
    Lemma("increment_monotone_except_at_max",
          "Increment strictly increases every sequence number but MAX_SEQ_NUMBER, which wraps to MIN_SEQ_NUMBER.",
          _increment_monotone_except_at_max),
    Lemma("decrement_monotone_except_at_min",
          "Decrement strictly decreases every sequence number but MIN_SEQ_NUMBER, which wraps to MAX_SEQ_NUMBER.",
          _decrement_monotone_except_at_min),
    Lemma("addition_monotone_below_wrap", "sn + n >= sn whenever sn <= MAX - n (no wrap).",
          _addition_monotone_below_wrap),
    Lemma("eighth_element_zero_is_multiple_of_256",
          "\"the eighth element in iPartition.LastSeqNumber is 0x00\" (3.1.7.2.3) iff LastSeqNumber mod 256 = 0.",
          _eighth_byte_zero_is_multiple_of_256, section="3.1.7.2.3"),
    Lemma("purge_buffer_wraps_below_1024",
          "LastSeqNumber - 1024 (3.1.7.2.9) is above LastSeqNumber exactly when LastSeqNumber < 1024 (E-130).",
          _purge_buffer_wraps_below_1024, section="3.1.7.2.9"),
)


def prove_lemma(lemma: Lemma, timeout_ms: int = 30_000) -> LemmaResult:
    """Look for a counterexample to the lemma in a fresh solver; none means proved."""
    started = time.perf_counter()
    solver = z3.Solver()
    solver.set("timeout", timeout_ms)
    solver.add(z3.Not(lemma.claim()))
    answer = solver.check()
    seconds = time.perf_counter() - started
    if answer == z3.unsat:
        return LemmaResult(lemma.name, "proved", seconds)
    if answer == z3.sat:
        model = solver.model()
        cex = {str(d): _as_int(model[d]) for d in model.decls()}
        return LemmaResult(lemma.name, "violated", seconds, cex)
    return LemmaResult(lemma.name, "unknown", seconds)


def _as_int(v: object) -> int:
    if isinstance(v, z3.BitVecNumRef):
        return v.as_long()
    if isinstance(v, z3.IntNumRef):
        return v.as_long()
    return 0


def evaluate_bytes(op: Callable[[Sequence[z3.BitVecRef]], Bytes], number: int) -> int:
    """Run a byte-loop operation on a concrete sequence number (cross-checks model/seqnum.py)."""
    sn = [z3.BitVecVal(b, 8) for b in number.to_bytes(8, "big")]
    return z3.simplify(value(op(sn))).as_long()  # type: ignore[union-attr]


def evaluate_compare(a: int, b: int) -> int:
    sa = [z3.BitVecVal(x, 8) for x in a.to_bytes(8, "big")]
    sb = [z3.BitVecVal(x, 8) for x in b.to_bytes(8, "big")]
    return z3.simplify(compare_bytes(sa, sb)).as_long()  # type: ignore[union-attr]
