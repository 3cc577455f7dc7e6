"""The clause registry: every MC-MQDSRP section the reference implements has code and tests."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mqspec.clauses import load_all, report

ROOT = Path(__file__).resolve().parents[1]

#: the handler sections issue "MC-MQDSRP executable reference" lists, each needing code and a test
MQDSRP_HANDLERS = [
    "3.1.3.1", "3.1.3.2", "3.1.3.3", "3.1.5.1", "3.1.5.2", "3.1.7.1.1", "3.1.7.1.2", "3.1.7.1.3",
    "3.1.7.2.1", "3.1.7.2.2", "3.1.7.2.3", "3.1.7.2.4", "3.1.7.2.5", "3.1.7.2.6", "3.1.7.2.7",
    "3.1.7.2.8", "3.1.7.2.9", "3.1.7.2.10", "3.1.7.2.11", "3.1.7.2.12",
    "3.2.7.1", "3.2.7.2", "3.2.7.3", "3.2.7.4", "3.2.7.5", "3.2.7.6", "3.2.7.7", "3.2.7.8",
    "3.3.3", "3.3.6.1", "3.3.6.2", "3.3.7.1", "3.3.7.2", "3.3.7.3", "3.3.7.4", "3.3.7.5", "3.3.7.6",
    "3.3.7.7", "3.3.7.8", "3.3.7.9", "3.3.7.10", "3.3.7.11",
]


#: the MS-MQSD sections issue "MS-MQSD and MS-MQCN executable references" lists
MQSD_HANDLERS = ["3.1.3", "3.1.4.1", "3.1.5.1", "3.1.5.2", "3.1.6.1", "3.1.7.1", "3.1.7.2", "3.2.3", "3.2.5", "3.2.5.1"]


#: the MS-MQCN sections the same issue lists
MQCN_HANDLERS = ["3.2.3", "3.2.5", "3.2.5.1", "3.2.5.2", "3.3.3", "3.3.4.1", "3.3.5.1", "3.3.5.2", "3.3.5.3"]


@pytest.fixture(scope="module")
def rows():
    return {(r["document"], r["section"]): r for r in report()}


@pytest.mark.parametrize("section", MQDSRP_HANDLERS)
def test_every_handler_section_has_code_and_a_test(rows, section):
    """Each listed section is registered by a handler and named by at least one test's covers()."""
    row = rows.get(("MC-MQDSRP", section))
    assert row is not None, f"MC-MQDSRP {section} has no registered code"
    assert row["tests"], f"MC-MQDSRP {section} ({row['title']}) has no test"


@pytest.mark.parametrize("section", MQSD_HANDLERS)
def test_every_mqsd_section_has_code_and_a_test(rows, section):
    """Each MS-MQSD section of the reference is registered by a handler and named by a test's covers()."""
    row = rows.get(("MS-MQSD", section))
    assert row is not None, f"MS-MQSD {section} has no registered code"
    assert row["tests"], f"MS-MQSD {section} ({row['title']}) has no test"


@pytest.mark.parametrize("section", MQCN_HANDLERS)
def test_every_mqcn_section_has_code_and_a_test(rows, section):
    """Each MS-MQCN section of the reference is registered by a handler and named by a test's covers()."""
    row = rows.get(("MS-MQCN", section))
    assert row is not None, f"MS-MQCN {section} has no registered code"
    assert row["tests"], f"MS-MQCN {section} ({row['title']}) has no test"


def test_registered_code_locations_exist():
    """Every clause's "path:line" points into a file of the repository at a def or class (or its decorator)."""
    for c in load_all():
        path, line = c.code.rsplit(":", 1)
        lines = (ROOT / path).read_text(encoding="utf-8").splitlines()
        text = lines[int(line) - 1].strip()
        assert text.startswith(("def ", "class ", "@")), f"{c.document} {c.section}: {c.code} is {text!r}"


def test_every_covered_section_is_registered(rows):
    """A test may only claim a section that some code implements (no orphan covers)."""
    from mqspec.clauses import test_references

    orphans = sorted(key for key in test_references() if key not in rows and key[0] == "MC-MQDSRP"
                     and key[1].startswith("3."))
    assert not orphans, f"tests cover sections no code registers: {orphans}"


def test_cli_json_shape():
    """`mqspec clauses --json` prints document, section, title, code and tests for every clause."""
    out = subprocess.run([sys.executable, "-m", "mqspec", "clauses", "--json"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data and all({"document", "section", "title", "code", "tests"} <= set(r) for r in data)
