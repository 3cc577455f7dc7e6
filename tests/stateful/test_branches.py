"""proofs/explore/branches.py: the handler branches, what reaches them, and bench/stateful.py's report."""

from __future__ import annotations

import contextlib
import functools

import pytest

from mqspec.proofs.explore import branches
from mqspec.refimpl.effects import Context, Mode
from mqspec.refimpl.mqdsrp_objects import handle_enterprise_update
from mqspec.refimpl.mqdsrp_state import PEC_PARTITION_ID, DirectoryPartition, QueueManager, Role
from mqspec.model.guid import Guid


def _enterprise_update_branches() -> list[branches.Branch]:
    return [b for b in branches.handler_branches() if b.function == "handle_enterprise_update"]


def _machine(pscs: int, bscs: list[int]):
    """The explorer's replication machine with its enterprise built: ``pscs`` sites, ``bscs`` BSCs per site."""
    from mqspec.proofs.explore.machine import ReplicationMachine

    machine = ReplicationMachine()
    machine.build(pscs=pscs, bscs=bscs)
    return machine


@contextlib.contextmanager
def _reaching(machine):
    """The handler branches that the block's inputs and a settle after them reach; the enterprise must then converge."""
    with branches.Reach() as reach:
        yield reach
        machine.settle()
    assert machine.world.converged()


def _branch(function: str, where: str, text: str | None = None) -> branches.Branch:
    (found,) = [b for b in branches.handler_branches() if b.function == function and b.where.endswith(where)
                and text in (None, b.text)]
    return found


def test_a_handler_has_a_branch_per_block_with_its_clause():
    """Handle Enterprise Update has its body and the rename's if-body as branches, both under clause 3.1.7.2.10."""
    found = _enterprise_update_branches()
    assert [b.text for b in found] == ["need_flush = False", "partition.authority_name = new_pec_name  # type: ignore[assignment]"]
    assert {b.section for b in found} == {"3.1.7.2.10"}


def test_reach_records_only_the_branches_that_ran():
    """An enterprise update naming the same PEC runs the body but not the rename branch."""
    qm = QueueManager("PEC0", Guid.from_name("qm:PEC0"), Guid.from_name("site:site0"), Role.PEC, "PEC0")
    partition = DirectoryPartition(PEC_PARTITION_ID, "PEC0")
    with branches.Reach() as reach:
        handle_enterprise_update(qm, Context("PEC0"), partition, ())
    body, rename = _enterprise_update_branches()
    assert reach.reached([body, rename]) == {body}


@functools.cache
def _clarified_vectors() -> frozenset[branches.Branch]:
    return frozenset(branches.vector_reach(Mode.CLARIFIED))


def test_summary_counts_clauses_and_lists_what_the_vectors_reach_and_a_run_missed():
    """The summary counts branches and clauses, and names each vector branch missing from the reached set,
    the unreachable ones apart with their reason."""
    vectors = set(_clarified_vectors())
    assert len(vectors) > 300
    out = branches.summary(set(), vectors)
    assert out["branches_reached"] == 0 and out["clauses"] >= 44
    assert out["vector_branches_missed"] + out["vector_branches_unreachable"] == len(vectors)
    assert out["vector_branches_missed"] == len(out["missed"])
    clarified = [u for u in branches.UNREACHABLE if "clarified" in u.modes]
    assert out["vector_branches_unreachable"] == len(out["unreachable"]) == len(clarified)
    assert all(": unreachable: " in line for line in out["unreachable"])
    everything = branches.summary(vectors, vectors)
    assert everything["missed"] == [] and everything["unreachable"] == []
    assert everything["reached_unreachable"]  # the vectors build states no run can reach: they are reported


def test_each_unreachable_entry_names_one_branch_the_vectors_reach():
    """An UNREACHABLE entry that matched no branch (the code moved) or one the vectors never reach would say nothing."""
    every = branches.handler_branches()
    vectors = _clarified_vectors()
    for entry in branches.UNREACHABLE:
        for mode in entry.modes:
            matched = [b for b in every if entry.matches(b, mode)]
            assert len(matched) == 1, (entry, mode)
            if mode == "clarified":
                assert matched[0] in vectors, entry


def test_bench_stateful_reports_the_handler_lines_its_runs_reached():
    """bench/stateful.py's run (with branch tracing) returns the handler lines reached; they cover the initialization clauses."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "bench" / "stateful.py"
    spec = importlib.util.spec_from_file_location("bench_stateful", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    out = bench.run(20, Mode.CLARIFIED, 10, 2, "ci", seed=1, trace_branches=True)
    reached = {b for b in branches.handler_branches() if (b.module, b.line) in set(out["reached_lines"])}
    assert {"3.3.3", "3.3.6.1", "3.1.7.2.2"} <= {b.section for b in reached}
    untraced = bench.run(20, Mode.CLARIFIED, 10, 2, "ci", seed=1)
    assert untraced["reached_lines"] == []


def test_the_purge_round_takes_a_rebuilt_bsc_through_sync0():
    """The explorer's purge round makes its site's authority purge and the rebuilt BSC go through AlreadyPurged and sync0."""
    machine = _machine(pscs=1, bscs=[1, 0, 0])
    with _reaching(machine) as reach:
        machine.purge_round(0, "rebuilt")
    sections = {b.section for b in reach.reached(branches.handler_branches())}
    assert {"3.2.7.7", "3.3.7.7", "3.3.7.10", "3.3.7.11"} <= sections


#: each purge round variant -> the branch it is there for: (function, the tail of the branch's ``where``)
VARIANT_BRANCHES = {
    "duplicate AlreadyPurged": ("receive_already_purged", "if partition.purged_seq_number >= message.purged_seq_number:"),
    "cut off during the bursts": ("start_sync0_state", "if deleted.partition_id == partition.partition_id:"),
    "first replies lost": ("receive_change_propagation", "if partition is None:"),
    "sync0 reply lost": ("receive_change_propagation", "if partition.purge_state is PurgeState.SYNC0:"),
    "link cut": ("receive_request_nack", "if message_class != NACK_BAD_SIGNATURE:"),
    "more changes": ("purge_deleted_objects", "if partition.allowed_purge_seq_number < partition.purged_seq_number:"),
    "enterprise": ("reply_purged_seq_number", "if partition.allowed_purge_seq_number > partition.purged_seq_number:"),
}


@pytest.mark.parametrize("variant", [pytest.param(v, marks=() if v == "link cut" else pytest.mark.slow)
                                     for v in VARIANT_BRANCHES])
def test_each_purge_round_variant_reaches_the_branch_it_is_for(variant):
    """A purge round variant reaches its rare branch (a guard of 3.3.7.7, 3.3.7.10, 3.2.7.1, 3.3.7.9 or 3.1.7.2.9), and the run converges."""
    function, where = VARIANT_BRANCHES[variant]
    wanted = _branch(function, where)
    machine = _machine(pscs=2, bscs=[1, 1, 0])
    with _reaching(machine) as reach:
        machine.purge_round(1, variant)
    assert wanted in reach.reached([wanted])


@pytest.mark.slow
def test_the_enterprise_purge_round_finds_e314_with_the_replica_stamping_its_own_purged_seq_number(monkeypatch):
    """With a PSC stamping its replies with its own PurgedSeqNumber (the text), the enterprise purge round's rebuilt BSC never converges."""
    from mqspec.proofs.explore.minimize import violations
    from mqspec.refimpl import mqdsrp_server

    monkeypatch.setattr(mqdsrp_server, "reply_purged_seq_number", lambda qm, ctx, partition: partition.purged_seq_number)
    machine = _machine(pscs=2, bscs=[1, 1, 0])
    machine.purge_round(1, "enterprise")
    found = violations(list(machine.driver.inputs))
    assert any(p.startswith("BSC11: partition 00000000-0000-0000-0000-000000000000 at ")
               for p in found["replicas_converge_at_quiescence"])


def test_the_first_purge_round_is_due_at_once_and_sites_without_a_psc_wait_for_it():
    """A run's first purge round may come right after the build, and a site whose PSC is never installed (a PSC
    neighbor that never acknowledges, so no authority would purge: 3.1.7.2.9) is created only after it."""
    machine = _machine(pscs=2, bscs=[1, 1, 0])
    assert machine.steps_since_purge_round >= machine.PURGE_EVERY
    before = machine._request_input("create site", "PEC0", 0, 1)
    assert before["type"] == "enterprise" and before["operation"] == "update"
    machine.purge_round(1, "rebuilt")
    assert machine.world.nodes["PSC1"].my_site_partition.purged_seq_number.value > 0
    after = machine._request_input("create site", "PEC0", 0, 1)
    assert after["type"] == "site" and after["operation"] == "create" and after["properties"]["PROPID_S_PSC"].startswith("X")


def test_a_machine_of_a_new_site_created_at_once_at_another_psc_ends_unknown_source():
    """The explorer's add_site also creates a machine of the new site at another PSC before it knows the partition (3.3.7.1's MQDS_UNKNOWN_SOURCE)."""
    unknown = _branch("process_change_request", "if partition is None:")
    machine = _machine(pscs=2, bscs=[0, 0, 0])
    with _reaching(machine) as reach:
        machine.add_site()
    assert reach.reached([unknown]) == {unknown}
    assert machine.driver.inputs[2]["at"] == "PSC1" and machine.driver.inputs[2]["site"] == "site2"


def test_late_messages_and_an_overtaken_header_reach_the_guards_of_3_2_7_1_3_3_7_5_and_3_3_7_7():
    """After a purge round, late messages about the purged partition and a header overtaken by a newer one reach
    3.2.7.1's two header guards, 3.3.7.5's stale-reply return and empty-reply move, and 3.3.7.7's caught-up return."""
    wanted = {
        _branch("receive_change_propagation", "if seq_number.purged_seq_number < partition.purged_seq_number:"),
        _branch("receive_change_propagation", "elif seq_number.last_seq_number < partition.change_missing_window:"),
        _branch("receive_sync_reply", "if message.purged_seq_number < partition.purged_seq_number:"),
        _branch("receive_sync_reply", "if ctx.literal or to_seq_number > partition.last_seq_number:"),
        _branch("receive_already_purged", "if partition.last_seq_number >= message.purged_seq_number:"),
    }
    machine = _machine(pscs=2, bscs=[1, 1, 0])
    machine.purge_round(1, "rebuilt")
    machine.settle()
    with _reaching(machine) as reach:
        machine.late_messages(0)
        for which in range(3):
            machine.overtaken_header(which)
    assert reach.reached(wanted) == wanted


@pytest.mark.slow
def test_a_new_site_in_sync0_is_asked_by_its_new_bsc():
    """A site added after another PSC purged its partition: its PSC is in sync0 when its new BSC asks (3.2.7.3's return)."""
    wanted = _branch("receive_sync_request", "if partition.purge_state is not PurgeState.NORMAL:")
    machine = _machine(pscs=2, bscs=[1, 1, 0])
    machine.purge_round(1, "rebuilt")
    machine.steps_since_topology = machine.TOPOLOGY_EVERY
    with _reaching(machine) as reach:
        machine.new_site_in_sync0()
    assert reach.reached([wanted]) == {wanted}


@pytest.mark.slow
def test_a_reused_queue_name_makes_the_cut_off_bscs_sync0_delete_the_marked_namesake():
    """In the cut-off purge round a queue's path name is reused while the BSC is away: its sync0 reply's create
    meets the old object the reset marked, which E-317 deletes first (3.1.7.2.8)."""
    wanted = _branch("handle_directory_sync", "if (holder is not None and holder.partition_id == partition.partition_id")
    machine = _machine(pscs=2, bscs=[1, 1, 0])
    with _reaching(machine) as reach:
        machine.purge_round(1, "cut off during the bursts")
    assert reach.reached([wanted]) == {wanted}


@pytest.mark.slow
def test_a_single_site_enterprise_purges_with_no_psc_neighbor():
    """In an enterprise of one site a purge round may come at once, and the PEC purges with no PSC neighbor (E-132)."""
    wanted = _branch("purge_deleted_objects", "if not acks:", "min_acked = partition.last_seq_number")
    machine = _machine(pscs=1, bscs=[0, 0, 0])
    assert machine.steps_since_purge_round >= machine.PURGE_EVERY
    with _reaching(machine) as reach:
        machine.purge_round(0, "enterprise")
    assert wanted in reach.reached([wanted])


@pytest.mark.slow
def test_a_just_added_sites_psc_moved_at_once_takes_its_site_partition():
    """A new site's PSC moved before it got its site partition: the new machine, a replica, is named its PSC (E-315)."""
    wanted = {b for b in branches.handler_branches() if b.function == "take_site_authority"}
    machine = _machine(pscs=1, bscs=[1, 0, 0])
    machine.steps_since_topology = machine.TOPOLOGY_EVERY
    with _reaching(machine) as reach:
        machine.new_site_moved_at_once()
    assert len(wanted) == 3 and reach.reached(wanted) == wanted


@pytest.mark.slow
def test_a_pending_change_older_than_the_bscs_new_purge_point_is_removed():
    """A BSC's change queued out of order while its PSC purges further is removed once the BSC purges past it (3.1.7.2.4)."""
    wanted = _branch("check_pending_changes", "if pending.purged_seq_number < partition.purged_seq_number:")
    machine = _machine(pscs=2, bscs=[1, 1, 0])
    machine.purge_round(1, "rebuilt")
    machine.settle()
    machine.steps_since_pending = machine.PENDING_EVERY
    with _reaching(machine) as reach:
        machine.pending_across_a_purge(1)
    assert reach.reached([wanted]) == {wanted}
