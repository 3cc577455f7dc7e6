"""What every command of the ``mqspec`` command line shares: the one-line failure and the JSON printer.

Bad input (bytes, JSON, files) ends with one line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

import click


def fail(kind: str, text: str) -> NoReturn:
    """Print one line ``mqspec: <kind>: <text>`` to stderr and exit with status 2."""
    click.echo(f"mqspec: {kind}: {text}", err=True)
    sys.exit(2)


def emit(obj: Any) -> None:
    click.echo(json.dumps(obj, indent=2))
