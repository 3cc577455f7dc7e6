"""MC-MQDSRP 3.1.7.2.11 Handle Site Update."""

import pytest
from mqspec.model.mqdsrp import SyncRequestMessage
from mqspec.model.propvalue import Property
from mqspec.model.seqnum import MAX_SEQ_NUMBER, MIN_SEQ_NUMBER
from mqspec.refimpl import status as st
from mqspec.refimpl.effects import Mode, StartTimer, TimerKey
from mqspec.refimpl.mqdsrp_objects import handle_site_update
from mqspec.refimpl.mqdsrp_state import PurgeState, Role

from mqspec.clauses import covers

from .mqdsrp_fixtures import (
    ENT,
    MODES,
    PEC,
    PSC,
    SITE,
    SITE1,
    SITE2,
    DirectoryNeighbor,
    DirectoryPartition,
    P,
    add_object,
    bsc_node,
    context,
    make_qm,
    messages,
    psc_node,
    site_props,
    timers,
)


def _site_update(qm, guid, props, sync, mode=Mode.CLARIFIED, path=None):
    ctx = context(qm, mode)
    result = handle_site_update(qm, ctx, path, guid, tuple(props), sync)
    return result, ctx


def _psc_knowing_site2():
    qm = psc_node()
    qm.partitions.append(DirectoryPartition(SITE2, "PSC2"))
    qm.psc_neighbors = [DirectoryNeighbor(SITE1, "PSC7"), DirectoryNeighbor(SITE2, "PSC2")]
    return qm


PSC3 = (Property(P["PROPID_S_PSC"], "PSC3"),)


@covers("MC-MQDSRP", "3.1.7.2.11")
@pytest.mark.parametrize("sync", [False, True])
def test_update_without_psc_property_takes_no_action(sync):
    """"If PROPID_S_PSC is not found in iPropertyID: Take no further action" (rStatus MQ_OK, rNeedFlush false)."""
    qm = _psc_knowing_site2()
    result, ctx = _site_update(qm, SITE2, (Property(P["PROPID_S_PATHNAME"], "renamed"),), sync)
    assert result == (st.MQ_OK, False) and ctx.effects == []
    assert qm.find_partition(SITE2).authority_name == "PSC2"


@covers("MC-MQDSRP", "3.1.7.2.11")
@pytest.mark.parametrize("sync", [False, True])
def test_known_site_moves_its_partition_and_psc_neighbor_to_the_new_psc(sync):
    """dirPartition found by iGuidIdentifier: AuthorityName := newPSCName, the PSC neighbor of that partition renamed, rNeedFlush true."""
    qm = _psc_knowing_site2()
    result, ctx = _site_update(qm, SITE2, PSC3, sync)
    assert result == (st.MQ_OK, True)
    assert qm.find_partition(SITE2).authority_name == "PSC3"
    assert [(n.partition_id, n.machine_name) for n in qm.psc_neighbors] == [(SITE1, "PSC7"), (SITE2, "PSC3")]
    # modelling E-310: the neighbor's Change Propagation Timer follows it to the new name
    assert [type(e).__name__ for e in ctx.effects] == ["CancelTimer", "StartTimer"]
    assert ctx.effects[0].timer == TimerKey("change_propagation", ("PSC2", "Intersite"))
    assert timers(ctx) == [StartTimer(PSC, TimerKey("change_propagation", ("PSC3", "Intersite")), 10.0)]


@covers("MC-MQDSRP", "3.1.7.2.11")
def test_known_site_without_psc_neighbor_only_moves_its_partition():
    """"If dirPSCNeighbor is found" guards the rename: with no neighbor for the partition only AuthorityName changes."""
    qm = _psc_knowing_site2()
    qm.psc_neighbors = [DirectoryNeighbor(SITE1, "PSC7")]
    assert _site_update(qm, SITE2, PSC3, False)[0] == (st.MQ_OK, True)
    assert qm.find_partition(SITE2).authority_name == "PSC3"
    assert [n.machine_name for n in qm.psc_neighbors] == ["PSC7"]


@covers("MC-MQDSRP", "3.1.7.2.11")
def test_unknown_site_outside_sync_takes_no_action():
    """Not found and iSync false: no partition is created and rNeedFlush stays false."""
    qm = psc_node()
    result, ctx = _site_update(qm, SITE2, (*site_props("site2", SITE2, None), *PSC3), False)
    assert result == (st.MQ_OK, False) and ctx.effects == []
    assert qm.find_partition(SITE2) is None


@covers("MC-MQDSRP", "3.1.7.2.11")
def test_unknown_site_in_a_sync_reply_gets_a_partition_a_sync_request_and_a_psc_neighbor():
    """iSync true: newPartition (PROPID_S_SITEID, MIN, NORMAL), Send Sync Request, newPSCNeighbor (newPartition.PartitionID), Intersite timer."""
    qm = psc_node()
    result, ctx = _site_update(qm, SITE2, site_props("site2", SITE2, "PSC2"), True)
    assert result == (st.MQ_OK, True)
    new = qm.find_partition(SITE2)
    assert (new.authority_name, new.last_seq_number, new.purged_seq_number, new.allowed_purge_seq_number,
            new.purge_state, new.change_missing_window) == (
        "PSC2", MIN_SEQ_NUMBER, MIN_SEQ_NUMBER, MIN_SEQ_NUMBER, PurgeState.NORMAL, MAX_SEQ_NUMBER)
    [sent] = messages(ctx)
    assert sent.destination == "PSC2" and isinstance(sent.body, SyncRequestMessage)
    assert sent.body.partition_id == SITE2
    assert [(n.partition_id, n.machine_name, n.acked_seq_number, n.acked_pec_seq_number) for n in qm.psc_neighbors] \
        == [(SITE2, "PSC2", MIN_SEQ_NUMBER, MIN_SEQ_NUMBER)]
    assert timers(ctx) == [StartTimer(PSC, TimerKey("change_propagation", ("PSC2", "Intersite")), 10.0)]


@covers("MC-MQDSRP", "3.1.7.2.11")
@pytest.mark.parametrize("mode", MODES)
def test_sync_change_without_site_id_names_the_partition_by_guid_only_when_clarified(mode):
    """E-114: a sync change carries no PROPID_S_SITEID (3.2.7.8); clarified mode takes iGuidIdentifier, literal mode creates nothing."""
    qm = psc_node()
    props = (Property(P["PROPID_S_PATHNAME"], "site2"), Property(P["PROPID_S_PSC"], "PSC2"))
    result, ctx = _site_update(qm, SITE2, props, True, mode)
    if mode is Mode.CLARIFIED:
        assert result == (st.MQ_OK, True)
        assert qm.find_partition(SITE2).authority_name == "PSC2"
    else:
        assert result == (st.MQ_OK, False)
        assert len(qm.partitions) == 2 and ctx.effects == []


@covers("MC-MQDSRP", "3.1.7.2.11")
@pytest.mark.parametrize("mode", MODES)
def test_bsc_adds_a_psc_neighbor_for_a_synced_site_only_literally(mode):
    """E-106: a BSC keeps no PSC neighbors; clarified mode only adds the partition and asks its PSC."""
    qm = bsc_node()
    result, ctx = _site_update(qm, SITE2, site_props("site2", SITE2, "PSC2"), True, mode)
    assert result == (st.MQ_OK, True)
    assert qm.find_partition(SITE2) is not None
    assert [m.destination for m in messages(ctx)] == [PSC]
    expected = [] if mode is Mode.CLARIFIED else ["PSC2"]
    assert [n.machine_name for n in qm.psc_neighbors] == expected
    assert len(timers(ctx)) == len(expected)


@covers("MC-MQDSRP", "3.1.7.2.11")
def test_synced_site_of_this_psc_becomes_my_site_partition():
    """newPSCName is this machine and newPartition.PartitionID is SiteIdentifier: "Set QueueManager.MySitePartition to newPartition"."""
    qm = psc_node(site_partition=False)
    result, ctx = _site_update(qm, SITE1, site_props("site1", SITE1, PSC), True)
    assert result == (st.MQ_OK, True)
    assert qm.my_site_partition is qm.find_partition(SITE1)
    assert ctx.effects == [] and qm.psc_neighbors == []


@covers("MC-MQDSRP", "3.1.7.2.11")
def test_synced_site_naming_this_machine_for_another_site_is_not_my_site():
    """"Else If newPartition.PartitionID is equal to QueueManager.SiteIdentifier": another site's partition is added, not adopted."""
    qm = make_qm(PSC, Role.PSC, SITE1, partitions=[DirectoryPartition(ENT, PEC)])
    result, ctx = _site_update(qm, SITE2, site_props("site2", SITE2, PSC), True)
    assert result == (st.MQ_OK, True)
    assert qm.find_partition(SITE2) is not None and qm.my_site_partition is None
    assert ctx.effects == []


@covers("MC-MQDSRP", "3.1.7.2.11")
@pytest.mark.parametrize("mode", MODES)
def test_update_by_path_name_finds_the_partition_by_its_site_id_property_only_when_clarified(mode):
    """E-162: the text finds dirPartition by iGuidIdentifier only; clarified mode finds a path-named update by its PROPID_S_SITEID."""
    qm = _psc_knowing_site2()
    result, ctx = _site_update(qm, None, site_props("site2", SITE2, "PSC3"), False, mode, path="site2")
    if mode is Mode.CLARIFIED:
        assert result == (st.MQ_OK, True)
        assert qm.find_partition(SITE2).authority_name == "PSC3"
        assert [(n.partition_id, n.machine_name) for n in qm.psc_neighbors] == [(SITE1, "PSC7"), (SITE2, "PSC3")]
    else:
        assert result == (st.MQ_OK, False)
        assert qm.find_partition(SITE2).authority_name == "PSC2"
        assert [(n.partition_id, n.machine_name) for n in qm.psc_neighbors] == [(SITE1, "PSC7"), (SITE2, "PSC2")]
    # only a rename moves the neighbor's timer (modelling E-310)
    assert len(timers(ctx)) == (1 if mode is Mode.CLARIFIED else 0)


@covers("MC-MQDSRP", "3.1.7.2.11")
@pytest.mark.parametrize("mode", MODES)
def test_update_by_path_name_alone_finds_the_partition_through_the_site_object_only_when_clarified(mode):
    """E-162: with neither iGuidIdentifier nor PROPID_S_SITEID, clarified mode takes the GUID of the site object the path names."""
    qm = _psc_knowing_site2()
    add_object(qm, SITE, "site2", SITE2, site_props("site2", SITE2, "PSC2"), ENT)
    result, _ = _site_update(qm, None, PSC3, False, mode, path="site2")
    moved = mode is Mode.CLARIFIED
    assert result == (st.MQ_OK, moved)
    assert qm.find_partition(SITE2).authority_name == ("PSC3" if moved else "PSC2")
