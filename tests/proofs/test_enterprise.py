"""The enterprise model: every invariant proved for any number of servers in clarified mode, the literal text's
violations the predicted ones, every branch of every transition reachable, every per-server assumption accounted for."""

import re

import pytest
from mqspec.proofs.enterprise import assumptions as ea
from mqspec.proofs.enterprise import check
from mqspec.proofs.enterprise import invariants as ei
from mqspec.proofs.enterprise.transitions import BY_TRANSITION, TRANSITIONS
from mqspec.proofs.z3_events import ENVIRONMENT_ASSUMPTIONS, EVENTS

from mqspec import errata
from mqspec.clauses import covers

#: what literal mode violates: (invariant, transition) -> the register entries the counterexample must cite
EXPECTED_LITERAL: dict[tuple[str, str], set[str]] = {
    ("propagated_changes_carry_assigned_numbers", "propagate_directory_change"): {"E-103"},
    ("tombstones_cover_deletions_above_purged_seq", "propagate_directory_change"): {"E-108"},
    ("tombstones_cover_deletions_above_purged_seq", "handle_directory_change"): {"E-108"},
    ("window_within_authority_history", "receive_change_propagation"): {"E-116"},
    ("sync_replies_carry_assigned_numbers", "receive_sync_request"): {"E-118"},
    ("reply_deletions_are_authority_deletions", "receive_sync_request"): {"E-118"},
    ("purged_seq_at_most_last_seq", "receive_sync_reply"): {"E-166"},
    ("replica_objects_are_authority_history", "receive_sync_reply"): {"E-166"},
    ("replica_last_seq_monotone_except_sync0", "receive_sync_reply"): {"E-166"},
    ("no_server_keeps_an_object_deleted_below_its_last_seq", "receive_sync_reply"): {"E-119"},
    ("tombstones_are_authority_deletions", "receive_sync_reply"): {"E-166"},
    ("tombstones_cover_deletions_above_purged_seq", "receive_sync_reply"): {"E-108"},
    ("psc_acks_are_truthful", "receive_sync_reply"): {"E-166"},
    ("recorded_psc_acks_are_truthful", "receive_sync_reply"): {"E-166"},
    ("acked_seq_at_most_replica_last_seq", "receive_sync_reply"): {"E-166"},
    ("handover_successor_has_applied_more", "receive_sync_reply"): {"E-166"},
    ("tombstones_cover_deletions_above_purged_seq", "purge_deleted_objects"): {"E-133"},
    ("partition_held_once_per_server", "handle_site_update"): {"E-104"},
}

#: branches no state satisfying the invariants takes, and why (each must stay unreachable)
UNREACHABLE: dict[tuple[str, str], str] = {}


def test_each_family_has_invariants_of_its_own():
    """The four families the design card names each have invariants that are not only strengthening."""
    stated = {inv.family for inv in ei.INVARIANTS if not inv.strengthening}
    assert stated == set(ei.FAMILIES)
    assert all(inv.prose.startswith("checks that ") for inv in ei.INVARIANTS)


@covers("MC-MQDSRP", "3.1.7.1.2")
@covers("MC-MQDSRP", "3.1.7.2.9")
@covers("MC-MQDSRP", "3.2.7.3")
@covers("MC-MQDSRP", "3.3.7.5")
def test_every_enterprise_obligation_is_proved_for_any_number_of_servers(prove_runs):
    """Clarified: every initiation and consecution obligation of the enterprise model is proved, none trivial
    or vacuous, each for any number of servers, in each of the four families."""
    rows = prove_runs["clarified"].of_kind("enterprise-initiation", "enterprise-consecution")
    assert sorted(r["name"] for r in rows) == sorted(o.name for o in check.obligations("clarified"))
    bad = [f"{r['name']}: {r['status']}\n{(r['counterexample'] or {}).get('trace', '')}"
           for r in rows if r["status"] != "proved"]
    assert not bad, "\n".join(bad)
    assert not [r["name"] for r in rows if r["trivial"] or r["vacuous"]]
    assert {r["servers"] for r in rows} == {"any"}
    assert {r["family"] for r in rows} == set(ei.FAMILIES)


@pytest.mark.parametrize("name", [t.name for t in TRANSITIONS])
def test_every_branch_of_a_transition_is_reachable(name):
    """Each named branch of the transition is taken from some state satisfying every invariant (clarified)."""
    reach = check.branch_reachability(name, "clarified")
    expected = {b: ("unreachable" if (name, b) in UNREACHABLE else "reachable") for b in reach}
    assert reach == expected


def test_every_per_server_assumption_is_discharged_or_listed():
    """Each event of the per-server model and each of its environment assumptions is proved by named enterprise
    invariants or rests on an assumption mqspec prove lists."""
    events = {d.event for d in ea.DISCHARGES}
    assert {e.name for e in EVENTS} <= events
    assert len([d for d in ea.DISCHARGES if d.event == "environment"]) == len(ENVIRONMENT_ASSUMPTIONS)
    listed = {name for name, _ in ea.not_proved()}
    for d in ea.DISCHARGES:
        assert set(d.proved_by) <= set(ei.BY_NAME), d
        assert d.assumption is None or d.assumption in listed, d
        assert d.proved_by or d.assumption or d.assumes == "nothing" or d.event in ("send_psc_ack",), d


def test_every_assumption_a_transition_makes_is_listed():
    """A transition's named assumptions are the ones mqspec prove lists as not proved."""
    names = set()
    for tr in TRANSITIONS:
        _pre, _post, _params, step, _hyps = check.transition_formulas(tr, "clarified")
        names |= set(step.assumptions)
    assert names == {a.name for a in ea.ASSUMPTIONS}


def test_a_violation_renders_the_servers_and_both_states():
    """A literal counterexample reads "invariant X is not preserved by Y" with the servers, pre-state and event."""
    [r] = check.check_transition("propagate_directory_change", "literal",
                                 invariants=["propagated_changes_carry_assigned_numbers"])
    assert r.status == "violated"
    trace = r.counterexample["trace"]
    assert trace.startswith("invariant propagated_changes_carry_assigned_numbers is not preserved by "
                            "propagate_directory_change (literal mode")
    for needle in ("Server: S0", "pre-state:", "event: propagate_directory_change(", "post-state (changed):",
                   "prop = {", "E-103"):
        assert needle in trace
    assert r.counterexample["errata"] == ["E-103"] or "E-103" in r.counterexample["errata"]
    assert set(r.counterexample["errata"]) <= set(errata.by_id())


def test_literal_violations_are_the_predicted_ones(prove_runs):
    """Literal mode breaks exactly the predicted (invariant, transition) pairs, each citing its register entries,
    each replayed by a scenario file with several servers (tests/proofs/test_counterexamples.py runs them) that the
    register entries it cites name."""
    from mqspec.proofs.counterexample_scenarios import FOLDER, LITERAL_SCENARIOS

    register = errata.by_id()
    rows = prove_runs["literal"].of_kind("enterprise-initiation", "enterprise-consecution")
    violated = {(r["invariant"], r["handler"]): r for r in rows if r["status"] == "violated"}
    assert not [r["name"] for r in rows if r["status"] == "unknown"]
    assert set(violated) == set(EXPECTED_LITERAL), {"unexpected": sorted(set(violated) - set(EXPECTED_LITERAL)),
                                                    "missing": sorted(set(EXPECTED_LITERAL) - set(violated))}
    for key, r in violated.items():
        assert EXPECTED_LITERAL[key] <= set(r["counterexample"]["errata"]), key
        assert set(r["counterexample"]["errata"]) <= set(register), key
        assert r["name"] in LITERAL_SCENARIOS, r["name"]
        assert (FOLDER / f"{r['name']}.yaml").is_file(), r["name"]
        cited_by = [e for e in EXPECTED_LITERAL[key] if f"counterexamples/{r['name']}.yaml" in register[e].evidence]
        assert cited_by, f"no register entry of {sorted(EXPECTED_LITERAL[key])} cites {r['name']}.yaml"


def test_every_erratum_a_transition_reads_is_registered_and_read_literally():
    """The register entries the transitions branch on are registered, and literal mode reads each literally."""
    import inspect

    from mqspec.proofs.enterprise import transitions

    cited = set(re.findall(r'r\("(E-\d+)"\)', inspect.getsource(transitions)))
    assert cited == set(transitions.ERRATA)
    assert cited <= set(errata.by_id())


def test_transitions_are_named_as_refimpl_handlers():
    """Each transition is named after a refimpl handler (or the handover) and cites its section."""
    from mqspec.refimpl import handover, mqdsrp_client, mqdsrp_common, mqdsrp_objects, mqdsrp_server

    modules = (mqdsrp_client, mqdsrp_common, mqdsrp_objects, mqdsrp_server, handover)
    for tr in TRANSITIONS:
        assert any(hasattr(m, tr.name) for m in modules), tr.name
        assert tr.section.startswith("3."), tr.name
    assert set(BY_TRANSITION) == {t.name for t in TRANSITIONS}
