"""MC-MQDSRP 3.3.7.3 Send Sync Request: ask for the changes after LastSeqNumber up to ChangeMissingWindow."""

import pytest
from mqspec.model.mqdsrp import Scope, SyncRequestMessage
from mqspec.refimpl.mqdsrp_client import send_sync_request
from mqspec.refimpl.mqdsrp_state import PurgeState

from mqspec.clauses import covers

from .mqdsrp_fixtures_client import (
    BSC11,
    ENT,
    PEC,
    PSC1,
    SITE1,
    bodies,
    bsc_qm,
    ctx_for,
    expect_send,
    partition,
    psc_qm,
    seq,
)


def numbered(qm, partition_id, last, window, purged):
    p = partition(qm, partition_id)
    p.last_seq_number, p.change_missing_window, p.purged_seq_number = seq(last), seq(window), seq(purged)
    return p


@covers("MC-MQDSRP", "3.3.7.3")
def test_a_psc_asks_the_partitions_authority():
    """From := LastSeqNumber, To := ChangeMissingWindow, Known := PurgedSeqNumber, Scope 0x01, to AuthorityName."""
    qm = psc_qm()
    p = numbered(qm, ENT, 4, 9, 2)
    ctx = ctx_for(qm)
    send_sync_request(qm, ctx, p)
    request = SyncRequestMessage(SITE1, ENT, seq(4), seq(9), seq(2), False, Scope.ENTERPRISE, PSC1)
    assert ctx.effects == [expect_send(qm, PEC, request, 20 * 60, 3, "AckNackReachQueue", acked_queues=True)]


@covers("MC-MQDSRP", "3.3.7.3")
def test_a_bsc_asks_its_psc_with_scope_0x00():
    """A BSC: iDestination := MyPSCName and Scope 0x00, whoever the partition's authority is."""
    qm = bsc_qm()
    p = numbered(qm, ENT, 4, 9, 2)
    ctx = ctx_for(qm)
    send_sync_request(qm, ctx, p)
    request = SyncRequestMessage(SITE1, ENT, seq(4), seq(9), seq(2), False, Scope.NONE, BSC11)
    assert ctx.effects == [expect_send(qm, PSC1, request, 20 * 60, 3, "AckNackReachQueue", acked_queues=True)]


@covers("MC-MQDSRP", "3.3.7.3")
def test_in_sync0_the_request_says_is_sync0():
    """IsSync0 is 0x01 when "iPartition.PurgeState is equal to 2 (PURGE_STATE_SYNC0)"."""
    qm = psc_qm()
    p = partition(qm, ENT)
    p.purge_state = PurgeState.SYNC0
    ctx = ctx_for(qm)
    send_sync_request(qm, ctx, p)
    assert [b.is_sync0 for b in bodies(ctx)] == [True]


@covers("MC-MQDSRP", "3.3.7.3")
@pytest.mark.parametrize("state", [PurgeState.STARTSYNC0, PurgeState.COMPLETESYNC0])
def test_other_purge_states_send_nothing(state):
    """"If iPartition.PurgeState is not 0 ... and ... not 2 ...: Take no further action"."""
    qm = psc_qm()
    p = partition(qm, ENT)
    p.purge_state = state
    ctx = ctx_for(qm)
    send_sync_request(qm, ctx, p)
    assert ctx.effects == []


@covers("MC-MQDSRP", "3.3.7.3")
def test_a_bsc_without_a_psc_name_has_no_destination():
    """MyPSCName unset: the message names no machine (the simulator reports it unsent)."""
    qm = bsc_qm(psc=None, site_partition=False)
    ctx = ctx_for(qm)
    send_sync_request(qm, ctx, partition(qm, ENT))
    assert [e.destination for e in ctx.effects] == [""]
