"""MC-MQDSRP 3.2.7.3 Receive Sync Request: answer with the partition's changes in range, or AlreadyPurged."""

import pytest
from mqspec.model.guid import Guid
from mqspec.model.mqdsrp import (
    AlreadyPurgedMessage,
    Command,
    CompleteSync0,
    Scope,
    SyncReplyMessage,
    SyncRequestMessage,
)
from mqspec.model.propids import ObjectType
from mqspec.model.propvalue import Property
from mqspec.model.seqnum import MAX_SEQ_NUMBER
from mqspec.refimpl.effects import Mode
from mqspec.refimpl.mqdsrp_server import lookup_directory_objects, receive_sync_request
from mqspec.refimpl.mqdsrp_state import DeletedObject, PurgeState

from mqspec.clauses import covers

from .mqdsrp_fixtures_client import (
    BSC11,
    ENT,
    MODES,
    PSC1,
    PSC2,
    SITE0,
    SITE1,
    SITE2,
    P,
    bodies,
    ctx_for,
    delete_properties,
    expect_send,
    machine_properties,
    partition,
    pec_qm,
    psc_qm,
    queue_properties,
    seq,
    site_properties,
    store_object,
)

QUEUE_A, QUEUE_B = Guid.from_name("queue:a"), Guid.from_name("queue:b")
GONE, GONE_OTHER = Guid.from_name("queue:gone"), Guid.from_name("machine:gone-elsewhere")


def site1_authority(last=6, purged=0):
    """PSC1 with machine M1 (seq 2), queue a (seq 3, enterprise scope), queue b (seq 5, site scope), tombstone 4."""
    qm = psc_qm()
    p = partition(qm, SITE1)
    p.last_seq_number, p.purged_seq_number = seq(last), seq(purged)
    store_object(qm, ObjectType.MQDS_MACHINE, "M1", machine_properties("M1", SITE1), SITE1, 2)
    store_object(qm, ObjectType.MQDS_QUEUE, "M1\\a", queue_properties("M1\\a", QUEUE_A, scope=1), SITE1, 3)
    store_object(qm, ObjectType.MQDS_QUEUE, "M1\\b", queue_properties("M1\\b", QUEUE_B, scope=0), SITE1, 5)
    qm.deleted_objects.append(DeletedObject(GONE, SITE1, seq(4), int(ObjectType.MQDS_QUEUE), 1))
    return qm


def sync_request(partition_id, from_seq, to_seq=MAX_SEQ_NUMBER, known=0, *, sync0=False, scope=Scope.ENTERPRISE,
                 requester=PSC2):
    to_seq = to_seq if not isinstance(to_seq, int) else seq(to_seq)
    return SyncRequestMessage(SITE2, partition_id, seq(from_seq), to_seq, seq(known), sync0, scope, requester)


def reply_of(ctx):
    [body] = bodies(ctx)
    assert isinstance(body, SyncReplyMessage)
    return body


@covers("MC-MQDSRP", "3.2.7.3")
def test_a_request_for_an_unknown_partition_is_ignored():
    """"If dirPartition is not found: Take no further action"."""
    qm = site1_authority()
    ctx = ctx_for(qm)
    receive_sync_request(qm, ctx, sync_request(Guid.from_name("site:nowhere"), 0))
    assert ctx.effects == []


@covers("MC-MQDSRP", "3.2.7.3")
@pytest.mark.parametrize("state", [PurgeState.STARTSYNC0, PurgeState.SYNC0, PurgeState.COMPLETESYNC0])
def test_a_partition_not_in_normal_state_answers_nothing(state):
    """"If dirPartition.PurgeState is not 0 (PURGE_STATE_NORMAL): Take no further action"."""
    qm = site1_authority()
    partition(qm, SITE1).purge_state = state
    ctx = ctx_for(qm)
    receive_sync_request(qm, ctx, sync_request(SITE1, 0))
    assert ctx.effects == []


@covers("MC-MQDSRP", "3.2.7.3")
def test_history_purged_past_both_from_and_known_purged_answers_already_purged():
    """"If fromSeqNum < dirPartition.PurgedSeqNumber and ...KnownPurgedSeqNumber < ...: Raise a Send Already Purged"."""
    qm = site1_authority(purged=3)
    ctx = ctx_for(qm)
    receive_sync_request(qm, ctx, sync_request(SITE1, 2, known=2))
    message = AlreadyPurgedMessage(SITE1, SITE1, seq(3))
    assert ctx.effects == [expect_send(qm, PSC2, message, 20 * 60, 3, "None", acked_queues=False)]


@covers("MC-MQDSRP", "3.2.7.3")
def test_a_requester_that_knows_the_purge_point_gets_a_reply():
    """A requester whose KnownPurgedSeqNumber equals PurgedSeqNumber (a sync0 in progress) is answered."""
    qm = site1_authority(purged=3)
    ctx = ctx_for(qm)
    receive_sync_request(qm, ctx, sync_request(SITE1, 0, known=3, sync0=True))
    assert reply_of(ctx).purged_seq_number == seq(3)


@covers("MC-MQDSRP", "3.2.7.3")
def test_a_requester_past_the_purge_point_gets_a_reply():
    """fromSeqNum >= PurgedSeqNumber: the history it needs is still there."""
    qm = site1_authority(purged=3)
    ctx = ctx_for(qm)
    receive_sync_request(qm, ctx, sync_request(SITE1, 3, known=0))
    assert isinstance(reply_of(ctx), SyncReplyMessage)


@covers("MC-MQDSRP", "3.2.7.3")
def test_the_reply_has_the_header_fields_and_is_sent_unacknowledged():
    """SyncReplyHeader: PartitionID, FromSeqNumber, ToSeqNumber (MAX replaced by LastSeqNumber), PurgedSeqNumber."""
    qm = site1_authority(last=6, purged=1)
    ctx = ctx_for(qm)
    receive_sync_request(qm, ctx, sync_request(SITE1, 1, known=1))
    reply = reply_of(ctx)
    assert (reply.site_id, reply.partition_id, reply.from_seq_number, reply.to_seq_number,
            reply.purged_seq_number, reply.complete_sync0) == (SITE1, SITE1, seq(1), seq(6), seq(1),
                                                               CompleteSync0.NOT_IN_SYNC0)
    assert ctx.effects == [expect_send(qm, PSC2, reply, 20 * 60, 3, "None", acked_queues=False)]


@covers("MC-MQDSRP", "3.2.7.3")
def test_a_finite_to_seq_number_bounds_the_reply():
    """toSeqNum other than MAX_SEQ_NUMBER stays; only changes with From <= SeqNumber <= To are sent."""
    qm = site1_authority()
    ctx = ctx_for(qm)
    receive_sync_request(qm, ctx, sync_request(SITE1, 3, 4))
    reply = reply_of(ctx)
    assert reply.to_seq_number == seq(4)
    assert [c.seq_number for c in reply.changes] == [seq(3), seq(4)]


@covers("MC-MQDSRP", "3.2.7.3")
def test_a_psc_answers_its_site_partition_with_machines_queues_and_tombstones():
    """A PSC's MySitePartition: syncObjectTypes [MQDS_MACHINE, MQDS_QUEUE], plus one delete per tombstone."""
    qm = site1_authority()
    ctx = ctx_for(qm)
    receive_sync_request(qm, ctx, sync_request(SITE1, 0, scope=Scope.NONE))
    reply = reply_of(ctx)
    assert [(c.command, c.seq_number, c.guid_identifier) for c in reply.changes] == [
        (Command.SYNC, seq(2), Guid.from_name("qm:M1")),
        (Command.SYNC, seq(3), QUEUE_A),
        (Command.DELETE, seq(4), GONE),
        (Command.SYNC, seq(5), QUEUE_B),
    ]
    assert all(c.partition_id == SITE1 and c.use_guid for c in reply.changes)


@covers("MC-MQDSRP", "3.2.7.3")
def test_a_tombstone_becomes_a_delete_with_scope_and_object_type():
    """"PropertyID := [PROPID_D_SCOPE, PROPID_D_OBJTYPE] ... PurgedSeqNumber := dirPartition.PurgedSeqNumber"."""
    qm = site1_authority(purged=1)
    ctx = ctx_for(qm)
    receive_sync_request(qm, ctx, sync_request(SITE1, 1, known=1))
    [delete] = [c for c in reply_of(ctx).changes if c.command is Command.DELETE]
    assert delete.properties == delete_properties(1, ObjectType.MQDS_QUEUE)
    assert (delete.guid_identifier, delete.purged_seq_number, delete.path_name) == (GONE, seq(1), None)


@covers("MC-MQDSRP", "3.2.7.3")
def test_the_queue_scope_restriction_follows_the_request_scope():
    """Literal E-263: iScope := the request's Scope: 0x01 (a PSC) gets enterprise-scope queues only, 0x00 every queue."""
    qm = site1_authority()
    enterprise, everything = ctx_for(qm, Mode.LITERAL), ctx_for(qm, Mode.LITERAL)
    receive_sync_request(qm, enterprise, sync_request(SITE1, 0, scope=Scope.ENTERPRISE))
    receive_sync_request(qm, everything, sync_request(SITE1, 0, scope=Scope.NONE, requester=BSC11))
    assert QUEUE_B not in [c.guid_identifier for c in reply_of(enterprise).changes]
    assert QUEUE_B in [c.guid_identifier for c in reply_of(everything).changes]
    assert [e.destination for e in everything.effects] == [BSC11]


@covers("MC-MQDSRP", "3.2.7.3")
def test_clarified_a_psc_requester_gets_every_queue_too():
    """Clarified E-263: a Scope 0x01 request is answered with the site-scope queue as well, like a Scope 0x00 one."""
    qm = site1_authority()
    enterprise, everything = ctx_for(qm), ctx_for(qm)
    receive_sync_request(qm, enterprise, sync_request(SITE1, 0, scope=Scope.ENTERPRISE))
    receive_sync_request(qm, everything, sync_request(SITE1, 0, scope=Scope.NONE, requester=BSC11))
    assert [c.guid_identifier for c in reply_of(enterprise).changes] == [
        c.guid_identifier for c in reply_of(everything).changes]
    assert QUEUE_B in [c.guid_identifier for c in reply_of(enterprise).changes]


@covers("MC-MQDSRP", "3.2.7.3")
def test_the_pec_answers_its_enterprise_partition_with_the_enterprise_types():
    """PEC and MyEnterprisePartition: sites, CNs, the enterprise, users and routing links; no machines."""
    qm = pec_qm()
    partition(qm, ENT).last_seq_number = seq(3)
    store_object(qm, ObjectType.MQDS_SITE, "site1", site_properties("site1", SITE1, PSC1), ENT, 1)
    store_object(qm, ObjectType.MQDS_ENTERPRISE, "ent", (Property(P["PROPID_E_NAME"], "ent"),
                                                         Property(P["PROPID_E_ID"], Guid.from_name("ent"))), ENT, 2)
    store_object(qm, ObjectType.MQDS_USER, None, (Property(P["PROPID_U_ID"], Guid.from_name("user")),
                                                  Property(P["PROPID_U_SID"], b"\x01")), ENT, 3)
    store_object(qm, ObjectType.MQDS_MACHINE, "PEC0", machine_properties("PEC0", SITE0), SITE0, 1)
    ctx = ctx_for(qm)
    receive_sync_request(qm, ctx, sync_request(ENT, 0))
    assert [c.guid_identifier for c in reply_of(ctx).changes] == [SITE1, Guid.from_name("ent"), Guid.from_name("user")]


@covers("MC-MQDSRP", "3.2.7.3")
def test_clarified_a_psc_answers_a_partition_it_only_replicates():
    """Clarified E-117: syncObjectTypes by partition, so PSC1 answers its BSC for the enterprise partition."""
    qm = psc_qm()
    partition(qm, ENT).last_seq_number = seq(1)
    store_object(qm, ObjectType.MQDS_SITE, "site1", site_properties("site1", SITE1, PSC1), ENT, 1)
    ctx = ctx_for(qm)
    receive_sync_request(qm, ctx, sync_request(ENT, 0, scope=Scope.NONE, requester=BSC11))
    assert [c.guid_identifier for c in reply_of(ctx).changes] == [SITE1]


@covers("MC-MQDSRP", "3.2.7.3")
def test_literal_a_psc_answers_a_replicated_partition_without_objects():
    """Literal E-117: syncObjectTypes is undefined for a replicated partition; the reply carries no object."""
    qm = psc_qm()
    partition(qm, ENT).last_seq_number = seq(1)
    store_object(qm, ObjectType.MQDS_SITE, "site1", site_properties("site1", SITE1, PSC1), ENT, 1)
    ctx = ctx_for(qm, Mode.LITERAL)
    receive_sync_request(qm, ctx, sync_request(ENT, 0, scope=Scope.NONE, requester=BSC11))
    reply = reply_of(ctx)
    assert reply.changes == ()
    assert reply.to_seq_number == seq(1)


@covers("MC-MQDSRP", "3.2.7.3")
def test_clarified_tombstones_are_those_of_the_partition_and_range():
    """Clarified E-118: a tombstone of another partition, or outside [From, To], is not sent."""
    qm = site1_authority()
    qm.deleted_objects.append(DeletedObject(GONE_OTHER, SITE0, seq(4), int(ObjectType.MQDS_MACHINE), 0))
    qm.deleted_objects.append(DeletedObject(Guid.from_name("old"), SITE1, seq(1), int(ObjectType.MQDS_QUEUE), 1))
    ctx = ctx_for(qm)
    receive_sync_request(qm, ctx, sync_request(SITE1, 2))
    assert [c.guid_identifier for c in reply_of(ctx).changes if c.command is Command.DELETE] == [GONE]


@covers("MC-MQDSRP", "3.2.7.3")
def test_literal_every_tombstone_is_sent_relabelled_with_this_partition():
    """Literal E-118: "For each element ... in DeletedObjectCollection ... PartitionID := dirPartition.PartitionID"."""
    qm = site1_authority()
    qm.deleted_objects.append(DeletedObject(GONE_OTHER, SITE0, seq(4), int(ObjectType.MQDS_MACHINE), 0))
    qm.deleted_objects.append(DeletedObject(Guid.from_name("old"), SITE1, seq(1), int(ObjectType.MQDS_QUEUE), 1))
    ctx = ctx_for(qm, Mode.LITERAL)
    receive_sync_request(qm, ctx, sync_request(SITE1, 2))
    deletes = [c for c in reply_of(ctx).changes if c.command is Command.DELETE]
    assert sorted((str(c.guid_identifier), c.seq_number.value, c.partition_id) for c in deletes) == sorted([
        (str(GONE), 4, SITE1), (str(GONE_OTHER), 4, SITE1), (str(Guid.from_name("old")), 1, SITE1)])


@covers("MC-MQDSRP", "3.2.7.3")
def test_literal_a_tombstone_without_identifier_is_left_out():
    """Literal: a DeletedObject with no Identifier (E-108) cannot be sent with UseGuid 0x01; it is skipped."""
    qm = site1_authority()
    qm.deleted_objects.append(DeletedObject(None, SITE1, seq(6), int(ObjectType.MQDS_QUEUE), 1))
    ctx = ctx_for(qm, Mode.LITERAL)
    receive_sync_request(qm, ctx, sync_request(SITE1, 0))
    assert [c.seq_number for c in reply_of(ctx).changes if c.command is Command.DELETE] == [seq(4)]


@covers("MC-MQDSRP", "3.2.7.3")
def test_clarified_changes_are_sorted_ascending_and_chained_from_from_seq_number():
    """Clarified E-119: ascending SeqNumber; the first PreviousSeqNumber is FromSeqNumber, then each predecessor."""
    qm = site1_authority()
    ctx = ctx_for(qm)
    receive_sync_request(qm, ctx, sync_request(SITE1, 1, scope=Scope.NONE))
    assert [(c.previous_seq_number.value, c.seq_number.value) for c in reply_of(ctx).changes] == [
        (1, 2), (2, 3), (3, 4), (4, 5)]


@covers("MC-MQDSRP", "3.2.7.3")
def test_literal_changes_are_sorted_descending_and_chained_from_from_seq_number():
    """Literal E-119: "Sort ... in descending order"; the newest change chains to FromSeqNumber, the rest to it."""
    qm = site1_authority()
    ctx = ctx_for(qm, Mode.LITERAL)
    receive_sync_request(qm, ctx, sync_request(SITE1, 1, scope=Scope.NONE))
    assert [(c.previous_seq_number.value, c.seq_number.value) for c in reply_of(ctx).changes] == [
        (1, 5), (5, 4), (4, 3), (3, 2)]


@covers("MC-MQDSRP", "3.2.7.3")
@pytest.mark.parametrize("mode", MODES)
def test_the_reply_changes_are_the_lookups_results(mode):
    """Each object change is what Lookup Directory Objects (3.2.7.8) built, with PreviousSeqNumber filled in."""
    qm = site1_authority()
    ctx = ctx_for(qm, mode)
    receive_sync_request(qm, ctx, sync_request(SITE1, 0))
    p = partition(qm, SITE1)
    looked_up = [
        *lookup_directory_objects(qm, ctx_for(qm, mode), p, ObjectType.MQDS_MACHINE, seq(0), seq(6), 1),
        *lookup_directory_objects(qm, ctx_for(qm, mode), p, ObjectType.MQDS_QUEUE, seq(0), seq(6), 1),
    ]
    sent_syncs = {c.guid_identifier: c for c in reply_of(ctx).changes if c.command is Command.SYNC}
    for change in looked_up:
        assert sent_syncs[change.guid_identifier].properties == change.properties


@covers("MC-MQDSRP", "3.2.7.3")
def test_an_empty_reply_has_no_changes():
    """Nothing in range: Count 0 (the replica then moves LastSeqNumber to ToSeqNumber, 3.3.7.5)."""
    qm = site1_authority()
    ctx = ctx_for(qm)
    receive_sync_request(qm, ctx, sync_request(SITE1, 6))
    assert reply_of(ctx).changes == ()


@covers("MC-MQDSRP", "3.2.7.3")
@pytest.mark.parametrize(
    ("sync0", "to_seq", "expected"),
    [
        (False, MAX_SEQ_NUMBER, CompleteSync0.NOT_IN_SYNC0),
        (True, 4, CompleteSync0.COMPLETING),
        (True, MAX_SEQ_NUMBER, CompleteSync0.COMPLETED),
        (True, 6, CompleteSync0.COMPLETED),
    ],
)
def test_complete_sync0_follows_is_sync0_and_to_seq_num(sync0, to_seq, expected):
    """CompleteSync0: 0 if IsSync0 is 0; 1 if toSeqNum differs from LastSeqNumber; 2 if it is LastSeqNumber."""
    qm = site1_authority(last=6)
    ctx = ctx_for(qm)
    receive_sync_request(qm, ctx, sync_request(SITE1, 0, to_seq, sync0=sync0))
    assert reply_of(ctx).complete_sync0 is expected
