"""``mqspec pipeline``: exploration campaigns and conformance checking at scale on Spark, and their report.

The jobs run on embedded local Spark (``local[*]``) unless ``--master`` or ``MQSPEC_SPARK_MASTER``
names a standalone cluster (``spark://HOST:PORT``) or a Spark Connect server (``sc://HOST:PORT``);
see :mod:`mqspec.pipeline.session`. ``--conf``, ``--archives`` and ``--py-files`` go to Spark as
given; ``pack-env`` makes the archive that ships this mqspec to executors. Before a job the
executors are probed (:mod:`mqspec.pipeline.preflight`). The exit statuses are in
``mqspec.cli.exits`` (one table for every command): 5 is the pre-flight's (the executors cannot run
this mqspec), 6 a failed Spark job's (an input the executors cannot read, an executor lost, ``--out``
not shared).
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path
from typing import Any, NoReturn

import click

from mqspec.cli.common import emit, fail
from mqspec.wording import plural

#: the file that marks a folder as written by mqspec pipeline (it may then be overwritten)
MARKER = ".mqspec-pipeline"
#: exit status of a failed pre-flight check, and of a failed Spark job (see the module docstring)
PREFLIGHT_FAILED, JOB_FAILED = 5, 6
#: the annotated spec as ``make docs`` builds it in this checkout (what report links to by default)
CHECKOUT_DOCS = Path(__file__).resolve().parents[2] / "docs" / "_build" / "html"


def _fail(text: str) -> NoReturn:
    fail("usage", text)


def _stop(kind: str, text: str, status: int) -> NoReturn:
    click.echo(f"mqspec: {kind}: {text}", err=True)
    sys.exit(status)


def _claim(where: str, what: str) -> Any:
    """The ``--out`` Location, marked as mqspec pipeline's; a folder of anything else is refused (nothing is deleted)."""
    from mqspec.pipeline.store import Location

    try:
        out = Location(where)
    except (OSError, ValueError) as exc:
        _fail(f"--out {where}: {' '.join(str(exc).split())}")
    if re.search(r"[\[\]*?{}]", out.path):
        _fail(f"--out {where}: Spark reads a path as a glob pattern: choose one without [ ] * ? {{ }}")
    if out.exists() and not out.is_dir():
        _fail(f"--out {where}: is a file, not a folder")
    if out.names() and not out.child(MARKER).exists():
        _fail(f"--out {where}: the folder holds files mqspec pipeline did not write; choose an empty or new folder")
    out.mkdir()
    out.child(MARKER).write_text(f"{what}\n")
    return out


def _session(options: dict[str, Any]) -> tuple[Any, str]:
    from mqspec.pipeline.session import SessionError, master_url, parse_conf, session

    try:
        url = master_url(options["master"])
        conf = parse_conf(options["conf"])
        return session(url, event_log=options["event_log"], conf=conf, archives=options["archives"],
                       py_files=options["py_files"]), url
    except SessionError as exc:
        _fail(str(exc))


def _preflight(spark: Any, url: str, out: Any) -> dict[str, Any]:
    from mqspec.pipeline.preflight import PreflightError, preflight
    from mqspec.pipeline.session import is_connect, parallelism

    started = time.monotonic()
    try:
        return preflight(spark, tasks=max(2, parallelism(spark, url)), out=out, connect=is_connect(url))
    except PreflightError as exc:
        _stop("pre-flight", f"{exc} [after {time.monotonic() - started:.1f} s]", PREFLIGHT_FAILED)


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


def _spark_options(command: Any) -> Any:
    """--master, --conf, --archives, --py-files and --event-log: where and how the job runs."""
    for option in reversed([
        click.option("--master", metavar="URL", help="local[*] (default), local[N], spark://HOST:PORT or "
                     "sc://HOST:PORT (default: $MQSPEC_SPARK_MASTER, else local[*])."),
        click.option("--conf", "conf", multiple=True, metavar="KEY=VALUE",
                     help="A Spark setting, as spark-submit's --conf (repeatable; the user's settings win)."),
        click.option("--archives", multiple=True, metavar="URI[#NAME]",
                     help="An archive unpacked in each executor's folder (repeatable): e.g. the pack-env archive."),
        click.option("--py-files", "py_files", multiple=True, metavar="URI",
                     help="A .py, .zip or .egg put on the executors' Python path (repeatable)."),
        click.option("--event-log", metavar="DIR", help="Write Spark's event log into DIR."),
    ]):
        command = option(command)
    return command


def _job_failure(what: str, exc: BaseException) -> NoReturn:
    from mqspec.pipeline.preflight import reason

    _stop("spark", f"{what} failed: {reason(exc)}", JOB_FAILED)


@pipeline.command()
@click.option("--runs", type=click.IntRange(1, 10**9), required=True, help="How many runs (numbered 0..N-1).")
@click.option("--seed", type=click.IntRange(0, 2**63 - 1), default=0, show_default=True,
              help="The campaign seed; run i explores from a seed derived from (seed, i).")
@click.option("--mode", type=click.Choice(["clarified", "literal"]), default="clarified", show_default=True,
              help="Run the clarified reading of the errata register, or the literal text everywhere.")
@click.option("--reading", metavar="HANDLER[,HANDLER...]", default="",
              help="Read the text literally inside these MC-MQDSRP handlers only (clarified mode elsewhere).")
@click.option("--profile", type=click.Choice(["ci", "soak"]), default="ci", show_default=True,
              help="Run length and rule frequencies of the state machine.")
@click.option("--traces", is_flag=True, help="Also keep each run's trace (published NDJSON format) under DIR/traces.")
@click.option("--trace-compression", type=click.Choice(["zstd", "gzip", "none"]), default="zstd", show_default=True,
              help="How the executors compress each trace (run-N.ndjson.zst, .ndjson.gz or .ndjson).")
@click.option("--shrink-seconds", type=click.FloatRange(0.1, 3600), default=60.0, show_default=True,
              help="CPU-time budget for shrinking one violation (a safety net: see --shrink-replays).")
@click.option("--shrink-replays", type=click.IntRange(1, 100_000), default=400, show_default=True,
              help="Replays allowed for shrinking one violation (bounds it deterministically).")
@click.option("--wave", type=click.IntRange(1, 1_000_000), default=64, show_default=True,
              help="Runs per Spark job: progress is reported, and a resumed campaign restarts, per wave.")
@click.option("--out", default="out/explore", show_default=True, metavar="DIR",
              help="A folder: a local path or a URI (file://, hdfs://, s3a://) every executor can write.")
@_spark_options
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
def explore(runs: int, seed: int, mode: str, reading: str, profile: str, traces: bool, trace_compression: str,
            shrink_seconds: float, shrink_replays: int, wave: int, out: str, as_json: bool, **spark: Any) -> None:
    """Run N generated runs of the replication state machine as Spark tasks, every invariant checked.

    Writes Parquet datasets under DIR: runs/, violations/ (each shrunk to a scenario file under
    counterexamples/), coverage/, and with --traces each run's trace under traces/ (written by the
    executors). Re-running with the same --out resumes: stored runs are skipped.
    """
    from mqspec.pipeline.explore import CampaignMismatch, NotShared
    from mqspec.pipeline.explore import explore as run_campaign
    from mqspec.pipeline.runs import Campaign
    from mqspec.proofs.explore.run import check_arguments
    from mqspec.refimpl.effects import Mode

    handlers = tuple(h.strip() for h in reading.split(",") if h.strip())
    try:
        check_arguments(profile, Mode(mode), handlers)
    except ValueError as exc:
        _fail(str(exc))
    target = _claim(out, "explore")
    campaign = Campaign(runs=runs, seed=seed, mode=mode, reading=handlers, profile=profile, traces=traces,
                        trace_compression=trace_compression, shrink_seconds=shrink_seconds,
                        shrink_replays=shrink_replays)
    session, url = _session(spark)
    probed = _preflight(session, url, target)
    try:
        summary = run_campaign(session, campaign, target, master=url, wave=wave)
    except CampaignMismatch as exc:
        _fail(str(exc))
    except NotShared as exc:
        _stop("spark", str(exc), JOB_FAILED)
    except Exception as exc:  # noqa: BLE001 - a failed Spark job is one line and its own status
        _job_failure("explore", exc)
    summary["executors"] = probed["executors"]
    _print(summary, as_json, ("runs", "steps", "violations", "counterexamples", "converged", "traces", "seconds", "out"))
    sys.exit(1 if summary["violations"] else 0)


@pipeline.command()
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...")
@click.option("--out", default="out/check", show_default=True, metavar="DIR",
              help="A folder: a local path or a URI (file://, hdfs://, s3a://) every executor can write.")
@_spark_options
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
def check(inputs: tuple[str, ...], out: str, as_json: bool, **spark: Any) -> None:
    """Judge traces (*.ndjson, *.ndjson.gz, *.ndjson.zst) and captures (*.pcap, *.pcapng, *.cap, *.pcap.gz) with `mqspec check`'s checker.

    INPUT: files or folders (searched recursively; every other file found is counted and named as
    skipped), local paths or URIs (file://, hdfs://, s3a://), globs allowed; the executors read them
    through Spark's file systems. A capture is converted as `mqspec trace from-pcap` converts it,
    with CAPTURE.topology.json beside it as its topology. Writes verdicts/ (a capture's row with its
    frames, messages, frames skipped by reason and holes), divergences/, coverage/, messages/ and
    quarantine/ under DIR; inputs = verdict rows + quarantine rows. The exit status
    is the one mqspec check would give the inputs together, a quarantined input counting as a
    malformed one.
    """
    from mqspec.pipeline.check import NoInputs, list_inputs
    from mqspec.pipeline.check import check as run_check
    from mqspec.pipeline.checks import CAPTURE_SUFFIXES
    from mqspec.pipeline.session import parallelism
    from mqspec.pipeline.store import is_uri, to_uri

    missing = [p for p in inputs if not is_uri(p) and not re.search(r"[\[\]*?{}]", p) and not Path(p).exists()]
    if missing:
        _fail(f"{missing[0]}: no such file or folder")
    target = _claim(out, "check")
    session, url = _session(spark)
    probed = _preflight(session, url, target)
    try:
        listing = list_inputs(session, [to_uri(p) for p in inputs])
    except NoInputs as exc:
        _fail(str(exc))
    except Exception as exc:  # noqa: BLE001 - as below
        _job_failure("listing the inputs", exc)
    skipped = listing.skipped
    for name in skipped[:20]:
        click.echo(f"mqspec: skipped (not a trace or capture by its name): {name}", err=True)
    if len(skipped) > 20:
        click.echo(f"mqspec: ... and {plural(len(skipped) - 20, 'more file')} skipped", err=True)
    if not listing.inputs:
        kinds = ", ".join(f"*{s}" for s in CAPTURE_SUFFIXES)
        _fail(f"no trace (*.ndjson, *.ndjson.gz, *.ndjson.zst) or capture ({kinds}) in {', '.join(inputs)}"
              + (f" ({plural(len(skipped), 'other file')} skipped)" if skipped else ""))
    try:
        summary = run_check(session, listing, target, master=url, parallelism=parallelism(session, url))
    except Exception as exc:  # noqa: BLE001 - a failed Spark job is one line and its own status
        _job_failure("check", exc)
    summary["executors"] = probed["executors"]
    _print(summary, as_json, ("inputs", "conformant", "divergent", "incomplete", "nothing_checked", "quarantined",
                              "reconciled", "skipped_files", "messages", "seconds", "out"))
    sys.exit(check_status(summary))


def check_status(summary: dict[str, Any]) -> int:
    """The exit status of ``mqspec check`` over the same inputs: malformed (quarantined) 2, else divergent
    1, else a capture with holes 4, else nothing checked 3, else 0."""
    from mqspec.oracle.check import EXIT

    verdicts = set(summary["by_verdict"]) | ({"error"} if summary["quarantined"] else set())
    return next((code for verdict, code in EXIT.items() if verdict in verdicts), 0)


@pipeline.command("pack-env")
@click.argument("archive", metavar="ARCHIVE.tar.gz")
@click.option("--json", "as_json", is_flag=True, help="Print what was packed as one JSON object.")
def pack_env(archive: str, as_json: bool) -> None:
    """Pack this mqspec and what its executors import as a venv archive for --archives.

    Use it as: --archives ARCHIVE.tar.gz#env --conf spark.pyspark.python=./env/bin/python. The
    archive's Python links to this one's base interpreter: the executors' machines need that Python
    (same version, same path). pyspark is left out: Spark puts its own on the executors' path.
    """
    from mqspec.pipeline.pack import PackError, pack

    try:
        result = pack(Path(archive))
    except PackError as exc:
        _fail(str(exc))
    if as_json:
        emit(result, sort_keys=True)
    else:
        click.echo(f"{result['archive']}: {result['bytes'] / 1e6:.0f} MB, {plural(result['files'], 'file')}, Python "
                   f"{result['python']} ({result['base_python']}); use: {result['use']}")


@pipeline.command()
@click.argument("dirs", nargs=-1, required=True, type=click.Path(file_okay=False), metavar="DIR...")
@click.option("--out", "report_dir", type=click.Path(file_okay=False), required=True, metavar="REPORT_DIR",
              help="Where index.html and its images go (a new or empty folder, or an earlier report's).")
@click.option("--docs", default="", metavar="URL|DIR",
              help="The annotated spec the clauses link to: a URL where it is published, or a folder of the "
                   "built site, linked relatively (default: this checkout's docs/_build/html).")
@click.option("--json", "as_json", is_flag=True, help="Print what was written as one JSON object.")
def report(dirs: tuple[str, ...], report_dir: str, docs: str, as_json: bool) -> None:
    """Write a static HTML report (index.html and PNG images) of explore and check outputs.

    The report reads offline and moves with its folder: its images sit beside it, and clause
    links are relative to the built docs (or go to --docs URL). When the docs are not built, the
    report says so and how to build them.
    """
    from mqspec.pipeline.report import ReportError, write

    for d in dirs:
        if not Path(d).is_dir():
            _fail(f"{d}: no such folder")
    target = Path(report_dir)
    _claim(report_dir, "report")
    try:
        result = write([Path(d) for d in dirs], target, docs=docs or str(CHECKOUT_DOCS))
    except ReportError as exc:
        _fail(str(exc))
    if as_json:
        emit(result)
        return
    click.echo(f"report: {result['report']} ({plural(len(result['figures']), 'figure')})")
    if result["docs_missing"]:
        click.echo(f"mqspec: note: the annotated spec is not built at {result['docs']} (make docs builds it): "
                   "the report's clause links lead nowhere until it is", err=True)
