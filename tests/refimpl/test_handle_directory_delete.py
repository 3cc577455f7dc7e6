"""MC-MQDSRP 3.1.7.2.7 Handle Directory Delete."""

import pytest
from mqspec.model.mqdsrp import Command
from mqspec.refimpl import status as st
from mqspec.refimpl.effects import Mode
from mqspec.refimpl.mqds import ClientRequest, directory_client_request
from mqspec.refimpl.mqdsrp_objects import handle_directory_delete

from mqspec.clauses import covers

from .mqdsrp_fixtures import (
    BSC,
    ENT,
    MACHINE,
    MODES,
    PEC,
    PSC,
    QUEUE,
    SCOPE_ENTERPRISE,
    SCOPE_SITE,
    SERVICE_BSC,
    SITE,
    SITE0,
    SITE1,
    SITE2,
    DirectoryNeighbor,
    DirectoryPartition,
    add_object,
    bsc_node,
    clarified_ids,
    context,
    dir_ops,
    guid_of,
    machine_props,
    pec_node,
    psc_node,
    queue_props,
    request_completions,
    seq,
    site_props,
)


def _delete(qm, partition_id, object_type, path, guid, *, scope=SCOPE_ENTERPRISE, at=7, post=False,
            mode=Mode.CLARIFIED):
    ctx = context(qm, mode)
    result = handle_directory_delete(qm, ctx, qm.find_partition(partition_id), int(object_type), scope, path, guid,
                                     seq(at), post)
    return result, ctx


def _pec_with_site2():
    """PEC0 knowing site2 (PSC2) as partition, object and PSC neighbor, and PSC1 as another neighbor."""
    qm = pec_node()
    qm.partitions.append(DirectoryPartition(SITE2, "PSC2"))
    qm.psc_neighbors = [DirectoryNeighbor(SITE2, "PSC2"), DirectoryNeighbor(SITE1, PSC)]
    add_object(qm, SITE, "site2", SITE2, site_props("site2", SITE2, "PSC2"), ENT)
    return qm


def _psc_with_bsc():
    """PSC1 with the BSC machine BSC11 in its site and BSC11 as BSC neighbor."""
    qm = psc_node()
    add_object(qm, MACHINE, BSC, guid_of(BSC), machine_props(BSC, SITE1, SERVICE_BSC), SITE1)
    qm.bsc_neighbors = [DirectoryNeighbor(SITE1, BSC), DirectoryNeighbor(SITE1, "BSC12")]
    return qm


@covers("MC-MQDSRP", "3.1.7.2.7")
@pytest.mark.parametrize("mode", MODES)
def test_replica_deletes_the_object_and_records_its_tombstone_when_clarified(mode):
    """Delete Directory Object (iReplicate false at a replica); E-108: clarified mode records the DeletedObject here."""
    qm = psc_node()
    add_object(qm, QUEUE, "q1", guid_of("q1"), queue_props("q1"), ENT)
    result, ctx = _delete(qm, ENT, QUEUE, "q1", None, mode=mode)
    assert result == (st.MQ_OK, False)
    assert [(op.operation, op.object_type, op.path_name, op.guid, op.status) for op in dir_ops(ctx)] == [
        ("delete", int(QUEUE), "q1", guid_of("q1"), st.MQ_OK)]
    assert qm.directory.find(guid=guid_of("q1")) is None
    tombstones = [(d.identifier, d.partition_id, d.seq_number, d.object_type, d.scope) for d in qm.deleted_objects]
    expected = [(guid_of("q1"), ENT, seq(7), int(QUEUE), SCOPE_ENTERPRISE)] if mode is Mode.CLARIFIED else []
    assert tombstones == expected


@covers("MC-MQDSRP", "3.1.7.2.7")
def test_failed_delete_returns_its_status_and_records_nothing():
    """"If rStatus is not MQ_OK: Take no further action": no tombstone, no neighbor change."""
    qm = _psc_with_bsc()
    result, _ = _delete(qm, SITE1, MACHINE, "nothing", None)
    assert result == (st.MQDS_OBJECT_NOT_FOUND, False)
    assert qm.deleted_objects == [] and len(qm.bsc_neighbors) == 2


@covers("MC-MQDSRP", "3.1.7.2.7")
def test_authority_delete_is_replicated_with_one_tombstone():
    """myPartition true: iReplicate true, so Propagate Directory Change queues the delete; the tombstone is recorded once."""
    qm = _psc_with_bsc()
    add_object(qm, QUEUE, "PSC1\\q", guid_of("q"), queue_props("PSC1\\q"), SITE1)
    result, _ = _delete(qm, SITE1, QUEUE, "PSC1\\q", None, at=1)
    assert result == (st.MQ_OK, False)
    [queued] = qm.bsc_neighbors[0].available_changes
    assert (queued.command, queued.guid_identifier, queued.seq_number) == (Command.DELETE, guid_of("q"), seq(1))
    assert [(d.identifier, d.seq_number) for d in qm.deleted_objects] == [(guid_of("q"), seq(1))]


@covers("MC-MQDSRP", "3.1.7.2.7")
def test_post_delete_only_handles_replication_state():
    """iPostDelete true: no Delete Directory Object; a BSC machine's neighbor is still removed."""
    qm = _psc_with_bsc()
    result, ctx = _delete(qm, SITE1, MACHINE, BSC, guid_of(BSC), post=True)
    assert result == (st.MQ_OK, False)
    assert dir_ops(ctx) == []
    assert qm.directory.find(guid=guid_of(BSC)) is not None
    assert [n.machine_name for n in qm.bsc_neighbors] == ["BSC12"]


@covers("MC-MQDSRP", "3.1.7.2.7")
@pytest.mark.parametrize("mode", MODES)
def test_pec_deleting_a_site_drops_its_partition_and_psc_neighbor(mode):
    """PEC and MQDS_SITE: remove the partition whose PartitionID is iGuidIdentifier and every PSC neighbor named after its authority."""
    qm = _pec_with_site2()
    result, ctx = _delete(qm, ENT, SITE, None, SITE2, post=True, mode=mode)  # as Propagate Directory Change raises it
    assert result == (st.MQ_OK, True)
    assert qm.find_partition(SITE2) is None
    assert [n.machine_name for n in qm.psc_neighbors] == [PSC]
    assert dir_ops(ctx) == []


@covers("MC-MQDSRP", "3.1.7.2.7")
@pytest.mark.parametrize("mode", MODES)
def test_site_deleted_by_path_name_at_the_pec_loses_its_partition_in_the_propagated_run(mode):
    """At the PEC (myPartition) the delete by path runs again via Propagate Directory Change with the deleted object's GUID, which finds the partition."""
    qm = _pec_with_site2()
    result, _ = _delete(qm, ENT, SITE, "site2", None, at=1, mode=mode)
    # the inner run (iPostDelete true) removed partition and neighbor, so this outer run finds none to flush
    assert result == (st.MQ_OK, False)
    assert qm.find_partition(SITE2) is None
    assert [n.machine_name for n in qm.psc_neighbors] == [PSC]
    [queued] = qm.psc_neighbors[0].available_changes
    assert (queued.command, queued.guid_identifier) == (Command.DELETE, SITE2)


@covers("MC-MQDSRP", "3.1.7.2.7")
def test_pec_deleting_a_site_without_partition_needs_no_flush():
    """"If dirPartition is found": a site without a partition here removes nothing and rNeedFlush stays false."""
    qm = pec_node()
    add_object(qm, SITE, "site2", SITE2, site_props("site2", SITE2, "PSC2"), ENT)
    assert _delete(qm, ENT, SITE, None, SITE2)[0] == (st.MQ_OK, False)


def _psc_with_site2():
    """PSC1 knowing site2 (PSC2) as partition, object and PSC neighbor, beside its PEC neighbor."""
    qm = psc_node()
    qm.partitions.append(DirectoryPartition(SITE2, "PSC2"))
    qm.psc_neighbors = [DirectoryNeighbor(ENT, PEC), DirectoryNeighbor(SITE2, "PSC2")]
    add_object(qm, SITE, "site2", SITE2, site_props("site2", SITE2, "PSC2"), ENT)
    return qm


@covers("MC-MQDSRP", "3.1.7.2.7")
@pytest.mark.parametrize("mode", MODES)
def test_psc_that_is_not_the_pec_drops_a_deleted_sites_partition_and_neighbor_only_when_clarified(mode):
    """E-318: "If queue manager is a PEC and iObjectType is MQDS_SITE" leaves a PSC the partition and the PSC neighbor
    (which never acks again); clarified, a PSC drops both, as the PEC does."""
    qm = _psc_with_site2()
    result, _ = _delete(qm, ENT, SITE, None, SITE2, mode=mode)
    if mode is Mode.CLARIFIED:
        assert result == (st.MQ_OK, True)
        assert qm.find_partition(SITE2) is None and [n.machine_name for n in qm.psc_neighbors] == [PEC]
    else:
        assert result == (st.MQ_OK, False)
        assert qm.find_partition(SITE2) is not None and len(qm.psc_neighbors) == 2


@covers("MC-MQDSRP", "3.1.7.2.7")
def test_a_bsc_drops_a_deleted_sites_partition_when_clarified():
    """E-318: a BSC drops the deleted site's partition too (it has no PSC neighbors to drop, E-106)."""
    qm = bsc_node()
    qm.partitions.append(DirectoryPartition(SITE2, "PSC2"))
    add_object(qm, SITE, "site2", SITE2, site_props("site2", SITE2, "PSC2"), ENT)
    assert _delete(qm, ENT, SITE, None, SITE2)[0] == (st.MQ_OK, True)
    assert qm.find_partition(SITE2) is None and qm.find_partition(SITE1) is not None


@covers("MC-MQDSRP", "3.1.7.2.7")
@pytest.mark.parametrize("site", ["own", "the PEC's"])
def test_a_psc_keeps_its_own_and_the_pecs_site_partition_when_that_site_is_deleted(site):
    """E-318 drops a deleted site's partition and PSC neighbor at a server other than the PEC, except for its own
    site and the PEC's (the PEC also owns the enterprise partition): PSC1 keeps the partition and both neighbors."""
    qm = _psc_with_site2()
    site_id, authority = (SITE1, PSC) if site == "own" else (SITE0, PEC)
    if site_id == SITE0:
        qm.partitions.append(DirectoryPartition(SITE0, PEC))
    add_object(qm, SITE, "deleted", site_id, site_props("deleted", site_id, authority), ENT)
    assert _delete(qm, ENT, SITE, None, site_id)[0] == (st.MQ_OK, False)
    assert qm.find_partition(site_id) is not None and len(qm.psc_neighbors) == 2


@covers("MC-MQDSRP", "3.1.7.2.7")
def test_psc_deleting_a_machine_by_path_name_drops_that_bsc_neighbor():
    """PSC and MQDS_MACHINE: remove the BSC neighbor whose MachineName is iPathName."""
    qm = _psc_with_bsc()
    result, _ = _delete(qm, SITE1, MACHINE, BSC, None, scope=SCOPE_SITE, post=True)
    assert result == (st.MQ_OK, False)
    assert [n.machine_name for n in qm.bsc_neighbors] == ["BSC12"]


@covers("MC-MQDSRP", "3.1.7.2.7")
@pytest.mark.parametrize("mode", MODES)
def test_psc_deleting_a_machine_by_guid_drops_its_neighbor_only_when_clarified(mode):
    """E-108: a delete by GUID has a NULL iPathName; clarified mode takes the deleted object's path name."""
    qm = _psc_with_bsc()
    add_object(qm, MACHINE, "BSC12", guid_of("BSC12"), machine_props("BSC12", SITE1, SERVICE_BSC), ENT)
    result, _ = _delete(qm, ENT, MACHINE, None, guid_of("BSC12"), mode=mode)  # a replica's delete: iReplicate false
    assert result == (st.MQ_OK, False)
    names = [n.machine_name for n in qm.bsc_neighbors]
    assert names == ([BSC] if mode is Mode.CLARIFIED else [BSC, "BSC12"])


@covers("MC-MQDSRP", "3.1.7.2.7")
@pytest.mark.parametrize("mode", MODES)
def test_bsc_machine_deleted_by_guid_at_its_authority_loses_its_neighbor(mode):
    """A client's delete by GUID at the PSC reaches this event twice (iPostDelete true via Propagate Directory Change); the neighbor goes."""
    qm = _psc_with_bsc()
    ctx = context(qm, mode)
    request = ClientRequest("delete", MACHINE, SITE1, guid=guid_of(BSC), scope=SCOPE_SITE)
    number = directory_client_request(qm, ctx, request, guid_of("unused"))
    assert [(c.request, c.status) for c in request_completions(ctx)] == [(number, st.MQ_OK)]
    assert [n.machine_name for n in qm.bsc_neighbors] == ["BSC12"]
    [queued] = qm.bsc_neighbors[0].available_changes
    assert (queued.command, queued.guid_identifier, queued.path_name) == (Command.DELETE, guid_of(BSC), None)
    assert qm.my_site_partition.last_seq_number == seq(1)


@covers("MC-MQDSRP", "3.1.7.2.7")
def test_clarified_replica_counts_a_missing_objects_delete_as_applied():
    """Clarified E-261: a replica without the object returns MQ_OK and records the tombstone, so LastSeqNumber can move."""
    qm = psc_node()
    result, ctx = _delete(qm, ENT, QUEUE, None, guid_of("never-seen"))
    assert result == (st.MQ_OK, False)
    assert [(op.operation, op.guid, op.status) for op in dir_ops(ctx)] == [
        ("delete", guid_of("never-seen"), st.MQDS_OBJECT_NOT_FOUND)]
    assert clarified_ids(ctx) == ["E-261"]
    assert [(d.identifier, d.partition_id, d.seq_number, d.object_type, d.scope) for d in qm.deleted_objects] == [
        (guid_of("never-seen"), ENT, seq(7), int(QUEUE), SCOPE_ENTERPRISE)]


@covers("MC-MQDSRP", "3.1.7.2.7")
def test_literal_replica_fails_a_missing_objects_delete():
    """Literal E-261: "If rStatus is not MQ_OK: return": the replica fails with MQDS_OBJECT_NOT_FOUND and records nothing."""
    qm = psc_node()
    result, ctx = _delete(qm, ENT, QUEUE, None, guid_of("never-seen"), mode=Mode.LITERAL)
    assert result == (st.MQDS_OBJECT_NOT_FOUND, False)
    assert clarified_ids(ctx) == []
    assert qm.deleted_objects == []


@covers("MC-MQDSRP", "3.1.7.2.7")
@pytest.mark.parametrize("mode", MODES)
def test_authority_fails_a_missing_objects_delete_in_both_modes(mode):
    """E-261 is for replicas only: at the partition's authority a delete of a missing object fails in both modes."""
    qm = pec_node()
    result, ctx = _delete(qm, ENT, QUEUE, None, guid_of("never-seen"), mode=mode)
    assert result == (st.MQDS_OBJECT_NOT_FOUND, False)
    assert clarified_ids(ctx) == []
    assert qm.deleted_objects == []
