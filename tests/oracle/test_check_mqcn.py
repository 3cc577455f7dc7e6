"""`mqspec check` on MS-MQCN behaviour beyond version 0x01: the queue manager side of version 0x02
replayed with the directory's declared answer (3.2.5.2)."""

from __future__ import annotations

import json

from mqspec.model import mqcn
from mqspec.model.guid import Guid
from mqspec.model.propids import PROPIDS

from mqspec.clauses import covers
from mqspec.refimpl.effects import Mode
from mqspec.oracle.check import check_text

HEAD = {"trace": "t", "format": 2}
QUEUE = Guid.from_name("queue")


def dump(records: list[dict]) -> str:
    return "".join(json.dumps({**HEAD, **r}) + "\n" for r in records)


def _v2(event: mqcn.Event, guid: Guid = QUEUE) -> bytes:
    body = mqcn.NotificationBody(event=event, object_guid=guid, domain_controller="DS1")
    return mqcn.encode_body(mqcn.ChangeNotificationMessage(version=mqcn.Version.QUEUE_MANAGER, body=body))


def _queue_properties(quota: int = 100) -> list[dict]:
    return [{"propid": "PROPID_Q_INSTANCE", "value": str(QUEUE)},
            {"propid": "PROPID_Q_PATHNAME", "value": "qm1\\orders"},
            {"propid": "PROPID_Q_QUOTA", "value": quota}]


def qm_trace(*events: dict) -> str:
    return dump([{"event": "header", "t": 0, "nodes": [{"name": "QM1", "mqcn": {"side": "queue_manager"}}]},
                 *events])


def received(body: bytes, t: float = 1.0, **extra: object) -> dict:
    return {"event": "notification", "t": t, "node": "QM1", "direction": "receive", "body": body.hex(), **extra}


def queue_event(operation: str, t: float = 1.0, **extra: object) -> dict:
    return {"event": "queue", "t": t, "node": "QM1", "operation": operation, "identifier": str(QUEUE), **extra}


@covers("MS-MQCN", "3.2.5.2")
def test_a_version_2_create_is_replayed_with_the_declared_directory_answer():
    """A v2 QueueCreated with the directory's answer must be followed by Create Queue (3.2.5.2), and is then conformant."""
    good = check_text(qm_trace(received(_v2(mqcn.Event.QUEUE_CREATED), read=_queue_properties()),
                               queue_event("create")))
    assert good[0].verdict == "conformant" and not good[0].notes
    missing = check_text(qm_trace(received(_v2(mqcn.Event.QUEUE_CREATED), read=_queue_properties())))[0]
    d = missing.divergence
    assert (missing.verdict, d.kind, d.clause.section) == ("divergent", "missing-output", "3.2.5.2")


@covers("MS-MQCN", "3.2.5.2")
def test_a_queue_manager_that_creates_what_the_directory_did_not_find_diverges():
    """A Create Queue after a Directory Read that found nothing (read null) names 3.2.5.2, the rule that read."""
    report = check_text(qm_trace(received(_v2(mqcn.Event.QUEUE_CREATED), read=None), queue_event("create")))
    d = report[0].divergence
    assert (d.kind, d.clause.section, d.index) == ("unexpected-output", "3.2.5.2", 2)


@covers("MS-MQCN", "3.2.5.2")
def test_a_version_2_change_updates_the_attributes_the_directory_gave():
    """A v2 QueueChanged updates the queue from the directory's answer; a queue update naming other attributes diverges."""
    create = received(_v2(mqcn.Event.QUEUE_CREATED), read=_queue_properties())
    change = received(_v2(mqcn.Event.QUEUE_CHANGED), t=2.0, read=_queue_properties(quota=5))
    updated = ["identifier", "pathname", "quota"]
    good = qm_trace(create, queue_event("create"), change, queue_event("update", t=2.0, attributes=updated))
    assert check_text(good)[0].verdict == "conformant"
    bad = qm_trace(create, queue_event("create"), change, queue_event("update", t=2.0, attributes=["label"]))
    d = check_text(bad)[0].divergence
    assert (d.kind, d.clause.section, d.diff[0]["field"]) == ("output-differs", "3.2.5.2", "attributes")


def test_a_version_2_message_without_the_directory_answer_stops_the_comparison_with_a_note():
    """Without "read" a v2 message cannot be replayed: later queue events are not compared, and a note says so."""
    report = check_text(qm_trace(received(_v2(mqcn.Event.QUEUE_CREATED)), queue_event("delete")))[0]
    assert report.verdict == "conformant" and "no \"read\"" in report.notes[0]


def test_a_read_field_with_a_bad_property_is_refused_naming_it():
    """A "read" property the reference cannot take is an input error naming read[i] (exit 2)."""
    import pytest

    from mqspec.oracle.trace_format import TraceError

    with pytest.raises(TraceError, match=r"read\[0\]"):
        check_text(qm_trace(received(_v2(mqcn.Event.QUEUE_CREATED), read=[{"propid": "PROPID_Q_QUOTA",
                                                                            "value": "lots"}])))


# --- the directory side (3.3): Send Change Notification replayed ------------------------------------

DS_ID = Guid.from_name("qm:DS1")
OWNER = Guid.from_name("qm:QM1")
CREATE = {"operation": "QueueCreation", "identifier": str(QUEUE), "owner": str(OWNER), "path": "QM1\\orders",
          "properties": [{"propid": "PROPID_Q_QUOTA", "value": 100}, {"propid": "PROPID_Q_LABEL", "value": "o"}]}
UPDATE = {"operation": "QueueUpdate", "identifier": str(QUEUE), "owner": str(OWNER),
          "properties": [{"propid": "PROPID_Q_QUOTA", "value": 7}], "modified": ["PROPID_Q_QUOTA"]}
DELETE = {"operation": "QueueDeletion", "identifier": str(QUEUE), "owner": str(OWNER), "path": "QM1\\orders"}
MACHINE = {"operation": "QueueManagerUpdate", "identifier": str(OWNER), "owner": str(OWNER),
           "properties": [{"propid": "PROPID_QM_QUOTA", "value": 9}], "modified": ["PROPID_QM_QUOTA"]}


def reference_sends(version: int, *inputs: dict) -> list[bytes]:
    """The message bodies the reference sends for each Send Change Notification input."""
    from mqspec.oracle.replay_mqcn_client import MqcnClientReplay

    replay = MqcnClientReplay("DS1", {"side": "directory", "version": version}, Mode.CLARIFIED, len(inputs),
                              node={"identifier": str(DS_ID)}, observes=frozenset({"notify"}))
    for i, fields in enumerate(inputs):
        replay.event(i + 1, {"event": "notify", "t": float(i + 1), "node": "DS1", **fields})
    return [o.effect.body for o in replay.pending]


def sent(body: bytes, t: float, version: int = 1, **extra: object) -> dict:
    """A notification as 3.3.5.3 sends it (the Message attributes an implementation logs)."""
    signed = {"sender_id_type": 2, "sender_id": str(DS_ID), "authentication": 1} if version == 1 else {}
    return {"event": "notification", "t": t, "node": "DS1", "direction": "send", "body": body.hex(),
            "queue": f"PRIVATE={OWNER}\\3", "timeout": 300, "delivery": 0, "class": 0, "hash_algorithm": 0x8003,
            **signed, **extra}


def ds_trace(version: int, *events: dict) -> str:
    node = {"name": "DS1", "identifier": str(DS_ID), "mqcn": {"side": "directory", "version": version},
            "observes": ["notify", "notification"]}
    return dump([{"event": "header", "t": 0, "nodes": [node]}, *events])


def notify(fields: dict, t: float) -> dict:
    return {"event": "notify", "t": t, "node": "DS1", **fields}


def conformant_ds_events(version: int) -> list[dict]:
    inputs = (CREATE, UPDATE, MACHINE, DELETE)
    bodies = reference_sends(version, *inputs)
    events = []
    for i, (fields, body) in enumerate(zip(inputs, bodies)):
        events += [notify(fields, i + 1.0), sent(body, i + 1.0, version)]
    return events


def ds_verdict(version: int, *events: dict):
    return check_text(ds_trace(version, *events))[0]


@covers("MS-MQCN", "3.3.4.1")
def test_a_directory_side_that_sends_what_the_reference_sends_conforms():
    """Each Send Change Notification followed by the reference's message (both versions) is conformant."""
    for version in (1, 2):
        report = ds_verdict(version, *conformant_ds_events(version))
        assert (report.verdict, report.checked) == ("conformant", 8), (version, report.divergence)


@covers("MS-MQCN", "3.3.3")
def test_a_notification_to_another_queue_than_the_owners_breaks_3_3_3():
    """A notification enqueued to any queue but NOTIFY_QUEUE_PRIVATE of the object's owner names 3.3.3."""
    body = reference_sends(1, CREATE)[0]
    d = ds_verdict(1, notify(CREATE, 1.0), sent(body, 1.0, queue=f"PRIVATE={DS_ID}\\3")).divergence
    assert (d.kind, d.clause.section, d.diff[0]["field"]) == ("output-differs", "3.3.3", "queue")


@covers("MS-MQCN", "3.3.5.3")
def test_an_unsigned_version_1_notification_breaks_3_3_5_3():
    """A version 0x01 message sent unsigned, or with a TimeToReachQueue other than 5 minutes, names 3.3.5.3."""
    body = reference_sends(1, DELETE)[0]
    d = ds_verdict(1, notify(DELETE, 1.0), sent(body, 1.0, authentication=0)).divergence
    assert (d.clause.section, d.diff[0]["field"]) == ("3.3.5.3", "authentication")
    d = ds_verdict(1, notify(DELETE, 1.0), sent(body, 1.0, timeout=60)).divergence
    assert (d.clause.section, d.diff[0]["field"]) == ("3.3.5.3", "timeout")


def _create_update(drop: str | None = None, add: tuple[str, object] | None = None) -> bytes:
    from mqspec.model.propvalue import Property

    message = mqcn.decode_body(reference_sends(1, CREATE)[0])
    update = message.updates[0]
    props = [p for p in update.properties if p.propid != (PROPIDS[drop].propid if drop else None)]
    if add is not None:
        props.append(Property(PROPIDS[add[0]].propid, add[1]))
    import attrs

    return mqcn.encode_body(attrs.evolve(message, updates=(attrs.evolve(update, properties=tuple(props)),)))


@covers("MS-MQCN", "3.3.5.2")
def test_a_create_without_a_required_propid_or_with_the_ads_path_breaks_3_3_5_2():
    """A create missing PROPID_Q_LABEL, with another quota, or including PROPID_Q_ADS_PATH names 3.3.5.2."""
    d = ds_verdict(1, notify(CREATE, 1.0), sent(_create_update(drop="PROPID_Q_LABEL"), 1.0)).divergence
    assert (d.clause.section, d.diff[0]["field"]) == ("3.3.5.2", "updates[0].properties.PROPID_Q_LABEL")
    d = ds_verdict(1, notify(CREATE, 1.0), sent(_create_update(add=("PROPID_Q_ADS_PATH", "LDAP://x")), 1.0)).divergence
    assert (d.clause.section, d.diff[0]["field"]) == ("3.3.5.2", "updates[0].properties.PROPID_Q_ADS_PATH")
    # an additional property is accepted (note <11>)
    extra = _create_update(add=("PROPID_Q_MULTICAST_ADDRESS", "234.1.1.1:8001"))
    report = ds_verdict(1, notify(CREATE, 1.0), sent(extra, 1.0))
    assert report.verdict == "conformant" and "PROPID_Q_MULTICAST_ADDRESS" in report.notes[0]
    assert "note <11>" in report.notes[0]


@covers("MS-MQCN", "3.3.5.1")
def test_a_version_2_body_naming_another_object_breaks_3_3_5_1():
    """A version 0x02 body whose ObjectGuid is not the changed object's names 3.3.5.1."""
    other = mqcn.encode_body(mqcn.ChangeNotificationMessage(version=mqcn.Version.QUEUE_MANAGER, body=mqcn.NotificationBody(
        event=mqcn.Event.QUEUE_CREATED, object_guid=OWNER, domain_controller="DS1")))
    d = ds_verdict(2, notify(CREATE, 1.0), sent(other, 1.0, version=2)).divergence
    assert (d.kind, d.clause.section, d.diff[0]["field"]) == ("output-differs", "3.3.5.1", "body.object_guid")


@covers("MS-MQCN", "3.3.4.1")
def test_a_missing_or_unasked_notification_breaks_3_3_4_1():
    """No message after Send Change Notification, or a message no such event asked for, names 3.3.4.1."""
    body = reference_sends(1, CREATE)[0]
    d = ds_verdict(1, notify(CREATE, 1.0)).divergence
    assert (d.kind, d.clause.section) == ("missing-output", "3.3.4.1")
    d = ds_verdict(1, notify(CREATE, 1.0), notify(UPDATE, 2.0), sent(body, 2.0)).divergence
    assert (d.kind, d.clause.section) == ("missing-output", "3.3.4.1")  # window 0: one notify, one message
    d = ds_verdict(1, sent(body, 1.0)).divergence
    assert (d.kind, d.clause.section) == ("unexpected-output", "3.3.4.1")


@covers("MS-MQCN", "3.3.3")
def test_without_a_declared_owner_the_destination_is_the_queues_qmid():
    """A notify without owner goes to the queue's PROPID_Q_QMID (E-245): to another queue manager it names 3.3.3."""
    qmid = {"propid": "PROPID_Q_QMID", "value": str(OWNER)}
    update = {**UPDATE, "properties": [*UPDATE["properties"], qmid]}
    del update["owner"]
    body = reference_sends(1, {**update, "owner": str(OWNER)})[0]
    assert ds_verdict(1, notify(update, 1.0), sent(body, 1.0)).verdict == "conformant"
    elsewhere = {**update, "properties": [*UPDATE["properties"], {**qmid, "value": str(DS_ID)}]}
    d = ds_verdict(1, notify(elsewhere, 1.0), sent(body, 1.0)).divergence
    assert (d.clause.section, d.diff[0]["field"]) == ("3.3.3", "queue")


def test_a_version_1_message_may_carry_the_updates_of_several_notifications():
    """Two Send Change Notification events to one owner answered by one message of two updates conform (3.3.5.2)."""
    first, second = (mqcn.decode_body(b) for b in reference_sends(1, CREATE, UPDATE))
    both = mqcn.encode_body(mqcn.ChangeNotificationMessage(
        version=mqcn.Version.DIRECTORY_SERVICE, updates=(*first.updates, *second.updates)))
    text = ds_trace(1, notify(CREATE, 1.0), notify(UPDATE, 1.0), sent(both, 1.0)).replace(
        '"header", "t": 0', '"header", "t": 0, "window": 1')
    assert check_text(text)[0].verdict == "conformant"


# --- traces recorded from the simulated enterprise (refimpl/notify.py wiring) ---------------------


def recorded_enterprise(version: int) -> str:
    """Scenario 4.3's enterprise with queue manager C14: a queue created, updated, C14's quota changed,
    the queue deleted, all through the directory; the MS-MQCN part recorded by MqcnRecorder."""
    from pathlib import Path

    from mqspec.model.propids import ObjectType
    from mqspec.model.propvalue import Property
    from mqspec.oracle.record_mqcn import MqcnRecorder
    from mqspec.oracle.trace_format import TraceWriter, header
    from mqspec.refimpl import scenario as sc
    from mqspec.refimpl.mqds import ClientRequest
    from mqspec.refimpl.notify import install_notifier
    from mqspec.refimpl.scenario_run import MessageCounter, _Runner
    from mqspec.refimpl.world import World, delete_request

    scenario = sc.load(Path(__file__).resolve().parents[2] / "scenarios" / "4.3-creating-a-remote-queue.yaml")
    world = World(mode=Mode.CLARIFIED)
    _Runner(world, MessageCounter(), scenario).build()
    lines: list[str] = []
    write = TraceWriter("mqcn", lines.append)
    write(header(source="tests: scenario 4.3 with C14"))
    MqcnRecorder(world, write)
    install_notifier(world, version=version)
    world.add_queue_manager("C14", "site1")
    P = {name: pdef.propid for name, pdef in PROPIDS.items()}
    site = world.site_guid("site1")
    queue, machine_type = ObjectType.MQDS_QUEUE, ObjectType.MQDS_MACHINE
    world.client_request("BSC21", ClientRequest("create", queue, site, path_name="C14\\testq", properties=(
        Property(P["PROPID_Q_LABEL"], "testq"), Property(P["PROPID_Q_QUOTA"], 1000))))
    world.advance(30)
    guid = world.nodes["PSC1"].directory.find(path_name="C14\\testq", object_type=queue).guid
    world.client_request("BSC21", ClientRequest("update", queue, site, guid=guid, properties=(
        Property(P["PROPID_Q_QUOTA"], 7),)))
    world.advance(30)
    machine = world.nodes["PSC1"].directory.find(path_name="C14", object_type=machine_type).guid
    world.client_request("PSC1", ClientRequest("update", machine_type, site, guid=machine, properties=(
        Property(P["PROPID_QM_QUOTA"], 5000),)))
    world.advance(30)
    delete_request(world, "BSC21", queue, site, guid=guid)
    world.advance(30)
    return "".join(lines)


@covers("MS-MQCN", "3.3.4.1")
def test_a_trace_recorded_from_the_reference_enterprise_conforms():
    """Both sides of MS-MQCN recorded from the simulated enterprise (versions 0x01 and 0x02) are conformant."""
    for version in (1, 2):
        text = recorded_enterprise(version)
        kinds = [json.loads(x)["event"] for x in text.splitlines()]
        assert kinds.count("notify") == 4 and kinds.count("queue") >= 4, kinds
        report = check_text(text)[0]
        assert (report.verdict, report.divergence, report.notes) == ("conformant", None, ()), version
        assert report.checked == len(kinds) - 1 - kinds.count("node")
        # a queue manager that does not raise Delete Queue: the recorded trace without it diverges
        lines = text.splitlines(keepends=True)
        last = max(i for i, x in enumerate(lines) if '"operation":"delete"' in x and '"queue"' in x)
        d = check_text("".join(lines[:last] + lines[last + 1:]))[0].divergence
        assert (d.kind, d.node) == ("missing-output", "C14")


def test_a_directory_side_without_a_declared_version_is_replayed_as_a_directory_service():
    """With no declared version the replay expects version 0x01 (2.2.4, a directory service): a 0x02 message diverges."""
    body = reference_sends(2, CREATE)[0]
    text = ds_trace(1, notify(CREATE, 1.0), sent(body, 1.0, version=2)).replace(', "version": 1}', "}")
    d = check_text(text)[0].divergence
    assert (d.kind, d.diff[0]["field"], d.clause.section) == ("output-differs", "version", "3.3.4.1")
