"""One node's replay: the trace's inputs run through the reference handlers, its outputs matched.

Each node is replayed on its own, in trace order, from its first ``start`` (its state before a
start is unknown, so its events before one are checked at codec level only), or from the state a
declared PSC handover gives it (:mod:`mqspec.oracle.handover`). Messages it
receives are taken from the trace, not from a simulated network, so loss, delay, duplication
and reordering by the transport are simply the inputs the node saw.

Matching outputs (what allowed nondeterminism means here):

* an output is matched by content (destination, bytes, then the MSMQ properties the trace
  gives) against the outputs the reference produced and that are still unmatched, in any order:
  the order in which an implementation logs one event's outputs is free (modelling E-293);
* the outputs of an input must all appear before the node's next ``window``-th later input
  (default: before its next input) or the end of the trace; an output not seen by then is
  missing, reported at the position just after the last matched output that precedes it in
  the reference's order (E-293);
* timer values are the implementation's: a timer expiry is an input (it must be armed; E-292);
* the RequestIdentifier of a change request a node originates (3.1.7.1.1, "an internal value")
  is the implementation's: the reference adopts it from the trace (E-290);
* whether a change propagation carries a SeqNumberHeader depends on an implementation-specific
  period (3.3.7.2): a message with no header, or with exactly the header the reference would
  build now, is accepted (E-291);
* MSMQ properties the trace leaves out, and output kinds a node does not observe, are not compared.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from typing import Any

import attrs

from mqspec import memos
from mqspec.clauses import Clause
from mqspec.model import mqdsrp
from mqspec.model.errors import DecodeError, ModelError
from mqspec.model.guid import Guid
from mqspec.model.jsonform import to_json
from mqspec.model.mqdsrp import (
    ChangePropagationMessage,
    ChangeRequestMessage,
    SeqNumberHeader,
)
from mqspec.refimpl import mqdsrp_client as client
from mqspec.refimpl.effects import AckRequested as EffectAck
from mqspec.refimpl.effects import (
    CancelTimer,
    Clarified,
    Context,
    DirectoryOperation,
    EnqueueMessage,
    Mode,
    RequestCompleted,
    StartTimer,
    TimerKey,
    TimerScope,
)
from mqspec.refimpl.mqds import directory_client_request
from mqspec.refimpl.mqdsrp_client import seq_number_header_entries
from mqspec.refimpl.mqdsrp_common import receiving_replication_messages
from mqspec.refimpl.mqdsrp_state import Role
from mqspec.refimpl.transport import (
    CALG_MD5,
    AckRequested,
    msmq_priority,
    replication_queue_direct,
)
from mqspec.refimpl.world import World, fire_timer
from mqspec.wording import plural

from . import attribution
from .attribution import ClauseEffects, responsible
from .diff import field_diff
from .inputs import InputError, client_request, timer_key
from .state import STATE_SECTIONS, compare_state

#: MSMQ properties of a send compared when the trace gives them
SEND_PROPERTIES = ("queue", "priority", "timeout", "time_to_be_received", "ack", "admin_queue", "response_queue",
                   "class", "delivery", "hash_algorithm", "sender_id_type", "sender_id")
#: those a caller of Send Replication Message chooses (the others 3.1.7.2.1 fixes itself)
CALLER_PROPERTIES = frozenset(("priority", "timeout", "time_to_be_received", "ack", "admin_queue", "response_queue"))
DIRECTORY_FIELDS = ("operation", "status", "type", "path", "guid", "seq", "partition")


@attrs.frozen
class Divergence:
    """Where a node's trace departs from the reference, and which clause's rule it breaks."""

    index: int  # the trace event the divergence is reported at
    node: str
    kind: str  # output-differs | unexpected-output | missing-output | state | decode | input | handover | ...
    summary: str
    expected: Any = None
    actual: Any = None
    diff: tuple[dict[str, Any], ...] = ()
    clause: Clause | None = None
    via: tuple[Clause, ...] = ()
    cause: int | None = None  # the input whose handling produced (or should have produced) it
    #: the MUST of the clause that was broken, quoted from the text (when the replay knows it)
    rule: str = ""
    #: the register entries (ids) the verdict rests on where no MUST of the text makes it
    rests_on: tuple[str, ...] = ()
    #: the clause is only the handler the input went to: the checker looks for the rule that
    #: decided to make no such output (attribution.DecisionWatch)
    refine: bool = attrs.field(default=False, eq=False)
    #: (input, order, innermost) of the output whose clause stack names the clause, when the node
    #: did not record stacks: the checker replays the node again to find it (see :func:`blamed`)
    blame: tuple[int, int, bool] | None = attrs.field(default=None, eq=False)


class DivergenceLog:
    """What one replay found: its first divergence and, when the checker asks for every divergence
    (``check --all``: ``limit`` above 0), each one up to ``limit`` (``found``) and how many (``count``).

    A replay stops at its first divergence (``halted``) unless ``limit`` asks for more: then it goes
    on from the reference's state, so a later divergence may be a consequence of an earlier one.
    """

    limit = 0

    def _init_log(self) -> None:
        self.divergence: Divergence | None = None
        self.found: list[Divergence] = []
        self.count = 0

    @property
    def halted(self) -> bool:
        return self.divergence is not None and not self.limit

    def _diverge(self, divergence: Divergence) -> None:
        if self.limit:
            self.count += 1
            if len(self.found) < self.limit:
                self.found.append(divergence)
        if self.divergence is None or divergence.index < self.divergence.index:
            self.divergence = divergence


@attrs.define(eq=False, slots=True)
class Expected:
    """An output the reference produced and the trace has yet to show."""

    kind: str
    key: Any  # send: body hex; request_completed: request id; directory: the operation
    to: str | None  # send: casefolded destination
    fields: dict[str, Any]
    message: Any
    order: int
    batch: int
    input_index: int
    stack: tuple[Clause, ...] | None  # None: not recorded (NodeReplay.stacks)
    matched_at: int | None = None


class NodeReplay(DivergenceLog):
    """The reference copy of one node and what it still expects the trace to show.

    With ``stacks`` off, the registered clauses on the reference's stack at each output are not
    recorded (walking the stack costs a tenth of a check): a divergence about an output then
    carries :attr:`Divergence.blame` instead of its clause, and the checker replays the node
    again, with stacks on, to name it. A handover turns them on for the rest of the trace (the
    replay again does not take handovers).
    """

    def __init__(self, decl: dict[str, Any], mode: Mode, window: int, observes: frozenset[str],
                 stacks: bool = True) -> None:
        self.name: str = decl["name"]
        self.decl = decl
        self.first_decl = decl  # the declaration as given (a handover may change decl)
        self.since = 0  # the event that declared the node
        self.stacks = stacks
        self.mode = mode
        self.window = window
        self.observes = observes
        self.behavioural = decl.get("role") is not None
        self.world: World | None = None
        self.qm: Any = None
        self.up = False
        self.offset = 0.0
        self.pending: list[Expected] = []
        self.batches: dict[int, list[Expected]] = {}
        self.inputs = 0
        self.checked = 0  # events replayed through the reference or compared with it
        self.order = 0
        self.armed: set[TimerKey] = set()
        self.request_ids: dict[int, int] = {}
        self.last_input: tuple[int, dict[str, Any]] | None = None
        self._init_log()
        self.errata: set[str] = set()
        self.watch: attribution.FieldWatch | attribution.DecisionWatch | None = None
        #: the trace's other replays by name (a handover compares with the old PSC's state)
        self.peers: dict[str, NodeReplay] = {}
        #: (site, old PSC) when this node took over as a site's new PSC (a declared handover)
        self.took_over: tuple[str, str] | None = None
        self.inferred_timers = 0  # timer expiries taken from the sends they explain (E-333)

    # --- events ---------------------------------------------------------------------------------

    def event(self, index: int, record: dict[str, Any]) -> None:
        """Take one event of this node (nothing more once it has diverged, unless every divergence is asked for)."""
        if not self.halted:
            _HANDLERS[record["event"]](self, index, record)

    def finish(self, end: int, clock: float | None = None) -> None:
        """The trace ended at event index ``end``: every output still expected is missing."""
        if not self.halted:
            self._close(self.inputs + self.window + 2)

    def owes_before(self, index: int) -> bool:
        """Whether an output of an input before event ``index`` is still unmatched."""
        if self.halted:
            return False
        return any(outputs[0].input_index < index and any(e.matched_at is None for e in outputs)
                   for outputs in self.batches.values())

    # inputs ------------------------------------------------------------------------------------

    def _input(self, index: int, record: dict[str, Any]) -> bool:
        """Close the windows this input ends; False when the node cannot be replayed (codec level)."""
        self._close(self.inputs + 1)
        self.inputs += 1
        self.last_input = (index, record)
        return self.behavioural and self.qm is not None

    def on_start(self, index: int, record: dict[str, Any]) -> None:
        self._input(index, record)
        if not self.behavioural:
            return
        if self.qm is None:
            self._build()
        elif self.up:
            self._crash("volatile")  # a start of a running server: it stopped without a crash being logged
        self.up = True
        qm = self.qm
        self._run(index, record, lambda ctx: client.client_initialization(qm, ctx))

    def on_crash(self, index: int, record: dict[str, Any]) -> None:
        if self._input(index, record):
            self._crash(record.get("lose", "volatile"))

    def _crash(self, lose: str) -> None:
        self.world.crash(self.name, lose=lose)  # type: ignore[union-attr]
        self.up = False
        self.armed.clear()

    def on_clock(self, index: int, record: dict[str, Any]) -> None:
        self.offset = record["clock"] - record["t"]

    def on_receive(self, index: int, record: dict[str, Any]) -> None:
        if not self._input(index, record):
            return
        body = bytes.fromhex(record["body"])
        klass = record.get("class", 0)
        if not self.up or not self.qm.replication_queue_open:
            self._diverge(Divergence(
                index, self.name, "input", f"{self.name} processed a message while it was not running "
                "(its replication queue opens in Replication Queue Initialization)",
                clause=attribution.clause_of(_replication_queue_initialization())))
            return
        queue = record.get("queue") or replication_queue_direct(self.name)
        qm = self.qm
        self._run(index, record, lambda ctx: receiving_replication_messages(qm, ctx, body, klass, queue))

    def on_timer(self, index: int, record: dict[str, Any]) -> None:
        if not self._input(index, record):
            return
        key = timer_key(index, record)
        if not self.up:
            return  # a timer of a stopped server does not fire (3.1.1: timers are not persisted)
        if key not in self.armed:
            self._diverge(Divergence(
                index, self.name, "input", f"timer {key.kind}{list(key.args)} expired at {self.name}, "
                "but the reference never started it (or stopped it)", actual=record,
                clause=attribution.entry_clause("timer", key.kind)))
            return
        self.armed.discard(key)
        qm = self.qm
        self._run(index, record, lambda ctx: fire_timer(qm, ctx, key))

    def on_client_request(self, index: int, record: dict[str, Any]) -> None:
        if not self._input(index, record):
            return
        request, new_guid = client_request(index, record)
        if not self.up:
            self._diverge(Divergence(index, self.name, "input",
                                     f"{self.name} took a directory client's request while it was not running"))
            return
        qm = self.qm
        number: list[int] = []
        self._run(index, record, lambda ctx: number.append(directory_client_request(qm, ctx, request, new_guid)))
        self.request_ids[number[0]] = record["request"]

    # outputs -----------------------------------------------------------------------------------

    def on_send(self, index: int, record: dict[str, Any]) -> None:
        self.checked += 1  # compared with the reference's outputs, or decoded (codec level)
        if self.qm is None:
            self._codec_check(index, record)
            return
        body = record["body"].lower()
        to = record["to"].casefold()
        for attempt in (0, 1):
            for i, e in enumerate(self.pending):
                if e.kind == "send" and e.key == body and e.to == to:
                    del self.pending[i]
                    self._matched_send(index, record, e)
                    return
            # a trace that shows no timers (a capture's): once, the timer that explains the send
            if attempt or "timer" in self.observes or not self._timer_before(index, record, to):
                break
        self._unmatched_send(index, record, body, to)

    def _timer_before(self, index: int, record: dict[str, Any], to: str) -> bool:
        """A node whose trace shows no timers (a capture's) sends what no input explains: the armed
        timer whose expiry sends to that destination is taken to have expired just before (modelling
        E-333). True when one did; what it made is then expected like any input's outputs."""
        if not self.up or not self.armed:
            return False
        psc = (self.qm.my_psc_name or self.qm.configured_psc_name or "").casefold()
        for key in sorted(self.armed, key=lambda k: (k.kind, repr(k.args))):
            if (key.kind == "change_propagation" and str(key.args[0]).casefold() == to) or (
                    key.kind == "bsc_ack" and psc == to):
                break
        else:
            return False
        # the expiry is an input without closing the windows of the inputs before it (it is inferred)
        self.inputs += 1
        timer = {"event": "timer", "t": record["t"], "node": self.name, "timer": key.kind, "args": list(key.args)}
        self.last_input = (index, timer)
        self.armed.discard(key)
        self.inferred_timers += 1
        qm = self.qm
        self._run(index, timer, lambda ctx: fire_timer(qm, ctx, key))
        return True

    def _matched_send(self, index: int, record: dict[str, Any], e: Expected) -> None:
        e.matched_at = index
        if e.fields.items() <= record.items():
            return  # the common case, at C speed: the trace gives every field, as the reference has it
        wrong = [(k, e.fields[k], record[k]) for k in SEND_PROPERTIES if k in record and record[k] != e.fields[k]
                 and not (k == "sender_id" and str(record[k]).lower() == e.fields[k])]
        if wrong:
            caller = any(k in CALLER_PROPERTIES for k, _, _ in wrong)
            # the caller passes iPriority, iTimeout, iAckRequested and the queues; 3.1.7.2.1 sets the rest
            self._diverge(Divergence(
                index, self.name, "output-differs",
                f"{self.name} sends {_message_name(e.message)} to {record['to']} with "
                + ", ".join(f"{k} {a!r} (the reference: {x!r})" for k, x, a in wrong),
                expected={k: x for k, x, _ in wrong}, actual={k: a for k, _, a in wrong},
                diff=tuple({"field": k, "expected": x, "actual": a} for k, x, a in wrong),
                cause=e.input_index, **_blamed(e, innermost=not caller)))

    def _unmatched_send(self, index: int, record: dict[str, Any], body: str, to: str) -> None:
        try:
            actual = mqdsrp.decode(bytes.fromhex(body))
        except DecodeError as exc:
            self._decode_divergence(index, record, exc)
            return
        candidates = [e for e in self.pending if e.kind == "send"]
        for e in candidates:
            if e.to == to and self._alternative(e, actual):
                self.pending.remove(e)
                self._matched_send(index, record, e)
                return
        if not candidates:
            cause = self.last_input[0] if self.last_input else None
            self._unexpected(index, f"{self.name} sends {_message_name(actual)} to {record['to']}",
                             f"the reference sends nothing more in answer to event {cause}", to_json(actual),
                             lambda e: e.kind == "send" and e.key == body and e.to == to)
            return
        best = min(candidates, key=lambda e: (e.to != to, _op(e.message) != _op(actual),
                                              len(field_diff(_json(e), to_json(actual))), e.order))
        expected = _json(best)
        diff = field_diff(expected, to_json(actual))
        if best.to != to:
            diff = [{"field": "(destination)", "expected": best.fields["to"], "actual": record["to"]}, *diff]
        first = diff[0]["field"] if diff else "(bytes)"
        self.pending.remove(best)  # this output stood for it (check --all goes on from here)
        best.matched_at = index
        self._diverge(Divergence(
            index, self.name, "output-differs",
            f"{self.name} sends {_message_name(actual)} to {record['to']} that differs from the reference's "
            f"{_message_name(best.message)} to {best.fields['to']} ({plural(len(diff), 'field')}, first {first})",
            expected=expected, actual=to_json(actual), diff=tuple(diff), cause=best.input_index,
            **_blamed(best)))

    def _alternative(self, e: Expected, actual: Any) -> bool:
        """The trace's message differs from the reference's only where the text leaves a choice."""
        expected = e.message
        if type(actual) is not type(expected):
            return False
        if type(actual) is ChangeRequestMessage:
            return self._adopt_request_identifier(expected, actual)
        if type(actual) is ChangePropagationMessage:
            return self._accept_seq_number_header(expected, actual, e.to or "")
        return False

    def _adopt_request_identifier(self, expected: ChangeRequestMessage, actual: ChangeRequestMessage) -> bool:
        """3.1.7.1.1: "RequestIdentifier: Must be set to an internal value ... that uniquely identifies
        the Process Change Request event": the originator's choice, which the reference adopts."""
        qm = self.qm
        if attrs.evolve(actual, request_identifier=expected.request_identifier) != expected:
            return False
        old = (expected.requester_name, expected.request_identifier)
        new = (actual.requester_name, actual.request_identifier)
        pending = qm.pending_requests.get(old)
        if pending is None or pending.origin != "client" or new in qm.pending_requests:
            return False  # a forwarded request keeps its identifier; and it must be unique
        del qm.pending_requests[old]
        pending.request_identifier = actual.request_identifier
        pending.message = actual
        qm.pending_requests[new] = pending
        old_key, new_key = client.change_request_wait_timer(expected), client.change_request_wait_timer(actual)
        if old_key in self.armed:
            self.armed.discard(old_key)
            self.armed.add(new_key)
        return True

    def _accept_seq_number_header(self, expected: ChangePropagationMessage, actual: ChangePropagationMessage,
                                  to: str) -> bool:
        """3.3.7.2: "If an implementation-specific time period has elapsed since the last time a
        SeqNumberHeader was sent": with or without the header, but a header must be the right one."""
        if attrs.evolve(actual, seq_numbers=expected.seq_numbers) != expected:
            return False
        header = actual.seq_numbers
        if not header.partitions:
            return True
        scope = TimerScope.INTERSITE if any(n.machine_name.casefold() == to
                                            for n in self.qm.psc_neighbors) else TimerScope.INTRASITE
        return header == SeqNumberHeader(self.qm.machine_name, seq_number_header_entries(self.qm, scope))

    def on_request_completed(self, index: int, record: dict[str, Any]) -> None:
        if self.qm is None:
            return
        self.checked += 1
        for i, e in enumerate(self.pending):
            if e.kind == "request_completed" and e.key == record["request"]:
                del self.pending[i]
                e.matched_at = index
                if e.fields["status"] != record["status"]:
                    self._diverge(Divergence(
                        index, self.name, "output-differs",
                        f"request {record['request']} at {self.name} completes with status "
                        f"{record['status']:#010x}; the reference's status is {e.fields['status']:#010x}",
                        expected=e.fields, actual=_strip(record),
                        diff=({"field": "status", "expected": e.fields["status"], "actual": record["status"]},),
                        cause=e.input_index, **_blamed(e)))
                return
        waiting = [p for p in self.qm.pending_requests.values() if p.origin == "client"
                   and self.request_ids.get(p.client_request, p.client_request) == record["request"]]
        if waiting:
            # the reference still waits for the reply: completing now breaks the wait of 3.3.7.1
            self._diverge(Divergence(
                index, self.name, "unexpected-output",
                f"request {record['request']} at {self.name} completes before its reply arrived; the reference "
                "still waits (3.3.7.1: \"Wait until one of the following conditions is true\")",
                actual=_strip(record), clause=attribution.clause_of(client.process_change_request),
                cause=self.last_input[0] if self.last_input else None))
            return
        self._unexpected(index, f"request {record['request']} at {self.name} completes",
                         "the reference has no such request completing", _strip(record),
                         lambda e: e.kind == "request_completed" and e.key == record["request"])

    def on_directory(self, index: int, record: dict[str, Any]) -> None:
        if self.qm is None:
            return
        self.checked += 1
        given = {k: record[k] for k in DIRECTORY_FIELDS if k in record}
        for key in ("guid", "partition"):
            value = given.get(key)
            if type(value) is str:
                given[key] = value.lower()
        mine = given.items()
        for i, e in enumerate(self.pending):
            if e.kind == "directory" and mine <= e.fields.items():  # every field given is the reference's
                del self.pending[i]
                e.matched_at = index
                return
        same = [e for e in self.pending if e.kind == "directory" and e.key == record["operation"]]
        if same:
            best = min(same, key=lambda e: sum(e.fields.get(k) != v for k, v in given.items()))
            diff = tuple({"field": k, "expected": best.fields.get(k), "actual": v}
                         for k, v in given.items() if best.fields.get(k) != v)
            self._diverge(Divergence(
                index, self.name, "output-differs",
                f"{self.name} raises directory {record['operation']} that differs from the reference's "
                f"({', '.join(d['field'] for d in diff)})", expected=best.fields, actual=given, diff=diff,
                cause=best.input_index, **_blamed(best)))
            return
        self._unexpected(index, f"{self.name} raises directory {record['operation']}",
                         "the reference raises no such event", given,
                         lambda e: e.kind == "directory" and all(e.fields.get(k) == v for k, v in given.items()))

    def _unexpected(self, index: int, what: str, why: str, actual: Any, same: Callable[[Expected], bool]) -> None:
        """An output the reference does not make (any more): a second copy of one it made is blamed
        on the clause that makes it once; any other on the input's handler, refined by the checker."""
        cause = self.last_input[0] if self.last_input else None
        original = next((e for outputs in self.batches.values() for e in outputs
                         if e.matched_at is not None and same(e)), None)
        if original is not None:
            self._diverge(Divergence(
                index, self.name, "unexpected-output",
                f"{what} a second time; the reference makes it once (event {original.matched_at})", actual=actual,
                cause=original.input_index, **_blamed(original)))
            return
        self._diverge(Divergence(index, self.name, "unexpected-output", f"{what}; {why}", actual=actual,
                                 clause=self._entry_of_last_input(), cause=cause, refine=True))

    def on_snapshot(self, index: int, record: dict[str, Any]) -> None:
        if self.qm is None:
            return
        self.checked += 1
        try:
            diffs = compare_state(record["state"], self.qm)
        except (ModelError, ValueError) as exc:  # a GUID key that does not parse
            raise InputError(index, "state", str(exc)) from exc
        if diffs:
            first = diffs[0]
            part = first.field.split(".")[0] if ".objects." not in first.field else "objects"
            self._diverge(Divergence(
                index, self.name, "state",
                f"{self.name}'s {first.field} is {first.actual!r}; the reference's is {first.expected!r}"
                f" (MC-MQDSRP {STATE_SECTIONS.get(part, '3.1.1')})",
                expected=first.expected, actual=first.actual, diff=tuple(d.to_json() for d in diffs),
                clause=self._entry_of_last_input(), cause=self.last_input[0] if self.last_input else None))

    def on_handover(self, index: int, record: dict[str, Any]) -> None:
        if self.behavioural:
            self.stacks = True  # a replay again (to name a clause) stops before the first handover
            from .handover import take  # modelling E-313: the new PSC takes over, a BSC learns its name

            take(self, index, record)

    def on_ignore(self, index: int, record: dict[str, Any]) -> None:
        pass

    # --- the reference --------------------------------------------------------------------------

    def _build(self) -> None:
        """The node as World.add_node makes it, with the identities the declaration gives."""
        decl = self.decl
        self.world = World(mode=self.mode)
        site = Guid.parse(decl["site"])
        self.world.sites[str(site)] = site
        qm = self.world.add_node(self.name, Role(decl["role"]), str(site), decl["pec"], decl.get("psc"))
        if "identifier" in decl:
            qm.identifier = Guid.parse(decl["identifier"])
        self.qm = qm

    def _run(self, index: int, record: dict[str, Any], handler: Callable[[Context], object]) -> None:
        self.checked += 1
        ctx = Context(self.name, self.mode, record["t"] + self.offset)
        effects = ctx.effects = ClauseEffects(_RUN_CODE) if self.stacks else []
        if self.watch is not None:
            self.watch.run(lambda: handler(ctx))
        else:
            handler(ctx)
        batch = self.inputs
        outputs: list[Expected] = []
        observes = self.observes
        for effect, stack in zip(effects, effects.stacks if self.stacks else _NO_STACKS):
            kind = type(effect)
            if kind is EnqueueMessage:
                if effect.destination and "send" in observes:
                    outputs.append(self._expected_send(effect, stack, batch, index))
            elif kind is StartTimer:
                self.armed.add(effect.timer)
            elif kind is CancelTimer:
                self.armed.discard(effect.timer)
            elif kind is RequestCompleted:
                if "request_completed" in observes:
                    request = self.request_ids.get(effect.request, effect.request)
                    outputs.append(self._expected(
                        "request_completed", request, None, {"request": request, "status": effect.status},
                        None, stack, batch, index))
            elif kind is DirectoryOperation:
                if "directory" in observes:
                    fields = {"operation": effect.operation, "status": effect.status, "type": effect.object_type,
                              "path": effect.path_name,
                              "guid": _guid_text(effect.guid) if effect.guid else None, "seq": effect.seq_number,
                              "partition": _guid_text(effect.partition_id) if effect.partition_id is not None
                              else None}
                    outputs.append(self._expected("directory", effect.operation, None, fields, None, stack,
                                                  batch, index))
            elif kind is Clarified:
                self.errata.add(effect.erratum)
        if outputs:
            self.pending.extend(outputs)
            self.batches[batch] = outputs

    def _expected(self, kind: str, key: Any, to: str | None, fields: dict[str, Any], message: Any,
                  stack: tuple[Clause, ...] | None, batch: int, index: int) -> Expected:
        self.order += 1
        return Expected(kind, key, to, fields, message, self.order, batch, index, stack)

    def _expected_send(self, effect: EnqueueMessage, stack: tuple[Clause, ...] | None, batch: int,
                       index: int) -> Expected:
        body = mqdsrp.encode(effect.body).hex()
        fields = {
            "to": effect.destination, "body": body, "queue": effect.format_name,
            "priority": msmq_priority(effect.priority), "timeout": effect.time_to_reach_queue,
            "time_to_be_received": effect.time_to_be_received, "ack": _ACK_BITS[effect.ack_requested],
            "admin_queue": effect.admin_queue, "response_queue": effect.response_queue,
            # 3.1.7.2.1: "Class := Normal ... DeliveryGuarantee := Express ... HashAlgorithm := CALG_MD5"
            "class": 0, "delivery": 0, "hash_algorithm": CALG_MD5,
            "sender_id_type": effect.sender_identifier_type, "sender_id": _guid_text(effect.sender_identifier),
        }
        self.order += 1
        return Expected("send", body, effect.destination.casefold(), fields, effect.body, self.order, batch,
                        index, stack)

    def _close(self, upto: int) -> None:
        """Outputs of inputs up to ordinal ``upto - window - 1`` had to be seen by now."""
        last = upto - self.window - 1
        for batch in [b for b in self.batches if b <= last]:
            outputs = self.batches.pop(batch)
            missing = [e for e in outputs if e.matched_at is None]
            if not missing:
                continue
            e = min(missing, key=lambda x: x.order)
            before = [x.matched_at for x in outputs if x.order < e.order and x.matched_at is not None]
            position = max(before, default=e.input_index) + 1
            for x in missing:
                if x in self.pending:
                    self.pending.remove(x)
            what = (f"{_message_name(e.message)} to {e.fields['to']}" if e.kind == "send"
                    else f"request {e.key} completing" if e.kind == "request_completed"
                    else f"directory {e.key}")
            self._diverge(Divergence(
                position, self.name, "missing-output",
                f"{self.name} does not show {what}, which the reference produces in answer to event "
                f"{e.input_index}", expected=_json(e) if e.kind == "send" else e.fields,
                cause=e.input_index, **_blamed(e)))

    def _entry_of_last_input(self) -> Clause | None:
        if self.last_input is None:
            return None
        _, record = self.last_input
        kind = record["event"]
        if kind == "receive":
            body = record["body"]
            operation = int(body[34:36], 16) if len(body) >= 36 else None
            return attribution.entry_clause("receive", (record.get("class", 0), operation))
        if kind == "timer":
            return attribution.entry_clause("timer", record["timer"])
        if kind == "client_request":
            partition = self.qm.find_partition(Guid.parse(record["partition"])) if self.qm else None
            return attribution.entry_clause("client_request", bool(partition and self.qm.is_authority_of(partition)))
        return attribution.entry_clause(kind)

    # --- codec level ------------------------------------------------------------------------------

    def _codec_check(self, index: int, record: dict[str, Any]) -> None:
        try:
            mqdsrp.decode(bytes.fromhex(record["body"]))
        except DecodeError as exc:
            self._decode_divergence(index, record, exc)

    def _decode_divergence(self, index: int, record: dict[str, Any], exc: DecodeError) -> None:
        self._diverge(decode_divergence(self.name, index, record, exc))


def blamed(stack: tuple[Clause, ...], innermost: bool = False) -> dict[str, Any]:
    """The clause and ``via`` of a divergence about an output made with this clause stack: the
    innermost clause that is not a generic carrier (``innermost``: the innermost one)."""
    return {"clause": (stack[0] if stack else None) if innermost else responsible(stack), "via": stack}


def _blamed(e: Expected, innermost: bool = False) -> dict[str, Any]:
    if e.stack is None:  # not recorded: the checker replays the node again to find it
        return {"blame": (e.input_index, e.order, innermost)}
    return blamed(e.stack, innermost)


def clause_at(section: str) -> Clause | None:
    """The registered clause of ``"MS-MQSD 3.2.5"`` and the like."""
    from mqspec.clauses import load_all

    document, _, number = section.partition(" ")
    return next((c for c in load_all() if c.document == document and c.section == number), None)


def decode_divergence(name: str, index: int, record: dict[str, Any], exc: DecodeError) -> Divergence:
    """Bytes a node sent that do not decode, blamed on the structure's section."""
    document, _, section = exc.section.partition(" ")
    return Divergence(index, name, "decode", f"{name} sends bytes that are not a valid message: {exc}",
                      actual=record["body"],
                      clause=clause_at(exc.section) or Clause(document, section, "(not registered)", ""),
                      diff=({"field": exc.field, "offset": exc.offset, "reason": exc.reason},))


#: iAckRequested as the AcknowledgmentRequested bits the message carries (E-053)
_ACK_BITS = {a: int(AckRequested.from_text(a.value)) for a in EffectAck}


@functools.lru_cache(maxsize=4096)
def _guid_text(guid: Guid) -> str:
    return str(guid)


memos.register_cache(_guid_text, "a GUID -> its text")


def _replication_queue_initialization() -> Any:
    from mqspec.refimpl.mqdsrp_common import replication_queue_initialization

    return replication_queue_initialization


def _json(e: Expected) -> dict[str, Any]:
    return to_json(e.message) if e.message is not None else e.fields


def _op(message: Any) -> int:
    return int(message.operation)


def _message_name(message: Any) -> str:
    return type(message).__name__ if message is not None else "a message"


def _strip(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k not in ("trace", "format", "event", "t", "node")}


_HANDLERS: dict[str, Callable[[NodeReplay, int, dict[str, Any]], None]] = {
    "start": NodeReplay.on_start,
    "crash": NodeReplay.on_crash,
    "clock": NodeReplay.on_clock,
    "client_request": NodeReplay.on_client_request,
    "request_completed": NodeReplay.on_request_completed,
    "receive": NodeReplay.on_receive,
    "send": NodeReplay.on_send,
    "timer": NodeReplay.on_timer,
    "directory": NodeReplay.on_directory,
    "snapshot": NodeReplay.on_snapshot,
    "handover": NodeReplay.on_handover,
    "datagram": NodeReplay.on_ignore,  # the checker takes these itself (codec level)
    "notification": NodeReplay.on_ignore,
}
_RUN_CODE = NodeReplay._run.__code__
_NO_STACKS = itertools.repeat(None)
