"""What every command of the ``mqspec`` command line shares: the one-line failure and the JSON printer.

Bad input (bytes, JSON, files) ends with one line on stderr and exit status 2, never a traceback.
Every ``--json`` report is printed by :func:`emit`, through the 64-bit-safe writer
(:mod:`mqspec.json64`): no integer beyond 2**53 reaches a reader as a JSON number.
"""

from __future__ import annotations

import re
import sys
from typing import Any, NoReturn

import click

from mqspec import json64


def fail(kind: str, text: str) -> NoReturn:
    """Print one line ``mqspec: <kind>: <text>`` to stderr and exit with status 2."""
    click.echo(f"mqspec: {kind}: {text}", err=True)
    sys.exit(2)


def emit(obj: Any, *, sort_keys: bool = False, default: Any = None) -> None:
    """Print ``obj`` as indented JSON on standard output (64-bit values as decimal strings)."""
    click.echo(json64.dumps(obj, indent=2, sort_keys=sort_keys, default=default))


# --- captures -------------------------------------------------------------------------------------

def PORT_OPTIONS(f: Any) -> Any:  # noqa: N802 - a decorator, named as the options it adds
    """``--port``, ``--mqsd-port``, ``--mqqb-port``: the ports the directory protocols use in a capture."""
    f = click.option("--mqqb-port", type=click.IntRange(1, 65535), multiple=True, metavar="N",
                     help="A TCP port MQQB (MC-MQDSRP, MS-MQCN) uses in the capture (default 1801).")(f)
    f = click.option("--mqsd-port", type=click.IntRange(1, 65535), multiple=True, metavar="N",
                     help="A UDP port MS-MQSD uses in the capture (default 1801).")(f)
    return click.option("--port", "port", type=click.IntRange(1, 65535), multiple=True, metavar="N",
                        help="A port both MS-MQSD (UDP) and MQQB (TCP) use in the capture (default 1801).")(f)


def ports_of(port: tuple[int, ...], mqsd: tuple[int, ...], mqqb: tuple[int, ...], base: Any = None) -> Any:
    """The capture ports the options name (``--port`` both protocols), else ``base`` (else 1801)."""
    from mqspec.capture import Ports

    base = base or Ports()
    return Ports(frozenset(port + mqsd) or base.mqsd, frozenset(port + mqqb) or base.mqqb)


def print_summary(summary: Any, what: str, found: int, ports: Any) -> None:
    """A capture's summary on stderr, each line ``mqspec: ...``; a hint when nothing was found on its ports."""
    lines = summary.lines(what)
    if found == 0 and summary.skipped.get("other port"):
        lines.append(f"nothing on the ports looked at ({ports.describe()}): a server on another port? "
                     "give --port (or \"ports\" in the topology)")
    for line in lines:
        click.echo(f"mqspec: {line}", err=True)


_ROLE = re.compile(r":(?:class|mod|func|meth|attr|data|exc|obj|doc|ref):`~?([^`<]+?)(?: <[^>]+>)?`")
_LITERAL = re.compile(r"``([^`]+)``")


def plain(text: str) -> str:
    """Text written for Sphinx as a terminal shows it: ``:class:`X``` becomes X, a ````literal```` `literal`."""
    return _LITERAL.sub(r"`\1`", _ROLE.sub(r"\1", text))
