"""MC-MQDSRP 3.2.3 Initialization: "The server MUST perform the initializations specified in section 3.1.3"."""

from mqspec.model.seqnum import MAX_SEQ_NUMBER, MIN_SEQ_NUMBER
from mqspec.refimpl.mqdsrp_client import client_initialization
from mqspec.refimpl.mqdsrp_server import server_initialization
from mqspec.refimpl.mqdsrp_state import DirectoryPartition, PurgeState, Role

from mqspec.clauses import covers

from .mqdsrp_fixtures_client import (
    BSC11,
    ENT,
    PEC,
    PSC1,
    SITE0,
    SITE1,
    change,
    ctx_for,
    new_qm,
    seq,
)


@covers("MC-MQDSRP", "3.2.3")
def test_server_initialization_creates_the_enterprise_partition_at_a_new_pec():
    """A PEC with no partitions creates the enterprise partition with itself as authority (3.1.3.1)."""
    qm = new_qm(PEC, Role.PEC, SITE0)
    ctx = ctx_for(qm)
    server_initialization(qm, ctx)
    [ent] = qm.partitions
    assert (ent.partition_id, ent.authority_name) == (ENT, PEC)
    assert (ent.last_seq_number, ent.purged_seq_number, ent.allowed_purge_seq_number) == (MIN_SEQ_NUMBER,) * 3
    assert ent.purge_state is PurgeState.NORMAL
    assert qm.my_enterprise_partition is ent
    assert qm.my_site_partition is None
    assert qm.replication_queue_open
    assert ctx.effects == []


@covers("MC-MQDSRP", "3.2.3")
def test_server_initialization_names_the_pec_as_authority_at_a_new_psc():
    """A PSC's new enterprise partition names "the PEC machine name (typically provided by the administrator)"."""
    qm = new_qm(PSC1, Role.PSC, SITE1)
    server_initialization(qm, ctx_for(qm))
    [ent] = qm.partitions
    assert ent.authority_name == PEC
    assert qm.my_enterprise_partition is None


@covers("MC-MQDSRP", "3.2.3")
def test_server_initialization_keeps_persisted_partitions_and_resets_the_others():
    """Existing partitions are kept; PreviousPurgedSeqNumber, ChangeMissingWindow and PendingChangeCollection reset."""
    qm = new_qm(PSC1, Role.PSC, SITE1)
    site1 = DirectoryPartition(SITE1, PSC1, last_seq_number=seq(9))
    ent = DirectoryPartition(ENT, PEC, last_seq_number=seq(4))
    ent.previous_purged_seq_number = seq(3)
    ent.change_missing_window = seq(7)
    ent.pending_changes = [change(0, ENT, 9, previous=8)]
    qm.partitions = [ent, site1]
    server_initialization(qm, ctx_for(qm))
    assert qm.partitions == [ent, site1]
    assert ent.last_seq_number == seq(4)
    assert (ent.previous_purged_seq_number, ent.change_missing_window, ent.pending_changes) == (
        MIN_SEQ_NUMBER, MAX_SEQ_NUMBER, [])
    assert qm.my_site_partition is site1


@covers("MC-MQDSRP", "3.2.3")
def test_server_initialization_takes_a_bscs_psc_name_from_its_site_partition():
    """A BSC with its site partition sets MyPSCName to mySitePartition.AuthorityName, not to its configuration."""
    qm = new_qm(BSC11, Role.BSC, SITE1, psc="configured")
    qm.partitions = [DirectoryPartition(ENT, PEC), DirectoryPartition(SITE1, PSC1)]
    server_initialization(qm, ctx_for(qm))
    assert qm.my_psc_name == PSC1


@covers("MC-MQDSRP", "3.2.3")
def test_server_initialization_takes_a_bscs_psc_name_from_configuration_without_site_partition():
    """Without a site partition "How the PSC machine name is obtained is implementation-specific": configuration."""
    qm = new_qm(BSC11, Role.BSC, SITE1, psc=PSC1)
    server_initialization(qm, ctx_for(qm))
    assert qm.my_site_partition is None
    assert qm.my_psc_name == PSC1


@covers("MC-MQDSRP", "3.2.3")
def test_server_and_client_initialization_together_equal_client_initialization_alone():
    """The 3.1.3 steps are idempotent: server then client initialization leaves what client initialization leaves."""
    both, alone = new_qm(PSC1, Role.PSC, SITE1), new_qm(PSC1, Role.PSC, SITE1)
    ctx_both, ctx_alone = ctx_for(both), ctx_for(alone)
    server_initialization(both, ctx_both)
    client_initialization(both, ctx_both)
    client_initialization(alone, ctx_alone)
    assert ctx_both.effects == ctx_alone.effects
    assert [(p.partition_id, p.authority_name, p.change_missing_window) for p in both.partitions] == [
        (p.partition_id, p.authority_name, p.change_missing_window) for p in alone.partitions]
