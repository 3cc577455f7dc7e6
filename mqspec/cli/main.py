"""The ``mqspec`` command: the group every command hangs from.

Each command group lives in its own module of this package (``codec``, ``registry``, ``check``,
``scenario``, ``mqsd``, ``vectors``, ``pipeline``, ``prove``); none of them imports this one. A usage
error anywhere is one ``mqspec: usage: ...`` line on stderr and exit status 2.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from mqspec import __version__
from mqspec.cli.check import check, trace
from mqspec.cli.codec import decode, encode
from mqspec.cli import exits
from mqspec.cli.common import fail
from mqspec.cli.mqsd import mqsd
from mqspec.cli.mqsd_probe import probe
from mqspec.cli.pipeline import pipeline
from mqspec.cli.prove import prove
from mqspec.cli.registry import clauses, demo, errata
from mqspec.cli.scenario import scenario
from mqspec.cli.vectors import vectors

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


@click.group(cls=OneLineUsage, context_settings={"help_option_names": ["-h", "--help"]},
             epilog="\b\n" + exits.overview())
@click.version_option(__version__, prog_name="mqspec")
def main() -> None:
    """Executable reference specification and conformance oracle for the MSMQ directory protocols."""



for command in (decode, encode, errata, clauses, demo, scenario, mqsd, vectors, check, pipeline, trace, prove):
    main.add_command(command)
mqsd.add_command(probe)
exits.attach(main)


if __name__ == "__main__":  # pragma: no cover
    main()
