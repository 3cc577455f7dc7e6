"""MC-MQDSRP 3.2.7.2 Receive Change Request: apply a request to an owned partition and reply, or forward it."""

import pytest
from mqspec.model.guid import Guid
from mqspec.model.mqdsrp import ChangeReplyMessage, Command
from mqspec.model.propids import ObjectType
from mqspec.model.propvalue import Property
from mqspec.refimpl import status as st
from mqspec.refimpl.effects import Mode, TimerKey
from mqspec.refimpl.mqdsrp_server import receive_change_request

from mqspec.clauses import covers

from .mqdsrp_fixtures_client import (
    BSC11,
    ENT,
    MODES,
    PEC,
    PSC1,
    SITE0,
    SITE1,
    P,
    bsc_qm,
    change,
    change_request,
    ctx_for,
    delete_properties,
    directory_ops,
    expect_send,
    machine_properties,
    partition,
    pec_qm,
    psc_qm,
    queue_properties,
    sent,
    seq,
    store_object,
)

CN_GUID = Guid.from_name("cn:ip")
QUEUE_GUID = Guid.from_name("queue:q1")


def cn_properties(name="ip", guid=CN_GUID):
    return (Property(P["PROPID_CN_NAME"], name), Property(P["PROPID_CN_GUID"], guid),
            Property(P["PROPID_CN_PROTOCOLID"], 1))


def reply_to(qm, destination, request, status):
    body = ChangeReplyMessage(qm.site_identifier, request.request_identifier, status, request.requester_name)
    return expect_send(qm, destination, body, 10, 8, "AckNackReachQueue", acked_queues=True)


def replies(ctx):
    return [e for e in sent(ctx) if isinstance(e.body, ChangeReplyMessage)]


@covers("MC-MQDSRP", "3.2.7.2")
def test_the_pec_applies_a_request_for_its_enterprise_partition_and_replies():
    """myEnterprise: create with newSeqNumber = LastSeqNumber + 1, set LastSeqNumber, reply MQ_OK to the requester."""
    qm = pec_qm()
    ent = partition(qm, ENT)
    ent.last_seq_number = seq(4)
    request = change_request(PSC1, ENT, 7, change(Command.CREATE, ENT, 0, previous=0, properties=cn_properties(), path="ip"))
    ctx = ctx_for(qm)
    receive_change_request(qm, ctx, request)
    obj = qm.directory.find(guid=CN_GUID)
    assert (obj.object_type, obj.path_name, obj.partition_id, obj.seq_number) == (ObjectType.MQDS_CN, "ip", ENT, seq(5))
    assert ent.last_seq_number == seq(5)
    assert replies(ctx) == [reply_to(qm, PSC1, request, st.MQ_OK)]
    # the object authority's Create Directory Object replicates the change to every neighbor (E-180)
    assert [c.seq_number for c in qm.psc_neighbors[0].available_changes] == [seq(5)]


@covers("MC-MQDSRP", "3.2.7.2")
def test_the_pec_applies_a_request_for_its_own_site_partition():
    """mySite at the PEC: "partitionID is equal to QueueManager.SiteIdentifier" is the PEC's site0."""
    qm = pec_qm()
    request = change_request(PSC1, SITE0, 1, change(Command.CREATE, SITE0, 0, previous=0,
                                                    properties=machine_properties("M0", SITE0), path="M0"))
    ctx = ctx_for(qm)
    receive_change_request(qm, ctx, request)
    assert partition(qm, SITE0).last_seq_number == seq(1)
    assert qm.directory.find(path_name="M0", object_type=ObjectType.MQDS_MACHINE).seq_number == seq(1)
    assert replies(ctx) == [reply_to(qm, PSC1, request, st.MQ_OK)]


@covers("MC-MQDSRP", "3.2.7.2")
def test_a_psc_applies_a_request_for_its_site_and_replies_to_its_bsc():
    """mySite at a PSC; the BSC requester is in BSCNeighborCollection, so the reply goes to it."""
    qm = psc_qm()
    request = change_request(BSC11, SITE1, 3, change(Command.CREATE, SITE1, 0, previous=0,
                                                     properties=queue_properties("PSC1\\q1", QUEUE_GUID),
                                                     path="PSC1\\q1"), psc_name=PSC1)
    ctx = ctx_for(qm)
    receive_change_request(qm, ctx, request)
    assert qm.directory.find(guid=QUEUE_GUID).object_type == ObjectType.MQDS_QUEUE
    assert partition(qm, SITE1).last_seq_number == seq(1)
    assert replies(ctx) == [reply_to(qm, BSC11, request, st.MQ_OK)]


@covers("MC-MQDSRP", "3.2.7.2")
def test_the_first_propid_decides_the_object_type():
    """"Use the first PROPID in dirChange.PropertyID to determine the object type" (3.1.1.4)."""
    qm = psc_qm()
    request = change_request(PSC1, SITE1, 3, change(Command.CREATE, SITE1, 0, previous=0,
                                                    properties=queue_properties("PSC1\\q1", QUEUE_GUID),
                                                    path="PSC1\\q1"))
    ctx = ctx_for(qm)
    receive_change_request(qm, ctx, request)
    assert [op.object_type for op in directory_ops(ctx) if op.operation == "create"] == [ObjectType.MQDS_QUEUE]


@covers("MC-MQDSRP", "3.2.7.2")
def test_a_failed_create_keeps_last_seq_number_and_replies_the_failure():
    """"If changeResult is MQ_OK: Set myPartition.LastSeqNumber": a failure leaves it and is the reply's Result."""
    qm = pec_qm()
    store_object(qm, ObjectType.MQDS_CN, "ip", cn_properties(), ENT, 1)
    partition(qm, ENT).last_seq_number = seq(1)
    request = change_request(PSC1, ENT, 2, change(Command.CREATE, ENT, 0, previous=0,
                                                  properties=cn_properties(), path="ip"))
    ctx = ctx_for(qm)
    receive_change_request(qm, ctx, request)
    assert partition(qm, ENT).last_seq_number == seq(1)
    assert replies(ctx) == [reply_to(qm, PSC1, request, st.MQDS_OBJECT_EXISTS)]
    assert qm.psc_neighbors[0].available_changes == []


@covers("MC-MQDSRP", "3.2.7.2")
@pytest.mark.parametrize("by", ["path", "guid"])
def test_an_update_names_the_object_by_path_or_by_guid(by):
    """0x01: iPathName is PathName when UseGuid is 0x00, iGuidIdentifier is GuidIdentifier when it is 0x01."""
    qm = pec_qm()
    store_object(qm, ObjectType.MQDS_CN, "ip", cn_properties(), ENT, 1)
    partition(qm, ENT).last_seq_number = seq(1)
    name = {"path": "ip"} if by == "path" else {"guid": CN_GUID}
    request = change_request(PSC1, ENT, 2, change(Command.UPDATE, ENT, 0, previous=0,
                                                  properties=(Property(P["PROPID_CN_PROTOCOLID"], 6),), **name))
    ctx = ctx_for(qm)
    receive_change_request(qm, ctx, request)
    obj = qm.directory.find(guid=CN_GUID)
    assert (obj.properties[P["PROPID_CN_PROTOCOLID"]], obj.seq_number) == (6, seq(2))
    assert partition(qm, ENT).last_seq_number == seq(2)
    [op] = [op for op in directory_ops(ctx) if op.operation == "update"]
    assert (op.path_name, op.guid) == (("ip", None) if by == "path" else (None, CN_GUID))
    assert replies(ctx) == [reply_to(qm, PSC1, request, st.MQ_OK)]


@covers("MC-MQDSRP", "3.2.7.2")
def test_a_failed_update_replies_object_not_found():
    """An update of an object the authority lacks fails; LastSeqNumber stays."""
    qm = pec_qm()
    request = change_request(PSC1, ENT, 2, change(Command.UPDATE, ENT, 0, previous=0,
                                                  properties=(Property(P["PROPID_CN_PROTOCOLID"], 6),), path="none"))
    ctx = ctx_for(qm)
    receive_change_request(qm, ctx, request)
    assert partition(qm, ENT).last_seq_number == seq(0)
    assert replies(ctx) == [reply_to(qm, PSC1, request, st.MQDS_OBJECT_NOT_FOUND)]


@covers("MC-MQDSRP", "3.2.7.2")
def test_clarified_delete_records_the_tombstone_with_the_deleted_objects_guid():
    """Clarified E-108: a path-named delete gets a DeletedObject whose Identifier is the object's GUID."""
    qm = pec_qm()
    store_object(qm, ObjectType.MQDS_CN, "ip", cn_properties(), ENT, 1)
    partition(qm, ENT).last_seq_number = seq(1)
    request = change_request(PSC1, ENT, 2, change(Command.DELETE, ENT, 0, previous=0,
                                                  properties=delete_properties(1, ObjectType.MQDS_CN), path="ip"))
    ctx = ctx_for(qm)
    receive_change_request(qm, ctx, request)
    assert qm.directory.find(guid=CN_GUID) is None
    assert [(d.identifier, d.partition_id, d.seq_number, d.object_type, d.scope) for d in qm.deleted_objects] == [
        (CN_GUID, ENT, seq(2), ObjectType.MQDS_CN, 1)]
    assert partition(qm, ENT).last_seq_number == seq(2)
    assert replies(ctx) == [reply_to(qm, PSC1, request, st.MQ_OK)]


@covers("MC-MQDSRP", "3.2.7.2")
def test_literal_delete_by_path_records_a_tombstone_without_identifier():
    """Literal: "Identifier := dirChange.GuidIdentifier", which a path-named (UseGuid 0x00) request does not carry."""
    qm = pec_qm()
    store_object(qm, ObjectType.MQDS_CN, "ip", cn_properties(), ENT, 1)
    request = change_request(PSC1, ENT, 2, change(Command.DELETE, ENT, 0, previous=0,
                                                  properties=delete_properties(1, ObjectType.MQDS_CN), path="ip"))
    ctx = ctx_for(qm, Mode.LITERAL)
    receive_change_request(qm, ctx, request)
    assert qm.directory.find(guid=CN_GUID) is None
    assert [(d.identifier, d.partition_id, d.seq_number, d.object_type, d.scope) for d in qm.deleted_objects] == [
        (None, ENT, seq(1), ObjectType.MQDS_CN, 1)]


@covers("MC-MQDSRP", "3.2.7.2")
def test_literal_delete_by_guid_records_exactly_one_tombstone():
    """Literal: objDeleted takes the GuidIdentifier, the second value (ObjectType) and the first value (Scope)."""
    qm = pec_qm()
    store_object(qm, ObjectType.MQDS_CN, "ip", cn_properties(), ENT, 1)
    partition(qm, ENT).last_seq_number = seq(1)
    request = change_request(PSC1, ENT, 2, change(Command.DELETE, ENT, 0, previous=0,
                                                  properties=delete_properties(0, ObjectType.MQDS_CN), guid=CN_GUID))
    ctx = ctx_for(qm, Mode.LITERAL)
    receive_change_request(qm, ctx, request)
    assert [(d.identifier, d.partition_id, d.seq_number, d.object_type, d.scope) for d in qm.deleted_objects] == [
        (CN_GUID, ENT, seq(2), ObjectType.MQDS_CN, 0)]
    assert replies(ctx) == [reply_to(qm, PSC1, request, st.MQ_OK)]


@covers("MC-MQDSRP", "3.2.7.2")
@pytest.mark.parametrize("mode", MODES)
def test_a_failed_delete_records_no_tombstone(mode):
    """"If changeResult is MQ_OK: Create a DeletedObject": a delete of a missing object records none."""
    qm = pec_qm()
    request = change_request(PSC1, ENT, 2, change(Command.DELETE, ENT, 0, previous=0,
                                                  properties=delete_properties(1, ObjectType.MQDS_CN), path="none"))
    ctx = ctx_for(qm, mode)
    receive_change_request(qm, ctx, request)
    assert qm.deleted_objects == []
    assert partition(qm, ENT).last_seq_number == seq(0)
    assert replies(ctx) == [reply_to(qm, PSC1, request, st.MQDS_OBJECT_NOT_FOUND)]


@covers("MC-MQDSRP", "3.2.7.2")
def test_a_sync_command_creates_a_missing_object():
    """0x03: Handle Directory Sync creates the object when Read Directory Object finds none."""
    qm = pec_qm()
    request = change_request(PSC1, ENT, 2, change(Command.SYNC, ENT, 0, previous=0, properties=cn_properties(),
                                                  path="ip"))
    ctx = ctx_for(qm)
    receive_change_request(qm, ctx, request)
    assert [op.operation for op in directory_ops(ctx)] == ["read", "create"]
    assert qm.directory.find(guid=CN_GUID).seq_number == seq(1)
    assert partition(qm, ENT).last_seq_number == seq(1)
    assert replies(ctx) == [reply_to(qm, PSC1, request, st.MQ_OK)]


@covers("MC-MQDSRP", "3.2.7.2")
def test_a_sync_command_updates_an_existing_object():
    """0x03: Handle Directory Sync updates the object Read Directory Object finds."""
    qm = pec_qm()
    store_object(qm, ObjectType.MQDS_CN, "ip", cn_properties(), ENT, 1)
    partition(qm, ENT).last_seq_number = seq(1)
    request = change_request(PSC1, ENT, 2, change(Command.SYNC, ENT, 0, previous=0,
                                                  properties=(Property(P["PROPID_CN_PROTOCOLID"], 9),), guid=CN_GUID))
    ctx = ctx_for(qm)
    receive_change_request(qm, ctx, request)
    assert [op.operation for op in directory_ops(ctx)] == ["read", "update"]
    assert qm.directory.find(guid=CN_GUID).properties[P["PROPID_CN_PROTOCOLID"]] == 9
    assert partition(qm, ENT).last_seq_number == seq(2)


@covers("MC-MQDSRP", "3.2.7.2")
def test_a_psc_forwards_a_request_for_a_partition_it_does_not_own():
    """"Else (queue manager is not the object authority, so it forwards the request): Raise a Process Change Request"."""
    qm = psc_qm()
    request = change_request(BSC11, ENT, 5, change(Command.CREATE, ENT, 0, previous=0, properties=cn_properties(),
                                                   path="ip"), psc_name=PSC1)
    ctx = ctx_for(qm)
    receive_change_request(qm, ctx, request)
    assert qm.directory.objects == {}
    assert sent(ctx) == [expect_send(qm, PEC, request, 10, 8, "AckNackReachQueue", acked_queues=True)]
    assert (BSC11, 5) in qm.pending_requests
    assert qm.pending_requests[(BSC11, 5)].origin == "forward"
    assert [e.timer for e in ctx.effects if hasattr(e, "delay")] == [TimerKey("change_request_wait", ((BSC11, 5),))]


@covers("MC-MQDSRP", "3.2.7.2")
def test_the_pec_forwards_a_request_for_another_sites_partition():
    """The PEC is no authority of site1: "partitionID is equal to QueueManager.SiteIdentifier" fails, so it forwards."""
    qm = pec_qm()
    request = change_request(PEC, SITE1, 5, change(Command.CREATE, SITE1, 0, previous=0,
                                                   properties=machine_properties("M1", SITE1), path="M1"))
    ctx = ctx_for(qm)
    receive_change_request(qm, ctx, request)
    assert [e.destination for e in sent(ctx)] == [PSC1]
    assert partition(qm, SITE1).last_seq_number == seq(0)


@covers("MC-MQDSRP", "3.2.7.2")
def test_a_bsc_forwards_every_request_to_its_psc():
    """A BSC owns no partition (myEnterprise and mySite need a PEC or PSC): Process Change Request sends to MyPSCName."""
    qm = bsc_qm()
    request = change_request("client-side", SITE1, 5, change(Command.CREATE, SITE1, 0, previous=0,
                                                             properties=machine_properties("M1", SITE1), path="M1"))
    ctx = ctx_for(qm)
    receive_change_request(qm, ctx, request)
    assert [e.destination for e in sent(ctx)] == [PSC1]


@covers("MC-MQDSRP", "3.2.7.2")
def test_a_psc_without_its_site_partition_yet_replies_unknown_source():
    """mySite holds but no partition exists yet: mqspec forwards, Process Change Request finds none, MQDS_UNKNOWN_SOURCE."""
    qm = psc_qm(site_partition=False)
    request = change_request(BSC11, SITE1, 5, change(Command.CREATE, SITE1, 0, previous=0,
                                                     properties=machine_properties("M1", SITE1), path="M1"),
                             psc_name=PSC1)
    ctx = ctx_for(qm)
    receive_change_request(qm, ctx, request)
    assert ctx.effects == [reply_to(qm, BSC11, request, st.MQDS_UNKNOWN_SOURCE)]
    assert qm.pending_requests == {}
