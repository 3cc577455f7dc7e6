"""MC-MQDSRP 3.3.3 Initialization: common initialization, the client's timers, and the first sync requests."""

from mqspec.model.guid import Guid
from mqspec.model.mqdsrp import Scope, SyncRequestMessage
from mqspec.model.seqnum import MAX_SEQ_NUMBER, MIN_SEQ_NUMBER
from mqspec.refimpl.effects import StartTimer, TimerKey
from mqspec.refimpl.mqdsrp_client import client_initialization
from mqspec.refimpl.mqdsrp_state import DirectoryPartition, PurgeState, Role

from mqspec.clauses import covers

from .mqdsrp_fixtures_client import (
    BSC11,
    ENT,
    PEC,
    PSC1,
    SITE0,
    SITE1,
    bodies,
    bsc_qm,
    ctx_for,
    expect_send,
    new_qm,
    partition,
    pec_qm,
    psc_qm,
    sent,
    seq,
    started,
)


def requests(ctx):
    return [(e.destination, e.body.partition_id) for e in sent(ctx)]


@covers("MC-MQDSRP", "3.3.3")
def test_a_new_psc_creates_the_enterprise_partition_and_asks_the_pec_for_all_of_it():
    """The common initialization runs first (3.1.3), so the new enterprise partition is synchronized at once."""
    qm = new_qm(PSC1, Role.PSC, SITE1)
    ctx = ctx_for(qm)
    client_initialization(qm, ctx)
    request = SyncRequestMessage(SITE1, ENT, MIN_SEQ_NUMBER, MAX_SEQ_NUMBER, MIN_SEQ_NUMBER, False, Scope.ENTERPRISE,
                                 PSC1)
    assert ctx.effects == [expect_send(qm, PEC, request, 20 * 60, 3, "AckNackReachQueue", acked_queues=True)]
    assert qm.replication_queue_open


@covers("MC-MQDSRP", "3.3.3")
def test_a_bsc_starts_its_bsc_ack_timer_and_asks_its_psc_for_every_partition():
    """A BSC: "Start the BSC Ack Timer" (5 s, <8>) and a Send Sync Request for every partition, to MyPSCName."""
    qm = bsc_qm()
    ctx = ctx_for(qm)
    client_initialization(qm, ctx)
    assert started(ctx) == [StartTimer(BSC11, TimerKey("bsc_ack"), 5.0)]
    assert requests(ctx) == [(PSC1, ENT), (PSC1, SITE0), (PSC1, SITE1)]
    assert {b.scope for b in bodies(ctx)} == {Scope.NONE}


@covers("MC-MQDSRP", "3.3.3")
def test_a_bsc_asks_even_for_a_partition_it_names_as_its_own():
    """"... or the queue manager is a BSC": a BSC asks whatever AuthorityName says."""
    qm = bsc_qm()
    qm.partitions.append(DirectoryPartition(Guid.from_name("site:odd"), BSC11))
    ctx = ctx_for(qm)
    client_initialization(qm, ctx)
    assert requests(ctx)[-1] == (PSC1, Guid.from_name("site:odd"))


@covers("MC-MQDSRP", "3.3.3")
def test_a_psc_starts_a_propagation_timer_per_neighbor_and_asks_for_the_partitions_it_replicates():
    """Intrasite timers (2 s) for BSC neighbors, Intersite (10 s) for PSC neighbors; no request for its own site."""
    qm = psc_qm(bsc_neighbors=[BSC11, "BSC12"])
    ctx = ctx_for(qm)
    client_initialization(qm, ctx)
    assert started(ctx) == [
        StartTimer(PSC1, TimerKey("change_propagation", (BSC11, "Intrasite")), 2.0),
        StartTimer(PSC1, TimerKey("change_propagation", ("BSC12", "Intrasite")), 2.0),
        StartTimer(PSC1, TimerKey("change_propagation", (PEC, "Intersite")), 10.0),
    ]
    assert requests(ctx) == [(PEC, ENT), (PEC, SITE0)]
    assert {b.scope for b in bodies(ctx)} == {Scope.ENTERPRISE}


@covers("MC-MQDSRP", "3.3.3")
def test_the_pec_asks_only_for_other_sites_partitions():
    """The PEC is the authority of the enterprise partition and of its site: it asks only PSC1 for site1."""
    qm = pec_qm(bsc_neighbors=["BSC01"])
    ctx = ctx_for(qm)
    client_initialization(qm, ctx)
    assert requests(ctx) == [(PSC1, SITE1)]
    assert [t.timer.args for t in started(ctx)] == [("BSC01", "Intrasite"), (PSC1, "Intersite")]


@covers("MC-MQDSRP", "3.3.3")
def test_a_restart_asks_from_the_persisted_last_seq_number_with_the_window_reset():
    """After a restart FromSeqNumber is the persisted LastSeqNumber and ToSeqNumber the reset window (MAX)."""
    qm = psc_qm()
    ent = partition(qm, ENT)
    ent.last_seq_number, ent.purged_seq_number, ent.change_missing_window = seq(40), seq(3), seq(41)
    ctx = ctx_for(qm)
    client_initialization(qm, ctx)
    [first] = [b for b in bodies(ctx) if b.partition_id == ENT]
    assert (first.from_seq_number, first.to_seq_number, first.known_purged_seq_number) == (
        seq(40), MAX_SEQ_NUMBER, seq(3))


@covers("MC-MQDSRP", "3.3.3")
def test_a_partition_restarted_in_sync0_asks_with_is_sync0():
    """A partition persisted in PURGE_STATE_SYNC0 resumes its full synchronization (IsSync0 0x01)."""
    qm = psc_qm()
    partition(qm, ENT).purge_state = PurgeState.SYNC0
    partition(qm, SITE0).purge_state = PurgeState.STARTSYNC0
    ctx = ctx_for(qm)
    client_initialization(qm, ctx)
    assert [(b.partition_id, b.is_sync0) for b in bodies(ctx)] == [(ENT, True)]
