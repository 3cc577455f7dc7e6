"""bench/stateful.py: the progress lines a long soak writes after each batch, the failures its workers save, and its rates and cost shares."""

from __future__ import annotations

import json
import sys

import pytest

from mqspec.refimpl.effects import Mode

from tests.bench import load


def _bench():
    return load("stateful")


def test_progress_gets_a_line_per_batch_with_the_steps_so_far(tmp_path):
    """Each finished batch appends its worker's steps, runs, CPU seconds and violations so far; the last line agrees with the report."""
    progress = tmp_path / "progress.jsonl"
    out = _bench().run(30, Mode.CLARIFIED, 10, 1, "ci", seed=3, progress=str(progress))
    lines = [json.loads(line) for line in progress.read_text(encoding="utf-8").splitlines()]
    assert [line["batches"] for line in lines] == list(range(1, out["batches"] + 1))
    assert all(a["steps"] < b["steps"] for a, b in zip(lines, lines[1:]))
    assert lines[-1]["steps"] == out["steps"] and lines[-1]["runs"] == out["runs"]
    assert lines[-1]["violations"] == out["violations"] and lines[-1]["worker"] == 0


def test_the_workers_failure_lines_end_in_the_one_file_asked_for(tmp_path):
    """--save-failures with workers: each worker's lines are appended to OUT in worker order and its own file is removed."""
    out = tmp_path / "failures.jsonl"
    out.write_text('{"run": "earlier"}\n', encoding="utf-8")
    (tmp_path / "failures.jsonl.0").write_text('{"worker": 0}\n', encoding="utf-8")
    (tmp_path / "failures.jsonl.2").write_text('{"worker": 2, "a": 1}\n{"worker": 2, "a": 2}\n', encoding="utf-8")
    _bench().gather_failures(str(out), 3)
    assert out.read_text(encoding="utf-8").splitlines() == [
        '{"run": "earlier"}', '{"worker": 0}', '{"worker": 2, "a": 1}', '{"worker": 2, "a": 2}']
    assert sorted(p.name for p in tmp_path.iterdir()) == ["failures.jsonl"]


def test_the_rates_and_the_cost_shares_add_up():
    """A short run reports handler runs and invariant checks per CPU second, and each rule's handler runs add up to the run's."""
    bench = _bench()
    out = bench.run(60, Mode.CLARIFIED, 20, 3, "ci", seed=5)
    from mqspec.proofs import invariants as inv

    assert out["invariant_checks"] == out["steps"] * len(inv.NAMES)  # every invariant after every step
    assert out["handler_runs"] > 0 and out["refinement_checks"] == 0  # the check is off
    assert out["handler_runs_per_second"] == pytest.approx(out["handler_runs"] / out["seconds"], rel=1e-3)
    assert out["invariant_checks_per_second"] == pytest.approx(out["invariant_checks"] / out["seconds"], rel=1e-3)
    costs = out["rule_costs"]
    assert sum(runs for _calls, _seconds, runs in costs.values()) == out["handler_runs"]
    assert costs["build (initialize)"][0] == out["runs"] == costs[bench.FINAL][0]
    shares = bench.cost_shares(costs, out["check_seconds"], out["seconds"])
    assert abs(sum(line["share"] for line in shares.values()) - 1) < 0.01
    assert shares[bench.REST]["seconds"] >= 0


def test_with_refine_every_handler_run_is_checked_against_the_model():
    """--refine: the report counts the handler runs checked, and each one is (the build's counted once, as its
    handler runs are, however many runs start from a copy of it)."""
    out = _bench().run(40, Mode.CLARIFIED, 20, 2, "ci", seed=5, refine=True)
    assert out["refine"] is True and out["violations"] == 0
    assert out["refinement_checks"] == out["handler_runs"] > 0


def test_output_files_it_cannot_write_are_refused_before_the_first_batch(tmp_path, monkeypatch, capsys):
    """`--progress` or `--save-failures` in a folder that does not exist is a usage error at once (exit 2), not a
    traceback when the first batch ends, or when a soak first finds a violation."""
    for option in ("--progress", "--save-failures"):
        path = tmp_path / "missing" / "out.jsonl"
        monkeypatch.setattr(sys, "argv", ["stateful.py", "--steps", "1", option, str(path)])
        with pytest.raises(SystemExit) as exit_:
            load("stateful").main()
        assert exit_.value.code == 2
        assert capsys.readouterr().err.endswith(f"stateful.py: error: {path}: No such file or directory\n")
