"""``mqspec pipeline``: exploration campaigns and conformance checking at scale on Spark, and their report.

The jobs run on embedded local Spark (``local[*]``) unless ``--master`` or ``MQSPEC_SPARK_MASTER``
names a standalone cluster (``spark://HOST:PORT``) or a Spark Connect server (``sc://HOST:PORT``);
see :mod:`mqspec.pipeline.session`. Exit status: 0 clean, 1 a violation / a divergent or
quarantined input, 2 a usage error.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from mqspec.cli.common import emit, fail

#: the file that marks a folder as written by mqspec pipeline (it may then be overwritten)
MARKER = ".mqspec-pipeline"


def _fail(text: str) -> NoReturn:
    fail("usage", text)


def _claim(out: Path, what: str) -> None:
    """Refuse an output folder that holds anything not written by ``mqspec pipeline`` (nothing is deleted)."""
    if any(c in str(out.resolve()) for c in "[]*?{}"):
        _fail(f"--out {out}: Spark reads a path as a glob pattern: choose one without [ ] * ? {{ }}")
    if out.exists() and not out.is_dir():
        _fail(f"--out {out}: is a file, not a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).exists():
        _fail(f"--out {out}: the folder holds files mqspec pipeline did not write; choose an empty or new folder")
    out.mkdir(parents=True, exist_ok=True)
    (out / MARKER).write_text(f"{what}\n", encoding="utf-8")


def _session(master: str | None, event_log: str | None) -> tuple[Any, str]:
    from mqspec.pipeline.session import SessionError, master_url, session

    try:
        url = master_url(master)
        return session(url, event_log=event_log), url
    except SessionError as exc:
        _fail(str(exc))


def _print(summary: dict[str, Any], as_json: bool, keys: tuple[str, ...]) -> None:
    if as_json:
        emit(summary, sort_keys=True)
    else:
        width = max(len(k) for k in keys)
        for key in keys:
            if key in summary:
                click.echo(f"{key:<{width}}  {summary[key]}")


@click.group()
def pipeline() -> None:
    """Exploration campaigns and conformance checking at scale (Spark), and their report."""


_master = click.option("--master", metavar="URL", help="local[*] (default), local[N], spark://HOST:PORT or "
                       "sc://HOST:PORT (default: $MQSPEC_SPARK_MASTER, else local[*]).")
_event_log = click.option("--event-log", metavar="DIR", help="Write Spark's event log into DIR.")


@pipeline.command()
@click.option("--runs", type=click.IntRange(1, 10**9), required=True, help="How many runs (numbered 0..N-1).")
@click.option("--seed", type=click.IntRange(0, 2**63 - 1), default=0, show_default=True,
              help="The campaign seed; run i explores from a seed derived from (seed, i).")
@click.option("--mode", type=click.Choice(["clarified", "literal"]), default="clarified", show_default=True)
@click.option("--reading", metavar="HANDLER[,HANDLER...]", default="",
              help="Read the text literally inside these MC-MQDSRP handlers only (clarified mode elsewhere).")
@click.option("--profile", type=click.Choice(["ci", "soak"]), default="ci", show_default=True,
              help="Run length and rule frequencies of the state machine.")
@click.option("--traces", is_flag=True, help="Also keep each run's trace (published NDJSON format) under DIR/traces.")
@click.option("--shrink-seconds", type=click.FloatRange(0.1, 3600), default=60.0, show_default=True,
              help="CPU-time budget for shrinking one violation (a safety net: see --shrink-replays).")
@click.option("--shrink-replays", type=click.IntRange(1, 100_000), default=400, show_default=True,
              help="Replays allowed for shrinking one violation (bounds it deterministically).")
@click.option("--wave", type=click.IntRange(1, 1_000_000), default=64, show_default=True,
              help="Runs per Spark job: progress is reported, and a resumed campaign restarts, per wave.")
@click.option("--out", type=click.Path(file_okay=False), default="out/explore", show_default=True, metavar="DIR")
@_master
@_event_log
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
def explore(runs: int, seed: int, mode: str, reading: str, profile: str, traces: bool, shrink_seconds: float,
            shrink_replays: int, wave: int, out: str, master: str | None, event_log: str | None,
            as_json: bool) -> None:
    """Run N generated runs of the replication state machine as Spark tasks, every invariant checked.

    Writes Parquet datasets under DIR: runs/, violations/ (each shrunk to a scenario file under
    counterexamples/), coverage/, and with --traces each run's trace under traces/. Re-running with
    the same --out resumes: stored runs are skipped. Exit status 0: no violation; 1: violations.
    """
    from mqspec.pipeline.explore import CampaignMismatch
    from mqspec.pipeline.explore import explore as run_campaign
    from mqspec.pipeline.runs import Campaign
    from mqspec.proofs.explore.run import check_arguments
    from mqspec.refimpl.effects import Mode

    handlers = tuple(h.strip() for h in reading.split(",") if h.strip())
    try:
        check_arguments(profile, Mode(mode), handlers)
    except ValueError as exc:
        _fail(str(exc))
    target = Path(out)
    _claim(target, "explore")
    campaign = Campaign(runs=runs, seed=seed, mode=mode, reading=handlers, profile=profile, traces=traces,
                        shrink_seconds=shrink_seconds, shrink_replays=shrink_replays)
    spark, url = _session(master, event_log)
    try:
        summary = run_campaign(spark, campaign, target, master=url, wave=wave)
    except CampaignMismatch as exc:
        _fail(str(exc))
    _print(summary, as_json, ("runs", "steps", "violations", "counterexamples", "converged", "seconds", "out"))
    sys.exit(1 if summary["violations"] else 0)


@pipeline.command()
@click.argument("inputs", nargs=-1, required=True, type=click.Path(), metavar="INPUT...")
@click.option("--out", type=click.Path(file_okay=False), default="out/check", show_default=True, metavar="DIR")
@_master
@_event_log
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
def check(inputs: tuple[str, ...], out: str, master: str | None, event_log: str | None, as_json: bool) -> None:
    """Judge traces (*.ndjson) and captures (*.pcap, *.pcapng, *.cap, *.pcap.gz) with the checker of `mqspec check`.

    INPUT: files, or folders searched recursively (every other file found is counted and named as
    skipped). A capture is converted as `mqspec trace from-pcap` converts it, with
    CAPTURE.topology.json beside it as its topology. Writes verdicts/ (a capture's row with its
    frames, messages, frames skipped by reason and holes), divergences/, coverage/, messages/ and
    quarantine/ under DIR; inputs = verdict rows + quarantine rows. Exit status 0: every input
    conformant; 1: one diverged, was incomplete (a capture with holes) or was quarantined.
    """
    from mqspec.pipeline.check import check as run_check
    from mqspec.pipeline.checks import CAPTURE_SUFFIXES, search_inputs

    missing = [p for p in inputs if not Path(p).exists()]
    if missing:
        _fail(f"{missing[0]}: no such file or folder")
    found, skipped = search_inputs(inputs)
    for name in skipped[:20]:
        click.echo(f"mqspec: skipped (not a trace or capture by its name): {name}", err=True)
    if len(skipped) > 20:
        click.echo(f"mqspec: ... and {len(skipped) - 20} more files skipped", err=True)
    if not found:
        kinds = ", ".join(f"*{s}" for s in CAPTURE_SUFFIXES)
        _fail(f"no trace (*.ndjson) or capture ({kinds}) in {', '.join(inputs)}"
              + (f" ({len(skipped)} other files skipped)" if skipped else ""))
    target = Path(out)
    _claim(target, "check")
    spark, url = _session(master, event_log)
    summary = run_check(spark, found, target, master=url)
    summary.update(skipped_files=len(skipped), skipped=skipped)
    _print(summary, as_json, ("inputs", "conformant", "divergent", "incomplete", "nothing_checked", "quarantined",
                              "reconciled", "skipped_files", "messages", "seconds", "out"))
    clean = summary["conformant"] == summary["inputs"]
    sys.exit(0 if clean else 1)


@pipeline.command()
@click.argument("dirs", nargs=-1, required=True, type=click.Path(file_okay=False), metavar="DIR...")
@click.option("--out", "report_dir", type=click.Path(file_okay=False), required=True, metavar="REPORT_DIR")
@click.option("--docs", default="", metavar="URL",
              help="Where the annotated spec is published (default: this checkout's docs/_build/html).")
def report(dirs: tuple[str, ...], report_dir: str, docs: str) -> None:
    """Write a static HTML report (index.html and images) of explore and check outputs."""
    from mqspec.pipeline.report import ReportError, write

    for d in dirs:
        if not Path(d).is_dir():
            _fail(f"{d}: no such folder")
    target = Path(report_dir)
    _claim(target, "report")
    docs = docs or (Path(__file__).resolve().parent.parent / "docs" / "_build" / "html").as_uri()
    try:
        result = write([Path(d) for d in dirs], target, docs=docs)
    except ReportError as exc:
        _fail(str(exc))
    click.echo(f"report: {result['report']} ({len(result['figures'])} figures)")
