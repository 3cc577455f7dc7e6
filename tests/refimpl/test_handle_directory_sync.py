"""MC-MQDSRP 3.1.7.2.8 Handle Directory Sync: create what this replica lacks, update what it has."""

import pytest
from mqspec.model.propvalue import Property
from mqspec.refimpl import status as st
from mqspec.refimpl.effects import Mode
from mqspec.refimpl.mqdsrp_state import PurgeState
from mqspec.refimpl.mqdsrp_objects import handle_directory_sync

from mqspec.clauses import covers

from .mqdsrp_fixtures import (
    ENT,
    ENTERPRISE,
    MACHINE,
    MODES,
    PEC,
    QUEUE,
    SERVICE_BSC,
    SITE,
    SITE1,
    SITE2,
    P,
    add_object,
    bsc_node,
    clarified_ids,
    context,
    dir_ops,
    enterprise_props,
    guid_of,
    messages,
    psc_node,
    queue_props,
    seq,
    timers,
)

#: what a sync change of 3.2.7.8 carries for a queue and for a site: no identity property, named by GUID
QUEUE_SYNC = (Property(P["PROPID_Q_PATHNAME"], "q1"), Property(P["PROPID_Q_LABEL"], "synced"))
SITE_SYNC = (Property(P["PROPID_S_PATHNAME"], "site2"), Property(P["PROPID_S_PSC"], "PSC2"))


def _sync(qm, partition_id, object_type, path, guid, props, *, at=7, mode=Mode.CLARIFIED):
    ctx = context(qm, mode)
    result = handle_directory_sync(qm, ctx, qm.find_partition(partition_id), int(object_type), path, guid,
                                   tuple(props), seq(at))
    return result, ctx


@covers("MC-MQDSRP", "3.1.7.2.8")
@pytest.mark.parametrize("mode", MODES)
def test_missing_object_is_created_under_the_changes_guid_only_when_clarified(mode):
    """MQDS_OBJECT_NOT_FOUND: Create Directory Object (iReplicate false); E-112: the text passes no GUID, so literally the create fails."""
    qm = psc_node()
    result, ctx = _sync(qm, ENT, QUEUE, None, guid_of("q1"), QUEUE_SYNC, mode=mode)
    ops = [(op.operation, op.object_type, op.status) for op in dir_ops(ctx)]
    if mode is Mode.CLARIFIED:
        assert result == (st.MQ_OK, False)
        assert ops == [("read", int(QUEUE), st.MQDS_OBJECT_NOT_FOUND), ("create", int(QUEUE), st.MQ_OK)]
        obj = qm.directory.find(guid=guid_of("q1"))
        assert (obj.path_name, obj.partition_id, obj.seq_number) == ("q1", ENT, seq(7))
    else:
        # a sync change has no identity property: without iGuidIdentifier the object cannot be named
        assert result == (st.MQ_ERROR, False)
        assert ops == [("read", int(QUEUE), st.MQDS_OBJECT_NOT_FOUND), ("create", int(QUEUE), st.MQ_ERROR)]
        assert len(qm.directory) == 0


@covers("MC-MQDSRP", "3.1.7.2.8")
def test_existing_object_is_updated():
    """"Else if rStatus is MQ_OK: Raise an [MS-MQDS] Update Directory Object event" with iPartitionID and iSeqNumber."""
    qm = psc_node()
    add_object(qm, QUEUE, "q1", guid_of("q1"), queue_props("q1"), ENT)
    result, ctx = _sync(qm, ENT, QUEUE, None, guid_of("q1"), QUEUE_SYNC)
    assert result == (st.MQ_OK, False)
    assert [(op.operation, op.guid, op.status) for op in dir_ops(ctx)] == [
        ("read", guid_of("q1"), st.MQ_OK), ("update", guid_of("q1"), st.MQ_OK)]
    obj = qm.directory.find(guid=guid_of("q1"))
    assert obj.properties[P["PROPID_Q_LABEL"]] == "synced" and obj.seq_number == seq(7)


@covers("MC-MQDSRP", "3.1.7.2.8")
def test_failed_create_or_update_returns_its_status_and_follows_nothing():
    """"If rStatus is not MQ_OK: Take no further action": a site whose create fails adds no partition."""
    qm = psc_node()
    bad = (*SITE_SYNC, Property(P["PROPID_Q_LABEL"], "not a site property"))
    result, ctx = _sync(qm, ENT, SITE, None, SITE2, bad)
    assert result == (st.MQ_ERROR_ILLEGAL_PROPID, False)
    assert qm.find_partition(SITE2) is None and messages(ctx) == []


@covers("MC-MQDSRP", "3.1.7.2.8")
def test_enterprise_sync_raises_handle_enterprise_update():
    """MQDS_ENTERPRISE (E-113: "objectType" is iObjectType): Handle Enterprise Update follows a new PEC name."""
    qm = psc_node()
    add_object(qm, ENTERPRISE, "enterprise", guid_of("ent"), enterprise_props(PEC), ENT)
    result, _ = _sync(qm, ENT, ENTERPRISE, None, guid_of("ent"), (Property(P["PROPID_E_PECNAME"], "PEC9"),))
    assert result == (st.MQ_OK, True)
    assert qm.find_partition(ENT).authority_name == "PEC9"


@covers("MC-MQDSRP", "3.1.7.2.8")
@pytest.mark.parametrize("mode", MODES)
def test_site_sync_raises_handle_site_update_with_sync(mode):
    """MQDS_SITE: Handle Site Update with iSync true creates the new site's partition (E-114: its id is the GuidIdentifier)."""
    qm = psc_node()
    result, ctx = _sync(qm, ENT, SITE, None, SITE2, SITE_SYNC, mode=mode)
    if mode is Mode.CLARIFIED:
        assert result == (st.MQ_OK, True)
        assert qm.find_partition(SITE2).authority_name == "PSC2"
        assert [n.machine_name for n in qm.psc_neighbors] == ["PSC2"]
    else:
        # literally the site object cannot even be created (E-112), so Handle Site Update is not reached
        assert result == (st.MQ_ERROR, False)
        assert qm.find_partition(SITE2) is None
    assert clarified_ids(ctx) == []


@covers("MC-MQDSRP", "3.1.7.2.8")
def test_machine_sync_at_a_psc_raises_handle_machine_update():
    """PSC and MQDS_MACHINE: Handle Machine Update makes a BSC of its site a BSC neighbor."""
    qm = psc_node()
    props = (Property(P["PROPID_QM_PATHNAME"], "BSC12"), Property(P["PROPID_QM_SERVICE"], SERVICE_BSC))
    result, ctx = _sync(qm, SITE1, MACHINE, None, guid_of("BSC12"), props)
    assert result == (st.MQ_OK, False)
    assert [n.machine_name for n in qm.bsc_neighbors] == ["BSC12"]
    assert [t.timer.args for t in timers(ctx)] == [("BSC12", "Intrasite")]


@covers("MC-MQDSRP", "3.1.7.2.8")
def test_machine_sync_at_a_bsc_adds_no_neighbor():
    """"If the queue manager is a PSC and objectType is MQDS_MACHINE": a BSC only stores the machine."""
    qm = bsc_node()
    props = (Property(P["PROPID_QM_PATHNAME"], "BSC12"), Property(P["PROPID_QM_SERVICE"], SERVICE_BSC))
    result, ctx = _sync(qm, SITE1, MACHINE, None, guid_of("BSC12"), props)
    assert result == (st.MQ_OK, False)
    assert qm.bsc_neighbors == [] and timers(ctx) == []
    assert qm.directory.find(guid=guid_of("BSC12")).path_name == "BSC12"


# --- E-317: a sync0 create meets the name of an object the reset only marked ------------------------


def _sync0_with_marked(old_partition=ENT, *, state=PurgeState.SYNC0, mark=True):
    """PSC1 in sync0 for the enterprise partition, still holding the old queue q1 (another GUID) that
    Reset Directory Partition operation 1 marked deleted (3.3.7.10), unless ``mark`` is false."""
    qm = psc_node()
    add_object(qm, QUEUE, "q1", guid_of("q1-old"), queue_props("q1"), old_partition, at=4)
    if mark:
        qm.directory.reset_partition(old_partition, 1)
    qm.find_partition(ENT).purge_state = state
    return qm


@covers("MC-MQDSRP", "3.1.7.2.8")
@pytest.mark.parametrize("mode", MODES)
def test_a_sync0_create_deletes_the_marked_object_holding_its_name_only_when_clarified(mode):
    """E-317: in SYNC0 the marked old q1 is deleted (not replicated) and the new q1 created; literally it keeps the name."""
    qm = _sync0_with_marked()
    result, ctx = _sync(qm, ENT, QUEUE, None, guid_of("q1"), QUEUE_SYNC, mode=mode)
    holder = qm.directory.find(path_name="q1", object_type=int(QUEUE)).guid
    if mode is Mode.LITERAL:
        # the name stays with the old queue, and the create fails (for want of a GUID too, E-112)
        assert (result[0] == st.MQ_OK, [op.operation for op in dir_ops(ctx)], holder) == (
            False, ["read", "create"], guid_of("q1-old"))
        return
    assert result == (st.MQ_OK, False) and messages(ctx) == [] and holder == guid_of("q1")
    assert [(op.operation, op.guid, op.status) for op in dir_ops(ctx)] == [
        ("read", guid_of("q1"), st.MQDS_OBJECT_NOT_FOUND), ("delete", guid_of("q1-old"), st.MQ_OK),
        ("create", guid_of("q1"), st.MQ_OK)]


@covers("MC-MQDSRP", "3.1.7.2.8")
@pytest.mark.parametrize("holder", ["live", "normal", "other-partition"])
def test_a_sync_create_is_refused_by_a_namesake_e317_does_not_delete(holder):
    """E-317 deletes only a holder the sync0 reset marked in the partition in SYNC0: a live one, one met
    outside SYNC0 or one of another partition keeps the name, and the create is refused (MQDS_OBJECT_EXISTS)."""
    qm = _sync0_with_marked(
        SITE1 if holder == "other-partition" else ENT,
        state=PurgeState.NORMAL if holder == "normal" else PurgeState.SYNC0,
        mark=holder != "live",
    )
    result, ctx = _sync(qm, ENT, QUEUE, None, guid_of("q1"), QUEUE_SYNC)
    assert result == (st.MQDS_OBJECT_EXISTS, False)
    assert [op.operation for op in dir_ops(ctx)] == ["read", "create"]
    assert qm.directory.find(path_name="q1", object_type=int(QUEUE)).guid == guid_of("q1-old")
