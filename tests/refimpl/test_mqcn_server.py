"""MS-MQCN 3.2: the server side (initialization, dispatch, version 0x01 and 0x02 processing, batching)."""

from __future__ import annotations

import pytest
from mqspec.model.errors import ModelError
from mqspec.model.guid import Guid
from mqspec.model.mqcn import Command, Event, NotificationUpdate
from mqspec.model.propvalue import Property
from mqspec.refimpl import status as st
from mqspec.refimpl.effects import Clarified, Mode, StartTimer, TimerKey
from mqspec.refimpl.mqcn_effects import (
    CreateQueue,
    DeleteQueue,
    DirectoryRead,
    Disregarded,
    IgnoredProperties,
    OpenQueue,
    UpdateQueue,
    UpdateQueueManager,
)
from mqspec.refimpl.mqcn_server import (
    V2_QUEUE_ATTRIBUTES,
    batch_timer_expired,
    notification_object_type,
    notification_queue_path_name,
    notify_queue_private,
    process_change_notification_v1,
    process_change_notification_v2,
    receive_change_notification,
    server_initialization,
)
from mqspec.refimpl.mqcn_state import (
    AuthenticationLevel,
    MappingDirectory,
    QueueManager,
    ReceivedMessage,
    ServerOptions,
    queue_attributes,
    queue_manager_attributes,
)

from mqspec.clauses import covers

from .mqcn_fixtures import (
    DS_ID,
    EMPTY_DIRECTORY,
    MODES,
    OTHER_QM,
    Q1,
    Q2,
    QM_ID,
    SD,
    P,
    change_update,
    create_properties,
    create_update,
    ctx,
    delete_update,
    directory,
    directory_machine,
    directory_queue,
    effects_of,
    machine_update,
    opened_qm,
    queue,
    received,
    v1,
    v2,
    with_queues,
)


def receive(qm, message, mode=Mode.CLARIFIED, directory_reader=EMPTY_DIRECTORY, now=0.0, **kw):
    c = ctx(mode, now)
    receive_change_notification(qm, c, message if isinstance(message, ReceivedMessage) else received(message, **kw),
                                directory_reader)
    return c


def disregarded(c) -> list[str]:
    return [e.reason for e in effects_of(c, Disregarded)]


def clarified(c) -> list[str]:
    return [e.erratum for e in effects_of(c, Clarified)]


# --- names, mappings, initialization -----------------------------------------------------------


@covers("MS-MQCN", "1.9")
def test_notify_queue_private_is_the_queue_manager_guid_and_queue_3():
    """NOTIFY_QUEUE_PRIVATE is PRIVATE=<queue manager guid>\\3."""
    assert notify_queue_private(QM_ID) == f"PRIVATE={QM_ID}\\3"
    with pytest.raises(ModelError):
        notify_queue_private("C14")


@covers("MS-MQCN", "3.2.1.2.1")
def test_change_notification_queue_path_name_follows_the_abnf():
    """The queue is Computer\\private$\\notify_queue$, Computer being 1*256(VCHAR)."""
    assert notification_queue_path_name("C14") == "C14\\private$\\notify_queue$"
    for bad in ("", "a b", "x" * 257, "a\\b"):
        with pytest.raises(ModelError):
            notification_queue_path_name(bad)


@covers("MS-MQCN", "3.1.1.3")
def test_queue_attributes_follow_the_mapping_table():
    """Queue.Quota is PROPID_Q_QUOTA, Queue.DirectoryPath PROPID_Q_ADS_PATH; an absent PROPID reads None."""
    got = queue_attributes({P["PROPID_Q_QUOTA"]: 5, P["PROPID_Q_ADS_PATH"]: "LDAP://x"},
                           ("quota", "directory_path", "label"))
    assert got == {"quota": 5, "directory_path": "LDAP://x", "label": None}


@covers("MS-MQCN", "3.1.1.2.1")
def test_queue_manager_attributes_follow_the_mapping_table():
    """QueueManager.QueueManagerQuota is PROPID_QM_QUOTA and ConnectedNetworkIdentifierList PROPID_QM_CNS."""
    got = queue_manager_attributes({P["PROPID_QM_QUOTA"]: 9, P["PROPID_QM_CNS"]: (QM_ID,)},
                                   ("queue_manager_quota", "connected_network_identifier_list"))
    assert got == {"queue_manager_quota": 9, "connected_network_identifier_list": (QM_ID,)}


@covers("MS-MQCN", "3.2.1")
def test_a_new_queue_manager_has_an_empty_queue_collection_and_a_closed_queue():
    """The ADM starts with no queues and no notification queue descriptor."""
    qm = QueueManager(machine_name="C14", identifier=QM_ID)
    assert qm.queue_collection == {} and qm.notification_queue is None
    assert not qm.options.batching and qm.options.use_properties


@covers("MS-MQCN", "3.2.3")
def test_initialization_opens_the_notification_queue_for_receiving():
    """Open Queue with NOTIFY_QUEUE_PRIVATE, ReceiveAccess, DenyNone; the descriptor is kept."""
    qm = QueueManager(machine_name="C14", identifier=QM_ID)
    c = ctx()
    assert server_initialization(qm, c) == st.MQ_OK
    assert c.effects == [OpenQueue("C14", f"PRIVATE={QM_ID}\\3", "ReceiveAccess", "DenyNone", st.MQ_OK, 1)]
    assert qm.notification_queue == 1


@covers("MS-MQCN", "3.2.3")
def test_a_failed_open_leaves_the_server_unable_to_receive():
    """If rStatus is not MQ_OK "this protocol cannot work correctly": nothing may be dequeued (E-241)."""
    qm = QueueManager(machine_name="C14", identifier=QM_ID, notification_queue_exists=False)
    c = ctx()
    assert server_initialization(qm, c) == st.MQ_ERROR_QUEUE_NOT_FOUND
    assert c.effects[0].status == st.MQ_ERROR_QUEUE_NOT_FOUND and qm.notification_queue is None
    with pytest.raises(ModelError):
        receive(qm, v1(create_update()))


@covers("MS-MQCN", "3.2.3")
def test_workgroup_mode_does_not_initialize_the_protocol():
    """Note <8>: in workgroup mode there is no Open Queue at all and the queue stays closed."""
    qm = QueueManager(machine_name="C14", identifier=QM_ID, options=ServerOptions(workgroup=True))
    c = ctx()
    assert server_initialization(qm, c) != st.MQ_OK
    assert c.effects == [] and qm.notification_queue is None


# --- 3.2.5 dispatch ------------------------------------------------------------------------------


@covers("MS-MQCN", "3.2.5")
@pytest.mark.parametrize("mode", MODES)
def test_version_1_goes_to_3_2_5_1_and_version_2_to_3_2_5_2(mode):
    """A version 0x01 message creates from its properties; a version 0x02 one reads the directory."""
    qm = opened_qm()
    c = receive(qm, v1(create_update()), mode)
    assert [e.status for e in effects_of(c, CreateQueue)] == [st.MQ_OK]
    c = receive(qm, v2(Event.QUEUE_CREATED, Q2), mode, directory((Q2, directory_queue(Q2, "C14\\q2"))))
    assert effects_of(c, DirectoryRead)[0].identifier == Q2 and Q2 in qm.queue_collection


@covers("MS-MQCN", "3.2.5")
@pytest.mark.parametrize("mode", MODES)
def test_a_body_that_is_not_a_change_notification_message_is_disregarded(mode):
    """Bad bytes (a Version 0x03, an Event 5 of note <10>) are disregarded and change nothing (E-240)."""
    qm = opened_qm()
    event5 = ("<Notification><Event>5</Event><ObjectGuid>" + str(Q1)
              + "</ObjectGuid><DomainController>PSC1</DomainController></Notification>")
    for body in (b"\x03\x00\x00", b"", b"\x02\x01" + event5.encode("utf-16-le") + b"\x00"):
        c = receive(qm, body, mode)
        assert len(disregarded(c)) == 1 and qm.queue_collection == {}


@covers("MS-MQCN", "3.2.5")
def test_the_unused_byte_is_required_literally_and_tolerated_when_clarified():
    """A body without the unused byte of 3.3.5.3 is disregarded in literal mode only (E-240)."""
    from mqspec.model import mqcn

    bare = mqcn.encode(v1(create_update()))
    assert disregarded(receive(opened_qm(), bare, Mode.LITERAL))
    qm = opened_qm()
    assert not disregarded(receive(qm, bare, Mode.CLARIFIED)) and Q1 in qm.queue_collection


@covers("MS-MQCN", "3.2.5")
def test_a_windows_nt_server_ignores_version_2_messages():
    """Note <4>: with versions={1} a version 0x02 message is disregarded before any Directory Read."""
    qm = opened_qm(versions=(1,))
    c = receive(qm, v2(Event.QUEUE_CREATED), directory_reader=directory((Q1, directory_queue())))
    assert disregarded(c) and not effects_of(c, DirectoryRead) and qm.queue_collection == {}


# --- 3.2.5.1 version 0x01: checks ---------------------------------------------------------------


@covers("MS-MQCN", "3.2.5.1")
@pytest.mark.parametrize("mode", MODES)
def test_a_sender_that_is_not_a_queue_manager_is_disregarded(mode):
    """SenderIdentifierType other than QueueManagerIdentifier: "disregard ... perform no further processing"."""
    qm = opened_qm()
    c = receive(qm, v1(create_update()), mode, sender_type=1)
    assert "SenderIdentifierType" in disregarded(c)[0] and qm.queue_collection == {}


@covers("MS-MQCN", "3.2.5.1")
@pytest.mark.parametrize("mode", MODES)
def test_an_unauthenticated_message_is_disregarded(mode):
    """AuthenticationLevel None (0x0): the message is disregarded."""
    qm = opened_qm()
    message = received(v1(create_update()))
    unsigned = ReceivedMessage(body=message.body, sender_identifier_type=2, sender_identifier=DS_ID,
                               authentication_level=AuthenticationLevel.NONE)
    c = receive(qm, unsigned, mode)
    assert "AuthenticationLevel" in disregarded(c)[0] and qm.queue_collection == {}


@covers("MS-MQCN", "3.2.5.1")
@pytest.mark.parametrize("mode", MODES)
def test_reading_the_directory_instead_needs_no_signature(mode):
    """A server that does not use the property values reads the directory and skips the checks."""
    qm = opened_qm(use_properties=False)
    c = receive(qm, v1(create_update()), mode, directory((Q1, directory_queue())), signed=False)
    read = effects_of(c, DirectoryRead)[0]
    assert read.server == str(DS_ID) and read.path_name == "C14\\q1"
    assert qm.queue_collection[Q1].label == "from-ds" and qm.queue_collection[Q1].scope == 1


@covers("MS-MQCN", "3.2.5.1")
def test_an_unsigned_delete_is_refused_when_clarified_even_without_property_use():
    """E-238: a delete reads PropertyValue[1], so the sender checks apply to it in clarified mode."""
    qm = with_queues(opened_qm(use_properties=False), queue())
    c = receive(qm, v1(delete_update()), Mode.CLARIFIED, signed=False)
    assert disregarded(c) and Q1 in qm.queue_collection
    qm = with_queues(opened_qm(use_properties=False), queue())
    receive(qm, v1(delete_update()), Mode.LITERAL, signed=False)
    assert Q1 not in qm.queue_collection


@covers("MS-MQCN", "3.2.5.1")
def test_a_sender_outside_the_known_directory_servers_is_refused_when_clarified():
    """E-239: with directory_servers known, a signed 0x01 from another queue manager is disregarded."""
    qm = opened_qm(directory_servers=(DS_ID,))
    c = receive(qm, v1(create_update()), Mode.CLARIFIED, sender=OTHER_QM)
    assert disregarded(c) and "E-239" in clarified(c) and qm.queue_collection == {}
    qm = opened_qm(directory_servers=(DS_ID,))
    receive(qm, v1(create_update()), Mode.LITERAL, sender=OTHER_QM)
    assert Q1 in qm.queue_collection
    qm = opened_qm(directory_servers=(DS_ID,))
    receive(qm, v1(create_update()), Mode.CLARIFIED)
    assert Q1 in qm.queue_collection


@covers("MS-MQCN", "3.2.5.1")
def test_object_type_is_derived_from_property_id_0_with_a_subtraction():
    """E-230: (PropertyId[0] - 1000) / 100 above 1000, PropertyId[0] / 100 otherwise, integer division."""
    assert [notification_object_type(p) for p in (101, 115, 199, 202, 1000, 1101, 1201, 1403)] == [
        1, 1, 1, 2, 10, 1, 2, 4]


@covers("MS-MQCN", "3.2.5.1")
@pytest.mark.parametrize("mode", MODES)
def test_an_update_that_starts_with_a_security_propid_is_a_queue_update(mode):
    """PropertyId[0] = PROPID_Q_SECURITY (1101) names a queue: (1101 - 1000) / 100 = 1."""
    qm = with_queues(opened_qm(), queue(security=b""))
    update = NotificationUpdate(command=Command.CHANGE, guid_identifier=Q1, guid_master_id=DS_ID,
                                properties=[Property(P["PROPID_Q_SECURITY"], SD)])
    receive(qm, v1(update), mode)
    assert qm.queue_collection[Q1].security == SD


@covers("MS-MQCN", "3.2.5.1")
@pytest.mark.parametrize("mode", MODES)
def test_an_object_type_other_than_queue_or_machine_is_disregarded(mode):
    """PropertyId[0] of a site (301): "the object type does not equal 1 ... or 2": disregard."""
    qm = opened_qm()
    update = create_update(properties=[Property(P["PROPID_S_PATHNAME"], "site1")])
    c = receive(qm, v1(update), mode)
    assert "object type 3" in disregarded(c)[0] and qm.queue_collection == {}


@covers("MS-MQCN", "3.2.5.1")
@pytest.mark.parametrize("mode", MODES)
def test_an_update_with_no_properties_is_disregarded(mode):
    """E-234: NumberOfProperties 0 leaves no PropertyId[0] to derive the object type from."""
    qm = with_queues(opened_qm(), queue())
    c = receive(qm, v1(create_update(properties=[])), mode)
    assert "PropertyId[0]" in disregarded(c)[0]


@covers("MS-MQCN", "3.2.5.1")
def test_a_bad_update_disregards_the_whole_message_only_when_clarified():
    """E-231: literal mode has applied the updates before the bad one; clarified mode applies none."""
    bad = create_update(Q2, "C14\\q2", properties=[Property(P["PROPID_S_PATHNAME"], "site1")])
    qm = opened_qm()
    c = receive(qm, v1(create_update(), bad), Mode.LITERAL)
    assert Q1 in qm.queue_collection and disregarded(c)
    qm = opened_qm()
    c = receive(qm, v1(create_update(), bad), Mode.CLARIFIED)
    assert qm.queue_collection == {} and disregarded(c) and "E-231" in clarified(c)


# --- 3.2.5.1 version 0x01: the four actions -------------------------------------------------------


@covers("MS-MQCN", "3.2.5.1")
@pytest.mark.parametrize("mode", MODES)
def test_create_queue_takes_the_listed_attributes_and_ignores_the_directory_path(mode):
    """Command 0x00: Create Queue with the fifteen attributes, iSkipDirectory; PROPID_Q_ADS_PATH ignored."""
    qm = opened_qm()
    props = create_properties() + [Property(P["PROPID_Q_ADS_PATH"], "LDAP://q1"),
                                   Property(P["PROPID_Q_MULTICAST_ADDRESS"], "234.1.1.1:8001")]
    c = receive(qm, v1(create_update(properties=props)), mode)
    q = qm.queue_collection[Q1]
    assert (q.base_priority, q.journaling, q.quota, q.journal_quota, q.create_time, q.modify_time) == (
        3, 1, 1000, 2000, 11, 12)
    assert (q.pathname, q.label, q.authentication, q.privacy_level, q.transactional, q.scope, q.security) == (
        "C14\\q1", "label", 1, 2, 1, 1, SD)
    assert q.directory_path is None and q.multicast_address is None
    assert effects_of(c, CreateQueue)[0].skip_directory is True
    assert effects_of(c, IgnoredProperties)[0].propids == (P["PROPID_Q_ADS_PATH"], P["PROPID_Q_MULTICAST_ADDRESS"])


@covers("MS-MQCN", "3.2.5.1")
@pytest.mark.parametrize("mode", MODES)
def test_a_repeated_create_keeps_the_queue_and_reports_it_exists(mode):
    """E-233: a second Create Queue for the same Identifier changes nothing (MQ_ERROR_QUEUE_EXISTS)."""
    qm = with_queues(opened_qm(), queue(label="old"))
    c = receive(qm, v1(create_update()), mode)
    assert effects_of(c, CreateQueue)[0].status == st.MQ_ERROR_QUEUE_EXISTS
    assert qm.queue_collection[Q1].label == "old"


@covers("MS-MQCN", "3.2.5.1")
@pytest.mark.parametrize("mode", MODES)
def test_a_create_without_an_instance_creates_nothing(mode):
    """Without PROPID_Q_INSTANCE the new Queue has no Identifier; Create Queue is not performed."""
    qm = opened_qm()
    props = [p for p in create_properties() if p.propid != P["PROPID_Q_INSTANCE"]]
    c = receive(qm, v1(create_update(properties=props)), mode)
    assert qm.queue_collection == {} and "Identifier" in disregarded(c)[0]


@covers("MS-MQCN", "3.2.5.1")
@pytest.mark.parametrize("mode", MODES)
def test_update_queue_sets_the_seven_attributes_and_ignores_the_rest(mode):
    """Command 0x01 on a queue: BasePriority ... PrivacyLevel; "All other PROPIDs ... MUST be ignored"."""
    qm = with_queues(opened_qm(), queue())
    update = change_update(PROPID_Q_BASEPRIORITY=7, PROPID_Q_JOURNAL=1, PROPID_Q_QUOTA=5, PROPID_Q_JOURNAL_QUOTA=6,
                           PROPID_Q_SECURITY=b"\x01", PROPID_Q_AUTHENTICATE=1, PROPID_Q_PRIV_LEVEL=2,
                           PROPID_Q_LABEL="renamed")
    c = receive(qm, v1(update), mode)
    q = qm.queue_collection[Q1]
    assert (q.base_priority, q.journaling, q.quota, q.journal_quota, q.security, q.authentication,
            q.privacy_level) == (7, 1, 5, 6, b"\x01", 1, 2)
    assert q.label == "q1"  # PROPID_Q_LABEL is ignored
    assert effects_of(c, IgnoredProperties)[0].propids == (P["PROPID_Q_QMID"], P["PROPID_Q_LABEL"])


@covers("MS-MQCN", "3.2.5.1")
def test_an_absent_property_keeps_its_attribute_only_when_clarified():
    """E-232: an update carrying only PROPID_Q_QUOTA keeps BasePriority; the literal IndexOf finds None."""
    qm = with_queues(opened_qm(), queue())
    c = receive(qm, v1(change_update(PROPID_Q_QUOTA=5)), Mode.CLARIFIED)
    assert qm.queue_collection[Q1].quota == 5 and qm.queue_collection[Q1].base_priority == 0
    assert "E-232" in clarified(c)
    qm = with_queues(opened_qm(), queue())
    receive(qm, v1(change_update(PROPID_Q_QUOTA=5)), Mode.LITERAL)
    assert qm.queue_collection[Q1].quota == 5 and qm.queue_collection[Q1].base_priority is None


@covers("MS-MQCN", "3.2.5.1")
@pytest.mark.parametrize("mode", MODES)
def test_an_update_of_an_unknown_queue_changes_nothing(mode):
    """E-233: no "corresponding Queue" in QueueCollection: the update reports MQ_ERROR_QUEUE_NOT_FOUND."""
    qm = with_queues(opened_qm(), queue())
    c = receive(qm, v1(change_update(Q2, PROPID_Q_QUOTA=5)), mode)
    assert effects_of(c, UpdateQueue)[0].status == st.MQ_ERROR_QUEUE_NOT_FOUND
    assert qm.queue_collection[Q1].quota == 100


@covers("MS-MQCN", "3.2.5.1")
@pytest.mark.parametrize("mode", MODES)
def test_update_queue_manager_sets_three_attributes_and_ignores_cns_and_address(mode):
    """Command 0x01 on a machine: QueueManagerQuota, JournalQuota, Security; PROPID_QM_CNS etc. ignored."""
    qm = opened_qm()
    update = machine_update(PROPID_QM_QUOTA=10, PROPID_QM_JOURNAL_QUOTA=20, PROPID_QM_SECURITY=SD,
                            PROPID_QM_CNS=(OTHER_QM,), PROPID_QM_ADDRESS=b"\x01\x02", PROPID_QM_MACHINE_TYPE="x",
                            PROPID_QM_OS=0x100)
    c = receive(qm, v1(update), mode)
    assert (qm.queue_manager_quota, qm.journal_quota, qm.security) == (10, 20, SD)
    assert qm.connected_network_identifier_list == () and qm.operating_system_type is None
    assert set(effects_of(c, IgnoredProperties)[0].propids) == {
        P[n] for n in ("PROPID_QM_MACHINE_ID", "PROPID_QM_FOREIGN", "PROPID_QM_CNS", "PROPID_QM_ADDRESS",
                       "PROPID_QM_MACHINE_TYPE", "PROPID_QM_OS")}
    assert effects_of(c, UpdateQueueManager)


@covers("MS-MQCN", "3.2.5.1")
def test_an_update_of_another_machine_is_ignored_only_when_clarified():
    """E-236: GuidIdentifier of another machine does not change this QueueManager in clarified mode."""
    qm = opened_qm()
    c = receive(qm, v1(machine_update(OTHER_QM, PROPID_QM_QUOTA=10)), Mode.CLARIFIED)
    assert qm.queue_manager_quota == 0xFFFFFFFF and "E-236" in clarified(c)
    receive(qm, v1(machine_update(OTHER_QM, PROPID_QM_QUOTA=10)), Mode.LITERAL)
    assert qm.queue_manager_quota == 10


@covers("MS-MQCN", "3.2.5.1")
def test_an_update_naming_another_machine_by_path_name_is_ignored_only_when_clarified():
    """E-236: an update naming its machine by PathName (UseGuid 0x00) has no GuidIdentifier to compare: another
    machine's name does not change this QueueManager in clarified mode; its own name, in any case, does."""
    def by_name(name, quota):
        update = machine_update(PROPID_QM_QUOTA=quota)
        return v1(NotificationUpdate(command=Command.CHANGE, path_name=name, guid_master_id=update.guid_master_id,
                                     properties=update.properties))

    qm = opened_qm()
    c = receive(qm, by_name("OTHERMACHINE", 41), Mode.CLARIFIED)
    assert qm.queue_manager_quota == 0xFFFFFFFF and "E-236" in clarified(c)
    receive(qm, by_name("c14", 42), Mode.CLARIFIED)
    assert qm.queue_manager_quota == 42
    receive(qm, by_name("OTHERMACHINE", 41), Mode.LITERAL)
    assert qm.queue_manager_quota == 41


@covers("MS-MQCN", "3.2.5.1")
@pytest.mark.parametrize("mode", MODES)
def test_a_created_machine_object_has_no_action(mode):
    """E-234: Command 0x00 with a machine PropertyId[0] passes the type check but 3.2.5.1 gives no action."""
    qm = opened_qm()
    update = create_update(properties=[Property(P["PROPID_QM_MACHINE_ID"], QM_ID)])
    c = receive(qm, v1(update), mode)
    assert "no action" in disregarded(c)[0] and qm.queue_collection == {}


@covers("MS-MQCN", "3.2.5.1")
@pytest.mark.parametrize("mode", MODES)
def test_delete_queue_removes_the_queue_named_by_guid_identifier(mode):
    """Command 0x02 with PropertyValue[1] = MQDS_QUEUE: Delete Queue, iSkipDirectory."""
    qm = with_queues(opened_qm(), queue(), queue(Q2, "C14\\q2"))
    c = receive(qm, v1(delete_update()), mode)
    assert list(qm.queue_collection) == [Q2]
    assert effects_of(c, DeleteQueue) == [DeleteQueue("C14", Q1, True, st.MQ_OK)]


@covers("MS-MQCN", "3.2.5.1")
@pytest.mark.parametrize("mode", MODES)
def test_a_delete_of_another_object_type_or_without_a_type_is_disregarded(mode):
    """PropertyValue[1] other than MQDS_QUEUE, or missing (E-234), disregards the message."""
    for update in (delete_update(object_type=2), delete_update(properties=[Property(P["PROPID_D_SCOPE"], 1)]),
                   delete_update(properties=[Property(P["PROPID_D_SCOPE"], 1), Property(P["PROPID_Q_LABEL"], "x")])):
        qm = with_queues(opened_qm(), queue())
        c = receive(qm, v1(update), mode)
        assert disregarded(c) and Q1 in qm.queue_collection


@covers("MS-MQCN", "3.2.5.1")
@pytest.mark.parametrize("mode", MODES)
def test_a_delete_of_an_unknown_queue_reports_not_found(mode):
    """E-233: no queue whose identifier is GuidIdentifier: Delete Queue finds nothing."""
    qm = with_queues(opened_qm(), queue())
    c = receive(qm, v1(delete_update(Q2)), mode)
    assert effects_of(c, DeleteQueue)[0].status == st.MQ_ERROR_QUEUE_NOT_FOUND and Q1 in qm.queue_collection


@covers("MS-MQCN", "3.2.5.1")
def test_a_delete_by_path_name_is_applied_only_when_clarified():
    """E-235: a delete with UseGuid 0x00 matches no GuidIdentifier literally; clarified finds the PathName."""
    qm = with_queues(opened_qm(), queue())
    receive(qm, v1(delete_update(None, path="c14\\Q1")), Mode.LITERAL)
    assert Q1 in qm.queue_collection
    c = receive(qm, v1(delete_update(None, path="c14\\Q1")), Mode.CLARIFIED)
    assert Q1 not in qm.queue_collection and "E-235" in clarified(c)


@covers("MS-MQCN", "3.2.5.1")
@pytest.mark.parametrize("mode", MODES)
def test_updates_are_applied_in_order(mode):
    """"for each Notification Update in the array": create, change, then delete another queue."""
    qm = with_queues(opened_qm(), queue(Q2, "C14\\q2"))
    c = ctx(mode)
    process_change_notification_v1(qm, c, received(b""), v1(create_update(), change_update(PROPID_Q_QUOTA=9),
                                                            delete_update(Q2)), EMPTY_DIRECTORY)
    assert list(qm.queue_collection) == [Q1] and qm.queue_collection[Q1].quota == 9


@covers("MS-MQCN", "3.2.5.1")
@pytest.mark.parametrize("mode", MODES)
def test_without_property_use_updates_read_the_directory(mode):
    """use_properties=False: a queue or machine change is read from the server named by GuidMasterId."""
    qm = with_queues(opened_qm(use_properties=False), queue())
    reader = directory((Q1, directory_queue(PROPID_Q_QUOTA=77)), (QM_ID, directory_machine(PROPID_QM_QUOTA=66)))
    receive(qm, v1(change_update(PROPID_Q_QUOTA=1), machine_update(PROPID_QM_QUOTA=1)), mode, reader)
    assert qm.queue_collection[Q1].quota == 77 and qm.queue_manager_quota == 66
    assert qm.queue_collection[Q1].label == "q1"  # a 0x01 update never sets Label


# --- 3.2.5.2 version 0x02 -----------------------------------------------------------------------


@covers("MS-MQCN", "3.2.5.2")
@pytest.mark.parametrize("mode", MODES)
def test_event_1_reads_the_queue_and_creates_it(mode):
    """Event 1: Directory Read (the sixteen attributes) on DomainController, then Create Queue."""
    qm = opened_qm()
    c = receive(qm, v2(Event.QUEUE_CREATED), mode, directory((Q1, directory_queue())), signed=False)
    read = effects_of(c, DirectoryRead)[0]
    assert (read.server, read.object_type, read.identifier, read.attributes) == ("PSC1", 1, Q1, V2_QUEUE_ATTRIBUTES)
    q = qm.queue_collection[Q1]
    assert (q.label, q.quota, q.multicast_address, q.directory_path) == ("from-ds", 4321, "234.1.1.1:8001",
                                                                          "LDAP://q1")
    assert q.scope is None  # E-243: Scope is not in the 0x02 attribute list


@covers("MS-MQCN", "3.2.5.2")
@pytest.mark.parametrize("mode", MODES)
def test_a_failed_directory_read_creates_nothing(mode):
    """E-242: the object is not in the directory, or DomainController is no known server: no change."""
    for message in (v2(Event.QUEUE_CREATED), v2(Event.QUEUE_CREATED, dc="evil.example")):
        qm = opened_qm()
        c = receive(qm, message, mode, EMPTY_DIRECTORY if message.body.domain_controller == "PSC1"
                    else directory((Q1, directory_queue())))
        assert effects_of(c, DirectoryRead)[0].status == st.MQDS_OBJECT_NOT_FOUND and qm.queue_collection == {}


@covers("MS-MQCN", "3.2.5.2")
@pytest.mark.parametrize("mode", MODES)
def test_event_2_updates_the_queue_from_the_directory(mode):
    """Event 2: the queue in QueueCollection takes the values the Directory Read returned (Label too)."""
    qm = with_queues(opened_qm(), queue())
    receive(qm, v2(Event.QUEUE_CHANGED), mode, directory((Q1, directory_queue(PROPID_Q_LABEL="new"))))
    q = qm.queue_collection[Q1]
    assert (q.label, q.quota, q.base_priority) == ("new", 4321, 5)


@covers("MS-MQCN", "3.2.5.2")
def test_event_2_with_attributes_the_directory_lacks_keeps_them_only_when_clarified():
    """E-232: a Directory Read that returns no Security keeps the queue's own in clarified mode."""
    _, props = directory_queue()
    del props[P["PROPID_Q_SECURITY"]]
    reader = directory((Q1, (1, props)))
    qm = with_queues(opened_qm(), queue())
    receive(qm, v2(Event.QUEUE_CHANGED), Mode.CLARIFIED, reader)
    assert qm.queue_collection[Q1].security == SD
    receive(qm, v2(Event.QUEUE_CHANGED), Mode.LITERAL, reader)
    assert qm.queue_collection[Q1].security is None


@covers("MS-MQCN", "3.2.5.2")
@pytest.mark.parametrize("mode", MODES)
def test_event_2_for_a_queue_not_in_the_collection_changes_nothing(mode):
    """E-233: a changed queue this manager does not hold is not created by event 2."""
    qm = opened_qm()
    c = receive(qm, v2(Event.QUEUE_CHANGED), mode, directory((Q1, directory_queue())))
    assert effects_of(c, UpdateQueue)[0].status == st.MQ_ERROR_QUEUE_NOT_FOUND and qm.queue_collection == {}


@covers("MS-MQCN", "3.2.5.2")
def test_event_3_deletes_a_queue_the_directory_still_holds_only_literally():
    """E-237: literal event 3 deletes at once; clarified deletes only when the directory no longer has it."""
    holds = directory((Q1, directory_queue()))
    qm = with_queues(opened_qm(), queue())
    receive(qm, v2(Event.QUEUE_DELETED), Mode.LITERAL, holds, signed=False)
    assert Q1 not in qm.queue_collection
    qm = with_queues(opened_qm(), queue())
    c = receive(qm, v2(Event.QUEUE_DELETED), Mode.CLARIFIED, holds, signed=False)
    assert Q1 in qm.queue_collection and "E-237" in clarified(c)
    c = receive(qm, v2(Event.QUEUE_DELETED), Mode.CLARIFIED, EMPTY_DIRECTORY, signed=False)
    assert Q1 not in qm.queue_collection and effects_of(c, DeleteQueue)[0].status == st.MQ_OK


@covers("MS-MQCN", "3.2.5.2")
@pytest.mark.parametrize("mode", MODES)
def test_event_4_updates_the_queue_manager_from_the_directory(mode):
    """Event 4: Directory Read of the QueueManager (QueueManagerQuota, JournalQuota, Security), then update."""
    qm = opened_qm()
    c = receive(qm, v2(Event.MACHINE_CHANGED, QM_ID), mode, directory((QM_ID, directory_machine())))
    assert effects_of(c, DirectoryRead)[0].attributes == ("queue_manager_quota", "journal_quota", "security")
    assert (qm.queue_manager_quota, qm.journal_quota, qm.security) == (7, 8, SD)


@covers("MS-MQCN", "3.2.5.2")
def test_event_4_naming_another_machine_is_ignored_only_when_clarified():
    """E-236: ObjectGuid of another machine does not overwrite this QueueManager in clarified mode."""
    reader = directory((OTHER_QM, directory_machine(OTHER_QM)))
    qm = opened_qm()
    c = receive(qm, v2(Event.MACHINE_CHANGED, OTHER_QM), Mode.CLARIFIED, reader)
    assert qm.queue_manager_quota == 0xFFFFFFFF and not effects_of(c, DirectoryRead)
    receive(qm, v2(Event.MACHINE_CHANGED, OTHER_QM), Mode.LITERAL, reader)
    assert qm.queue_manager_quota == 7


@covers("MS-MQCN", "3.2.5.2")
def test_version_2_has_no_sender_checks():
    """3.2.5.2 checks no signature: an unsigned body from anyone is processed (the data is read)."""
    qm = opened_qm()
    direct = ctx()
    process_change_notification_v2(qm, direct, v2(Event.QUEUE_CREATED), directory((Q1, directory_queue())))
    assert Q1 in qm.queue_collection


# --- notes <3> / <13>: batching -----------------------------------------------------------------


BATCH = TimerKey("mqcn_batch")


def timers(c) -> list[float]:
    return [e.delay for e in effects_of(c, StartTimer) if e.timer == BATCH]


@covers("MS-MQCN", "5.1")
def test_batching_is_off_by_default_and_messages_are_processed_at_once():
    """Without the option a message is processed when it is dequeued (Windows NT, note <3>)."""
    qm = opened_qm()
    c = receive(qm, v1(create_update()))
    assert Q1 in qm.queue_collection and timers(c) == []


@covers("MS-MQCN", "5.1")
@pytest.mark.parametrize("mode", MODES)
def test_batching_holds_messages_for_one_minute_then_processes_them_in_order(mode):
    """Note <13>: the first message sets a 1-minute timer; at expiry every held message is processed."""
    qm = opened_qm(batching=True)
    c1 = receive(qm, v1(create_update()), mode, now=10.0)
    c2 = receive(qm, v1(change_update(PROPID_Q_QUOTA=9)), mode, now=20.0)
    assert timers(c1) == [60.0] and timers(c2) == [] and qm.queue_collection == {}
    done = ctx(mode, 70.0)
    batch_timer_expired(qm, done, EMPTY_DIRECTORY)
    assert qm.queue_collection[Q1].quota == 9 and qm.last_processed == 70.0 and not qm.batch_timer_running


@covers("MS-MQCN", "5.1")
def test_a_batch_soon_after_the_last_waits_for_the_rest_of_15_minutes():
    """Processed 14 or fewer minutes ago: the timer is "the remainder of the 15 minutes"; more: 1 minute."""
    qm = opened_qm(batching=True)
    qm.last_processed = 100.0
    assert timers(receive(qm, v1(create_update()), now=400.0)) == [15 * 60.0 - 300.0]
    batch_timer_expired(qm, ctx(now=1000.0), EMPTY_DIRECTORY)
    assert timers(receive(qm, v1(create_update(Q2, "C14\\q2")), now=1000.0 + 14 * 60.0)) == [60.0]
    batch_timer_expired(qm, ctx(now=2000.0), EMPTY_DIRECTORY)
    assert timers(receive(qm, v1(create_update(Q2, "C14\\q3")), now=2000.0 + 14 * 60.0 + 1)) == [60.0]


@covers("MS-MQCN", "1.6")
@pytest.mark.parametrize("mode", MODES)
def test_99_held_messages_are_processed(mode):
    """Fewer than 100 messages while waiting: each is processed when the timer expires."""
    qm = opened_qm(batching=True)
    for i in range(99):
        receive(qm, v1(change_update(PROPID_Q_QUOTA=i)), mode)
    with_queues(qm, queue())
    batch_timer_expired(qm, ctx(mode, 60.0), EMPTY_DIRECTORY)
    assert qm.queue_collection[Q1].quota == 98


@covers("MS-MQCN", "1.6")
def test_100_messages_make_the_server_refresh_its_public_queues():
    """Note <3>: 100 or more messages are ignored; every public queue is re-read as a change-queue event."""
    private = queue(Q2, "C14\\private$\\p", public=False, quota=1)
    guid, new = Guid.from_name("gone"), Guid.from_name("new")
    gone = queue(guid, "C14\\gone")
    reader = directory((Q1, directory_queue(PROPID_Q_QUOTA=55)), (new, directory_queue(new, "C14\\new")),
                       (Q2, directory_queue(Q2, "C14\\private$\\p")))
    results = {}
    for mode in MODES:
        qm = with_queues(opened_qm(batching=True), queue(), private, gone)
        for _ in range(100):
            receive(qm, v1(delete_update()), mode)
        assert qm.batch == [] and qm.batch_count == 100
        c = ctx(mode, 60.0)
        batch_timer_expired(qm, c, reader)
        assert qm.queue_collection[Q1].quota == 55 and qm.queue_collection[Q2].quota == 1
        assert Q2 not in [e.identifier for e in effects_of(c, DirectoryRead)]
        results[mode] = sorted(str(g) for g in qm.queue_collection)
    # E-249: the clarified refresh also drops the queue the directory lost and adds the one it gained
    assert results[Mode.LITERAL] == sorted(map(str, (Q1, Q2, guid)))
    assert results[Mode.CLARIFIED] == sorted(map(str, (Q1, Q2, new)))


@covers("MS-MQCN", "1.6")
def test_a_refresh_without_a_directory_server_changes_nothing():
    """A queue manager that knows no directory server cannot refresh; it says so."""
    qm = with_queues(opened_qm(batching=True), queue())
    qm.directory_server = None
    for _ in range(100):
        receive(qm, v1(delete_update()))
    c = ctx(now=60.0)
    batch_timer_expired(qm, c, EMPTY_DIRECTORY)
    assert disregarded(c) and Q1 in qm.queue_collection


@covers("MS-MQCN", "1.6")
def test_directory_servers_are_found_by_name_or_guid():
    """The MappingDirectory answers by server name and by the GuidMasterId it knows, else nothing."""
    reader = MappingDirectory({"PSC1": {Q1: directory_queue()}}, guids={DS_ID: "PSC1"})
    assert reader.read("PSC1", 1, Q1) is not None and reader.read(DS_ID, 1, Q1) is not None
    assert reader.read(OTHER_QM, 1, Q1) is None and reader.read("PSC1", 2, Q1) is None
    assert reader.queues_owned_by("PSC1", QM_ID, "C14") == [Q1]
    assert reader.queues_owned_by("nobody", QM_ID, "C14") == []
