"""The marks a verdict carries when it rests on a register entry rather than a MUST (mqspec.errata.mark)."""

from __future__ import annotations

import pytest

from mqspec import errata


def test_a_mark_names_the_entry_its_kind_and_title():
    """E-020 (a reply's header rules bind no server) is mqspec's policy; E-210 a clarification; E-241 modelling."""
    assert {e: errata.mark(e)["kind"] for e in ("E-020", "E-032", "E-211", "E-210", "E-241")} == {
        "E-020": "policy", "E-032": "policy", "E-211": "policy", "E-210": "clarification", "E-241": "modelling"}
    assert errata.mark("E-020")["title"] == errata.by_id()["E-020"].title


def test_marks_are_unique_and_ordered_and_read_as_one_line():
    """marks() keeps each entry once, in id order; mark_text() is the line human output prints."""
    found = errata.marks(["E-211", "E-020", "E-211"])
    assert [m["id"] for m in found] == ["E-020", "E-211"]
    assert errata.mark_text(found) == "E-020 (policy), E-211 (policy)"


def test_an_unknown_entry_is_a_key_error():
    """A mark of an id the register lacks is refused, so no verdict cites an entry that does not exist."""
    with pytest.raises(KeyError):
        errata.mark("E-999")


def test_every_policy_entry_says_what_the_text_leaves_free():
    """A policy entry's problem says the text does not decide (no MUST, silent, or two readings)."""
    for e in errata.load():
        if e.kind == "policy":
            assert any(w in e.problem for w in ("not", "no MUST", "silent", "either")), e.id
