"""`mqspec check` on MS-MQCN behaviour beyond version 0x01: the queue manager side of version 0x02
replayed with the directory's declared answer (3.2.5.2)."""

from __future__ import annotations

import json

from mqspec.model import mqcn
from mqspec.model.guid import Guid

from mqspec.clauses import covers
from mqspec.oracle.check import check_text

HEAD = {"trace": "t", "format": 2}
QUEUE = Guid.from_name("queue")


def dump(records: list[dict]) -> str:
    return "".join(json.dumps({**HEAD, **r}) + "\n" for r in records)


def _v2(event: mqcn.Event, guid: Guid = QUEUE) -> bytes:
    body = mqcn.NotificationBody(event=event, object_guid=guid, domain_controller="DS1")
    return mqcn.encode_body(mqcn.ChangeNotificationMessage(version=mqcn.Version.QUEUE_MANAGER, body=body)) + b"\0"


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
