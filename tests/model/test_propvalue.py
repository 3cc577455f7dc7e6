"""Flat PROPVALUE encoding ([MS-MQCN] 2.2.3) for every VARTYPE in the registry."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mqspec.clauses import covers
from mqspec.model.errors import DecodeError, ModelError
from mqspec.model.guid import Guid
from mqspec.model.propids import PROPIDS, VarType
from mqspec.model.propvalue import Property, decode_value, encode_value
from mqspec.model.wire import Reader

guids = st.binary(min_size=16, max_size=16).map(Guid)
text = st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=20)

BY_VT = {
    VarType.VT_UI1: st.integers(0, 255),
    VarType.VT_I2: st.integers(-(2**15), 2**15 - 1),
    VarType.VT_UI2: st.integers(0, 2**16 - 1),
    VarType.VT_I4: st.integers(-(2**31), 2**31 - 1),
    VarType.VT_UI4: st.integers(0, 2**32 - 1),
    VarType.VT_LPWSTR: text,
    VarType.VT_BLOB: st.binary(max_size=40),
    VarType.VT_UI1_VECTOR: st.binary(max_size=40),
    VarType.VT_CLSID: guids,
    VarType.VT_CLSID_VECTOR: st.lists(guids, max_size=4).map(tuple),
    VarType.VT_LPWSTR_VECTOR: st.lists(text, max_size=4).map(tuple),
}
FLAT = [p for p in PROPIDS.values() if p.vartype in BY_VT]


@st.composite
def properties(draw):
    pdef = draw(st.sampled_from(FLAT))
    return Property(pdef.propid, draw(BY_VT[pdef.vartype]))


@covers("MS-MQCN", "2.2.3")
@given(properties())
def test_every_registered_property_round_trips(prop):
    """decode(encode(v)) == v for every directory PROPID and a value of its VARTYPE."""
    wire = encode_value(prop.definition, prop.value)
    r = Reader(wire)
    assert decode_value(r, prop.definition, "Test.Value") == prop.value
    assert r.remaining == 0


def test_byte_layouts():
    """Integers are little-endian, strings UTF-16LE with a 0x0000 terminator, blobs size-prefixed."""
    assert encode_value(PROPIDS["PROPID_Q_QUOTA"], 0x01020304) == bytes.fromhex("04030201")
    assert encode_value(PROPIDS["PROPID_Q_BASEPRIORITY"], -2) == bytes.fromhex("feff")
    assert encode_value(PROPIDS["PROPID_Q_LABEL"], "ab") == bytes.fromhex("610062000000")
    assert encode_value(PROPIDS["PROPID_Q_SEQNUM"], b"\x01\x02") == bytes.fromhex("020000000102")
    g = Guid.parse("e6eaba61-d1c6-11db-baac-0003ff4e2d22")
    assert encode_value(PROPIDS["PROPID_QM_CNS"], (g,)) == bytes.fromhex("01000000") + g.bytes_le


def test_ui1_vector_is_count_and_bytes():
    """VT_UI1|VT_VECTOR is a ULONG count followed by the bytes (clarification E-003)."""
    pdef = PROPIDS["PROPID_QM_ENCRYPTION_PK"]
    assert encode_value(pdef, b"\xaa\xbb") == bytes.fromhex("02000000aabb")


def test_huge_blob_size_fails_before_reading():
    """A blob claiming more bytes than remain is a decode error naming the field."""
    with pytest.raises(DecodeError) as info:
        decode_value(Reader(bytes.fromhex("ffffffff00")), PROPIDS["PROPID_Q_SEQNUM"], "X.Value")
    assert info.value.field == "X.Value" and "declared" in info.value.reason


def test_unterminated_string_is_refused():
    """A VT_LPWSTR with no 0x0000 terminator is a decode error."""
    with pytest.raises(DecodeError, match="terminator"):
        decode_value(Reader(b"a\x00b\x00"), PROPIDS["PROPID_Q_LABEL"], "X.Value")


@pytest.mark.parametrize(
    ("name", "value"),
    [("PROPID_Q_QUOTA", -1), ("PROPID_Q_JOURNAL", 256), ("PROPID_Q_LABEL", "a\x00b"),
     ("PROPID_Q_INSTANCE", "not a guid object"), ("PROPID_QM_CNS", [Guid.NULL])],
)
def test_values_of_the_wrong_shape_are_refused(name, value):
    """A Property's value must have the Python shape of its VARTYPE."""
    with pytest.raises(ModelError):
        Property(PROPIDS[name].propid, value)


def test_unknown_propid_is_refused():
    """A Property needs a registered PROPID."""
    with pytest.raises(ModelError, match="unknown PROPID 999"):
        Property(999, 0)
