"""Handler situations that tell apart implementations which drop, negate or shift one guard: 3.2.7 and 3.3.

The server and client part of :mod:`.situations_guards` (refimpl/mqdsrp_server.py and
refimpl/mqdsrp_client.py): each situation was added because a mutant of the reference handler
passed every other vector.
"""

from __future__ import annotations

from mqspec.model.mqdsrp import ChangeRequestMessage, Command, Scope, SyncRequestMessage
from mqspec.model.seqnum import MIN_SEQ_NUMBER
from mqspec.refimpl.effects import TimerScope
from mqspec.refimpl.mqdsrp_client import SEQ_NUMBER_HEADER_INTERVAL
from mqspec.refimpl.mqdsrp_state import DeletedObject, PurgeState

from .handlers import (
    BSC11,
    ENT,
    PSC1,
    QUEUE,
    SITE0,
    SITE1,
    SITE2,
    bsc,
    change,
    delete_props,
    guid_of,
    part,
    pec,
    put,
    queue_props,
    seq,
    situation,
)
from .situations_client import _change_request

# --- 3.2.7.2 / 3.2.7.3 / 3.2.7.8 ---------------------------------------------------------------------------


@situation("receive_change_request", "delete-of-a-missing-object")
def _rcr_delete_missing():
    """A delete the authority cannot apply (no such object) records no tombstone, literally either."""
    dir_change = change(Command.DELETE, SITE0, 0, previous=0, path="pec0\\none", properties=delete_props(1, QUEUE))
    return pec(), {"message": ChangeRequestMessage(SITE1, SITE0, 7, PSC1, None, dir_change)}


def _sync_request(from_seq, to_seq, *, known=0, purged=1500, tombstones=()):
    qm = pec()
    p = part(qm, SITE0)
    p.last_seq_number, p.purged_seq_number = seq(3000), seq(purged)
    qm.deleted_objects = [DeletedObject(guid_of(f"gone{n}"), SITE0, seq(n), int(QUEUE), 1) for n in tombstones]
    return qm, {"message": SyncRequestMessage(SITE1, SITE0, seq(from_seq), seq(to_seq), seq(known), False,
                                              Scope.ENTERPRISE, PSC1)}


@situation("receive_sync_request", "from-past-purged")
def _rsr_from_past_purged():
    """A request starting at or past PurgedSeqNumber is answered with changes, not AlreadyPurged."""
    return _sync_request(2000, 2100)


@situation("receive_sync_request", "from-at-purged")
def _rsr_from_at_purged():
    """A request starting exactly at PurgedSeqNumber is answered with changes ("fromSeqNum <" is strict)."""
    return _sync_request(1500, 1600)


@situation("receive_sync_request", "requester-knows-the-purge")
def _rsr_known_purged():
    """A requester whose KnownPurgedSeqNumber is PurgedSeqNumber already knows the purge: no AlreadyPurged."""
    return _sync_request(1000, 1600, known=1500)


@situation("receive_sync_request", "tombstones-in-and-out-of-range")
def _rsr_tombstones():
    """Only tombstones with From <= SeqNumber <= To are sent (E-118): the one at From is, the one past To is not."""
    return _sync_request(1600, 1700, tombstones=(1600, 1650, 1800))


@situation("lookup_directory_objects", "queues-without-scope-flag")
def _ldo_no_scope():
    """Without the enterprise scope flag every queue is returned, in either reading (E-263 restricts scope 0x01)."""
    qm = pec()
    put(qm, QUEUE, "pec0\\a", queue_props("pec0\\a", guid_of("a"), scope=1), SITE0, 1)
    put(qm, QUEUE, "pec0\\b", queue_props("pec0\\b", guid_of("b"), scope=0), SITE0, 2)
    return qm, {"partition": part(qm, SITE0), "object_type": QUEUE, "from_seq": seq(0), "to_seq": seq(9),
                "scope": 0}


# --- 3.3 client ----------------------------------------------------------------------------------------


def _bsc_without_psc():
    """BSC11 before it knows its PSC: no site partition and no configured PSC name (MyPSCName empty)."""
    return bsc(psc_name=None, site_partition=False)


@situation("process_change_request", "bsc-without-a-psc")
def _pcr_bsc_no_psc():
    """A BSC that does not know its PSC sends the request to an empty destination name, and waits."""
    return _bsc_without_psc(), {"request": _change_request(ENT, BSC11), "origin": "client", "client_request": 1}


@situation("process_change_request", "bsc-partition-unknown")
def _pcr_bsc_unknown_partition():
    """A BSC forwards a request for a partition it lacks to its PSC and waits the forwarded time (20 s)."""
    return bsc(), {"request": _change_request(SITE2, BSC11, PSC1, 4), "origin": "client", "client_request": 2}


@situation("send_sync_request", "bsc-without-a-psc")
def _ssr_bsc_no_psc():
    """A BSC that does not know its PSC sends its sync request to an empty destination name."""
    qm = _bsc_without_psc()
    return qm, {"partition": part(qm, ENT)}


@situation("send_change_propagation", "header-due-exactly", now=50.0 + SEQ_NUMBER_HEADER_INTERVAL)
def _scp_due_exactly():
    """Exactly 20 minutes after this neighbor's last header a header is due again (">=")."""
    qm = pec()
    qm.last_seq_number_header_time = 50.0
    qm.last_seq_number_header_sent[(PSC1, TimerScope.INTERSITE.value)] = 50.0
    return qm, {"neighbor": qm.psc_neighbors[0], "scope": TimerScope.INTERSITE}


def _sync0(*, last, purged):
    qm = bsc()
    p = part(qm, SITE0)
    p.last_seq_number, p.purged_seq_number = seq(last), seq(purged)
    return qm, p


@situation("start_sync0_state", "already-purged-that-far")
def _sync0_purged_past():
    """A partition whose PurgedSeqNumber already reaches the authority's does not restart sync0."""
    qm, p = _sync0(last=10, purged=50)
    return qm, {"partition": p, "purged_seq_number": seq(40)}


@situation("start_sync0_state", "last-equals-purged")
def _sync0_last_equal():
    """A partition whose LastSeqNumber equals the authority's PurgedSeqNumber has lost nothing (">=")."""
    qm, p = _sync0(last=40, purged=0)
    return qm, {"partition": p, "purged_seq_number": seq(40)}


@situation("start_sync0_state", "purged-equals-purged")
def _sync0_purged_equal():
    """A partition whose PurgedSeqNumber equals the authority's does not restart sync0 (">=")."""
    qm, p = _sync0(last=10, purged=40)
    return qm, {"partition": p, "purged_seq_number": seq(40)}


@situation("complete_sync0_state", "keeps-other-tombstones")
def _complete_sync0_keeps():
    """Only this partition's MIN_SEQ_NUMBER tombstones go: another partition's, and this one's real ones, stay."""
    qm = bsc()
    p = part(qm, SITE0)
    p.purge_state = PurgeState.SYNC0
    qm.deleted_objects = [DeletedObject(guid_of("a"), SITE0, MIN_SEQ_NUMBER, int(QUEUE), 1),
                          DeletedObject(guid_of("b"), ENT, MIN_SEQ_NUMBER, int(QUEUE), 1),
                          DeletedObject(guid_of("c"), SITE0, seq(7), int(QUEUE), 1)]
    return qm, {"partition": p}
