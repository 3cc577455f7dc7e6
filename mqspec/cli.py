"""The ``mqspec`` command line: decode/encode, the errata register, the clause registry, the demo.

Bad input (bytes, JSON, files) ends with one line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from mqspec import __version__
from mqspec.model.errors import DecodeError, ModelError
from mqspec.protocols import PROTOCOLS, codec


def fail(kind: str, text: str) -> NoReturn:
    """Print one line ``mqspec: <kind>: <text>`` to stderr and exit with status 2."""
    click.echo(f"mqspec: {kind}: {text}", err=True)
    sys.exit(2)


def emit(obj: Any) -> None:
    click.echo(json.dumps(obj, indent=2))


def read_input(hex_text: str | None, source: str | None) -> bytes:
    """Bytes from ``--hex``, a file, or ``-`` (standard input)."""
    if hex_text is not None and source is not None:
        fail("usage", "give --hex or a FILE, not both")
    if hex_text is not None:
        cleaned = re.sub(r"[\s:]", "", hex_text)
        if cleaned.lower().startswith("0x"):
            cleaned = cleaned[2:]
        try:
            return bytes.fromhex(cleaned)
        except ValueError:
            fail("usage", f"--hex is not hexadecimal: {hex_text[:40]!r}")
    if source is None or source == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(source).read_bytes()
    except OSError as exc:
        fail("error", f"{source}: {exc.strerror}")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mqspec")
def main() -> None:
    """Executable reference specification and conformance oracle for the MSMQ directory protocols."""


PROTOCOL_OPTION = click.option(
    "--protocol", "-p", type=click.Choice(sorted(PROTOCOLS)), help="Which document's messages."
)


@main.command()
@PROTOCOL_OPTION
@click.option("--hex", "hex_text", metavar="HEX", help="The message as hexadecimal text.")
@click.option("--pcap", "pcap", type=click.Path(dir_okay=False), help="Decode every message in a capture.")
@click.option("--lenient", is_flag=True, help="Apply the receiver-side leniency the spec allows.")
@click.argument("source", required=False, metavar="[FILE|-]")
def decode(protocol: str | None, hex_text: str | None, pcap: str | None, lenient: bool, source: str | None) -> None:
    """Decode one message to JSON (GUIDs as strings, sequence numbers as integers)."""
    if pcap is not None:
        from mqspec.capture import CaptureError, decode_capture

        try:
            emit(decode_capture(Path(pcap), lenient=lenient))
        except CaptureError as exc:
            fail("capture error", str(exc))
        return
    if protocol is None:
        fail("usage", "--protocol is required unless --pcap is given")
    data = read_input(hex_text, source)
    from mqspec.model.jsonform import to_json

    try:
        emit(to_json(codec(protocol).decode(data, lenient=lenient)))
    except DecodeError as exc:
        fail("decode error", str(exc))


@main.command()
@PROTOCOL_OPTION
@click.argument("source", metavar="FILE.json|-")
def encode(protocol: str | None, source: str) -> None:
    """Encode a JSON message (as ``decode`` prints it) and print the bytes as hexadecimal."""
    if protocol is None:
        fail("usage", "--protocol is required")
    text = read_input(None, source).decode("utf-8", "replace")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        fail("json error", f"{source}: line {exc.lineno} column {exc.colno}: {exc.msg}")
    from mqspec.model.jsonform import from_json

    module = codec(protocol)
    try:
        click.echo(module.encode(from_json(data, module.MESSAGE_TYPES)).hex())
    except ModelError as exc:
        fail("encode error", f"{source}: {exc}")


@main.command()
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


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print the registry as a JSON list.")
def clauses(as_json: bool) -> None:
    """The clause registry: which code and which tests implement each section."""
    from mqspec.clauses import report

    rows = report()
    if as_json:
        emit(rows)
        return
    for row in rows:
        tests = len(row["tests"])
        click.echo(f"{row['document']:10} {row['section']:10} {row['title'][:44]:44} {row['code']}  ({tests} tests)")


@main.command()
def demo() -> None:
    """The main job on embedded defaults: decode the specifications' example packets."""
    from mqspec.demo import run

    run()


# the subcommand groups live in their own modules, which do not import this one
from mqspec.cli_check import check, trace  # noqa: E402
from mqspec.cli_mqsd import mqsd  # noqa: E402
from mqspec.cli_prove import prove  # noqa: E402
from mqspec.cli_scenario import scenario  # noqa: E402
from mqspec.cli_vectors import vectors  # noqa: E402

main.add_command(scenario)
main.add_command(mqsd)
from mqspec.cli_mqsd_probe import probe  # noqa: E402  (after cli_mqsd, whose helpers it uses)

mqsd.add_command(probe)
main.add_command(vectors)
main.add_command(check)
main.add_command(trace)
main.add_command(prove)


if __name__ == "__main__":  # pragma: no cover
    main()
