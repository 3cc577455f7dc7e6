"""``mqspec errata`` and ``mqspec clauses``: the errata register and the clause registry."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from mqspec.cli.common import emit, fail
from mqspec.wording import plural

if TYPE_CHECKING:
    from mqspec.errata import Erratum


#: the fields of one entry as ``mqspec errata E-NNN`` prints them, in reading order
ENTRY_FIELDS = (("literal", "The literal text"), ("problem", "Problem"), ("evidence", "Evidence"),
                ("resolution", "Resolution (what mqspec implements)"))


def _entry_id(text: str) -> str:
    """``E-119``, ``e-119`` or ``119`` as the register writes ids (``E-119``)."""
    digits = text.upper().removeprefix("E-").removeprefix("E")
    return f"E-{int(digits):03d}" if digits.isdigit() else text


def _wrapped(text: str, width: int, indent: str = "  ") -> list[str]:
    """``text`` wrapped to ``width`` with ``indent``, its paragraphs (blank-line separated) kept apart.

    A paragraph with indented or bulleted lines (pseudo-code, a list) keeps its own line breaks.
    """
    import textwrap

    lines: list[str] = []
    for paragraph in text.strip().split("\n\n"):
        if lines:
            lines.append("")
        if any(line[:1].isspace() or line.startswith(("- ", "* ")) for line in paragraph.splitlines()):
            lines += [indent + line for line in paragraph.splitlines()]  # a list or code: its own lines
            continue
        lines += textwrap.wrap(" ".join(paragraph.split()), width, initial_indent=indent, subsequent_indent=indent,
                               break_long_words=False, break_on_hyphens=False)
    return lines


def entry_text(e: Erratum, width: int = 80) -> str:
    """One register entry, whole: its heading line, then each field as a wrapped paragraph."""
    lines = [f"{e.id}  {e.kind}  {e.document} {e.section}", *_wrapped(e.title, width, "")]
    for name, label in ENTRY_FIELDS:
        lines += ["", f"{label}:", *_wrapped(getattr(e, name), width)]
    return "\n".join(lines)


def index_lines(entries: list[Erratum]) -> list[str]:
    """The register as a compact index: one line per entry (id, kind, where, the whole title)."""
    where = max(len(f"{e.document} {e.section}") for e in entries)
    kind = max(len(e.kind) for e in entries)
    return [f"{e.id}  {e.kind:<{kind}}  {f'{e.document} {e.section}':<{where}}  {e.title}" for e in entries]


@click.command()
@click.argument("ids", nargs=-1, metavar="[E-NNN]...")
@click.option("--json", "as_json", is_flag=True,
              help="Print the entries (all, or the ones named) as a JSON list of objects with every field.")
def errata(ids: tuple[str, ...], as_json: bool) -> None:
    """The errata and clarifications register: an index, or whole entries.

    Without E-NNN: one line per entry (id, kind, document and section, title). With E-NNN (say
    mqspec errata E-119): each entry named, whole: the literal text, the problem, the evidence
    and the resolution mqspec implements. An id the register does not hold is a usage error
    (exit status 2).
    """
    from mqspec import errata as register

    try:
        entries = register.load()
    except ValueError as exc:
        fail("errata error", str(exc))
    if ids:
        known = {e.id: e for e in entries}
        wanted = [_entry_id(i) for i in ids]
        missing = [i for i, w in zip(ids, wanted, strict=True) if w not in known]
        withdrawn = [w for w in wanted if w in register.WITHDRAWN]
        if withdrawn:
            fail("usage", f"the register has no entry {withdrawn[0]}: {register.WITHDRAWN[withdrawn[0]]}")
        if missing:
            fail("usage", f"the register has no entry {missing[0]!r} (its ids run {entries[0].id} to "
                          f"{entries[-1].id}; `mqspec errata` lists them)")
        entries = [known[w] for w in dict.fromkeys(wanted)]
    if as_json:
        emit([e.to_json() for e in entries])
        return
    if ids:
        import shutil

        # the terminal's width (80 when the output is not a terminal), kept readable
        width = max(40, min(100, shutil.get_terminal_size((80, 24)).columns))
        click.echo("\n\n".join(entry_text(e, width) for e in entries))
        return
    for line in index_lines(entries):
        click.echo(line)
    click.echo(f"\n{plural(len(entries), 'entry', 'entries')}; `mqspec errata E-NNN` prints one whole, "
               "`mqspec errata --json` every field of every entry.")


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the registry as a JSON list.")
def clauses(as_json: bool) -> None:
    """The clause registry: which code and which tests implement each section."""
    from mqspec.clauses import report

    rows = report()
    if as_json:
        emit(rows)
        return
    counted = all(row["tests"] is not None for row in rows)
    if not counted:
        click.echo("mqspec: note: test counts need a source checkout (an installed mqspec has no tests/)", err=True)
    for row in rows:
        tests = f"  ({plural(len(row['tests']), 'test')})" if counted else ""
        click.echo(f"{row['document']:10} {row['section']:10} {row['title'][:44]:44} {row['code']}{tests}")


@click.command()
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("out") / "demo",
              show_default=True, metavar="DIR",
              help="Where everything goes; a folder an earlier run wrote is replaced, any other is refused.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the summary as one JSON object on stdout (the running commentary goes to stderr).")
def demo(out: Path, as_json: bool) -> None:
    """The main job (make run): the pipeline end to end on embedded local Spark, in a few minutes.

    It decodes the MS-MQSD section 4 example packets with the strict codec; records the five
    MC-MQDSRP section 4 examples (scenarios/4.*.yaml) as traces in the clarified and the literal
    mode and tabulates which converge; explores 24 generated runs of the replication state machine
    (every invariant checked after every step, each run's trace kept); checks every one of those
    traces with the conformance checker; writes the HTML report; and prints a summary, the report's
    path and how much it left on disk. Everything goes under DIR, replacing what an earlier run
    wrote there (the command says so); nothing outside DIR is touched.
    """
    import sys

    from mqspec.demo import run

    sys.exit(run(out, as_json=as_json))
