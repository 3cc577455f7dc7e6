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


# --- issue 24: liveness, a repeated RequestID, marks ------------------------------------------------


def _dies_on_garbage() -> Bug:
    """A server whose receive loop dies on the first datagram that is no request: it answers nothing more
    (its socket stays open, so the probe sees silence, not a port unreachable)."""
    dead = threading.Event()

    def bug(data: bytes, reply: TopologyServerReply | None) -> bytes | None:
        if dead.is_set():
            return None
        try:
            mqsd.decode(data, lenient=True)
        except Exception:  # noqa: BLE001 - garbage kills this server
            dead.set()
            return None
        return mqsd.encode(reply) if reply is not None else None

    return bug


def _ignores_repeated_request_ids() -> Bug:
    """A server that answers a RequestID once and ignores it afterwards."""
    seen: set[bytes] = set()

    def bug(data: bytes, reply: TopologyServerReply | None) -> bytes | None:
        if reply is None or reply.correlation_id.bytes_le in seen:
            return None
        seen.add(reply.correlation_id.bytes_le)
        return mqsd.encode(reply)

    return bug


@covers("MS-MQSD", "3.2.5")
def test_a_server_that_stops_answering_after_a_malformed_datagram_fails_probe(buggy):
    """A receive loop that dies on the first malformed datagram passes the malformed case (silence is due)
    but fails the valid request sent right after it, naming 3.2.5.1's MUST to answer (row 11)."""
    report = probe(buggy(_dies_on_garbage()).address, CONFIG, timeout=TIMEOUT)
    cases = {c.name: c for c in report.cases}
    assert cases["truncated"].verdict == "conform" and cases["truncated"].rests_on[0]["id"] == "E-211"
    dead = cases["after-truncated"]
    assert not report.conformant and dead.verdict == "diverge" and dead.clause == "MS-MQSD 3.2.5.1"
    assert "MUST send the TopologyServerReply packet to the sender" in dead.rule and dead.observed == "silence"
    assert [c.name for c in report.cases if c.verdict != "conform"][0] == "after-truncated"


def test_a_server_whose_port_closes_after_a_malformed_datagram_fails_probe_not_as_a_network_error():
    """A server that answered and then closed its socket on a malformed datagram (the port unreachable from
    then on) fails the following cases with the clause, exit 1, not the network error of exit 2."""
    import socket

    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    address = sock.getsockname()

    def serve() -> None:
        while True:
            data, sender = sock.recvfrom(65535)
            reply, _ = expected(CONFIG, data, Mode.CLARIFIED)
            if reply is None:
                sock.close()  # the process "crashed": nothing listens at the port any more
                return
            sock.sendto(mqsd.encode(reply), sender)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    result = CliRunner().invoke(main, ["mqsd", "probe", "--to", f"127.0.0.1:{address[1]}", *ARGS,
                                       "--timeout", str(TIMEOUT), "--json"])
    thread.join(5)
    report = json.loads(result.stdout)
    assert result.exit_code == 1, result.output
    failed = [c for c in report["cases"] if c["verdict"] != "conform"]
    assert failed[0]["name"] == "after-other-enterprise" and failed[0]["observed"] == "unreachable"
    assert failed[0]["clause"] == "MS-MQSD 3.2.5.1"


@covers("MS-MQSD", "3.2.5.1")
def test_a_server_that_ignores_a_repeated_request_id_fails_probe(buggy):
    """The same request sent again (a client's retry keeps its RequestID, 3.1.6.1) must be answered again:
    a server that answers each RequestID once fails the repeated-request-id case, naming 3.2.5.1 (row 12)."""
    report = probe(buggy(_ignores_repeated_request_ids()).address, CONFIG, timeout=TIMEOUT)
    failed = [c for c in report.cases if c.verdict != "conform"]
    assert [c.name for c in failed] == ["repeated-request-id"], [c.to_json() for c in failed]
    assert failed[0].clause == "MS-MQSD 3.2.5.1" and failed[0].attempts == 3


def test_cases_resting_on_a_register_entry_say_so_in_json_and_in_text(buggy):
    """Another enterprise's request is dropped by clarification E-210, a malformed one by policy E-211: both
    cases carry the entry and its kind (JSON) and print "rests on" (text); cases resting on a MUST quote it (row 5)."""
    server = buggy(_honest)
    as_json = CliRunner().invoke(main, ["mqsd", "probe", "--to", f"127.0.0.1:{server.address[1]}", *ARGS,
                                        "--timeout", str(TIMEOUT), "--json"])
    cases = {c["name"]: c for c in json.loads(as_json.stdout)["cases"]}
    assert cases["other-enterprise"]["rests_on"] == [
        {"id": "E-210", "kind": "clarification", "title": cases["other-enterprise"]["rests_on"][0]["title"]}]
    assert cases["garbage"]["rests_on"][0]["id"] == "E-211" and cases["garbage"]["rests_on"][0]["kind"] == "policy"
    assert "rule" not in cases["other-enterprise"] and cases["version-1"]["rule"] == "MQSD servers MUST ignore this field."
    assert "rests_on" not in cases["same-site"] and "MUST" in cases["same-site"]["rule"]
    text = CliRunner().invoke(main, ["mqsd", "probe", "--to", f"127.0.0.1:{server.address[1]}", *ARGS,
                                     "--timeout", str(TIMEOUT)])
    line = next(x for x in text.stdout.splitlines() if " other-enterprise " in x)
    assert "rests on E-210 (clarification)" in line
    literal = probe(server.address, CONFIG, timeout=TIMEOUT, mode=Mode.LITERAL)
    other = next(c for c in literal.cases if c.name == "other-enterprise")
    # literally the request is answered (the reference's MUST to send), so the case rests on no entry
    assert other.rests_on == () and other.rule.startswith("The protocol MUST send")
