"""Counterexample scenario files: every literal violation and every bounded-model-checking finding replays.

A literal obligation's file replays to the same violation (a failed ``expect`` or a message the
invariant forbids) and runs clean in clarified mode. The E-261 .. E-264 files are the evidence of
the register entries the proofs added: each fails in literal mode; E-261, E-263, E-264 (both files:
a lost reply in NORMAL and one in SYNC0) and E-265 run clean in clarified mode (their clarifications
are in refimpl), and E-262 (out of scope) fails in both. Read wholly literally a run fails earlier (the enterprise
never forms, E-142), so the E-263, E-264 and E-265 files also replay with the literal reading confined to the handler the entry changes (their
``# replay: literal in`` header), which shows the defect itself; E-261's handler-level evidence
runs the reference handler on one replica state.
"""


from pathlib import Path

import pytest
from mqspec.proofs import counterexample_scenarios as cs
from mqspec.refimpl.effects import Mode
from mqspec.refimpl.scenario import load
from mqspec.refimpl.scenario_run import run

from mqspec.clauses import covers

from .test_enterprise import EXPECTED_LITERAL as EXPECTED_ENTERPRISE
from .test_obligations import EXPECTED_LITERAL

FOLDER = cs.FOLDER


def _one_file_per_template():
    chosen = {}
    for name, template in sorted(cs.LITERAL_SCENARIOS.items()):
        chosen.setdefault(template, FOLDER / f"{name}.yaml")
    return sorted(chosen.items())


def test_every_literal_violation_has_its_scenario_file():
    """Each predicted literal violation, per server and in the enterprise model, has
    scenarios/counterexamples/<obligation>.yaml, which parses."""
    names = {f"{inv}-by-{handler}" for inv, handler in EXPECTED_LITERAL}
    names |= {f"enterprise-{inv}-by-{handler}" for inv, handler in EXPECTED_ENTERPRISE}
    assert names == set(cs.LITERAL_SCENARIOS)
    for name in names:
        path = FOLDER / f"{name}.yaml"
        scenario = load(path)
        assert scenario.steps
        assert "invariant " in path.read_text(encoding="utf-8")  # the counterexample trace heads the file


@pytest.mark.parametrize("template,path", _one_file_per_template(), ids=[t for t, _ in _one_file_per_template()])
def test_literal_counterexample_replays_to_the_same_violation(template, path):
    """Replayed as its header says, the file shows the violation; clarified, it runs clean."""
    result, messages = cs.replay(path)
    shown = result.failures + messages
    assert any(cs.SHOWS[template] in line for line in shown), shown
    clean, clean_messages = cs.replay(path, clarified=True)
    assert clean.failures == [] and clean_messages == []


def test_selective_reading_is_literal_only_inside_the_named_handler():
    """Inside literal_in("receive_sync_reply") a Context reads that handler literally and every other clarified."""
    with cs.literal_in("receive_sync_reply"):
        from mqspec.refimpl import world

        ctx = world.Context("N")

    def receive_sync_reply():
        return ctx.clarified, ctx.literal

    def other():
        return ctx.clarified, ctx.literal

    assert receive_sync_reply() == (False, True)
    assert other() == (True, False)


def _failures(path, mode):
    return run(load(path), mode=mode).failures


#: the scenario files of the proof errata refimpl clarifies (E-261, E-263, E-264, E-265)
PROOF_ERRATA = ("e261-replicated-delete-of-an-unknown-object-stalls", "e263-site-scoped-queue-update-lost-by-sync",
                "e264-lost-full-sync-reply-is-never-asked-again", "e264-lost-sync0-reply-leaves-the-replica-in-sync0",
                "e265-lost-reply-to-a-gap-request-is-never-asked-again")
#: file -> what its replay shows with the literal reading confined to the handler its header names
DEFECT_SHOWN = {
    "e263-site-scoped-queue-update-lost-by-sync": "queue C0\\z has seq 3, expected == 4",
    "e264-lost-full-sync-reply-is-never-asked-again": "partition site1 does not exist",
    "e264-lost-sync0-reply-leaves-the-replica-in-sync0": "is SYNC0",
    "e265-lost-reply-to-a-gap-request-is-never-asked-again": "queue C1\\q is not in the directory",
}


def _bsc_state(**changes):
    """A BSC's replica of its site partition at LastSeqNumber 5, NORMAL, nothing queued, no tombstone."""
    import random

    from mqspec.proofs import refimpl_bridge as rb
    from mqspec.proofs import z3_model as zm

    s = rb.random_state(random.Random(0))
    s.is_authority, s.is_psc, s.is_enterprise = False, False, False
    s.last_seq_number = s.allowed_purge_seq_number = s.previous_purged_seq_number = 5
    s.purged_seq_number, s.change_missing_window, s.purge_state = 0, 0, zm.NORMAL
    for c in s.pending_changes:
        c.present = False
    for t in s.deleted_objects:
        t.present = False
    for k, v in changes.items():
        setattr(s, k, v)
    return s


@covers("MC-MQDSRP", "3.1.7.2.3")
@covers("MC-MQDSRP", "3.1.7.2.7")
def test_e261_replica_applies_a_delete_of_an_object_it_never_had_only_when_clarified():
    """A BSC's Handle In-Sync Change of a delete of a missing queue stops there literally; clarified it applies it."""
    from mqspec.proofs import refimpl_bridge as rb
    from mqspec.proofs import z3_model as zm

    delete = {"change": zm.Change(True, 5, 6, 0, True, False)}  # applies False: the queue is not in the directory
    literal = rb.run_refimpl("handle_in_sync_change", _bsc_state(), delete, "literal")
    assert literal["last"] == 5 and literal["tombstones"] == []
    clarified = rb.run_refimpl("handle_in_sync_change", _bsc_state(), delete, "clarified")
    assert clarified["last"] == 6 and clarified["tombstones"] == [(6, True, True)]


@covers("MC-MQDSRP", "3.2.7.1")
def test_e264_header_asks_again_past_a_window_of_max_only_when_clarified():
    """With ChangeMissingWindow MAX a newer SeqNumberHeader is skipped literally; clarified (NORMAL) it asks again."""
    from mqspec.proofs import refimpl_bridge as rb

    header = {"header_present": True, "header_last": 9, "header_purged": 0}
    state = _bsc_state(change_missing_window=(1 << 64) - 1)
    literal = rb.run_refimpl("receive_change_propagation", state, header, "literal")
    assert literal["sync_requests"] == [] and literal["window"] == (1 << 64) - 1
    clarified = rb.run_refimpl("receive_change_propagation", state, header, "clarified")
    assert clarified["sync_requests"] == [(5, 9, 0, False)] and clarified["window"] == 9


@covers("MC-MQDSRP", "3.1.3.1")
def test_e262_authority_losing_all_state_never_converges():
    """An authority that loses all its replication state leaves the enterprise unconverged in both modes."""
    for mode in (Mode.CLARIFIED, Mode.LITERAL):
        failures = _failures(FOLDER / "e262-authority-loses-all-replication-state.yaml", mode)
        assert any("not converged" in f for f in failures)


@covers("MC-MQDSRP", "3.1.7.2.3")
@covers("MC-MQDSRP", "3.2.7.1")
@covers("MC-MQDSRP", "3.2.7.8")
@pytest.mark.parametrize("name", PROOF_ERRATA)
def test_proof_erratum_scenario_fails_literally_and_converges_clarified(name):
    """The E-261, E-263, E-264 and E-265 scenarios fail in literal mode and converge, every expect met, clarified."""
    path = FOLDER / f"{name}.yaml"
    assert _failures(path, Mode.LITERAL)
    assert _failures(path, Mode.CLARIFIED) == []


@covers("MC-MQDSRP", "3.2.7.1")
@covers("MC-MQDSRP", "3.2.7.8")
@pytest.mark.parametrize("name", sorted(DEFECT_SHOWN))
def test_proof_erratum_replays_to_its_defect_with_the_handler_read_literally(name):
    """Read literally only in the handler its clarification changes, the scenario shows the entry's defect itself."""
    path = FOLDER / f"{name}.yaml"
    assert cs.replay_handlers(path)
    result, _messages = cs.replay(path)
    assert any(DEFECT_SHOWN[name] in f for f in result.failures), result.failures


def test_replay_finds_a_file_by_the_bare_name_its_header_gives_and_refuses_a_missing_one_in_one_line(capsys):
    """`replay NAME.yaml`, as each file's ``Replay:`` line writes it, runs the file of that name under
    scenarios/counterexamples; a file that is not there is one line naming it and exit status 2, no traceback."""
    name = "replicas_converge_at_quiescence.yaml"
    assert (FOLDER / "literal" / name).exists() and not Path(name).exists()
    assert cs.main(["replay", name]) in (0, 1)
    assert '"failures"' in capsys.readouterr().out
    assert cs.main(["replay", "no-such-counterexample.yaml"]) == 2
    err = capsys.readouterr().err
    assert err == "mqspec: counterexample error: no-such-counterexample.yaml: No such file or directory\n"
