"""The refinement campaign of MS-MQCN's server side: the reference's queue manager against :mod:`mqspec.proofs.mqcn_model`.

Each run is a queue manager (its options: the properties used or the directory read, batching,
the versions it processes, workgroup mode, the directory servers it trusts), a directory it reads
and a seeded sequence of events: Initialization, Change Notification Messages of both versions
(creates, changes and deletes of queues and of the machine, by GUID and by path name, updates the
text refuses, bodies that do not parse, unsigned senders, signed ones that are no queue manager,
senders that are no directory server) and batch timer expiries as the clock moves. Before the seeded
runs, the boundary runs (:data:`BOUNDARY`) give each mode the inputs that tell a guard's one-line
mutant apart, whatever the seeds draw. At every event the reference's handler runs on the real queue
manager and the model's transition on its projection; the states and the effects (the register entries
of the clarifications taken among them) must agree. A handler run that raises, or that runs past
:data:`.limit.HANDLER_CPU_SECONDS` of CPU time, departs (:func:`.limit.run_handler`).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from typing import Any

import attrs

from mqspec.model import mqcn
from mqspec.model.guid import Guid
from mqspec.model.mqcn import ChangeNotificationMessage, Command, Event, NotificationBody, NotificationUpdate, Version
from mqspec.model.propids import PROPIDS, ObjectType
from mqspec.model.propvalue import Property
from mqspec.proofs import mqcn_model as model
from mqspec.proofs.explore import branches as br
from mqspec.refimpl import mqcn_server as server
from mqspec.refimpl.effects import Clarified, Context, Mode, StartTimer
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
from mqspec.refimpl.mqcn_state import (
    AuthenticationLevel,
    MappingDirectory,
    Queue,
    QueueManager,
    ReceivedMessage,
    ServerOptions,
)

from .campaign import Tally, Tracer
from .limit import run_handler
from .mqsd import _compare, _rows, _tally

P = {name: pdef.propid for name, pdef in PROPIDS.items()}
MODULES = ("mqcn_server.py", "mqcn_dmpr.py")
HANDLERS = (("server_initialization", "3.2.3"), ("receive_change_notification", "3.2.5"),
            ("batch_timer_expired", "1.6"))
PROFILES = {"default": {"runs": 160, "events": 12}, "soak": {"runs": 3000, "events": 20}}
#: the functions that handle events (the queue names of 1.9 and 3.2.1.2.1 are pure functions of a name)
FUNCTIONS = frozenset({
    "server_initialization", "receive_change_notification", "dispatch_change_notification",
    "process_change_notification_v1", "notification_object_type", "_uses_properties", "_refusal_v1",
    "_delete_object_type", "_values", "_ignore", "_apply_update_v1", "_read_v1", "_create_queue_v1",
    "_update_queue_v1", "_update_queue_manager_v1", "_other_machine", "_delete_queue_v1",
    "process_change_notification_v2",
    "defer_change_notification", "batch_timer_expired", "refresh_public_queues", "directory_read", "create_queue",
    "update_queue", "update_queue_manager", "_changes", "delete_queue",
})

#: the branches of those no event reaches, and why
UNREACHABLE = (
    br.Unreachable("mqcn_server.py", "receive_change_notification", "if qm.notification_queue is None:",
                   'raise ModelError(f"{qm.machine_name}: nothing is dequeued before 3.2.3 opened the queue")',
                   "a usage error: the Dequeue Message loop runs only once 3.2.3 opened the queue", ("clarified", "literal")),
    br.Unreachable("mqcn_server.py", "process_change_notification_v2", "if body is None:  # the codec never builds one: a version 0x02 message has exactly one body",
                   'raise ModelError("a version 0x02 message without a Notification Body")',
                   "the codec never decodes a version 0x02 message without its Notification Body", ("clarified", "literal")),
    br.Unreachable("mqcn_dmpr.py", "create_queue", "handler except (TypeError, ModelError) as exc: of try:",
                   'raise ModelError(f"not Queue attributes: {attributes!r}") from exc',
                   "the attributes come from the mapping tables of 3.1.1.3: every name is a Queue attribute",
                   ("clarified", "literal")),
)

QM_ID, DS_ID, OTHER_ID = Guid.from_name("mqcn-ref:qm"), Guid.from_name("mqcn-ref:ds"), Guid.from_name("mqcn-ref:x")
QUEUES = tuple(Guid.from_name(f"mqcn-ref:queue{i}") for i in range(4))
SD = bytes.fromhex("0100048000000000000000000000000000000000")


def state_of(qm: QueueManager) -> dict[str, Any]:
    """The queue manager's state as the model holds it."""
    fields = {f.name: getattr(qm, f.name) for f in attrs.fields(QueueManager) if f.name != "options"}
    fields["queue_collection"] = dict(qm.queue_collection)
    fields["batch"] = list(qm.batch)
    return fields


def emitted(effects: list[Any]) -> list[tuple[Any, ...]]:
    """The reference's effects as the model emits them (free-text reasons and details aside).

    The records of the clarifications taken are compared by register entry: which entry's clarified reading
    changed what happens, and where among the effects, is the reference's to get right as much as the rest.
    """
    out: list[tuple[Any, ...]] = []
    for e in effects:
        kind = type(e)
        if kind is OpenQueue:
            out.append(("open", e.format_name, e.access, e.share_mode, e.status, e.descriptor))
        elif kind is CreateQueue:
            out.append(("create", e.queue, e.skip_directory, e.status))
        elif kind is UpdateQueue:
            out.append(("update", e.identifier, e.changes, e.status))
        elif kind is DeleteQueue:
            out.append(("delete", e.identifier, e.skip_directory, e.status))
        elif kind is UpdateQueueManager:
            out.append(("update_qm", e.changes))
        elif kind is DirectoryRead:
            out.append(("read", e.server, e.object_type, e.identifier, e.path_name, e.attributes, e.status))
        elif kind is Disregarded:
            out.append(("disregard", e.section))
        elif kind is IgnoredProperties:
            out.append(("ignored", e.section, e.propids))
        elif kind is StartTimer:
            out.append(("start_timer", e.delay))
        elif kind is Clarified:
            out.append(("clarify", e.erratum))
    return out


# --- what a run draws ---------------------------------------------------------------------------------


def _queue_values(rng: random.Random, guid: Guid, owned: bool = True) -> dict[int, Any]:
    values = {P["PROPID_Q_INSTANCE"]: guid, P["PROPID_Q_PATHNAME"]: f"C14\\q{QUEUES.index(guid)}",
              P["PROPID_Q_LABEL"]: f"label{rng.randrange(9)}", P["PROPID_Q_QUOTA"]: rng.randrange(1000)}
    if owned:
        values[P["PROPID_Q_QMID"]] = QM_ID
    if rng.random() < 0.5:
        values[P["PROPID_Q_BASEPRIORITY"]] = rng.randrange(8)
    return values


def _directory(rng: random.Random) -> MappingDirectory:
    objects: dict[Guid, tuple[int, dict[int, Any]]] = {
        g: (int(ObjectType.MQDS_QUEUE), _queue_values(rng, g, rng.random() < 0.8))
        for g in QUEUES if rng.random() < 0.6}
    objects[QM_ID] = (int(ObjectType.MQDS_MACHINE), {P["PROPID_QM_MACHINE_ID"]: QM_ID, P["PROPID_QM_PATHNAME"]: "C14",
                                                   P["PROPID_QM_QUOTA"]: rng.randrange(5000)})
    return MappingDirectory({"PSC1": objects}, {DS_ID: "PSC1"})


def _update(rng: random.Random) -> NotificationUpdate:
    guid = rng.choice(QUEUES)
    roll = rng.random()
    by_path = rng.random() < 0.2
    name = {"path_name": f"C14\\q{QUEUES.index(guid)}"} if by_path else {"guid_identifier": guid}
    if roll < 0.3:
        values = {"PROPID_Q_TYPE": Guid.from_name("type"), "PROPID_Q_INSTANCE": guid, "PROPID_Q_QUOTA": rng.randrange(99),
                  "PROPID_Q_PATHNAME": f"C14\\q{QUEUES.index(guid)}", "PROPID_Q_LABEL": "new", "PROPID_Q_SECURITY": SD}
        if rng.random() < 0.3:
            values["PROPID_Q_ADS_PATH"] = "LDAP://q"
        if rng.random() < 0.1:
            del values["PROPID_Q_INSTANCE"]  # a queue without its Identifier (Create Queue cannot make it)
        props = [Property(P[n], v) for n, v in values.items()]
        return NotificationUpdate(command=Command.CREATE, guid_master_id=DS_ID, properties=props,
                                  **{"path_name": f"C14\\q{QUEUES.index(guid)}"})
    if roll < 0.55:
        props = [Property(P["PROPID_Q_QMID"], QM_ID), Property(P["PROPID_Q_QUOTA"], rng.randrange(99))]
        if rng.random() < 0.5:
            props.append(Property(P["PROPID_Q_LABEL"], "relabelled"))
        if rng.random() < 0.5:
            props.append(Property(P["PROPID_Q_BASEPRIORITY"], rng.randrange(8)))
        return NotificationUpdate(command=Command.CHANGE, guid_master_id=DS_ID, properties=props, **name)
    if roll < 0.65:
        machine = QM_ID if rng.random() < 0.8 else OTHER_ID
        props = [Property(P["PROPID_QM_QUOTA"], rng.randrange(99)), Property(P["PROPID_QM_OS"], 3)]
        if rng.random() < 0.3:  # every attribute the rule sets (none keeps its value: no E-232)
            props += [Property(P["PROPID_QM_JOURNAL_QUOTA"], rng.randrange(99)), Property(P["PROPID_QM_SECURITY"], SD)]
        # a machine named by its PathName (UseGuid 0x00) too, this one in either case or another (E-236)
        if by_path:
            name = {"path_name": rng.choice(("C14", "c14")) if machine == QM_ID else "C99"}
        else:
            name = {"guid_identifier": machine}
        return NotificationUpdate(command=Command.CHANGE, guid_master_id=DS_ID, properties=props, **name)
    if roll < 0.85:
        kind = 1 if rng.random() < 0.85 else 2
        props = [Property(P["PROPID_D_SCOPE"], 1), Property(P["PROPID_D_OBJTYPE"], kind)]
        if rng.random() < 0.1:
            props = props[:1]
        return NotificationUpdate(command=Command.DELETE, guid_master_id=DS_ID, properties=props, **name)
    odd = rng.choice(("no properties", "create machine", "a user"))
    if odd == "no properties":
        return NotificationUpdate(command=Command.CHANGE, guid_identifier=guid, guid_master_id=DS_ID, properties=[])
    if odd == "create machine":
        return NotificationUpdate(command=Command.CREATE, guid_identifier=QM_ID, guid_master_id=DS_ID,
                                  properties=[Property(P["PROPID_QM_QUOTA"], 5)])
    return NotificationUpdate(command=Command.CHANGE, guid_identifier=guid, guid_master_id=DS_ID,
                              properties=[Property(P["PROPID_U_SID"], b"\x01")])


def _message(rng: random.Random) -> ReceivedMessage:
    roll = rng.random()
    if roll < 0.6:
        body = mqcn.encode_body(ChangeNotificationMessage(
            version=Version.DIRECTORY_SERVICE, updates=tuple(_update(rng) for _ in range(rng.choice((1, 1, 2, 3))))))
    elif roll < 0.9:
        event = rng.choice(list(Event))
        guid = QM_ID if event is Event.MACHINE_CHANGED and rng.random() < 0.8 else rng.choice(QUEUES)
        body = mqcn.encode_body(ChangeNotificationMessage(
            version=Version.QUEUE_MANAGER, body=NotificationBody(event=event, object_guid=guid,
                                                                 domain_controller=rng.choice(("PSC1", "PSC1", "gone")))))
    else:
        body = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 30)))
    if rng.random() < 0.1 and body[:1]:
        body = body + b"\x00\x07"  # a tail after the message (E-240)
    signed = rng.random() < 0.85
    sender = DS_ID if rng.random() < 0.85 else OTHER_ID
    # a queue manager's message that is not signed too, and a signed one whose sender is a user (SID, 1) or none (0)
    sender_type = 2 if rng.random() < 0.85 else rng.choice((0, 1))
    return ReceivedMessage(body=body, sender_identifier_type=sender_type, sender_identifier=sender,
                           authentication_level=AuthenticationLevel.SIG20 if signed else AuthenticationLevel.NONE)


def _queue_manager(rng: random.Random) -> QueueManager:
    options = ServerOptions(use_properties=rng.random() < 0.5, batching=rng.random() < 0.25,
                            versions=rng.choice(((1, 2), (1, 2), (1,))), workgroup=rng.random() < 0.05,
                            directory_servers=(DS_ID,) if rng.random() < 0.5 else ())
    qm = QueueManager(machine_name="C14", identifier=QM_ID, options=options,
                      directory_server=rng.choice(("PSC1", "PSC1", None)),
                      notification_queue_exists=rng.random() < 0.95)
    for guid in QUEUES:
        if rng.random() < 0.4:
            qm.queue_collection[guid] = Queue(identifier=guid, pathname=f"C14\\q{QUEUES.index(guid)}", label="old",
                                              quota=7, public=rng.random() < 0.9)
    return qm


# --- the boundary runs: inputs the seeded runs reach rarely, each the one input that tells a guard's mutant apart --


def _v1(*updates: NotificationUpdate, sender_type: int = 2) -> tuple[str, ReceivedMessage]:
    body = mqcn.encode_body(ChangeNotificationMessage(version=Version.DIRECTORY_SERVICE, updates=updates))
    return ("receive", ReceivedMessage(body=body, sender_identifier_type=sender_type, sender_identifier=DS_ID,
                                       authentication_level=AuthenticationLevel.SIG20))


def _qm_change(*names: str, **name: Any) -> NotificationUpdate:
    values = {"PROPID_QM_QUOTA": 41, "PROPID_QM_JOURNAL_QUOTA": 42, "PROPID_QM_SECURITY": SD}
    return NotificationUpdate(command=Command.CHANGE, guid_master_id=DS_ID, **(name or {"guid_identifier": QM_ID}),
                              properties=[Property(P[n], values[n]) for n in names])


_QUEUE_CHANGE = NotificationUpdate(command=Command.CHANGE, guid_identifier=QUEUES[0], guid_master_id=DS_ID,
                                   properties=[Property(P["PROPID_Q_QUOTA"], 5)])
_NO_TYPE = NotificationUpdate(command=Command.CHANGE, guid_identifier=QUEUES[0], guid_master_id=DS_ID,
                              properties=[Property(P["PROPID_U_SID"], b"\x01")])
_EVERY_QM_ATTRIBUTE = ("PROPID_QM_QUOTA", "PROPID_QM_JOURNAL_QUOTA", "PROPID_QM_SECURITY")

#: name -> (the events after Initialization, why the run is here); on a queue manager that uses the properties,
#: trusts DS_ID and holds QUEUES[0] (path name C14\q0)
BOUNDARY: dict[str, tuple[tuple[tuple[str, ReceivedMessage], ...], str]] = {
    "signed-by-a-user": ((_v1(_QUEUE_CHANGE, sender_type=1),),
                         "a signed message whose SenderIdentifierType is a SID, not QueueManagerIdentifier (3.2.5.1)"),
    "machine-by-path-name": ((_v1(_qm_change("PROPID_QM_QUOTA", path_name="C14")),),
                             "an update of this machine named by PathName: no GuidIdentifier to compare (E-236)"),
    "another-machine-by-path-name": ((_v1(_qm_change("PROPID_QM_QUOTA", path_name="OTHERMACHINE")),),
                                     "an update of another machine named by PathName: disregarded too (E-236)"),
    "every-machine-attribute": ((_v1(_qm_change(*_EVERY_QM_ATTRIBUTE)), _v1(_qm_change("PROPID_QM_QUOTA"))),
                                "an update giving every attribute keeps none (no E-232), then one that keeps two"),
    "a-later-update-disregards": ((_v1(_QUEUE_CHANGE, _NO_TYPE), _v1(_NO_TYPE, _QUEUE_CHANGE)),
                                  "the second update disregards the message (E-231), then the first does"),
    "delete-by-path-name": ((_v1(NotificationUpdate(command=Command.DELETE, path_name="c14\\Q0", guid_master_id=DS_ID,
                                                    properties=[Property(P["PROPID_D_SCOPE"], 1),
                                                                Property(P["PROPID_D_OBJTYPE"], 1)])),),
                            "a delete naming its queue by PathName (E-235)"),
}


def boundary(name: str) -> tuple[QueueManager, MappingDirectory, list[tuple[Any, ...]]]:
    """The boundary run ``name``: its queue manager, directory and events (Initialization first)."""
    events, _ = BOUNDARY[name]
    qm = QueueManager(machine_name="C14", identifier=QM_ID, directory_server="PSC1",
                      options=ServerOptions(use_properties=True, directory_servers=(DS_ID,)))
    qm.queue_collection[QUEUES[0]] = Queue(identifier=QUEUES[0], pathname="C14\\q0", label="old", quota=7)
    return qm, _directory(random.Random(f"mqcn:boundary:{name}")), [("init",), *events]


def replay(name: str, mode: str) -> Iterator[tuple[str, tuple[Any, ...], list[str]]]:
    """Each event of the boundary run ``name`` checked in ``mode``: (the handler, the event, the differences).

    Lazy: an event's handler runs when it is asked for (the campaign's tracer counts each one apart)."""
    qm, directory, events = boundary(name)
    for step, event in enumerate(events):
        handler, problems = _check(qm, event, directory, mode == "clarified", float(step))
        yield handler, event, problems


def _check(qm: QueueManager, event: tuple[Any, ...], directory: MappingDirectory, clarified: bool,
           now: float) -> tuple[str, list[str]]:
    pre = state_of(qm)
    ctx = Context(qm.machine_name, Mode.CLARIFIED if clarified else Mode.LITERAL, now)
    kind = event[0]
    call: Callable[[], Any]
    if kind == "init":
        name, call = "server_initialization", lambda: server.server_initialization(qm, ctx)
    elif kind == "receive":
        name, call = "receive_change_notification", lambda: server.receive_change_notification(
            qm, ctx, event[1], directory)
    else:
        name, call = "batch_timer_expired", lambda: server.batch_timer_expired(qm, ctx, directory)
    if (departure := run_handler(call)) is not None:
        return name, [departure]
    want, out = model.step(pre, event, qm.options, directory, clarified, now)
    return name, _compare(want, state_of(qm), out, emitted(ctx.effects))


def run(mode: str, profile: str = "default", *, stop_at_first: bool = False) -> tuple[list[Any], set[tuple[str, int]]]:
    """The MS-MQCN rows of ``mode`` and the lines reached (fixed seeds)."""
    from mqspec.proofs.obligations import Obligation, Result

    clarified = mode == "clarified"
    conf = PROFILES[profile]
    tracer = Tracer(MODULES)
    tallies: dict[str, Tally] = {name: Tally() for name, _ in HANDLERS}
    started = time.perf_counter()
    steps = 0
    with tracer:
        for name in BOUNDARY:
            tracer.called = set()
            for handler, event, problems in replay(name, mode):
                steps += 1
                _tally(tallies[handler], tracer, problems, handler, event)
                tracer.called = set()
        for i in range(conf["runs"]):
            rng = random.Random(f"mqcn:{mode}:{i}")
            qm, directory = _queue_manager(rng), _directory(rng)
            now = 0.0
            pending: list[tuple[Any, ...]] = [("init",)]
            for _ in range(conf["events"]):
                if not pending:  # drawn as the run goes: a batch timer fires only while it runs
                    if qm.options.batching and qm.batch_timer_running and rng.random() < 0.3:
                        pending.append(("batch_timer",))
                    elif rng.random() < 0.1 and qm.options.batching:
                        pending.extend([("receive", _message(rng))] * 100)  # an overflow of the batch
                    else:
                        pending.append(("receive", _message(rng)))
                event = pending.pop(0)
                if event[0] != "init" and qm.notification_queue is None:
                    break  # nothing is dequeued from a queue 3.2.3 did not open
                now += rng.choice((1.0, 30.0, 600.0, 1000.0))
                tracer.called = set()
                name, problems = _check(qm, event, directory, clarified, now)
                steps += 1
                _tally(tallies[name], tracer, problems, name, event)
                while pending and pending[0][0] == "receive" and len(pending) > 1:  # the overflow, in one go
                    event = pending.pop(0)
                    name, problems = _check(qm, event, directory, clarified, now)
                    steps += 1
                    _tally(tallies[name], tracer, problems, name, event)
            if stop_at_first and any(t.departures for t in tallies.values()):
                break
    seconds = time.perf_counter() - started
    return _rows(mode, tallies, tracer, steps, seconds, "MS-MQCN", MODULES, HANDLERS, Obligation, Result), tracer.lines


def branch_row(lines: set[tuple[str, int]], steps: int) -> Any:
    """Whether the runs of both modes reached every branch of the MS-MQCN server's handlers."""
    from .campaign import branch_row as row

    return row("MS-MQCN", MODULES, lines, steps, FUNCTIONS, UNREACHABLE)
