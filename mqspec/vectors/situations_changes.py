"""Handler situations for MC-MQDSRP 3.1.7.2.1 to 3.1.7.2.4 (refimpl/mqdsrp_common.py).

Each builder returns a queue manager and the event's arguments; its docstring names the branch.
"""

from __future__ import annotations

from mqspec.model.mqdsrp import (
    BSCAckMessage,
    Command,
    PSCAckMessage,
)
from mqspec.model.propvalue import Property
from mqspec.model.seqnum import MIN_SEQ_NUMBER
from mqspec.refimpl.effects import AckRequested
from mqspec.refimpl.mqdsrp_state import (
    DeletedObject,
    DirectoryNeighbor,
    DirectoryPartition,
    PurgeState,
)
from mqspec.refimpl.transport import replication_queue_private

from .handlers import (
    BSC11,
    ENT,
    PEC,
    PSC1,
    PSC2,
    QUEUE,
    SITE0,
    SITE1,
    SITE2,
    P,
    bsc,
    change,
    delete_props,
    guid_of,
    part,
    psc,
    put,
    qm_guid,
    queue_props,
    seq,
    site_props,
    situation,
)

# --- 3.1.7.2.1 Send Replication Message ---------------------------------------------------------------------


@situation("send_replication_message", "acknowledged-send")
def _send():
    """The Message object carries every attribute 3.1.7.2.1 sets, with admin and response queues."""
    qm = psc()
    private = replication_queue_private(qm.identifier)
    return qm, {"destination": PEC, "message": PSCAckMessage(SITE1, SITE1, ENT, seq(512), PSC1), "timeout": 1200,
                "priority": 3, "ack_requested": AckRequested.ACK_NACK_REACH_QUEUE, "admin_queue": private,
                "response_queue": private}


@situation("send_replication_message", "no-destination")
def _send_nowhere():
    """An empty iDestination gives an empty format name (the simulator does not send it)."""
    return bsc(psc_name=None, site_partition=False), {
        "destination": "", "message": BSCAckMessage(SITE1, qm_guid(BSC11), BSC11), "timeout": 1200, "priority": 3,
        "ack_requested": AckRequested.NONE, "admin_queue": None, "response_queue": None}


# --- 3.1.7.2.2 Handle Directory Change -----------------------------------------------------------------------


def _hdc(qm, partition_id, dir_change, check_flush=True):
    return qm, {"partition": part(qm, partition_id), "change": dir_change, "check_flush": check_flush}


@situation("handle_directory_change", "already-applied")
def _hdc_old():
    """A change with SeqNumber <= LastSeqNumber takes no action."""
    qm = psc()
    part(qm, SITE0).last_seq_number = seq(5)
    return _hdc(qm, SITE0, change(Command.CREATE, SITE0, 5, properties=queue_props("pec0\\q")))


@situation("handle_directory_change", "older-than-purge-horizon")
def _hdc_purged():
    """A change whose PurgedSeqNumber is below the partition's takes no action."""
    qm = psc()
    part(qm, SITE0).purged_seq_number = seq(3)
    return _hdc(qm, SITE0, change(Command.CREATE, SITE0, 1, purged=2, properties=queue_props("pec0\\q")))


@situation("handle_directory_change", "in-order-applied")
def _hdc_in_order():
    """An in-order change is applied and the pending changes are checked."""
    qm = psc()
    p = part(qm, SITE0)
    p.pending_changes.append(change(Command.UPDATE, SITE0, 2, path="pec0\\q", properties=queue_props("pec0\\q")))
    return _hdc(qm, SITE0, change(Command.CREATE, SITE0, 1, path="pec0\\q",
                                  properties=queue_props("pec0\\q", guid_of("q"))))


@situation("handle_directory_change", "in-order-fails")
def _hdc_fails():
    """An in-order update of an object the replica lacks fails: nothing else happens."""
    return _hdc(psc(), SITE0, change(Command.UPDATE, SITE0, 1, path="pec0\\none",
                                     properties=(Property(P["PROPID_Q_LABEL"], "x"),)))


@situation("handle_directory_change", "first-out-of-order-asks-for-the-gap")
def _hdc_gap():
    """The first out-of-order change is queued and, beyond the window, a sync request asks for the gap."""
    qm = psc()
    part(qm, SITE0).change_missing_window = MIN_SEQ_NUMBER
    return _hdc(qm, SITE0, change(Command.CREATE, SITE0, 6, previous=5, properties=queue_props("pec0\\q6")))


@situation("handle_directory_change", "first-out-of-order-within-window")
def _hdc_window():
    """Within the outstanding window the out-of-order change is only queued (E-109)."""
    qm = psc()
    part(qm, SITE0).change_missing_window = seq(8)
    return _hdc(qm, SITE0, change(Command.CREATE, SITE0, 6, previous=5, properties=queue_props("pec0\\q6")))


@situation("handle_directory_change", "first-out-of-order-window-max")
def _hdc_window_max():
    """With the window MAX (a request for everything unanswered) clarified mode asks for the gap at once (E-311)."""
    return _hdc(psc(), SITE0, change(Command.CREATE, SITE0, 6, previous=5, properties=queue_props("pec0\\q6")))


@situation("handle_directory_change", "out-of-order-joins-pending")
def _hdc_join():
    """Another out-of-order change joins the pending ones in SeqNumber order."""
    qm = psc()
    part(qm, SITE0).pending_changes.append(change(Command.CREATE, SITE0, 9, previous=8,
                                                  properties=queue_props("pec0\\q9")))
    return _hdc(qm, SITE0, change(Command.CREATE, SITE0, 6, previous=5, properties=queue_props("pec0\\q6")))


@situation("handle_directory_change", "out-of-order-duplicate")
def _hdc_duplicate():
    """An out-of-order change already pending is not queued twice."""
    qm = psc()
    queued = change(Command.CREATE, SITE0, 6, previous=5, properties=queue_props("pec0\\q6"))
    part(qm, SITE0).pending_changes.extend([queued, change(Command.CREATE, SITE0, 9, previous=8,
                                                           properties=queue_props("pec0\\q9"))])
    return _hdc(qm, SITE0, queued)


@situation("handle_directory_change", "pending-collection-full")
def _hdc_full():
    """With 100 changes pending a further out-of-order change is dropped."""
    qm = psc()
    part(qm, SITE0).pending_changes.extend(
        change(Command.UPDATE, SITE0, n, previous=n - 1, path="pec0\\q") for n in range(10, 110))
    return _hdc(qm, SITE0, change(Command.UPDATE, SITE0, 200, previous=199, path="pec0\\q"))


# --- 3.1.7.2.3 Handle In-Sync Change ----------------------------------------------------------------------------


def _his(qm, partition_id, dir_change, flush=True):
    return qm, {"partition": part(qm, partition_id), "change": dir_change, "flush": flush}


@situation("handle_in_sync_change", "create-passed-to-bscs")
def _his_create():
    """A create is applied, LastSeqNumber set, and the change queued for every BSC neighbor."""
    return _his(psc(), SITE0, change(Command.CREATE, SITE0, 1, path="pec0\\q",
                                     properties=queue_props("pec0\\q", guid_of("q"))))


@situation("handle_in_sync_change", "site-create-flushes-to-bscs")
def _his_site():
    """A new site needs a flush: each BSC neighbor gets a Change Propagation at once."""
    return _his(psc(), ENT, change(Command.CREATE, ENT, 1, path="site2", properties=site_props("site2", SITE2, PSC2)))


@situation("handle_in_sync_change", "site-create-without-flush")
def _his_site_noflush():
    """With iFlush false the BSC neighbors only queue the site create."""
    return _his(psc(), ENT, change(Command.CREATE, ENT, 1, path="site2", properties=site_props("site2", SITE2, PSC2)),
                flush=False)


@situation("handle_in_sync_change", "site-create-without-a-psc")
def _his_site_nopsc():
    """A site created without PROPID_S_PSC: clarified, only its partition is made; literally, a Sync Request goes to
    no machine and a PSC neighbor with no name is added (E-336)."""
    return _his(psc(), ENT, change(Command.CREATE, ENT, 1, path="site2", properties=site_props("site2", SITE2, None)))


@situation("handle_in_sync_change", "update")
def _his_update():
    """An update of a replicated object is applied."""
    qm = psc()
    put(qm, QUEUE, "pec0\\q", queue_props("pec0\\q", guid_of("q")), SITE0, 1)
    part(qm, SITE0).last_seq_number = seq(1)
    return _his(qm, SITE0, change(Command.UPDATE, SITE0, 2, path="pec0\\q",
                                  properties=(Property(P["PROPID_Q_LABEL"], "new"),)))


@situation("handle_in_sync_change", "delete-by-guid")
def _his_delete():
    """A delete names the object by GUID; its type is the second value (E-108 records the tombstone)."""
    qm = psc()
    put(qm, QUEUE, "pec0\\q", queue_props("pec0\\q", guid_of("q")), SITE0, 1)
    part(qm, SITE0).last_seq_number = seq(1)
    return _his(qm, SITE0, change(Command.DELETE, SITE0, 2, guid=guid_of("q"), properties=delete_props(1, QUEUE)))


@situation("handle_in_sync_change", "sync-creates")
def _his_sync():
    """A sync change of an object the replica lacks creates it under the change's GUID (E-112)."""
    return _his(bsc(), SITE1, change(Command.SYNC, SITE1, 1, guid=guid_of("m"),
                                     properties=(Property(P["PROPID_QM_PATHNAME"], "m1"),
                                                 Property(P["PROPID_QM_SERVICE"], 0))))


@situation("handle_in_sync_change", "create-fails")
def _his_fails():
    """A create with no properties has no object type: the directory refuses it and the status is returned."""
    return _his(psc(), SITE0, change(Command.CREATE, SITE0, 1, path="pec0\\q"))


@situation("handle_in_sync_change", "psc-acks-every-256")
def _his_ack():
    """A PSC whose LastSeqNumber reaches a multiple of 256 sends a PSC Ack to the authority."""
    qm = psc()
    part(qm, ENT).last_seq_number = seq(255)
    return _his(qm, ENT, change(Command.CREATE, ENT, 256, path="u", properties=(
        Property(P["PROPID_U_SID"], b"\x01"), Property(P["PROPID_U_ID"], guid_of("u")))))


@situation("handle_in_sync_change", "in-sync0-no-bsc-forwarding")
def _his_sync0():
    """A partition in sync0 does not pass changes to the BSCs and acknowledges only past PurgedSeqNumber."""
    qm = psc()
    p = part(qm, ENT)
    p.purge_state, p.purged_seq_number = PurgeState.SYNC0, seq(900)
    return _his(qm, ENT, change(Command.SYNC, ENT, 512, previous=0, guid=guid_of("c1"),
                                properties=(Property(P["PROPID_CN_NAME"], "cn1"),)))


@situation("handle_in_sync_change", "purge-trigger")
def _his_purge():
    """Past 256 changes since the last purge the replica purges what its authority allows."""
    qm = bsc()
    p = part(qm, SITE0)
    p.last_seq_number, p.allowed_purge_seq_number = seq(2000), seq(1500)
    qm.deleted_objects = [DeletedObject(guid_of("a"), SITE0, seq(10), int(QUEUE), 1),
                          DeletedObject(guid_of("b"), SITE0, seq(1800), int(QUEUE), 1)]
    return _his(qm, SITE0, change(Command.CREATE, SITE0, 2001, properties=queue_props("pec0\\q", guid_of("q"))))


# --- 3.1.7.2.4 Check Pending Changes -----------------------------------------------------------------------------


def _cpc(qm, partition_id, pending, *, last=0, window=None, purged=0):
    p = part(qm, partition_id)
    p.last_seq_number, p.purged_seq_number = seq(last), seq(purged)
    if window is not None:
        p.change_missing_window = seq(window)
    p.pending_changes.extend(pending)
    return qm, {"partition": p}


@situation("check_pending_changes", "purged-pending-dropped")
def _cpc_purged():
    """A pending change older than the purge horizon is removed."""
    return _cpc(psc(), SITE0, [change(Command.CREATE, SITE0, 9, previous=8, purged=1,
                                      properties=queue_props("pec0\\q"))], last=4, purged=3)


@situation("check_pending_changes", "in-order-beyond-window")
def _cpc_in_order():
    """An in-order pending change beyond the window is applied (E-136); literally a sync request is sent."""
    return _cpc(psc(), SITE0, [change(Command.CREATE, SITE0, 5, previous=4,
                                      properties=queue_props("pec0\\q5", guid_of("q5")))], last=4, window=0)


@situation("check_pending_changes", "gap-beyond-window")
def _cpc_gap():
    """A gap reaching past the window widens it and asks for the changes (E-136)."""
    return _cpc(psc(), SITE0, [change(Command.CREATE, SITE0, 9, previous=8, properties=queue_props("pec0\\q9"))],
                last=4, window=6)


@situation("check_pending_changes", "gap-within-window")
def _cpc_gap_inside():
    """A gap inside the outstanding window waits (clarified); literally the change is dropped (E-110)."""
    return _cpc(psc(), SITE0, [change(Command.CREATE, SITE0, 9, previous=8, properties=queue_props("pec0\\q9"))],
                last=4, window=20)


@situation("check_pending_changes", "chain-applied")
def _cpc_chain():
    """Pending changes that now follow LastSeqNumber are applied one after another."""
    pending = [change(Command.CREATE, SITE0, n, previous=n - 1, path=f"pec0\\q{n}",
                      properties=queue_props(f"pec0\\q{n}", guid_of(f"q{n}"))) for n in (5, 6)]
    return _cpc(psc(), SITE0, pending, last=4, window=30)


@situation("check_pending_changes", "already-applied-removed")
def _cpc_applied():
    """A pending change at or below LastSeqNumber is removed without being applied."""
    return _cpc(psc(), SITE0, [change(Command.CREATE, SITE0, 3, previous=2, properties=queue_props("pec0\\q3"))],
                last=4)


@situation("check_pending_changes", "bsc-sends-to-its-psc", now=5.0)
def _cpc_bsc():
    """A BSC's sync request for a gap goes to MyPSCName."""
    return _cpc(bsc(), SITE0, [change(Command.CREATE, SITE0, 9, previous=8, properties=queue_props("pec0\\q9"))],
                last=4, window=0)


@situation("check_pending_changes", "site-partition-of-another-psc")
def _cpc_other_site():
    """A gap in another PSC's site partition is asked of that PSC."""
    qm = psc()
    qm.partitions.append(DirectoryPartition(SITE2, PSC2))
    qm.psc_neighbors.append(DirectoryNeighbor(SITE2, PSC2))
    return _cpc(qm, SITE2, [change(Command.CREATE, SITE2, 3, previous=2, properties=queue_props("psc2\\q"))],
                last=0, window=0)

