"""The atheris harness: its TestOneInput on a few inputs, and a short libFuzzer run (slow tier)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from mqspec.model import mqcn, mqdsrp, mqsd
from mqspec.model.examples_mqsd import CLIENT_REQUEST, REPLY_OTHER_SITE
from mqspec.model.guid import Guid
from mqspec.model.seqnum import SequenceNumber

from tests.fuzz import atheris_codecs
from tests.fuzz.atheris_codecs import PROTOCOLS, TestOneInput

HARNESS = Path(atheris_codecs.__file__)

PURGED = mqdsrp.encode(mqdsrp.AlreadyPurgedMessage(Guid.NULL, Guid.NULL, SequenceNumber(7)))
BODY = mqcn.encode_body(mqcn.ChangeNotificationMessage(
    version=mqcn.Version.QUEUE_MANAGER,
    body=mqcn.NotificationBody(event=mqcn.Event.QUEUE_CREATED, object_guid=Guid.NULL,
                               domain_controller="dc1"),
))


@pytest.mark.parametrize("data", [
    b"",
    b"\x00",
    bytes([0]) + PURGED,
    bytes([3]) + PURGED[:-3],  # 3 % 3 is MC-MQDSRP too, here truncated
    bytes([1]) + CLIENT_REQUEST,
    bytes([1]) + REPLY_OTHER_SITE + b"\x00",
    bytes([2]) + BODY,
    bytes([2]) + BODY[:-1],  # the message without its unused byte
    bytes([5]) + b"\xff" * 64,
], ids=["empty", "protocol-only", "mqdsrp", "mqdsrp-truncated", "mqsd-request",
        "mqsd-trailing", "mqcn-body", "mqcn-message", "mqcn-garbage"])
def test_harness_accepts_valid_and_invalid_inputs(data):
    """TestOneInput returns quietly for valid encodings and for bytes the decoders refuse."""
    TestOneInput(data)


def test_harness_covers_the_three_protocols():
    """The first byte picks among exactly the three protocols, each with a strict decoder."""
    _, entries = atheris_codecs.entry_points()
    assert PROTOCOLS == ("mqdsrp", "mqsd", "mqcn") and set(entries) == set(PROTOCOLS)
    assert entries["mqdsrp"][0][0] is mqdsrp.decode and entries["mqsd"][0][0] is mqsd.decode
    assert all(any(strict for _, _, strict, _ in entries[p]) for p in PROTOCOLS)


@pytest.mark.slow
def test_atheris_runs_20000_inputs_without_a_crash(tmp_path):
    """Seeded with valid encodings, 20,000 libFuzzer runs end with exit code 0 (no crash)."""
    pytest.importorskip("atheris", reason="atheris (the fuzz extra) is not installed: .venv/bin/pip install -e '.[fuzz]'")
    corpus = tmp_path / "corpus"
    written = subprocess.run(
        [sys.executable, str(HARNESS), "--write-corpus", str(corpus)],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert written.returncode == 0, written.stderr
    seeds = sorted(p.name for p in corpus.iterdir())
    assert {name.split("-")[1] for name in seeds} == set(PROTOCOLS)
    fuzzed = subprocess.run(
        [sys.executable, str(HARNESS), str(corpus), "-runs=20000", "-seed=1",
         f"-artifact_prefix={tmp_path}/"],
        capture_output=True, text=True, timeout=600, check=False, cwd=tmp_path,
    )
    assert fuzzed.returncode == 0, fuzzed.stderr[-4000:]
    assert "Done 20000 runs" in fuzzed.stderr
