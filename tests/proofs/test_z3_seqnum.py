"""MC-MQDSRP 2.2.2 SEQUENCE_NUMBER: the Z3 lemmas, and the byte loops against model/seqnum.py."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mqspec.model.seqnum import SequenceNumber
from mqspec.proofs import z3_seqnum as zs

from mqspec.clauses import covers

SEQ = st.integers(min_value=0, max_value=zs.MASK)
EDGES = st.sampled_from([0, 1, 0xFF, 0x100, 0xFFFF, 0x1_0000_0000, zs.MASK - 1, zs.MASK])


@covers("MC-MQDSRP", "2.2.2")
@pytest.mark.parametrize("lemma", zs.LEMMAS, ids=lambda lm: lm.name)
def test_lemma_is_proved(lemma):
    """Every 2.2.2 lemma is proved by Z3 (unsat negation), none is unknown."""
    result = zs.prove_lemma(lemma, timeout_ms=30_000)
    assert result.status == "proved", result


@covers("MC-MQDSRP", "2.2.2")
def test_a_false_lemma_is_violated_with_a_counterexample():
    """A wrong claim (Increment never wraps) comes back violated with the wrapping value."""
    def never_wraps():
        sn = zs.seq_bytes("sn")
        return zs.z3.ULT(zs.value(sn), zs.value(zs.increment_bytes(sn)))

    result = zs.prove_lemma(zs.Lemma("increment_never_wraps", "false on purpose", never_wraps))
    assert result.status == "violated"
    assert all(result.counterexample[f"sn[{i}]"] == 0xFF for i in range(1, 9))


@covers("MC-MQDSRP", "2.2.2")
@settings(max_examples=60)
@given(st.one_of(SEQ, EDGES))
def test_increment_and_decrement_loops_match_sequence_number(n):
    """The byte loops of 2.2.2, run on concrete bytes, agree with SequenceNumber.increment/decrement."""
    assert zs.evaluate_bytes(zs.increment_bytes, n) == SequenceNumber(n).increment().value
    assert zs.evaluate_bytes(zs.decrement_bytes, n) == SequenceNumber(n).decrement().value


@covers("MC-MQDSRP", "2.2.2")
@settings(max_examples=60)
@given(st.one_of(SEQ, EDGES), st.one_of(SEQ, EDGES))
def test_compare_loop_matches_sequence_number(a, b):
    """The Compare loop of 2.2.2 agrees with SequenceNumber.compare."""
    assert zs.evaluate_compare(a, b) == SequenceNumber(a).compare(SequenceNumber(b))


@covers("MC-MQDSRP", "2.2.2")
def test_max_wraps_to_min():
    """MAX_SEQ_NUMBER + 1 is MIN_SEQ_NUMBER in the byte loop: the exception to monotonicity (E-260)."""
    assert zs.evaluate_bytes(zs.increment_bytes, zs.MASK) == 0
