"""`mqspec mqsd serve` at its edges: replies too long for UDP, a port in use, floods (issue 15 rows 9-11).

Every socket is on 127.0.0.1.
"""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import time
from collections import Counter

from click.testing import CliRunner
from mqspec.model.examples_mqsd import CLIENT_REQUEST
from mqspec.model.mqsd import DirectoryServiceServer, TopologyServerReply, encode

from mqspec.cli.mqsd import mqsd
from mqspec.mqsd_log import ServeLog
from mqspec.mqsd_net import MAX_UDP_PAYLOAD, ResponderStats

from .test_mqsd_net import CN, ENTERPRISE, LOOPBACK, SECTION_4_LOCAL, SERVER_SITE, mqsd_command, serve_process

OTHER_SITE = ("--enterprise", str(ENTERPRISE), "--site", str(SERVER_SITE), "--connected-network", str(CN))


def reply_size(n: int) -> int:
    """The size of the other-site reply listing one server named by ``n`` letters."""
    return len(encode(TopologyServerReply(SERVER_SITE, (CN,), 0, SERVER_SITE, (DirectoryServiceServer("a" * n),))))


def longest_name() -> int:
    """The longest single server name whose other-site reply still fits one UDP datagram."""
    n = 1 + (MAX_UDP_PAYLOAD - reply_size(1)) // 2
    while reply_size(n) > MAX_UDP_PAYLOAD:
        n -= 1
    while reply_size(n + 1) <= MAX_UDP_PAYLOAD:
        n += 1
    return n


def test_a_server_list_too_long_for_a_reply_is_refused_at_start():
    """A 40,000-character --server name would make every reply too long: one usage line, exit 2, nothing served."""
    out = CliRunner().invoke(mqsd, ["serve", "--host", LOOPBACK, "--port", "0", *OTHER_SITE, "--server", "a" * 40_000])
    assert out.exit_code == 2 and out.stdout == ""
    assert out.stderr.splitlines() == [
        "mqspec: usage: Invalid value for --server: the DirectoryServerList (1 server) makes a reply of 80,070 bytes "
        "to a client of another site; a UDP datagram holds at most 65,507: use fewer or shorter names"]
    out = CliRunner().invoke(mqsd, ["serve", "--host", LOOPBACK, "--port", "0", *OTHER_SITE,
                                    "--server", "a" * (longest_name() + 1)])
    assert out.exit_code == 2 and f"makes a reply of {reply_size(longest_name() + 1):,} bytes" in out.stderr


def test_the_longest_server_list_that_fits_is_served():
    """A name one character shorter than the refused one is served: its reply (65,500 bytes or more) arrives whole."""
    name = "a" * longest_name()
    with serve_process(*OTHER_SITE, "--server", name) as (proc, port):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.bind((LOOPBACK, 0))
            s.settimeout(5.0)
            s.sendto(CLIENT_REQUEST, (LOOPBACK, port))
            reply = s.recvfrom(65535)[0]
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=10)
    assert len(reply) == reply_size(len(name)) and MAX_UDP_PAYLOAD - 8 < len(reply) <= MAX_UDP_PAYLOAD


def test_a_port_in_use_is_one_error_line_and_exit_2():
    """Serving on a UDP port another socket holds prints one stderr line naming the address, nothing on stdout, exit 2."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as holder:
        holder.bind((LOOPBACK, 0))
        port = holder.getsockname()[1]
        out = subprocess.run([*mqsd_command(), "serve", "--host", LOOPBACK, "--port", str(port), *SECTION_4_LOCAL],
                             capture_output=True, text=True, timeout=30)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.splitlines() == [f"mqspec: error: cannot open {LOOPBACK}:{port}: [Errno 98] Address already in use"]


def flood(port: int, n: int) -> None:
    """``n`` garbage datagrams to ``port``, in bursts of 50 so the loopback receive buffer keeps up."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for i in range(n):
            s.sendto(b"\xff" * 9, (LOOPBACK, port))
            if i % 50 == 49:
                time.sleep(0.02)


def serve_flood(*args: str, n: int) -> list[str]:
    """Run serve with ``args``, flood it with ``n`` datagrams, stop it; its stdout lines after the first."""
    with serve_process(*SECTION_4_LOCAL, *args) as (proc, port):
        flood(port, n)
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    return out.splitlines()


SUMMARY = re.compile(r"in the last [\d.]+ s: (\d+) datagrams?, .*")


def test_a_flood_prints_a_bounded_share_of_lines_and_a_summary_per_interval():
    """Under 400 datagrams, serve prints at most 20 datagram lines per --log-every interval and summarises the rest."""
    lines = serve_flood("--log-every", "0.5", n=400)
    received = int(re.search(r"stopped: (\d+) datagrams", lines[-1]).group(1))
    assert received > 100
    per_interval, shown = [0], 0
    for line in lines[:-1]:
        if SUMMARY.search(line):
            per_interval.append(0)
        elif "dropped: malformed" in line:
            per_interval[-1] += 1
            shown += 1
    assert max(per_interval) <= 20 and shown < received
    assert len(per_interval) >= 2 and "lines not shown" in next(line for line in lines if SUMMARY.search(line))


def test_quiet_prints_only_summaries_that_count_every_datagram():
    """With --quiet there is no line per datagram; the summaries' datagram counts add up to the total the stop line gives."""
    lines = serve_flood("--quiet", "--log-every", "0.3", n=200)
    received = int(re.search(r"stopped: (\d+) datagrams", lines[-1]).group(1))
    assert not any("dropped: malformed" in line for line in lines)
    assert sum(int(m.group(1)) for line in lines if (m := SUMMARY.search(line))) == received > 0


def test_serve_log_keeps_the_interval_share_and_summarises_the_rest():
    """ServeLog prints the first N lines of an interval, counts the rest, and summarises the interval at its tick."""
    out: list[str] = []
    stats = ResponderStats()
    now = [0.0]
    log = ServeLog(out.append, stats, interval=1.0, lines_per_interval=3, clock=lambda: now[0])
    for i in range(5):
        stats.datagrams += 1
        stats.replies += 1
        log.line(f"datagram {i}")
    stats.discarded.update({"malformed": 1})
    stats.datagrams += 1
    log.line("datagram 5")
    now[0] = 1.0
    log.tick()
    assert out == ["datagram 0", "datagram 1", "datagram 2",
                   "in the last 1.0 s: 6 datagrams, 5 replies, 1 dropped, 0 send errors; 3 lines not shown"]
    log.line("datagram 6")  # a new interval: shown again, and no summary when nothing was left out
    stats.datagrams += 1
    now[0] = 2.0
    log.tick()
    assert out[-1] == "datagram 6" and len(out) == 5
    assert Counter(type(x) for x in out) == Counter({str: 5})
