"""`mqspec scenario run`: exit codes, one-line errors, --json, --trace and determinism."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from mqspec.cli.scenario import scenario

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
SMALL = """\
enterprise:
  pec: PEC0
  sites:
    site0: {psc: PEC0, bscs: [BSC01], machines: [C01]}
steps:
  - create: {at: BSC01, type: queue, path: 'C01\\q', properties: {PROPID_Q_LABEL: q}, expect_status: MQ_OK}
  - settle: {quiet: 60}
  - expect:
      converged: true
      object: {at: BSC01, type: queue, path: 'C01\\q'}
"""


def invoke(*args: str):
    return CliRunner().invoke(scenario, ["run", *args])


@pytest.fixture
def small(tmp_path: Path) -> Path:
    path = tmp_path / "small.yaml"
    path.write_text(SMALL)
    return path


def test_a_passing_scenario_exits_0_with_a_summary(small):
    """A run whose expectations all hold exits 0 and prints the node table and the verdict."""
    out = invoke(str(small))
    assert out.exit_code == 0, out.stderr
    assert "converged;" in out.stdout and "BSC01" in out.stdout
    assert out.stderr == ""


def test_json_output_has_the_published_shape(small):
    """--json prints converged, problems, time, messages and every node in the issue's shape."""
    out = invoke(str(small), "--json")
    assert out.exit_code == 0, out.stderr
    data = json.loads(out.stdout)
    assert {"converged", "problems", "time", "messages", "nodes", "failures"} <= set(data)
    assert data["converged"] is True and data["problems"] == [] and data["messages"] > 0
    node = data["nodes"]["BSC01"]
    assert node["role"] == "BSC" and {"site", "partitions", "deleted_objects"} <= set(node)
    partition = next(iter(node["partitions"].values()))
    assert {"authority", "last_seq", "purged_seq", "allowed_purge_seq", "purge_state", "objects"} <= set(partition)
    queue = [o for p in node["partitions"].values() for o in p["objects"].values() if o["type"] == "queue"]
    assert queue == [{"type": "queue", "path": "C01\\q", "seq": "4"}]  # a sequence number: a decimal string


def test_failed_expectation_exits_1_naming_the_step(tmp_path):
    """A failed expect prints one stderr line per failure naming the file and step, exit 1."""
    path = tmp_path / "fails.yaml"
    path.write_text(SMALL.replace("converged: true", "converged: false"))
    out = invoke(str(path))
    assert out.exit_code == 1
    assert out.stderr.strip() == (f"mqspec: expectation failed: {path}: steps[2].expect: converged: "
                                  "converged, but the scenario expects it not to")


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        (SMALL.replace("PROPID_Q_LABEL", "PROPID_Q_LABL"), "steps[0].create: unknown PROPID 'PROPID_Q_LABL'"),
        (SMALL.replace("at: BSC01", "at: BSC99", 1), "steps[0].create.at: unknown node 'BSC99'"),
        (SMALL.replace("quiet: 60", "quiet: soon"), "steps[1].settle.quiet: expected an integer or a number"),
        (SMALL.replace("steps:", "stepz:"), "unknown key 'stepz'"),
        ("enterprise: [\n", "line 2 column 1"),
        ("- just a list\n", "expected a mapping, not a list"),
    ],
)
def test_bad_scenario_is_one_line_and_exit_2(tmp_path, text, needle):
    """A bad scenario file prints `mqspec: scenario error: FILE: where: what` and exits 2, no traceback."""
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    out = invoke(str(path))
    assert out.exit_code == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"mqspec: scenario error: {path}: ")
    assert needle in lines[0] and "Traceback" not in out.stderr


def test_missing_file_is_exit_2(tmp_path):
    """A file that does not exist is one error line and exit 2."""
    out = invoke(str(tmp_path / "nope.yaml"))
    assert out.exit_code == 2 and "No such file" in out.stderr


def test_json_scenario_files_are_read_too(tmp_path):
    """A .json scenario file runs like its YAML equivalent."""
    import yaml

    path = tmp_path / "small.json"
    path.write_text(json.dumps(yaml.safe_load(SMALL)))
    assert invoke(str(path)).exit_code == 0


def test_bad_json_names_line_and_column(tmp_path):
    """A JSON syntax error names the line and column."""
    path = tmp_path / "bad.json"
    path.write_text('{\n  "enterprise": oops\n}')
    out = invoke(str(path))
    assert out.exit_code == 2 and "line 2 column" in out.stderr


def test_trace_lines_carry_the_trace_id_and_format(small, tmp_path):
    """--trace writes the published format: one JSON object per line, each with the trace id (stem:mode:seed) and the format version."""
    trace = tmp_path / "t.ndjson"
    out = invoke(str(small), "--trace", str(trace), "--seed", "3")
    assert out.exit_code == 0, out.stderr
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    assert len(lines) > 10
    from mqspec.oracle.trace_format import FORMAT_VERSION

    assert FORMAT_VERSION == 3
    assert all(line["trace"] == "small:clarified:3" and line["format"] == FORMAT_VERSION for line in lines)
    events = {line["event"] for line in lines}
    assert {"header", "node", "start", "send", "receive", "timer", "directory", "client_request", "snapshot"} <= events
    assert lines[0]["event"] == "header"


def test_same_seed_gives_byte_identical_trace_and_json(small, tmp_path):
    """Two runs with one scenario, mode and seed write the same trace bytes and print the same JSON."""
    outputs = []
    for i in range(2):
        trace = tmp_path / f"t{i}.ndjson"
        out = invoke(str(small), "--json", "--trace", str(trace), "--seed", "7")
        outputs.append((out.stdout, trace.read_bytes()))
    assert outputs[0] == outputs[1]
    other = invoke(str(small), "--json", "--seed", "8")
    assert other.stdout != outputs[0][0]  # the seed names the objects


def test_literal_mode_runs_and_reports_divergence():
    """--mode literal runs 4.1 to the end and exits 1 with the failed expectations."""
    out = invoke(str(SCENARIOS / "4.1-adding-a-site.yaml"), "--mode", "literal", "--json")
    assert out.exit_code == 1
    data = json.loads(out.stdout)
    assert data["converged"] is False and data["failures"]
    assert "steps[3].expect: converged: not converged" in out.stderr


def test_literal_problems_name_partitions_as_the_table_does_and_are_never_broken_mid_guid():
    """The table's partition names (site1, enterprise) are the problem lines' names, each problem on one line."""
    import re

    out = CliRunner(env={"COLUMNS": "80"}).invoke(scenario, ["run", str(SCENARIOS / "4.1-adding-a-site.yaml"),
                                                              "--mode", "literal"])
    assert out.exit_code == 1
    problems = out.stdout[out.stdout.index("NOT converged"):].splitlines()[1:]
    assert problems and all(line.startswith("  ") for line in problems), problems
    assert not any(re.search(r"partition [0-9a-f]{8}-", line) for line in problems), problems
    assert any(re.search(r"partition (enterprise|site\d)\b", line) for line in problems), problems


def test_unwritable_trace_is_exit_2(small, tmp_path):
    """A --trace path that cannot be written is one error line and exit 2."""
    out = invoke(str(small), "--trace", str(tmp_path / "no" / "such" / "dir.ndjson"))
    assert out.exit_code == 2 and out.stderr.startswith("mqspec: error: ")
