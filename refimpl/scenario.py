"""Scenario files: an enterprise and the steps to run on it (``mqspec scenario run``).

A scenario is a JSON or YAML mapping with three keys: ``description`` (optional text),
``enterprise`` and ``steps``. Parsing is strict: an unknown key, a missing field, a name that
does not exist at that point of the file, a wrong type or an unknown PROPID is a
:class:`ScenarioError` naming where it is (``steps[3].create: unknown PROPID 'PROPID_Q_LABL'``).

Enterprise (built before the first step; the PEC's site first, then the other sites, then the
BSCs, then the client machines, settling after each so a PSC owns its site partition before
its BSCs are added)::

    enterprise:
      pec: PEC0
      name: enterprise            # optional: the enterprise object's name
      settle: {quiet: 30, window: 10}   # optional: how the build settles (these are the defaults)
      sites:
        site0: {psc: PEC0, bscs: [BSC01, BSC02]}
        site1: {psc: PSC1, machines: [C14]}   # machines: directory clients' machine objects

Steps (each a mapping with exactly one key, the step's kind):

* ``create`` / ``update`` / ``delete``: a directory client's request at server ``at``, with
  ``type`` (queue | machine | site | enterprise | cn | user | routinglink), ``path`` or ``guid``
  (a create of a user or routing link may give neither: it is named by its identity property, E-182),
  ``site`` (the partition; by default a queue ``M\\q`` goes to the site of machine ``M`` as
  ``at``'s directory knows it, a machine or a GUID-named object to its partition there,
  enterprise types to the enterprise partition), ``properties`` (PROPID name -> value in the
  JSON forms of :mod:`mqspec.model.jsonform`) and ``expect_status`` (an HRESULT name such as
  ``MQ_OK`` or a number; checked when the request completes, at the latest at the end);
* ``add_site: {site, psc}``, ``add_bsc: {site, bsc}`` (4.1, 4.2);
* ``move_psc: {site, to}``: the site's PSC moves to the new server ``to`` (the PEC's site cannot
  move): ``to`` takes over the old PSC's replication state and directory and owns the site
  partition, the old PSC leaves the enterprise (its name is unknown afterwards), and the PEC
  updates the site object's PROPID_S_PSC, which every server follows (3.1.7.2.11;
  :mod:`mqspec.refimpl.handover`, modelling E-313); ``--trace`` declares the move with
  ``handover`` events, so ``mqspec check`` replays the new PSC from the state it took over;
* ``mark: NAME``: a point the message and directory counters of ``expect`` can count from
  (``since: NAME``); marking a name again moves it;
* ``settle: {limit, quiet, window}`` (all optional seconds: run until nothing changes for
  ``quiet`` seconds, giving up after ``limit``); ``advance: SECONDS``;
* ``drop`` / ``duplicate`` / ``delay`` (``seconds``) / ``tamper``: ``{from, to, operation,
  carrying, times}``, all optional (``tamper``: the message fails the destination's signature check,
  which answers with a NackBadSignature, 3.3.7.9); ``operation`` is a replication message name such as ``ChangePropagation``;
  ``carrying: {site, seq, path}`` matches the decoded content: a message holding a change of that
  site's partition (or ``enterprise``) with that SeqNumber and path (:mod:`mqspec.refimpl.scenario_match`);
* ``send: {from, to, body, ack}``: a replication message of ``body`` (hex: any bytes, well-formed or
  not) sent from ``from`` to ``to``'s replication queue, as a misbehaving peer would; ``ack:
  AckNackReachQueue`` asks, as Send Replication Message does (3.1.7.2.1), for the Nack of a message
  that does not reach the queue, sent to ``from``'s replication queue (default ``None``: no Nack);
* ``partition: [A, B]``, ``heal: [A, B]`` (or ``heal: all``);
* ``crash: NODE`` or ``crash: {node, lose: volatile | all}``; ``restart: NODE``;
* ``repeat: {times, steps, index}``: with ``index: i``, every ``{i}`` in the text of the steps
  becomes the iteration's number (1, 2, ...), so names can differ per iteration
  (``path: 'C01\\q{i}'``, ``add_site: {site: 'site{i}', psc: 'PSC{i}'}``);
* ``expect``: assertions on the state at that point, all of which must hold (below).

Assertions of ``expect`` (``at`` is a node name or a list of them; a count or sequence
condition ``C`` is an integer or a string ``"OP N"`` with OP one of == != < <= > >=)::

    converged: true | false          # convergence_problems() is empty (or not)
    partition: {at, site: NAME | enterprise, present, last_seq: C, purged_seq: C,
                allowed_purge_seq: C, purge_state: NORMAL | SYNC0 | ..., authority: NODE,
                pending: C, window: C | MAX}    # PendingChangeCollection size, ChangeMissingWindow
    object:    {at, type, path | guid, present (default true), seq: C,
                properties: {PROPID: value}}     # these property values, in the JSON forms
    tombstone: {at, type, path | guid, present (default true), seq: C}   # DeletedObjectCollection
    neighbors: {at, psc: [NODES], bsc: [NODES]}                  # exactly these
    neighbor:  {at, name: MACHINE, available: C}    # its AvailableChangeCollection size
    node:      {at, my_psc_name: MACHINE}           # QueueManager.MyPSCName (a BSC's PSC)
    received:  {at, from, operation, count: C (default ">= 1"), since: MARK}  # replication messages
    sent:      {at, to, operation, count: C, since: MARK}
    directory: {at, operation: create | update | delete | read | reset1 | reset2, count: C, since: MARK}

A counter counts from the build's first event, or from the ``mark`` step named by ``since``.

Each assertion kind may also be given a list of such mappings. A failed assertion is recorded
(``steps[7].expect: ...``) and the run goes on; the caller exits 1 when any failed.
:mod:`mqspec.refimpl.scenario_run` runs a parsed scenario.

Numbers and limits. Seconds are integers or decimals, and may be written in exponent form
(``1e3``, ``2.5E+2``: YAML files are read with the YAML 1.2 number forms); counts (``times``)
are whole numbers, ``1e3`` included. The simulator's work is bounded, so a file cannot ask for
a run that would not end; a value out of range is a ScenarioError naming the limit:

* a number of seconds is at most ``MAX_SECONDS`` (86,400: one simulated day), a settle
  ``window`` at least ``MIN_WINDOW`` (1 second);
* ``times`` (of ``repeat`` or a fault) is at most ``MAX_TIMES`` (1,000,000);
* a file runs at most ``MAX_STEPS`` steps (100,000), counting every repetition of a ``repeat``;
* an enterprise has at most ``MAX_NODES`` directory servers (2,000);
* a run's steps take at most ``MAX_RUN_SECONDS`` of simulated time (604,800: one week, after the
  enterprise is built); :mod:`~mqspec.refimpl.scenario_run` stops a run that passes it with a
  ScenarioError naming the step;
* a file nested too deeply for the reader (thousands of levels) is a ScenarioError, not a crash.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs
import yaml
from mqspec.model.errors import ModelError
from mqspec.model.guid import Guid
from mqspec.model.jsonform import converter
from mqspec.model.mqdsrp import Operation
from mqspec.model.propids import PROPIDS, ObjectType, object_type_of
from mqspec.model.propvalue import Property

from . import status as st
from .effects import AckRequested as EffectAck
from .scenario_match import parse_carrying

#: object type names of scenario files, as the snapshots print them
TYPES = {t.name.removeprefix("MQDS_").lower(): t for t in ObjectType}
ENTERPRISE_TYPES = frozenset({ObjectType.MQDS_ENTERPRISE, ObjectType.MQDS_SITE, ObjectType.MQDS_ROUTINGLINK,
                              ObjectType.MQDS_CN, ObjectType.MQDS_USER})
#: the reserved site name that means the enterprise partition in assertions
ENTERPRISE = "enterprise"
#: the acknowledgment levels a ``send`` step asks: the two the text's replication messages use (3.1.7.2.1)
SEND_ACKS = tuple(level.value for level in EffectAck)
STATUS = {name: value for value, name in st.NAMES.items()}
COMPARE: dict[str, Callable[[int, int], bool]] = {
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
}
#: MAX_SEQ_NUMBER (2.2.2), which ``window: MAX`` names
MAX_SEQ = 2**64 - 1
PURGE_STATES = ("NORMAL", "STARTSYNC0", "SYNC0", "COMPLETESYNC0")

# what a scenario may ask of the simulator (module docstring, "Numbers and limits")
MAX_SECONDS = 86_400
MIN_WINDOW = 1
MAX_TIMES = 1_000_000
MAX_STEPS = 100_000
MAX_NODES = 2_000
MAX_RUN_SECONDS = 7 * 86_400
DIRECTORY_OPERATIONS = ("create", "update", "delete", "read", "reset1", "reset2")


def _op_key(name: str) -> str:
    return name.replace("_", "").casefold().removesuffix("message")


#: replication message names: ChangePropagation, CHANGE_PROPAGATION, PSCAck, ... (case-insensitive)
OPERATIONS = {_op_key(op.name): op for op in Operation}


class ScenarioError(Exception):
    """A scenario file that cannot be run; ``where`` is the path to the offending part."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}" if where else message)
        self.where = where
        self.message = message


@attrs.frozen
class Condition:
    """``value OP target``: an integer condition of an assertion ("OP N", or N for ==)."""

    op: str
    target: int

    def holds(self, value: int) -> bool:
        return COMPARE[self.op](value, self.target)

    def __str__(self) -> str:
        return f"{self.op} {self.target}"


@attrs.frozen
class Site:
    name: str
    psc: str
    bscs: tuple[str, ...] = ()
    machines: tuple[str, ...] = ()


@attrs.frozen
class Enterprise:
    pec: str
    sites: tuple[Site, ...]
    name: str = "enterprise"
    settle: Mapping[str, float] = attrs.field(factory=dict)

    def ordered_sites(self) -> list[Site]:
        """The PEC's site first, then the others in file order."""
        return sorted(self.sites, key=lambda s: s.psc != self.pec)


@attrs.frozen
class Step:
    """One validated step: ``where`` names it in messages, ``args`` holds its normalized fields."""

    where: str
    kind: str
    args: Mapping[str, Any]


@attrs.frozen
class Scenario:
    name: str
    enterprise: Enterprise
    steps: tuple[Step, ...]
    description: str = ""


# --- reading the file -------------------------------------------------------------------------


def load(path: str | Path) -> Scenario:
    """Read and validate a scenario file (JSON or YAML); every problem is a ScenarioError."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError("", exc.strerror or str(exc)) from None
    except UnicodeDecodeError:
        raise ScenarioError("", "not UTF-8 text") from None
    return parse(read_text(text, p), p.stem)


def read_text(text: str, path: str | Path = "scenario.yaml") -> object:
    """The data of a scenario file's text: JSON for a ``.json`` path, YAML (with YAML 1.2 numbers)
    otherwise; a ScenarioError names the line of a syntax error."""
    try:
        if Path(path).suffix.lower() == ".json":
            data = json.loads(text)
        else:
            data = yaml.load(text, Loader=_Loader)  # noqa: S506 (a SafeLoader)
    except RecursionError:
        raise ScenarioError("", _TOO_DEEP) from None
    except json.JSONDecodeError as exc:
        raise ScenarioError("", f"line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1} column {mark.column + 1}: " if mark is not None else ""
        raise ScenarioError("", f"{where}{getattr(exc, 'problem', None) or exc}") from None
    except (ValueError, OverflowError) as exc:  # a YAML date such as 2020-13-45
        raise ScenarioError("", f"a value cannot be read: {exc}") from None
    return data


_TOO_DEEP = "nested too deeply to read (a scenario nests a few levels, not thousands)"


class _Loader(yaml.SafeLoader):
    """SafeLoader that also reads YAML 1.2 numbers such as ``1e12`` (YAML 1.1 reads them as text)."""


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"), list("-+0123456789"))


def parse(data: object, name: str = "scenario") -> Scenario:
    """Validate a scenario already read into Python values."""
    try:
        top = _Fields(data, "", {"description", "enterprise", "steps"})
        description = top.opt("description", str, "")
        enterprise = _parse_enterprise(top.req("enterprise", dict), "enterprise")
        names = _Names(enterprise)
        raw_steps = top.req("steps", list)
        steps = _parse_steps(raw_steps, "steps", names, repeated=False)
    except RecursionError:
        raise ScenarioError("", _TOO_DEEP) from None
    _check_step_count(steps)
    return Scenario(name, enterprise, steps, description)


def step_count(steps: tuple[Step, ...]) -> int:
    """How many steps a run performs, counting every repetition of a ``repeat``'s steps."""
    return sum(1 + (s.args["times"] * step_count(s.args["steps"]) if s.kind == "repeat" else 0) for s in steps)


def _check_step_count(steps: tuple[Step, ...]) -> None:
    total = 0
    for step in steps:
        total += step_count((step,))
        if total > MAX_STEPS:
            raise ScenarioError(step.where, f"the file runs more than {MAX_STEPS:,} steps up to here, counting "
                                f"each repetition (the limit MAX_STEPS); run fewer repetitions")


def _number(value: object, where: str) -> int | float:
    """An integer or a finite decimal (a YAML/JSON boolean is neither)."""
    number = _typed(value, (int, float), where)
    if isinstance(number, float) and not math.isfinite(number):
        raise ScenarioError(where, f"expected a finite number, not {number!r}")
    return number


def _seconds(value: object, where: str) -> int | float:
    """A number of seconds, 0 to MAX_SECONDS."""
    number = _number(value, where)
    if number < 0:
        raise ScenarioError(where, f"expected a non-negative number of seconds, not {number!r}")
    if number > MAX_SECONDS:
        raise ScenarioError(where, f"{_show(number)} seconds is out of range: at most {MAX_SECONDS:,} "
                            "(one simulated day, the limit MAX_SECONDS)")
    return number


def _times(value: object, where: str) -> int:
    """A count, 1 to MAX_TIMES (``1e3`` is 1000)."""
    number = _number(value, where)
    if isinstance(number, float):
        if not number.is_integer():
            raise ScenarioError(where, f"expected a whole number, not {number!r}")
        number = int(number)
    if number < 1:
        raise ScenarioError(where, f"expected a positive count, not {number!r}")
    if number > MAX_TIMES:
        raise ScenarioError(where, f"{_show(number)} is out of range: at most {MAX_TIMES:,} (the limit MAX_TIMES)")
    return number


def _show(number: int | float) -> str:
    """A number as the message quotes it (1e+300, not 300 digits)."""
    if isinstance(number, int):
        digits = str(number)
        return f"{number:,}" if number < 10**15 else f"{digits[0]}.{digits[1:4]}e+{len(digits) - 1}"
    return f"{number:g}"


class _Fields:
    """Strict access to a mapping: unknown keys, missing keys and wrong types are errors."""

    def __init__(self, data: object, where: str, allowed: set[str]) -> None:
        if not isinstance(data, dict):
            raise ScenarioError(where, f"expected a mapping, not {_kind(data)}")
        for key in data:
            if not isinstance(key, str) or key not in allowed:
                raise ScenarioError(where, f"unknown key {key!r} (known: {', '.join(sorted(allowed))})")
        self.data = data
        self.where = where

    def at(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def req(self, key: str, kind: type | tuple[type, ...]) -> Any:
        if key not in self.data:
            raise ScenarioError(self.where, f"missing {key!r}")
        return _typed(self.data[key], kind, self.at(key))

    def opt(self, key: str, kind: type | tuple[type, ...], default: Any = None) -> Any:
        if key not in self.data or self.data[key] is None:
            return default
        return _typed(self.data[key], kind, self.at(key))

    def seconds(self, key: str, default: float | None = None, *, required: bool = False) -> float | None:
        if required and key not in self.data:
            raise ScenarioError(self.where, f"missing {key!r}")
        if self.data.get(key) is None:
            return default
        return _seconds(self.data[key], self.at(key))

    def count(self, key: str, default: int | None = None, *, required: bool = False) -> int | None:
        if required and key not in self.data:
            raise ScenarioError(self.where, f"missing {key!r}")
        if self.data.get(key) is None:
            return default
        return _times(self.data[key], self.at(key))


def _kind(value: object) -> str:
    names = {dict: "a mapping", list: "a list", str: "text", bool: "a boolean", int: "an integer",
             float: "a number", type(None): "nothing"}
    return names.get(type(value), type(value).__name__)


def _typed(value: object, kind: type | tuple[type, ...], where: str) -> Any:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    # a YAML/JSON boolean is not an integer here, even though Python says it is
    if isinstance(value, bool) and bool not in kinds:
        ok = False
    else:
        ok = isinstance(value, kinds)
    if not ok:
        want = " or ".join(_kind(k()) if k is not type(None) else "nothing" for k in kinds)
        raise ScenarioError(where, f"expected {want}, not {_kind(value)}")
    return value


def _str_list(value: object, where: str) -> tuple[str, ...]:
    items = _typed(value, list, where)
    return tuple(_typed(v, str, f"{where}[{i}]") for i, v in enumerate(items))


_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


def _check_name(value: str, where: str, what: str) -> str:
    if not _NAME.match(value):
        raise ScenarioError(where, f"{what} {value!r} is not a name (letters, digits, _ . -)")
    return value


def _parse_enterprise(data: dict, where: str) -> Enterprise:
    f = _Fields(data, where, {"pec", "name", "sites", "settle"})
    pec = _check_name(f.req("pec", str), f.at("pec"), "node")
    sites_raw = f.req("sites", dict)
    sites: list[Site] = []
    seen: set[str] = set()
    for site_name, body in sites_raw.items():
        at = f"{f.at('sites')}.{site_name}"
        _check_name(_typed(site_name, str, f.at("sites")), at, "site")
        if site_name.casefold() == ENTERPRISE:
            raise ScenarioError(at, f"{ENTERPRISE!r} is reserved for the enterprise partition")
        s = _Fields(body, at, {"psc", "bscs", "machines"})
        site = Site(site_name, _check_name(s.req("psc", str), s.at("psc"), "node"),
                    tuple(_check_name(b, s.at("bscs"), "node") for b in _str_list(s.opt("bscs", list, []), s.at("bscs"))),
                    tuple(_check_name(m, s.at("machines"), "machine")
                          for m in _str_list(s.opt("machines", list, []), s.at("machines"))))
        for node in (site.psc, *site.bscs):
            if node.casefold() in seen:
                raise ScenarioError(at, f"node {node!r} is named twice")
            seen.add(node.casefold())
        sites.append(site)
    if len(seen) > MAX_NODES:
        raise ScenarioError(f.at("sites"), f"{len(seen):,} directory servers is out of range: at most "
                            f"{MAX_NODES:,} (the limit MAX_NODES)")
    if not any(s.psc == pec for s in sites):
        raise ScenarioError(f.at("sites"), f"no site has the PEC {pec!r} as its psc")
    settle = _settle_args(f.opt("settle", dict, {}), f.at("settle"))
    return Enterprise(pec, tuple(sites), f.opt("name", str, "enterprise"), settle)


class _Names:
    """The node and site names that exist at a point of the file (add_site / add_bsc add more)."""

    def __init__(self, enterprise: Enterprise) -> None:
        self.nodes = {enterprise.pec} | {n for s in enterprise.sites for n in (s.psc, *s.bscs)}
        self.sites = {s.name for s in enterprise.sites}
        #: each site's PSC at this point of the file (move_psc changes it)
        self.pscs = {s.name: s.psc for s in enterprise.sites}
        self.pec = enterprise.pec
        #: the names ``mark`` steps have set so far
        self.marks: set[str] = set()

    def node(self, value: object, where: str) -> str:
        name = _typed(value, str, where)
        if name not in self.nodes:
            raise ScenarioError(where, f"unknown node {name!r} (known: {', '.join(sorted(self.nodes))})")
        return name

    def nodes_of(self, value: object, where: str) -> tuple[str, ...]:
        if isinstance(value, list):
            return tuple(self.node(v, f"{where}[{i}]") for i, v in enumerate(value))
        return (self.node(value, where),)

    def site(self, value: object, where: str, *, enterprise_ok: bool = False) -> str:
        name = _typed(value, str, where)
        if enterprise_ok and name == ENTERPRISE:
            return name
        if name not in self.sites:
            raise ScenarioError(where, f"unknown site {name!r} (known: {', '.join(sorted(self.sites))})")
        return name

    def new_node(self, value: object, where: str) -> str:
        name = _check_name(_typed(value, str, where), where, "node")
        if len(self.nodes) >= MAX_NODES:
            raise ScenarioError(where, f"a node beyond {MAX_NODES:,} directory servers is out of range "
                                "(the limit MAX_NODES)")
        if name.casefold() in {n.casefold() for n in self.nodes}:
            raise ScenarioError(where, f"node {name!r} already exists")
        self.nodes.add(name)
        return name


def _parse_steps(raw: list, where: str, names: _Names, *, repeated: bool) -> tuple[Step, ...]:
    steps = []
    for i, item in enumerate(raw):
        at = f"{where}[{i}]"
        if not isinstance(item, dict) or len(item) != 1:
            raise ScenarioError(at, "a step is a mapping with exactly one key, its kind "
                                f"({', '.join(sorted(_STEP_PARSERS))})")
        kind, body = next(iter(item.items()))
        if kind not in _STEP_PARSERS:
            raise ScenarioError(at, f"unknown step {kind!r} (known: {', '.join(sorted(_STEP_PARSERS))})")
        step_where = f"{at}.{kind}"
        if repeated and kind in ("add_site", "add_bsc", "move_psc"):
            raise ScenarioError(step_where, "cannot be repeated: each run would add the same name again "
                                "(give the repeat an 'index' and put it in the name)")
        args = _STEP_PARSERS[kind](body, step_where, names, repeated)
        steps.append(Step(step_where, kind, args))
    return tuple(steps)


def _properties(value: object, where: str, object_type: ObjectType) -> tuple[Property, ...]:
    data = _typed(value, dict, where)
    props = []
    for name, raw in data.items():
        at = f"{where}.{name}"
        pdef = PROPIDS.get(name) if isinstance(name, str) else None
        # named at the step, as the step's reader looks for it: "steps[3].create: unknown PROPID ..."
        step = where.removesuffix(".properties")
        if pdef is None:
            raise ScenarioError(step, f"unknown PROPID {name!r}")
        if object_type_of(pdef.propid) is not object_type:
            raise ScenarioError(step, f"{name} is not a property of a {_type_name(object_type)} (3.1.1.4)")
        try:
            props.append(converter.structure({"propid": name, "value": raw}, Property))
        except (ModelError, ValueError, TypeError, AttributeError) as exc:
            raise ScenarioError(at, f"bad value {raw!r} for {pdef.vartype.name}: {exc}") from None
    return tuple(props)


def _type_name(t: ObjectType) -> str:
    return t.name.removeprefix("MQDS_").lower()


def _guid(value: object, where: str) -> Guid:
    text = _typed(value, str, where)
    try:
        return Guid.parse(text)
    except (ModelError, ValueError) as exc:
        raise ScenarioError(where, f"not a GUID: {text!r} ({exc})") from None


def _object_type(f: _Fields) -> ObjectType:
    name = f.req("type", str)
    if name not in TYPES:
        raise ScenarioError(f.at("type"), f"unknown object type {name!r} (known: {', '.join(TYPES)})")
    return TYPES[name]


#: object types with no path name in MSMQ: a create may name neither (the object is named by the
#: identity property the server gives it, E-182)
UNNAMED_TYPES = (ObjectType.MQDS_USER, ObjectType.MQDS_ROUTINGLINK)


def _object_ref(f: _Fields, object_type: ObjectType, create: bool = False) -> tuple[str | None, Guid | None]:
    """``path`` or ``guid``, exactly one (a create of a user or routing link may give neither); a path
    with control characters is a quoting slip."""
    path = f.opt("path", str)
    guid = _guid(f.data["guid"], f.at("guid")) if f.data.get("guid") is not None else None
    if path is None and guid is None and create and object_type in UNNAMED_TYPES:
        return None, None
    if (path is None) == (guid is None):
        raise ScenarioError(f.where, "give exactly one of 'path' and 'guid'")
    if path is not None:
        if any(ord(c) < 0x20 for c in path):
            raise ScenarioError(f.at("path"), f"{path!r} holds a control character (in YAML, quote paths "
                                "with single quotes: \"C14\\testq\" turns \\t into a tab)")
        if object_type is ObjectType.MQDS_QUEUE and "\\" not in path:
            raise ScenarioError(f.at("path"), f"a queue path is MACHINE\\NAME, not {path!r}")
    return path, guid


def _parse_change(operation: str) -> Callable[[object, str, _Names, bool], dict]:
    def parse_change(body: object, where: str, names: _Names, _repeated: bool) -> dict:
        f = _Fields(body, where, {"at", "type", "path", "guid", "site", "properties", "expect_status"})
        object_type = _object_type(f)
        path, guid = _object_ref(f, object_type, create=operation == "create")
        if operation == "create" and guid is not None:
            raise ScenarioError(f.at("guid"), "a create names its object by 'path' (the server assigns the GUID)")
        site = None
        if "site" in f.data:
            if object_type in ENTERPRISE_TYPES:
                raise ScenarioError(f.at("site"), f"a {_type_name(object_type)} belongs to the enterprise partition")
            site = names.site(f.data["site"], f.at("site"))
        elif operation == "create" and object_type is ObjectType.MQDS_MACHINE:
            raise ScenarioError(where, "missing 'site' (the partition of the new machine)")
        properties: tuple[Property, ...] = ()
        if "properties" in f.data:
            if operation == "delete":
                raise ScenarioError(f.at("properties"), "a delete carries no properties")
            properties = _properties(f.data["properties"], f.at("properties"), object_type)
        elif operation == "update":
            raise ScenarioError(where, "missing 'properties' (what the update changes)")
        expected = None
        if f.data.get("expect_status") is not None:
            value = _typed(f.data["expect_status"], (str, int), f.at("expect_status"))
            if isinstance(value, str):
                if value not in STATUS:
                    raise ScenarioError(f.at("expect_status"), f"unknown status {value!r} "
                                        f"(known: {', '.join(sorted(STATUS))})")
                value = STATUS[value]
            expected = value
        return {"operation": operation, "at": names.node(f.req("at", str), f.at("at")), "type": object_type,
                "path": path, "guid": guid, "site": site, "properties": properties, "expect_status": expected}

    return parse_change


def _parse_add_site(body: object, where: str, names: _Names, _r: bool) -> dict:
    f = _Fields(body, where, {"site", "psc"})
    site = _check_name(f.req("site", str), f.at("site"), "site")
    if site in names.sites or site.casefold() == ENTERPRISE:
        raise ScenarioError(f.at("site"), f"site {site!r} already exists")
    psc = names.new_node(f.req("psc", str), f.at("psc"))
    names.sites.add(site)
    names.pscs[site] = psc
    return {"site": site, "psc": psc}


def _parse_add_bsc(body: object, where: str, names: _Names, _r: bool) -> dict:
    f = _Fields(body, where, {"site", "bsc"})
    site = names.site(f.req("site", str), f.at("site"))
    return {"site": site, "bsc": names.new_node(f.req("bsc", str), f.at("bsc"))}


def _parse_move_psc(body: object, where: str, names: _Names, _r: bool) -> dict:
    f = _Fields(body, where, {"site", "to"})
    site = names.site(f.req("site", str), f.at("site"))
    old = names.pscs[site]
    if old == names.pec:
        raise ScenarioError(f.at("site"), f"site {site!r} is the PEC's: its PSC cannot move")
    new = names.new_node(f.req("to", str), f.at("to"))
    names.nodes.discard(old)  # the old PSC leaves the enterprise
    names.pscs[site] = new
    return {"site": site, "to": new, "from": old}


def _parse_mark(body: object, where: str, names: _Names, _r: bool) -> dict:
    name = _check_name(_typed(body, str, where), where, "mark")
    names.marks.add(name)
    return {"name": name}


def _settle_args(data: dict, where: str) -> dict:
    f = _Fields(data, where, {"limit", "quiet", "window"})
    out = {k: f.seconds(k) for k in ("limit", "quiet", "window") if f.data.get(k) is not None}
    if out.get("window") is not None and out["window"] < MIN_WINDOW:
        raise ScenarioError(f.at("window"), f"a window of {out['window']!r} seconds is out of range: at least "
                            f"{MIN_WINDOW} (the limit MIN_WINDOW; each window checks the whole state)")
    return out


def _parse_settle(body: object, where: str, _n: _Names, _r: bool) -> dict:
    return _settle_args({} if body is None else body, where)  # type: ignore[arg-type]


def _parse_advance(body: object, where: str, _n: _Names, _r: bool) -> dict:
    return {"seconds": _seconds(body, where)}


def _parse_fault(kind: str) -> Callable[[object, str, _Names, bool], dict]:
    def parse_fault(body: object, where: str, names: _Names, _r: bool) -> dict:
        allowed = {"from", "to", "operation", "carrying", "times"} | ({"seconds"} if kind == "delay" else set())
        f = _Fields({} if body is None else body, where, allowed)
        operation = None
        if f.data.get("operation") is not None:
            operation = _operation(f.data["operation"], f.at("operation"))
        carrying = None
        if f.data.get("carrying") is not None:
            c = _Fields(f.data["carrying"], f.at("carrying"), {"site", "seq", "path"})
            carrying = parse_carrying(c, lambda v, at: names.site(v, at, enterprise_ok=True))
        return {
            "carrying": carrying,
            "from": names.node(f.data["from"], f.at("from")) if f.data.get("from") is not None else None,
            "to": names.node(f.data["to"], f.at("to")) if f.data.get("to") is not None else None,
            "operation": operation, "times": f.count("times"),
            "seconds": f.seconds("seconds", required=True) if kind == "delay" else 0.0,
        }

    return parse_fault


def _parse_send(body: object, where: str, names: _Names, _r: bool) -> dict:
    f = _Fields(body, where, {"from", "to", "body", "ack"})
    text = f.req("body", str)
    try:
        data = bytes.fromhex(text)
    except ValueError:
        raise ScenarioError(f.at("body"), f"not hex: {text[:40]!r}") from None
    ack = f.opt("ack", str, "None")
    if ack not in SEND_ACKS:
        raise ScenarioError(f.at("ack"), f"{ack!r} is not an acknowledgment level a send asks (known: "
                                         f"{', '.join(SEND_ACKS)})")
    return {"from": names.node(f.req("from", str), f.at("from")), "to": names.node(f.req("to", str), f.at("to")),
            "body": data, "ack": ack}


def _operation(value: object, where: str) -> Operation:
    name = _typed(value, str, where)
    op = OPERATIONS.get(_op_key(name))
    if op is None:
        known = ", ".join(operation_name(o) for o in Operation)
        raise ScenarioError(where, f"unknown replication message {name!r} (known: {known})")
    return op


def operation_name(op: Operation) -> str:
    """The message name scenario files use: ChangePropagation, PSCAck, ..."""
    return "".join(w if w in ("PSC", "BSC") else w.capitalize() for w in op.name.split("_"))


def _pair(body: object, where: str, names: _Names) -> tuple[str, str]:
    items = _typed(body, list, where)
    if len(items) != 2:
        raise ScenarioError(where, f"expected two node names, not {len(items)}")
    a, b = (names.node(v, f"{where}[{i}]") for i, v in enumerate(items))
    if a == b:
        raise ScenarioError(where, "a node cannot be cut off from itself")
    return a, b


def _parse_partition(body: object, where: str, names: _Names, _r: bool) -> dict:
    a, b = _pair(body, where, names)
    return {"a": a, "b": b}


def _parse_heal(body: object, where: str, names: _Names, _r: bool) -> dict:
    if body is None or body == "all":
        return {"a": None, "b": None}
    a, b = _pair(body, where, names)
    return {"a": a, "b": b}


def _parse_crash(body: object, where: str, names: _Names, _r: bool) -> dict:
    if isinstance(body, str):
        return {"node": names.node(body, where), "lose": "volatile"}
    f = _Fields(body, where, {"node", "lose"})
    lose = f.opt("lose", str, "volatile")
    if lose not in ("volatile", "all"):
        raise ScenarioError(f.at("lose"), f"expected 'volatile' or 'all', not {lose!r}")
    return {"node": names.node(f.req("node", str), f.at("node")), "lose": lose}


def _parse_restart(body: object, where: str, names: _Names, _r: bool) -> dict:
    return {"node": names.node(body, where)}


_INDEX = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,15}$")


def _parse_repeat(body: object, where: str, names: _Names, _r: bool) -> dict:
    f = _Fields(body, where, {"times", "steps", "index"})
    times = f.count("times", required=True)
    raw = f.req("steps", list)
    index = f.opt("index", str)
    if index is None:
        steps = _parse_steps(raw, f.at("steps"), names, repeated=times > 1)
        return {"times": times, "steps": steps, "iterations": None}
    if not _INDEX.match(index):
        raise ScenarioError(f.at("index"), f"{index!r} is not an index name (a letter, then letters or digits)")
    if times * max(len(raw), 1) > MAX_STEPS:  # each iteration is parsed on its own: bound them first
        raise ScenarioError(where, f"the repeat runs more than {MAX_STEPS:,} steps (the limit MAX_STEPS); "
                            "run fewer repetitions")
    # each iteration is its own list of steps, its names with the index substituted, checked in turn
    iterations = tuple(_parse_steps(_substitute(raw, "{" + index + "}", str(i)), f.at("steps"), names, repeated=False)
                       for i in range(1, times + 1))
    return {"times": times, "steps": iterations[0], "iterations": iterations}


def _substitute(value: object, placeholder: str, text: str) -> object:
    """``value`` with ``placeholder`` replaced by ``text`` in every string (keys included)."""
    if isinstance(value, str):
        return value.replace(placeholder, text)
    if isinstance(value, list):
        return [_substitute(v, placeholder, text) for v in value]
    if isinstance(value, dict):
        return {_substitute(k, placeholder, text): _substitute(v, placeholder, text) for k, v in value.items()}
    return value


# --- assertions -------------------------------------------------------------------------------


def _condition(value: object, where: str) -> Condition:
    if isinstance(value, int) and not isinstance(value, bool):
        return Condition("==", value)
    text = _typed(value, (str, int), where)
    m = re.fullmatch(r"\s*(==|!=|<=|>=|<|>)\s*(\d+)\s*", text)
    if m is None:
        raise ScenarioError(where, f"expected N or \"OP N\" (OP: {' '.join(COMPARE)}), not {text!r}")
    return Condition(m.group(1), int(m.group(2)))


def _assert_partition(f: _Fields, names: _Names) -> dict:
    out: dict[str, Any] = {"site": names.site(f.req("site", str), f.at("site"), enterprise_ok=True),
                           "present": f.opt("present", bool, True)}
    for key in ("last_seq", "purged_seq", "allowed_purge_seq"):
        if f.data.get(key) is not None:
            out[key] = _condition(f.data[key], f.at(key))
    if f.data.get("purge_state") is not None:
        state = f.opt("purge_state", str)
        if state not in PURGE_STATES:
            raise ScenarioError(f.at("purge_state"), f"expected one of {', '.join(PURGE_STATES)}, not {state!r}")
        out["purge_state"] = state
    if f.data.get("authority") is not None:
        out["authority"] = names.node(f.data["authority"], f.at("authority"))
    if f.data.get("pending") is not None:
        out["pending"] = _condition(f.data["pending"], f.at("pending"))
    if f.data.get("window") is not None:
        window = f.data["window"]
        out["window"] = Condition("==", MAX_SEQ) if window == "MAX" else _condition(window, f.at("window"))
    return out


def _assert_object(f: _Fields, names: _Names) -> dict:
    object_type = _object_type(f)
    path, guid = _object_ref(f, object_type)
    out = {"type": object_type, "path": path, "guid": guid, "present": f.opt("present", bool, True)}
    if f.data.get("seq") is not None:
        out["seq"] = _condition(f.data["seq"], f.at("seq"))
    if f.data.get("properties") is not None:
        out["properties"] = _properties(f.data["properties"], f.at("properties"), object_type)
    return out


def _assert_neighbor(f: _Fields, names: _Names) -> dict:
    return {"name": _typed(f.req("name", str), str, f.at("name")),
            "available": _condition(f.req("available", (int, str)), f.at("available"))}


def _assert_node(f: _Fields, names: _Names) -> dict:
    return {"my_psc_name": f.req("my_psc_name", str)}


def _since(f: _Fields, names: _Names) -> str | None:
    mark = f.opt("since", str)
    if mark is not None and mark not in names.marks:
        known = ", ".join(sorted(names.marks)) or "none yet"
        raise ScenarioError(f.at("since"), f"unknown mark {mark!r} (marked before this step: {known})")
    return mark


def _assert_neighbors(f: _Fields, names: _Names) -> dict:
    out = {}
    for key in ("psc", "bsc"):
        if key in f.data:
            out[key] = tuple(names.node(v, f"{f.at(key)}[{i}]") for i, v in enumerate(_typed(f.data[key], list, f.at(key))))
    if not out:
        raise ScenarioError(f.where, "give 'psc' or 'bsc' (or both)")
    return out


def _assert_messages(peer: str) -> Callable[[_Fields, _Names], dict]:
    def parse(f: _Fields, names: _Names) -> dict:
        return {"peer": names.node(f.data[peer], f.at(peer)) if f.data.get(peer) is not None else None,
                "operation": _operation(f.req("operation", str), f.at("operation")),
                "count": _condition(f.data.get("count", ">= 1"), f.at("count")), "since": _since(f, names)}

    return parse


def _assert_directory(f: _Fields, names: _Names) -> dict:
    operation = f.req("operation", str)
    if operation not in DIRECTORY_OPERATIONS:
        raise ScenarioError(f.at("operation"), f"expected one of {', '.join(DIRECTORY_OPERATIONS)}")
    return {"operation": operation, "count": _condition(f.data.get("count", ">= 1"), f.at("count")),
            "since": _since(f, names)}


#: assertion kind -> (its keys besides "at", its parser); "converged" is handled apart
_ASSERTIONS: dict[str, tuple[set[str], Callable[[_Fields, _Names], dict]]] = {
    "partition": ({"site", "present", "last_seq", "purged_seq", "allowed_purge_seq", "purge_state", "authority",
                   "pending", "window"}, _assert_partition),
    "object": ({"type", "path", "guid", "present", "seq", "properties"}, _assert_object),
    "tombstone": ({"type", "path", "guid", "present", "seq"}, _assert_object),
    "neighbors": ({"psc", "bsc"}, _assert_neighbors),
    "neighbor": ({"name", "available"}, _assert_neighbor),
    "node": ({"my_psc_name"}, _assert_node),
    "received": ({"from", "operation", "count", "since"}, _assert_messages("from")),
    "sent": ({"to", "operation", "count", "since"}, _assert_messages("to")),
    "directory": ({"operation", "count", "since"}, _assert_directory),
}


def _parse_expect(body: object, where: str, names: _Names, _r: bool) -> dict:
    f = _Fields(body, where, {"converged", *_ASSERTIONS})
    if not f.data:
        raise ScenarioError(where, "an expect step needs at least one assertion")
    checks: list[tuple[str, str, dict]] = []
    if "converged" in f.data:
        checks.append(("converged", f.at("converged"), {"value": f.req("converged", bool)}))
    for kind, (keys, parse_one) in _ASSERTIONS.items():
        if kind not in f.data:
            continue
        items = f.data[kind] if isinstance(f.data[kind], list) else [f.data[kind]]
        for i, item in enumerate(items):
            at = f.at(kind) if not isinstance(f.data[kind], list) else f"{f.at(kind)}[{i}]"
            g = _Fields(item, at, keys | {"at"})
            args = parse_one(g, names)
            args["at"] = names.nodes_of(g.req("at", (str, list)), g.at("at"))
            checks.append((kind, at, args))
    return {"checks": tuple(checks)}


_STEP_PARSERS: dict[str, Callable[[object, str, _Names, bool], dict]] = {
    "create": _parse_change("create"), "update": _parse_change("update"), "delete": _parse_change("delete"),
    "add_site": _parse_add_site, "add_bsc": _parse_add_bsc, "move_psc": _parse_move_psc, "mark": _parse_mark, "settle": _parse_settle, "advance": _parse_advance,
    "drop": _parse_fault("drop"), "duplicate": _parse_fault("duplicate"), "delay": _parse_fault("delay"),
    "tamper": _parse_fault("tamper"), "send": _parse_send,
    "partition": _parse_partition, "heal": _parse_heal, "crash": _parse_crash, "restart": _parse_restart,
    "repeat": _parse_repeat, "expect": _parse_expect,
}
