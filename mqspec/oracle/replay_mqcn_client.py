"""The MS-MQCN sending side (3.3, the "MQCN client": a directory service or a queue manager) replayed.

A node declared ``"mqcn": {"side": "directory", "version": 1 | 2}`` sends Change Notification
Messages. Every one it sends must decode under the strict codec and carry the declared version
(2.2.4; another version breaks 3.3.4.1). When the node also logs the higher-layer event that
drives it (it ``observes`` ``notify``: Send Change Notification, 3.3.4.1, with iOperation and
iDirectoryObject), each ``notify`` is run through the reference
(:func:`~mqspec.refimpl.mqcn_client.send_change_notification`) and the message it sends must
appear before the node's next ``notify`` (or its ``window``-th next):

* to the owner of the object: the ``queue`` of the sent ``notification`` is NOTIFY_QUEUE_PRIVATE
  of the owner (1.9, 3.3.3: "DestinationFormatName := NOTIFY_QUEUE_PRIVATE"; the owner is the
  destination, clarification E-245);
* with the fields 3.3.5.1 (version 0x02: Event, ObjectGuid, DomainController) or 3.3.5.2
  (version 0x01: Command, UseGuid with PathName or GuidIdentifier, GuidMasterId, and the
  PROPIDs each command MUST include with the object's values) fix. PROPIDs beyond those the
  text requires are accepted (note <11>: Windows "will send additional properties which are
  ignored by the Server side"), except PROPID_Q_ADS_PATH in a create ("MUST NOT be included");
  a delete is exactly PROPID_D_SCOPE = MQDS_ENTERPRISESCOPE, PROPID_D_OBJTYPE = MQDS_QUEUE;
* with the Message attributes 3.3.5.3 sets, where the event gives them: ``timeout``
  (TimeToReachQueue, 300 s), ``delivery`` 0 (Express), ``class`` 0 (Normal), ``hash_algorithm``
  (set: not 0), and for version 0x01 a signed message (``authentication`` not 0) with
  ``sender_id_type`` 2 (QueueManagerIdentifier) and ``sender_id`` the node's ``identifier``.

A version 0x01 message may carry the updates of several ``notify`` events to one owner (3.3.5.2:
"A directory service can send more than one notification message at a time"); each update
answers one. A message no ``notify`` asked for is an ``unexpected-output`` naming 3.3.4.1 (the
protocol "is initiated and subsequently driven by" that event, 3.3.4); one the reference sends
and the trace does not show is a ``missing-output`` naming 3.3.4.1; a field that differs names
the section that fixes it (3.3.3, 3.3.5.1, 3.3.5.2 or 3.3.5.3).
"""

from __future__ import annotations

from typing import Any

from mqspec.clauses import Clause
from mqspec.model import mqcn
from mqspec.model.errors import DecodeError, ModelError
from mqspec.model.guid import Guid
from mqspec.model.jsonform import _value_to_json as _show
from mqspec.model.jsonform import converter
from mqspec.model.mqcn import ChangeNotificationMessage, Command, NotificationUpdate, Version
from mqspec.model.propids import PROPID_BY_VALUE, propid_value
from mqspec.model.propvalue import Property
from mqspec.refimpl import mqcn_client
from mqspec.refimpl.effects import Context, Mode
from mqspec.refimpl.mqcn_client import (
    QUEUE_CREATE_EXCLUDED,
    TIME_TO_REACH_QUEUE,
    DirectoryObject,
    NotificationClient,
    Operation,
)
from mqspec.refimpl.mqcn_effects import EnqueueNotification
from mqspec.refimpl.mqcn_server import notify_queue_private

from . import attribution
from .inputs import InputError
from .replay import Divergence, decode_divergence
from .windowed import WindowedReplay

#: iOperation -> the object type of iDirectoryObject (3.3.4.1)
_OBJECT_TYPE = {Operation.QUEUE_CREATION: 1, Operation.QUEUE_UPDATE: 1, Operation.QUEUE_DELETION: 1,
                Operation.QUEUE_MANAGER_UPDATE: 2}
#: PROPIDs whose value the text fixes whatever the object holds: the queue's queue manager, the machine
_FIXED = frozenset((mqcn_client.P["PROPID_Q_QMID"], mqcn_client.P["PROPID_QM_MACHINE_ID"]))


def _name(propid: int) -> str:
    pdef = PROPID_BY_VALUE.get(propid)
    return pdef.name if pdef is not None else str(propid)


def properties(index: int, record: dict[str, Any], field: str) -> list[Property]:
    """The ``[{"propid", "value"}, ...]`` of an event's ``field`` as model properties (InputError if bad)."""
    out = []
    for i, p in enumerate(record.get(field) or ()):
        try:
            out.append(converter.structure(p, Property))
        except (ModelError, ValueError, TypeError, KeyError) as exc:
            raise InputError(index, f"{field}[{i}]", f"not a property value: {exc}") from None
    return out


class _Owed:
    """A notification the reference sent for one ``notify`` and the trace has yet to show."""

    __slots__ = ("effect", "given", "input_index", "ordinal", "owner")

    def __init__(self, effect: EnqueueNotification, given: frozenset[int], owner: Guid, input_index: int,
                 ordinal: int) -> None:
        self.effect, self.given, self.owner = effect, given, owner
        self.input_index, self.ordinal = input_index, ordinal


class MqcnClientReplay(WindowedReplay):
    """The sending side (3.3): versions and codec always; with ``notify`` inputs, the messages themselves."""

    def __init__(self, name: str, declaration: dict[str, Any], mode: Mode, window: int, *,
                 node: dict[str, Any] | None = None, observes: frozenset[str] = frozenset()) -> None:
        super().__init__(name, mode, window)
        self.version = declaration.get("version")
        node = node or {}
        self.identifier = Guid.parse(node["identifier"]) if "identifier" in node else None
        self.behavioural = "notify" in observes
        self.client = NotificationClient(
            machine_name=name, identifier=self.identifier or Guid.NULL,
            version=Version(self.version or 1), directory_service_name=declaration.get("directory_service"))
        self.pending: list[_Owed] = []
        self._send_clause = attribution.clause_of(mqcn_client.send_change_notification)

    def event(self, index: int, record: dict[str, Any]) -> None:
        if self.halted:
            return
        kind = record["event"]
        if kind == "notify":
            self._notify(index, record)
        elif kind == "notification" and record["direction"] == "send":
            self._send(index, record)

    # --- the higher-layer input (3.3.4.1) --------------------------------------------------------

    def _notify(self, index: int, record: dict[str, Any]) -> None:
        self._next_input()
        operation = Operation(record["operation"])
        given = properties(index, record, "properties")
        try:
            modified = tuple(propid_value(p) for p in record["modified"]) if "modified" in record else None
        except KeyError as exc:
            raise InputError(index, "modified", str(exc)) from None
        owner = _owner(index, record, operation, given)
        obj = DirectoryObject(object_type=_OBJECT_TYPE[operation], identifier=Guid.parse(record["identifier"]),
                              owner=owner, path_name=record.get("path"), properties=tuple(given),
                              modified=modified)
        if "domain_controller" in record:
            self.client.directory_service_name = record["domain_controller"]
        ctx = Context(self.name, self.mode, record["t"])
        try:
            effect = mqcn_client.send_change_notification(self.client, ctx, operation, obj)
        except ModelError as exc:
            raise InputError(index, "operation", f"Send Change Notification cannot take this event: {exc}") from None
        for e in ctx.effects:
            if hasattr(e, "erratum"):
                self.errata.add(e.erratum)
        self.pending.append(_Owed(effect, frozenset(p.propid for p in given), owner, index, self.inputs))

    def _missing(self, o: _Owed) -> Divergence:
        return Divergence(
            o.input_index + 1, self.name, "missing-output",
            f"{self.name} does not send the Change Notification Message the reference sends to "
            f"{o.effect.format_name} for event {o.input_index} (3.3.4.1: \"Send the prepared change "
            "notification message\")", expected=_plain(o.effect.message), clause=self._send_clause,
            cause=o.input_index)

    # --- the sent messages -----------------------------------------------------------------------

    def _send(self, index: int, record: dict[str, Any]) -> None:
        self.checked += 1
        try:
            message = mqcn.decode_body(bytes.fromhex(record["body"]))
        except DecodeError as exc:
            self._diverge(decode_divergence(self.name, index, record, exc))
            return
        # the declared version; replayed without one, the reference sends 0x01 (a directory service)
        want = self.version if self.version is not None else int(self.client.version) if self.behavioural else None
        if want is not None and int(message.version) != want:
            self._diverge(Divergence(
                index, self.name, "output-differs",
                f"{self.name} sends a version {int(message.version):#04x} Change Notification Message; "
                f"it is declared to send version {want:#04x} (2.2.4: 0x01 from a directory service, "
                "0x02 from a queue manager)",
                expected={"version": want}, actual={"version": int(message.version)},
                diff=({"field": "version", "expected": want, "actual": int(message.version)},),
                clause=self._send_clause))
            return
        if not self.behavioural:
            return
        parts = message.updates if message.version is Version.DIRECTORY_SERVICE else (message.body,)
        chosen: list[_Owed] = []
        for i, part in enumerate(parts):
            free = [o for o in self.pending if o not in chosen and (not chosen or o.owner == chosen[0].owner)]
            scored = sorted(((self._differences(o, part, record, i, first=not chosen), o) for o in free),
                            key=lambda d: (len(d[0]), d[1].ordinal))
            if not scored:
                self._diverge(Divergence(
                    index, self.name, "unexpected-output",
                    f"{self.name} sends a Change Notification Message{f' (update {i})' if i else ''} that no "
                    "Send Change Notification asked for (3.3.4: the protocol \"is initiated and subsequently "
                    "driven by\" that higher-layer event)", actual=_plain(message), clause=self._send_clause))
                return
            diff, best = scored[0]
            if diff:
                self._diverge(Divergence(
                    index, self.name, "output-differs",
                    f"{self.name} sends a notification that differs from the reference's for event "
                    f"{best.input_index} (first {diff[0][0]['field']})",
                    expected=_plain(best.effect.message), actual=_plain(message),
                    diff=tuple(d for d, _ in diff), clause=diff[0][1], cause=best.input_index))
                return
            chosen.append(best)
        for o in chosen:
            self.pending.remove(o)
        if message.version is Version.DIRECTORY_SERVICE:
            for i, (part, o) in enumerate(zip(parts, chosen)):
                asked = {p.propid for p in o.effect.message.updates[0].properties}
                extra = [_name(p.propid) for p in part.properties if p.propid not in asked]
                if extra:
                    self.notes.append(f"event {index}: update {i} carries PROPIDs the text does not ask for "
                                      f"({', '.join(map(str, extra))}); accepted: note <11> (\"additional properties "
                                      "which are ignored by the Server side\")")

    def _differences(self, owed: _Owed, part: Any, record: dict[str, Any], i: int, *, first: bool
                     ) -> list[tuple[dict[str, Any], Clause | None]]:
        """(diff entry, the clause whose rule fixes the field) for one update or body against ``owed``."""
        expected = owed.effect
        out: list[tuple[dict[str, Any], Clause | None]] = []

        def differs(field: str, want: Any, got: Any, clause: Clause | None) -> None:
            out.append(({"field": field, "expected": want, "actual": got}, clause))

        if first:
            self._attributes(expected, record, differs)
        reference = expected.message.updates[0] if expected.message.updates else expected.message.body
        if isinstance(part, NotificationUpdate):
            self._update(reference, part, owed.given, f"updates[{i}].", differs)
        else:
            v2 = attribution.clause_of(mqcn_client.prepare_change_notification_v2)
            for field in ("event", "object_guid"):
                if getattr(reference, field) != getattr(part, field):
                    differs(f"body.{field}", str(getattr(reference, field)), str(getattr(part, field)), v2)
            if reference.domain_controller.casefold() != part.domain_controller.casefold():
                differs("body.domain_controller", reference.domain_controller, part.domain_controller, v2)
        return out

    def _attributes(self, expected: EnqueueNotification, record: dict[str, Any], differs: Any) -> None:
        """The Message attributes of 3.3.5.3 and the destination queue of 3.3.3 the event gives."""
        sending = attribution.clause_of(mqcn_client.send_change_notification_message)
        queue = record.get("queue")
        if queue is not None and queue.casefold() != expected.format_name.casefold():
            differs("queue", expected.format_name, queue, attribution.clause_of(mqcn_client.client_initialization))
        for field, want in (("timeout", TIME_TO_REACH_QUEUE), ("delivery", 0), ("class", 0)):
            if field in record and record[field] != want:
                differs(field, want, record[field], sending)
        if record.get("hash_algorithm") == 0:
            differs("hash_algorithm", "set (not 0)", 0, sending)
        if expected.message.version is not Version.DIRECTORY_SERVICE:
            return
        # "If the message is version 0x01, the MSMQ message MUST be signed"
        if record.get("authentication") == 0:
            differs("authentication", "signed (not 0)", 0, sending)
        if "sender_id_type" in record and record["sender_id_type"] != expected.sender_identifier_type:
            differs("sender_id_type", expected.sender_identifier_type, record["sender_id_type"], sending)
        if self.identifier is not None and "sender_id" in record \
                and Guid.parse(record["sender_id"]) != expected.sender_identifier:
            differs("sender_id", str(expected.sender_identifier), record["sender_id"], sending)

    def _update(self, want: NotificationUpdate, got: NotificationUpdate, given: frozenset[int], at: str,
                differs: Any) -> None:
        """One Notification Update against the reference's (3.3.5.2)."""
        v1 = attribution.clause_of(mqcn_client.prepare_change_notification_v1)
        if want.command != got.command:
            differs(f"{at}command", int(want.command), int(got.command), v1)
            return
        for field in ("path_name", "guid_identifier") + (("guid_master_id",) if self.identifier else ()):
            a, b = getattr(want, field), getattr(got, field)
            if (a.casefold() if isinstance(a, str) else a) != (b.casefold() if isinstance(b, str) else b):
                differs(f"{at}{field}", _show(a), _show(b), v1)
        if want.command is Command.DELETE:
            # "PropertyId[0] = PROPID_D_SCOPE, PropertyId[1] = PROPID_D_OBJTYPE" with their values
            if [(p.propid, p.value) for p in want.properties] != [(p.propid, p.value) for p in got.properties]:
                differs(f"{at}properties", _props(want.properties), _props(got.properties), v1)
            return
        values: dict[int, object] = {}
        for p in got.properties:
            values.setdefault(p.propid, p.value)
        for p in want.properties:
            # a value the object gave, or one the text fixes, must be sent as it is; a value the
            # reference defaulted (E-246) need only be there
            if p.propid not in values:
                differs(f"{at}properties.{_name(p.propid)}", _show(p.value), "(absent)", v1)
            elif (p.propid in given or p.propid in _FIXED) and values[p.propid] != p.value:
                differs(f"{at}properties.{_name(p.propid)}", _show(p.value), _show(values[p.propid]), v1)
        if want.command is Command.CREATE and QUEUE_CREATE_EXCLUDED in values:
            # "This property MUST NOT be included"
            differs(f"{at}properties.{_name(QUEUE_CREATE_EXCLUDED)}", "(absent)",
                    _show(values[QUEUE_CREATE_EXCLUDED]), v1)


def _owner(index: int, record: dict[str, Any], operation: Operation, given: list[Property]) -> Guid:
    """The destination: the declared owner, else the queue's PROPID_Q_QMID or the machine itself (E-245)."""
    if "owner" in record:
        return Guid.parse(record["owner"])
    if operation is Operation.QUEUE_MANAGER_UPDATE:
        return Guid.parse(record["identifier"])
    qmid = next((p.value for p in given if p.propid == mqcn_client.P["PROPID_Q_QMID"]), None)
    if not isinstance(qmid, Guid):
        raise InputError(index, "owner", "a queue's notify names its owner, or gives PROPID_Q_QMID among its properties")
    return qmid


def _props(props: tuple[Property, ...]) -> list[dict[str, Any]]:
    return [{"propid": _name(p.propid), "value": _show(p.value)} for p in props]


def _plain(message: ChangeNotificationMessage) -> Any:
    from mqspec.model.jsonform import to_json

    return to_json(message)
