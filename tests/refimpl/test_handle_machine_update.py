"""MC-MQDSRP 3.1.7.2.12 Handle Machine Update."""

import pytest
from mqspec.model.propvalue import Property
from mqspec.refimpl import status as st
from mqspec.refimpl.effects import StartTimer, TimerKey
from mqspec.refimpl.mqdsrp_objects import handle_machine_update

from mqspec.clauses import covers

from .mqdsrp_fixtures import (
    ENT,
    MACHINE,
    PSC,
    SERVICE_BSC,
    SITE1,
    DirectoryNeighbor,
    P,
    add_object,
    context,
    guid_of,
    machine_props,
    psc_node,
    timers,
)


def _machine_update(qm, partition_id, path, props, guid=None, sync=False):
    ctx = context(qm)
    result = handle_machine_update(qm, ctx, qm.find_partition(partition_id), path, guid, tuple(props), sync)
    return result, ctx


def _service(value):
    return (Property(P["PROPID_QM_SERVICE"], value),)


def _psc_with_bscs():
    qm = psc_node()
    qm.bsc_neighbors = [DirectoryNeighbor(SITE1, "BSC11"), DirectoryNeighbor(SITE1, "BSC12")]
    return qm


@covers("MC-MQDSRP", "3.1.7.2.12")
def test_update_without_service_takes_no_action():
    """"If PROPID_QM_SERVICE is not found in iPropertyID: Take no further action"."""
    qm = _psc_with_bscs()
    result, ctx = _machine_update(qm, SITE1, "BSC11", (Property(P["PROPID_QM_PATHNAME"], "BSC11"),))
    assert result == (st.MQ_OK, False) and ctx.effects == []
    assert len(qm.bsc_neighbors) == 2


@covers("MC-MQDSRP", "3.1.7.2.12")
def test_machine_becoming_a_bsc_of_this_site_is_appended_as_bsc_neighbor():
    """SERVICE_BSC in MySitePartition, no neighbor of that name: newBSCNeighbor (LastAckedTime 0) and an Intrasite timer."""
    qm = _psc_with_bscs()
    result, ctx = _machine_update(qm, SITE1, "BSC13", _service(SERVICE_BSC))
    assert result == (st.MQ_OK, False)  # E-115: rNeedFlush, which the callers read, is false
    assert [(n.partition_id, n.machine_name, n.last_acked_time) for n in qm.bsc_neighbors][-1] == (SITE1, "BSC13", 0.0)
    assert timers(ctx) == [StartTimer(PSC, TimerKey("change_propagation", ("BSC13", "Intrasite")), 2.0)]


@covers("MC-MQDSRP", "3.1.7.2.12")
def test_existing_bsc_neighbor_is_not_added_again():
    """"If there is no element in BSCNeighborCollection whose <MachineName> matches iPathName" guards the append."""
    qm = _psc_with_bscs()
    result, ctx = _machine_update(qm, SITE1, "BSC11", _service(SERVICE_BSC))
    assert result == (st.MQ_OK, False) and ctx.effects == []
    assert [n.machine_name for n in qm.bsc_neighbors] == ["BSC11", "BSC12"]


@covers("MC-MQDSRP", "3.1.7.2.12")
@pytest.mark.parametrize("service", [0x0, 0x1, 0x4])
def test_machine_no_longer_a_bsc_loses_its_bsc_neighbor(service):
    """Any other qmService: "Remove the element, if any, from BSCNeighborCollection where <MachineName> matches iPathName"."""
    qm = _psc_with_bscs()
    result, ctx = _machine_update(qm, SITE1, "BSC11", _service(service))
    assert result == (st.MQ_OK, False) and ctx.effects == []
    assert [n.machine_name for n in qm.bsc_neighbors] == ["BSC12"]


@covers("MC-MQDSRP", "3.1.7.2.12")
@pytest.mark.parametrize("service", [SERVICE_BSC, 0x0])
def test_machine_of_another_partition_takes_no_action(service):
    """"If iPartition is the same as QueueManager.MySitePartition ... Else: Take no further action"."""
    qm = _psc_with_bscs()
    result, ctx = _machine_update(qm, ENT, "BSC11", _service(service))
    assert result == (st.MQ_OK, False) and ctx.effects == []
    assert [n.machine_name for n in qm.bsc_neighbors] == ["BSC11", "BSC12"]


@covers("MC-MQDSRP", "3.1.7.2.12")
def test_machine_named_by_guid_is_matched_by_its_directory_path_name():
    """3.1.7.2.12 takes no iGuidIdentifier; a GUID-named (sync) change's NULL iPathName is resolved from the directory object."""
    qm = _psc_with_bscs()
    add_object(qm, MACHINE, "BSC11", guid_of("BSC11"), machine_props("BSC11", SITE1, 0), SITE1)
    result, _ = _machine_update(qm, SITE1, None, _service(0), guid=guid_of("BSC11"), sync=True)
    assert result == (st.MQ_OK, False)
    assert [n.machine_name for n in qm.bsc_neighbors] == ["BSC12"]
