"""``mqspec check`` (conformance of recorded traces) and ``mqspec trace`` (writing traces).

``mqspec check TRACE... [--json]`` exits 0 when every trace conforms, 1 when one diverges, 2
for malformed input (one stderr line naming the file, the line and the field) or an event the
reference cannot take, 4 when nothing diverged but a capture's trace has holes (verdict
``incomplete-capture``), and 3 when nothing diverged but a trace had nothing to check (a header
alone, say); never with a traceback. ``mqspec trace from-pcap``, ``trace record``
and ``trace schema`` write traces and the format's JSON Schema.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from mqspec.cli.common import PORT_OPTIONS, emit, fail, ports_of, print_summary
from mqspec.wording import plural




@click.command()
@click.argument("traces", nargs=-1, required=True, type=click.Path(dir_okay=False), metavar="TRACE|CAPTURE...")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--no-coverage", is_flag=True, help="Do not work out which clauses the traces exercised.")
@click.option("--all", "all_divergences", is_flag=True,
              help="Report every divergence of a trace (up to --limit, and how many in all), not only the first; "
                   "the replay goes on from the reference's state, so a later one may follow from an earlier one.")
@click.option("--limit", type=click.IntRange(1, 100_000), default=100, show_default=True, metavar="N",
              help="With --all: list at most N divergences per trace.")
@click.option("--topology", type=click.Path(dir_okay=False), metavar="FILE.json",
              help="A capture's node declarations, ports and networks (default: CAPTURE.topology.json beside it).")
@PORT_OPTIONS
def check(traces: tuple[str, ...], as_json: bool, no_coverage: bool, all_divergences: bool, limit: int,
          topology: str | None, port: tuple[int, ...], mqsd_port: tuple[int, ...], mqqb_port: tuple[int, ...]) -> None:
    """Replay each trace's inputs through the reference and compare every output and snapshot.

    A capture (pcap, pcapng, compressed or not) is converted as trace from-pcap converts it
    (with CAPTURE.topology.json beside it, or --topology) and checked the same way; its summary
    (frames, messages, frames skipped by reason, holes) goes to stderr. Reports, per trace,
    conformance or the first divergence (event, node, expected versus actual, the clause whose rule
    was broken, its MUST quoted, or the errata register entries the verdict rests on where no MUST
    makes it) and the clauses the traces exercised; with --all, every divergence up to --limit and
    their count. Of several traces, the status is the most severe one's (2, 1, 4, 3, 0).
    """
    from contextlib import ExitStack

    from mqspec.capture import CaptureError
    from mqspec.capture.reader import sniff
    from mqspec.oracle import topology as topologies
    from mqspec.oracle.check import check_sources
    from mqspec.oracle.from_pcap import capture_trace
    from mqspec.oracle.source import LineSource
    from mqspec.oracle.trace_format import TraceError

    given = read_topology(topology) if topology is not None else None
    conversions: dict[str, Any] = {}
    with ExitStack() as stack:
        sources = []
        for path in traces:
            if sniff(path) is None:  # a trace (a missing file too: the trace reader names it)
                sources.append(LineSource.from_path(path))
                continue
            try:
                declared = given if given is not None else topologies.for_capture(path)
                ports = ports_of(port, mqsd_port, mqqb_port, declared.ports)
                source, conversion = stack.enter_context(capture_trace(path, topology=declared, ports=ports))
            except CaptureError as exc:
                fail("capture error", str(exc))
            except topologies.TopologyError as exc:
                fail("usage", str(exc))
            except (OSError, ValueError) as exc:
                fail("json error", f"{topologies.sidecar_of(path)}: {exc}")
            conversions[path] = (conversion, ports)
            sources.append(source)
        try:
            report = check_sources(sources, coverage=not no_coverage,
                                   all_divergences=limit if all_divergences else 0)
        except TraceError as exc:
            fail("trace error", str(exc))
        except RecursionError:
            fail("trace error", "a trace line is nested too deeply")
    if as_json:
        out = report.to_json()
        if conversions:
            out["captures"] = {path: c.to_json() for path, (c, _) in conversions.items()}
        emit(out, default=str)
    else:
        _print(report, coverage=not no_coverage)
    for path, (conversion, ports) in conversions.items():
        click.echo(f"mqspec: {path}:", err=True)
        print_summary(conversion.summary, "messages", conversion.summary.decoded, ports)
        for note in conversion.notes():
            click.echo(f"mqspec: note: {note}", err=True)
    for t in report.traces:
        if t.verdict == "error":
            click.echo(f"mqspec: reference error: {t.error}", err=True)
    sys.exit(report.exit_status)


def _print(report: Any, *, coverage: bool = True) -> None:
    for t in report.traces:
        nodes = sum(1 for state in t.nodes.values() if state.startswith(("conformant", "divergent")))
        head = f"{t.path}: {t.trace_id}:"
        clauses = f", {plural(len(t.coverage), 'clause')} exercised" if coverage else ""
        notes = [f"  note: {n}" for n in t.notes]
        if t.verdict == "conformant":
            click.echo(f"{head} conformant ({plural(t.events, 'event')}, {t.checked} checked, "
                       f"{plural(nodes, 'node')} replayed{clauses})")
            for note in notes:
                click.echo(note)
            continue
        if t.verdict == "nothing-checked":
            click.echo(f"{head} NOTHING CHECKED: none of its {plural(t.events, 'event')} could be replayed or "
                       "compared (declare the nodes' roles, mqsd or mqcn, and log their events); "
                       "this is no evidence of conformance")
            continue
        if t.verdict == "error":
            click.echo(f"{head} ERROR: {t.error}")
            continue
        if t.verdict == "incomplete-capture":
            _print_holes(t, head)
            continue
        if t.all_asked:
            shown = len(t.divergences)
            more = f" (the first {shown} listed)" if shown < t.divergence_count else ""
            click.echo(f"{head} DIVERGENT: {plural(t.divergence_count, 'divergence')}{more}")
            for d, line in t.divergences:
                _print_divergence(d, f"{t.path}:{line}", "  ")
        else:
            click.echo(f"{head} DIVERGENT at event {t.divergence.index} ({t.path}:{t.line}), "
                       f"node {t.divergence.node}: {t.divergence.summary}")
            _print_divergence(t.divergence, None, "")
        for note in notes:
            click.echo(note)
    if not coverage:
        return
    covered = report.coverage
    click.echo(f"coverage: {len(covered)} of {report.registered} registered clauses exercised"
               + (": " + ", ".join(f"{c.document} {c.section}" for c in covered) if covered else ""))


def _print_holes(t: Any, head: str) -> None:
    """A capture with holes: where they are, and what was judged before them."""
    first = t.holes[0]
    click.echo(f"{head} INCOMPLETE CAPTURE: {plural(t.holes_total, 'hole')}, the first at event {first['event']} "
               f"(t={first['t']}); {t.checked} of its {plural(t.events, 'event')} checked before the holes, no "
               "divergence; past a hole the nodes it touches are not judged (this is no evidence of conformance "
               "there)")
    for hole in t.holes[:20]:
        nodes = ", ".join(hole["nodes"]) if hole.get("nodes") is not None else "every node"
        click.echo(f"  hole at event {hole['event']} (t={hole['t']}, {hole['kind']}; {nodes}): {hole['text']}")
    if t.holes_total > 20:
        click.echo(f"  ... {t.holes_total - 20} more holes")
    for name, state in t.nodes.items():
        if "up to the hole" in state:
            click.echo(f"  {name}: {state}")


def _print_divergence(d: Any, where: str | None, indent: str) -> None:
    """One divergence's lines: its headline (with --all), clause, rule or marks, cause and diff."""
    from mqspec.errata import mark_text, marks

    if where is not None:
        click.echo(f"{indent}event {d.index} ({where}), node {d.node}: {d.summary}")
    pad = indent + "  "
    if d.clause is not None:
        click.echo(f"{pad}clause: {d.clause.document} {d.clause.section} {d.clause.title}  ({d.clause.code})")
    if d.rule:
        click.echo(f"{pad}rule: \"{d.rule}\"")
    if d.rests_on:
        click.echo(f"{pad}rests on: {mark_text(marks(d.rests_on))} (no MUST of the text makes this verdict)")
    if d.via:
        click.echo(f"{pad}via: " + " <- ".join(f"{c.document} {c.section}" for c in d.via))
    if d.cause is not None:
        click.echo(f"{pad}in answer to event {d.cause}")
    for item in d.diff[:20]:
        if "expected" in item:
            click.echo(f"{pad}{item['field']}: expected {_short(item['expected'])}, actual {_short(item['actual'])}")
        else:
            click.echo(f"{pad}{item.get('field')}: {item.get('reason')} (offset {item.get('offset')})")
    if len(d.diff) > 20:
        click.echo(f"{pad}... {len(d.diff) - 20} more fields differ")


def _short(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 100 else text[:97] + "..."


# --- writing traces ---------------------------------------------------------------------------


@click.group()
def trace() -> None:
    """Write traces in the published format (and its JSON Schema)."""


@trace.command("from-pcap")
@click.argument("pcap", type=click.Path(dir_okay=False))
@click.option("-o", "--output", "output", required=True, type=click.Path(dir_okay=False), metavar="OUT.ndjson",
              help="The trace file to write (NDJSON, the published trace format).")
@click.option("--node", "nodes", multiple=True, metavar="NAME=ADDRESS",
              help="Name the server at an IP address (or IP:PORT).")
@click.option("--topology", type=click.Path(dir_okay=False), metavar="FILE.json",
              help="Node declarations with roles and addresses, ports, networks (see mqspec.oracle.topology).")
@click.option("--trace-id", help="The trace id (default pcap:<file name>).")
@click.option("--lenient", is_flag=True, help="Decode with the receiver-side leniency the spec allows.")
@PORT_OPTIONS
@click.option("--json", "as_json", is_flag=True, help="Print the conversion's summary as JSON.")
def from_pcap(pcap: str, output: str, nodes: tuple[str, ...], topology: str | None, trace_id: str | None,
              lenient: bool, port: tuple[int, ...], mqsd_port: tuple[int, ...], mqqb_port: tuple[int, ...],
              as_json: bool) -> None:
    """Build a trace from a capture: MQSD datagrams, MQDSRP and MQCN messages over MQQB, and its holes.

    The capture is read twice, streaming (memory does not grow with it); the trace is written line
    by line. Prints what the capture held (frames, messages, frames skipped by reason, holes).
    """
    from mqspec.capture import CaptureError
    from mqspec.oracle.from_pcap import write_trace

    names = node_names(nodes)
    declarations = read_topology(topology)
    ports = ports_of(port, mqsd_port, mqqb_port, declarations.ports)
    out: Any = None

    def write(text: str) -> None:  # the file is opened once the capture is read: none for a bad capture
        nonlocal out
        if out is None:
            out = open(output, "w", encoding="utf-8")  # noqa: SIM115 - closed below
        out.write(text)

    try:
        conversion = write_trace(pcap, write, trace_id=trace_id, names=names, topology=declarations,
                                 lenient=lenient, ports=ports)
    except CaptureError as exc:
        fail("capture error", str(exc))
    except OSError as exc:
        fail("error", f"{output}: {exc.strerror}")
    finally:
        if out is not None:
            out.close()
    if as_json:
        emit({"output": output, **conversion.to_json()})
    else:
        click.echo(f"{output}: {plural(conversion.lines, 'line')}")
    print_summary(conversion.summary, "messages", conversion.summary.decoded, ports)
    for note in conversion.notes():
        click.echo(f"mqspec: note: {note}", err=True)


def _written(output: str, lines: int, as_json: bool) -> None:
    """What trace record reports: the file it wrote and how many lines."""
    if as_json:
        emit({"output": output, "lines": lines})
    else:
        click.echo(f"{output}: {plural(lines, 'line')}")


def node_names(nodes: tuple[str, ...]) -> dict[str, str]:
    """``--node NAME=ADDRESS`` options: address (IP or IP:PORT) -> name; a usage error for a bad one."""
    from mqspec.oracle.topology import TopologyError, address

    names = {}
    for item in nodes:
        name, sep, text = item.partition("=")
        if not sep or not name or not text:
            fail("usage", f"--node takes NAME=ADDRESS, not {item!r}")
        try:
            ip, port = address(text, f"--node {item}")
        except TopologyError as exc:
            fail("usage", str(exc))
        names[ip if port is None else (f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}")] = name
    return names


def read_topology(path: str | None) -> Any:
    """The topology in a JSON file (:mod:`mqspec.oracle.topology`); one line and exit 2 for a bad one."""
    from mqspec.oracle.topology import Topology, TopologyError, load

    if path is None:
        return Topology()
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8-sig"))
    except OSError as exc:
        fail("error", f"{path}: {exc.strerror}")
    except ValueError as exc:
        fail("json error", f"{path}: {exc}")
    except RecursionError:
        fail("json error", f"{path}: nested too deeply")
    try:
        return load(data, path)
    except TopologyError as exc:
        fail("usage", str(exc))


@trace.command("record")
@click.argument("scenario", type=click.Path(dir_okay=False))
@click.option("-o", "--output", "output", required=True, type=click.Path(dir_okay=False), metavar="OUT.ndjson",
              help="The trace file to write (NDJSON, the published trace format).")
@click.option("--mode", type=click.Choice(["clarified", "literal"]), default="clarified", show_default=True,
              help="Run the clarified reading of the errata register or the literal text.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="The simulator's seed (the same scenario, mode and seed give a byte-identical trace).")
@click.option("--json", "as_json", is_flag=True, help="Print what was written as one JSON object (file, lines).")
def record(scenario: str, output: str, mode: str, seed: int, as_json: bool) -> None:
    """Run a scenario file on the simulator and write its trace (snapshots after each settle).

    The trace is written line by line as the simulator runs (memory does not grow with it).
    """
    from mqspec.oracle.record import record_scenario
    from mqspec.refimpl import scenario as sc
    from mqspec.refimpl.effects import Mode

    try:
        parsed = sc.load(scenario)
    except sc.ScenarioError as exc:
        fail("scenario error", f"{scenario}: {exc}")
    lines = 0

    def write(text: str) -> None:
        nonlocal lines
        out.write(text)
        lines += 1

    try:
        with open(output, "w", encoding="utf-8") as out:
            record_scenario(parsed, mode=Mode(mode), seed=seed, write=write)
    except OSError as exc:
        fail("error", f"{output}: {exc.strerror}")
    except sc.ScenarioError as exc:
        fail("scenario error", f"{scenario}: {exc}")
    _written(output, lines, as_json)


@trace.command("schema")
def schema() -> None:
    """Print the JSON Schema (draft 2020-12) of one trace line."""
    from mqspec.oracle.trace_format import schema_text

    click.echo(schema_text(), nl=False)
