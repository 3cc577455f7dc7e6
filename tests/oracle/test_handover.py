"""A PSC handover declared in a trace (modelling E-313): recorded, validated, replayed and verified by check."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from click.testing import CliRunner

from mqspec.cli.check import check
from mqspec.oracle.check import check_text
from mqspec.oracle.record import scenario_trace
from mqspec.oracle.trace_format import TraceError, validate

from .mutations import dump, indices, parse

SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "e312-bsc-follows-its-psc-rename.yaml"


@pytest.fixture(scope="module")
def moved() -> str:
    """The e312 scenario's trace: site1's PSC moves from PSC1 to PSC1b, BSC11 follows."""
    return scenario_trace(str(SCENARIO))


def _at(events: list[dict], node: str) -> int:
    return next(i for i in indices(events, "handover") if events[i]["node"] == node)


def _site(events: list[dict], node: str) -> str:
    return next(e["site"] for e in events if e["event"] == "node" and e["name"] == node)


def _report(events: list[dict]):
    (report,) = check_text(dump(events), coverage=False)
    return report


def test_a_trace_across_a_psc_handover_declares_it_and_conforms(moved):
    """The recorder declares the handover at the new PSC (its state) and at the BSC (the new name); check
    replays the new PSC from that state and finds the whole trace conformant, exercising E-313."""
    events = parse(moved)
    psc, bsc = events[_at(events, "PSC1b")], events[_at(events, "BSC11")]
    assert (psc["old"], bsc["old"], bsc["new"]) == ("PSC1", "PSC1", "PSC1b") and "new" not in psc
    site = _site(events, "PSC1b")
    (own,) = [p for p in psc["state"]["partitions"] if p["partition"] == site]
    assert own["authority"] == "PSC1b" and int(own["last_seq"]) > 0 and type(own["last_seq"]) is str  # 64 bits
    assert [o["guid"] for o in psc["state"]["objects"]] == sorted(o["guid"] for o in psc["state"]["objects"])
    # the new PSC is declared before its handover, which comes before its first start
    assert indices(events, "node")[-1] < _at(events, "PSC1b") < next(
        i for i in indices(events, "start") if events[i]["node"] == "PSC1b")
    report = _report(events)
    assert report.verdict == "conformant", report.to_json().get("divergence")
    assert set(report.nodes.values()) == {"conformant"} and "E-313" in report.errata
    assert scenario_trace(str(SCENARIO)) == moved  # deterministic


def _tampered(moved: str, change) -> list[dict]:
    events = parse(moved)
    change(events[_at(events, "PSC1b")])
    return events


def test_a_wrong_last_seq_number_in_the_declaration_diverges_naming_e313(moved):
    """A declared LastSeqNumber other than the one the old PSC's replay hands over is a divergence at the
    handover, naming 3.1.7.2.11 and E-313, with the field."""
    events = parse(moved)
    site = _site(events, "PSC1b")

    def bump(record):
        (own,) = [p for p in record["state"]["partitions"] if p["partition"] == site]
        own["last_seq"] = str(int(own["last_seq"]) + 1)

    tampered = _tampered(moved, bump)
    report = _report(tampered)
    d = report.divergence
    assert report.verdict == "divergent" and d.index == _at(tampered, "PSC1b") and d.kind == "handover"
    assert (d.clause.section, d.node) == ("3.1.7.2.11", "PSC1b") and "E-313" in d.summary
    assert d.diff[0]["field"] == f"partitions.{site}.last_seq" and d.diff[0]["actual"] == d.diff[0]["expected"] + 1


def test_a_changed_object_property_in_the_declaration_diverges(moved):
    """An object property the old PSC did not hold is a divergence naming the object's field."""
    def relabel(record):
        obj = next(o for o in record["state"]["objects"] if o["properties"])
        obj["properties"][0] = {**obj["properties"][0], "value": "not what PSC1 held"}

    report = _report(_tampered(moved, relabel))
    assert report.verdict == "divergent" and report.divergence.kind == "handover"
    assert ".properties" in report.divergence.diff[0]["field"]


def test_without_the_old_psc_replayed_the_declaration_is_taken_but_must_name_the_new_psc(moved):
    """When the old PSC is checked at codec level only, the declared state is taken as given (conformant);
    a site partition that does not name the new PSC as its authority still diverges (E-313)."""
    events = parse(moved)
    for e in events:
        if e["event"] == "node" and e["name"] == "PSC1":
            e["role"] = None
    assert _report(events).verdict == "conformant"
    site = _site(events, "PSC1b")
    wrong = copy.deepcopy(events)
    for p in wrong[_at(wrong, "PSC1b")]["state"]["partitions"]:
        if p["partition"] == site:
            p["authority"] = "PSC1"
    report = _report(wrong)
    assert report.verdict == "divergent" and report.divergence.kind == "handover"
    assert report.divergence.diff[0] == {"field": f"partitions.{site}.authority", "expected": "PSC1b",
                                         "actual": "PSC1"}


def test_a_missing_declaration_leaves_the_new_psc_starting_from_nothing_and_diverges(moved):
    """Without the handover events the new PSC's replay starts empty: its first sync request differs (divergent)."""
    events = [e for e in parse(moved) if e["event"] != "handover"]
    report = _report(events)
    assert report.verdict == "divergent" and report.divergence.node == "PSC1b"


def _run(tmp_path, events: list[dict]):
    path = tmp_path / "t.ndjson"
    path.write_text(dump(events))
    return path, CliRunner().invoke(check, [str(path)])


@pytest.mark.parametrize(("change", "field", "reason"), [
    (lambda r, other: r.update(site=other), "site", "is declared in site"),
    (lambda r, other: r.pop("state"), "state", "is required at the new PSC"),
    (lambda r, other: r.update(new="PSC1b"), "new", "at a BSC only"),
    (lambda r, other: r["state"]["partitions"][0].update(last_seq=-1), "state.partitions[0].last_seq", "64-bit unsigned"),
    (lambda r, other: r["state"]["objects"][0]["properties"].append({"propid": "PROPID_S_PSC", "value": 5}),
     "state.objects[0].properties[1]", "not a property value"),
    (lambda r, other: r["state"]["objects"][0]["properties"].append({"propid": "PROPID_Q_LABEL", "value": "q"}),
     "state.objects[0]", "cannot hold this object"),  # a queue's property on the site object
])
def test_a_malformed_declaration_exits_2_in_one_line(tmp_path, moved, change, field, reason):
    """A declaration naming the wrong site, without its state, with both state and new, with a value out of
    range, a property value of the wrong type or an object the directory cannot hold: one stderr line
    naming the line and field, exit 2."""
    events = parse(moved)
    index = _at(events, "PSC1b")
    change(events[index], _site(events, "PEC0"))
    path, result = _run(tmp_path, events)
    assert result.exit_code == 2 and "Traceback" not in result.output and result.stderr.count("\n") == 1
    assert result.stderr.startswith(f"mqspec: trace error: {path}:{index + 1}: {field}: ")
    assert reason in result.stderr


def test_a_handover_after_the_new_psc_started_at_a_non_bsc_or_naming_another_psc_is_malformed(tmp_path, moved):
    """The new PSC takes over once, before its first start; only a BSC learns a new PSC's name, and only the
    name of the server whose handover took the site over."""
    events = parse(moved)
    del events[_at(events, "BSC11")]
    late = events.pop(_at(events, "PSC1b"))
    start = next(i for i in indices(events, "start") if events[i]["node"] == "PSC1b")
    events.insert(start + 1, late)
    _, result = _run(tmp_path, events)
    assert result.exit_code == 2 and "has already started" in result.stderr
    events = parse(moved)
    del events[_at(events, "PSC1b")]  # the BSC's declaration names a new PSC that took nothing over
    _, result = _run(tmp_path, events)
    assert result.exit_code == 2 and "new: PSC1b has not taken over site" in result.stderr
    events = parse(moved)
    events[_at(events, "BSC11")]["new"] = "PEC0"
    _, result = _run(tmp_path, events)
    assert result.exit_code == 2 and "new: PEC0 has not taken over site" in result.stderr
    events = parse(moved)
    events[_at(events, "BSC11")]["node"] = "PEC0"
    events[_at(events, "PEC0")]["site"] = _site(events, "PEC0")
    _, result = _run(tmp_path, events)
    assert result.exit_code == 2 and "it is a PEC, not a BSC" in result.stderr


def test_a_handover_is_a_format_2_event():
    """Under format 1 a handover line is refused as an event of format 2."""
    with pytest.raises(TraceError, match="an event of format 2"):
        validate({"trace": "t", "format": 1, "event": "handover", "t": 0, "node": "B", "site":
                  "00000000-0000-0000-0000-000000000001", "old": "A", "new": "C"})


def test_the_declared_state_restores_exactly_what_the_new_psc_took_over():
    """Restoring the state the recorder declares rebuilds the partitions, neighbors, tombstones and directory
    (every property, the ones the store keeps too) that take_over gave the new PSC in the simulated run."""
    import attrs

    from mqspec.oracle.handover import restore, state_of
    from mqspec.refimpl import scenario as sc
    from mqspec.refimpl import scenario_run
    from mqspec.refimpl.mqdsrp_state import QueueManager

    worlds, taken = [], []

    def on_record(record):
        if record.get("event") == "handover":
            taken.append(copy.deepcopy(worlds[0].nodes[record["new"]]))

    scenario_run.run(sc.load(SCENARIO), trace=on_record, attach=worlds.append)
    (reference,) = taken
    rebuilt = QueueManager(reference.machine_name, reference.identifier, reference.site_identifier,
                           reference.role, reference.pec_name)
    restore(rebuilt, state_of(reference), 0)

    def persisted(qm):
        return [[attrs.asdict(x) for x in getattr(qm, part)]
                for part in ("partitions", "psc_neighbors", "bsc_neighbors", "deleted_objects")]

    assert persisted(rebuilt) == persisted(reference) and len(reference.directory) > 3
    assert rebuilt.directory == reference.directory
    assert state_of(rebuilt) == state_of(reference)


def test_a_handover_states_neighbor_ack_times_on_the_trace_clock():
    """A handover's declared LastAckedTime is on the trace clock (microseconds), as the replay's clock reads it,
    not the recording World's unrounded sum of advances (a conformant run was found divergent by 3e-14 s)."""
    from mqspec.model.guid import Guid
    from mqspec.oracle.handover import state_of
    from mqspec.refimpl.directory import DirectoryStore
    from mqspec.refimpl.mqdsrp_state import DirectoryNeighbor, QueueManager, Role

    qm = QueueManager("PSC1", Guid.from_name("qm:PSC1"), Guid.from_name("site:site1"), Role.PSC, "PEC0")
    qm.directory = DirectoryStore()
    qm.bsc_neighbors.append(DirectoryNeighbor(Guid.from_name("site:site1"), "BSC11", last_acked_time=295.1 + 0.05))
    assert 295.1 + 0.05 != 295.15
    assert state_of(qm)["bsc_neighbors"][0]["acked_time"] == 295.15
