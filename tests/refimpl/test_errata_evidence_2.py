"""Runnable evidence for the MC-MQDSRP handler errata E-136 .. E-169 (continues test_errata_evidence.py).

Same shape as the first file: each ``test_eNNN_*`` builds the smallest situation that shows entry
E-NNN's claim, runs it in the literal and the clarified reading (``Context(node, mode)``) and
asserts the difference the entry's ``problem`` and ``resolution`` state; entries resolved the same
way in "both modes" assert the shared behaviour in both. The builders come from the first file.
The register points here with ``pytest tests/refimpl/test_errata_evidence_2.py -k eNNN``.
"""

from __future__ import annotations

from mqspec.model import mqdsrp
from mqspec.model.guid import Guid
from mqspec.model.mqdsrp import (
    ChangePropagationMessage,
    ChangeReplyMessage,
    ChangeRequestMessage,
    Command,
    CompleteSync0,
    DirectoryChange,
    SyncReplyMessage,
    SyncRequestMessage,
)
from mqspec.model.propvalue import Property
from mqspec.model.seqnum import MIN_SEQ_NUMBER
from mqspec.refimpl import mqdsrp_client as client
from mqspec.refimpl import mqdsrp_common as common
from mqspec.refimpl import mqdsrp_objects as objects
from mqspec.refimpl import mqdsrp_server as server
from mqspec.refimpl import status as st
from mqspec.refimpl.effects import (
    Context,
    DirectoryOperation,
    RequestCompleted,
    StartTimer,
    TimerScope,
)
from mqspec.refimpl.mqds import ClientRequest, directory_client_request
from mqspec.refimpl.mqdsrp_state import (
    PEC_PARTITION_ID,
    SERVICE_BSC,
    DirectoryNeighbor,
    Role,
    lose_volatile_state,
)

from mqspec.clauses import covers

from .test_errata_evidence import (
    CLARIFIED,
    CN,
    G1,
    G2,
    G3,
    LITERAL,
    MACHINE,
    MODES,
    QUEUE,
    SITE,
    SITE0,
    SITE1,
    SITE2,
    P,
    S,
    cn_create,
    cn_props,
    make_server,
    part,
    pec,
    psc1,
    sent,
    site_props,
    store_cn,
    timers,
)


def cn_sync(seq: int, name: str, guid: Guid) -> DirectoryChange:
    """A connected network as a sync reply carries it (3.2.7.8): Command 0x03, named by GUID, PreviousSeqNumber 0."""
    return DirectoryChange(Command.SYNC, PEC_PARTITION_ID, MIN_SEQ_NUMBER, S(seq), MIN_SEQ_NUMBER,
                           cn_props(name, guid), guid_identifier=guid)


def sync_reply(from_seq: int, to_seq: int, *changes: DirectoryChange) -> SyncReplyMessage:
    return SyncReplyMessage(SITE0, PEC_PARTITION_ID, S(from_seq), S(to_seq), MIN_SEQ_NUMBER, CompleteSync0.NOT_IN_SYNC0,
                            changes)


def requests(ctx: Context) -> list[tuple[int, int]]:
    """(FromSeqNumber, ToSeqNumber) of each sync request ``ctx`` sent."""
    return [(m.body.from_seq_number.value, m.body.to_seq_number.value) for m in sent(ctx, SyncRequestMessage)]


def operations(ctx: Context) -> list[tuple[str, int, int]]:
    """(operation, object type, status) of each [MS-MQDS] event ``ctx`` recorded."""
    return [(e.operation, e.object_type, e.status) for e in ctx.effects if type(e) is DirectoryOperation]


def store_site(qm, name: str, site: Guid, psc: str) -> None:
    """Put a site object straight into the local directory (set-up, not protocol)."""
    values = {p.propid: p.value for p in site_props(name, site, psc)}
    assert qm.directory.create(SITE, name, site, values, PEC_PARTITION_ID, S(1)) == st.MQ_OK


# --- 3.1.5 and 3.1.7.1 ------------------------------------------------------------------------


@covers("MC-MQDSRP", "3.1.5.2")
def test_e169_change_for_unknown_partition_skips_only_that_change():
    """Both modes read "If dirPartition is not found: Take no further action" as skipping that change: the next one applies."""
    unknown = DirectoryChange(Command.CREATE, SITE2, MIN_SEQ_NUMBER, S(1), MIN_SEQ_NUMBER, cn_props("cnX", G3),
                              path_name="cnX")
    for mode in MODES:
        qm = psc1()
        ctx = Context("PSC1", mode)
        common.processing_directory_changes(qm, ctx, (unknown, cn_create(1, 0, "cn1", G1)), check_flush=False)
        assert [(e.operation, e.path_name) for e in ctx.effects if type(e) is DirectoryOperation] == [
            ("create", "cn1")]
        assert part(qm).last_seq_number == S(1)
        assert [o.guid for o in qm.directory.objects_in(PEC_PARTITION_ID)] == [G1]


@covers("MC-MQDSRP", "3.1.7.1.1")
def test_e163_request_identifiers_stay_unique_across_a_crash():
    """Both modes go on numbering after a crash, so a late reply to the request from before it completes nothing."""
    for mode in MODES:
        bsc = make_server("BSC11", Role.BSC, SITE1, psc="PSC1")
        before = Context("BSC11", mode)
        common.change_remote_object(bsc, before, 0x00, int(CN), "cn1", None, PEC_PARTITION_ID, cn_props("cn1", G1),
                                    client_request=1)
        lose_volatile_state(bsc)
        common.common_initialization(bsc, Context("BSC11", mode))
        after = Context("BSC11", mode)
        common.change_remote_object(bsc, after, 0x00, int(CN), "cn2", None, PEC_PARTITION_ID, cn_props("cn2", G2),
                                    client_request=1)
        assert [m.body.request_identifier for ctx in (before, after) for m in sent(ctx, ChangeRequestMessage)] == [
            1, 2]
        late = Context("BSC11", mode)
        client.receive_change_reply(bsc, late, ChangeReplyMessage(SITE1, 1, st.MQDS_OBJECT_EXISTS, "BSC11"))
        assert late.effects == []
        assert list(bsc.pending_requests) == [("BSC11", 2)]


@covers("MC-MQDSRP", "3.1.7.1.2")
def test_e139_sync_branch_takes_the_object_type_argument():
    """A propagated sync of a connected network is read as a queue (its second value, PROTOCOLID 1) and fails in literal mode."""
    properties = (Property(P["PROPID_CN_NAME"], "cn1"), Property(P["PROPID_CN_PROTOCOLID"], 1))
    outcome = {}
    for mode in MODES:
        qm = pec()
        qm.psc_neighbors.append(DirectoryNeighbor(SITE1, "PSC1"))
        ctx = Context("PEC0", mode)
        common.propagate_directory_change(qm, ctx, 0x03, int(CN), None, G1, PEC_PARTITION_ID, properties, S(1))
        outcome[mode] = (operations(ctx), [(o.object_type, o.guid) for o in qm.directory.objects.values()])
        # queued either way: created (clarified), or in spite of the failure (literal, E-100)
        assert [c.command for c in qm.psc_neighbors[0].available_changes] == [Command.SYNC]
    assert outcome[LITERAL] == ([("read", int(QUEUE), st.MQDS_OBJECT_NOT_FOUND),
                                 ("create", int(QUEUE), st.MQ_ERROR_ILLEGAL_PROPID)], [])
    assert outcome[CLARIFIED] == ([("read", int(CN), st.MQDS_OBJECT_NOT_FOUND), ("create", int(CN), st.MQ_OK)],
                                  [(int(CN), G1)])


# --- 3.1.7.2 ----------------------------------------------------------------------------------


@covers("MC-MQDSRP", "3.1.7.2.4")
def test_e136_in_order_pending_change_beyond_the_window_is_applied():
    """Literal mode never applies change 7 queued behind 6: every reply asks for [6, 6] again; clarified applies 5, 6 and 7 from the first reply."""
    outcome = {}
    for mode in MODES:
        qm = psc1()
        p = part(qm)
        p.last_seq_number, p.change_missing_window = S(4), MIN_SEQ_NUMBER
        # 6 and 7 arrive before 5: the first widens the window to 6 and asks for [4, 6] (3.1.7.2.2)
        arrive = Context("PSC1", mode)
        for seq, name, guid in ((6, "cn6", G2), (7, "cn7", G3)):
            common.handle_directory_change(qm, arrive, p, cn_create(seq, seq - 1, name, guid), check_flush=False)
        assert requests(arrive) == [(4, 6)] and p.change_missing_window == S(6)
        # the authority answers [4, 6], then a second time as the replica asks again
        rounds = []
        for reply in (sync_reply(4, 6, cn_sync(5, "cn5", G1), cn_sync(6, "cn6", G2)),
                      sync_reply(6, 6, cn_sync(6, "cn6", G2))):
            ctx = Context("PSC1", mode)
            client.receive_sync_reply(qm, ctx, reply)
            rounds.append((p.last_seq_number.value, [c.seq_number.value for c in p.pending_changes], requests(ctx)))
        outcome[mode] = rounds
    assert outcome[LITERAL] == [(6, [7], [(6, 6), (6, 6)]), (6, [7], [(6, 6)])]
    assert outcome[CLARIFIED] == [(7, [], []), (7, [], [])]


@covers("MC-MQDSRP", "3.1.7.2.5")
def test_e168_bsc_is_no_authority_of_its_own_site_partition():
    """Both modes give a BSC iReplicate false for its MySitePartition, and Propagate Directory Change does nothing at a BSC anyway."""
    q1 = (Property(P["PROPID_Q_PATHNAME"], "PSC1\\q1"), Property(P["PROPID_Q_INSTANCE"], G1))
    q2 = (Property(P["PROPID_Q_PATHNAME"], "PSC1\\q2"), Property(P["PROPID_Q_INSTANCE"], G2))
    for mode in MODES:
        bsc = make_server("BSC11", Role.BSC, SITE1, replicas=((SITE1, "PSC1"),), psc="PSC1")
        site = part(bsc, SITE1)
        assert site is bsc.my_site_partition and not bsc.is_authority_of(site)
        bsc.bsc_neighbors.append(DirectoryNeighbor(SITE1, "BSC12"))  # only to see that nothing is queued
        ctx = Context("BSC11", mode)
        status, _ = objects.handle_directory_create(bsc, ctx, site, int(QUEUE), "PSC1\\q1", q1, S(3),
                                                    post_create=False)
        assert status == st.MQ_OK and operations(ctx) == [("create", int(QUEUE), st.MQ_OK)]
        # what the literal myPartition (true at a BSC) would raise: it does nothing here
        literal_reading = Context("BSC11", mode)
        common.propagate_directory_change(bsc, literal_reading, 0x00, int(QUEUE), "PSC1\\q2", None, SITE1, q2, S(4))
        assert literal_reading.effects == []
        assert (bsc.bsc_neighbors[0].available_changes, site.last_seq_number) == ([], MIN_SEQ_NUMBER)


@covers("MC-MQDSRP", "3.1.7.2.8")
def test_e161_sync_updates_the_object_named_by_its_guid():
    """Both modes pass iGuidIdentifier to Update Directory Object, so a GUID-named sync change updates the replica's object."""
    for mode in MODES:
        qm = psc1()
        store_cn(qm, "cn1", G1, 1)
        ctx = Context("PSC1", mode)
        result = objects.handle_directory_sync(qm, ctx, part(qm), int(CN), None, G1,
                                               (Property(P["PROPID_CN_PROTOCOLID"], 7),), S(4))
        assert result == (st.MQ_OK, False)
        assert [(e.operation, e.path_name, e.guid, e.status) for e in ctx.effects] == [
            ("read", None, G1, st.MQ_OK), ("update", None, G1, st.MQ_OK)]
        assert qm.directory.properties_of(G1)[P["PROPID_CN_PROTOCOLID"]] == 7
        assert qm.directory.find(guid=G1).seq_number == S(4)


@covers("MC-MQDSRP", "3.1.7.2.11")
def test_e162_path_named_site_update_moves_the_site_psc():
    """A client's path-named change of a site's PSC moves the partition and neighbor at the PEC and a replica only in clarified mode."""
    outcome = {}
    for mode in MODES:
        authority = pec(replicas=((SITE1, "PSC1"),))
        authority.psc_neighbors += [DirectoryNeighbor(SITE1, "PSC1"), DirectoryNeighbor(SITE2, "PSC2")]
        store_site(authority, "site1", SITE1, "PSC1")
        part(authority).last_seq_number = S(1)
        ctx = Context("PEC0", mode)
        directory_client_request(authority, ctx, ClientRequest(
            "update", SITE, PEC_PARTITION_ID, path_name="site1", properties=(Property(P["PROPID_S_PSC"], "PSC1B"),)),
            G1)
        assert [(e.request, e.status) for e in ctx.effects if type(e) is RequestCompleted] == [(1, st.MQ_OK)]
        (change,) = authority.psc_neighbors[1].available_changes
        assert (change.path_name, change.guid_identifier) == ("site1", None)  # 3.1.7.1.1: UseGuid 0x00
        # PSC2, a replica of site1's partition, applies the propagated change
        replica = make_server("PSC2", Role.PSC, SITE2, owns_site=True, replicas=((SITE1, "PSC1"),))
        replica.psc_neighbors.append(DirectoryNeighbor(SITE1, "PSC1"))
        store_site(replica, "site1", SITE1, "PSC1")
        part(replica).last_seq_number = S(1)
        common.handle_directory_change(replica, Context("PSC2", mode), part(replica), change, check_flush=False)
        assert part(replica).last_seq_number == S(2)
        outcome[mode] = [(part(qm, SITE1).authority_name, [n.machine_name for n in qm.psc_neighbors])
                         for qm in (authority, replica)]
    assert outcome[LITERAL] == [("PSC1", ["PSC1", "PSC2"]), ("PSC1", ["PSC1"])]
    assert outcome[CLARIFIED] == [("PSC1B", ["PSC1B", "PSC2"]), ("PSC1B", ["PSC1B"])]


@covers("MC-MQDSRP", "3.1.7.2.12")
def test_e160_machine_update_names_a_guid_named_machine_from_the_directory():
    """Both modes take a GUID-named machine's path name from the directory: a synced BSC becomes a named neighbor, and a demoted one is removed."""
    bsc_guid = Guid.from_name("qm:BSC11")
    for mode in MODES:
        qm = psc1(owns_site=True)
        qm.directory.create(MACHINE, "BSC11", bsc_guid, {P["PROPID_QM_PATHNAME"]: "BSC11", P["PROPID_QM_SERVICE"]: 0},
                            SITE1, S(1))
        promote = Context("PSC1", mode)
        result = objects.handle_directory_sync(qm, promote, part(qm, SITE1), int(MACHINE), None, bsc_guid,
                                               (Property(P["PROPID_QM_SERVICE"], SERVICE_BSC),), S(2))
        assert result == (st.MQ_OK, False)
        assert [(n.machine_name, n.partition_id) for n in qm.bsc_neighbors] == [("BSC11", SITE1)]
        assert [t.timer.args for t in timers(promote, "change_propagation")] == [("BSC11", "Intrasite")]
        demote = Context("PSC1", mode)
        objects.handle_directory_sync(qm, demote, part(qm, SITE1), int(MACHINE), None, bsc_guid,
                                      (Property(P["PROPID_QM_SERVICE"], 0),), S(3))
        assert qm.bsc_neighbors == []


# --- 3.2.7 Server events ----------------------------------------------------------------------


@covers("MC-MQDSRP", "3.2.7.2")
def test_e164_sync_change_request_names_its_object_by_guid():
    """Both modes pass the change's GuidIdentifier to Handle Directory Sync, so a GUID-named sync request updates the object."""
    request = ChangeRequestMessage(SITE1, PEC_PARTITION_ID, 3, "PSC1", None, DirectoryChange(
        Command.SYNC, PEC_PARTITION_ID, MIN_SEQ_NUMBER, MIN_SEQ_NUMBER, MIN_SEQ_NUMBER,
        (Property(P["PROPID_CN_PROTOCOLID"], 7),), guid_identifier=G1))
    for mode in MODES:
        qm = pec()
        store_cn(qm, "cn1", G1, 1)
        part(qm).last_seq_number = S(1)
        ctx = Context("PEC0", mode)
        server.receive_change_request(qm, ctx, request)
        assert [(e.operation, e.guid, e.status) for e in ctx.effects if type(e) is DirectoryOperation] == [
            ("read", G1, st.MQ_OK), ("update", G1, st.MQ_OK)]
        assert [(m.destination, m.body.request_identifier, m.body.result) for m in sent(ctx, ChangeReplyMessage)] == [
            ("PSC1", 3, st.MQ_OK)]
        assert part(qm).last_seq_number == S(2)
        assert qm.directory.properties_of(G1)[P["PROPID_CN_PROTOCOLID"]] == 7


@covers("MC-MQDSRP", "3.2.7.6")
def test_e165_psc_replies_to_its_new_bsc_not_to_itself():
    """A BSC not yet a neighbor of its own PSC gets MQDS_NO_RSP_FROM_OWNER for an applied change in literal mode and MQ_OK in clarified mode."""
    outcome = {}
    for mode in MODES:
        bsc = make_server("BSC11", Role.BSC, SITE1, replicas=((SITE1, "PSC1"),), psc="PSC1")
        ask = Context("BSC11", mode)
        common.change_remote_object(bsc, ask, 0x00, int(QUEUE), "BSC11\\q", None, SITE1, (
            Property(P["PROPID_Q_PATHNAME"], "BSC11\\q"), Property(P["PROPID_Q_INSTANCE"], G1)), client_request=5)
        (request,) = sent(ask, ChangeRequestMessage)
        assert (request.destination, request.body.requester_name, request.body.psc_name) == ("PSC1", "BSC11", "PSC1")
        authority = psc1(owns_site=True)  # BSC11 is not in its BSCNeighborCollection yet
        serve = Context("PSC1", mode)
        server.receive_change_request(authority, serve, request.body)
        assert authority.directory.find(guid=G1) is not None  # applied in both modes
        (reply,) = sent(serve, ChangeReplyMessage)
        done = Context("BSC11", mode)
        if reply.destination == "BSC11":
            client.receive_change_reply(bsc, done, reply.body)
        else:
            itself = Context("PSC1", mode)
            client.receive_change_reply(authority, itself, reply.body)
            assert itself.effects == []  # PSC1 waits for no such request
            (wait,) = [e for e in ask.effects if type(e) is StartTimer and e.timer.kind == "change_request_wait"]
            client.change_request_wait_expired(bsc, done, wait.timer.args[0])
        outcome[mode] = (reply.destination, [(e.request, e.status) for e in done.effects if type(e) is RequestCompleted])
    assert outcome[LITERAL] == ("PSC1", [(5, st.MQDS_NO_RSP_FROM_OWNER)])
    assert outcome[CLARIFIED] == ("BSC11", [(5, st.MQ_OK)])


# --- 3.3.7 Client events ----------------------------------------------------------------------


@covers("MC-MQDSRP", "3.3.7.2")
def test_e137_every_neighbor_gets_the_seqnumberheader():
    """Counted per server the 20-minute header always goes to PSC1, whose timer fires first, so PSC2 never learns it is behind; per neighbor both get it and PSC2 asks for the gap."""
    outcome = {}
    for mode in MODES:
        qm = pec()
        part(qm).last_seq_number = S(5)
        qm.psc_neighbors += [DirectoryNeighbor(SITE1, "PSC1"), DirectoryNeighbor(SITE2, "PSC2")]
        # PSC2 lost change 5 and has nothing pending: only a header tells it (3.2.7.1)
        psc2 = make_server("PSC2", Role.PSC, SITE2, owns_site=True)
        part(psc2).last_seq_number, part(psc2).change_missing_window = S(4), MIN_SEQ_NUMBER
        headers: dict[str, list[int]] = {"PSC1": [], "PSC2": []}
        asked = []
        for now in range(0, 2401, 10):  # the Intersite timers fire every 10 s, PSC1's first
            ctx = Context("PEC0", mode, float(now))
            for name in ("PSC1", "PSC2"):
                client.change_propagation_timer_event(qm, ctx, name, TimerScope.INTERSITE)
            for message in sent(ctx, ChangePropagationMessage):
                if message.body.seq_numbers.partitions:
                    headers[message.destination].append(now)
                if message.destination == "PSC2":
                    receive = Context("PSC2", mode, float(now))
                    server.receive_change_propagation(psc2, receive, message.body)
                    asked += [(now, *r) for r in requests(receive)]
        outcome[mode] = (headers, asked)
    assert outcome[LITERAL] == ({"PSC1": [0, 1200, 2400], "PSC2": []}, [])
    # clarified: every header reaches PSC2, which asks for (4, 5] each time (the window is 5, E-116,
    # and a header at the window asks again, in case the previous reply was lost)
    assert outcome[CLARIFIED] == ({"PSC1": [0, 1200, 2400], "PSC2": [0, 1200, 2400]},
                                  [(0, 4, 5), (1200, 4, 5), (2400, 4, 5)])


@covers("MC-MQDSRP", "3.3.7.5")
def test_e166_empty_sync_reply_never_moves_last_seq_number_back():
    """A sync request sent with the window at MIN asks for ToSeqNumber MIN; its empty reply moves LastSeqNumber to MIN only in literal mode."""
    outcome = {}
    for mode in MODES:
        qm = psc1()
        p = part(qm)
        p.last_seq_number, p.change_missing_window = S(6), MIN_SEQ_NUMBER
        ask = Context("PSC1", mode)
        client.send_sync_request(qm, ask, p)
        assert requests(ask) == [(6, 0)]
        answer = Context("PSC1", mode)
        client.receive_sync_reply(qm, answer, sync_reply(6, 0))
        assert answer.effects == []
        outcome[mode] = (p.last_seq_number, p.change_missing_window)
    assert outcome[LITERAL] == (MIN_SEQ_NUMBER, MIN_SEQ_NUMBER)
    assert outcome[CLARIFIED] == (S(6), MIN_SEQ_NUMBER)


@covers("MC-MQDSRP", "3.3.7.9")
def test_e167_every_bad_signature_nack_is_answered_by_a_resend():
    """Both modes resend at once for each NackBadSignature, without limit, with timeout 10 and priority 3 instead of the original's."""
    change_request = ChangeRequestMessage(SITE1, PEC_PARTITION_ID, 9, "PSC1", None, cn_create(1, 0, "cn1", G1))
    for mode in MODES:
        qm = pec()
        first = Context("PEC0", mode)
        server.send_change_reply(qm, first, st.MQ_OK, change_request)
        (original,) = sent(first)
        assert (original.time_to_reach_queue, original.priority) == (10, 8)
        ctx = Context("PEC0", mode)
        for _ in range(3):
            client.receive_request_nack(qm, ctx, mqdsrp.encode(original.body), client.NACK_BAD_SIGNATURE,
                                        original.format_name)
        client.receive_request_nack(qm, ctx, mqdsrp.encode(original.body), client.NACK_BAD_SIGNATURE - 1,
                                    original.format_name)
        assert [(m.destination, m.body, m.time_to_reach_queue, m.priority) for m in sent(ctx)] == [
            ("PSC1", original.body, 10, 3)] * 3


# --- E-310 .. E-313: found by the PSC-rename and new-site scenarios (issue 13) ---------------------


@covers("MC-MQDSRP", "3.3.6.1")
def test_e310_renamed_psc_neighbor_keeps_its_propagation_timer():
    """Both modes: the PEC's timer of a renamed PSC neighbor moves to the new name and still sends the neighbor its changes."""
    from mqspec.refimpl.world import fire_timer

    for mode in MODES:
        qm = pec(replicas=((SITE1, "PSC1"),))
        neighbor = DirectoryNeighbor(SITE1, "PSC1")
        qm.psc_neighbors = [neighbor]
        ctx = Context("PEC0", mode)
        objects.handle_site_update(qm, ctx, "site1", SITE1, (Property(P["PROPID_S_PSC"], "PSC1b"),), False)
        old_key = client.change_propagation_timer(DirectoryNeighbor(SITE1, "PSC1"), TimerScope.INTERSITE)
        assert [c.timer for c in ctx.effects if type(c).__name__ == "CancelTimer"] == [old_key]
        [started] = timers(ctx, "change_propagation")
        assert started.timer.args == ("PSC1b", "Intersite")
        neighbor.available_changes.append(cn_create(1, 0, "cn1", G1))
        fired = Context("PEC0", mode)
        fire_timer(qm, fired, started.timer)
        assert [m.destination for m in sent(fired, ChangePropagationMessage)] == ["PSC1b"]
        assert neighbor.available_changes == []


@covers("MC-MQDSRP", "3.1.7.2.2")
def test_e311_out_of_order_change_with_a_window_of_max_asks_for_the_gap_only_when_clarified():
    """A replica whose full-sync request went unanswered (window MAX) asks for a gap at once only in clarified mode."""
    outcome = {}
    for mode in MODES:
        qm = pec(replicas=((SITE1, "PSC1"),))
        p = part(qm, SITE1)
        assert p.change_missing_window.value == 2**64 - 1
        ctx = Context("PEC0", mode)
        late = DirectoryChange(Command.CREATE, SITE1, S(1), S(2), S(0), cn_props("m2", G2), guid_identifier=G2)
        common.handle_directory_change(qm, ctx, p, late, True)
        outcome[mode] = ([c.seq_number.value for c in p.pending_changes], p.change_missing_window.value,
                         [(m.destination, m.body.from_seq_number.value, m.body.to_seq_number.value)
                          for m in sent(ctx, SyncRequestMessage)])
    assert outcome[LITERAL] == ([2], 2**64 - 1, [])
    assert outcome[CLARIFIED] == ([2], 2, [("PSC1", 0, 2)])


@covers("MC-MQDSRP", "3.1.7.2.11")
def test_e312_bsc_follows_its_sites_new_psc_only_when_clarified():
    """A BSC's MyPSCName follows a site update naming its site's new PSC in clarified mode; literal mode keeps the old name."""
    outcome = {}
    for mode in MODES:
        qm = make_server("BSC11", Role.BSC, SITE1, replicas=((SITE1, "PSC1"),), psc="PSC1")
        qm.my_psc_name = "PSC1"
        objects.handle_site_update(qm, Context("BSC11", mode), "site1", SITE1,
                                   (Property(P["PROPID_S_PSC"], "PSC1b"),), False)
        assert part(qm, SITE1).authority_name == "PSC1b"
        ctx = Context("BSC11", mode)
        client.send_sync_request(qm, ctx, part(qm, SITE1))
        outcome[mode] = (qm.my_psc_name, [m.destination for m in sent(ctx)])
    assert outcome[LITERAL] == ("PSC1", ["PSC1"])
    assert outcome[CLARIFIED] == ("PSC1b", ["PSC1b"])


@covers("MC-MQDSRP", "3.1.7.2.11")
def test_e313_moved_psc_owns_the_site_partition_and_every_server_follows():
    """Both modes: after move_psc the new PSC owns site1 at the old PSC's LastSeqNumber, the PEC and the BSC name it, the old one is gone."""
    from mqspec.refimpl.handover import move_psc
    from mqspec.refimpl.world import World, add_bsc, add_site, bootstrap_pec, create_machine

    w = World(seed=1)
    bootstrap_pec(w, "PEC0", "site0")
    w.settle(window=10, quiet=30)
    add_site(w, "site1", "PSC1")
    w.settle(window=10, quiet=30)
    add_bsc(w, "site1", "BSC11")
    create_machine(w, "PSC1", "C11", "site1")
    w.settle(window=10, quiet=30)
    before = w.nodes["PSC1"].find_partition(w.site_guid("site1")).last_seq_number
    assert move_psc(w, "site1", "PSC1b") == "PSC1"
    assert "PSC1" not in w.nodes
    new = w.nodes["PSC1b"]
    site1 = new.find_partition(w.site_guid("site1"))
    assert new.is_authority_of(site1) and site1.last_seq_number == before and site1.authority_name == "PSC1b"
    assert w.settle(window=10, quiet=60)
    assert w.converged()
    assert [n.machine_name for n in w.nodes["PEC0"].psc_neighbors] == ["PSC1b"]
    assert [n.machine_name for n in new.bsc_neighbors] == ["BSC11"]
    assert w.nodes["BSC11"].find_partition(w.site_guid("site1")).authority_name == "PSC1b"


@covers("MC-MQDSRP", "3.2.7.3")
def test_e314_psc_replica_stamps_its_sync_reply_with_the_allowed_purge_point_only_when_clarified():
    """A PSC that has not purged its enterprise replica as far as its headers allow stamps its sync reply and
    its changes with 0 (literal) and a BSC that purged that far refuses them; clarified it stamps the allowed point."""
    from mqspec.model.mqdsrp import Scope
    from mqspec.model.seqnum import MAX_SEQ_NUMBER

    outcome = {}
    for mode in MODES:
        qm = psc1(owns_site=True)
        store_cn(qm, "cn1", G1, 1300)
        store_cn(qm, "cn2", G2, 1400)
        enterprise = part(qm)
        enterprise.last_seq_number, enterprise.allowed_purge_seq_number = S(1400), S(261)
        ctx = Context("PSC1", mode)
        server.receive_sync_request(qm, ctx, SyncRequestMessage(
            SITE1, PEC_PARTITION_ID, S(1300), MAX_SEQ_NUMBER, S(261), False, Scope.NONE, "BSC11"))
        (reply,) = sent(ctx, SyncReplyMessage)
        # the lookup the reply is built from (literal mode sends a replica's objects not at all: E-117)
        (newest,) = server.lookup_directory_objects(qm, ctx, enterprise, CN, S(1301), S(1400), Scope.NONE)
        bsc = make_server("BSC11", Role.BSC, SITE1, psc="PSC1")
        replica = part(bsc)
        replica.last_seq_number, replica.purged_seq_number = S(1300), S(261)  # purged up to what PSC1's header allowed
        common.handle_directory_change(bsc, Context("BSC11", mode), replica, newest, True)
        outcome[mode] = (reply.body.purged_seq_number.value, newest.purged_seq_number.value, replica.last_seq_number.value)
    assert outcome[LITERAL] == (0, 0, 1300)
    assert outcome[CLARIFIED] == (261, 261, 1400)


@covers("MC-MQDSRP", "3.1.7.2.11")
def test_e315_a_psc_named_the_new_psc_of_its_own_site_owns_the_partition_only_when_clarified():
    """A PSC that learned its own site (PSC1 its PSC) before the site moved to it: on the update naming it, literal
    keeps it a replica of the partition it now owns (its neighbor, keyed by the enterprise partition, E-105, keeps
    the old name); clarified it owns the partition, and the old PSC's neighbor and timer are gone."""
    outcome = {}
    for mode in MODES:
        qm = make_server("PSC1m10", Role.PSC, SITE1)
        enterprise = part(qm)
        ctx = Context("PSC1m10", mode)
        # 3.1.7.2.5: the site object, created by the PEC when PSC1 was its PSC, reaches PSC1m10 by replication
        objects.handle_directory_create(qm, ctx, enterprise, int(SITE), "site1", site_props("site1", SITE1, "PSC1"),
                                        S(3), False)
        site = part(qm, SITE1)
        assert not qm.is_authority_of(site) and [n.machine_name for n in qm.psc_neighbors] == ["PSC1"]
        update = Context("PSC1m10", mode)
        objects.handle_site_update(qm, update, None, SITE1, (Property(P["PROPID_S_PSC"], "PSC1m10"),), False)
        cancelled = [e.timer.args for e in update.effects if type(e).__name__ == "CancelTimer"]
        outcome[mode] = (site.authority_name, qm.is_authority_of(site),
                         [n.machine_name for n in qm.psc_neighbors], cancelled)
    assert outcome[LITERAL] == ("PSC1m10", False, ["PSC1"], [])
    assert outcome[CLARIFIED] == ("PSC1m10", True, [], [("PSC1", TimerScope.INTERSITE.value)])
