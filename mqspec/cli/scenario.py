"""``mqspec scenario run``: run a scenario file on the simulated enterprise.

Exit status: 0 when the run finished and every ``expect`` held, 1 when an expectation (or a
step's expected status) failed, 2 for a file that is not a valid scenario (one stderr line).
"""

from __future__ import annotations

import contextlib
import inspect
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import click

from mqspec.cli.common import emit, fail, plain
from mqspec.wording import plural

from mqspec.refimpl.effects import Mode




@click.group()
def scenario() -> None:
    """Run scenario files (the examples of MC-MQDSRP section 4, counterexamples, workloads)."""


#: where ``run --help`` points for the scenario language
VOCABULARY_HINT = ("The scenario language (enterprise, steps, faults, assertions): `mqspec scenario "
                   "vocabulary`, or the docs page 'Scenario files' (docs/scenarios.rst).")


@scenario.command()
def vocabulary() -> None:
    """Print the scenario language: the enterprise, every step and every assertion."""
    from mqspec.refimpl import scenario as sc

    click.echo(plain(inspect.cleandoc(sc.__doc__ or "")))


@scenario.command(epilog=VOCABULARY_HINT)
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--mode", type=click.Choice([m.value for m in Mode]), default=Mode.CLARIFIED.value,
              show_default=True, help="Run the clarified reading or the literal text.")
@click.option("--seed", type=int, default=0, show_default=True, help="The simulator's seed.")
@click.option("--trace", "trace_path", type=click.Path(dir_okay=False), metavar="OUT.ndjson",
              help="Write every trace record as one JSON line.")
@click.option("--json", "as_json", is_flag=True, help="Print the result and every node's state as JSON.")
@click.option("--invariants", "check_invariants", is_flag=True,
              help="Also check every invariant (mqspec.proofs.invariants) after every step.")
def run(file: str, mode: str, seed: int, trace_path: str | None, as_json: bool, check_invariants: bool) -> None:
    """Build the scenario's enterprise, run its steps, check its expectations.

    With --invariants, the first violation of each invariant is reported too (and makes the exit
    status 1): the step after which it failed and what it found.
    """
    from mqspec.refimpl import scenario as sc
    from mqspec.refimpl.scenario_run import run as run_scenario
    from mqspec.refimpl.scenario_run import trace_id

    try:
        parsed = sc.load(file)
    except sc.ScenarioError as exc:
        fail("scenario error", f"{file}: {exc}")
    run_mode = Mode(mode)
    watch = None
    if check_invariants:
        from mqspec.proofs.scenario_watch import InvariantWatch

        watch = InvariantWatch()
    with contextlib.ExitStack() as stack:
        stack.enter_context(_scenario_errors(file))
        if trace_path is None:
            result = run_scenario(parsed, mode=run_mode, seed=seed, trace=watch.record if watch else None,
                                  attach=watch.attach if watch else None)
        else:
            try:
                out = stack.enter_context(Path(trace_path).open("w", encoding="utf-8"))
            except OSError as exc:
                fail("error", f"{trace_path}: {exc.strerror}")
            # the published trace format (mqspec/oracle/trace_format.py), which mqspec check reads
            from mqspec.oracle.record import record_scenario

            result = record_scenario(parsed, mode=run_mode, seed=seed, trace_id=trace_id(parsed.name, run_mode, seed),
                                     write=out.write, watch=watch)
    violated = watch.finish() if watch is not None else []
    if as_json:
        data = result.to_json()
        if watch is not None:
            data["invariants"] = {"checks": watch.checks, "quiescent_checks": watch.quiescent_checks,
                                  "violations": violated}
        emit(data)
    else:
        _summary(result)
        if watch is not None:
            click.echo(f"invariants: {plural(watch.checks, 'check')} ({watch.quiescent_checks} at quiescence), "
                       + (f"{len(violated)} violated" if violated else "every invariant held"))
    for failure in result.failures:
        click.echo(f"mqspec: expectation failed: {file}: {failure}", err=True)
    for v in violated:
        more = f" (and {len(v['problems']) - 1} more)" if len(v["problems"]) > 1 else ""
        click.echo(f"mqspec: invariant violated: {file}: after {v['step']}: {v['invariant']}: "
                   f"{v['problems'][0]}{more}", err=True)
    sys.exit(1 if result.failures or violated else 0)


@contextlib.contextmanager
def _scenario_errors(file: str) -> Iterator[None]:
    """A run stopped at a limit of the scenario vocabulary is bad input: one line, exit 2."""
    from mqspec.refimpl.scenario import ScenarioError

    try:
        yield
    except ScenarioError as exc:
        fail("scenario error", f"{file}: {exc}")


def _summary(result: Any) -> None:
    """A short table: each node's partitions, objects and tombstones, then the outcome."""
    from rich.console import Console
    from rich.table import Table

    world = result.world
    site_names = {str(guid): name for name, guid in world.sites.items()}
    site_names["00000000-0000-0000-0000-000000000000"] = "enterprise"
    table = Table(title=f"{result.scenario.name} ({result.mode.value}, seed {result.seed})")
    for col in ("node", "role", "up", "partitions: last/purged state", "objects", "tombstones"):
        table.add_column(col)
    for name, node in world.snapshot().items():
        parts = [
            f"{site_names.get(pid, pid[:8])}: {p['last_seq']}/{p['purged_seq']}"
            + ("" if p["purge_state"] == "NORMAL" else f" {p['purge_state']}")
            for pid, p in node["partitions"].items()
        ]
        objects = sum(len(p["objects"]) for p in node["partitions"].values())
        table.add_row(name, node["role"], "yes" if world.up[name] else "no", ", ".join(parts), str(objects),
                      str(len(node["deleted_objects"])))
    console = Console()
    console.print(table)
    problems = result.problems
    verdict = "converged" if not problems else f"NOT converged ({plural(len(problems), 'problem')})"
    console.print(f"{verdict}; {world.now:.0f} simulated seconds, {plural(world.messages_processed, 'message')}")
    for line in problems[:5]:
        # partitions named as the table names them; a line longer than the terminal is never broken mid-GUID
        click.echo(f"  {named_partitions(line, site_names)}")
    if len(problems) > 5:
        click.echo(f"  ... {len(problems) - 5} more")


def named_partitions(text: str, names: dict[str, str]) -> str:
    """``text`` with each ``partition <GUID>`` written as the summary table writes it (``partition site1``)."""
    import re

    return re.sub(r"\bpartition ([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b",
                  lambda m: f"partition {names.get(m.group(1), m.group(1))}", text)
