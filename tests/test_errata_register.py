"""The errata register against the code: every cited id has an entry, and every entry's evidence runs.

Checks that every ``E-NNN`` the code cites is in the register, that every entry whose evidence is
``pytest tests/refimpl/test_errata_evidence.py -k eNNN`` (or ``test_errata_evidence_2.py``) has
exactly one ``test_eNNN_*`` among the evidence files, in the file its evidence names (covering the
entry's section), that every ``python -c "..."`` evidence exits 0, and that ids are unique and the
fields a reader needs are filled in.
"""

from __future__ import annotations

import ast
import collections
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest
import yaml

from mqspec import errata

ROOT = Path(__file__).resolve().parents[1]
#: the evidence tests, split in two files to keep each readable; an entry's evidence names its file
EVIDENCE_FILES = tuple(ROOT / "tests" / "refimpl" / name
                       for name in ("test_errata_evidence.py", "test_errata_evidence_2.py"))
CODE_FOLDERS = ("refimpl", "model", "mqspec")
ID = re.compile(r"E-(\d{3})")
#: "E-180 .. E-189", "E-040..E-043": a block of ids reserved for an area, not each a citation
ID_RANGE = re.compile(r"E-(\d{3})\s*\.\.\s*E-(\d{3})")
PYTEST_EVIDENCE = re.compile(r"(test_errata_evidence(?:_\d+)?\.py)\s+-k\s+(e\d{3})\b")
PYTHON_C = "python -c "
REQUIRED = ("literal", "problem", "evidence", "resolution")

ENTRIES = errata.load()
IDS = {e.id for e in ENTRIES}


def raw_entries() -> list[tuple[str, dict]]:
    """Every entry as its YAML file holds it (before the loader checks anything), with the file name."""
    rows = []
    for path in sorted((ROOT / "mqspec" / "register").glob("*.yaml")):
        rows.extend((path.name, raw) for raw in yaml.safe_load(path.read_text(encoding="utf-8")) or [])
    return rows


def cited_ids() -> tuple[dict[str, list[str]], dict[tuple[int, int], list[str]]]:
    """Ids cited in the code (id -> files) and id ranges (low, high) -> files."""
    singles: dict[str, list[str]] = collections.defaultdict(list)
    ranges: dict[tuple[int, int], list[str]] = collections.defaultdict(list)
    for folder in CODE_FOLDERS:
        for path in sorted((ROOT / folder).glob("*.py")):
            text = path.read_text(encoding="utf-8")
            where = path.relative_to(ROOT).as_posix()
            for m in ID_RANGE.finditer(text):
                ranges[(int(m.group(1)), int(m.group(2)))].append(where)
            for m in ID.finditer(ID_RANGE.sub(" ", text)):
                singles[m.group(0)].append(where)
    return singles, ranges


def python_c_command(evidence: str) -> tuple[str, str] | None:
    """The code after ``python -c`` in double quotes (``\\"`` read as a quote) and the text after it.

    None when the evidence has no such command.
    """
    start = evidence.find(PYTHON_C + '"')
    if start < 0:
        return None
    i = start + len(PYTHON_C) + 1
    code = []
    while i < len(evidence):
        ch = evidence[i]
        if ch == "\\" and evidence[i + 1:i + 2] == '"':
            code.append('"')
            i += 2
            continue
        if ch == '"':
            return "".join(code), evidence[i + 1:].strip()
        code.append(ch)
        i += 1
    raise AssertionError(f"unterminated python -c command in evidence: {evidence!r}")


def evidence_tests() -> dict[str, list[tuple[str, ast.FunctionDef]]]:
    """The test functions of the evidence files, by the ``eNNN`` their name starts with, with their file's name."""
    found: dict[str, list[tuple[str, ast.FunctionDef]]] = collections.defaultdict(list)
    for path in EVIDENCE_FILES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and (m := re.match(r"test_(e\d{3})_", node.name)):
                found[m.group(1)].append((path.name, node))
    return found


def covered_sections(fn: ast.FunctionDef) -> list[tuple[str, str]]:
    return [
        (d.args[0].value, d.args[1].value)
        for d in fn.decorator_list
        if isinstance(d, ast.Call) and getattr(d.func, "id", None) == "covers" and len(d.args) == 2
        and all(isinstance(a, ast.Constant) for a in d.args)
    ]


PYTEST_ENTRIES = [e for e in ENTRIES if PYTEST_EVIDENCE.search(e.evidence)]
PYTHON_ENTRIES = [e for e in ENTRIES if python_c_command(e.evidence) is not None]


def test_every_cited_id_has_a_register_entry():
    """Every E-NNN cited in refimpl/, model/ and mqspec/ names a register entry; a cited range starts at one.

    A withdrawn id is cited by mqspec/errata.py's list of them and nowhere else."""
    singles, ranges = cited_ids()
    missing = {i: files for i, files in singles.items()
               if i not in IDS and not (i in errata.WITHDRAWN and files == ["mqspec/errata.py"])}
    assert not missing, f"ids cited in the code with no register entry: {missing}"
    empty = {f"E-{lo:03d}..E-{hi:03d}": files for (lo, hi), files in ranges.items() if f"E-{lo:03d}" not in IDS}
    assert not empty, f"id ranges cited in the code whose first id has no entry: {empty}"


def test_pytest_evidence_names_exactly_one_test():
    """Every entry whose evidence is ``-k eNNN`` has exactly one test_eNNN_*, in the file it names, covering its section."""
    tests = evidence_tests()
    problems = []
    for entry in PYTEST_ENTRIES:
        file_name, key = PYTEST_EVIDENCE.search(entry.evidence).groups()
        if key != entry.id.replace("E-", "e"):
            problems.append(f"{entry.id}: evidence selects {key}")
        found = tests.get(key, [])
        if len(found) != 1:
            problems.append(f"{entry.id}: {len(found)} test functions named test_{key}_*")
            continue
        where, fn = found[0]
        if where != file_name:
            # the command the reader runs would select no test at all
            problems.append(f"{entry.id}: evidence runs {file_name} but {fn.name} is in {where}")
        if (entry.document, entry.section) not in covered_sections(fn):
            problems.append(f"{entry.id}: {fn.name} does not cover {entry.document} {entry.section}")
    assert not problems, "\n".join(problems)


def test_every_evidence_test_belongs_to_an_entry():
    """Every test_eNNN_* in the evidence files is named by its entry's evidence (no orphans)."""
    named = {PYTEST_EVIDENCE.search(e.evidence).group(2) for e in PYTEST_ENTRIES}
    orphans = sorted(set(evidence_tests()) - named)
    assert not orphans, f"evidence tests no register entry points to: {orphans}"


#: what the evidence says the command does: raise an error, or print a quoted text
RAISES = re.compile(r"raises (\w+)")
PRINTS = re.compile(r'prints "([^"]+)"')


@pytest.mark.parametrize("entry", PYTHON_ENTRIES, ids=lambda e: e.id)
def test_python_evidence_runs(entry):
    """The entry's ``python -c "..."`` evidence runs: exit 0 (or the error it says it raises), and prints what it quotes."""
    venv_python = ROOT / ".venv" / "bin" / "python"
    python = str(venv_python) if venv_python.exists() else sys.executable
    code, said = python_c_command(entry.evidence)
    done = subprocess.run([python, "-c", code], check=False, cwd=ROOT, capture_output=True, text=True, timeout=120)
    if (raises := RAISES.match(said)) is not None:
        # "raises DecodeError ...": the failure is the evidence
        last = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""
        assert done.returncode != 0 and raises.group(1) in last, f"{entry.id}: {code}\n{done.stderr}"
        return
    assert done.returncode == 0, f"{entry.id}: {code}\n{done.stderr}"
    if (prints := PRINTS.match(said)) is not None:
        assert done.stdout.startswith(prints.group(1)), f"{entry.id}: printed {done.stdout!r}"


def test_ids_unique_and_required_fields_filled():
    """Register ids are unique across files, and literal, problem, evidence and resolution are non-empty text."""
    rows = raw_entries()
    counts = collections.Counter(raw.get("id") for _, raw in rows)
    assert not [i for i, n in counts.items() if n > 1], f"ids used more than once: {counts.most_common(5)}"
    empty = [
        f"{name}: {raw.get('id')}.{key}" for name, raw in rows for key in REQUIRED
        if not isinstance(raw.get(key), str) or not raw[key].strip()
    ]
    assert not empty, f"empty register fields: {empty}"
    assert all(re.fullmatch(r"E-\d{3}", str(raw.get("id"))) for _, raw in rows)


SCENARIO_PATH = re.compile(r"scenarios/[\w./-]+\.yaml")


def test_every_scenario_file_an_entry_cites_exists():
    """Evidence that names a scenario file names one that is in the repository."""
    missing = [f"{e.id}: {path}" for e in ENTRIES for path in SCENARIO_PATH.findall(e.evidence)
               if not (ROOT / path).is_file()]
    assert missing == []


#: a pytest command an evidence names: its file and its -k expression
PYTEST_COMMAND = re.compile(r"pytest(?: -q)? (tests/[\w/]+\.py)(?: -k (\"[^\"]+\"|\S+))?")
#: what is left of an evidence once its commands are taken out is what it says it shows
COMMAND = re.compile(r"(?:\.venv/bin/)?(?:pytest|mqspec|python)\s[^;\n]*?(?=;|,\s|: |\s\(|\.\s|\.$|$|\s[A-Z][a-z]"
                     r"|\s(?:runs|shows|prints|exits|reports|lists|converges|and|with)\b)")


def functions_in(path: Path) -> set[str]:
    return {n.name for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name.startswith("test")}


def selected(expression: str, names: set[str]) -> list[str]:
    """The names pytest's ``-k`` would select: words are substrings, joined by and / or / not and brackets."""
    tokens = re.findall(r"\(|\)|[\w\[\]-]+", expression.strip('"'))

    def keeps(name: str) -> bool:
        code = " ".join(t if t in ("and", "or", "not", "(", ")") else str(t.lower() in name.lower()) for t in tokens)
        return bool(eval(code))  # noqa: S307 - the expression holds only True, False, and, or, not and brackets

    return sorted(n for n in names if keeps(n))


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.id)
def test_every_evidence_says_what_it_shows(entry):
    """An evidence is more than a command to run: with its commands taken out, it still says what they show."""
    flat = " ".join(entry.evidence.split())
    told = re.findall(r"[A-Za-z]{3,}", COMMAND.sub(" ", flat))
    assert len(told) >= 8, f"{entry.id}: {flat!r} does not say what it shows"


@pytest.mark.parametrize("entry", [e for e in ENTRIES if PYTEST_COMMAND.search(e.evidence)], ids=lambda e: e.id)
def test_every_pytest_command_of_an_evidence_selects_the_tests_it_names(entry):
    """Each pytest command's file exists and its -k selects a test; every test the evidence names exists there."""
    flat = " ".join(entry.evidence.split())
    names: set[str] = set()
    for path, expression in PYTEST_COMMAND.findall(flat):
        assert (ROOT / path).is_file(), f"{entry.id}: no {path}"
        found = functions_in(ROOT / path)
        assert not expression or selected(expression, found), f"{entry.id}: -k {expression} selects nothing in {path}"
        names |= found
    for path, name in re.findall(r"(tests/[\w/]+\.py)::(\w+)", flat):  # a test named by its id
        assert (ROOT / path).is_file() and name in functions_in(ROOT / path), f"{entry.id}: no {path}::{name}"
        names.add(name)
    cited = set(re.findall(r"\b(test_\w+?)\b(?!\.py)", flat)) - {Path(p).stem for p, _ in PYTEST_COMMAND.findall(flat)}
    assert cited <= names, f"{entry.id}: names tests its commands do not run: {sorted(cited - names)}"


# --- the literal text is the document's words ------------------------------------------------------------

#: the comment marker that starts each line of MS-MQDS's text (a Go binding's documentation of it): a
#: sentence wrapped over two comment lines is one sentence of the document
COMMENT = re.compile(r"(?<!\S)//(?=\s)")


def words_of(text: str) -> str:
    """A section's text as a quote gives it: comment markers dropped, whitespace flattened."""
    return " ".join(COMMENT.sub(" ", text).split())


#: each section's words as tools/extract_spec.py committed them, after its heading (a title is the
#: document's words too: E-250 quotes two), by document and section
SPEC_TEXT = {path.stem: {s["section"]: words_of(f"{s['section']} {s['title']}\n{s['text']}")
                         for s in json.loads(path.read_text())["sections"]}
             for path in sorted((ROOT / "docs" / "spec_text").glob("*.json"))}
#: documents register entries cite whose text is not extracted (only propid-types.md summarises them), so
#: their entries' literal text cannot be checked; a new document must be added to docs/spec_text or here
UNEXTRACTED = {"MS-MQMQ", "MS-MQQB"}
#: what a literal text may hold besides the document's words, and where it is cut: an elision, an editorial
#: insertion in square brackets ("[<6>]"; the document's own brackets, "[MS-MQQB]", "PropertyValue[ 1 ]", are
#: cut there too and go unchecked), the document's reference to a section ("(section 2.2.4)"), and mqspec's
#: citation before the words it quotes
ELISION = re.compile(r"\.\.\.|…")
INSERTION = re.compile(r"\[[^\]]*\]")
SECTIONS = r"\d+(?:\.\d+)*(?:(?:, | and )\d+(?:\.\d+)*)*"
REFERENCE = re.compile(rf"\(sections? {SECTIONS}\)")
#: "(3.1.7.2.11)", "(3.1.7.2.6, 3.1.7.2.8)", "(MS-MQCN 2.1)": the words after it, up to the next citation, are
#: in one of those sections; a citation without a document keeps the document of the one before it
CITATION = re.compile(rf"\((?:(?P<document>{'|'.join(map(re.escape, SPEC_TEXT))}) )?(?P<sections>{SECTIONS})\)")
CUT = re.compile("|".join(f"(?:{p.pattern})" for p in (ELISION, INSERTION, REFERENCE, CITATION)))
#: pieces shorter than 8 characters are not checked: what is left between two cuts at that length is an
#: index or a scrap of a step (" + 1" of "sn[i] + 1", " None." after a 1.9 row's [insertion], "- Else:"), found
#: in nearly every section, so finding it proves nothing; the shortest words a reading rests on ("iSync :=
#: false", "Scope Condition") are longer
SHORTEST_CHECKED = 8


class Misquote(NamedTuple):
    """A piece of a literal text that is not where it says it is: in none of ``document``'s sections, or (when a
    citation names ``cited``) only in others, ``found_in``."""

    fragment: str
    document: str
    cited: tuple[str, ...]
    found_in: tuple[str, ...]

    def __str__(self) -> str:
        if self.found_in:
            return (f"{self.fragment!r} is in {self.document} {', '.join(self.found_in)}, not in the cited "
                    f"{', '.join(self.cited)}: correct the citation before it")
        return (f"{self.fragment!r} is in no section of {self.document}: replace it with the section's exact words "
                f"(docs/spec_text/{self.document}.json), cut with ...")


def misquoted(document: str, section: str, literal: str) -> list[Misquote]:
    """The pieces of ``literal`` (between the cuts of CUT) of SHORTEST_CHECKED characters or more that are not
    words of their document: of a section cited before them, or else of ``section`` or any other section."""
    found, current, cited, start = [], document, (), 0
    for cut in [*CUT.finditer(literal), None]:
        fragment = " ".join(literal[start:cut.start() if cut else len(literal)].split())
        sections = SPEC_TEXT[current]
        wanted = cited or (section, *sections)  # the cited sections, or the entry's first and then any
        if len(fragment) >= SHORTEST_CHECKED and not any(fragment in sections.get(s, "") for s in wanted):
            found.append(Misquote(fragment, current, cited, tuple(s for s, text in sections.items()
                                                                  if cited and fragment in text)))
        if cut is not None and cut.group("sections"):
            current = cut.group("document") or current
            cited = tuple(re.split(r", | and ", cut.group("sections")))
        start = cut.end() if cut else start
    return found


#: what to do about a misquote, said once under the pieces it lists
HOW_TO_QUOTE = ("Quote the document's words as docs/spec_text/<document>.json has them (list dashes and table rows "
                "too), cut with ..., put editorial words in [brackets] and commentary in problem or resolution, and "
                "cite a section other than the entry's, \"(3.1.7.2.2)\", or another document's, \"(MS-MQCN 2.1)\", "
                "before its words.")
#: the entries whose literal text is checked: every entry whose document's text is extracted, none excused
EXTRACTED = [e for e in ENTRIES if e.document not in UNEXTRACTED]


def test_only_the_expected_documents_have_no_extracted_text():
    """The entries the literal-text check skips are exactly those citing MS-MQMQ or MS-MQQB: an entry citing a
    new document fails here until its text is extracted or the document is added to UNEXTRACTED."""
    assert {e.document for e in ENTRIES} - set(SPEC_TEXT) == UNEXTRACTED


@pytest.mark.parametrize("entry", EXTRACTED, ids=lambda e: e.id)
def test_the_literal_text_is_the_documents_words(entry):
    """The literal text is rendered as a quote of the document ("what the document says"), so every piece of it
    is the document's words: the cited section's, or another section's of the same document (MC-MQDSRP, MS-MQSD,
    MS-MQCN, MS-MQDS, as docs/spec_text has them). Entries citing MS-MQMQ or MS-MQQB, whose text mqspec does not
    have, are out of scope. (E-138 was withdrawn over what it said 3.3.7.11 says, which 3.3.7.11 does not.)"""
    wrong = misquoted(entry.document, entry.section, entry.literal)
    assert not wrong, (f"{entry.id} ({entry.document} {entry.section}): its literal text is not the document's "
                       "words:\n" + "".join(f"  {m}\n" for m in wrong) + HOW_TO_QUOTE)


def test_the_check_catches_a_paraphrase_and_a_wrong_citation():
    """The check can fail: on E-333's former paraphrase of 3.3.6.1, and on 3.3.6.1's words cited as 3.2.7.1's."""
    paraphrase = "When the Change Propagation Timer expires ... the QM MUST ... send a change propagation message"
    assert [m.fragment for m in misquoted("MC-MQDSRP", "3.3.6.1", paraphrase)] == [
        "When the Change Propagation Timer expires", "the QM MUST", "send a change propagation message"]
    words = "When the timer fires, the queue manager MUST perform the following actions ... - Raise a Send Change"
    assert misquoted("MC-MQDSRP", "3.3.6.1", words) == []
    (cited,) = misquoted("MC-MQDSRP", "3.3.6.1", "(3.2.7.1) When the timer fires, the queue manager MUST")
    assert cited.cited == ("3.2.7.1",) and "3.3.6.1" in cited.found_in and "correct the citation" in str(cited)
    assert misquoted("MC-MQDSRP", "2.1", "(MS-MQCN 2.1) Notifications are sent within messages ...") == []
    # cut at an insertion and an elision, the short pieces left ("Set x", "0x01") are not checked
    assert misquoted("MC-MQDSRP", "2.1", "Set x [mqspec's words] ... 0x01") == []
    # the Go binding's comment markers are not words
    assert words_of("see [MS-MQMQ]\n  // section 2.3") == "see [MS-MQMQ] section 2.3"
