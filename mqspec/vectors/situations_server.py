"""Handler situations for MC-MQDSRP 3.2 (refimpl/mqdsrp_server.py).

Each builder returns a queue manager and the event's arguments; its docstring names the branch.
"""

from __future__ import annotations

from mqspec.model.mqdsrp import (
    BSCAckMessage,
    ChangePropagationMessage,
    ChangeRequestMessage,
    Command,
    PartitionSeqNumbers,
    PSCAckMessage,
    Scope,
    SeqNumberHeader,
    SyncRequestMessage,
)
from mqspec.model.propvalue import Property
from mqspec.model.seqnum import MAX_SEQ_NUMBER, MIN_SEQ_NUMBER
from mqspec.refimpl.mqdsrp_state import (
    DeletedObject,
    PurgeState,
    lose_volatile_state,
)

from .handlers import (
    BSC01,
    BSC11,
    CN,
    ENT,
    MACHINE,
    PEC,
    PSC1,
    PSC2,
    QUEUE,
    SERVICE_BSC,
    SITE,
    SITE0,
    SITE1,
    SITE2,
    USER,
    P,
    bsc,
    change,
    delete_props,
    guid_of,
    machine_props,
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


@situation("server_initialization", "after-a-crash")
def _server_init():
    """3.2.3 performs the 3.1.3 initialization: a restarted PSC recomputes its non-persisted state."""
    qm = psc()
    lose_volatile_state(qm)
    return qm, {}


# --- 3.2.7.1 Receive Change Propagation -------------------------------------------------------------


def _propagation(qm, changes=(), header=None, flush=False):
    header = header or SeqNumberHeader(None, ())
    return qm, {"message": ChangePropagationMessage(SITE0, flush, tuple(changes), header)}


def _header(*entries, machine=PEC):
    return SeqNumberHeader(machine, tuple(PartitionSeqNumbers(pid, seq(last), seq(purged))
                                          for pid, last, purged in entries))


@situation("receive_change_propagation", "changes-no-header")
def _rcp_changes():
    """The changes are processed (Flush 0x00: iCheckFlush true) and an empty header ends the event."""
    return _propagation(psc(), [change(Command.CREATE, SITE0, 1, properties=queue_props("pec0\\q", guid_of("q"))),
                                change(Command.CREATE, SITE0, 2, properties=queue_props("pec0\\q2"))])


@situation("receive_change_propagation", "flush-site-create")
def _rcp_flush():
    """With Flush 0x01 a site create does not flush to the BSCs (iCheckFlush false)."""
    return _propagation(psc(), [change(Command.CREATE, ENT, 1, path="site2",
                                       properties=site_props("site2", SITE2, PSC2))], flush=True)


@situation("receive_change_propagation", "header-reveals-missed-changes")
def _rcp_missed():
    """A header ahead of the replica moves the window and sends a sync request (E-116)."""
    qm = psc()
    for p in qm.partitions:  # past the first sync reply: no window outstanding
        p.change_missing_window = MIN_SEQ_NUMBER
    return _propagation(qm, header=_header((ENT, 7, 0), (SITE0, 3, 0)))


@situation("receive_change_propagation", "header-at-a-bsc")
def _rcp_bsc():
    """At a BSC the header's MachineName becomes MyPSCName."""
    qm = bsc(psc_name=None)
    part(qm, SITE1).change_missing_window = MIN_SEQ_NUMBER
    return _propagation(qm, header=_header((SITE1, 4, 0), machine=PSC2))


@situation("receive_change_propagation", "header-entries-skipped")
def _rcp_skipped():
    """Unknown partitions, purged-behind entries, up-to-date and windowed entries send nothing."""
    qm = psc()
    p = part(qm, SITE0)
    p.purged_seq_number, p.last_seq_number = seq(5), seq(10)
    e = part(qm, ENT)
    e.last_seq_number, e.change_missing_window = seq(2), seq(9)
    return _propagation(qm, header=_header((SITE2, 9, 0), (SITE0, 20, 4), (SITE0, 8, 6), (ENT, 8, 1)))


@situation("receive_change_propagation", "header-with-the-window-at-max")
def _rcp_max_window():
    """With the window at MAX a header ahead asks again only when clarified (E-264); literally it is skipped."""
    return _propagation(psc(), header=_header((ENT, 8, 0), machine="PEC-new"))


@situation("receive_change_propagation", "header-with-the-window-at-max-in-sync0")
def _rcp_max_window_sync0():
    """In sync0 a header ahead re-sends the sync0 request when clarified, the window staying MAX; literally it is skipped (E-264)."""
    qm = psc()
    part(qm, ENT).purge_state = PurgeState.SYNC0
    return _propagation(qm, header=_header((ENT, 8, 0)))


@situation("receive_change_propagation", "header-of-a-moved-psc-at-a-bsc-in-sync0")
def _rcp_bsc_sync0_moved_psc():
    """A BSC in sync0 re-asks the PSC whose header this is, not the one it knew (E-316); literally it is skipped (E-264)."""
    qm = bsc()
    part(qm, ENT).purge_state = PurgeState.SYNC0
    return _propagation(qm, header=_header((ENT, 8, 0), machine=PSC2))


@situation("receive_change_propagation", "header-with-the-window-at-max-in-startsync0")
def _rcp_max_window_startsync0():
    """A partition left in STARTSYNC0 (a crash inside Start Sync0 State; the state persists) keeps its MAX window: the header sends nothing (E-264)."""
    qm = psc()
    part(qm, ENT).purge_state = PurgeState.STARTSYNC0
    return _propagation(qm, header=_header((ENT, 8, 0)))


@situation("receive_change_propagation", "header-at-the-window")
def _rcp_at_window():
    """A header equal to the window asks up to L + 1 literally; clarified, the window L already asks for it (E-116)."""
    qm = psc()
    e = part(qm, ENT)
    e.last_seq_number, e.change_missing_window = seq(2), seq(8)
    return _propagation(qm, header=_header((ENT, 8, 0)))


@situation("receive_change_propagation", "header-raises-allowed-purge")
def _rcp_allowed():
    """A header's PurgedSeqNumber beyond AllowedPurgeSeqNumber raises it (E-002)."""
    qm = psc()
    part(qm, SITE0).last_seq_number = seq(3000)
    return _propagation(qm, header=_header((SITE0, 3000, 1800)))


# --- 3.2.7.2 Receive Change Request -------------------------------------------------------------------


def _request(qm, partition_id, dir_change, *, requester=PSC1, request_id=7, psc_name=None, site=SITE1):
    return qm, {"message": ChangeRequestMessage(site, partition_id, request_id, requester, psc_name, dir_change)}


def _req_change(command, properties, *, path=None, guid=None):
    return change(command, ENT, 0, previous=0, properties=properties, path=path, guid=guid)


@situation("receive_change_request", "create-at-the-pec")
def _rcr_create():
    """The authority creates the object with LastSeqNumber + 1, propagates it and replies MQ_OK."""
    qm = pec()
    part(qm, ENT).last_seq_number = seq(4)
    return _request(qm, ENT, _req_change(Command.CREATE, (Property(P["PROPID_CN_NAME"], "cn1"),
                                                           Property(P["PROPID_CN_GUID"], guid_of("cn1"))), path="cn1"))


@situation("receive_change_request", "update-at-the-psc")
def _rcr_update():
    """A PSC owning the site updates a queue of its site for a BSC and replies."""
    qm = psc()
    put(qm, QUEUE, "psc1\\q", queue_props("psc1\\q", guid_of("q")), SITE1)
    dir_change = change(Command.UPDATE, SITE1, 0, previous=0, path="psc1\\q",
                        properties=(Property(P["PROPID_Q_LABEL"], "new"),))
    return _request(qm, SITE1, dir_change, requester=BSC11, psc_name=PSC1)


@situation("receive_change_request", "delete-by-path")
def _rcr_delete():
    """A path-named delete: the tombstone has the object's GUID (E-108); literally it has none."""
    qm = pec()
    put(qm, USER, None, (Property(P["PROPID_U_ID"], guid_of("u")), Property(P["PROPID_U_SID"], b"\x01")), ENT)
    put(qm, CN, "cn1", (Property(P["PROPID_CN_NAME"], "cn1"), Property(P["PROPID_CN_GUID"], guid_of("cn1"))), ENT)
    return _request(qm, ENT, _req_change(Command.DELETE, delete_props(1, CN), path="cn1"))


@situation("receive_change_request", "sync-command")
def _rcr_sync():
    """A sync command at the authority creates or updates the object (E-164)."""
    return _request(pec(), ENT, _req_change(Command.SYNC, (Property(P["PROPID_CN_NAME"], "cn2"),),
                                            guid=guid_of("cn2")))


@situation("receive_change_request", "change-fails")
def _rcr_fails():
    """A change the directory refuses is answered with its status and LastSeqNumber stays."""
    return _request(pec(), ENT, _req_change(Command.UPDATE, (Property(P["PROPID_CN_NAME"], "x"),), path="none"))


@situation("receive_change_request", "forwarded-to-the-authority")
def _rcr_forward():
    """A server that does not own the partition forwards the request and waits (3.3.7.1)."""
    qm = psc()
    dir_change = change(Command.CREATE, ENT, 0, previous=0, path="cn3",
                        properties=(Property(P["PROPID_CN_NAME"], "cn3"),))
    return _request(qm, ENT, dir_change, requester=BSC11, psc_name=PSC1)


# --- 3.2.7.3 Receive Sync Request ---------------------------------------------------------------------


def _sync_request(qm, partition_id, from_seq, to_seq, *, known=0, sync0=False, scope=Scope.ENTERPRISE,
                  requester=PSC1):
    return qm, {"message": SyncRequestMessage(SITE1, partition_id, seq(from_seq), seq(to_seq), seq(known), sync0,
                                              scope, requester)}


def _pec_with_objects():
    qm = pec()
    put(qm, SITE, "site0", site_props("site0", SITE0, PEC), ENT, 1)
    put(qm, CN, "cn1", (Property(P["PROPID_CN_NAME"], "cn1"), Property(P["PROPID_CN_GUID"], guid_of("cn1"))), ENT, 3)
    qm.deleted_objects = [DeletedObject(guid_of("gone"), ENT, seq(2), int(CN), 1),
                          DeletedObject(guid_of("q-gone"), SITE0, seq(2), int(QUEUE), 1),
                          # a path-named delete recorded literally by 3.2.7.2: no Identifier (E-108)
                          DeletedObject(None, ENT, seq(1), int(CN), 1)]
    part(qm, ENT).last_seq_number = seq(3)
    return qm


@situation("receive_sync_request", "unknown-partition")
def _rsr_unknown():
    """A request for a partition the server does not have takes no action."""
    return _sync_request(psc(), SITE2, 0, 5)


@situation("receive_sync_request", "partition-in-sync0")
def _rsr_sync0():
    """A partition that is not NORMAL does not answer."""
    qm = psc()
    part(qm, ENT).purge_state = PurgeState.SYNC0
    return _sync_request(qm, ENT, 0, 5, requester=BSC11)


@situation("receive_sync_request", "already-purged")
def _rsr_purged():
    """A range below the purge horizon is answered with an AlreadyPurgedMessage."""
    qm = pec()
    part(qm, ENT).purged_seq_number, part(qm, ENT).last_seq_number = seq(50), seq(60)
    return _sync_request(qm, ENT, 10, 20, known=5)


@situation("receive_sync_request", "full-sync")
def _rsr_full():
    """A request up to MAX is answered with every object and tombstone of the partition, chained (E-118, E-119)."""
    return _sync_request(_pec_with_objects(), ENT, 0, MAX_SEQ_NUMBER.value)


@situation("receive_sync_request", "sync0-completing")
def _rsr_completing():
    """A sync0 request that does not reach LastSeqNumber is answered COMPLETING."""
    return _sync_request(_pec_with_objects(), ENT, 0, 2, sync0=True)


@situation("receive_sync_request", "sync0-completed")
def _rsr_completed():
    """A sync0 request up to MAX is answered COMPLETED."""
    return _sync_request(_pec_with_objects(), ENT, 0, MAX_SEQ_NUMBER.value, sync0=True)


@situation("receive_sync_request", "bsc-asks-the-psc-for-a-replica")
def _rsr_replica():
    """A PSC answers its BSC for a partition it only replicates (E-117)."""
    qm = psc()
    put(qm, QUEUE, "pec0\\q", queue_props("pec0\\q", guid_of("q"), scope=1), SITE0, 2)
    put(qm, MACHINE, "pec0", machine_props("pec0", SITE0, 0), SITE0, 1)
    part(qm, SITE0).last_seq_number = seq(2)
    return _sync_request(qm, SITE0, 0, MAX_SEQ_NUMBER.value, scope=Scope.NONE, requester=BSC11)


@situation("receive_sync_request", "replica-stamped-with-the-allowed-purge-point")
def _rsr_replica_allowed():
    """A PSC that purged its replica less than its headers allow stamps its reply with the allowed point (E-314)."""
    qm = psc()
    put(qm, QUEUE, "pec0\\q", queue_props("pec0\\q", guid_of("q"), scope=1), SITE0, 300)
    part(qm, SITE0).last_seq_number = seq(300)
    part(qm, SITE0).allowed_purge_seq_number = seq(40)
    return _sync_request(qm, SITE0, 0, MAX_SEQ_NUMBER.value, scope=Scope.NONE, requester=BSC11)


@situation("receive_sync_request", "psc-requester-scope-0x01")
def _rsr_scope():
    """Scope 0x01: literal sends only queues with PROPID_Q_SCOPE 1, clarified every queue (E-263); E-124 as well."""
    qm = pec()
    put(qm, QUEUE, "pec0\\pub", queue_props("pec0\\pub", guid_of("pub"), scope=1), SITE0, 1)
    put(qm, QUEUE, "pec0\\site", queue_props("pec0\\site", guid_of("site-q"), scope=0), SITE0, 2)
    part(qm, SITE0).last_seq_number = seq(2)
    return _sync_request(qm, SITE0, 0, 2)


# --- 3.2.7.4 / 3.2.7.5 acknowledgements ----------------------------------------------------------------


def _psc_ack(qm, partition_id, at, name=PSC1):
    return qm, {"message": PSCAckMessage(SITE1, SITE1, partition_id, seq(at), name)}


@situation("receive_psc_ack", "not-a-psc")
def _rpa_bsc():
    """A BSC ignores PSC acks."""
    return _psc_ack(bsc(), SITE1, 256)


@situation("receive_psc_ack", "unknown-neighbor")
def _rpa_unknown():
    """An ack from a server that is not a PSC neighbor is ignored."""
    return _psc_ack(pec(), ENT, 256, PSC2)


@situation("receive_psc_ack", "enterprise-at-the-pec")
def _rpa_enterprise():
    """An ack of the enterprise partition sets the neighbor's AckedPECSeqNumber."""
    return _psc_ack(pec(), ENT, 512)


@situation("receive_psc_ack", "own-site")
def _rpa_site():
    """An ack of the server's own site partition sets the neighbor's AckedSeqNumber."""
    return _psc_ack(pec(), SITE0, 256)


def _bsc_ack(qm, name=BSC11):
    return qm, {"message": BSCAckMessage(SITE1, qm_guid(name), name)}


@situation("receive_bsc_ack", "not-a-psc")
def _rba_bsc():
    """A BSC ignores BSC acks."""
    return _bsc_ack(bsc())


@situation("receive_bsc_ack", "unknown-neighbor")
def _rba_unknown():
    """An ack from a server that is not a BSC neighbor is ignored."""
    return _bsc_ack(psc(), "BSC99")


@situation("receive_bsc_ack", "records-the-time", now=3600.5)
def _rba_known():
    """A BSC neighbor's ack sets its LastAckedTime to the current time."""
    return _bsc_ack(psc())


# --- 3.2.7.6 Send Change Reply / 3.2.7.7 Send Already Purged ------------------------------------------


def _reply(qm, status, requester, psc_name=None):
    request = ChangeRequestMessage(SITE1, SITE1, 11, requester, psc_name,
                                   change(Command.UPDATE, SITE1, 0, previous=0, path="psc1\\q"))
    return qm, {"status": status, "request": request}


@situation("send_change_reply", "to-a-neighbor")
def _scr_neighbor():
    """A requester that is a neighbor gets the reply directly."""
    return _reply(psc(), 0, BSC11, PSC1)


@situation("send_change_reply", "through-the-psc")
def _scr_psc():
    """A requester that is not a neighbor gets the reply through its PSC."""
    return _reply(pec(), 0xC00E0001, "BSC12", PSC1)


@situation("send_change_reply", "psc-name-is-self")
def _scr_self():
    """When PSCName names this server the reply goes to the requester itself (E-165)."""
    return _reply(psc(bsc_neighbors=()), 0, BSC11, PSC1)


@situation("send_change_reply", "psc-requester-not-a-neighbor")
def _scr_psc_requester():
    """A PSC requester with no PSCName and no neighbor entry gets the reply (E-122)."""
    return _reply(pec(psc_neighbors=()), 0, PSC2)


@situation("send_already_purged", "to-the-requester")
def _sap():
    """The AlreadyPurgedMessage carries the partition's PurgedSeqNumber."""
    qm = pec()
    part(qm, SITE0).purged_seq_number = seq(1024)
    return qm, {"partition": part(qm, SITE0), "requester_name": BSC01}


# --- 3.2.7.8 Lookup Directory Objects ------------------------------------------------------------------


def _lookup(qm, partition_id, object_type, from_seq, to_seq, scope=0):
    return qm, {"partition": part(qm, partition_id), "object_type": object_type, "from_seq": seq(from_seq),
                "to_seq": seq(to_seq), "scope": scope}


@situation("lookup_directory_objects", "machines-in-range")
def _ldo_machines():
    """Objects with From <= SEQNUM <= To become sync changes named by GUID; absent properties are left out (E-124)."""
    qm = pec()
    for n, name in enumerate(("m1", "m2", "m3"), start=1):
        put(qm, MACHINE, name, machine_props(name, SITE0, SERVICE_BSC if n == 2 else 0), SITE0, n)
    return _lookup(qm, SITE0, MACHINE, 2, 3)


@situation("lookup_directory_objects", "queues-enterprise-scope")
def _ldo_queues():
    """With scope 0x01 literal returns only queues whose PROPID_Q_SCOPE is 1; clarified returns every queue (E-263)."""
    qm = pec()
    put(qm, QUEUE, "pec0\\a", queue_props("pec0\\a", guid_of("a"), scope=1), SITE0, 1)
    put(qm, QUEUE, "pec0\\b", queue_props("pec0\\b", guid_of("b"), scope=0), SITE0, 2)
    return _lookup(qm, SITE0, QUEUE, 0, 9, scope=1)


@situation("lookup_directory_objects", "no-property-read")
def _ldo_empty():
    """A user with none of the change properties still names its type by its first PROPID (E-124)."""
    qm = pec()
    put(qm, USER, None, (Property(P["PROPID_U_ID"], guid_of("u")),), ENT, 4)
    return _lookup(qm, ENT, USER, 0, 9)


@situation("lookup_directory_objects", "sites")
def _ldo_sites():
    """Site objects of the enterprise partition become sync changes."""
    qm = pec()
    put(qm, SITE, "site0", site_props("site0", SITE0, PEC), ENT, 1)
    put(qm, SITE, "site1", site_props("site1", SITE1, PSC1), ENT, 2)
    return _lookup(qm, ENT, SITE, 0, 9)

