"""What every command of the ``mqspec`` command line shares: the one-line failure and the JSON printer.

Bad input (bytes, JSON, files) ends with one line on stderr and exit status 2, never a traceback.
Every ``--json`` report is printed by :func:`emit`, through the 64-bit-safe writer
(:mod:`mqspec.json64`): no integer beyond 2**53 reaches a reader as a JSON number.
"""

from __future__ import annotations

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
