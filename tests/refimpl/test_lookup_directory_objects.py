"""MC-MQDSRP 3.2.7.8 Lookup Directory Objects: every object of a type in a partition and range, as sync changes."""

import pytest
from mqspec.model import mqdsrp
from mqspec.model.errors import ModelError
from mqspec.model.guid import Guid
from mqspec.model.mqdsrp import Command, CompleteSync0, SyncReplyMessage
from mqspec.model.propids import PROPID_BY_VALUE, ObjectType, object_type_of
from mqspec.model.propvalue import Property
from mqspec.refimpl.directory import DEFAULT_LOOKUP_CHUNK
from mqspec.refimpl.effects import Mode
from mqspec.refimpl.mqdsrp_server import REF_TABLE, lookup_directory_objects

from mqspec.clauses import covers

from .mqdsrp_fixtures_client import (
    MODES,
    SITE0,
    SITE1,
    P,
    ctx_for,
    machine_properties,
    partition,
    psc_qm,
    queue_properties,
    seq,
    store_object,
)

QUEUE_A, QUEUE_B = Guid.from_name("queue:a"), Guid.from_name("queue:b")


def site1_with_queues():
    qm = psc_qm()
    store_object(qm, ObjectType.MQDS_QUEUE, "M1\\a", queue_properties("M1\\a", QUEUE_A, scope=1, label="A"), SITE1, 3)
    store_object(qm, ObjectType.MQDS_QUEUE, "M1\\b", queue_properties("M1\\b", QUEUE_B, scope=0, label="B"), SITE1, 5)
    store_object(qm, ObjectType.MQDS_QUEUE, "M0\\c", queue_properties("M0\\c", Guid.from_name("queue:c")), SITE0, 4)
    return qm


def lookup(qm, object_type, from_seq=0, to_seq=100, scope=0, mode=Mode.CLARIFIED, partition_id=SITE1):
    return lookup_directory_objects(qm, ctx_for(qm, mode), partition(qm, partition_id), object_type,
                                    seq(from_seq), seq(to_seq), scope)


@covers("MC-MQDSRP", "3.2.7.8")
def test_each_object_becomes_a_sync_change_named_by_guid():
    """"Command := 0x03, UseGuid := 0x01, GuidIdentifier := ... second element ... SeqNumber := ... first element"."""
    qm = site1_with_queues()
    partition(qm, SITE1).purged_seq_number = seq(2)
    changes = lookup(qm, ObjectType.MQDS_QUEUE)
    assert [(c.command, c.guid_identifier, c.seq_number, c.partition_id, c.purged_seq_number, c.path_name)
            for c in changes] == [
        (Command.SYNC, QUEUE_A, seq(3), SITE1, seq(2), None),
        (Command.SYNC, QUEUE_B, seq(5), SITE1, seq(2), None),
    ]


@covers("MC-MQDSRP", "3.2.7.8")
def test_the_restriction_keeps_the_partition_and_the_inclusive_range():
    """[PREQ, PROPID_Q_PARTITIONID, ...] [PRGE, PROPID_Q_SEQNUM, from] [PRLE, PROPID_Q_SEQNUM, to]."""
    qm = site1_with_queues()
    assert [c.seq_number for c in lookup(qm, ObjectType.MQDS_QUEUE, 3, 3)] == [seq(3)]
    assert [c.seq_number for c in lookup(qm, ObjectType.MQDS_QUEUE, 4, 5)] == [seq(5)]
    assert lookup(qm, ObjectType.MQDS_QUEUE, 6, 100) == []
    assert [c.guid_identifier for c in lookup(qm, ObjectType.MQDS_QUEUE, partition_id=SITE0)] == [
        Guid.from_name("queue:c")]


@covers("MC-MQDSRP", "3.2.7.8")
def test_scope_0x01_adds_the_enterprise_queue_restriction():
    """Literal E-263: "If iScope is 0x01: [PREQ, PROPID_Q_SCOPE, PV(0x01)]": site-scope queues are left out."""
    qm = site1_with_queues()
    assert [c.guid_identifier for c in lookup(qm, ObjectType.MQDS_QUEUE, scope=1, mode=Mode.LITERAL)] == [QUEUE_A]
    assert [c.guid_identifier for c in lookup(qm, ObjectType.MQDS_QUEUE, scope=0, mode=Mode.LITERAL)] == [
        QUEUE_A, QUEUE_B]


@covers("MC-MQDSRP", "3.2.7.8")
def test_clarified_scope_0x01_keeps_every_queue_of_the_partition():
    """Clarified E-263: no PROPID_Q_SCOPE restriction, so a PSC's sync gets every queue, as propagation sends them."""
    qm = site1_with_queues()
    assert [c.guid_identifier for c in lookup(qm, ObjectType.MQDS_QUEUE, scope=1)] == [QUEUE_A, QUEUE_B]
    assert [c.guid_identifier for c in lookup(qm, ObjectType.MQDS_QUEUE, scope=0)] == [QUEUE_A, QUEUE_B]


@covers("MC-MQDSRP", "3.2.7.8")
@pytest.mark.parametrize("mode", [Mode.CLARIFIED, Mode.LITERAL])
def test_scope_0x01_finds_a_queue_without_a_scope_only_when_clarified(mode):
    """E-263: a queue stored without PROPID_Q_SCOPE is left out by the literal 0x01 restriction, kept when clarified."""
    qm = psc_qm()
    no_scope = (Property(P["PROPID_Q_PATHNAME"], "M1\\z"), Property(P["PROPID_Q_INSTANCE"], QUEUE_B))
    store_object(qm, ObjectType.MQDS_QUEUE, "M1\\z", no_scope, SITE1, 2)
    found = [c.guid_identifier for c in lookup(qm, ObjectType.MQDS_QUEUE, scope=1, mode=mode)]
    assert found == ([QUEUE_B] if mode is Mode.CLARIFIED else [])


@covers("MC-MQDSRP", "3.2.7.8")
def test_scope_is_not_used_for_other_object_types():
    """iScope "MUST NOT be used for other object types": a machine is found with scope 0x01."""
    qm = psc_qm()
    store_object(qm, ObjectType.MQDS_MACHINE, "M1", machine_properties("M1", SITE1), SITE1, 2)
    assert [c.guid_identifier for c in lookup(qm, ObjectType.MQDS_MACHINE, scope=1)] == [Guid.from_name("qm:M1")]


@covers("MC-MQDSRP", "3.2.7.8")
def test_clarified_properties_follow_the_change_column_and_leave_out_what_was_not_read():
    """Clarified E-124: values in DirectoryChangePropID order; PROPIDs not read or absent are left out."""
    qm = site1_with_queues()
    [a, _] = lookup(qm, ObjectType.MQDS_QUEUE)
    column = [P[n] for n in REF_TABLE[ObjectType.MQDS_QUEUE][1]]
    ids = [p.propid for p in a.properties]
    assert ids == [pid for pid in column if pid in ids]
    assert {p.propid: p.value for p in a.properties} == {
        P["PROPID_Q_SCOPE"]: 1, P["PROPID_Q_PATHNAME"]: "M1\\a", P["PROPID_Q_LABEL"]: "A"}


@covers("MC-MQDSRP", "3.2.7.8")
def test_literal_properties_are_the_whole_change_column_with_zero_for_undefined_values():
    """Literal: "a new array ... the same as the size of PropertyID"; undefined values are sent as zero of the type."""
    qm = site1_with_queues()
    [a, _] = lookup(qm, ObjectType.MQDS_QUEUE, mode=Mode.LITERAL)
    column = [P[n] for n in REF_TABLE[ObjectType.MQDS_QUEUE][1]]
    assert [p.propid for p in a.properties] == column
    values = {p.propid: p.value for p in a.properties}
    # PROPID_Q_HASHKEY is in DirectoryChangePropID but not in LookupPropID: "The variant value is undefined"
    assert values[P["PROPID_Q_HASHKEY"]] == 0
    assert values[P["PROPID_Q_TYPE"]] == Guid.NULL
    assert values[P["PROPID_Q_LABEL"]] == "A"


@covers("MC-MQDSRP", "3.2.7.8")
@pytest.mark.parametrize("mode", MODES)
def test_the_changes_encode_in_a_sync_reply(mode):
    """Whatever the mode, the changes go on the wire and decode to themselves."""
    qm = site1_with_queues()
    store_object(qm, ObjectType.MQDS_MACHINE, "M1", machine_properties("M1", SITE1), SITE1, 2)
    changes = lookup(qm, ObjectType.MQDS_QUEUE, mode=mode) + lookup(qm, ObjectType.MQDS_MACHINE, mode=mode)
    reply = SyncReplyMessage(SITE1, SITE1, seq(0), seq(5), seq(0), CompleteSync0.NOT_IN_SYNC0, tuple(changes))
    assert mqdsrp.decode(mqdsrp.encode(reply)) == reply


def _bare_user(qm):
    """A user object holding none of PROPID_U_SID/DIGEST/SIGN_CERT (only its identity)."""
    from mqspec.refimpl.mqdsrp_state import PEC_PARTITION_ID

    user = Guid.from_name("user:bare")
    store_object(qm, ObjectType.MQDS_USER, None, (Property(P["PROPID_U_ID"], user),), PEC_PARTITION_ID, 1)
    return user, PEC_PARTITION_ID


@covers("MC-MQDSRP", "3.2.7.8")
def test_literal_an_object_without_any_change_column_value_yields_zeros_for_the_whole_column():
    """Literal: a user holding none of PROPID_U_SID/DIGEST/SIGN_CERT gives the three PROPIDs with zero values."""
    qm = psc_qm()
    user, ent = _bare_user(qm)
    [c] = lookup(qm, ObjectType.MQDS_USER, partition_id=ent, mode=Mode.LITERAL)
    assert (c.guid_identifier, c.properties) == (user, (
        Property(P["PROPID_U_SID"], b""), Property(P["PROPID_U_DIGEST"], ()), Property(P["PROPID_U_SIGN_CERT"], b"")))


@covers("MC-MQDSRP", "3.2.7.8")
def test_clarified_an_object_without_any_change_column_value_yields_its_first_propid_with_a_zero():
    """Clarified (E-124): never an empty sync change, whose type 3.1.1.4 could not tell; the column's first PROPID goes with a zero."""
    qm = psc_qm()
    user, ent = _bare_user(qm)
    [c] = lookup(qm, ObjectType.MQDS_USER, partition_id=ent)
    assert (c.guid_identifier, c.properties) == (user, (Property(P["PROPID_U_SID"], b""),))
    assert object_type_of(c.properties[0].propid) == ObjectType.MQDS_USER


@covers("MC-MQDSRP", "3.2.7.8")
def test_every_lookup_next_chunk_is_read_and_the_lookup_is_ended():
    """"Repeat ... until rNumberOfProperties ... is zero", then End Directory Lookup: more than one chunk, none open."""
    qm = psc_qm()
    count = DEFAULT_LOOKUP_CHUNK + 17
    for i in range(count):
        store_object(qm, ObjectType.MQDS_MACHINE, f"M{i}", machine_properties(f"M{i}", SITE1), SITE1, i + 1)
    changes = lookup(qm, ObjectType.MQDS_MACHINE, 1, count)
    assert [c.seq_number.value for c in changes] == list(range(1, count + 1))
    assert qm.directory.open_lookups == []


@covers("MC-MQDSRP", "3.2.7.8")
def test_an_empty_lookup_returns_no_changes_and_ends_the_lookup():
    """"Set rDirectoryChanges to empty": no object of the type gives an empty list."""
    qm = psc_qm()
    assert lookup(qm, ObjectType.MQDS_QUEUE) == []
    assert qm.directory.open_lookups == []


@covers("MC-MQDSRP", "3.2.7.8")
@pytest.mark.parametrize("object_type", list(REF_TABLE))
def test_the_reference_table_reads_sequence_and_identity_first_and_lists_each_propid_once(object_type):
    """refTable (E-123): LookupPropID starts with *_SEQNUM and the identity GUID; no PROPID repeats; all of the type."""
    lookup_names, change_names = REF_TABLE[object_type]
    assert lookup_names[0].endswith("_SEQNUM")
    assert PROPID_BY_VALUE[P[lookup_names[1]]].vartype.name == "VT_CLSID"
    for names in (lookup_names, change_names):
        assert len(set(names)) == len(names)
        assert {object_type_of(P[n]) for n in names} == {object_type}


@covers("MC-MQDSRP", "3.2.7.8")
def test_the_reference_table_covers_the_seven_object_types():
    """refTable has a row for each directory object type of 3.1.1.4."""
    assert set(REF_TABLE) == set(ObjectType)


@covers("MC-MQDSRP", "3.2.7.8")
def test_servers_with_equal_objects_share_one_sync_change_and_unequal_ones_do_not():
    """Two servers holding equal objects get one shared change value; another label or a bool quota gets its own."""
    first, second, other = site1_with_queues(), site1_with_queues(), site1_with_queues()
    other.directory.update(int(ObjectType.MQDS_QUEUE), "M1\\a", None, {P["PROPID_Q_LABEL"]: "other"}, None, None)
    shared, again, changed = (lookup(qm, ObjectType.MQDS_QUEUE) for qm in (first, second, other))
    assert all(a is b for a, b in zip(shared, again))
    assert changed[0] is not shared[0] and changed[0].property_value(P["PROPID_Q_LABEL"]) == "other"
    # True == 1, but a Property refuses a bool for a VT_UI1: the value a store holds by mistake is
    # refused as it always was, never answered with the change built for the equal integer
    flagged = site1_with_queues()
    flagged.directory.properties_of(QUEUE_A)[P["PROPID_Q_SCOPE"]] = True
    with pytest.raises(ModelError):
        lookup(flagged, ObjectType.MQDS_QUEUE)
