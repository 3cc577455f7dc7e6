"""The errata register: well-formed entries, unique ids, and the `mqspec errata --json` shape."""

import json
import subprocess
import sys

import pytest

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


def test_the_list_is_a_compact_index_with_every_title_whole():
    """`mqspec errata` prints one line per entry with its id, kind, section and whole title, then how to read one."""
    out = run_cli("errata")
    assert out.returncode == 0
    entries = errata.load()
    lines = out.stdout.splitlines()
    assert len(lines) == len(entries) + 2 and "mqspec errata E-NNN" in lines[-1]
    for line, e in zip(lines, entries):
        assert line.startswith(f"{e.id}  {e.kind}") and f"{e.document} {e.section}" in line and line.endswith(e.title)
    assert "…" not in out.stdout


def test_one_entry_is_printed_whole():
    """`mqspec errata E-119` prints that entry alone, every word of each field, under its field's label."""
    out = run_cli("errata", "E-119")
    assert out.returncode == 0, out.stderr
    e = errata.by_id()["E-119"]
    assert out.stdout.startswith(f"E-119  {e.kind}  {e.document} {e.section}\n")
    for label, text in (("The literal text:", e.literal), ("Problem:", e.problem), ("Evidence:", e.evidence),
                        ("Resolution", e.resolution), ("", e.title)):
        assert label in out.stdout
        assert " ".join(text.split()) in " ".join(out.stdout.split())
    assert "E-120" not in out.stdout


def test_ids_are_read_as_the_demo_and_docs_write_them_and_an_unknown_one_is_refused():
    """`e-119` and `119` name E-119; --json prints the named entries; an unknown id is one line and exit 2."""
    assert run_cli("errata", "119").stdout == run_cli("errata", "e-119").stdout == run_cli("errata", "E-119").stdout
    rows = json.loads(run_cli("errata", "E-119", "E-112", "--json").stdout)
    assert [r["id"] for r in rows] == ["E-119", "E-112"]
    out = run_cli("errata", "E-999")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith("mqspec: usage: the register has no entry 'E-999'") and out.stderr.count("\n") == 1


def test_a_withdrawn_id_is_answered_with_why_and_never_given_again(tmp_path, monkeypatch):
    """`mqspec errata E-138` says why the entry was withdrawn (one line, exit 2); an entry taking the id is refused."""
    out = run_cli("errata", "E-138")
    assert out.returncode == 2 and out.stdout == "" and out.stderr.count("\n") == 1
    assert out.stderr.startswith("mqspec: usage: the register has no entry E-138: withdrawn 2026-11-28:")
    assert "Raise a Check Pending Changes event" in out.stderr
    assert "E-138" not in errata.by_id()
    monkeypatch.setitem(errata.WITHDRAWN, "E-119", "withdrawn for this test")
    with pytest.raises(ValueError, match="E-119 was withdrawn and is not given again"):
        errata.load()
