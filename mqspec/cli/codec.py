"""``mqspec decode`` and ``mqspec encode``: one message (or a capture's messages) to JSON and back."""

from __future__ import annotations

import json
import sys
import textwrap
import unicodedata
from pathlib import Path
from typing import Any

import click

from mqspec import json64
from mqspec.cli.common import PORT_OPTIONS, emit, fail, ports_of, print_summary
from mqspec.model.errors import DecodeError, ModelError
from mqspec.model.examples_mqsd import EXAMPLES
from mqspec.protocols import PROTOCOLS, codec
from mqspec.wording import plural

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


PROTOCOL_OPTION = click.option(
    "--protocol", "-p", type=click.Choice(sorted(PROTOCOLS)), help="Which document's messages."
)


@click.command()
@PROTOCOL_OPTION
@click.option("--hex", "hex_text", metavar="HEX", help="The message as hexadecimal text.")
@click.option("--pcap", "pcap", type=click.Path(dir_okay=False),
              help="Decode every message in a capture (with --protocol: only that protocol's).")
@click.option("--example", type=click.Choice(sorted(EXAMPLES)),
              help="One of the MS-MQSD section 4 example packets, as the specification prints it.")
@click.option("--lenient", is_flag=True, help="Apply the receiver-side leniency the spec allows.")
@PORT_OPTIONS
@click.option("--json", "as_json", is_flag=True,
              help="With --pcap: print {\"messages\": [...], \"summary\": {...}} instead of the list alone.")
@click.argument("source", required=False, metavar="[FILE|-]")
def decode(protocol: str | None, hex_text: str | None, pcap: str | None, example: str | None, lenient: bool,
           port: tuple[int, ...], mqsd_port: tuple[int, ...], mqqb_port: tuple[int, ...], as_json: bool,
           source: str | None) -> None:
    """Decode one message to JSON (GUIDs as strings, sequence numbers as integers).

    The message comes from --hex, a FILE, standard input, or --example; --pcap decodes a whole
    capture instead (pcap or pcapng, gzip-compressed or not), printing its messages as they are
    read and, on stderr, a summary: frames read, messages decoded, frames skipped by reason, the
    capture's holes. A capture cut off in the middle of a frame gives the messages before the
    cut; a capture in which no message decodes ends with status 1, the summary saying why (other
    ports, truncation, not IP...).
    """
    inputs = [name for name, given in (("--hex", hex_text), ("FILE", source), ("--pcap", pcap),
                                       ("--example", example)) if given is not None]
    if len(inputs) > 1:
        fail("usage", f"give one of --hex, FILE, --pcap and --example, not {' and '.join(inputs)}")
    if pcap is not None:
        _decode_pcap(pcap, protocol, lenient, ports_of(port, mqsd_port, mqqb_port), as_json)
        return
    if port or mqsd_port or mqqb_port or as_json:
        fail("usage", "--port, --mqsd-port, --mqqb-port and --json go with --pcap")
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


def _decode_pcap(pcap: str, protocol: str | None, lenient: bool, ports: Any, as_json: bool) -> None:
    """The capture's rows as a JSON list, written as they are read (memory does not grow with it)."""
    from mqspec.capture import CaptureError, Scan

    scan = Scan(ports=ports, lenient=lenient)
    rows = scan.rows(Path(pcap))
    decoded = written = 0
    out = sys.stdout
    indent = "    " if as_json else "  "
    try:
        for row in rows:
            if protocol is not None and row["protocol"] != protocol:
                continue
            if not written:  # opened at the first row: a file that is no capture prints nothing here
                out.write('{\n  "messages": [' if as_json else "[")
            out.write(",\n" if written else "\n")
            out.write(indent + json64.dumps(row))  # one row a line: the C encoder, a third of the time
            written += 1
            decoded += "decoded" in row
    except CaptureError as exc:
        fail("capture error", str(exc))
    summary = scan.summary
    if not written:
        out.write('{\n  "messages": [' if as_json else "[")
    close = ("\n  ]" if written else "]") if as_json else ("\n]" if written else "]")
    out.write(close)
    if as_json:
        out.write(",\n  \"summary\": " + textwrap.indent(json64.dumps(summary.to_json(), indent=2), "  ")[2:] + "\n}")
    out.write("\n")
    out.flush()
    print_summary(summary, "messages decoded" + (f" ({decoded} of them {protocol})" if protocol else ""),
                  decoded, ports)
    if decoded == 0:
        sys.exit(1)


@click.command()
@PROTOCOL_OPTION
@click.argument("source", metavar="FILE.json|-")
def encode(protocol: str | None, source: str) -> None:
    """Encode a JSON message (as decode prints it) and print the bytes as hexadecimal."""
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
