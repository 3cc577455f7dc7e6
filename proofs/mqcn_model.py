"""The model of MS-MQCN's server side: a queue manager told that objects it owns changed (3.2), as a transition function.

A state is a dict of the QueueManager's attributes (3.1.1.2.1), its QueueCollection (identifier ->
:class:`~mqspec.refimpl.mqcn_state.Queue`, a frozen value), the Change Notification Queue's
descriptor (3.2.1.2.1) and the batching of notes <3>/<13>; :func:`step` takes one event
(``("init",)``, ``("receive", ReceivedMessage)``, ``("batch_timer",)``) and returns the next state
and what it emitted, as tuples:

* ``("open", format_name, access, share_mode, status, descriptor)`` (3.2.3);
* ``("create", Queue, skip_directory, status)``, ``("update", identifier, changes, status)``,
  ``("delete", identifier, skip_directory, status)``, ``("update_qm", changes)``: the [MS-MQDMPR]
  events (modelling E-233);
* ``("read", server, object_type, identifier, path_name, attributes, status)``: Directory Read (3.2.5.2);
* ``("disregard", section)``, ``("ignored", section, propids)``;
* ``("start_timer", delay)``: the batch timer;
* ``("clarify", erratum)``: the clarified reading of a register entry changed what happens here
  (the reference's ``Clarified`` record, its free-text detail aside): E-231 when an update after
  the first disregards the message (the literal reading had applied the ones before), E-232 when
  an absent attribute keeps its value, E-235 when a delete by PathName finds its queue, E-236,
  E-237 and E-239 when they disregard, E-249 when the refresh deletes or creates a queue.

The rules are taken in the text's order, the register's clarifications (E-230 .. E-249) when
``clarified``. The codec (:mod:`mqspec.model.mqcn`) and the attribute mapping tables of 3.1.1.3 and
3.1.1.2.1 (data, :mod:`mqspec.refimpl.mqcn_state`) are shared. The options the text leaves to the
implementation (use the properties or read the directory, batching, versions, workgroup mode, the
directory servers) are the configuration (``options``) the reference is given.
"""

from __future__ import annotations

from typing import Any

import attrs

from mqspec.model import mqcn
from mqspec.model.errors import DecodeError
from mqspec.model.guid import Guid
from mqspec.model.mqcn import Command, Event, Version
from mqspec.refimpl.mqcn_state import (
    QUEUE_ATTRIBUTE_PROPID,
    QUEUE_MANAGER_ATTRIBUTE_PROPID,
    SENDER_ID_TYPE_QM,
    AuthenticationLevel,
    Queue,
)
from mqspec.refimpl.status import (
    MQ_ERROR_QUEUE_EXISTS,
    MQ_ERROR_QUEUE_NOT_FOUND,
    MQ_OK,
    MQDS_OBJECT_NOT_FOUND,
)

QUEUE, MACHINE = 1, 2
SHORT, WINDOW, OVERFLOW = 60.0, 15 * 60.0, 100
CREATE_V1 = ("type", "identifier", "base_priority", "journaling", "quota", "journal_quota", "create_time",
             "modify_time", "security", "pathname", "label", "authentication", "privacy_level", "transactional",
             "scope")
QUEUE_UPDATE_V1 = ("base_priority", "journaling", "quota", "journal_quota", "security", "authentication",
                   "privacy_level")
QM_UPDATE = ("queue_manager_quota", "journal_quota", "security")
QUEUE_V2 = ("type", "identifier", "base_priority", "journaling", "quota", "journal_quota", "create_time",
            "modify_time", "security", "pathname", "label", "authentication", "privacy_level", "transactional",
            "multicast_address", "directory_path")
QM_ATTRIBUTES = ("foreign_system", "queue_manager_quota", "journal_quota", "security",
                 "connected_network_identifier_list", "queue_manager_version", "operating_system_type")

State = dict[str, Any]


class Run:
    """One event: the state, the configuration, the directory, the clock and what was emitted."""

    def __init__(self, s: State, options: Any, directory: Any, clarified: bool, now: float) -> None:
        self.s, self.options, self.directory, self.clarified, self.now = s, options, directory, clarified, now
        self.out: list[tuple[Any, ...]] = []


def step(s: State, event: tuple[Any, ...], options: Any, directory: Any, clarified: bool,
         now: float) -> tuple[State, list[tuple[Any, ...]]]:
    s = dict(s, queue_collection=dict(s["queue_collection"]), batch=list(s["batch"]))
    run = Run(s, options, directory, clarified, now)
    kind = event[0]
    if kind == "init":
        _initialize(run)
    elif kind == "receive":
        if s["notification_queue"] is None:
            raise ValueError("nothing is dequeued before 3.2.3 opened the queue")
        if options.batching:
            _defer(run, event[1])
        else:
            _dispatch(run, event[1])
    elif kind == "batch_timer":
        _batch_expired(run)
    else:
        raise ValueError(kind)
    return s, run.out


# --- 3.2.3 and 3.2.5 ------------------------------------------------------------------------------


def _initialize(run: Run) -> None:
    s = run.s
    if run.options.workgroup:  # note <8>: nothing is created or initialized
        s["notification_queue"] = None
        return
    status = MQ_OK if s["notification_queue_exists"] else MQ_ERROR_QUEUE_NOT_FOUND
    s["notification_queue"] = 1 if status == MQ_OK else None
    run.out.append(("open", f"PRIVATE={s['identifier']}\\3", "ReceiveAccess", "DenyNone", status,
                    s["notification_queue"]))


def _dispatch(run: Run, message: Any) -> None:
    try:  # clarification E-240: a tail after the message is tolerated
        notification = mqcn.decode_body(message.body, lenient=run.clarified)
    except DecodeError:
        run.out.append(("disregard", "3.2.5"))
        return
    if int(notification.version) not in run.options.versions:  # note <4>
        run.out.append(("disregard", "3.2.5"))
        return
    if notification.version is Version.DIRECTORY_SERVICE:
        _v1(run, message, notification)
    else:
        _v2(run, notification)


# --- 3.2.5.1 ------------------------------------------------------------------------------------------


def _type_of(propid: int) -> int:
    return (propid - 1000) // 100 if propid > 1000 else propid // 100  # E-230


def _refused(run: Run, message: Any, update: Any) -> bool:
    """Whether this update makes the server disregard the whole message."""
    uses = run.options.use_properties or (run.clarified and update.command is Command.DELETE)  # E-238
    if uses and (message.sender_identifier_type != SENDER_ID_TYPE_QM
                 or message.authentication_level == AuthenticationLevel.NONE):
        return True
    servers = run.options.directory_servers
    if run.clarified and servers and message.sender_identifier not in servers:  # E-239
        run.out.append(("clarify", "E-239"))
        return True
    if update.command in (Command.CREATE, Command.CHANGE):
        return not update.properties or _type_of(update.properties[0].propid) not in (QUEUE, MACHINE)  # E-234
    if len(update.properties) < 2 or type(update.properties[1].value) is not int:  # E-234
        return True
    return update.properties[1].value != QUEUE


def _v1(run: Run, message: Any, notification: Any) -> None:
    updates = notification.updates
    if run.clarified:  # E-231: the whole message is judged before any update is applied
        for i, u in enumerate(updates):
            if _refused(run, message, u):
                run.out.append(("disregard", "3.2.5.1"))
                if i > 0:  # the literal reading had applied updates 0 .. i - 1
                    run.out.append(("clarify", "E-231"))
                return
        for u in updates:
            _apply_v1(run, u)
        return
    for u in updates:
        if _refused(run, message, u):
            run.out.append(("disregard", "3.2.5.1"))
            return
        _apply_v1(run, u)


def _first_values(update: Any) -> dict[int, Any]:
    values: dict[int, Any] = {}
    for p in update.properties:
        values.setdefault(p.propid, p.value)
    return values


def _ignore(run: Run, update: Any, used: tuple[int, ...]) -> None:
    ignored = tuple(dict.fromkeys(p.propid for p in update.properties if p.propid not in used))
    if ignored:
        run.out.append(("ignored", "3.2.5.1", ignored))


def _from_properties(update: Any, table: dict[str, int], names: tuple[str, ...]) -> tuple[dict[str, Any], set[str]]:
    values = _first_values(update)
    return ({n: values.get(table[n]) for n in names}, {n for n in names if table[n] in values})


def _apply_v1(run: Run, update: Any) -> None:
    s = run.s
    if update.command is Command.DELETE:
        queue = _find(s, update.guid_identifier, None)
        if queue is None and update.guid_identifier is None and run.clarified:  # E-235: by PathName
            queue = _find(s, None, update.path_name)
            if queue is not None:
                run.out.append(("clarify", "E-235"))
        _delete(run, queue.identifier if queue is not None else update.guid_identifier)
        return
    kind = _type_of(update.properties[0].propid)
    if update.command is Command.CREATE and kind == QUEUE:
        if run.options.use_properties:
            attributes, _ = _from_properties(update, QUEUE_ATTRIBUTE_PROPID, CREATE_V1)
            _ignore(run, update, tuple(QUEUE_ATTRIBUTE_PROPID[n] for n in CREATE_V1))
        else:
            attributes = _read(run, update.guid_master_id, QUEUE, update.guid_identifier, CREATE_V1, update.path_name)
            if attributes is None:
                return  # E-242
        _create(run, attributes)
    elif update.command is Command.CHANGE and kind == QUEUE:
        queue = _find(s, update.guid_identifier, update.path_name)
        if run.options.use_properties:
            new, present = _from_properties(update, QUEUE_ATTRIBUTE_PROPID, QUEUE_UPDATE_V1)
            _ignore(run, update, tuple(QUEUE_ATTRIBUTE_PROPID[n] for n in QUEUE_UPDATE_V1))
        else:
            new = _read(run, update.guid_master_id, QUEUE, update.guid_identifier, QUEUE_UPDATE_V1, update.path_name)
            if new is None:
                return
            present = {n for n, v in new.items() if v is not None}
        _update(run, queue, new, present, update.guid_identifier)
    elif update.command is Command.CHANGE and kind == MACHINE:
        if update.guid_identifier is not None:
            other = update.guid_identifier != s["identifier"]
        else:  # named by PathName: a machine's name, without regard to case
            other = update.path_name is not None and update.path_name.casefold() != s["machine_name"].casefold()
        if other and run.clarified:
            run.out.append(("clarify", "E-236"))  # another machine
            run.out.append(("disregard", "3.2.5.1"))
            return
        if run.options.use_properties:
            new, present = _from_properties(update, QUEUE_MANAGER_ATTRIBUTE_PROPID, QM_UPDATE)
            _ignore(run, update, tuple(QUEUE_MANAGER_ATTRIBUTE_PROPID[n] for n in QM_UPDATE))
        else:
            new = _read(run, update.guid_master_id, MACHINE, update.guid_identifier, QM_UPDATE, update.path_name)
            if new is None:
                return
            present = {n for n, v in new.items() if v is not None}
        _update_qm(run, new, present)
    else:  # E-234: a created machine has no rule
        run.out.append(("disregard", "3.2.5.1"))


# --- 3.2.5.2 ----------------------------------------------------------------------------------------


def _v2(run: Run, notification: Any) -> None:
    s = run.s
    body = notification.body
    server, guid = body.domain_controller, body.object_guid
    if body.event is Event.QUEUE_CREATED:
        values = _read(run, server, QUEUE, guid, QUEUE_V2)
        if values is not None:
            _create(run, values)
    elif body.event is Event.QUEUE_CHANGED:
        values = _read(run, server, QUEUE, guid, QUEUE_V2)
        if values is not None:
            _update(run, _find(s, guid, None), values, {n for n, v in values.items() if v is not None}, guid)
    elif body.event is Event.QUEUE_DELETED:
        if run.clarified and _read(run, server, QUEUE, guid, ("identifier",)) is not None:
            run.out.append(("clarify", "E-237"))  # the directory still holds it
            run.out.append(("disregard", "3.2.5.2"))
            return
        _delete(run, guid)
    else:
        if guid != s["identifier"] and run.clarified:  # E-236
            run.out.append(("clarify", "E-236"))
            run.out.append(("disregard", "3.2.5.2"))
            return
        values = _read(run, server, MACHINE, guid, QM_UPDATE)
        if values is not None:
            _update_qm(run, values, {n for n, v in values.items() if v is not None})


# --- notes <3>/<13>: batching ----------------------------------------------------------------------


def _defer(run: Run, message: Any) -> None:
    s = run.s
    if not s["batch_timer_running"]:
        since = None if s["last_processed"] is None else run.now - s["last_processed"]
        delay = SHORT if since is None or since > WINDOW - SHORT else WINDOW - since
        run.out.append(("start_timer", delay))
        s["batch_timer_running"] = True
    s["batch_count"] += 1
    if s["batch_count"] < OVERFLOW:
        s["batch"].append(message)
    else:
        s["batch"] = []


def _batch_expired(run: Run) -> None:
    s = run.s
    messages, count = s["batch"], s["batch_count"]
    s["batch"], s["batch_count"], s["batch_timer_running"] = [], 0, False
    if count >= OVERFLOW:
        _refresh(run)
    else:
        for message in messages:
            _dispatch(run, message)
    s["last_processed"] = run.now


def _refresh(run: Run) -> None:
    s = run.s
    server = s["directory_server"]
    if server is None:
        run.out.append(("disregard", "1.6"))
        return
    for queue in [q for q in s["queue_collection"].values() if q.public]:
        values = _read(run, server, QUEUE, queue.identifier, QUEUE_V2)
        if values is not None:
            _update(run, queue, values, {n for n, v in values.items() if v is not None}, queue.identifier)
        elif run.clarified:  # E-249: gone from the directory
            run.out.append(("clarify", "E-249"))
            _delete(run, queue.identifier)
    if run.clarified:  # E-249: one of this manager's queues the collection lacks
        for guid in run.directory.queues_owned_by(server, s["identifier"], s["machine_name"]):
            if guid in s["queue_collection"]:
                continue
            values = _read(run, server, QUEUE, guid, QUEUE_V2)
            if values is not None:
                run.out.append(("clarify", "E-249"))
                _create(run, values)


# --- the [MS-MQDMPR] events (E-233) and Directory Read ------------------------------------------------


def _find(s: State, identifier: Guid | None, pathname: str | None) -> Queue | None:
    if identifier is not None:
        return s["queue_collection"].get(identifier)
    if pathname is not None:
        return next((q for q in s["queue_collection"].values()
                     if q.pathname is not None and q.pathname.casefold() == pathname.casefold()), None)
    return None


def _read(run: Run, server: Any, object_type: int, identifier: Guid | None, attributes: tuple[str, ...],
          path_name: str | None = None) -> dict[str, Any] | None:
    from mqspec.model.propids import ObjectType

    values = run.directory.read(server, ObjectType(object_type), identifier, path_name)
    run.out.append(("read", str(server), object_type, identifier, path_name, attributes,
                    MQ_OK if values is not None else MQDS_OBJECT_NOT_FOUND))
    if values is None:
        return None
    table = QUEUE_ATTRIBUTE_PROPID if object_type == QUEUE else QUEUE_MANAGER_ATTRIBUTE_PROPID
    return {n: values.get(table[n]) for n in attributes}


def _create(run: Run, attributes: dict[str, Any]) -> None:
    if not isinstance(attributes.get("identifier"), Guid):
        run.out.append(("disregard", "3.2.5"))
        return
    queue = Queue(**attributes)
    collection = run.s["queue_collection"]
    status = MQ_ERROR_QUEUE_EXISTS if queue.identifier in collection else MQ_OK
    if status == MQ_OK:
        collection[queue.identifier] = queue
    run.out.append(("create", queue, True, status))


def _changed(run: Run, new: dict[str, Any], present: set[str]) -> dict[str, Any]:
    """E-232: an attribute the notification or the directory did not give keeps its value."""
    if not run.clarified:
        return dict(new)
    if any(n not in present for n in new):  # the literal reading had set it to nothing
        run.out.append(("clarify", "E-232"))
    return {n: v for n, v in new.items() if n in present}


def _update(run: Run, queue: Queue | None, new: dict[str, Any], present: set[str], identifier: Guid | None) -> None:
    if queue is None:
        run.out.append(("update", identifier, (), MQ_ERROR_QUEUE_NOT_FOUND))
        return
    changes = {n: v for n, v in _changed(run, new, present).items() if n != "identifier" or v == queue.identifier}
    run.s["queue_collection"][queue.identifier] = attrs.evolve(queue, **changes)
    run.out.append(("update", queue.identifier, tuple(changes.items()), MQ_OK))


def _update_qm(run: Run, new: dict[str, Any], present: set[str]) -> None:
    changes = _changed(run, new, present)
    run.s.update(changes)
    run.out.append(("update_qm", tuple(changes.items())))


def _delete(run: Run, identifier: Guid | None) -> None:
    removed = run.s["queue_collection"].pop(identifier, None) if identifier is not None else None
    run.out.append(("delete", identifier, True, MQ_OK if removed is not None else MQ_ERROR_QUEUE_NOT_FOUND))

