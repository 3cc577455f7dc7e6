"""Issue 24's marks on the vectors: every case that rests on a register entry rather than a MUST names the
entry and its kind, and each case whose readings differ names the entries that make them differ."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mqspec.vectors import readings
from mqspec.vectors.writer import generate


@pytest.fixture(scope="module")
def marked(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """The reduced tree's manifests, by case."""
    out = tmp_path_factory.mktemp("marks") / "tree"
    generate(out, kinds=("codec", "handler"), reduced=True)
    return {m["case"]: m for m in (json.loads(p.read_text()) for p in sorted(Path(out).rglob("manifest.json")))}


def _marks(manifest: dict, key: str = "rests_on") -> list[tuple[str, str]]:
    return [(m["id"], m["kind"]) for m in manifest.get(key, [])]


@pytest.mark.parametrize("case", ["truncated-both", "a-reply-not-a-request-both"])
def test_a_dropped_malformed_datagram_rests_on_the_e211_policy(marked, case):
    """The server's handling of a malformed datagram is not specified: the drop rests on E-211 (row 6)."""
    assert _marks(marked[f"handler/ms-mqsd/3.2.5/receive_datagram/{case}"]) == [("E-211", "policy")]


def test_the_tag_case_refusal_is_marked_policy_e032(marked):
    """ABNF strings are case-insensitive (RFC 5234 2.3): refusing "<event>" is mqspec's policy (row 7)."""
    assert _marks(marked["codec/mqcn/invalid/tag-case"]) == [("E-032", "policy")]


def test_the_batch_timer_cases_say_what_they_do(marked):
    """The case that processes the held message says so; a refresh is the case with 100 held messages (row 8)."""
    names = {c.rsplit("/", 1)[1] for c in marked if "/batch_timer_expired/" in c}
    assert {n.rsplit("-", 1)[0] for n in names} == {"processes-the-held-message", "refreshes-after-100-messages"}
    refresh = next(m for c, m in marked.items() if "refreshes-after-100-messages-clarified" in c)
    assert "100" in refresh["description"] and "refresh" in refresh["description"]


def test_workgroup_mode_rests_on_e241_modelling(marked):
    """Workgroup mode's outcome is E-241's modelling, not the text (row 9)."""
    assert _marks(marked["handler/ms-mqcn/3.2.3/server_initialization/workgroup-mode-both"]) == [("E-241", "modelling")]


def test_every_pair_of_readings_names_the_entries_that_make_it_differ(marked):
    """Each -clarified / -literal pair names the same non-empty differs_by, the clarified case rests on them, and
    another enterprise's request differs by E-210 alone (row 10)."""
    pairs = {c.removesuffix("-clarified"): m for c, m in marked.items() if c.endswith("-clarified")}
    assert len(pairs) > 50
    for stem, clarified in pairs.items():
        literal = marked[f"{stem}-literal"]
        assert clarified["differs_by"] and clarified["differs_by"] == literal["differs_by"], stem
        assert set(_marks(clarified, "differs_by")) <= set(_marks(clarified)), stem
    assert _marks(pairs["handler/ms-mqsd/3.2.5/receive_datagram/other-enterprise"], "differs_by") == [
        ("E-210", "clarification")]
    assert all("differs_by" not in m for c, m in marked.items() if c.endswith("-both"))


def test_every_reading_test_of_the_reference_names_its_register_entry():
    """Each ctx.clarified / ctx.literal test of refimpl/ names the entry it implements (on its line, in the
    comment above it or opening its branch), so a pair's entries can always be found."""
    tests = readings.mode_tests()
    assert len(tests) > 50 and all(tests.values())
    from mqspec import errata

    known = errata.by_id()
    assert {e for entries in tests.values() for e in entries} <= set(known)


def test_a_test_on_the_reading_alone_is_told_from_one_that_reads_the_state():
    """`if ctx.clarified:` is pure (it branches in every pair); `if ctx.clarified and X:` is not."""
    import ast

    pure = readings._tests_in(ast.parse("if ctx.clarified:\n    a()\nif ctx.clarified and x:\n    b()\n"
                                        "y = 1 if not ctx.literal else 2\n"))
    assert pure == {1: True, 3: False, 5: True}
