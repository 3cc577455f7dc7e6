"""The enterprise model's invariants on projected World states (proofs/enterprise/evaluate.py, proofs/refinement/
enterprise.py): clean on the reference, failing on a reference that breaks one, exact between the numbers held."""

from __future__ import annotations

import attrs
import pytest

from mqspec.proofs.enterprise import evaluate
from mqspec.proofs.enterprise import invariants as ei
from mqspec.proofs.enterprise.projection import EnterpriseRecorder, project
from mqspec.proofs.refinement import campaign, check, enterprise
from mqspec.refimpl import mqdsrp_objects, scenario_run
from mqspec.refimpl.effects import Mode
from mqspec.refimpl.mqdsrp_state import PEC_PARTITION_ID
from mqspec.refimpl.scenario import load
from mqspec.vectors import mutation as vm

#: a deletion purged after every PSC acknowledged it; a PSC handover; a BSC added
FILES = frozenset({"4.4-deleting-a-queue.yaml", "e316-bsc-in-sync0-follows-its-moved-psc.yaml",
                   "4.2-adding-a-bsc.yaml"})


def _checked(only: frozenset[str]) -> enterprise.Tally:
    """The campaign's scenario runs of ``only`` in clarified mode, with the enterprise check on."""
    whole = enterprise.Tally()
    previous, check.WATCH = check.WATCH, campaign.Watch(campaign.Tracer())
    try:
        campaign._scenarios(Mode.CLARIFIED, [], False, only=only, whole=whole)
    finally:
        check.WATCH = previous
    return whole


def test_the_reference_reaches_no_state_outside_the_enterprise_invariants():
    """Every state invariant holds after each top-level step of a deletion and its purge, a PSC handover and a new
    BSC; one row per state invariant, each refined on the states checked."""
    whole = _checked(FILES)
    assert whole.violations == {} and sorted(whole.files) == sorted(FILES)
    assert whole.states >= 20 and whole.runs >= 1000  # the step invariants: each handler run that changed something
    rows = whole.rows()
    assert [r.obligation.invariant for r in rows] == [i.name for i in ei.INVARIANTS if i.kind == "state"] + \
        [i.name for i in ei.INVARIANTS if i.kind == "step"]
    assert {r.status for r in rows} == {"refined"} and {r.obligation.mode for r in rows} == {"clarified"}
    assert {r.detail["states"] for r in rows if r.detail["kind"] == "step"} == {whole.runs}


def test_a_purge_that_takes_the_largest_psc_ack_fails_an_enterprise_step_invariant():
    """One of the issue's mutants (Purge Deleted Objects with max for min) reaches no state outside the state
    invariants, but its purge step removes a tombstone a PSC neighbor has not acknowledged: the handler run that
    purges breaks tombstone_purged_only_after_all_psc_acks, named with the server, the object and the neighbor."""
    fn = mqdsrp_objects.purge_deleted_objects
    [mutant] = [m for m in vm.mutants_of(fn, vm.EXTRA_OPERATORS) if m.name.endswith("minmax: min(acks) -> max(...)")]
    with vm.installed(fn, vm.mutant_code(fn, mutant)):
        whole = _checked(frozenset({"purge-waits-for-the-slowest-psc.yaml"}))
    assert list(whole.violations) == ["tombstone_purged_only_after_all_psc_acks"]
    found = whole.violations["tombstone_purged_only_after_all_psc_acks"]
    assert found.run == "PEC0's client_request run" and set(found.instance) == {"s", "o", "n"}
    assert "fails on PEC0's client_request run of purge-waits-for-the-slowest-psc.yaml" in found.text()


def test_a_psc_records_its_neighbors_acks_of_its_own_site_partition():
    """AckedSeqNumber is a PSC neighbor's ack of this server's own site partition (3.2.7.4), so the projection keys
    it by that partition (the model's acked(s, n, p) with s the authority of p), not by the site the neighbor entry
    names (E-105): keyed that way, recorded_psc_acks_are_truthful compared no site partition's ack at all."""
    snap = _snapshot("4.4-deleting-a-queue.yaml")
    site_acks = {k: v for k, v in snap.acked.items() if k[2] != PEC_PARTITION_ID}
    assert {p for s, _, p in site_acks} == {snap.site[s] for s, _, _ in site_acks}
    assert max(site_acks.values()) > 0


def test_a_reference_that_keeps_no_tombstone_fails_an_enterprise_invariant():
    """Without E-108's tombstones (the clarified branch of Handle Directory Delete dropped) replicas apply the
    deletion and keep no DeletedObject: the projected state breaks tombstones_cover_deletions_above_purged_seq,
    named with the server and object. The authority's history comes from the changes it sends, not from the
    tombstones the mutant no longer keeps."""
    fn = mqdsrp_objects.handle_directory_delete
    [mutant] = [m for m in vm.mutants_of(fn, vm.OPERATORS) if m.name.endswith("drop-then: if ctx.clarified -> "
                                                                             "if ctx.clarified: pass")]
    with vm.installed(fn, vm.mutant_code(fn, mutant)):
        whole = _checked(frozenset({"4.4-deleting-a-queue.yaml"}))
    found = whole.violations["tombstones_cover_deletions_above_purged_seq"]
    assert found.file == "4.4-deleting-a-queue.yaml" and set(found.instance) == {"s", "o", "d"}
    assert "tombstones_cover_deletions_above_purged_seq fails on the projected state of" in found.text()
    rows = {r.obligation.invariant: r for r in whole.rows()}
    assert rows["tombstones_cover_deletions_above_purged_seq"].status == "violated"


def _snapshot(name="4.2-adding-a-bsc.yaml"):
    holder = {}
    path = next(p for p in campaign.scenario_files() if p.name == name)
    result = scenario_run.run(load(path), mode=Mode.CLARIFIED,
                              attach=lambda w: holder.setdefault("r", EnterpriseRecorder(w)), skip_idle_timers=True)
    return project(result.world, holder["r"])


@pytest.mark.parametrize("jump,holds", [(1, True), (2, False)])
def test_a_number_no_state_holds_still_counts_between_two_that_it_does(jump, holds):
    """The authority's LastSeqNumber steps by one (authority_last_seq_strictly_increases): a step from n to n + 2
    skips n + 1, which no state holds; the evaluator's neighbours of held numbers find it."""
    pre = _snapshot()
    assert evaluate.violations(pre) == []
    key = ("PEC0", PEC_PARTITION_ID)
    last = pre.last[key] + jump
    new_object = next(o for o, p in pre.part.items() if p == PEC_PARTITION_ID)
    post = attrs.evolve(pre, last={**pre.last, key: last}, alast={**pre.alast, PEC_PARTITION_ID: last},
                        hist=pre.hist | {(new_object, last)})
    step = ei.BY_NAME["authority_last_seq_strictly_increases"]
    assert evaluate.violations(post, pre, [step]) == ([] if holds else [step.name])


def test_each_file_left_out_exists_and_prove_prints_why():
    """The files the enterprise check leaves out are campaign files (a stale name would excuse nothing), and the
    lines `mqspec prove` prints name each with its reason."""
    names = {path.name for path in campaign.scenario_files()}
    assert set(enterprise.OUT_OF_SCOPE) <= names
    printed = "\n".join(enterprise.exemption_lines())
    for name, why in enterprise.OUT_OF_SCOPE.items():
        assert f"{name}: {why}" in printed
