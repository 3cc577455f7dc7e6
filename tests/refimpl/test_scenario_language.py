"""The scenario vocabulary of issue 13: move_psc, mark/since, content faults, repeat with an index, new assertions.

Also runs the scenarios of E-310 .. E-312 and E-314 .. E-318 with the invariants checked: each converges in
clarified mode on several seeds, and each fails with the defect's reading of its step.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mqspec.proofs.scenario_watch import InvariantWatch
from mqspec.refimpl import scenario as sc
from mqspec.refimpl.effects import Mode
from mqspec.refimpl.scenario_run import run

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
DEFECTS = ["e310-renamed-psc-neighbor-keeps-its-timer", "e311-new-site-gap-asked-at-once",
           "e312-bsc-follows-its-psc-rename", "e314-bsc-syncs-from-a-psc-that-purged-less",
           "e315-new-psc-knew-its-site-before-the-move", "e316-bsc-in-sync0-follows-its-moved-psc",
           "e317-sync0-create-takes-a-name-the-reset-marked", "e318-a-deleted-sites-psc-neighbor-goes-at-every-psc"]
TWO_SITES = {"pec": "PEC0", "sites": {"site0": {"psc": "PEC0", "machines": ["C01"]},
                                      "site1": {"psc": "PSC1", "bscs": ["BSC11"], "machines": ["C11"]}}}


def _parse(steps, enterprise=TWO_SITES):
    return sc.parse({"enterprise": enterprise, "steps": steps}, "t")


def _failures(steps, enterprise=TWO_SITES, **kw):
    return run(_parse(steps, enterprise), **kw).failures


# --- the defect scenarios ------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow), 2,
                                  pytest.param(3, marks=pytest.mark.slow)])
@pytest.mark.parametrize("name", DEFECTS)
def test_defect_scenario_converges_clarified_with_every_invariant(name, seed):
    """Each defect scenario (E-310 .. E-312, E-314 .. E-318) holds every expectation and every invariant in clarified mode."""
    watch = InvariantWatch()
    result = run(sc.load(SCENARIOS / f"{name}.yaml"), seed=seed, trace=watch.record, attach=watch.attach)
    assert result.failures == [] and result.converged
    assert watch.finish() == [] and watch.quiescent_checks >= 1


def test_e312_scenario_fails_when_mypscname_does_not_follow(monkeypatch):
    """With Handle Site Update leaving MyPSCName as the text does, BSC11 keeps PSC1 and its create at BSC11 fails."""
    from mqspec.refimpl import mqdsrp_objects

    real = mqdsrp_objects.handle_site_update

    def keeping_mypscname(qm, ctx, *args, **kw):
        before = qm.my_psc_name
        try:
            return real(qm, ctx, *args, **kw)
        finally:
            qm.my_psc_name = before  # the literal text: nothing here sets MyPSCName

    monkeypatch.setattr(mqdsrp_objects, "handle_site_update", keeping_mypscname)
    failures = run(sc.load(SCENARIOS / "e312-bsc-follows-its-psc-rename.yaml")).failures
    assert any("MyPSCName is PSC1, expected PSC1b" in f for f in failures)
    assert any("steps[5].create: status MQDS_" in f for f in failures)


def test_e317_scenario_fails_when_the_marked_namesake_keeps_its_name(monkeypatch):
    """Without E-317's deletion BSC02 leaves sync0 at LastSeqNumber 3, below PurgedSeqNumber 261, without the new queue."""
    from mqspec.refimpl import mqdsrp_objects

    monkeypatch.setattr(mqdsrp_objects, "_namesake", lambda *args: None)  # the text: nothing frees the name
    watch = InvariantWatch()
    failures = run(sc.load(SCENARIOS / "e317-sync0-create-takes-a-name-the-reset-marked.yaml"),
                   trace=watch.record, attach=watch.attach).failures
    assert "steps[14].expect: partition: BSC02 partition site0 last_seq is 3, expected == 1293" in failures
    assert "steps[14].expect: object: BSC02: queue C0\\orders is not in the directory" in failures
    assert [v["invariant"] for v in watch.finish()] == ["purged_seq_at_most_last_seq"]


def test_e318_scenario_fails_when_only_the_pec_undoes_a_deleted_site(monkeypatch):
    """With a site's delete undone only at the PEC (the text), PSC1 keeps PSC9 as a neighbor and never purges site1."""
    from mqspec.refimpl import mqdsrp_common, mqdsrp_objects, mqdsrp_server
    from mqspec.refimpl.mqdsrp_state import Role

    real = mqdsrp_objects.handle_directory_delete

    def undone_at_the_pec_only(qm, ctx, *args, **kw):
        kept = (list(qm.partitions), list(qm.psc_neighbors))
        result = real(qm, ctx, *args, **kw)
        if qm.role is not Role.PEC:
            qm.partitions, qm.psc_neighbors = kept  # the site part of 3.1.7.2.7 is the PEC's only
        return result

    for module in (mqdsrp_common, mqdsrp_server):  # the callers hold the handler by name
        monkeypatch.setattr(module, "handle_directory_delete", undone_at_the_pec_only)
    failures = run(sc.load(SCENARIOS / "e318-a-deleted-sites-psc-neighbor-goes-at-every-psc.yaml")).failures
    assert "steps[5].expect: neighbors[1]: PSC1 psc neighbors are ['PEC0', 'PSC9'], expected ['PEC0']" in failures
    assert "steps[11].expect: partition: PSC1 partition site1 purged_seq is 0, expected > 4" in failures


def test_e311_scenario_fails_with_the_queueing_branch_read_literally(monkeypatch):
    """With 3.1.7.2.2's out-of-order branch read literally, PEC0 still holds site1's second change pending a minute later."""
    from mqspec.refimpl import mqdsrp_common

    real = mqdsrp_common.handle_directory_change

    def literal_when_out_of_order(qm, ctx, partition, change, *args, **kw):
        if change.previous_seq_number <= partition.last_seq_number:
            return real(qm, ctx, partition, change, *args, **kw)
        ctx.mode = Mode.LITERAL  # the branch raises nothing but Send Sync Request
        try:
            return real(qm, ctx, partition, change, *args, **kw)
        finally:
            ctx.mode = Mode.CLARIFIED

    monkeypatch.setattr(mqdsrp_common, "handle_directory_change", literal_when_out_of_order)
    failures = run(sc.load(SCENARIOS / "e311-new-site-gap-asked-at-once.yaml")).failures
    assert any("has 1 pending change, expected == 0" in f for f in failures)


def test_e314_scenario_fails_with_the_replica_stamping_its_own_purged_seq_number(monkeypatch):
    """With PSC1 stamping its replies with its own PurgedSeqNumber (the text), the rebuilt BSC11 stays one change short."""
    from mqspec.refimpl import mqdsrp_server

    monkeypatch.setattr(mqdsrp_server, "reply_purged_seq_number", lambda qm, ctx, partition: partition.purged_seq_number)
    result = run(sc.load(SCENARIOS / "e314-bsc-syncs-from-a-psc-that-purged-less.yaml"))
    assert not result.converged
    assert any("converged: not converged: BSC11: lacks object" in f for f in result.failures)


def test_e315_scenario_fails_when_the_new_psc_stays_a_replica_of_its_site(monkeypatch):
    """With Handle Site Update leaving PSC1m10 a replica of its own site (the text), its queue never reaches the PEC."""
    from mqspec.refimpl import mqdsrp_client

    monkeypatch.setattr(mqdsrp_client, "take_site_authority", lambda qm, ctx, partition: None)
    failures = run(sc.load(SCENARIOS / "e315-new-psc-knew-its-site-before-the-move.yaml")).failures
    assert any("object: PEC0: queue PSC1m10\\q is not in the directory" in f for f in failures)


def test_a_user_or_routing_link_created_without_a_name_is_named_by_its_identity_property():
    """A create of a user (at a BSC: forwarded, E-101) or routing link (at the PEC, E-182) may give neither path nor guid."""
    user, link = "11111111-2222-3333-4444-555555555555", "11111111-2222-3333-4444-666666666666"
    site0 = "c8e0591f-7003-54fc-8830-3d24a6e7a2f6"
    failures = _failures([
        {"create": {"at": "BSC11", "type": "user", "properties": {"PROPID_U_ID": user, "PROPID_U_SID": "0a"},
                    "expect_status": "MQ_OK"}},
        {"create": {"at": "PEC0", "type": "routinglink", "expect_status": "MQ_OK",
                    "properties": {"PROPID_L_ID": link, "PROPID_L_NEIGHBOR1": site0, "PROPID_L_NEIGHBOR2": site0}}},
        {"settle": {}},
        {"expect": {"converged": True, "object": {"at": "BSC11", "type": "user", "guid": user}}},
        {"expect": {"object": {"at": "PSC1", "type": "routinglink", "guid": link}}},
    ])
    assert failures == []
    with pytest.raises(sc.ScenarioError, match="exactly one of 'path' and 'guid'"):
        _parse([{"create": {"at": "PEC0", "type": "cn", "properties": {"PROPID_CN_PROTOCOLID": 1}}}])


# --- move_psc ------------------------------------------------------------------------------------


def test_move_psc_hands_the_site_over_and_the_old_name_is_unknown_afterwards():
    """After move_psc the new PSC is authority everywhere; a later step naming the old PSC is a parse error."""
    steps = [{"move_psc": {"site": "site1", "to": "PSC1b"}}, {"settle": {"quiet": 60}},
             {"expect": {"converged": True, "partition": {"at": ["PEC0", "BSC11"], "site": "site1", "authority": "PSC1b"},
                         "neighbors": {"at": "PSC1b", "psc": ["PEC0"], "bsc": ["BSC11"]}}}]
    assert _failures(steps) == []
    with pytest.raises(sc.ScenarioError, match=r"steps\[1\]\.crash: unknown node 'PSC1'"):
        _parse([{"move_psc": {"site": "site1", "to": "PSC1b"}}, {"crash": "PSC1"}])


@pytest.mark.parametrize(("body", "message"), [
    ({"site": "site0", "to": "X"}, "steps[0].move_psc.site: site 'site0' is the PEC's: its PSC cannot move"),
    ({"site": "site1", "to": "BSC11"}, "steps[0].move_psc.to: node 'BSC11' already exists"),
    ({"site": "site9", "to": "X"}, "steps[0].move_psc.site: unknown site 'site9'"),
    ({"site": "site1"}, "steps[0].move_psc: missing 'to'"),
])
def test_move_psc_is_validated(body, message):
    """move_psc names an existing site other than the PEC's and a new server name."""
    with pytest.raises(sc.ScenarioError) as exc:
        _parse([{"move_psc": body}])
    assert str(exc.value).startswith(message)


def test_move_psc_composes_with_faults_and_a_crash_of_the_new_psc():
    """A move followed by a cut link and a crash of the new PSC still converges once healed and restarted."""
    steps = [{"move_psc": {"site": "site1", "to": "PSC1b"}},
             {"partition": ["PEC0", "PSC1b"]},
             {"create": {"at": "PEC0", "type": "queue", "path": "C01\\q", "properties": {"PROPID_Q_LABEL": "x"}}},
             {"advance": 30}, {"crash": "PSC1b"}, {"heal": "all"}, {"restart": "PSC1b"},
             {"settle": {}}, {"expect": {"converged": True,
                                         "object": {"at": ["PSC1b", "BSC11"], "type": "queue", "path": "C01\\q"}}}]
    assert _failures(steps) == []


# --- mark / since --------------------------------------------------------------------------------


def test_counters_since_a_mark_count_only_what_came_after_it():
    """``since: NAME`` counts from the mark; without it the count runs from the build."""
    steps = [{"create": {"at": "PEC0", "type": "queue", "path": "C01\\a", "properties": {"PROPID_Q_LABEL": "a"}}},
             {"advance": 30}, {"mark": "later"}, {"advance": 30},
             {"expect": {"directory": [{"at": "BSC11", "operation": "create", "count": 0, "since": "later"},
                                       {"at": "BSC11", "operation": "create", "count": ">= 1"}],
                         "sent": {"at": "PEC0", "to": "PSC1", "operation": "ChangePropagation", "count": 3,
                                  "since": "later"}}}]
    assert _failures(steps) == []


def test_since_names_an_earlier_mark():
    """A ``since`` naming no mark set before the step is a parse error that lists the marks."""
    with pytest.raises(sc.ScenarioError, match=r"steps\[0\]\.expect\.sent\.since: unknown mark 'm' \(marked before "
                                               r"this step: none yet\)"):
        _parse([{"expect": {"sent": {"at": "PEC0", "operation": "SyncRequest", "since": "m"}}}, {"mark": "m"}])


# --- carrying ------------------------------------------------------------------------------------


def test_a_fault_matching_content_drops_only_the_message_carrying_that_change():
    """``drop: {carrying: {site, seq}}`` loses the propagation of SeqNumber 4 of site1 only; BSC11 asks for the gap."""
    create = {"at": "PSC1", "type": "queue", "properties": {"PROPID_Q_LABEL": "x"}}
    # the build gave site1 SeqNumbers 1 (BSC11's machine object) and 2 (C11): the queues are 3, 4, 5
    steps = [{"drop": {"from": "PSC1", "to": "BSC11", "carrying": {"site": "site1", "seq": 4}, "times": 1}},
             {"mark": "m"},
             {"create": {**create, "path": "C11\\a"}}, {"advance": 5},
             {"create": {**create, "path": "C11\\b"}}, {"advance": 5},
             {"expect": {"object": [{"at": "BSC11", "type": "queue", "path": "C11\\a"},
                                    {"at": "BSC11", "type": "queue", "path": "C11\\b", "present": False}]}},
             {"create": {**create, "path": "C11\\c"}}, {"advance": 10},
             {"expect": {"partition": {"at": "BSC11", "site": "site1", "last_seq": 5, "pending": 0},
                         "sent": {"at": "BSC11", "to": "PSC1", "operation": "SyncRequest", "count": 1, "since": "m"},
                         "received": {"at": "BSC11", "from": "PSC1", "operation": "ChangePropagation",
                                      "count": ">= 4", "since": "m"}}}]
    result = run(_parse(steps))
    assert result.failures == []
    assert result.world.network.lost == 1


@pytest.mark.parametrize(("body", "message"), [
    ({"carrying": {}}, "steps[0].drop.carrying: give at least one of 'site', 'seq' and 'path'"),
    ({"carrying": {"site": "site7"}}, "steps[0].drop.carrying.site: unknown site 'site7'"),
    ({"carrying": {"seq": -1}}, "steps[0].drop.carrying.seq: expected a sequence number (0 or more), not -1"),
    ({"carrying": {"colour": 1}}, "steps[0].drop.carrying: unknown key 'colour'"),
])
def test_carrying_is_validated(body, message):
    """``carrying`` takes a known site (or enterprise), a sequence number and a path, at least one."""
    with pytest.raises(sc.ScenarioError) as exc:
        _parse([{"drop": body}])
    assert str(exc.value).startswith(message)


# --- repeat with an index ------------------------------------------------------------------------


def test_repeat_index_is_substituted_into_names_and_adds_sites():
    """``index: i`` makes ``{i}`` the iteration number: three queues and two sites, each with its own name."""
    steps = [{"repeat": {"times": 3, "index": "i", "steps": [
                 {"create": {"at": "PEC0", "type": "queue", "path": "C01\\q{i}",
                             "properties": {"PROPID_Q_LABEL": "label{i}"}, "expect_status": "MQ_OK"}}]}},
             {"repeat": {"times": 2, "index": "n", "steps": [{"add_site": {"site": "extra{n}", "psc": "PSCX{n}"}}]}},
             {"settle": {"quiet": 60}},
             {"expect": {"converged": True,
                         "object": [{"at": "PSCX2", "type": "queue", "path": "C01\\q3",
                                     "properties": {"PROPID_Q_LABEL": "label3"}}],
                         "partition": {"at": "PEC0", "site": "extra2", "authority": "PSCX2"}}}]
    assert _failures(steps) == []


def test_repeat_without_index_cannot_add_a_name_twice():
    """Without an index a repeated add_site would add the same name again: a parse error that suggests an index."""
    with pytest.raises(sc.ScenarioError, match="give the repeat an 'index'"):
        _parse([{"repeat": {"times": 2, "steps": [{"add_site": {"site": "s", "psc": "P"}}]}}])


def test_repeat_index_is_bounded_before_its_iterations_are_read():
    """An indexed repeat of more than MAX_STEPS steps is refused at once, not unrolled."""
    with pytest.raises(sc.ScenarioError, match="more than 100,000 steps"):
        _parse([{"repeat": {"times": 1_000_000, "index": "i", "steps": [{"advance": 1}]}}])


def test_repeat_index_is_a_name():
    """An index that is not a name is a parse error."""
    with pytest.raises(sc.ScenarioError, match=r"steps\[0\]\.repeat\.index: '1x' is not an index name"):
        _parse([{"repeat": {"times": 2, "index": "1x", "steps": [{"advance": 1}]}}])


# --- the new assertions ---------------------------------------------------------------------------


def test_new_assertions_report_what_they_found():
    """Property values, pending/window, MyPSCName and a neighbor's collection size each fail with the value found."""
    steps = [{"create": {"at": "PEC0", "type": "queue", "path": "C01\\q", "properties": {"PROPID_Q_LABEL": "x"}}},
             {"settle": {"quiet": 60}},
             {"expect": {"object": {"at": "BSC11", "type": "queue", "path": "C01\\q",
                                    "properties": {"PROPID_Q_LABEL": "y"}},
                         "partition": {"at": "BSC11", "site": "site0", "pending": 1, "window": "MAX"},
                         "node": {"at": "BSC11", "my_psc_name": "PEC0"},
                         "neighbor": [{"at": "PEC0", "name": "PSC1", "available": ">= 5"},
                                      {"at": "PEC0", "name": "nobody", "available": 0}]}}]
    failures = _failures(steps)
    expected = ["BSC11: queue C01\\q has PROPID_Q_LABEL 'x', expected 'y'",
                "BSC11 partition site0 has 0 pending changes, expected == 1",
                "BSC11 partition site0 ChangeMissingWindow is 0, expected == 18446744073709551615",
                "BSC11 MyPSCName is PSC1, expected PEC0",
                "PEC0's neighbor PSC1 has 0 available changes, expected >= 5",
                "PEC0 has no neighbor nobody"]
    assert len(failures) == len(expected)
    for line in expected:
        assert any(line in f for f in failures), line


def test_scenario_vocabulary_is_reachable_from_the_help():
    """``mqspec scenario run --help`` points to the vocabulary, which ``mqspec scenario vocabulary`` prints."""
    from click.testing import CliRunner

    from mqspec.cli.scenario import scenario

    help_text = CliRunner().invoke(scenario, ["run", "--help"]).output
    assert "mqspec scenario vocabulary" in " ".join(help_text.split())
    vocabulary = CliRunner().invoke(scenario, ["vocabulary"])
    assert vocabulary.exit_code == 0
    for word in ("move_psc", "mark:", "since", "carrying", "index", "my_psc_name", "available", "window"):
        assert word in vocabulary.output, word


# --- tamper and send -------------------------------------------------------------------------------


def test_a_tampered_message_is_nacked_and_sent_again():
    """``tamper`` fails a sync request's signature check: the NackBadSignature makes BSC11 send it again (3.3.7.9)."""
    steps = [{"crash": "BSC11"},
             {"tamper": {"from": "BSC11", "to": "PSC1", "operation": "SyncRequest", "times": 1}},
             {"mark": "restart"}, {"restart": "BSC11"}, {"advance": 30},
             {"expect": {"sent": {"at": "BSC11", "to": "PSC1", "operation": "SyncRequest", "count": ">= 4",
                                  "since": "restart"}}},
             {"settle": {"quiet": 60}}, {"expect": {"converged": True}}]
    records: list[dict] = []
    result = run(_parse(steps), trace=records.append)
    assert result.failures == []
    assert [r["class"] for r in records if r["event"] == "receive" and r["node"] == "BSC11" and r["class"]] == [0x8006]


def test_send_delivers_raw_bytes_that_the_receiver_ignores():
    """``send`` puts bytes no replication message has on the wire; the receiver takes no action (3.1.5.1) and all converges."""
    steps = [{"send": {"from": "PSC1", "to": "PEC0", "body": "01" + "00" * 40}},
             {"send": {"from": "PSC1", "to": "PEC0", "body": ""}},
             {"settle": {"quiet": 60}}, {"expect": {"converged": True}}]
    records: list[dict] = []
    assert run(_parse(steps), trace=records.append).failures == []
    strange = {"01" + "00" * 40, ""}
    assert [r["body"] for r in records if r["event"] == "receive" and r["body"] in strange] == ["01" + "00" * 40, ""]


def test_send_body_is_hex():
    """A ``send`` body that is not hex is a parse error."""
    with pytest.raises(sc.ScenarioError, match=r"steps\[0\]\.send\.body: not hex"):
        _parse([{"send": {"from": "PSC1", "to": "PEC0", "body": "zz"}}])


def test_send_asks_for_nacks_only_when_told_and_names_a_level_it_does_not_know():
    """``ack: AckNackReachQueue`` makes a send whose signature fails come back to the sender as a NackBadSignature with
    its body; without it nothing comes back; any other level is a parse error naming the known ones."""
    body = "01" + "00" * 40
    for ack, nacks in (("AckNackReachQueue", [body]), (None, [])):
        send = {"from": "PSC1", "to": "PEC0", "body": body, **({"ack": ack} if ack else {})}
        records: list[dict] = []
        steps = [{"tamper": {"from": "PSC1", "to": "PEC0", "times": 1}}, {"send": send}, {"settle": {"quiet": 60}}]
        assert run(_parse(steps), trace=records.append).failures == []
        assert [r["body"] for r in records if r["event"] == "receive" and r["node"] == "PSC1"
                and r["class"] == 0x8006] == nacks
    with pytest.raises(sc.ScenarioError, match=r"steps\[0\]\.send\.ack: 'AckFullReachQueue' is not an acknowledgment "
                                               r"level a send asks \(known: None, AckNackReachQueue\)"):
        _parse([{"send": {"from": "PSC1", "to": "PEC0", "body": "00", "ack": "AckFullReachQueue"}}])


def test_an_expectation_about_a_server_never_added_fails_and_names_it():
    """An expectation at a BSC whose add_bsc failed (its site's PSC had no partition yet) is a failed expectation naming it, not a crash; the other servers are still checked."""
    failures = _failures([
        {"add_site": {"site": "site2", "psc": "PSC2"}},
        {"add_bsc": {"site": "site2", "bsc": "BSC21"}},
        {"settle": {}},
        {"expect": {"node": {"at": ["BSC21", "BSC11"], "my_psc_name": "PSC2"}}},
    ])
    assert any("add_bsc: site site2 has no running PSC" in f for f in failures)
    assert any("node: BSC21 is not a server in the enterprise now" in f for f in failures)
    assert any("node: BSC11 MyPSCName is PSC1, expected PSC2" in f for f in failures)
