"""MS-MQSD over real UDP sockets on 127.0.0.1: responders, the discovery client and the `mqspec mqsd` commands."""

from __future__ import annotations

import contextlib
import json
import random
import re
import select
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest
from click.testing import CliRunner
from mqspec.model.examples_mqsd import (
    CLIENT_REQUEST,
    REPLY_LOCAL_SITE,
    REPLY_OTHER_SITE,
)
from mqspec.model.guid import Guid
from mqspec.model.mqsd import (
    DirectoryServiceServer,
    TopologyServerReply,
    decode,
    encode,
)
from mqspec.refimpl.mqsd_client import MqsdClient
from mqspec.refimpl.mqsd_server import MqsdServer

from mqspec.clauses import covers
from mqspec.cli.mqsd import mqsd
from mqspec.mqsd_net import Network, ResponderFaults, UdpResponder, discover

ENTERPRISE = Guid.parse("e6eaba61-d1c6-11db-baac-0003ff4e2d22")  # the section 4 values
CLIENT_SITE = Guid.parse("dcc51bf6-d4ad-4543-8739-71568e8f9128")
SERVER_SITE = Guid.parse("e6eaba60-d1c6-11db-baac-0003ff4e2d22")
CN = Guid.parse("e6eaba62-d1c6-11db-baac-0003ff4e2d22")
CN2 = Guid.from_name("cn2")
TIMEOUT = 0.3  # the Wait For Response Timer the real-socket runs use
LOOPBACK = "127.0.0.1"


def local_site(networks=(CN,)) -> MqsdServer:
    """The section 4 server in the client's site."""
    return MqsdServer(ENTERPRISE, CLIENT_SITE, (), networks)


def other_site(names=("nt4pec",), networks=(CN,)) -> MqsdServer:
    """The section 4 server of another site, which lists its directory servers."""
    return MqsdServer(ENTERPRISE, SERVER_SITE, tuple(DirectoryServiceServer(n) for n in names), networks)


def new_client(timeout: float = TIMEOUT) -> MqsdClient:
    return MqsdClient(enterprise_identifier=ENTERPRISE, site_identifier=CLIENT_SITE, wait_for_response_timeout=timeout)


@contextlib.contextmanager
def responders(*specs):
    """Start one UdpResponder per (server, faults) on an ephemeral loopback port; shut them all down after."""
    started = []
    try:
        for server, faults in specs:
            started.append(UdpResponder(server, LOOPBACK, 0, faults=faults).start())
        yield started
    finally:
        for r in started:
            r.shutdown()


def eventually(predicate, timeout: float = 2.0) -> bool:
    """Poll ``predicate`` until it holds or ``timeout`` passes (a responder counts a reply just after sending it)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.002)
    return True


def exchange(address, data: bytes, timeout: float = 2.0) -> bytes | None:
    """Send one datagram from a fresh socket and return the first datagram back (None after ``timeout``)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind((LOOPBACK, 0))
        s.settimeout(timeout)
        s.sendto(data, address)
        try:
            return s.recvfrom(65535)[0]
        except TimeoutError:
            return None


def mqsd_command() -> list[str]:
    """`mqspec mqsd`, run as a process of its own."""
    return [sys.executable, "-m", "mqspec", "mqsd"]


def read_line(proc: subprocess.Popen, deadline: float) -> str:
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
        if ready:
            return proc.stdout.readline()
    raise AssertionError("no output from mqspec mqsd serve in time")


@contextlib.contextmanager
def serve_process(*args: str):
    """`mqspec mqsd serve` on an ephemeral loopback port; yields the process and its port."""
    cmd = [*mqsd_command(), "serve", "--host", LOOPBACK, "--port", "0", *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = read_line(proc, time.monotonic() + 15)
        m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
        assert m, f"unexpected first line {line!r}; stderr: {proc.stderr.read() if proc.poll() is not None else ''}"
        yield proc, int(m.group(1))
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(5)
        proc.stdout.close()
        proc.stderr.close()


SECTION_4_LOCAL = ("--enterprise", str(ENTERPRISE), "--site", str(CLIENT_SITE), "--connected-network", str(CN))
SECTION_4_OTHER = ("--enterprise", str(ENTERPRISE), "--site", str(SERVER_SITE), "--connected-network", str(CN),
                   "--server", "nt4pec:ip")


# --------------------------------------------------------------------------- responders


@covers("MS-MQSD", "3.2.5.1")
def test_the_section_4_request_gets_the_section_4_replies_byte_for_byte():
    """Over UDP, the section 4 request gets section 4's first reply from a same-site server and its second from another site's."""
    with responders((local_site(), None), (other_site(), None)) as (local, other):
        assert exchange(local.address, CLIENT_REQUEST) == REPLY_LOCAL_SITE
        assert exchange(other.address, CLIENT_REQUEST) == REPLY_OTHER_SITE
        assert eventually(lambda: (local.stats.replies, other.stats.replies) == (1, 1))


@covers("MS-MQSD", "3.2.5")
def test_garbage_datagrams_are_counted_and_the_responder_keeps_answering():
    """Random and near-miss datagrams are dropped and counted; the next real request is still answered."""
    rng = random.Random(1801)
    garbage = [rng.randbytes(rng.randrange(0, 120)) for _ in range(40)]
    garbage += [b"", REPLY_LOCAL_SITE, CLIENT_REQUEST[:51], CLIENT_REQUEST + b"\x02\x00\x00\x00\x01\x00\x00\x00"]
    with responders((local_site(), None)) as (r,):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.bind((LOOPBACK, 0))
            s.settimeout(2.0)
            for g in garbage:
                s.sendto(g, r.address)
            s.sendto(CLIENT_REQUEST, r.address)
            assert s.recvfrom(65535)[0] == REPLY_LOCAL_SITE  # the datagrams before it were handled first
        assert eventually(lambda: r.stats.replies == 1) and r.stats.datagrams == len(garbage) + 1
        assert r.stats.discarded == {"malformed": len(garbage)}


@covers("MS-MQSD", "3.2.5")
def test_a_send_error_closes_and_reopens_the_socket_on_the_same_port():
    """After a failed send the reply is lost, the socket is reopened on the same address, and the next request is answered."""
    faults = ResponderFaults(send_errors=1)
    with responders((local_site(), faults)) as (r,):
        address = r.address
        assert exchange(address, CLIENT_REQUEST, timeout=0.3) is None
        assert exchange(address, CLIENT_REQUEST) == REPLY_LOCAL_SITE
        assert eventually(lambda: r.stats.replies == 1)
        assert (r.stats.send_errors, r.stats.reopens, r.address) == (1, 1, address)


@covers("MS-MQSD", "3.2.5")
def test_a_socket_that_cannot_be_reopened_ends_the_thread():
    """A send error followed by a failed reopen terminates the server thread, which stops answering."""
    with responders((local_site(), ResponderFaults(send_errors=1))) as (r,):
        r.faults.open_errors = 1  # the first open succeeded; the reopen will not
        assert exchange(r.address, CLIENT_REQUEST, timeout=0.3) is None
        r._thread.join(2.0)
        assert not r._thread.is_alive() and r.server.terminated
        assert "cannot open" in r.termination


@covers("MS-MQSD", "3.2.3")
def test_a_port_in_use_ends_the_thread_at_initialization():
    """When the port is taken the socket cannot be opened: Initialization ends in a terminated thread, not an exception."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as taken:
        taken.bind((LOOPBACK, 0))
        r = UdpResponder(local_site(), LOOPBACK, taken.getsockname()[1])
        try:
            assert r.open() is False and r.server.terminated and "Address already in use" in r.termination
        finally:
            r.close()


# --------------------------------------------------------------------------- the client


@covers("MS-MQSD", "3.1.4.1")
def test_discovery_across_three_networks_with_a_lost_reply():
    """Local site on network 1, a lost reply on network 2, another site on network 3: the remote list is the result."""
    specs = ((local_site(), None), (local_site(), ResponderFaults(drop_replies=True)),
             (other_site(("ds1", "ds2"), (CN2,)), None))
    with responders(*specs) as rs:
        networks = [Network.to(r.address) for r in rs]
        outcome = discover(new_client(), networks)
        assert outcome.success and outcome.requests == 3
        assert outcome.result.directory_server_list == ("ds1", "ds2")
        assert outcome.result.connected_network_identifier_list == (CN2,)
        assert outcome.result.network == networks[2].address
        assert [r.stats.datagrams for r in rs] == [1, 1, 1] and rs[1].stats.dropped_replies == 1
        # one timer on network 2 (lost reply) and one after the remote reply on network 3 (case D)
        assert 2 * TIMEOUT <= outcome.elapsed < 2 * TIMEOUT + 1.5


@covers("MS-MQSD", "3.1.6.1")
def test_no_reply_on_any_network_fails():
    """Every reply lost: one request per network, then failure and no valid last network."""
    specs = [(local_site(), ResponderFaults(drop_replies=True)) for _ in range(2)]
    with responders(*specs) as rs:
        client = new_client()
        outcome = discover(client, [Network.to(r.address) for r in rs])
        assert outcome.result is not None and not outcome.success and outcome.requests == 2
        assert client.valid_last_successful_network_address is False


@covers("MS-MQSD", "3.1.5.2")
def test_the_client_discards_garbage_and_replies_to_other_requests():
    """A server that sends garbage and a reply to another request first: both are discarded, its real reply completes."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as rogue:
        rogue.bind((LOOPBACK, 0))
        rogue.settimeout(3.0)

        def answer():
            data, client = rogue.recvfrom(65535)
            request = decode(data)
            for packet in (b"\x00\x02garbage", encode(TopologyServerReply(Guid.from_name("other"), (CN2,))),
                           encode(TopologyServerReply(request.request_id, (CN,)))):
                rogue.sendto(packet, client)

        t = threading.Thread(target=answer, daemon=True)
        t.start()
        outcome = discover(new_client(), [Network.to(rogue.getsockname())])
        t.join(3.0)
    assert outcome.success and outcome.result.connected_network_identifier_list == (CN,)
    assert outcome.discarded == {"malformed": 1, "wrong_correlation": 1}


@covers("MS-MQSD", "3.1.5.2")
def test_a_late_reply_on_an_earlier_network_is_discarded():
    """A valid reply that arrives on network 1 once the client has moved to network 2 is discarded (wrong network)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as rogue, \
            responders((local_site(), ResponderFaults(drop_replies=True))) as (second,):
        rogue.bind((LOOPBACK, 0))
        rogue.settimeout(3.0)

        def answer_late():
            data, client = rogue.recvfrom(65535)
            deadline = time.monotonic() + 3.0
            while second.stats.datagrams == 0 and time.monotonic() < deadline:
                time.sleep(0.002)  # the client is on network 2 once network 2's responder has its request
            rogue.sendto(encode(TopologyServerReply(decode(data).request_id, (CN,))), client)

        t = threading.Thread(target=answer_late, daemon=True)
        t.start()
        outcome = discover(new_client(0.5), [Network.to(rogue.getsockname()), Network.to(second.address)])
        t.join(3.0)
    assert outcome.result is not None and not outcome.success
    assert outcome.discarded == {"wrong_network": 1}


# --------------------------------------------------------------------------- the commands


@covers("MS-MQSD", "3.2.5")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_serve_answers_survives_garbage_and_stops_cleanly(signum):
    """`mqspec mqsd serve` answers the section 4 request byte for byte, drops garbage, logs each, and exits 0 on a signal."""
    with serve_process(*SECTION_4_LOCAL) as (proc, port):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.bind((LOOPBACK, 0))
            s.settimeout(5.0)
            s.sendto(b"\xff" * 9, (LOOPBACK, port))
            s.sendto(CLIENT_REQUEST, (LOOPBACK, port))
            assert s.recvfrom(65535)[0] == REPLY_LOCAL_SITE
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    lines = out.strip().splitlines()
    assert any("dropped: malformed" in line for line in lines)
    assert any("RequestID f291a103-e33c-ab4f-a930-be3a33e432dd: local-site reply, 48 bytes" in line for line in lines)
    assert "stopped: 2 datagrams, 1 reply, 1 dropped" in lines[-1]


@covers("MS-MQSD", "3.1.4.1")
def test_discover_against_serve_prints_the_server_list():
    """`mqspec mqsd discover --to 127.0.0.1:PORT --json` against `mqspec mqsd serve` prints nt4pec and exits 0."""
    with serve_process(*SECTION_4_OTHER) as (proc, port):
        done = subprocess.run(
            [*mqsd_command(), "discover", "--to", f"{LOOPBACK}:{port}", "--enterprise", str(ENTERPRISE),
             "--site", str(CLIENT_SITE), "--timeout", str(TIMEOUT), "--json"],
            check=False, capture_output=True, text=True, timeout=30,
        )
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=10)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["success"] is True and report["directory_server_list"] == ["nt4pec"]
    assert report["connected_network_identifier_list"] == [str(CN)]
    assert report["last_successful_network_address"] == f"{LOOPBACK}:{port}"


@covers("MS-MQSD", "3.1.6.1")
def test_discover_exits_non_zero_when_no_list_is_obtained():
    """Nobody answers within --timeout: the JSON says success false and the exit status is 1."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as silent:
        silent.bind((LOOPBACK, 0))
        done = subprocess.run(
            [*mqsd_command(), "discover", "--to", f"{LOOPBACK}:{silent.getsockname()[1]}", "--enterprise",
             str(ENTERPRISE), "--site", str(CLIENT_SITE), "--timeout", str(TIMEOUT), "--json"],
            check=False, capture_output=True, text=True, timeout=30,
        )
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert report["success"] is False and report["requests_sent"] == 1 and report["directory_server_list"] == []


@covers("MS-MQSD", "3.1.7.1")
def test_discover_text_output_names_the_servers():
    """Without --json, discover prints the result, the directory servers and the connected networks as lines."""
    with responders((other_site(("ds1", "ds2")), None)) as (r,):
        out = CliRunner().invoke(mqsd, ["discover", "--to", f"{LOOPBACK}:{r.address[1]}", "--enterprise",
                                        str(ENTERPRISE), "--site", str(CLIENT_SITE), "--timeout", str(TIMEOUT)])
    assert out.exit_code == 0, out.output
    assert "result: valid list obtained" in out.stdout and "directory servers: ds1, ds2" in out.stdout
    assert f"connected networks: {CN}" in out.stdout


@covers("MS-MQSD", "3.1.5.2")
def test_discover_says_a_same_site_reply_lists_no_servers_instead_of_a_list_of_none():
    """A server of the client's own site answers with no server list: the output says so, not "(none)"."""
    with responders((local_site(), None)) as (r,):
        out = CliRunner().invoke(mqsd, ["discover", "--to", f"{LOOPBACK}:{r.address[1]}", "--enterprise",
                                        str(ENTERPRISE), "--site", str(CLIENT_SITE), "--timeout", str(TIMEOUT)])
        as_json = CliRunner().invoke(mqsd, ["discover", "--to", f"{LOOPBACK}:{r.address[1]}", "--enterprise",
                                            str(ENTERPRISE), "--site", str(CLIENT_SITE), "--timeout", str(TIMEOUT),
                                            "--json"])
    assert out.exit_code == 0, out.output
    assert "result: a directory server of this client's site answered" in out.stdout
    assert "valid list obtained" not in out.stdout and "(none)" not in out.stdout
    assert f"directory servers: none listed (the one that answered is reached via {LOOPBACK}:{r.address[1]})" in out.stdout
    report = json.loads(as_json.stdout)
    assert report["same_site_reply"] is True and report["directory_server_list"] == []


GUIDS = ("--enterprise", str(ENTERPRISE), "--site", str(CLIENT_SITE))
BAD_ARGUMENTS = {
    "serve bad GUID": (["serve", "--enterprise", "not-a-guid", "--site", str(CLIENT_SITE), "--connected-network",
                        str(CN)], "--enterprise"),
    "serve bad server spec": (["serve", *GUIDS, "--connected-network", str(CN), "--server", "nt4pec:tcp"], "--server"),
    "serve comma in a name": (["serve", *GUIDS, "--connected-network", str(CN), "--server", "a,b"], "--server"),
    "serve bad port": (["serve", *GUIDS, "--connected-network", str(CN), "--port", "70000"], "--port"),
    "serve no network": (["serve", *GUIDS], "--connected-network"),
    "serve bad network GUID": (["serve", *GUIDS, "--connected-network", "xyz"], "--connected-network"),
    "serve missing site": (["serve", "--enterprise", str(ENTERPRISE), "--connected-network", str(CN)], "--site"),
    "discover bad port": (["discover", *GUIDS, "--to", "127.0.0.1:99999"], "--to"),
    "discover bad HOST:PORT": (["discover", *GUIDS, "--to", "127.0.0.1:abc"], "--to"),
    "discover empty host": (["discover", *GUIDS, "--to", ":1801"], "--to"),
    "discover host with spaces": (["discover", *GUIDS, "--to", "no such host:1801"], "--to"),
    "discover bad GUID": (["discover", "--enterprise", str(ENTERPRISE), "--site", "{bad}", "--to", "127.0.0.1:1"],
                          "--site"),
    "discover bad timeout": (["discover", *GUIDS, "--to", "127.0.0.1:1", "--timeout", "soon"], "--timeout"),
    "discover missing enterprise": (["discover", "--site", str(CLIENT_SITE), "--to", "127.0.0.1:1"], "--enterprise"),
    "unknown option": (["discover", *GUIDS, "--bogus"], "--bogus"),
    "discover mixed families": (["discover", *GUIDS, "--to", "127.0.0.1:1,[::1]:1"], "IPv4 and IPv6"),
    "discover unclosed bracket": (["discover", *GUIDS, "--to", "[::1:1801"], "--to"),
}


@pytest.mark.parametrize("name", sorted(BAD_ARGUMENTS))
def test_bad_arguments_are_one_usage_line_and_exit_2(name):
    """Every bad argument prints one line `mqspec: usage: ...` naming the option, exit 2, no traceback."""
    args, needle = BAD_ARGUMENTS[name]
    out = CliRunner().invoke(mqsd, args)
    assert out.exit_code == 2, out.output
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mqspec: usage: ") and needle in lines[0], out.stderr
    assert "Traceback" not in out.output and out.stdout == ""


# --------------------------------------------------------------------------- issue 24: IPv6, one server on two networks, warnings


@covers("MS-MQSD", "3.1.5.1")
def test_discover_accepts_the_same_server_on_two_networks():
    """`--to A --to A` is two networks that reach one server: both are asked in turn, each named apart (row 17)."""
    with responders((local_site(), None)) as (r,):
        to = f"{LOOPBACK}:{r.address[1]}"
        out = CliRunner().invoke(mqsd, ["discover", "--to", to, "--to", to, *GUIDS, "--timeout", str(TIMEOUT),
                                        "--json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert report["networks"] == [to, f"{to}#2"] and report["requests_sent"] == 2
    assert report["last_successful_network_address"] == f"{to}#2" and report["warnings"] == []


@covers("MS-MQSD", "3.2.5.1")
def test_serve_discover_and_probe_work_over_ipv6_loopback():
    """`serve --host ::1` answers over IPv6; `discover --to [::1]:PORT` and `probe --to [::1]:PORT` reach it (row 18)."""
    from mqspec.cli import main

    cmd = [*mqsd_command(), "serve", "--host", "::1", "--port", "0", *SECTION_4_OTHER]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = read_line(proc, time.monotonic() + 15)
        port = int(re.search(r"listening on \[::1\]:(\d+)", line).group(1))
        found = CliRunner().invoke(mqsd, ["discover", "--to", f"[::1]:{port}", *GUIDS, "--timeout", "2", "--json"])
        probed = CliRunner().invoke(main, ["mqsd", "probe", "--to", f"[::1]:{port}", *SECTION_4_OTHER,
                                           "--timeout", str(TIMEOUT), "--json"])
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=10)
    assert found.exit_code == 0, found.output
    report = json.loads(found.stdout)
    assert report["directory_server_list"] == ["nt4pec"] and report["networks"] == [f"[::1]:{port}"]
    assert probed.exit_code == 0 and json.loads(probed.stdout)["target"] == f"[::1]:{port}", probed.output
    assert proc.returncode == 0 and re.search(r"request from \[::1\]:\d+ ", out), err


@covers("MS-MQSD", "3.2.5.1")
@pytest.mark.parametrize("bug", ["mask over IP", "server list to its own site"])
def test_discover_warns_naming_3_2_5_1_on_replies_that_break_it(bug):
    """A reply with a ConnectedNetworkMask over IP, or a server list for a client of the server's own site,
    completes discovery (the client takes it) but warns on stderr and in --json, naming 3.2.5.1 (row 19)."""
    makes = {
        "mask over IP": lambda q: TopologyServerReply(q.request_id, (CN,), 1),
        "server list to its own site": lambda q: TopologyServerReply(q.request_id, (CN,), 0, q.site_id,
                                                                       (DirectoryServiceServer("ds9"),)),
    }
    from .test_mqsd_probe import BuggyServer

    # a UDP server on 127.0.0.1 answering every request with the reply the departure makes
    server = BuggyServer(lambda data, _reply: encode(makes[bug](decode(data))))
    try:
        out = CliRunner().invoke(mqsd, ["discover", "--to", f"{LOOPBACK}:{server.address[1]}", *GUIDS,
                                        "--timeout", str(TIMEOUT), "--json"])
    finally:
        server.close()
    report = json.loads(out.stdout)
    assert len(report["warnings"]) == 1 and "MS-MQSD 3.2.5.1" in report["warnings"][0], report
    assert out.stderr.startswith("mqspec: warning: reply from 127.0.0.1:") and "3.2.5.1" in out.stderr
    keyword = {"mask over IP": "ConnectedNetworkMask", "server list to its own site": "RespondingSiteID"}[bug]
    assert keyword in report["warnings"][0]


def test_a_conformant_reply_gives_no_warning():
    """The reference server's replies break nothing: no warning line (the warning is not raised by every reply)."""
    with responders((other_site(), None)) as (r,):
        out = CliRunner().invoke(mqsd, ["discover", "--to", f"{LOOPBACK}:{r.address[1]}", *GUIDS,
                                        "--timeout", str(TIMEOUT), "--json"])
    assert out.exit_code == 0 and json.loads(out.stdout)["warnings"] == [] and "warning" not in out.stderr
