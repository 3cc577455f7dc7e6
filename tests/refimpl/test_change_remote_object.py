"""MC-MQDSRP 3.1.7.1.1 Change Remote Object: build the ChangeRequestMessage and raise Process Change Request."""

import pytest
from mqspec.model.mqdsrp import (
    ChangeReplyMessage,
    ChangeRequestMessage,
    Command,
    DirectoryChange,
)
from mqspec.model.seqnum import MIN_SEQ_NUMBER
from mqspec.refimpl import status as st
from mqspec.refimpl.effects import AckRequested, TimerKey
from mqspec.refimpl.mqdsrp_base import replication_queue_private
from mqspec.refimpl.mqdsrp_client import receive_change_reply
from mqspec.refimpl.mqdsrp_common import change_remote_object
from mqspec.refimpl.mqdsrp_server import receive_change_request

from mqspec.clauses import covers

from .mqdsrp_fixtures import (
    BSC,
    ENT,
    MODES,
    PEC,
    PSC,
    QUEUE,
    SITE1,
    USER,
    bsc_node,
    clarified_ids,
    context,
    delete_props,
    guid_of,
    messages,
    pec_node,
    psc_node,
    queue_props,
    request_completions,
    timers,
    user_props,
)


def _request(qm, mode=MODES[0], *, operation=0x00, object_type=QUEUE, path="q1", guid=None, partition=ENT,
             properties=None, client_request=3):
    ctx = context(qm, mode)
    props = queue_props("q1") if properties is None else properties
    change_remote_object(qm, ctx, operation, int(object_type), path, guid, partition, props, client_request)
    return ctx


@covers("MC-MQDSRP", "3.1.7.1.1")
def test_psc_sends_the_change_request_to_the_partition_authority():
    """A PSC's ChangeRequestMessage: Operation 0x01, PartitionID, RequesterName its name, PSCName not set (PSCNameOffset 0x0)."""
    qm = psc_node()
    ctx = _request(qm)
    [sent] = messages(ctx)
    request = sent.body
    assert isinstance(request, ChangeRequestMessage)
    assert (request.partition_id, request.request_identifier, request.requester_name) == (ENT, 1, PSC)
    assert request.psc_name is None and request.psc_name_offset == 0
    assert request.site_id == SITE1
    # Process Change Request (3.3.7.1): one hop, to the partition's authority, timeout 10 s, priority 8
    private = replication_queue_private(qm.identifier)
    assert (sent.destination, sent.time_to_reach_queue, sent.time_to_be_received, sent.priority) == (PEC, 10, 10, 8)
    assert (sent.ack_requested, sent.admin_queue, sent.response_queue) == (AckRequested.ACK_NACK_REACH_QUEUE,
                                                                          private, private)
    assert [(t.timer, t.delay) for t in timers(ctx)] == [(TimerKey("change_request_wait", ((PSC, 1),)), 10.0)]
    assert qm.pending_requests[(PSC, 1)].client_request == 3


@covers("MC-MQDSRP", "3.1.7.1.1")
def test_directory_change_carries_the_operation_path_and_minimum_sequence_numbers():
    """changeRequest.DirectoryChange: Command := iOperation, UseGuid 0x00, PathName := iPathName, MIN_SEQ_NUMBER thrice, the properties."""
    qm = psc_node()
    props = queue_props("q1", guid_of("q1"))
    ctx = _request(qm, operation=0x01, guid=guid_of("q1"), properties=props)
    assert messages(ctx)[0].body.change == DirectoryChange(
        Command.UPDATE, ENT, MIN_SEQ_NUMBER, MIN_SEQ_NUMBER, MIN_SEQ_NUMBER, props, path_name="q1")
    assert clarified_ids(ctx) == []  # "GuidIdentifier: Not set" although the object's GUID is known


@covers("MC-MQDSRP", "3.1.7.1.1")
def test_bsc_names_its_psc_and_sends_through_it():
    """A BSC sets PSCName := MyPSCName and PSCNameOffset to len(MachineName) + 1 WCHARs; the request goes to MyPSCName."""
    qm = bsc_node()
    ctx = _request(qm, partition=SITE1)
    [sent] = messages(ctx)
    assert sent.body.psc_name == PSC
    assert sent.body.psc_name_offset == len(BSC) + 1
    assert sent.destination == PSC


@covers("MC-MQDSRP", "3.1.7.1.1")
def test_request_identifiers_are_unique_within_the_queue_manager():
    """RequestIdentifier "uniquely identifies the Process Change Request event in the queue manager"."""
    qm = psc_node()
    first = _request(qm, client_request=1)
    second = _request(qm, client_request=2)
    assert [messages(c)[0].body.request_identifier for c in (first, second)] == [1, 2]
    assert sorted(qm.pending_requests) == [(PSC, 1), (PSC, 2)]


@covers("MC-MQDSRP", "3.1.7.1.1")
@pytest.mark.parametrize("mode", MODES)
def test_object_named_only_by_guid_is_requested_by_guid(mode):
    """E-101: with a NULL iPathName "UseGuid := 0x00, PathName := iPathName" cannot be encoded, so both modes send the GUID."""
    qm = psc_node()
    ctx = _request(qm, mode, operation=0x02, path=None, guid=guid_of("q1"), properties=delete_props(1, QUEUE))
    change = messages(ctx)[0].body.change
    assert (change.path_name, change.guid_identifier, change.use_guid) == (None, guid_of("q1"), True)
    assert clarified_ids(ctx) == ["E-101"]


@covers("MC-MQDSRP", "3.1.7.1.1")
def test_create_of_an_object_without_path_name_sends_the_guid_of_its_identity_property():
    """E-101: a user (no path name, no iGuidIdentifier yet) is requested by the GUID its PROPID_U_ID carries."""
    qm = psc_node()
    ctx = _request(qm, object_type=USER, path=None, properties=user_props(guid_of("u1")))
    change = messages(ctx)[0].body.change
    assert (change.path_name, change.guid_identifier) == (None, guid_of("u1"))
    # the authority creates the user under that GUID
    pec = pec_node()
    receive_change_request(pec, context(pec), messages(ctx)[0].body)
    assert pec.directory.find(guid=guid_of("u1"), object_type=int(USER)) is not None


@covers("MC-MQDSRP", "3.1.7.1.1")
def test_rstatus_is_the_result_of_process_change_request():
    """"Set rStatus to the return result of the Process Change Request event": the reply's Result reaches the client."""
    qm = psc_node()
    _request(qm, client_request=9)
    ctx = context(qm)
    receive_change_reply(qm, ctx, ChangeReplyMessage(SITE1, 1, st.MQDS_OBJECT_EXISTS, PSC))
    assert [(c.request, c.status) for c in request_completions(ctx)] == [(9, st.MQDS_OBJECT_EXISTS)]


@covers("MC-MQDSRP", "3.1.7.1.1")
def test_psc_without_the_partition_fails_with_unknown_source():
    """Process Change Request at a PSC that holds no replica of iPartitionID ends at once with MQDS_UNKNOWN_SOURCE."""
    qm = psc_node(site_partition=False)
    ctx = _request(qm, partition=SITE1)
    assert messages(ctx) == []
    assert [(c.request, c.status) for c in request_completions(ctx)] == [(3, st.MQDS_UNKNOWN_SOURCE)]
