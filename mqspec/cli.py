"""The ``mqspec`` command line: decode/encode, the errata register, the clause registry, the demo.

Bad input (bytes, JSON, files) ends with one line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import json
import sys
import unicodedata
from pathlib import Path
from typing import Any, NoReturn

import click

from mqspec import __version__
from mqspec.model.errors import DecodeError, ModelError
from mqspec.model.examples_mqsd import EXAMPLES
from mqspec.protocols import PROTOCOLS, codec
from mqspec.wording import plural


def fail(kind: str, text: str) -> NoReturn:
    """Print one line ``mqspec: <kind>: <text>`` to stderr and exit with status 2."""
    click.echo(f"mqspec: {kind}: {text}", err=True)
    sys.exit(2)


def emit(obj: Any) -> None:
    click.echo(json.dumps(obj, indent=2))


#: letters that documents print for hex digits (the MS-MQSD section 4 dumps have several)
LOOK_ALIKES = {"\u0391": "A", "\u0392": "B", "\u0395": "E", "\u0410": "A", "\u0412": "B", "\u0415": "E",
               "\u0421": "C", "\u0417": "3", "\u041e": "0", "\u039f": "0", "O": "0", "o": "0", "l": "1",
               "\u0430": "a", "\u0435": "e", "\u0441": "c", "\u043e": "0", "\u0437": "3"}


def parse_hex(text: str, option: str = "--hex") -> bytes:
    """Bytes from hexadecimal text; blanks and ``:`` between digits and a leading ``0x`` are ignored.

    A character that is not a hex digit is named with its position and, when it only looks
    like one (a Greek or Cyrillic letter from a document's text), with the digit it resembles.
    """
    digits: list[str] = []
    skip = 2 if text.lstrip()[:2].lower() == "0x" else 0
    start = len(text) - len(text.lstrip()) + skip
    for i, ch in enumerate(text[start:], start + 1):
        if ch.isspace() or ch == ":":
            continue
        if ch not in "0123456789abcdefABCDEF":
            name = unicodedata.name(ch, f"U+{ord(ch):04X}")
            like = (f"; it looks like {LOOK_ALIKES[ch]!r} (copied from a document? `mqspec decode --example` "
                    "has the MS-MQSD section 4 packets)") if ch in LOOK_ALIKES else ""
            fail("usage", f"{option}: character {i} is {ch!r} ({name}), not a hexadecimal digit{like}")
        digits.append(ch)
    if len(digits) % 2:
        fail("usage", f"{option}: {len(digits)} hexadecimal digits, an odd number (a byte is two digits)")
    return bytes.fromhex("".join(digits))


def read_input(hex_text: str | None, source: str | None) -> bytes:
    """Bytes from ``--hex``, a file, or ``-`` (standard input)."""
    if hex_text is not None and source is not None:
        fail("usage", "give --hex or a FILE, not both")
    if hex_text is not None:
        return parse_hex(hex_text)
    if source is None or source == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(source).read_bytes()
    except OSError as exc:
        fail("error", f"{source}: {exc.strerror}")


#: what click (8.2 and later) raises for a group given no command; older versions print the help themselves
NO_ARGS_IS_HELP: type[Exception] = getattr(click.exceptions, "NoArgsIsHelpError", type("_Never", (Exception,), {}))


class OneLineUsage(click.Group):
    """The ``mqspec`` group: a usage error anywhere (an unknown option, a value out of range) is one
    ``mqspec: usage: ...`` line on stderr and exit status 2, as every other bad input is."""

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except NO_ARGS_IS_HELP as exc:  # a group run without a command: its help, as click prints it
            exc.show()
            sys.exit(exc.exit_code)
        except click.UsageError as exc:
            fail("usage", " ".join(exc.format_message().split()))
        except click.ClickException as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(1)
        if not standalone_mode:
            return rv
        sys.exit(rv if isinstance(rv, int) else 0)


@click.group(cls=OneLineUsage, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mqspec")
def main() -> None:
    """Executable reference specification and conformance oracle for the MSMQ directory protocols."""


PROTOCOL_OPTION = click.option(
    "--protocol", "-p", type=click.Choice(sorted(PROTOCOLS)), help="Which document's messages."
)


@main.command()
@PROTOCOL_OPTION
@click.option("--hex", "hex_text", metavar="HEX", help="The message as hexadecimal text.")
@click.option("--pcap", "pcap", type=click.Path(dir_okay=False),
              help="Decode every message in a capture (with --protocol: only that protocol's).")
@click.option("--example", type=click.Choice(sorted(EXAMPLES)),
              help="One of the MS-MQSD section 4 example packets, as the specification prints it.")
@click.option("--lenient", is_flag=True, help="Apply the receiver-side leniency the spec allows.")
@click.argument("source", required=False, metavar="[FILE|-]")
def decode(protocol: str | None, hex_text: str | None, pcap: str | None, example: str | None, lenient: bool,
           source: str | None) -> None:
    """Decode one message to JSON (GUIDs as strings, sequence numbers as integers).

    The message comes from --hex, a FILE, standard input, or --example; --pcap decodes a whole
    capture instead. A capture cut off in the middle of a frame gives the messages before the
    cut, then a warning line on stderr naming the frame (exit status 0).
    """
    inputs = [name for name, given in (("--hex", hex_text), ("FILE", source), ("--pcap", pcap),
                                       ("--example", example)) if given is not None]
    if len(inputs) > 1:
        fail("usage", f"give one of --hex, FILE, --pcap and --example, not {' and '.join(inputs)}")
    if pcap is not None:
        _decode_pcap(pcap, protocol, lenient)
        return
    if example is not None:
        if protocol not in (None, "mqsd"):
            fail("usage", f"--example packets are MS-MQSD messages, not --protocol {protocol}")
        protocol, data = "mqsd", EXAMPLES[example]
    elif protocol is None:
        fail("usage", "--protocol is required unless --pcap or --example is given")
    else:
        data = read_input(hex_text, source)
    from mqspec.model.jsonform import to_json

    try:
        emit(to_json(codec(protocol).decode(data, lenient=lenient)))
    except DecodeError as exc:
        fail("decode error", str(exc))


def _decode_pcap(pcap: str, protocol: str | None, lenient: bool) -> None:
    from mqspec.capture import CaptureError, scan_capture

    try:
        rows, summary = scan_capture(Path(pcap), lenient=lenient)
    except CaptureError as exc:
        fail("capture error", str(exc))
    emit([row for row in rows if protocol is None or row["protocol"] == protocol])
    if summary.cut is not None:
        frames = plural(summary.frames, "frame")
        click.echo(f"mqspec: warning: {summary.cut}; the capture ends there (cut off?): "
                   f"decoded the {frames} before it", err=True)


@main.command()
@PROTOCOL_OPTION
@click.argument("source", metavar="FILE.json|-")
def encode(protocol: str | None, source: str) -> None:
    """Encode a JSON message (as ``decode`` prints it) and print the bytes as hexadecimal."""
    if protocol is None:
        fail("usage", "--protocol is required")
    text = read_text(read_input(None, source), source)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        fail("json error", f"{source}: line {exc.lineno} column {exc.colno}: {exc.msg}")
    except RecursionError:
        fail("json error", f"{source}: nested too deeply")
    from mqspec.model.jsonform import from_json

    module = codec(protocol)
    try:
        click.echo(module.encode(from_json(data, module.MESSAGE_TYPES)).hex())
    except ModelError as exc:
        fail("encode error", f"{source}: {exc}")
    except RecursionError:
        fail("encode error", f"{source}: nested too deeply")


def read_text(data: bytes, source: str) -> str:
    """UTF-8 text (a byte-order mark is allowed); anything else is named, with where it fails."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        fail("json error", f"{source}: UTF-16 text (a UTF-16 byte-order mark); save it as UTF-8")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        fail("json error", f"{source}: not UTF-8 text (byte {exc.start}: {exc.reason})")



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
    counted = all(row["tests"] is not None for row in rows)
    if not counted:
        click.echo("mqspec: note: test counts need a source checkout (an installed mqspec has no tests/)", err=True)
    for row in rows:
        tests = f"  ({plural(len(row['tests']), 'test')})" if counted else ""
        click.echo(f"{row['document']:10} {row['section']:10} {row['title'][:44]:44} {row['code']}{tests}")


@main.command()
def demo() -> None:
    """The main job on embedded defaults: decode the specifications' example packets."""
    from mqspec.demo import run

    run()


# the subcommand groups live in their own modules, which do not import this one
from mqspec.cli_check import check, trace  # noqa: E402
from mqspec.cli_mqsd import mqsd  # noqa: E402
from mqspec.cli_pipeline import pipeline  # noqa: E402
from mqspec.cli_prove import prove  # noqa: E402
from mqspec.cli_scenario import scenario  # noqa: E402
from mqspec.cli_vectors import vectors  # noqa: E402

main.add_command(scenario)
main.add_command(mqsd)
from mqspec.cli_mqsd_probe import probe  # noqa: E402  (after cli_mqsd, whose helpers it uses)

mqsd.add_command(probe)
main.add_command(vectors)
main.add_command(check)
main.add_command(pipeline)
main.add_command(trace)
main.add_command(prove)


if __name__ == "__main__":  # pragma: no cover
    main()
