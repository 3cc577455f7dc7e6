"""``mqspec prove``: check every proof obligation of the MC-MQDSRP invariants in one mode.

Prints one line per obligation (or, with ``--json``, a JSON list of ``{"name", "invariant",
"handler", "mode", "kind", "family", "servers", "status", "trivial", "vacuous", "seconds",
"counterexample"}``) and, for every violated obligation, its counterexample trace, then the
obligations by kind and family: those proved with work, and apart from them the trivial ones
(the goal holds without the transition) and the vacuous ones (contradictory assumptions), which
are not counted as proved (:mod:`mqspec.proofs.accounting`), and the assumptions no obligation proves
(:mod:`mqspec.proofs.enterprise.assumptions`). Exit status: 0 when every obligation of the mode is
proved, 1 when one is violated or unknown (``unknown`` is never proved).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from mqspec.cli.common import emit


@click.command()
@click.option("--mode", type=click.Choice(["clarified", "literal"]), default="clarified", show_default=True,
              help="Prove the clarified reading, or find where the literal text breaks the invariants.")
@click.option("--json", "as_json", is_flag=True, help="Print every obligation as JSON.")
@click.option("--jobs", type=click.IntRange(1, 64), default=2, show_default=True, help="Processes to use.")
@click.option("--no-bmc", is_flag=True, help="Skip bounded model checking on the simulator (Z3 obligations only).")
@click.option("--handler", "handlers", multiple=True, metavar="NAME",
              help="Check the consecution obligations of these handlers only, per server and in the enterprise model "
                   "(repeatable; e.g. receive_sync_reply).")
@click.option("--kind", "kinds", multiple=True,
              type=click.Choice(["lemma", "initiation", "consecution", "enterprise-initiation",
                                 "enterprise-consecution", "bounded"]),
              help="Check the obligations of these kinds only (repeatable; default: every kind).")
@click.option("--scenarios", "scenario_dir", type=click.Path(file_okay=False), metavar="DIR",
              help="Write the counterexample scenario file of every violated obligation into DIR.")
def prove(mode: str, as_json: bool, jobs: int, no_bmc: bool, handlers: tuple[str, ...], kinds: tuple[str, ...],
          scenario_dir: str | None) -> None:
    """Prove the invariants (2.2.2 lemmas; per server: initiation, consecution per handler; the enterprise model
    for any number of servers: initiation, consecution per transition; bounded model checking)."""
    from mqspec.proofs import obligations
    from mqspec.proofs.enterprise.assumptions import not_proved
    from mqspec.proofs.enterprise.transitions import BY_TRANSITION
    from mqspec.proofs.z3_events import EVENTS_BY_NAME

    known = list(EVENTS_BY_NAME) + [t for t in BY_TRANSITION if t not in EVENTS_BY_NAME]
    unknown = [h for h in handlers if h not in known]
    if unknown:
        click.echo(f"mqspec: usage: unknown handler {unknown[0]!r} (known: {', '.join(known)})", err=True)
        sys.exit(2)
    started = time.perf_counter()
    results = obligations.run(mode, jobs=jobs, bmc=not no_bmc, events=handlers or None,
                              kinds=kinds or obligations.ALL_KINDS)
    elapsed = time.perf_counter() - started
    if scenario_dir is not None:
        from mqspec.proofs.counterexample_scenarios import (
            LITERAL_SCENARIOS,
            write_bmc_scenario,
            write_literal_scenario,
        )

        for r in results:
            if r.status != "violated" or not r.counterexample:
                continue
            if r.obligation.kind == "bounded":
                r.counterexample["scenario_file"] = str(write_bmc_scenario(r, Path(scenario_dir)))
            elif r.obligation.name in LITERAL_SCENARIOS and mode == "literal":
                r.counterexample["scenario_file"] = str(write_literal_scenario(r, Path(scenario_dir)))
    if as_json:
        emit([r.to_json() for r in results])
    else:
        for r in results:
            note = " (vacuous)" if r.vacuous else " (trivial)" if r.trivial else ""
            click.echo(f"{r.status:8} {r.seconds:7.2f}s  {r.obligation.name}{note}")
        for r in results:
            if r.status != "proved" and r.counterexample and r.counterexample.get("trace"):
                click.echo("")
                click.echo(r.counterexample["trace"])
        from mqspec.proofs.accounting import table

        counts = obligations.summary(results)
        click.echo("")
        for line in table(results):
            click.echo(line)
        click.echo(f"{mode}: {counts['proved']} proved, {counts['violated']} violated, {counts['unknown']} unknown; "
                   f"not counted: {counts['trivial']} trivial, {counts['vacuous']} vacuous; in {elapsed:.1f} s")
        listed = not_proved()
        click.echo(f"assumed, not proved ({len(listed)}; see mqspec.proofs.enterprise.assumptions):")
        for name, statement in listed:
            click.echo(f"  {name}: {statement}")
    sys.exit(0 if all(r.status == "proved" for r in results) else 1)
