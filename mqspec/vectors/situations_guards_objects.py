"""Handler situations that tell apart implementations which drop, negate or shift one guard: 3.1.7.2.5-12.

The objects part of :mod:`.situations_guards` (refimpl/mqdsrp_objects.py): each situation was
added because a mutant of the reference handler passed every other vector.
"""

from __future__ import annotations

from mqspec.model.propvalue import Property
from mqspec.refimpl.mqdsrp_state import DeletedObject, DirectoryNeighbor, DirectoryPartition, PurgeState

from .handlers import (
    BSC11,
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
from .situations_objects import sync0_marked_namesake

# --- 3.1.7.2.5 - 3.1.7.2.7 ------------------------------------------------------------------------------


def _create(qm, partition_id, object_type, path, properties, guid=None):
    return qm, {"partition": part(qm, partition_id), "object_type": int(object_type), "path_name": path,
                "properties": properties, "seq_number": seq(1), "post_create": False, "guid": guid}


@situation("handle_directory_create", "bsc-creates-a-bsc-machine")
def _create_bsc_machine_at_bsc():
    """A BSC that creates a BSC machine of its site adds no BSC neighbor (only "If the queue manager is a PSC")."""
    return _create(bsc(), SITE1, MACHINE, "m9", machine_props("m9", SITE1, SERVICE_BSC))


@situation("handle_directory_create", "plain-machine-of-the-site")
def _create_plain_machine():
    """A PSC that creates a machine of its site without the BSC service adds no BSC neighbor."""
    return _create(psc(bsc_neighbors=()), SITE1, MACHINE, "m9", machine_props("m9", SITE1, 0))


@situation("handle_directory_create", "bsc-machine-of-another-site")
def _create_bsc_machine_elsewhere():
    """A PSC that creates a BSC machine of another site's partition adds no BSC neighbor."""
    return _create(psc(bsc_neighbors=()), SITE0, MACHINE, "m9", machine_props("m9", SITE0, SERVICE_BSC))


@situation("handle_directory_create", "bsc-machine-named-by-guid")
def _create_bsc_machine_by_guid():
    """A BSC machine created by GUID alone gets a BSC neighbor whose MachineName is empty (no path name)."""
    return _create(psc(bsc_neighbors=()), SITE1, MACHINE, None, machine_props("m9", SITE1, SERVICE_BSC),
                   guid=qm_guid("m9"))


@situation("handle_directory_update", "site-missing")
def _update_site_missing():
    """An update of a site the directory lacks fails with MQDS_OBJECT_NOT_FOUND before Handle Site Update runs."""
    qm = pec()
    return qm, {"partition": part(qm, ENT), "object_type": int(SITE), "path_name": "site9", "guid": None,
                "properties": site_props("site9", None, PSC1), "seq_number": seq(2), "post_update": False}


@situation("handle_directory_update", "bsc-machine-at-a-bsc")
def _update_machine_at_bsc():
    """A BSC that updates a machine of its site to the BSC service adds no BSC neighbor (only a PSC does)."""
    qm = bsc()
    put(qm, MACHINE, "m1", machine_props("m1", SITE1, 0), SITE1)
    return qm, {"partition": part(qm, SITE1), "object_type": int(MACHINE), "path_name": "m1", "guid": None,
                "properties": (Property(P["PROPID_QM_SERVICE"], SERVICE_BSC),), "seq_number": seq(2),
                "post_update": False}


@situation("handle_directory_update", "queue-with-a-machine-property")
def _update_queue_with_service():
    """A queue update whose properties include PROPID_QM_SERVICE is no machine update: no BSC neighbor."""
    qm = psc(bsc_neighbors=())
    put(qm, QUEUE, "psc1\\q", queue_props("psc1\\q", guid_of("q")), SITE1)
    return qm, {"partition": part(qm, SITE1), "object_type": int(QUEUE), "path_name": "psc1\\q", "guid": None,
                "properties": (Property(P["PROPID_QM_SERVICE"], SERVICE_BSC),), "seq_number": seq(2),
                "post_update": False}


@situation("handle_directory_create", "queue-with-a-machine-property")
def _create_queue_with_service():
    """A queue created with PROPID_QM_SERVICE among its properties is no machine: no BSC neighbor."""
    return _create(psc(bsc_neighbors=()), SITE1, QUEUE, "psc1\\q",
                   (*queue_props("psc1\\q", guid_of("q")), Property(P["PROPID_QM_SERVICE"], SERVICE_BSC)))


def _delete(qm, partition_id, object_type, path, guid, at=3, *, post=False, scope=1):
    return qm, {"partition": part(qm, partition_id), "object_type": int(object_type), "scope": scope,
                "path_name": path, "guid": guid, "seq_number": seq(at), "post_delete": post}


@situation("handle_directory_delete", "post-delete-by-path")
def _delete_post_path():
    """At the authority (iPostDelete) a path-named delete has no GUID to record: no tombstone (E-108)."""
    return _delete(pec(), SITE0, QUEUE, "pec0\\q", None, post=True)


@situation("handle_directory_delete", "tombstone-of-another-object-at-that-number")
def _delete_other_tombstone():
    """A tombstone of another object at the same SeqNumber does not stand for this one: a tombstone is added (E-108)."""
    qm = psc()
    put(qm, QUEUE, "pec0\\q", queue_props("pec0\\q", guid_of("q")), SITE0)
    qm.deleted_objects = [DeletedObject(guid_of("other"), SITE0, seq(3), int(QUEUE), 1)]
    return _delete(qm, SITE0, QUEUE, None, guid_of("q"))


@situation("handle_directory_delete", "older-tombstone-of-the-object")
def _delete_older_tombstone():
    """A tombstone of the same object at an older SeqNumber does not stand for this delete: a tombstone is added."""
    qm = psc()
    put(qm, QUEUE, "pec0\\q", queue_props("pec0\\q", guid_of("q")), SITE0)
    qm.deleted_objects = [DeletedObject(guid_of("q"), SITE0, seq(1), int(QUEUE), 1)]
    return _delete(qm, SITE0, QUEUE, None, guid_of("q"))


@situation("handle_directory_delete", "bsc-machine-by-guid")
def _delete_bsc_machine_by_guid():
    """A BSC machine deleted by GUID loses its BSC neighbor: the name comes from the removed object (E-108)."""
    qm = psc(bsc_neighbors=(BSC11,))
    put(qm, MACHINE, BSC11, machine_props(BSC11, SITE1, SERVICE_BSC), SITE1)
    return _delete(qm, SITE1, MACHINE, None, qm_guid(BSC11))


@situation("handle_directory_delete", "site-at-a-psc")
def _delete_site_at_psc():
    """A PSC that applies the delete of the PEC's site keeps that partition and the PEC as its neighbor (E-318's
    guard: the PEC owns the enterprise partition too); literally only the PEC drops a site's partition."""
    qm = psc()
    put(qm, SITE, "site0", site_props("site0", SITE0, PEC), ENT)
    return _delete(qm, ENT, SITE, None, SITE0)


def _site2_at(qm):
    """``qm`` knowing site2 (PSC2) as a partition and a site object, and its PSC as a neighbor if ``qm`` is a PSC."""
    qm.partitions.append(DirectoryPartition(SITE2, PSC2))
    if qm.is_psc:
        qm.psc_neighbors.append(DirectoryNeighbor(SITE2, PSC2))
    put(qm, SITE, "site2", site_props("site2", SITE2, PSC2), ENT)
    return _delete(qm, ENT, SITE, None, SITE2)


@situation("handle_directory_delete", "other-site-at-a-psc")
def _delete_other_site_at_psc():
    """A PSC that applies another site's delete drops its partition and its PSC neighbor (E-318); literally it keeps them."""
    return _site2_at(psc())


@situation("handle_directory_delete", "other-site-at-a-bsc")
def _delete_other_site_at_bsc():
    """A BSC that applies another site's delete drops its partition (E-318); literally it keeps it."""
    return _site2_at(bsc())


@situation("handle_directory_delete", "own-site-at-the-pec")
def _delete_own_site_at_pec():
    """The PEC drops even its own site's partition, as the text says (E-318 keeps a server's own site elsewhere only)."""
    qm = pec()
    put(qm, SITE, "site0", site_props("site0", SITE0, PEC), ENT)
    return _delete(qm, ENT, SITE, None, SITE0)


@situation("handle_directory_delete", "own-site-at-a-psc")
def _delete_own_site_at_psc():
    """A PSC that applies its own site's delete keeps its partition and neighbors (E-318 drops other sites' only)."""
    qm = psc()
    qm.psc_neighbors.append(DirectoryNeighbor(SITE2, PSC2))
    put(qm, SITE, "site1", site_props("site1", SITE1, PSC1), ENT)
    return _delete(qm, ENT, SITE, None, SITE1)


@situation("handle_directory_delete", "machine-at-a-bsc")
def _delete_machine_at_bsc():
    """A BSC that applies a BSC machine's delete changes no neighbor collection (only a PSC does)."""
    qm = bsc()
    qm.bsc_neighbors = [DirectoryNeighbor(SITE1, "BSC12")]
    put(qm, MACHINE, "BSC12", machine_props("BSC12", SITE1, SERVICE_BSC), SITE1)
    return _delete(qm, SITE1, MACHINE, "BSC12", None)


@situation("handle_directory_delete", "site-named-like-a-bsc")
def _delete_site_named_like_bsc():
    """The delete of a site whose name is a BSC neighbor's machine name keeps that neighbor (machines only)."""
    qm = psc(bsc_neighbors=(BSC11,))
    put(qm, SITE, BSC11, site_props(BSC11, guid_of("site-bsc"), PEC), ENT)
    return _delete(qm, ENT, SITE, BSC11, None)


@situation("handle_directory_sync", "enterprise-changes-pec")
def _sync_enterprise():
    """A sync of the enterprise object that names a new PEC moves the enterprise partition's authority."""
    qm = psc()
    put(qm, ENTERPRISE, "enterprise", enterprise_props(PEC), ENT)
    return qm, {"partition": part(qm, ENT), "object_type": int(ENTERPRISE), "path_name": None,
                "guid": guid_of("enterprise"), "properties": enterprise_props("PEC9"), "seq_number": seq(5)}


@situation("handle_directory_sync", "bsc-machine-at-a-bsc")
def _sync_machine_at_bsc():
    """A BSC that syncs a BSC machine of its own site adds no BSC neighbor (only "If the queue manager is a PSC")."""
    qm = bsc()
    return qm, {"partition": part(qm, SITE1), "object_type": int(MACHINE), "path_name": None,
                "guid": qm_guid("BSC12"), "properties": machine_props("BSC12", SITE1, SERVICE_BSC),
                "seq_number": seq(5)}


@situation("handle_directory_sync", "sync0-live-namesake-refused")
def _sync0_live_namesake():
    """In sync0 a namesake the reset did not mark (seq not MIN) keeps its name: the create is refused (E-317)."""
    return sync0_marked_namesake(mark=False)


@situation("handle_directory_sync", "normal-marked-namesake-refused")
def _normal_marked_namesake():
    """Outside SYNC0 even a namesake at MIN_SEQ_NUMBER keeps its name: the create is refused (E-317 is sync0's)."""
    return sync0_marked_namesake(state=PurgeState.NORMAL)


@situation("handle_directory_sync", "sync0-namesake-of-another-partition-refused")
def _sync0_other_partition_namesake():
    """In sync0 a marked namesake of another partition keeps its name: the create is refused (E-317)."""
    return sync0_marked_namesake(ENT)


def _purge(qm, partition_id, *, last, purged=0, allowed=0, tombstones=(), other=()):
    p = part(qm, partition_id)
    p.last_seq_number, p.purged_seq_number, p.allowed_purge_seq_number = seq(last), seq(purged), seq(allowed)
    qm.deleted_objects = [DeletedObject(guid_of(f"gone{n}"), partition_id, seq(n), int(QUEUE), 1) for n in tombstones]
    qm.deleted_objects += [DeletedObject(guid_of(f"elsewhere{n}"), ENT, seq(n), int(QUEUE), 1) for n in other]
    return qm, {"partition": p}


@situation("purge_deleted_objects", "replica-already-purged-past-the-buffer")
def _purge_done():
    """When PurgedSeqNumber is at or past LastSeqNumber - 1024 nothing is purged, not even older tombstones left over."""
    return _purge(bsc(), SITE0, last=3100, purged=3000, allowed=5000, tombstones=(1500,))


@situation("purge_deleted_objects", "replica-purged-at-the-buffer")
def _purge_at_buffer():
    """PurgedSeqNumber equal to LastSeqNumber - 1024 is "greater than or equal": nothing is purged."""
    return _purge(bsc(), SITE0, last=3100, purged=2076, allowed=5000, tombstones=(2076,))


@situation("purge_deleted_objects", "authority-acked-up-to-purged")
def _purge_acked_equal():
    """An authority whose PSC neighbors acknowledged exactly PurgedSeqNumber purges nothing ("<=")."""
    qm = pec()
    qm.psc_neighbors[0].acked_seq_number = seq(1500)
    return _purge(qm, SITE0, last=3000, purged=1500, tombstones=(1400,))


@situation("purge_deleted_objects", "replica-allowed-below-purged")
def _purge_allowed_below():
    """A replica whose AllowedPurgeSeqNumber is below PurgedSeqNumber purges nothing, older tombstones included."""
    return _purge(bsc(), SITE0, last=3000, purged=1500, allowed=1000, tombstones=(900,))


@situation("purge_deleted_objects", "replica-allowed-equals-purged")
def _purge_allowed_equal():
    """A replica whose AllowedPurgeSeqNumber equals PurgedSeqNumber purges the tombstones up to it."""
    return _purge(bsc(), SITE0, last=3000, purged=1500, allowed=1500, tombstones=(1400, 1600))


@situation("purge_deleted_objects", "other-partitions-tombstones-kept")
def _purge_other_partition():
    """Only the partition's own tombstones are purged; another partition's at the same numbers stay."""
    return _purge(bsc(), SITE0, last=3000, allowed=2900, tombstones=(1000,), other=(1000, 1200))


@situation("handle_site_update", "sync-site-id-property-wins")
def _site_sync_siteid():
    """A sync change's PROPID_S_SITEID names the new partition, before the change's GUID (E-114 only fills a gap)."""
    qm = psc()
    return qm, {"path_name": None, "guid": guid_of("site-object"),
                "properties": site_props("site9", guid_of("site9"), PSC2), "sync": True}


@situation("handle_machine_update", "update-without-service-keeps-the-neighbor")
def _machine_no_service():
    """An update of a BSC machine without PROPID_QM_SERVICE leaves its BSC neighbor in place."""
    qm = psc(bsc_neighbors=(BSC11,))
    return qm, {"partition": part(qm, SITE1), "path_name": BSC11, "guid": None,
                "properties": (Property(P["PROPID_QM_QUOTA"], 100),), "sync": False}


@situation("handle_machine_update", "path-given-guid-unknown")
def _machine_path_and_unknown_guid():
    """A machine named by path keeps that path even when its GUID names no object: the neighbor is the path."""
    qm = psc(bsc_neighbors=())
    return qm, {"partition": part(qm, SITE1), "path_name": "m9", "guid": qm_guid("m9"),
                "properties": (Property(P["PROPID_QM_SERVICE"], SERVICE_BSC),), "sync": False}


@situation("handle_machine_update", "unknown-machine-by-guid")
def _machine_unknown_guid():
    """A BSC machine named only by a GUID the directory lacks becomes a BSC neighbor with an empty MachineName."""
    qm = psc(bsc_neighbors=())
    return qm, {"partition": part(qm, SITE1), "path_name": None, "guid": qm_guid("m9"),
                "properties": (Property(P["PROPID_QM_SERVICE"], SERVICE_BSC),), "sync": False}


@situation("handle_site_update", "psc-of-its-own-site-renamed")
def _site_own_psc_renamed():
    """A PSC whose own site gets a new PSC name moves the partition's authority; MyPSCName is a BSC's only (E-312)."""
    qm = psc()
    put(qm, SITE, "site1", site_props("site1", SITE1, PSC1), ENT)
    return qm, {"path_name": None, "guid": SITE1, "properties": site_props("site1", None, "PSC9"), "sync": False}


def _own_site_as_replica():
    qm = psc(site_partition=False, bsc_neighbors=())
    qm.partitions.append(DirectoryPartition(SITE1, "PSC0"))  # created by 3.1.7.2.5 after initialization
    qm.psc_neighbors.append(DirectoryNeighbor(SITE1, "PSC0"))
    return qm


@situation("handle_site_update", "psc-named-the-new-psc-of-its-own-site")
def _site_psc_takes_its_own_site():
    """A PSC holding its own site's partition as a replica of PSC0 (learned by replication before the move) is
    named its new PSC: clarified it owns the partition, and the old PSC's neighbor and timer go (E-315)."""
    return _own_site_as_replica(), {"path_name": None, "guid": SITE1, "properties": site_props("site1", None, PSC1),
                                    "sync": False}


@situation("handle_site_update", "psc-sees-its-own-site-move-elsewhere")
def _site_psc_own_site_elsewhere():
    """The same PSC sees its own site's PSC become PSC9, not itself: the neighbor follows PSC9 and it stays a replica."""
    return _own_site_as_replica(), {"path_name": None, "guid": SITE1, "properties": site_props("site1", None, "PSC9"),
                                    "sync": False}


@situation("handle_site_update", "psc-named-the-psc-of-another-site")
def _site_psc_named_for_another_site():
    """A PSC named the PSC of another site it replicates takes no authority there: only its own site's is its (E-315)."""
    qm = psc()
    return qm, {"path_name": None, "guid": SITE0, "properties": site_props("site0", None, PSC1), "sync": False}


@situation("handle_site_update", "bsc-named-the-psc-of-its-own-site")
def _site_bsc_named_for_its_own_site():
    """A BSC named the PSC of its own site is no PSC: it only follows the name as its MyPSCName (E-312, not E-315)."""
    qm = bsc()
    return qm, {"path_name": None, "guid": SITE1, "properties": site_props("site1", None, BSC11), "sync": False}


@situation("handle_site_update", "bsc-sees-another-site-renamed")
def _site_other_renamed_at_bsc():
    """A BSC that sees another site's PSC renamed keeps its MyPSCName: only its own site's PSC is its PSC (E-312)."""
    qm = bsc()
    put(qm, SITE, "site0", site_props("site0", SITE0, PEC), ENT)
    return qm, {"path_name": None, "guid": SITE0, "properties": site_props("site0", None, "PEC9"), "sync": False}
