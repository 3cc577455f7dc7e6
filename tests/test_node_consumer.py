"""A consumer of the vectors in another language: the JavaScript runner of tests/consumer (Node, no npm
package) reads the published schemas and a reduced vector set, validates every JSON file and trace line,
checks 64-bit fidelity and decodes every MS-MQSD codec vector with its own decoder (issue 24, part 4).

Node comes from Debian's nodejs (tools/node.sh, which `make test` runs: CI installs it); without it the
tests skip, saying why.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from mqspec.vectors.writer import generate

CONSUMER = Path(__file__).resolve().parent / "consumer" / "vectors_consumer.mjs"
NODE = shutil.which("node") or shutil.which("nodejs")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed (Debian: apt-get install nodejs; "
                                                      "make test installs it when run as root, as CI does)")


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("node") / "tree"
    generate(out, reduced=True)
    return out


def consume(root: Path) -> tuple[int, dict]:
    done = subprocess.run([NODE, str(CONSUMER), str(root)], capture_output=True, text=True, timeout=600)
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)


def test_the_javascript_consumer_passes_the_reduced_vector_set(tree: Path):
    """Every file validates against its published schema, no number exceeds 2^53, sequence numbers up to
    2^64 - 1 read back exactly as BigInts, and every MS-MQSD codec vector decodes (or is refused at the field,
    offset and section its error.json names) with the consumer's own decoder."""
    status, summary = consume(tree)
    assert status == 0 and summary["ok"], summary["failures"][:10]
    counts = summary["counts"]
    assert counts["json_files"] > 2500 and counts["trace_lines"] > 1000 and counts["wide_values"] > 1000
    assert counts["mqsd_valid"] >= 10 and counts["mqsd_invalid"] >= 40
    assert summary["largest_sequence_number"] == str((1 << 64) - 1)


def test_the_consumer_fails_on_a_rounded_number_a_schema_break_and_a_wrong_decoding(tree: Path, tmp_path: Path):
    """The consumer can fail: a sequence number written as a JSON number beyond 2^53, a manifest that breaks its
    schema, and an MS-MQSD expected.json that its decoder does not give are each reported."""
    broken = tmp_path / "tree"
    shutil.copytree(tree, broken)
    expected = next(p for p in sorted(broken.glob("codec/mqdsrp/valid/*/expected.json"))
                    if '"18446744073709551615"' in p.read_text())
    expected.write_text(expected.read_text().replace('"18446744073709551615"', "18446744073709551615", 1))
    manifest = next(iter(sorted(broken.glob("handler/**/manifest.json"))))
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "mode": "loose"}))
    reply = next(p for p in sorted(broken.glob("codec/mqsd/valid/*/expected.json"))
                 if '"TopologyServerReply"' in p.read_text())
    reply.write_text(json.dumps({**json.loads(reply.read_text()), "connected_network_mask": 7}))
    status, summary = consume(broken)
    found = "\n".join(summary["failures"])
    assert status == 1 and not summary["ok"]
    assert "beyond 2^53" in found and manifest.parent.name in found and reply.parent.name in found
