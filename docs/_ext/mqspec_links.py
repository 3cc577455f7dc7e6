"""Every ``E-NNN`` on the site is a link to its register entry, and the build checks it.

At ``doctree-resolved`` each text (docstrings, register prose, headings, inline and block literals)
has its errata ids turned into references to ``register.html#e-nnn``; a literal block that holds
one becomes a parsed literal (it loses its highlighting, keeps its links). An id that is not in the
register is a warning. At ``build-finished`` every written HTML page is read back and any ``E-NNN``
outside a link is a warning too, so ``-W`` fails on an unlinked id however it got there.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.util import logging

import mqspec_evidence as mev

logger = logging.getLogger(__name__)

_RANGE = re.compile(r"(E-\d{3})\s*(?:\.\.|–|—|to)\s*(E-\d{3})")
_SKIP = (nodes.reference, nodes.raw, nodes.comment, nodes.target, nodes.system_message)


def _inside(node: nodes.Node, kinds: tuple[type, ...]) -> bool:
    parent = node.parent
    while parent is not None:
        if isinstance(parent, kinds):
            return True
        parent = parent.parent
    return False


def link_errata(app: Any, doctree: nodes.document, docname: str) -> None:
    from mqspec_register import evidence

    known = {e.id for e in evidence().errata}
    register = app.builder.get_relative_uri(docname, "register")
    if docname == "register":
        register = ""
    for text in list(doctree.findall(nodes.Text)):
        if not mev.ERRATUM_ID.search(text) or _inside(text, _SKIP) or text.parent is None:
            continue
        parent = text.parent
        pieces: list[nodes.Node] = []
        pos = 0
        # "E-180 .. E-189" names a block of ids: an end that is not (yet) taken links to the register's table
        in_range = {i for m in _RANGE.finditer(text) for i in m.groups()}
        for m in mev.ERRATUM_ID.finditer(text):
            ident = m.group(0)
            anchor = mev.erratum_anchor(ident)
            if ident not in known and ident in in_range:
                anchor = "register-table"
            elif ident not in known:
                logger.warning(f"{ident} is not in the errata register (mqspec/register/*.yaml)",
                               location=parent, type="mqspec", subtype="erratum")
                continue
            pieces.append(nodes.Text(text[pos:m.start()]))
            pieces.append(nodes.reference(ident, ident, refuri=f"{register}#{anchor}",
                                          internal=True, classes=["erratum-ref"]))
            pos = m.end()
        if not pieces:
            continue
        pieces.append(nodes.Text(text[pos:]))
        index = parent.index(text)
        parent.remove(text)
        for offset, piece in enumerate(p for p in pieces if not isinstance(p, nodes.Text) or str(p)):
            parent.insert(index + offset, piece)
        block = parent if isinstance(parent, nodes.literal_block) else None
        if block is not None:
            block.rawsource = ""  # a parsed literal: the HTML writer keeps its children (the links)


_ANCHORED = re.compile(r"<a\b[^>]*>.*?</a>", re.S)
_NOT_TEXT = re.compile(r"<(script|style|title|head)\b.*?</\1>|<[^>]+>", re.S)
_SKIP_FILES = ("search.html", "genindex.html", "py-modindex.html")


def check_html(app: Any, exc: Exception | None) -> None:
    """Every ``E-NNN`` in the text of every written page sits inside a link."""
    if exc is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    for page in sorted(out.rglob("*.html")):
        rel = page.relative_to(out).as_posix()
        if rel.startswith(("_", "search")) or rel in _SKIP_FILES:
            continue
        body = page.read_text(encoding="utf-8")
        main = body.split('<article role="main"', 1)[-1]
        text = _NOT_TEXT.sub(" ", _ANCHORED.sub(" ", main))
        for m in mev.ERRATUM_ID.finditer(text):
            context = " ".join(text[max(0, m.start() - 60):m.end() + 20].split())
            logger.warning(f"{rel}: {m.group(0)} is not a link ({context!r})", type="mqspec", subtype="unlinked")


def setup(app):
    app.connect("doctree-resolved", link_errata)
    app.connect("build-finished", check_html)
    return {"parallel_read_safe": True, "version": "1"}
