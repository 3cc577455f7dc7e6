"""``mqspec vectors --out DIR``: write the versioned, language-neutral test vectors.

Exit status: 0 when the tree was written (and, with ``--check``, every case passed mqspec's own
runner with no file left unread), 1 when the check found a failing case or a stale file, 2 for
bad options or an output directory that holds something else (one stderr line).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NoReturn

import click

from mqspec.cli.common import emit, fail
from mqspec.wording import plural




def _progress(line: str) -> None:
    click.echo(f"mqspec vectors: {line}", err=True)


def _note_skipped(folder: Path) -> None:
    """Say which scenario files of ``folder`` make no vectors (only the sources the vectors README names do)."""
    from mqspec.vectors.scenarios import scenario_files

    try:
        used = {path.resolve() for _source, path in scenario_files(folder)}
    except FileNotFoundError:
        return
    skipped = sorted(p for suffix in ("*.yaml", "*.yml", "*.json") for p in folder.rglob(suffix)
                     if p.resolve() not in used)
    for path in skipped:
        click.echo(f"mqspec: note: {path} is skipped: scenario vectors are made of 4.*.yaml (examples), "
                   "e<NNN>-*.yaml and counterexamples/*.yaml (counterexamples)", err=True)


def _kinds(text: str) -> tuple[str, ...]:
    from mqspec.vectors.manifest import KINDS

    chosen = tuple(k.strip() for k in text.split(",") if k.strip())
    unknown = [k for k in chosen if k not in KINDS]
    if unknown or not chosen:
        fail("usage", f"--kinds takes a comma-separated list of {', '.join(KINDS)}, not {text!r}")
    return chosen


@click.command()
@click.option("--out", "out", required=True, type=click.Path(file_okay=False), metavar="DIR",
              help="Where to write the tree (new, empty, or an earlier vectors tree: the files it generated "
                   "are replaced, any other file is left in place).")
@click.option("--kinds", default="codec,handler,scenario", show_default=True, metavar="LIST",
              help="Which kinds of vectors: codec, handler, scenario.")
@click.option("--reduced", is_flag=True, help="The fast subset: fewer random codec cases and scenario runs.")
@click.option("--scenarios", "scenario_dir", type=click.Path(file_okay=False, exists=True), metavar="DIR",
              help="The folder of scenario files (default: the repository's scenarios/).")
@click.option("--check", is_flag=True, help="Then run mqspec's vector runner over the tree.")
@click.option("--check-only", is_flag=True, help="Do not generate: only run the runner over the tree in DIR.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the result as one JSON object: what was written (cases, counts, files left in place) "
                   "and, with --check, what was checked (passed, failures, stale files).")
def vectors(out: str, kinds: str, reduced: bool, scenario_dir: str | None, check: bool, check_only: bool,
            as_json: bool) -> None:
    """Write test vectors: codec bytes, MC-MQDSRP handler runs and scenario traces, one directory per case.

    The full set takes about a minute and writes about half a gigabyte (most of it scenario
    traces); --reduced writes a fast subset (about 18 MB). Progress goes to stderr. Write the
    tree outside your checkout, or under out/ (which git ignores).
    """
    from mqspec.refimpl.scenario import ScenarioError
    from mqspec.vectors.runner import run_all
    from mqspec.vectors.writer import OutputError, generate

    chosen = _kinds(kinds)
    result: dict[str, object] = {"out": out}
    if not check_only:
        if scenario_dir is not None and "scenario" in chosen:
            _note_skipped(Path(scenario_dir))
        kept: list[Path] = []
        try:
            index = generate(out, chosen, reduced=reduced, scenarios=Path(scenario_dir) if scenario_dir else None,
                             progress=_progress, kept=kept)
        except OutputError as exc:
            fail("error", str(exc))
        except OSError as exc:
            fail("error", f"{exc.filename or out}: {exc.strerror}")
        except ScenarioError as exc:
            fail("scenario error", str(exc))
        if kept:
            shown = ", ".join(str(p) for p in kept[:3]) + (", ..." if len(kept) > 3 else "")
            click.echo(f"mqspec: note: left {plural(len(kept), 'file')} in {out} that mqspec did not write: {shown}",
                       err=True)
        counted = {k: n for k, n in index["counts"].items() if k in chosen}
        result["written"] = {"cases": len(index["cases"]), "counts": counted, "kept": [str(p) for p in kept]}
        if not as_json:
            counts = ", ".join(plural(n, k) for k, n in counted.items())
            click.echo(f"wrote {plural(len(index['cases']), 'case')} ({counts}) to {out}")
    if not (check or check_only):
        if as_json:
            emit(result)
        return
    if not Path(out).is_dir():
        fail("error", f"{out}: no such directory")
    report = run_all(out, kinds=chosen)
    for failure in report.failures[:20]:
        click.echo(f"mqspec: vector failed: {failure}", err=True)
    stale = report.stale_files()
    for path in stale[:20]:
        click.echo(f"mqspec: stale file (no check reads it): {path}", err=True)
    if as_json:
        result["checked"] = report.to_json()
        emit(result)
    else:
        click.echo(f"checked {plural(report.cases, 'case')}: {report.passed} passed, "
                   f"{plural(len(report.failures), 'failure')}, {plural(len(stale), 'stale file')}")
    sys.exit(0 if report.ok else 1)
