"""`mqspec check` on a trace with ``hole`` events (a capture's lost bytes): verdict incomplete-capture."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from mqspec.cli.check import check
from mqspec.oracle.check import EXIT, check_text
from mqspec.oracle.record import scenario_trace

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


@pytest.fixture(scope="module")
def site_trace() -> list[dict]:
    """The recorded trace of scenario 4.1 (PEC0 and PSC1, every kind observed)."""
    return [json.loads(x) for x in scenario_trace(str(SCENARIOS / "4.1-adding-a-site.yaml")).splitlines()]


def text(events: list[dict]) -> str:
    return "".join(json.dumps(e) + "\n" for e in events)


def first_answer(events: list[dict], node: str) -> tuple[int, int]:
    """(index of a receive at ``node``, index of the send that answers it) in the recorded trace."""
    for i, e in enumerate(events):
        if e["event"] == "receive" and e["node"] == node:
            j = next(k for k in range(i + 1, len(events)) if events[k]["event"] in ("send", "receive")
                     and events[k].get("node") == node)
            if events[j]["event"] == "send":
                return i, j
    raise AssertionError(f"no receive answered by a send at {node}")


def hole(t: float, nodes: list[str] | None, trace: str) -> dict:
    record = {"trace": trace, "format": 2, "event": "hole", "t": t, "kind": "tcp-gap",
              "text": "the capture lacks TCP stream bytes 100..199 (100 bytes)", "bytes": 100}
    if nodes is not None:
        record["nodes"] = nodes
    return record


def test_a_missing_answer_behind_a_hole_is_incomplete_not_divergent(site_trace):
    """A send removed from the trace is a missing output; with a hole touching its node just before
    it, the node is judged up to the hole: incomplete-capture, never divergent because of the hole."""
    i, j = first_answer(site_trace, "PSC1")
    without = site_trace[:j] + site_trace[j + 1:]
    plain = check_text(text(without), coverage=False)[0]
    assert plain.verdict == "divergent" and plain.divergence.kind == "missing-output"
    holed = without[:j] + [hole(without[j]["t"], ["PSC1", "PEC0"], without[0]["trace"])] + without[j:]
    report = check_text(text(holed), coverage=False)[0]
    assert report.verdict == "incomplete-capture", report.to_json()
    assert report.divergence is None and report.checked > 0
    assert report.nodes["PSC1"] == f"conformant up to the hole at event {j}"
    assert [(h["event"], h["kind"], h["nodes"], h["bytes"]) for h in report.holes] == [
        (j, "tcp-gap", ["PSC1", "PEC0"], 100)]
    assert report.to_json()["holes_total"] == 1


def test_a_divergence_before_the_hole_stands(site_trace):
    """A corrupt send before a hole is divergent: the hole excuses nothing that precedes it."""
    i, j = first_answer(site_trace, "PSC1")
    events = [dict(e) for e in site_trace]
    body = bytearray.fromhex(events[j]["body"])
    body[0] ^= 0xFF
    events[j]["body"] = body.hex()
    holed = events[:j + 1] + [hole(events[j]["t"], None, events[0]["trace"])] + events[j + 1:]
    report = check_text(text(holed), coverage=False)[0]
    assert report.verdict == "divergent" and report.divergence.index == j


def test_a_hole_without_nodes_cuts_every_node_and_a_clean_trace_with_one_is_never_conformant(site_trace):
    """A hole at the end touching every node (a file cut mid-record) leaves a clean trace
    incomplete-capture: owed outputs there are undetermined, and the holes are listed."""
    holed = site_trace + [hole(site_trace[-1]["t"], None, site_trace[0]["trace"])]
    report = check_text(text(holed), coverage=False)[0]
    assert report.verdict == "incomplete-capture"
    assert all("up to the hole" in s for s in report.nodes.values()), report.nodes
    assert report.holes[0]["nodes"] is None


def test_check_exits_4_on_a_capture_with_holes_and_says_where_they_are(tmp_path, site_trace):
    """`mqspec check` prints INCOMPLETE CAPTURE with the hole's event, kind and nodes, and exits 4
    (distinct from 0 conformant, 1 divergent, 2 malformed, 3 nothing checked)."""
    i, j = first_answer(site_trace, "PSC1")
    path = tmp_path / "holed.ndjson"
    path.write_text(text(site_trace[:j] + [hole(site_trace[j]["t"], ["PSC1"], site_trace[0]["trace"])]
                         + site_trace[j:]))
    result = CliRunner().invoke(check, [str(path), "--no-coverage"])
    assert result.exit_code == 4 == EXIT["incomplete-capture"], result.output
    lines = result.stdout.splitlines()
    assert "INCOMPLETE CAPTURE: 1 hole, the first at event" in lines[0]
    assert lines[1].startswith(f"  hole at event {j} (t=") and "tcp-gap; PSC1)" in lines[1]
    assert f"  PSC1: conformant up to the hole at event {j}" in lines
    as_json = json.loads(CliRunner().invoke(check, [str(path), "--json", "--no-coverage"]).stdout)
    assert as_json["conformant"] is False and as_json["traces"][0]["verdict"] == "incomplete-capture"
    assert sorted(set(EXIT.values())) == [0, 1, 2, 3, 4]
