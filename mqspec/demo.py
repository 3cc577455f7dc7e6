"""The main job on embedded defaults (``make run`` / ``mqspec demo``): the pipeline end to end on local Spark.

1. Decode the example packets of [MS-MQSD] section 4 with the strict codec.
2. Record the five MC-MQDSRP section 4 examples (scenarios/4.*.yaml) as traces, in the clarified
   and in the literal mode, and show which converge.
3. Explore: a small campaign of generated runs of the replication state machine, every invariant
   checked after every step, each run's trace kept (``mqspec pipeline explore``).
4. Check every trace of 2 and 3 with the conformance checker (``mqspec pipeline check``): the
   section 4 examples against the reference of their mode, the generated runs against the
   simulator that produced them.
5. Write the report (``mqspec pipeline report``) and print where it is.

Everything goes under ``out/demo`` (or ``--out``): the previous run's folder is replaced, and the
command says so and how large it was; nothing else is touched.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from mqspec.model import mqsd
from mqspec.wording import plural
from mqspec.model.examples_mqsd import CLIENT_REQUEST, REPLY_LOCAL_SITE, REPLY_OTHER_SITE

EXAMPLES = (
    ("TopologyClientRequest", CLIENT_REQUEST),
    ("TopologyServerReply, local site", REPLY_LOCAL_SITE),
    ("TopologyServerReply, other site", REPLY_OTHER_SITE),
)
OUT = Path("out") / "demo"
#: the file that marks a folder as the demo's (it is replaced at each run)
MARKER = ".mqspec-demo"
#: the annotated spec as `make docs` builds it in this checkout: the report links to it relatively
DOCS = Path(__file__).resolve().parent.parent / "docs" / "_build" / "html"
#: the exploration campaign of the main job: tens of runs, a couple of minutes on two cores
RUNS = 24
SEED = 2026


def command() -> str:
    """How to run ``mqspec`` from here as printed (the venv's script when it is not on PATH)."""
    script = Path(sys.executable).parent / "mqspec"
    if shutil.which("mqspec") == str(script) or not script.exists():
        return "mqspec"
    try:
        return os.path.relpath(script)
    except ValueError:
        return str(script)


def decode_examples(console: Console) -> None:
    console.rule("[bold]MS-MQSD section 4 example packets (strict codec)")
    for title, data in EXAMPLES:
        message = mqsd.decode(data)
        console.print(f"{title}: {len(data)} bytes -> {type(message).__name__}")


def record_section4(console: Console, out: Path) -> int:
    """Record every section 4 example in both modes under ``out``; tabulate; return how many traces."""
    from mqspec.oracle.compression import open_write_text
    from mqspec.oracle.record import record_scenario
    from mqspec.refimpl.effects import Mode
    from mqspec.refimpl.scenario import load

    from mqspec.vectors.scenarios import SCENARIO_DIR

    files = sorted(SCENARIO_DIR.glob("4.*.yaml"))
    if not files:
        console.print(f"[yellow]no section 4 scenarios in {SCENARIO_DIR}")
        return 0
    console.rule("[bold]MC-MQDSRP section 4 examples in both modes")
    table = Table("example", "mode", "converged", "failed", "sim. s", "messages")
    for path in files:
        scenario = load(path)
        for mode in (Mode.CLARIFIED, Mode.LITERAL):
            folder = out / mode.value
            folder.mkdir(parents=True, exist_ok=True)
            # compressed as explore's traces are (the literal runs' traces are tens of megabytes each)
            with open_write_text(folder / f"{path.stem}.ndjson.zst") as f:
                result = record_scenario(scenario, mode=mode, seed=0, write=f.write)
            table.add_row(path.stem.split("-")[0], mode.value, "yes" if result.converged else "no",
                          str(len(result.failures)), f"{result.world.now:.0f}", str(result.world.messages_processed))
    console.print(table)
    console.print("Clarified mode converges every example; the literal text does not (see "
                  f"`{command()} errata E-119`, and likewise E-112, E-114, E-131, E-133).")
    return 2 * len(files)


def handover_summary(rows: list[dict[str, str]]) -> str | None:
    """A line on the checked traces that declare a PSC handover (``rows``: path and verdict), or None."""
    moved = [r for r in rows if '"event":"handover"' in _text(r["path"])]
    if not moved:
        return None
    conformant = sum(r["verdict"] == "conformant" for r in moved)
    return (f"PSC handovers (move_psc) declared in {plural(len(moved), 'trace')} (E-313): "
            f"{conformant} of {len(moved)} conformant.")


def _text(path: str) -> str:
    """A checked trace's text (``path``: a local path or a ``file:`` URI, compressed or not)."""
    from urllib.parse import unquote, urlsplit

    from mqspec.oracle.compression import open_text

    with open_text(unquote(urlsplit(path).path) if path.startswith("file:") else path) as f:
        return f.read()


def disk_size(folder: Path) -> int:
    """Bytes the files under ``folder`` hold."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def claim(out: Path, console: Console) -> None:
    """Make ``out`` the demo's folder, saying where it writes and what it replaces; a folder of other files
    is refused (exit 2) and left alone."""
    if out.exists() and not (out / MARKER).exists() and (not out.is_dir() or any(out.iterdir())):
        print(f"mqspec: usage: {out} holds files the demo did not write: move them, or give --out another folder",
              file=sys.stderr)
        sys.exit(2)
    if (out / MARKER).exists():
        size = disk_size(out)
        console.print(f"Writing under {out}/, replacing the previous run's {size / 1e6:.0f} MB "
                      "there (nothing outside it is touched).")
        shutil.rmtree(out)
    else:
        console.print(f"Writing under {out}/ (a new folder; nothing outside it is touched).")
    out.mkdir(parents=True, exist_ok=True)
    (out / MARKER).write_text("written by mqspec demo; replaced at each run\n", encoding="utf-8")


def run(out: Path = OUT, *, as_json: bool = False) -> int:
    """The main job; returns its exit status (0 when nothing is wrong, 1 when something is: see mqspec.cli.exits).

    With ``as_json`` the running commentary goes to stderr and stdout gets the summary as one JSON object.
    """
    console = Console(stderr=as_json)
    started = time.monotonic()
    claim(out, console)
    decode_examples(console)
    record_section4(console, out / "section4")

    from mqspec.pipeline.check import check, list_inputs
    from mqspec.pipeline.explore import explore
    from mqspec.pipeline.report import write
    from mqspec.pipeline.runs import Campaign
    from mqspec.pipeline.session import master_url, parallelism, session
    from mqspec.pipeline.store import Location

    master = master_url()
    console.rule(f"[bold]Spark ({master}): explore {RUNS} runs, check every trace, report")
    spark = session(master)
    location = Location(out)
    explored = explore(spark, Campaign(runs=RUNS, seed=SEED, traces=True), location.child("explore"), master=master)
    listing = list_inputs(spark, [location.child("section4").uri, location.child("explore", "traces").uri])
    checked = check(spark, listing, location.child("check"), master=master, parallelism=parallelism(spark, master))
    spark.stop()
    report = write([out / "explore", out / "check"], out / "report", docs=str(DOCS))

    table = Table("", "figure")
    for label, value in (
        ("runs explored (clarified)", explored["runs"]), ("steps", explored["steps"]),
        ("invariant violations", explored["violations"]), ("runs converged", explored["converged"]),
        ("traces checked", checked["inputs"]), ("conformant", checked["conformant"]),
        ("divergent", checked["divergent"]), ("quarantined", checked["quarantined"]),
        ("counts reconcile", "yes" if checked["reconciled"] else "NO"),
        ("wire messages", checked["messages"]), ("seconds", f"{time.monotonic() - started:.0f}"),
    ):
        table.add_row(label, str(value))
    console.rule("[bold]Summary")
    console.print(table)
    import pyarrow.parquet as pq

    rows = pq.read_table(str(out / "check" / "verdicts"), columns=["path", "verdict"]).to_pylist()
    moved = handover_summary(rows)
    if moved:
        console.print(moved)
    console.print(f"Report: {os.path.relpath(report['report'])}")
    if report["docs_missing"]:
        console.print(f"  (its clause links lead to the annotated spec, which is not built here: "
                      f"`make docs` builds it into {os.path.relpath(DOCS)})")
    console.print(f"Datasets (Parquet): {out}/explore, {out}/check; {disk_size(out) / 1e6:.0f} MB "
                  f"under {out}/ in all, replaced by the next run. Re-run a step: "
                  f"`{command()} pipeline explore --runs {RUNS} --seed {SEED} --traces --out {out}/explore`")
    code = status(explored, checked)
    if as_json:
        import json

        print(json.dumps({"out": str(out), "explore": explored, "check": checked, "report": report,
                          "bytes": disk_size(out), "handovers": moved, "status": code}, indent=2, default=str))
    return code


def status(explored: dict[str, Any], checked: dict[str, Any]) -> int:
    """The main job's exit status: 0 when the campaign violated nothing and every trace conformed with the
    counts reconciled, else 1 (mqspec/cli/exits.py)."""
    clean = not explored["violations"] and checked["conformant"] == checked["inputs"] and checked["reconciled"]
    return 0 if clean else 1
