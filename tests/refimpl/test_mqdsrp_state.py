"""MC-MQDSRP 3.1.1: a crash (lose_volatile_state) resets exactly what the data model calls "not persisted"."""

import attrs
from hypothesis import given
from hypothesis import strategies as st

from mqspec.model.guid import Guid
from mqspec.model.seqnum import MAX_SEQ_NUMBER, MIN_SEQ_NUMBER
from mqspec.refimpl.mqdsrp_common import common_initialization
from mqspec.refimpl.mqdsrp_state import (
    DeletedObject,
    DirectoryNeighbor,
    DirectoryPartition,
    PendingChangeRequest,
    PurgeState,
    QueueManager,
    lose_volatile_state,
)

from .mqdsrp_fixtures import (
    ENT,
    QUEUE,
    SITE0,
    SITE1,
    add_object,
    bsc_node,
    change,
    context,
    guid_of,
    pec_node,
    queue_props,
    seq,
    tombstone,
)

#: 3.1.1.1: "These attributes are not persisted in the directory and MUST be computed during protocol initialization"
QM_NOT_PERSISTED = {"my_enterprise_partition", "my_site_partition", "my_psc_name"}
#: the event machinery's runtime state, which no section persists either
QM_RUNTIME = {"replication_queue_open", "pending_requests",
              "last_seq_number_header_time", "last_seq_number_header_sent"}


def _volatile(cls):
    return {f.name for f in attrs.fields(cls) if not f.metadata.get("persisted", True)}


def _busy_pec():
    """PEC0 with every attribute, persisted or not, away from its initial value."""
    qm = pec_node()
    qm.psc_neighbors = [DirectoryNeighbor(SITE1, "PSC1", seq(3), seq(4), 5.0)]
    qm.bsc_neighbors = [DirectoryNeighbor(SITE0, "BSC01", last_acked_time=9.0)]
    qm.deleted_objects = [tombstone(ENT, 2)]
    add_object(qm, QUEUE, "q1", guid_of("q1"), queue_props("q1"), ENT)
    for p in qm.partitions:
        p.last_seq_number, p.purged_seq_number, p.allowed_purge_seq_number = seq(40), seq(20), seq(30)
        p.purge_state = PurgeState.SYNC0
        p.previous_purged_seq_number, p.change_missing_window = seq(35), seq(44)
        p.pending_changes = [change(0, p.partition_id, 45, 46)]
    for n in (*qm.psc_neighbors, *qm.bsc_neighbors):
        n.available_changes = [change(0, ENT, 40, 41)]
    qm.replication_queue_open = True
    qm.pending_requests[("PEC0", 1)] = PendingChangeRequest(1, None, "client", 1)  # type: ignore[arg-type]
    qm.next_request_identifier = qm.next_client_request = 7
    qm.last_seq_number_header_time = 12.0
    qm.last_seq_number_header_sent = {("PSC1", "Intersite"): 12.0}
    return qm


def test_the_not_persisted_attributes_are_exactly_those_of_the_text():
    """DirectoryPartition: PreviousPurgedSeqNumber, ChangeMissingWindow, PendingChangeCollection; DirectoryNeighbor: AvailableChangeCollection.

    The RequestIdentifier counter is kept (E-163); the per-neighbor SeqNumberHeader times (E-137) are not.
    """
    assert _volatile(DirectoryPartition) == {"previous_purged_seq_number", "change_missing_window", "pending_changes"}
    assert _volatile(DirectoryNeighbor) == {"available_changes"}
    assert _volatile(DeletedObject) == set()
    assert _volatile(QueueManager) == QM_NOT_PERSISTED | QM_RUNTIME


def test_crash_resets_the_not_persisted_attributes_to_their_initial_values():
    """After a crash PreviousPurgedSeqNumber is MIN, ChangeMissingWindow MAX, the collections empty and the My* attributes unset."""
    qm = _busy_pec()
    lose_volatile_state(qm)
    for p in qm.partitions:
        assert (p.previous_purged_seq_number, p.change_missing_window, p.pending_changes) == (
            MIN_SEQ_NUMBER, MAX_SEQ_NUMBER, [])
    assert all(n.available_changes == [] for n in (*qm.psc_neighbors, *qm.bsc_neighbors))
    assert (qm.my_enterprise_partition, qm.my_site_partition, qm.my_psc_name) == (None, None, None)
    assert (qm.replication_queue_open, qm.pending_requests,
            qm.last_seq_number_header_time, qm.last_seq_number_header_sent) == (False, {}, None, {})


def test_crash_keeps_the_request_identifier_counter():
    """E-163: RequestIdentifier goes on from where it was, so a late ChangeReply to a request from before the crash matches none."""
    qm = _busy_pec()
    lose_volatile_state(qm)
    assert qm.next_request_identifier == 7
    assert qm.next_client_request == 7  # the simulator's client request numbers are not reused either


def test_crash_keeps_every_persisted_attribute():
    """"The state MUST be persisted, except for those attributes that are explicitly specified as not persisted"."""
    qm = _busy_pec()
    partitions, directory = list(qm.partitions), qm.directory
    lose_volatile_state(qm)
    assert qm.partitions == partitions
    for p in qm.partitions:
        assert (p.authority_name, p.last_seq_number, p.purged_seq_number, p.allowed_purge_seq_number,
                p.purge_state) == ("PEC0", seq(40), seq(20), seq(30), PurgeState.SYNC0)
    [psc] = qm.psc_neighbors
    assert (psc.partition_id, psc.machine_name, psc.acked_seq_number, psc.acked_pec_seq_number,
            psc.last_acked_time) == (SITE1, "PSC1", seq(3), seq(4), 5.0)
    assert qm.bsc_neighbors[0].last_acked_time == 9.0
    assert [(d.identifier, d.seq_number) for d in qm.deleted_objects] == [(guid_of("gone2"), seq(2))]
    assert qm.directory is directory and qm.directory.find(guid=guid_of("q1")) is not None


def test_initialization_after_a_crash_recomputes_the_my_attributes():
    """3.1.1.1: MyEnterprisePartition, MySitePartition and MyPSCName "MUST be computed during protocol initialization"."""
    pec = _busy_pec()
    lose_volatile_state(pec)
    common_initialization(pec, context(pec))
    assert pec.my_enterprise_partition is pec.find_partition(ENT)
    assert pec.my_site_partition is pec.find_partition(SITE0)
    bsc = bsc_node()
    lose_volatile_state(bsc)
    assert bsc.my_psc_name is None
    common_initialization(bsc, context(bsc))
    assert bsc.my_psc_name == "PSC1" and bsc.my_site_partition is bsc.find_partition(SITE1)


_IDS = [Guid.from_name(f"partition{i}") for i in range(4)]
_EDITS = st.lists(st.tuples(st.sampled_from(["append", "insert", "remove", "replace", "assign", "set_id", "find"]),
                            st.integers(0, 3), st.integers(0, 3)), max_size=30)


@given(_EDITS)
def test_find_partition_answers_as_a_scan_whatever_changes_the_partitions(edits):
    """find_partition gives the first partition with the PartitionID after any append, insert, remove, replacement, new list or new PartitionID."""
    qm = bsc_node()
    qm.partitions = []

    def scan(partition_id):
        return next((p for p in qm.partitions if p.partition_id == partition_id), None)

    for edit, i, j in edits:
        if edit == "append":
            qm.partitions.append(DirectoryPartition(_IDS[i], "PSC1"))
        elif edit == "insert":
            qm.partitions.insert(0, DirectoryPartition(_IDS[i], "PSC1"))
        elif edit == "remove" and qm.partitions:
            del qm.partitions[i % len(qm.partitions)]
        elif edit == "replace" and qm.partitions:
            qm.partitions[i % len(qm.partitions)] = DirectoryPartition(_IDS[j], "PSC1")
        elif edit == "assign":
            qm.partitions = [DirectoryPartition(_IDS[k], "PSC1") for k in (i, j, i)]
        elif edit == "set_id" and qm.partitions:
            qm.partitions[i % len(qm.partitions)].partition_id = _IDS[j]
        for partition_id in _IDS:
            assert qm.find_partition(partition_id) is scan(partition_id)
