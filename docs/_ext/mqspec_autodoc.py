"""Keeps autodoc's API pages short: no dumps of large values.

autodoc prints a module constant's whole ``repr`` in its signature (``PROPIDS`` alone ran to
thousands of pixels). At ``doctree-read`` a data or attribute signature whose value is longer than
:data:`LIMIT` characters keeps its name and type and shows ``= …`` instead; the docstring says what
the value holds, and the source has it.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx import addnodes

LIMIT = 80


def shorten_values(app: Any, doctree: nodes.document) -> None:
    for desc in doctree.findall(addnodes.desc):
        if desc.get("objtype") not in ("data", "attribute"):
            continue
        for sig in desc.findall(addnodes.desc_signature):
            for ann in list(sig.findall(addnodes.desc_annotation)):
                text = ann.astext()
                if "=" in text and len(text) > LIMIT:
                    ann.children = []
                    ann += nodes.Text(" = …")
                    ann["classes"].append("value-elided")


def setup(app):
    app.connect("doctree-read", shorten_values)
    return {"parallel_read_safe": True, "version": "1"}
