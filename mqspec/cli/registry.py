"""``mqspec errata`` and ``mqspec clauses``: the errata register and the clause registry."""

from __future__ import annotations

import click

from mqspec.cli.common import emit, fail
from mqspec.wording import plural


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the register as a JSON list.")
def errata(as_json: bool) -> None:
    """The errata and clarifications register."""
    from mqspec import errata as register

    try:
        entries = register.load()
    except ValueError as exc:
        fail("errata error", str(exc))
    if as_json:
        emit([e.to_json() for e in entries])
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"mqspec errata and clarifications ({len(entries)})", show_lines=True)
    for col in ("id", "kind", "where", "title", "resolution"):
        table.add_column(col)
    for e in entries:
        table.add_row(e.id, e.kind, f"{e.document} {e.section}", e.title, e.resolution)
    Console().print(table)


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
def demo() -> None:
    """The main job on embedded defaults: decode the specifications' example packets."""
    from mqspec.demo import run

    run()
