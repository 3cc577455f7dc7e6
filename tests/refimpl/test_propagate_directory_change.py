"""MC-MQDSRP 3.1.7.1.2 Propagate Directory Change: at the authority, follow the change and queue it for every neighbor."""

import pytest
from mqspec.model.mqdsrp import Command, DirectoryChange
from mqspec.model.propvalue import Property
from mqspec.refimpl import status as st
from mqspec.refimpl.effects import Mode, StartTimer, TimerKey
from mqspec.refimpl.mqdsrp_common import propagate_directory_change
from mqspec.refimpl.mqdsrp_state import PEC_PARTITION_ID

from mqspec.clauses import covers

from .mqdsrp_fixtures import (
    BSC,
    CN,
    ENT,
    ENTERPRISE,
    MODES,
    PEC,
    PSC,
    QUEUE,
    SCOPE_ENTERPRISE,
    SITE,
    SITE0,
    SITE1,
    SITE2,
    USER,
    DirectoryNeighbor,
    DirectoryPartition,
    P,
    add_object,
    bsc_node,
    context,
    delete_props,
    dir_ops,
    enterprise_props,
    guid_of,
    messages,
    pec_node,
    psc_node,
    queue_props,
    seq,
    site_props,
    timers,
    tombstone,
    user_props,
)

BSC01 = "BSC01"


def _pec(last=4, purged=2):
    """PEC0 with PSC1 as PSC neighbor and BSC01 as BSC neighbor; the enterprise partition at ``last``."""
    qm = pec_node()
    qm.psc_neighbors = [DirectoryNeighbor(SITE1, PSC)]
    qm.bsc_neighbors = [DirectoryNeighbor(SITE0, BSC01)]
    ent = qm.my_enterprise_partition
    ent.last_seq_number, ent.purged_seq_number = seq(last), seq(purged)
    return qm


def _propagate(qm, mode=Mode.CLARIFIED, *, operation=0x00, object_type=QUEUE, path="q1", guid=None, partition=ENT,
               properties=None, at=5):
    ctx = context(qm, mode)
    props = queue_props("q1", guid_of("q1")) if properties is None else tuple(properties)
    propagate_directory_change(qm, ctx, operation, int(object_type), path, guid, partition, props, seq(at))
    return ctx


def _queued(qm):
    return [(n.machine_name, n.available_changes) for n in (*qm.psc_neighbors, *qm.bsc_neighbors)]


@covers("MC-MQDSRP", "3.1.7.1.2")
@pytest.mark.parametrize("mode", MODES)
def test_pec_queues_an_enterprise_change_for_every_neighbor(mode):
    """dirChange (Command, PathName, PreviousSeqNumber := LastSeqNumber, SeqNumber := iSeqNumber) goes to every PSC and BSC neighbor; LastSeqNumber := iSeqNumber."""
    qm = _pec(last=4, purged=2)
    ctx = _propagate(qm, mode)
    # clarification E-103: PurgedSeqNumber is the partition's purged sequence number, not iSeqNumber
    purged = seq(2) if mode is Mode.CLARIFIED else seq(5)
    expected = DirectoryChange(Command.CREATE, ENT, seq(4), seq(5), purged, queue_props("q1", guid_of("q1")),
                               path_name="q1")
    assert _queued(qm) == [(PSC, [expected]), (BSC01, [expected])]
    assert qm.my_enterprise_partition.last_seq_number == seq(5)
    assert ctx.effects == []  # iPostCreate true: no directory operation, nothing sent yet


@covers("MC-MQDSRP", "3.1.7.1.2")
def test_each_change_names_the_previous_one():
    """PreviousSeqNumber := dirPartition.LastSeqNumber chains successive changes of the partition."""
    qm = _pec(last=4)
    _propagate(qm, at=5)
    _propagate(qm, path="q2", properties=queue_props("q2"), at=6)
    chain = [(c.previous_seq_number, c.seq_number) for c in qm.psc_neighbors[0].available_changes]
    assert chain == [(seq(4), seq(5)), (seq(5), seq(6))]


@covers("MC-MQDSRP", "3.1.7.1.2")
def test_psc_propagates_changes_of_its_site_partition():
    """"Else if the queue manager is a PSC, QueueManager.MySitePartition is initialized, and iPartitionID is equal to" its PartitionID."""
    qm = psc_node()
    qm.bsc_neighbors = [DirectoryNeighbor(SITE1, BSC)]
    _propagate(qm, partition=SITE1, at=1)
    assert [c.seq_number for c in qm.bsc_neighbors[0].available_changes] == [seq(1)]
    assert qm.my_site_partition.last_seq_number == seq(1)


@covers("MC-MQDSRP", "3.1.7.1.2")
def test_pec_propagates_changes_of_its_own_site_partition():
    """A PEC is also a PSC (1.3.1.1): changes of its own site partition are propagated too."""
    qm = _pec()
    _propagate(qm, partition=SITE0, at=1)
    assert qm.my_site_partition.last_seq_number == seq(1)
    assert [c.partition_id for c in qm.bsc_neighbors[0].available_changes] == [SITE0]


@covers("MC-MQDSRP", "3.1.7.1.2")
@pytest.mark.parametrize(("node", "partition"), [("psc", ENT), ("bsc", SITE1), ("bsc", ENT), ("pec", SITE2),
                                                 ("psc-without-site", SITE1)])
def test_partition_this_server_does_not_own_takes_no_action(node, partition):
    """"Else Take no further action": a replica's partition, a BSC, or a PSC whose MySitePartition is uninitialized."""
    qm = {"psc": psc_node, "bsc": bsc_node, "pec": _pec,
          "psc-without-site": lambda: psc_node(site_partition=False)}[node]()
    qm.bsc_neighbors = [DirectoryNeighbor(SITE1, "BSC12")]
    before = [(p.partition_id, p.last_seq_number) for p in qm.partitions]
    ctx = _propagate(qm, partition=partition)
    assert ctx.effects == []
    assert [(p.partition_id, p.last_seq_number) for p in qm.partitions] == before
    assert qm.bsc_neighbors[0].available_changes == []


@covers("MC-MQDSRP", "3.1.7.1.2")
def test_site_create_makes_the_new_psc_a_neighbor_that_also_gets_the_change():
    """Create: Handle Directory Create (iPostCreate true) runs first, so the new PSC neighbor receives dirChange too."""
    qm = _pec()
    qm.psc_neighbors = []
    ctx = _propagate(qm, object_type=SITE, path="site2", properties=site_props("site2", SITE2, "PSC2"))
    assert [n.machine_name for n in qm.psc_neighbors] == ["PSC2"]
    assert [c.path_name for c in qm.psc_neighbors[0].available_changes] == ["site2"]
    assert qm.find_partition(SITE2).authority_name == "PSC2"
    assert StartTimer(PEC, TimerKey("change_propagation", ("PSC2", "Intersite")), 10.0) in timers(ctx)
    assert [m.destination for m in messages(ctx)] == ["PSC2"]  # Send Sync Request for the new partition


@covers("MC-MQDSRP", "3.1.7.1.2")
def test_update_follows_the_object_and_is_queued():
    """Update: Handle Directory Update (iPostUpdate true) follows an enterprise PEC rename, then the change is queued."""
    qm = _pec()
    props = (Property(P["PROPID_E_PECNAME"], "PEC9"),)
    ctx = _propagate(qm, operation=0x01, object_type=ENTERPRISE, path="enterprise", properties=props)
    assert qm.my_enterprise_partition.authority_name == "PEC9"
    assert qm.psc_neighbors[0].available_changes[0].command is Command.UPDATE
    assert dir_ops(ctx) == []


@covers("MC-MQDSRP", "3.1.7.1.2")
@pytest.mark.parametrize("mode", MODES)
def test_both_path_name_and_guid_are_sent_as_the_guid(mode):
    """E-102: "PathName := iPathName" and "GuidIdentifier := iGuidIdentifier" together break 2.2.4, so both modes send the GUID only."""
    qm = _pec()
    _propagate(qm, mode, operation=0x01, path="q1", guid=guid_of("q1"), properties=queue_props("q1"))
    sent = qm.psc_neighbors[0].available_changes[0]
    assert (sent.path_name, sent.guid_identifier, sent.use_guid) == (None, guid_of("q1"), True)


@covers("MC-MQDSRP", "3.1.7.1.2")
def test_change_without_path_name_or_guid_names_the_object_by_its_identity_property():
    """A create of a user (no path name, NULL iGuidIdentifier) is propagated with UseGuid 0x01 and the GUID of PROPID_U_ID."""
    qm = _pec()
    _propagate(qm, object_type=USER, path=None, properties=user_props(guid_of("u1")))
    sent = qm.psc_neighbors[0].available_changes[0]
    assert (sent.path_name, sent.guid_identifier) == (None, guid_of("u1"))


@covers("MC-MQDSRP", "3.1.7.1.2")
@pytest.mark.parametrize("mode", MODES)
def test_delete_takes_type_and_scope_from_the_two_values_and_is_queued(mode):
    """Delete: iObjectType := second value, iScope := first value; a deleted site's partition and PSC neighbor go (3.1.7.2.7)."""
    qm = _pec()
    qm_site = DirectoryPartition(SITE1, PSC)
    qm.partitions.append(qm_site)
    ctx = _propagate(qm, mode, operation=0x02, object_type=SITE, path="site1", guid=SITE1,
                     properties=delete_props(SCOPE_ENTERPRISE, SITE))
    assert qm_site not in qm.partitions and qm.psc_neighbors == []
    [sent] = qm.bsc_neighbors[0].available_changes
    assert (sent.command, sent.guid_identifier, sent.properties) == (Command.DELETE, SITE1,
                                                                      delete_props(SCOPE_ENTERPRISE, SITE))
    # clarification E-108: the authority's own delete records its tombstone only in clarified mode
    tombstones = [(d.identifier, d.seq_number, d.object_type, d.scope) for d in qm.deleted_objects]
    assert tombstones == ([(SITE1, seq(5), int(SITE), SCOPE_ENTERPRISE)] if mode is Mode.CLARIFIED else [])
    assert dir_ops(ctx) == []


@covers("MC-MQDSRP", "3.1.7.1.2")
def test_literal_sync_takes_the_object_type_from_the_second_property_value():
    """Literal: synchronize sets "iObjectType := the property value of the second element in iPropertyValue", not the iObjectType argument."""
    qm = _pec()
    props = (Property(P["PROPID_CN_NAME"], "cn1"), Property(P["PROPID_CN_PROTOCOLID"], int(CN)))
    ctx = _propagate(qm, Mode.LITERAL, operation=0x03, object_type=QUEUE, path=None, guid=guid_of("cn1"),
                     properties=props)
    assert [(op.operation, op.object_type) for op in dir_ops(ctx)] == [("read", int(CN)), ("create", int(CN))]
    assert qm.psc_neighbors[0].available_changes[0].command is Command.SYNC


@covers("MC-MQDSRP", "3.1.7.1.2")
@pytest.mark.parametrize("mode", MODES)
def test_sync_of_a_connected_network_follows_the_object_type_only_in_clarified_mode(mode):
    """E-139: clarified mode passes iObjectType (CN); literally the second value, PROPID_CN_PROTOCOLID 1, is taken as a queue."""
    qm = _pec()
    props = (Property(P["PROPID_CN_NAME"], "cn1"), Property(P["PROPID_CN_PROTOCOLID"], 1))
    ctx = _propagate(qm, mode, operation=0x03, object_type=CN, path=None, guid=guid_of("cn1"), properties=props)
    if mode is Mode.CLARIFIED:
        assert [(op.operation, op.object_type, op.status) for op in dir_ops(ctx)] == [
            ("read", int(CN), st.MQDS_OBJECT_NOT_FOUND), ("create", int(CN), st.MQ_OK)]
        assert [(o.object_type, o.guid) for o in qm.directory.objects.values()] == [(int(CN), guid_of("cn1"))]
    else:
        assert [(op.operation, op.object_type, op.status) for op in dir_ops(ctx)] == [
            ("read", int(QUEUE), st.MQDS_OBJECT_NOT_FOUND), ("create", int(QUEUE), st.MQ_ERROR_ILLEGAL_PROPID)]
        assert len(qm.directory) == 0
    # the change is queued either way: created (clarified) or, E-100, in spite of the failure (literal)
    assert [c.command for c in qm.psc_neighbors[0].available_changes] == [Command.SYNC]
    assert qm.my_enterprise_partition.last_seq_number == seq(5)


@covers("MC-MQDSRP", "3.1.7.1.2")
@pytest.mark.parametrize("mode", MODES)
def test_failed_handling_stops_propagation_only_in_clarified_mode(mode):
    """E-100: the sync branch sets rStatus, not status, so literally a failed Handle Directory Sync is still propagated."""
    qm = _pec(last=4)
    # a queue without its identity property: not found, and it cannot be created; the object type
    # is iObjectType in clarified mode and literally the second value, a label, read as 0 (E-139)
    ctx = _propagate(qm, mode, operation=0x03, path="q1", properties=queue_props("q1"))
    object_type = int(QUEUE) if mode is Mode.CLARIFIED else 0
    assert [(op.operation, op.object_type, op.status) for op in dir_ops(ctx)] == [
        ("read", object_type, st.MQDS_OBJECT_NOT_FOUND), ("create", object_type, st.MQ_ERROR)]
    if mode is Mode.CLARIFIED:
        assert _queued(qm) == [(PSC, []), (BSC01, [])]
        assert qm.my_enterprise_partition.last_seq_number == seq(4)
    else:
        assert [c.command for c in qm.psc_neighbors[0].available_changes] == [Command.SYNC]
        assert qm.my_enterprise_partition.last_seq_number == seq(5)


@covers("MC-MQDSRP", "3.1.7.1.2")
@pytest.mark.parametrize("mode", MODES)
def test_authority_purges_tombstones_every_256_changes_only_in_clarified_mode(mode):
    """E-131: nothing in the text raises Purge Deleted Objects at the authority; clarified mode uses Handle In-Sync Change's trigger."""
    qm = _pec(last=2000, purged=0)
    qm.psc_neighbors[0].acked_pec_seq_number = seq(1500)
    qm.deleted_objects = [tombstone(ENT, 500), tombstone(ENT, 1500), tombstone(SITE0, 10)]
    ctx = _propagate(qm, mode, at=2001)
    ent = qm.my_enterprise_partition
    kept = [(d.partition_id, d.seq_number.value) for d in qm.deleted_objects]
    if mode is Mode.CLARIFIED:
        # purgeSeqNumber = min(minAckedSeqNumber 1500, 2001 - 1024 = 977) (E-130); PurgedSeqNumber follows (E-133)
        assert kept == [(ENT, 1500), (SITE0, 10)]
        assert ent.previous_purged_seq_number == seq(2001) and ent.purged_seq_number == seq(977)
    else:
        assert kept == [(ENT, 500), (ENT, 1500), (SITE0, 10)]
        assert ent.previous_purged_seq_number == seq(0) and ent.purged_seq_number == seq(0)
    assert messages(ctx) == []


@covers("MC-MQDSRP", "3.1.7.1.2")
def test_enterprise_partition_id_is_pec_partition_id():
    """The first branch compares iPartitionID with MyEnterprisePartition.PartitionID, which is PEC_PARTITION_ID (GUID_NULL)."""
    qm = _pec()
    assert qm.my_enterprise_partition.partition_id == PEC_PARTITION_ID == ENT
    add_object(qm, ENTERPRISE, "enterprise", guid_of("e"), enterprise_props(PEC), ENT)
    _propagate(qm, partition=PEC_PARTITION_ID)
    assert qm.my_enterprise_partition.last_seq_number == seq(5)
