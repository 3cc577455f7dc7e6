"""ReplicationMachine: a hypothesis state machine over a simulated MSMQ enterprise, with fault injection.

The enterprise (drawn by the one ``@initialize`` rule): one PEC, one to three PSCs counting the
PEC, zero to two BSCs per site, one directory client machine per site. The rules are what can
happen to it: directory client requests at any running server (create / update / delete of
queues, machines, sites, users, connected networks, routing links, and updates of the enterprise
and of a site's PSC), bursts of updates at an authority (the purge machinery only acts after
1024 changes, E-130 / E-140), delivering messages and firing timers (advancing the clock a
little or a lot), dropping, duplicating and delaying (reordering) messages, cutting links (whose
held messages time out into Nacks), crashes with loss of volatile state or (at a BSC) of all
replication state, restarts, and a settle. After every step each invariant of
:mod:`mqspec.proofs.invariants` is checked by an ``@invariant()`` method of the same name; after a
settle, and at the end of every run (``teardown``: heal, restart, settle), the quiescence
invariants too: every replica equals its authority, no lingering deleted objects, every
partition NORMAL.

Every step is an input of :class:`~mqspec.proofs.explore.driver.Driver`, so a run's inputs replay it
exactly and :func:`~mqspec.proofs.explore.driver.write_scenario` turns a counterexample into a scenario
file for ``mqspec scenario run``.

The topology changes too: a site and its PSC added mid-run (4.1), a BSC added mid-run (4.2), a
site's PSC moved to a new machine (``move_psc``: the site object update, the authority handover
of :mod:`mqspec.refimpl.handover`, every server following by 3.1.7.2.11), and machine updates that
make a machine object a BSC or no longer one (3.1.7.2.12).

Modelling limits (said here, not hidden): the "change site psc" request names the site's own PSC
again, at the PEC (a request naming another machine, or one held in flight past a move, would make the
servers name a machine that is not the site's authority; a real move is the ``move_psc`` rule); loss of all replication state happens only at BSCs (an authority that
loses its LastSeqNumber reuses sequence numbers: 3.1.1 persists it, and MC-MQDSRP has no recovery
for its loss); sites created by a directory client's request name a PSC that is never installed
(their partitions have no running authority; deleting them exercises 3.1.7.2.7's site branch).
"""

from __future__ import annotations

import math
import os
import time
from typing import Any, ClassVar

import yaml
from hypothesis import Phase, settings
from hypothesis import strategies as st
from hypothesis.control import current_build_context
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)
from mqspec import memos
from mqspec.model.guid import Guid
from mqspec.model import mqdsrp
from mqspec.model.mqdsrp import (
    AlreadyPurgedMessage,
    BSCAckMessage,
    CompleteSync0,
    Operation,
    PSCAckMessage,
    Scope,
    SyncReplyMessage,
    SyncRequestMessage,
)
from mqspec.model.seqnum import SequenceNumber
from mqspec.proofs import invariants as inv
from mqspec.refimpl.effects import Mode
from mqspec.refimpl.handover import bsc_can_join
from mqspec.refimpl.mqdsrp_state import Role
from mqspec.refimpl.scenario import operation_name

from .driver import Driver, enterprise_input
from .minimize import minimize, scenario_for, settle_phase
from .steering import Steering

#: rule weights are expressed by registering a rule under several names (hypothesis draws rules uniformly)
REQUEST_KINDS = (
    "create queue", "update queue", "delete queue",
    "create machine", "update machine", "delete machine",
    "create user", "update user", "delete user",
    "create cn", "update cn", "delete cn",
    "create routinglink", "update routinglink", "delete routinglink",
    "create site", "update site", "change site psc", "delete site",
    "update enterprise",
)
SMALL_ADVANCES = (0.01, 0.05, 0.1, 0.5)
TIMER_ADVANCES = (2.0, 10.0, 30.0)
BURSTS = (32, 300, 1100)
#: what a purge round adds to the rebuilt BSC's way through sync0: the AlreadyPurged duplicated (3.3.7.7's
#: guards), the BSC cut off (its state kept) during the bursts instead of rebuilt (its tombstones reset,
#: 3.3.7.10), its first SyncReplies or its sync0 reply lost or its link to the PSC cut past the requests'
#: 20 minutes (Nacks, 3.2.7.1's SeqNumberHeader guards), more changes after sync0 (3.1.7.2.9's replica guard);
#: or the enterprise partition purged and a BSC of another site rebuilt from its PSC's replica (E-314)
PURGE_VARIANTS = ("rebuilt", "duplicate AlreadyPurged", "cut off during the bursts", "first replies lost",
                  "sync0 reply lost", "link cut", "more changes", "enterprise")
OPERATION_NAMES = (None, *(operation_name(op) for op in Operation))


#: (mode, PSCs, BSCs per site) -> the built enterprise every run of that shape starts from a copy of
_BUILT: dict[tuple[Any, ...], Driver] = {}
memos.register(f"{__name__}._BUILT", "(mode, reading, fast path, recording, PSCs, BSCs) -> the built enterprise", _BUILT)


def _stranger_ack(world: Any, source: str, target: str) -> bytes:
    """A BSCAck from a machine that is no BSC neighbor of anyone (3.2.7.5 ignores it)."""
    return mqdsrp.encode(BSCAckMessage(world.site_guid("site0"), Guid.from_name("qm:stranger"), "stranger"))


def _psc_ack_unowned(world: Any, source: str, target: str) -> bytes:
    """A PSCAck for a partition nobody owns (3.2.7.4 takes no action)."""
    site = Guid.from_name("site:nowhere")
    return mqdsrp.encode(PSCAckMessage(site, site, site, SequenceNumber(1), source))


def _sync_request_unknown(world: Any, source: str, target: str) -> bytes:
    """A SyncRequest for a partition no server has (3.2.7.3: "If dirPartition is not found: Take no further action")."""
    return mqdsrp.encode(SyncRequestMessage(world.site_guid("site0"), Guid.from_name("site:nowhere"), SequenceNumber(0),
                                            SequenceNumber(0), SequenceNumber(0), False, Scope.ENTERPRISE, source))


def _sync_reply_unknown(world: Any, source: str, target: str) -> bytes:
    """A SyncReply for a partition the receiver does not hold (3.3.7.5: "If dirPartition is not found")."""
    return mqdsrp.encode(SyncReplyMessage(world.site_guid("site0"), Guid.from_name("site:nowhere"), SequenceNumber(0),
                                          SequenceNumber(0), SequenceNumber(0), CompleteSync0.NOT_IN_SYNC0, ()))


def _already_purged_unknown(world: Any, source: str, target: str) -> bytes:
    """An AlreadyPurged for a partition the receiver does not hold (3.3.7.7 takes no action)."""
    return mqdsrp.encode(AlreadyPurgedMessage(world.site_guid("site0"), Guid.from_name("site:nowhere"),
                                              SequenceNumber(1)))


def _purged_partitions(world: Any, target: str) -> list[Any]:
    """The partitions a running ``target`` has purged (the stale messages below are truthful only about those)."""
    qm = world.nodes.get(target)
    if qm is None or not world.up.get(target):
        return []
    return [p for p in qm.partitions if p.purged_seq_number != SequenceNumber(0)]


def _stale_sync_reply(world: Any, source: str, target: str) -> bytes:
    """A late empty SyncReply from before the receiver purged a partition (3.3.7.5 drops a reply whose
    PurgedSeqNumber is below the partition's); sent only where it is that stale."""
    purged = _purged_partitions(world, target)
    if not purged:
        return _sync_reply_unknown(world, source, target)
    return mqdsrp.encode(SyncReplyMessage(world.site_guid("site0"), purged[0].partition_id, SequenceNumber(0),
                                          SequenceNumber(0), SequenceNumber(0), CompleteSync0.NOT_IN_SYNC0, ()))


def _stale_already_purged(world: Any, source: str, target: str) -> bytes:
    """A late AlreadyPurged repeating a purge point the receiver has reached (3.3.7.7: "If
    dirPartition.LastSeqNumber >= ... PurgedSeqNumber": no action)."""
    purged = _purged_partitions(world, target)
    if not purged:
        return _already_purged_unknown(world, source, target)
    return mqdsrp.encode(AlreadyPurgedMessage(world.site_guid("site0"), purged[0].partition_id,
                                              purged[0].purged_seq_number))


#: the bodies of the ``send_strange`` rule: name -> (world, sender, receiver) -> bytes
STRANGE_BODIES = {
    "empty": lambda world, source, target: b"",
    "version 1": lambda world, source, target: bytes([1]) + bytes(40),
    "unknown operation": lambda world, source, target: bytes(17) + bytes([0x7F]) + bytes(20),
    "truncated": lambda world, source, target: _sync_request_unknown(world, source, target)[:30],
    "stranger BSCAck": _stranger_ack,
    "PSCAck for nobody's partition": _psc_ack_unowned,
    "SyncRequest for an unknown partition": _sync_request_unknown,
    "SyncReply for an unknown partition": _sync_reply_unknown,
    "AlreadyPurged for an unknown partition": _already_purged_unknown,
    "stale SyncReply": _stale_sync_reply,
    "stale AlreadyPurged": _stale_already_purged,
}


class InvariantViolation(AssertionError):
    """An invariant failed after a step: its name, the step and the violations."""

    def __init__(self, name: str, step: str, problems: list[str]) -> None:
        shown = "\n  ".join(problems[:8]) + (f"\n  ... and {len(problems) - 8} more" if len(problems) > 8 else "")
        super().__init__(f"invariant {name} is violated after {step}:\n  {shown}")
        self.name = name
        self.step = step
        self.problems = problems


class Stats:
    """Counts shared by every run of a machine class (for the benchmark and the literal-mode report)."""

    def __init__(self) -> None:
        self.steps = 0
        self.runs = 0
        self.handler_runs = 0
        #: handler runs checked against the model (with REFINE; the build's counted once, like handler_runs)
        self.refinement_checks = 0
        #: invariant checkers run (each checked invariant once a step) and their CPU seconds
        self.invariant_checks = 0
        self.check_seconds = 0.0
        self.violations: list[tuple[str, str]] = []
        self.last_failure: list[dict[str, Any]] | None = None
        self.recorded: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]] = []


class ReplicationMachine(Steering, RuleBasedStateMachine):
    """An enterprise of MC-MQDSRP servers under client requests and network faults, checked every step."""

    MODE: ClassVar[Mode] = Mode.CLARIFIED
    #: the handlers read literally while the rest is clarified (proofs/explore/hunt.py sets it, and runs
    #: the machine inside proofs.counterexample_scenarios.literal_in); it keys the cache of built enterprises
    LITERAL_IN: ClassVar[tuple[str, ...]] = ()
    #: the invariants checked (all of them unless a subclass narrows it, e.g. to hunt one in literal mode)
    CHECKED: ClassVar[frozenset[str]] = frozenset(inv.NAMES)
    #: keep (inputs, trace) of every finished run in ``stats.recorded`` (the replay test sets it)
    RECORD: ClassVar[bool] = False
    #: settle arguments of the settles that end a run (None: World.settle's defaults); the
    #: literal machine bounds them, its sync-request storms make every simulated second cost
    FINAL_SETTLE: ClassVar[dict[str, float] | None] = None
    #: the World's fast path (refimpl/fastpath.py): idle Change Propagation Timer firings are skipped,
    #: with the same states and invariant verdicts (tests/refimpl/test_fastpath.py); a recording
    #: machine keeps every firing in its trace
    SKIP_IDLE_TIMERS: ClassVar[bool] = True
    #: check every handler run against the model (proofs/refinement: invariant handlers_refine_model); a
    #: machine reading some handlers literally in a clarified run (LITERAL_IN) has no model to check against.
    #: Off unless MQSPEC_REFINE=1 (it costs about three times the run: the default test tier cannot carry it);
    #: on in `mqspec prove`'s campaign and with bench/stateful.py --refine
    REFINE: ClassVar[bool] = os.environ.get("MQSPEC_REFINE", "") == "1"
    #: whether the 20-minute SeqNumberHeader waits are among the rules
    LONG_WAITS: ClassVar[bool] = True
    #: at least this many steps between bursts, between 20-minute waits, between mid-run settles
    #: (the three costly rules: a burst of 1100 changes or a SeqNumberHeader round costs about as
    #: much as a hundred other steps)
    BURST_EVERY: ClassVar[int] = 15
    WAIT_EVERY: ClassVar[int] = 25
    SETTLE_EVERY: ClassVar[int] = 40
    #: on the final (reported) run of a failure, shrink its inputs (at most this many seconds) and
    #: add them to the failure as a scenario file for ``mqspec scenario run``; 0 turns it off
    EXPLAIN_SECONDS: ClassVar[float] = 45.0
    #: topology changes per run: sites in all (the build's included), BSCs added, PSC moves
    MAX_SITES: ClassVar[int] = 5
    MAX_NEW_BSCS: ClassVar[int] = 3
    MAX_MOVES: ClassVar[int] = 3
    #: at least this many steps between topology changes (each new server costs a build's worth of messages)
    TOPOLOGY_EVERY: ClassVar[int] = 10
    #: at least this many steps between purge rounds (two bursts and a rebuilt BSC: the sync0 path)
    PURGE_EVERY: ClassVar[int] = 45
    stats: ClassVar[Stats] = Stats()

    def __init__(self) -> None:
        super().__init__()
        self.driver: Driver | None = None
        self.obs: Any = None
        self.step_label = "initialize"
        self.sites: list[dict[str, Any]] = []
        self.catalog: dict[str, list[dict[str, Any]]] = {}
        self.counter = 0
        self.steps_since_settle = 0
        self.cut: list[tuple[str, str]] = []
        self.steps_since_burst = 0
        self.steps_since_wait = 0
        #: the observation last checked, and the invariants it violates with their violations
        self._checked: Any = None
        self._problems: dict[str, list[str]] = {}
        self.failed = False
        self.bscs_added = 0
        self.moves = 0
        self.steps_since_topology = 0
        self.steps_since_purge_round = 0
        #: purge rounds that ran (a site whose PSC is never installed waits for the first: see _request_input)
        self.purge_rounds = 0
        #: the handler runs of the built enterprise this run's copy carries (not run again), and their checks
        self.copied_handler_runs = 0
        self.copied_refinement_checks = 0

    # --- the enterprise ---------------------------------------------------------------------

    @initialize(pscs=st.integers(1, 3), bscs=st.lists(st.integers(0, 2), min_size=3, max_size=3))
    def build(self, pscs: int, bscs: list[int]) -> None:
        """One PEC, ``pscs`` PSCs counting it, ``bscs[i]`` BSCs in site i, a client machine per site."""
        self.sites = []
        for i in range(pscs):
            psc = "PEC0" if i == 0 else f"PSC{i}"
            self.sites.append({"site": f"site{i}", "psc": psc, "bscs": [f"BSC{i}{j + 1}" for j in range(bscs[i])],
                               "machines": [f"C{i}"]})
        self.catalog = {"machine": [{"path": f"C{i}", "site": f"site{i}", "guid": str(Guid.from_name(f"qm:C{i}")),
                                     "fixed": True} for i in range(pscs)]}
        # building is deterministic: build each enterprise once and start every run from a copy
        skip = self.SKIP_IDLE_TIMERS and not self.RECORD
        refine = self.REFINE and not self.LITERAL_IN
        key = (self.MODE, self.LITERAL_IN, skip, self.RECORD, refine, pscs, tuple(bscs[:pscs]))
        built = _BUILT.get(key)
        fresh = built is None
        if fresh:
            # the World's trace is kept only for a recording machine (nothing else reads it)
            built = _BUILT[key] = Driver(self.MODE, skip_idle_timers=skip, trace=self.RECORD, refine=refine)
            built.apply(enterprise_input(self.sites))
        self.driver = built.copy()
        # the build's handler runs ran once, when it was built: a run from a copy counts only its own
        self.copied_handler_runs = 0 if fresh else self.driver.ghost.handler_runs  # type: ignore[union-attr]
        self.copied_refinement_checks = 0 if fresh else self._refinement_checks()
        self._observe(f"build {pscs} site(s), BSCs {bscs[:pscs]}", full=True)
        # a purge round may come at once: while every PSC neighbor is a running PSC that acknowledges, so that the
        # authority purges (3.1.7.2.9), and in an enterprise of one site while the PEC has no PSC neighbor (E-132;
        # the first add_site waits for TOPOLOGY_EVERY steps)
        self.steps_since_purge_round = self.PURGE_EVERY

    @property
    def world(self) -> Any:
        return self.driver.world  # type: ignore[union-attr]

    def _nodes(self) -> list[str]:
        return list(self.world.nodes)

    def _up(self) -> list[str]:
        return [n for n in self.world.nodes if self.world.up[n]]

    def _down(self) -> list[str]:
        return [n for n in self.world.nodes if not self.world.up[n]]

    def _apply(self, inp: dict[str, Any], label: str, *, full: bool = False) -> None:
        """Perform one input and take the step's observation for the invariant methods."""
        self.driver.apply(inp)  # type: ignore[union-attr]
        self._performed(inp, label, full=full)

    def _performed(self, inp: dict[str, Any], label: str | None = None, *, full: bool = False) -> None:
        """An input was performed: count the step and observe it (a quiescent settle: quiescence too)."""
        if label is None:
            label = inp["input"] if inp["input"] != "restart" else f"restart {inp['node']}"
        self._observe(label, quiescent=bool(inp.get("quiescent")), full=full, kind=inp["input"],
                      seconds=inp.get("seconds", 0.0))

    def _observe(self, label: str, *, quiescent: bool = False, full: bool = False, kind: str = "enterprise",
                 seconds: float = 0.0) -> None:
        if self.obs is not None and self._checked is not self.obs:
            # an earlier input of the same rule (a purge round's, an added site's): hypothesis checks the
            # invariants only after the whole rule, so that input's step is checked before the next replaces it
            for name in inv.NAMES:
                self._fail(name)
        self.step_label = label
        stats = type(self).stats
        stats.steps += 1
        self.steps_since_settle = 0 if kind == "settle" else self.steps_since_settle + 1
        self.steps_since_burst = 0 if kind == "repeat" else self.steps_since_burst + 1
        topology = kind in ("add_site", "add_bsc", "move_psc")
        self.steps_since_topology = 0 if topology else self.steps_since_topology + 1
        self.steps_since_purge_round += 1
        self.steps_since_stale += 1
        self.steps_since_overtake += 1
        self.steps_since_pending += 1
        long_wait = kind == "settle" or (kind == "advance" and seconds >= 600)
        self.steps_since_wait = 0 if long_wait else self.steps_since_wait + 1
        self.obs = self.driver.ghost.observe(  # type: ignore[union-attr]
            label, quiescent=quiescent, full=full or quiescent, settled=self.driver.last_settle_quiet)  # type: ignore[union-attr]

    def _violated(self, name: str) -> bool:
        """Whether invariant ``name`` fails on the current step (every checker runs once per step)."""
        obs = self.obs
        if obs is None or name not in self.CHECKED:
            return False
        if self._checked is not obs:
            self._check(obs)
        return name in self._problems

    def _check(self, obs: Any) -> None:
        """Run every checked invariant's checker on ``obs`` and keep the violated ones' violations."""
        start = time.process_time()  # CPU seconds, as the benchmark's other figures (two calls a step)
        problems = {}
        checks = 0
        for invariant in inv.INVARIANTS:
            if invariant.name in self.CHECKED:
                checks += 1
                found = invariant.check(obs)
                if found:
                    problems[invariant.name] = found
        stats = type(self).stats
        stats.check_seconds += time.process_time() - start
        stats.invariant_checks += checks
        self._problems = problems
        self._checked = obs

    def _fail(self, name: str) -> None:
        """Raise the violations of ``name`` found on the current step (nothing when there are none)."""
        if not self._violated(name):
            return
        self.failed = True
        problems = self._problems[name]
        stats = type(self).stats
        stats.violations.append((name, self.step_label))
        inputs = list(self.driver.inputs)  # type: ignore[union-attr]
        stats.last_failure = inputs
        error = InvariantViolation(name, self.step_label, problems)
        if self.EXPLAIN_SECONDS and current_build_context().is_final:
            error.add_note(self._explain(name, inputs))
        raise error

    def _explain(self, name: str, inputs: list[dict[str, Any]]) -> str:
        """The failing run's inputs shrunk by delta debugging, as a scenario file."""
        try:
            small = minimize(inputs, name, self.MODE, settle=self.FINAL_SETTLE, budget=self.EXPLAIN_SECONDS,
                             skip_idle_timers=self.SKIP_IDLE_TIMERS)
        except ValueError:  # the violation needs this run's exact history (a copied build): keep it all
            small = inputs
        text = yaml.safe_dump(scenario_for(small, self.MODE, self.FINAL_SETTLE), sort_keys=False, width=110)
        return (f"The run's {len(inputs) - 1} inputs shrunk to {len(small) - 1} (as a scenario file for "
                f"`mqspec scenario run --mode {self.MODE.value}`; see proofs/explore/minimize.py):\n{text}")

    # --- directory clients ------------------------------------------------------------------

    def _new(self, stem: str) -> str:
        self.counter += 1
        return f"{stem}{self.counter}"

    def _pick(self, kind: str, which: int) -> dict[str, Any] | None:
        items = self.catalog.get(kind, [])
        return items[which % len(items)] if items else None

    def _request_input(self, kind: str, at: str, which: int, value: int) -> dict[str, Any]:
        """A concrete request for ``kind`` ("create queue", ...) at server ``at``."""
        operation, type_name = kind.split(" ", 1)
        real = self.sites[which % len(self.sites)]
        if type_name == "site psc":
            # at the PEC, the authority, so it applies at once: forwarded from elsewhere it could be
            # held (a cut link, a delay) past a later move_psc and name the old PSC again, an
            # administrator's stale update the protocol cannot tell from a real one
            if not self.world.up.get("PEC0"):
                return self._request_input("update site", at, which, value)
            site = self.sites[which % len(self.sites)]
            return {"input": "request", "at": "PEC0", "operation": "update", "type": "site", "path": site["site"],
                    "properties": {"PROPID_S_PSC": site["psc"]}}
        if type_name == "enterprise":
            props = {"PROPID_E_S_INTERVAL1": value} if value % 2 else {"PROPID_E_PECNAME": "PEC0"}
            return {"input": "request", "at": at, "operation": "update", "type": "enterprise", "path": "enterprise",
                    "properties": props}
        if operation != "create":
            entry = self._pick(type_name, which)
            if entry is None:
                return self._request_input(f"create {type_name}", at, which, value)
            inp: dict[str, Any] = {"input": "request", "at": at, "operation": operation, "type": type_name}
            by_guid = type_name in ("user", "routinglink") or (value % 3 == 0 and type_name != "site")
            if by_guid:
                inp["guid"] = entry["guid"]
            else:
                inp["path"] = entry["path"]
            if entry.get("site") is not None:
                inp["site"] = entry["site"]
            if operation == "update":
                inp["properties"] = _update_properties(type_name, value, entry)
            elif not entry.get("fixed"):
                entry["deleted"] = True
            return inp
        if type_name == "site" and not self.purge_rounds:
            # a site whose PSC is never installed is a PSC neighbor that never acknowledges: no authority purges
            # after its creation (3.1.7.2.9's minimum over every PSC's ack), so it waits for the run's first purge
            return self._request_input("update enterprise", at, which, value)
        name = self._new({"queue": "q", "machine": "M", "user": "u", "cn": "cn", "routinglink": "link",
                          "site": "xsite"}[type_name])
        guid = str(Guid.from_name(f"mqspec-stateful:{type_name}:{name}"))
        entry = {"path": name, "guid": guid, "site": None}
        inp = {"input": "request", "at": at, "operation": "create", "type": type_name}
        if type_name == "queue":
            machines = [m for m in self.catalog.get("machine", []) if not m.get("deleted")]
            machine = machines[which % len(machines)] if machines else {"path": "C0", "site": "site0"}
            entry.update(path=f"{machine['path']}\\{name}", site=machine["site"])
            # every scope: site (0), enterprise (1), none given (E-263: a PSC's sync used to leave
            # out all but enterprise-scope queues; scenarios/counterexamples/*-site-scope-queue.yaml)
            props = {"PROPID_Q_LABEL": name, "PROPID_Q_INSTANCE": guid}
            if value % 3 != 2:
                props["PROPID_Q_SCOPE"] = value % 3
        elif type_name == "machine":
            guid = str(Guid.from_name(f"qm:{name}"))
            entry.update(guid=guid, site=real["site"])
            props = {"PROPID_QM_PATHNAME": name, "PROPID_QM_SITE_ID": str(self.world.site_guid(real["site"])),
                     "PROPID_QM_SERVICE": 0, "PROPID_QM_MACHINE_ID": guid}
        elif type_name == "user":
            # a user with its identity alone (value 5) is synchronized with no property at all (E-124)
            props = {"PROPID_U_ID": guid} if value == 5 else {"PROPID_U_ID": guid, "PROPID_U_SID": f"{value:02x}"}
        elif type_name == "cn":
            props = {"PROPID_CN_PROTOCOLID": value, "PROPID_CN_GUID": guid}
        elif type_name == "routinglink":
            a = self.world.site_guid(self.sites[0]["site"])
            b = self.world.site_guid(real["site"])
            props = {"PROPID_L_ID": guid, "PROPID_L_NEIGHBOR1": str(a), "PROPID_L_NEIGHBOR2": str(b), "PROPID_L_COST": value}
        else:  # a site whose PSC is never installed
            guid = str(Guid.from_name(f"site:{name}"))
            entry.update(guid=guid)
            props = {"PROPID_S_PATHNAME": name, "PROPID_S_SITEID": guid, "PROPID_S_PSC": f"X{name}"}
        if type_name in ("user", "routinglink") and value % 2:
            entry["path"] = None  # no path name: named by its identity property (E-101 elsewhere, E-182 here)
        if entry["path"] is not None:
            inp["path"] = entry["path"]
        if entry["site"] is not None:
            inp["site"] = entry["site"]
        inp["properties"] = props
        self.catalog.setdefault(type_name, []).append(entry)
        return inp

    def _request(self, where: int, kind: str, which: int, value: int) -> None:
        up = self._up()
        if not up:
            return
        at = up[where % len(up)]
        inp = self._request_input(kind, at, which, value)
        self._apply(inp, f"{kind} at {at}")

    @rule(where=st.integers(0, 255), kind=st.sampled_from(REQUEST_KINDS), which=st.integers(0, 255),
          value=st.integers(0, 5))
    def request(self, where: int, kind: str, which: int, value: int) -> None:
        """A directory client's create, update or delete at a running server."""
        self._request(where, kind, which, value)

    @rule(where=st.integers(0, 255), kind=st.sampled_from(REQUEST_KINDS), which=st.integers(0, 255),
          value=st.integers(0, 5))
    def another_request(self, where: int, kind: str, which: int, value: int) -> None:
        """The same as ``request``: registered twice, client requests are drawn twice as often."""
        self._request(where, kind, which, value)

    @precondition(lambda self: self.steps_since_burst >= self.BURST_EVERY)
    @rule(which=st.integers(0, 255), size=st.sampled_from(BURSTS))
    def burst(self, which: int, size: int) -> None:
        """Many updates of one object at its authority (the workload that drives purging)."""
        candidates = [(k, e) for k in ("queue", "cn", "user") for e in self.catalog.get(k, []) if not e.get("deleted")]
        if not candidates:
            return self._request(0, "create queue", which, 0)
        kind, entry = candidates[which % len(candidates)]
        owner = "PEC0" if entry.get("site") is None else next(s["psc"] for s in self.sites if s["site"] == entry["site"])
        if not self.world.up[owner]:
            return None
        update = {"input": "request", "at": owner, "operation": "update", "type": kind,
                  "properties": _update_properties(kind, which, entry)}
        if kind == "user":
            update["guid"] = entry["guid"]
        else:
            update["path"] = entry["path"]
        if entry.get("site") is not None:
            update["site"] = entry["site"]
        self._apply({"input": "repeat", "times": size, "inputs": [update]}, f"burst of {size} {kind} updates at {owner}")
        return None

    # --- topology -----------------------------------------------------------------------------

    def _pec_up(self) -> bool:
        return any(self.world.up.get(n) for n, qm in self.world.nodes.items() if qm.role is Role.PEC)

    def _topology_due(self) -> bool:
        return self.driver is not None and self.steps_since_topology >= self.TOPOLOGY_EVERY

    @precondition(lambda self: self._topology_due() and len(self.sites) < self.MAX_SITES)
    @rule()
    def add_site(self) -> None:
        """A new site and its PSC join the enterprise (4.1): the PEC creates the site object, the PSC starts."""
        if not self._pec_up():
            return
        n = len(self.sites)
        site = {"site": f"site{n}", "psc": f"PSC{n}", "bscs": [], "machines": []}
        self.sites.append(site)
        self._apply({"input": "add_site", "site": site["site"], "psc": site["psc"]}, f"add site{n} (PSC{n})")
        # at once, a machine of the new site created at another PSC, which has not heard of the site's
        # partition yet: "Set rStatus to MQDS_UNKNOWN_SOURCE" (3.3.7.1)
        others = [s["psc"] for s in self.sites[1:-1] if self.world.up.get(s["psc"])]
        if others:
            at = others[n % len(others)]
            self._apply(self._request_input("create machine", at, n, 0), f"create machine of site{n} at {at}")

    @precondition(lambda self: self._topology_due() and self.bscs_added < self.MAX_NEW_BSCS)
    @rule(which=st.integers(0, 15))
    def add_bsc(self, which: int) -> None:
        """A BSC joins a site whose PSC is running (4.2): the PSC creates its machine object, the BSC starts."""
        site = self.sites[which % len(self.sites)]
        if not bsc_can_join(self.world, site["site"]):
            return
        self.bscs_added += 1
        bsc = self._new(f"BSC{site['site'].removeprefix('site')}n")
        site["bscs"].append(bsc)
        self._apply({"input": "add_bsc", "site": site["site"], "bsc": bsc}, f"add {bsc} to {site['site']}")

    @precondition(lambda self: self._topology_due() and len(self.sites) > 1 and self.moves < self.MAX_MOVES)
    @rule(which=st.integers(0, 15))
    def move_psc(self, which: int) -> None:
        """A site's PSC moves to a new machine: the handover, then the PEC's site object update (3.1.7.2.11)."""
        if not self._pec_up():
            return
        site = self.sites[1 + which % (len(self.sites) - 1)]
        self.moves += 1
        new = self._new(f"PSC{site['site'].removeprefix('site')}m")
        old = site["psc"]
        site["psc"] = new
        self._apply({"input": "move_psc", "site": site["site"], "to": new},
                    f"move {site['site']}'s PSC from {old} to {new}")

    @precondition(lambda self: self.driver is not None and self.steps_since_purge_round >= self.PURGE_EVERY)
    @rule(which=st.integers(0, 15), variant=st.sampled_from(PURGE_VARIANTS))
    def purge_round(self, which: int, variant: str) -> None:
        """Two bursts at a site's authority with acks between (it purges), then a BSC of the site loses everything.

        The rebuilt BSC asks from 0, gets AlreadyPurged and goes through sync0 (3.3.7.7, 3.3.7.10,
        3.3.7.11, 3.2.7.3's completing replies): the path no other rule reaches in a short run. The
        ``variant`` adds what makes that path's rarer branches run (:data:`PURGE_VARIANTS`).
        """
        if variant == "enterprise":
            return self._enterprise_purge_round(which)
        machines = {m["site"]: m for m in self.catalog.get("machine", []) if m.get("fixed")}
        ready = [s for s in self.sites if s["bscs"] and s["site"] in machines and self.world.up.get(s["psc"])]
        if not ready:
            return
        site = ready[which % len(ready)]
        psc, bsc = site["psc"], site["bscs"][which % len(site["bscs"])]
        self.steps_since_purge_round = 0
        self.purge_rounds += 1
        self._purge_window()
        update = {"input": "request", "at": psc, "operation": "update", "type": "machine",
                  "path": machines[site["site"]]["path"], "site": site["site"], "properties": {"PROPID_QM_QUOTA": which}}
        cut_off = variant == "cut off during the bursts"
        if cut_off:
            # a tombstone of the site partition reaches the BSC, which then misses the bursts (keeping its state)
            if not self.world.up.get(bsc):
                self._apply({"input": "restart", "node": bsc}, f"purge round: restart {bsc}")
            queue, kept = ({"input": "request", "at": psc, "type": "queue", "site": site["site"],
                            "path": f"{machines[site['site']]['path']}\\{self._new(stem)}"} for stem in ("purged", "renamed"))
            self._apply({**queue, "operation": "create", "properties": {"PROPID_Q_LABEL": "purged"}},
                        f"purge round: a queue at {psc}")
            self._apply({**kept, "operation": "create", "properties": {"PROPID_Q_LABEL": "kept"}},
                        f"purge round: another queue at {psc}")
            self._apply({**queue, "operation": "delete"}, f"purge round: the first one's deletion at {psc}")
            self._apply({"input": "advance", "seconds": 10.0}, "purge round: propagation (10 s)")
            self._apply({"input": "partition", "a": psc, "b": bsc}, f"purge round: cut {psc}-{bsc}")
            # while the BSC is cut off, the other queue is deleted and a new one created under its path name (a
            # client reusing a name): the BSC's sync0 reply creates it while the old one, marked deleted by Reset
            # Directory Partition (3.3.7.10), still holds the name; E-317 deletes the marked holder first
            # (literally 3.1.7.2.8's create is refused)
            self._apply({**kept, "operation": "delete"}, f"purge round: the other one's deletion at {psc}")
            self._apply({**kept, "operation": "create", "properties": {"PROPID_Q_LABEL": "reused"}},
                        f"purge round: a new queue of the same path name at {psc}")
        for size in (1100, 300):
            self._apply({"input": "repeat", "times": size, "inputs": [update]}, f"purge round: {size} updates at {psc}")
            self._apply({"input": "advance", "seconds": 60.0}, "purge round: acks (60 s)")
        if cut_off:
            # what was held for the BSC times out; at the next SeqNumberHeader it asks, gets AlreadyPurged
            # and resets its tombstones of the partition (3.3.7.10)
            self._apply({"input": "advance", "seconds": 1300.0}, "purge round: the held messages expire (1300 s)")
            self._apply({"input": "heal", "a": psc, "b": bsc}, f"purge round: heal {psc}-{bsc}")
            return
        if self.world.up.get(bsc):
            self._apply({"input": "crash", "node": bsc, "lose": "all"}, f"purge round: crash {bsc} (all)")
        if variant == "duplicate AlreadyPurged":
            self._apply({"input": "duplicate", "to": bsc, "operation": "AlreadyPurged", "times": 2},
                        f"purge round: duplicate the AlreadyPurged to {bsc}")
        elif variant == "first replies lost":
            self._apply({"input": "drop", "to": bsc, "operation": "SyncReply", "times": 2},
                        f"purge round: drop the first SyncReplies to {bsc}")
        elif variant == "link cut":
            self._apply({"input": "partition", "a": psc, "b": bsc}, f"purge round: cut {psc}-{bsc}")
        self._apply({"input": "restart", "node": bsc}, f"purge round: restart {bsc}")
        if variant == "sync0 reply lost":
            # after the enterprise partition's reply and the AlreadyPurged: the sync0 request's reply
            self._apply({"input": "advance", "seconds": 0.25}, "purge round: to sync0 (0.25 s)")
            self._apply({"input": "drop", "to": bsc, "operation": "SyncReply", "times": 1},
                        f"purge round: drop the next SyncReply to {bsc}")
        if variant in ("first replies lost", "link cut", "sync0 reply lost"):
            # the held request times out (Nack), the SeqNumberHeaders ask again
            self._apply({"input": "advance", "seconds": 1300.0}, "purge round: a SeqNumberHeader round (1300 s)")
        if variant == "link cut":
            self._apply({"input": "heal", "a": psc, "b": bsc}, f"purge round: heal {psc}-{bsc}")
        if variant in ("more changes", "duplicate AlreadyPurged"):
            # the rebuilt BSC's PurgedSeqNumber is above the AllowedPurgeSeqNumber it has heard of (3.1.7.2.9)
            self._apply({"input": "advance", "seconds": 1.0}, "purge round: sync0 (1 s)")
            self._apply({"input": "repeat", "times": 300, "inputs": [update]}, f"purge round: 300 updates at {psc}")

    def _purge_window(self) -> None:
        """An authority purges only what every PSC has acknowledged (3.1.7.2.9): a purge round begins with the
        links healed and every PSC running (an administrator's maintenance window), so that it purges."""
        if self.cut:
            self.cut = []
            self._apply({"input": "heal"}, "purge round: heal all links")
        for name, qm in self.world.nodes.items():
            if qm.is_psc and not self.world.up.get(name):
                self._apply({"input": "restart", "node": name}, f"purge round: restart {name}")

    def _enterprise_purge_round(self, which: int) -> None:
        """The PEC purges the enterprise partition; after a SeqNumberHeader round a BSC of another site is rebuilt
        from its PSC, a replica that has purged less than its headers allow (E-314), and hears that header
        before its reply (its first request is lost). In an enterprise of one site the PEC purges with no PSC
        neighbor to wait for (3.1.7.2.9, E-132), and no BSC is rebuilt."""
        ready = [s for s in self.sites[1:] if s["bscs"] and self.world.up.get(s["psc"])]
        if not self.world.up.get("PEC0") or not (ready or len(self.sites) == 1):
            return
        self.steps_since_purge_round = 0
        self.purge_rounds += 1
        self._purge_window()
        update = {"input": "request", "at": "PEC0", "operation": "update", "type": "enterprise", "path": "enterprise",
                  "properties": {"PROPID_E_S_INTERVAL1": 100 + which}}
        for size in (1100, 300):
            self._apply({"input": "repeat", "times": size, "inputs": [update]}, f"purge round: {size} updates at PEC0")
            self._apply({"input": "advance", "seconds": 60.0}, "purge round: acks (60 s)")
        self._apply(self._request_input("create cn", "PEC0", which, which % 6), "purge round: one more object at PEC0")
        self._apply({"input": "advance", "seconds": 1300.0}, "purge round: a SeqNumberHeader round (1300 s)")
        if not ready:
            return
        site = ready[which % len(ready)]
        bsc = site["bscs"][which % len(site["bscs"])]
        if self.world.up.get(bsc):
            self._apply({"input": "crash", "node": bsc, "lose": "all"}, f"purge round: crash {bsc} (all)")
        self._apply({"input": "drop", "from": bsc, "operation": "SyncRequest", "times": 1},
                    f"purge round: drop {bsc}'s first SyncRequest")
        self._apply({"input": "restart", "node": bsc}, f"purge round: restart {bsc}")
        self._apply({"input": "advance", "seconds": 1300.0}, "purge round: a SeqNumberHeader round (1300 s)")

    # --- time ---------------------------------------------------------------------------------

    def _next_event(self) -> None:
        sched = self.world.scheduler
        due = sched.peek_time()
        if due is None:
            return
        now = sched.now
        delta = due - now
        while now + delta < due:  # the replay computes now + seconds again: make sure it reaches the event
            delta = math.nextafter(delta, math.inf)
        self._apply({"input": "advance", "seconds": delta}, f"deliver the next event ({delta:g} s)")

    @rule()
    def deliver_next(self) -> None:
        """Process the next scheduled event (a message arriving, a timer firing) and those due with it."""
        self._next_event()

    @rule()
    def deliver_next_again(self) -> None:
        """The same as ``deliver_next``: registered twice, single deliveries are drawn twice as often."""
        self._next_event()

    @rule(seconds=st.sampled_from(SMALL_ADVANCES))
    def deliver(self, seconds: float) -> None:
        """Advance the clock a little: messages in flight arrive and are processed."""
        self._apply({"input": "advance", "seconds": seconds}, f"deliver ({seconds} s)")

    @rule(seconds=st.sampled_from(TIMER_ADVANCES))
    def fire_timers(self, seconds: float) -> None:
        """Advance the clock past timers: propagation (2 s / 10 s), change-request waits (10 s / 20 s)."""
        self._apply({"input": "advance", "seconds": seconds}, f"fire timers ({seconds} s)")

    @precondition(lambda self: self.LONG_WAITS and self.steps_since_wait >= self.WAIT_EVERY)
    @rule()
    def await_seq_number_headers(self) -> None:
        """Advance 20 minutes: every neighbor gets a SeqNumberHeader (<12>), replicas find their gaps and purge."""
        self._apply({"input": "advance", "seconds": 1200.0}, "await SeqNumberHeaders (1200 s)")

    # --- the network --------------------------------------------------------------------------

    @rule(kind=st.sampled_from(("drop", "duplicate", "delay", "tamper")), src=st.integers(0, 15), dst=st.integers(0, 15),
          operation=st.sampled_from(OPERATION_NAMES), times=st.integers(1, 3), seconds=st.sampled_from((0.5, 3.0, 30.0)))
    def fault(self, kind: str, src: int, dst: int, operation: str | None, times: int, seconds: float) -> None:
        """Drop, duplicate, delay (reorder) or tamper with (a failed signature: a Nack) the next matching messages."""
        nodes = self._nodes()
        inp: dict[str, Any] = {"input": kind, "times": times}
        if src < len(nodes):
            inp["from"] = nodes[src]
        if dst < len(nodes):
            inp["to"] = nodes[dst]
        if operation is not None:
            inp["operation"] = operation
        if kind == "delay":
            inp["seconds"] = seconds
        self._apply(inp, f"{kind} {inp.get('from', '*')}->{inp.get('to', '*')} {operation or 'any'} x{times}")

    @rule(kind=st.sampled_from(sorted(STRANGE_BODIES)), src=st.integers(0, 15), dst=st.integers(0, 15))
    def send_strange(self, kind: str, src: int, dst: int) -> None:
        """A misbehaving peer's message: bytes no replication message has, or one no server expects (3.1.5.1)."""
        up, nodes = self._up(), self._nodes()
        if not up:
            return
        source, target = up[src % len(up)], nodes[dst % len(nodes)]
        body = STRANGE_BODIES[kind](self.world, source, target)
        self._apply({"input": "send", "from": source, "to": target, "body": body.hex()}, f"send {kind} {source}->{target}")

    @rule(a=st.integers(0, 15), b=st.integers(0, 15))
    def cut_link(self, a: int, b: int) -> None:
        """Cut the link between two servers: held messages time out into Nacks (ChangeRequest: 10 s)."""
        nodes = self._nodes()
        x, y = nodes[a % len(nodes)], nodes[b % len(nodes)]
        if x == y:
            return
        self.cut.append((x, y))
        self._apply({"input": "partition", "a": x, "b": y}, f"cut {x}-{y}")

    @precondition(lambda self: bool(self.cut))
    @rule()
    def heal_links(self) -> None:
        """Restore every cut link; held messages leave."""
        self.cut = []
        self._apply({"input": "heal"}, "heal all links")

    # --- servers ------------------------------------------------------------------------------

    @rule(which=st.integers(0, 15), lose_all=st.booleans())
    def crash(self, which: int, lose_all: bool) -> None:
        """Crash a running server: it loses what 3.1.1 does not persist (a BSC may lose everything)."""
        up = self._up()
        if not up:
            return
        node = up[which % len(up)]
        lose = "all" if lose_all and self.world.nodes[node].role is Role.BSC else "volatile"
        self._apply({"input": "crash", "node": node, "lose": lose}, f"crash {node} ({lose})")

    @precondition(lambda self: self.driver is not None and bool(self._down()))
    @rule(which=st.integers(0, 15))
    def restart(self, which: int) -> None:
        """Restart a crashed server: initialization runs again (3.2.3, 3.3.3)."""
        down = self._down()
        node = down[which % len(down)]
        self._apply({"input": "restart", "node": node}, f"restart {node}")

    @precondition(lambda self: self.steps_since_settle >= self.SETTLE_EVERY)
    @rule()
    def settle(self) -> None:
        """Heal, restart every server, run until quiet, then check the quiescence invariants too."""
        self._settle()

    def _settle(self) -> None:
        self.cut = []
        settle_phase(self.driver, self.FINAL_SETTLE, after=self._performed_and_checked)  # type: ignore[arg-type]

    def _performed_and_checked(self, inp: dict[str, Any]) -> None:
        """For the inputs of a phase (one rule, several inputs): observe each and check it at once,
        since hypothesis checks the invariants only after the whole rule."""
        self._performed(inp)
        for name in inv.NAMES:
            self._fail(name)

    def _count_run(self) -> None:
        stats = type(self).stats
        stats.runs += 1
        stats.handler_runs += self.driver.ghost.handler_runs - self.copied_handler_runs  # type: ignore[union-attr]
        stats.refinement_checks += self._refinement_checks() - self.copied_refinement_checks

    def _refinement_checks(self) -> int:
        refinement = getattr(self.driver.ghost, "refinement", None)
        return sum(refinement.checked.values()) if refinement is not None else 0

    def teardown(self) -> None:
        """Every run ends with a settle and the quiescence invariants (convergence)."""
        if self.driver is None:
            return
        stats = type(self).stats
        if self.failed:  # a step already failed: report that failure alone
            self._count_run()
            return
        try:
            self._settle()
            for name in inv.NAMES:
                self._fail(name)
        finally:
            self._count_run()
            if self.RECORD:
                stats.recorded.append((list(self.driver.inputs), list(self.driver.trace)))

    # --- the invariants, one method per name -------------------------------------------------
    # Each method is guarded by a precondition that runs its checker on the step's observation,
    # so that a counterexample prints only the invariant that failed (hypothesis prints every
    # invariant whose precondition holds); the method then raises with the violations.

    @precondition(lambda self: self._violated("authority_last_seq_strictly_increases"))
    @invariant()
    def authority_last_seq_strictly_increases(self) -> None:
        self._fail("authority_last_seq_strictly_increases")

    @precondition(lambda self: self._violated("sequence_numbers_used_once_per_partition"))
    @invariant()
    def sequence_numbers_used_once_per_partition(self) -> None:
        self._fail("sequence_numbers_used_once_per_partition")

    @precondition(lambda self: self._violated("replica_last_seq_monotone_except_sync0"))
    @invariant()
    def replica_last_seq_monotone_except_sync0(self) -> None:
        self._fail("replica_last_seq_monotone_except_sync0")

    @precondition(lambda self: self._violated("replica_purged_seq_monotone_except_sync0"))
    @invariant()
    def replica_purged_seq_monotone_except_sync0(self) -> None:
        self._fail("replica_purged_seq_monotone_except_sync0")

    @precondition(lambda self: self._violated("applied_change_follows_last_seq"))
    @invariant()
    def applied_change_follows_last_seq(self) -> None:
        self._fail("applied_change_follows_last_seq")

    @precondition(lambda self: self._violated("purged_seq_at_most_last_seq"))
    @invariant()
    def purged_seq_at_most_last_seq(self) -> None:
        self._fail("purged_seq_at_most_last_seq")

    @precondition(lambda self: self._violated("tombstone_purged_only_after_all_psc_acks"))
    @invariant()
    def tombstone_purged_only_after_all_psc_acks(self) -> None:
        self._fail("tombstone_purged_only_after_all_psc_acks")

    @precondition(lambda self: self._violated("no_incremental_history_skips_purged_deletion"))
    @invariant()
    def no_incremental_history_skips_purged_deletion(self) -> None:
        self._fail("no_incremental_history_skips_purged_deletion")

    @precondition(lambda self: self._violated("no_lingering_deleted_objects_at_quiescence"))
    @invariant()
    def no_lingering_deleted_objects_at_quiescence(self) -> None:
        self._fail("no_lingering_deleted_objects_at_quiescence")

    @precondition(lambda self: self._violated("one_authority_per_partition"))
    @invariant()
    def one_authority_per_partition(self) -> None:
        self._fail("one_authority_per_partition")

    @precondition(lambda self: self._violated("servers_agree_on_authority_at_quiescence"))
    @invariant()
    def servers_agree_on_authority_at_quiescence(self) -> None:
        self._fail("servers_agree_on_authority_at_quiescence")

    @precondition(lambda self: self._violated("only_authority_assigns_sequence_numbers"))
    @invariant()
    def only_authority_assigns_sequence_numbers(self) -> None:
        self._fail("only_authority_assigns_sequence_numbers")

    @precondition(lambda self: self._violated("bsc_never_applies_change_request"))
    @invariant()
    def bsc_never_applies_change_request(self) -> None:
        self._fail("bsc_never_applies_change_request")

    @precondition(lambda self: self._violated("change_request_at_non_authority_is_forwarded"))
    @invariant()
    def change_request_at_non_authority_is_forwarded(self) -> None:
        self._fail("change_request_at_non_authority_is_forwarded")

    @precondition(lambda self: self._violated("authority_tombstone_covers_unacked_deletions"))
    @invariant()
    def authority_tombstone_covers_unacked_deletions(self) -> None:
        self._fail("authority_tombstone_covers_unacked_deletions")

    @precondition(lambda self: self._violated("replica_tombstone_covers_applied_deletions"))
    @invariant()
    def replica_tombstone_covers_applied_deletions(self) -> None:
        self._fail("replica_tombstone_covers_applied_deletions")

    @precondition(lambda self: self._violated("acked_seq_at_most_replica_last_seq"))
    @invariant()
    def acked_seq_at_most_replica_last_seq(self) -> None:
        self._fail("acked_seq_at_most_replica_last_seq")

    @precondition(lambda self: self._violated("partition_held_once_per_server"))
    @invariant()
    def partition_held_once_per_server(self) -> None:
        self._fail("partition_held_once_per_server")

    @precondition(lambda self: self._violated("replicas_converge_at_quiescence"))
    @invariant()
    def replicas_converge_at_quiescence(self) -> None:
        self._fail("replicas_converge_at_quiescence")

    @precondition(lambda self: self._violated("handlers_refine_model"))
    @invariant()
    def handlers_refine_model(self) -> None:
        self._fail("handlers_refine_model")


def _update_properties(type_name: str, value: int, entry: dict[str, Any]) -> dict[str, Any]:
    """What an update of a ``type_name`` changes (never the properties that make a server what it is)."""
    if type_name == "queue":
        return {"PROPID_Q_LABEL": f"label{value}"}
    if type_name == "machine":
        if value == 5 or (value == 4 and not entry.get("fixed")):
            # a machine object becomes a BSC (4) or stops being one (5): 3.1.7.2.12's two branches; a
            # directory client's machine (fixed) is said again to be no server (5)
            return {"PROPID_QM_SERVICE": 2 if value == 4 else 0}
        return {"PROPID_QM_QUOTA": value}
    if type_name == "user":
        return {"PROPID_U_SIGN_CERT": f"{value % 256:02x}"}
    if type_name == "cn":
        return {"PROPID_CN_PROTOCOLID": value % 256}
    if type_name == "routinglink":
        return {"PROPID_L_COST": value}
    return {"PROPID_S_INTERVAL1": value % 65536}


# --- profiles --------------------------------------------------------------------------------

#: MQSPEC_STATEFUL_PROFILE selects one; "ci" is the default (about a minute on two cores), "soak"
#: runs long runs (fewer builds and final settles per step) until well over 1,000,000 steps.
#: Neither shrinks with hypothesis (minutes per failure here): the final run of a failure shrinks
#: its recorded inputs by delta debugging instead and prints them as a scenario file (EXPLAIN_SECONDS)
PROFILES: dict[str, dict[str, dict[str, int]]] = {
    "ci": {"settings": {"max_examples": 100, "stateful_step_count": 50},
           "machine": {"BURST_EVERY": 15, "WAIT_EVERY": 25, "SETTLE_EVERY": 40, "TOPOLOGY_EVERY": 12,
                        "PURGE_EVERY": 45}},
    "soak": {"settings": {"max_examples": 4_000, "stateful_step_count": 500},
             "machine": {"BURST_EVERY": 60, "WAIT_EVERY": 100, "SETTLE_EVERY": 250, "TOPOLOGY_EVERY": 40,
                          "PURGE_EVERY": 100}},
}


def profile_name() -> str:
    name = os.environ.get("MQSPEC_STATEFUL_PROFILE", "ci")
    if name not in PROFILES:
        raise ValueError(f"MQSPEC_STATEFUL_PROFILE={name!r}: known profiles are {', '.join(PROFILES)}")
    return name


def profile_settings(name: str | None = None) -> settings:
    """The hypothesis settings of a profile (MQSPEC_STATEFUL_PROFILE's by default; derandomize stays the conftest's)."""
    return settings(deadline=None, phases=(Phase.explicit, Phase.reuse, Phase.generate), print_blob=False,
                    **PROFILES[name or profile_name()]["settings"])


def configure(machine: type[ReplicationMachine], name: str | None = None) -> type[ReplicationMachine]:
    """Set a profile's rule frequencies on a machine class and its hypothesis settings on its TestCase."""
    name = name or profile_name()
    for key, value in PROFILES[name]["machine"].items():
        setattr(machine, key, value)
    machine.TestCase.settings = profile_settings(name)
    return machine
