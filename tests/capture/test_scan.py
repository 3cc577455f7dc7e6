"""Decoding captures: MQSD over UDP, MQDSRP and MQCN inside MQQB over TCP, and bad capture files."""

from __future__ import annotations

import io
import json
import struct
import subprocess
import sys
from pathlib import Path

import dpkt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mqspec.capture import mqqb
from mqspec.capture import CaptureError, decode_capture, scan_capture
from mqspec.clauses import covers
from mqspec.model import examples_mqsd, mqcn, mqdsrp, mqsd
from mqspec.model.guid import Guid
from mqspec.model.jsonform import to_json
from mqspec.model.mqdsrp import ChangePropagationMessage
from mqspec.model.mqdsrp_changes import Command, DirectoryChange
from mqspec.model.propids import PROPIDS
from mqspec.model.propvalue import Property
from mqspec.model.seqnum import SequenceNumber
from mqspec.capture.writer import (
    LINKTYPE_RAW,
    TcpConversation,
    pcap_bytes,
    tcp_frame,
    udp_frame,
    write_pcap,
)

CLIENT, SERVER = ("10.0.0.1", 49759), ("10.0.0.2", 1801)
QM = Guid.from_name("directory-server-qm")
REPLICATION = "DIRECT=OS:dc1\\PRIVATE$\\MQIS_QUEUE$"
NOTIFY = "DIRECT=OS:qm1\\private$\\notify_queue$"
LABEL = PROPIDS["PROPID_Q_LABEL"].propid


def change_propagation(n: int = 3) -> ChangePropagationMessage:
    """A ChangePropagationMessage big enough (about 2 KB) to span several TCP segments."""
    changes = tuple(
        DirectoryChange(
            command=Command.UPDATE,
            partition_id=Guid.from_name("partition"),
            previous_seq_number=SequenceNumber(i),
            seq_number=SequenceNumber(i + 1),
            purged_seq_number=SequenceNumber(0),
            properties=(Property(LABEL, f"queue {i} " + "x" * 300),),
            path_name=f"dc1\\queue{i}",
        )
        for i in range(n)
    )
    return ChangePropagationMessage(site_id=Guid.from_name("site"), flush=True, changes=changes)


def v1_notification() -> mqcn.ChangeNotificationMessage:
    """A version 0x01 notification: a queue deletion as MS-MQCN 3.3.5.2 prepares it."""
    update = mqcn.NotificationUpdate(
        command=mqcn.Command.DELETE,
        guid_identifier=Guid.from_name("queue"),
        guid_master_id=Guid.from_name("master"),
        properties=(Property(PROPIDS["PROPID_D_SCOPE"].propid, 1), Property(PROPIDS["PROPID_D_OBJTYPE"].propid, 1)),
    )
    return mqcn.ChangeNotificationMessage(version=mqcn.Version.DIRECTORY_SERVICE, updates=(update,))


def scan(tmp_path: Path, frames, name: str = "c.pcap", **options):
    path = tmp_path / name
    write_pcap(path, frames, **options)
    rows, summary = scan_capture(path)
    assert summary.reconciles
    return rows, summary


def connection(*packets: bytes, segment_size: int | None = None, **kw) -> list[bytes]:
    """Handshake, then ``packets`` from client to server, in order."""
    conv = TcpConversation(CLIENT, SERVER, **kw)
    return conv.handshake() + conv.send(True, b"".join(packets), segment_size=segment_size)


# --- MS-MQSD over UDP ----------------------------------------------------------------------


@covers("MS-MQSD", "2.1")
def test_mqsd_request_and_reply_over_udp(tmp_path):
    """The section 4 request and reply, as UDP datagrams on port 1801, decode to two rows in frame order."""
    frames = [
        (10.5, udp_frame("10.0.0.1", 1801, "10.0.0.255", 1801, examples_mqsd.CLIENT_REQUEST)),
        (10.75, udp_frame("10.0.0.2", 1801, "10.0.0.1", 1801, examples_mqsd.REPLY_LOCAL_SITE)),
    ]
    rows, summary = scan(tmp_path, frames)
    assert [r["frame"] for r in rows] == [1, 2]
    assert rows[0] == {
        "frame": 1, "time": 10.5, "src": "10.0.0.1:1801", "dst": "10.0.0.255:1801", "protocol": "mqsd",
        "decoded": to_json(mqsd.decode(examples_mqsd.CLIENT_REQUEST)),
    }
    assert rows[1]["decoded"]["message"] == "TopologyServerReply"
    assert summary.frames == summary.decoded + summary.errors + sum(summary.skipped.values()) == 2


def test_garbage_on_udp_1801_is_an_error_row(tmp_path):
    """A datagram on 1801 that is not MQSD gives a row carrying the decode error instead of losing it."""
    rows, summary = scan(tmp_path, [udp_frame("10.0.0.1", 5000, "10.0.0.2", 1801, b"\xde\xad\xbe\xef")])
    assert len(rows) == 1 and rows[0]["protocol"] == "mqsd"
    assert "decoded" not in rows[0] and "TopologyPacketHeader" in rows[0]["error"]
    assert summary.errors == 1 and summary.decoded == 0


def test_udp_only_capture_accounts_for_every_frame(tmp_path):
    """With UDP alone, frames read = decoded + errors + skipped frames."""
    arp = bytes(dpkt.ethernet.Ethernet(type=dpkt.ethernet.ETH_TYPE_ARP, data=b"\x00" * 28))
    frames = [
        udp_frame("10.0.0.1", 1801, "10.0.0.2", 1801, examples_mqsd.CLIENT_REQUEST),
        udp_frame("10.0.0.1", 53, "10.0.0.2", 53, b"dns"),
        arp,
        udp_frame("10.0.0.1", 1801, "10.0.0.2", 1801, b"\x00"),
    ]
    rows, summary = scan(tmp_path, frames)
    assert summary.frames == 4 == summary.decoded + summary.errors + sum(summary.skipped.values())
    assert summary.skipped == {"other port": 1, "not IP": 1} and summary.used == {"mqsd datagram": 2}


def test_datagram_cut_by_the_snap_length_is_an_error_row(tmp_path):
    """A datagram the capture kept only part of is reported, not decoded from a prefix."""
    frame = udp_frame("10.0.0.2", 1801, "10.0.0.1", 1801, examples_mqsd.REPLY_OTHER_SITE)
    rows, summary = scan(tmp_path, [frame], snaplen=len(frame) - 10)
    assert "cut short by the capture" in rows[0]["error"] and "10 lost" in rows[0]["error"]
    assert rows[0]["hole"] == "truncated" and "decoded" not in rows[0]
    assert summary.skipped == {"truncated": 1} and summary.holes_total == 1 and summary.decoded == 0


def test_lenient_flag_reaches_the_codec(tmp_path):
    """decode_capture(lenient=True) applies the codec's leniency: a nonzero Reserved is refused only strictly."""
    request = examples_mqsd.CLIENT_REQUEST[:2] + b"\x01\x00" + examples_mqsd.CLIENT_REQUEST[4:]
    path = tmp_path / "l.pcap"
    write_pcap(path, [udp_frame("10.0.0.1", 1801, "10.0.0.2", 1801, request)])
    strict, lenient = decode_capture(path), decode_capture(path, lenient=True)
    assert "TopologyPacketHeader.Reserved" in strict[0]["error"]
    assert lenient[0]["decoded"] == to_json(mqsd.decode(request, lenient=True))


# --- MC-MQDSRP and MS-MQCN over MQQB/TCP ------------------------------------------------------


@covers("MC-MQDSRP", "2.1")
def test_change_propagation_split_across_segments_with_a_retransmission(tmp_path):
    """A ChangePropagationMessage cut into segments, reordered and retransmitted, decodes once at its last frame."""
    msg = change_propagation()
    packet = mqqb.build_user_message(REPLICATION, mqdsrp.encode(msg))
    conv = TcpConversation(CLIENT, SERVER)
    segs = conv.send(True, mqqb.encode_internal_packet(bytes(20)) + packet, segment_size=300)
    assert len(segs) >= 6
    # segment 2 arrives before 1, segment 3 is sent twice (the copy with other bytes loses)
    bogus = conv.segment(True, 3 * 300, b"\xff" * 300)
    frames = conv.handshake() + [segs[0], segs[2], segs[1], segs[3], bogus, conv.ack(False), *segs[4:]]
    rows, summary = scan(tmp_path, frames)
    assert len(rows) == 1
    row = rows[0]
    assert row["protocol"] == "mqdsrp" and row["queue"] == REPLICATION
    assert row["decoded"] == to_json(msg)
    assert row["frame"] == len(frames) and row["src"] == "10.0.0.1:49759" and row["dst"] == "10.0.0.2:1801"
    assert summary.skipped == {"TCP retransmission": 1}
    assert summary.used == {"tcp control": len(frames) - len(segs) - 2 + 1, "tcp segment": len(segs)}
    assert summary.messages_skipped["mqqb internal packet"] == 1


def test_row_takes_the_frame_that_completed_the_message(tmp_path):
    """When the last segment arrives early, the row's frame is the one that filled the last hole."""
    packet = mqqb.build_user_message(REPLICATION, mqdsrp.encode(change_propagation(1)))
    conv = TcpConversation(CLIENT, SERVER)
    a, b, c = conv.send(True, packet, segment_size=len(packet) // 3 + 1)
    rows, _ = scan(tmp_path, [*conv.handshake(), c, a, b])
    assert rows[0]["frame"] == 6 and rows[0]["time"] == pytest.approx(1_700_000_000.005)


@covers("MS-MQCN", "2.1")
def test_v1_notification_to_notify_queue(tmp_path):
    """A version 0x01 notification (body = message + one unused byte) to notify_queue$ decodes as MQCN."""
    msg = v1_notification()
    packet = mqqb.build_user_message(NOTIFY, mqcn.encode_body(msg), label="notification")
    rows, _ = scan(tmp_path, connection(packet))
    assert [r["protocol"] for r in rows] == ["mqcn"]
    assert rows[0]["decoded"] == to_json(msg) and rows[0]["queue"] == NOTIFY


@pytest.mark.parametrize(
    "destination",
    [mqqb.PrivateQueue(QM, 3), mqqb.PrivateQueueId(mqqb.QueueType.PRIVATE_AT_DESTINATION, 3)],
)
def test_notification_to_the_private_format_name_is_decoded(tmp_path, destination):
    """NOTIFY_QUEUE_PRIVATE (PRIVATE=<QM GUID>\\3), as MS-MQCN 3.3.3 addresses it, decodes as MQCN (E-046)."""
    packet = mqqb.build_user_message(destination, mqcn.encode_body(v1_notification()), qm_address=QM)
    rows, _ = scan(tmp_path, connection(packet))
    assert rows[0]["protocol"] == "mqcn" and rows[0]["queue"] == f"PRIVATE={QM}\\3"


def test_replication_nack_to_the_private_format_name_is_decoded(tmp_path):
    """A Nack returned to REPLICATION_QUEUE_PRIVATE decodes its body and says its class (E-046, E-048)."""
    msg = change_propagation(1)
    props = mqqb.MessageProperties(message_class=0xC000, allocation_body_size=0)
    packet = mqqb.build_user_message(mqqb.PrivateQueue(QM, 1), mqdsrp.encode(msg), properties=props)
    rows, _ = scan(tmp_path, connection(packet))
    assert rows[0]["protocol"] == "mqdsrp" and rows[0]["message_class"] == 0xC000
    assert rows[0]["decoded"] == to_json(msg)


@pytest.mark.parametrize(
    "name",
    [
        "OS:dc1\\private$\\mqis_queue$",
        "TCP:10.0.0.2\\PRIVATE$\\Mqis_Queue$",
        "HTTP://dc1/msmq/private$/MQIS_QUEUE$",
        "DIRECT=OS:dc1.example.com\\private$\\mqis_queue$",
    ],
)
def test_direct_queue_names_match_on_their_last_component_in_any_case(tmp_path, name):
    """Every direct form and letter case of the replication queue's name is recognised (E-045)."""
    packet = mqqb.build_user_message(name, mqdsrp.encode(change_propagation(1)))
    rows, _ = scan(tmp_path, connection(packet))
    assert rows[0]["protocol"] == "mqdsrp"
    assert rows[0]["queue"] == "DIRECT=" + mqqb.strip_direct_prefix(name)


def test_other_and_unknown_queues_are_skipped_and_counted(tmp_path):
    """Messages to application queues and to public format names are skipped, each counted by reason."""
    packets = [
        mqqb.build_user_message("OS:dc1\\private$\\orders", b"app data"),
        mqqb.build_user_message("OS:dc1\\mqis_queue$x", b"app data"),
        mqqb.build_user_message(mqqb.PrivateQueue(QM, 4), b"order ack"),
        mqqb.build_user_message(mqqb.PublicQueue(QM), b"public"),
    ]
    rows, summary = scan(tmp_path, connection(*packets))
    assert rows == []
    assert summary.messages_skipped == {"mqqb other queue": 3, "mqqb unknown queue": 1}
    assert summary.units == 4


def test_empty_bodies_and_acknowledgments_are_skipped(tmp_path):
    """An empty replication body (3.1.5.1: no action) and a bodiless acknowledgment are skipped (E-048)."""
    ack = mqqb.MessageProperties(message_class=0x0002)
    packets = [
        mqqb.build_user_message(REPLICATION, b""),
        mqqb.build_user_message(NOTIFY, b"", properties=ack),
    ]
    rows, summary = scan(tmp_path, connection(*packets))
    assert rows == [] and summary.messages_skipped == {"mqqb empty body": 2}


def test_undecodable_body_is_an_error_row_with_its_queue(tmp_path):
    """A replication-queue body that is not an MQDSRP message keeps its row, with the error and the queue."""
    rows, summary = scan(tmp_path, connection(mqqb.build_user_message(REPLICATION, b"\x07\x07\x07")))
    assert rows[0]["protocol"] == "mqdsrp" and rows[0]["queue"] == REPLICATION
    assert "decoded" not in rows[0] and rows[0]["error"]
    assert summary.errors == 1


def _without_mp(packet: bytes) -> bytes:
    """The packet with UserHeader.Flags.MP cleared, so it no longer decodes past its queues."""
    out = bytearray(packet)
    struct.pack_into("<I", out, 60, struct.unpack_from("<I", out, 60)[0] & ~mqqb.UF_PROPERTIES)
    return bytes(out)


def test_broken_user_message_is_an_error_row_only_for_our_queues(tmp_path):
    """A UserMessage that does not decode is an error row when addressed to mqis_queue$, skipped otherwise."""
    ours = _without_mp(mqqb.build_user_message(REPLICATION, b"body"))
    theirs = _without_mp(mqqb.build_user_message("OS:dc1\\private$\\orders", b"body"))
    rows, summary = scan(tmp_path, connection(ours, theirs))
    assert len(rows) == 1 and rows[0]["protocol"] == "mqdsrp" and rows[0]["queue"] == REPLICATION
    assert "UserHeader.Flags.MP" in rows[0]["error"]
    assert summary.messages_skipped == {"mqqb other queue": 1}


def test_encrypted_body_is_an_error_row(tmp_path):
    """A body the SecurityHeader marks encrypted is reported, not decoded."""
    security = mqqb.SecurityHeader(flags=mqqb.SECURITY_ENCRYPTED_BODY, encryption_key=b"k" * 8)
    packet = mqqb.build_user_message(REPLICATION, b"\x99" * 40, security=security)
    rows, _ = scan(tmp_path, connection(packet))
    assert "encrypted" in rows[0]["error"]


def test_session_headers_and_both_directions(tmp_path):
    """Packets followed by a SessionHeader frame correctly, and each direction is its own stream."""
    conv = TcpConversation(CLIENT, SERVER)
    to_server = mqqb.build_user_message(REPLICATION, mqdsrp.encode(change_propagation(1)), session_header=bytes(16))
    to_client = mqqb.build_user_message("OS:dc2\\private$\\mqis_queue$", mqdsrp.encode(change_propagation(2)))
    frames = conv.handshake() + conv.send(True, to_server + to_server, segment_size=500)
    frames += conv.send(False, mqqb.encode_internal_packet(bytes(8), flags=mqqb.BF_INTERNAL) + to_client)
    rows, summary = scan(tmp_path, frames)
    assert [(r["src"], r["protocol"]) for r in rows] == [
        ("10.0.0.1:49759", "mqdsrp"), ("10.0.0.1:49759", "mqdsrp"), ("10.0.0.2:1801", "mqdsrp"),
    ]
    assert rows[2]["decoded"] == to_json(change_propagation(2))


@settings(max_examples=25)
@given(
    cut=st.lists(st.integers(1, 400), min_size=1, max_size=12),
    order=st.randoms(use_true_random=False),
    repeats=st.lists(st.integers(0, 40), max_size=4),
)
def test_any_delivery_order_with_duplicates_gives_the_same_rows(tmp_path_factory, cut, order, repeats):
    """However the stream is cut, reordered and partly repeated, the decoded rows are the same (E-047)."""
    stream = b"".join((
        mqqb.build_user_message(REPLICATION, mqdsrp.encode(change_propagation(1))),
        mqqb.encode_internal_packet(bytes(12)),
        mqqb.build_user_message(NOTIFY, mqcn.encode_body(v1_notification())),
    ))
    conv = TcpConversation(CLIENT, SERVER, client_isn=2**32 - 500)
    segments, pos, i = [], 0, 0
    while pos < len(stream):
        size = cut[i % len(cut)]
        segments.append(conv.segment(True, pos, stream[pos : pos + size]))
        pos, i = pos + size, i + 1
    order.shuffle(segments)
    segments += [segments[r % len(segments)] for r in repeats]
    rows, _ = scan(tmp_path_factory.mktemp("order"), conv.handshake() + segments)
    assert [(r["protocol"], r["decoded"]) for r in rows] == [
        ("mqdsrp", to_json(change_propagation(1))), ("mqcn", to_json(v1_notification())),
    ]


def test_sequence_numbers_wrap_around(tmp_path):
    """A stream whose sequence numbers cross 2**32 reassembles in order."""
    packet = mqqb.build_user_message(NOTIFY, mqcn.encode_body(v1_notification()))
    rows, _ = scan(tmp_path, connection(packet, segment_size=7, client_isn=2**32 - 3))
    assert [r["protocol"] for r in rows] == ["mqcn"] and "decoded" in rows[0]


def test_garbage_on_tcp_1801_is_an_error_row_and_the_walk_resumes(tmp_path):
    """Bytes that are no MQQB packet give one error row; the next packet after them still decodes (E-047)."""
    packet = mqqb.build_user_message(REPLICATION, mqdsrp.encode(change_propagation(1)))
    rows, summary = scan(tmp_path, connection(b"GET / HTTP/1.1\r\n\r\n", packet))
    assert [r["protocol"] for r in rows] == ["mqqb", "mqdsrp"]
    assert "BaseHeader.VersionNumber" in rows[0]["error"] and "skipped to the next packet" in rows[0]["error"]
    assert summary.errors == 1 and summary.decoded == 1 and summary.stream_bytes_skipped == 18
    assert summary.holes_total == 0  # garbage the capture holds is no hole: it is what was sent


def test_a_gap_in_the_stream_is_one_hole_row(tmp_path):
    """A segment missing from the capture loses the packet it cut; the packet after the gap decodes (E-047);
    the gap is a hole with its time, connection and bytes, and the frames it left unusable are counted."""
    first = mqqb.build_user_message(REPLICATION, mqdsrp.encode(change_propagation(2)))
    second = mqqb.build_user_message(NOTIFY, mqcn.encode_body(v1_notification()))
    conv = TcpConversation(CLIENT, SERVER)
    segs = conv.send(True, first + second, segment_size=200)
    lost = 2
    rows, summary = scan(tmp_path, conv.handshake() + segs[:lost] + segs[lost + 1 :])
    assert [r["protocol"] for r in rows] == ["mqqb", "mqcn"]
    assert "lacks TCP stream bytes 400..599 (200 bytes)" in rows[0]["error"] and rows[0]["hole"] == "tcp-gap"
    (hole,) = summary.holes
    assert (hole.kind, hole.frame, hole.src, hole.dst, hole.bytes) == ("tcp-gap", 5, "10.0.0.1:49759",
                                                                       "10.0.0.2:1801", 200)
    assert hole.time == rows[0]["time"] == pytest.approx(1_700_000_000.004)
    assert summary.stream_bytes_lost == 200 and summary.skipped["TCP gap"] > 0
    assert summary.frames == sum(summary.used.values()) + sum(summary.skipped.values())


def test_capture_ending_inside_a_packet_is_a_hole(tmp_path):
    """A stream that stops part-way through a packet reports how much of it was captured, as a hole."""
    packet = mqqb.build_user_message(REPLICATION, mqdsrp.encode(change_propagation(1)))
    rows, summary = scan(tmp_path, connection(packet[:-5]))
    assert rows[0]["protocol"] == "mqqb" and rows[0]["hole"] == "mid-message"
    assert f"ends {len(packet) - 5} bytes into a {len(packet)}-byte MQQB packet" in rows[0]["error"]
    assert summary.skipped == {"TCP message unfinished at the end": 1}


def test_capture_starting_mid_connection_skips_to_the_first_packet(tmp_path):
    """Without a SYN, bytes before the first plausible BaseHeader are skipped (E-047), and said to be
    a hole: the capture began inside a message."""
    packet = mqqb.build_user_message(REPLICATION, mqdsrp.encode(change_propagation(1)))
    conv = TcpConversation(CLIENT, SERVER)
    segs = conv.send(True, packet + packet, segment_size=len(packet) // 2)
    rows, summary = scan(tmp_path, segs[1:])
    assert [(r["protocol"], r.get("hole")) for r in rows] == [("mqqb", "mid-message"), ("mqdsrp", None)]
    assert summary.stream_bytes_skipped == len(packet) - len(packet) // 2


def test_capture_starting_mid_connection_at_a_packet_boundary_has_no_hole(tmp_path):
    """Without a SYN, a stream whose first captured byte starts a packet loses nothing."""
    packet = mqqb.build_user_message(REPLICATION, mqdsrp.encode(change_propagation(1)))
    conv = TcpConversation(CLIENT, SERVER)
    segs = conv.send(True, packet + packet, segment_size=len(packet))
    rows, summary = scan(tmp_path, segs[1:])
    assert [r["protocol"] for r in rows] == ["mqdsrp"] and summary.holes_total == 0


def test_a_new_connection_on_the_same_ports_is_a_new_stream(tmp_path):
    """A second SYN with another initial sequence number on the same 4-tuple starts a fresh stream."""
    packet = mqqb.build_user_message(REPLICATION, mqdsrp.encode(change_propagation(1)))
    first = connection(packet[:100])  # the first connection breaks off mid-packet
    second = connection(packet, client_isn=77_000)
    rows, _ = scan(tmp_path, first + second)
    assert [(r["protocol"], r.get("hole")) for r in rows] == [("mqqb", "mid-message"), ("mqdsrp", None)]


# --- capture files -----------------------------------------------------------------------------


def test_pcapng_raw_ip_and_nanosecond_captures_are_read(tmp_path):
    """pcapng (through dpkt), raw-IP link type and nanosecond timestamps give the same rows."""
    frame = udp_frame("10.0.0.1", 1801, "10.0.0.2", 1801, examples_mqsd.CLIENT_REQUEST)
    buf = io.BytesIO()
    writer = dpkt.pcapng.Writer(buf)
    writer.writepkt(frame, ts=5.25)
    (tmp_path / "a.pcapng").write_bytes(buf.getvalue())
    raw = udp_frame("10.0.0.1", 1801, "10.0.0.2", 1801, examples_mqsd.CLIENT_REQUEST, ethernet=False)
    write_pcap(tmp_path / "raw.pcap", [(5.25, raw)], linktype=LINKTYPE_RAW)
    write_pcap(tmp_path / "ns.pcap", [(5.25, frame)], nanosecond=True)
    results = [decode_capture(tmp_path / n) for n in ("a.pcapng", "raw.pcap", "ns.pcap")]
    assert results[0] == results[1] == results[2]
    assert results[0][0]["time"] == 5.25 and results[0][0]["protocol"] == "mqsd"


def test_pcap_writer_output_reads_back_with_dpkt():
    """pcap_bytes writes a classic header and records that dpkt reads back with their times and lengths."""
    frames = [(1.5, b"a" * 70), (2.000001, b"b" * 80)]
    data = pcap_bytes(frames, snaplen=75)
    assert struct.unpack_from("<IHHiIII", data) == (0xA1B2C3D4, 2, 4, 0, 0, 75, 1)
    got = list(dpkt.pcap.Reader(io.BytesIO(data)))
    assert [(round(t, 6), len(b)) for t, b in got] == [(1.5, 70), (2.000001, 75)]
    assert struct.unpack_from("<IIII", data, 24 + 16 + 70) == (2, 1, 75, 80)


def test_tcp_frames_carry_valid_checksums():
    """tcp_frame and udp_frame compute the IPv4 and transport checksums."""
    for frame in (
        tcp_frame("10.0.0.1", 49759, "10.0.0.2", 1801, 5, 9, b"payload"),
        udp_frame("10.0.0.1", 1801, "10.0.0.2", 1801, b"payload"),
    ):
        ip = dpkt.ethernet.Ethernet(frame).data
        assert ip.sum != 0 and ip.data.sum != 0
        rebuilt = dpkt.ip.IP(bytes(ip))
        rebuilt.sum = 0
        rebuilt.data.sum = 0
        assert bytes(rebuilt) == bytes(ip)  # recomputing the sums gives the same bytes


def good_capture() -> bytes:
    return pcap_bytes([udp_frame("10.0.0.1", 1801, "10.0.0.2", 1801, examples_mqsd.CLIENT_REQUEST)] * 3)


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        (b"", "file header (before frame 1): an empty file"),
        (b"GIF89a" + bytes(40), "file header (before frame 1): not a pcap or pcapng file"),
        (good_capture()[:20], "file header (before frame 1): truncated file header"),
        (good_capture()[:24] + struct.pack("<IIII", 0, 0, 1 << 25, 1 << 25) + bytes(40), "frame 1: record claims"),
    ],
)
def test_malformed_capture_files_raise_capture_error(tmp_path, data, needle):
    """A file that is not a readable capture raises CaptureError naming the file, the frame and why."""
    path = tmp_path / "bad.pcap"
    path.write_bytes(data)
    with pytest.raises(CaptureError) as err:
        decode_capture(path)
    assert str(err.value).startswith(f"{path}: ") and needle in str(err.value)


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        (good_capture()[:-10], "frame 3: truncated frame"),
        (good_capture()[: 24 + 2 * (16 + 94) + 7], "frame 3: truncated record header"),
    ],
)
def test_a_capture_cut_off_keeps_the_frames_before_the_cut(tmp_path, data, needle):
    """A capture that ends inside frame 3 gives the messages of frames 1 and 2, and its summary names the cut."""
    path = tmp_path / "cut.pcap"
    path.write_bytes(data)
    rows, summary = scan_capture(path)
    assert [(r["frame"], r.get("hole")) for r in rows] == [(1, None), (2, None), (2, "cut")]
    assert all("decoded" in r for r in rows[:2])
    assert summary.frames == 2 and summary.cut is not None and summary.cut.startswith(f"{path}: {needle}")
    assert summary.reconciles and summary.incomplete


def test_missing_file_raises_capture_error(tmp_path):
    """A capture path that does not exist is a CaptureError, not an OSError."""
    with pytest.raises(CaptureError, match="No such file"):
        decode_capture(tmp_path / "absent.pcap")


# --- the command line --------------------------------------------------------------------------

MQSPEC = Path(sys.executable).parent / "mqspec"


def test_cli_decodes_a_capture_to_json(tmp_path):
    """``mqspec decode --pcap FILE`` prints the rows as JSON and exits 0."""
    packet = mqqb.build_user_message(REPLICATION, mqdsrp.encode(change_propagation(1)))
    path = tmp_path / "ok.pcap"
    write_pcap(path, [udp_frame("10.0.0.1", 1801, "10.0.0.2", 1801, examples_mqsd.CLIENT_REQUEST),
                      *connection(packet, segment_size=100)])
    out = subprocess.run([MQSPEC, "decode", "--pcap", str(path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == decode_capture(path)
    assert [r["protocol"] for r in json.loads(out.stdout)] == ["mqsd", "mqdsrp"]


def test_cli_reports_a_bad_capture_in_one_line_with_exit_2(tmp_path):
    """A capture whose file header is cut makes ``mqspec decode --pcap`` print one stderr line and exit 2."""
    path = tmp_path / "bad.pcap"
    path.write_bytes(good_capture()[:20])
    out = subprocess.run([MQSPEC, "decode", "--pcap", str(path)], capture_output=True, text=True)
    assert out.returncode == 2 and out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "capture error" in lines[0] and str(path) in lines[0] and "file header" in lines[0]


def test_cli_decodes_a_cut_capture_then_warns(tmp_path):
    """A capture cut off in frame 3 prints the two messages before the cut, then one warning line naming frame 3."""
    path = tmp_path / "cut.pcap"
    path.write_bytes(good_capture()[:-1])
    out = subprocess.run([MQSPEC, "decode", "--pcap", str(path)], capture_output=True, text=True)
    assert out.returncode == 0
    assert [(r["frame"], r.get("hole")) for r in json.loads(out.stdout)] == [(1, None), (2, None), (2, "cut")]
    assert out.stderr.splitlines() == [
        "mqspec: 2 frames read: 2 messages decoded; 0 frames skipped",
        "mqspec: 1 hole in the capture (1 cut):",
        f"mqspec:   frame 2 (t=1700000000.001000) cut: the capture file is cut: {path}: frame 3: truncated frame: "
        "record says 94 bytes, file has 93",
        f"mqspec: warning: {path}: frame 3: truncated frame: record says 94 bytes, "
        "file has 93; the capture ends there (cut off?): the 2 frames before it were used"]


def test_cli_pcap_protocol_filters_and_other_inputs_are_usage_errors(tmp_path):
    """With --pcap, --protocol keeps that protocol's rows; --hex, a FILE or --example beside it is a usage error."""
    packet = mqqb.build_user_message(REPLICATION, mqdsrp.encode(change_propagation(1)))
    path = tmp_path / "ok.pcap"
    write_pcap(path, [udp_frame("10.0.0.1", 1801, "10.0.0.2", 1801, examples_mqsd.CLIENT_REQUEST),
                      *connection(packet, segment_size=100)])
    for protocol, expected, status in (("mqsd", ["mqsd"], 0), ("mqdsrp", ["mqdsrp"], 0), ("mqcn", [], 1)):
        out = subprocess.run([MQSPEC, "decode", "--pcap", str(path), "-p", protocol], capture_output=True, text=True)
        assert out.returncode == status and [r["protocol"] for r in json.loads(out.stdout)] == expected
    assert out.stderr.splitlines()[0] == "mqspec: 13 frames read: 2 messages decoded (0 of them mqcn); 0 frames skipped"
    for extra, named in ((["--hex", "00"], "--hex and --pcap"), ([str(path)], "FILE and --pcap"),
                         (["--example", "client_request"], "--pcap and --example")):
        out = subprocess.run([MQSPEC, "decode", "--pcap", str(path), *extra], capture_output=True, text=True)
        assert out.returncode == 2 and out.stdout == ""
        assert out.stderr.splitlines() == [f"mqspec: usage: give one of --hex, FILE, --pcap and --example, not {named}"]


def _tagged(ip: bytes, *tags: int) -> bytes:
    head = b"\x02\x00\x0a\x00\x00\x02" + b"\x02\x00\x0a\x00\x00\x01"
    for tpid in tags:
        head += struct.pack(">HH", tpid, 7)
    return head + struct.pack(">H", 0x0800) + ip


@pytest.mark.parametrize(("linktype", "wrap"), [
    (1, lambda ip: _tagged(ip, 0x8100)),
    (1, lambda ip: _tagged(ip, 0x88A8, 0x8100)),
    (0, lambda ip: struct.pack("<I", 2) + ip),
    (108, lambda ip: struct.pack(">I", 2) + ip),
    (113, lambda ip: struct.pack(">HHH8sH", 0, 1, 6, bytes(8), 0x0800) + ip),
    (276, lambda ip: struct.pack(">HHIHBB8s", 0x0800, 0, 1, 1, 0, 6, bytes(8)) + ip),
    (228, lambda ip: ip),
])
def test_link_layers_vlan_qinq_loopback_and_linux_cooked_give_the_same_rows(tmp_path, linktype, wrap):
    """VLAN and QinQ tags, BSD and OpenBSD loopback, Linux SLL and SLL2 and raw IPv4 frames carry the same
    datagram to the same row."""
    ip = udp_frame("10.0.0.1", 1801, "10.0.0.2", 1801, examples_mqsd.CLIENT_REQUEST, ethernet=False)
    rows, summary = scan(tmp_path, [wrap(ip)], linktype=linktype)
    assert [r["decoded"] for r in rows] == [to_json(mqsd.decode(examples_mqsd.CLIENT_REQUEST))]
    assert summary.used == {"mqsd datagram": 1}


def _ipv6(payload: bytes, nxt: int, *, extra: bytes = b"") -> bytes:
    src, dst = bytes.fromhex("fe80" + "00" * 13 + "01"), bytes.fromhex("fe80" + "00" * 13 + "02")
    return struct.pack(">IHBB", 6 << 28, len(extra) + len(payload), nxt, 64) + src + dst + extra + payload


def test_ipv6_datagrams_and_their_fragments_are_read(tmp_path):
    """An IPv6 UDP datagram decodes with bracketed endpoints; the same datagram in two IPv6 fragments
    (Fragment header, offset in 8-byte units) is reassembled to the same row."""
    data = examples_mqsd.CLIENT_REQUEST
    udp = struct.pack(">HHHH", 50000, 1801, 8 + len(data), 0) + data
    whole = _ipv6(udp, 17)
    first, second = udp[:24], udp[24:]
    frag1 = _ipv6(first, 44, extra=struct.pack(">BBHI", 17, 0, 0 | 1, 77))
    frag2 = _ipv6(second, 44, extra=struct.pack(">BBHI", 17, 0, 24, 77))
    rows, summary = scan(tmp_path, [whole, frag2, frag1], linktype=LINKTYPE_RAW)
    assert [r["src"] for r in rows] == ["[fe80::1]:50000"] * 2 and rows[0]["decoded"] == rows[1]["decoded"]
    assert summary.used == {"mqsd datagram": 1, "ip fragment": 2}
