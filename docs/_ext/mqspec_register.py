"""The errata register as a reference, and the pieces every generated page shares.

``.. mqspec-register::`` renders a compact table (filterable by kind, document and section, see
``_static/mqspec.js``) and then every entry under its own anchor (``register.html#e-012``).
:func:`erratum_block` renders one entry (kind, the literal text, the problem, the evidence as
prose plus runnable commands and links, the resolution); section pages use it for their entries.
``.. mqspec-obligations::`` lists every proof obligation with its results, one anchor each,
``.. mqspec-enterprise-invariants::`` states the enterprise model's invariants (formula and words) and its
assumptions, and ``.. mqspec-scenario:: PATH`` shows one scenario file.
"""

from __future__ import annotations

import functools
import html
import re
from typing import Any

from docutils import nodes
from docutils.parsers.rst import Directive
from sphinx import addnodes

import mqspec_evidence as mev

_EVIDENCE: mev.Evidence | None = None


def evidence() -> mev.Evidence:
    """The registries, read once per build process."""
    global _EVIDENCE
    if _EVIDENCE is None:
        _EVIDENCE = mev.gather()
    return _EVIDENCE


# --- small node builders ---------------------------------------------------------------------------------


def doc_link(docname: str, text: str, anchor: str = "") -> nodes.Node:
    """A link to another page, or to an anchor :func:`add_label` registered (resolved by the std domain, and
    warned about when the target is missing)."""
    if anchor:
        ref = addnodes.pending_xref("", refdomain="std", reftype="ref", reftarget=anchor, refexplicit=True,
                                    refwarn=True)
    else:
        ref = addnodes.pending_xref("", refdomain="std", reftype="doc", reftarget="/" + docname, refexplicit=True,
                                    refwarn=True)
    ref += nodes.inline(text=text)
    return ref


def add_label(env: Any, anchor: str, title: str) -> None:
    """Make ``anchor`` on the current page a target of :func:`doc_link` (``anchor`` is lower case)."""
    std = env.get_domain("std")
    std.anonlabels[anchor] = (env.docname, anchor)
    std.labels[anchor] = (env.docname, anchor, title)


def section_link(document: str, section: str, text: str | None = None) -> nodes.Node:
    ev = evidence()
    if (document, section) not in ev.by_key:
        return nodes.Text(text or f"{document} {section}")
    return doc_link(mev.page_name(document, section), text or f"{document} {section}")


def command_block(command: str) -> nodes.Node:
    """A command a reader can copy (wrapped, copy button)."""
    box = nodes.container(classes=["mqspec-command"])
    block = nodes.literal_block(command, command)
    block["language"] = "shell"
    box += block
    return box


def quote_block(text: str, classes: tuple[str, ...] = ("spec-quote",)) -> nodes.Node:
    """Quoted specification text: wrapped, not highlighted."""
    box = nodes.container(classes=list(classes))
    block = nodes.literal_block(text, text)
    block["language"] = "text"
    box += block
    return box


def para(*children: nodes.Node | str, classes: tuple[str, ...] = ()) -> nodes.paragraph:
    p = nodes.paragraph(classes=list(classes))
    for c in children:
        p += nodes.Text(c) if isinstance(c, str) else c
    return p


def rubric(text: str) -> nodes.rubric:
    return nodes.rubric(text=text)


def bullets(items: list[nodes.Node]) -> nodes.bullet_list:
    lst = nodes.bullet_list()
    for item in items:
        li = nodes.list_item()
        li += item if isinstance(item, nodes.Element) and not isinstance(item, nodes.Inline) else para(item)
        lst += li
    return lst


# --- evidence text: prose, links and commands --------------------------------------------------------------

_SCENARIO = re.compile(r"scenarios/[\w./-]+?\.yaml")
_TEST_ID = re.compile(r"tests/[\w/]+\.py::\w+")
_COMMAND = re.compile(
    r"(?:\.venv/bin/)?(?:python -c \"[^\"]*\"|python -c '[^']*'"
    r"|(?:pytest|mqspec|python -m [\w.]+|python (?:bench|tools)/[\w./]+)\s[^;\n]*?)"
    r"(?=\s*(?:;|,\s|: |\s\(|\.\s|\.$|$|\sprints\b|\sexits\b|\sshows\b|\slists\b|\sreports\b|\sruns\b|\sand\s))")


def evidence_commands(text: str) -> list[str]:
    """The runnable commands an evidence text names: its commands, and a pytest command per test id."""
    flat = re.sub(r"\s*\n\s*", " ", text)
    out: list[str] = []
    for m in _COMMAND.finditer(flat):
        cmd = m.group(0).strip().rstrip(".,")
        if cmd.count('"') % 2 or cmd.count("'") % 2:
            continue
        out.append(cmd)
    joined = " ".join(out)
    for test in _TEST_ID.findall(flat):
        if test not in joined:
            out.append(f".venv/bin/pytest -q '{test}'")
    for path in _SCENARIO.findall(flat):
        cmd = f".venv/bin/mqspec scenario run {path} --mode literal"
        if path not in joined and cmd not in out:
            out.append(cmd)
    return list(dict.fromkeys(out))


@functools.cache
def _link_targets() -> dict[str, tuple[str, str]]:
    """Scenario path or test id -> (its page, its anchor)."""
    ev = evidence()
    targets: dict[str, tuple[str, str]] = {s.path: (s.page, "") for s in ev.all_scenarios}
    targets.update({t.id: (t.page, t.anchor) for tests in ev.test_files.values() for t in tests})
    return targets


def linked_text(text: str) -> list[nodes.Node]:
    """Prose with scenario paths and test ids linked to their pages (E-NNN are linked later, everywhere, by
    mqspec_links)."""
    targets = _link_targets()
    out: list[nodes.Node] = []
    pos = 0
    for m in re.finditer(f"{_SCENARIO.pattern}|{_TEST_ID.pattern}", text):
        if m.group(0) not in targets:
            continue
        page, anchor = targets[m.group(0)]
        out.append(nodes.Text(text[pos:m.start()]))
        out.append(doc_link(page, m.group(0), anchor=anchor))
        pos = m.end()
    out.append(nodes.Text(text[pos:]))
    return out


def prose(text: str) -> nodes.paragraph:
    return para(*linked_text(re.sub(r"\s*\n\s*", " ", text.strip())))


def erratum_block(e: Any, *, on_register: bool) -> nodes.Element:
    """One register entry: its heading (a link to the register, or on the register the section page), kind,
    literal text, problem, evidence (prose, links, commands) and resolution."""
    box = nodes.container(classes=["erratum", f"erratum-{e.kind}"])
    head = para(classes=("erratum-head",))
    if on_register:
        head += nodes.strong(text=e.title)
        head += nodes.Text(" — ")
        head += section_link(e.document, e.section)
    else:
        head += doc_link("register", e.id, anchor=mev.erratum_anchor(e.id))
        head += nodes.Text(" ")
        head += nodes.strong(text=e.title)
    head += nodes.Text(" ")
    head += nodes.inline(text=e.kind, classes=["erratum-kind", f"kind-{e.kind}"])
    box += head
    box += rubric("Literal text (what the document says; mqspec's literal mode)")
    box += quote_block(e.literal)
    box += rubric("Problem")
    box += prose(e.problem)
    box += rubric("Evidence")
    commands = evidence_commands(e.evidence)
    if commands != [" ".join(e.evidence.split())]:  # prose, not just the one command shown below
        box += prose(e.evidence)
    if commands:
        box += bullets([command_block(c) for c in commands])
    box += rubric("Resolution (what mqspec implements; its clarified mode)")
    box += prose(e.resolution)
    return box


# --- the register page --------------------------------------------------------------------------------------


class RegisterDirective(Directive):
    has_content = False

    def run(self):
        env = self.state.document.settings.env
        ev = evidence()
        out: list[nodes.Node] = [self._table(env, ev)]
        for e in ev.errata:
            sec = nodes.section(ids=[mev.erratum_anchor(e.id)], names=[e.id.lower()])
            sec += nodes.title(text=f"{e.id}: {e.title}")
            sec += addnodes.index(entries=[("single", e.id, mev.erratum_anchor(e.id), "main", None)])
            add_label(env, mev.erratum_anchor(e.id), f"{e.id}: {e.title}")
            sec += erratum_block(e, on_register=True)
            out.append(sec)
        return out

    def _table(self, env: Any, ev: mev.Evidence) -> nodes.raw:
        uri = env.app.builder.get_relative_uri
        here = env.docname
        kinds = sorted({e.kind for e in ev.errata})
        docs = sorted({e.document for e in ev.errata})
        opts = lambda vals: "".join(f'<option value="{html.escape(v)}">{html.escape(v)}</option>' for v in vals)  # noqa: E731
        rows = []
        for e in ev.errata:
            key = (e.document, e.section)
            sec = html.escape(f"{e.section}")
            if key in ev.by_key:
                sec = f'<a class="reference internal" href="{uri(here, mev.page_name(*key))}">{sec}</a>'
            rows.append(
                f'<tr data-kind="{e.kind}" data-document="{html.escape(e.document)}" data-section="{html.escape(e.section)}">'
                f'<td><a class="reference internal" href="#{mev.erratum_anchor(e.id)}">{e.id}</a></td>'
                f'<td><span class="erratum-kind kind-{e.kind}">{e.kind}</span></td><td>{html.escape(e.document)}</td>'
                f"<td>{sec}</td><td>{html.escape(e.title)}</td></tr>")
        table = (
            '<form class="register-filter" onsubmit="return false">'
            f'<label>kind <select data-filter="kind"><option value="">all</option>{opts(kinds)}</select></label> '
            f'<label>document <select data-filter="document"><option value="">all</option>{opts(docs)}</select></label> '
            '<label>section <input data-filter="section" type="search" placeholder="e.g. 3.2.7" size="10"></label> '
            '<span class="register-count"></span></form>'
            '<div class="table-wrapper" id="register-table"><table class="register-table docutils align-default"><thead><tr>'
            "<th>id</th><th>kind</th><th>document</th><th>section</th><th>title</th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table></div>")
        return nodes.raw("", table, format="html")


# --- proof obligations and scenarios -------------------------------------------------------------------------


def obligation_anchor(name: str) -> str:
    return "ob-" + re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def status_text(status: dict[str, str]) -> str:
    return ", ".join(f"{mode}: {s}" for mode, s in status.items())


class ObligationsDirective(Directive):
    has_content = False

    def run(self):
        env = self.state.document.settings.env
        ev = evidence()
        uri = env.app.builder.get_relative_uri
        where: dict[str, tuple[str, str]] = {}
        for key, obs in ev.obligations.items():
            for ob in obs:
                where[ob.name] = key
        rows = []
        for ob in sorted(ev.all_obligations, key=lambda o: (o.kind, o.handler, o.invariant)):
            key = where.get(ob.name)
            sec = (f'<a class="reference internal" href="{uri(env.docname, mev.page_name(*key))}">{key[1]}</a>'
                   if key in ev.by_key else "")
            cells = "".join(f'<td class="status-{s.split(",")[0].replace(" ", "-")}">{s}</td>' for s in ob.status.values())
            add_label(env, obligation_anchor(ob.name), ob.name)
            rows.append(f'<tr id="{obligation_anchor(ob.name)}"><td><code>{html.escape(ob.name)}</code></td>'
                        f"<td>{ob.kind}</td><td>{ob.servers}</td><td>{sec}</td>{cells}</tr>")
        table = ('<div class="table-wrapper"><table class="obligations-table docutils align-default"><thead><tr>'
                 "<th>obligation</th><th>kind</th><th>servers</th><th>section</th><th>clarified</th><th>literal</th>"
                 "</tr></thead><tbody>"
                 + "".join(rows) + "</tbody></table></div>")
        return [para("Results: ", nodes.literal(text=ev.results_made_by)), nodes.raw("", table, format="html")]


class EnterpriseInvariantsDirective(Directive):
    """Each invariant of the enterprise model: its family, formula and plain words; then the assumptions not proved."""

    has_content = False

    def run(self):
        from mqspec.proofs.enterprise import assumptions as ea
        from mqspec.proofs.enterprise import invariants as ei

        rows = []
        for inv in ei.INVARIANTS:
            role = "strengthening" if inv.strengthening else "stated"
            rows.append(f"<tr><td><code>{html.escape(inv.name)}</code></td><td>{inv.family} ({role}, {inv.kind})</td>"
                        f"<td><code>{html.escape(inv.statement)}</code></td><td>{html.escape(inv.prose)}</td></tr>")
        table = ('<div class="table-wrapper"><table class="docutils align-default"><thead><tr><th>invariant</th>'
                 "<th>family</th><th>formula</th><th>in words</th></tr></thead><tbody>" + "".join(rows)
                 + "</tbody></table></div>")
        # docutils nodes, not raw HTML: the register ids in the text become links (mqspec_links)
        listed = bullets([para(nodes.literal(text=name), f": {text}") for name, text in ea.not_proved()])
        return [nodes.raw("", table, format="html"),
                para("Assumed and not proved (", nodes.literal(text="mqspec prove"), " lists them):"), listed]


class ScenarioDirective(Directive):
    required_arguments = 1
    has_content = False

    def run(self):
        ev = evidence()
        path = self.arguments[0]
        sc = next(s for s in ev.all_scenarios if s.path == path)
        keys = sorted((k for k, v in ev.scenarios.items() if sc in v), key=lambda k: (k[0], mev.section_key(k[1])))
        out: list[nodes.Node] = [para("Evidence for ", *_join([section_link(*k) for k in keys]), ".")]
        out.append(para("Run it in either reading (exit status 1 when an expectation or invariant fails):"))
        out.append(command_block(f".venv/bin/mqspec scenario run {path} --invariants"))
        out.append(command_block(f".venv/bin/mqspec scenario run {path} --invariants --mode literal"))
        block = nodes.literal_block(sc.text, sc.text)
        block["language"] = "yaml"
        out.append(block)
        return out


def _join(items: list[nodes.Node], sep: str = ", ") -> list[nodes.Node]:
    out: list[nodes.Node] = []
    for i, item in enumerate(items):
        if i:
            out.append(nodes.Text(sep))
        out.append(item)
    return out


def setup(app):
    app.add_directive("mqspec-register", RegisterDirective)
    app.add_directive("mqspec-obligations", ObligationsDirective)
    app.add_directive("mqspec-enterprise-invariants", EnterpriseInvariantsDirective)
    app.add_directive("mqspec-scenario", ScenarioDirective)
    return {"parallel_read_safe": True, "version": "2"}
