"""Handler situations for MC-MQDSRP 3.3 (refimpl/mqdsrp_client.py).

Each builder returns a queue manager and the event's arguments; its docstring names the branch.
"""

from __future__ import annotations

from mqspec.model import mqdsrp
from mqspec.model.mqdsrp import (
    AlreadyPurgedMessage,
    ChangeReplyMessage,
    ChangeRequestMessage,
    Command,
    CompleteSync0,
    Scope,
    SyncReplyMessage,
    SyncRequestMessage,
)
from mqspec.model.propvalue import Property
from mqspec.model.seqnum import MAX_SEQ_NUMBER, MIN_SEQ_NUMBER
from mqspec.refimpl.effects import TimerScope
from mqspec.refimpl.mqdsrp_state import (
    DeletedObject,
    PendingChangeRequest,
    PurgeState,
    lose_volatile_state,
)
from mqspec.refimpl.transport import replication_queue_direct

from .handlers import (
    BSC01,
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
    guid_of,
    part,
    pec,
    psc,
    put,
    queue_props,
    seq,
    situation,
)

# --- 3.3.3 Initialization ------------------------------------------------------------------------


@situation("client_initialization", "pec-restart")
def _init_pec():
    """A PEC starts its neighbors' timers and asks the PSCs for their site partitions."""
    qm = pec(bsc_neighbors=(BSC01,))
    lose_volatile_state(qm)
    return qm, {}


@situation("client_initialization", "psc-restart")
def _init_psc():
    """A PSC starts its timers and asks the authorities of the partitions it replicates."""
    qm = psc()
    lose_volatile_state(qm)
    return qm, {}


@situation("client_initialization", "bsc-first-start")
def _init_bsc():
    """A new BSC starts its BSC Ack Timer and asks its PSC for the enterprise partition."""
    from mqspec.refimpl.mqdsrp_state import Role

    from .handlers import new_qm

    return new_qm(BSC11, Role.BSC, SITE1, psc=PSC1), {}


# --- 3.3.6 timers ------------------------------------------------------------------------------------


@situation("change_propagation_timer_event", "psc-neighbor", now=600.0)
def _timer_psc():
    """The intersite timer sends the neighbor's changes and starts the next instance."""
    qm = pec()
    qm.psc_neighbors[0].available_changes.append(change(Command.CREATE, ENT, 1, properties=queue_props("x")))
    return qm, {"neighbor_name": PSC1, "scope": TimerScope.INTERSITE}


@situation("change_propagation_timer_event", "bsc-neighbor", now=2.0)
def _timer_bsc():
    """The intrasite timer of a BSC neighbor sends to the BSC."""
    return psc(), {"neighbor_name": BSC11, "scope": TimerScope.INTRASITE}


@situation("change_propagation_timer_event", "neighbor-removed")
def _timer_gone():
    """The timer of a neighbor that was removed stops."""
    return psc(bsc_neighbors=()), {"neighbor_name": BSC11, "scope": TimerScope.INTRASITE}


@situation("bsc_ack_timer_event", "sends-to-the-psc")
def _bsc_ack():
    """A BSC acknowledges to MyPSCName and starts the 12-hour timer."""
    return bsc(), {}


@situation("bsc_ack_timer_event", "psc-unknown")
def _bsc_ack_nowhere():
    """A BSC that does not know its PSC only starts the next timer."""
    return bsc(psc_name=None, site_partition=False), {}


# --- 3.3.7.1 Process Change Request ----------------------------------------------------------------------


def _change_request(partition_id, requester=PSC1, psc_name=None, request_id=3):
    return ChangeRequestMessage(SITE1, partition_id, request_id, requester, psc_name,
                                change(Command.UPDATE, partition_id, 0, previous=0, path="obj",
                                       properties=(Property(P["PROPID_Q_LABEL"], "x"),)))


@situation("process_change_request", "psc-to-the-authority")
def _pcr_psc():
    """A PSC sends the request to the partition's authority and waits 10 seconds."""
    return psc(), {"request": _change_request(SITE0), "origin": "client", "client_request": 2}


@situation("process_change_request", "bsc-through-its-psc")
def _pcr_bsc():
    """A BSC sends the request to its PSC, which is not the authority: it waits 20 seconds."""
    return bsc(), {"request": _change_request(ENT, BSC11, PSC1), "origin": "client", "client_request": 1}


@situation("process_change_request", "unknown-partition-client")
def _pcr_unknown():
    """A partition the server does not have ends the request with MQDS_UNKNOWN_SOURCE."""
    return psc(), {"request": _change_request(SITE2), "origin": "client", "client_request": 9}


@situation("process_change_request", "unknown-partition-forwarded")
def _pcr_unknown_forward():
    """A forwarded request for an unknown partition is answered with MQDS_UNKNOWN_SOURCE."""
    return psc(), {"request": _change_request(SITE2, BSC11, PSC1), "origin": "forward", "client_request": 0}


def _waiting(qm, request, origin="client", client_request=4):
    qm.pending_requests[(request.requester_name, request.request_identifier)] = PendingChangeRequest(
        request.request_identifier, request, origin, client_request)
    return qm


@situation("change_request_wait_expired", "client-request-times-out")
def _expired_client():
    """When the wait ends without a reply the client's request completes with MQDS_NO_RSP_FROM_OWNER."""
    request = _change_request(SITE0)
    return _waiting(psc(), request), {"key": (PSC1, 3)}


@situation("change_request_wait_expired", "forwarded-request-times-out")
def _expired_forward():
    """A forwarded request that times out is answered with MQDS_NO_RSP_FROM_OWNER."""
    request = _change_request(ENT, BSC11, PSC1)
    return _waiting(psc(), request, "forward", None), {"key": (BSC11, 3)}


@situation("change_request_wait_expired", "already-answered")
def _expired_done():
    """A timer whose request was answered already does nothing."""
    return psc(), {"key": (PSC1, 3)}


# --- 3.3.7.2 Send Change Propagation ----------------------------------------------------------------------


def _propagate(qm, neighbor, scope):
    return qm, {"neighbor": neighbor, "scope": scope}


@situation("send_change_propagation", "first-intersite-with-header", now=10.0)
def _scp_pec():
    """The first intersite send carries a SeqNumberHeader with the PEC's enterprise and site partitions."""
    qm = pec()
    part(qm, ENT).last_seq_number = seq(9)
    qm.psc_neighbors[0].available_changes.append(change(Command.CREATE, ENT, 9, properties=queue_props("x")))
    return _propagate(qm, qm.psc_neighbors[0], TimerScope.INTERSITE)


@situation("send_change_propagation", "intrasite-header-every-partition", now=2.0)
def _scp_intrasite():
    """An intrasite header lists every partition: own ones with PurgedSeqNumber, others with the allowed number."""
    qm = psc()
    part(qm, SITE0).allowed_purge_seq_number = seq(77)
    part(qm, SITE1).purged_seq_number = seq(5)
    return _propagate(qm, qm.bsc_neighbors[0], TimerScope.INTRASITE)


@situation("send_change_propagation", "header-not-due", now=100.0)
def _scp_not_due():
    """Within 20 minutes of this neighbor's last header no header is sent."""
    qm = pec()
    qm.last_seq_number_header_time = 50.0
    qm.last_seq_number_header_sent[(PSC1, "Intersite")] = 50.0
    return _propagate(qm, qm.psc_neighbors[0], TimerScope.INTERSITE)


@situation("send_change_propagation", "header-per-neighbor", now=100.0)
def _scp_per_neighbor():
    """Another neighbor's recent header does not hold this one's back (E-137); literally it does."""
    qm = pec(psc_neighbors=((PSC1, SITE1), (PSC2, SITE2)))
    qm.last_seq_number_header_time = 50.0
    qm.last_seq_number_header_sent[(PSC1, "Intersite")] = 50.0
    return _propagate(qm, qm.psc_neighbors[1], TimerScope.INTERSITE)


@situation("send_change_propagation", "psc-without-site-partition", now=10.0)
def _scp_no_entries():
    """A PSC with no site partition yet has nothing for an intersite header."""
    qm = psc(site_partition=False)
    return _propagate(qm, qm.psc_neighbors[0], TimerScope.INTERSITE)


# --- 3.3.7.3 / 3.3.7.4 -----------------------------------------------------------------------------------


@situation("send_sync_request", "psc-to-the-authority")
def _ssr_psc():
    """A PSC asks the partition's authority with the enterprise scope."""
    qm = psc()
    part(qm, SITE0).last_seq_number, part(qm, SITE0).change_missing_window = seq(5), seq(9)
    return qm, {"partition": part(qm, SITE0)}


@situation("send_sync_request", "bsc-to-its-psc")
def _ssr_bsc():
    """A BSC asks MyPSCName, with no scope."""
    qm = bsc()
    return qm, {"partition": part(qm, ENT)}


@situation("send_sync_request", "in-sync0")
def _ssr_sync0():
    """A partition in sync0 asks with IsSync0 set."""
    qm = bsc()
    part(qm, SITE0).purge_state = PurgeState.SYNC0
    return qm, {"partition": part(qm, SITE0)}


@situation("send_sync_request", "startsync0-sends-nothing")
def _ssr_start():
    """A partition in STARTSYNC0 sends nothing."""
    qm = bsc()
    part(qm, SITE0).purge_state = PurgeState.STARTSYNC0
    return qm, {"partition": part(qm, SITE0)}


@situation("send_psc_ack", "to-the-authority")
def _spa():
    """The ack goes to the partition's authority with this PSC's site as PSCSiteID (E-126)."""
    qm = psc()
    return qm, {"partition": part(qm, ENT), "last_seq_number": seq(512)}


# --- 3.3.7.5 Receive Sync Reply -------------------------------------------------------------------------


def _sync_reply(qm, partition_id, from_seq, to_seq, changes=(), *, purged=0, complete=CompleteSync0.NOT_IN_SYNC0):
    return qm, {"message": SyncReplyMessage(SITE0, partition_id, seq(from_seq), seq(to_seq), seq(purged), complete,
                                            tuple(changes))}


def _sync_change(at, name, previous=None):
    return change(Command.SYNC, SITE0, at, previous=previous, guid=guid_of(name),
                  properties=queue_props(f"pec0\\{name}"))


@situation("receive_sync_reply", "unknown-partition")
def _rsr_unknown():
    """A reply for a partition the server does not have is ignored."""
    return _sync_reply(psc(), SITE2, 0, 5)


@situation("receive_sync_reply", "purged-behind")
def _rsr_behind():
    """A reply whose PurgedSeqNumber is below the partition's is ignored."""
    qm = psc()
    part(qm, SITE0).purged_seq_number = seq(10)
    return _sync_reply(qm, SITE0, 0, 5, purged=3)


@situation("receive_sync_reply", "first-full-sync")
def _rsr_full():
    """The first reply applies its changes and closes the MAX window."""
    return _sync_reply(psc(), SITE0, 0, 2, [_sync_change(1, "a", 0), _sync_change(2, "b", 1)])


@situation("receive_sync_reply", "empty-answer-to-the-window")
def _rsr_empty():
    """An empty reply answering the window moves LastSeqNumber to ToSeqNumber."""
    qm = psc()
    p = part(qm, SITE0)
    p.last_seq_number, p.change_missing_window = seq(3), seq(7)
    return _sync_reply(qm, SITE0, 3, 7)


@situation("receive_sync_reply", "empty-answer-window-min")
def _rsr_empty_min():
    """An empty reply for a MIN window does not move LastSeqNumber back (E-166)."""
    qm = psc()
    p = part(qm, SITE0)
    p.last_seq_number, p.change_missing_window = seq(3), MIN_SEQ_NUMBER
    return _sync_reply(qm, SITE0, 3, 0)


@situation("receive_sync_reply", "changes-then-pending")
def _rsr_pending():
    """Changes filling a gap let the pending changes apply."""
    qm = psc()
    p = part(qm, SITE0)
    p.last_seq_number, p.change_missing_window = seq(1), seq(3)
    p.pending_changes.append(change(Command.CREATE, SITE0, 4, previous=3, path="pec0\\d",
                                    properties=queue_props("pec0\\d")))
    return _sync_reply(qm, SITE0, 1, 3, [_sync_change(2, "b", 1), _sync_change(3, "c", 2)])


@situation("receive_sync_reply", "sync0-completed")
def _rsr_sync0_done():
    """In sync0 a COMPLETED reply raises Complete Sync0 State (E-127)."""
    qm = bsc()
    put(qm, QUEUE, "pec0\\old", queue_props("pec0\\old", guid_of("old")), SITE0, 0)
    p = part(qm, SITE0)
    p.purge_state, p.purged_seq_number = PurgeState.SYNC0, seq(40)
    return _sync_reply(qm, SITE0, 0, 45, [_sync_change(45, "a", 0)], purged=40, complete=CompleteSync0.COMPLETED)


@situation("receive_sync_reply", "sync0-completing")
def _rsr_sync0_more():
    """In sync0 a COMPLETING reply asks for the rest."""
    qm = bsc()
    p = part(qm, SITE0)
    p.purge_state, p.purged_seq_number = PurgeState.SYNC0, seq(40)
    return _sync_reply(qm, SITE0, 0, 41, [_sync_change(41, "a", 0)], purged=40, complete=CompleteSync0.COMPLETING)


@situation("receive_sync_reply", "sync0-not-in-sync0-answer")
def _rsr_sync0_other():
    """In sync0 a NOT_IN_SYNC0 reply only applies its changes."""
    qm = bsc()
    p = part(qm, SITE0)
    p.purge_state, p.purged_seq_number = PurgeState.SYNC0, seq(40)
    return _sync_reply(qm, SITE0, 0, 41, [_sync_change(41, "a", 0)], purged=40)


# --- 3.3.7.6 - 3.3.7.9 -------------------------------------------------------------------------------------


@situation("receive_change_reply", "completes-the-client-request")
def _rcr_client():
    """The reply resumes the waiting request: it completes with the reply's Result (E-129)."""
    return _waiting(psc(), _change_request(SITE0)), {"message": ChangeReplyMessage(SITE0, 3, 0xC00E0505, PSC1)}


@situation("receive_change_reply", "answers-the-forwarded-request")
def _rcr_forward():
    """A forwarded request's reply is passed on to its requester."""
    qm = _waiting(psc(), _change_request(ENT, BSC11, PSC1), "forward", None)
    return qm, {"message": ChangeReplyMessage(SITE0, 3, 0, BSC11)}


@situation("receive_change_reply", "no-such-request")
def _rcr_none():
    """A reply no request waits for is ignored."""
    return psc(), {"message": ChangeReplyMessage(SITE0, 3, 0, PSC1)}


@situation("receive_change_reply", "same-id-other-requester")
def _rcr_other():
    """Replies are matched by requester and identifier (E-125); literally the identifier alone matches."""
    qm = _waiting(psc(), _change_request(ENT, BSC11, PSC1), "forward", None)
    return qm, {"message": ChangeReplyMessage(SITE0, 3, 0, PSC1)}


def _purged(qm, partition_id, at):
    return qm, {"message": AlreadyPurgedMessage(SITE0, partition_id, seq(at))}


@situation("receive_already_purged", "unknown-partition")
def _rap_unknown():
    """An AlreadyPurgedMessage for an unknown partition is ignored."""
    return _purged(bsc(), SITE2, 40)


@situation("receive_already_purged", "caught-up")
def _rap_caught_up():
    """A replica already at or past the purged number ignores it."""
    qm = bsc()
    part(qm, SITE0).last_seq_number = seq(50)
    return _purged(qm, SITE0, 40)


@situation("receive_already_purged", "purged-already-known")
def _rap_known():
    """A replica whose PurgedSeqNumber is there already ignores it."""
    qm = bsc()
    part(qm, SITE0).purged_seq_number = seq(40)
    return _purged(qm, SITE0, 40)


@situation("receive_already_purged", "starts-sync0")
def _rap_sync0():
    """A replica behind the purge horizon starts sync0 (E-134)."""
    qm = bsc()
    put(qm, QUEUE, "pec0\\q", queue_props("pec0\\q", guid_of("q")), SITE0, 3)
    part(qm, SITE0).last_seq_number = seq(3)
    return _purged(qm, SITE0, 40)


@situation("receive_change_request_nack", "owner-not-reached")
def _nack():
    """A Nack of the waiting request completes it with MQDS_OWNER_NOT_REACHED."""
    request = _change_request(SITE0)
    return _waiting(psc(), request), {"request": request}


@situation("receive_change_request_nack", "no-such-request")
def _nack_none():
    """A Nack no request waits for is ignored."""
    return psc(), {"request": _change_request(SITE0)}


def _request_nack(body, klass):
    return psc(), {"body": body, "message_class": klass, "destination_format_name": replication_queue_direct(PEC)}


_SYNC_REQUEST = SyncRequestMessage(SITE1, ENT, seq(3), seq(9), seq(0), False, Scope.ENTERPRISE, PSC1)


@situation("receive_request_nack", "bad-signature-resends")
def _rrn_resend():
    """A NackBadSignature resends the body to the machine of its destination queue."""
    return _request_nack(mqdsrp.encode(_SYNC_REQUEST), 0x8006)


@situation("receive_request_nack", "other-nack-ignored")
def _rrn_other():
    """Any other Nack class takes no action."""
    return _request_nack(mqdsrp.encode(_SYNC_REQUEST), 0xC000)


@situation("receive_request_nack", "undecodable-body")
def _rrn_bad():
    """A body that is no replication message is not resent."""
    return _request_nack(bytes(17) + b"\x02\x01", 0x8006)


# --- 3.3.7.10 / 3.3.7.11 sync0 ------------------------------------------------------------------------


@situation("start_sync0_state", "resets-the-partition")
def _start_sync0():
    """Every object and tombstone is marked, the partition reset and a sync0 request sent."""
    qm = bsc()
    put(qm, QUEUE, "pec0\\q", queue_props("pec0\\q", guid_of("q")), SITE0, 3)
    put(qm, QUEUE, "psc1\\q", queue_props("psc1\\q", guid_of("q1")), SITE1, 2)
    qm.deleted_objects = [DeletedObject(guid_of("gone"), SITE0, seq(2), int(QUEUE), 1)]
    p = part(qm, SITE0)
    p.last_seq_number = seq(3)
    p.pending_changes.append(change(Command.CREATE, SITE0, 9, previous=8, properties=queue_props("pec0\\x")))
    return qm, {"partition": p, "purged_seq_number": seq(40)}


@situation("start_sync0_state", "nothing-to-do")
def _start_sync0_no():
    """A partition already past the purged number does not start sync0."""
    qm = bsc()
    part(qm, SITE0).last_seq_number = seq(50)
    return qm, {"partition": part(qm, SITE0), "purged_seq_number": seq(40)}


@situation("complete_sync0_state", "not-in-sync0")
def _complete_no():
    """A NORMAL partition takes no action."""
    qm = bsc()
    return qm, {"partition": part(qm, SITE0)}


@situation("complete_sync0_state", "deletes-what-was-not-resent")
def _complete():
    """Objects and tombstones still at MIN are deleted, the partition is NORMAL and pending changes apply."""
    qm = bsc()
    put(qm, QUEUE, "pec0\\stale", queue_props("pec0\\stale", guid_of("stale")), SITE0, 0)
    put(qm, QUEUE, "pec0\\kept", queue_props("pec0\\kept", guid_of("kept")), SITE0, 45)
    qm.deleted_objects = [DeletedObject(guid_of("gone"), SITE0, MIN_SEQ_NUMBER, int(QUEUE), 1)]
    p = part(qm, SITE0)
    p.purge_state, p.last_seq_number, p.purged_seq_number = PurgeState.SYNC0, seq(45), seq(40)
    p.change_missing_window = MAX_SEQ_NUMBER
    p.pending_changes.append(change(Command.CREATE, SITE0, 46, previous=45, path="pec0\\new",
                                    properties=queue_props("pec0\\new", guid_of("new"))))
    return qm, {"partition": p}


@situation("complete_sync0_state", "completesync0-state")
def _complete_3():
    """A partition in COMPLETESYNC0 completes too (E-135)."""
    qm = bsc()
    p = part(qm, SITE0)
    p.purge_state = PurgeState.COMPLETESYNC0
    return qm, {"partition": p}


