"""Every example of the README runs as written, on the shipped samples, and ends as the README says.

An example is a line of a ```sh block that starts with `.venv/bin/mqspec` (or `mkdir`); it ends with status 0
unless its comment says `exit status N`. A block fenced ```sh cluster shows commands for a Spark cluster,
which this machine does not have, and is not run. Each runs as a process of its own, from a scratch folder that holds the
checkout's `samples/`, `scenarios/` and `.venv/` (links), so that what the examples write goes there and
the checkout is left as it was. One departure, for the shared machine: `mqsd serve` is started in the
background and stopped with SIGTERM, and it, `discover` and `probe` get a free port in place of 1801
(another process may hold 1801); their arguments are otherwise the README's.
"""

from __future__ import annotations

import re
import shlex
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: the port the README's MS-MQSD examples use
README_PORT = "1801"


def examples() -> list[tuple[str, int]]:
    """(command line, the exit status the README gives it), in README order."""
    found = []
    for block in re.findall(r"```sh\n(.*?)```", README.read_text(encoding="utf-8"), re.S):
        for line in block.splitlines():
            if not line.startswith((".venv/bin/mqspec ", "mkdir ")):
                continue
            command, _, comment = line.partition("  #")
            status = re.search(r"exit status (\d)", comment)
            found.append((command.strip(), int(status.group(1)) if status else 0))
    return found


EXAMPLES = examples()


def free_port() -> str:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    """A folder that looks like the checkout to the examples: samples/, scenarios/ and .venv/ linked."""
    here = tmp_path_factory.mktemp("readme")
    for name in ("samples", "scenarios"):
        (here / name).symlink_to(ROOT / name)
    if (ROOT / ".venv" / "bin" / "mqspec").exists():
        (here / ".venv").symlink_to(ROOT / ".venv")
    else:  # an installed mqspec without the checkout's venv: the same command through this interpreter
        venv = here / ".venv" / "bin"
        venv.mkdir(parents=True)
        (venv / "mqspec").write_text(f"#!/bin/sh\nexec {sys.executable} -m mqspec \"$@\"\n")
        (venv / "mqspec").chmod(0o755)
    return here


def test_the_readme_shows_examples_of_what_a_newcomer_meets_first_with_no_placeholder():
    """The examples include decode and encode of the samples, one register entry, check, trace record and
    from-pcap, vectors, the three MS-MQSD commands and the pipeline; none holds a placeholder."""
    shown = "\n".join(command for command, _ in EXAMPLES)
    for fragment in ("mqspec decode --protocol mqdsrp samples/", "mqspec encode --protocol mqdsrp samples/",
                     "mqspec decode --pcap samples/", "mqspec errata E-119", "mqspec check samples/",
                     "mqspec trace record ", "mqspec trace from-pcap samples/", "mqspec vectors ", "mqspec mqsd serve ",
                     "mqspec mqsd discover ", "mqspec mqsd probe ", "mqspec pipeline explore ",
                     "mqspec pipeline check ", "mqspec pipeline report "):
        assert fragment in shown, fragment
    assert not re.search(r"\[|\]|\b(?:GUID|FILE|DIR|N|S|URL|HOST:PORT)\b", shown), "a placeholder cannot run as written"


@pytest.mark.timeout(1800)  # two Spark jobs among them: minutes on a loaded two-core machine
def test_every_readme_example_runs_as_written(scratch):
    """Each example ends with the status the README gives it (0 unless its comment says otherwise), with no
    traceback; what they write lands in the scratch folder's out/, never in the checkout."""
    port = free_port()
    before = sorted(p.name for p in ROOT.iterdir())
    server = None
    failures = []
    try:
        for command, status in EXAMPLES:
            args = shlex.split(command.replace(f":{README_PORT}", f":{port}").replace(f"--port {README_PORT}",
                                                                                       f"--port {port}"))
            if args[1:3] == ["mqsd", "serve"]:
                server = subprocess.Popen(args, cwd=scratch, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                line = server.stdout.readline()
                assert "listening on" in line, (command, line, server.stderr.read() if server.poll() else "")
                continue
            done = subprocess.run(args, cwd=scratch, capture_output=True, text=True, timeout=900)
            if done.returncode != status or "Traceback" in done.stderr:
                failures.append(f"{command}\n  -> exit {done.returncode} (README: {status})\n  {done.stderr[-800:]}")
    finally:
        if server is not None:
            server.send_signal(signal.SIGTERM)
            try:
                assert server.wait(20) == 0, server.stderr.read()
            finally:
                if server.poll() is None:
                    server.kill()
                server.communicate()
    assert failures == [], "\n".join(failures)
    assert (scratch / "out" / "report" / "index.html").is_file() and (scratch / "out" / "vectors").is_dir()
    assert sorted(p.name for p in ROOT.iterdir()) == before, "an example wrote into the checkout"
