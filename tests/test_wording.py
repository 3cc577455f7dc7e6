"""Counts in messages take the right number: "1 byte", "2 bytes" (issue 15 row 24)."""

from __future__ import annotations

import doctest
import re
import subprocess
import sys
from pathlib import Path

import mqspec.wording
from mqspec.model import mqsd
from mqspec.model.errors import DecodeError
from mqspec.refimpl import scenario as sc
from mqspec.refimpl.scenario_run import run
from mqspec.wording import plural

REPO = Path(__file__).resolve().parents[1]
NOUNS = ("tests|bytes|frames|lines|steps|events|nodes|clauses|messages|datagrams|replies|problems|iterations|"
         "changes|properties|entries|errors|vectors|files|cases|traces|checks|servers|networks|invariants|"
         "violations|digits|items|records|partitions|objects|requests|elements|fields|failures|mutants|notes")
#: "{count} nouns" in an f-string: a count printed with a fixed plural noun
FIXED_PLURAL = re.compile(r"\{([^{}]+)\} (?:more )?(?:" + NOUNS + r")\b")
#: counts that cannot be 1 where they are printed (a constant, or a branch that needs more)
NEVER_ONE = {
    "RESERVED_SIZE", "MAX_PROPERTIES", "MAX_STEPS:,", "size:,",  # constants; a reply over 65,507 bytes
    "'the same' if not m['canonical'] else 'other'",  # not a count
    "len(d.diff) - 20", "len(notes) - MAX_NOTES",  # printed only when more than the limit
    "len(value)",  # "... do not fit": only counts beyond a UCHAR or 16-bit field reach it
    "len(array)",  # an array over 4 GiB
    "len(data)",  # demo.py: the section 4 packets, 48 bytes or more
}


def test_plural_doctest():
    """plural() gives the singular for 1 and the plural otherwise, irregular plurals included."""
    assert doctest.testmod(mqspec.wording).failed == 0
    assert [plural(n, "reply", "replies") for n in (0, 1, 2)] == ["0 replies", "1 reply", "2 replies"]


def test_no_message_prints_a_count_with_a_fixed_plural():
    """No f-string in the package prints "{n} bytes" for a count that can be 1; counts go through plural()."""
    found = []
    for folder in ("mqspec", "model", "refimpl", "proofs", "pipeline"):
        for path in sorted((REPO / folder).rglob("*.py")):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                for m in FIXED_PLURAL.finditer(line):
                    if m.group(1) not in NEVER_ONE:
                        found.append(f"{path.relative_to(REPO)}:{number}: {m.group(0)}")
    assert found == []


def test_a_one_byte_shortfall_says_byte():
    """An empty MS-MQSD packet needs 1 byte for its Version: the error says "needs 1 byte", not "1 bytes"."""
    try:
        mqsd.decode(b"")
    except DecodeError as exc:
        assert "needs 1 byte, 0 left" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("an empty packet decoded")


def test_clauses_print_one_test_in_the_singular():
    """`mqspec clauses` never prints "(1 tests)"."""
    out = subprocess.run([sys.executable, "-m", "mqspec", "clauses"], capture_output=True, text=True, check=True)
    assert "(1 tests)" not in out.stdout and re.search(r"\(\d+ tests?\)", out.stdout)


def test_a_failure_repeated_twice_says_one_more_iteration():
    """A failure met in two iterations of a repeat is one line ending "(and in 1 more iteration)"."""
    scenario = sc.parse({"enterprise": {"pec": "PEC0", "sites": {"site0": {"psc": "PEC0"}}},
                         "steps": [{"repeat": {"times": 2, "steps": [{"restart": "PEC0"}]}}]})
    assert run(scenario).failures == ["steps[0].repeat.steps[0].restart (iteration 1): PEC0 is already running "
                                      "(and in 1 more iteration)"]
