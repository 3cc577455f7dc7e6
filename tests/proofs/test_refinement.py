"""The refinement check (proofs/refinement): every handler run of a World against the model's transition.

Cheap runs only (a few scenario files, a second or two each): the campaign itself runs in
`mqspec prove` and in the slow tier (tests/proofs/test_refinement_campaign.py).
"""

import sys
import time
from importlib import resources
from pathlib import Path

import pytest
from mqspec.proofs.refinement import campaign, check, enterprise, exemptions, limit, mqcn, mqsd
from mqspec.proofs.scenario_watch import InvariantWatch
from mqspec.refimpl import mqcn_dmpr, mqcn_server, mqdsrp_client, mqdsrp_common, mqdsrp_objects, mqdsrp_server
from mqspec.refimpl import mqsd_client, mqsd_server
from mqspec.refimpl import scenario_run
from mqspec.refimpl.effects import Mode
from mqspec.refimpl.scenario import load
from mqspec.vectors import mutation as vm

PURGE_SCENARIO = ("mqspec.proofs.refinement.scenarios", "purge-waits-for-the-slowest-psc.yaml")
SYNC_AT_PURGE_POINT = ("mqspec.proofs.refinement.scenarios", "sync-from-the-purge-point.yaml")
BSC_CHANGE_REQUEST = ("mqspec.proofs.refinement.scenarios", "bsc-forwards-a-change-request-for-its-site.yaml")
NACKED_REQUEST = ("mqspec.proofs.refinement.scenarios", "change-request-nacked-after-its-wait.yaml")
STRAY_PSC_ACKS = ("mqspec.proofs.refinement.scenarios", "psc-acks-the-handler-records-nothing-of.yaml")
PEC_WITHOUT_SITE = ("mqspec.proofs.refinement.scenarios", "pec-acked-with-no-site-partition.yaml")
LITERAL_BSC = ("mqspec.proofs.refinement.scenarios", "literal-bsc-with-a-psc-neighbor.yaml")
EDGE_REQUESTS = ("mqspec.proofs.refinement.scenarios", "a-bsc-acked-and-a-short-sync0-request.yaml")
TAMPERED_REPLY = ("mqspec.proofs.refinement.scenarios", "a-tampered-change-reply-is-sent-again.yaml")
TWO_WAITS = ("mqspec.proofs.refinement.scenarios", "two-forwarded-requests-with-one-identifier.yaml")
MACHINE_UPDATE = ("mqspec.proofs.refinement.scenarios", "a-machine-update-makes-and-unmakes-a-bsc.yaml")
EMPTY_MESSAGE = ("mqspec.proofs.refinement.scenarios", "an-empty-replication-message.yaml")
SYNC_REPLIES = ("mqspec.proofs.refinement.scenarios", "sync-replies-after-a-purge.yaml")
NO_MACHINE = ("mqspec.proofs.refinement.scenarios", "a-change-request-to-no-machine.yaml")
NULL_SITE = ("mqspec.proofs.refinement.scenarios", "a-site-with-the-enterprise-partitions-id.yaml")
RESTARTED_BSC = ("mqspec.proofs.refinement.scenarios", "a-restarted-bsc-sees-a-new-bsc.yaml")
MOVED_PSC = ("mqspec.proofs.refinement.scenarios", "a-psc-hears-of-a-moved-psc-first-from-its-header.yaml")
SITE_AFTER_PURGE = ("mqspec.proofs.refinement.scenarios", "a-site-added-after-a-purge.yaml")
INSIDE_WINDOW = ("mqspec.proofs.refinement.scenarios", "a-change-inside-the-window-asked-for.yaml")
EMPTY_LINK = ("mqspec.proofs.refinement.scenarios", "a-sync-of-a-routing-link-with-no-properties.yaml")
SITE_BY_REQUEST = ("mqspec.scenarios.counterexamples.literal", "partition_held_once_per_server.yaml")
OWN_CHANGE = ("mqspec.proofs.refinement.scenarios", "an-authority-receives-a-change-of-its-own-partition.yaml")
NULL_SITE_PARTITION = ("mqspec.proofs.refinement.scenarios", "a-pec-whose-site-partition-has-the-enterprise-id.yaml")


def _run(package, name, mode=Mode.CLARIFIED):
    """Run one scenario file with the refinement check on: (the run, the watch, the check)."""
    watch = InvariantWatch(names=("handlers_refine_model",), refine=True)
    result = scenario_run.run(load(resources.files(package) / name), mode=mode, trace=watch.record,
                              attach=watch.attach, skip_idle_timers=True)
    watch.finish()
    return result, watch, watch.ghost.refinement


@pytest.mark.parametrize("mode,package,name", [
    (Mode.CLARIFIED, "mqspec.scenarios", "4.2-adding-a-bsc.yaml"),
    (Mode.CLARIFIED, "mqspec.scenarios", "4.4-deleting-a-queue.yaml"),
    (Mode.LITERAL, "mqspec.scenarios.counterexamples", "e264-lost-full-sync-reply-is-never-asked-again.yaml")])
def test_a_scenario_refines_the_model(mode, package, name):
    """Every handler run of a scenario does what the model's transition does (literal mode: a short one)."""
    result, watch, refinement = _run(package, name, mode)
    assert mode is Mode.LITERAL or not result.failures  # the literal reading may miss an expectation
    assert watch.violations == []
    # the check ran on the handlers the scenario exercises (not on nothing)
    assert {"initialization", "directory_client_request", "receive_sync_request", "receive_sync_reply"} \
        <= set(refinement.checked)


def test_the_campaigns_purge_scenario_reaches_an_authority_waiting_for_its_slowest_psc():
    """The campaign's own scenario keeps the tombstone for the unacknowledged PSC, purges after, and refines."""
    result, watch, refinement = _run(*PURGE_SCENARIO)
    assert not result.failures
    assert watch.violations == []
    assert refinement.checked["receive_psc_ack"] > 0


def _mutant(fn, before, after):
    """The engine's mutant of ``fn`` whose code reads ``before`` and ``after`` (bench/proof_mutation.py's)."""
    every = vm.mutants_of(fn, (*vm.OPERATORS, *vm.EXTRA_OPERATORS))
    found = [m for m in every if before in m.name and after in m.name]
    if len(found) > 1:  # the same change at two sites: the first is named without its " #n"
        found = [m for m in found if m.name.endswith(after)]
    assert len(found) == 1, [m.name for m in found]
    return vm.mutant_code(fn, found[0])


def test_a_purge_that_takes_the_largest_psc_ack_departs_from_the_model():
    """Purge Deleted Objects taking the largest PSC ack (min swapped for max) is a departure naming the handler."""
    code = _mutant(mqdsrp_objects.purge_deleted_objects, "min(acks)", "max(")
    with vm.installed(mqdsrp_objects.purge_deleted_objects, code):
        _, watch, _ = _run(*PURGE_SCENARIO)
    assert [v["invariant"] for v in watch.violations] == ["handlers_refine_model"]
    text = "\n".join(watch.violations[0]["problems"])
    assert "departs from the model" in text
    assert "directory_client_request (3.1.7.1)" in text  # the event's handler, which raised the purge


@pytest.mark.parametrize("scenario,handler,before,after,section", [
    # the two mutants the campaign's random runs never told apart from the reference
    (SYNC_AT_PURGE_POINT, mqdsrp_server.receive_sync_request, "shift: from_seq < partition.purged_seq_number", "<=",
     "receive_sync_request (3.2.7.3)"),
    (BSC_CHANGE_REQUEST, mqdsrp_server._my_partition_for_request, "drop-operand: qm.is_psc", "(dropped)",
     "receive_change_request (3.2.7.2)"),
    # a SYNC request at the authority (E-164), which Handle Directory Sync applies without replicating (3.1.7.2.8)
    (BSC_CHANGE_REQUEST, mqdsrp_server.receive_change_request, "drop-then: if change.command is Command.SYNC", "pass",
     "receive_change_request (3.2.7.2)"),
    # a wait found by RequestIdentifier alone (E-125's literal reading) in clarified mode, two ways
    (TWO_WAITS, mqdsrp_client._find_pending, "negate: if ctx.clarified", "if not ctx.clarified",
     "receive_change_reply (3.3.7.6)"),
    (TWO_WAITS, mqdsrp_client._find_pending, "drop-then: if ctx.clarified", "pass", "receive_change_reply (3.3.7.6)"),
    # a machine of the PSC's site made a BSC by a directory client, then not (no other run updates PROPID_QM_SERVICE)
    (MACHINE_UPDATE, mqdsrp_objects.handle_machine_update, "drop-else: if qm_service == SERVICE_BSC", "(no else)",
     "directory_client_request (3.1.7.1)"),
    # ... and a BSC created through a change request, which runs Handle Directory Create twice at the PSC (E-104)
    (MACHINE_UPDATE, mqdsrp_objects.handle_directory_create, "negate-operand: ctx.literal [or operand 1]",
     "not (ctx.literal)", "receive_change_request (3.2.7.2)"),
    # ... deleted by its GUID (its BSC neighbor goes)
    (MACHINE_UPDATE, mqdsrp_objects.handle_directory_delete, "drop-then: if qm.is_psc and object_type", "pass",
     "directory_client_request (3.1.7.1)"),
    (MACHINE_UPDATE, mqdsrp_objects.handle_directory_delete, "drop-operand: object_type == ObjectType.MQDS_MACHINE",
     "(dropped)", "receive_change_propagation (3.2.7.1)"),
    # a queue whose GUID is GUID_NULL, the enterprise partition's PartitionID, deleted at the PEC
    (NULL_SITE, mqdsrp_objects.handle_directory_delete, "drop-operand: object_type == ObjectType.MQDS_SITE",
     "(dropped)", "directory_client_request (3.1.7.1)"),
    # a replica in SYNC0 told COMPLETING (no server of the campaign's runs says it)
    (SYNC_REPLIES, mqdsrp_client.receive_sync_reply, "drop-then: if sync0_state == CompleteSync0.COMPLETING", "pass",
     "receive_sync_reply (3.3.7.5)"),
    # a late Sync Reply older than the replica's purge (no server of the campaign's runs delays one)
    (SYNC_REPLIES, mqdsrp_client.receive_sync_reply, "drop-then: if message.purged_seq_number <", "pass",
     "receive_sync_reply (3.3.7.5)"),
    # ... and a late propagation older than it, its change and its SeqNumberHeader, while the replica's sync0
    # request is unanswered
    (SYNC_REPLIES, mqdsrp_server.receive_change_propagation, "drop-then: if seq_number.purged_seq_number <", "pass",
     "receive_change_propagation (3.2.7.1)"),
    (SYNC_REPLIES, mqdsrp_common.handle_directory_change,
     "drop-operand: change.purged_seq_number < partition.purged_seq_number", "(dropped)",
     "receive_change_propagation (3.2.7.1)"),
    # the end of sync0 in one partition while another is in SYNC0 (its tombstone stays), and in the other with a
    # tombstone the answer resent and one it did not
    (SYNC_REPLIES, mqdsrp_client.complete_sync0_state, "drop-operand: d.partition_id == partition.partition_id",
     "(dropped)", "receive_sync_reply (3.3.7.5)"),
    (SYNC_REPLIES, mqdsrp_client.complete_sync0_state, "drop-operand: d.seq_number == MIN_SEQ_NUMBER", "(dropped)",
     "receive_sync_reply (3.3.7.5)"),
    (SYNC_REPLIES, mqdsrp_client.complete_sync0_state, "negate-operand: d.partition_id == partition.partition_id",
     "not (", "receive_sync_reply (3.3.7.5)"),
    # ... where the enterprise partition's sync0 answer, applied with AllowedPurgeSeqNumber above the PurgedSeqNumber
    # sync0 started from, raises Purge Deleted Objects in SYNC0
    (SYNC_REPLIES, mqdsrp_objects.purge_deleted_objects, "drop-operand: partition.purge_state is not PurgeState.NORMAL",
     "(dropped)", "receive_sync_reply (3.3.7.5)"),
    # a change request nacked with NackBadDestQueue (0x8000), the first class of 3.1.5.1's Nack range
    (NO_MACHINE, mqdsrp_common.receiving_replication_messages, "shift: NACK_FIRST <= message_class", "(operator 0)",
     "(3.3.7.8)"),
    # a BSC with MySitePartition (after a restart) applies the create of a new BSC's machine object
    (RESTARTED_BSC, mqdsrp_objects.handle_directory_create, "drop-operand: qm.is_psc [and operand 0]", "(dropped)",
     "receive_change_propagation (3.2.7.1)"),
    # a PSC, and a BSC, that hear of a site's new PSC first from that PSC's SeqNumberHeader
    (MOVED_PSC, mqdsrp_server.receive_change_propagation, "drop-then: if qm.is_psc", "pass",
     "receive_change_propagation (3.2.7.1)"),
    (MOVED_PSC, mqdsrp_server.receive_change_propagation, "drop-else: if qm.is_psc", "(no else)",
     "receive_change_propagation (3.2.7.1)"),
    # a PSC in sync0 (a site added after the PEC purged): no ack below PurgedSeqNumber, an ack at it
    (SITE_AFTER_PURGE, mqdsrp_common.handle_in_sync_change,
     "negate-operand: partition.purge_state is PurgeState.NORMAL", "not (", "receive_sync_reply (3.3.7.5)"),
    (SITE_AFTER_PURGE, mqdsrp_common.handle_in_sync_change, "shift: partition.last_seq_number >= partition.purged",
     "(operator 0)", "receive_sync_reply (3.3.7.5)"),
    # an out-of-order change inside the window asked for, with nothing pending (not asked again)
    (INSIDE_WINDOW, mqdsrp_common.handle_directory_change,
     "drop-operand: partition.change_missing_window == MAX_SEQ_NUMBER", "(dropped)",
     "receive_change_propagation (3.2.7.1)"),
    # a sync change of an object holding none of its DirectoryChangePropID columns (E-124's first property)
    (EMPTY_LINK, mqdsrp_server.lookup_directory_objects, "drop-then: if not properties", "pass",
     "receive_sync_request (3.2.7.3)"),
], ids=["already-purged-guard-off-by-one", "bsc-applies-change-requests-for-its-site",
        "sync-change-request-at-the-authority",
        "wait-found-by-identifier-alone", "wait-found-by-identifier-alone-dropped-branch", "machine-no-longer-a-bsc",
        "bsc-created-by-request-added-twice", "bsc-machine-deleted", "cn-named-like-a-bsc-deleted",
        "null-guid-queue-deleted",
        "sync0-reply-completing", "stale-sync-reply", "stale-header", "stale-change",
        "sync0-ends-deleting-other-partitions-tombstones",
        "sync0-ends-deleting-resent-tombstones", "sync0-ends-keeping-unsent-tombstones", "purge-in-sync0",
        "nack-range-without-its-first-class", "bsc-adds-a-bsc-neighbor",
        "psc-takes-the-authority-from-a-header", "bsc-takes-its-psc-from-a-header", "psc-acks-in-sync0",
        "psc-ack-at-the-purge-point", "change-inside-the-window", "sync-of-an-object-with-no-change-property"])
def test_the_campaigns_boundary_scenarios_refine_and_catch_their_mutant(scenario, handler, before, after, section):
    """The campaign's scenario refines the model with its expectations met, and the one-line mutant of the guard it
    reaches (a sync request from exactly the PurgedSeqNumber; a change request for its site at a BSC; a SYNC change
    request at the authority; two waits
    with one RequestIdentifier, answered in the other order; a machine update that ends a BSC; a BSC created
    through a change request, then deleted; a CN named like it; a queue whose GUID is the enterprise partition's,
    deleted; a sync0 reply saying COMPLETING; a Sync Reply, a change and a SeqNumberHeader whose PurgedSeqNumber
    is below the replica's; the end of sync0 in one partition while another is in SYNC0, and with a tombstone the answer
    resent and with one it did not; a purge while a sync0 answer is applied; a change request sent to no machine;
    a restarted BSC told of a new BSC; a PSC and a BSC told of a site's new PSC by its header; a PSC in sync0
    applying changes below and at its PurgedSeqNumber; an out-of-order change inside the window asked for; a
    routing link with none of its change properties, synced)
    departs from the model, naming the handler."""
    result, watch, _ = _run(*scenario)
    assert not result.failures and watch.violations == []
    with vm.installed(handler, _mutant(handler, before, after)):
        _, watch, _ = _run(*scenario)
    assert [v["invariant"] for v in watch.violations] == ["handlers_refine_model"]
    assert section in "\n".join(watch.violations[0]["problems"])


@pytest.mark.parametrize("boundary,handler,before,after,departs,mode", [
    (mqsd.BOUNDARY[0], mqsd_server.receive_topology_client_request,
     "shift: 1 <= len(networks) <= MAX_NETWORKS", "(operator 1)", "receive_datagram", "literal"),
    (mqsd.BOUNDARY[1], mqsd_client.no_server_response,
     "drop-operand: client.last_topology_server_reply is None [and operand 0]", "(dropped)", "no_server_response",
     "clarified"),
    (mqsd.BOUNDARY[2], mqsd_client.get_directory_server_list,
     "drop-then: if ctx.clarified and client.last_successful_network_address", "pass", "get_directory_server_list",
     "clarified"),
], ids=["server-with-exactly-MAX_NETWORKS-networks", "expiry-after-a-local-site-reply-on-the-only-network",
        "last-successful-network-gone"])
def test_the_mqsd_campaigns_boundary_runs_refine_and_catch_their_mutant(boundary, handler, before, after, departs,
                                                                        mode):
    """Each fixed run of the MS-MQSD campaign refines the model in both modes, and the one-line mutant of the guard
    it reaches (a server answering only fewer than MAX_NETWORKS networks; No Server Response failing whenever
    TopologyServerReplyReceived is FALSE, though a local-site reply is kept; a new discovery that no longer
    records E-206, the only difference being the register entry, which the check compares) departs there."""
    assert [mqsd.boundary_departures(boundary.name, m) for m in ("clarified", "literal")] == [[], []]
    with vm.installed(handler, _mutant(handler, before, after)):
        departures = mqsd.boundary_departures(boundary.name, mode)
    assert departures and {name for name, _, _ in departures} == {departs}


@pytest.mark.parametrize("mode", [Mode.CLARIFIED, Mode.LITERAL], ids=["clarified", "literal"])
def test_the_campaigns_nack_scenario_reaches_receive_change_request_nack_with_and_without_a_wait(mode):
    """A change request that cannot reach the next hop comes back in a Nack (3.3.7.8), in both modes. In clarified
    mode once after its wait expired (nothing left to resume) and once resuming the wait with
    MQDS_OWNER_NOT_REACHED, so each mutant of the handler's guard fails the run (in literal mode both Nacks
    resume a wait: the file shows the handler reached there, no more)."""
    result, watch, refinement = _run(*NACKED_REQUEST, mode=mode)
    assert watch.violations == [] and refinement.checked["receive_change_request_nack"] == 2
    if mode is Mode.LITERAL:
        return
    assert not result.failures
    assert refinement.checked["change_request_wait_expired"] == 1
    handler = mqdsrp_client.receive_change_request_nack
    mutants = vm.mutants_of(handler, (*vm.OPERATORS, *vm.EXTRA_OPERATORS))
    assert len(mutants) == 2
    for mutant in mutants:
        with vm.installed(handler, vm.mutant_code(handler, mutant)):
            try:
                _, watch, _ = _run(*NACKED_REQUEST)
            except AttributeError:  # the handler resumes a wait it did not find: `mqspec prove` fails
                continue
        assert [v["invariant"] for v in watch.violations] == ["handlers_refine_model"], mutant.name


def test_the_campaigns_stray_psc_acks_refine_and_the_neighbor_guard_cannot_be_dropped():
    """PSC acks no rule of Receive PSC Ack records (at a BSC, from a server that is no PSC neighbor, for the
    enterprise partition at a PSC) refine the model; without the guard for an unknown neighbor (negated or
    its return dropped) the handler fails on the PEC's ack from NOBODY."""
    result, watch, refinement = _run(*STRAY_PSC_ACKS)
    assert not result.failures and watch.violations == [] and refinement.checked["receive_psc_ack"] == 4
    handler = mqdsrp_server.receive_psc_ack
    for before, after in (("negate: if neighbor is None", "if not neighbor"),
                          ("drop-then: if neighbor is None", "pass")):
        with vm.installed(handler, _mutant(handler, before, after)), pytest.raises(AttributeError):
            _run(*STRAY_PSC_ACKS)


@pytest.mark.parametrize("handler,before,after,section", [
    (mqdsrp_server.reply_purged_seq_number, "drop-then: if ctx.literal or qm.is_authority_of(partition)", "pass",
     "receive_sync_request (3.2.7.3)"),
    (mqdsrp_server.reply_purged_seq_number, "drop-operand: ctx.literal", "(dropped)", "receive_sync_request (3.2.7.3)"),
    (mqdsrp_server.receive_psc_ack, "drop-then: if not qm.is_psc", "pass", "receive_psc_ack (3.2.7.4)"),
    (mqdsrp_client.receive_sync_reply, "drop-operand: ctx.literal", "(dropped)", "receive_sync_reply (3.3.7.5)"),
    (mqdsrp_objects.handle_directory_create, "drop-operand: ctx.literal [or operand 1]", "(dropped)",
     "receive_change_request (3.2.7.2)"),
    (mqdsrp_objects.handle_directory_delete, "drop-operand: qm.is_pec or ctx.clarified [and operand 1]", "(dropped)",
     "receive_change_propagation (3.2.7.1)"),
    (mqdsrp_objects.handle_directory_delete, "drop-operand: ctx.clarified [and operand 2]", "(dropped)",
     "receive_change_propagation (3.2.7.1)"),
    (mqdsrp_server.receive_change_propagation, "shift: seq_number.last_seq_number < partition.change_missing_window",
     "(operator 0)", "receive_change_propagation (3.2.7.1)"),
    (mqdsrp_server.receive_sync_request, "drop-operand: ctx.clarified [and operand 0]", "(dropped)",
     "receive_sync_request (3.2.7.3)"),
    (mqdsrp_objects.handle_site_update, "drop-operand: ctx.clarified [and operand 0]", "(dropped) #1",
     "receive_change_propagation (3.2.7.1)"),
    (mqdsrp_objects.handle_site_update, "drop-then: if partition_id is None ->", "pass",
     "receive_sync_reply (3.3.7.5)"),
    (mqdsrp_objects.handle_site_update, "drop-operand: ctx.literal [or operand 1]", "(dropped)",
     "receive_sync_reply (3.3.7.5)"),
    (mqdsrp_objects.handle_directory_sync, "drop-then: if object_type == ObjectType.MQDS_ENTERPRISE", "pass",
     "receive_sync_reply (3.3.7.5)"),
    (mqdsrp_objects.handle_directory_sync, "drop-then: if qm.is_psc and object_type == ObjectType.MQDS_MACHINE",
     "pass", "receive_sync_reply (3.3.7.5)"),
    (mqdsrp_objects.handle_directory_sync, "drop-operand: ctx.clarified [and operand 0]", "(dropped)",
     "receive_sync_reply (3.3.7.5)"),
], ids=["reply-purged-literal-branch-dropped", "reply-purged-literal-operand-dropped", "psc-ack-at-a-bsc-recorded",
        "empty-reply-moves-last-seq-back-literally", "bsc-neighbor-added-once-literally",
        "site-undone-at-a-bsc-literally", "unknown-object-delete-applied-literally", "header-at-the-window-literally",
        "every-tombstone-in-a-reply-literally", "my-psc-name-follows-literally",
        "site-sync-without-an-identifier-literally", "no-psc-neighbor-for-a-synced-site-literally",
        "synced-enterprise-object-names-another-pec", "synced-machine-of-the-pscs-own-site",
        "marked-namesake-deleted-literally"])
def test_a_literal_bsc_with_a_psc_neighbor_refines_and_catches_the_literal_only_mutants(handler, before, after,
                                                                                       section):
    """The literal BSC that holds PEC0 as a PSC neighbor (E-106) and an AllowedPurgeSeqNumber above its PurgedSeqNumber
    refines the model in both modes with its expectations met; Receive PSC Ack runs there in literal mode (the
    default profile's only literal run of it). Fifteen mutants, thirteen of which differ only in literal mode,
    depart there: a non-authority's reply stamped with AllowedPurgeSeqNumber (E-314 taken in literal mode, two
    ways), a BSC recording a PSC ack, an empty reply answering the window that no longer moves LastSeqNumber back
    (E-166 taken in literal mode), a BSC created through a request added as a neighbor once (E-104), a deleted site
    undone at a BSC (E-318), a replicated delete of a site the BSC never had counted as applied (E-261 taken in
    literal mode), a header at the window that no longer asks again, a Sync Reply without the other partitions'
    tombstones (E-118 taken in literal mode), a BSC's MyPSCName following its site's new PSC (E-312 taken in literal
    mode), a site's partition made with no identifier (from a sync carrying none), no PSC neighbor for a site made
    by a sync at a BSC (E-106 taken in literal mode), and a marked namesake deleted before a sync0 create (E-317
    taken in literal mode); and, in both modes, a synced enterprise object naming another PEC, and a synced machine
    of PEC0's own site that is a BSC, that no longer reach Handle Enterprise Update and Handle Machine Update."""
    for mode in (Mode.CLARIFIED, Mode.LITERAL):
        result, watch, refinement = _run(*LITERAL_BSC, mode=mode)
        assert not result.failures and watch.violations == [] and refinement.checked["receive_psc_ack"] == 1
    assert campaign.PROFILES["default"]["scenarios"]["literal"] >= {LITERAL_BSC[1]}
    with vm.installed(handler, _mutant(handler, before, after)):
        # as `mqspec prove` runs it: to the first departure (a mutant's state past it can be one no check reads,
        # a partition with no PartitionID)
        failures, tally = _campaign_file(LITERAL_BSC[1], Mode.LITERAL, stop=True)
    assert failures == [LITERAL_BSC[1]]
    assert f"{tally.departures[0].handler} ({tally.departures[0].section})" == section


def test_the_literal_bsc_purges_and_a_purge_without_its_literal_buffer_departs():
    """Literal BSC01 applies a change 256 past its last purge (step 8) and raises Purge Deleted Objects, the only
    literal run that does (its buffer wraps, E-130). With the literal reading's buffer step dropped the handler
    raises there: the campaign records a departure of receive_change_propagation (3.2.7.1) at BSC01."""
    handler = mqdsrp_objects.purge_deleted_objects
    with vm.installed(handler, _mutant(handler, "drop-else: if ctx.clarified", "(no else)")):
        failures, tally = _campaign_file(LITERAL_BSC[1], Mode.LITERAL)
    assert failures == [LITERAL_BSC[1]]
    [departure] = tally.departures
    assert (departure.handler, departure.section, departure.node) == ("receive_change_propagation", "3.2.7.1", "BSC01")
    assert departure.differences[0].startswith("the reference raised UnboundLocalError")


def test_a_literal_psc_named_for_its_own_site_refines_and_the_literal_reading_of_e315_is_pinned():
    """Literal PSC1, holding its own site's partition as a replica, is named its PSC: it refines the model in both
    modes (the file is one of the default profile's literal runs); with E-315's mode operand dropped, literal PSC1
    takes the authority, a departure of receive_change_propagation (3.2.7.1)."""
    name = "a-literal-psc-named-for-its-own-site.yaml"
    assert name in campaign.PROFILES["default"]["scenarios"]["literal"]
    for mode in (Mode.CLARIFIED, Mode.LITERAL):
        assert _campaign_file(name, mode)[0] == []
    handler = mqdsrp_objects.handle_site_update
    with vm.installed(handler, _mutant(handler, "drop-operand: ctx.clarified [and operand 0]", "(dropped)")):
        failures, tally = _campaign_file(name, Mode.LITERAL)
    assert failures == [name]
    assert {(d.handler, d.section, d.node) for d in tally.departures} == {("receive_change_propagation", "3.2.7.1",
                                                                           "PSC1")}


def test_every_literal_run_of_the_default_profile_is_a_campaign_file():
    """The literal files the default profile names are campaign files: a stale name would run nothing."""
    assert campaign.LITERAL_QUICK <= {path.name for path in campaign.scenario_files()}


def _campaign_file(name, mode=Mode.CLARIFIED, stop=False):
    """One of the campaign's scenario files run as the campaign runs it, under a Watch of its own (``stop``: ending
    at the first departure): the names of the files whose run departed (a handler that raises departs), and the
    Watch (its departures, and its tracer's lines)."""
    watch = campaign.Watch(campaign.Tracer(), stop=stop)
    previous, check.WATCH = check.WATCH, watch
    failures: list[str] = []
    try:
        with watch.tracer:
            campaign._scenarios(mode, failures, stop, only=frozenset({name}))
    finally:
        check.WATCH = previous
    return [Path(f).name for f in failures], watch


def test_a_pec_without_its_enterprise_partition_refines_and_a_handler_that_assumes_one_departs():
    """A site whose identifier is GUID_NULL, the enterprise partition's, is created and deleted at the PEC, which
    removes the enterprise partition (3.1.7.2.7); the PEC restarts without MyEnterprisePartition (3.1.3.1) and a
    client's create raises Propagate Directory Change there. The reference refines the model; with the test
    `qm.my_enterprise_partition is not None` dropped, the handler raises: a departure naming the client's request.
    The file is outside the enterprise check, with its reason."""
    failures, watch = _campaign_file(NULL_SITE[1])
    assert failures == [] and watch.departures == []
    assert NULL_SITE[1] in enterprise.OUT_OF_SCOPE
    handler = mqdsrp_common.propagate_directory_change
    with vm.installed(handler, _mutant(handler, "drop-operand: qm.my_enterprise_partition is not None", "(dropped)")):
        failures, watch = _campaign_file(NULL_SITE[1])
    assert len(failures) == 1 and watch.departures and "directory_client_request" in watch.departures[0].text(40)


def test_an_authority_applying_a_change_of_its_own_partition_refines_and_the_machine_test_matters():
    """E-337: PSC1 applies a peer's change 9 of its own partition and propagates it under that number, after its
    LastSeqNumber 3; the reference refines the model, whose Propagate Directory Change takes iSeqNumber. Literal PEC0,
    whose MySitePartition has the enterprise partition's ID after E-335, applies a site's update to it; without
    Handle Directory Update's machine test, Handle Machine Update's rNeedFlush (false) replaces Handle Site Update's
    and the change is not flushed to BSC01: a departure naming Receive Change Propagation. Both files are outside the
    enterprise check, with their reasons, and the second is in the default profile's literal runs."""
    assert {OWN_CHANGE[1], NULL_SITE_PARTITION[1]} <= set(enterprise.OUT_OF_SCOPE)
    assert NULL_SITE_PARTITION[1] in campaign.PROFILES["default"]["scenarios"]["literal"]
    result, watch, _ = _run(*OWN_CHANGE)
    assert not result.failures and watch.violations == []
    _refines_and_departs_literally(NULL_SITE_PARTITION, mqdsrp_objects.handle_directory_update,
                                   "drop-operand: object_type == ObjectType.MQDS_MACHINE",
                                   "receive_change_propagation (3.2.7.1)")


def _refines_and_departs_literally(scenario, handler, before, section):
    """The file refines the model in both modes, and the mutant of ``handler`` dropping ``before`` departs in literal
    mode, naming ``section``."""
    for mode in (Mode.CLARIFIED, Mode.LITERAL):
        _, watch, _ = _run(*scenario, mode=mode)
        assert watch.violations == []
    with vm.installed(handler, _mutant(handler, before, "(dropped)")):
        _, watch, _ = _run(*scenario, mode=Mode.LITERAL)
    assert [v["invariant"] for v in watch.violations] == ["handlers_refine_model"]
    assert section in "\n".join(watch.violations[0]["problems"])


def test_a_site_created_through_a_change_request_is_made_twice_literally_and_once_clarified():
    """A client at BSC11 creates a site: the PEC applies the forwarded request (Receive Change Request), whose Create
    Directory Object raises Propagate Directory Change, which runs Handle Directory Create again (E-104). Read
    literally the site's partition is made twice; clarified, once. The literal counterexample file is in the
    default profile's literal runs, and refines the model in both modes; the clarified guard taken in literal mode
    (its mode operand dropped) departs there, naming Receive Change Request."""
    assert campaign.PROFILES["default"]["scenarios"]["literal"] >= {SITE_BY_REQUEST[1]}
    _refines_and_departs_literally(SITE_BY_REQUEST, mqdsrp_objects.handle_directory_create,
                                   "drop-operand: ctx.clarified [and operand 0]", "receive_change_request (3.2.7.2)")


def _line(module, text, after=None):
    """The number of the first line of ``module`` holding ``text`` (after the line starting with ``after``)."""
    source = Path(module.__file__).read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(source, 1) if line.startswith(after)) if after else 0
    return (Path(module.__file__).name, next(i for i, line in enumerate(source, 1) if i > start and text in line))


@pytest.mark.parametrize("mode", [Mode.CLARIFIED, Mode.LITERAL], ids=["clarified", "literal"])
@pytest.mark.parametrize("name,lines", [
    # a BSC Ack sent to a BSC (Receive BSC Ack's first return); a sync0 Sync Request ending below the partition's
    # LastSeqNumber (answered COMPLETING)
    (EDGE_REQUESTS[1], [(mqdsrp_server, "return", "def receive_bsc_ack"),
                        (mqdsrp_server, "complete = CompleteSync0.COMPLETING", None)]),
    # a Change Reply failing its signature check: Receive Request Nack decodes it and sends it again
    (TAMPERED_REPLY[1], [(mqdsrp_client, "message = mqdsrp.decode(body)", "def receive_request_nack"),
                         (mqdsrp_client, 'rest = format_name.split(":", 1)[-1]', None)]),
], ids=["bsc-acked-and-short-sync0", "tampered-change-reply"])
def test_the_campaigns_edge_files_reach_branches_no_other_run_reaches(mode, name, lines):
    """Each file refines the model in both modes, is in the default profile's literal files, and the campaign's
    tracer sees its lines run: `mqspec prove`'s branch row counted none of them before these files."""
    failures, watch = _campaign_file(name, mode)
    assert failures == [] and watch.departures == []
    assert {_line(module, text, after) for module, text, after in lines} <= watch.tracer.lines
    assert campaign.PROFILES["default"]["scenarios"]["literal"] >= {name}


def test_a_handler_that_raises_departs_and_the_campaign_names_it():
    """The PEC whose own site was deleted and which restarted has no MySitePartition; PSC1's ack of the enterprise
    partition refines the model. With the operand `qm.my_site_partition is not None` dropped, Receive PSC Ack
    raises there: the campaign records a departure of receive_psc_ack (3.2.7.4) at PEC0 saying what it raised,
    counts the file as failed and goes on (a traceback would name no handler and end `mqspec prove`)."""
    result, watch, refinement = _run(*PEC_WITHOUT_SITE)
    assert not result.failures and watch.violations == [] and refinement.checked["receive_psc_ack"] == 1
    handler = mqdsrp_server.receive_psc_ack
    with vm.installed(handler, _mutant(handler, "drop-operand: qm.my_site_partition is not None", "(dropped)")):
        failures, tally = _campaign_file(PEC_WITHOUT_SITE[1])
    assert failures == [PEC_WITHOUT_SITE[1]]
    [departure] = tally.departures
    assert (departure.handler, departure.section, departure.node) == ("receive_psc_ack", "3.2.7.4", "PEC0")
    assert departure.differences == (
        "the reference raised AttributeError: 'NoneType' object has no attribute 'partition_id'",)
    assert tally.tallies["receive_psc_ack"].departures == [departure] and tally.running is None


def test_an_empty_message_is_dropped_and_a_handler_that_reads_it_departs():
    """Receiving Replication Messages takes no action on an empty message (3.1.5.1), which only the campaign's file
    sends. Without that step the handler reads the body's first byte and raises: a departure naming it at PSC1."""
    handler = mqdsrp_common.receiving_replication_messages
    failures, tally = _campaign_file(EMPTY_MESSAGE[1])
    assert failures == [] and tally.departures == []
    assert _line(mqdsrp_common, "return", "def receiving_replication_messages") in tally.tracer.lines
    with vm.installed(handler, _mutant(handler, "drop-then: if not body", "pass")):
        failures, tally = _campaign_file(EMPTY_MESSAGE[1])
    assert failures == [EMPTY_MESSAGE[1]]
    assert [(d.handler, d.section, d.node, d.differences) for d in tally.departures] == [
        ("receiving_replication_messages", "3.1.5.1", "PSC1", ("the reference raised IndexError: index out of range",))]


def test_a_nack_whose_body_has_no_operation_is_dropped_and_a_handler_that_reads_it_departs():
    """A NackBadSignature returning 17 bytes (Version and SiteID, no Operation) takes no action (3.1.5.1); with the
    length test shifted to ``>=`` the handler reads byte 17 and raises: a departure at PEC0, the file failed."""
    handler = mqdsrp_common.receiving_replication_messages
    failures, watch = _campaign_file(TAMPERED_REPLY[1])
    assert failures == [] and watch.departures == []
    with vm.installed(handler, _mutant(handler, "shift: len(body) > 17", "(operator 0)")):
        failures, watch = _campaign_file(TAMPERED_REPLY[1])
    assert failures == [TAMPERED_REPLY[1]]
    assert [(d.handler, d.section, d.node, d.differences) for d in watch.departures] == [
        ("receive_request_nack", "3.3.7.9", "PEC0", ("the reference raised IndexError: index out of range",))]


def test_a_departure_of_a_handler_the_table_does_not_name_fails_its_row():
    """An empty message is dispatched by 3.1.5.1 itself (no row of HANDLERS names it). With its step dropped the
    handler raises: the campaign's rows must show it violated, or `mqspec prove` would stay green (the benchmark
    found this mutant surviving on every run that reached it)."""
    handler = mqdsrp_common.receiving_replication_messages
    only = campaign.Selection(wanted=lambda name: name == f"clarified:{EMPTY_MESSAGE[1]}")
    with vm.installed(handler, _mutant(handler, "drop-then: if not body", "pass")):
        rows, _ = campaign.run("clarified", stop_at_first=True, shrink=False, selection=only)
    assert [(r.obligation.name, r.detail["section"]) for r in rows if r.status == "violated"] == [
        ("refinement-receiving_replication_messages", "3.1.5.1")]


def test_a_campaign_stopping_at_its_first_departure_ends_the_run_there():
    """Receive Request Nack resending after a Nack of any class (its class test dropped) departs at the first
    resend of partition_held_once_per_server.yaml, where a client creates a site whose PSC names no server: every
    resend to it is nacked again, and the run would resend for hours of simulated time (more than half an hour of
    the benchmark's time per mutant).
    Stopping at the first departure ends the run at that handler run: one departure, the file counted as failed."""
    handler = mqdsrp_client.receive_request_nack
    with vm.installed(handler, _mutant(handler, "drop-then: if message_class != NACK_BAD_SIGNATURE", "pass")):
        failures, tally = _campaign_file("partition_held_once_per_server.yaml", stop=True)
    assert failures == ["partition_held_once_per_server.yaml"]
    assert [(d.handler, d.section) for d in tally.departures] == [("receive_request_nack", "3.3.7.9")]


def test_prove_ends_a_scenario_file_at_its_first_departure_and_fails_the_handlers_row():
    """`mqspec prove`'s campaign (not stopping at the first departure) with the same storming mutant: the file's run
    ends at its first departure all the same (before, it resent for hours of simulated time), the handler's row is
    violated with the file as its counterexample, and the campaign goes on to its other runs."""
    handler = mqdsrp_client.receive_request_nack
    wanted = {"clarified:partition_held_once_per_server.yaml", "clarified:an-empty-replication-message.yaml"}
    selection = campaign.Selection(wanted=lambda name: name in wanted, record=False)
    with vm.installed(handler, _mutant(handler, "drop-then: if message_class != NACK_BAD_SIGNATURE", "pass")):
        rows, _ = campaign.run("clarified", stop_at_first=False, shrink=False, selection=selection)
    row = next(r for r in rows if r.obligation.name == "refinement-receive_request_nack")
    assert row.status == "violated" and row.counterexample["departures"] == 1
    assert row.counterexample["scenario_file"].endswith("partition_held_once_per_server.yaml")
    assert set(selection.reached) == wanted  # the campaign's own file, run after it, ran too


def test_a_handler_run_that_never_returns_departs_at_its_cpu_limit(monkeypatch):
    """Lookup Directory Objects with its "if not rows: break" dropped asks for the next page for ever. The campaign
    stops the handler run at HANDLER_CPU_SECONDS of CPU time: a departure of receive_sync_request saying so, and
    `mqspec prove` fails naming the handler instead of hanging (the benchmark judged such a mutant only at its
    half-hour limit, as a timeout)."""
    monkeypatch.setattr(limit, "HANDLER_CPU_SECONDS", 2.0)
    handler = mqdsrp_server.lookup_directory_objects
    name = "clarified:sync-from-the-purge-point.yaml"
    selection = campaign.Selection(wanted=lambda run: run == name)
    started = time.process_time()
    # the benchmark's wall-clock limit around it: without the CPU limit the test fails there, not hangs
    with vm.installed(handler, _mutant(handler, "drop-then: if not rows", "pass")), vm.time_limit(120):
        rows, _ = campaign.run("clarified", stop_at_first=True, shrink=False, selection=selection)
    assert time.process_time() - started < 30
    [row] = [r for r in rows if r.status == "violated"]
    assert (row.obligation.name, row.detail["section"]) == ("refinement-receive_sync_request", "3.2.7.3")
    assert "the reference raised HandlerRanTooLong: the handler run used 2 s of CPU time without returning" in str(
        row.counterexample)
    # the run's lines up to the loop were recorded, as for any departing run
    assert _line(mqdsrp_server, "while True:", "def lookup_directory_objects") in selection.reached[name]


ONE_QUEUE = """
enterprise:
  pec: PEC0
  sites:
    site0: {psc: PEC0, machines: [C0]}
steps:
  - create: {at: PEC0, type: queue, path: 'C0\\q', properties: {PROPID_Q_LABEL: q}}
  - create: {at: PEC0, type: queue, path: 'C0\\r', properties: {PROPID_Q_LABEL: r}}
"""


def test_a_handler_run_whose_raise_the_scenario_runner_swallows_departs(tmp_path, monkeypatch):
    """The scenario runner refuses a step on a ModelError and runs the next one, so a handler that raised one used to
    leave its run unfinished and unrecorded: its row could stay refined. Now the open run departs, naming the
    handler, at the next handler run or the next step."""
    from mqspec.model.errors import ModelError
    from mqspec.refimpl import world as world_module

    original = world_module.directory_client_request

    def refusing(qm, ctx, request, guid=None):
        number = original(qm, ctx, request, guid)
        if request.path_name == "C0\\q":
            raise ModelError("a message the simulator will not carry")
        return number

    monkeypatch.setattr(world_module, "directory_client_request", refusing)
    (tmp_path / "one-queue.yaml").write_text(ONE_QUEUE, encoding="utf-8")
    watch = InvariantWatch(names=("handlers_refine_model",), refine=True)
    result = scenario_run.run(load(tmp_path / "one-queue.yaml"), trace=watch.record, attach=watch.attach,
                              skip_idle_timers=True)
    watch.finish()
    assert any("the simulator refused the step" in line for line in result.failures)
    assert [v["invariant"] for v in watch.violations] == ["handlers_refine_model"]
    text = "\n".join(watch.violations[0]["problems"])
    assert "directory_client_request (3.1.7.1)" in text and "the step that ran it was refused" in text


def test_what_the_check_cannot_read_of_the_reference_departs(monkeypatch):
    """A state or message of the reference the projection cannot read (a destination that is no machine name) is a
    departure of that handler run, not an exception out of `mqspec prove`."""
    def unreadable(qm, effects):
        raise TypeError("a destination that is no machine name")

    monkeypatch.setattr(check, "emitted_of", unreadable)
    _, watch, _ = _run("mqspec.scenarios", "4.2-adding-a-bsc.yaml")
    assert [v["invariant"] for v in watch.violations] == ["handlers_refine_model"]
    assert "the reference left what the check cannot read: TypeError" in "\n".join(watch.violations[0]["problems"])


def test_an_exception_outside_any_handler_run_is_the_harness_own():
    """Watch.raised claims an exception only while a handler run is in progress: otherwise it propagates."""
    tally = campaign.Watch(campaign.Tracer())
    assert tally.raised(RuntimeError("the harness")) is False


def test_differences_name_each_field_that_differs():
    """A field-level diff names the path of each differing field with the model's and the reference's value."""
    model = {"partitions": [{"last": 3, "purged": 0}], "names": {"authority": "PSC1"}}
    reference = {"partitions": [{"last": 4, "purged": 0}], "names": {"authority": "PSC2"}, "extra": 1}
    assert check.differences(model, reference) == [
        "partitions[0].last: model 3, reference 4",
        "names.authority: model 'PSC1', reference 'PSC2'",
        "extra: model '(none)', reference 1",
    ]


def test_every_exemption_prove_prints_gives_its_reason():
    """The one list of what the check leaves out: each line prove prints names what, where and why."""
    lines = exemptions.lines()
    assert len(lines) == len(exemptions.EXEMPTIONS) > 0
    for e, line in zip(exemptions.EXEMPTIONS, lines):
        assert e.reason and e.where and e.what in line and e.reason in line


@pytest.mark.parametrize("run,handler,before,after,modes", [
    ("signed-by-a-user", mqcn_server._refusal_v1, "drop-then: if message.sender_identifier_type", "pass",
     ("clarified", "literal")),
    ("machine-by-path-name", mqcn_server._update_queue_manager_v1, "drop-operand: named is not None", "(dropped)",
     ("clarified",)),
    ("another-machine-by-path-name", mqcn_server._other_machine, "negate: if path_name.casefold()", "if not path_name",
     ("clarified",)),
    ("every-machine-attribute", mqcn_dmpr._changes, "negate: for ... if name not in present", "if not name",
     ("clarified",)),
    ("every-machine-attribute", mqcn_dmpr._changes, "negate: if absent", "if not absent", ("clarified",)),
    ("a-later-update-disregards", mqcn_server.process_change_notification_v1, "drop-then: if i > 0", "pass",
     ("clarified",)),
    ("a-later-update-disregards", mqcn_server.process_change_notification_v1, "shift: i > 0", ">=", ("clarified",)),
    ("delete-by-path-name", mqcn_server._delete_queue_v1, "drop-then: if queue is not None", "pass",
     ("clarified",)),
])
def test_the_mqcn_campaigns_boundary_runs_refine_and_catch_their_mutant(run, handler, before, after, modes):
    """Each boundary run of the MS-MQCN campaign refines the model in both modes, and the one-line mutant of the
    guard it is there for (a signed sender that is no queue manager, this and another machine named by PathName, an
    update giving
    every attribute, a later update disregarding the message, a delete by PathName) departs from it in ``modes``,
    in Receive Change Notification (3.2.5) -- the register entries of the clarifications taken are compared."""
    def departures(mode):
        return [(name, problems) for name, _, problems in mqcn.replay(run, mode) if problems]

    assert departures("clarified") == [] and departures("literal") == []
    with vm.installed(handler, _mutant(handler, before, after)):
        found = {mode: departures(mode) for mode in ("clarified", "literal")}
    assert {mode for mode, d in found.items() if d} == set(modes)
    assert {name for d in found.values() for name, _ in d} == {"receive_change_notification"}


def _hangs_then_raises(calls):
    """A handler whose first run never returns and whose later runs raise."""
    def handler(*args):
        calls.append(args)
        while len(calls) == 1:
            pass
        raise KeyError("the stand-in's")
    return handler


@pytest.mark.parametrize("module,name,runs", [
    (mqsd_server, "receive_datagram",
     lambda: [(h, p) for h, _, p in mqsd.boundary_departures(mqsd.BOUNDARY[0].name, "clarified")]),
    (mqcn_server, "receive_change_notification",
     lambda: [(h, p) for h, _, p in mqcn.replay("every-machine-attribute", "clarified") if p]),
], ids=["MS-MQSD", "MS-MQCN"])
def test_an_mqsd_or_mqcn_handler_run_that_never_returns_or_raises_departs(monkeypatch, module, name, runs):
    """The MS-MQSD and MS-MQCN campaigns stop a handler run at HANDLER_CPU_SECONDS of CPU time, and a run that
    raises departs naming its handler, as in the MC-MQDSRP campaign: `mqspec prove` fails on a violated row instead
    of hanging or ending in a traceback."""
    monkeypatch.setattr(limit, "HANDLER_CPU_SECONDS", 0.5)
    calls = []
    monkeypatch.setattr(module, name, _hangs_then_raises(calls))
    started = time.process_time()
    departures = runs()
    assert time.process_time() - started < 10
    assert departures[:2] == [
        (name, ["the reference raised HandlerRanTooLong: the handler run used 0.5 s of CPU time without returning"]),
        (name, ["the reference raised KeyError: \"the stand-in's\""]),
    ]


def test_a_raising_mqsd_handler_makes_its_prove_row_violated(monkeypatch):
    """The row `mqspec prove` prints for a raising MS-MQSD handler is violated and names it."""
    monkeypatch.setattr(mqsd_server, "receive_datagram", _hangs_then_raises([None]))
    rows, _ = mqsd.run("literal", stop_at_first=True)
    [row] = [r for r in rows if r.status == "violated"]
    assert row.obligation.name == "refinement-receive_datagram"
    assert "receive_datagram (MS-MQSD 3.2.5) departs from the model" in row.counterexample["trace"]
    assert "the reference raised KeyError" in row.counterexample["trace"]


def test_the_cpu_limit_traces_again_when_its_exception_unset_the_line_tracer():
    """The limit's exception may land inside the line tracer's own function, and Python then unsets the trace: the
    limit sets again, when it is disarmed, the tracer that was on when it was armed (the branch rows count the lines
    of the runs after), and sets none that was not."""
    from mqspec.proofs.explore.branches import Reach

    with Reach() as reach, limit.CpuLimit() as cpu:
        cpu.arm()
        sys.settrace(None)  # what Python does when the trace function raises
        cpu.disarm()
        assert sys.gettrace() == reach._trace
    assert sys.gettrace() is None or sys.gettrace() != reach._trace
    with limit.CpuLimit() as cpu:
        before = sys.gettrace()
        cpu.arm()
        cpu.disarm()
        assert sys.gettrace() is before
