"""Scenario files: strict parsing, the runner's steps and assertions, and the section-4 examples.

Each section-4 scenario must hold every expectation in clarified mode; in literal mode the
tests pin the divergence the register predicts (E-140 .. E-142); the e136 / e137 scenarios are
regression runs for the handler clarifications of those numbers. Runs are cached per
(file, mode, seed) so each one happens once per session.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from mqspec.model import mqdsrp
from mqspec.model.mqdsrp import (
    AlreadyPurgedMessage,
    ChangePropagationMessage,
    PSCAckMessage,
    SyncReplyMessage,
    SyncRequestMessage,
)
from mqspec.refimpl import scenario as sc
from mqspec.refimpl.effects import Mode
from mqspec.refimpl.scenario_run import RunResult, run
from mqspec.refimpl.status import MQ_ERROR

from mqspec.clauses import covers

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
SECTION_4 = [
    "4.1-adding-a-site", "4.2-adding-a-bsc", "4.3-creating-a-remote-queue", "4.4-deleting-a-queue",
    "4.5-full-partition-sync",
]
BASE = {"enterprise": {"pec": "PEC0", "sites": {"site0": {"psc": "PEC0", "machines": ["C01"]}}}}


@functools.cache
def _run(name: str, mode: Mode = Mode.CLARIFIED, seed: int = 0) -> tuple[RunResult, tuple[dict, ...]]:
    records: list[dict] = []
    result = run(sc.load(SCENARIOS / f"{name}.yaml"), mode=mode, seed=seed, trace=records.append)
    return result, tuple(records)


def _messages(records, kind, *, node=None, to=None):
    """The decoded replication messages of one type that ``node`` sent (to ``to``), with their time."""
    out = []
    for r in records:
        if r["event"] != "send" or (node and r["node"] != node) or (to and r["to"] != to):
            continue
        message = mqdsrp.decode(bytes.fromhex(r["body"]))
        if isinstance(message, kind):
            out.append((r["t"], message))
    return out


def _site(result: RunResult, name: str):
    return result.world.site_guid(name)


def _scenario(steps, **enterprise):
    return sc.parse({"enterprise": {**BASE["enterprise"], **enterprise}, "steps": steps}, "t")


# --- parsing -------------------------------------------------------------------------------------


def test_every_scenario_file_parses():
    """Every file in scenarios/ is a valid scenario."""
    files = sorted(SCENARIOS.glob("*.yaml"))
    assert len(files) >= 7
    for path in files:
        assert sc.load(path).steps


QUEUE = {"at": "PEC0", "type": "queue", "path": "C01\\q"}


@pytest.mark.parametrize(
    ("steps", "message"),
    [
        ([{"create": {**QUEUE, "properties": {"PROPID_Q_LABL": "x"}}}], "steps[0].create: unknown PROPID 'PROPID_Q_LABL'"),
        ([{"create": {**QUEUE, "colour": 1}}], "steps[0].create: unknown key 'colour'"),
        ([{"create": {"at": "PEC0", "type": "queue"}}], "steps[0].create: give exactly one of 'path' and 'guid'"),
        ([{"create": {**QUEUE, "at": "PSC9"}}], "steps[0].create.at: unknown node 'PSC9'"),
        ([{"create": {**QUEUE, "type": "queu"}}], "steps[0].create.type: unknown object type 'queu'"),
        ([{"create": {**QUEUE, "site": "site7"}}], "steps[0].create.site: unknown site 'site7'"),
        ([{"create": {**QUEUE, "properties": {"PROPID_QM_SERVICE": 2}}}],
         "steps[0].create: PROPID_QM_SERVICE is not a property of a queue"),
        ([{"create": {**QUEUE, "properties": {"PROPID_Q_QUOTA": "lots"}}}],
         "steps[0].create.properties.PROPID_Q_QUOTA: bad value 'lots' for VT_UI4"),
        ([{"create": {**QUEUE, "path": "C01\testq"}}], "holds a control character"),
        ([{"create": {**QUEUE, "expect_status": "MQ_FINE"}}], "steps[0].create.expect_status: unknown status 'MQ_FINE'"),
        ([{"delete": {**QUEUE, "properties": {"PROPID_Q_LABEL": "x"}}}], "a delete carries no properties"),
        ([{"update": {**QUEUE, "guid": "not-a-guid", "path": None}}], "steps[0].update.guid: not a GUID"),
        ([{"update": QUEUE}], "steps[0].update: missing 'properties'"),
        ([{"advance": "soon"}], "steps[0].advance: expected an integer or a number, not text"),
        ([{"advance": True}], "expected an integer or a number, not a boolean"),
        ([{"settle": {"limit": -1}}], "steps[0].settle.limit: expected a non-negative number"),
        ([{"drop": {"operation": "Gossip"}}], "steps[0].drop.operation: unknown replication message 'Gossip'"),
        ([{"partition": ["PEC0"]}], "steps[0].partition: expected two node names, not 1"),
        ([{"crash": {"node": "PEC0", "lose": "some"}}], "steps[0].crash.lose: expected 'volatile' or 'all'"),
        ([{"repeat": {"times": 0, "steps": []}}], "steps[0].repeat.times: expected a positive count"),
        ([{"repeat": {"times": 2, "steps": [{"add_site": {"site": "s1", "psc": "P1"}}]}}],
         "steps[0].repeat.steps[0].add_site: cannot be repeated"),
        ([{"add_bsc": {"site": "site0", "bsc": "PEC0"}}], "steps[0].add_bsc.bsc: node 'PEC0' already exists"),
        ([{"restart": "BSC09"}, {"add_bsc": {"site": "site0", "bsc": "BSC09"}}], "steps[0].restart: unknown node 'BSC09'"),
        ([{"settle": {}, "advance": 1}], "steps[0]: a step is a mapping with exactly one key"),
        ([{"sleep": 1}], "steps[0]: unknown step 'sleep'"),
        ([{"expect": {}}], "steps[0].expect: an expect step needs at least one assertion"),
        ([{"expect": {"converged": "yes"}}], "steps[0].expect.converged: expected a boolean, not text"),
        ([{"expect": {"partition": {"at": "PEC0", "site": "site0", "purged_seq": "about 3"}}}],
         "steps[0].expect.partition.purged_seq: expected N or \"OP N\""),
        ([{"expect": {"object": [{"at": "PEC0", "type": "queue", "path": "C01\\q", "sizes": 1}]}}],
         "steps[0].expect.object[0]: unknown key 'sizes'"),
        ([{"expect": {"received": {"at": "PEC0", "operation": "SyncReply", "count": ">= x"}}}],
         "steps[0].expect.received.count"),
    ],
)
def test_bad_steps_are_one_error_naming_the_step(steps, message):
    """A malformed step raises one ScenarioError whose text names the step and the problem."""
    with pytest.raises(sc.ScenarioError) as info:
        _scenario(steps)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"steps": []}, "missing 'enterprise'"),
        ({"enterprise": {"pec": "PEC0", "sites": {"site0": {"psc": "PEC0"}}}}, "missing 'steps'"),
        ({**BASE, "steps": [], "extra": 1}, "unknown key 'extra'"),
        ({"enterprise": {"pec": "PEC0", "sites": {"site0": {"psc": "PSC0"}}}, "steps": []},
         "enterprise.sites: no site has the PEC 'PEC0' as its psc"),
        ({"enterprise": {"pec": "PEC0", "sites": {"site0": {"psc": "PEC0", "bscs": ["PEC0"]}}}, "steps": []},
         "node 'PEC0' is named twice"),
        ({"enterprise": {"pec": "PEC0", "sites": {"enterprise": {"psc": "PEC0"}}}, "steps": []}, "is reserved"),
        ([], "expected a mapping, not a list"),
    ],
)
def test_bad_enterprises_are_one_error(data, message):
    """A malformed top level or enterprise raises one ScenarioError naming what is wrong."""
    with pytest.raises(sc.ScenarioError) as info:
        sc.parse(data)
    assert message in str(info.value)


def test_yaml_syntax_error_names_line_and_column(tmp_path):
    """A YAML syntax error is a ScenarioError with the line and column, not a yaml exception."""
    path = tmp_path / "bad.yaml"
    path.write_text("enterprise: {pec: PEC0\nsteps: [\n")
    with pytest.raises(sc.ScenarioError, match=r"line \d+ column \d+"):
        sc.load(path)


def test_names_added_by_steps_can_be_used_after_them():
    """A node added by add_site or add_bsc is known to the steps after it, with its site."""
    s = _scenario([{"add_site": {"site": "site1", "psc": "PSC1"}}, {"add_bsc": {"site": "site1", "bsc": "BSC11"}},
                   {"crash": "BSC11"}, {"expect": {"partition": {"at": "PSC1", "site": "site1"}}}])
    assert [step.kind for step in s.steps] == ["add_site", "add_bsc", "crash", "expect"]


def test_operation_names_are_case_and_style_insensitive():
    """ChangePropagation, CHANGE_PROPAGATION and PSCAckMessage all name replication messages."""
    s = _scenario([{"drop": {"operation": "ChangePropagation"}}, {"drop": {"operation": "CHANGE_PROPAGATION"}},
                   {"delay": {"operation": "PSCAckMessage", "seconds": 3}}])
    assert [int(step.args["operation"]) for step in s.steps] == [0, 0, 6]


# --- the runner ----------------------------------------------------------------------------------


def test_failed_expectations_name_the_step_and_the_assertion():
    """Each failed assertion is one line naming its step; the run goes on to the end."""
    result = run(_scenario([
        {"expect": {"converged": False, "object": {"at": "PEC0", "type": "queue", "path": "C01\\q"}}},
        {"create": {**QUEUE, "expect_status": "MQ_OK"}},
        {"expect": {"tombstone": {"at": "PEC0", "type": "queue", "path": "C01\\q"},
                    "partition": {"at": "PEC0", "site": "site0", "last_seq": ">= 9"},
                    "neighbors": {"at": "PEC0", "psc": ["PEC0"]},
                    "sent": {"at": "PEC0", "operation": "SyncReply"},
                    "directory": {"at": "PEC0", "operation": "reset1"}}},
    ]))
    assert result.failures == [
        "steps[0].expect: converged: converged, but the scenario expects it not to",
        "steps[0].expect: object: PEC0: queue C01\\q is not in the directory",
        "steps[2].expect: partition: PEC0 partition site0 last_seq is 3, expected >= 9",
        "steps[2].expect: tombstone: PEC0: tombstone of queue C01\\q is not in DeletedObjectCollection",
        "steps[2].expect: neighbors: PEC0 psc neighbors are [], expected ['PEC0']",
        "steps[2].expect: sent: PEC0 sent 0 SyncReply, expected >= 1",
        "steps[2].expect: directory: PEC0 raised 0 directory reset1 events, expected >= 1",
    ]


def test_a_failure_repeated_by_repeat_is_one_line():
    """The same failure in every iteration of a repeat is reported once, with how often."""
    result = run(_scenario([{"repeat": {"times": 3, "steps": [
        {"update": {"at": "PEC0", "type": "queue", "path": "C01\\none", "properties": {"PROPID_Q_LABEL": "x"},
                    "expect_status": "MQ_OK"}}]}}]))
    assert result.failures == [
        ("steps[0].repeat.steps[0].update (iteration 1): status MQDS_OBJECT_NOT_FOUND, expected MQ_OK "
         "(and in 2 more iterations)")
    ]


def test_steps_the_state_does_not_allow_are_failures_not_exceptions():
    """Restarting a running node or crashing a crashed one is a failure line naming the step."""
    result = run(_scenario([{"restart": "PEC0"}, {"crash": "PEC0"}, {"crash": "PEC0"},
                            {"create": {"at": "PEC0", "type": "queue", "path": "C01\\q"}}]))
    assert result.failures == [
        "steps[0].restart: PEC0 is already running",
        "steps[2].crash: PEC0 is down",
        "steps[3].create: PEC0 is down",
    ]


def test_a_request_that_never_completes_fails_its_expected_status():
    """A remote request cut off from its authority fails expect_status at the end of the run."""
    result = run(_scenario([
        {"add_site": {"site": "site1", "psc": "PSC1"}}, {"settle": {"quiet": 60}},
        {"partition": ["PSC1", "PEC0"]},
        {"create": {"at": "PSC1", "type": "queue", "path": "C01\\q", "expect_status": "MQ_OK"}},
    ]))
    assert result.failures == ["steps[3].create: expected status MQ_OK, but the request never completed"]


def test_a_remote_request_reports_its_status_when_it_completes():
    """A change request that times out (its authority is unreachable) gets MQDS_NO_RSP_FROM_OWNER."""
    result = run(_scenario([
        {"add_site": {"site": "site1", "psc": "PSC1"}}, {"settle": {"quiet": 60}},
        {"partition": ["PSC1", "PEC0"]},
        {"create": {"at": "PSC1", "type": "queue", "path": "C01\\q", "expect_status": "MQDS_NO_RSP_FROM_OWNER"}},
        {"advance": 30},
        {"heal": "all"}, {"settle": {"quiet": 60}},
        {"expect": {"converged": True, "object": {"at": "PSC1", "type": "queue", "path": "C01\\q", "present": False}}},
    ]))
    assert result.failures == []


@covers("MC-MQDSRP", "3.3.3")
def test_faults_and_crashes_heal_in_clarified_mode():
    """Dropped, duplicated and delayed messages, a partition and a total crash all end converged."""
    result = run(_scenario([
        {"add_site": {"site": "site1", "psc": "PSC1"}}, {"add_bsc": {"site": "site0", "bsc": "BSC01"}},
        {"settle": {"quiet": 60}},
        {"duplicate": {"from": "PEC0", "to": "PSC1", "operation": "ChangePropagation", "times": 2}},
        {"delay": {"to": "BSC01", "seconds": 3, "times": 5}},
        {"create": {**QUEUE, "expect_status": "MQ_OK"}},
        {"partition": ["PEC0", "PSC1"]}, {"advance": 60},
        {"expect": {"object": {"at": "PSC1", "type": "queue", "path": "C01\\q", "present": False}}},
        {"heal": ["PEC0", "PSC1"]},
        {"crash": {"node": "BSC01", "lose": "all"}}, {"advance": 10}, {"restart": "BSC01"},
        {"settle": {}},
        {"expect": {"converged": True, "object": {"at": ["PSC1", "BSC01"], "type": "queue", "path": "C01\\q"}}},
    ]))
    assert result.failures == []


def test_same_scenario_mode_and_seed_give_the_same_trace_and_state():
    """Two runs of one scenario with one seed produce identical traces and identical JSON."""
    first = _run("4.3-creating-a-remote-queue")
    second_records: list[dict] = []
    second = run(sc.load(SCENARIOS / "4.3-creating-a-remote-queue.yaml"), trace=second_records.append)
    assert tuple(second_records) == first[1]
    assert second.to_json() == first[0].to_json()


# --- section 4, clarified ---------------------------------------------------------------------


@pytest.mark.parametrize("name", SECTION_4)
@pytest.mark.parametrize("seed", [0, 1])
def test_section_4_scenarios_hold_every_expectation_in_clarified_mode(name, seed):
    """Each example converges and meets every expect step of its file, whatever the seed."""
    result, _ = _run(name, Mode.CLARIFIED, seed)
    assert result.failures == []
    assert result.converged


@covers("MC-MQDSRP", "3.1.7.2.11")
def test_4_1_second_psc_syncs_both_site_partitions_from_their_authorities():
    """PSC2 asks PEC0 for site0 and PSC1 for site1, as the end of 4.1 says."""
    result, records = _run("4.1-adding-a-site")
    asked = {(str(m.partition_id), to) for to in ("PEC0", "PSC1")
             for _, m in _messages(records, SyncRequestMessage, node="PSC2", to=to)}
    assert (str(_site(result, "site0")), "PEC0") in asked
    assert (str(_site(result, "site1")), "PSC1") in asked


@covers("MC-MQDSRP", "3.3.7.3")
def test_4_2_a_bsc_sends_every_sync_request_to_its_psc():
    """BSC01's sync requests for all four partitions go to PEC0, its PSC."""
    _, records = _run("4.2-adding-a-bsc")
    partitions = {str(m.partition_id) for _, m in _messages(records, SyncRequestMessage, node="BSC01")}
    assert len(partitions) == 4
    assert all(to == "PEC0" for to in {r["to"] for r in records if r["event"] == "send" and r["node"] == "BSC01"})


@covers("MC-MQDSRP", "3.1.7.2.3")
def test_4_4_psc_acks_are_multiples_of_256():
    """E-140: every PSC ack PSC1 receives acknowledges a multiple of 256, never 9 or 10."""
    result, records = _run("4.4-deleting-a-queue")
    acks = [m.acked_seq_number.value for to in ("PSC1",) for _, m in _messages(records, PSCAckMessage, to=to)
            if m.acked_partition_id == _site(result, "site1")]
    assert acks and all(a % 256 == 0 for a in acks)
    assert {a for a in acks} == {256, 512, 768, 1024, 1280}


@covers("MC-MQDSRP", "3.1.7.2.9")
def test_4_4_tombstone_is_purged_at_the_1285_trigger():
    """E-140: PSC1 purges up to LastSeqNumber - 1024 at its 1285th change: PurgedSeqNumber 261."""
    result, _ = _run("4.4-deleting-a-queue")
    site1 = result.world.nodes["PSC1"].find_partition(_site(result, "site1"))
    assert (site1.last_seq_number.value, site1.purged_seq_number.value) == (1308, 261)
    assert result.world.nodes["PSC1"].deleted_objects == []


@covers("MC-MQDSRP", "3.3.7.7")
def test_4_5_sync_request_after_restart_asks_from_last_seq():
    """E-141: restarted BSC01 asks PEC0 for site1 from 8 (its LastSeqNumber) and gets AlreadyPurged."""
    result, records = _run("4.5-full-partition-sync")
    restart = next(r["t"] for r in records if r["event"] == "step" and r["step"].endswith(".restart"))
    site1 = _site(result, "site1")
    first = next(m for t, m in _messages(records, SyncRequestMessage, node="BSC01") if t >= restart
                 and m.partition_id == site1)
    assert first.from_seq_number.value == 8 and first.known_purged_seq_number.value == 0
    purged = [m for _, m in _messages(records, AlreadyPurgedMessage, node="PEC0", to="BSC01")]
    # one AlreadyPurged per request (E-264 may ask twice); every one carries PEC0's purge horizon
    assert purged and all(m.purged_seq_number.value == 261 for m in purged)


# --- section 4, literal ----------------------------------------------------------------------


@covers("MC-MQDSRP", "3.2.7.3")
def test_4_1_literal_sync_reply_is_descending_and_nothing_is_applied():
    """E-142 / E-119: PEC0 answers 3, 2, 1; PSC1 fails to create the site and loops on [0, 0]."""
    result, records = _run("4.1-adding-a-site", Mode.LITERAL)
    _, reply = _messages(records, SyncReplyMessage, node="PEC0", to="PSC1")[0]
    assert [(c.seq_number.value, c.previous_seq_number.value) for c in reply.changes] == [(3, 0), (2, 3), (1, 2)]
    creates = [r for r in records if r["event"] == "directory" and r["node"] == "PSC1" and r["operation"] == "create"]
    assert creates[0]["status"] == MQ_ERROR and creates[0]["guid"] is None
    psc1 = result.world.nodes["PSC1"]
    assert [(str(p.partition_id), p.last_seq_number.value) for p in psc1.partitions] == [
        ("00000000-0000-0000-0000-000000000000", 0)]
    # literal E-136: the request for [0, 0] repeats at network speed until PEC0's first
    # SeqNumberHeader reopens the window 10 s later; PSC2 gets no header (literal E-137) and
    # never stops
    loops = {node: sum(1 for _, m in _messages(records, SyncRequestMessage, node=node)
                       if m.from_seq_number.value == 0 and m.to_seq_number.value == 0) for node in ("PSC1", "PSC2")}
    assert loops["PSC1"] >= 50 and loops["PSC2"] >= 1000
    assert result.failures and not result.converged


def test_4_2_literal_bsc_gets_no_site_partition():
    """E-142: BSC01 keeps only the empty enterprise partition; PEC0 still adds it as BSC neighbor."""
    result, _ = _run("4.2-adding-a-bsc", Mode.LITERAL)
    bsc = result.world.nodes["BSC01"]
    assert [p.last_seq_number.value for p in bsc.partitions] == [0]
    assert [n.machine_name for n in result.world.nodes["PEC0"].bsc_neighbors] == ["BSC01", "BSC02"]


def test_4_3_literal_create_cannot_find_the_queue_machine():
    """E-142: BSC21 never replicates site1, so the client's create of C14\\testq cannot start."""
    result, records = _run("4.3-creating-a-remote-queue", Mode.LITERAL)
    assert "steps[1].create: machine 'C14' is not in BSC21's directory" in "\n".join(result.failures)
    assert not any(r["event"] == "client_request" and r["path"] == "C14\\testq" for r in records)


def test_4_4_literal_leaves_no_tombstone_and_no_purge():
    """E-142: PSC1 owns no site partition, so the deletion never happens and nothing is purged."""
    result, _ = _run("4.4-deleting-a-queue", Mode.LITERAL)
    assert result.world.nodes["PSC1"].find_partition(_site(result, "site1")) is None
    assert all(not qm.deleted_objects for qm in result.world.nodes.values())
    assert all(p.purged_seq_number.value == 0 for qm in result.world.nodes.values() for p in qm.partitions)


@covers("MC-MQDSRP", "3.1.7.2.9")
def test_4_5_literal_never_sends_already_purged():
    """E-141 / E-133: no PurgedSeqNumber ever moves, so no server answers AlreadyPurged."""
    result, records = _run("4.5-full-partition-sync", Mode.LITERAL)
    assert not _messages(records, AlreadyPurgedMessage)
    assert all(p.purged_seq_number.value == 0 for qm in result.world.nodes.values() for p in qm.partitions)
    assert any("received 0 AlreadyPurged from PEC0" in f for f in result.failures)


# --- regression scenarios for handler clarifications ---------------------------------------------


@covers("MC-MQDSRP", "3.1.7.2.4")
def test_e136_pending_change_after_full_sync_catches_up():
    """E-136: a change queued during a full sync leads to a request up to it, never to [Last, MIN]."""
    result, records = _run("e136-pending-change-after-full-sync")
    assert result.failures == []
    ranges = [(m.from_seq_number.value, m.to_seq_number.value)
              for _, m in _messages(records, SyncRequestMessage, node="BSC01")]
    assert all(to >= start for start, to in ranges)


@covers("MC-MQDSRP", "3.3.7.2")
def test_e137_every_neighbor_gets_seqnumberheaders():
    """E-137: within 25 minutes every neighbor of PEC0 receives a SeqNumberHeader, and BSC02 catches up."""
    result, records = _run("e137-seqnumberheader-per-neighbor")
    assert result.failures == []
    headers = {r["to"] for r in records if r["event"] == "send" and r["node"] == "PEC0"
               for m in [mqdsrp.decode(bytes.fromhex(r["body"]))]
               if isinstance(m, ChangePropagationMessage) and m.seq_numbers.partitions}
    assert headers == {"PSC1", "BSC01", "BSC02"}


# --- robustness ----------------------------------------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 2**64), st.floats(allow_nan=True),
                     st.sampled_from(["PEC0", "site0", "queue", "C01\\q", "MQ_OK", ">= 3", "PROPID_Q_LABEL", "all",
                                      "ffffffff-ffff-ffff-ffff-ffffffffffff", "zz", "ChangePropagation"]))
_KEYS = st.sampled_from(["create", "update", "delete", "expect", "at", "type", "path", "guid", "site", "properties",
                         "PROPID_Q_LABEL", "PROPID_Q_QUOTA", "PROPID_Q_INSTANCE", "converged", "partition", "object",
                         "repeat", "times", "steps", "crash", "node", "lose", "settle", "limit", "drop", "operation",
                         "count", "received", "tombstone", "seq", "present", "x"])
_DATA = st.recursive(_SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(_KEYS, inner, max_size=4)), max_leaves=12)


@settings(max_examples=300)
@given(steps=st.lists(st.dictionaries(_KEYS, _DATA, min_size=1, max_size=1), max_size=3))
def test_any_malformed_steps_raise_only_scenario_error(steps):
    """Whatever the steps hold, parsing either succeeds or raises ScenarioError, never another exception."""
    try:
        _scenario(steps)
    except sc.ScenarioError as exc:
        assert str(exc).startswith("steps")
