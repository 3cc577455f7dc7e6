"""MC-MQDSRP 3.1.7.2.9 Purge Deleted Objects."""

import pytest
from mqspec.refimpl.effects import Mode
from mqspec.refimpl.mqdsrp_objects import purge_deleted_objects
from mqspec.refimpl.mqdsrp_state import PurgeState

from mqspec.clauses import covers

from .mqdsrp_fixtures import (
    ENT,
    MODES,
    SITE0,
    SITE1,
    DirectoryNeighbor,
    context,
    pec_node,
    psc_node,
    seq,
    tombstone,
)

TOMBSTONES = (10, 500, 976, 977, 1200, 1976, 2500, 2999)


def _tombstones(qm, partition):
    qm.deleted_objects = [tombstone(partition, n) for n in TOMBSTONES] + [tombstone(SITE1 if partition != SITE1
                                                                                   else SITE0, 5, "other")]


def _left(qm, partition):
    return [d.seq_number.value for d in qm.deleted_objects if d.partition_id == partition]


def _authority(partition=ENT, last=3000, purged=0, acks=((2500, 2500), (2600, 2600))):
    """PEC0 owning ``partition``, with one PSC neighbor per (AckedSeqNumber, AckedPECSeqNumber) pair."""
    qm = pec_node()
    p = qm.find_partition(partition)
    p.last_seq_number, p.purged_seq_number = seq(last), seq(purged)
    qm.psc_neighbors = [DirectoryNeighbor(SITE1, f"PSC{i}", seq(a), seq(b)) for i, (a, b) in enumerate(acks, 1)]
    _tombstones(qm, partition)
    return qm, p


def _replica(last=3000, purged=0, allowed=2500):
    qm = psc_node()
    p = qm.find_partition(ENT)
    p.last_seq_number, p.purged_seq_number, p.allowed_purge_seq_number = seq(last), seq(purged), seq(allowed)
    _tombstones(qm, ENT)
    return qm, p


def _purge(qm, p, mode=Mode.CLARIFIED):
    ctx = context(qm, mode)
    purge_deleted_objects(qm, ctx, p)
    assert ctx.effects == []  # purging sends nothing


def _upto(n):
    return [s for s in TOMBSTONES if s > n]


@covers("MC-MQDSRP", "3.1.7.2.9")
@pytest.mark.parametrize("mode", MODES)
def test_partition_younger_than_the_buffer_purges_only_when_subtraction_wraps(mode):
    """E-130: "(iPartition.LastSeqNumber - 1024)" wraps below 1024 (2.2.2 Subtraction); clarified mode keeps the buffer."""
    qm, p = _replica(last=1000, allowed=500)
    _purge(qm, p, mode)
    if mode is Mode.CLARIFIED:
        assert _left(qm, ENT) == list(TOMBSTONES) and p.purged_seq_number == seq(0)
    else:
        assert _left(qm, ENT) == _upto(500) and p.purged_seq_number == seq(0)


@covers("MC-MQDSRP", "3.1.7.2.9")
def test_partition_outside_purge_state_normal_is_not_purged():
    """"If iPartition.PurgeState is not 0 (PURGE_STATE_NORMAL) ...: Take no further action"."""
    qm, p = _replica()
    p.purge_state = PurgeState.SYNC0
    _purge(qm, p)
    assert _left(qm, ENT) == list(TOMBSTONES)


@covers("MC-MQDSRP", "3.1.7.2.9")
def test_partition_already_purged_up_to_the_buffer_is_not_purged():
    """"... or iPartition.PurgedSeqNumber >= purgeSeqNumber: Take no further action"."""
    qm, p = _replica(last=2000, purged=976)
    _purge(qm, p)
    assert _left(qm, ENT) == list(TOMBSTONES)


@covers("MC-MQDSRP", "3.1.7.2.9")
@pytest.mark.parametrize("mode", MODES)
def test_pec_purges_the_enterprise_partition_up_to_the_least_acked_pec_seq_number(mode):
    """PEC_PARTITION_ID: minAckedSeqNumber over AckedPECSeqNumber; E-130: clarified mode also keeps the 1024 buffer."""
    qm, p = _authority(ENT, last=3000, acks=((100, 2600), (100, 2500)))
    _purge(qm, p, mode)
    if mode is Mode.CLARIFIED:
        assert _left(qm, ENT) == _upto(1976)  # min(2500, 3000 - 1024)
        assert p.purged_seq_number == seq(1976)  # E-133
    else:
        assert _left(qm, ENT) == _upto(2500)
        assert p.purged_seq_number == seq(0)
    assert _left(qm, SITE1) == [5]


@covers("MC-MQDSRP", "3.1.7.2.9")
def test_authority_purges_a_site_partition_up_to_the_least_acked_seq_number():
    """A site partition: minAckedSeqNumber over AckedSeqNumber (not AckedPECSeqNumber)."""
    qm, p = _authority(SITE0, last=3000, acks=((1200, 9000), (1500, 9000)))
    _purge(qm, p)
    assert _left(qm, SITE0) == _upto(1200)
    assert p.purged_seq_number == seq(1200)


@covers("MC-MQDSRP", "3.1.7.2.9")
def test_authority_waits_until_every_psc_acknowledged_past_the_purged_number():
    """"If minAckedSeqNumber <= iPartition.PurgedSeqNumber: Take no further action because not all PSCs have acknowledged"."""
    qm, p = _authority(ENT, last=3000, purged=600, acks=((0, 2500), (0, 600)))
    _purge(qm, p)
    assert _left(qm, ENT) == list(TOMBSTONES) and p.purged_seq_number == seq(600)


@covers("MC-MQDSRP", "3.1.7.2.9")
@pytest.mark.parametrize("mode", MODES)
def test_authority_without_psc_neighbors_purges_up_to_its_last_seq_number(mode):
    """E-132: the minimum over an empty PSCNeighborCollection is taken as LastSeqNumber; E-130 then keeps the buffer when clarified."""
    qm, p = _authority(ENT, last=3000, acks=())
    _purge(qm, p, mode)
    assert _left(qm, ENT) == (_upto(1976) if mode is Mode.CLARIFIED else [])


@covers("MC-MQDSRP", "3.1.7.2.9")
def test_replica_purges_up_to_the_allowed_purge_seq_number():
    """Not the authority, AllowedPurgeSeqNumber < purgeSeqNumber (and >= PurgedSeqNumber): purgeSeqNumber := AllowedPurgeSeqNumber."""
    qm, p = _replica(last=3000, allowed=977)
    _purge(qm, p)
    assert _left(qm, ENT) == _upto(977)


@covers("MC-MQDSRP", "3.1.7.2.9")
def test_replica_allowed_more_than_the_buffer_purges_up_to_the_buffer():
    """AllowedPurgeSeqNumber >= purgeSeqNumber: the buffer bound (LastSeqNumber - 1024) stays."""
    qm, p = _replica(last=3000, allowed=2900)
    _purge(qm, p)
    assert _left(qm, ENT) == _upto(1976)


@covers("MC-MQDSRP", "3.1.7.2.9")
def test_replica_allowed_less_than_its_purged_number_is_not_purged():
    """"If iPartition.AllowedPurgeSeqNumber < iPartition.PurgedSeqNumber: Take no further action"."""
    qm, p = _replica(last=3000, purged=900, allowed=800)
    _purge(qm, p)
    assert _left(qm, ENT) == list(TOMBSTONES) and p.purged_seq_number == seq(900)


@covers("MC-MQDSRP", "3.1.7.2.9")
@pytest.mark.parametrize("mode", MODES)
def test_purge_advances_purged_seq_number_only_when_clarified(mode):
    """E-133: the text removes tombstones but never advances PurgedSeqNumber, so Receive Sync Request cannot answer AlreadyPurged."""
    qm, p = _replica(last=3000, allowed=1200)
    _purge(qm, p, mode)
    assert _left(qm, ENT) == _upto(1200)
    assert p.purged_seq_number == (seq(1200) if mode is Mode.CLARIFIED else seq(0))
