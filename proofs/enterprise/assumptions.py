"""What the proofs assume: the enterprise model's assumptions not proved, and what became of the per-server ones.

The per-server model (:mod:`mqspec.proofs.z3_events`) assumes, for each event, what its callers and
the messages it receives satisfy (each Event's ``assume``), and lists what only several servers can
show (``ENVIRONMENT_ASSUMPTIONS``). Each of those is here, in :data:`DISCHARGES`: proved by named
invariants of the enterprise model over the messages in flight, or standing on one of the
enterprise model's own assumptions (:data:`ASSUMPTIONS`), which ``mqspec prove`` lists by name as not
proved. The enterprise transitions that assume one say so (``Step.assumptions``, by the same name).
"""

from __future__ import annotations

import attrs


@attrs.frozen
class Assumption:
    """An assumption of the enterprise proofs that no invariant discharges; ``why``: why it is not proved."""

    name: str
    statement: str
    why: str


@attrs.frozen
class Discharge:
    """A per-server assumption (``event``: the z3_events Event, or ``environment``) and what proves it."""

    event: str
    assumes: str
    proved_by: tuple[str, ...] = ()  # enterprise invariants
    assumption: str | None = None  # else: the enterprise assumption it rests on


ASSUMPTIONS: tuple[Assumption, ...] = (
    Assumption("fewer_changes_than_max_seq_number",
               "The authority's next sequence number is below MAX: fewer than 2**64 - 1 changes in a partition "
               "(E-260; Propagate Directory Change).",
               "A bound on the workload, not a property of the protocol: Increment wraps at MAX (2.2.2)."),
    Assumption("sync_request_to_within_responder_history",
               "A SyncRequest's ToSeqNumber is MAX or at most the answering server's LastSeqNumber (Receive Sync "
               "Request).",
               "The window comes from a SeqNumberHeader of the server asked (its AuthorityName, or a BSC's PSC), "
               "whose LastSeqNumber only grows, except through sync0: a PSC that restarted its partition at MIN and "
               "completed sync0 lower than before could answer below a header it sent. The model's requests are "
               "not addressed, so it cannot tell the server asked from any other."),
    Assumption("sync_reply_answers_a_request_since_sync0",
               "An empty SyncReply that answers a NORMAL requester's outstanding window (and so moves its "
               "LastSeqNumber to ToSeqNumber) has a FromSeqNumber at most the requester's LastSeqNumber (Receive Sync "
               "Reply).",
               "A reply to a request sent before the requester's Start Sync0 State, delayed past it, can carry a "
               "larger FromSeqNumber; the requester then drops it only if its PurgedSeqNumber is below the new one, "
               "which holds when the same server answered both and fails when E-314 stamped the reply higher."),
    Assumption("sync0_reply_reaches_purged_seq",
               "A SyncReply a replica in sync0 accepts reaches its PurgedSeqNumber: ToSeqNumber at least it, and "
               "when it completes sync0 (CompleteSync0 2) LastSeqNumber reaches it (Receive Sync Reply).",
               "The replica's PurgedSeqNumber is the AlreadyPurged sender's; the reply comes from the server it "
               "asks, which has at least that LastSeqNumber only if its own LastSeqNumber is carried by a change it "
               "can send (the model's requests are not addressed; an empty Count-0 reply, 3.3.7.5, moves a PSC's "
               "LastSeqNumber with no change to show for it)."),
    Assumption("site_object_names_its_psc",
               "The PROPID_S_PSC Handle Site Update applies names a PSC of that site the enterprise has known, and "
               "a server learns a site's PSCs in handover order (Handle Site Update).",
               "The site object's properties are not modelled: its PSC is written by an administrator (4.1) and by "
               "the handover (E-313); the order follows from in-order replication of the enterprise partition, "
               "which the model proves for sequence numbers but not for property values."),
)
BY_NAME = {a.name: a for a in ASSUMPTIONS}

#: not modelled at all (their effect is outside the enterprise model), listed with the assumptions
NOT_MODELLED: tuple[tuple[str, str], ...] = (
    ("server_loses_all_replication_state",
     "A server that loses all its replication state starts over as a new replica: the per-server initiation "
     "obligations cover its first state; messages addressed to its name from before are not modelled."),
    ("authority_keeps_its_persisted_state",
     "The authority of a partition never loses its persisted replication state (E-262): the protocol has no way "
     "to rebuild it."),
    ("handover_takes_a_new_name",
     "A handover's new PSC takes a name the enterprise never had (refimpl's move_psc refuses only a running "
     "server's name)."),
)

DISCHARGES: tuple[Discharge, ...] = (
    Discharge("handle_directory_change", "the receiver is not the partition's authority",
              ("authority_state_is_the_authority_history", "propagated_changes_carry_assigned_numbers")),
    Discharge("handle_directory_change", "the change was numbered by the authority, chains forward from the number "
              "before it, skips no deletion, and a deletion's number is sent as a delete",
              ("propagated_changes_carry_assigned_numbers", "authority_history_well_formed")),
    Discharge("handle_in_sync_change", "the change is the authority's, and PreviousSeqNumber <= LastSeqNumber < "
              "SeqNumber (its callers' guard)",
              ("propagated_changes_carry_assigned_numbers", "authority_history_well_formed")),
    Discharge("check_pending_changes", "nothing", ()),
    Discharge("propagate_directory_change", "raised at the authority", ("one_authority_per_partition",)),
    Discharge("propagate_directory_change", "the authority's next number is below MAX", (),
              "fewer_changes_than_max_seq_number"),
    Discharge("receive_change_request", "the authority's next number is below MAX", (),
              "fewer_changes_than_max_seq_number"),
    Discharge("receive_sync_request", "ToSeqNumber is MAX or at most the server's LastSeqNumber", (),
              "sync_request_to_within_responder_history"),
    Discharge("receive_sync_reply", "the receiver is not the partition's authority", ("sync_answers_go_to_replicas",)),
    Discharge("start_sync0_state", "the receiver is not the partition's authority", ("sync_answers_go_to_replicas",)),
    Discharge("receive_sync_reply", "ToSeqNumber and PurgedSeqNumber at most the authority's",
              ("sync_replies_carry_assigned_numbers",)),
    Discharge("receive_sync_reply", "the reply answers a request sent since the last Start Sync0 State, or is "
              "dropped", (), "sync_reply_answers_a_request_since_sync0"),
    Discharge("receive_sync_reply", "its changes are the authority's, chained forward from FromSeqNumber, with the "
              "reply's PurgedSeqNumber",
              ("reply_objects_are_authority_history", "reply_deletions_are_authority_deletions",
               "sync_replies_carry_assigned_numbers")),
    Discharge("receive_sync_reply", "it holds every deletion in (From, To] the requester has not purged",
              ("no_incremental_history_skips_purged_deletion", "sync_replies_carry_assigned_numbers")),
    Discharge("purge_deleted_objects", "nothing", ()),
    Discharge("receive_psc_ack", "the acknowledged number is at most the authority's LastSeqNumber",
              ("psc_acks_are_truthful", "no_server_ahead_of_the_authority")),
    Discharge("send_psc_ack", "raised at a PSC", ()),
    Discharge("start_sync0_state", "raised with an AlreadyPurgedMessage's PurgedSeqNumber, at most the authority's",
              ("already_purged_carries_at_most_the_authority_purged_seq",)),
    Discharge("complete_sync0_state", "nothing", ()),
    Discharge("receive_already_purged", "PurgedSeqNumber at most the authority's",
              ("already_purged_carries_at_most_the_authority_purged_seq",)),
    Discharge("receive_change_propagation", "the SeqNumberHeader's LastSeqNumber and PurgedSeqNumber at most the "
              "authority's", ("headers_carry_at_most_the_authority_numbers",)),
    Discharge("receive_change_propagation", "the receiver is not the partition's authority (at the authority a "
              "header is never ahead of its LastSeqNumber)",
              ("headers_carry_at_most_the_authority_numbers", "authority_state_is_the_authority_history")),
    Discharge("send_sync_request", "nothing", ()),
    Discharge("crash_losing_volatile_state", "nothing", ()),
    Discharge("environment_advances", "the authority's LastSeqNumber and PurgedSeqNumber only grow, and a new "
              "deletion is numbered above the old LastSeqNumber", ("authority_history_only_grows",)),
    Discharge("environment", "E-260: fewer than 2**64 - 1 changes in a partition", (),
              "fewer_changes_than_max_seq_number"),
    Discharge("environment", "a sync request's ToSeqNumber is MAX or a number the answering server has", (),
              "sync_request_to_within_responder_history"),
    Discharge("environment", "LastSeqNumber and PurgedSeqNumber survive a crash (the model's crash keeps what 3.1.1 "
              "persists); a server that loses all state starts over", (), "server_loses_all_replication_state"),
    Discharge("environment", "the authority never loses its persisted state (E-262)", (),
              "authority_keeps_its_persisted_state"),
    Discharge("environment", "_my_partition_for_request and is_authority_of agree (one authority per partition)",
              ("one_authority_per_partition",)),
)


def not_proved() -> list[tuple[str, str]]:
    """Every assumption ``mqspec prove`` lists as not proved: (name, statement)."""
    return [(a.name, a.statement) for a in ASSUMPTIONS] + list(NOT_MODELLED)
