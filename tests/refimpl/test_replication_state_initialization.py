"""MC-MQDSRP 3.1.3.1 Replication State Initialization (and the 3.1.3 sequence of the three initializations)."""

from mqspec.model.seqnum import MAX_SEQ_NUMBER, MIN_SEQ_NUMBER
from mqspec.refimpl.mqdsrp_common import (
    common_initialization,
    replication_state_initialization,
)
from mqspec.refimpl.mqdsrp_state import PurgeState, Role

from mqspec.clauses import covers

from .mqdsrp_fixtures import (
    BSC,
    ENT,
    PEC,
    PSC,
    SITE0,
    SITE1,
    DirectoryPartition,
    change,
    context,
    make_qm,
    seq,
)


@covers("MC-MQDSRP", "3.1.3.1")
def test_pec_with_no_partition_creates_the_enterprise_partition_it_owns():
    """An empty DirectoryPartitionCollection gets entPartition with PEC_PARTITION_ID, AuthorityName the PEC's own name, MIN sequence numbers and PURGE_STATE_NORMAL."""
    qm = make_qm(PEC, Role.PEC, SITE0)
    ctx = context(qm)
    replication_state_initialization(qm, ctx)
    assert len(qm.partitions) == 1
    ent = qm.partitions[0]
    assert ent.partition_id == ENT
    assert ent.authority_name == PEC
    assert (ent.last_seq_number, ent.purged_seq_number, ent.allowed_purge_seq_number) == (MIN_SEQ_NUMBER,) * 3
    assert ent.purge_state is PurgeState.NORMAL
    assert qm.my_enterprise_partition is ent
    assert ctx.effects == []


@covers("MC-MQDSRP", "3.1.3.1")
def test_non_pec_with_no_partition_names_the_administered_pec_as_authority():
    """On a PSC the new enterprise partition's AuthorityName is "the PEC machine name (typically provided by the administrator)"."""
    qm = make_qm(PSC, Role.PSC, SITE1, pec="PEC9")
    replication_state_initialization(qm, context(qm))
    assert [(p.partition_id, p.authority_name) for p in qm.partitions] == [(ENT, "PEC9")]
    assert qm.my_enterprise_partition is None


@covers("MC-MQDSRP", "3.1.3.1")
def test_existing_partitions_are_kept_with_their_persisted_state():
    """A non-empty DirectoryPartitionCollection is not extended and its persisted attributes stay as they were."""
    ent = DirectoryPartition(ENT, PEC, seq(40), seq(7), seq(9))
    site = DirectoryPartition(SITE1, PSC, seq(12), purge_state=PurgeState.SYNC0)
    qm = make_qm(PSC, Role.PSC, SITE1, partitions=[ent, site])
    replication_state_initialization(qm, context(qm))
    assert qm.partitions == [ent, site]
    assert (ent.last_seq_number, ent.purged_seq_number, ent.allowed_purge_seq_number) == (seq(40), seq(7), seq(9))
    assert site.last_seq_number == seq(12) and site.purge_state is PurgeState.SYNC0


@covers("MC-MQDSRP", "3.1.3.1")
def test_every_partition_gets_its_non_persisted_attributes_initialized():
    """PreviousPurgedSeqNumber := MIN_SEQ_NUMBER, ChangeMissingWindow := MAX_SEQ_NUMBER, PendingChangeCollection := empty for each partition."""
    ent = DirectoryPartition(ENT, PEC, seq(40))
    site = DirectoryPartition(SITE1, PSC, seq(3))
    for p in (ent, site):
        p.previous_purged_seq_number = seq(30)
        p.change_missing_window = seq(44)
        p.pending_changes = [change(0, p.partition_id, 50, 51)]
    qm = make_qm(PSC, Role.PSC, SITE1, partitions=[ent, site])
    replication_state_initialization(qm, context(qm))
    for p in (ent, site):
        assert p.previous_purged_seq_number == MIN_SEQ_NUMBER
        assert p.change_missing_window == MAX_SEQ_NUMBER
        assert p.pending_changes == []


@covers("MC-MQDSRP", "3.1.3.1")
def test_pec_sets_my_enterprise_partition_to_the_pec_partition_id_element():
    """"If the queue manager is a PEC: Set QueueManager.MyEnterprisePartition to the element ... whose PartitionID is PEC_PARTITION_ID"."""
    site = DirectoryPartition(SITE0, PEC)
    ent = DirectoryPartition(ENT, PEC)
    qm = make_qm(PEC, Role.PEC, SITE0, partitions=[site, ent])
    replication_state_initialization(qm, context(qm))
    assert qm.my_enterprise_partition is ent
    assert qm.my_site_partition is site


@covers("MC-MQDSRP", "3.1.3.1")
def test_psc_leaves_my_enterprise_partition_unpopulated():
    """MyEnterprisePartition "is only populated when the queue manager is a Primary Enterprise Controller"."""
    qm = make_qm(PSC, Role.PSC, SITE1, partitions=[DirectoryPartition(ENT, PEC), DirectoryPartition(SITE1, PSC)])
    replication_state_initialization(qm, context(qm))
    assert qm.my_enterprise_partition is None
    assert qm.my_site_partition is qm.partitions[1]
    assert qm.my_psc_name is None  # "populated only if the queue manager is a Backup Site Controller"


@covers("MC-MQDSRP", "3.1.3.1")
def test_bsc_with_its_site_partition_takes_my_psc_name_from_its_authority():
    """A BSC whose site partition is found sets MyPSCName to mySitePartition.AuthorityName (not to the configured name)."""
    qm = make_qm(BSC, Role.BSC, SITE1, psc="configured-psc",
                 partitions=[DirectoryPartition(ENT, PEC), DirectoryPartition(SITE1, "PSC7")])
    replication_state_initialization(qm, context(qm))
    assert qm.my_site_partition is qm.partitions[1]
    assert qm.my_psc_name == "PSC7"


@covers("MC-MQDSRP", "3.1.3.1")
def test_missing_site_partition_leaves_my_site_partition_uninitialized():
    """Without a partition whose PartitionID is the SiteIdentifier, "QueueManager.MySitePartition remains uninitialized"."""
    qm = make_qm(PSC, Role.PSC, SITE1, partitions=[DirectoryPartition(ENT, PEC), DirectoryPartition(SITE0, PEC)])
    replication_state_initialization(qm, context(qm))
    assert qm.my_site_partition is None
    assert qm.my_psc_name is None


@covers("MC-MQDSRP", "3.1.3.1")
def test_bsc_without_site_partition_uses_the_implementation_specific_psc_name():
    """"How the PSC machine name is obtained is implementation-specific": mqspec takes the configured name."""
    qm = make_qm(BSC, Role.BSC, SITE1, psc=PSC, partitions=[DirectoryPartition(ENT, PEC)])
    replication_state_initialization(qm, context(qm))
    assert qm.my_site_partition is None
    assert qm.my_psc_name == PSC


@covers("MC-MQDSRP", "3.1.3")
def test_common_initialization_runs_the_three_initializations_without_effects():
    """3.1.3: replication state, directory neighbor and replication queue initialization all run; none sends or starts anything."""
    qm = make_qm(PEC, Role.PEC, SITE0)
    ctx = context(qm)
    common_initialization(qm, ctx)
    assert qm.my_enterprise_partition is qm.partitions[0]
    assert qm.replication_queue_open
    assert ctx.effects == []
