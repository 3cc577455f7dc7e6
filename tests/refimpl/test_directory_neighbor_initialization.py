"""MC-MQDSRP 3.1.3.2 Directory Neighbor Initialization."""

from mqspec.refimpl.mqdsrp_common import directory_neighbor_initialization
from mqspec.refimpl.mqdsrp_state import Role

from mqspec.clauses import covers

from .mqdsrp_fixtures import (
    ENT,
    PEC,
    SITE0,
    SITE1,
    DirectoryNeighbor,
    change,
    context,
    make_qm,
    seq,
)


def _neighbor(name, partition):
    n = DirectoryNeighbor(partition, name, seq(5), seq(6), 77.0)
    n.available_changes = [change(0, partition, 1, 2)]
    return n


@covers("MC-MQDSRP", "3.1.3.2")
def test_psc_neighbors_start_with_empty_available_changes():
    """"Set dirPSCNeighbor.AvailableChangeCollection to empty" for every PSC neighbor; the persisted attributes stay."""
    qm = make_qm(PEC, Role.PEC, SITE0)
    qm.psc_neighbors = [_neighbor("PSC1", SITE1), _neighbor("PSC2", ENT)]
    ctx = context(qm)
    directory_neighbor_initialization(qm, ctx)
    for n in qm.psc_neighbors:
        assert n.available_changes == []
        assert (n.acked_seq_number, n.acked_pec_seq_number, n.last_acked_time) == (seq(5), seq(6), 77.0)
    assert ctx.effects == []


@covers("MC-MQDSRP", "3.1.3.2")
def test_bsc_neighbors_start_with_empty_available_changes():
    """"Set dirBSCNeighbor.AvailableChangeCollection to empty" for every BSC neighbor; machine names and ack times stay."""
    qm = make_qm(PEC, Role.PEC, SITE0)
    qm.bsc_neighbors = [_neighbor("BSC01", SITE0), _neighbor("BSC02", SITE0)]
    directory_neighbor_initialization(qm, context(qm))
    assert [n.machine_name for n in qm.bsc_neighbors] == ["BSC01", "BSC02"]
    assert all(n.available_changes == [] and n.last_acked_time == 77.0 for n in qm.bsc_neighbors)
