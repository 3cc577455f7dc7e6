"""The site's navigation reads as a table of contents: no title twice in the sidebar, "Previous" a neighbour."""

from __future__ import annotations

import html
import re


def _sidebar_top(page: str) -> list[str]:
    """The sidebar's entries under its captions, first level only, as a reader sees them."""
    tree = page[page.index('class="sidebar-tree"'):]
    tree = tree[:tree.index("</div>")]
    return [html.unescape(re.sub(r"<[^>]+>", "", m)).strip()
            for m in re.findall(r'<li class="toctree-l1[^"]*"><a[^>]*>(.*?)</a>', tree, re.S)]


def _previous(page: str) -> str | None:
    m = re.search(r'<a class="prev-page" href="([^"]+)"', page)
    return m.group(1) if m else None


def test_no_title_appears_twice_in_the_sidebar(site):
    """Each first-level sidebar entry has its own title ("Scenario files" was both the language and the list)."""
    titles = _sidebar_top((site / "index.html").read_text(encoding="utf-8"))
    assert "Scenario files" in titles and "Scenarios that cover a section" in titles
    assert len(titles) == len(set(titles)), titles


def test_a_first_level_page_has_the_entry_before_it_as_previous(site):
    """The API's "Previous" is the entry listed before it, not the last test file's page; likewise the register's."""
    assert _previous((site / "api" / "index.html").read_text(encoding="utf-8")) == "../vocabulary.html"  # the Reference caption lists trace_format, schemas, vocabulary, then the API
    assert _previous((site / "register.html").read_text(encoding="utf-8")) == "spec/ms-mqds/index.html"
    assert _previous((site / "spec" / "ms-mqsd" / "index.html").read_text(encoding="utf-8")) == "../mc-mqdsrp/index.html"
