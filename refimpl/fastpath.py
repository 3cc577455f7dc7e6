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

What differs: message ids and the network's and World's message counters (the skipped messages
are counted in ``World.timers_skipped`` and ``World.messages_skipped`` instead).
"""

from __future__ import annotations

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


def fast_path_open(world: World) -> bool:
    """Whether skipping is allowed now: asked for, and every observer can be told of a skip."""
    return world.skip_idle_timers and all(hasattr(o, "skipped") for o in world.observers)


def skip_idle_propagation(world: World, qm: QueueManager, event: TimerFired) -> bool:
    """Skip this Change Propagation Timer firing if it provably changes nothing; True if skipped."""
    neighbor_name, scope_value = event.timer.args
    intersite = scope_value == _INTERSITE
    for neighbor in qm.psc_neighbors if intersite else qm.bsc_neighbors:
        if neighbor.machine_name == neighbor_name:
            break
    else:
        return False  # the neighbor was removed: let the handler find out
    if neighbor.available_changes:
        return False
    # a SeqNumberHeader is due unless one went to this neighbor less than the interval ago; the
    # literal reading's server-wide time is at least as recent as the per-neighbor one
    last = qm.last_seq_number_header_sent.get((neighbor_name, scope_value))
    now = world.now
    if last is None or now - last >= client.SEQ_NUMBER_HEADER_INTERVAL:
        return False
    if neighbor_name not in world.nodes or world.queue_managers.get(neighbor_name.casefold()) is not None:
        return False
    arrival = QuietArrival(qm.machine_name, neighbor_name, qm.site_identifier, qm.identifier, now)
    quiet = world.network.quiet_arrival(qm.machine_name, neighbor_name, PROPAGATION_TIMEOUT,
                                        lambda: _probe(world, arrival))
    if quiet is None:
        return False
    at, arrival.epoch = quiet
    # the order of the real firing: the message leaves (its arrival is scheduled), then the timer re-arms
    world.scheduler.post(at, arrival)
    world.rearm(event, client.CHANGE_PROPAGATION_INTERVAL[TimerScope.INTERSITE if intersite else TimerScope.INTRASITE])
    world.timers_skipped += 1
    for observer in world.observers:
        observer.skipped(world, qm, ("timer", event.timer))
    if world.tracing:
        world.note_skip({"event": "timer_skipped", "node": qm.machine_name, "timer": event.timer.kind,
                         "args": list(event.timer.args), "to": neighbor_name,
                         "operation": int(Operation.CHANGE_PROPAGATION)})
    return True


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
            world.messages_skipped += 1
            for observer in world.observers:
                skipped = getattr(observer, "skipped", None)
                if skipped is not None:
                    skipped(world, qm, ("receive", None))
            if world.tracing:
                world.note_skip({"event": "receive_skipped", "node": name, "from": self.source,
                                 "operation": int(Operation.CHANGE_PROPAGATION)})
            return
        world.arrived(network.late_arrival(self.message(world), self.sent_at, self.epoch))

    def message(self, world: World) -> Any:
        """The MSMQ message the skipped firing would have sent (3.3.7.2 with nothing to send)."""
        body = ChangePropagationMessage(self.site, False, (), SeqNumberHeader(None, ()))
        ctx = Context(self.source, world.mode, self.sent_at)
        send_replication_message(_Sender(self.source, self.sender), ctx, self.destination, body,  # type: ignore[arg-type]
                                 PROPAGATION_TIMEOUT, 3, AckRequested.NONE, None, None)
        return world.message_of(ctx.effects[0])


def _probe(world: World, arrival: QuietArrival) -> Any:
    """The message a skipped firing would send, for the network's faults to look at (kept: it never changes)."""
    key = (arrival.source, arrival.destination, arrival.site, arrival.sender)
    cache = world.quiet_messages
    message = cache.get(key)
    if message is None:
        message = cache[key] = arrival.message(world)
    return message


class _Sender:
    """The two attributes of a queue manager send_replication_message reads."""

    __slots__ = ("machine_name", "identifier")

    def __init__(self, machine_name: str, identifier: Any) -> None:
        self.machine_name = machine_name
        self.identifier = identifier
