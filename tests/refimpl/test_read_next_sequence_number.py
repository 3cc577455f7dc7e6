"""MC-MQDSRP 3.1.7.1.3 Read Next Sequence Number."""

import pytest
from mqspec.model.seqnum import MAX_SEQ_NUMBER, MIN_SEQ_NUMBER
from mqspec.refimpl.mqdsrp_common import read_next_sequence_number

from mqspec.clauses import covers

from .mqdsrp_fixtures import (
    ENT,
    SITE0,
    SITE1,
    SITE2,
    bsc_node,
    context,
    pec_node,
    psc_node,
    seq,
)


@covers("MC-MQDSRP", "3.1.7.1.3")
@pytest.mark.parametrize(("node", "partition"), [("pec", ENT), ("pec", SITE0), ("psc", SITE1)])
def test_owned_partition_answers_last_seq_number_plus_one(node, partition):
    """"Set rNextSeqNumber to dirPartition.LastSeqNumber. Increment rNextSeqNumber" for the PEC's partitions and a PSC's site."""
    qm = pec_node() if node == "pec" else psc_node()
    qm.find_partition(partition).last_seq_number = seq(41)
    ctx = context(qm)
    assert read_next_sequence_number(qm, ctx, partition) == seq(42)
    assert qm.find_partition(partition).last_seq_number == seq(41)  # reading does not consume the number
    assert ctx.effects == []


@covers("MC-MQDSRP", "3.1.7.1.3")
def test_increment_wraps_from_max_to_min():
    """"Increment rNextSeqNumber as specified in section 2.2.2": MAX_SEQ_NUMBER + 1 is MIN_SEQ_NUMBER."""
    qm = pec_node()
    qm.my_enterprise_partition.last_seq_number = MAX_SEQ_NUMBER
    assert read_next_sequence_number(qm, context(qm), ENT) == MIN_SEQ_NUMBER


@covers("MC-MQDSRP", "3.1.7.1.3")
@pytest.mark.parametrize(("node", "partition"), [("psc", ENT), ("bsc", SITE1), ("bsc", ENT), ("pec", SITE2),
                                                 ("psc-without-site", SITE1)])
def test_partition_not_owned_answers_min_seq_number(node, partition):
    """"Else Set rNextSeqNumber to MIN_SEQ_NUMBER": a replica, a BSC, or a PSC whose MySitePartition is uninitialized."""
    qm = {"pec": pec_node, "psc": psc_node, "bsc": bsc_node,
          "psc-without-site": lambda: psc_node(site_partition=False)}[node]()
    for p in qm.partitions:
        p.last_seq_number = seq(41)
    assert read_next_sequence_number(qm, context(qm), partition) == MIN_SEQ_NUMBER
