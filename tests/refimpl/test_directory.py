"""The modelled [MS-MQDS] local directory: object events, lookups, partition resets, determinism."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mqspec.model.errors import ModelError
from mqspec.model.guid import Guid
from mqspec.model.propids import PROPIDS, ObjectType
from mqspec.model.propvalue import Property
from mqspec.model.query import ColumnSet, PropertyRestriction, Relation, Restriction, SortKey, SortOrder, SortSet
from mqspec.model.seqnum import MIN_SEQ_NUMBER, SequenceNumber
from mqspec.refimpl.directory import (
    DirectoryObject,
    DirectoryStore,
    identity_propid,
    partition_propid,
    pathname_propid,
    seqnum_propid,
    type_name,
)
from mqspec.refimpl.status import (
    MQ_ERROR,
    MQ_ERROR_ILLEGAL_PROPID,
    MQ_OK,
    MQDS_OBJECT_EXISTS,
    MQDS_OBJECT_NOT_FOUND,
)

P = {name: pdef.propid for name, pdef in PROPIDS.items()}
Q, QM, SITE = ObjectType.MQDS_QUEUE, ObjectType.MQDS_MACHINE, ObjectType.MQDS_SITE
ENT, CN, USER, LINK = ObjectType.MQDS_ENTERPRISE, ObjectType.MQDS_CN, ObjectType.MQDS_USER, ObjectType.MQDS_ROUTINGLINK
SITE0, SITE1 = Guid.from_name("site0"), Guid.from_name("site1")


def seq(n: int) -> SequenceNumber:
    return SequenceNumber(n)


def add_queue(store, name, n, partition=SITE0, scope=None, extra=None):
    """Create queue ``name`` with sequence number ``n`` and return its GUID."""
    guid = Guid.from_name(name)
    props = {P["PROPID_Q_INSTANCE"]: guid, P["PROPID_Q_LABEL"]: name, **(extra or {})}
    if scope is not None:
        props[P["PROPID_Q_SCOPE"]] = scope
    assert store.create(Q, name, None, props, partition, seq(n)) == MQ_OK
    return guid


# --- helpers ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "object_type, identity, partition, seqnum, path",
    [
        (Q, "PROPID_Q_INSTANCE", "PROPID_Q_PARTITIONID", "PROPID_Q_SEQNUM", "PROPID_Q_PATHNAME"),
        (QM, "PROPID_QM_MACHINE_ID", "PROPID_QM_PARTITIONID", "PROPID_QM_SEQNUM", "PROPID_QM_PATHNAME"),
        (SITE, "PROPID_S_SITEID", "PROPID_S_PARTITIONID", "PROPID_S_SEQNUM", "PROPID_S_PATHNAME"),
        (CN, "PROPID_CN_GUID", "PROPID_CN_PARTITIONID", "PROPID_CN_SEQNUM", "PROPID_CN_NAME"),
        (ENT, "PROPID_E_ID", "PROPID_E_PARTITIONID", "PROPID_E_SEQNUM", "PROPID_E_NAME"),
        (USER, "PROPID_U_ID", "PROPID_U_PARTITIONID", "PROPID_U_SEQNUM", None),
        (LINK, "PROPID_L_ID", "PROPID_L_PARTITIONID", "PROPID_L_SEQNUM", None),
    ],
)
def test_per_type_propids(object_type, identity, partition, seqnum, path):
    """Each object type names its identity, partition, sequence-number and path-name PROPIDs."""
    assert identity_propid(object_type) == P[identity]
    assert partition_propid(object_type) == P[partition]
    assert seqnum_propid(object_type) == P[seqnum]
    assert pathname_propid(object_type) == (P[path] if path else None)


def test_helpers_answer_none_for_an_unknown_type():
    """A type outside 3.1.1.4's table has no identity, partition or sequence-number PROPID."""
    assert identity_propid(4) is None and partition_propid(4) is None and seqnum_propid(4) is None
    assert type_name(LINK) == "routinglink" and type_name(4) == "4"


# --- Create Directory Object -----------------------------------------------------------------


def test_create_then_find_by_guid_and_by_path_ignoring_case():
    """A created queue is found by its GUID and by its path name in any letter case."""
    store = DirectoryStore()
    guid = add_queue(store, r"Machine1\Orders", 7)
    obj = store.find(guid=guid)
    assert obj is store.find(path_name=r"MACHINE1\orders", object_type=Q)
    assert (obj.object_type, obj.path_name, obj.partition_id, obj.seq_number) == (Q, r"Machine1\Orders", SITE0, seq(7))


def test_find_needs_the_right_type_and_a_locator():
    """find() misses an object of another type, a path without a type, and a call with no locator."""
    store = DirectoryStore()
    guid = add_queue(store, "q", 1)
    assert store.find(guid=guid, object_type=QM) is None
    assert store.find(path_name="q") is None
    assert store.find(path_name="q", object_type=QM) is None
    assert store.find() is None


@pytest.mark.parametrize("object_type", list(ObjectType))
def test_create_derives_the_guid_from_the_identity_property(object_type):
    """Without a GUID argument the object takes the value of its type's identity property."""
    store = DirectoryStore()
    guid = Guid.from_name(f"object-{object_type}")
    status = store.create(object_type, None, None, {identity_propid(object_type): guid}, SITE0, seq(3))
    assert status == MQ_OK and store.find(guid=guid).object_type == object_type
    assert json.loads(json.dumps(store.snapshot()))[str(guid)]["type"] == type_name(object_type)


def test_create_without_any_identity_is_mq_error():
    """No GUID argument and no identity property leaves nothing to identify the object: MQ_ERROR."""
    store = DirectoryStore()
    assert store.create(Q, "q", None, {P["PROPID_Q_LABEL"]: "q"}, SITE0, seq(1)) == MQ_ERROR
    assert len(store) == 0


def test_create_of_an_unknown_object_type_is_mq_error():
    """An object type outside 3.1.1.4's table cannot be created."""
    assert DirectoryStore().create(4, "x", Guid.from_name("x"), {}, SITE0, seq(1)) == MQ_ERROR


def test_create_with_a_taken_guid_is_object_exists():
    """A second object with the same GUID is refused with MQDS_OBJECT_EXISTS and changes nothing."""
    store = DirectoryStore()
    guid = add_queue(store, "q", 1)
    before = store.copy()
    assert store.create(Q, "other", guid, {}, SITE0, seq(2)) == MQDS_OBJECT_EXISTS
    assert store.create(QM, "m", guid, {}, SITE0, seq(2)) == MQDS_OBJECT_EXISTS
    assert store == before


def test_create_with_a_taken_path_is_object_exists_in_any_case():
    """A second queue whose path differs only in letter case is refused with MQDS_OBJECT_EXISTS."""
    store = DirectoryStore()
    add_queue(store, r"m\Q", 1)
    assert store.create(Q, r"M\q", Guid.from_name("x"), {}, SITE0, seq(2)) == MQDS_OBJECT_EXISTS
    # the same path is free for another object type
    assert store.create(QM, r"M\q", Guid.from_name("x"), {}, SITE0, seq(2)) == MQ_OK


def test_create_maintains_identity_partition_seqnum_and_path_properties():
    """The store writes the identity, partition, 8-byte big-endian SEQNUM blob and path-name properties."""
    store = DirectoryStore()
    guid = Guid.from_name("m1")
    stale = {P["PROPID_QM_PARTITIONID"]: SITE1, P["PROPID_QM_SEQNUM"]: b"\x01", P["PROPID_QM_PATHNAME"]: "old"}
    assert store.create(QM, "M1", guid, stale, SITE0, seq(0x0102)) == MQ_OK
    props = store.properties_of(guid)
    assert props[P["PROPID_QM_MACHINE_ID"]] == guid
    assert props[P["PROPID_QM_PARTITIONID"]] == SITE0
    assert props[P["PROPID_QM_SEQNUM"]] == bytes([0, 0, 0, 0, 0, 0, 1, 2])
    assert props[P["PROPID_QM_PATHNAME"]] == "M1" and store.find(guid=guid).path_name == "M1"


def test_create_takes_the_path_from_its_property_when_no_path_is_given():
    """With no path argument a site takes its path name from PROPID_S_PATHNAME."""
    store = DirectoryStore()
    props = {P["PROPID_S_SITEID"]: SITE1, P["PROPID_S_PATHNAME"]: "Site1"}
    assert store.create(SITE, None, None, props, Guid.NULL, seq(1)) == MQ_OK
    assert store.find(path_name="SITE1", object_type=SITE).guid == SITE1


def test_create_gives_users_and_routing_links_no_path():
    """Users and routing links are named by GUID only; a path argument is not kept."""
    store = DirectoryStore()
    guid = Guid.from_name("link")
    assert store.create(LINK, "ignored", guid, {P["PROPID_L_COST"]: 1}, SITE0, seq(1)) == MQ_OK
    assert store.find(guid=guid).path_name is None
    assert store.find(path_name="ignored", object_type=LINK) is None


def test_create_with_another_types_propid_is_illegal_propid():
    """A machine property on a queue is refused with MQ_ERROR_ILLEGAL_PROPID (3.1.1.4 type of a PROPID)."""
    store = DirectoryStore()
    props = {P["PROPID_Q_INSTANCE"]: Guid.from_name("q"), P["PROPID_QM_SERVICE"]: 2}
    assert store.create(Q, "q", None, props, SITE0, seq(1)) == MQ_ERROR_ILLEGAL_PROPID
    assert len(store) == 0


def test_create_accepts_property_items_as_a_directory_change_carries_them():
    """Properties may be given as Property(propid, value) items instead of a dict."""
    store = DirectoryStore()
    guid = Guid.from_name("q")
    items = (Property(P["PROPID_Q_INSTANCE"], guid), Property(P["PROPID_Q_QUOTA"], 10))
    assert store.create(Q, "q", None, items, SITE0, seq(1)) == MQ_OK
    assert store.properties_of(guid)[P["PROPID_Q_QUOTA"]] == 10


def test_create_with_wrong_argument_types_is_a_model_error():
    """A partition that is not a Guid or a sequence number that is not a SequenceNumber is a bad model use."""
    store = DirectoryStore()
    with pytest.raises(ModelError):
        store.create(Q, "q", Guid.from_name("q"), {}, SITE0, 5)
    with pytest.raises(ModelError):
        store.create(Q, "q", Guid.from_name("q"), {}, str(SITE0), seq(5))


# --- Update Directory Object -----------------------------------------------------------------


def test_update_merges_properties_and_sets_partition_and_sequence():
    """Update keeps the other properties, overwrites the given ones and moves partition and sequence."""
    store = DirectoryStore()
    guid = add_queue(store, "q", 1)
    assert store.update(Q, None, guid, {P["PROPID_Q_QUOTA"]: 9}, SITE1, seq(0x1_0000_0000)) == MQ_OK
    obj = store.find(guid=guid)
    assert obj.properties[P["PROPID_Q_QUOTA"]] == 9 and obj.properties[P["PROPID_Q_LABEL"]] == "q"
    assert (obj.partition_id, obj.seq_number) == (SITE1, seq(0x1_0000_0000))
    assert obj.properties[P["PROPID_Q_SEQNUM"]] == (0x1_0000_0000).to_bytes(8, "big")
    assert obj.properties[P["PROPID_Q_PARTITIONID"]] == SITE1


def test_update_finds_the_object_by_path_or_by_identity_property():
    """Update locates by GUID, else path name (any case), else the identity property it carries."""
    store = DirectoryStore()
    guid = add_queue(store, "Q", 1)
    assert store.update(Q, "q", None, {P["PROPID_Q_QUOTA"]: 1}, SITE0, seq(2)) == MQ_OK
    assert store.update(Q, None, None, {P["PROPID_Q_INSTANCE"]: guid, P["PROPID_Q_QUOTA"]: 2}, None, None) == MQ_OK
    obj = store.find(guid=guid)
    assert obj.properties[P["PROPID_Q_QUOTA"]] == 2 and obj.seq_number == seq(2)


def test_update_of_an_absent_object_is_not_found():
    """Updating a GUID, path or type that the store does not hold is MQDS_OBJECT_NOT_FOUND."""
    store = DirectoryStore()
    guid = add_queue(store, "q", 1)
    assert store.update(Q, None, Guid.from_name("nope"), {}, SITE0, seq(2)) == MQDS_OBJECT_NOT_FOUND
    assert store.update(Q, "nope", None, {}, SITE0, seq(2)) == MQDS_OBJECT_NOT_FOUND
    assert store.update(QM, None, guid, {}, SITE0, seq(2)) == MQDS_OBJECT_NOT_FOUND
    assert store.find(guid=guid).seq_number == seq(1)


def test_update_without_any_locator_or_of_an_unknown_type_is_mq_error():
    """Nothing naming the object, or a type outside 3.1.1.4, makes Update fail with MQ_ERROR."""
    store = DirectoryStore()
    add_queue(store, "q", 1)
    assert store.update(Q, None, None, {P["PROPID_Q_QUOTA"]: 1}, SITE0, seq(2)) == MQ_ERROR
    assert store.update(4, "q", None, {}, SITE0, seq(2)) == MQ_ERROR


def test_update_with_a_new_path_property_renames_the_object():
    """A new PROPID_Q_PATHNAME moves the object in the path index; a taken name is MQDS_OBJECT_EXISTS."""
    store = DirectoryStore()
    guid = add_queue(store, "a", 1)
    add_queue(store, "b", 2)
    assert store.update(Q, None, guid, {P["PROPID_Q_PATHNAME"]: "B"}, SITE0, seq(3)) == MQDS_OBJECT_EXISTS
    assert store.update(Q, None, guid, {P["PROPID_Q_PATHNAME"]: "c"}, SITE0, seq(3)) == MQ_OK
    assert store.find(path_name="a", object_type=Q) is None
    assert store.find(path_name="C", object_type=Q).guid == guid
    assert store.create(Q, "a", Guid.from_name("a2"), {}, SITE0, seq(4)) == MQ_OK


def test_update_cannot_change_an_objects_identity_or_add_foreign_propids():
    """An identity property naming another GUID is MQ_ERROR; another type's PROPID is MQ_ERROR_ILLEGAL_PROPID."""
    store = DirectoryStore()
    guid = add_queue(store, "q", 1)
    before = store.copy()
    assert store.update(Q, None, guid, {P["PROPID_Q_INSTANCE"]: Guid.from_name("x")}, SITE0, seq(2)) == MQ_ERROR
    assert store.update(Q, None, guid, {P["PROPID_S_PSC"]: "psc"}, SITE0, seq(2)) == MQ_ERROR_ILLEGAL_PROPID
    assert store == before


def test_update_keeps_the_maintained_properties():
    """Caller values for the SEQNUM and PARTITIONID properties are replaced by the object's own."""
    store = DirectoryStore()
    guid = add_queue(store, "q", 1)
    store.update(Q, None, guid, {P["PROPID_Q_SEQNUM"]: b"\xff" * 8, P["PROPID_Q_PARTITIONID"]: SITE1}, None, seq(4))
    props = store.properties_of(guid)
    assert props[P["PROPID_Q_SEQNUM"]] == seq(4).to_bytes() and props[P["PROPID_Q_PARTITIONID"]] == SITE0


# --- Delete / Read Directory Object ----------------------------------------------------------


def test_delete_returns_the_removed_object_and_frees_its_path():
    """Delete removes the object, returns it, and lets its path name be created again."""
    store = DirectoryStore()
    guid = add_queue(store, "Q", 1)
    status, removed = store.delete(Q, "q", None)
    assert status == MQ_OK and isinstance(removed, DirectoryObject) and removed.guid == guid
    assert store.find(guid=guid) is None and len(store) == 0
    assert store.create(Q, "q", guid, {}, SITE0, seq(2)) == MQ_OK


def test_delete_of_an_absent_object_is_not_found():
    """Deleting what the store does not hold is MQDS_OBJECT_NOT_FOUND; with no locator it is MQ_ERROR."""
    store = DirectoryStore()
    guid = add_queue(store, "q", 1)
    assert store.delete(Q, None, Guid.from_name("nope")) == (MQDS_OBJECT_NOT_FOUND, None)
    assert store.delete(USER, None, guid) == (MQDS_OBJECT_NOT_FOUND, None)
    assert store.delete(Q, None, None) == (MQ_ERROR, None)
    assert len(store) == 1


def test_read_returns_values_in_the_order_asked_with_none_for_missing():
    """Read returns each requested property value in order, None where the object lacks one."""
    store = DirectoryStore()
    guid = add_queue(store, "q", 9)
    propids = [P["PROPID_Q_SEQNUM"], P["PROPID_Q_INSTANCE"], P["PROPID_Q_JOURNAL"], P["PROPID_Q_LABEL"]]
    assert store.read(Q, "Q", None, propids) == (MQ_OK, [seq(9).to_bytes(), guid, None, "q"])
    assert store.read(Q, None, guid, []) == (MQ_OK, [])


def test_read_of_an_absent_object_or_foreign_propid_fails():
    """Read reports MQDS_OBJECT_NOT_FOUND for an absent object and MQ_ERROR_ILLEGAL_PROPID for another type's PROPID."""
    store = DirectoryStore()
    guid = add_queue(store, "q", 1)
    assert store.read(Q, "nope", None, [P["PROPID_Q_LABEL"]]) == (MQDS_OBJECT_NOT_FOUND, [])
    assert store.read(Q, None, guid, [P["PROPID_QM_SERVICE"]]) == (MQ_ERROR_ILLEGAL_PROPID, [])


# --- Begin / Next / End Directory Lookup (the restriction 3.2.7.8 builds) --------------------


def restriction_3_2_7_8(object_type, partition, from_seq, to_seq, scope=None):
    """The MQRESTRICTION of 3.2.7.8 for ``object_type``: PREQ partition, PRGE and PRLE on the SEQNUM blob."""
    rows = [
        PropertyRestriction.of(Relation.PREQ, partition_propid(object_type), partition),
        PropertyRestriction.of(Relation.PRGE, seqnum_propid(object_type), seq(from_seq).to_bytes()),
        PropertyRestriction.of(Relation.PRLE, seqnum_propid(object_type), seq(to_seq).to_bytes()),
    ]
    if scope == 0x01:  # "If iScope is 0x01: [PREQ, PROPID_Q_SCOPE, PV(0x01)]"
        rows.append(PropertyRestriction.of(Relation.PREQ, P["PROPID_Q_SCOPE"], 0x01))
    return Restriction(rows)


def read_all(store, handle, chunk=100):
    """Call Lookup Directory Next until it returns nothing, as 3.2.7.8 repeats it."""
    rows = []
    while batch := store.lookup_next(handle, chunk):
        rows.extend(batch)
    return rows


QUEUE_COLUMNS = ColumnSet([P["PROPID_Q_SEQNUM"], P["PROPID_Q_INSTANCE"], P["PROPID_Q_SCOPE"], P["PROPID_Q_PATHNAME"]])


def test_lookup_selects_the_partitions_queues_in_the_sequence_window():
    """PREQ partition with PRGE/PRLE on SEQNUM blobs selects by sequence number, not by byte length or type."""
    store = DirectoryStore()
    values = {"ff": 0xFF, "100": 0x100, "2^32": 1 << 32, "2^63": 1 << 63, "max": (1 << 64) - 1}
    guids = {name: add_queue(store, name, n) for name, n in values.items()}
    add_queue(store, "elsewhere", 0x200, partition=SITE1)
    store.create(QM, "m", Guid.from_name("m"), {}, SITE0, seq(0x300))  # in range, but not a queue
    handle = store.begin_lookup(restriction_3_2_7_8(Q, SITE0, 0x100, 1 << 63), QUEUE_COLUMNS)
    rows = read_all(store, handle)
    assert store.end_lookup(handle) == MQ_OK
    assert [row[1] for row in rows] == [guids["100"], guids["2^32"], guids["2^63"]]
    assert rows[0] == [seq(0x100).to_bytes(), guids["100"], None, "100"]  # no PROPID_Q_SCOPE: None


def test_lookup_with_scope_0x01_keeps_only_enterprise_scope_queues():
    """The extra [PREQ, PROPID_Q_SCOPE, PV(0x01)] drops site-scope queues and queues without a scope."""
    store = DirectoryStore()
    ent = add_queue(store, "ent", 1, scope=1)
    add_queue(store, "site", 2, scope=0)
    add_queue(store, "none", 3)
    handle = store.begin_lookup(restriction_3_2_7_8(Q, SITE0, 0, (1 << 64) - 1, scope=0x01), QUEUE_COLUMNS)
    assert read_all(store, handle) == [[seq(1).to_bytes(), ent, 1, "ent"]]


def test_lookup_of_sites_in_the_enterprise_partition():
    """A site lookup returns PROPID_S_SEQNUM then PROPID_S_SITEID for each site of the partition."""
    store = DirectoryStore()
    for name, n in (("Site1", 4), ("Site0", 2)):
        store.create(SITE, name, None, {P["PROPID_S_SITEID"]: Guid.from_name(name)}, Guid.NULL, seq(n))
    cols = [P["PROPID_S_SEQNUM"], P["PROPID_S_SITEID"], P["PROPID_S_PATHNAME"]]
    handle = store.begin_lookup(restriction_3_2_7_8(SITE, Guid.NULL, 0, 10), cols)
    assert read_all(store, handle) == [
        [seq(2).to_bytes(), Guid.from_name("Site0"), "Site0"],
        [seq(4).to_bytes(), Guid.from_name("Site1"), "Site1"],
    ]


def test_lookup_orders_by_sequence_then_guid_and_reads_in_chunks():
    """Rows come by ascending sequence number, GUID breaking ties, max_objects at a time, then empty."""
    store = DirectoryStore()
    guids = [add_queue(store, f"q{i}", i % 3) for i in range(7)]
    expected = sorted(guids, key=lambda g: (store.find(guid=g).seq_number, g.bytes_le))
    handle = store.begin_lookup(Restriction(), [P["PROPID_Q_INSTANCE"]])
    sizes = []
    while batch := store.lookup_next(handle, max_objects=3):
        sizes.append(len(batch))
    assert sizes == [3, 3, 1] and store.lookup_next(handle) == []
    handle = store.begin_lookup(None, ColumnSet([P["PROPID_Q_INSTANCE"]]))
    assert [row[0] for row in read_all(store, handle)] == expected


def test_lookup_with_a_sort_set_orders_by_it_and_breaks_ties_by_sequence():
    """A descending MQSORTSET key orders the rows; equal keys keep (sequence, GUID) order."""
    store = DirectoryStore()
    a = add_queue(store, "a", 1, extra={P["PROPID_Q_QUOTA"]: 5})
    b = add_queue(store, "b", 2, extra={P["PROPID_Q_QUOTA"]: 9})
    c = add_queue(store, "c", 0, extra={P["PROPID_Q_QUOTA"]: 5})
    sort = SortSet([SortKey(P["PROPID_Q_QUOTA"], SortOrder.QUERY_SORTDESCEND)])
    handle = store.begin_lookup(Restriction(), [P["PROPID_Q_INSTANCE"]], sort=sort)
    assert [row[0] for row in read_all(store, handle)] == [b, c, a]


def test_lookup_is_a_snapshot_taken_at_begin():
    """Objects created or deleted after Begin Directory Lookup do not change its rows."""
    store = DirectoryStore()
    a = add_queue(store, "a", 1)
    handle = store.begin_lookup(None, [P["PROPID_Q_INSTANCE"]], object_type=Q)
    store.delete(Q, "a", None)
    add_queue(store, "b", 2)
    assert read_all(store, handle) == [[a]]


def test_lookup_descriptors_are_checked():
    """An unknown descriptor or a non-positive chunk is bad model use; End reports MQ_ERROR when not open."""
    store = DirectoryStore()
    handle = store.begin_lookup(None, [])
    assert store.open_lookups == [handle]
    with pytest.raises(ModelError):
        store.lookup_next(handle, 0)
    assert store.end_lookup(handle) == MQ_OK and store.end_lookup(handle) == MQ_ERROR
    assert store.open_lookups == []
    with pytest.raises(ModelError):
        store.lookup_next(handle)


def test_lookup_after_reset_operation_1_sees_min_seq_number():
    """After operation 1 a lookup from MIN_SEQ_NUMBER to MIN_SEQ_NUMBER finds every object of the partition."""
    store = DirectoryStore()
    guids = [add_queue(store, f"q{i}", 5 + i) for i in range(3)]
    store.reset_partition(SITE0, 1)
    handle = store.begin_lookup(restriction_3_2_7_8(Q, SITE0, 0, 0), [P["PROPID_Q_INSTANCE"]])
    assert sorted(row[0] for row in read_all(store, handle)) == sorted(guids)


# --- Reset Directory Partition ---------------------------------------------------------------


def test_reset_operation_1_marks_only_the_partitions_objects():
    """Operation 1 sets the sequence number (and SEQNUM blob) of every object of the partition to MIN_SEQ_NUMBER."""
    store = DirectoryStore()
    mine = [add_queue(store, f"q{i}", 10 + i) for i in range(3)]
    other = add_queue(store, "other", 50, partition=SITE1)
    assert store.reset_partition(SITE0, 1) == MQ_OK
    for guid in mine:
        obj = store.find(guid=guid)
        assert obj.seq_number == MIN_SEQ_NUMBER and obj.properties[P["PROPID_Q_SEQNUM"]] == bytes(8)
    assert store.find(guid=other).seq_number == seq(50)


def test_reset_operation_2_deletes_the_marked_objects_of_the_partition():
    """Operation 2 deletes the partition's objects still at MIN_SEQ_NUMBER and keeps the rest."""
    store = DirectoryStore()
    add_queue(store, "a", 1)
    b = add_queue(store, "b", 2)
    other = add_queue(store, "other", 0, partition=SITE1)
    store.reset_partition(SITE0, 1)
    store.update(Q, None, b, {}, SITE0, seq(7))  # b is synchronized again during sync0
    assert store.reset_partition(SITE0, 2) == MQ_OK
    assert [o.guid for o in store.objects_in(SITE0)] == [b]
    assert store.find(path_name="a", object_type=Q) is None
    assert store.find(guid=other) is not None  # another partition's MIN object stays


def test_reset_with_another_operation_is_mq_error():
    """Operations other than 1 and 2 fail with MQ_ERROR and change nothing."""
    store = DirectoryStore()
    add_queue(store, "a", 1)
    before = store.copy()
    assert store.reset_partition(SITE0, 0) == MQ_ERROR and store.reset_partition(SITE0, 3) == MQ_ERROR
    assert store == before


# --- views, copies, determinism -----------------------------------------------------------


def test_objects_in_lists_a_partition_by_sequence_then_guid():
    """objects_in returns one partition's objects by ascending sequence number, GUID breaking ties."""
    store = DirectoryStore()
    c = add_queue(store, "c", 5)
    a = add_queue(store, "a", 5)
    b = add_queue(store, "b", 1)
    add_queue(store, "z", 0, partition=SITE1)
    tie = sorted([a, c], key=lambda g: g.bytes_le)
    assert [o.guid for o in store.objects_in(SITE0)] == [b, *tie]


def test_snapshot_is_json_ready_and_sorted():
    """The snapshot maps GUID text to type, path, sequence number and partition, sorted by GUID."""
    store = DirectoryStore()
    guid = add_queue(store, "q", 3)
    store.create(ENT, "Ent", Guid.NULL, {}, Guid.NULL, seq(1))
    snap = store.snapshot()
    assert list(snap) == sorted(snap)
    assert json.loads(json.dumps(snap)) == snap
    assert snap[str(guid)] == {"type": "queue", "path": "q", "seq": 3, "partition": str(SITE0)}
    assert snap[str(Guid.NULL)]["type"] == "enterprise"


def test_copy_is_deep_and_compares_equal():
    """A copy equals the original and does not change when the original does."""
    store = DirectoryStore()
    guid = add_queue(store, "q", 1)
    twin = store.copy()
    assert twin == store and twin is not store
    store.update(Q, None, guid, {P["PROPID_Q_QUOTA"]: 3}, SITE0, seq(2))
    assert twin != store
    assert P["PROPID_Q_QUOTA"] not in twin.properties_of(guid) and twin.find(guid=guid).seq_number == seq(1)
    assert twin.find(path_name="Q", object_type=Q).guid == guid
    assert store != object() and DirectoryStore() == DirectoryStore()


def test_copy_carries_open_lookups_independently():
    """An open lookup continues in the copy without advancing the original's."""
    store = DirectoryStore()
    guids = [add_queue(store, f"q{i}", i) for i in range(3)]
    handle = store.begin_lookup(None, [P["PROPID_Q_INSTANCE"]])
    assert store.lookup_next(handle, 1) == [[guids[0]]]
    twin = store.copy()
    assert twin.lookup_next(handle) == [[guids[1]], [guids[2]]]
    assert store.lookup_next(handle, 1) == [[guids[1]]]


_OPS = st.lists(
    st.tuples(st.integers(0, 7), st.integers(0, 40), st.sampled_from([SITE0, SITE1])), max_size=24
)


@settings(max_examples=60)
@given(_OPS)
def test_the_same_objects_in_any_creation_order_give_the_same_store(ops):
    """Creating the same objects in reverse order gives an equal store, snapshot and partition listing."""
    def build(order):
        store = DirectoryStore()
        for i, n, partition in order:
            store.create(Q, f"q{i}", None, {P["PROPID_Q_INSTANCE"]: Guid.from_name(f"q{i}")}, partition, seq(n))
        return store

    unique = list({i: (i, n, p) for i, n, p in ops}.values())
    forward, backward = build(unique), build(unique[::-1])
    assert forward == backward and forward.snapshot() == backward.snapshot()
    for partition in (SITE0, SITE1):
        assert [o.guid for o in forward.objects_in(partition)] == [o.guid for o in backward.objects_in(partition)]


_CHANGES = st.lists(
    st.tuples(
        st.sampled_from(["create", "update", "delete", "reset1", "reset2"]), st.integers(0, 5),
        st.integers(0, 9), st.sampled_from([SITE0, SITE1, None]), st.booleans(),
    ),
    max_size=30,
)


@settings(max_examples=80)
@given(_CHANGES)
def test_the_partition_index_and_digest_follow_every_change(changes):
    """After any creates, updates (renames, moves, new sequence), deletes and resets, a partition's objects and digest are those of its objects."""
    store, empty = DirectoryStore(), DirectoryStore()
    for operation, i, n, partition, rename in changes:
        if operation == "create":
            store.create(Q, f"q{i}", None, {P["PROPID_Q_INSTANCE"]: Guid.from_name(f"q{i}")}, partition or SITE0, seq(n))
        elif operation == "update":
            new = {P["PROPID_Q_PATHNAME"]: f"r{i}{n}"} if rename else {P["PROPID_Q_LABEL"]: str(n)}
            store.update(Q, None, Guid.from_name(f"q{i}"), new, partition, seq(n) if n % 3 else None)
        elif operation == "delete":
            store.delete(Q, None, Guid.from_name(f"q{i}"))
        else:
            store.reset_partition(partition or SITE1, int(operation[-1]))
        for pid in (SITE0, SITE1):
            held = sorted((o for o in store.objects.values() if o.partition_id == pid), key=lambda o: o.sort_key())
            assert store.objects_in(pid) == held
            # the digest of a fresh store holding copies of exactly these objects
            rebuilt = DirectoryStore()
            for o in held:
                rebuilt.create(Q, o.path_name, o.guid, {}, pid, o.seq_number)
            assert store.partition_digest(pid) == rebuilt.partition_digest(pid)
    assert empty.partition_digest(SITE0) == 0


def test_replicas_of_one_change_share_properties_until_one_changes():
    """Stores created from one tuple of Property values share one properties dict; an update, a reset or properties_of copies it first."""
    guid = Guid.from_name("shared")
    props = (Property(P["PROPID_Q_INSTANCE"], guid), Property(P["PROPID_Q_LABEL"], "one"))
    stores = [DirectoryStore() for _ in range(4)]
    for store in stores:
        assert store.create(Q, "m\\q", None, props, SITE0, seq(3)) == MQ_OK
    first, updated, reset, asked = (store.objects[guid] for store in stores)
    assert all(o.properties is first.properties for o in (updated, reset, asked))
    stores[1].update(Q, None, guid, {P["PROPID_Q_LABEL"]: "two"}, None, seq(4))
    stores[2].reset_partition(SITE0, 1)
    stores[3].properties_of(guid)[P["PROPID_Q_LABEL"]] = "mine"
    assert first.properties[P["PROPID_Q_LABEL"]] == "one" and first.properties[P["PROPID_Q_SEQNUM"]] == seq(3).to_bytes()
    assert updated.properties[P["PROPID_Q_LABEL"]] == "two" and updated.properties[P["PROPID_Q_SEQNUM"]] == seq(4).to_bytes()
    assert reset.properties[P["PROPID_Q_SEQNUM"]] == MIN_SEQ_NUMBER.to_bytes()
    assert asked.properties[P["PROPID_Q_LABEL"]] == "mine"
    plain = DirectoryStore()  # from a list: nothing shared, and an equal store
    plain.create(Q, "m\\q", None, list(props), SITE0, seq(3))
    assert stores[0] == plain and not plain.objects[guid].shared and stores[0] != stores[1]


def test_one_tuple_of_properties_with_other_arguments_gives_each_its_own_object():
    """A tuple of Property values created with another partition, sequence number or name makes the object of those arguments."""
    guid = Guid.from_name("again")
    props = (Property(P["PROPID_Q_INSTANCE"], guid), Property(P["PROPID_Q_LABEL"], "one"))
    made = []
    for partition, n, path in [(SITE0, 3, "m\\q"), (SITE0, 3, "m\\q"), (SITE1, 3, "m\\q"), (SITE0, 4, "m\\q"),
                               (SITE0, 3, "m\\r")]:
        store = DirectoryStore()
        assert store.create(Q, path, None, props, partition, seq(n)) == MQ_OK
        plain = DirectoryStore()
        plain.create(Q, path, None, list(props), partition, seq(n))
        assert store == plain
        made.append(store.objects[guid])
    assert made[0].properties is made[1].properties and made[1].properties is not made[2].properties
