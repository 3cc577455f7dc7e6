"""The sample inputs the README's examples use are what tools/make_samples.py writes, and read as described."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from mqspec.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"


def test_the_samples_are_what_the_tool_writes(tmp_path):
    """Running tools/make_samples.py again gives the committed files byte for byte (and no other)."""
    run = subprocess.run([sys.executable, str(ROOT / "tools" / "make_samples.py"), "--out", str(tmp_path)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == sorted(p.name for p in SAMPLES.iterdir() if p.name != "README.md")
    for name in written:
        assert (tmp_path / name).read_bytes() == (SAMPLES / name).read_bytes(), name


def test_the_message_and_its_json_are_each_other(tmp_path):
    """decode of the .bin prints the .json; encode of the .json gives the .bin's bytes."""
    decoded = CliRunner().invoke(main, ["decode", "--protocol", "mqdsrp", str(SAMPLES / "change-propagation.bin")])
    assert json.loads(decoded.stdout) == json.loads((SAMPLES / "change-propagation.json").read_text())
    encoded = CliRunner().invoke(main, ["encode", "--protocol", "mqdsrp", str(SAMPLES / "change-propagation.json")])
    assert bytes.fromhex(encoded.stdout.strip()) == (SAMPLES / "change-propagation.bin").read_bytes()


def test_the_capture_is_on_port_1801_and_its_mqsd_server_is_checked(tmp_path):
    """Every message of the capture is to or from port 1801; with its topology, the MS-MQSD reply is replayed."""
    rows = json.loads(CliRunner().invoke(main, ["decode", "--pcap", str(SAMPLES / "replication.pcap")]).stdout)
    assert rows and all(r["src"].endswith(":1801") or r["dst"].endswith(":1801") for r in rows)
    assert {r["protocol"] for r in rows} == {"mqdsrp", "mqsd"}
    out = tmp_path / "c.ndjson"
    assert CliRunner().invoke(main, ["trace", "from-pcap", str(SAMPLES / "replication.pcap"), "--topology",
                                     str(SAMPLES / "replication.topology.json"), "-o", str(out)]).exit_code == 0
    report = json.loads(CliRunner().invoke(main, ["check", str(out), "--json"]).stdout)
    assert report["conformant"] is True and "MS-MQSD 3.2.5.1" in report["coverage"]["clauses"]
