"""Handler situations for MC-MQDSRP 3.1.3, 3.1.5 and 3.1.7.1 (refimpl/mqdsrp_common.py).

3.1.7.2.1 to 3.1.7.2.4, the other events of that module, are in :mod:`.situations_changes`.

Each builder returns a queue manager and the event's arguments; its docstring names the branch.
"""

from __future__ import annotations

from mqspec.model import mqdsrp
from mqspec.model.mqdsrp import (
    AlreadyPurgedMessage,
    BSCAckMessage,
    ChangePropagationMessage,
    ChangeReplyMessage,
    ChangeRequestMessage,
    Command,
    CompleteSync0,
    PSCAckMessage,
    Scope,
    SyncReplyMessage,
    SyncRequestMessage,
)
from mqspec.model.propvalue import Property
from mqspec.refimpl.mqdsrp_state import (
    DeletedObject,
    DirectoryPartition,
    Role,
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

NORMAL, NACK_BAD_SIGNATURE, NACK_REACH_QUEUE_TIMEOUT = 0, 0x8006, 0xC000


def _crashed(qm):
    """The queue manager after a crash: everything 3.1.1 does not persist is lost."""
    for p in qm.partitions:
        p.pending_changes.append(change(Command.UPDATE, p.partition_id, 9, previous=7))
    lose_volatile_state(qm)
    return qm


# --- 3.1.3 initialization --------------------------------------------------------------------------


@situation("replication_state_initialization", "pec-first-start")
def _pec_first_start():
    """A PEC with no partitions creates the enterprise partition with itself as authority."""
    return new_qm(PEC, Role.PEC, SITE0), {}


@situation("replication_state_initialization", "psc-first-start")
def _psc_first_start():
    """A PSC with no partitions creates the enterprise partition with the PEC as authority."""
    return new_qm(PSC1, Role.PSC, SITE1), {}


@situation("replication_state_initialization", "bsc-first-start-configured-psc")
def _bsc_first_start():
    """A BSC without its site partition takes MyPSCName from its configuration."""
    return new_qm(BSC11, Role.BSC, SITE1, psc=PSC1), {}


@situation("replication_state_initialization", "bsc-restart-psc-from-site-partition")
def _bsc_restart():
    """A BSC that has its site partition takes MyPSCName from that partition's authority."""
    qm = _crashed(bsc(psc_name=PSC2))
    return qm, {}


@situation("replication_state_initialization", "pec-restart-resets-volatile")
def _pec_restart():
    """After a crash the non-persisted attributes are reset and MyEnterprisePartition/MySitePartition recomputed."""
    return _crashed(pec()), {}


@situation("directory_neighbor_initialization", "clears-available-changes")
def _neighbors_cleared():
    """Every PSC and BSC neighbor's AvailableChangeCollection is emptied."""
    qm = pec(bsc_neighbors=("BSC01",))
    for n in (*qm.psc_neighbors, *qm.bsc_neighbors):
        n.available_changes.append(change(Command.CREATE, ENT, 3))
    return qm, {}


@situation("replication_queue_initialization", "opens-the-queue")
def _queue_opened():
    """The replication queue is opened for receive."""
    return new_qm(PSC1, Role.PSC, SITE1), {}


@situation("common_initialization", "psc-first-start")
def _common_first_start():
    """3.1.3 runs replication state, neighbor and queue initialization in order."""
    return new_qm(PSC1, Role.PSC, SITE1), {}


# --- 3.1.5.1 Receiving Replication Messages --------------------------------------------------------


def _receive(body, klass=NORMAL, destination=""):
    return {"body": body if isinstance(body, bytes) else mqdsrp.encode(body), "message_class": klass,
            "destination_format_name": destination}


@situation("receiving_replication_messages", "empty-body")
def _empty_body():
    """An empty body takes no action."""
    return psc(), _receive(b"")


@situation("receiving_replication_messages", "version-not-zero")
def _version_not_zero():
    """A body whose Version is not 0x00 takes no action."""
    body = bytearray(mqdsrp.encode(BSCAckMessage(SITE1, qm_guid(BSC11), BSC11)))
    body[0] = 1
    return psc(), _receive(bytes(body))


@situation("receiving_replication_messages", "normal-undecodable")
def _undecodable():
    """A Normal message whose body no replication message has is dropped."""
    return psc(), _receive(bytes(17) + b"\x05\x01")


_BY_OPERATION = {
    "change-propagation": lambda: (psc(), ChangePropagationMessage(
        SITE0, False, (change(Command.CREATE, SITE0, 1, properties=queue_props("pec0\\q1", guid_of("q1"))),))),
    "change-request": lambda: (pec(), ChangeRequestMessage(
        SITE1, ENT, 7, PSC1, None, change(Command.CREATE, ENT, 0, previous=0, path="u1",
                                          properties=(Property(P["PROPID_U_ID"], guid_of("u1")),)))),
    "sync-request": lambda: (pec(), SyncRequestMessage(SITE1, SITE0, seq(0), seq(2**64 - 1), seq(0), False,
                                                       Scope.ENTERPRISE, PSC1)),
    "sync-reply": lambda: (psc(), SyncReplyMessage(SITE0, SITE0, seq(0), seq(1), seq(0), CompleteSync0.NOT_IN_SYNC0,
                                                   (change(Command.SYNC, SITE0, 1, guid=guid_of("q1"),
                                                           properties=queue_props("pec0\\q1")),))),
    "change-reply": lambda: (_waiting_psc(), ChangeReplyMessage(SITE0, 1, 0, PSC1)),
    "already-purged": lambda: (bsc(), AlreadyPurgedMessage(SITE1, SITE1, seq(40))),
    "psc-ack": lambda: (pec(), PSCAckMessage(SITE1, SITE1, ENT, seq(256), PSC1)),
    "bsc-ack": lambda: (psc(), BSCAckMessage(SITE1, qm_guid(BSC11), BSC11)),
}


def _dispatch(name):
    def build():
        qm, message = _BY_OPERATION[name]()
        return qm, _receive(message)

    build.__doc__ = f"A Normal {name.replace('-', ' ')} message is dispatched to its handler."
    situation("receiving_replication_messages", f"normal-{name}", now=42.0)(build)


for _name in _BY_OPERATION:
    _dispatch(_name)


def _waiting_psc():
    qm = psc()
    _pending_request(qm)
    return qm


def _pending_request(qm):
    """PSC1 waiting for PEC0's reply to request 1 (a directory client's create)."""
    from mqspec.refimpl.effects import Context

    ctx = Context(qm.machine_name)
    common_change_remote_object(qm, ctx)
    return ctx.effects[0].body


def common_change_remote_object(qm, ctx):
    from mqspec.refimpl.mqdsrp_common import change_remote_object

    change_remote_object(qm, ctx, 0x00, int(QUEUE), "pec0\\q9", None, SITE0, queue_props("pec0\\q9"),
                         client_request=5)


@situation("receiving_replication_messages", "nack-change-request")
def _nack_change_request():
    """A Nack of a ChangeRequestMessage resumes the waiting request with MQDS_OWNER_NOT_REACHED."""
    qm = psc()
    request = _pending_request(qm)
    return qm, _receive(request, NACK_REACH_QUEUE_TIMEOUT, replication_queue_direct(PEC))


@situation("receiving_replication_messages", "nack-change-request-undecodable")
def _nack_change_request_bad():
    """A Nack whose body says ChangeRequest but does not decode is dropped."""
    return psc(), _receive(bytes(17) + b"\x01\x00", NACK_REACH_QUEUE_TIMEOUT)


@situation("receiving_replication_messages", "nack-bad-signature-sync-request")
def _nack_other():
    """A NackBadSignature of a SyncRequestMessage goes to Receive Request Nack, which resends it."""
    request = SyncRequestMessage(SITE1, ENT, seq(3), seq(9), seq(0), False, Scope.ENTERPRISE, PSC1)
    return psc(), _receive(request, NACK_BAD_SIGNATURE, replication_queue_direct(PEC))


@situation("receiving_replication_messages", "nack-unknown-operation")
def _nack_unknown_op():
    """A Nack whose Operation byte is no replication message takes no action."""
    return psc(), _receive(bytes(17) + b"\x09", NACK_BAD_SIGNATURE)


@situation("receiving_replication_messages", "other-class")
def _other_class():
    """A message of a class that is neither Normal nor a Nack (an ACK) takes no action."""
    return psc(), _receive(BSCAckMessage(SITE1, qm_guid(BSC11), BSC11), 0x0002)


# --- 3.1.5.2 Processing Directory Changes ------------------------------------------------------------


@situation("processing_directory_changes", "unknown-partition-skipped")
def _processing():
    """A change of a partition the server does not have is skipped; the next one is handled."""
    changes = (change(Command.CREATE, SITE2, 1, properties=queue_props("psc2\\q")),
               change(Command.CREATE, SITE0, 1, properties=queue_props("pec0\\q1", guid_of("q1"))))
    return psc(), {"changes": changes, "check_flush": True}


# --- 3.1.7.1.1 Change Remote Object --------------------------------------------------------------------


def _remote(qm, operation, object_type, path, guid, partition_id, properties):
    return qm, {"operation": operation, "object_type": int(object_type), "path_name": path, "guid": guid,
                "partition_id": partition_id, "properties": properties, "client_request": 4}


@situation("change_remote_object", "psc-create-by-path")
def _remote_psc():
    """A PSC sends a path-named change request (PSCNameOffset 0) to the partition's authority."""
    return _remote(psc(), 0x00, QUEUE, "pec0\\q", None, SITE0, queue_props("pec0\\q", guid_of("q")))


@situation("change_remote_object", "bsc-update-by-path")
def _remote_bsc():
    """A BSC names its PSC in PSCName and sends the request to MyPSCName."""
    return _remote(bsc(), 0x01, QUEUE, "psc1\\q", None, SITE1, (Property(P["PROPID_Q_LABEL"], "new"),))


@situation("change_remote_object", "guid-named-update")
def _remote_guid():
    """An object with no path name is named by its GUID (E-101)."""
    return _remote(psc(), 0x01, USER, None, guid_of("u1"), ENT, (Property(P["PROPID_U_SID"], b"\x01\x05"),))


@situation("change_remote_object", "guid-named-create-identity-property")
def _remote_guid_create():
    """A create of an object with no path name takes its GUID from the identity property (E-101, E-182)."""
    return _remote(psc(), 0x00, USER, None, None, ENT,
                   (Property(P["PROPID_U_SID"], b"\x01"), Property(P["PROPID_U_ID"], guid_of("u2"))))


# --- 3.1.7.1.2 Propagate Directory Change ------------------------------------------------------------------


def _propagate(qm, operation, object_type, path, guid, partition_id, properties, at):
    return qm, {"operation": operation, "object_type": int(object_type), "path_name": path, "guid": guid,
                "partition_id": partition_id, "properties": properties, "seq_number": seq(at)}


@situation("propagate_directory_change", "not-the-authority")
def _prop_not_authority():
    """A server that does not own the partition takes no action."""
    return _propagate(psc(), 0x00, QUEUE, "pec0\\q", None, SITE0, queue_props("pec0\\q"), 5)


@situation("propagate_directory_change", "create-queued-for-every-neighbor")
def _prop_create():
    """An authority's create goes to every PSC and BSC neighbor and sets LastSeqNumber."""
    qm = pec(bsc_neighbors=(BSC01,))
    put(qm, QUEUE, "pec0\\q", queue_props("pec0\\q", guid_of("q")), SITE0, 1)
    return _propagate(qm, 0x00, QUEUE, "pec0\\q", None, SITE0, queue_props("pec0\\q", guid_of("q")), 1)


@situation("propagate_directory_change", "update-of-a-site")
def _prop_update_site():
    """An update of a site at the PEC follows the site's PSC and is propagated (E-100)."""
    qm = pec()
    put(qm, SITE, "site1", site_props("site1", SITE1, PSC1), ENT, 2)
    return _propagate(qm, 0x01, SITE, "site1", None, ENT, site_props("site1", None, PSC2), 3)


@situation("propagate_directory_change", "delete-named-by-path-and-guid")
def _prop_delete():
    """A delete given both a path and a GUID is sent by GUID (E-102); the tombstone is recorded (E-108)."""
    qm = pec()
    return _propagate(qm, 0x02, QUEUE, "pec0\\gone", guid_of("gone"), SITE0, delete_props(1, QUEUE), 4)


@situation("propagate_directory_change", "sync-change")
def _prop_sync():
    """A sync change at the authority: the object type comes from iObjectType (E-139)."""
    qm = pec()
    put(qm, QUEUE, "pec0\\q", queue_props("pec0\\q", guid_of("q")), SITE0, 1)
    return _propagate(qm, 0x03, QUEUE, "pec0\\q", None, SITE0, queue_props("pec0\\q", label="synced"), 2)


@situation("propagate_directory_change", "sync-change-fails")
def _prop_sync_fails():
    """A sync change the directory refuses is not propagated (E-100); literally it is."""
    return _propagate(pec(), 0x03, QUEUE, "pec0\\none", None, SITE0, queue_props("pec0\\none"), 2)


@situation("propagate_directory_change", "create-named-by-identity")
def _prop_identity():
    """A created object with no path name is propagated under its identity property's GUID (E-182)."""
    return _propagate(pec(), 0x00, USER, None, None, ENT,
                      (Property(P["PROPID_U_SID"], b"\x01"), Property(P["PROPID_U_ID"], guid_of("u3"))), 1)


@situation("propagate_directory_change", "site-create-at-the-authority")
def _prop_site_create():
    """The PEC's own site create runs Handle Directory Create again: the partition exists already (E-104)."""
    qm = pec(psc_neighbors=())
    qm.partitions.append(DirectoryPartition(SITE2, PSC2))
    return _propagate(qm, 0x00, SITE, "site2", None, ENT, site_props("site2", SITE2, PSC2), 1)


@situation("propagate_directory_change", "purge-trigger-every-256")
def _prop_purge():
    """Past 256 changes since the last purge the authority purges its tombstones (E-131)."""
    qm = pec(psc_neighbors=())
    site0 = part(qm, SITE0)
    site0.last_seq_number = seq(2999)
    qm.deleted_objects = [DeletedObject(guid_of("old"), SITE0, seq(100), int(QUEUE), 1),
                          DeletedObject(guid_of("recent"), SITE0, seq(2500), int(QUEUE), 1)]
    return _propagate(qm, 0x01, QUEUE, "pec0\\q", None, SITE0, (Property(P["PROPID_Q_LABEL"], "x"),), 3000)


# --- 3.1.7.1.3 Read Next Sequence Number ---------------------------------------------------------------------


@situation("read_next_sequence_number", "pec-enterprise")
def _next_pec():
    """At the PEC the enterprise partition's next number is LastSeqNumber + 1."""
    qm = pec()
    part(qm, ENT).last_seq_number = seq(41)
    return qm, {"partition_id": ENT}


@situation("read_next_sequence_number", "psc-own-site")
def _next_psc():
    """At a PSC its own site partition's next number is LastSeqNumber + 1."""
    qm = psc()
    part(qm, SITE1).last_seq_number = seq(0xFF)
    return qm, {"partition_id": SITE1}


@situation("read_next_sequence_number", "not-the-authority")
def _next_replica():
    """A partition the server does not own has no next number (MIN_SEQ_NUMBER)."""
    return psc(), {"partition_id": ENT}
