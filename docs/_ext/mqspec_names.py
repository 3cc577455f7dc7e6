"""``.. mqspec-names::``: the specifications' attribute names beside mqspec's Python names.

For every field of the classes that hold protocol state, the name the text uses is found by
spelling the field without underscores and looking it up, case-insensitively, among the words of
the document (``last_seq_number`` is ``LastSeqNumber``, ``psc_neighbors`` ``PSCNeighbors`` if the
text says so); the first section that uses it is linked. Fields the text has no name for are
listed after the table, so nothing is silently left out.
"""

from __future__ import annotations

import importlib
import re

import attrs
from docutils import nodes
from docutils.parsers.rst import Directive
from sphinx import addnodes

import mqspec_evidence as mev
from mqspec_pages import _table
from mqspec_register import evidence, para, section_link

#: (document, class) for each class holding a protocol's state
STATE_CLASSES = (
    ("MC-MQDSRP", "mqspec.refimpl.mqdsrp_state.QueueManager"),
    ("MC-MQDSRP", "mqspec.refimpl.mqdsrp_state.DirectoryPartition"),
    ("MC-MQDSRP", "mqspec.refimpl.mqdsrp_state.DirectoryNeighbor"),
    ("MC-MQDSRP", "mqspec.refimpl.mqdsrp_state.DeletedObject"),
    ("MS-MQSD", "mqspec.refimpl.mqsd_client.MqsdClient"),
    ("MS-MQSD", "mqspec.refimpl.mqsd_server.MqsdServer"),
    ("MS-MQCN", "mqspec.refimpl.mqcn_state.QueueManager"),
    ("MS-MQCN", "mqspec.refimpl.mqcn_state.Queue"),
)


def _words(sections: list[mev.Section]) -> dict[str, tuple[str, str]]:
    """Lower-cased word -> (its spelling in the text, the abstract data model section that defines it, or else
    the first section of chapters 2 and 3 that uses it)."""
    out: dict[str, tuple[str, str]] = {}
    model = [s for s in sections if re.match(r"3\.\d+\.1(\.|$)", s.section)]
    for s in model + sections:
        if not s.section.startswith(("2", "3")):
            continue
        for word in re.findall(r"\b[A-Za-z][A-Za-z0-9]+\b", s.text):
            if any(c.isupper() for c in word[1:]) or word[0].isupper():
                out.setdefault(word.lower(), (word, s.section))
    return out


def _cls(path: str) -> type:
    module, name = path.rsplit(".", 1)
    return getattr(importlib.import_module(module), name)


class NamesDirective(Directive):
    has_content = False

    def run(self):
        ev = evidence()
        words = {d: _words(ev.sections[d]) for d in ("MC-MQDSRP", "MS-MQSD", "MS-MQCN")}
        rows, missing = [], []
        for document, path in STATE_CLASSES:
            cls = _cls(path)
            for field in attrs.fields(cls):
                found = words[document].get(field.name.replace("_", "").lower())
                target = f"{path}.{field.name}"
                if found is None:
                    missing.append(target)
                    continue
                spelling, section = found
                xref = addnodes.pending_xref("", refdomain="py", reftype="obj", reftarget=path, refexplicit=True)
                xref += nodes.literal(text=f"{cls.__name__}.{field.name}")
                rows.append([nodes.literal(text=spelling), xref, section_link(document, section)])
        out: list[nodes.Node] = [_table(["in the text", "in mqspec", "defined in (or first used in)"], rows,
                                        "names-table")]
        if missing:
            out.append(para("Fields with no name in the text (mqspec's own bookkeeping, or named differently): ",
                            ", ".join(m.rsplit(".", 2)[-2] + "." + m.rsplit(".", 1)[-1] for m in missing), "."))
        return out


def setup(app):
    app.add_directive("mqspec-names", NamesDirective)
    return {"parallel_read_safe": True, "version": "1"}
