"""`mqspec mqsd probe`: the reference server passes; servers that depart from 3.2.5.1 in one way fail with that clause.

Every server here is a real UDP socket on 127.0.0.1 (port 0), and the probe sends only to it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator

import attrs
import pytest
from click.testing import CliRunner
from mqspec.model import mqsd
from mqspec.model.guid import Guid
from mqspec.model.mqsd import DirectoryServiceServer, TopologyServerReply

from mqspec.cli import main
from mqspec.clauses import covers
from mqspec.mqsd_probe import ServerConfig, expected, probe
from mqspec.refimpl.effects import Mode

ENTERPRISE, SITE, NETWORK = (Guid.from_name(n) for n in ("probe-enterprise", "probe-site", "probe-network"))
CONFIG = ServerConfig(ENTERPRISE, SITE, (DirectoryServiceServer("DS1"), DirectoryServiceServer("DS2", ipx=True)),
                      (NETWORK,))
ARGS = ["--enterprise", str(ENTERPRISE), "--site", str(SITE), "--server", "DS1", "--server", "DS2:ip+ipx",
        "--connected-network", str(NETWORK)]
TIMEOUT = 0.3

Bug = Callable[[bytes, TopologyServerReply | None], bytes | None]


class BuggyServer:
    """A UDP server on 127.0.0.1 that answers as the reference would, then applies ``bug``."""

    def __init__(self, bug: Bug) -> None:
        import socket

        self.bug = bug
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.1)
        self.address = self.sock.getsockname()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stopping.is_set():
            try:
                data, sender = self.sock.recvfrom(65535)
            except TimeoutError:
                continue
            reply, _ = expected(CONFIG, data, Mode.CLARIFIED)
            out = self.bug(data, reply)
            if out is not None:
                self.sock.sendto(out, sender)

    def close(self) -> None:
        self.stopping.set()
        self.thread.join()
        self.sock.close()


def _honest(data: bytes, reply: TopologyServerReply | None) -> bytes | None:
    return mqsd.encode(reply) if reply is not None else None


def _request_site(data: bytes) -> Guid | None:
    try:
        return mqsd.decode(data, lenient=True).site_id
    except Exception:  # noqa: BLE001 - not a request
        return None


BUGS: dict[str, tuple[Bug, str, str]] = {
    # name: (the departure, the case that must fail, its clause)
    "wrong CorrelationID": (
        lambda d, r: mqsd.encode(attrs.evolve(r, correlation_id=Guid.from_name("x"))) if r else None,
        "same-site", "MS-MQSD 3.2.5.1"),
    "server list in a same-site reply": (
        lambda d, r: mqsd.encode(TopologyServerReply(r.correlation_id, r.connected_networks, 0, SITE, CONFIG.servers))
        if r else None, "same-site", "MS-MQSD 3.2.5.1"),
    "non-zero mask over IP": (
        lambda d, r: mqsd.encode(attrs.evolve(r, connected_network_mask=1)) if r else None,
        "same-site", "MS-MQSD 3.2.5.1"),
    "answer to garbage": (
        lambda d, r: mqsd.encode(r) if r else mqsd.encode(TopologyServerReply(Guid.NULL, (NETWORK,), 0)),
        "garbage", "MS-MQSD 3.2.5"),
    "silence towards another site": (
        lambda d, r: None if r is None or _request_site(d) != SITE else mqsd.encode(r),
        "other-site", "MS-MQSD 3.2.5.1"),
}


@pytest.fixture
def buggy() -> Iterator[Callable[[Bug], BuggyServer]]:
    servers: list[BuggyServer] = []

    def start(bug: Bug) -> BuggyServer:
        servers.append(BuggyServer(bug))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


def test_a_server_answering_as_the_reference_passes_every_case(buggy):
    """A server that answers exactly as 3.2.5.1 says (and stays silent where the reference does) conforms."""
    report = probe(buggy(_honest).address, CONFIG, timeout=TIMEOUT)
    assert report.conformant, [c.to_json() for c in report.cases if c.verdict != "conform"]
    assert len(report.cases) >= 12


@covers("MS-MQSD", "3.2.5.1")
def test_a_server_departing_from_3_2_5_1_fails_with_that_clause(buggy):
    """Each single departure fails the case that exercises it, naming the clause it breaks (the five
    buggy servers are probed at once, each on its own socket)."""
    from concurrent.futures import ThreadPoolExecutor

    servers = {bug: buggy(departure) for bug, (departure, _, _) in BUGS.items()}
    with ThreadPoolExecutor(len(servers)) as pool:
        reports = dict(zip(servers, pool.map(lambda s: probe(s.address, CONFIG, timeout=TIMEOUT), servers.values())))
    for bug, (_, case, clause) in BUGS.items():
        failed = {c.name: c for c in reports[bug].cases if c.verdict != "conform"}
        assert not reports[bug].conformant and case in failed, (bug, [c.to_json() for c in reports[bug].cases])
        assert failed[case].clause == clause, bug


def test_mqsd_serve_passes_the_probe_through_the_command_line():
    """`mqspec mqsd serve` on 127.0.0.1 port 0 passes `mqspec mqsd probe --json`, exit 0."""
    serve = subprocess.Popen([sys.executable, "-m", "mqspec", "mqsd", "serve", "--host", "127.0.0.1", "--port", "0",
                              *ARGS], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = ""
        while "listening on" not in line:
            line = serve.stdout.readline()
            assert line, serve.stderr.read()
        port = re.search(r"listening on 127\.0\.0\.1:(\d+)", line).group(1)
        result = CliRunner().invoke(main, ["mqsd", "probe", "--to", f"127.0.0.1:{port}", *ARGS,
                                           "--timeout", str(TIMEOUT), "--json"])
    finally:
        serve.terminate()
        serve.wait(10)
    report = json.loads(result.stdout)
    assert result.exit_code == 0 and report["conformant"] is True
    assert {"name", "clause", "verdict", "expected", "observed"} <= set(report["cases"][0])


def test_a_divergent_server_exits_1_and_usage_errors_exit_2(buggy):
    """Exit 1 when a case diverges; a bad GUID or nothing listening is one stderr line and exit 2."""
    server = buggy(BUGS["wrong CorrelationID"][0])
    result = CliRunner().invoke(main, ["mqsd", "probe", "--to", f"127.0.0.1:{server.address[1]}", *ARGS,
                                       "--timeout", str(TIMEOUT)])
    assert result.exit_code == 1 and "FAIL same-site" in result.stdout
    bad = CliRunner().invoke(main, ["mqsd", "probe", "--to", "127.0.0.1:9", "--enterprise", "nope", "--site", str(SITE)])
    assert bad.exit_code == 2 and bad.stderr.count("\n") == 1 and "GUID" in bad.stderr
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:  # a port with nothing behind it
        s.bind(("127.0.0.1", 0))
        free = s.getsockname()[1]
    gone = CliRunner().invoke(main, ["mqsd", "probe", "--to", f"127.0.0.1:{free}", *ARGS, "--timeout", "0.2"])
    assert gone.exit_code == 2 and "nothing is listening" in gone.stderr
