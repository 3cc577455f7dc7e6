"""`mqspec scenario run --invariants`: every invariant checked after every step of a scenario file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from mqspec.proofs import counterexample_scenarios as cs
from mqspec.proofs.scenario_watch import InvariantWatch
from mqspec.refimpl.effects import Mode
from mqspec.refimpl.scenario import load, parse
from mqspec.refimpl.scenario_run import run

from mqspec.cli.scenario import scenario

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
LITERAL_HUNTS = sorted((SCENARIOS / "counterexamples" / "literal").glob("*.yaml"))


def invoke(*args: str):
    return CliRunner().invoke(scenario, ["run", *args])


def watched(text: str, mode: Mode = Mode.CLARIFIED) -> InvariantWatch:
    watch = InvariantWatch()
    run(parse(yaml.safe_load(text), "inline"), mode=mode, trace=watch.record, attach=watch.attach)
    watch.finish()
    return watch


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("4.*.yaml")), ids=lambda p: p.stem)
def test_the_section_4_examples_hold_every_invariant_after_every_step(path):
    """Clarified, the five examples of section 4 violate no invariant at any step (exit 0, one check per step)."""
    out = invoke(str(path), "--invariants", "--json")
    assert out.exit_code == 0, out.stderr
    checks = json.loads(out.stdout)["invariants"]
    assert checks["violations"] == [] and checks["checks"] >= len(load(path).steps)
    assert checks["quiescent_checks"] >= 1


def test_a_violation_names_the_invariant_and_the_step_and_exits_1():
    """E-104 read literally: a site created through a BSC gives PEC0 a second partition object for one PartitionID."""
    path = SCENARIOS / "counterexamples" / "literal" / "partition_held_once_per_server.yaml"
    out = invoke(str(path), "--invariants", "--mode", "literal", "--json")
    assert out.exit_code == 1
    violations = {v["invariant"]: v for v in json.loads(out.stdout)["invariants"]["violations"]}
    duplicate = violations["partition_held_once_per_server"]
    assert duplicate["step"].startswith("steps[") and "duplicate partition" in duplicate["problems"][0]
    assert "mqspec: invariant violated:" in out.stderr and "partition_held_once_per_server" in out.stderr


def _one_site(*steps: str) -> str:
    """A one-site enterprise (PEC0, BSC01, client C01) whose steps are ``steps`` (YAML flow lines)."""
    lines = "".join(f"  - {step}\n" for step in steps)
    return ("enterprise:\n  pec: PEC0\n  sites:\n    site0: {psc: PEC0, bscs: [BSC01], machines: [C01]}\n"
            f"steps:\n{lines}")


def test_quiescence_is_not_asked_of_a_settle_with_a_server_down():
    """A settle that ends with a BSC crashed is not quiescence: no convergence violation, though the BSC lags."""
    create = "create: {at: PEC0, type: queue, path: 'C01\\\\q', properties: {PROPID_Q_LABEL: q}}"
    down = watched(_one_site("crash: {node: BSC01}", create, "settle: {quiet: 60}"))
    assert down.violations == [] and down.quiescent_checks == 0
    healed = watched(_one_site("crash: {node: BSC01, lose: all}", create, "restart: BSC01", "settle: {}"))
    assert healed.violations == [] and healed.checks == 5  # the build, three steps, the settle
    assert healed.quiescent_checks == 1


def test_invariants_and_trace_together(tmp_path):
    """--invariants works with --trace: the trace is written and the invariants are checked."""
    trace = tmp_path / "t.ndjson"
    out = invoke(str(SCENARIOS / "4.1-adding-a-site.yaml"), "--invariants", "--trace", str(trace))
    assert out.exit_code == 0, out.stderr
    assert "every invariant held" in out.stdout and trace.stat().st_size > 0


@pytest.mark.parametrize("path", LITERAL_HUNTS, ids=lambda p: p.stem)
def test_a_literal_hunt_shows_its_invariant_literally_and_none_clarified(path):
    """Each shrunk counterexample of bench/literal.py violates its invariant when read as its header says
    (wholly literally, or literally inside the handlers its ``# replay: literal in`` line names), nothing clarified."""
    text = path.read_text(encoding="utf-8")
    invariant = path.stem.split("-literal-in-")[0]
    handlers = cs.replay_handlers(path)
    if handlers is None:
        literal = watched(text, Mode.LITERAL)
    else:
        with cs.literal_in(*handlers):
            literal = watched(text)
    assert invariant in [v["invariant"] for v in literal.violations]
    assert watched(text).violations == []
