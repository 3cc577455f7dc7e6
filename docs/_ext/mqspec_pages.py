"""One page per section of MC-MQDSRP, MS-MQSD, MS-MQCN (and the MS-MQDS structures mqspec implements).

At ``builder-inited`` this writes the reST sources of ``docs/spec/`` (``spec/<document>/index``,
``spec/<document>/<section>``) and ``docs/evidence/`` (the obligations page, one page per scenario
file) from the registries; they are build products, not committed. Each section page holds
``.. mqspec-section::``: the navigation, the quoted text, the reference code with its ``E-NNN``
linked, every register entry for the section, and the tests, vectors, obligations and scenarios
that cover it. A document page holds ``.. mqspec-document::``: its section tree with the counts.
A registered clause without a section page is a build warning (so ``-W`` fails on it).
"""

from __future__ import annotations

import html
import re
from collections import Counter
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.parsers.rst import Directive
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer
from sphinx import addnodes
from sphinx.util import logging

import mqspec_evidence as mev
from mqspec_register import (
    _join,
    bullets,
    command_block,
    doc_link,
    erratum_block,
    evidence,
    obligation_anchor,
    para,
    quote_block,
    rubric,
    section_link,
)

logger = logging.getLogger(__name__)

GENERATED = ("spec", "evidence")


def _rst_escape(text: str) -> str:
    return re.sub(r"([\\`*_|\[\]<>])", r"\\\1", text)


def _page(title: str, body: str, children: list[str] = ()) -> str:
    """A reST page; ``children`` are toctree entries (``docname`` or ``Title <docname>``)."""
    title = _rst_escape(title)
    out = f"{title}\n{'=' * len(title)}\n\n{body}\n"
    if children:
        out += "\n.. toctree::\n   :hidden:\n\n" + "".join(f"   {c}\n" for c in children)
    return out


def _entry(s: mev.Section) -> str:
    """A sidebar entry without the document's name (the sidebar already shows which document it is in)."""
    title = re.sub(r"([<>`])", r"\\\1", f"{s.section} {s.title}")
    return f"{title} <{s.section}>"


def generate(srcdir: Path, ev: mev.Evidence) -> None:
    """Write the generated reST sources (only the files whose text changes), and remove stale ones."""
    files: dict[Path, str] = {}
    spec = srcdir / "spec"
    for document, sections in ev.sections.items():
        folder = spec / document.lower()
        tops = [_entry(s) for s in sections if s.parent is None or (document, s.parent) not in ev.by_key]
        files[folder / "index.rst"] = _page(document, f".. mqspec-document:: {document}\n", tops)
        for s in sections:
            files[folder / f"{s.section}.rst"] = _page(
                s.heading, f".. mqspec-section:: {document} {s.section}\n", [_entry(c) for c in ev.children(s)])
    evid = srcdir / "evidence"
    files[evid / "obligations.rst"] = _page(
        "Proof obligations and their results",
        "Every obligation ``mqspec prove`` checks, per mode (``unknown`` is never ``proved``), with its kind and "
        "the servers it covers: ``one`` (the per-server model), ``any`` (the enterprise model, for every number of "
        "servers) or a bounded run's number. A ``trivial`` obligation holds without its transition and a "
        "``vacuous`` one under contradictory assumptions: neither is counted as proved work. Consecution "
        "obligations belong to their handler's section, the 2.2.2 lemmas to MC-MQDSRP 2.2.2, initiation to "
        "3.1.3.1 and bounded model checking to chapter 3.\n\n.. mqspec-obligations::\n")
    files[evid / "scenarios" / "index.rst"] = _page(
        "Scenarios that cover a section", "Every scenario file in ``scenarios/``: the section 4 examples, the counterexamples of the "
        "register and of the proof obligations, and the literal-mode hunts.", [Path(s.page).name for s in ev.all_scenarios])
    for sc in ev.all_scenarios:
        files[srcdir / f"{sc.page}.rst"] = _page(sc.path, f".. mqspec-scenario:: {sc.path}\n")
    pages = {path: tests[0].page for path, tests in ev.test_files.items()}
    files[evid / "tests" / "index.rst"] = _page(
        "Tests that cover a section", "Every test that names a section with ``covers(document, section)``, by file.",
        [Path(p).name for p in pages.values()])
    for path, page in pages.items():
        files[srcdir / f"{page}.rst"] = _page(path, f".. mqspec-tests:: {path}\n")
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    for top in GENERATED:
        for path in (srcdir / top).rglob("*.rst"):
            if path not in files:
                path.unlink()


# --- a section page -----------------------------------------------------------------------------------------


def _link_ids(text: str, register_uri: str) -> str:
    """HTML with every E-NNN made a link to its register entry."""
    return mev.ERRATUM_ID.sub(
        lambda m: f'<a class="reference internal erratum-ref" href="{register_uri}#{mev.erratum_anchor(m.group(0))}">'
                  f"{m.group(0)}</a>", text)


_FORMATTER = HtmlFormatter(nowrap=True)


def _code_html(source: str, register_uri: str) -> str:
    body = _link_ids(highlight(source, PythonLexer(), _FORMATTER), register_uri)
    return f'<div class="highlight-python notranslate mqspec-code"><div class="highlight"><pre>{body}</pre></div></div>'


class SectionDirective(Directive):
    required_arguments = 2
    has_content = False

    def run(self):
        env = self.state.document.settings.env
        ev = evidence()
        key = (self.arguments[0], self.arguments[1])
        s = ev.by_key[key]
        target = f"section-{s.document.lower()}-{s.section.replace('.', '-')}"
        out: list[nodes.Node] = [
            nodes.target("", "", ids=[target]),
            addnodes.index(entries=[("single", s.section, target, "main", None),
                                    ("single", f"{s.document} {s.section}", target, "", None)]),
            self._nav(ev, s),
        ]
        out += self._text(s)
        out += self._code(env, ev, key)
        out += self._errata(ev, key)
        out += self._evidence(ev, key)
        children = ev.children(s)
        if children:
            out.append(rubric("Subsections"))
            out.append(bullets([para(section_link(c.document, c.section, f"{c.section} {c.title}"),
                                     f" ({_counts_text(ev.counts(c.key))})") for c in children]))
        return _parts(out)

    def _nav(self, ev: mev.Evidence, s: mev.Section) -> nodes.Node:
        secs = ev.sections[s.document]
        i = secs.index(s)
        box = nodes.container(classes=["section-nav"])
        line = para(classes=("section-nav-links",))
        if i > 0:
            line += [nodes.Text("← "), section_link(s.document, secs[i - 1].section,
                                                   f"{secs[i - 1].section} {secs[i - 1].title}"), nodes.Text(" · ")]
        line += doc_link(f"spec/{s.document.lower()}/index", f"{s.document} contents")
        if s.parent and (s.document, s.parent) in ev.by_key:
            line += [nodes.Text(" · up: "), section_link(s.document, s.parent)]
        if i + 1 < len(secs):
            line += [nodes.Text(" · "), section_link(s.document, secs[i + 1].section,
                                                    f"{secs[i + 1].section} {secs[i + 1].title}"), nodes.Text(" →")]
        box += line
        official = para(classes=("section-official",))
        official += nodes.Text(f"In the official document: [{s.document}] section {s.section}, ")
        official += nodes.reference("", mev.OFFICIAL[s.document], refuri=mev.OFFICIAL[s.document])
        official += nodes.Text(f"; here quoted from {s.source}, lines {s.lines[0]}–{s.lines[1]}.")
        box += official
        box += para(_counts_text(ev.counts(s.key)) + (", reference code" if s.key in ev.clauses else ", no code"),
                    classes=("section-counts",))
        return box

    def _text(self, s: mev.Section) -> list[nodes.Node]:
        out: list[nodes.Node] = [rubric("The text")]
        if s.text.strip():
            out.append(quote_block(s.text))
        else:
            out.append(para("This section has no text of its own; see its subsections.", classes=("none",)))
        return out

    def _code(self, env: Any, ev: mev.Evidence, key: mev.Key) -> list[nodes.Node]:
        out: list[nodes.Node] = [rubric("The reference code")]
        clause = ev.clauses.get(key)
        if clause is None:
            out.append(para("No code is registered for this section (no ", nodes.literal(text="@clause"), ").",
                            classes=("none",)))
            return out
        code = mev.clause_code(clause["code"])
        target = f"{code.module}.{code.qualname}"
        xref = addnodes.pending_xref("", refdomain="py", reftype="obj", reftarget=target, refexplicit=True)
        xref += nodes.literal(text=target)
        out.append(para(xref, f" in {code.path}, lines {code.first}–{code.last}"))
        register_uri = env.app.builder.get_relative_uri(env.docname, "register")
        out.append(nodes.raw("", _code_html(code.source, register_uri), format="html"))
        return out

    def _errata(self, ev: mev.Evidence, key: mev.Key) -> list[nodes.Node]:
        entries = ev.errata_by_key.get(key, [])
        out: list[nodes.Node] = [rubric(f"Register entries ({len(entries)})")]
        if not entries:
            out.append(para("The register has no entry for this section.", classes=("none",)))
        out += [erratum_block(e, on_register=False) for e in entries]
        return out

    def _evidence(self, ev: mev.Evidence, key: mev.Key) -> list[nodes.Node]:
        out: list[nodes.Node] = []
        tests = ev.tests.get(key, [])
        out.append(rubric(f"Tests ({len(tests)})"))
        if tests:
            listing = bullets([para(doc_link(t.page, t.id, anchor=t.anchor), " — " + t.doc if t.doc else "")
                               for t in tests])
            listing["classes"].append("tests-list")
            out.append(listing)
            files = sorted({t.id.split("::")[0] for t in tests})
            names = " or ".join(sorted({t.id.rsplit("::", 1)[-1] for t in tests}))
            out.append(command_block(f".venv/bin/pytest -q {' '.join(files)} -k '{names}'"))
        else:
            out.append(para("No test names this section with covers().", classes=("none",)))
        vectors = ev.vectors.get(key, [])
        out.append(rubric(f"Test vectors ({len(vectors)})"))
        if vectors:
            kinds = {k: sum(1 for v in vectors if v.kind == k) for k in ("codec", "handler", "scenario")}
            out.append(para(", ".join(f"{n} {k}" for k, n in kinds.items() if n) + " case(s) in the tree "
                            "mqspec vectors writes: ", *_join([nodes.literal(text=v.case) for v in vectors])))
            out.append(command_block(".venv/bin/mqspec vectors --out vectors/"))
        else:
            out.append(para("No vector case names this section.", classes=("none",)))
        obligations = ev.obligations.get(key, [])
        out.append(rubric(f"Proof obligations ({len(obligations)})"))
        if obligations:
            groups = Counter((ob.kind, ob.servers) for ob in obligations)
            out.append(para("By kind and servers (one: the per-server model; any: the enterprise model, every number "
                            "of servers; a number: a bounded run): " + "; ".join(
                                f"{kind}, servers {servers}: {n}" for (kind, servers), n in sorted(groups.items()))
                            + "."))
            out.append(self._obligations_table(sorted(obligations, key=lambda ob: (ob.kind, ob.servers))))
            out.append(para("Results from ", nodes.literal(text=ev.results_made_by), "."))
        else:
            out.append(para("No proof obligation belongs to this section.", classes=("none",)))
        scenarios = ev.scenarios.get(key, [])
        out.append(rubric(f"Scenarios ({len(scenarios)})"))
        if scenarios:
            out.append(bullets([para(doc_link(sc.page, sc.path)) for sc in scenarios]))
        else:
            out.append(para("No scenario file is evidence for this section.", classes=("none",)))
        return out

    def _obligations_table(self, obligations: list[mev.Obligation]) -> nodes.Node:
        rows = []
        for ob in obligations:
            rows.append([doc_link("evidence/obligations", ob.name, anchor=obligation_anchor(ob.name)),
                         nodes.Text(ob.kind), nodes.Text(ob.servers), *(nodes.Text(st) for st in ob.status.values())])
        return _table(["obligation", "kind", "servers", "clarified", "literal"], rows, "obligations-table")


class TestsDirective(Directive):
    """The tests of one file that cover a section: each under its own anchor, with its docstring, the sections it
    covers, the command that runs it, and its source. Written as one HTML block: 800 tests as docutils sections
    cost the build a quarter of its time."""

    required_arguments = 1
    has_content = False

    def run(self):
        from mqspec_register import add_label

        env = self.state.document.settings.env
        ev = evidence()
        path = self.arguments[0]
        uri = env.app.builder.get_relative_uri
        covered: dict[str, list[mev.Key]] = {}
        for key, tests in ev.tests.items():
            for t in tests:
                if t.path == path:
                    covered.setdefault(t.id, []).append(key)
        register_uri = uri(env.docname, "register")
        parts = []
        for t in ev.test_files[path]:
            add_label(env, t.anchor, t.name)
            keys = sorted(covered.get(t.id, []), key=lambda k: (k[0], mev.section_key(k[1])))
            links = ", ".join(f'<a class="reference internal" href="{uri(env.docname, mev.page_name(*k))}">'
                              f"{html.escape(k[0])} {html.escape(k[1])}</a>" if k in ev.by_key
                              else html.escape(f"{k[0]} {k[1]}") for k in keys)
            command = html.escape(f".venv/bin/pytest -q '{t.id}'")
            parts.append(
                f'<section class="test-entry" id="{t.anchor}"><h3>{html.escape(t.name)}</h3>'
                + (f"<p>{_link_ids(html.escape(t.doc), register_uri)}</p>" if t.doc else "")
                + f"<p>Covers {links}.</p>"
                f'<div class="mqspec-command"><div class="highlight"><pre>{command}</pre></div></div>'
                + _code_html(t.source, register_uri) + "</section>")
        return [para("Run the file: "), command_block(f".venv/bin/pytest -q {path}"),
                nodes.raw("", "".join(parts), format="html")]


def _parts(items: list[nodes.Node]) -> list[nodes.Node]:
    """Each top-level rubric becomes a section heading over what follows it, so the page's table of contents
    (furo's sticky right-hand column) lists the text, the code, the entries and each kind of evidence."""
    out: list[nodes.Node] = []
    current: nodes.section | None = None
    for item in items:
        if isinstance(item, nodes.rubric):
            title = item.astext()
            slug = re.sub(r"[^a-z0-9]+", "-", re.sub(r"\s*\(\d+\)$", "", title).lower()).strip("-")
            current = nodes.section(ids=[slug], names=[slug])
            current += nodes.title(text=title)
            out.append(current)
        elif current is not None:
            current += item
        else:
            out.append(item)
    return out


def _counts_text(c: dict[str, int]) -> str:
    return ", ".join(f"{n} {k}" for k, n in c.items()) if any(c.values()) else "no errata, tests, vectors, " \
        "obligations or scenarios"


def _table(header: list[str], rows: list[list[nodes.Node]], cls: str) -> nodes.Node:
    table = nodes.table(classes=[cls])
    group = nodes.tgroup(cols=len(header))
    table += group
    for _ in header:
        group += nodes.colspec(colwidth=1)
    head = nodes.thead()
    group += head
    body = nodes.tbody()
    group += body

    def row(cells: list[nodes.Node]) -> nodes.row:
        r = nodes.row()
        for c in cells:
            entry = nodes.entry()
            entry += para(c)
            r += entry
        return r

    head += row([nodes.Text(h) for h in header])
    for cells in rows:
        body += row(cells)
    return table


# --- a document page ----------------------------------------------------------------------------------------


class DocumentDirective(Directive):
    required_arguments = 1
    has_content = False

    def run(self):
        ev = evidence()
        document = self.arguments[0]
        sections = ev.sections[document]
        total = {k: sum(ev.counts(s.key)[k] for s in sections) for k in ("errata", "tests", "vectors", "obligations")}
        out: list[nodes.Node] = [para(
            f"{len(sections)} sections; {sum(1 for s in sections if s.key in ev.clauses)} with reference code; "
            + ", ".join(f"{n} {k}" for k, n in total.items()) + ". Official document: ",
            nodes.reference("", mev.OFFICIAL[document], refuri=mev.OFFICIAL[document]), ".")]
        rows = []
        for s in sections:
            c = ev.counts(s.key)
            depth = s.section.count(".")
            cell = nodes.inline(classes=[f"depth-{depth}"])
            cell += section_link(document, s.section, s.section)
            rows.append([cell, nodes.Text(s.title), nodes.Text("yes" if s.key in ev.clauses else "–"),
                         *(nodes.Text(str(c[k]) if c[k] else "–") for k in ("errata", "tests", "vectors", "obligations"))])
        out.append(_table(["section", "title", "code", "errata", "tests", "vectors", "obligations"], rows,
                          "section-tree"))
        return out


# --- wiring ------------------------------------------------------------------------------------------------


def on_builder_inited(app: Any) -> None:
    ev = evidence()
    for document, section in ev.orphan_clauses():
        logger.warning(f"registered clause {document} {section} ({ev.clauses[(document, section)]['code']}) has no "
                       "section page: its text is not in docs/spec_text (run tools/extract_spec.py)",
                       type="mqspec", subtype="clause")
    generate(Path(app.srcdir), ev)


def _collapsed_navigation_tree(context: dict[str, Any]) -> str:
    """furo's sidebar with only the current page's branch expanded: furo expands the whole tree on every page,
    which for ~280 section pages makes every page carry (and the build render) all of them."""
    from furo.navigation import get_navigation_tree

    if "toctree" not in context:
        return ""
    return get_navigation_tree(context["toctree"](collapse=True, titles_only=True, maxdepth=-1, includehidden=True))


def always_outdated(app: Any, env: Any, added: set[str], changed: set[str], removed: set[str]) -> list[str]:
    """The pages built from the registries are read again on every build: their sources rarely change, their
    data (register, tests, vectors, obligations) often does, and Sphinx cannot see that."""
    return sorted(d for d in env.found_docs if d.startswith(("spec/", "evidence/")) or d in ("register", "api/names"))


def previous_chapter(app: Any, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    """A page the home page lists (a document's contents, the register, the API) has as "Previous" the page
    listed before it, not the last page of that one's tree (the API's would be a test file's page)."""
    env = app.builder.env
    top = env.toctree_includes.get(env.config.root_doc, [])
    if pagename not in top or top.index(pagename) == 0:
        return
    before = top[top.index(pagename) - 1]
    context["prev"] = {"link": app.builder.get_relative_uri(pagename, before),
                       "title": html.escape(env.titles[before].astext())}


def setup(app):
    import furo

    app.connect("html-page-context", previous_chapter)
    app.connect("env-get-outdated", always_outdated)
    furo._compute_navigation_tree = _collapsed_navigation_tree
    app.connect("builder-inited", on_builder_inited)
    app.add_directive("mqspec-section", SectionDirective)
    app.add_directive("mqspec-document", DocumentDirective)
    app.add_directive("mqspec-tests", TestsDirective)
    return {"parallel_read_safe": True, "version": "1"}
