"""MC-MQDSRP 3.1.7.2.5 Handle Directory Create."""

import pytest
from mqspec.model.mqdsrp import Scope, SyncRequestMessage
from mqspec.model.seqnum import MAX_SEQ_NUMBER, MIN_SEQ_NUMBER
from mqspec.refimpl import status as st
from mqspec.refimpl.effects import Mode, StartTimer, TimerKey
from mqspec.refimpl.mqdsrp_objects import handle_directory_create
from mqspec.refimpl.mqdsrp_state import PurgeState

from mqspec.clauses import covers

from .mqdsrp_fixtures import (
    BSC,
    ENT,
    MACHINE,
    MODES,
    PEC,
    PSC,
    QUEUE,
    SERVICE_BSC,
    SITE,
    SITE1,
    SITE2,
    DirectoryNeighbor,
    bsc_node,
    clarified_ids,
    context,
    dir_ops,
    guid_of,
    machine_props,
    messages,
    pec_node,
    psc_node,
    queue_props,
    seq,
    site_props,
    timers,
)


def _create(qm, partition_id, object_type, path, props, *, at=7, post=False, mode=Mode.CLARIFIED):
    ctx = context(qm, mode)
    result = handle_directory_create(qm, ctx, qm.find_partition(partition_id), int(object_type), path, props,
                                     seq(at), post)
    return result, ctx


def _site2(psc="PSC2"):
    return site_props("site2", SITE2, psc)


@covers("MC-MQDSRP", "3.1.7.2.5")
def test_replica_creates_the_object_without_replicating_it():
    """iPostCreate false: Create Directory Object with iPartitionID and iSeqNumber; myPartition false, so nothing is propagated."""
    qm = psc_node()
    qm.bsc_neighbors = [DirectoryNeighbor(SITE1, BSC)]
    result, ctx = _create(qm, ENT, QUEUE, "q1", queue_props("q1", guid_of("q1")))
    assert result == (st.MQ_OK, False)
    [op] = dir_ops(ctx)
    assert (op.operation, op.object_type, op.path_name, op.partition_id, op.seq_number, op.status) == (
        "create", int(QUEUE), "q1", ENT, 7, st.MQ_OK)
    assert qm.bsc_neighbors[0].available_changes == []
    assert qm.find_partition(ENT).last_seq_number == seq(0)


@covers("MC-MQDSRP", "3.1.7.2.5")
def test_authority_creates_and_replicates_its_own_partition_object():
    """myPartition true (iPartition is MySitePartition): iReplicate true, so Propagate Directory Change queues the change."""
    qm = psc_node()
    qm.bsc_neighbors = [DirectoryNeighbor(SITE1, BSC)]
    result, _ = _create(qm, SITE1, QUEUE, "PSC1\\q", queue_props("PSC1\\q", guid_of("q")), at=1)
    assert result == (st.MQ_OK, False)
    assert [c.seq_number for c in qm.bsc_neighbors[0].available_changes] == [seq(1)]
    assert qm.my_site_partition.last_seq_number == seq(1)


@covers("MC-MQDSRP", "3.1.7.2.5")
def test_failed_create_returns_its_status_and_changes_no_replication_state():
    """"If rStatus is not MQ_OK: Take no further action": an existing site object adds no partition and no neighbor."""
    qm = psc_node()
    qm.directory.create(int(SITE), "site2", SITE2, _site2(), ENT, seq(1))
    result, ctx = _create(qm, ENT, SITE, "site2", _site2())
    assert result == (st.MQDS_OBJECT_EXISTS, False)
    assert qm.find_partition(SITE2) is None and qm.psc_neighbors == []
    assert messages(ctx) == [] and timers(ctx) == []


@covers("MC-MQDSRP", "3.1.7.2.5")
def test_post_create_only_handles_replication_state():
    """iPostCreate true: "this event only handles the protocol state changes" (no Create Directory Object)."""
    qm = psc_node()
    result, ctx = _create(qm, ENT, SITE, "site2", _site2(), post=True)
    assert result == (st.MQ_OK, True)
    assert dir_ops(ctx) == []
    assert qm.find_partition(SITE2) is not None


@covers("MC-MQDSRP", "3.1.7.2.5")
@pytest.mark.parametrize("mode", MODES)
def test_site_of_another_psc_adds_its_partition_a_sync_request_and_a_psc_neighbor(mode):
    """MQDS_SITE with pscName not this machine: newPartition (MIN, NORMAL), Send Sync Request, newPSCNeighbor, Intersite timer, rNeedFlush."""
    qm = psc_node()
    result, ctx = _create(qm, ENT, SITE, "site2", _site2(), mode=mode)
    assert result == (st.MQ_OK, True)
    new = qm.find_partition(SITE2)
    assert (new.authority_name, new.last_seq_number, new.purged_seq_number, new.allowed_purge_seq_number,
            new.purge_state) == ("PSC2", MIN_SEQ_NUMBER, MIN_SEQ_NUMBER, MIN_SEQ_NUMBER, PurgeState.NORMAL)
    assert (new.change_missing_window, new.pending_changes) == (MAX_SEQ_NUMBER, [])
    [sent] = messages(ctx)
    assert sent.destination == "PSC2"
    assert sent.body == SyncRequestMessage(SITE1, SITE2, MIN_SEQ_NUMBER, MAX_SEQ_NUMBER, MIN_SEQ_NUMBER, False,
                                           Scope.ENTERPRISE, PSC)
    [neighbor] = qm.psc_neighbors
    # clarification E-105: the text's "PartitionID := iPartition.PartitionID" is the enterprise partition
    assert neighbor.partition_id == (SITE2 if mode is Mode.CLARIFIED else ENT)
    assert (neighbor.machine_name, neighbor.acked_seq_number, neighbor.acked_pec_seq_number) == (
        "PSC2", MIN_SEQ_NUMBER, MIN_SEQ_NUMBER)
    assert timers(ctx) == [StartTimer(PSC, TimerKey("change_propagation", ("PSC2", "Intersite")), 10.0)]


@covers("MC-MQDSRP", "3.1.7.2.5")
def test_site_whose_psc_is_this_machine_becomes_my_site_partition():
    """pscName is QueueManager.MachineName: "Set QueueManager.MySitePartition to newPartition"; no request, no neighbor."""
    qm = psc_node(site_partition=False)
    result, ctx = _create(qm, ENT, SITE, "site1", site_props("site1", SITE1, PSC))
    assert result == (st.MQ_OK, True)
    assert qm.my_site_partition is qm.find_partition(SITE1)
    assert qm.psc_neighbors == [] and messages(ctx) == [] and timers(ctx) == []


@covers("MC-MQDSRP", "3.1.7.2.5")
@pytest.mark.parametrize("mode", MODES)
def test_site_create_at_the_authority_adds_the_partition_once_only_when_clarified(mode):
    """E-104: at the PEC Create Directory Object raises Propagate Directory Change, which runs this event again with iPostCreate true."""
    qm = pec_node()
    result, ctx = _create(qm, ENT, SITE, "site2", _site2(), at=1, mode=mode)
    assert result == (st.MQ_OK, True)
    partitions = [p.partition_id for p in qm.partitions if p.partition_id == SITE2]
    neighbors = [n.machine_name for n in qm.psc_neighbors]
    if mode is Mode.CLARIFIED:
        assert (partitions, neighbors) == ([SITE2], ["PSC2"])
        assert clarified_ids(ctx) == ["E-104"]
    else:
        assert (partitions, neighbors) == ([SITE2, SITE2], ["PSC2", "PSC2"])
        assert len(messages(ctx)) == 2 and len(timers(ctx)) == 2


@covers("MC-MQDSRP", "3.1.7.2.5")
@pytest.mark.parametrize("mode", MODES)
def test_bsc_adds_a_psc_neighbor_for_a_new_site_only_literally(mode):
    """E-106: a BSC has no PSC neighbors; clarified mode still adds the partition and asks its PSC, literal mode adds the neighbor."""
    qm = bsc_node()
    result, ctx = _create(qm, ENT, SITE, "site2", _site2(), mode=mode)
    assert result == (st.MQ_OK, True)
    assert qm.find_partition(SITE2) is not None
    assert [m.destination for m in messages(ctx)] == [PSC]  # a BSC sends every sync request to MyPSCName
    if mode is Mode.CLARIFIED:
        assert qm.psc_neighbors == [] and timers(ctx) == []
    else:
        assert [n.machine_name for n in qm.psc_neighbors] == ["PSC2"] and len(timers(ctx)) == 1


@covers("MC-MQDSRP", "3.1.7.2.5")
def test_bsc_machine_in_the_psc_site_becomes_a_bsc_neighbor():
    """PSC, MQDS_MACHINE, qmService SERVICE_BSC, iPartition MySitePartition: newBSCNeighbor (MachineName := iPathName, LastAckedTime 0), Intrasite timer."""
    qm = psc_node()
    result, ctx = _create(qm, SITE1, MACHINE, "BSC12", machine_props("BSC12", SITE1, SERVICE_BSC, guid_of("BSC12")),
                          post=True)
    assert result == (st.MQ_OK, False)
    [neighbor] = qm.bsc_neighbors
    assert (neighbor.partition_id, neighbor.machine_name, neighbor.last_acked_time) == (SITE1, "BSC12", 0.0)
    assert timers(ctx) == [StartTimer(PSC, TimerKey("change_propagation", ("BSC12", "Intrasite")), 2.0)]


@covers("MC-MQDSRP", "3.1.7.2.5")
@pytest.mark.parametrize("case", ["not a BSC", "other partition", "at a BSC"])
def test_machine_that_is_no_bsc_of_this_psc_adds_no_neighbor(case):
    """No BSC neighbor unless the queue manager is a PSC, qmService is SERVICE_BSC and iPartition is MySitePartition."""
    qm = bsc_node() if case == "at a BSC" else psc_node()
    service = 0 if case == "not a BSC" else SERVICE_BSC
    partition = ENT if case == "other partition" else SITE1
    result, ctx = _create(qm, partition, MACHINE, "M2", machine_props("M2", SITE1, service, guid_of("M2")), post=True)
    assert result == (st.MQ_OK, False)
    assert qm.bsc_neighbors == [] and timers(ctx) == []


@covers("MC-MQDSRP", "3.1.7.2.5")
@pytest.mark.parametrize("mode", MODES)
def test_bsc_machine_created_at_the_authority_adds_one_neighbor_only_when_clarified(mode):
    """E-104 for machines: the PSC's create runs this event twice (Propagate Directory Change in between); literally the neighbor is added twice."""
    qm = psc_node()
    _, ctx = _create(qm, SITE1, MACHINE, "BSC12", machine_props("BSC12", SITE1, SERVICE_BSC, guid_of("BSC12")),
                     at=1, mode=mode)
    names = [n.machine_name for n in qm.bsc_neighbors]
    assert names == (["BSC12"] if mode is Mode.CLARIFIED else ["BSC12", "BSC12"])
    assert len(timers(ctx)) == len(names)


@covers("MC-MQDSRP", "3.1.7.2.5")
def test_other_object_types_need_no_flush():
    """A queue is neither MQDS_SITE nor MQDS_MACHINE: rNeedFlush stays false and the replication state is untouched."""
    qm = psc_node()
    result, ctx = _create(qm, ENT, QUEUE, "q1", queue_props("q1", guid_of("q1")))
    assert result == (st.MQ_OK, False)
    assert len(qm.partitions) == 2 and qm.psc_neighbors == [] and messages(ctx) == []


@covers("MC-MQDSRP", "3.1.7.2.5")
def test_pec_creating_a_site_asks_the_new_psc_and_starts_its_timer():
    """At the PEC (iPostCreate true) the new site's PSC gets a Sync Request from PEC0 and a 10 s Intersite Change Propagation Timer."""
    qm = pec_node()
    _, ctx = _create(qm, ENT, SITE, "site2", _site2(), post=True)
    assert [(t.timer.args, t.delay) for t in timers(ctx)] == [(("PSC2", "Intersite"), 10.0)]
    assert [m.body.requester_name for m in messages(ctx)] == [PEC]
