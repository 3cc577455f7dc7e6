"""The annotated spec read in a real browser: headless Chromium over the built site on 127.0.0.1."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from mqspec import clauses
from mqspec.errata import load

#: the pages the issue names: each must show the text, the code, its register entries and its evidence
DONE_WHEN = (
    ("MC-MQDSRP", "3.2.7.3"),
    ("MC-MQDSRP", "3.1.7.2.9"),
    ("MC-MQDSRP", "3.2.7.1"),
    ("MS-MQSD", "3.2.5.1"),
    ("MS-MQCN", "3.2.5.1"),
)
DESKTOP = (1366, 900)
WIDE = (1400, 900)
NARROW = (390, 844)


def _url(server: str, document: str, section: str) -> str:
    return f"{server}/spec/{document.lower()}/{section}.html"


def _wait(browser, script: str, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = browser.execute_script(script)
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for: {script}")


def _shot(browser, screenshots: Path, name: str, selector: str | None = None) -> None:
    if selector:
        browser.execute_script("document.documentElement.style.scrollBehavior = 'auto';"
                               f"document.querySelector({selector!r})?.scrollIntoView({{block: 'start'}})")
    browser.save_screenshot(str(screenshots / f"{name}.png"))


@pytest.mark.parametrize(("document", "section"), DONE_WHEN)
def test_section_page_shows_text_code_entries_and_evidence(browser, server, screenshots, document, section):
    """A section page quotes the text, shows the registered code and every register entry for it (linked), and
    counts the tests that cover it."""
    browser.set_window_size(*DESKTOP)
    browser.get(_url(server, document, section))
    assert browser.title.startswith(f"{document} {section} "), browser.title
    quote = browser.execute_script("return document.querySelector('.spec-quote pre')?.innerText || ''")
    assert len(quote) > 200
    clause = next((c for c in clauses.load_all() if (c.document, c.section) == (document, section)), None)
    assert clause is not None, f"{document} {section} has no registered code"
    code = browser.execute_script("return document.querySelector('.mqspec-code pre')?.innerText || ''")
    assert f'"{section}"' in code
    expected = sorted(e.id for e in load() if (e.document, e.section) == (document, section))
    shown = browser.execute_script(
        "return Array.from(document.querySelectorAll('.erratum-head a')).map(a => [a.innerText, a.href])")
    assert sorted(t for t, _ in shown) == expected
    assert all(re.search(r"/register\.html#e-\d{3}$", href) for _, href in shown)
    tests = clauses.test_references().get((document, section), [])
    rubrics = browser.execute_script(
        "return Array.from(document.querySelectorAll('article section > h2')).map(h => h.firstChild.textContent)")
    assert f"Tests ({len(tests)})" in rubrics
    linked = browser.execute_script(
        "return document.querySelectorAll('ul.tests-list > li a[href*=\"/evidence/tests/\"]').length")
    assert linked == len(tests)
    assert any(r.startswith("Test vectors (") for r in rubrics)
    assert any(r.startswith("Proof obligations (") for r in rubrics)
    name = f"{document}-{section}"
    _shot(browser, screenshots, f"{name}-1-top")
    _shot(browser, screenshots, f"{name}-2-code", ".mqspec-code")
    _shot(browser, screenshots, f"{name}-3-errata", ".erratum")
    _shot(browser, screenshots, f"{name}-4-evidence", "#tests")


def test_an_errata_link_leads_to_its_register_entry(browser, server):
    """Following an entry's link from a section page lands on that entry of the register, in view."""
    browser.set_window_size(*DESKTOP)
    browser.get(_url(server, "MC-MQDSRP", "3.2.7.3"))
    link = browser.find_element("css selector", ".erratum-head a")
    ident = link.text
    browser.execute_script("document.documentElement.style.scrollBehavior = 'auto';"
                           "arguments[0].scrollIntoView({block: 'center'})", link)
    link.click()
    _wait(browser, "return location.pathname.endsWith('/register.html')")
    assert browser.current_url.endswith(f"#{ident.lower()}")
    _wait(browser, f"const t = document.getElementById('{ident.lower()}').getBoundingClientRect().top;"
                   f"return t >= 0 && t < {DESKTOP[1]}")
    heading = browser.execute_script(f"return document.getElementById('{ident.lower()}').querySelector('h2').innerText")
    assert heading.startswith(ident)


@pytest.mark.parametrize(("query", "target"), [("3.2.7.3", "spec/mc-mqdsrp/3.2.7.3.html"),
                                               ("E-130", "register.html#e-130")])
def test_search_finds_section_numbers_and_errata_ids(browser, server, screenshots, query, target):
    """Searching a section number leads to its page first; an errata id to its register entry."""
    browser.set_window_size(*DESKTOP)
    browser.get(f"{server}/search.html?q={query}")
    first = _wait(browser, "const a = document.querySelector('#search-results ul.search li a'); return a && a.href")
    assert first.endswith(target) or first.split("#")[0].endswith(target), first
    _shot(browser, screenshots, f"search-{query}")


PAGES = ("index.html", "spec/mc-mqdsrp/3.2.7.3.html", "spec/mc-mqdsrp/index.html", "register.html",
         "api/codecs.html", "spec/ms-mqcn/3.2.5.1.html", "spec/mc-mqdsrp/3.1.7.2.2.html", "spec/ms-mqsd/3.1.5.2.html",
         "api/oracle.html")


#: what a page overflows by: text blocks wider than the main column (outside any box that scrolls on its own),
#: quoted text, commands and code that do not wrap (furo's thin scrollbar hides a cut-off line's end), and the
#: page's width beyond the window
OVERFLOW = """
const m = document.querySelector('article[role=main]');
const right = m.getBoundingClientRect().right;
const scrolls = (e) => { for (let p = e.parentElement; p && p !== m; p = p.parentElement) {
  const o = getComputedStyle(p).overflowX; if (o === 'auto' || o === 'scroll') return true; } return false; };
const name = (e) => e.tagName + '.' + e.className + ': ' + (e.innerText || '').slice(0, 60);
const wide = Array.from(m.querySelectorAll('p, li, pre, table, dl, .erratum, .spec-quote'))
  .filter((e) => !scrolls(e) && e.getBoundingClientRect().right > right + 1).map(name);
const unwrapped = Array.from(m.querySelectorAll('pre'))
  .filter((e) => e.scrollWidth > e.clientWidth + 1).map(name);
const page = document.documentElement.scrollWidth > window.innerWidth + 1 ? [document.documentElement.scrollWidth] : [];
return [wide, unwrapped, page];
"""


@pytest.mark.parametrize("size", [DESKTOP, WIDE, NARROW], ids=["desktop", "wide", "narrow"])
def test_main_text_does_not_overflow_horizontally(browser, server, screenshots, size):
    """At desktop widths and a phone's, no page's text runs past its column and quoted text, commands and code wrap."""
    browser.set_window_size(*size)
    for page in PAGES:
        browser.get(f"{server}/{page}")
        assert browser.execute_script(OVERFLOW) == [[], [], []], page
        _shot(browser, screenshots, f"{size[0]}-{page.replace('/', '_').removesuffix('.html')}")


def test_the_register_table_filters_by_kind_document_and_section(browser, server):
    """Choosing a kind and typing a section prefix leaves only the register rows that match both."""
    browser.set_window_size(*DESKTOP)
    browser.get(f"{server}/register.html")
    expected = [e.id for e in load() if e.kind == "erratum" and (e.section + ".").startswith("3.2.7.")]
    browser.execute_script(
        "const f = document.querySelector('form.register-filter');"
        "f.querySelector('[data-filter=kind]').value = 'erratum';"
        "const s = f.querySelector('[data-filter=section]'); s.value = '3.2.7';"
        "s.dispatchEvent(new Event('input', {bubbles: true}));")
    shown = browser.execute_script(
        "return Array.from(document.querySelectorAll('table.register-table tbody tr:not(.hidden) td:first-child'))"
        ".map(td => td.innerText)")
    assert shown == expected and expected
