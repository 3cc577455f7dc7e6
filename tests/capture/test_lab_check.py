"""Lab captures judged (issue 25 rows 9-13, 16): broadcasts reach the servers, nodes are endpoints, a
prober is not the server under test, MC-MQDSRP behaviour is replayed from a capture, and `mqspec check`
reads captures. Each capture is written with mqspec.capture.writer."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest

from mqspec.capture import mqqb
from mqspec.capture.writer import TcpConversation, udp_frame, write_pcap
from mqspec.clauses import covers
from mqspec.model import mqdsrp, mqsd
from mqspec.model.guid import Guid
from mqspec.mqsd_probe import ServerConfig, battery, expected
from mqspec.oracle.from_pcap import convert
from mqspec.oracle.record import scenario_trace
from mqspec.oracle.topology import load
from mqspec.oracle.trace_format import load as load_trace
from mqspec.refimpl.effects import Mode

from .lab import MQSD_SERVER, PARSED_REPLY, PARSED_REQUEST, REPLY, REQUEST, check_cli, judged, server, sidecar

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def nodes_of(path: Path, **topology) -> tuple[list[str], list[dict]]:
    """(the header's nodes, the datagram events) of a capture's trace."""
    (converted,) = load_trace("x", convert(path, topology=load(topology, "t")))
    return ([n["name"] for n in converted.header.get("nodes", [])],
            [e for e in converted.events if e["event"] == "datagram"])


# --- rows 9 and 10: broadcasts ------------------------------------------------------------------------


@covers("MS-MQSD", "3.2.5.1")
@pytest.mark.parametrize(("destination", "networks", "link"), [
    ("255.255.255.255", [], False),
    ("10.0.0.127", ["10.0.0.0/25"], False),
    ("10.0.0.255", [], True),
])
def test_rows9_and_10_a_broadcast_request_reaches_the_declared_server(tmp_path, destination, networks, link):
    """A request to 255.255.255.255, to a declared /25's broadcast address or as an Ethernet broadcast is
    received by the declared server, whose unicast reply conforms (not "sends nothing unasked"), and the
    broadcast address is no node."""
    path = tmp_path / "b.pcap"
    write_pcap(path, [udp_frame("10.0.0.9", 50000, destination, 1801, REQUEST, broadcast=link),
                      udp_frame("10.0.0.1", 1801, "10.0.0.9", 50000, REPLY)])
    report = judged(path, nodes=[server()], networks=networks)
    assert report.verdict == "conformant", report.to_json()
    names, datagrams = nodes_of(path, nodes=[server()], networks=networks)
    assert names == ["DC1"]
    assert [(e["node"], e["direction"], e["to"]) for e in datagrams] == [
        ("DC1", "receive", f"{destination}:1801"), ("DC1", "send", "10.0.0.9:50000")]


def test_row10_an_address_ending_in_255_inside_a_larger_network_is_a_host(tmp_path):
    """In a declared /23, 10.0.0.255 is a host, not a broadcast: without a topology's nodes it is a node
    of its own, and the server declared at 10.0.0.1 does not receive what was sent to it."""
    path = tmp_path / "h.pcap"
    write_pcap(path, [udp_frame("10.0.0.9", 50000, "10.0.0.255", 1801, REQUEST)])
    names, datagrams = nodes_of(path, networks=["10.0.0.0/23"])
    assert names == ["10.0.0.9", "10.0.0.255:1801"]
    assert [(e["node"], e["direction"]) for e in datagrams] == [("10.0.0.9", "send"), ("10.0.0.255:1801", "receive")]
    assert nodes_of(path, nodes=[server()], networks=["10.0.0.0/23"])[1] == []


# --- row 11: one address, two nodes ---------------------------------------------------------------------


def test_row11_a_client_and_a_server_on_one_address_are_two_nodes(tmp_path):
    """A client and a server both on 127.0.0.1: without a topology two nodes (the client by its address,
    the server by address and port); with the server declared at 127.0.0.1 it is judged and conforms."""
    path = tmp_path / "one.pcap"
    write_pcap(path, [udp_frame("127.0.0.1", 50000, "127.0.0.1", 1801, REQUEST),
                      udp_frame("127.0.0.1", 1801, "127.0.0.1", 50000, REPLY)])
    names, datagrams = nodes_of(path)
    assert names == ["127.0.0.1", "127.0.0.1:1801"]
    assert [(e["node"], e["direction"]) for e in datagrams] == [
        ("127.0.0.1", "send"), ("127.0.0.1:1801", "receive"), ("127.0.0.1:1801", "send"), ("127.0.0.1", "receive")]
    report = judged(path, nodes=[server("DC1", "127.0.0.1")])
    assert report.verdict == "conformant" and report.nodes == {"DC1": "conformant (MS-MQSD)"}
    client = {"name": "CL", "addresses": ["127.0.0.1"],
              "mqsd": {"role": "client", "enterprise": MQSD_SERVER["enterprise"], "site": MQSD_SERVER["site"]}}
    both = judged(path, nodes=[server("DC1", "127.0.0.1"), client])
    assert both.verdict == "conformant" and set(both.nodes) == {"DC1", "CL"}


# --- row 12: a capture taken while probing ------------------------------------------------------------------


def probe_capture(path: Path, *, answer_garbage: bool = False) -> None:
    """What the wire shows while `mqspec mqsd probe` tests a server configured as the section 4 reply's:
    every case of its battery from 127.0.0.1:50000, and the reference server's answer (or silence)."""
    config = ServerConfig(PARSED_REQUEST.enterprise_id, PARSED_REQUEST.site_id, (),
                          tuple(PARSED_REPLY.connected_networks))
    frames = []
    for case in battery(config):
        frames.append(udp_frame("127.0.0.1", 50000, "127.0.0.1", 1801, case.data))
        reply, _why = expected(config, case.data, Mode.CLARIFIED)
        if reply is None and case.name == "garbage" and answer_garbage:
            reply = mqsd.decode(REPLY)
        if reply is not None:
            frames.append(udp_frame("127.0.0.1", 1801, "127.0.0.1", 50000, mqsd.encode(reply)))
    write_pcap(path, frames)


def test_row12_a_capture_taken_while_probing_judges_the_server_not_the_prober(tmp_path):
    """The probe's deliberate garbage is the prober's: with the server declared, the server is judged on
    every case (conformant), and a server that answers the garbage diverges, naming 3.2.5."""
    path = tmp_path / "probe.pcap"
    probe_capture(path)
    report = judged(path, nodes=[server("DC1", "127.0.0.1")])
    assert report.verdict == "conformant", report.to_json()
    assert report.nodes == {"DC1": "conformant (MS-MQSD)"} and report.checked >= len(battery(
        ServerConfig(PARSED_REQUEST.enterprise_id, PARSED_REQUEST.site_id)))
    probe_capture(path, answer_garbage=True)
    bad = judged(path, nodes=[server("DC1", "127.0.0.1")])
    assert bad.verdict == "divergent" and bad.divergence.node == "DC1"
    assert bad.divergence.kind == "unexpected-output" and bad.divergence.clause.section == "3.2.5"


# --- row 13: MC-MQDSRP replayed from a capture ------------------------------------------------------------


ADDRESS = {"PEC0": "10.0.0.1", "PSC1": "10.0.0.2", "PSC2": "10.0.0.3"}


@pytest.fixture(scope="module")
def site_events() -> list[dict]:
    return [json.loads(x) for x in scenario_trace(str(SCENARIOS / "4.1-adding-a-site.yaml")).splitlines()]


def _queue(text: str | None) -> mqqb.QueueFormat | None:
    if text is None:
        return None
    guid, _, number = text.removeprefix("PRIVATE=").partition("\\")
    return mqqb.PrivateQueue(Guid.parse(guid), int(number, 16))


def wire_capture(path: Path, events: list[dict], plant=None) -> None:
    """Scenario 4.1 as the wire shows it: each replication message when its destination received it,
    as MQQB UserMessages with the MSMQ properties the sender set (``plant``: a send whose Flush to flip)."""
    sent: dict[tuple, list[dict]] = {}
    for e in events:
        if e["event"] == "send":
            sent.setdefault((e["node"], e["to"], e["body"]), []).append(e)
    conversations: dict[tuple[str, str], TcpConversation] = {}
    frames = []
    for e in events:
        if e["event"] != "receive" or e.get("class", 0):
            continue
        s = sent[(e["from"], e["node"], e["body"])].pop(0)
        body = bytes.fromhex(s["body"])
        if plant is not None and plant(s):
            message = mqdsrp.decode(body)
            body = mqdsrp.encode(attrs.evolve(message, flush=not message.flush))
        pair = (s["node"], s["to"])
        conv = conversations.get(pair)
        if conv is None:
            conv = conversations[pair] = TcpConversation((ADDRESS[pair[0]], 40000 + len(conversations)),
                                                         (ADDRESS[pair[1]], 1801))
            frames += [(e["t"], f) for f in conv.handshake()]
        props = mqqb.MessageProperties(allocation_body_size=len(body), hash_algorithm=s["hash_algorithm"])
        packet = mqqb.build_user_message(s["queue"], body, base_flags=s["priority"], admin=_queue(s["admin_queue"]),
                                         response=_queue(s["response_queue"]), properties=props)
        frames += [(e["t"], f) for f in conv.send(True, packet, segment_size=700)]
    write_pcap(path, frames)


def site_topology(events: list[dict], *names: str, start: object = "first") -> dict:
    declared = {e["name"]: e for e in events if e["event"] == "node"}
    return {"window": 2, "nodes": [
        {"name": n, "role": declared[n]["role"], "site": declared[n]["site"], "pec": declared[n]["pec"],
         "identifier": declared[n]["identifier"], "addresses": [ADDRESS[n]], "start": start} for n in names]}


@covers("MC-MQDSRP", "3.3.6.1")
def test_row13_mqdsrp_a_capture_with_roles_and_starts_is_replayed_and_a_planted_departure_found(
        tmp_path, site_events):
    """Scenario 4.1 on the wire, PSC1 declared with its role and start: PSC1 is replayed through the
    reference (its timer-driven propagations explained, E-333) and conforms; the same capture with one
    of its propagations changed diverges there, naming 3.3.7.2 (Send Change Propagation)."""
    path = tmp_path / "site.pcap"
    wire_capture(path, site_events)
    topology = site_topology(site_events, "PSC1")
    report = judged(path, **topology)
    assert report.verdict == "conformant", report.to_json()
    assert report.nodes == {"PSC1": "conformant"} and report.checked > 50
    wire_capture(path, site_events, plant=lambda s: s["node"] == "PSC1" and s["t"] == 40.1)
    bad = judged(path, **topology)
    d = bad.divergence
    assert bad.verdict == "divergent" and (d.node, d.kind) == ("PSC1", "output-differs")
    assert (d.clause.document, d.clause.section) == ("MC-MQDSRP", "3.3.7.2") and d.diff[0]["field"] == "flush"


def test_row13_mqdsrp_a_role_without_a_start_is_checked_at_codec_level_and_said_so(tmp_path, site_events):
    """A server whose role the topology gives without a start stays at codec level (its state before the
    capture is unknown), and `trace from-pcap` says so."""
    from click.testing import CliRunner

    from mqspec.cli.check import trace

    path, topo, out = tmp_path / "site.pcap", tmp_path / "t.json", tmp_path / "site.ndjson"
    wire_capture(path, site_events)
    topology = site_topology(site_events, "PSC1")
    del topology["nodes"][0]["start"]
    topo.write_text(json.dumps(topology))
    result = CliRunner().invoke(trace, ["from-pcap", str(path), "-o", str(out), "--topology", str(topo)])
    assert result.exit_code == 0
    assert any("PSC1 has a role but no \"start\"" in line for line in result.stderr.splitlines())
    assert judged(path, **topology).nodes == {"PSC1": "codec-only (never started)"}


# --- row 16: mqspec check reads captures ------------------------------------------------------------------


def test_row16_mqspec_check_reads_a_capture_with_its_sidecar(tmp_path):
    """`mqspec check lab.pcap` converts the capture (lab.topology.json beside it) and checks it as
    `pipeline check` does, printing the capture's summary; a wrong reply diverges (exit 1)."""
    path = tmp_path / "lab.pcap"
    write_pcap(path, [udp_frame("10.0.0.9", 50000, "10.0.0.1", 1801, REQUEST),
                      udp_frame("10.0.0.1", 1801, "10.0.0.9", 50000, REPLY)])
    sidecar(path, nodes=[server()])
    status, out, err = check_cli(str(path))
    assert status == 0 and f"{path}: pcap:lab.pcap: conformant" in out
    assert err == [f"mqspec: {path}:", "mqspec: 2 frames read: 2 messages; 0 frames skipped"]
    wrong = bytearray(REPLY)
    wrong[4] ^= 0xFF
    write_pcap(path, [udp_frame("10.0.0.9", 50000, "10.0.0.1", 1801, REQUEST),
                      udp_frame("10.0.0.1", 1801, "10.0.0.9", 50000, bytes(wrong))])
    status, out, _ = check_cli(str(path))
    assert status == 1 and "DIVERGENT" in out and "clause: MS-MQSD 3.2.5.1" in out
