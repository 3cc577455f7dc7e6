"""MQDS query structures: property restrictions, restrictions, column sets, sort keys and sets."""

from __future__ import annotations

import operator
import re
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from mqspec.clauses import covers, load_all
from mqspec.errata import Erratum
from mqspec.model.errors import ModelError
from mqspec.model.guid import Guid
from mqspec.model.jsonform import from_json, to_json
from mqspec.model.propids import PROPIDS, VarType
from mqspec.model.propvalue import Property
from mqspec.model.query import (
    QUERY_TYPES,
    SEQNUM_PROPIDS,
    ColumnSet,
    PropertyRestriction,
    Relation,
    Restriction,
    SortKey,
    SortOrder,
    SortSet,
)
from mqspec.model.seqnum import SequenceNumber
from tests.strategies_mqcn import FLAT_PROPIDS, value_of

ROOT = Path(__file__).resolve().parents[2]
QUOTA = PROPIDS["PROPID_Q_QUOTA"].propid  # VT_UI4
PRIORITY = PROPIDS["PROPID_Q_BASEPRIORITY"].propid  # VT_I2
LABEL = PROPIDS["PROPID_Q_LABEL"].propid  # VT_LPWSTR
INSTANCE = PROPIDS["PROPID_Q_INSTANCE"].propid  # VT_CLSID
Q_SEQNUM = PROPIDS["PROPID_Q_SEQNUM"].propid  # VT_BLOB holding a SEQUENCE_NUMBER
SECURITY = PROPIDS["PROPID_Q_SECURITY"].propid  # VT_BLOB
CNS = PROPIDS["PROPID_QM_CNS"].propid  # VT_CLSID|VT_VECTOR
OPS = {
    Relation.PRLT: operator.lt,
    Relation.PRLE: operator.le,
    Relation.PRGT: operator.gt,
    Relation.PRGE: operator.ge,
    Relation.PREQ: operator.eq,
    Relation.PRNE: operator.ne,
}
ORDERABLE = FLAT_PROPIDS


def seq(n: int) -> bytes:
    return SequenceNumber(n).to_bytes()


# --- MQPROPERTYRESTRICTION ----------------------------------------------------------------------


@covers("MS-MQDS", "2.2.12")
def test_relation_values_are_those_of_the_structure():
    """PRLT..PRNE are 0..5 and QUERY_SORTASCEND/DESCEND 0/1, as the IDL constants."""
    assert [(r.name, r.value) for r in Relation] == [
        ("PRLT", 0),
        ("PRLE", 1),
        ("PRGT", 2),
        ("PRGE", 3),
        ("PREQ", 4),
        ("PRNE", 5),
    ]
    assert (SortOrder.QUERY_SORTASCEND, SortOrder.QUERY_SORTDESCEND) == (0, 1)


@covers("MS-MQDS", "2.2.12")
@given(
    st.sampled_from(Relation), st.integers(-(2**15), 2**15 - 1), st.integers(-(2**15), 2**15 - 1)
)
def test_integers_compare_by_value(relation, stored, constant):
    """A VT_I2 property satisfies rel exactly when the integer relation holds."""
    r = PropertyRestriction.of(relation, PRIORITY, constant)
    assert r.matches({PRIORITY: stored}) is OPS[relation](stored, constant)


@covers("MS-MQDS", "2.2.12")
@given(
    st.sampled_from(ORDERABLE).flatmap(
        lambda p: st.tuples(st.just(p), value_of(p.vartype), value_of(p.vartype))
    )
)
def test_every_relation_is_consistent_for_every_property(case):
    """For any PROPID and two values, exactly one of PRLT/PREQ/PRGT holds, and the rest follow."""
    pdef, stored, constant = case
    if pdef.propid in SEQNUM_PROPIDS:
        stored, constant = stored[:8].ljust(8, b"\0"), constant[:8].ljust(8, b"\0")
    got = {
        rel: PropertyRestriction.of(rel, pdef.propid, constant).matches({pdef.propid: stored})
        for rel in Relation
    }
    assert sum((got[Relation.PRLT], got[Relation.PREQ], got[Relation.PRGT])) == 1
    assert got[Relation.PRLE] == (got[Relation.PRLT] or got[Relation.PREQ])
    assert got[Relation.PRGE] == (got[Relation.PRGT] or got[Relation.PREQ])
    assert got[Relation.PRNE] == (not got[Relation.PREQ])
    assert got[Relation.PREQ] == (stored == constant)


@covers("MS-MQDS", "2.2.12")
@given(
    st.sampled_from(Relation),
    st.sampled_from(ORDERABLE).flatmap(lambda p: st.tuples(st.just(p), value_of(p.vartype))),
)
def test_a_missing_property_never_matches(relation, case):
    """An object without the property satisfies no relation, PRNE included (E-041)."""
    pdef, constant = case
    if pdef.propid in SEQNUM_PROPIDS:
        constant = seq(1)
    r = PropertyRestriction.of(relation, pdef.propid, constant)
    assert not r.matches({})
    assert not r.matches({pid: v for pid, v in [(QUOTA, 1)] if pid != pdef.propid})


@covers("MS-MQDS", "2.2.12")
def test_strings_compare_ordinally_by_utf16_code_unit():
    """Strings are case-sensitive and ordered as wcscmp orders UTF-16 code units (E-040)."""
    eq = PropertyRestriction.of(Relation.PREQ, LABEL, "Orders")
    assert eq.matches({LABEL: "Orders"}) and not eq.matches({LABEL: "orders"})
    assert PropertyRestriction.of(Relation.PRLT, LABEL, "a").matches({LABEL: "B"})  # 'B' < 'a'
    # U+10000 is the pair D800 DC00, below U+FFFF as code units though above it as a code point
    assert PropertyRestriction.of(Relation.PRLT, LABEL, "\uffff").matches({LABEL: "\U00010000"})
    assert PropertyRestriction.of(Relation.PRLT, LABEL, "ab").matches({LABEL: "a"})  # prefix first


@covers("MS-MQDS", "2.2.12")
def test_guids_compare_by_their_wire_bytes():
    """PRLT on a GUID compares the 16 [MS-DTYP] wire bytes, not the printed text (E-040)."""
    low = Guid(bytes.fromhex("ff000000000000000000000000000000"))  # prints 000000ff-...
    high = Guid(bytes.fromhex("00000001000000000000000000000000"))  # prints 01000000-...
    assert str(low) < str(high)
    assert PropertyRestriction.of(Relation.PRLT, INSTANCE, low).matches({INSTANCE: high})
    assert PropertyRestriction.of(Relation.PREQ, INSTANCE, low).matches({INSTANCE: low})


@covers("MS-MQDS", "2.2.12")
def test_seqnum_properties_compare_as_sequence_numbers():
    """The *_SEQNUM blobs compare as 8-byte big-endian sequence numbers (MC-MQDSRP 2.2.2)."""
    assert SEQNUM_PROPIDS == {117, 213, 308, 505, 608, 704, 805, 1401}
    after_255 = PropertyRestriction.of(Relation.PRGT, Q_SEQNUM, seq(255))
    assert after_255.matches({Q_SEQNUM: seq(256)}) and not after_255.matches({Q_SEQNUM: seq(255)})
    assert after_255.matches({Q_SEQNUM: SequenceNumber(300)})  # a stored SequenceNumber also works
    # a stored blob that is no sequence number matches nothing, not even PRNE (E-041)
    assert not PropertyRestriction.of(Relation.PRNE, Q_SEQNUM, seq(1)).matches({Q_SEQNUM: b"\x01"})
    with pytest.raises(ModelError, match="8-byte sequence number"):
        PropertyRestriction.of(Relation.PREQ, Q_SEQNUM, b"\x01\x02")


@covers("MS-MQDS", "2.2.12")
def test_other_blobs_and_vectors_compare_element_by_element():
    """Blobs compare bytewise and vectors as whole sequences: PREQ is not "contains" (E-042)."""
    assert PropertyRestriction.of(Relation.PRLT, SECURITY, b"\x02").matches({SECURITY: b"\x01\xff"})
    a, b = Guid.from_name("a"), Guid.from_name("b")
    contains_a = PropertyRestriction.of(Relation.PREQ, CNS, (a,))
    assert contains_a.matches({CNS: (a,)}) and not contains_a.matches({CNS: (a, b)})


@covers("MS-MQDS", "2.2.12")
def test_restriction_values_are_validated_against_the_registry():
    """prval MUST have the PROPID's variant type; unknown PROPIDs and relations are refused."""
    for args in [
        (Relation.PREQ, QUOTA, "10"),
        (Relation.PREQ, QUOTA, -1),
        (Relation.PREQ, 9999, 1),
        (6, QUOTA, 1),
        (Relation.PREQ, LABEL, b"x"),
        (Relation.PREQ, INSTANCE, str(Guid.NULL)),
    ]:
        with pytest.raises(ModelError):
            PropertyRestriction.of(*args)
    with pytest.raises(ModelError):
        PropertyRestriction(Relation.PREQ, (QUOTA,), 1)
    assert PropertyRestriction(4, QUOTA, 1) == PropertyRestriction.of(Relation.PREQ, QUOTA, 1)
    assert PropertyRestriction(4, QUOTA, 1).constant == Property(QUOTA, 1)


@covers("MS-MQDS", "2.2.12")
def test_equal_restrictions_share_one_value_and_refusals_stay_refusals():
    """PropertyRestriction.of gives equal arguments one frozen value, yet a bool where an int is taken is still refused."""
    first = PropertyRestriction.of(Relation.PREQ, QUOTA, 1)
    assert PropertyRestriction.of(Relation.PREQ, QUOTA, 1) is first
    assert PropertyRestriction.of(Relation.PREQ, INSTANCE, Guid.NULL) is PropertyRestriction.of(
        Relation.PREQ, INSTANCE, Guid(bytes(16)))
    with pytest.raises(ModelError):
        PropertyRestriction.of(Relation.PREQ, QUOTA, True)  # True == 1, but VT_UI4 takes no bool
    with pytest.raises(ModelError):
        PropertyRestriction.of(Relation.PREQ, QUOTA, "1")
    assert PropertyRestriction.of(Relation.PRGT, QUOTA, 1) != first


@covers("MS-MQDS", "2.2.12")
def test_stored_values_of_the_wrong_type_are_model_errors():
    """A directory object holding a value of another VARTYPE is bad model use, not a mismatch."""
    with pytest.raises(ModelError):
        PropertyRestriction.of(Relation.PREQ, QUOTA, 1).matches({QUOTA: "1"})


# --- MQRESTRICTION ------------------------------------------------------------------------------


@covers("MS-MQDS", "2.2.13")
@given(
    st.lists(st.tuples(st.sampled_from(Relation), st.integers(0, 20)), max_size=5),
    st.integers(0, 20),
)
def test_a_restriction_is_the_conjunction_of_its_parts(parts, quota):
    """An object satisfies MQRESTRICTION when every property restriction holds (none: always)."""
    r = Restriction([PropertyRestriction.of(rel, QUOTA, c) for rel, c in parts])
    assert r.matches({QUOTA: quota}) is all(OPS[rel](quota, c) for rel, c in parts)


@covers("MS-MQDS", "2.2.13")
def test_restriction_selects_matching_objects_in_order():
    """select keeps the objects that match, in their given order."""
    objs = [{QUOTA: 5, LABEL: "a"}, {QUOTA: 50}, {QUOTA: 500, LABEL: "a"}]
    r = Restriction(
        [
            PropertyRestriction.of(Relation.PRGE, QUOTA, 5),
            PropertyRestriction.of(Relation.PREQ, LABEL, "a"),
        ]
    )
    assert r.select(objs) == [objs[0], objs[2]]
    assert Restriction().select(objs) == objs
    with pytest.raises(ModelError):
        Restriction([(Relation.PREQ, QUOTA, 1)])


def _answer(test, properties):
    """What a match test returns for these properties, or the type of the error it raises."""
    try:
        return test(properties)
    except ModelError:
        return ModelError


@covers("MS-MQDS", "2.2.13")
@given(
    st.lists(
        st.tuples(
            st.sampled_from(Relation),
            st.sampled_from(ORDERABLE).flatmap(
                lambda p: st.tuples(st.just(p), value_of(p.vartype), st.none() | value_of(p.vartype))
            ),
        ),
        max_size=4,
    ),
    st.booleans(),
)
def test_a_compiled_matcher_answers_as_matches(parts, as_sequence_numbers):
    """Restriction.matcher gives matches' answer for any object, errors included (begin_lookup uses it)."""
    terms, properties = [], {}
    for rel, (pdef, constant, stored) in parts:
        if pdef.propid in SEQNUM_PROPIDS:
            constant = constant[:8].ljust(8, b"\0")
            if stored is not None and as_sequence_numbers and len(stored) >= 8:
                stored = SequenceNumber.from_bytes(stored[:8])  # a stored SequenceNumber also works
        terms.append(PropertyRestriction.of(rel, pdef.propid, constant))
        if stored is not None:  # else the object lacks the property
            properties[pdef.propid] = stored
    restriction = Restriction(terms)
    matcher = restriction.matcher()
    assert _answer(matcher, properties) == _answer(restriction.matches, properties)
    wrong = {**properties, QUOTA: "1", Q_SEQNUM: 7}  # values of another VARTYPE: a ModelError both ways
    assert _answer(matcher, wrong) == _answer(restriction.matches, wrong)


# --- MQCOLUMNSET, MQSORTKEY, MQSORTSET ----------------------------------------------------------


@covers("MS-MQDS", "2.2.11")
def test_column_set_holds_known_propids_in_order():
    """Each column MUST be a PROPID of the object property table; order and repeats are kept."""
    assert ColumnSet([LABEL, QUOTA, LABEL]).columns == (LABEL, QUOTA, LABEL)
    for bad in ([9999], ["PROPID_Q_LABEL"], [True]):
        with pytest.raises(ModelError):
            ColumnSet(bad)


@covers("MS-MQDS", "2.2.14")
def test_sort_key_validates_propid_and_order():
    """A sort key names a known PROPID and QUERY_SORTASCEND (the default) or QUERY_SORTDESCEND."""
    assert SortKey(QUOTA).order is SortOrder.QUERY_SORTASCEND
    with pytest.raises(ModelError):
        SortKey(QUOTA, 2)
    with pytest.raises(ModelError):
        SortKey(1)


@covers("MS-MQDS", "2.2.15")
def test_sort_set_orders_by_keys_most_significant_first():
    """Later keys break ties of earlier ones; descending reverses one key; ties keep input order."""
    objs = [
        {QUOTA: 1, LABEL: "b", PRIORITY: 0},
        {QUOTA: 2, LABEL: "a", PRIORITY: 1},
        {QUOTA: 1, LABEL: "a", PRIORITY: 2},
        {QUOTA: 1, LABEL: "b", PRIORITY: 3},
    ]
    keys = SortSet([SortKey(QUOTA, SortOrder.QUERY_SORTDESCEND), SortKey(LABEL)])
    assert [o[PRIORITY] for o in keys.sort(objs)] == [1, 2, 0, 3]
    assert SortSet().sort(objs) == objs


@covers("MS-MQDS", "2.2.15")
@given(st.lists(st.one_of(st.none(), st.integers(0, 5)), max_size=8))
def test_missing_values_sort_last_ascending_and_first_descending(quotas):
    """Objects lacking the property follow the others ascending, precede them descending (E-043)."""
    objs = [{} if q is None else {QUOTA: q} for q in quotas]
    up = SortSet([SortKey(QUOTA)]).sort(objs)
    down = SortSet([SortKey(QUOTA, SortOrder.QUERY_SORTDESCEND)]).sort(objs)
    present = sorted(q for q in quotas if q is not None)
    assert [o.get(QUOTA) for o in up] == present + [None] * (len(quotas) - len(present))
    assert [o.get(QUOTA) for o in down] == [None] * (len(quotas) - len(present)) + present[::-1]


@covers("MS-MQDS", "2.2.15")
def test_sort_set_holds_at_most_128_keys():
    """MQSORTSET's cCol has [range(0,128)]."""
    assert len(SortSet([SortKey(QUOTA)] * 128).keys) == 128
    with pytest.raises(ModelError):
        SortSet([SortKey(QUOTA)] * 129)


# --- Forms, registry and register ---------------------------------------------------------------


@covers("MS-MQDS", "2.2.13")
@settings(max_examples=30)
@given(
    st.lists(st.sampled_from(Relation), max_size=3), st.sampled_from([LABEL, QUOTA, Q_SEQNUM, CNS])
)
def test_query_values_round_trip_through_the_json_form(relations, propid):
    """Restrictions, column sets and sort sets survive to_json / from_json."""
    constant = {LABEL: "x", QUOTA: 7, Q_SEQNUM: seq(9), CNS: (Guid.from_name("c"),)}[propid]
    values = [
        Restriction([PropertyRestriction(rel, propid, constant) for rel in relations]),
        ColumnSet([propid, LABEL]),
        SortSet([SortKey(propid, SortOrder.QUERY_SORTDESCEND), SortKey(LABEL)]),
    ]
    for v in values:
        assert from_json(to_json(v), QUERY_TYPES) == v


@covers("MS-MQDS", "2.2.12")
def test_property_restriction_json_names_its_propid():
    """The JSON form is {relation, propid (by name), value}; a malformed one is a ModelError."""
    r = PropertyRestriction(Relation.PRGE, Q_SEQNUM, seq(2))
    data = {"relation": 3, "propid": "PROPID_Q_SEQNUM", "value": "0000000000000002"}
    assert to_json(r) == {"message": "PropertyRestriction", **data}
    assert from_json({"message": "PropertyRestriction", **data}, QUERY_TYPES) == r
    for bad in ({**data, "value": "02"}, {**data, "relation": 9}, {"relation": 3}):
        with pytest.raises(ModelError):
            from_json({"message": "PropertyRestriction", **bad}, QUERY_TYPES)


def test_each_query_structure_is_registered():
    """MQCOLUMNSET..MQSORTSET (MS-MQDS 2.2.11-2.2.15) map to model/query.py."""
    registered = {(c.document, c.section): c.code for c in load_all()}
    for section in ("2.2.11", "2.2.12", "2.2.13", "2.2.14", "2.2.15"):
        assert registered[("MS-MQDS", section)].startswith("model/query.py:")


def test_errata_cited_by_the_query_model_are_in_its_register():
    """Every E-04x the module cites has a well-formed entry in query.yaml."""
    raw = yaml.safe_load((ROOT / "mqspec/register/query.yaml").read_text(encoding="utf-8"))
    entries = {
        e["id"]: Erratum(**{k: v.strip() if isinstance(v, str) else v for k, v in e.items()})
        for e in raw
    }
    assert all(re.fullmatch(r"E-04[0-4]", i) for i in entries)
    cited = set(re.findall(r"E-04\d", (ROOT / "model/query.py").read_text(encoding="utf-8")))
    assert cited <= set(entries)


def test_vartypes_without_an_order_are_not_in_the_directory():
    """Every directory PROPID's VARTYPE has a defined comparison (no VT_VARIANT vectors)."""
    assert all(p.vartype is not VarType.VT_VARIANT_VECTOR for p in PROPIDS.values())
