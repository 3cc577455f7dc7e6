"""The exit statuses of every ``mqspec`` command: one table, shown in the README, ``mqspec --help`` and each
command's ``--help``.

The statuses mean the same in every command: 0 the command did what was asked and found nothing wrong;
1 it ran and found something wrong; 2 bad input or usage (one line on stderr naming where and why);
3 it ran but checked nothing; 4 it judged a capture only up to its holes; 5 and 6 are the Spark
pipeline's: its executors cannot run this mqspec, or a Spark job failed. ``tests/test_exit_codes.py``
makes each command end with each status it lists, and holds the README's copy of the table to this one.
"""

from __future__ import annotations

import click

#: what each status means, whichever command returns it
MEANING = {
    0: "success: done, and nothing wrong found",
    1: "something wrong found: a divergence, a violated invariant or expectation, a failing vector, "
       "a non-conforming server, no valid server list, a server thread that ended",
    2: "bad input or usage, or a network error: one line on stderr naming where and why",
    3: "nothing checked: no event of a trace could be replayed or compared (no evidence of conformance)",
    4: "an incomplete capture: no divergence, but the capture has holes past which nothing was judged",
    5: "the Spark executors cannot run this mqspec (the pre-flight check before a job): one line on what is "
       "missing and how to ship it",
    6: "a Spark job failed (an input the executors cannot read, an executor lost, an output folder they do not "
       "share): one line",
}

#: per command (as typed after ``mqspec``), what each status it can end with means for it
BY_COMMAND: dict[str, dict[int, str]] = {
    "decode": {0: "decoded", 1: "--pcap: no message of the capture decoded (the summary says why)",
               2: "bytes that do not decode, bad hex, an unreadable file or capture"},
    "encode": {0: "encoded", 2: "bad JSON, or a message that cannot be encoded"},
    "errata": {0: "printed", 2: "an id the register does not hold"},
    "clauses": {0: "printed"},
    "demo": {0: "the main job ran: no violation, every trace conformant, the counts reconcile",
             1: "a violation, a divergent or quarantined trace, or counts that do not reconcile",
             2: "the output folder holds files the demo did not write"},
    "scenario run": {0: "every expectation held (and, with --invariants, every invariant)",
                     1: "an expectation or an invariant failed", 2: "not a valid scenario file, or a limit passed"},
    "scenario vocabulary": {0: "printed"},
    "check": {0: "every trace conformant", 1: "a trace diverged",
              2: "a malformed trace, or an event the reference cannot take",
              3: "nothing diverged, but a trace had nothing to check",
              4: "nothing diverged, but a capture's trace has holes"},
    "trace from-pcap": {0: "the trace was written", 2: "a bad capture, topology or option"},
    "trace record": {0: "the trace was written", 2: "not a valid scenario file, or an unwritable output"},
    "trace schema": {0: "printed"},
    "vectors": {0: "written (with --check: every case passed)", 1: "--check: a failing case or a stale file",
                2: "bad options, or an output folder holding something else"},
    "mqsd serve": {0: "stopped by SIGTERM or SIGINT", 1: "the server thread terminated (3.2.5)",
                   2: "bad options, or a socket that cannot be opened"},
    "mqsd discover": {0: "a valid server list, or a reply from the client's own site",
                      1: "no valid list obtained", 2: "bad options, or a network error"},
    "mqsd probe": {0: "every case conforms", 1: "a case diverges", 2: "bad options, or a network error"},
    "pipeline explore": {0: "no violation", 1: "violations", 2: "bad options, or an output folder of another campaign",
                         5: "the executors cannot run this mqspec", 6: "a Spark job failed"},
    "pipeline check": {0: "every input conformant", 1: "an input diverged",
                       2: "bad options, or an input quarantined as malformed",
                       3: "nothing diverged, but an input had nothing to check",
                       4: "nothing diverged, but a capture has holes",
                       5: "the executors cannot run this mqspec", 6: "a Spark job failed"},
    "pipeline pack-env": {0: "the archive was written", 2: "a distribution missing here, or an unwritable output"},
    "pipeline report": {0: "written", 2: "bad options, or a folder without pipeline output"},
    "prove": {0: "every obligation proved, no handler departing from the model",
              1: "an obligation violated or unknown, or a handler run departing from the model", 2: "an unknown handler"},
}

CODES = tuple(MEANING)


def row(command: str) -> str:
    """One command's statuses as its --help ends: ``Exit status: 0 ...; 1 ...``."""
    return "Exit status: " + "; ".join(f"{code} {text}" for code, text in BY_COMMAND[command].items()) + "."


def overview() -> str:
    """What ``mqspec --help`` ends with: what each status means (each command's --help gives its own)."""
    import textwrap

    lines = ["Exit status (the same meaning in every command; each command's --help", "says what it returns):"]
    for code, text in MEANING.items():
        lines += textwrap.wrap(text, 76, initial_indent=f"  {code}  ", subsequent_indent="     ")
    return "\n".join(lines)


def markdown() -> str:
    """The table as the README shows it: one row per command, one column per status."""
    head = "| command | " + " | ".join(str(c) for c in CODES) + " |"
    rule = "|---|" + "---|" * len(CODES)
    rows = [f"| `{command}` | " + " | ".join(statuses.get(c, "") for c in CODES) + " |"
            for command, statuses in BY_COMMAND.items()]
    return "\n".join([head, rule, *rows])


def attach(group: click.Group, prefix: str = "") -> None:
    """Give every command under ``group`` its row as the end of its --help (a command without one is an error)."""
    for name, command in group.commands.items():
        path = f"{prefix}{name}"
        if isinstance(command, click.Group):
            attach(command, f"{path} ")
            continue
        if path not in BY_COMMAND:
            raise KeyError(f"mqspec {path} has no row in mqspec/cli/exits.py")
        # a command's own epilog (scenario run's pointer to the vocabulary) stays, the row after it
        command.epilog = f"{command.epilog}\n\n{row(path)}" if command.epilog else row(path)
