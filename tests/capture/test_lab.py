"""Captures as a lab makes them (issue 25 rows 1-8, 14, 15, 17, 18): nothing dropped silently, every frame
accounted for, holes reported, memory bounded. Each capture is written with mqspec.capture.writer."""

from __future__ import annotations

import gzip
import json
import random
import re
import tracemalloc
from pathlib import Path

import pytest
from click.testing import CliRunner

from mqspec.capture import CaptureError, Scan, scan_capture
from mqspec.capture import mqqb
from mqspec.capture.writer import (
    LINKTYPE_ETHERNET,
    LINKTYPE_LINUX_SLL2,
    LINKTYPE_RAW,
    TcpConversation,
    pcap_bytes,
    pcapng_bytes,
    sll2_frame,
    udp_fragments,
    udp_frame,
    write_pcap,
)
from mqspec.cli.check import trace
from mqspec.cli.codec import decode
from mqspec.model import mqdsrp
from mqspec.oracle.trace_format import load as load_trace
from mqspec.pipeline.checks import check_rows, search_inputs

from .lab import REPLY, REQUEST, check_cli, judged, server, sidecar
from .test_scan import REPLICATION, change_propagation

CLIENT = ("10.0.0.9", 50000)


def exchange(port: int = 1801, **kw) -> list[bytes]:
    """The section 4 request from a client and the server's reply, on ``port``."""
    return [udp_frame(CLIENT[0], CLIENT[1], "10.0.0.1", port, REQUEST, **kw),
            udp_frame("10.0.0.1", port, CLIENT[0], CLIENT[1], REPLY, **kw)]


def decode_cli(*args: str):
    return CliRunner().invoke(decode, list(args))


# --- row 1: another port ------------------------------------------------------------------------


def test_row1_a_server_on_another_port_is_named_in_the_summary_and_found_with_port(tmp_path):
    """Without --port, a server on 2101 gives no message, exit 1 and a summary naming 2 frames on other
    ports with a hint; --port 2101 (or --mqsd-port) decodes both datagrams."""
    path = tmp_path / "p.pcap"
    write_pcap(path, exchange(2101))
    result = decode_cli("--pcap", str(path))
    assert result.exit_code == 1 and json.loads(result.stdout) == []
    assert result.stderr.splitlines() == [
        "mqspec: 2 frames read: 0 messages decoded; 2 frames skipped (2 other port)",
        "mqspec: nothing on the ports looked at (MS-MQSD on UDP 1801, MQQB on TCP 1801): a server on another "
        "port? give --port (or \"ports\" in the topology)"]
    for option in ("--port", "--mqsd-port"):
        result = decode_cli("--pcap", str(path), option, "2101", "--json")
        out = json.loads(result.stdout)
        assert result.exit_code == 0 and [r["protocol"] for r in out["messages"]] == ["mqsd", "mqsd"]
        assert out["summary"]["frames"] == 2 and out["summary"]["frames_skipped"] == {}
        assert out["summary"]["frames_used"] == {"mqsd datagram": 2}


def test_row1_the_topology_sidecar_gives_per_protocol_ports(tmp_path):
    """A sidecar with "ports": {"mqsd": 2101} makes `mqspec check` judge the server on 2101 (conformant),
    and its JSON carries the capture's summary."""
    path = tmp_path / "lab.pcap"
    write_pcap(path, exchange(2101))
    sidecar(path, ports={"mqsd": 2101}, nodes=[server()])
    status, out, _ = check_cli(str(path), "--json")
    report = json.loads(out)
    assert status == 0 and report["traces"][0]["verdict"] == "conformant"
    assert report["traces"][0]["nodes"]["DC1"] == "conformant (MS-MQSD)"
    summary = report["captures"][str(path)]["capture"]
    assert (summary["frames"], summary["messages"], summary["frames_used"]) == (2, 2, {"mqsd datagram": 2})


# --- row 2: IPv4 fragments ----------------------------------------------------------------------


@pytest.mark.parametrize("lose", [None, 1])
def test_row2_fragmented_datagrams_are_reassembled_and_a_missing_fragment_is_a_hole(tmp_path, lose):
    """A reply in IPv4 fragments (out of order, one duplicated) is reassembled and conforms; with its
    second fragment never captured it is a hole: incomplete-capture, not the reply "missing"."""
    fragments = udp_fragments("10.0.0.1", 1801, CLIENT[0], CLIENT[1], REPLY, size=16)
    assert len(fragments) == 4
    if lose is not None:
        del fragments[lose]
    shuffled = [fragments[-1], *fragments[:-1], fragments[0]]
    path = tmp_path / "f.pcap"
    write_pcap(path, [exchange()[0], *shuffled])
    rows, summary = scan_capture(path)
    report = judged(path, nodes=[server()])
    if lose is None:
        assert [r["protocol"] for r in rows] == ["mqsd", "mqsd"] and rows[1]["frame"] == 5
        assert summary.used == {"mqsd datagram": 1, "ip fragment": 4} and summary.skipped == {"IP fragment copy": 1}
        assert report.verdict == "conformant", report.to_json()
    else:
        assert [(r["protocol"], r.get("hole")) for r in rows] == [("mqsd", None), ("ip", "fragment")]
        assert summary.skipped == {"fragment incomplete": 4} and summary.holes[0].frame == 2
        assert report.verdict == "incomplete-capture" and report.divergence is None
        assert report.holes[0]["kind"] == "fragment" and report.holes[0]["nodes"] == ["DC1"]


# --- rows 3 and 4: pcapng interfaces --------------------------------------------------------------


def test_row3_and_4_each_pcapng_interface_has_its_link_type_and_timestamp_resolution(tmp_path):
    """A request captured on an Ethernet interface in microseconds and the reply on a Linux SLL2 one in
    nanoseconds (tcpdump -i any beside dumpcap): both decode, each at its own time."""
    reply_ip = udp_frame("10.0.0.1", 1801, CLIENT[0], CLIENT[1], REPLY, ethernet=False)
    data = pcapng_bytes([(LINKTYPE_ETHERNET, 6), (LINKTYPE_LINUX_SLL2, 9)],
                        [(0, 1_700_000_000.25, exchange()[0]), (1, 1_700_000_000.500000123, sll2_frame(reply_ip))])
    path = tmp_path / "two.pcapng"
    path.write_bytes(data)
    rows, summary = scan_capture(path)
    assert [(r["protocol"], r["time"]) for r in rows] == [("mqsd", 1_700_000_000.25),
                                                         ("mqsd", pytest.approx(1_700_000_000.500000123, abs=1e-6))]
    assert all("decoded" in r for r in rows) and summary.frames == 2 and summary.skipped == {}


def test_row3_an_interface_of_an_unknown_link_type_is_counted_not_fatal(tmp_path):
    """Frames of an interface whose link type mqspec does not read are skipped as "unknown link type",
    the others decode."""
    data = pcapng_bytes([(LINKTYPE_ETHERNET, 6), (147, 6)], [(0, 1.0, exchange()[0]), (1, 2.0, b"\x00" * 40)])
    path = tmp_path / "u.pcapng"
    path.write_bytes(data)
    rows, summary = scan_capture(path)
    assert len(rows) == 1 and summary.skipped == {"unknown link type": 1}
    assert summary.unknown_link_types == {147: 1}
    assert "unknown link types: 147 (1 frame)" in "\n".join(summary.lines())


# --- rows 5, 6 and 7: the snap length -------------------------------------------------------------


@pytest.mark.parametrize("form", ["pcap", "pcapng"])
def test_rows5_and_6_datagrams_the_snap_length_cut_are_holes_never_a_divergence(tmp_path, form):
    """A 60-byte snap length (pktmon's kind of default) cuts both datagrams: pcap's record length and
    pcapng's original length say so; the verdict is incomplete-capture, never "sends bytes that are
    not a valid message"."""
    frames = exchange()
    path = tmp_path / f"s.{form}"
    if form == "pcap":
        write_pcap(path, frames, snaplen=60)
    else:
        path.write_bytes(pcapng_bytes([(LINKTYPE_ETHERNET, 6)], [(0, 1.0 + i, f) for i, f in enumerate(frames)],
                                      snaplen=60))
    rows, summary = scan_capture(path)
    assert [r.get("hole") for r in rows] == ["truncated", "truncated"] and summary.decoded == 0
    assert summary.skipped == {"truncated": 2} and summary.holes_total == 2
    report = judged(path, nodes=[server()])
    assert report.verdict == "incomplete-capture" and report.divergence is None
    assert [h["kind"] for h in report.holes] == ["truncated", "truncated"]


def replication_stream(tmp_path: Path, name: str, *, drop: tuple[int, ...] = (), snaplen: int = 65535) -> Path:
    """Three replication messages client -> server in 300-byte segments, some dropped or the snap length short."""
    conv = TcpConversation(("10.0.0.3", 40000), ("10.0.0.2", 1801))
    packets = b"".join(mqqb.build_user_message(REPLICATION, mqdsrp.encode(change_propagation(n))) for n in (1, 2, 1))
    segments = conv.send(True, packets, segment_size=300)
    path = tmp_path / name
    write_pcap(path, conv.handshake() + [s for i, s in enumerate(segments) if i not in drop], snaplen=snaplen)
    return path


def test_row7_tcp_the_snap_length_cut_is_named_in_the_summary_and_incomplete(tmp_path):
    """Every data segment cut to 60 bytes: the summary names the truncation (frames, stream bytes lost),
    decode exits 1, and check says incomplete-capture (not NOTHING CHECKED)."""
    path = replication_stream(tmp_path, "t.pcap", snaplen=60)
    rows, summary = scan_capture(path)
    data_segments = summary.frames - 3
    assert summary.skipped == {"truncated": data_segments} and summary.decoded == 0
    assert summary.holes_total == data_segments and summary.stream_bytes_lost > 0
    result = decode_cli("--pcap", str(path))
    assert result.exit_code == 1 and f"{data_segments} truncated" in result.stderr.splitlines()[0]
    status, out, err = check_cli(str(path))
    assert status == 4 and "INCOMPLETE CAPTURE" in out and any("truncated" in line for line in err)


# --- row 8: lost TCP segments -----------------------------------------------------------------------


def test_row8_lost_tcp_segments_make_the_verdict_incomplete_with_the_gaps_listed(tmp_path):
    """Two data segments lost: the messages they cut are missing (correctly), and check says
    incomplete-capture listing each gap with its time, connection and bytes (exit 4), not conformant."""
    path = replication_stream(tmp_path, "g.pcap", drop=(2, 6))
    rows, summary = scan_capture(path)
    gaps = [h for h in summary.holes if h.kind == "tcp-gap"]
    assert [(g.src, g.dst, g.bytes) for g in gaps] == [("10.0.0.3:40000", "10.0.0.2:1801", 300)] * 2
    assert summary.stream_bytes_lost == 600 and summary.decoded < 3
    report = judged(path)
    assert report.verdict == "incomplete-capture" and report.divergence is None
    listed = [(h["kind"], h["from"], h["to"], h["bytes"]) for h in report.holes]
    assert listed == [("tcp-gap", "10.0.0.3:40000", "10.0.0.2:1801", 300)] * 2
    assert report.holes[0]["t"] <= report.holes[1]["t"]
    status, out, _ = check_cli(str(path))
    assert status == 4 and "hole at event" in out and "tcp-gap" in out and "(300 bytes)" in out


# --- row 14: bounded memory ---------------------------------------------------------------------------


def test_row14_a_capture_is_read_in_memory_that_does_not_grow_with_it(tmp_path, monkeypatch):
    """Scanning a capture eight times larger (UDP and TCP, with a lost segment the rows after wait behind
    until it is given up) peaks at about the same memory: every stage hands the next one item at a time
    (16 KiB read at a time here, a hole given up after 50 ms of capture time)."""
    from mqspec.capture import reader

    from mqspec.capture import tcp

    monkeypatch.setattr(reader, "CHUNK", 16 * 1024)
    monkeypatch.setattr(tcp, "GAP_SECONDS", 0.05)  # the hole is given up after 50 ms of capture time
    packet = mqqb.build_user_message(REPLICATION, mqdsrp.encode(change_propagation(1)))
    peaks = {}
    for k in (4, 32):
        conv = TcpConversation(("10.0.0.3", 40000), ("10.0.0.2", 1801))
        frames = conv.handshake()
        for i in range(k * 30):
            frames += exchange() + conv.send(True, packet, segment_size=400)
        del frames[len(frames) // 2]  # a hole: rows wait behind it until it is given up
        path = tmp_path / f"{k}.pcap"
        write_pcap(path, frames)
        tracemalloc.start()
        try:
            count = sum(1 for _ in Scan(decode=False).rows(path))
            peaks[k] = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert count > k * 60
    assert peaks[32] < peaks[4] + 64 * 1024, peaks


# --- row 15: a file cut mid-record ----------------------------------------------------------------------


def test_row15_a_file_cut_mid_record_behaves_the_same_everywhere(tmp_path):
    """decode, trace from-pcap, check and the pipeline's per-input work all use the frames before the cut
    and report the cut: decode exits 0 with a warning, the trace ends with a hole, check and the pipeline
    say incomplete-capture (the pipeline does not quarantine it)."""
    path = tmp_path / "cut.pcap"
    path.write_bytes(pcap_bytes(exchange() * 2)[:-7])
    result = decode_cli("--pcap", str(path))
    assert result.exit_code == 0 and len([r for r in json.loads(result.stdout) if "decoded" in r]) == 3
    assert any("the capture ends there (cut off?)" in line for line in result.stderr.splitlines())
    out = tmp_path / "cut.ndjson"
    made = CliRunner().invoke(trace, ["from-pcap", str(path), "-o", str(out)])
    assert made.exit_code == 0, made.output
    (converted,) = load_trace(out)
    assert converted.events[-1]["event"] == "hole" and converted.events[-1]["kind"] == "cut"
    assert check_cli(str(path))[0] == 4
    verdict = next(r for r in check_rows(str(path)) if r["table"] in ("verdict", "quarantine"))
    assert verdict["table"] == "verdict" and verdict["verdict"] == "incomplete-capture"
    assert (verdict["frames"], verdict["capture_messages"], verdict["holes"]) == (3, 3, 1)


# --- row 17: compressed captures, other names, other formats, the folder search --------------------------


def test_row17_gzip_captures_and_cap_files_are_read(tmp_path):
    """A .pcap.gz (gzip) and a .cap holding pcap are read by their content; a gzip stream cut short
    is a cut capture, not a crash."""
    write_pcap(tmp_path / "a.pcap.gz", exchange(), compress=True)
    write_pcap(tmp_path / "b.cap", exchange())
    for name in ("a.pcap.gz", "b.cap"):
        rows, summary = scan_capture(tmp_path / name)
        assert [r["protocol"] for r in rows] == ["mqsd", "mqsd"] and summary.cut is None
    frames = [udp_frame(CLIENT[0], CLIENT[1], "10.0.0.1", 1801, REQUEST[:4] + bytes([i]) + REQUEST[5:])
              for i in range(200)]  # requests that differ, so the compressed stream is long
    whole = gzip.compress(pcap_bytes(frames), mtime=0)
    (tmp_path / "short.pcap.gz").write_bytes(whole[:-12])
    rows, summary = scan_capture(tmp_path / "short.pcap.gz")
    assert summary.cut is not None and "gzip stream ends early" in summary.cut
    assert 100 < summary.decoded < 200 and rows[-1]["hole"] == "cut"


# mtime=0 and ids: pytest-xdist's workers must collect the same test ids, and a gzip header carries the
# time it was written.
@pytest.mark.parametrize(("head", "named"), [
    (b"GMBU\x02\x02" + bytes(40), "Microsoft Network Monitor 2.x capture"),
    (b"snoop\x00\x00\x00" + bytes(40), "snoop capture"),
    (gzip.compress(b"GMBU\x02\x02" + bytes(40), mtime=0), "Network Monitor 2.x capture (inside the gzip compression)"),
    (b'{"trace": "t", "format": 2}\n', "not a capture but JSON text"),
], ids=["netmon", "snoop", "netmon-gzip", "json-trace"])
def test_row17_other_formats_are_a_clear_error_saying_how_to_convert(tmp_path, head, named):
    """NetMon and snoop files (compressed or not) and a trace given as a capture are one clear error:
    what the file is, and how to convert it."""
    path = tmp_path / "lab.cap"
    path.write_bytes(head)
    with pytest.raises(CaptureError, match=re.escape(named)):
        scan_capture(path)
    if b"GMBU" in head[:4]:
        assert "editcap -F pcapng" in str(pytest.raises(CaptureError, scan_capture, path).value)
        status, _, err = check_cli(str(path))
        assert status == 2 and err == [f"mqspec: capture error: {path}: file header (before frame 1): "
                                       f"{str(pytest.raises(CaptureError, scan_capture, path).value.reason)}"]


def test_row17_the_folder_search_counts_and_names_every_skipped_file(tmp_path):
    """In a folder, .pcap, .pcapng, .cap and .pcap.gz are captures and sidecars go with them; every other
    file is named as skipped."""
    for name in ("a.pcap", "b.pcapng", "c.cap", "d.pcap.gz", "e.ndjson", "a.topology.json", "notes.txt",
                 "sub/f.etl", "sub/g.pcap"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(b"x")
    found, skipped = search_inputs([tmp_path])
    assert [Path(f).name for f in found] == ["a.pcap", "b.pcapng", "c.cap", "d.pcap.gz", "e.ndjson", "g.pcap"]
    assert [Path(f).name for f in skipped] == ["notes.txt", "f.etl"]


# --- row 18: nothing decodes ----------------------------------------------------------------------------


def test_row18_decode_exits_1_with_a_summary_when_every_frame_fails(tmp_path):
    """Three datagrams on 1801 that are no MS-MQSD packet: their error rows, a summary, exit 1."""
    path = tmp_path / "bad.pcap"
    write_pcap(path, [udp_frame("10.0.0.9", 50000, "10.0.0.1", 1801, bytes([i]) * 9) for i in range(3)])
    result = decode_cli("--pcap", str(path))
    assert result.exit_code == 1 and len(json.loads(result.stdout)) == 3
    assert result.stderr.splitlines() == [
        "mqspec: 3 frames read: 0 messages decoded, 3 messages that did not decode; 0 frames skipped"]


# --- readers of other link types ------------------------------------------------------------------------


def test_raw_ip_and_random_segment_orders_keep_the_summary_reconciled(tmp_path):
    """Raw-IP captures of a stream shuffled with duplicates account for every frame whatever the order."""
    rng = random.Random(7)
    conv = TcpConversation(("10.0.0.3", 40000), ("10.0.0.2", 1801), ethernet=False)
    packet = mqqb.build_user_message(REPLICATION, mqdsrp.encode(change_propagation(2)))
    segments = conv.send(True, packet * 3, segment_size=137)
    for _ in range(5):
        order = segments + rng.sample(segments, 4)
        rng.shuffle(order)
        path = tmp_path / "r.pcap"
        write_pcap(path, conv.handshake() + order, linktype=LINKTYPE_RAW)
        rows, summary = scan_capture(path)
        assert [r["protocol"] for r in rows] == ["mqdsrp"] * 3 and summary.reconciles
        assert summary.skipped == {"TCP retransmission": 4}
