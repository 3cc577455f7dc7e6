"""Drive a World by replayable inputs, record its trace, and write inputs as a scenario file.

An input is a JSON-ready dict (``{"input": "request", ...}``): the enterprise to build, a
directory client's request, a ``repeat`` of inputs, a site or a BSC added (4.1, 4.2), a site's PSC
moved to another machine (``move_psc``, :mod:`mqspec.refimpl.handover`), a network fault (drop /
duplicate / delay / tamper), raw bytes sent by a misbehaving peer, a cut link or a heal, a crash, a restart, a clock advance, a settle. :class:`Driver` performs
each one exactly as ``mqspec scenario run`` performs the matching scenario step
(:mod:`mqspec.refimpl.scenario_run`), so :func:`to_scenario` turns the inputs of any run into a
scenario file that replays the same run event for event (the tests check that the traces agree).
The World's trace records (NDJSON-like dicts) are collected in ``Driver.trace``.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml
from mqspec.model.guid import Guid
from mqspec.model.jsonform import converter
from mqspec.model.mqdsrp import Operation
from mqspec.model.propvalue import Property
from mqspec.proofs.ghost import Ghost
from mqspec.refimpl import clock
from mqspec.refimpl.effects import Mode
from mqspec.refimpl.handover import HandoverError, bsc_can_join, move_psc
from mqspec.refimpl.mqds import ClientRequest, default_scope
from mqspec.refimpl.mqdsrp_state import PEC_PARTITION_ID
from mqspec.refimpl.scenario import ENTERPRISE_TYPES, TYPES, operation_name
from mqspec.refimpl.scenario_run import BUILD_SETTLE, StepFailed, _matcher, send_raw
from mqspec.refimpl.world import World, add_bsc, add_site, bootstrap_pec, create_machine

#: replication message names of scenario files -> Operation
OPERATIONS = {operation_name(op): op for op in Operation}
#: trace records a scenario run adds for its own steps (not events of the world)
NOTE_EVENTS = frozenset(("step", "settled"))


class InputRefused(Exception):
    """An input the world's state does not allow (a request at a server that is down, ...)."""


def enterprise_input(sites: list[dict[str, Any]], pec: str = "PEC0") -> dict[str, Any]:
    """The input that builds an enterprise: ``sites`` is [{site, psc, bscs, machines}], the PEC's first."""
    return {"input": "enterprise", "pec": pec,
            "sites": [{"site": s["site"], "psc": s["psc"], "bscs": list(s.get("bscs", ())),
                       "machines": list(s.get("machines", ()))} for s in sites]}


class Driver:
    """A World, its ghost recorder, the inputs performed so far and the trace they produced."""

    def __init__(self, mode: Mode = Mode.CLARIFIED, seed: int = 0, *, ghost: bool = True,
                 skip_idle_timers: bool = False, trace: bool = True, refine: bool = False) -> None:
        self.mode = mode
        self.seed = seed
        self.inputs: list[dict[str, Any]] = []
        #: the World's trace records (none kept with ``trace=False``: the world then builds none)
        self.trace: list[dict[str, Any]] = []
        # a method of the driver, not ``self.trace.append``: a deep copy of the driver (the
        # machine's cache of built enterprises) must trace into the copy's list
        self.world = World(mode=mode, seed=seed, trace=self._record if trace else None,
                           skip_idle_timers=skip_idle_timers)
        self.ghost = Ghost(self.world) if ghost else None
        if refine and self.ghost is not None:
            # every handler run checked against the model (proofs/refinement); its departures reach the
            # invariant handlers_refine_model through the ghost's observations
            from mqspec.proofs.refinement.check import Refinement

            self.ghost.refinement = Refinement(self.world)
        self.last_settle_quiet = True
        self.drops: list[_Counted] = []

    def drop_hits(self) -> int:
        """How many messages the drop and tamper faults injected so far have lost (a tampered message
        fails its signature check: the receiver Nacks it and never processes it)."""
        return sum(d.hits for d in self.drops)

    def _record(self, record: dict[str, Any]) -> None:
        self.trace.append(record)

    def copy(self) -> Driver:
        """An independent deep copy (the scheduler's cancellation marker must stay itself)."""
        return copy.deepcopy(self, {id(clock._CANCELLED): clock._CANCELLED})

    def apply(self, inp: dict[str, Any]) -> None:
        """Record ``inp`` and perform it."""
        self.inputs.append(inp)
        self._perform(inp)

    def _perform(self, inp: dict[str, Any]) -> None:
        w = self.world
        kind = inp["input"]
        # what scenario_run refuses (a step the state does not allow) is refused here too
        for key in ("at", "node", "a", "b"):
            if inp.get(key) is not None and inp[key] not in w.nodes:
                # a shrunk list can name a server whose add_bsc / add_site it removed, or one a move_psc retired
                raise InputRefused(f"there is no server {inp[key]}")
        if kind in ("request", "crash") and not w.up.get(inp.get("at", inp.get("node"))):
            raise InputRefused(f"{inp.get('at', inp.get('node'))} is down")
        if kind == "restart" and w.up.get(inp["node"]):
            raise InputRefused(f"{inp['node']} is already running")
        if kind in ("add_site", "move_psc") and not any(w.up.get(n) for n, qm in w.nodes.items() if qm.is_pec):
            raise InputRefused("the PEC is down")
        if kind == "add_bsc" and not bsc_can_join(w, inp["site"]):
            raise InputRefused(f"site {inp['site']} has no running PSC that holds its partition")
        if kind == "enterprise":
            self._build(inp)
        elif kind == "request":
            w.client_request(inp["at"], client_request(inp, w))
        elif kind == "add_site":
            add_site(w, inp["site"], inp["psc"])
        elif kind == "add_bsc":
            add_bsc(w, inp["site"], inp["bsc"])
        elif kind == "move_psc":
            try:
                move_psc(w, inp["site"], inp["to"])
            except HandoverError as exc:
                raise InputRefused(str(exc)) from None
        elif kind == "repeat":
            for _ in range(inp["times"]):
                for sub in inp["inputs"]:
                    self._perform(sub)
        elif kind == "send":
            try:
                send_raw(w, inp["from"], inp["to"], bytes.fromhex(inp["body"]))
            except StepFailed as exc:
                raise InputRefused(str(exc)) from None
        elif kind in ("drop", "duplicate", "delay", "tamper"):
            op = OPERATIONS[inp["operation"]] if inp.get("operation") else None
            match = _Counted(_matcher(inp.get("from"), inp.get("to"), op), inp.get("times"))
            if kind in ("drop", "tamper"):
                self.drops.append(match)
            if kind == "delay":
                w.network.delay(match, inp["seconds"], times=inp.get("times"))
            else:
                getattr(w.network, kind)(match, times=inp.get("times"))
        elif kind == "partition":
            w.network.partition(inp["a"], inp["b"])
        elif kind == "heal":
            w.network.heal(inp.get("a"), inp.get("b"))
        elif kind == "crash":
            w.crash(inp["node"], lose=inp.get("lose", "volatile"))
        elif kind == "restart":
            w.restart(inp["node"])
        elif kind == "advance":
            w.advance(inp["seconds"])
        elif kind == "settle":
            self.last_settle_quiet = w.settle(**inp.get("args", {}))
        else:
            raise ValueError(f"unknown input {kind!r}")

    def _build(self, inp: dict[str, Any]) -> None:
        """The enterprise as scenario_run builds it: the PEC's site, the other sites, the BSCs, the machines."""
        w = self.world
        sites = sorted(inp["sites"], key=lambda s: s["psc"] != inp["pec"])
        bootstrap_pec(w, inp["pec"], sites[0]["site"], "enterprise")
        w.settle(**BUILD_SETTLE)
        for site in sites[1:]:
            add_site(w, site["site"], site["psc"])
            w.settle(**BUILD_SETTLE)
        for site in sites:
            for bsc in site["bscs"]:
                add_bsc(w, site["site"], bsc)
                w.settle(**BUILD_SETTLE)
        machines = [(site, m) for site in sites for m in site["machines"]]
        for site, machine in machines:
            create_machine(w, site["psc"], machine, site["site"])
        if machines:
            w.settle(**BUILD_SETTLE)


class _Counted:
    """A fault's message matcher that counts its matches (the fault then applies to exactly those)."""

    __slots__ = ("hits", "match", "times", "pure")

    def __init__(self, match: Any, times: int | None) -> None:
        self.match = match
        self.times = times
        self.hits = 0
        #: the match without the count, for the World's fast path (refimpl/fastpath.py)
        self.pure = getattr(match, "pure", None)

    def __call__(self, msg: Any) -> bool:
        if self.match(msg):
            self.hits += 1
            return True
        return False


def client_request(inp: dict[str, Any], world: World) -> ClientRequest:
    """The ClientRequest of a request input, built as scenario_run builds it for the same step."""
    object_type = TYPES[inp["type"]]
    partition = PEC_PARTITION_ID if object_type in ENTERPRISE_TYPES else world.site_guid(inp["site"])
    properties = tuple(converter.structure({"propid": name, "value": value}, Property)
                       for name, value in inp.get("properties", {}).items())
    guid = Guid.parse(inp["guid"]) if inp.get("guid") else None
    return ClientRequest(inp["operation"], object_type, partition, path_name=inp.get("path"), guid=guid,
                         properties=properties, scope=default_scope(object_type, partition))


def replay(inputs: Iterable[dict[str, Any]], mode: Mode = Mode.CLARIFIED, seed: int = 0) -> list[dict[str, Any]]:
    """Perform ``inputs`` on a fresh World (no ghost attached) and return its trace."""
    driver = Driver(mode, seed, ghost=False)
    for inp in inputs:
        driver.apply(inp)
    return driver.trace


# --- scenario files --------------------------------------------------------------------------


def _step(inp: dict[str, Any]) -> dict[str, Any]:
    kind = inp["input"]
    if kind == "request":
        body = {"at": inp["at"], "type": inp["type"]}
        for key in ("path", "guid", "site"):
            if inp.get(key) is not None:
                body[key] = inp[key]
        if inp.get("properties"):
            body["properties"] = dict(inp["properties"])
        return {inp["operation"]: body}
    if kind == "repeat":
        return {"repeat": {"times": inp["times"], "steps": [_step(s) for s in inp["inputs"]]}}
    if kind == "add_site":
        return {"add_site": {"site": inp["site"], "psc": inp["psc"]}}
    if kind == "add_bsc":
        return {"add_bsc": {"site": inp["site"], "bsc": inp["bsc"]}}
    if kind == "move_psc":
        return {"move_psc": {"site": inp["site"], "to": inp["to"]}}
    if kind in ("drop", "duplicate", "delay", "tamper"):
        body = {k: inp[k] for k in ("from", "to", "operation", "times", "seconds") if inp.get(k) is not None}
        return {kind: body}
    if kind == "send":
        return {"send": {"from": inp["from"], "to": inp["to"], "body": inp["body"]}}
    if kind == "partition":
        return {"partition": [inp["a"], inp["b"]]}
    if kind == "heal":
        return {"heal": "all" if inp.get("a") is None else [inp["a"], inp["b"]]}
    if kind == "crash":
        return {"crash": {"node": inp["node"], "lose": inp.get("lose", "volatile")}}
    if kind == "restart":
        return {"restart": inp["node"]}
    if kind == "advance":
        return {"advance": inp["seconds"]}
    if kind == "settle":
        return {"settle": dict(inp.get("args", {}))}
    raise ValueError(f"input {kind!r} has no scenario step")


def to_scenario(inputs: list[dict[str, Any]], description: str = "",
                final: Iterable[dict[str, Any]] = ()) -> dict[str, Any]:
    """The scenario file (as a mapping) that replays ``inputs``; ``final`` steps are appended."""
    first = inputs[0]
    if first["input"] != "enterprise":
        raise ValueError("the first input builds the enterprise")
    sites = {}
    for s in first["sites"]:
        body: dict[str, Any] = {"psc": s["psc"]}
        if s["bscs"]:
            body["bscs"] = list(s["bscs"])
        if s["machines"]:
            body["machines"] = list(s["machines"])
        sites[s["site"]] = body
    data: dict[str, Any] = {}
    if description:
        data["description"] = description
    data["enterprise"] = {"pec": first["pec"], "sites": sites}
    data["steps"] = [_step(i) for i in inputs[1:]] + list(final)
    return data


def write_scenario(path: str | Path, inputs: list[dict[str, Any]], *, comment: str = "", description: str = "",
                   final: Iterable[dict[str, Any]] = ()) -> Path:
    """Write the scenario of ``inputs`` as YAML, ``comment`` as its leading # lines."""
    p = Path(path)
    text = yaml.safe_dump(to_scenario(inputs, description, final), sort_keys=False, allow_unicode=True, width=110)
    lead = "".join(f"# {line}".rstrip() + "\n" for line in comment.splitlines()) if comment else ""
    p.write_text(lead + text, encoding="utf-8")
    return p
