"""Scenario vectors: a whole enterprise run, as the trace a real deployment could record.

Three sources, each run with a fixed seed by :func:`mqspec.refimpl.scenario_run.run`:

* ``example``: the MC-MQDSRP section 4 examples (``scenarios/4.*.yaml``), in both modes; the
  literal reading of the text does not converge (E-142), and its trace shows how;
* ``counterexample``: the literal-mode counterexamples (``scenarios/counterexamples/*.yaml``
  and the ``scenarios/e<NNN>-*.yaml`` files that demonstrate one errata entry), in both modes;
* ``fault``: generated scenarios, each from ``random.Random(seed)``: a small enterprise,
  directory changes at every kind of server, and message drops, duplicates, delays, network
  partitions and crashes between them; run in clarified mode, they must converge.

A vector holds the scenario itself (``scenario.json``, the scenario file's content as JSON), the
trace (``trace.ndjson``: one JSON object per line, exactly what ``mqspec scenario run --trace``
writes) and the run's result (``expected.json``: what ``mqspec scenario run --json`` prints).
"""

from __future__ import annotations

import importlib
import io
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs

from mqspec.refimpl import scenario as sc
from mqspec.refimpl.effects import Mode
from mqspec.oracle.trace_format import FORMAT_VERSION as TRACE_FORMAT  # noqa: F401  (the runner and writer read it here)
from mqspec.refimpl.scenario_run import trace_id

def _scenario_dir() -> Path:
    """scenarios/ of a source checkout, installed with mqspec as package data (mqspec.scenarios)."""
    try:
        module = importlib.import_module("mqspec.scenarios")
    except ModuleNotFoundError:  # an editable install made before scenarios/ became mqspec.scenarios
        return Path(__file__).resolve().parents[2] / "scenarios"
    return Path(module.__file__ or "scenarios").parent


#: the scenario files the example and counterexample vectors run
SCENARIO_DIR = _scenario_dir()


@attrs.frozen
class ScenarioVector:
    """One scenario run: its source, its inputs and everything it produced."""

    name: str  # the case name: "<scenario>-<mode>"
    source: str  # example | counterexample | fault
    scenario_name: str  # the scenario's own name (it is part of the trace id)
    mode: Mode
    seed: int
    document: str
    section: str
    description: str
    scenario: dict[str, Any]
    trace: bytes
    result: dict[str, Any]


def run_scenario(data: dict[str, Any], name: str, mode: Mode, seed: int) -> tuple[bytes, dict[str, Any]]:
    """Parse and run a scenario; return the published trace (NDJSON bytes, what ``mqspec scenario run
    --trace`` writes and ``mqspec check`` reads) and the result JSON."""
    from mqspec.oracle.record import record_scenario

    parsed = sc.parse(data, name)
    out = io.StringIO()
    result = record_scenario(parsed, mode=mode, seed=seed, trace_id=trace_id(name, mode, seed), write=out.write)
    return out.getvalue().encode("utf-8"), result.to_json()


def _description(text: str) -> str:
    """The first comment paragraph of a scenario file, as one line."""
    lines = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        stripped = line.lstrip("#").strip()
        if not stripped and lines:
            break
        if stripped:
            lines.append(stripped)
    return " ".join(lines)


def _erratum_section(stem: str) -> tuple[str, str]:
    """The document and section of the errata entry an ``e<NNN>-...`` scenario demonstrates."""
    from mqspec import errata

    match = re.match(r"e(\d{3})", stem)
    if match:
        entry = errata.by_id().get(f"E-{match.group(1)}")
        if entry is not None:
            return entry.document, entry.section
    return "MC-MQDSRP", "3"


def scenario_files(folder: Path = SCENARIO_DIR) -> list[tuple[str, Path]]:
    """(source, file) for every example and counterexample file, in name order."""
    if not folder.is_dir():
        raise FileNotFoundError(2, "no scenario folder (give --scenarios DIR)", str(folder))
    files = [("example", f) for f in sorted(folder.glob("4.*.yaml"))]
    files += [("counterexample", f) for f in sorted(folder.glob("e[0-9]*.yaml"))]
    files += [("counterexample", f) for f in sorted((folder / "counterexamples").glob("*.yaml"))]
    return files


def _file_vector(source: str, path: Path, mode: Mode, seed: int = 0) -> ScenarioVector:
    text = path.read_text(encoding="utf-8")
    data = sc.read_text(text, path)
    if source == "example":
        document, section = "MC-MQDSRP", path.stem.split("-", 1)[0]
    else:
        document, section = _erratum_section(path.stem)
    trace, result = run_scenario(data, path.stem, mode, seed)
    return ScenarioVector(f"{path.stem}-{mode.value}", source, path.stem, mode, seed, document, section,
                          _description(text), data, trace, result)


# --- generated fault scenarios -------------------------------------------------------------------

OPERATIONS = ("ChangePropagation", "ChangeRequest", "SyncRequest", "SyncReply", "ChangeReply", "PSCAck",
              "BSCAck", "AlreadyPurged")


def fault_scenario(seed: int) -> dict[str, Any]:
    """A scenario drawn from ``random.Random(seed)``: changes everywhere, faults between them.

    The enterprise has two sites, a BSC in each and a client machine in each; the steps create
    queues at the authority and through other servers (change requests), update and delete
    them, and in between drop, duplicate or delay replication messages, split the network and
    heal it, or crash a server (losing what 3.1.1 does not persist) and restart it. The run
    ends with a long settle and expects convergence.
    """
    rng = random.Random(seed)
    nodes = ["PEC0", "PSC1", "BSC01", "BSC11"]
    steps: list[dict[str, Any]] = []
    queues: list[tuple[str, str]] = []  # (path, machine)
    down: str | None = None
    for i in range(rng.randint(8, 14)):
        roll = rng.random()
        machine = rng.choice(("C01", "C11"))
        up = [n for n in nodes if n != down]
        if roll < 0.3 or not queues:
            path = f"{machine}\\q{i}"
            queues.append((path, machine))
            steps.append({"create": {"at": rng.choice(up), "type": "queue", "path": path,
                                     "properties": {"PROPID_Q_LABEL": f"label{i}"}}})
        elif roll < 0.45:
            path, _ = rng.choice(queues)
            steps.append({"update": {"at": rng.choice(up), "type": "queue", "path": path,
                                     "properties": {"PROPID_Q_LABEL": f"new{i}"}}})
        elif roll < 0.5:
            path, _ = queues.pop(rng.randrange(len(queues)))
            steps.append({"delete": {"at": rng.choice(up), "type": "queue", "path": path}})
        elif roll < 0.8:
            kind = rng.choice(("drop", "duplicate", "delay"))
            fault: dict[str, Any] = {"operation": rng.choice(OPERATIONS), "times": rng.randint(1, 3)}
            if rng.random() < 0.7:
                fault["to"] = rng.choice(nodes)
            if kind == "delay":
                fault["seconds"] = rng.choice((1, 5, 30))
            steps.append({kind: fault})
        elif roll < 0.9 and down is None:
            down = rng.choice(nodes[1:])
            steps.append({"crash": {"node": down, "lose": "volatile"}})
        elif down is not None:
            steps.append({"restart": down})
            down = None
        else:
            a, b = rng.sample(nodes, 2)
            steps += [{"partition": [a, b]}, {"advance": rng.choice((5, 30))}, {"heal": [a, b]}]
        steps.append({"advance": rng.choice((0.5, 2, 10))})
    if down is not None:
        steps.append({"restart": down})
    steps += [{"settle": {"quiet": 1500}}, {"expect": {"converged": True}}]
    return {
        "description": f"Generated fault scenario (random.Random({seed})): changes, message faults, a partition or "
                       "a crash, then convergence.",
        "enterprise": {"pec": "PEC0", "sites": {"site0": {"psc": "PEC0", "bscs": ["BSC01"], "machines": ["C01"]},
                                               "site1": {"psc": "PSC1", "bscs": ["BSC11"], "machines": ["C11"]}}},
        "steps": steps,
    }


def _fault_vector(seed: int) -> ScenarioVector:
    data = fault_scenario(seed)
    name = f"fault-{seed:03d}"
    trace, result = run_scenario(data, name, Mode.CLARIFIED, seed)
    return ScenarioVector(f"{name}-clarified", "fault", name, Mode.CLARIFIED, seed, "MC-MQDSRP", "3",
                          data["description"], data, trace, result)


def _in_reduced_set(stem: str, mode: Mode) -> bool:
    if stem.startswith(("4.1-", "e136-")):
        return True
    return mode is Mode.CLARIFIED and stem.startswith(("4.2-", "4.3-"))


#: the seeds of the generated fault scenarios (reduced set: the first)
FAULT_SEEDS = (1, 2, 3, 4)


def scenario_vectors(*, reduced: bool = False, folder: Path = SCENARIO_DIR) -> Iterator[ScenarioVector]:
    """Every scenario vector. The reduced set (a fast test tier) keeps the clarified examples
    4.1 to 4.3, 4.1 in literal mode, the smallest counterexample in both modes and one fault
    scenario; the full set has every example and counterexample in both modes."""
    for source, path in scenario_files(folder):
        for mode in (Mode.CLARIFIED, Mode.LITERAL):
            if reduced and not _in_reduced_set(path.stem, mode):
                continue
            yield _file_vector(source, path, mode)
    for seed in FAULT_SEEDS[:1] if reduced else FAULT_SEEDS:
        yield _fault_vector(seed)
