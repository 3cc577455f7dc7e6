"""The docs' strictness: every errata id becomes a link, and an id left unlinked or unknown is a build warning."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from docutils import nodes
from docutils.frontend import get_default_settings
from docutils.parsers.rst import Parser
from docutils.utils import new_document

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "docs" / "_ext"))

import mqspec_evidence  # noqa: E402
import mqspec_links  # noqa: E402


def _app(outdir: Path | None = None) -> SimpleNamespace:
    builder = SimpleNamespace(get_relative_uri=lambda here, there: f"{there}.html", format="html")
    return SimpleNamespace(builder=builder, outdir=str(outdir or "."))


def _doctree(text: str) -> nodes.document:
    doc = new_document("<test>", get_default_settings(Parser))
    Parser().parse(text, doc)
    return doc


@pytest.fixture
def warnings(caplog):
    caplog.set_level(logging.WARNING)
    logging.getLogger("sphinx").propagate = True
    return caplog


def test_errata_ids_in_prose_and_literals_become_links(warnings):
    """E-100 in a paragraph, inline code and a code block each becomes a link to its register anchor."""
    doc = _doctree("See E-100.\n\nAlso ``# clarification E-101``.\n\n::\n\n    x = 1  # clarification E-102\n")
    mqspec_links.link_errata(_app(), doc, "spec/mc-mqdsrp/3.2.7.3")
    refs = [r["refuri"] for r in doc.findall(nodes.reference)]
    assert refs == ["register.html#e-100", "register.html#e-101", "register.html#e-102"]
    block = next(iter(doc.findall(nodes.literal_block)))
    assert block.rawsource != block.astext()  # written as a parsed literal, so the link survives
    assert not [r for r in warnings.records if r.levelno >= logging.WARNING]


def test_an_id_not_in_the_register_is_a_warning(warnings):
    """E-999 is not a register entry: it stays text and the build is warned (so -W fails)."""
    doc = _doctree("See E-999.\n")
    mqspec_links.link_errata(_app(), doc, "index")
    assert not list(doc.findall(nodes.reference))
    assert any("E-999 is not in the errata register" in r.getMessage() for r in warnings.records)


def test_the_end_of_an_id_block_links_to_the_register_table(warnings):
    """In "E-180 .. E-189" an end no entry has taken yet links to the register's table, without a warning."""
    doc = _doctree("The ids E-100 .. E-999 are this area's.\n")
    mqspec_links.link_errata(_app(), doc, "index")
    assert [r["refuri"] for r in doc.findall(nodes.reference)] == ["register.html#e-100",
                                                                    "register.html#register-table"]
    assert not warnings.records


def test_an_unlinked_id_in_a_written_page_is_a_warning(tmp_path, warnings):
    """A page whose main text shows an E-NNN outside a link fails the build's final check; a linked one passes."""
    (tmp_path / "ok.html").write_text('<article role="main"><a href="register.html#e-100">E-100</a></article>')
    (tmp_path / "bad.html").write_text('<article role="main"><p>see E-100 here</p></article>')
    mqspec_links.check_html(_app(tmp_path), None)
    messages = [r.getMessage() for r in warnings.records]
    assert len(messages) == 1 and messages[0].startswith("bad.html: E-100 is not a link")


def test_every_registered_clause_has_a_section_page():
    """Each clause of the registry has quoted text to stand on (the build warns on one that has not)."""
    assert mqspec_evidence.gather().orphan_clauses() == []


@pytest.mark.slow
def test_the_scenario_vectors_the_docs_count_are_the_ones_mqspec_vectors_writes():
    """The docs name the scenario cases without running them; running them gives the same case paths (minutes)."""
    from mqspec.vectors.writer import all_cases

    named = {v.case for vs in mqspec_evidence.load_vectors().values() for v in vs if v.kind == "scenario"}
    assert named == {c.path for c in all_cases(["scenario"])}
