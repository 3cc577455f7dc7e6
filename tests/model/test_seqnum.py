"""SEQUENCE_NUMBER arithmetic against the byte-wise loops of MC-MQDSRP 2.2.2."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mqspec.clauses import covers
from mqspec.model.errors import ModelError
from mqspec.model.seqnum import MAX_SEQ_NUMBER, MIN_SEQ_NUMBER, SequenceNumber

u64 = st.integers(min_value=0, max_value=2**64 - 1)
edges = st.sampled_from([0, 1, 0xFF, 0x100, 0xFFFF_FFFF, 2**63, 2**64 - 2, 2**64 - 1])
values = st.one_of(u64, edges)


def spec_increment(sn: list[int]) -> list[int]:
    """2.2.2 Increment, transcribed: For i := 8 to 1: sn[i] := sn[i] + 1; if sn[i] is not 0 stop."""
    sn = list(sn)
    for i in range(7, -1, -1):
        sn[i] = (sn[i] + 1) % 256
        if sn[i] != 0:
            break
    return sn


def spec_decrement(sn: list[int]) -> list[int]:
    """2.2.2 Decrement with the minus sign restored (E-001): borrow while the old byte was 0."""
    sn = list(sn)
    for i in range(7, -1, -1):
        temp = sn[i]
        sn[i] = (sn[i] - 1) % 256
        if temp != 0:
            break
    return sn


def spec_compare(a: list[int], b: list[int]) -> int:
    """2.2.2 Compare: equal when every element is equal, else the first differing byte from 1 decides."""
    for x, y in zip(a, b, strict=True):
        if x != y:
            return 1 if x > y else -1
    return 0


@covers("MC-MQDSRP", "2.2.2")
@given(values)
def test_increment_matches_the_bytewise_loop(v):
    """Increment is the section's byte loop, carrying from byte 8 towards byte 1."""
    sn = SequenceNumber(v)
    assert list(sn.increment().to_bytes()) == spec_increment(list(sn.to_bytes()))


@given(values)
def test_decrement_matches_the_bytewise_loop(v):
    """Decrement is the section's byte loop (with its minus sign restored), borrowing towards byte 1."""
    sn = SequenceNumber(v)
    assert list(sn.decrement().to_bytes()) == spec_decrement(list(sn.to_bytes()))


@given(values, values)
def test_compare_matches_the_bytewise_rules(a, b):
    """Compare and the ordering operators agree with the byte-by-byte rules from byte 1."""
    x, y = SequenceNumber(a), SequenceNumber(b)
    expected = spec_compare(list(x.to_bytes()), list(y.to_bytes()))
    assert x.compare(y) == expected
    assert (x < y) == (expected < 0) and (x == y) == (expected == 0)


@given(values, st.integers(min_value=0, max_value=300))
def test_addition_and_subtraction_are_repeated_increment_and_decrement(v, n):
    """Addition is n Increments and Subtraction n Decrements, wrapping as they do."""
    inc = dec = list(SequenceNumber(v).to_bytes())
    for _ in range(n):
        inc, dec = spec_increment(inc), spec_decrement(dec)
    assert list(SequenceNumber(v).add(n).to_bytes()) == inc
    assert list(SequenceNumber(v).sub(n).to_bytes()) == dec


def test_constants_have_eight_bytes_and_wrap():
    """MIN/MAX are 8 bytes (E-001) and Increment wraps MAX to MIN, Decrement MIN to MAX."""
    assert MAX_SEQ_NUMBER.to_bytes() == b"\xff" * 8
    assert MIN_SEQ_NUMBER.to_bytes() == b"\x00" * 8
    assert MAX_SEQ_NUMBER.increment() == MIN_SEQ_NUMBER
    assert MIN_SEQ_NUMBER.decrement() == MAX_SEQ_NUMBER


def test_byte_one_is_most_significant():
    """Byte 1 (the first on the wire) is the most significant: [0,..,0,1,0] is 256."""
    assert SequenceNumber.from_bytes(bytes([0, 0, 0, 0, 0, 0, 1, 0])).value == 256
    assert SequenceNumber(256).to_bytes() == bytes([0, 0, 0, 0, 0, 0, 1, 0])


@pytest.mark.parametrize("bad", [-1, 2**64, 1.5, True])
def test_out_of_range_values_are_refused(bad):
    """A SEQUENCE_NUMBER holds exactly the 64-bit unsigned integers."""
    with pytest.raises(ModelError):
        SequenceNumber(bad)


def test_negative_addition_is_refused():
    """Addition and Subtraction take an unsigned integer."""
    with pytest.raises(ModelError):
        SequenceNumber(5).add(-1)
    with pytest.raises(ModelError):
        SequenceNumber(5).sub(-1)
