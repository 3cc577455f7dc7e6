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
@click.option("--profile", type=click.Choice(["default", "soak"]), default="default", show_default=True,
              help="The refinement campaign's seeds and run lengths (soak: longer).")
@click.option("--no-refinement", is_flag=True,
              help="Skip the refinement campaign (every handler run of the explorer checked against the model).")
@click.option("--refinement-only", is_flag=True, help="Run the refinement campaign alone (no obligation).")
def prove(mode: str, as_json: bool, jobs: int, no_bmc: bool, handlers: tuple[str, ...], kinds: tuple[str, ...],
          scenario_dir: str | None, profile: str, no_refinement: bool, refinement_only: bool) -> None:
    """Prove the invariants (2.2.2 lemmas; per server: initiation, consecution per handler; the enterprise model
    for any number of servers: initiation, consecution per transition; bounded model checking) and check the
    reference against the model on the states the explorer reaches (refinement, both modes)."""
    from mqspec.proofs import obligations, refinement
    from mqspec.proofs.pool import processes
    from mqspec.proofs.enterprise.assumptions import not_proved
    from mqspec.proofs.enterprise.transitions import BY_TRANSITION
    from mqspec.proofs.z3_events import EVENTS_BY_NAME

    known = list(EVENTS_BY_NAME) + [t for t in BY_TRANSITION if t not in EVENTS_BY_NAME]
    unknown = [h for h in handlers if h not in known]
    if unknown:
        click.echo(f"mqspec: usage: unknown handler {unknown[0]!r} (known: {', '.join(known)})", err=True)
        sys.exit(2)
    if no_refinement and refinement_only:
        click.echo("mqspec: usage: --no-refinement and --refinement-only exclude each other", err=True)
        sys.exit(2)
    started = time.perf_counter()
    # one pool for everything: the longest obligations first, then the campaign's runs, then the other
    # obligations around them, so that both processes are busy until the end
    refining: list = []

    def campaign(pool) -> None:
        # --handler and --kind ask for some obligations, nothing else
        if not (no_refinement or handlers or kinds):
            refining.append(refinement.start(pool, profile, log=None if as_json else
                                             (lambda line: click.echo(line, err=True))))

    with processes(jobs) as pool:
        if refinement_only:
            results = []
            campaign(pool)
        else:
            results = obligations.run(mode, jobs=jobs, bmc=not no_bmc, events=handlers or None,
                                      kinds=kinds or obligations.ALL_KINDS, pool=pool, then=campaign)
        refined = refining[0]() if refining else []
    elapsed = time.perf_counter() - started
    if scenario_dir is not None:
        from mqspec.proofs.counterexample_scenarios import (
            LITERAL_SCENARIOS,
            write_bmc_scenario,
            write_literal_scenario,
        )

        for r in refined:
            if r.status == "violated" and r.counterexample and r.counterexample.get("scenario"):
                path = Path(scenario_dir) / f"refinement-{r.obligation.mode}-{r.obligation.handler}.yaml"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(r.counterexample["scenario"], encoding="utf-8")
                r.counterexample["scenario_file"] = str(path)
        for r in results:
            if r.status != "violated" or not r.counterexample:
                continue
            if r.obligation.kind == "bounded":
                r.counterexample["scenario_file"] = str(write_bmc_scenario(r, Path(scenario_dir)))
            elif r.obligation.name in LITERAL_SCENARIOS and mode == "literal":
                r.counterexample["scenario_file"] = str(write_literal_scenario(r, Path(scenario_dir)))
    if as_json:
        emit([r.to_json() for r in results + refined])
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
        if results:
            click.echo(f"{mode}: {counts['proved']} proved, {counts['violated']} violated, {counts['unknown']} "
                       f"unknown; not counted: {counts['trivial']} trivial, {counts['vacuous']} vacuous")
            listed = not_proved()
            click.echo(f"assumed, not proved ({len(listed)}; see mqspec.proofs.enterprise.assumptions):")
            for name, statement in listed:
                click.echo(f"  {name}: {statement}")
        if refined:
            _print_refinement(refined)
        click.echo(f"in {elapsed:.1f} s")
    # a departure fails; a handler or branch the campaign never reached is a gap it prints, not a failure
    ok = all(r.status == "proved" for r in results) and not any(r.status == "violated" for r in refined)
    sys.exit(0 if ok else 1)


def _print_refinement(rows: list) -> None:
    """One line per handler and mode (status, states checked, branches reached), the departures, what is left out;
    then the enterprise invariants on the projected states."""
    from mqspec.proofs.refinement.exemptions import lines
    from mqspec.wording import plural

    whole = [r for r in rows if r.obligation.name.startswith("enterprise-")]
    rows = [r for r in rows if not r.obligation.name.startswith("enterprise-")]
    click.echo("")
    click.echo(f"{'refinement':44} {'mode':9} {'status':10} {'states':>7} {'branches':>9}")
    for r in rows:
        d = r.detail or {}
        click.echo(f"{r.obligation.handler + ' ' + d.get('section', ''):44} {r.obligation.mode:9} {r.status:10} "
                   f"{d.get('states', ''):>7} {str(d.get('branches_reached', '')) + '/' + str(d.get('branches', '')):>9}")
    for r in rows:
        if r.status == "violated" and r.counterexample:
            click.echo("")
            click.echo(r.counterexample["trace"])
            if r.counterexample.get("scenario_file"):
                click.echo(f"    scenario: {r.counterexample['scenario_file']}")
        elif r.status == "incomplete":
            missed = (r.detail or {}).get("missed", [])
            click.echo(f"\n{r.obligation.handler}: the campaign missed {plural(len(missed), 'branch', 'branches')} "
                       "the model covers (not checked):")
            for b in missed:
                click.echo(f"    {b}")
    unreached = [r for r in rows if r.status == "unreached"]
    if unreached:
        click.echo("\nthe campaign never ran (not checked): " + ", ".join(
            f"{r.obligation.handler} ({r.obligation.mode})" for r in unreached))
    by = {s: sum(r.status == s for r in rows) for s in ("refined", "violated", "unreached", "incomplete")}
    steps = sum((r.detail or {}).get("steps", 0) for r in rows if r.obligation.name.startswith("refinement-branches"))
    click.echo(f"refinement: {by['refined']} refined, {by['violated']} violated, {by['unreached']} unreached, "
               f"{by['incomplete']} incomplete, over {plural(steps, 'checked step')} in both modes")
    for line in lines():
        click.echo(line)
    if whole:
        _print_enterprise(whole)


def _print_enterprise(rows: list) -> None:
    """The enterprise model's invariants on the scenario files' projected states (a step invariant: on their handler
    runs): one line each."""
    from mqspec.proofs.refinement.enterprise import exemption_lines
    from mqspec.wording import plural

    click.echo("")
    click.echo(f"{'enterprise invariant on projected states (step: runs)':60} {'mode':9} {'status':10} {'states':>7}")
    for r in rows:
        states = (r.detail or {}).get("states", "")
        click.echo(f"{r.obligation.invariant:60} {r.obligation.mode:9} {r.status:10} {states:>7}")
    for r in rows:
        if r.status == "violated" and r.counterexample:
            click.echo("")
            click.echo(r.counterexample["trace"])
    state = [r for r in rows if (r.detail or {}).get("kind") != "step"]
    step = [r for r in rows if (r.detail or {}).get("kind") == "step"]
    d = state[0].detail or {}
    runs = (step[0].detail or {}) if step else {}
    click.echo(f"enterprise: {sum(r.status == 'refined' for r in state)} of {len(state)} state invariants hold on "
               f"{plural(d.get('states', 0), 'state')} of {plural(d.get('scenario_files', 0), 'scenario file')} "
               f"(clarified); {sum(r.status == 'refined' for r in step)} of {len(step)} step invariants on "
               f"{plural(runs.get('states', 0), 'handler run')} ({runs.get('runs_unchanged', 0)} more changed nothing "
               "they read)")
    for line in exemption_lines():
        click.echo(line)
