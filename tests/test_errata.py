"""The errata register: well-formed entries, unique ids, and the `mqspec errata --json` shape."""

import json
import subprocess
import sys

from mqspec import errata

KEYS = {"id", "document", "section", "title", "literal", "problem", "evidence", "resolution"}


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "mqspec", *args], capture_output=True, text=True)


def test_register_loads_with_unique_ids():
    """Every register file parses, every entry has all fields, and ids are unique and sorted."""
    entries = errata.load()
    ids = [e.id for e in entries]
    assert len(ids) == len(set(ids)) and ids == sorted(ids)
    assert {"E-001", "E-002", "E-003"} <= set(ids)


def test_json_output_has_the_published_keys():
    """`mqspec errata --json` prints a list of objects with the keys the register promises."""
    out = run_cli("errata", "--json")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert rows and all(KEYS <= set(row) for row in rows)
    assert {r["id"]: r["section"] for r in rows}["E-002"] == "3.2.7.1"


def test_seed_entries_say_what_the_issue_asked():
    """E-001 covers the seven-byte constants and E-002 the AllowedPurgeNumber misspelling."""
    by_id = errata.by_id()
    assert "seven" in by_id["E-001"].problem and "minus" in by_id["E-001"].problem
    assert "AllowedPurgeNumber" in by_id["E-002"].literal


def test_human_output_lists_every_entry():
    """`mqspec errata` prints a table naming each entry."""
    out = run_cli("errata")
    assert out.returncode == 0
    for e in errata.load():
        assert e.id in out.stdout
