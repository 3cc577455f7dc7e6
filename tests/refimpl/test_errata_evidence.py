"""Runnable evidence for the MC-MQDSRP handler errata (E-100..E-135) and the MQDS modelling entries (E-180..E-184).

Each ``test_eNNN_*`` builds the smallest situation that shows entry E-NNN's claim, runs it in the
literal and the clarified reading (``Context(node, mode)``) and asserts the difference the entry's
``problem`` and ``resolution`` state; entries resolved the same way in "both modes" assert the shared
behaviour in both. Most tests call one handler on a hand-built :class:`QueueManager`; the ones about
message flow chain handlers or run a small :class:`World`. The register points here with
``pytest tests/refimpl/test_errata_evidence.py -k eNNN``; the entries from E-136 on have theirs in
``test_errata_evidence_2.py``.
"""

from __future__ import annotations

import inspect

import pytest
from mqspec.model import mqdsrp
from mqspec.model.errors import ModelError
from mqspec.model.guid import Guid
from mqspec.model.mqdsrp import (
    AlreadyPurgedMessage,
    ChangePropagationMessage,
    ChangeReplyMessage,
    ChangeRequestMessage,
    Command,
    CompleteSync0,
    DirectoryChange,
    PartitionSeqNumbers,
    PSCAckMessage,
    Scope,
    SeqNumberHeader,
    SyncReplyMessage,
    SyncRequestMessage,
)
from mqspec.model.propids import PROPIDS, ObjectType
from mqspec.model.propvalue import Property
from mqspec.model.seqnum import MAX_SEQ_NUMBER, MIN_SEQ_NUMBER, SequenceNumber
from mqspec.refimpl import mqdsrp_client as client
from mqspec.refimpl import mqdsrp_common as common
from mqspec.refimpl import mqdsrp_objects as objects
from mqspec.refimpl import mqdsrp_server as server
from mqspec.refimpl import status as st
from mqspec.refimpl.directory import DirectoryStore
from mqspec.refimpl.effects import (
    Context,
    EnqueueMessage,
    Mode,
    RequestCompleted,
    StartTimer,
    TimerScope,
)
from mqspec.refimpl.mqds import (
    ClientRequest,
    create_directory_object,
    delete_properties,
    directory_client_request,
)
from mqspec.refimpl.mqdsrp_state import (
    PEC_PARTITION_ID,
    SCOPE_ENTERPRISE,
    SERVICE_BSC,
    DeletedObject,
    DirectoryNeighbor,
    DirectoryPartition,
    PurgeState,
    QueueManager,
    Role,
)
from mqspec.refimpl.world import (
    World,
    add_bsc,
    add_site,
    bootstrap_pec,
    convergence_problems,
)

from mqspec.clauses import covers

P = {name: pdef.propid for name, pdef in PROPIDS.items()}
CN, QUEUE, SITE = ObjectType.MQDS_CN, ObjectType.MQDS_QUEUE, ObjectType.MQDS_SITE
MACHINE, ENTERPRISE = ObjectType.MQDS_MACHINE, ObjectType.MQDS_ENTERPRISE
LITERAL, CLARIFIED = Mode.LITERAL, Mode.CLARIFIED
MODES = (LITERAL, CLARIFIED)
# the same site identifiers World.site_guid gives
SITE0, SITE1, SITE2 = (Guid.from_name(f"site:site{i}") for i in range(3))
G1, G2, G3 = (Guid.from_name(f"object:{i}") for i in range(1, 4))


def S(n: int) -> SequenceNumber:
    return SequenceNumber(n)


# --- building servers and reading effects -------------------------------------------------------


def make_server(name: str, role: Role, site: Guid, *, owns_site: bool = False,
                replicas: tuple[tuple[Guid, str], ...] = (), psc: str | None = None) -> QueueManager:
    """A started directory server as World.add_node builds it: the enterprise partition, maybe its own site's."""
    qm = QueueManager(
        machine_name=name, identifier=Guid.from_name(f"qm:{name}"), site_identifier=site, role=role,
        pec_name="PEC0", configured_psc_name=psc, directory=DirectoryStore(),
    )
    qm.partitions.append(DirectoryPartition(PEC_PARTITION_ID, name if role is Role.PEC else "PEC0"))
    if owns_site:
        qm.partitions.append(DirectoryPartition(site, name))
    qm.partitions.extend(DirectoryPartition(pid, authority) for pid, authority in replicas)
    common.common_initialization(qm, Context(name))
    return qm


def pec(**kw) -> QueueManager:
    return make_server("PEC0", Role.PEC, SITE0, owns_site=True, **kw)


def psc1(**kw) -> QueueManager:
    """PSC1 of site1, which replicates the enterprise partition of PEC0."""
    return make_server("PSC1", Role.PSC, SITE1, **kw)


def part(qm: QueueManager, partition_id: Guid = PEC_PARTITION_ID) -> DirectoryPartition:
    found = qm.find_partition(partition_id)
    assert found is not None
    return found


def sent(ctx: Context, kind: type | None = None) -> list[EnqueueMessage]:
    """The Send Replication Message effects of ``ctx`` (with a body of type ``kind``)."""
    return [e for e in ctx.effects if type(e) is EnqueueMessage and (kind is None or type(e.body) is kind)]


def timers(ctx: Context, kind: str) -> list[StartTimer]:
    return [e for e in ctx.effects if type(e) is StartTimer and e.timer.kind == kind]


def cn_props(name: str, guid: Guid, protocol: int = 1) -> tuple[Property, ...]:
    return (Property(P["PROPID_CN_NAME"], name), Property(P["PROPID_CN_GUID"], guid),
            Property(P["PROPID_CN_PROTOCOLID"], protocol))


def store_cn(qm: QueueManager, name: str, guid: Guid, seq: int, partition: Guid = PEC_PARTITION_ID) -> None:
    """Put a connected network object straight into the local directory (set-up, not protocol)."""
    assert qm.directory.create(CN, name, guid, {P["PROPID_CN_NAME"]: name}, partition, S(seq)) == st.MQ_OK


def cn_create(seq: int, previous: int, name: str, guid: Guid) -> DirectoryChange:
    return DirectoryChange(Command.CREATE, PEC_PARTITION_ID, S(previous), S(seq), MIN_SEQ_NUMBER,
                           cn_props(name, guid), path_name=name)


def site_props(name: str, site: Guid, psc: str) -> tuple[Property, ...]:
    return (Property(P["PROPID_S_PATHNAME"], name), Property(P["PROPID_S_SITEID"], site),
            Property(P["PROPID_S_PSC"], psc))


def bsc_machine_props(name: str) -> tuple[Property, ...]:
    return (Property(P["PROPID_QM_PATHNAME"], name), Property(P["PROPID_QM_SERVICE"], SERVICE_BSC),
            Property(P["PROPID_QM_MACHINE_ID"], Guid.from_name(f"qm:{name}")))


# --- 3.1.7.1 Events raised by related protocols -----------------------------------------------


@covers("MC-MQDSRP", "3.1.7.1.2")
def test_e100_failed_sync_is_propagated_only_in_literal_mode():
    """A sync the directory refuses is still queued for neighbors and advances LastSeqNumber only in literal mode."""
    # the second value names the object type (3.1.7.1.2 0x03); the queue refuses delete PROPIDs
    properties = delete_properties(SCOPE_ENTERPRISE, int(QUEUE))
    outcome = {}
    for mode in MODES:
        qm = pec()
        qm.psc_neighbors.append(DirectoryNeighbor(SITE1, "PSC1"))
        qm.bsc_neighbors.append(DirectoryNeighbor(SITE0, "BSC01"))
        ctx = Context("PEC0", mode)
        common.propagate_directory_change(qm, ctx, 0x03, int(QUEUE), None, G1, PEC_PARTITION_ID, properties, S(1))
        failed = [e.status for e in ctx.effects if getattr(e, "operation", None) == "create"]
        assert failed == [st.MQ_ERROR_ILLEGAL_PROPID]
        outcome[mode] = (part(qm).last_seq_number, [len(n.available_changes) for n in (*qm.psc_neighbors,
                                                                                      *qm.bsc_neighbors)])
    assert outcome[LITERAL] == (S(1), [1, 1])
    assert outcome[CLARIFIED] == (MIN_SEQ_NUMBER, [0, 0])


@covers("MC-MQDSRP", "3.1.7.1.1")
def test_e101_change_request_names_pathless_object_by_guid():
    """Both modes send a change request for an object without a path name with UseGuid 0x01 and its GUID."""
    with pytest.raises(ModelError):  # the literal "UseGuid 0x00, PathName := NULL" has no encoding
        DirectoryChange(Command.DELETE, PEC_PARTITION_ID, MIN_SEQ_NUMBER, MIN_SEQ_NUMBER, MIN_SEQ_NUMBER, ())
    for mode in MODES:
        bsc = make_server("BSC11", Role.BSC, SITE1, psc="PSC1")
        ctx = Context("BSC11", mode)
        common.change_remote_object(bsc, ctx, 0x02, int(ObjectType.MQDS_USER), None, G1, PEC_PARTITION_ID,
                                    delete_properties(SCOPE_ENTERPRISE, int(ObjectType.MQDS_USER)))
        (msg,) = sent(ctx, ChangeRequestMessage)
        assert msg.destination == "PSC1"
        assert msg.body.change.use_guid and msg.body.change.guid_identifier == G1
        assert msg.body.change.path_name is None
        assert mqdsrp.decode(mqdsrp.encode(msg.body)) == msg.body


@covers("MC-MQDSRP", "3.1.7.1.2")
def test_e102_propagated_change_with_path_and_guid_carries_only_the_guid():
    """Both modes drop iPathName when iGuidIdentifier is given, since a change with both cannot be encoded."""
    with pytest.raises(ModelError):  # the literal reading: PathName and GuidIdentifier both set
        DirectoryChange(Command.UPDATE, PEC_PARTITION_ID, MIN_SEQ_NUMBER, S(1), MIN_SEQ_NUMBER, (),
                        path_name="cn1", guid_identifier=G1)
    for mode in MODES:
        qm = pec()
        qm.psc_neighbors.append(DirectoryNeighbor(SITE1, "PSC1"))
        ctx = Context("PEC0", mode)
        common.propagate_directory_change(qm, ctx, 0x01, int(CN), "cn1", G1, PEC_PARTITION_ID,
                                          (Property(P["PROPID_CN_PROTOCOLID"], 2),), S(1))
        (change,) = qm.psc_neighbors[0].available_changes
        assert (change.path_name, change.guid_identifier) == (None, G1)


@covers("MC-MQDSRP", "3.1.7.1.2")
def test_e103_propagated_change_carries_partition_purged_seq_number():
    """A propagated change's PurgedSeqNumber is iSeqNumber in literal mode and the partition's in clarified mode."""
    carried = {}
    for mode in MODES:
        qm = pec()
        part(qm).last_seq_number, part(qm).purged_seq_number = S(9), S(5)
        qm.psc_neighbors.append(DirectoryNeighbor(SITE1, "PSC1"))
        common.propagate_directory_change(qm, Context("PEC0", mode), 0x01, int(CN), None, G1, PEC_PARTITION_ID,
                                          (Property(P["PROPID_CN_PROTOCOLID"], 2),), S(10))
        carried[mode] = qm.psc_neighbors[0].available_changes[0].purged_seq_number
    assert carried == {LITERAL: S(10), CLARIFIED: S(5)}


# --- 3.1.7.2.5 .. 3.1.7.2.12 ------------------------------------------------------------------


@covers("MC-MQDSRP", "3.1.7.2.5")
def test_e104_site_created_at_authority_gets_one_partition_and_neighbor():
    """A site created by the authority with iPostCreate false yields two partitions and PSC neighbors only in literal mode."""
    counts = {}
    for mode in MODES:
        qm = pec()
        ctx = Context("PEC0", mode)
        status, _ = objects.handle_directory_create(qm, ctx, part(qm), int(SITE), "site1",
                                                    site_props("site1", SITE1, "PSC1"), S(1), post_create=False)
        assert status == st.MQ_OK
        counts[mode] = (
            sum(p.partition_id == SITE1 for p in qm.partitions),
            [n.machine_name for n in qm.psc_neighbors],
            len(timers(ctx, "change_propagation")),
            [m.destination for m in sent(ctx, SyncRequestMessage)],
        )
    assert counts[LITERAL] == (2, ["PSC1", "PSC1"], 2, ["PSC1", "PSC1"])
    assert counts[CLARIFIED] == (1, ["PSC1"], 1, ["PSC1"])


@covers("MC-MQDSRP", "3.1.7.2.5")
def test_e105_new_site_psc_neighbor_is_found_by_its_site():
    """The new PSC neighbor carries the enterprise PartitionID in literal mode, so a later PSC change never reaches it."""
    for mode in MODES:
        qm = pec()
        objects.handle_directory_create(qm, Context("PEC0", mode), part(qm), int(SITE), "site1",
                                        site_props("site1", SITE1, "PSC1"), S(1), post_create=True)
        (neighbor,) = qm.psc_neighbors
        assert neighbor.partition_id == (PEC_PARTITION_ID if mode is LITERAL else SITE1)
        objects.handle_site_update(qm, Context("PEC0", mode), None, SITE1,
                                   (Property(P["PROPID_S_PSC"], "PSC1B"),), sync=False)
        assert part(qm, SITE1).authority_name == "PSC1B"
        assert neighbor.machine_name == ("PSC1" if mode is LITERAL else "PSC1B")


@covers("MC-MQDSRP", "3.1.7.2.5")
def test_e336_site_created_without_a_psc_asks_and_adds_no_nameless_machine():
    """A site created without PROPID_S_PSC leaves pscName undefined: in literal mode the PEC sends a Sync Request to no
    machine and adds a PSC neighbor with no name, with a Change Propagation Timer; clarified, it makes the partition
    only."""
    props = site_props("site1", SITE1, "PSC1")[:2]  # PROPID_S_PATHNAME, PROPID_S_SITEID
    for mode in MODES:
        qm = pec()
        ctx = Context("PEC0", mode)
        objects.handle_directory_create(qm, ctx, part(qm), int(SITE), "site1", props, S(1), post_create=True)
        assert part(qm, SITE1).authority_name is None
        requests = [e.destination for e in sent(ctx, SyncRequestMessage)]
        assert ([n.machine_name for n in qm.psc_neighbors], requests) == (([None], [""]) if mode is LITERAL else ([], []))


@covers("MC-MQDSRP", "3.1.7.2.6")
def test_e337_an_authority_propagates_a_change_of_its_own_partition_under_its_senders_number():
    """A replicated change that reaches the authority of its partition is applied as at a replica, and Handle Directory
    Update's myPartition makes Update Directory Object replicate it: the authority sends it on numbered as its sender
    numbered it, after its own LastSeqNumber, and takes that number as LastSeqNumber (both modes follow the text)."""
    for mode in MODES:
        qm = make_server("PSC1", Role.PSC, SITE1, owns_site=True)
        site = part(qm, SITE1)
        site.last_seq_number = S(3)
        qm.directory.create(int(QUEUE), "C11\\q", Guid.from_name("queue:C11\\q"),
                            (Property(P["PROPID_Q_PATHNAME"], "C11\\q"), Property(P["PROPID_Q_LABEL"], "q")), SITE1, S(3))
        qm.bsc_neighbors.append(DirectoryNeighbor(SITE1, "BSC11"))
        change = DirectoryChange(Command.UPDATE, SITE1, S(0), S(9), S(0), (Property(P["PROPID_Q_LABEL"], "x"),),
                                 path_name="C11\\q")
        server.receive_change_propagation(qm, Context("PSC1", mode), ChangePropagationMessage(SITE0, False, (change,)))
        assert site.last_seq_number == S(9)
        # the change the authority propagated (after its LastSeqNumber 3), then the one Handle In-Sync Change queues
        assert [(c.previous_seq_number, c.seq_number) for c in qm.bsc_neighbors[0].available_changes] == [
            (S(3), S(9)), (S(0), S(9))]


@covers("MC-MQDSRP", "3.1.7.2.11")
def test_e106_bsc_gets_no_psc_neighbor_and_cannot_become_an_authority():
    """Only in literal mode does a BSC learning of a site add a PSC neighbor, whose header makes a PSC take the BSC as authority."""
    for mode in MODES:
        bsc = make_server("BSC11", Role.BSC, SITE1, replicas=((SITE1, "PSC1"),), psc="PSC1")
        part(bsc, SITE1).last_seq_number = S(7)
        ctx = Context("BSC11", mode)
        # the BSC learns of site2 from a propagated create (3.1.7.2.5) and of site3 from a sync (3.1.7.2.11)
        objects.handle_directory_create(bsc, ctx, part(bsc), int(SITE), "site2", site_props("site2", SITE2, "PSC2"),
                                        S(4), post_create=False)
        site3 = Guid.from_name("site:site3")
        objects.handle_site_update(bsc, ctx, None, None, site_props("site3", site3, "PSC3"), sync=True)
        assert [(p.partition_id, p.authority_name) for p in bsc.partitions[-2:]] == [(SITE2, "PSC2"), (site3, "PSC3")]
        assert [m.destination for m in sent(ctx, SyncRequestMessage)] == ["PSC1", "PSC1"]  # a BSC asks its PSC
        neighbors = [n.machine_name for n in bsc.psc_neighbors]
        propagation_timers = [t.timer.args for t in timers(ctx, "change_propagation")]
        if mode is CLARIFIED:
            assert (neighbors, propagation_timers) == ([], [])
            continue
        assert neighbors == ["PSC2", "PSC3"]
        assert propagation_timers == [("PSC2", "Intersite"), ("PSC3", "Intersite")]
        # the timer fires: the BSC sends PSC2 a SeqNumberHeader naming itself ...
        fire = Context("BSC11", mode)
        client.change_propagation_timer_event(bsc, fire, "PSC2", TimerScope.INTERSITE)
        (msg,) = sent(fire, ChangePropagationMessage)
        assert msg.destination == "PSC2" and msg.body.seq_numbers.machine_name == "BSC11"
        # ... and PSC2, a replica of site1, takes BSC11 as that partition's authority
        psc2 = make_server("PSC2", Role.PSC, SITE2, owns_site=True, replicas=((SITE1, "PSC1"),))
        part(psc2, SITE1).change_missing_window = MIN_SEQ_NUMBER  # synchronized once already
        receive = Context("PSC2", mode)
        server.receive_change_propagation(psc2, receive, msg.body)
        assert part(psc2, SITE1).authority_name == "BSC11"
        assert [m.destination for m in sent(receive, SyncRequestMessage)] == ["BSC11"]


@covers("MC-MQDSRP", "3.1.7.2.5")
def test_e107_bsc_neighbor_is_named_by_ipathname():
    """Both modes name the new BSC neighbor iPathName; only clarified mode refuses a second neighbor for it."""
    names = {}
    for mode in MODES:
        qm = psc1(owns_site=True)
        for seq in (1, 2):
            objects.handle_directory_create(qm, Context("PSC1", mode), part(qm, SITE1), int(MACHINE), "BSC11",
                                            bsc_machine_props("BSC11"), S(seq), post_create=True)
        names[mode] = [(n.machine_name, n.partition_id) for n in qm.bsc_neighbors]
    assert names[LITERAL] == [("BSC11", SITE1)] * 2
    assert names[CLARIFIED] == [("BSC11", SITE1)]


@covers("MC-MQDSRP", "3.2.7.2")
def test_e108_deletions_record_usable_tombstones_only_in_clarified_mode():
    """Literal mode records a tombstone only for a change request, without an identifier; clarified mode always, by GUID."""
    tombstones = {}
    for mode in MODES:
        # (a) a path-named change request at the authority
        authority = pec()
        store_cn(authority, "cn1", G1, 1)
        request = ChangeRequestMessage(SITE1, PEC_PARTITION_ID, 1, "PSC1", None, DirectoryChange(
            Command.DELETE, PEC_PARTITION_ID, MIN_SEQ_NUMBER, MIN_SEQ_NUMBER, MIN_SEQ_NUMBER,
            delete_properties(SCOPE_ENTERPRISE, int(CN)), path_name="cn1"))
        part(authority).last_seq_number = S(1)
        server.receive_change_request(authority, Context("PEC0", mode), request)
        # (b) the authority's own directory client
        own = pec()
        store_cn(own, "cn1", G1, 1)
        part(own).last_seq_number = S(1)
        directory_client_request(own, Context("PEC0", mode), ClientRequest(
            "delete", CN, PEC_PARTITION_ID, path_name="cn1", scope=SCOPE_ENTERPRISE), G3)
        # (c) a replica applying a propagated deletion
        replica = psc1()
        store_cn(replica, "cn1", G1, 1)
        objects.handle_directory_delete(replica, Context("PSC1", mode), part(replica), int(CN), SCOPE_ENTERPRISE,
                                        None, G1, S(2), post_delete=False)
        tombstones[mode] = [[(d.identifier, d.partition_id, d.seq_number, d.object_type, d.scope)
                             for d in qm.deleted_objects] for qm in (authority, own, replica)]
    assert tombstones[LITERAL] == [[(None, PEC_PARTITION_ID, S(2), int(CN), SCOPE_ENTERPRISE)], [], []]
    assert tombstones[CLARIFIED] == [[(G1, PEC_PARTITION_ID, S(2), int(CN), SCOPE_ENTERPRISE)]] * 3


@covers("MC-MQDSRP", "3.1.7.2.2")
def test_e109_out_of_order_change_asks_again_only_when_window_widens():
    """Both modes send Send Sync Request for a first out-of-order change only when it widens ChangeMissingWindow."""
    for mode in MODES:
        for window, expected_requests, expected_window in ((S(10), 0, S(10)), (MIN_SEQ_NUMBER, 1, S(8))):
            qm = psc1()
            p = part(qm)
            p.last_seq_number, p.change_missing_window = S(5), window
            ctx = Context("PSC1", mode)
            common.handle_directory_change(qm, ctx, p, cn_create(8, 7, "cn8", G1), check_flush=False)
            assert [c.seq_number for c in p.pending_changes] == [S(8)]
            assert len(sent(ctx, SyncRequestMessage)) == expected_requests
            assert p.change_missing_window == expected_window


@covers("MC-MQDSRP", "3.1.7.2.4")
def test_e110_pending_change_is_applied_once_its_predecessor_arrives():
    """Both modes apply a queued change when the gap before it fills, reading "Take no further action" inside the window test."""
    for mode in MODES:
        qm = psc1()
        p = part(qm)
        p.last_seq_number, p.change_missing_window = S(3), MIN_SEQ_NUMBER
        common.handle_directory_change(qm, Context("PSC1", mode), p, cn_create(5, 4, "cn5", G2), False)
        assert p.change_missing_window == S(5) and p.last_seq_number == S(3)
        common.handle_directory_change(qm, Context("PSC1", mode), p, cn_create(4, 3, "cn4", G1), False)
        assert p.last_seq_number == S(5) and p.pending_changes == []
        assert {o.guid for o in qm.directory.objects_in(PEC_PARTITION_ID)} == {G1, G2}


@covers("MC-MQDSRP", "3.1.7.2.8")
def test_e112_object_created_by_sync_keeps_authority_guid():
    """A sync change creating an object at a replica keeps the authority's GUID in clarified mode and fails in literal mode."""
    results = {}
    for mode in MODES:
        qm = psc1()
        # a 3.2.7.8 sync change: named by GuidIdentifier, no identity property
        status, _ = objects.handle_directory_sync(qm, Context("PSC1", mode), part(qm), int(CN), None, G1,
                                                  (Property(P["PROPID_CN_NAME"], "cn1"),), S(4))
        results[mode] = (status, [o.guid for o in qm.directory.objects_in(PEC_PARTITION_ID)])
    assert results[LITERAL] == (st.MQ_ERROR, [])
    assert results[CLARIFIED] == (st.MQ_OK, [G1])


@covers("MC-MQDSRP", "3.1.7.2.8")
def test_e113_sync_follows_the_event_object_type():
    """Both modes test iObjectType, so a synced enterprise object moves the partition's AuthorityName."""
    for mode in MODES:
        qm = psc1()
        enterprise = Guid.from_name("enterprise")
        qm.directory.create(ENTERPRISE, "ent", enterprise, {P["PROPID_E_PECNAME"]: "PEC0"}, PEC_PARTITION_ID, S(1))
        status, need_flush = objects.handle_directory_sync(qm, Context("PSC1", mode), part(qm), int(ENTERPRISE),
                                                           None, enterprise,
                                                           (Property(P["PROPID_E_PECNAME"], "PEC9"),), S(2))
        assert (status, need_flush) == (st.MQ_OK, True)
        assert part(qm).authority_name == "PEC9"


@covers("MC-MQDSRP", "3.1.7.2.11")
def test_e114_site_learned_from_sync_takes_its_guid_identifier():
    """A site from a sync reply (no PROPID_S_SITEID) gets a partition only in clarified mode, identified by its GUID."""
    learned = {}
    for mode in MODES:
        qm = psc1()
        ctx = Context("PSC1", mode)
        objects.handle_site_update(qm, ctx, None, SITE2, (Property(P["PROPID_S_PATHNAME"], "site2"),
                                                          Property(P["PROPID_S_PSC"], "PSC2")), sync=True)
        sites = [(p.partition_id, p.authority_name) for p in qm.partitions if p.partition_id != PEC_PARTITION_ID]
        learned[mode] = (sites, [m.destination for m in sent(ctx, SyncRequestMessage)])
    assert learned[LITERAL] == ([], [])
    assert learned[CLARIFIED] == ([(SITE2, "PSC2")], ["PSC2"])


@covers("MC-MQDSRP", "3.1.7.2.12")
def test_e115_machine_update_returns_need_flush_false():
    """Both modes return rNeedFlush false from Handle Machine Update, even when it adds a BSC neighbor."""
    for mode in MODES:
        qm = psc1(owns_site=True)
        result = objects.handle_machine_update(qm, Context("PSC1", mode), part(qm, SITE1), "BSC11", None,
                                               (Property(P["PROPID_QM_SERVICE"], SERVICE_BSC),), sync=False)
        assert result == (st.MQ_OK, False)
        assert [n.machine_name for n in qm.bsc_neighbors] == ["BSC11"]


# --- 3.2.7 Server events ----------------------------------------------------------------------


@covers("MC-MQDSRP", "3.2.7.1")
def test_e116_sync_window_plus_one_loses_the_next_change():
    """With the window LastSeqNumber + 1 an empty sync reply moves the replica past its authority, which then loses change L+1."""
    outcome = {}
    for mode in MODES:
        qm = psc1()
        p = part(qm)
        p.last_seq_number, p.change_missing_window = S(3), MIN_SEQ_NUMBER
        # the authority's header: it is at 4
        header = SeqNumberHeader("PEC0", (PartitionSeqNumbers(PEC_PARTITION_ID, S(4), MIN_SEQ_NUMBER),))
        ctx = Context("PSC1", mode)
        server.receive_change_propagation(qm, ctx, ChangePropagationMessage(SITE0, False, (), header))
        (request,) = sent(ctx, SyncRequestMessage)
        # the authority finds no object changed in [3, To] (change 4 was a deletion the reply cannot carry)
        reply = SyncReplyMessage(SITE0, PEC_PARTITION_ID, S(3), request.body.to_seq_number, MIN_SEQ_NUMBER,
                                 CompleteSync0.NOT_IN_SYNC0, ())
        client.receive_sync_reply(qm, Context("PSC1", mode), reply)
        after_reply = p.last_seq_number
        # the authority's next change, 5
        common.handle_directory_change(qm, Context("PSC1", mode), p, cn_create(5, 4, "cn5", G1), False)
        outcome[mode] = (request.body.to_seq_number, after_reply, qm.directory.find(guid=G1) is not None)
    assert outcome[LITERAL] == (S(5), S(5), False)
    assert outcome[CLARIFIED] == (S(4), S(4), True)


@covers("MC-MQDSRP", "3.2.7.3")
def test_e117_psc_serves_partition_it_only_replicates():
    """A PSC answering its BSC's sync request for the enterprise partition sends the objects only in clarified mode."""
    carried = {}
    for mode in MODES:
        qm = psc1(owns_site=True)
        store_cn(qm, "cn1", G1, 2)
        part(qm).last_seq_number = S(2)
        ctx = Context("PSC1", mode)
        server.receive_sync_request(qm, ctx, SyncRequestMessage(
            SITE1, PEC_PARTITION_ID, MIN_SEQ_NUMBER, MAX_SEQ_NUMBER, MIN_SEQ_NUMBER, False, Scope.NONE, "BSC11"))
        (reply,) = sent(ctx, SyncReplyMessage)
        carried[mode] = [(c.command, c.guid_identifier) for c in reply.body.changes]
    assert carried == {LITERAL: [], CLARIFIED: [(Command.SYNC, G1)]}


@covers("MC-MQDSRP", "3.2.7.3")
def test_e118_sync_reply_sends_only_this_partitions_tombstones_in_window():
    """Literal mode copies every tombstone of every partition into the reply; clarified only this partition's in the window."""
    carried = {}
    for mode in MODES:
        qm = pec()
        part(qm).last_seq_number = S(9)
        qm.deleted_objects += [DeletedObject(G1, PEC_PARTITION_ID, S(2), int(CN), SCOPE_ENTERPRISE),
                               DeletedObject(G2, SITE0, S(3), int(QUEUE), SCOPE_ENTERPRISE),
                               DeletedObject(G3, PEC_PARTITION_ID, S(9), int(CN), SCOPE_ENTERPRISE)]
        ctx = Context("PEC0", mode)
        server.receive_sync_request(qm, ctx, SyncRequestMessage(
            SITE1, PEC_PARTITION_ID, MIN_SEQ_NUMBER, S(5), MIN_SEQ_NUMBER, False, Scope.ENTERPRISE, "PSC1"))
        (reply,) = sent(ctx, SyncReplyMessage)
        carried[mode] = sorted((c.guid_identifier, c.partition_id, c.seq_number.value) for c in reply.body.changes)
    assert carried[LITERAL] == sorted([(G1, PEC_PARTITION_ID, 2), (G2, PEC_PARTITION_ID, 3), (G3, PEC_PARTITION_ID, 9)])
    assert carried[CLARIFIED] == [(G1, PEC_PARTITION_ID, 2)]


@covers("MC-MQDSRP", "3.2.7.3")
def test_e119_descending_sync_reply_drops_all_but_one_change():
    """A descending sync reply updates only the newest object at the replica (literal); ascending updates all (clarified)."""
    outcome = {}
    for mode in MODES:
        authority, replica = pec(), psc1()
        for i, guid in enumerate((G1, G2, G3)):
            store_cn(authority, f"cn{i}", guid, 4 + i)  # changed at 4, 5, 6
            store_cn(replica, f"cn{i}", guid, 1 + i)  # the replica saw 1, 2, 3
        part(authority).last_seq_number, part(replica).last_seq_number = S(6), S(3)
        ask = Context("PEC0", mode)
        server.receive_sync_request(authority, ask, SyncRequestMessage(
            SITE1, PEC_PARTITION_ID, S(3), MAX_SEQ_NUMBER, MIN_SEQ_NUMBER, False, Scope.ENTERPRISE, "PSC1"))
        (reply,) = sent(ask, SyncReplyMessage)
        client.receive_sync_reply(replica, Context("PSC1", mode), reply.body)
        outcome[mode] = ([c.seq_number.value for c in reply.body.changes], part(replica).last_seq_number.value,
                         [replica.directory.find(guid=g).seq_number.value for g in (G1, G2, G3)])
    assert outcome[LITERAL] == ([6, 5, 4], 6, [1, 2, 6])
    assert outcome[CLARIFIED] == ([4, 5, 6], 6, [4, 5, 6])


@covers("MC-MQDSRP", "3.2.7.3")
def test_e120_sync_reply_header_uses_from_and_to_seq_num():
    """Both modes fill the reply's From/To from fromSeqNum and toSeqNum, MAX_SEQ_NUMBER replaced by LastSeqNumber."""
    for mode in MODES:
        for to, expected in ((MAX_SEQ_NUMBER, S(7)), (S(5), S(5))):
            qm = pec()
            part(qm).last_seq_number = S(7)
            ctx = Context("PEC0", mode)
            server.receive_sync_request(qm, ctx, SyncRequestMessage(
                SITE1, PEC_PARTITION_ID, S(2), to, MIN_SEQ_NUMBER, False, Scope.ENTERPRISE, "PSC1"))
            (reply,) = sent(ctx, SyncReplyMessage)
            assert (reply.body.from_seq_number, reply.body.to_seq_number) == (S(2), expected)


@covers("MC-MQDSRP", "3.2.7.6")
def test_e122_change_reply_to_unknown_psc_goes_to_requester():
    """Both modes send a change reply to a non-neighbor requester that sent no PSCName back to the requester."""
    change = cn_create(1, 0, "cn1", G1)
    for mode in MODES:
        qm = pec()
        for requester, psc_name, destination in (("PSC9", None, "PSC9"), ("BSC91", "PSC9", "PSC9")):
            ctx = Context("PEC0", mode)
            request = ChangeRequestMessage(SITE2, PEC_PARTITION_ID, 7, requester, psc_name, change)
            server.send_change_reply(qm, ctx, st.MQ_OK, request)
            (reply,) = sent(ctx, ChangeReplyMessage)
            assert reply.destination == destination and reply.body.requester_name == requester


@covers("MC-MQDSRP", "3.2.7.8")
def test_e124_undefined_lookup_values_are_left_out_of_sync_changes():
    """Literal mode sends a zero for a property the lookup did not read and overwrites the replica's value; clarified leaves it out."""
    enterprise = Guid.from_name("enterprise")
    outcome = {}
    for mode in MODES:
        authority, replica = pec(), psc1()
        authority.directory.create(ENTERPRISE, "ent", enterprise, {P["PROPID_E_PECNAME"]: "PEC0"},
                                   PEC_PARTITION_ID, S(2))
        replica.directory.create(ENTERPRISE, "ent", enterprise, {P["PROPID_E_PECNAME"]: "PEC0",
                                                                 P["PROPID_E_S_INTERVAL1"]: 5}, PEC_PARTITION_ID, S(1))
        (change,) = server.lookup_directory_objects(authority, Context("PEC0", mode), part(authority), ENTERPRISE,
                                                    MIN_SEQ_NUMBER, MAX_SEQ_NUMBER, Scope.ENTERPRISE)
        carried = {p.propid: p.value for p in change.properties}
        objects.handle_directory_sync(replica, Context("PSC1", mode), part(replica), int(ENTERPRISE), None,
                                      change.guid_identifier, change.properties, change.seq_number)
        outcome[mode] = (carried.get(P["PROPID_E_S_INTERVAL1"]),
                         replica.directory.properties_of(enterprise)[P["PROPID_E_S_INTERVAL1"]])
        assert carried[P["PROPID_E_PECNAME"]] == "PEC0"
    assert outcome == {LITERAL: (0, 0), CLARIFIED: (None, 5)}


# --- 3.3.7 Client events ----------------------------------------------------------------------


@covers("MC-MQDSRP", "3.3.7.6")
def test_e125_change_reply_resumes_the_wait_of_its_requester():
    """A reply to a forwarded BSC request resumes the PSC's own wait with the same identifier in literal mode."""
    outcome = {}
    for mode in MODES:
        qm = psc1(owns_site=True)
        qm.bsc_neighbors.append(DirectoryNeighbor(SITE1, "BSC11"))
        # PSC1's own client asks PEC0 (RequestIdentifier 1) ...
        common.change_remote_object(qm, Context("PSC1", mode), 0x00, int(CN), "cn1", None, PEC_PARTITION_ID,
                                    cn_props("cn1", G1), client_request=1)
        # ... and forwards BSC11's request, which BSC11 also numbered 1
        forwarded = ChangeRequestMessage(SITE1, PEC_PARTITION_ID, 1, "BSC11", "PSC1", cn_create(0, 0, "cn2", G2))
        server.receive_change_request(qm, Context("PSC1", mode), forwarded)
        assert set(qm.pending_requests) == {("PSC1", 1), ("BSC11", 1)}
        ctx = Context("PSC1", mode)
        client.receive_change_reply(qm, ctx, ChangeReplyMessage(SITE0, 1, st.MQDS_OBJECT_EXISTS, "BSC11"))
        completed = [(e.request, e.status) for e in ctx.effects if type(e) is RequestCompleted]
        replies = [(m.destination, m.body.result) for m in sent(ctx, ChangeReplyMessage)]
        outcome[mode] = (completed, replies, set(qm.pending_requests))
    assert outcome[LITERAL] == ([(1, st.MQDS_OBJECT_EXISTS)], [], {("BSC11", 1)})
    assert outcome[CLARIFIED] == ([], [("BSC11", st.MQDS_OBJECT_EXISTS)], {("PSC1", 1)})


@covers("MC-MQDSRP", "3.3.7.4")
def test_e126_psc_ack_carries_site_identifier():
    """Both modes fill PSCAckMessage.PSCSiteID from QueueManager.SiteIdentifier."""
    for mode in MODES:
        qm = psc1()
        ctx = Context("PSC1", mode)
        client.send_psc_ack(qm, ctx, part(qm), S(256))
        (ack,) = sent(ctx, PSCAckMessage)
        assert ack.destination == "PEC0"
        assert (ack.body.psc_site_id, ack.body.acked_partition_id, ack.body.acked_seq_number) == (
            SITE1, PEC_PARTITION_ID, S(256))


@covers("MC-MQDSRP", "3.3.7.5")
def test_e127_sync0_completes_on_complete_sync0_value_two():
    """Both modes compare CompleteSync0 with its value 2 ("completed now"), the number the text names PURGE_STATE_SYNC0."""
    assert int(CompleteSync0.COMPLETED) == int(PurgeState.SYNC0) == 2
    for mode in MODES:
        for complete, state, requests in ((CompleteSync0.COMPLETED, PurgeState.NORMAL, 0),
                                          (CompleteSync0.COMPLETING, PurgeState.SYNC0, 1)):
            qm = psc1()
            part(qm).purge_state = PurgeState.SYNC0
            ctx = Context("PSC1", mode)
            client.receive_sync_reply(qm, ctx, SyncReplyMessage(SITE0, PEC_PARTITION_ID, MIN_SEQ_NUMBER, S(3),
                                                                MIN_SEQ_NUMBER, complete, ()))
            assert part(qm).purge_state is state
            assert [m.body.is_sync0 for m in sent(ctx, SyncRequestMessage)] == [True] * requests


@covers("MC-MQDSRP", "3.3.7.5")
def test_e128_empty_sync_reply_moves_last_seq_only_for_outstanding_window():
    """Both modes move LastSeqNumber on an empty sync reply only when ChangeMissingWindow equals its ToSeqNumber."""
    for mode in MODES:
        qm = psc1()
        p = part(qm)
        p.last_seq_number, p.change_missing_window = S(5), S(9)
        stale = SyncReplyMessage(SITE0, PEC_PARTITION_ID, S(2), S(7), MIN_SEQ_NUMBER, CompleteSync0.NOT_IN_SYNC0, ())
        client.receive_sync_reply(qm, Context("PSC1", mode), stale)
        assert (p.last_seq_number, p.change_missing_window) == (S(5), S(9))
        answer = SyncReplyMessage(SITE0, PEC_PARTITION_ID, S(5), S(9), MIN_SEQ_NUMBER, CompleteSync0.NOT_IN_SYNC0, ())
        client.receive_sync_reply(qm, Context("PSC1", mode), answer)
        assert (p.last_seq_number, p.change_missing_window) == (S(9), MIN_SEQ_NUMBER)


@covers("MC-MQDSRP", "3.3.7.6")
def test_e129_change_reply_result_ends_the_wait():
    """Both modes end the Process Change Request with the reply's Result field."""
    for mode in MODES:
        bsc = make_server("BSC11", Role.BSC, SITE1, psc="PSC1")
        common.change_remote_object(bsc, Context("BSC11", mode), 0x00, int(CN), "cn1", None, PEC_PARTITION_ID,
                                    cn_props("cn1", G1), client_request=4)
        ctx = Context("BSC11", mode)
        client.receive_change_reply(bsc, ctx, ChangeReplyMessage(SITE1, 1, st.MQDS_OBJECT_EXISTS, "BSC11"))
        assert [(e.request, e.status) for e in ctx.effects if type(e) is RequestCompleted] == [
            (4, st.MQDS_OBJECT_EXISTS)]
        assert bsc.pending_requests == {}


def authority_with_tombstones(last: int, acked: int, *tombstone_seqs: int) -> QueueManager:
    """PEC0 at ``last`` in its enterprise partition, PSC1 having acknowledged ``acked``, with tombstones."""
    qm = pec()
    part(qm).last_seq_number = S(last)
    qm.psc_neighbors.append(DirectoryNeighbor(SITE1, "PSC1", acked_pec_seq_number=S(acked)))
    qm.deleted_objects += [DeletedObject(Guid.from_name(f"t{s}"), PEC_PARTITION_ID, S(s), int(CN), SCOPE_ENTERPRISE)
                           for s in tombstone_seqs]
    return qm


@covers("MC-MQDSRP", "3.1.7.2.9")
def test_e130_purge_keeps_the_1024_change_buffer():
    """Literal mode wraps LastSeqNumber - 1024 and purges to minAckedSeqNumber; clarified keeps the buffer."""
    left = {}
    for mode in MODES:
        young = authority_with_tombstones(500, 300, 100)
        mature = authority_with_tombstones(2000, 1500, 900, 1200)
        for qm in (young, mature):
            objects.purge_deleted_objects(qm, Context("PEC0", mode), part(qm))
        left[mode] = [[d.seq_number.value for d in qm.deleted_objects] for qm in (young, mature)]
    assert left[LITERAL] == [[], []]
    assert left[CLARIFIED] == [[100], [1200]]


@covers("MC-MQDSRP", "3.1.7.2.3")
def test_e131_authority_purges_its_own_tombstones():
    """A change the authority propagates past PreviousPurgedSeqNumber + 256 purges its tombstones only in clarified mode."""
    left = {}
    for mode in MODES:
        qm = authority_with_tombstones(2000, 2000, 10)
        common.propagate_directory_change(qm, Context("PEC0", mode), 0x01, int(CN), None, G1, PEC_PARTITION_ID,
                                          (Property(P["PROPID_CN_PROTOCOLID"], 2),), S(2001))
        left[mode] = ([d.seq_number.value for d in qm.deleted_objects], part(qm).previous_purged_seq_number.value)
    assert left[LITERAL] == ([10], 0)
    assert left[CLARIFIED] == ([], 2001)


@covers("MC-MQDSRP", "3.1.7.2.9")
def test_e132_authority_without_psc_neighbors_purges_up_to_last_seq_number():
    """Both modes take LastSeqNumber as minAckedSeqNumber when PSCNeighborCollection is empty."""
    for mode in MODES:
        qm = authority_with_tombstones(2000, 0, 500)
        qm.psc_neighbors.clear()
        objects.purge_deleted_objects(qm, Context("PEC0", mode), part(qm))
        assert qm.deleted_objects == []


def purge_then_answer(mode: Mode) -> tuple[SequenceNumber, int, list[object]]:
    """The E-133 mechanism on one authority: purge a tombstone at 4, then answer a replica still at 3."""
    qm = authority_with_tombstones(1300, 1280, 4)
    objects.purge_deleted_objects(qm, Context("PEC0", mode), part(qm))
    ctx = Context("PEC0", mode)
    server.receive_sync_request(qm, ctx, SyncRequestMessage(
        SITE1, PEC_PARTITION_ID, S(3), MAX_SEQ_NUMBER, MIN_SEQ_NUMBER, False, Scope.ENTERPRISE, "PSC1"))
    (answer,) = sent(ctx)
    return part(qm).purged_seq_number, len(qm.deleted_objects), [type(answer.body).__name__]


def world_missing_a_purged_deletion(mode: Mode) -> tuple[World, Guid, list[dict]]:
    """PEC0, site1/PSC1 and BSC11; BSC11 is down while PSC1 deletes a queue and makes 1400 more changes.

    The enterprise is built in clarified mode (in literal mode no replica ever synchronizes:
    E-112, E-114, E-119); ``mode`` governs the deletion, the churn, the purges and the resync.
    """
    trace: list[dict] = []
    world = World(mode=CLARIFIED, trace=trace.append)
    bootstrap_pec(world, "PEC0", "site0")
    add_site(world, "site1", "PSC1")
    world.settle()
    add_bsc(world, "site1", "BSC11")
    world.settle()

    def queue(operation: str, name: str, *properties: Property) -> None:
        world.client_request("PSC1", ClientRequest(operation, QUEUE, SITE1, path_name=f"PSC1\\{name}",
                                                   properties=properties))

    queue("create", "doomed", Property(P["PROPID_Q_PATHNAME"], "PSC1\\doomed"))
    queue("create", "busy", Property(P["PROPID_Q_PATHNAME"], "PSC1\\busy"))
    world.advance(30)
    doomed = world.nodes["PSC1"].directory.find(path_name="PSC1\\doomed", object_type=int(QUEUE)).guid
    assert world.nodes["BSC11"].directory.find(guid=doomed) is not None
    world.mode = mode
    world.crash("BSC11")
    queue("delete", "doomed")
    for batch in range(14):  # PEC0 acknowledges every 256 changes; PSC1 purges every 256
        for i in range(100):
            queue("update", "busy", Property(P["PROPID_Q_LABEL"], f"v{batch}.{i}"))
        world.advance(30)
    world.advance(21 * 60)  # what PSC1 held for BSC11 expires (TimeToReachQueue 20 minutes)
    mark = len(trace)
    world.restart("BSC11")
    assert world.settle()
    return world, doomed, trace[mark:]


@covers("MC-MQDSRP", "3.1.7.2.9")
@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
def test_e133_replica_missing_purged_deletion_resyncs_through_already_purged(mode):
    """A BSC that missed a deletion whose tombstone was purged keeps the object in literal mode and goes through AlreadyPurged + sync0 in clarified mode."""
    purged, tombstones_left, answer = purge_then_answer(mode)
    assert tombstones_left == 0  # both readings remove the tombstone ...
    # ... only the clarified one records it, so only it can answer AlreadyPurged
    assert (purged, answer) == ((MIN_SEQ_NUMBER, ["SyncReplyMessage"]) if mode is LITERAL
                                else (S(276), ["AlreadyPurgedMessage"]))

    world, doomed, after = world_missing_a_purged_deletion(mode)
    bsc, site1 = world.nodes["BSC11"], part(world.nodes["PSC1"], SITE1)
    already_purged = [e for e in after if e["event"] == "receive" and e["node"] == "BSC11"
                      and bytes.fromhex(e["body"])[17] == mqdsrp.Operation.ALREADY_PURGED]
    resets = [e["operation"] for e in after if e["event"] == "directory" and e["node"] == "BSC11"
              and e["operation"].startswith("reset")]
    assert world.nodes["PSC1"].directory.find(guid=doomed) is None
    if mode is LITERAL:
        assert site1.purged_seq_number == MIN_SEQ_NUMBER
        assert (already_purged, resets) == ([], [])
        assert bsc.directory.find(guid=doomed) is not None
        assert any(f"keeps object {doomed}" in p for p in convergence_problems(world))
    else:
        assert site1.purged_seq_number > S(4)  # past the deletion's sequence number
        # the restarted BSC asks at start and again when a SeqNumberHeader shows it is behind (E-264):
        # every AlreadyPurged after the first is ignored ("dirPartition.PurgedSeqNumber >= ..."), one sync0
        assert len(already_purged) >= 1 and resets == ["reset1", "reset2"]
        assert bsc.directory.find(guid=doomed) is None
        assert convergence_problems(world) == []


@covers("MC-MQDSRP", "3.3.7.7")
def test_e134_already_purged_starts_sync0_with_its_purged_seq_number():
    """Both modes pass the AlreadyPurgedMessage's PurgedSeqNumber to Start Sync0 State, which tests iPartition."""
    for mode in MODES:
        for last, starts in ((3, True), (10, False)):
            qm = psc1()
            part(qm).last_seq_number = S(last)
            ctx = Context("PSC1", mode)
            client.receive_already_purged(qm, ctx, AlreadyPurgedMessage(SITE0, PEC_PARTITION_ID, S(10)))
            requests = [m.body for m in sent(ctx, SyncRequestMessage)]
            if starts:
                assert (part(qm).purge_state, part(qm).purged_seq_number) == (PurgeState.SYNC0, S(10))
                assert [(r.is_sync0, r.known_purged_seq_number) for r in requests] == [(True, S(10))]
            else:
                assert (part(qm).purge_state, requests) == (PurgeState.NORMAL, [])


@covers("MC-MQDSRP", "3.3.7.11")
def test_e135_complete_sync0_tests_purge_state_values_two_and_three():
    """Both modes complete sync0 from PurgeState 2 (SYNC0) or 3 (COMPLETESYNC0) only; nothing sets COMPLETESYNC0."""
    for mode in MODES:
        for state in PurgeState:
            qm = psc1()
            part(qm).purge_state = state
            client.complete_sync0_state(qm, Context("PSC1", mode), part(qm))
            completes = state in (PurgeState.SYNC0, PurgeState.COMPLETESYNC0)
            assert part(qm).purge_state is (PurgeState.NORMAL if completes else state)
    for module in (client, common, objects, server):
        assert "= PurgeState.COMPLETESYNC0" not in inspect.getsource(module)


# --- [MS-MQDS] modelling ----------------------------------------------------------------------


@covers("MC-MQDSRP", "3.1.7.1.2")
def test_e180_replicated_create_raises_propagate_directory_change():
    """Both modes: Create Directory Object with iReplicate true queues the change for every neighbor; false does not."""
    for mode in MODES:
        for replicate, queued in ((True, 1), (False, 0)):
            qm = pec()
            qm.psc_neighbors.append(DirectoryNeighbor(SITE1, "PSC1"))
            status = create_directory_object(qm, Context("PEC0", mode), int(CN), "cn1", cn_props("cn1", G1),
                                             PEC_PARTITION_ID, S(1), replicate)
            assert status == st.MQ_OK
            assert len(qm.psc_neighbors[0].available_changes) == queued
            assert part(qm).last_seq_number == (S(1) if replicate else MIN_SEQ_NUMBER)


@covers("MC-MQDSRP", "4.3")
def test_e181_client_change_is_applied_at_authority_and_forwarded_elsewhere():
    """Both modes: the authority applies a client's change at once; any other server sends Change Remote Object and waits."""
    request = ClientRequest("create", CN, PEC_PARTITION_ID, path_name="cn1", properties=cn_props("cn1", G1))
    for mode in MODES:
        authority = pec()
        ctx = Context("PEC0", mode)
        number = directory_client_request(authority, ctx, request, G2)
        assert [(e.request, e.status) for e in ctx.effects if type(e) is RequestCompleted] == [(number, st.MQ_OK)]
        assert part(authority).last_seq_number == S(1) and authority.directory.find(guid=G1) is not None
        bsc = make_server("BSC11", Role.BSC, SITE1, psc="PSC1")
        ctx = Context("BSC11", mode)
        number = directory_client_request(bsc, ctx, request, G2)
        assert [e for e in ctx.effects if type(e) is RequestCompleted] == []
        assert [m.destination for m in sent(ctx, ChangeRequestMessage)] == ["PSC1"]
        assert [p.client_request for p in bsc.pending_requests.values()] == [number]


@covers("MC-MQDSRP", "3.1.7.1.2")
def test_e182_created_object_guid_travels_in_identity_property():
    """Both modes add the identity property to a client's create, so a replica gives the object the same GUID."""
    for mode in MODES:
        authority = psc1(owns_site=True)
        authority.bsc_neighbors.append(DirectoryNeighbor(SITE1, "BSC11"))
        directory_client_request(authority, Context("PSC1", mode), ClientRequest(
            "create", QUEUE, SITE1, path_name="PSC1\\q", properties=(Property(P["PROPID_Q_PATHNAME"], "PSC1\\q"),)),
            G1)
        (change,) = authority.bsc_neighbors[0].available_changes
        assert change.property_value(P["PROPID_Q_INSTANCE"]) == G1
        bsc = make_server("BSC11", Role.BSC, SITE1, replicas=((SITE1, "PSC1"),), psc="PSC1")
        common.handle_directory_change(bsc, Context("BSC11", mode), part(bsc, SITE1), change, False)
        assert bsc.directory.find(guid=G1).path_name == "PSC1\\q"


@covers("MC-MQDSRP", "4")
def test_e184_enterprise_is_installed_by_the_pec_own_clients():
    """Both modes: bootstrap_pec creates the enterprise, site0 and PEC machine; new servers start after their objects exist."""
    for mode in MODES:
        trace: list[dict] = []
        world = World(mode=mode, trace=trace.append)
        bootstrap_pec(world, "PEC0", "site0")
        qm = world.nodes["PEC0"]
        assert qm.my_enterprise_partition is part(qm) and qm.my_site_partition is part(qm, SITE0)
        assert [(o.object_type, o.path_name) for o in qm.directory.objects_in(PEC_PARTITION_ID)] == [
            (int(ENTERPRISE), "enterprise"), (int(SITE), "site0")]
        assert [(o.object_type, o.path_name) for o in qm.directory.objects_in(SITE0)] == [(int(MACHINE), "PEC0")]
        add_site(world, "site1", "PSC1")
        world.settle()
        add_bsc(world, "site1", "BSC11")
        events = [(e["event"], e["node"], e.get("type"), e.get("path")) for e in trace
                  if e["event"] in ("client_request", "start")]
        assert events.index(("client_request", "PEC0", "site", "site1")) < events.index(("start", "PSC1", None, None))
        assert events.index(("client_request", "PSC1", "machine", "BSC11")) < events.index(
            ("start", "BSC11", None, None))
        assert part(qm, SITE1).authority_name == "PSC1" and [n.machine_name for n in qm.psc_neighbors] == ["PSC1"]
