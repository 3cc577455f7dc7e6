"""Scenario numbers and limits: YAML 1.2 numbers, ranges that name their limit, bounded work.

The scenario vocabulary (mqspec.refimpl.scenario, "Numbers and limits") bounds what a file may
ask of the simulator, so a file either runs to its end or is refused with one error naming the
limit; nothing hangs and nothing ends in a traceback (issue 15 rows 1-4).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from mqspec.cli import main
from mqspec.refimpl import scenario as sc
from mqspec.refimpl import scenario_run

HEAD = "enterprise:\n  pec: PEC0\n  sites:\n    site0: {psc: PEC0}\nsteps:\n"


def _load(tmp_path: Path, steps: str, name: str = "t.yaml") -> sc.Scenario:
    path = tmp_path / name
    path.write_text(HEAD + steps, encoding="utf-8")
    return sc.load(path)


def test_exponent_numbers_are_numbers(tmp_path):
    """YAML 1.2 exponent forms (1e3, 2.5E+2) are read as numbers, and a whole 1e3 is a count."""
    parsed = _load(tmp_path, "  - advance: 1e3\n  - settle: {limit: 2.5E+2}\n  - drop: {times: 1e3}\n")
    assert parsed.steps[0].args == {"seconds": 1000.0}
    assert parsed.steps[1].args == {"limit": 250.0}
    assert parsed.steps[2].args["times"] == 1000


def test_quoted_exponent_stays_text(tmp_path):
    """Only plain scalars become numbers: a quoted '1e3' is still text, and says so."""
    with pytest.raises(sc.ScenarioError, match=r"steps\[0\].advance: expected an integer or a number, not text"):
        _load(tmp_path, "  - advance: '1e3'\n")


@pytest.mark.parametrize(
    ("steps", "message"),
    [
        ("  - advance: 1e12\n", "steps[0].advance: 1e+12 seconds is out of range: at most 86,400"),
        ("  - advance: 1.0e+300\n", "steps[0].advance: 1e+300 seconds is out of range"),
        ("  - advance: 100000000000000000000000000000000000000000000000000\n",
         "steps[0].advance: 1.000e+50 seconds is out of range"),
        ("  - settle: {limit: 1000000000000, quiet: 100000000000}\n",
         "steps[0].settle.limit: 1,000,000,000,000 seconds is out of range: at most 86,400 (one simulated day, "
         "the limit MAX_SECONDS)"),
        ("  - settle: {limit: 1e15}\n", "steps[0].settle.limit: 1e+15 seconds is out of range"),
        ("  - settle: {window: 0.01}\n", "steps[0].settle.window: a window of 0.01 seconds is out of range: at least 1"),
        ("  - drop: {times: 1e12}\n", "steps[0].drop.times: 1,000,000,000,000 is out of range: at most 1,000,000 "
         "(the limit MAX_TIMES)"),
        ("  - drop: {times: 2.5}\n", "steps[0].drop.times: expected a whole number, not 2.5"),
        ("  - delay: {seconds: .inf}\n", "steps[0].delay.seconds: expected a finite number, not inf"),
        ("  - repeat: {times: 1000, steps: [{repeat: {times: 1000, steps: [{repeat: {times: 1000, "
         "steps: [{advance: 1}]}}]}}]}\n",
         "steps[0].repeat: the file runs more than 100,000 steps up to here, counting each repetition "
         "(the limit MAX_STEPS)"),
        ("  - advance: 1\n  - repeat: {times: 99999, steps: [{advance: 1}]}\n", "steps[1].repeat: the file runs more"),
    ],
)
def test_out_of_range_values_name_the_limit(tmp_path, steps, message):
    """A number beyond what the simulator can do is one ScenarioError naming where and the limit."""
    with pytest.raises(sc.ScenarioError) as info:
        _load(tmp_path, steps)
    assert message in str(info.value)


def test_limits_are_inclusive(tmp_path):
    """Exactly MAX_SECONDS, MAX_TIMES and MAX_STEPS are allowed: the limit is the largest value accepted."""
    parsed = _load(tmp_path, f"  - advance: {sc.MAX_SECONDS}\n  - drop: {{times: {sc.MAX_TIMES}}}\n"
                   f"  - repeat: {{times: {sc.MAX_STEPS - 3}, steps: [{{settle: {{}}}}]}}\n")
    assert sc.step_count(parsed.steps) == sc.MAX_STEPS


def test_an_enterprise_beyond_max_nodes_is_refused():
    """More directory servers than MAX_NODES is refused before anything is built."""
    sites = {f"s{i}": {"psc": f"P{i}", "bscs": [f"B{i}"]} for i in range(sc.MAX_NODES // 2 + 1)}
    sites["s0"]["psc"] = "PEC0"
    with pytest.raises(sc.ScenarioError, match=r"enterprise.sites: 2,002 directory servers is out of range: at most 2,000"):
        sc.parse({"enterprise": {"pec": "PEC0", "sites": sites}, "steps": []})


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("deep.yaml", "enterprise: " + "[" * 3000 + "]" * 3000 + "\n"),
        ("deep.json", '{"enterprise": ' + "[" * 3000 + "]" * 3000 + "}\n"),
        ("repeat.yaml", HEAD.removesuffix("steps:\n") + "steps: " + "[{repeat: {times: 1, steps: " * 400 + "[]"
         + "}}]" * 400 + "\n"),
    ],
)
def test_deep_nesting_is_a_scenario_error(tmp_path, name, text):
    """A file nested thousands of levels deep is a ScenarioError, not a RecursionError."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(sc.ScenarioError, match="nested too deeply"):
        sc.load(path)


def test_a_yaml_value_python_cannot_hold_is_a_scenario_error(tmp_path):
    """A YAML date that does not exist (month 13) is a ScenarioError, not a ValueError."""
    with pytest.raises(sc.ScenarioError, match="a value cannot be read: month must be in 1..12"):
        _load(tmp_path, "  - advance: 2020-13-45\n")


def test_a_run_past_max_run_seconds_stops_naming_the_step(tmp_path, monkeypatch):
    """The steps' simulated time is bounded: the step that passes MAX_RUN_SECONDS stops the run with a ScenarioError."""
    monkeypatch.setattr(scenario_run, "MAX_RUN_SECONDS", 100)
    parsed = _load(tmp_path, "  - advance: 60\n  - repeat: {times: 5, steps: [{advance: 30}]}\n  - advance: 1\n")
    with pytest.raises(sc.ScenarioError) as info:
        scenario_run.run(parsed)
    assert str(info.value).startswith("steps[1].repeat.steps[0].advance (iteration 2): stopped: the steps have run 120")


@pytest.mark.timeout(60)
def test_cli_refuses_the_issue_files_at_once_with_one_line(tmp_path):
    """`scenario run` of each file of issue 15 rows 1-4 exits 2 with one stderr line, without running."""
    files = {
        "settle.yaml": HEAD + "  - settle: {limit: 1000000000000, quiet: 100000000000}\n",
        "nested.yaml": HEAD + "  - repeat: {times: 1000, steps: [{repeat: {times: 1000, steps: [{repeat: "
                              "{times: 1000, steps: [{advance: 1}]}}]}}]}\n",
        "exp.yaml": HEAD + "  - advance: 1e12\n",
        "huge.yaml": HEAD + "  - advance: 1.0e+300\n",
        "deep.json": json.dumps({"enterprise": {}})[:-1] + ', "steps": ' + "[" * 5000 + "]" * 5000 + "}",
    }
    runner = CliRunner()
    for name, text in files.items():
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        start = time.monotonic()
        result = runner.invoke(main, ["scenario", "run", str(path)])
        assert time.monotonic() - start < 5, name
        assert result.exit_code == 2, (name, result.output)
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"mqspec: scenario error: {path}: "), (name, lines)
        assert result.exception is None or isinstance(result.exception, SystemExit)


def test_cli_run_stopped_at_the_time_limit_is_exit_2(tmp_path, monkeypatch):
    """A run stopped by MAX_RUN_SECONDS is reported as one scenario-error line, exit 2."""
    monkeypatch.setattr(scenario_run, "MAX_RUN_SECONDS", 10)
    path = tmp_path / "long.yaml"
    path.write_text(HEAD + "  - advance: 20\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["scenario", "run", str(path)])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [f"mqspec: scenario error: {path}: steps[0].advance: stopped: the steps have "
                                          "run 20 simulated seconds, more than 10 (0.000115741 days, the limit "
                                          "MAX_RUN_SECONDS)"]
