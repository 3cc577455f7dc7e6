"""MS-MQCN 3.3: the client side (initialization, Send Change Notification, preparing and sending)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst
from mqspec.model import mqcn
from mqspec.model.errors import ModelError
from mqspec.model.mqcn import Command, Event, Version
from mqspec.model.propids import ObjectType
from mqspec.model.propvalue import Property
from mqspec.refimpl import status as st
from mqspec.refimpl.effects import Mode
from mqspec.refimpl.mqcn_client import (
    CALG_SHA1,
    QUEUE_CREATE_PROPIDS,
    DirectoryObject,
    NotificationClient,
    Operation,
    client_initialization,
    prepare_change_notification_v1,
    prepare_change_notification_v2,
    send_change_notification,
    send_change_notification_message,
)
from mqspec.refimpl.mqcn_effects import EnqueueNotification, OpenQueue
from mqspec.refimpl.mqcn_server import receive_change_notification
from mqspec.refimpl.mqcn_state import AuthenticationLevel, ReceivedMessage

from mqspec.clauses import covers

from .mqcn_fixtures import (
    DS_ID,
    MODES,
    OTHER_QM,
    Q1,
    QM_ID,
    SD,
    P,
    ctx,
    directory,
    directory_machine,
    directory_queue,
    effects_of,
    opened_qm,
    queue,
    with_queues,
)


def ds_client(**kw) -> NotificationClient:
    return NotificationClient(machine_name="PSC1", identifier=DS_ID, **kw)


def qm_client(**kw) -> NotificationClient:
    return NotificationClient(machine_name="C22", identifier=OTHER_QM, version=Version.QUEUE_MANAGER,
                              directory_service_name="PSC1", **kw)


def queue_object(**kw) -> DirectoryObject:
    base = {"object_type": ObjectType.MQDS_QUEUE, "identifier": Q1, "owner": QM_ID, "path_name": "C14\\q1",
            "properties": (Property(P["PROPID_Q_LABEL"], "q1"), Property(P["PROPID_Q_QUOTA"], 1000),
                           Property(P["PROPID_Q_ADS_PATH"], "LDAP://q1"), Property(P["PROPID_Q_BASEPRIORITY"], 2))}
    base.update(kw)
    return DirectoryObject(**base)


def machine_object(**kw) -> DirectoryObject:
    base = {"object_type": ObjectType.MQDS_MACHINE, "identifier": QM_ID, "owner": QM_ID, "path_name": "C14",
            "properties": (Property(P["PROPID_QM_QUOTA"], 10), Property(P["PROPID_QM_CNS"], (DS_ID,)),
                           Property(P["PROPID_QM_SITE_ID"], DS_ID))}
    base.update(kw)
    return DirectoryObject(**base)


def propids(update) -> list[int]:
    return [p.propid for p in update.properties]


def only_update(operation, obj, client=None, now=0.0):
    message = prepare_change_notification_v1(client or ds_client(), ctx(now=now, node="PSC1"), [(operation, obj)])
    assert message.version is Version.DIRECTORY_SERVICE and len(message.updates) == 1
    return message.updates[0]


# --- 3.3.1 / 3.3.3 -------------------------------------------------------------------------------


@covers("MS-MQCN", "3.3.1")
def test_a_client_starts_with_no_outgoing_queue_and_signs_with_md5():
    """The client ADM: no OutgoingQueue open yet; a directory service sends version 0x01 by default."""
    client = ds_client()
    assert client.outgoing == {} and client.version is Version.DIRECTORY_SERVICE
    assert client.hash_algorithm == 0x8003


@covers("MS-MQCN", "3.3.3")
def test_initialization_opens_the_outgoing_queue_for_sending():
    """Open Queue: DestinationFormatName NOTIFY_QUEUE_PRIVATE of the destination, SendAccess, DenyNone (E-244)."""
    client, c = ds_client(), ctx(node="PSC1")
    assert client_initialization(client, c, QM_ID) == st.MQ_OK
    assert client_initialization(client, c, OTHER_QM) == st.MQ_OK
    assert c.effects == [OpenQueue("PSC1", f"PRIVATE={QM_ID}\\3", "SendAccess", "DenyNone", st.MQ_OK, 1),
                         OpenQueue("PSC1", f"PRIVATE={OTHER_QM}\\3", "SendAccess", "DenyNone", st.MQ_OK, 2)]
    assert client.outgoing == {QM_ID: 1, OTHER_QM: 2}


@covers("MS-MQCN", "3.3.3")
def test_each_destination_is_opened_once():
    """The openNotifyQueueDescriptor is reused: a second notification to C14 opens nothing."""
    client, c = ds_client(), ctx(node="PSC1")
    send_change_notification(client, c, Operation.QUEUE_CREATION, queue_object())
    send_change_notification(client, c, Operation.QUEUE_DELETION, queue_object())
    assert len(effects_of(c, OpenQueue)) == 1
    assert [e.descriptor for e in effects_of(c, EnqueueNotification)] == [1, 1]


# --- 3.3.4.1 ---------------------------------------------------------------------------------------


@covers("MS-MQCN", "3.3.4.1")
def test_the_version_follows_the_sender_role_and_the_destination_the_owner():
    """E-245: a directory service sends 0x01, a queue manager 0x02, both to the object's owner."""
    c = ctx(node="PSC1")
    sent_v1 = send_change_notification(ds_client(), c, Operation.QUEUE_UPDATE, queue_object())
    sent_v2 = send_change_notification(qm_client(), c, "QueueUpdate", queue_object())
    assert sent_v1.message.version is Version.DIRECTORY_SERVICE and sent_v1.destination == QM_ID
    assert sent_v2.message.version is Version.QUEUE_MANAGER and sent_v2.destination == QM_ID


@covers("MS-MQCN", "3.3.4.1")
def test_an_operation_on_the_wrong_kind_of_object_is_a_model_error():
    """QueueManagerUpdate is about a machine object, the three queue operations about queues."""
    c = ctx(node="PSC1")
    with pytest.raises(ModelError):
        send_change_notification(ds_client(), c, Operation.QUEUE_MANAGER_UPDATE, queue_object())
    with pytest.raises(ModelError):
        send_change_notification(qm_client(), c, Operation.QUEUE_CREATION, machine_object())
    with pytest.raises(ModelError):
        DirectoryObject(object_type=ObjectType.MQDS_SITE, identifier=Q1, owner=QM_ID)


# --- 3.3.5.1 -------------------------------------------------------------------------------------


@covers("MS-MQCN", "3.3.5.1")
@pytest.mark.parametrize("operation, event, obj", [
    (Operation.QUEUE_CREATION, Event.QUEUE_CREATED, queue_object()),
    (Operation.QUEUE_UPDATE, Event.QUEUE_CHANGED, queue_object()),
    (Operation.QUEUE_DELETION, Event.QUEUE_DELETED, queue_object()),
    (Operation.QUEUE_MANAGER_UPDATE, Event.MACHINE_CHANGED, machine_object()),
])
def test_version_2_carries_one_body_with_event_guid_and_domain_controller(operation, event, obj):
    """Event 1..4 per operation, ObjectGuid the object's GUID, DomainController the directory service."""
    message = prepare_change_notification_v2(qm_client(), operation, obj)
    assert message.version is Version.QUEUE_MANAGER
    assert (message.body.event, message.body.object_guid, message.body.domain_controller) == (
        event, obj.identifier, "PSC1")
    assert mqcn.encode(message)[:2] == b"\x02\x01"  # NumberOfUpdateNotifications MUST be 0x01


# --- 3.3.5.2 -------------------------------------------------------------------------------------


@covers("MS-MQCN", "3.3.5.2")
def test_a_created_queue_carries_the_fifteen_propids_and_never_the_directory_path():
    """Command 0x00, UseGuid 0x00, PathName; the fifteen PROPIDs; PROPID_Q_ADS_PATH "MUST NOT be included"."""
    update = only_update(Operation.QUEUE_CREATION, queue_object(), now=42.0)
    assert (update.command, update.use_guid, update.path_name, update.guid_master_id) == (
        Command.CREATE, 0, "C14\\q1", DS_ID)
    assert propids(update) == list(QUEUE_CREATE_PROPIDS) and P["PROPID_Q_ADS_PATH"] not in propids(update)
    assert update.value_of(P["PROPID_Q_INSTANCE"]) == Q1 and update.value_of(P["PROPID_Q_QUOTA"]) == 1000
    # modelling E-246: what the directory object lacks takes the [MS-MQMQ] default
    assert update.value_of(P["PROPID_Q_JOURNAL_QUOTA"]) == 0xFFFFFFFF
    assert update.value_of(P["PROPID_Q_CREATE_TIME"]) == 42 and update.value_of(P["PROPID_Q_PRIV_LEVEL"]) == 1


@covers("MS-MQCN", "3.3.5.2")
def test_a_created_queue_needs_a_path_name():
    """UseGuid 0x00 means PathName names the object: a creation without one is a model error."""
    with pytest.raises(ModelError):
        only_update(Operation.QUEUE_CREATION, queue_object(path_name=None))


@covers("MS-MQCN", "3.3.5.2")
def test_an_updated_queue_carries_its_qmid_then_the_modified_properties():
    """Command 0x01, UseGuid 0x01: PROPID_Q_QMID, then "the identifiers of the properties that were modified"."""
    update = only_update(Operation.QUEUE_UPDATE, queue_object(modified=(P["PROPID_Q_QUOTA"], P["PROPID_Q_LABEL"])))
    assert (update.command, update.use_guid, update.guid_identifier) == (Command.CHANGE, 1, Q1)
    assert propids(update) == [P["PROPID_Q_QMID"], P["PROPID_Q_QUOTA"], P["PROPID_Q_LABEL"]]
    assert update.value_of(P["PROPID_Q_QMID"]) == QM_ID
    every = only_update(Operation.QUEUE_UPDATE, queue_object())
    assert propids(every) == [P["PROPID_Q_QMID"], P["PROPID_Q_QUOTA"], P["PROPID_Q_BASEPRIORITY"]]
    with pytest.raises(ModelError):
        only_update(Operation.QUEUE_UPDATE, queue_object(modified=(P["PROPID_Q_JOURNAL"],)))
    no_path = only_update(Operation.QUEUE_UPDATE, queue_object(modified=(P["PROPID_Q_ADS_PATH"],)))
    assert propids(no_path) == [P["PROPID_Q_QMID"]]


@covers("MS-MQCN", "3.3.5.2")
def test_an_updated_machine_carries_machine_id_and_foreign_then_the_modified_properties():
    """PROPID_QM_MACHINE_ID and PROPID_QM_FOREIGN, then the modified ones (PROPID_QM_CNS may be included)."""
    update = only_update(Operation.QUEUE_MANAGER_UPDATE, machine_object(
        modified=(P["PROPID_QM_QUOTA"], P["PROPID_QM_CNS"])))
    assert propids(update) == [P["PROPID_QM_MACHINE_ID"], P["PROPID_QM_FOREIGN"], P["PROPID_QM_QUOTA"],
                               P["PROPID_QM_CNS"]]
    assert update.value_of(P["PROPID_QM_FOREIGN"]) == 0 and update.guid_identifier == QM_ID
    every = only_update(Operation.QUEUE_MANAGER_UPDATE, machine_object())
    assert propids(every) == [P["PROPID_QM_MACHINE_ID"], P["PROPID_QM_FOREIGN"], P["PROPID_QM_QUOTA"]]


@covers("MS-MQCN", "3.3.5.2")
def test_a_deleted_queue_carries_scope_and_object_type():
    """PropertyId = [PROPID_D_SCOPE, PROPID_D_OBJTYPE], PropertyValue = [MQDS_ENTERPRISESCOPE, MQDS_QUEUE]."""
    update = only_update(Operation.QUEUE_DELETION, queue_object())
    assert (update.command, update.use_guid, update.guid_identifier) == (Command.DELETE, 1, Q1)
    assert [(p.propid, p.value) for p in update.properties] == [(P["PROPID_D_SCOPE"], 1), (P["PROPID_D_OBJTYPE"], 1)]


@covers("MS-MQCN", "3.3.5.2")
def test_one_version_1_message_can_carry_several_updates():
    """"A directory service can send more than one notification": NumberOfUpdateNotifications counts them."""
    message = prepare_change_notification_v1(ds_client(directory_service_guid=OTHER_QM), ctx(), [
        (Operation.QUEUE_CREATION, queue_object()), (Operation.QUEUE_DELETION, queue_object())])
    assert mqcn.encode(message)[:2] == b"\x01\x02"
    assert {u.guid_master_id for u in message.updates} == {OTHER_QM}


# --- 3.3.5.3 -------------------------------------------------------------------------------------


@covers("MS-MQCN", "3.3.5.3")
def test_a_version_1_message_is_signed_express_normal_and_lives_five_minutes():
    """TimeToReachQueue 5 minutes, Express, Normal, HashAlgorithm, body + 1 byte, signed by QueueManager.Identifier."""
    client, c = ds_client(), ctx(node="PSC1")
    message = prepare_change_notification_v1(client, c, [(Operation.QUEUE_DELETION, queue_object())])
    sent = send_change_notification_message(client, c, message, QM_ID)
    assert sent.body == mqcn.encode(message) + b"\x00" and mqcn.decode_body(sent.body) == message
    assert (sent.time_to_reach_queue, sent.delivery, sent.message_class, sent.hash_algorithm) == (
        300, "Express", "Normal", 0x8003)
    assert (sent.authentication_level, sent.sender_identifier_type, sent.sender_identifier) == (
        AuthenticationLevel.SIG10, 2, DS_ID)
    assert sent.format_name == f"PRIVATE={QM_ID}\\3" and c.effects[-1] is sent


@covers("MS-MQCN", "3.3.5.3")
def test_a_version_2_message_is_not_signed_but_has_a_hash_algorithm():
    """Only version 0x01 "MUST be signed"; HashAlgorithm "MUST be set" for both (note <12>: SHA1 later)."""
    client = qm_client(hash_algorithm=CALG_SHA1)
    sent = send_change_notification(client, ctx(node="C22"), Operation.QUEUE_CREATION, queue_object())
    assert sent.authentication_level is AuthenticationLevel.NONE and sent.sender_identifier_type == 0
    assert sent.hash_algorithm == CALG_SHA1 and len(sent.body) == len(mqcn.encode(sent.message)) + 1


# --- the client and the server together ---------------------------------------------------------


def deliver(sent: EnqueueNotification, qm, mode, reader) -> None:
    message = ReceivedMessage(body=sent.body, sender_identifier_type=sent.sender_identifier_type,
                              sender_identifier=sent.sender_identifier,
                              authentication_level=sent.authentication_level)
    receive_change_notification(qm, ctx(mode), message, reader)


@covers("MS-MQCN", "3.3.4.1")
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("client", [ds_client(), qm_client()], ids=["v1", "v2"])
def test_every_operation_reaches_the_owner_in_both_versions(mode, client):
    """Create, update, queue-manager update and delete, sent by the client, change the server as intended."""
    reader = directory((Q1, directory_queue(PROPID_Q_QUOTA=1000, PROPID_Q_LABEL="q1")),
                       (QM_ID, directory_machine(PROPID_QM_QUOTA=10)))
    qm = opened_qm()
    c = ctx(node=client.machine_name)
    deliver(send_change_notification(client, c, Operation.QUEUE_CREATION, queue_object()), qm, mode, reader)
    assert qm.queue_collection[Q1].quota == 1000 and qm.queue_collection[Q1].label == "q1"
    deliver(send_change_notification(client, c, Operation.QUEUE_UPDATE,
                                     queue_object(modified=(P["PROPID_Q_QUOTA"],))), qm, mode, reader)
    assert qm.queue_collection[Q1].quota == 1000
    deliver(send_change_notification(client, c, Operation.QUEUE_MANAGER_UPDATE, machine_object()), qm, mode, reader)
    assert qm.queue_manager_quota == 10
    gone = directory((QM_ID, directory_machine()))  # the queue is no longer in the directory
    deliver(send_change_notification(client, c, Operation.QUEUE_DELETION, queue_object()), qm, mode, gone)
    assert qm.queue_collection == {}


@covers("MS-MQCN", "3.3.5.2")
@settings(max_examples=40)
@given(quota=hst.integers(0, 0xFFFFFFFF), priority=hst.integers(-0x8000, 0x7FFF), label=hst.text(
    hst.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=20),
    journal=hst.integers(0, 255), sd=hst.binary(max_size=40))
def test_a_version_1_create_round_trips_the_queue_attributes(quota, priority, label, journal, sd):
    """What the directory service puts in a 0x01 create is what the owner's new Queue holds."""
    obj = queue_object(properties=(Property(P["PROPID_Q_QUOTA"], quota), Property(P["PROPID_Q_BASEPRIORITY"], priority),
                                   Property(P["PROPID_Q_LABEL"], label), Property(P["PROPID_Q_JOURNAL"], journal),
                                   Property(P["PROPID_Q_SECURITY"], sd)))
    qm = opened_qm()
    deliver(send_change_notification(ds_client(), ctx(), Operation.QUEUE_CREATION, obj), qm, Mode.LITERAL,
            directory())
    q = qm.queue_collection[Q1]
    assert (q.quota, q.base_priority, q.label, q.journaling, q.security) == (quota, priority, label, journal, sd)


@covers("MS-MQCN", "3.3.5.3")
def test_an_update_to_a_queue_the_owner_holds_changes_only_what_was_modified():
    """A 0x01 update built from `modified` leaves the owner's other attributes as they were (clarified)."""
    qm = with_queues(opened_qm(), queue(label="keep", security=SD))
    sent = send_change_notification(ds_client(), ctx(), Operation.QUEUE_UPDATE,
                                    queue_object(modified=(P["PROPID_Q_QUOTA"],)))
    deliver(sent, qm, Mode.CLARIFIED, directory())
    q = qm.queue_collection[Q1]
    assert (q.quota, q.label, q.security, q.base_priority) == (1000, "keep", SD, 0)
