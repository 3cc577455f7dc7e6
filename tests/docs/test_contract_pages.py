"""The published contract in the built site: the trace format's specification, the schemas (as files beside
the pages, the same as a vectors tree's) and the vocabulary (issue 24, rows 1 to 4)."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from mqspec import json64
from mqspec.oracle.trace_format import EVENTS
from mqspec.vectors.schemas import schema_files, vocabulary


def _text(page: Path) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page.read_text(encoding="utf-8"))).split())


def test_the_trace_format_page_specifies_every_event_its_fields_versions_and_addresses(site: Path):
    """Every event kind has its section, every field of it a row; the page says the versions, the units, the
    64-bit form and the HOST:PORT / [IPV6]:PORT syntax."""
    text = _text(site / "trace_format.html")
    for kind, (fields, _) in EVENTS.items():
        assert f"{kind} ¶" in text or f"{kind}¶" in text, kind
        for name in fields:
            assert name in text, (kind, name)
    for phrase in ("format 3", "decimal string", "[IPV6]:PORT", "seconds", "Example"):
        assert phrase in text


def test_the_site_publishes_every_schema_a_vectors_tree_does(site: Path):
    """schemas/*.json beside the pages hold exactly what a vectors tree's schema files hold, and the schemas page
    links each."""
    for name, schema in schema_files().items():
        assert json.loads((site / "schemas" / name).read_text()) == json.loads(json64.dumps(schema)), name
    page = (site / "schemas.html").read_text(encoding="utf-8")
    assert all(f"schemas/{name}" in page for name in schema_files())
    assert "DirectoryServiceServerSize" in _text(site / "schemas.html")


def test_the_vocabulary_page_names_every_entry_and_what_it_rests_on(site: Path):
    """Each vocabulary entry is on the page, and each register entry it rests on is a link to the register."""
    page = (site / "vocabulary.html").read_text(encoding="utf-8")
    text = _text(site / "vocabulary.html")
    for entry in vocabulary()["entries"]:
        assert entry["name"] in text
        for mark in entry.get("rests_on", []):
            assert f'register.html#{mark["id"].lower()}"' in page, mark["id"]
