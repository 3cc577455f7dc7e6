"""The exit-status table (mqspec/cli/exits.py, shown in the README and every --help) against the commands:
each command, given an input that should end with a status its row lists, ends with that status.

The witnesses run in-process (click's runner) where they can; `mqsd serve` runs as a process of its own
where a signal ends it. The statuses that need Spark are witnessed in tests/pipeline/test_cli_exit_codes.py,
those of `prove` in tests/proofs, and the main job's, which takes minutes, through the function that
computes it (WITNESSED_ELSEWHERE says where).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from mqspec.cli import exits
from mqspec.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
SCENARIOS = ROOT / "scenarios"
ENTERPRISE, SITE, NETWORK = ("e6eaba61-d1c6-11db-baac-0003ff4e2d22", "e6eaba60-d1c6-11db-baac-0003ff4e2d22",
                             "e6eaba62-d1c6-11db-baac-0003ff4e2d22")
SMALL_SCENARIO = """\
enterprise:
  pec: PEC0
  sites:
    site0: {psc: PEC0, bscs: [BSC01], machines: [C01]}
steps:
  - create: {at: BSC01, type: queue, path: 'C01\\\\q', properties: {PROPID_Q_LABEL: q}, expect_status: MQ_OK}
  - settle: {quiet: 60}
  - expect: {converged: true}
"""

#: (command, status) -> where it is witnessed instead of here, and why
WITNESSED_ELSEWHERE = {
    ("demo", 0): "the main job takes minutes: tests/test_demo.py holds demo.status() to the summaries",
    ("demo", 1): "the main job takes minutes: tests/test_demo.py holds demo.status() to the summaries",
    ("prove", 0): "tests/proofs/test_obligations.py::test_mqspec_prove_exit_status_and_json_rows (one handler)",
    ("prove", 1): "tests/proofs/test_obligations.py::test_mqspec_prove_exit_status_and_json_rows (one handler)",
    ("pipeline explore", 0): "needs Spark: tests/pipeline/test_cli_exit_codes.py",
    ("pipeline explore", 1): "needs Spark: tests/pipeline/test_cli_exit_codes.py",
    ("pipeline check", 0): "needs Spark: tests/pipeline/test_cli_exit_codes.py",
    ("pipeline check", 1): "needs Spark: tests/pipeline/test_cli_exit_codes.py",
    ("pipeline check", 2): "needs Spark for a quarantined input: tests/pipeline/test_cli_exit_codes.py",
    ("pipeline check", 3): "needs Spark: tests/pipeline/test_cli_exit_codes.py",
    ("pipeline check", 4): "needs Spark: tests/pipeline/test_cli_exit_codes.py",
    ("pipeline report", 0): "needs a pipeline's output: tests/pipeline/test_cli_exit_codes.py",
    ("pipeline explore", 5): "tests/pipeline/test_preflight.py::test_executors_without_mqspec_stop_the_job_with_one_line",
    ("pipeline explore", 6): "tests/pipeline/test_failures.py::test_a_python_worker_killed_mid_wave_ends_explore_with_"
                             "one_line",
    ("pipeline check", 5): "the pre-flight explore runs (mqspec/cli/pipeline.py _preflight), witnessed for explore in "
                           "tests/pipeline/test_preflight.py",
    ("pipeline check", 6): "the job-failure path explore takes (mqspec/cli/pipeline.py _job_failure), witnessed for "
                           "explore in tests/pipeline/test_failures.py",
    ("pipeline pack-env", 0): "packing a venv takes minutes: the archive fixture of tests/pipeline/test_cluster.py packs one",
    ("mqsd serve", 0): "ends on a signal: test_serve_ends_with_0_on_a_signal below",
    ("mqsd serve", 1): "needs a socket that cannot be reopened: test_serve_ends_with_1_when_its_thread_terminates",
}


def trace_lines() -> list[dict]:
    return [json.loads(line) for line in (SAMPLES / "adding-a-site.ndjson").read_text().splitlines()]


def write_trace(path: Path, events: list[dict]) -> str:
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return str(path)


def divergent(tmp: Path) -> str:
    """The sample trace with one send's body changed: the reference would have sent other bytes."""
    events = trace_lines()
    send = next(e for e in events if e["event"] == "send")
    send["body"] = send["body"][:-2] + ("00" if send["body"][-2:] != "00" else "01")
    return write_trace(tmp / "divergent.ndjson", events)


def header_only(tmp: Path) -> str:
    return write_trace(tmp / "header.ndjson", trace_lines()[:1])


def with_a_hole(tmp: Path) -> str:
    """The sample trace with a capture hole before its last event (verdict incomplete-capture)."""
    events = trace_lines()
    last = events[-1]
    events.insert(len(events) - 1, {"trace": last["trace"], "format": 2, "event": "hole", "t": last["t"],
                                    "kind": "tcp-gap", "text": "the capture lacks 100 bytes", "bytes": 100})
    return write_trace(tmp / "hole.ndjson", events)


def no_message(tmp: Path) -> str:
    """A capture of one UDP datagram to a port no directory protocol uses."""
    from mqspec.capture.writer import udp_frame, write_pcap

    write_pcap(tmp / "dns.pcap", [udp_frame("10.0.0.9", 5000, "10.0.0.1", 53, b"not a directory message")])
    return str(tmp / "dns.pcap")


def text_file(tmp: Path, name: str, text: str) -> str:
    (tmp / name).write_text(text, encoding="utf-8")
    return str(tmp / name)


def vectors_tree(tmp: Path, *, tampered: bool) -> str:
    out = tmp / "vectors"
    assert CliRunner().invoke(main, ["vectors", "--kinds", "codec", "--reduced", "--out", str(out)]).exit_code == 0
    if tampered:  # a file no vector reads: the check names it stale
        (out / "codec" / "left-over.json").write_text("{}")
    return str(out)


@contextlib.contextmanager
def mqsd_server():
    """The section 4 server of the client's site on an ephemeral loopback port."""
    from mqspec.model.guid import Guid
    from mqspec.mqsd_net import UdpResponder
    from mqspec.refimpl.mqsd_server import MqsdServer

    server = MqsdServer(Guid.parse(ENTERPRISE), Guid.parse(SITE), (), (Guid.parse(NETWORK),))
    responder = UdpResponder(server, "127.0.0.1", 0).start()
    try:
        yield f"127.0.0.1:{responder.address[1]}"
    finally:
        responder.shutdown()


@contextlib.contextmanager
def silent_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        yield f"127.0.0.1:{s.getsockname()[1]}"


GUIDS = ["--enterprise", ENTERPRISE, "--site", SITE]

#: (command, status) -> a function of a scratch folder giving the arguments (after `mqspec`), and the
#: context (a server to talk to, or none) the arguments need
WITNESSES = {
    ("decode", 0): lambda t: ["decode", "--example", "client_request"],
    ("decode", 1): lambda t: ["decode", "--pcap", no_message(t)],
    ("decode", 2): lambda t: ["decode", "--protocol", "mqdsrp", "--hex", "00"],
    ("encode", 0): lambda t: ["encode", "--protocol", "mqdsrp", str(SAMPLES / "change-propagation.json")],
    ("encode", 2): lambda t: ["encode", "--protocol", "mqdsrp", text_file(t, "bad.json", "{")],
    ("errata", 0): lambda t: ["errata", "E-119"],
    ("errata", 2): lambda t: ["errata", "E-999"],
    ("clauses", 0): lambda t: ["clauses", "--json"],
    ("demo", 2): lambda t: ["demo", "--out", str(Path(text_file(t, "mine.txt", "keep")).parent)],
    ("scenario run", 0): lambda t: ["scenario", "run", text_file(t, "small.yaml", SMALL_SCENARIO)],
    ("scenario run", 1): lambda t: ["scenario", "run", str(SCENARIOS / "4.1-adding-a-site.yaml"), "--mode", "literal"],
    ("scenario run", 2): lambda t: ["scenario", "run", text_file(t, "bad.yaml", "steps: 3\n")],
    ("scenario vocabulary", 0): lambda t: ["scenario", "vocabulary"],
    ("check", 0): lambda t: ["check", str(SAMPLES / "adding-a-site.ndjson")],
    ("check", 1): lambda t: ["check", divergent(t)],
    ("check", 2): lambda t: ["check", text_file(t, "bad.ndjson", "{not json\n")],
    ("check", 3): lambda t: ["check", header_only(t)],
    ("check", 4): lambda t: ["check", with_a_hole(t)],
    ("trace from-pcap", 0): lambda t: ["trace", "from-pcap", str(SAMPLES / "replication.pcap"), "-o", str(t / "o.ndjson")],
    ("trace from-pcap", 2): lambda t: ["trace", "from-pcap", text_file(t, "x.pcap", "not a capture"), "-o",
                                       str(t / "o.ndjson")],
    ("trace record", 0): lambda t: ["trace", "record", text_file(t, "small.yaml", SMALL_SCENARIO), "-o",
                                    str(t / "o.ndjson")],
    ("trace record", 2): lambda t: ["trace", "record", text_file(t, "bad.yaml", "steps: 3\n"), "-o", str(t / "o.ndjson")],
    ("trace schema", 0): lambda t: ["trace", "schema"],
    ("vectors", 0): lambda t: ["vectors", "--kinds", "codec", "--reduced", "--out", str(t / "v")],
    ("vectors", 1): lambda t: ["vectors", "--kinds", "codec", "--check-only", "--out", vectors_tree(t, tampered=True)],
    ("vectors", 2): lambda t: ["vectors", "--kinds", "nope", "--out", str(t / "v")],
    ("mqsd serve", 2): lambda t: ["mqsd", "serve", "--enterprise", "not-a-guid", "--site", SITE,
                                  "--connected-network", NETWORK],
    ("mqsd discover", 0): (mqsd_server, lambda t, to: ["mqsd", "discover", "--to", to, *GUIDS, "--timeout", "1"]),
    ("mqsd discover", 1): (silent_port, lambda t, to: ["mqsd", "discover", "--to", to, *GUIDS, "--timeout", "0.2"]),
    ("mqsd discover", 2): lambda t: ["mqsd", "discover", "--to", "127.0.0.1:1", "--enterprise", "x", "--site", SITE],
    ("mqsd probe", 0): (mqsd_server, lambda t, to: ["mqsd", "probe", "--to", to, *GUIDS, "--connected-network",
                                                    NETWORK, "--timeout", "0.3"]),
    ("mqsd probe", 1): (mqsd_server, lambda t, to: ["mqsd", "probe", "--to", to, "--enterprise", ENTERPRISE,
                                                    "--site", NETWORK, "--connected-network", NETWORK,
                                                    "--timeout", "0.3"]),
    ("mqsd probe", 2): (silent_port, lambda t, to: ["mqsd", "probe", "--to", "127.0.0.1:9", *GUIDS, "--timeout", "x"]),
    ("pipeline explore", 2): lambda t: ["pipeline", "explore", "--runs", "0"],
    ("pipeline report", 2): lambda t: ["pipeline", "report", str(t / "none"), "--out", str(t / "r")],
    ("pipeline pack-env", 2): lambda t: ["pipeline", "pack-env", str(Path(text_file(t, "file", "x")) / "env.tar.gz")],
    ("prove", 2): lambda t: ["prove", "--handler", "no_such_handler"],
}


def test_every_status_of_the_table_has_a_witness():
    """Each (command, status) the table lists is witnessed here or, with a reason, elsewhere; nothing else is."""
    listed = {(command, code) for command, codes in exits.BY_COMMAND.items() for code in codes}
    assert set(WITNESSES) | set(WITNESSED_ELSEWHERE) == listed
    assert not set(WITNESSES) & set(WITNESSED_ELSEWHERE)


@pytest.mark.parametrize(("command", "status"), sorted(WITNESSES), ids=lambda v: str(v))
def test_the_command_ends_with_the_status_its_row_lists(tmp_path, command, status):
    """Given the witness input, the command ends with that status; a status 2 is one line on stderr."""
    witness = WITNESSES[(command, status)]
    context, arguments = (witness if isinstance(witness, tuple) else (contextlib.nullcontext, None))
    with context() as to:
        args = arguments(tmp_path, to) if arguments is not None else witness(tmp_path)
        result = CliRunner().invoke(main, args)
    assert result.exit_code == status, (args, result.output)
    if status == 2:
        assert result.stderr.count("\n") == 1 and result.stderr.startswith("mqspec: "), result.stderr
        assert "Traceback" not in result.output


def test_serve_ends_with_0_on_a_signal():
    """`mqsd serve` stopped by SIGTERM ends with status 0."""
    proc = subprocess.Popen([sys.executable, "-m", "mqspec", "mqsd", "serve", "--host", "127.0.0.1", "--port", "0",
                             *GUIDS, "--connected-network", NETWORK], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        assert "listening on" in proc.stdout.readline()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def test_serve_ends_with_1_when_its_thread_terminates(monkeypatch):
    """A send error whose socket cannot be reopened terminates the server thread (3.2.5): status 1."""
    from mqspec import mqsd_net
    from mqspec.model.examples_mqsd import CLIENT_REQUEST

    opened, done = threading.Event(), threading.Event()
    bound: list = []

    class Failing(mqsd_net.UdpResponder):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, faults=mqsd_net.ResponderFaults(send_errors=1), **kwargs)

        def open(self):
            ok = super().open()
            self.faults.open_errors = 1  # the first open succeeded; the reopen after the send error fails
            bound.append(self.address)
            opened.set()
            return ok

    def ask() -> None:  # the request whose reply cannot be sent; SIGINT (status 0) if serve is still up later
        if opened.wait(20):
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as client:
                client.sendto(CLIENT_REQUEST, bound[0])
        if not done.wait(20):
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(mqsd_net, "UdpResponder", Failing)
    helper = threading.Thread(target=ask)
    helper.start()
    # serve sets signal handlers, which only the main thread may do: it runs here, the request from the helper
    result = CliRunner().invoke(main, ["mqsd", "serve", "--host", "127.0.0.1", "--port", "0", *GUIDS,
                                       "--server", "nt4pec", "--connected-network", NETWORK])
    done.set()
    helper.join(5)
    assert result.exit_code == 1, result.output
    assert "server thread terminated" in result.stderr


def test_serve_json_prints_one_object_a_line_from_listening_to_stopped():
    """`mqsd serve --json`: listening (with the real port), a log object per datagram, stopped with the counts."""
    from mqspec.model.examples_mqsd import CLIENT_REQUEST

    proc = subprocess.Popen([sys.executable, "-m", "mqspec", "mqsd", "serve", "--host", "127.0.0.1", "--port", "0",
                             *GUIDS, "--server", "nt4pec", "--connected-network", NETWORK, "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        listening = json.loads(proc.stdout.readline())
        assert listening["event"] == "listening" and listening["port"] > 0 and listening["servers"] == 1
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as client:
            client.settimeout(10)
            client.sendto(CLIENT_REQUEST, ("127.0.0.1", listening["port"]))
            client.recvfrom(65535)
        logged = json.loads(proc.stdout.readline())
        assert logged["event"] == "log" and "RequestID" in logged["text"]
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    stopped = json.loads(out.splitlines()[-1])
    assert proc.returncode == 0
    assert (stopped["event"], stopped["datagrams"], stopped["replies"], stopped["terminated"]) == ("stopped", 1, 1, None)
