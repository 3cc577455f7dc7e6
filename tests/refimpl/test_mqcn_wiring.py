"""MS-MQCN wired to MC-MQDSRP (refimpl/notify.py): directory changes reach the owning queue manager."""

from __future__ import annotations

from pathlib import Path

import pytest
from mqspec.model.guid import Guid
from mqspec.model.mqcn import Version, decode_body
from mqspec.model.propids import PROPIDS, ObjectType
from mqspec.model.propvalue import Property
from mqspec.refimpl import scenario as sc
from mqspec.refimpl.effects import Mode
from mqspec.refimpl.mqcn_state import ServerOptions
from mqspec.refimpl.mqds import ClientRequest
from mqspec.refimpl.notify import (
    Notifier,
    WorldDirectory,
    directory_server_ids,
    install_notifier,
    notifier_of,
)
from mqspec.refimpl.scenario_run import MessageCounter, _Runner
from mqspec.refimpl.world import World, delete_request

from mqspec.clauses import covers

P = {name: pdef.propid for name, pdef in PROPIDS.items()}
SCENARIO_43 = Path(__file__).resolve().parents[2] / "scenarios" / "4.3-creating-a-remote-queue.yaml"
MODES = [Mode.CLARIFIED, Mode.LITERAL]
QUEUE = ObjectType.MQDS_QUEUE


def enterprise_43(mode=Mode.CLARIFIED, *, trace=None):
    """The enterprise of scenario 4.3 (PEC0, PSC1 with C14, PSC2 with BSC21 and C22), built, and its runner."""
    scenario = sc.load(SCENARIO_43)
    counter = MessageCounter()

    def record(r):
        counter(r)
        if trace is not None:
            trace(r)

    world = World(mode=mode, trace=record)
    runner = _Runner(world, counter, scenario)
    runner.build()
    return world, runner, scenario


def with_c14(mode=Mode.CLARIFIED, *, version=1, mqcn_mode=None, options=None):
    world, runner, scenario = enterprise_43(mode)
    install_notifier(world, version=version, mode=mqcn_mode)
    c14 = world.add_queue_manager("C14", "site1", mode=mqcn_mode, options=options)
    return world, runner, scenario, c14


def create_queue(world, at="BSC21", path="C14\\testq", **props):
    props = props or {"PROPID_Q_LABEL": "testq", "PROPID_Q_QUOTA": 1000}
    properties = tuple(Property(P[name], value) for name, value in props.items())
    return world.client_request(at, ClientRequest("create", QUEUE, world.site_guid("site1"), path_name=path,
                                                  properties=properties))


def update_queue(world, guid, at="BSC21", **props):
    properties = tuple(Property(P[name], value) for name, value in props.items())
    return world.client_request(at, ClientRequest("update", QUEUE, world.site_guid("site1"), guid=guid,
                                                  properties=properties))


def sent_by(world) -> list[tuple[str, object]]:
    return [(e.node, e.message) for e in notifier_of(world).sent]


# --- the scenario: a queue created through BSC21 ends up in C14's QueueCollection ---------------


@covers("MS-MQCN", "3.3.4.1")
@pytest.mark.parametrize("mqcn_mode", MODES)
@pytest.mark.parametrize("version", [1, 2])
def test_4_3_queue_created_through_bsc21_ends_up_in_c14(mqcn_mode, version):
    """Scenario 4.3's steps hold, and PSC1 (the authority, alone) notifies C14, which creates C14\\testq."""
    world, runner, scenario, c14 = with_c14(version=version, mqcn_mode=mqcn_mode)
    runner.steps(scenario.steps, ())
    runner.finish()
    assert runner.failure_lines() == []
    q = c14.find_queue("C14\\testq")
    assert q is not None and (q.label, q.quota) == ("testq", 1000)
    guid = world.nodes["PSC1"].directory.find(path_name="C14\\testq", object_type=QUEUE).guid
    assert q.identifier == guid and list(c14.queues) == [guid]
    sent = sent_by(world)
    assert [node for node, _ in sent] == ["PSC1"] and sent[0][1].version == Version(version)


@covers("MS-MQCN", "3.2.5")
def test_4_3_in_a_literal_world_the_queue_never_reaches_the_directory_so_c14_is_not_told():
    """Literal MC-MQDSRP cannot create C14\\testq (test_4_3_literal_create_cannot_find_the_queue_machine)."""
    world, runner, scenario, c14 = with_c14(Mode.LITERAL)
    runner.steps(scenario.steps, ())
    assert any("is not in BSC21's directory" in line for line in runner.failure_lines())
    assert c14.queues == {} and notifier_of(world).sent == []


@covers("MS-MQCN", "3.2.3")
def test_the_wiring_is_opt_in_and_leaves_mqdsrp_traces_unchanged():
    """A World has no notifier or queue manager unless asked; an idle Notifier changes no trace record."""
    assert World().notifier == [] and World().queue_managers == {}
    traces = []
    for install in (False, True):
        records: list[dict] = []
        world, runner, scenario = enterprise_43(trace=records.append)
        if install:
            install_notifier(world)
        runner.steps(scenario.steps, ())
        traces.append(records)
    assert traces[0] == traces[1]


@covers("MS-MQCN", "3.2.3")
def test_a_queue_manager_gets_its_notification_queue_and_opens_it():
    """add_queue_manager puts notify_queue$ (PRIVATE=<guid>\\3) on the network and runs 3.2.3."""
    world, _, _, c14 = with_c14()
    fmt = f"PRIVATE={Guid.from_name('qm:C14')}\\3"
    assert world.network.resolve(fmt) == ("C14", "private$\\notify_queue$")
    assert c14.state.notification_queue == 1 and c14.state.directory_server == "PSC1"


# --- more changes, both versions ------------------------------------------------------------------


@covers("MS-MQCN", "3.3.5.2")
@pytest.mark.parametrize("version", [1, 2])
def test_updates_deletes_and_machine_changes_reach_c14(version):
    """An update (quota, label), a machine quota change and a delete made at BSC21 / PSC1 all reach C14."""
    world, _, _, c14 = with_c14(version=version)
    create_queue(world)
    world.advance(30)
    guid = next(iter(c14.queues))
    update_queue(world, guid, PROPID_Q_QUOTA=7, PROPID_Q_LABEL="renamed")
    world.advance(30)
    q = c14.queues[guid]
    assert q.quota == 7
    # a 0x01 update carries the label but the server MUST ignore it; a 0x02 update re-reads it (E-243)
    assert q.label == ("testq" if version == 1 else "renamed")
    machine = world.nodes["PSC1"].directory.find(path_name="C14", object_type=ObjectType.MQDS_MACHINE).guid
    world.client_request("PSC1", ClientRequest("update", ObjectType.MQDS_MACHINE, world.site_guid("site1"),
                                               guid=machine, properties=(Property(P["PROPID_QM_QUOTA"], 77),)))
    world.advance(30)
    assert c14.state.queue_manager_quota == 77
    delete_request(world, "BSC21", QUEUE, world.site_guid("site1"), guid=guid)
    world.advance(30)
    assert c14.queues == {}
    last = sent_by(world)[-1][1]
    if version == 1:  # the update named only what changed, after PROPID_Q_QMID
        update = next(m for _, m in sent_by(world) if m.updates and m.updates[0].command == 1).updates[0]
        ids = [p.propid for p in update.properties]
        assert ids[0] == P["PROPID_Q_QMID"] and sorted(ids[1:]) == sorted((P["PROPID_Q_QUOTA"], P["PROPID_Q_LABEL"]))
        assert last.updates[0].command == 2
    else:
        assert int(last.body.event) == 3


@covers("MS-MQCN", "3.3.4.1")
def test_only_registered_owners_are_notified():
    """A queue of C22 (no MS-MQCN queue manager here) and a machine creation send no notification."""
    world, _, _, c14 = with_c14()
    world.client_request("PSC2", ClientRequest("create", QUEUE, world.site_guid("site2"), path_name="C22\\q",
                                               properties=(Property(P["PROPID_Q_LABEL"], "q"),)))
    world.advance(30)
    assert notifier_of(world).sent == [] and c14.queues == {}


@covers("MS-MQCN", "3.3.5.3")
def test_the_notification_on_the_wire_is_the_message_plus_one_byte_signed_by_psc1():
    """The MSMQ message PSC1 sends: body = message + 1 byte, 300 s to reach the queue, signed sender PSC1."""
    records: list[dict] = []
    world, _, _ = enterprise_43(trace=records.append)
    install_notifier(world)
    world.add_queue_manager("C14", "site1")
    create_queue(world)
    world.advance(30)
    sends = [r for r in records if r["event"] == "mqcn_send"]
    assert len(sends) == 1 and sends[0]["node"] == "PSC1" and sends[0]["to"] == "C14"
    body = bytes.fromhex(sends[0]["body"])
    assert decode_body(body).updates[0].path_name == "C14\\testq"
    effect = notifier_of(world).sent[0]
    assert (effect.time_to_reach_queue, effect.sender_identifier) == (300, world.nodes["PSC1"].identifier)


# --- options, losses and the directory reader ------------------------------------------------------


@covers("MS-MQCN", "1.6")
@pytest.mark.parametrize("mode", MODES)
def test_batching_delays_the_create_by_one_minute(mode):
    """With batching (notes <3>/<13>) C14 holds the notification and creates the queue when the timer fires."""
    world, _, _, c14 = with_c14(mqcn_mode=mode, options=ServerOptions(batching=True))
    start = world.now
    create_queue(world)
    world.advance(30)
    assert c14.queues == {} and len(c14.state.batch) == 1
    world.run_until(start + 0.2 + 60)
    assert len(c14.queues) == 1 and c14.state.last_processed is not None


@covers("MS-MQCN", "1.6")
def test_100_notifications_make_c14_refresh_from_psc1():
    """100 creates while waiting: C14 ignores them and refreshes; only the clarified refresh adds new queues (E-249)."""
    counts = {}
    for mode in MODES:
        world, _, _, c14 = with_c14(mqcn_mode=mode, options=ServerOptions(batching=True))
        for i in range(100):
            create_queue(world, at="PSC1", path=f"C14\\q{i}")
        world.advance(120)
        assert c14.state.batch_count == 0 and c14.state.last_processed is not None
        counts[mode] = len(c14.queues)
    assert counts == {Mode.CLARIFIED: 100, Mode.LITERAL: 0}


@covers("MS-MQCN", "3.3.5.3")
def test_a_lost_notification_is_never_repeated():
    """E-251: Express, 5 minutes, no acknowledgment: a dropped notification leaves C14 without the queue."""
    world, _, _, c14 = with_c14()
    world.network.drop(lambda m: m.destination_format_name.endswith("\\3"))
    create_queue(world)
    world.advance(600)
    assert c14.queues == {} and len(notifier_of(world).sent) == 1


@covers("MS-MQCN", "3.2.5.1")
@pytest.mark.parametrize("mode", MODES)
def test_known_directory_servers_accept_psc1_and_refuse_others(mode):
    """E-239: directory_servers from the World accept PSC1's notification; a set without PSC1 refuses it in clarified mode."""
    world, _, _ = enterprise_43()
    c14 = world.add_queue_manager("C14", "site1", mode=mode,
                                  options=ServerOptions(directory_servers=directory_server_ids(world)))
    create_queue(world)
    world.advance(30)
    assert len(c14.queues) == 1
    world, _, _, c14 = with_c14(mqcn_mode=mode, options=ServerOptions(directory_servers=(Guid.from_name("x"),)))
    create_queue(world)
    world.advance(30)
    assert len(c14.queues) == (0 if mode is Mode.CLARIFIED else 1)


@covers("MS-MQCN", "3.2.3")
def test_a_workgroup_queue_manager_has_no_notification_queue():
    """Note <8>: no notify_queue$, so the notification cannot be delivered and nothing changes."""
    world, _, _, c14 = with_c14(options=ServerOptions(workgroup=True))
    create_queue(world)
    world.advance(30)
    assert c14.state.notification_queue is None and c14.queues == {}
    assert world.network.resolve(f"PRIVATE={Guid.from_name('qm:C14')}\\3") is None


@covers("MS-MQCN", "3.2.5.2")
def test_the_world_directory_reads_by_name_or_guid_and_not_from_a_down_server():
    """WorldDirectory finds a queue on PSC1 by its name or GUID; a crashed server answers nothing (E-242)."""
    world, _, _, c14 = with_c14()
    create_queue(world)
    world.advance(30)
    guid = next(iter(c14.queues))
    reader = WorldDirectory(world)
    psc1 = world.nodes["PSC1"].identifier
    assert reader.read("psc1", QUEUE, guid)[P["PROPID_Q_LABEL"]] == "testq"
    assert reader.read(psc1, QUEUE, None, "C14\\testq") is not None
    assert reader.queues_owned_by("PSC1", Guid.from_name("qm:C14"), "C14") == [guid]
    assert reader.read("nobody", QUEUE, guid) is None
    world.crash("PSC1")
    assert reader.read("PSC1", QUEUE, guid) is None and reader.queues_owned_by("PSC1", guid, "C14") == []


@covers("MS-MQCN", "3.3.4.1")
def test_installing_a_notifier_replaces_the_previous_one():
    """install_notifier keeps one Notifier in World.notifier; add_queue_manager installs a version 1 one if none."""
    world = World()
    first = install_notifier(world, version=2)
    second = install_notifier(world)
    assert world.notifier == [second] and isinstance(first, Notifier) and second.version is Version(1)
