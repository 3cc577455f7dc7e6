"""MC-MQDSRP 3.1.7.2.6 Handle Directory Update."""

import pytest
from mqspec.model.propvalue import Property
from mqspec.refimpl import status as st
from mqspec.refimpl.mqdsrp_objects import handle_directory_update

from mqspec.clauses import covers

from .mqdsrp_fixtures import (
    BSC,
    ENT,
    ENTERPRISE,
    MACHINE,
    PEC,
    PSC,
    QUEUE,
    SERVICE_BSC,
    SITE,
    SITE1,
    SITE2,
    DirectoryNeighbor,
    DirectoryPartition,
    P,
    add_object,
    context,
    dir_ops,
    enterprise_props,
    guid_of,
    machine_props,
    psc_node,
    queue_props,
    seq,
    site_props,
    timers,
)


def _update(qm, partition_id, object_type, path, guid, props, *, at=7, post=False):
    ctx = context(qm)
    result = handle_directory_update(qm, ctx, qm.find_partition(partition_id), int(object_type), path, guid,
                                     tuple(props), seq(at), post)
    return result, ctx


def _psc():
    qm = psc_node()
    add_object(qm, QUEUE, "q1", guid_of("q1"), queue_props("q1"), ENT)
    add_object(qm, ENTERPRISE, "enterprise", guid_of("ent"), enterprise_props(PEC), ENT)
    add_object(qm, SITE, "site2", SITE2, site_props("site2", None, "PSC2"), ENT)
    add_object(qm, MACHINE, "M1", guid_of("M1"), machine_props("M1", SITE1, 0), SITE1)
    add_object(qm, MACHINE, "M9", guid_of("M9"), machine_props("M9", SITE2, 0), ENT)
    return qm


@covers("MC-MQDSRP", "3.1.7.2.6")
def test_replica_updates_the_object_without_replicating_it():
    """iPostUpdate false: Update Directory Object with iPartitionID and iSeqNumber; a replica's update is not propagated."""
    qm = _psc()
    result, ctx = _update(qm, ENT, QUEUE, "q1", None, (Property(P["PROPID_Q_LABEL"], "x"),))
    assert result == (st.MQ_OK, False)
    assert [(op.operation, op.path_name, op.partition_id, op.seq_number) for op in dir_ops(ctx)] == [
        ("update", "q1", ENT, 7)]
    assert qm.directory.find(guid=guid_of("q1")).seq_number == seq(7)
    assert qm.find_partition(ENT).last_seq_number == seq(0)


@covers("MC-MQDSRP", "3.1.7.2.6")
def test_failed_update_returns_its_status_and_follows_nothing():
    """"If rStatus is not MQ_OK: Take no further action": an update of a missing site changes no partition."""
    qm = _psc()
    result, _ = _update(qm, ENT, SITE, "site7", None, site_props("site7", None, "PSC7"))
    assert result == (st.MQDS_OBJECT_NOT_FOUND, False)
    assert [p.authority_name for p in qm.partitions] == [PEC, PSC]


@covers("MC-MQDSRP", "3.1.7.2.6")
def test_authority_update_is_replicated():
    """myPartition true: iReplicate true, so the update reaches the BSC neighbors and MySitePartition.LastSeqNumber moves."""
    qm = _psc()
    qm.bsc_neighbors = [DirectoryNeighbor(SITE1, BSC)]
    result, _ = _update(qm, SITE1, MACHINE, "M1", None, (Property(P["PROPID_QM_SERVICE"], 0),), at=1)
    assert result == (st.MQ_OK, False)
    assert [c.seq_number for c in qm.bsc_neighbors[0].available_changes] == [seq(1)]
    assert qm.my_site_partition.last_seq_number == seq(1)


@covers("MC-MQDSRP", "3.1.7.2.6")
def test_post_update_only_handles_replication_state():
    """iPostUpdate true: no Update Directory Object, only what the site / enterprise / machine handlers do."""
    qm = _psc()
    result, ctx = _update(qm, ENT, ENTERPRISE, "enterprise", None, (Property(P["PROPID_E_PECNAME"], "PEC9"),),
                          post=True)
    assert result == (st.MQ_OK, True)
    assert dir_ops(ctx) == [] and qm.find_partition(ENT).authority_name == "PEC9"


@covers("MC-MQDSRP", "3.1.7.2.6")
def test_site_update_raises_handle_site_update_without_sync():
    """MQDS_SITE: Handle Site Update (iSync false) moves the site partition to the new PSC and returns rNeedFlush."""
    qm = _psc()
    qm.partitions.append(DirectoryPartition(SITE2, "PSC2"))
    qm.psc_neighbors = [DirectoryNeighbor(SITE2, "PSC2")]
    result, _ = _update(qm, ENT, SITE, None, SITE2, (Property(P["PROPID_S_PSC"], "PSC3"),))
    assert result == (st.MQ_OK, True)
    assert qm.find_partition(SITE2).authority_name == "PSC3"
    assert qm.psc_neighbors[0].machine_name == "PSC3"


@covers("MC-MQDSRP", "3.1.7.2.6")
def test_site_update_of_an_unknown_partition_creates_none():
    """Handle Site Update with iSync false does not create a partition the server lacks."""
    qm = _psc()
    result, ctx = _update(qm, ENT, SITE, None, SITE2, (Property(P["PROPID_S_PSC"], "PSC3"),))
    assert result == (st.MQ_OK, False)
    assert qm.find_partition(SITE2) is None and timers(ctx) == []


@covers("MC-MQDSRP", "3.1.7.2.6")
def test_enterprise_update_raises_handle_enterprise_update():
    """MQDS_ENTERPRISE: Handle Enterprise Update renames the partition's authority and returns rNeedFlush true."""
    qm = _psc()
    result, _ = _update(qm, ENT, ENTERPRISE, "enterprise", None, (Property(P["PROPID_E_PECNAME"], "PEC9"),))
    assert result == (st.MQ_OK, True)
    assert qm.find_partition(ENT).authority_name == "PEC9"


@covers("MC-MQDSRP", "3.1.7.2.6")
def test_machine_of_the_psc_site_raises_handle_machine_update():
    """PSC, MQDS_MACHINE, iPartition MySitePartition: Handle Machine Update adds the new BSC neighbor."""
    qm = _psc()
    result, ctx = _update(qm, SITE1, MACHINE, "M1", None, (Property(P["PROPID_QM_SERVICE"], SERVICE_BSC),),
                          post=True)
    assert result == (st.MQ_OK, False)
    assert [n.machine_name for n in qm.bsc_neighbors] == ["M1"]
    assert [t.timer.args for t in timers(ctx)] == [("M1", "Intrasite")]


@covers("MC-MQDSRP", "3.1.7.2.6")
@pytest.mark.parametrize("object_type", [QUEUE, MACHINE])
def test_update_of_other_objects_follows_nothing(object_type):
    """A queue, or a machine outside MySitePartition, raises no follow-up event: rNeedFlush false, no neighbor."""
    qm = _psc()
    path, props = ("q1", (Property(P["PROPID_Q_LABEL"], "y"),)) if object_type is QUEUE else (
        "M9", (Property(P["PROPID_QM_SERVICE"], SERVICE_BSC),))
    result, ctx = _update(qm, ENT, object_type, path, None, props)
    assert result == (st.MQ_OK, False)
    assert qm.bsc_neighbors == [] and timers(ctx) == []
