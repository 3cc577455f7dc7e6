"""Proof obligations: clarified mode proves every one; literal mode violates exactly the predicted ones, each cited.

The default tier runs ``mqspec prove --json`` in both modes once (tests/proofs/conftest.py, the
``prove_runs`` fixture: per-server lemmas, initiation and consecution, the enterprise model and the
bounded model checking) and checks its rows here, in tests/proofs/test_enterprise.py and in
tests/proofs/test_bmc.py.
"""

import json

from click.testing import CliRunner
from mqspec.proofs import obligations as ob
from mqspec.proofs import z3_invariants as zi

from mqspec import errata
from mqspec.clauses import covers

#: the budget of ``mqspec prove`` in both modes together on two idle cores (the issue's five minutes)
PROVE_SECONDS = 300

#: what literal mode violates: (invariant, handler) -> the register entries the counterexample must cite
EXPECTED_LITERAL = {
    ("replica_tombstone_covers_applied_deletions", "handle_directory_change"): {"E-108"},
    ("purge_keeps_last_1024_changes", "handle_directory_change"): {"E-130"},
    ("replica_tombstone_covers_applied_deletions", "handle_in_sync_change"): {"E-108"},
    ("purge_keeps_last_1024_changes", "handle_in_sync_change"): {"E-130"},
    ("replica_tombstone_covers_applied_deletions", "check_pending_changes"): {"E-108"},
    ("purge_keeps_last_1024_changes", "check_pending_changes"): {"E-130"},
    ("authority_tombstone_covers_unacked_deletions", "propagate_directory_change"): {"E-108"},
    ("changes_carry_authority_purged_seq", "propagate_directory_change"): {"E-103"},
    ("authority_tombstone_covers_unacked_deletions", "receive_change_request"): {"E-108"},
    ("changes_carry_authority_purged_seq", "receive_change_request"): {"E-103"},
    ("changes_carry_assigned_sequence_numbers", "receive_sync_request"): {"E-118"},
    ("changes_chain_forward", "receive_sync_request"): {"E-118", "E-119"},
    ("changes_skip_no_deletion", "receive_sync_request"): {"E-118", "E-119"},
    ("replication_state_well_formed", "receive_sync_reply"): {"E-166"},
    ("replica_tombstone_covers_applied_deletions", "receive_sync_reply"): {"E-108"},
    ("replica_last_seq_monotone_except_sync0", "receive_sync_reply"): {"E-166"},
    ("purged_seq_at_most_last_seq", "receive_sync_reply"): {"E-166"},
    ("purge_keeps_last_1024_changes", "receive_sync_reply"): {"E-130"},
    ("authority_tombstone_covers_unacked_deletions", "purge_deleted_objects"): {"E-133"},
    ("replica_tombstone_covers_applied_deletions", "purge_deleted_objects"): {"E-133"},
    ("purge_keeps_last_1024_changes", "purge_deleted_objects"): {"E-130"},
    ("window_within_authority_history", "receive_change_propagation"): {"E-116"},
    ("sync_requests_ask_assigned_sequence_numbers", "receive_change_propagation"): {"E-116"},
}
REGISTER = errata.by_id()


def _assert_literal_as_predicted(rows):
    violated = {(r["invariant"], r["handler"]): r for r in rows if r["status"] == "violated"}
    assert not [r["name"] for r in rows if r["status"] == "unknown"]
    assert set(violated) == set(EXPECTED_LITERAL), {"unexpected": sorted(set(violated) - set(EXPECTED_LITERAL)),
                                                    "missing": sorted(set(EXPECTED_LITERAL) - set(violated))}
    for key, r in violated.items():
        cited = set(r["counterexample"]["errata"])
        assert EXPECTED_LITERAL[key] <= cited, (key, cited)
        assert cited <= set(REGISTER), f"{key} cites ids the register lacks: {cited - set(REGISTER)}"


@covers("MC-MQDSRP", "2.2.2")
@covers("MC-MQDSRP", "3.1.3.1")
@covers("MC-MQDSRP", "3.1.7.2.9")
@covers("MC-MQDSRP", "3.2.7.1")
@covers("MC-MQDSRP", "3.2.7.2")
@covers("MC-MQDSRP", "3.2.7.3")
@covers("MC-MQDSRP", "3.3.7.5")
def test_every_clarified_obligation_is_proved(prove_runs):
    """``mqspec prove --mode clarified`` proves every obligation it lists, which are exactly the mode's obligations."""
    run = prove_runs["clarified"]
    assert sorted(r["name"] for r in run.rows) == sorted(o.name for o in ob.obligations("clarified"))
    bad = [f"{r['name']}: {r['status']}\n{(r['counterexample'] or {}).get('trace', '')}"
           for r in run.rows if r["status"] != "proved"]
    assert not bad, "\n".join(bad)
    assert run.exit_code == 0
    assert len(run.of_kind("initiation")) == len(zi.STATE_INVARIANTS)


@covers("MC-MQDSRP", "3.1.7.2.9")
@covers("MC-MQDSRP", "3.2.7.1")
@covers("MC-MQDSRP", "3.2.7.3")
@covers("MC-MQDSRP", "3.3.7.5")
def test_literal_violations_per_server_are_the_predicted_ones(prove_runs):
    """Literal mode breaks exactly the predicted (invariant, handler) pairs of the per-server model, each cited."""
    run = prove_runs["literal"]
    _assert_literal_as_predicted(run.of_kind("lemma", "initiation", "consecution"))
    assert run.exit_code == 1


def test_prove_in_both_modes_keeps_to_its_budget(prove_runs):
    """Both modes of ``mqspec prove`` (every kind, bounded model checking included) take under five minutes on two
    idle cores: the budget the refinement rows share. Their CPU time over two cores is what the wall time would be on
    two idle cores at best, whatever the load of the machine the test runs on (the wall times are in the message)."""
    cpu = sum(run.cpu_seconds for run in prove_runs.values())
    assert cpu / 2 < PROVE_SECONDS, {mode: {"wall": round(run.seconds), "cpu": round(run.cpu_seconds)}
                                     for mode, run in prove_runs.items()}


def test_violation_renders_as_pre_state_event_post_state():
    """A literal counterexample reads "invariant X is not preserved by Y" with fields named as attrs names them."""
    [r] = [r for r in ob.check_event("receive_change_propagation", "literal")
           if r.obligation.invariant == "window_within_authority_history"]
    trace = r.counterexample["trace"]
    assert trace.startswith("invariant window_within_authority_history is not preserved by receive_change_propagation")
    for needle in ("partition.change_missing_window", "ghost.authority_last_seq", "event: receive_change_propagation(",
                   "E-116", "sent SyncRequest"):
        assert needle in trace
    assert r.counterexample["post"]["partition.change_missing_window"] == r.counterexample["event"]["arguments"][
        "header_last"] + 1


def test_unknown_is_its_own_status():
    """A solver that gives up reports unknown, which is never counted as proved."""
    result = ob.Result(ob.Obligation("x", "x", "y", "clarified", "consecution"), "unknown", 0.0)
    assert ob.summary([result]) == {"proved": 0, "trivial": 0, "vacuous": 0, "violated": 0, "unknown": 1}


def test_trivial_and_vacuous_rows_are_not_counted_as_proved():
    """A proved row that is trivial or vacuous is counted apart from the proved ones."""
    o = ob.Obligation("x", "x", "y", "clarified", "consecution", "purge")
    rows = [ob.Result(o, "proved", 0.0), ob.Result(o, "proved", 0.0, trivial=True),
            ob.Result(o, "proved", 0.0, trivial=True, vacuous=True)]
    assert ob.summary(rows) == {"proved": 1, "trivial": 1, "vacuous": 1, "violated": 0, "unknown": 0}


def test_a_goal_the_handler_cannot_touch_is_trivial_and_one_it_can_is_not():
    """Receive PSC Ack sends no ack, so psc_acks_are_truthful holds without its transition; Send PSC Ack's does not."""
    [by_receive] = ob.check_event("receive_psc_ack", "clarified", invariants=["psc_acks_are_truthful"])
    [by_send] = ob.check_event("send_psc_ack", "clarified", invariants=["psc_acks_are_truthful"])
    assert (by_receive.status, by_receive.trivial, by_receive.vacuous) == ("proved", True, False)
    assert (by_send.status, by_send.trivial, by_send.vacuous) == ("proved", False, False)
    assert (by_send.obligation.kind, by_send.obligation.servers, by_send.obligation.family) == (
        "consecution", "one", "acks")


def test_an_invariant_about_one_event_has_no_obligation_for_the_others():
    """bsc_never_applies_change_request is checked for Receive Change Request only (elsewhere it would be True)."""
    handlers = {o.handler for o in ob.obligations("clarified") if o.invariant == "bsc_never_applies_change_request"}
    assert handlers == {"receive_change_request"}


def test_mqspec_prove_exit_status_and_json_rows():
    """``mqspec prove --json`` prints one row per obligation; exit 1 on a violation, 0 when all are proved."""
    from mqspec.cli.prove import prove

    runner = CliRunner()
    bad = runner.invoke(prove, ["--mode", "literal", "--json", "--kind", "consecution",
                                "--handler", "receive_change_propagation"])
    rows = json.loads(bad.output)
    assert bad.exit_code == 1
    assert all(set(r) >= {"name", "invariant", "handler", "mode", "kind", "family", "servers", "status", "trivial",
                          "vacuous", "seconds", "counterexample"} for r in rows)
    violated = [r for r in rows if r["status"] == "violated"]
    assert {r["invariant"] for r in violated} == {"window_within_authority_history",
                                                  "sync_requests_ask_assigned_sequence_numbers"}
    assert all(r["counterexample"]["errata"] == ["E-116"] for r in violated)
    good = runner.invoke(prove, ["--mode", "clarified", "--kind", "consecution", "--handler", "receive_psc_ack"])
    assert good.exit_code == 0, good.output
    lines = good.output.splitlines()
    assert any(line.startswith("proved") for line in lines) and not any(line.startswith("violated") for line in lines)
    assert "clarified: " in good.output and " 0 violated, 0 unknown; not counted: " in good.output
    usage = runner.invoke(prove, ["--handler", "no_such_handler"])
    assert usage.exit_code == 2
