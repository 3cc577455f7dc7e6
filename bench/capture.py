"""Benchmark reading captures: MB/s and peak memory of ``decode --pcap`` and ``check`` on a ~100 MB capture.

Writes (streaming, deterministic for a seed) a capture of at least ``--megabytes`` MB of a lab's traffic:
MC-MQDSRP replication between a PEC, three PSCs and eight BSCs (ChangePropagationMessages of 1 to 12
changes as MQQB UserMessages over TCP port 1801, MSS 1460, with 1% retransmissions and 1% of segments
out of order), MS-MQSD requests and replies on UDP 1801, and other traffic (SMB bulk on TCP 445, DNS
on UDP 53). It is reused when it is already there and large enough (``--capture``); the work measured
is each command's whole pass over it, never a cache. Then, each in a child process (its own peak
resident set size from ``os.wait4``, CPU and wall seconds):

* ``scan``: the capture stage alone (read, link layers, IP, TCP reassembly, MQQB framing, messages
  found, not decoded: :class:`mqspec.capture.Scan` with ``decode=False``);
* ``decode``: ``mqspec decode --pcap FILE`` (every message decoded to JSON, written to /dev/null);
* ``check``: ``mqspec check FILE --no-coverage`` (converted to a trace, two passes, and checked);
* ``tshark``: ``tshark -r FILE -T fields -e frame.number`` (its single-field pass, its default
  dissectors, which include MSMQ on port 1801), when tshark is installed; else skipped, saying why.

MB/s is the capture's size over CPU seconds (wall seconds are reported too: the machine is shared, so
the load average before and after is beside the figures). Goals (issue 25): every peak under 300 MB;
``scan`` at least as fast as tshark's pass.

    python bench/capture.py --json [--megabytes 100] [--capture PATH] [--seed 1] [--skip check]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LIMIT_MB = 300

_SCAN = """
import sys
from mqspec.capture import Scan
scan = Scan(decode=False)
rows = sum(1 for _ in scan.rows(sys.argv[1]))
s = scan.summary
print(rows, s.frames, s.decoded, s.holes_total)
"""


def generate(path: Path, megabytes: float, seed: int) -> dict[str, int]:
    """Write the lab capture (see the module docstring); counts of what it holds."""
    from mqspec.capture import mqqb
    from mqspec.capture.writer import TcpConversation, udp_frame, write_pcap
    from mqspec.model import examples_mqsd, mqdsrp
    from mqspec.model.guid import Guid
    from mqspec.model.mqdsrp import ChangePropagationMessage
    from mqspec.model.mqdsrp_changes import Command, DirectoryChange
    from mqspec.model.propids import PROPIDS
    from mqspec.model.propvalue import Property
    from mqspec.model.seqnum import SequenceNumber

    rng = random.Random(seed)
    servers = ["PEC0", "PSC1", "PSC2", "PSC3", *(f"BSC{i}" for i in range(8))]
    address = {name: f"10.1.0.{i + 1}" for i, name in enumerate(servers)}
    label = PROPIDS["PROPID_Q_LABEL"].propid
    partition = Guid.from_name("bench-partition")

    def body(n: int, first: int) -> bytes:
        changes = tuple(DirectoryChange(
            command=Command.UPDATE, partition_id=partition, previous_seq_number=SequenceNumber(first + i),
            seq_number=SequenceNumber(first + i + 1), purged_seq_number=SequenceNumber(0),
            properties=(Property(label, f"queue {first + i} " + "x" * rng.randrange(20, 400)),),
            path_name=f"srv\\queue{first + i}") for i in range(n))
        return mqdsrp.encode(ChangePropagationMessage(site_id=Guid.from_name("bench-site"), flush=True,
                                                      changes=changes))

    packets = [mqqb.build_user_message(f"DIRECT=OS:{to}\\private$\\mqis_queue$", body(rng.randrange(1, 13), 10 * k))
               for k in range(40) for to in (rng.choice(servers),)]
    pairs = [(a, b) for a in servers for b in servers if a != b]
    conversations = {p: TcpConversation((address[p[0]], 40000 + i), (address[p[1]], 1801))
                     for i, p in enumerate(pairs)}
    smb = TcpConversation(("10.1.0.50", 50000), ("10.1.0.51", 445))
    counts = {"frames": 0, "replication_messages": 0, "mqsd_datagrams": 0, "other_frames": 0}
    target = int(megabytes * 1e6)

    def frames():
        written = 24
        t = 1_700_000_000.0
        opened = set()
        while written < target:
            t += rng.random() * 0.002
            kind = rng.random()
            out: list[bytes] = []
            if kind < 0.70:
                pair = rng.choice(pairs)
                conv = conversations[pair]
                if pair not in opened:
                    opened.add(pair)
                    out += conv.handshake()
                packet = rng.choice(packets)
                segments = conv.send(True, packet, segment_size=1460)
                if len(segments) > 1 and rng.random() < 0.01:  # two segments swapped
                    segments[0], segments[1] = segments[1], segments[0]
                if rng.random() < 0.01:  # a retransmission
                    segments.append(segments[-1])
                out += segments
                out.append(conv.ack(False))
                counts["replication_messages"] += 1
            elif kind < 0.80:
                client = (f"10.1.1.{rng.randrange(1, 200)}", rng.randrange(49152, 65535))
                server = address[rng.choice(servers)]
                out += [udp_frame(client[0], client[1], server, 1801, examples_mqsd.CLIENT_REQUEST),
                        udp_frame(server, 1801, client[0], client[1], examples_mqsd.REPLY_LOCAL_SITE)]
                counts["mqsd_datagrams"] += 2
            elif kind < 0.95:
                out += smb.send(True, bytes(rng.randrange(256) for _ in range(64)) * 64, segment_size=1460)
                counts["other_frames"] += len(out)
            else:
                out.append(udp_frame("10.1.1.9", rng.randrange(49152, 65535), "10.1.0.53", 53, b"\x12\x34" + bytes(30)))
                counts["other_frames"] += 1
            for frame in out:
                counts["frames"] += 1
                written += 16 + len(frame)
                yield t, frame

    write_pcap(path, frames())
    return counts


def measured(args: list[str], size: int, stdout: int = subprocess.DEVNULL) -> dict[str, object]:
    """A command's own peak RSS, CPU seconds and MB/s over the capture (os.wait4 of that child alone)."""
    t0 = time.monotonic()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE if stdout == subprocess.PIPE else stdout,
                            stderr=subprocess.PIPE)
    out = proc.stdout.read() if stdout == subprocess.PIPE else b""  # type: ignore[union-attr]
    err = proc.stderr.read()  # type: ignore[union-attr]
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - t0
    cpu = usage.ru_utime + usage.ru_stime
    shown = ["<scan>" if "\n" in a else (Path(a).name if i == 0 else a) for i, a in enumerate(args)]
    return {"command": " ".join(shown),
            "exit": os.waitstatus_to_exitcode(status), "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
            "cpu_seconds": round(cpu, 2), "wall_seconds": round(wall, 2),
            "mb_per_cpu_second": round(size / 1e6 / cpu, 2) if cpu else None,
            "mb_per_wall_second": round(size / 1e6 / wall, 2) if wall else None,
            "stdout": out.decode(errors="replace").strip()[-200:] if stdout == subprocess.PIPE else None,
            "stderr": err.decode(errors="replace").strip().splitlines()[-8:]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--megabytes", type=float, default=100.0)
    ap.add_argument("--capture", default=str(Path(tempfile.gettempdir()) / "mqspec-bench-capture.pcap"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--skip", action="append", default=[], choices=["scan", "decode", "check", "tshark"])
    args = ap.parse_args()
    path = Path(args.capture)
    result: dict[str, object] = {"benchmark": "capture", "capture": str(path), "limit_mb": LIMIT_MB,
                                 "cpus": os.cpu_count(), "load_average_before": list(os.getloadavg())}
    if not path.exists() or path.stat().st_size < args.megabytes * 1e6:
        t0 = time.monotonic()
        result["generated"] = {**generate(path, args.megabytes, args.seed), "seconds": round(time.monotonic() - t0, 1)}
    size = path.stat().st_size
    result["bytes"] = size
    mqspec = [sys.executable, "-m", "mqspec"]
    runs: dict[str, object] = {}
    if "scan" not in args.skip:
        runs["scan"] = measured([sys.executable, "-c", _SCAN, str(path)], size, subprocess.PIPE)
    if "decode" not in args.skip:
        runs["decode"] = measured([*mqspec, "decode", "--pcap", str(path)], size)
    if "check" not in args.skip:
        runs["check"] = measured([*mqspec, "check", str(path), "--no-coverage"], size)
    if "tshark" not in args.skip:
        tshark = shutil.which("tshark")
        if tshark is None:
            runs["tshark"] = {"skipped": "tshark is not installed (apt-get install -y tshark)"}
        else:
            runs["tshark"] = measured([tshark, "-r", str(path), "-T", "fields", "-e", "frame.number"], size)
    result["runs"] = runs
    result["load_average_after"] = list(os.getloadavg())
    peaks = [r["peak_rss_mb"] for r in runs.values() if "peak_rss_mb" in r and r is not runs.get("tshark")]
    result["within_memory_limit"] = bool(peaks) and max(peaks) < LIMIT_MB  # type: ignore[operator]
    scan, shark = runs.get("scan", {}), runs.get("tshark", {})
    if "mb_per_cpu_second" in scan and "mb_per_cpu_second" in shark:  # type: ignore[operator]
        result["scan_vs_tshark"] = round(scan["mb_per_cpu_second"] / shark["mb_per_cpu_second"], 2)  # type: ignore[index]
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for key, value in result.items():
            print(f"{key:22} {value}")


if __name__ == "__main__":
    main()
