"""Sphinx directives that render the errata register and the clause registry from the code.

``.. mqspec-errata::`` renders every register entry; ``.. mqspec-clauses::`` the clause table.
Both read the same data as ``mqspec errata --json`` and ``mqspec clauses --json``, so the
published annotated spec cannot drift from what the CLI reports.
"""

from docutils import nodes
from docutils.parsers.rst import Directive


def _para(text: str) -> nodes.paragraph:
    return nodes.paragraph(text=text)


def _literal(text: str) -> nodes.literal_block:
    return nodes.literal_block(text, text)


class ErrataDirective(Directive):
    has_content = False

    def run(self):
        from mqspec.errata import load

        out = []
        for e in load():
            section = nodes.section(ids=[e.id.lower()])
            section += nodes.title(text=f"{e.id} ({e.kind}): {e.document} {e.section}: {e.title}")
            for label, value, literal in (
                ("Literal text", e.literal, True),
                ("Problem", e.problem, False),
                ("Evidence", e.evidence, True),
                ("Resolution", e.resolution, False),
            ):
                section += _para(f"{label}:")
                section += _literal(value) if literal else _para(value)
            out.append(section)
        return out


class ClausesDirective(Directive):
    has_content = False

    def run(self):
        from mqspec.clauses import report

        rows = report()
        table = nodes.table()
        group = nodes.tgroup(cols=5)
        table += group
        for _ in range(5):
            group += nodes.colspec(colwidth=1)
        head = nodes.thead()
        group += head
        body = nodes.tbody()
        group += body

        def row(cells):
            r = nodes.row()
            for c in cells:
                entry = nodes.entry()
                entry += _para(c)
                r += entry
            return r

        head += row(["document", "section", "title", "code", "tests"])
        for c in rows:
            body += row([c["document"], c["section"], c["title"], c["code"], str(len(c["tests"]))])
        return [table]


def setup(app):
    app.add_directive("mqspec-errata", ErrataDirective)
    app.add_directive("mqspec-clauses", ClausesDirective)
    return {"parallel_read_safe": True, "version": "1"}
