"""One MS-MQCN node's replay: notifications run through the MS-MQCN reference, its outputs matched.

A node whose declaration carries ``"mqcn"`` runs one side of MS-MQCN:

* ``"side": "directory"`` (3.3, the sender): see :mod:`mqspec.oracle.replay_mqcn_client`;
* ``"side": "queue_manager"`` (3.2, the receiver): every notification it receives is an input of
  3.2.5 (:func:`~mqspec.refimpl.mqcn_server.dispatch_change_notification`) with the rMessage
  attributes the event gives (``sender_id_type``, ``sender_id``, ``authentication``; absent:
  not a queue manager, not signed), on a queue manager that processes the declared ``version``
  (absent: both; note <4>). The [MS-MQDMPR] events the reference raises (Create Queue, the
  updates, Delete Queue) must appear as ``queue`` events (operation and queue identifier; an
  update's changed attributes when the event lists them) before the node's next received
  notification (or its ``window``-th next); a ``queue`` event the reference does not raise is a
  divergence naming the rule that disregarded the message or produced the other event.

Version 0x02 notifications read the directory (3.2.5.2 Directory Read): the received
``notification`` carries the answer the queue manager got in ``read`` (the object's properties
as ``[{"propid", "value"}, ...]``, or null when the directory did not find it), and the
reference reads that answer. An event without ``read`` cannot be replayed: the node's queue
events from there on are not compared, and the report says so.
"""

from __future__ import annotations

from typing import Any

from mqspec.clauses import Clause
from mqspec.model import mqcn
from mqspec.model.errors import DecodeError, ModelError
from mqspec.model.guid import Guid
from mqspec.model.jsonform import converter
from mqspec.model.propvalue import Property
from mqspec.refimpl import mqcn_client, mqcn_server
from mqspec.refimpl.effects import Context, Mode
from mqspec.refimpl.mqcn_effects import CreateQueue, DeleteQueue, Disregarded, UpdateQueue, UpdateQueueManager
from mqspec.refimpl.mqcn_state import DirectoryReader, MappingDirectory, QueueManager, ReceivedMessage, ServerOptions

from . import attribution
from .inputs import InputError
from .replay import Divergence, clause_at
from .windowed import WindowedReplay

_OPERATION = {CreateQueue: "create", UpdateQueue: "update", DeleteQueue: "delete",
              UpdateQueueManager: "update_queue_manager"}


class _Expected:
    __slots__ = ("clause", "identifier", "input_index", "operation", "ordinal", "attributes")

    def __init__(self, operation: str, identifier: str | None, attributes: tuple[str, ...] | None,
                 input_index: int, ordinal: int, clause: Clause | None) -> None:
        self.operation, self.identifier, self.attributes = operation, identifier, attributes
        self.input_index, self.ordinal, self.clause = input_index, ordinal, clause


class MqcnQueueManagerReplay(WindowedReplay):
    """The receiving side (3.2): received notifications replayed, ``queue`` events matched."""

    def __init__(self, name: str, declaration: dict[str, Any], mode: Mode, window: int,
                 node: dict[str, Any] | None = None) -> None:
        super().__init__(name, mode, window)
        version = declaration.get("version")
        options = ServerOptions(versions=(version,) if version is not None else (1, 2))
        # QueueManager.Identifier: the node's, else one of mqspec's (3.2.5.1 / 3.2.5.2 compare a machine's to it)
        identifier = Guid.parse(node["identifier"]) if node and "identifier" in node else Guid.from_name(f"mqcn:{name}")
        self.qm = QueueManager(name, identifier, options=options)
        mqcn_server.server_initialization(self.qm, Context(name, mode, 0.0))
        self.directory = MappingDirectory({})
        self.pending: list[_Expected] = []
        self.last_input: int | None = None
        self.last_disregard: Disregarded | None = None
        self.last_handler: Clause | None = None  # 3.2.5.1 or 3.2.5.2, by the last message's version
        self.stopped_at: int | None = None

    def finish(self, end: int, clock: float | None = None) -> None:
        if self.stopped_at is None:
            super().finish(end, clock)

    def event(self, index: int, record: dict[str, Any]) -> None:
        if self.halted or self.stopped_at is not None:
            return
        if record["event"] == "notification" and record["direction"] == "receive":
            self._receive(index, record)
        elif record["event"] == "queue":
            self._queue(index, record)

    def _receive(self, index: int, record: dict[str, Any]) -> None:
        self._next_input()
        self.last_input = index
        body = bytes.fromhex(record["body"])
        message = ReceivedMessage(body=body, sender_identifier_type=record.get("sender_id_type", 0),
                                  sender_identifier=Guid.parse(record["sender_id"]) if "sender_id" in record
                                  else Guid.NULL, authentication_level=record.get("authentication", 0),
                                  source_machine=record.get("from") or "")
        try:
            reads_directory = mqcn.decode_body(body, lenient=True).version is mqcn.Version.QUEUE_MANAGER
        except DecodeError:
            reads_directory = False
        self.last_handler = attribution.clause_of(
            mqcn_server.process_change_notification_v2 if reads_directory else mqcn_server.process_change_notification_v1)
        directory: DirectoryReader = self.directory
        if reads_directory and int(mqcn.Version.QUEUE_MANAGER) in self.qm.options.versions:
            if "read" not in record:
                self.stopped_at = index
                self.notes.append(f"event {index}: {self.name} processes a version 0x02 notification, which reads "
                                  "the directory (3.2.5.2); the event carries no \"read\" (the directory's answer), "
                                  "so the node's queue events from here on are not compared")
                return
            directory = DeclaredAnswer(directory_answer(index, record))
        ctx = Context(self.name, self.mode, record["t"])
        ctx.effects = attribution.ClauseEffects(None)
        mqcn_server.dispatch_change_notification(self.qm, ctx, message, directory)
        self.last_disregard = None
        for effect, stack in zip(ctx.effects, ctx.effects.stacks):
            kind = type(effect)
            if kind in _OPERATION:
                identifier = getattr(effect, "identifier", None)
                if kind is CreateQueue:
                    identifier = effect.queue.identifier
                changes = getattr(effect, "changes", None)
                attributes = tuple(sorted(k for k, _ in changes)) if changes is not None else None
                self.pending.append(_Expected(
                    _OPERATION[kind], str(identifier) if identifier is not None else None, attributes, index,
                    self.inputs, attribution.responsible(stack) or self.last_handler))
            elif kind is Disregarded:
                self.last_disregard = effect
            elif hasattr(effect, "erratum"):
                self.errata.add(effect.erratum)

    def _queue(self, index: int, record: dict[str, Any]) -> None:
        self.checked += 1
        operation = record["operation"]
        identifier = record.get("identifier")
        identifier = identifier.lower() if identifier else None
        attributes = tuple(sorted(record["attributes"])) if "attributes" in record else None
        for e in self.pending:
            if e.operation == operation and (identifier is None or e.identifier == identifier) and (
                    attributes is None or e.attributes is None or attributes == e.attributes):
                self.pending.remove(e)
                return
        actual = {k: record[k] for k in ("operation", "identifier", "attributes") if k in record}
        if self.pending:
            best = min(self.pending, key=lambda e: (e.operation != operation, e.ordinal))
            expected = {"operation": best.operation, "identifier": best.identifier,
                        **({"attributes": list(best.attributes)} if best.attributes is not None else {})}
            diff = tuple({"field": k, "expected": expected.get(k), "actual": v}
                         for k, v in actual.items() if expected.get(k) != v)
            self._diverge(Divergence(
                index, self.name, "output-differs",
                f"{self.name} raises {operation} {identifier or ''} that differs from the reference's "
                f"{best.operation} {best.identifier or ''}", expected=expected, actual=actual, diff=diff,
                clause=best.clause, cause=best.input_index))
            return
        cause = self.last_input
        if self.last_disregard is not None:
            why = f"the reference disregards event {cause}: {self.last_disregard.reason}"
            clause = clause_at(f"MS-MQCN {self.last_disregard.section}")
        else:
            why = f"the reference raises no such event in answer to event {cause}"
            clause = self.last_handler or clause_at("MS-MQCN 3.2.5")
        self._diverge(Divergence(index, self.name, "unexpected-output", f"{self.name} raises {operation}; {why}",
                                 actual=actual, clause=clause, cause=cause))

    def _missing(self, e: _Expected) -> Divergence:
        return Divergence(
            e.input_index + 1, self.name, "missing-output",
            f"{self.name} does not raise {e.operation} {e.identifier or ''}, which the reference raises in "
            f"answer to event {e.input_index}", expected={"operation": e.operation, "identifier": e.identifier},
            clause=e.clause, cause=e.input_index)


class DeclaredAnswer:
    """A :class:`~mqspec.refimpl.mqcn_state.DirectoryReader` that gives the answer a trace declares.

    A version 0x02 notification makes the queue manager read one object from the directory
    service the DomainController names (3.2.5.2 "MUST request information from the directory
    service"); the ``read`` field of the received ``notification`` is what that Directory Read
    returned: the object's properties, or null when the directory did not find it (E-242).
    """

    def __init__(self, values: dict[int, object] | None) -> None:
        self.values = values

    def read(self, server: Any, object_type: Any, identifier: Any, path_name: str | None = None
             ) -> dict[int, object] | None:
        return self.values

    def queues_owned_by(self, server: Any, owner: Guid, machine_name: str) -> list[Guid]:
        return []


def directory_answer(index: int, record: dict[str, Any]) -> dict[int, object] | None:
    """PROPID -> value of a ``notification``'s ``read`` (None: the object was not found); InputError if bad."""
    answer = record["read"]
    if answer is None:
        return None
    values: dict[int, object] = {}
    for i, p in enumerate(answer):
        try:
            prop = converter.structure(p, Property)
        except (ModelError, ValueError, TypeError, KeyError) as exc:
            raise InputError(index, f"read[{i}]", f"not a property value: {exc}") from None
        values.setdefault(prop.propid, prop.value)
    return values


def replay_for(name: str, declaration: dict[str, Any], mode: Mode, window: int, *,
               node: dict[str, Any] | None = None, observes: frozenset[str] = frozenset()) -> Any:
    """The replay of a node's ``mqcn`` declaration (``node``: the whole declaration; ``observes``: its logged kinds)."""
    if declaration["side"] == "directory":
        from .replay_mqcn_client import MqcnClientReplay

        return MqcnClientReplay(name, declaration, mode, window, node=node, observes=observes)
    return MqcnQueueManagerReplay(name, declaration, mode, window, node)

