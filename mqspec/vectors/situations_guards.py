"""Handler situations that tell apart implementations which drop, negate or shift one guard.

Each situation here was added because a mutant of a reference handler (:mod:`.mutation`: a
negated condition, a dropped operand or branch, a comparison shifted by one) passed every other
vector: the docstring's first line says which test of the pseudo-code the situation decides.
Some states are ones a server following 3.1.1 would not reach in that role (a PSC whose
MyEnterprisePartition is populated, a BSC with a neighbor entry): the pseudo-code tests the role
first, and an implementation that keeps such an attribute populated must still do so.
"""

from __future__ import annotations

from mqspec.model import mqdsrp
from mqspec.model.mqdsrp import BSCAckMessage, Command, PSCAckMessage, SyncRequestMessage, Scope
from mqspec.model.propvalue import Property
from mqspec.refimpl.mqdsrp_state import DirectoryNeighbor, PurgeState, Role
from mqspec.refimpl.transport import replication_queue_direct

from .handlers import (
    ENT,
    PEC,
    PSC1,
    QUEUE,
    SITE,
    SITE0,
    SITE1,
    P,
    bsc,
    change,
    guid_of,
    new_qm,
    part,
    pec,
    psc,
    put,
    qm_guid,
    queue_props,
    seq,
    site_props,
    situation,
)
from .situations_common import _propagate

NACK_FIRST, NACK_LAST = 0x8000, 0xC003


def _receive(body: bytes, klass: int) -> dict:
    return {"body": body, "message_class": klass, "destination_format_name": replication_queue_direct(PEC)}


def _sync_request_body() -> bytes:
    return mqdsrp.encode(SyncRequestMessage(SITE1, ENT, seq(3), seq(9), seq(0), False, Scope.ENTERPRISE, PSC1))


# --- 3.1.5.1 Receiving Replication Messages ----------------------------------------------------------


@situation("receiving_replication_messages", "nack-version-not-zero")
def _nack_version():
    """A Nack whose body's Version is not 0x00 takes no action, even for a request the Nack would resend."""
    body = bytearray(_sync_request_body())
    body[0] = 1
    return psc(), _receive(bytes(body), NACK_FIRST)


def _waiting_for_a_reply():
    """PSC1 waiting for PEC0's reply to its ChangeRequestMessage (request 1); returns it and the request's body."""
    from .situations_common import _pending_request

    qm = psc()
    return qm, mqdsrp.encode(_pending_request(qm))


@situation("receiving_replication_messages", "nack-lowest-class")
def _nack_first():
    """Class 0x8000, the first Nack class, is a Nack: the waiting ChangeRequest ends (Receive Change Request Nack)."""
    qm, body = _waiting_for_a_reply()
    return qm, _receive(body, NACK_FIRST)


@situation("receiving_replication_messages", "nack-highest-class")
def _nack_last():
    """Class 0xC003, the last Nack class, is a Nack: the waiting ChangeRequest ends (Receive Change Request Nack)."""
    qm, body = _waiting_for_a_reply()
    return qm, _receive(body, NACK_LAST)


@situation("receiving_replication_messages", "nack-17-bytes")
def _nack_17():
    """A Nack of 17 bytes has no Operation byte (offset 17): no action, nothing read past the body."""
    return psc(), _receive(bytes(17), NACK_FIRST)


# --- 3.1.7.1.2 / 3.1.7.1.3: which partition the server is the authority of ------------------------------


def _psc_holding_enterprise_reference():
    """PSC1 with MyEnterprisePartition populated (3.1.1 populates it only at the PEC)."""
    qm = psc()
    qm.my_enterprise_partition = part(qm, ENT)
    part(qm, ENT).last_seq_number = seq(7)
    return qm


def _pec_before_initialization():
    """PEC0 before 3.1.3.1: no partitions, MyEnterprisePartition and MySitePartition not populated."""
    return new_qm(PEC, Role.PEC, SITE0)


@situation("propagate_directory_change", "psc-is-no-enterprise-authority")
def _prop_psc_enterprise():
    """At a PSC the enterprise partition is not its own, whatever MyEnterprisePartition holds: no action."""
    return _propagate(_psc_holding_enterprise_reference(), 0x00, SITE, "site9", None, ENT,
                      site_props("site9", guid_of("site9"), PSC1), 8)


@situation("propagate_directory_change", "pec-before-initialization")
def _prop_uninitialized():
    """A PEC whose MyEnterprisePartition and MySitePartition are not populated owns no partition: no action."""
    return _propagate(_pec_before_initialization(), 0x00, QUEUE, "pec0\\q", None, SITE0, queue_props("pec0\\q"), 1)


@situation("read_next_sequence_number", "psc-is-no-enterprise-authority")
def _next_psc_enterprise():
    """At a PSC the enterprise partition is not its own, whatever MyEnterprisePartition holds: MIN_SEQ_NUMBER."""
    return _psc_holding_enterprise_reference(), {"partition_id": ENT}


@situation("read_next_sequence_number", "pec-before-initialization")
def _next_uninitialized():
    """A PEC whose MyEnterprisePartition and MySitePartition are not populated returns MIN_SEQ_NUMBER."""
    return _pec_before_initialization(), {"partition_id": SITE0}


@situation("propagate_directory_change", "bsc-is-no-site-authority")
def _prop_bsc_site():
    """A BSC is not the authority of its own site partition (MySitePartition counts only "If the queue manager is a PSC")."""
    return _propagate(bsc(), 0x00, QUEUE, "bsc11\\q", None, SITE1, queue_props("bsc11\\q"), 1)


@situation("read_next_sequence_number", "bsc-is-no-site-authority")
def _next_bsc_site():
    """A BSC's own site partition is not its own to number: MIN_SEQ_NUMBER."""
    qm = bsc()
    part(qm, SITE1).last_seq_number = seq(12)
    return qm, {"partition_id": SITE1}


@situation("read_next_sequence_number", "pec-own-site")
def _next_pec_site():
    """At the PEC its own site partition's number comes from that partition, not the enterprise partition."""
    qm = pec()
    part(qm, ENT).last_seq_number = seq(41)
    part(qm, SITE0).last_seq_number = seq(9)
    return qm, {"partition_id": SITE0}


# --- 3.1.7.2.2 - 3.1.7.2.4 --------------------------------------------------------------------------


@situation("handle_directory_change", "gap-up-to-the-window")
def _hdc_at_window():
    """An out-of-order change whose SeqNumber equals ChangeMissingWindow is queued without a new sync request."""
    qm = psc()
    p = part(qm, SITE0)
    p.last_seq_number, p.change_missing_window = seq(3), seq(8)
    return qm, {"partition": p, "change": change(Command.CREATE, SITE0, 8, previous=6,
                                                 properties=queue_props("object8")), "check_flush": True}


def _in_sync(qm, partition_id, seq_number, *, purged, state, last=None):
    p = part(qm, partition_id)
    p.purged_seq_number, p.purge_state = seq(purged), state
    p.last_seq_number = seq(seq_number - 1 if last is None else last)
    put(qm, QUEUE, "pec0\\q", queue_props("pec0\\q", guid_of("q")), partition_id)
    return qm, {"partition": p, "change": change(Command.UPDATE, partition_id, seq_number, purged=purged,
                                                 path="pec0\\q", properties=(Property(P["PROPID_Q_LABEL"], "x"),)),
                "flush": True}


@situation("handle_in_sync_change", "normal-below-purged-acks")
def _his_normal_low():
    """In NORMAL a PSC acknowledges a change whose low byte is 0x00 even when LastSeqNumber is below PurgedSeqNumber."""
    return _in_sync(psc(), SITE0, 256, purged=300, state=PurgeState.NORMAL)


@situation("handle_in_sync_change", "sync0-caught-up-acks")
def _his_sync0_caught_up():
    """Outside NORMAL a PSC acknowledges once LastSeqNumber has passed PurgedSeqNumber."""
    return _in_sync(psc(), SITE0, 512, purged=300, state=PurgeState.SYNC0)


@situation("handle_in_sync_change", "sync0-at-purged-acks")
def _his_sync0_equal():
    """Outside NORMAL a PSC acknowledges when LastSeqNumber equals PurgedSeqNumber ("greater than or equal")."""
    return _in_sync(psc(), SITE0, 256, purged=256, state=PurgeState.SYNC0)


@situation("handle_in_sync_change", "bsc-never-acks")
def _his_bsc():
    """A BSC applies a change whose low byte is 0x00 but sends no PSC ack (only "If the queue manager is a PSC")."""
    return _in_sync(bsc(), SITE0, 256, purged=0, state=PurgeState.NORMAL)


@situation("check_pending_changes", "pending-at-last-seq-number")
def _cpc_equal():
    """A pending change whose SeqNumber equals LastSeqNumber is already applied: it is dropped, not applied again."""
    qm = psc()
    p = part(qm, SITE0)
    put(qm, QUEUE, "pec0\\q", queue_props("pec0\\q", guid_of("q")), SITE0)
    p.last_seq_number = seq(5)
    p.pending_changes = [change(Command.UPDATE, SITE0, 5, path="pec0\\q",
                                properties=(Property(P["PROPID_Q_LABEL"], "again"),))]
    return qm, {"partition": p}


# --- 3.2.7.4 / 3.2.7.5 acknowledgements ----------------------------------------------------------------


@situation("receive_psc_ack", "psc-ignores-enterprise-acks")
def _rpa_psc_enterprise():
    """A PSC that is not the PEC ignores an ack of the enterprise partition, whatever MyEnterprisePartition holds."""
    qm = _psc_holding_enterprise_reference()
    return qm, {"message": PSCAckMessage(SITE0, SITE0, ENT, seq(512), PEC)}


@situation("receive_psc_ack", "bsc-with-a-psc-neighbor")
def _rpa_bsc_neighbor():
    """A BSC ignores a PSC ack even from a server in its PSC neighbor collection ("If queue manager is not PSC")."""
    qm = bsc()
    qm.psc_neighbors = [DirectoryNeighbor(SITE1, PSC1)]
    return qm, {"message": PSCAckMessage(SITE1, SITE1, SITE1, seq(256), PSC1)}


@situation("receive_psc_ack", "pec-before-initialization")
def _rpa_uninitialized():
    """A PEC whose MyEnterprisePartition and MySitePartition are not populated records nothing."""
    qm = _pec_before_initialization()
    qm.psc_neighbors = [DirectoryNeighbor(SITE1, PSC1)]
    return qm, {"message": PSCAckMessage(SITE1, SITE1, ENT, seq(256), PSC1)}


@situation("receive_bsc_ack", "bsc-with-a-bsc-neighbor", now=3600.5)
def _rba_bsc_neighbor():
    """A BSC ignores a BSC ack even from a server in its BSC neighbor collection ("If queue manager is not PSC")."""
    qm = bsc()
    qm.bsc_neighbors = [DirectoryNeighbor(SITE1, "BSC12")]
    return qm, {"message": BSCAckMessage(SITE1, qm_guid("BSC12"), "BSC12")}


@situation("handle_directory_change", "window-max-outside-normal")
def _hdc_window_max_sync0():
    """Outside NORMAL an out-of-order change under a window of MAX is only queued: E-311 asks for the gap in NORMAL only."""
    qm = psc()
    p = part(qm, SITE0)
    p.last_seq_number, p.purge_state = seq(3), PurgeState.SYNC0
    return qm, {"partition": p, "change": change(Command.CREATE, SITE0, 8, previous=6,
                                                 properties=queue_props("object8")), "check_flush": True}
