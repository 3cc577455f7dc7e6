"""Running a validated scenario (:mod:`mqspec.refimpl.scenario`) on a deterministic World.

:func:`run` builds the enterprise, performs each step and evaluates each ``expect``; it raises
only a ScenarioError for a run whose steps pass ``MAX_RUN_SECONDS`` of simulated time, and
never for what happens inside the run: a failed assertion, a request that ends with another
status than the one expected, or a step the state at that point does not allow (restarting a
node that is up, a queue whose machine the server does not know) is a failure line naming the
step, and the run goes on. Same scenario, mode and seed give the same trace, state and result.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

import attrs
from mqspec.model.errors import ModelError
from mqspec.model.guid import Guid
from mqspec.model.propids import PROPIDS, ObjectType
from mqspec.wording import plural

from . import status as st
from .effects import Mode
from .mqds import ClientRequest, default_scope
from .mqdsrp_state import PEC_PARTITION_ID, QueueManager
from .scenario import (
    ENTERPRISE,
    ENTERPRISE_TYPES,
    MAX_RUN_SECONDS,
    MAX_SEQ,
    Condition,
    Scenario,
    ScenarioError,
    Step,
    operation_name,
)
from .scenario_match import Carrying, carries
from .transport import AckRequested, MessageClass, MsmqMessage, replication_queue_direct
from .world import (
    World,
    add_bsc,
    add_site,
    bootstrap_pec,
    convergence_problems,
    published_snapshot,
    create_machine,
)

PROPID_NAMES = {pdef.propid: name for name, pdef in PROPIDS.items()}
#: how the enterprise build settles between its steps unless the file says otherwise: the build
#: needs only message round trips and propagation timers (10 s), not a SeqNumberHeader round
BUILD_SETTLE = {"window": 10.0, "quiet": 30.0, "limit": 3600.0}


class StepFailed(Exception):
    """A step could not be performed in the state the run reached."""


class MessageCounter:
    """Counts replication messages and directory events from the World's trace records."""

    def __init__(self) -> None:
        self.received: Counter[tuple[str, str, int]] = Counter()
        self.sent: Counter[tuple[str, str, int]] = Counter()
        self.directory: Counter[tuple[str, str]] = Counter()
        #: mark name -> the three counters as they were at the ``mark`` step
        self.marks: dict[str, tuple[Counter, Counter, Counter]] = {}

    def mark(self, name: str) -> None:
        self.marks[name] = (Counter(self.received), Counter(self.sent), Counter(self.directory))

    def since(self, kind: str, mark: str | None) -> Counter:
        """The ``kind`` counter (received | sent | directory) from the build, or from the mark named ``mark``."""
        now: Counter = getattr(self, kind)
        if mark is None:
            return now
        before = self.marks[mark][("received", "sent", "directory").index(kind)]
        return now - before

    def __call__(self, record: Mapping[str, Any]) -> None:
        event = record.get("event")
        if event == "receive" and record.get("class") == 0:
            if len(record["body"]) >= 36:  # raw bytes of a ``send`` step may hold no Operation
                self.received[(record["node"], record["from"], int(record["body"][34:36], 16))] += 1
        elif event == "send":
            self.sent[(record["node"], record["to"], int(record["body"][34:36], 16))] += 1
        elif event == "directory":
            self.directory[(record["node"], record["operation"])] += 1
        elif event == "timer_skipped":  # the fast path (refimpl/fastpath.py): a message not sent
            self.sent[(record["node"], record["to"], record["operation"])] += 1
        elif event == "receive_skipped":
            self.received[(record["node"], record["from"], record["operation"])] += 1


@attrs.define
class RunResult:
    """What a run produced: the world at the end and the failures met on the way."""

    scenario: Scenario
    mode: Mode
    seed: int
    world: World
    failures: list[str]
    counter: MessageCounter

    @property
    def problems(self) -> list[str]:
        return convergence_problems(self.world)

    @property
    def converged(self) -> bool:
        return not self.problems

    @property
    def trace_id(self) -> str:
        return trace_id(self.scenario.name, self.mode, self.seed)

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` output: convergence, simulated time, messages processed, every node's state
        (its sequence numbers decimal strings)."""
        problems = self.problems
        return {
            "scenario": self.scenario.name, "mode": self.mode.value, "seed": self.seed,
            "converged": not problems, "problems": problems, "failures": list(self.failures),
            "time": round(self.world.now, 6), "messages": self.world.messages_processed,
            "nodes": published_snapshot(self.world.snapshot()),
        }


def trace_id(name: str, mode: Mode, seed: int) -> str:
    """The id every trace line carries: the scenario file stem, the mode and the seed."""
    return f"{name}:{mode.value}:{seed}"


def run(scenario: Scenario, *, mode: Mode = Mode.CLARIFIED, seed: int = 0,
        trace: Callable[[dict[str, Any]], None] | None = None,
        attach: Callable[[World], None] | None = None, skip_idle_timers: bool = False) -> RunResult:
    """Build the enterprise and perform every step; ``trace`` receives every World trace record.

    ``attach`` is called with the new World before anything runs (to add observers, such as the
    published-trace recorder of mqspec.oracle.record). ``skip_idle_timers``: the fast path of
    refimpl/fastpath.py (the same states, expectations and invariant verdicts, fewer handler runs).
    """
    counter = MessageCounter()

    def on_record(record: dict[str, Any]) -> None:
        counter(record)
        if trace is not None:
            trace(record)

    world = World(mode=mode, seed=seed, trace=on_record, skip_idle_timers=skip_idle_timers)
    if attach is not None:
        attach(world)
    runner = _Runner(world, counter, scenario)
    runner.build()
    runner.steps(scenario.steps, iteration=())
    runner.finish()
    return RunResult(scenario, mode, seed, world, runner.failure_lines(), counter)


class _Runner:
    def __init__(self, world: World, counter: MessageCounter, scenario: Scenario) -> None:
        self.world = world
        self.counter = counter
        self.scenario = scenario
        #: (step, message) -> [the first iteration it happened in, how many times]: a failure
        #: repeated by a ``repeat`` is one line
        self.failures: dict[tuple[str, str], list[Any]] = {}
        #: (step, iteration, node, request number, expected status) not yet checked
        self.pending_status: list[tuple[str, tuple[int, ...], str, int, int]] = []
        #: (type, casefolded path) -> the GUID last seen for it: a deleted object keeps its name
        self.known: dict[tuple[int, str], Guid] = {}
        #: simulated time when the build ended: the steps may take MAX_RUN_SECONDS from there
        self.started = 0.0

    # --- the enterprise ---------------------------------------------------------------------

    def build(self) -> None:
        e = self.scenario.enterprise
        settle = {**BUILD_SETTLE, **e.settle}
        w = self.world
        sites = e.ordered_sites()
        w.note("step", step="enterprise")
        bootstrap_pec(w, e.pec, sites[0].name, e.name)
        w.settle(**settle)
        for site in sites[1:]:
            add_site(w, site.name, site.psc)
            w.settle(**settle)
        for site in sites:
            for bsc in site.bscs:
                add_bsc(w, site.name, bsc)
                w.settle(**settle)
        machines = [(site, m) for site in sites for m in site.machines]
        for site, machine in machines:
            create_machine(w, site.psc, machine, site.name)
        if machines:
            w.settle(**settle)
        self.started = w.now

    # --- steps ------------------------------------------------------------------------------

    def fail(self, where: str, iteration: tuple[int, ...], message: str) -> None:
        entry = self.failures.setdefault((where, message), [iteration, 0])
        entry[1] += 1

    def failure_lines(self) -> list[str]:
        lines = []
        for (where, message), (iteration, count) in self.failures.items():
            more = f" (and in {plural(count - 1, 'more iteration')})" if count > 1 else ""
            lines.append(f"{where}{_iteration(iteration)}: {message}{more}")
        return lines

    def steps(self, steps: tuple[Step, ...], iteration: tuple[int, ...]) -> None:
        for step in steps:
            self.world.note("step", step=f"{step.where}{_iteration(iteration)}")
            try:
                getattr(self, f"do_{step.kind}")(step.args, step.where, iteration)
            except StepFailed as exc:
                self.fail(step.where, iteration, str(exc))
            except ModelError as exc:
                self.fail(step.where, iteration, f"the simulator refused the step: {exc}")
            self.check_statuses(final=False)
            if self.world.now - self.started > MAX_RUN_SECONDS:
                raise ScenarioError(f"{step.where}{_iteration(iteration)}", f"stopped: the steps have run "
                                    f"{self.world.now - self.started:,.0f} simulated seconds, more than "
                                    f"{MAX_RUN_SECONDS:,} ({MAX_RUN_SECONDS / 86_400:g} days, the limit MAX_RUN_SECONDS)")

    def finish(self) -> None:
        self.check_statuses(final=True)

    def check_statuses(self, *, final: bool) -> None:
        still = []
        for where, iteration, node, number, expected in self.pending_status:
            got = self.world.results.get((node, number))
            if got is None:
                if final:
                    self.fail(where, iteration, f"expected status {st.status_name(expected)}, "
                              "but the request never completed")
                else:
                    still.append((where, iteration, node, number, expected))
            elif got != expected:
                self.fail(where, iteration, f"status {st.status_name(got)}, expected {st.status_name(expected)}")
        self.pending_status = still

    def _up(self, node: str) -> QueueManager:
        if not self.world.up.get(node):
            raise StepFailed(f"{node} is down")
        return self.world.nodes[node]

    def _partition_of(self, args: Mapping[str, Any], qm: QueueManager) -> Guid:
        """The partition a directory client's request goes to (see the module docstring)."""
        t: ObjectType = args["type"]
        if t in ENTERPRISE_TYPES:
            return PEC_PARTITION_ID
        if args["site"] is not None:
            return self.world.site_guid(args["site"])
        if t is ObjectType.MQDS_QUEUE and args["path"] is not None:
            machine = args["path"].split("\\", 1)[0]
            obj = qm.directory.find(path_name=machine, object_type=ObjectType.MQDS_MACHINE)
            if obj is None:
                raise StepFailed(f"machine {machine!r} is not in {qm.machine_name}'s directory: "
                                 "cannot tell the queue's site (give 'site')")
            return obj.partition_id
        obj = qm.directory.find(guid=args["guid"], path_name=args["path"], object_type=t)
        if obj is None:
            raise StepFailed(f"{_describe(args)} is not in {qm.machine_name}'s directory: "
                             "cannot tell its site (give 'site')")
        return obj.partition_id

    def _change(self, args: Mapping[str, Any], where: str, iteration: tuple[int, ...]) -> None:
        qm = self._up(args["at"])
        partition = self._partition_of(args, qm)
        t = args["type"]
        if args["operation"] == "delete":
            self._remember()
        request = ClientRequest(args["operation"], t, partition, path_name=args["path"], guid=args["guid"],
                                properties=args["properties"], scope=default_scope(t, partition))
        number = self.world.client_request(args["at"], request)
        if args["expect_status"] is not None:
            self.pending_status.append((where, iteration, args["at"], number, args["expect_status"]))

    do_create = do_update = do_delete = _change

    def do_add_site(self, args: Mapping[str, Any], where: str, iteration: tuple[int, ...]) -> None:
        add_site(self.world, args["site"], args["psc"])

    def do_add_bsc(self, args: Mapping[str, Any], where: str, iteration: tuple[int, ...]) -> None:
        from .handover import bsc_can_join

        if not bsc_can_join(self.world, args["site"]):
            raise StepFailed(f"site {args['site']} has no running PSC holding its partition to create the BSC's "
                             "machine object (settle after add_site)")
        add_bsc(self.world, args["site"], args["bsc"])

    def do_move_psc(self, args: Mapping[str, Any], where: str, iteration: tuple[int, ...]) -> None:
        from .handover import HandoverError, move_psc

        try:
            move_psc(self.world, args["site"], args["to"])
        except HandoverError as exc:
            raise StepFailed(str(exc)) from None

    def do_mark(self, args: Mapping[str, Any], where: str, iteration: tuple[int, ...]) -> None:
        self.counter.mark(args["name"])

    def do_settle(self, args: Mapping[str, Any], where: str, iteration: tuple[int, ...]) -> None:
        quiet = self.world.settle(**args)
        self.world.note("settled", quiet=quiet)

    def do_advance(self, args: Mapping[str, Any], where: str, iteration: tuple[int, ...]) -> None:
        self.world.advance(args["seconds"])

    def _fault(self, kind: str, args: Mapping[str, Any]) -> None:
        match = _matcher(args["from"], args["to"], args["operation"])
        if args.get("carrying") is not None:
            match = _carrying_matcher(match, args["carrying"], self.world)
        net = self.world.network
        if kind == "delay":
            net.delay(match, args["seconds"], times=args["times"])
        else:
            getattr(net, kind)(match, times=args["times"])

    def do_drop(self, args: Mapping[str, Any], where: str, iteration: tuple[int, ...]) -> None:
        self._fault("drop", args)

    def do_duplicate(self, args: Mapping[str, Any], where: str, iteration: tuple[int, ...]) -> None:
        self._fault("duplicate", args)

    def do_delay(self, args: Mapping[str, Any], where: str, iteration: tuple[int, ...]) -> None:
        self._fault("delay", args)

    def do_tamper(self, args: Mapping[str, Any], where: str, iteration: tuple[int, ...]) -> None:
        self._fault("tamper", args)

    def do_send(self, args: Mapping[str, Any], where: str, iteration: tuple[int, ...]) -> None:
        send_raw(self.world, args["from"], args["to"], args["body"], AckRequested.from_text(args["ack"]))

    def do_partition(self, args: Mapping[str, Any], where: str, iteration: tuple[int, ...]) -> None:
        self.world.network.partition(args["a"], args["b"])

    def do_heal(self, args: Mapping[str, Any], where: str, iteration: tuple[int, ...]) -> None:
        self.world.network.heal(args["a"], args["b"])

    def do_crash(self, args: Mapping[str, Any], where: str, iteration: tuple[int, ...]) -> None:
        self._up(args["node"])
        self.world.crash(args["node"], lose=args["lose"])

    def do_restart(self, args: Mapping[str, Any], where: str, iteration: tuple[int, ...]) -> None:
        if self.world.up.get(args["node"]):
            raise StepFailed(f"{args['node']} is already running")
        self.world.restart(args["node"])

    def do_repeat(self, args: Mapping[str, Any], where: str, iteration: tuple[int, ...]) -> None:
        for i in range(args["times"]):
            steps = args["steps"] if args.get("iterations") is None else args["iterations"][i]
            self.steps(steps, iteration=(*iteration, i + 1))

    # --- expect -------------------------------------------------------------------------------

    def do_expect(self, args: Mapping[str, Any], where: str, iteration: tuple[int, ...]) -> None:
        self._remember()
        for kind, at, check in args["checks"]:
            label = at.removeprefix(where + ".")
            nodes = check.get("at")
            # a server the file names may never have been added (an add_bsc that failed)
            missing = [node for node in nodes if node not in self.world.nodes] if isinstance(nodes, tuple) else []
            for node in missing:
                self.fail(where, iteration, f"{label}: {node} is not a server in the enterprise now")
            if missing:
                check = {**check, "at": tuple(node for node in nodes if node not in missing)}
            for message in getattr(self, f"check_{kind}")(check):
                self.fail(where, iteration, f"{label}: {message}")

    def check_converged(self, check: Mapping[str, Any]) -> list[str]:
        problems = convergence_problems(self.world)
        if check["value"] and problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            return [f"not converged: {problems[0]}{more}"]
        if not check["value"] and not problems:
            return ["converged, but the scenario expects it not to"]
        return []

    def _site_partition_id(self, site: str) -> Guid:
        return PEC_PARTITION_ID if site == ENTERPRISE else self.world.site_guid(site)

    def check_partition(self, check: Mapping[str, Any]) -> list[str]:
        out = []
        for node in check["at"]:
            qm = self.world.nodes[node]
            p = qm.find_partition(self._site_partition_id(check["site"]))
            name = f"{node} partition {check['site']}"
            if p is None:
                if check["present"]:
                    out.append(f"{name} does not exist")
                continue
            if not check["present"]:
                out.append(f"{name} exists")
                continue
            values = {"last_seq": p.last_seq_number.value, "purged_seq": p.purged_seq_number.value,
                      "allowed_purge_seq": p.allowed_purge_seq_number.value}
            for key, value in values.items():
                cond: Condition | None = check.get(key)
                if cond is not None and not cond.holds(value):
                    out.append(f"{name} {key} is {value}, expected {cond}")
            if "purge_state" in check and p.purge_state.name != check["purge_state"]:
                out.append(f"{name} purge_state is {p.purge_state.name}, expected {check['purge_state']}")
            if "authority" in check and p.authority_name != check["authority"]:
                out.append(f"{name} authority is {p.authority_name}, expected {check['authority']}")
            if "pending" in check and not check["pending"].holds(len(p.pending_changes)):
                out.append(f"{name} has {plural(len(p.pending_changes), 'pending change')}, expected {check['pending']}")
            window = p.change_missing_window.value
            if "window" in check and not check["window"].holds(window):
                shown = "MAX" if window == MAX_SEQ else window
                out.append(f"{name} ChangeMissingWindow is {shown}, expected {check['window']}")
        return out

    def _remember(self) -> None:
        """Note the GUID of every object by name, so a tombstone can be found by the path it had."""
        for qm in self.world.nodes.values():
            for obj in qm.directory.objects.values():
                if obj.path_name is not None:
                    self.known[(obj.object_type, obj.path_name.casefold())] = obj.guid

    def _guid_of(self, check: Mapping[str, Any]) -> Guid | None:
        if check["guid"] is not None:
            return check["guid"]
        return self.known.get((int(check["type"]), check["path"].casefold()))

    def check_object(self, check: Mapping[str, Any]) -> list[str]:
        out = []
        for node in check["at"]:
            qm = self.world.nodes[node]
            obj = qm.directory.find(guid=check["guid"], path_name=check["path"], object_type=check["type"])
            name = f"{node}: {_describe(check)}"
            if obj is None:
                if check["present"]:
                    out.append(f"{name} is not in the directory")
            elif not check["present"]:
                out.append(f"{name} is in the directory (seq {obj.seq_number.value})")
            elif check.get("seq") is not None and not check["seq"].holds(obj.seq_number.value):
                out.append(f"{name} has seq {obj.seq_number.value}, expected {check['seq']}")
            else:
                for prop in check.get("properties", ()):
                    have = obj.properties.get(prop.propid)
                    if have != prop.value:
                        out.append(f"{name} has {PROPID_NAMES.get(prop.propid, prop.propid)} {have!r}, "
                                   f"expected {prop.value!r}")
        return out

    def check_neighbor(self, check: Mapping[str, Any]) -> list[str]:
        out = []
        for node in check["at"]:
            qm = self.world.nodes[node]
            found = [n for n in (*qm.psc_neighbors, *qm.bsc_neighbors)
                     if n.machine_name.casefold() == check["name"].casefold()]
            if not found:
                out.append(f"{node} has no neighbor {check['name']}")
            elif not check["available"].holds(len(found[0].available_changes)):
                out.append(f"{node}'s neighbor {check['name']} has "
                           f"{plural(len(found[0].available_changes), 'available change')}, expected {check['available']}")
        return out

    def check_node(self, check: Mapping[str, Any]) -> list[str]:
        out = []
        for node in check["at"]:
            have = self.world.nodes[node].my_psc_name
            if (have or "").casefold() != check["my_psc_name"].casefold():
                out.append(f"{node} MyPSCName is {have}, expected {check['my_psc_name']}")
        return out

    def check_tombstone(self, check: Mapping[str, Any]) -> list[str]:
        guid = self._guid_of(check)
        out = []
        for node in check["at"]:
            qm = self.world.nodes[node]
            found = [d for d in qm.deleted_objects if guid is not None and d.identifier == guid]
            name = f"{node}: tombstone of {_describe(check)}"
            if check["present"] and not found:
                out.append(f"{name} is not in DeletedObjectCollection")
            elif check["present"] and check.get("seq") is not None and not check["seq"].holds(found[0].seq_number.value):
                out.append(f"{name} has seq {found[0].seq_number.value}, expected {check['seq']}")
            elif not check["present"] and found:
                out.append(f"{name} is still in DeletedObjectCollection (seq {found[0].seq_number.value})")
        return out

    def check_neighbors(self, check: Mapping[str, Any]) -> list[str]:
        out = []
        for node in check["at"]:
            qm = self.world.nodes[node]
            for key, have in (("psc", qm.psc_neighbors), ("bsc", qm.bsc_neighbors)):
                if key in check:
                    names = sorted(n.machine_name for n in have)
                    if names != sorted(check[key]):
                        out.append(f"{node} {key} neighbors are {names}, expected {sorted(check[key])}")
        return out

    def _messages(self, check: Mapping[str, Any], counts: Mapping[tuple[str, str, int], int], verb: str) -> list[str]:
        out = []
        op = int(check["operation"])
        for node in check["at"]:
            n = sum(c for (me, peer, o), c in counts.items()
                    if me == node and o == op and (check["peer"] is None or peer.casefold() == check["peer"].casefold()))
            if not check["count"].holds(n):
                peer = f" {'from' if verb == 'received' else 'to'} {check['peer']}" if check["peer"] else ""
                out.append(f"{node} {verb} {n} {operation_name(check['operation'])}{peer}, expected {check['count']}")
        return out

    def check_received(self, check: Mapping[str, Any]) -> list[str]:
        return self._messages(check, self.counter.since("received", check["since"]), "received")

    def check_sent(self, check: Mapping[str, Any]) -> list[str]:
        return self._messages(check, self.counter.since("sent", check["since"]), "sent")

    def check_directory(self, check: Mapping[str, Any]) -> list[str]:
        out = []
        counts = self.counter.since("directory", check["since"])
        for node in check["at"]:
            n = counts[(node, check["operation"])]
            if not check["count"].holds(n):
                out.append(f"{node} raised {plural(n, 'directory ' + check['operation'] + ' event')}, "
                           f"expected {check['count']}")
        return out


def _iteration(iteration: tuple[int, ...]) -> str:
    """" (iteration 3.77)": the 77th run of an inner repeat in the 3rd run of the outer one."""
    return f" (iteration {'.'.join(map(str, iteration))})" if iteration else ""


def _describe(args: Mapping[str, Any]) -> str:
    t = args["type"].name.removeprefix("MQDS_").lower()
    return f"{t} {args['path']}" if args.get("path") is not None else f"{t} {args['guid']}"


def send_raw(world: World, source: str, destination: str, body: bytes,
             ack: AckRequested = AckRequested.NONE) -> None:
    """Send ``body`` as a Normal Express message to ``destination``'s replication queue (the ``send`` step); with
    ``ack``, its acknowledgments go to ``source``'s replication queue."""
    if not world.up.get(source):
        raise StepFailed(f"{source} is down and cannot send")
    admin = None if ack is AckRequested.NONE else replication_queue_direct(source)
    world.network.send(MsmqMessage(source_machine=source, destination_machine=destination,
                                   destination_format_name=replication_queue_direct(destination), body=body,
                                   ack_requested=ack, admin_queue=admin))


def _carrying_matcher(match: Callable[[MsmqMessage], bool], carrying: Carrying,
                      world: World) -> Callable[[MsmqMessage], bool]:
    """``match`` narrowed to the messages whose decoded content holds what ``carrying`` asks."""
    partition = None
    if carrying.site is not None:
        partition = PEC_PARTITION_ID if carrying.site == ENTERPRISE else world.site_guid(carrying.site)

    def narrowed(msg: MsmqMessage) -> bool:
        return match(msg) and carries(msg.body, carrying, partition)

    return narrowed


def _matcher(source: str | None, destination: str | None, operation: object) -> Callable[[MsmqMessage], bool]:
    """Which messages a drop / duplicate / delay fault applies to (replication messages only, not acks)."""
    src = source.casefold() if source else None
    dst = destination.casefold() if destination else None
    op = int(operation) if operation is not None else None  # type: ignore[call-overload]

    def match(msg: MsmqMessage) -> bool:
        if msg.klass is not MessageClass.NORMAL:
            return False
        if src is not None and msg.source_machine.casefold() != src:
            return False
        if dst is not None and msg.destination_machine.casefold() != dst:
            return False
        return op is None or (len(msg.body) > 17 and msg.body[17] == op)

    match.pure = match  # type: ignore[attr-defined]  # it has no side effect (refimpl/fastpath.py may ask it)
    return match
