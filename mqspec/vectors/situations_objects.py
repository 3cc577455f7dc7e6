"""Handler situations for MC-MQDSRP 3.1.7.2.5 to 3.1.7.2.12 (refimpl/mqdsrp_objects.py).

Each builder returns a queue manager and the event's arguments; its docstring names the branch.
"""

from __future__ import annotations

from mqspec.model.propvalue import Property
from mqspec.refimpl.mqdsrp_state import (
    DeletedObject,
    PurgeState,
)

from .handlers import (
    BSC11,
    CN,
    ENT,
    ENTERPRISE,
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
    P,
    bsc,
    enterprise_props,
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

# --- 3.1.7.2.5 Handle Directory Create -------------------------------------------------------------


def _create(qm, partition_id, object_type, path, properties, at=1, *, post=False, guid=None):
    return qm, {"partition": part(qm, partition_id), "object_type": int(object_type), "path_name": path,
                "properties": properties, "seq_number": seq(at), "post_create": post, "guid": guid}


@situation("handle_directory_create", "queue-at-a-replica")
def _create_queue():
    """A queue create at a replica creates the object and nothing else."""
    return _create(psc(), SITE0, QUEUE, "pec0\\q", queue_props("pec0\\q", guid_of("q")))


@situation("handle_directory_create", "object-exists")
def _create_exists():
    """A create of an object that exists fails with the directory's status."""
    qm = psc()
    put(qm, QUEUE, "pec0\\q", queue_props("pec0\\q", guid_of("q")), SITE0)
    return _create(qm, SITE0, QUEUE, "pec0\\q", queue_props("pec0\\q", guid_of("q2")), 2)


@situation("handle_directory_create", "site-of-another-psc")
def _create_site_psc():
    """A new site at a PSC: its partition, a sync request to its PSC, a PSC neighbor and its timer (E-105)."""
    return _create(psc(), ENT, SITE, "site2", site_props("site2", SITE2, PSC2))


@situation("handle_directory_create", "site-at-a-bsc")
def _create_site_bsc():
    """A new site at a BSC: a partition and a sync request, but no PSC neighbor (E-106)."""
    return _create(bsc(), ENT, SITE, "site2", site_props("site2", SITE2, PSC2))


@situation("handle_directory_create", "own-site")
def _create_own_site():
    """A site whose PSC is this server becomes MySitePartition."""
    return _create(psc(site_partition=False), ENT, SITE, "site1", site_props("site1", SITE1, PSC1))


@situation("handle_directory_create", "site-partition-exists")
def _create_site_again():
    """At the authority the site create runs twice; the second finds the partition (E-104)."""
    qm = pec()
    put(qm, SITE, "site1", site_props("site1", SITE1, PSC1), ENT)
    return _create(qm, ENT, SITE, "site1", site_props("site1", SITE1, PSC1), post=True)


@situation("handle_directory_create", "bsc-machine-in-own-site")
def _create_bsc_machine():
    """A machine with the BSC service in the PSC's own site becomes a BSC neighbor with its timer."""
    return _create(psc(bsc_neighbors=()), SITE1, MACHINE, BSC11, machine_props(BSC11, SITE1, SERVICE_BSC))


@situation("handle_directory_create", "bsc-machine-already-a-neighbor")
def _create_bsc_again():
    """The second run of a BSC machine create at the authority finds the neighbor (E-104)."""
    qm = psc()
    put(qm, MACHINE, BSC11, machine_props(BSC11, SITE1, SERVICE_BSC), SITE1)
    return _create(qm, SITE1, MACHINE, BSC11, machine_props(BSC11, SITE1, SERVICE_BSC), post=True)


@situation("handle_directory_create", "guid-named")
def _create_guid():
    """A GUID-named create is passed its GUID (E-112)."""
    return _create(psc(), ENT, CN, None, (Property(P["PROPID_CN_NAME"], "cn1"),), guid=guid_of("cn1"))


# --- 3.1.7.2.6 Handle Directory Update -------------------------------------------------------------


def _update(qm, partition_id, object_type, path, guid, properties, at=2, *, post=False):
    return qm, {"partition": part(qm, partition_id), "object_type": int(object_type), "path_name": path,
                "guid": guid, "properties": properties, "seq_number": seq(at), "post_update": post}


@situation("handle_directory_update", "object-missing")
def _update_missing():
    """An update of an object the directory lacks fails with MQDS_OBJECT_NOT_FOUND."""
    return _update(psc(), SITE0, QUEUE, "pec0\\none", None, (Property(P["PROPID_Q_LABEL"], "x"),))


@situation("handle_directory_update", "queue")
def _update_queue():
    """A queue update changes the object only."""
    qm = psc()
    put(qm, QUEUE, "pec0\\q", queue_props("pec0\\q", guid_of("q")), SITE0)
    return _update(qm, SITE0, QUEUE, "pec0\\q", None, (Property(P["PROPID_Q_LABEL"], "new"),))


@situation("handle_directory_update", "site-changes-psc")
def _update_site():
    """A site update that names a new PSC moves the partition's authority (Handle Site Update)."""
    qm = pec(psc_neighbors=((PSC1, SITE1),))
    put(qm, SITE, "site1", site_props("site1", SITE1, PSC1), ENT)
    return _update(qm, ENT, SITE, None, SITE1, site_props("site1", None, PSC2))


@situation("handle_directory_update", "enterprise-changes-pec")
def _update_enterprise():
    """An enterprise update that names a new PEC moves the enterprise partition's authority."""
    qm = psc()
    put(qm, ENTERPRISE, "enterprise", enterprise_props(PEC), ENT)
    return _update(qm, ENT, ENTERPRISE, "enterprise", None, (Property(P["PROPID_E_PECNAME"], "PEC9"),))


@situation("handle_directory_update", "machine-becomes-bsc")
def _update_machine():
    """A machine of the PSC's own site that takes the BSC service becomes a BSC neighbor."""
    qm = psc(bsc_neighbors=())
    put(qm, MACHINE, "m1", machine_props("m1", SITE1, 0), SITE1)
    return _update(qm, SITE1, MACHINE, "m1", None, (Property(P["PROPID_QM_SERVICE"], SERVICE_BSC),))


@situation("handle_directory_update", "post-update-at-the-authority")
def _update_post():
    """With iPostUpdate the directory was already updated: only the replication state follows."""
    qm = psc()
    put(qm, MACHINE, BSC11, machine_props(BSC11, SITE1, SERVICE_BSC), SITE1)
    return _update(qm, SITE1, MACHINE, BSC11, None, (Property(P["PROPID_QM_SERVICE"], 0),), post=True)


# --- 3.1.7.2.7 Handle Directory Delete -------------------------------------------------------------


def _delete(qm, partition_id, object_type, scope, path, guid, at=3, *, post=False):
    return qm, {"partition": part(qm, partition_id), "object_type": int(object_type), "scope": scope,
                "path_name": path, "guid": guid, "seq_number": seq(at), "post_delete": post}


@situation("handle_directory_delete", "object-missing-at-a-replica")
def _delete_missing():
    """A replica's delete of an object it lacks fails literally; clarified, it is applied with a tombstone (E-261)."""
    return _delete(psc(), SITE0, QUEUE, 1, None, guid_of("none"))


@situation("handle_directory_delete", "object-missing-at-the-authority")
def _delete_missing_authority():
    """At the partition's authority a delete of an object the directory lacks fails in both modes (E-261)."""
    return _delete(pec(), SITE0, QUEUE, 1, None, guid_of("none"))


@situation("handle_directory_delete", "queue-at-a-replica")
def _delete_queue():
    """A replica deletes the queue and records its tombstone (E-108)."""
    qm = psc()
    put(qm, QUEUE, "pec0\\q", queue_props("pec0\\q", guid_of("q")), SITE0)
    return _delete(qm, SITE0, QUEUE, 1, None, guid_of("q"))


@situation("handle_directory_delete", "queue-by-path")
def _delete_queue_path():
    """A path-named delete records the removed object's GUID in the tombstone (E-108)."""
    qm = psc()
    put(qm, QUEUE, "pec0\\q", queue_props("pec0\\q", guid_of("q")), SITE0)
    return _delete(qm, SITE0, QUEUE, 1, "pec0\\q", None)


@situation("handle_directory_delete", "site-at-the-pec")
def _delete_site():
    """A deleted site drops its partition and its PSC neighbor at the PEC."""
    qm = pec(psc_neighbors=((PSC1, SITE1), (PSC2, SITE2)))
    put(qm, SITE, "site2", site_props("site2", SITE2, PSC2), ENT)
    return _delete(qm, ENT, SITE, 1, None, SITE2)


@situation("handle_directory_delete", "bsc-machine-at-the-psc")
def _delete_bsc():
    """A deleted BSC machine drops its BSC neighbor at the PSC."""
    qm = psc()
    put(qm, MACHINE, BSC11, machine_props(BSC11, SITE1, SERVICE_BSC), SITE1)
    return _delete(qm, SITE1, MACHINE, 0, BSC11, None)


@situation("handle_directory_delete", "post-delete-tombstone-once")
def _delete_post():
    """With iPostDelete the object is gone already; the tombstone is not recorded twice."""
    qm = pec()
    qm.deleted_objects.append(DeletedObject(guid_of("q"), SITE0, seq(3), int(QUEUE), 1))
    return _delete(qm, SITE0, QUEUE, 1, "pec0\\q", guid_of("q"), post=True)


# --- 3.1.7.2.8 Handle Directory Sync ---------------------------------------------------------------


def _sync(qm, partition_id, object_type, path, guid, properties, at=5):
    return qm, {"partition": part(qm, partition_id), "object_type": int(object_type), "path_name": path,
                "guid": guid, "properties": properties, "seq_number": seq(at)}


@situation("handle_directory_sync", "creates-missing-object")
def _sync_create():
    """A sync change of an object the replica lacks creates it, under its GUID (E-112)."""
    return _sync(bsc(), SITE0, QUEUE, None, guid_of("q"), queue_props("pec0\\q"))


@situation("handle_directory_sync", "updates-present-object")
def _sync_update():
    """A sync change of an object the replica has updates it."""
    qm = bsc()
    put(qm, QUEUE, "pec0\\q", queue_props("pec0\\q", guid_of("q")), SITE0)
    return _sync(qm, SITE0, QUEUE, None, guid_of("q"), (Property(P["PROPID_Q_LABEL"], "synced"),))


@situation("handle_directory_sync", "enterprise")
def _sync_enterprise():
    """A synced enterprise object follows its PEC name (Handle Enterprise Update)."""
    return _sync(psc(), ENT, ENTERPRISE, None, guid_of("enterprise"), (Property(P["PROPID_E_NAME"], "e"),
                                                                        Property(P["PROPID_E_PECNAME"], PEC)))


@situation("handle_directory_sync", "site-creates-partition")
def _sync_site():
    """A synced site this server has no partition for gets one (E-114: the GUID names the site)."""
    return _sync(psc(), ENT, SITE, None, SITE2, (Property(P["PROPID_S_PATHNAME"], "site2"),
                                                 Property(P["PROPID_S_PSC"], PSC2)))


@situation("handle_directory_sync", "bsc-machine-at-the-psc")
def _sync_machine():
    """A synced BSC machine of the PSC's own site becomes a BSC neighbor (E-160: path from the directory)."""
    return _sync(psc(bsc_neighbors=()), SITE1, MACHINE, None, qm_guid(BSC11),
                 (Property(P["PROPID_QM_PATHNAME"], BSC11), Property(P["PROPID_QM_SERVICE"], SERVICE_BSC)))


@situation("handle_directory_sync", "unknown-type-fails")
def _sync_fails():
    """A sync change of no known object type fails in the directory."""
    return _sync(bsc(), SITE0, 0, None, guid_of("x"), ())


def sync0_marked_namesake(holder_partition=SITE0, *, state=PurgeState.SYNC0, mark=True):
    """A BSC in sync0 for site0 (3.3.7.10), holding the old queue pec0\\q (another GUID) in ``holder_partition``,
    marked deleted by the reset unless ``mark`` is false, and a sync change of the new pec0\\q."""
    qm = bsc()
    put(qm, QUEUE, "pec0\\q", queue_props("pec0\\q", guid_of("q-old")), holder_partition, at=3)
    if mark:
        qm.directory.reset_partition(holder_partition, 1)
    part(qm, SITE0).purge_state = state
    return _sync(qm, SITE0, QUEUE, None, guid_of("q"), queue_props("pec0\\q", label="new"))


@situation("handle_directory_sync", "sync0-deletes-marked-namesake")
def _sync0_namesake():
    """In sync0 the marked old object holding the new one's name is deleted first, then the object created (E-317)."""
    return sync0_marked_namesake()


# --- 3.1.7.2.9 Purge Deleted Objects ------------------------------------------------------------------


def _tombstones(partition_id, *seqs):
    return [DeletedObject(guid_of(f"gone{n}"), partition_id, seq(n), int(QUEUE), 1) for n in seqs]


def _purge(qm, partition_id, *, last, purged=0, allowed=0, tombstones=(), state=PurgeState.NORMAL):
    p = part(qm, partition_id)
    p.last_seq_number, p.purged_seq_number, p.allowed_purge_seq_number = seq(last), seq(purged), seq(allowed)
    p.purge_state = state
    qm.deleted_objects = _tombstones(partition_id, *tombstones)
    return qm, {"partition": p}


@situation("purge_deleted_objects", "young-partition")
def _purge_young():
    """Below 1024 changes nothing is purged (E-130); literally the subtraction wraps and purges all."""
    qm = pec()
    qm.psc_neighbors[0].acked_seq_number = seq(500)
    return _purge(qm, SITE0, last=600, tombstones=(10, 300))


@situation("purge_deleted_objects", "not-normal")
def _purge_sync0():
    """A partition that is not NORMAL purges nothing."""
    return _purge(bsc(), SITE0, last=5000, allowed=4000, tombstones=(10,), state=PurgeState.SYNC0)


@situation("purge_deleted_objects", "authority-every-psc-acked")
def _purge_acked():
    """The authority purges what every PSC neighbor acknowledged, keeping 1024 changes (E-130, E-133)."""
    qm = pec(psc_neighbors=((PSC1, SITE1), (PSC2, SITE2)))
    qm.psc_neighbors[0].acked_seq_number, qm.psc_neighbors[1].acked_seq_number = seq(3000), seq(2500)
    return _purge(qm, SITE0, last=3000, tombstones=(100, 1900, 2400, 2900))


@situation("purge_deleted_objects", "authority-enterprise-acks")
def _purge_enterprise():
    """For the enterprise partition the PEC uses the neighbors' AckedPECSeqNumber."""
    qm = pec()
    qm.psc_neighbors[0].acked_pec_seq_number = seq(1500)
    return _purge(qm, ENT, last=4000, tombstones=(1000, 2000))


@situation("purge_deleted_objects", "authority-not-acked")
def _purge_not_acked():
    """When a PSC has acknowledged nothing past PurgedSeqNumber the authority purges nothing."""
    qm = pec()
    return _purge(qm, SITE0, last=5000, purged=200, tombstones=(300,))


@situation("purge_deleted_objects", "authority-without-psc-neighbors")
def _purge_alone():
    """An authority with no PSC neighbor purges up to its buffer (E-132)."""
    return _purge(pec(psc_neighbors=()), SITE0, last=3000, tombstones=(100, 2500))


@situation("purge_deleted_objects", "replica-up-to-allowed")
def _purge_allowed():
    """A replica purges only what the authority's AllowedPurgeSeqNumber allows."""
    return _purge(bsc(), SITE0, last=5000, allowed=2000, tombstones=(1500, 2500))


@situation("purge_deleted_objects", "replica-allowed-behind")
def _purge_allowed_behind():
    """A replica whose allowed number is behind its PurgedSeqNumber purges nothing."""
    return _purge(bsc(), SITE0, last=5000, purged=3000, allowed=2000, tombstones=(3500,))


@situation("purge_deleted_objects", "replica-buffer")
def _purge_buffer():
    """A replica allowed past its buffer purges up to LastSeqNumber - 1024."""
    return _purge(bsc(), SITE0, last=3000, allowed=2900, tombstones=(1000, 1976, 1977, 2500))


# --- 3.1.7.2.10 Handle Enterprise Update ---------------------------------------------------------------


def _enterprise(qm, properties):
    return qm, {"partition": part(qm, ENT), "properties": properties}


@situation("handle_enterprise_update", "new-pec")
def _ent_new():
    """A new PEC name becomes the enterprise partition's authority."""
    return _enterprise(psc(), (Property(P["PROPID_E_PECNAME"], "PEC9"),))


@situation("handle_enterprise_update", "same-pec")
def _ent_same():
    """The same PEC name changes nothing."""
    return _enterprise(psc(), (Property(P["PROPID_E_PECNAME"], PEC),))


@situation("handle_enterprise_update", "no-pec-name")
def _ent_none():
    """An update without PROPID_E_PECNAME changes nothing."""
    return _enterprise(psc(), (Property(P["PROPID_E_NAME"], "renamed"),))


# --- 3.1.7.2.11 Handle Site Update ---------------------------------------------------------------------


def _site(qm, path, guid, properties, sync):
    return qm, {"path_name": path, "guid": guid, "properties": properties, "sync": sync}


@situation("handle_site_update", "no-psc-property")
def _site_no_psc():
    """An update that does not name a PSC changes nothing."""
    return _site(pec(), None, SITE1, (Property(P["PROPID_S_PATHNAME"], "site1"),), False)


@situation("handle_site_update", "known-partition-new-psc")
def _site_known():
    """A known site partition takes the new PSC as authority, and so does its PSC neighbor, whose timer follows (E-310)."""
    return _site(pec(), None, SITE1, (Property(P["PROPID_S_PSC"], PSC2),), False)


@situation("handle_site_update", "bsc-own-site-new-psc")
def _site_bsc_own():
    """A BSC's own site gets a new PSC: the partition's authority follows, and MyPSCName too when clarified (E-312)."""
    return _site(bsc(), None, SITE1, (Property(P["PROPID_S_PSC"], PSC2),), False)


@situation("handle_site_update", "path-named")
def _site_path():
    """A path-named update finds the partition through the site object (E-162)."""
    qm = pec()
    put(qm, SITE, "site1", site_props("site1", SITE1, PSC1), ENT)
    return _site(qm, "site1", None, (Property(P["PROPID_S_PSC"], PSC2),), False)


@situation("handle_site_update", "siteid-property")
def _site_siteid():
    """Without a GUID the update's PROPID_S_SITEID names the partition (E-162)."""
    return _site(pec(), "site1", None, site_props("site1", SITE1, PSC2), False)


@situation("handle_site_update", "unknown-not-sync")
def _site_unknown():
    """An update of a site with no partition here, outside a sync, changes nothing."""
    return _site(psc(), None, SITE2, (Property(P["PROPID_S_PSC"], PSC2),), False)


@situation("handle_site_update", "sync-new-site")
def _site_sync():
    """A synced site without a partition gets one, a sync request and a PSC neighbor (E-114)."""
    return _site(psc(), None, SITE2, (Property(P["PROPID_S_PSC"], PSC2),), True)


@situation("handle_site_update", "sync-with-siteid")
def _site_sync_siteid():
    """A synced site carrying PROPID_S_SITEID gets its partition in both modes."""
    return _site(psc(), None, SITE2, site_props("site2", SITE2, PSC2), True)


@situation("handle_site_update", "sync-at-a-bsc")
def _site_sync_bsc():
    """At a BSC a synced site gets a partition and a sync request, no PSC neighbor (E-106)."""
    return _site(bsc(), None, SITE2, site_props("site2", SITE2, PSC2), True)


@situation("handle_site_update", "sync-own-site")
def _site_sync_own():
    """A synced site whose PSC is this server becomes MySitePartition."""
    return _site(psc(site_partition=False), None, SITE1, site_props("site1", SITE1, PSC1), True)


@situation("handle_site_update", "sync-other-site-self-psc")
def _site_sync_mine_elsewhere():
    """A synced site of another site naming this server as PSC gets a partition but is not MySitePartition."""
    return _site(psc(), None, SITE2, site_props("site2", SITE2, PSC1), True)


# --- 3.1.7.2.12 Handle Machine Update ------------------------------------------------------------------


def _machine(qm, partition_id, path, guid, properties, sync=False):
    return qm, {"partition": part(qm, partition_id), "path_name": path, "guid": guid, "properties": properties,
                "sync": sync}


@situation("handle_machine_update", "no-service")
def _machine_no_service():
    """An update without PROPID_QM_SERVICE changes nothing."""
    return _machine(psc(), SITE1, "m1", None, (Property(P["PROPID_QM_OS"], 1),))


@situation("handle_machine_update", "becomes-bsc")
def _machine_bsc():
    """A machine of the own site with the BSC service becomes a BSC neighbor with its timer."""
    return _machine(psc(bsc_neighbors=()), SITE1, "m1", None, (Property(P["PROPID_QM_SERVICE"], SERVICE_BSC),))


@situation("handle_machine_update", "already-a-neighbor")
def _machine_again():
    """A BSC that is a neighbor already is not added twice."""
    return _machine(psc(), SITE1, BSC11, None, (Property(P["PROPID_QM_SERVICE"], SERVICE_BSC),))


@situation("handle_machine_update", "stops-being-bsc")
def _machine_stops():
    """A BSC that loses the service stops being a BSC neighbor."""
    return _machine(psc(), SITE1, BSC11, None, (Property(P["PROPID_QM_SERVICE"], 0),))


@situation("handle_machine_update", "guid-named")
def _machine_guid():
    """A GUID-named update finds the machine's path in the directory (E-160)."""
    qm = psc(bsc_neighbors=())
    put(qm, MACHINE, "m2", machine_props("m2", SITE1, 0), SITE1)
    return _machine(qm, SITE1, None, qm_guid("m2"), (Property(P["PROPID_QM_SERVICE"], SERVICE_BSC),), sync=True)


@situation("handle_machine_update", "other-site")
def _machine_other():
    """A machine of a partition that is not the PSC's own site changes nothing."""
    return _machine(psc(), SITE0, "m0", None, (Property(P["PROPID_QM_SERVICE"], SERVICE_BSC),))

