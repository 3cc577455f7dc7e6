"""The ``mqspec`` command line, one module per command group; nothing below it imports it."""

from mqspec.cli.main import main

__all__ = ["main"]
