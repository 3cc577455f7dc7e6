"""`mqspec trace from-pcap`: captures become traces in the published format, checked at codec level."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest
from click.testing import CliRunner
from mqspec.model import examples_mqsd, mqcn
from mqspec.model.guid import Guid
from mqspec.model.propids import PROPIDS
from mqspec.model.propvalue import Property

from mqspec.capture import mqqb
from mqspec.clauses import covers
from mqspec.cli.check import check, trace
from mqspec.oracle.check import check_text
from mqspec.oracle.from_pcap import convert, host, write_trace
from mqspec.oracle.record import scenario_trace
from mqspec.oracle.trace_format import load
from mqspec.capture.writer import TcpConversation, udp_frame, write_pcap

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
ADDRESS = {"PEC0": "10.0.0.1", "PSC1": "10.0.0.2", "PSC2": "10.0.0.3"}


@pytest.fixture(scope="module")
def sends() -> list[dict]:
    """The replication messages the 4.1 scenario's servers send, as its recorded trace shows them."""
    events = [json.loads(x) for x in scenario_trace(str(SCENARIOS / "4.1-adding-a-site.yaml")).splitlines()]
    return [e for e in events if e["event"] == "send"]


def replication_capture(path: Path, sends: list[dict], corrupt: int | None = None) -> None:
    """A capture of ``sends`` as MQQB UserMessages over one TCP connection per pair of servers."""
    conversations: dict[tuple[str, str], TcpConversation] = {}
    frames: list[bytes] = []
    for n, e in enumerate(sends):
        pair = (e["node"], e["to"])
        conv = conversations.get(pair)
        if conv is None:
            conv = conversations[pair] = TcpConversation((ADDRESS[pair[0]], 40000 + len(conversations)),
                                                         (ADDRESS[pair[1]], 1801))
            frames += conv.handshake()
        body = bytearray.fromhex(e["body"])
        if n == corrupt:
            body[0] ^= 0xFF
        packet = mqqb.build_user_message(e["queue"], bytes(body), base_flags=e["priority"])
        frames += conv.send(True, packet, segment_size=700)
    write_pcap(path, frames)


@covers("MC-MQDSRP", "2.1")
def test_replication_messages_become_sends_and_receives_named_by_their_machines(tmp_path, sends):
    """Every captured message is a send at its sender and a receive at its destination, servers named
    by the DIRECT=OS: format names, with the bytes and the priority on the wire."""
    path = tmp_path / "c.pcap"
    replication_capture(path, sends)
    (converted,) = load("c.ndjson", convert(path))
    names = {n["name"]: n["addresses"] for n in converted.header["nodes"]}
    assert names == {name: [ip] for name, ip in ADDRESS.items()}
    got = [e for e in converted.events if e["event"] == "send"]
    assert [(e["node"], e["to"], e["body"], e["priority"]) for e in got] == \
           [(e["node"], e["to"], e["body"], e["priority"]) for e in sends]
    receives = [e for e in converted.events if e["event"] == "receive"]
    assert [(e["node"], e["from"], e["class"]) for e in receives] == [(e["to"], e["node"], 0) for e in sends]
    assert converted.trace_id == "pcap:c.pcap"


def test_a_converted_capture_conforms_and_a_corrupt_body_is_a_decode_divergence(tmp_path, sends):
    """Captured servers are checked at codec level: clean traffic conforms, a bad Version byte diverges."""
    good, bad = tmp_path / "good.pcap", tmp_path / "bad.pcap"
    replication_capture(good, sends)
    replication_capture(bad, sends, corrupt=7)
    report = check_text(convert(good))[0]
    assert report.verdict == "conformant" and set(report.nodes.values()) == {"codec-only"}
    d = check_text(convert(bad))[0].divergence
    assert d.kind == "decode" and d.node == sends[7]["node"]
    assert (d.clause.document, d.clause.section) == ("MC-MQDSRP", "2.2.5.1")


@covers("MS-MQSD", "2.1")
def test_mqsd_datagrams_become_datagram_events_checked_against_the_codec(tmp_path):
    """A client request and a reply are datagram sends at their senders (named by address and port); the
    broadcast request (a link-layer broadcast) makes no node of its address; a truncated reply diverges."""
    path = tmp_path / "d.pcap"
    write_pcap(path, [udp_frame("10.0.0.9", 1801, "10.0.0.255", 1801, examples_mqsd.CLIENT_REQUEST, broadcast=True),
                      udp_frame("10.0.0.1", 1801, "10.0.0.9", 1801, examples_mqsd.REPLY_LOCAL_SITE[:-2])])
    (converted,) = load("d.ndjson", convert(path, names={"10.0.0.1": "DC1"}))
    datagrams = [e for e in converted.events if e["event"] == "datagram"]
    assert [(e["node"], e["direction"]) for e in datagrams] == [("10.0.0.9:1801", "send"), ("DC1", "send"),
                                                                ("10.0.0.9:1801", "receive")]
    assert {n["name"] for n in converted.header["nodes"]} == {"10.0.0.9:1801", "DC1"}
    assert datagrams[0]["body"] == examples_mqsd.CLIENT_REQUEST.hex()
    d = check_text(convert(path, names={"10.0.0.1": "DC1"}))[0].divergence
    assert (d.index, d.node, d.kind, d.clause.document) == (2, "DC1", "decode", "MS-MQSD")


@covers("MS-MQSD", "3.2.5.1")
def test_a_captured_mqsd_server_declared_in_the_topology_is_checked_against_3_2_5_1(tmp_path):
    """With an mqsd server declaration, a captured exchange is replayed: the section 4 reply conforms, a
    reply with another CorrelationID diverges naming 3.2.5.1."""
    from mqspec.model import mqsd

    request, reply = examples_mqsd.CLIENT_REQUEST, examples_mqsd.REPLY_LOCAL_SITE
    parsed = mqsd.decode(request)
    topology = [{"name": "DC1", "addresses": ["10.0.0.1"],
                 "mqsd": {"role": "server", "enterprise": str(parsed.enterprise_id), "site": str(parsed.site_id),
                          "connected_networks": [str(g) for g in mqsd.decode(reply).connected_networks]}}]
    wrong = bytearray(reply)
    wrong[4] ^= 0xFF  # the first byte of CorrelationID
    for body, verdict in ((reply, "conformant"), (bytes(wrong), "divergent")):
        path = tmp_path / "x.pcap"
        write_pcap(path, [udp_frame("10.0.0.9", 50000, "10.0.0.1", 1801, request),
                          udp_frame("10.0.0.1", 1801, "10.0.0.9", 50000, body)])
        report = check_text(convert(path, topology=topology))[0]
        assert report.verdict == verdict, report.to_json()
    assert report.divergence.clause.section == "3.2.5.1" and report.divergence.diff[0]["field"] == "correlation_id"


@covers("MS-MQCN", "2.1")
def test_mqcn_notifications_become_notification_events(tmp_path):
    """A notification to notify_queue$ is a notification sent by one server and received by the other."""
    update = mqcn.NotificationUpdate(
        command=mqcn.Command.DELETE, guid_identifier=Guid.from_name("queue"), guid_master_id=Guid.from_name("m"),
        properties=(Property(PROPIDS["PROPID_D_SCOPE"].propid, 1), Property(PROPIDS["PROPID_D_OBJTYPE"].propid, 1)),
    )
    body = mqcn.encode_body(mqcn.ChangeNotificationMessage(version=mqcn.Version.DIRECTORY_SERVICE, updates=(update,)))
    conv = TcpConversation(("10.0.0.1", 40000), ("10.0.0.2", 1801))
    path = tmp_path / "n.pcap"
    write_pcap(path, [*conv.handshake(), *conv.send(True, mqqb.build_user_message(
        "DIRECT=OS:qm2\\private$\\notify_queue$", body))])
    text = convert(path, names={"10.0.0.1": "QM1", "10.0.0.2": "QM2"})
    events = [e for e in load("n", text)[0].events if e["event"] == "notification"]
    assert [(e["node"], e["direction"], e["body"]) for e in events] == [("QM1", "send", body.hex()),
                                                                        ("QM2", "receive", body.hex())]
    assert check_text(text)[0].verdict == "conformant"


def test_an_acknowledgment_is_a_receive_only(tmp_path, sends):
    """A Nack (made by the MSMQ transport, not the directory service) is only received."""
    conv = TcpConversation(("10.0.0.2", 40000), ("10.0.0.1", 1801))
    props = mqqb.MessageProperties(message_class=0x8000)
    packet = mqqb.build_user_message(mqqb.PrivateQueue(Guid.from_name("qm:PEC0"), 1),
                                     bytes.fromhex(sends[0]["body"]), properties=props)
    path = tmp_path / "a.pcap"
    write_pcap(path, [*conv.handshake(), *conv.send(True, packet)])
    events = load("a", convert(path, names={"10.0.0.1": "PEC0", "10.0.0.2": "PSC1"}))[0].events[1:]
    assert [(e["event"], e["node"], e["class"]) for e in events] == [("receive", "PEC0", 0x8000)]


def test_the_command_line_converts_with_names_and_a_topology(tmp_path, sends):
    """`trace from-pcap` writes the trace; --node names an address, --topology declares roles; check reads it."""
    pcap, out, topo = tmp_path / "c.pcap", tmp_path / "c.ndjson", tmp_path / "topology.json"
    replication_capture(pcap, sends)
    topo.write_text(json.dumps({"nodes": [{"name": "PEC0", "role": "PEC", "site": str(Guid.from_name("s")),
                                           "pec": "PEC0", "addresses": ["10.0.0.1"]}]}))
    result = CliRunner().invoke(trace, ["from-pcap", str(pcap), "-o", str(out), "--node", "Psc1=10.0.0.2",
                                        "--topology", str(topo)])
    assert result.exit_code == 0, result.output
    header = json.loads(out.read_text().splitlines()[0])
    declared = {n["name"]: n for n in header["nodes"]}
    assert declared["PEC0"]["role"] == "PEC" and "Psc1" in declared and "PSC1" not in declared
    # no start events: even the declared PEC is checked at codec level, and conforms
    assert CliRunner().invoke(check, [str(out)]).exit_code == 0


@pytest.mark.parametrize("args", [["missing.pcap"], ["x.pcap", "--node", "no-equals"]])
def test_bad_input_exits_2_with_one_line(tmp_path, args):
    """An unreadable capture or a malformed --node is one stderr line and exit 2."""
    (tmp_path / "x.pcap").write_bytes(b"not a capture")
    result = CliRunner().invoke(trace, ["from-pcap", *[str(tmp_path / a) if a.endswith(".pcap") else a
                                                       for a in args], "-o", str(tmp_path / "o.ndjson")])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "Traceback" not in result.output


def test_host_strips_the_port_of_either_address_family():
    """The server of an endpoint is its address without the port, IPv6 brackets removed."""
    assert (host("10.0.0.1:1801"), host("[fe80::1]:1801")) == ("10.0.0.1", "fe80::1")


@pytest.mark.parametrize(
    ("args", "topology", "message"),
    [
        (["--node", "PEC0=999.1.1.1"], None, "usage: --node PEC0=999.1.1.1: '999.1.1.1' is not an IP address"),
        (["--node", "PEC0=pec0.example"], None, "'pec0.example' is not an IP address"),
        ([], '{"nodes": [{"name": "PEC0", "addresses": ["10.0.0.256"]}]}',
         "topology.json: nodes[0].addresses[0]: '10.0.0.256' is not an IP address"),
        ([], '{"nodes": [{"name": "PEC0", "addresses": "10.0.0.1"}]}',
         "topology.json: nodes[0].addresses: expected a list of IP addresses"),
        ([], "[" * 3000 + "]" * 3000, "json error: {topo}: nested too deeply"),
    ],
)
def test_bad_addresses_and_deep_topologies_exit_2_with_one_line(tmp_path, sends, args, topology, message):
    """An address that is not an IP address (in --node or a topology) or a topology nested 3,000 deep is one line, exit 2."""
    pcap, topo = tmp_path / "c.pcap", tmp_path / "topology.json"
    replication_capture(pcap, sends[:1])
    extra = []
    if topology is not None:
        topo.write_text(topology)
        extra = ["--topology", str(topo)]
    result = CliRunner().invoke(trace, ["from-pcap", str(pcap), "-o", str(tmp_path / "o.ndjson"), *args, *extra])
    assert result.exit_code == 2 and result.exception is None or isinstance(result.exception, SystemExit)
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and message.format(topo=topo) in lines[0], lines
    assert not (tmp_path / "o.ndjson").exists()


def test_ipv6_and_ipv4_node_addresses_are_accepted(tmp_path, sends):
    """--node takes IPv4 and IPv6 addresses (written in any valid form) and names the server at it."""
    pcap, out = tmp_path / "c.pcap", tmp_path / "c.ndjson"
    replication_capture(pcap, sends[:1])
    result = CliRunner().invoke(trace, ["from-pcap", str(pcap), "-o", str(out), "--node", "Pec=10.0.0.1",
                                        "--node", "Other=fe80:0::1"])
    assert result.exit_code == 0, result.output
    declared = {n["name"] for n in json.loads(out.read_text().splitlines()[0])["nodes"]}
    assert "Pec" in declared and "10.0.0.1" not in declared


def test_a_trace_with_a_utf8_byte_order_mark_is_read(tmp_path, sends):
    """A trace file that starts with a UTF-8 byte-order mark (as Windows tools write) checks like the same file without it."""
    pcap, out = tmp_path / "c.pcap", tmp_path / "c.ndjson"
    replication_capture(pcap, sends)
    assert CliRunner().invoke(trace, ["from-pcap", str(pcap), "-o", str(out)]).exit_code == 0
    bom = tmp_path / "bom.ndjson"
    bom.write_bytes(b"\xef\xbb\xbf" + out.read_bytes())
    plain, marked = CliRunner().invoke(check, [str(out)]), CliRunner().invoke(check, [str(bom)])
    assert plain.exit_code == marked.exit_code == 0, marked.output
    assert marked.output.replace(str(bom), str(out)) == plain.output
    assert [t.events for t in load(bom)] == [t.events for t in load(out)]


def _conversion_memory(path: Path) -> tuple[int, int, int]:
    """(peak bytes allocated while a capture becomes a trace; bytes of trace written; write calls):
    tracemalloc counts every Python allocation."""
    written, calls = [0], [0]

    def write(text: str) -> None:
        written[0] += len(text)
        calls[0] += 1

    tracemalloc.start()
    try:
        lines = write_trace(path, write).lines
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert lines == calls[0]
    return peak, written[0], calls[0]


def test_from_pcap_streams_in_memory_that_does_not_grow_with_the_capture(tmp_path, sends, monkeypatch):
    """A capture eight times larger needs no more memory to become a trace: the capture is read a
    chunk at a time (16 KiB here), frame by frame, and each line is written as it is made (one write a
    line), none held."""
    from mqspec.capture import reader

    monkeypatch.setattr(reader, "CHUNK", 16 * 1024)
    peak = {}
    for k in (4, 32):
        replication_capture(tmp_path / f"{k}.pcap", sends * k)
        peak[k], written, calls = _conversion_memory(tmp_path / f"{k}.pcap")
        assert calls == 2 * len(sends) * k + 1  # the header, then a send and a receive a message
    assert (tmp_path / "32.pcap").stat().st_size > 900_000 and written > 1_500_000  # far above the bound below
    assert peak[32] < peak[4] + 48 * 1024, peak


@pytest.mark.parametrize(("topology", "message"), [
    ({"nodes": [], "window": -1}, "window: how many later inputs"),
    ({"nodes": [], "mode": "strict"}, "mode: clarified or literal"),
    ({"nodes": [], "ports": {"mqsd": 70000}}, "ports.mqsd: port numbers"),
    ({"nodes": [], "networks": ["10.0.0.0/33"]}, "networks[0]: '10.0.0.0/33' is not an IP network"),
    ({"nodes": [], "colour": 1}, "colour: not a topology field"),
    ({"nodes": [{"name": "A", "start": 0}]}, "nodes[0].start: a start is for a server with a role"),
    ({"nodes": [{"name": "A"}, {"name": "A"}]}, "nodes[1].name: 'A' is declared twice"),
])
def test_a_bad_topology_is_one_line_naming_its_field(tmp_path, sends, topology, message):
    """Each wrong topology field (window, mode, ports, networks, an unknown key, a start without a role,
    a name twice) is one stderr line naming it, exit 2, and no trace written."""
    pcap, topo = tmp_path / "c.pcap", tmp_path / "t.json"
    replication_capture(pcap, sends[:1])
    topo.write_text(json.dumps(topology))
    result = CliRunner().invoke(trace, ["from-pcap", str(pcap), "-o", str(tmp_path / "o.ndjson"), "--topology", str(topo)])
    lines = result.stderr.splitlines()
    assert result.exit_code == 2 and len(lines) == 1 and lines[0].startswith(f"mqspec: usage: {topo}: "), lines
    assert message in lines[0]
    assert not (tmp_path / "o.ndjson").exists()
