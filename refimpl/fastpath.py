"""The simulator's fast path: Change Propagation Timer firings that provably change nothing.

A PSC's Change Propagation Timer fires every 2 s (intrasite) or 10 s (intersite) at every
neighbor, for ever (3.3.6.1). When the neighbor's AvailableChangeCollection is empty and no
SeqNumberHeader is due, the firing sends a ChangePropagationMessage with no change and no header
(3.3.7.2), which the neighbor's Receive Change Propagation (3.2.7.1) takes without changing
anything. With ``World(skip_idle_timers=True)`` such a firing is not run: the World re-arms the
timer exactly as the handler would (same delay, same place in the event order), and in place of
the message it schedules a :class:`QuietArrival` at the instant the message would have arrived.

Why the outcome is the same (``tests/refimpl/test_fastpath.py`` checks it on every scenario file
and on random runs of the replication machine, in both modes, invariant verdicts after every step):

* The firing is skipped only when it would send exactly that empty message: the neighbor is
  still in the list, its AvailableChangeCollection is empty, and a header was sent to it less
  than the header interval ago (in both readings, E-137: the server-wide time is never older
  than the per-neighbor one). The handler then changes nothing but the message and the timer.
* The message would travel untouched: no injected fault that matches it (asked without
  counting, as a fault counts the messages it acts on), no random loss (it draws from the network's generator), link up, destination running, within
  its TimeToReachQueue (:meth:`Network.quiet_arrival`); Change Propagation asks for no
  acknowledgment, so none would come back.
* At its arrival the receiver, running with its queue open, would take it at once and change
  nothing. If by then the receiver is down, its queue closed or the link cut, the real message
  is made after all (:meth:`Network.late_arrival`) and goes where it would have gone.
* Observers see the handler runs that did not happen through ``skipped(world, qm, event)`` (the
  ghost of :mod:`mqspec.proofs.ghost` counts the server as touched, as a run would). An observer
  without that method, such as the published-trace recorder, turns the fast path off: a trace
  that must show every timer event gets every one. The World's own trace records
  ``timer_skipped`` and ``receive_skipped`` where ``timer``/``send`` and ``receive`` would be.

* When the message would not travel untouched (a fault, a cut link, a stopped receiver, a
  machine nobody runs), the firing still skips the handler: the message it would send is the
  same every time (kept per sender and receiver), so it is handed to :meth:`Network.send` for
  real, the timer re-armed after it, as the handler's two effects would be (``World.firings_unrun``
  counts them; the World's trace shows the ``timer`` and ``send`` records the handler would give).
* A dequeued empty ChangePropagationMessage (:func:`is_empty_propagation`: no change, no header,
  whatever sent it) is taken without running 3.1.5.1: its processing reads nothing and changes
  nothing in any receiver state (trace: ``receive_skipped``).
* :func:`run_until` remembers what a skip found (the timer's neighbor, its last header, the link's
  latency; a receiver found running with its queue open) and skips the timer's next firings on
  that finding, posting the same events in the same order, until any handler runs or the call
  ends; the test compares the scheduler's whole queue with skipping each firing afresh.

What differs: message ids and the network's and World's message counters (the skipped messages
are counted in ``World.timers_skipped`` and ``World.messages_skipped`` instead).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from mqspec.model.mqdsrp import ChangePropagationMessage, Operation, SeqNumberHeader

from . import mqdsrp_client as client
from .effects import AckRequested, Context, TimerScope
from .mqdsrp_common import send_replication_message
from .mqdsrp_state import QueueManager

if TYPE_CHECKING:
    from .world import TimerFired, World

_INTERSITE = TimerScope.INTERSITE.value
#: TimeToReachQueue (and TimeToBeReceived) of a ChangePropagationMessage: "iTimeout := 20 * 60" (3.3.7.2)
PROPAGATION_TIMEOUT = 20 * 60
_PROPAGATION = int(Operation.CHANGE_PROPAGATION)
#: an empty ChangePropagationMessage: 18 bytes of BaseReplicationHeader, Flush, Count 0, an empty header
_EMPTY_LENGTH = 23
_EMPTY_TAIL = bytes(4)


def fast_path_open(world: World) -> bool:
    """Whether skipping is allowed now: asked for, and every observer can be told of a skip."""
    if not world.skip_idle_timers:
        return False
    for observer in world.observers:
        if not hasattr(observer, "skipped"):
            return False
    return True


def run_until(world: World, until: float) -> int:
    """:meth:`World.run_until` on the fast path: a firing found idle is skipped again at no cost.

    Once :func:`skip_idle_propagation` has found a timer's firing idle, what it looked at can only
    change when a handler runs (at any server: :meth:`World._run` forgets every such finding) or
    between two calls (inputs: faults, cut links, crashes), so until then each later firing of that
    timer is skipped on the finding, doing exactly what the skip does (the same events posted in
    the same order), as long as its SeqNumberHeader is not due. The same goes for a quiet arrival
    at a receiver found running with its queue open and its link up; when no trace is kept, a
    skipped firing's arrival at such a receiver due before ``until`` is taken at once instead of
    queued (only inputs, between calls, can change what the receiver would do with it), which
    changes nothing but the order of the counts within the call.
    """
    sched = world.scheduler
    pop = sched.pop_due
    post = sched.post
    schedule = sched.schedule
    dispatch = world._dispatch
    idle = world.idle_runs
    idle.clear()
    observers = world.observers
    timers = world._timers
    header_interval = client.SEQ_NUMBER_HEADER_INTERVAL
    tracing = world.tracing
    fired = 0
    while (due := pop(until)) is not None:
        fired += 1
        event = due[1]
        if type(event) is QuietArrival:
            qm = idle.get((event.source, event.destination))
            if qm is not None:
                _quiet_receipt(world, qm, event.source)
                continue
        else:
            run = idle.get(id(event))
            if run is not None and run.fired is event and due[0] - run.last < header_interval:
                now = due[0]
                at = now + run.latency
                if run.sent is not None:
                    _send_unrun(world, run, event)
                    continue
                if not at > now + PROPAGATION_TIMEOUT:
                    receiver = idle.get((run.source, run.destination)) if at <= until and not tracing else None
                    if receiver is None:
                        arrival = QuietArrival(run.source, run.destination, run.site, run.sender, now)
                        arrival.epoch = run.epoch
                        post(at, arrival)
                    timers[run.key] = schedule(now + run.interval, event)
                    world.timers_skipped += 1
                    for observer in observers:
                        observer.skipped(world, run.qm, run.event)
                    if tracing:
                        _note_skipped_firing(world, event, run.destination)
                    if receiver is not None:
                        # the receiver was found taking these quietly, and nothing within one call can stop
                        # it, close its queue or cut its link (only inputs do): the arrival, due before the
                        # call ends, is taken now (an untraced run: a trace would show it at its time)
                        _quiet_receipt(world, receiver, run.source)
                        fired += 1
                    continue
        dispatch(event)
    if sched.now < until < math.inf:
        sched.advance_to(until)
    return fired


class _IdleRun:
    """What a skipped firing found, for :func:`run_until` to skip the timer's next firings on."""

    __slots__ = ("fired", "key", "qm", "event", "source", "destination", "site", "sender", "epoch", "latency", "last",
                 "interval", "sent")

    def __init__(self, qm: QueueManager, event: TimerFired, destination: str, epoch: int, latency: float,
                 last: float, interval: float) -> None:
        self.fired = event
        self.key = (event.node, event.timer)
        self.qm = qm
        self.event = ("timer", event.timer)
        self.source = qm.machine_name
        self.destination = destination
        self.site = qm.site_identifier
        self.sender = qm.identifier
        self.epoch = epoch
        self.latency = latency
        self.last = last
        self.interval = interval
        #: (EnqueueMessage, MSMQ message) when the firing's message must travel for real, else None
        self.sent: tuple[Any, Any] | None = None


def skip_idle_propagation(world: World, qm: QueueManager, event: TimerFired) -> bool:
    """Skip this Change Propagation Timer firing if it provably changes nothing; True if skipped."""
    neighbor_name, scope_value = event.timer.args
    intersite = scope_value == _INTERSITE
    for neighbor in qm.psc_neighbors if intersite else qm.bsc_neighbors:
        if neighbor.machine_name == neighbor_name:
            break
    else:
        return False  # the neighbor was removed: let the handler find out
    if neighbor_name is None:
        return False  # a PSC neighbor with no name (literal E-336): its messages go nowhere, the handler sends them
    if neighbor.available_changes:
        return False
    # a SeqNumberHeader is due unless one went to this neighbor less than the interval ago; the
    # literal reading's server-wide time is at least as recent as the per-neighbor one
    last = qm.last_seq_number_header_sent.get((neighbor_name, scope_value))
    now = world.now
    if last is None or now - last >= client.SEQ_NUMBER_HEADER_INTERVAL:
        return False
    if world.queue_managers.get(neighbor_name.casefold()) is not None:
        return False
    interval = client.CHANGE_PROPAGATION_INTERVAL[TimerScope.INTERSITE if intersite else TimerScope.INTRASITE]
    arrival = QuietArrival(qm.machine_name, neighbor_name, qm.site_identifier, qm.identifier, now)
    network = world.network
    quiet = None
    if neighbor_name in world.nodes:
        quiet = network.quiet_arrival(qm.machine_name, neighbor_name, PROPAGATION_TIMEOUT,
                                      lambda: _spared(world, arrival))
    if quiet is None:
        # something acts on the message on its way (a fault, a cut link, a stopped or unknown
        # receiver): it is sent for real, as the handler would send it, and only the handler is skipped
        unrun = _IdleRun(qm, event, neighbor_name, 0, 0.0, last, interval)
        unrun.sent = _probe(world, arrival)
        _send_unrun(world, unrun, event)
        world.idle_runs[id(event)] = unrun
        return True
    at, arrival.epoch = quiet
    # the order of the real firing: the message leaves (its arrival is scheduled), then the timer re-arms
    world.scheduler.post(at, arrival)
    world.rearm(event, interval)
    world.timers_skipped += 1
    for observer in world.observers:
        observer.skipped(world, qm, ("timer", event.timer))
    if world.tracing:
        _note_skipped_firing(world, event, neighbor_name)
    world.idle_runs[id(event)] = _IdleRun(qm, event, neighbor_name, arrival.epoch,
                                           network.link_latency(qm.machine_name, neighbor_name), last, interval)
    return True


def _send_unrun(world: World, run: _IdleRun, event: TimerFired) -> None:
    """What the handler of an idle firing does when its message must travel: send it, then re-arm."""
    effect, message = run.sent  # type: ignore[misc]
    if world.tracing:
        world.note_skip({"event": "timer", "node": event.node, "timer": event.timer.kind,
                         "args": list(event.timer.args)})
        world.note_skip({"event": "send", "node": effect.node, "to": effect.destination,
                         "priority": effect.priority, "timeout": effect.time_to_reach_queue,
                         "ack": effect.ack_requested.value, "body": message.body.hex()})
    world.network.send(message)
    world.rearm(event, run.interval)
    world.firings_unrun += 1
    for observer in world.observers:
        observer.skipped(world, run.qm, run.event)


def _note_skipped_firing(world: World, event: TimerFired, destination: str) -> None:
    world.note_skip({"event": "timer_skipped", "node": event.node, "timer": event.timer.kind,
                     "args": list(event.timer.args), "to": destination,
                     "operation": int(Operation.CHANGE_PROPAGATION)})


def _quiet_receipt(world: World, qm: QueueManager, source: str) -> None:
    world.messages_skipped += 1
    for observer in world.observers:
        observer.skipped(world, qm, ("receive", None))
    if world.tracing:
        world.note_skip({"event": "receive_skipped", "node": qm.machine_name, "from": source,
                         "operation": int(Operation.CHANGE_PROPAGATION)})


def is_empty_propagation(body: bytes) -> bool:
    """Whether a Normal message's body is a ChangePropagationMessage with no change and no SeqNumberHeader.

    Version 0, any SiteID, Operation 0, a Flush byte, Count 0 and an empty header (3.1.4.x): its
    Receive Change Propagation (3.2.7.1) applies nothing and reads no header, whatever the
    receiver's state, and a Flush byte that does not decode is "take no further action" too.
    """
    return len(body) == _EMPTY_LENGTH and body[0] == 0 and body[17] == _PROPAGATION and body[19:] == _EMPTY_TAIL


def skip_empty_receipt(world: World, qm: QueueManager, message: Any) -> None:
    """A dequeued empty ChangePropagationMessage (:func:`is_empty_propagation`) is taken without running the handler."""
    world.messages_skipped += 1
    for observer in world.observers:
        observer.skipped(world, qm, ("receive", message))
    if world.tracing:
        world.note_skip({"event": "receive_skipped", "node": qm.machine_name, "from": message.source_machine,
                         "operation": int(Operation.CHANGE_PROPAGATION)})


class QuietArrival:
    """The empty ChangePropagationMessage of a skipped firing reaches its destination (a World event)."""

    __slots__ = ("source", "destination", "site", "sender", "sent_at", "epoch")

    def __init__(self, source: str, destination: str, site: Any, sender: Any, sent_at: float) -> None:
        self.source = source
        self.destination = destination
        self.site = site
        self.sender = sender
        self.sent_at = sent_at
        self.epoch = 0  # the sender's crash count when it sent (Network.quiet_arrival)

    def fire(self, world: World) -> None:
        """Take the message as the receiver would, or make the real one if it must go elsewhere."""
        name = self.destination
        qm = world.nodes.get(name)
        network = world.network
        if (qm is not None and world.up.get(name) and qm.replication_queue_open
                and not network.blocked(self.source, name)):
            _quiet_receipt(world, qm, self.source)
            world.idle_runs[(self.source, name)] = qm
            return
        world.arrived(network.late_arrival(self.message(world), self.sent_at, self.epoch))

    def message(self, world: World) -> Any:
        """The MSMQ message the skipped firing would have sent (3.3.7.2 with nothing to send)."""
        return _probe(world, self)[1]

    def effect(self, world: World) -> tuple[Any, Any]:
        """The EnqueueMessage of 3.3.7.2 with nothing to send, and its MSMQ message."""
        body = ChangePropagationMessage(self.site, False, (), SeqNumberHeader(None, ()))
        ctx = Context(self.source, world.mode, self.sent_at)
        send_replication_message(_Sender(self.source, self.sender), ctx, self.destination, body,  # type: ignore[arg-type]
                                 PROPAGATION_TIMEOUT, 3, AckRequested.NONE, None, None)
        return ctx.effects[0], world.message_of(ctx.effects[0])


def _probe(world: World, arrival: QuietArrival) -> tuple[Any, Any]:
    """The EnqueueMessage and the MSMQ message a skipped firing would send (kept: they never change)."""
    key = (arrival.source, arrival.destination, arrival.site, arrival.sender)
    cache = world.quiet_messages
    probe = cache.get(key)
    if probe is None:
        probe = cache[key] = arrival.effect(world)
    return probe


def _spared(world: World, arrival: QuietArrival) -> bool:
    """Whether no injected fault matches the skipped firing's message (kept while the faults are the same)."""
    network = world.network
    key = (arrival.source, arrival.destination, arrival.site, arrival.sender)
    faults = network.fault_generation
    known = world.quiet_verdicts.get(key)
    if known is None or known[0] != faults:
        known = world.quiet_verdicts[key] = (faults, network.spares(_probe(world, arrival)[1]))
    return known[1]


class _Sender:
    """The two attributes of a queue manager send_replication_message reads."""

    __slots__ = ("machine_name", "identifier")

    def __init__(self, machine_name: str, identifier: Any) -> None:
        self.machine_name = machine_name
        self.identifier = identifier
