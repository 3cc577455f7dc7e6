"""Keeps autodoc's API pages short: no dumps of large values, no attrs fields listed twice.

autodoc prints a module constant's whole ``repr`` in its signature (``PROPIDS`` alone ran to
thousands of pixels). At ``doctree-read`` a data or attribute signature whose value is longer than
:data:`LIMIT` characters keeps its name and type and shows ``= …`` instead; the docstring says what
the value holds, and the source has it. An attrs class's signature already names every field with
its type and default, so the undocumented attribute entries autodoc adds after it are dropped
(a field with a ``#:`` comment or docstring keeps its entry).
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


def _attrs_fields(fullname: str) -> set[str]:
    import importlib

    import attrs

    module, _, name = fullname.rpartition(".")
    while module:
        try:
            obj = importlib.import_module(module)
            break
        except ImportError:
            module, _, head = module.rpartition(".")
            name = f"{head}.{name}"
    else:
        return set()
    for part in name.split("."):
        obj = getattr(obj, part, None)
    return {f.name for f in attrs.fields(obj)} if isinstance(obj, type) and attrs.has(obj) else set()


def drop_repeated_fields(app: Any, doctree: nodes.document) -> None:
    for desc in list(doctree.findall(addnodes.desc)):
        if desc.get("objtype") != "class":
            continue
        sig = next(iter(desc.findall(addnodes.desc_signature)), None)
        if sig is None or not sig.get("ids"):
            continue
        fields = _attrs_fields(sig["ids"][0])
        if not fields:
            continue
        content = next(c for c in desc.children if isinstance(c, addnodes.desc_content))
        for member in list(content.children):
            if not isinstance(member, addnodes.desc) or member.get("objtype") != "attribute":
                continue
            msig = next(iter(member.findall(addnodes.desc_signature)), None)
            body = next((c for c in member.children if isinstance(c, addnodes.desc_content)), None)
            name = msig["ids"][0].rsplit(".", 1)[-1] if msig is not None and msig.get("ids") else ""
            if name in fields and (body is None or not body.astext().strip()):
                app.env.get_domain("py").objects.pop(msig["ids"][0], None)  # no search hit for a dropped entry
                idx = content.index(member)
                content.remove(member)
                # autodoc puts an index node before each entry: drop it with its entry
                if idx > 0 and isinstance(content[idx - 1], addnodes.index):
                    content.remove(content[idx - 1])


def setup(app):
    app.connect("doctree-read", shorten_values)
    app.connect("doctree-read", drop_repeated_fields)
    return {"parallel_read_safe": True, "version": "1"}
