"""Handler vectors: one MC-MQDSRP event handler run on a queue manager, before and after.

Every handler of the clause registry (``mqspec.clauses.load_all()``, the MC-MQDSRP clauses whose
code is in ``refimpl/mqdsrp_*.py``) is in :data:`HANDLERS` with its arguments and their types.
A :class:`Situation` builds one branch of one handler: a queue manager in a given state (built
the way the handler tests build theirs: by hand, then given the 3.1.3 initialization) and the
arguments of the event. The situations are in ``situations_*.py``, by refimpl module.

Every situation is run in both modes (``clarified`` and ``literal``): where an errata entry
departs from the text the two outcomes differ and the situation becomes two vectors, one per
mode; where they agree it becomes one vector of mode ``both`` (run it in whichever reading an
implementation follows), rather than the same files twice. A vector is made the way the runner checks it: the state
is written to JSON, rebuilt from that JSON, and the handler runs on the rebuilt state
(:func:`run_event`), so the files alone reproduce the outcome.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import attrs

from mqspec.model.guid import Guid
from mqspec.model.mqdsrp import Command, DirectoryChange
from mqspec.model.propids import PROPIDS, ObjectType
from mqspec.model.propvalue import Property
from mqspec.model.seqnum import SequenceNumber
from mqspec.refimpl import mqdsrp_client as client
from mqspec.refimpl import mqdsrp_common as common
from mqspec.refimpl import mqdsrp_objects as objects
from mqspec.refimpl import mqdsrp_server as server
from mqspec.refimpl.directory import DirectoryStore, identity_propid
from mqspec.refimpl.effects import Context, Mode
from mqspec.refimpl.mqdsrp_state import (
    PEC_PARTITION_ID,
    DirectoryNeighbor,
    DirectoryPartition,
    QueueManager,
    Role,
)

from .readings import differing_entries, resting_entries, traced
from .state import (
    arg_from_json,
    arg_to_json,
    effect_to_json,
    qm_from_json,
    qm_to_json,
    value_to_json,
)

DOC = "MC-MQDSRP"


@attrs.frozen
class HandlerSpec:
    """One handler: its section, the function, and its arguments after ``(qm, ctx)`` with their types."""

    name: str
    section: str
    function: Callable[..., Any]
    params: tuple[tuple[str, str], ...]


def _spec(section: str, function: Callable[..., Any], *params: tuple[str, str]) -> HandlerSpec:
    return HandlerSpec(function.__name__, section, function, params)


_P, _G, _S = ("partition", "partition"), ("guid", "guid"), ("seq_number", "seq")
_PROPS, _PATH, _TYPE = ("properties", "properties"), ("path_name", "str"), ("object_type", "int")
_MSG = ("message", "message")

#: every handler a vector can run, by function name
HANDLERS: dict[str, HandlerSpec] = {s.name: s for s in (
    _spec("3.1.3", common.common_initialization),
    _spec("3.1.3.1", common.replication_state_initialization),
    _spec("3.1.3.2", common.directory_neighbor_initialization),
    _spec("3.1.3.3", common.replication_queue_initialization),
    _spec("3.1.5.1", common.receiving_replication_messages, ("body", "bytes"), ("message_class", "int"),
          ("destination_format_name", "str")),
    _spec("3.1.5.2", common.processing_directory_changes, ("changes", "changes"), ("check_flush", "bool")),
    _spec("3.1.7.1.1", common.change_remote_object, ("operation", "int"), _TYPE, _PATH, _G,
          ("partition_id", "guid"), _PROPS, ("client_request", "int")),
    _spec("3.1.7.1.2", common.propagate_directory_change, ("operation", "int"), _TYPE, _PATH, _G,
          ("partition_id", "guid"), _PROPS, _S),
    _spec("3.1.7.1.3", common.read_next_sequence_number, ("partition_id", "guid")),
    _spec("3.1.7.2.1", common.send_replication_message, ("destination", "str"), _MSG, ("timeout", "int"),
          ("priority", "int"), ("ack_requested", "ack"), ("admin_queue", "str"), ("response_queue", "str")),
    _spec("3.1.7.2.2", common.handle_directory_change, _P, ("change", "change"), ("check_flush", "bool")),
    _spec("3.1.7.2.3", common.handle_in_sync_change, _P, ("change", "change"), ("flush", "bool")),
    _spec("3.1.7.2.4", common.check_pending_changes, _P),
    _spec("3.1.7.2.5", objects.handle_directory_create, _P, _TYPE, _PATH, _PROPS, _S, ("post_create", "bool"),
          _G),
    _spec("3.1.7.2.6", objects.handle_directory_update, _P, _TYPE, _PATH, _G, _PROPS, _S, ("post_update", "bool")),
    _spec("3.1.7.2.7", objects.handle_directory_delete, _P, _TYPE, ("scope", "int"), _PATH, _G, _S,
          ("post_delete", "bool")),
    _spec("3.1.7.2.8", objects.handle_directory_sync, _P, _TYPE, _PATH, _G, _PROPS, _S),
    _spec("3.1.7.2.9", objects.purge_deleted_objects, _P),
    _spec("3.1.7.2.10", objects.handle_enterprise_update, _P, _PROPS),
    _spec("3.1.7.2.11", objects.handle_site_update, _PATH, _G, _PROPS, ("sync", "bool")),
    _spec("3.1.7.2.12", objects.handle_machine_update, _P, _PATH, _G, _PROPS, ("sync", "bool")),
    _spec("3.2.3", server.server_initialization),
    _spec("3.2.7.1", server.receive_change_propagation, _MSG),
    _spec("3.2.7.2", server.receive_change_request, _MSG),
    _spec("3.2.7.3", server.receive_sync_request, _MSG),
    _spec("3.2.7.4", server.receive_psc_ack, _MSG),
    _spec("3.2.7.5", server.receive_bsc_ack, _MSG),
    _spec("3.2.7.6", server.send_change_reply, ("status", "int"), ("request", "message")),
    _spec("3.2.7.7", server.send_already_purged, _P, ("requester_name", "str")),
    _spec("3.2.7.8", server.lookup_directory_objects, _P, ("object_type", "object_type"), ("from_seq", "seq"),
          ("to_seq", "seq"), ("scope", "int")),
    _spec("3.3.3", client.client_initialization),
    _spec("3.3.6.1", client.change_propagation_timer_event, ("neighbor_name", "str"), ("scope", "scope")),
    _spec("3.3.6.2", client.bsc_ack_timer_event),
    _spec("3.3.7.1", client.process_change_request, ("request", "message"), ("origin", "str"),
          ("client_request", "int")),
    # the end of 3.3.7.1's wait: "An implementation-specific waiting time has elapsed"
    _spec("3.3.7.1", client.change_request_wait_expired, ("key", "wait_key")),
    _spec("3.3.7.2", client.send_change_propagation, ("neighbor", "neighbor"), ("scope", "scope")),
    _spec("3.3.7.3", client.send_sync_request, _P),
    _spec("3.3.7.4", client.send_psc_ack, _P, ("last_seq_number", "seq")),
    _spec("3.3.7.5", client.receive_sync_reply, _MSG),
    _spec("3.3.7.6", client.receive_change_reply, _MSG),
    _spec("3.3.7.7", client.receive_already_purged, _MSG),
    _spec("3.3.7.8", client.receive_change_request_nack, ("request", "message")),
    _spec("3.3.7.9", client.receive_request_nack, ("body", "bytes"), ("message_class", "int"),
          ("destination_format_name", "str")),
    _spec("3.3.7.10", client.start_sync0_state, _P, ("purged_seq_number", "seq")),
    _spec("3.3.7.11", client.complete_sync0_state, _P),
)}


def handler_sections() -> list[str]:
    """The MC-MQDSRP sections the clause registry says handlers implement (code in refimpl/mqdsrp_*)."""
    from mqspec.clauses import load_all

    return [c.section for c in load_all()
            if c.document == DOC and c.code.startswith("refimpl/mqdsrp_")]


# --- situations ----------------------------------------------------------------------------------


@attrs.frozen
class Situation:
    """One branch of one handler: ``build()`` returns the state (a queue manager, or an MS-MQSD server
    or client) and the arguments by name."""

    handler: str
    name: str
    description: str
    build: Callable[[], tuple[Any, dict[str, Any]]]
    now: float = 0.0
    document: str = DOC
    #: register entries the outcome rests on in both readings that no effect names (modelling of a state)
    rests_on: tuple[str, ...] = ()


SITUATIONS: list[Situation] = []


def situation(handler: str, name: str, *, now: float = 0.0) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated builder; its docstring's first line says which branch it reaches."""
    if handler not in HANDLERS:
        raise KeyError(f"no handler {handler!r} in the vector handler table")

    def register(build: Callable[..., Any]) -> Callable[..., Any]:
        description = (build.__doc__ or "").strip().splitlines()[0]
        SITUATIONS.append(Situation(handler, name, description, build, now))
        return build

    return register


def document_module(document: str) -> Any:
    """The module of another document's handler vectors (:mod:`.handlers_mqsd`, :mod:`.handlers_mqcn`)."""
    from . import handlers_mqcn, handlers_mqsd

    return {handlers_mqsd.DOC: handlers_mqsd, handlers_mqcn.DOC: handlers_mqcn}[document]


def document_situation(document: str, handler: str, name: str, *, now: float = 0.0,
                       rests_on: tuple[str, ...] = ()) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a situation of another document's handler; as :func:`situation` otherwise (``rests_on``:
    the register entries its outcome rests on that no effect names)."""
    if handler not in document_module(document).TABLE:
        raise KeyError(f"no handler {handler!r} in the {document} vector handler table")

    def register(build: Callable[..., Any]) -> Callable[..., Any]:
        description = (build.__doc__ or "").strip().splitlines()[0]
        SITUATIONS.append(Situation(handler, name, description, build, now, document, rests_on))
        return build

    return register


def mqsd_situation(handler: str, name: str, *, now: float = 0.0,
                   rests_on: tuple[str, ...] = ()) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register an MS-MQSD situation (:mod:`.handlers_mqsd`)."""
    return document_situation("MS-MQSD", handler, name, now=now, rests_on=rests_on)


def mqcn_situation(handler: str, name: str, *, now: float = 0.0,
                   rests_on: tuple[str, ...] = ()) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register an MS-MQCN situation (:mod:`.handlers_mqcn`)."""
    return document_situation("MS-MQCN", handler, name, now=now, rests_on=rests_on)


def all_situations() -> list[Situation]:
    """Every registered situation (importing the situation modules registers them)."""
    from . import (  # noqa: F401  (imported for their registrations)
        situations_changes,
        situations_client,
        situations_common,
        situations_guards,
        situations_guards_objects,
        situations_guards_replies,
        situations_mqcn,
        situations_mqsd,
        situations_objects,
        situations_server,
    )

    names = [(s.document, s.handler, s.name) for s in SITUATIONS]
    if len(names) != len(set(names)):
        raise ValueError("two situations share a handler and a name")
    return list(SITUATIONS)


# --- running one event -----------------------------------------------------------------------------


def event_json(spec: HandlerSpec, qm: QueueManager, args: dict[str, Any], mode: Mode, now: float) -> dict[str, Any]:
    """``event.json``: the handler, the mode, the clock, and every argument with its type."""
    if set(args) != {name for name, _ in spec.params}:
        raise TypeError(f"{spec.name} takes {[n for n, _ in spec.params]}, the situation gave {sorted(args)}")
    return {
        "handler": spec.name, "document": DOC, "section": spec.section, "mode": mode.value, "now": float(now),
        "args": [{"name": name, **arg_to_json(kind, args[name], qm)} for name, kind in spec.params],
    }


def run_event(pre: dict[str, Any], event: dict[str, Any]) -> dict[str, Any]:
    """Rebuild the state of ``pre.json``, run the event of ``event.json``, return post, effects, result."""
    if event["document"] != DOC:
        return document_module(event["document"]).run_event(pre, event)  # type: ignore[no-any-return]
    qm = qm_from_json(pre)
    spec = HANDLERS[event["handler"]]
    declared = [(a["name"], a["type"]) for a in event["args"]]
    if declared != list(spec.params):
        raise ValueError(f"{spec.name} takes {list(spec.params)}, the event gives {declared}")
    args = [arg_from_json(a, qm) for a in event["args"]]
    ctx = Context(qm.machine_name, Mode(event["mode"]), event["now"])
    returned = spec.function(qm, ctx, *args)
    return {"post": qm_to_json(qm), "effects": [effect_to_json(e) for e in ctx.effects],
            "returned": value_to_json(returned)}


#: the mode of a vector whose outcome is the same in both readings
BOTH = "both"


@attrs.frozen
class HandlerVector:
    """The four JSON documents of one handler vector, and where it sits (``mode``: a Mode value or "both").

    ``rests_on``: the register entries the case's outcome rests on rather than a MUST (ids);
    ``differs_by``: for a case whose two readings differ, the entries that make them differ.
    """

    situation: Situation
    mode: str
    pre: dict[str, Any]
    event: dict[str, Any]
    post: dict[str, Any]
    effects: dict[str, Any]
    rests_on: tuple[str, ...] = ()
    differs_by: tuple[str, ...] = ()
    #: the reading tests the run passed and what followed each (mqspec.vectors.readings.traced)
    passed: dict[Any, Any] = attrs.field(factory=dict, eq=False, repr=False)

    @property
    def section(self) -> str:
        return self.event["section"]  # type: ignore[no-any-return]

    @property
    def document(self) -> str:
        return self.situation.document


def build_vector(s: Situation, mode: Mode) -> HandlerVector:
    """Build the situation, write its state as JSON, and run the handler on the state rebuilt from it."""
    if s.document != DOC:
        from .handlers_mqsd import event_json as document_event

        module = document_module(s.document)
        state, args = s.build()
        pre = module.state_to_json(state)
        event = document_event(module.TABLE[s.handler], args, mode.value, s.now, document=s.document,
                               encode=module.encode_arg)
        if module.state_to_json(module.state_from_json(pre)) != pre:
            raise ValueError(f"{s.handler}/{s.name}: the state does not survive its JSON form")
    else:
        qm, args = s.build()
        pre = qm_to_json(qm)
        event = event_json(HANDLERS[s.handler], qm, args, mode, s.now)
        if qm_to_json(qm_from_json(pre)) != pre:
            raise ValueError(f"{s.handler}/{s.name}: the state does not survive its JSON form")
    outcome, passed = traced(lambda: run_event(pre, event))
    return HandlerVector(s, mode.value, pre, event, outcome["post"],
                         {"effects": outcome["effects"], "returned": outcome["returned"]}, passed=passed)


def handler_vectors() -> Iterator[HandlerVector]:
    """Every situation: one vector of mode "both" when the two readings agree, else clarified then literal.

    Each names the register entries it rests on (the situation's, and those its effects carry); a
    pair also names the entries that make the readings differ, and the clarified case rests on them
    (:mod:`mqspec.vectors.readings`).
    """
    for s in all_situations():
        clarified, literal = build_vector(s, Mode.CLARIFIED), build_vector(s, Mode.LITERAL)
        own = {*s.rests_on, *resting_entries(clarified.effects["effects"])}
        if (clarified.post, clarified.effects) == (literal.post, literal.effects):
            yield attrs.evolve(clarified, mode=BOTH, event={**clarified.event, "mode": BOTH}, rests_on=tuple(sorted(own)))
        else:
            differ = tuple(differing_entries(clarified.passed, literal.passed,
                                             resting_entries(clarified.effects["effects"])))
            yield attrs.evolve(clarified, rests_on=tuple(sorted({*own, *differ})), differs_by=differ)
            theirs = {*s.rests_on, *resting_entries(literal.effects["effects"])}
            yield attrs.evolve(literal, rests_on=tuple(sorted(theirs)), differs_by=differ)


def event_modes(event: dict[str, Any]) -> list[dict[str, Any]]:
    """The event as run in each reading it stands for: itself, or once per mode for "both"."""
    if event["mode"] == BOTH:
        return [{**event, "mode": mode.value} for mode in (Mode.CLARIFIED, Mode.LITERAL)]
    return [event]


# --- builders the situation modules share (the section 4 topology) ----------------------------------

P = {name: pdef.propid for name, pdef in PROPIDS.items()}
ENT = PEC_PARTITION_ID
SITE0, SITE1, SITE2 = (Guid.from_name(f"site:site{i}") for i in range(3))
PEC, PSC1, PSC2, BSC11, BSC01 = "PEC0", "PSC1", "PSC2", "BSC11", "BSC01"
QUEUE, MACHINE, SITE = ObjectType.MQDS_QUEUE, ObjectType.MQDS_MACHINE, ObjectType.MQDS_SITE
ENTERPRISE, USER, CN = ObjectType.MQDS_ENTERPRISE, ObjectType.MQDS_USER, ObjectType.MQDS_CN
SERVICE_BSC = 0x2


def seq(n: int) -> SequenceNumber:
    return SequenceNumber(n)


def guid_of(name: str) -> Guid:
    """The GUID the vectors give the object called ``name``."""
    return Guid.from_name(f"object:{name}")


def qm_guid(name: str) -> Guid:
    return Guid.from_name(f"qm:{name}")


def new_qm(name: str, role: Role, site: Guid, *, psc: str | None = None) -> QueueManager:
    """A queue manager with no replication state and an empty directory (as World.add_node makes one)."""
    return QueueManager(machine_name=name, identifier=qm_guid(name), site_identifier=site, role=role,
                        pec_name=PEC, configured_psc_name=psc, directory=DirectoryStore())


def initialized(qm: QueueManager) -> QueueManager:
    """Run the 3.1.3 initialization, as a server that has been running would have."""
    common.common_initialization(qm, Context(qm.machine_name))
    return qm


def pec(*, psc_neighbors: tuple[tuple[str, Guid], ...] = ((PSC1, SITE1),),
        bsc_neighbors: tuple[str, ...] = ()) -> QueueManager:
    """PEC0: authority of the enterprise partition and of site0, a replica of each PSC's site."""
    qm = new_qm(PEC, Role.PEC, SITE0)
    qm.partitions = [DirectoryPartition(ENT, PEC), DirectoryPartition(SITE0, PEC)]
    for name, site in psc_neighbors:
        qm.partitions.append(DirectoryPartition(site, name))
        qm.psc_neighbors.append(DirectoryNeighbor(site, name))
    qm.bsc_neighbors = [DirectoryNeighbor(SITE0, name) for name in bsc_neighbors]
    return initialized(qm)


def psc(*, bsc_neighbors: tuple[str, ...] = (BSC11,), site_partition: bool = True) -> QueueManager:
    """PSC1 of site1: authority of site1, a replica of the enterprise partition and of site0."""
    qm = new_qm(PSC1, Role.PSC, SITE1)
    qm.partitions = [DirectoryPartition(ENT, PEC), DirectoryPartition(SITE0, PEC)]
    if site_partition:
        qm.partitions.append(DirectoryPartition(SITE1, PSC1))
    qm.psc_neighbors = [DirectoryNeighbor(SITE0, PEC)]
    qm.bsc_neighbors = [DirectoryNeighbor(SITE1, name) for name in bsc_neighbors]
    return initialized(qm)


def bsc(*, psc_name: str | None = PSC1, site_partition: bool = True) -> QueueManager:
    """BSC11 of site1: a replica of every partition; its PSC is PSC1."""
    qm = new_qm(BSC11, Role.BSC, SITE1, psc=psc_name)
    qm.partitions = [DirectoryPartition(ENT, PEC), DirectoryPartition(SITE0, PEC)]
    if site_partition:
        qm.partitions.append(DirectoryPartition(SITE1, PSC1))
    return initialized(qm)


def part(qm: QueueManager, partition_id: Guid) -> DirectoryPartition:
    found = qm.find_partition(partition_id)
    if found is None:
        raise LookupError(f"{qm.machine_name} has no partition {partition_id}")
    return found


def change(command: Command | int, partition_id: Guid, seq_number: int, *, previous: int | None = None,
           purged: int = 0, properties: tuple[Property, ...] = (), path: str | None = None,
           guid: Guid | None = None) -> DirectoryChange:
    """A DirectoryChange; PreviousSeqNumber defaults to SeqNumber - 1 (in order), the name to a path."""
    if path is None and guid is None:
        path = f"object{seq_number}"
    return DirectoryChange(Command(command), partition_id, seq(seq_number - 1 if previous is None else previous),
                           seq(seq_number), seq(purged), tuple(properties), path_name=path, guid_identifier=guid)


def queue_props(path: str, guid: Guid | None = None, *, label: str = "label", scope: int | None = None,
                ) -> tuple[Property, ...]:
    props = [Property(P["PROPID_Q_PATHNAME"], path), Property(P["PROPID_Q_LABEL"], label)]
    if scope is not None:
        props.append(Property(P["PROPID_Q_SCOPE"], scope))
    if guid is not None:
        props.append(Property(P["PROPID_Q_INSTANCE"], guid))
    return tuple(props)


def machine_props(name: str, site: Guid, service: int | None = 0, *, guid: bool = True) -> tuple[Property, ...]:
    props = [Property(P["PROPID_QM_PATHNAME"], name), Property(P["PROPID_QM_SITE_ID"], site)]
    if service is not None:
        props.append(Property(P["PROPID_QM_SERVICE"], service))
    if guid:
        props.append(Property(P["PROPID_QM_MACHINE_ID"], qm_guid(name)))
    return tuple(props)


def site_props(name: str, site: Guid | None, psc_name: str | None) -> tuple[Property, ...]:
    props = [Property(P["PROPID_S_PATHNAME"], name)]
    if site is not None:
        props.append(Property(P["PROPID_S_SITEID"], site))
    if psc_name is not None:
        props.append(Property(P["PROPID_S_PSC"], psc_name))
    return tuple(props)


def enterprise_props(pec_name: str | None, name: str = "enterprise") -> tuple[Property, ...]:
    props = [Property(P["PROPID_E_NAME"], name), Property(P["PROPID_E_ID"], guid_of(name))]
    if pec_name is not None:
        props.append(Property(P["PROPID_E_PECNAME"], pec_name))
    return tuple(props)


def delete_props(scope: int, object_type: int) -> tuple[Property, ...]:
    """A delete's two values: "iScope := ... first element", "iObjectType := ... second element"."""
    return (Property(P["PROPID_D_SCOPE"], scope), Property(P["PROPID_D_OBJTYPE"], int(object_type)))


def put(qm: QueueManager, object_type: int, path: str | None, props: tuple[Property, ...], partition_id: Guid,
        at: int = 1) -> Guid:
    """Put an object straight into the local directory (state set-up, not a protocol event)."""
    identity = identity_propid(int(object_type))
    guid = next((p.value for p in props if p.propid == identity), None) or guid_of(path or "object")
    status = qm.directory.create(int(object_type), path, guid, {p.propid: p.value for p in props},
                                 partition_id, seq(at))
    if status != 0:
        raise ValueError(f"vector set-up object {path or guid} not created: {status:#010x}")
    return guid  # type: ignore[return-value]
