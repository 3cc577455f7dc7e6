"""``mqspec pipeline report``: a static HTML report (``index.html`` and PNG images) of explore and check outputs.

It reads the Parquet datasets with pyarrow (no Spark session needed) and draws, with matplotlib
(``report_charts``): violations by invariant and mode; the coverage of every registered clause of the four
documents (MC-MQDSRP, MS-MQSD, MS-MQCN, MS-MQDS); divergences by clause; each replica's lag behind its
authority as the wire shows it, the clarified traces apart from the literal ones; and the time each
partition took to converge. Every number on the page says what it counts. Clause links lead to the
section pages of the annotated spec: relative links to a built site (the checkout's ``docs/_build/html``
by default; the report says when it is not built) or a published URL. The report reads offline and moves
with its folder: the images sit beside ``index.html``, nothing is fetched.
"""

from __future__ import annotations

import html
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mqspec.pipeline import report_charts as charts
from mqspec.wording import plural

#: the datasets a report reads from each folder
DATASETS = ("runs", "violations", "coverage", "verdicts", "divergences", "messages", "quarantine")


class ReportError(ValueError):
    """An input folder that holds no pipeline output."""


def read(path: Path) -> Any:
    """A dataset as a pandas frame (None when the folder is absent)."""
    import pyarrow.parquet as pq

    return pq.read_table(str(path)).to_pandas() if path.is_dir() else None


def load(dirs: Iterable[Path]) -> dict[str, Any]:
    """Every dataset of every folder, concatenated per dataset name, with the folder in column ``source``."""
    import pandas as pd

    frames: dict[str, list[Any]] = {}
    for d in dirs:
        found = False
        for name in DATASETS:
            df = read(d / name)
            if df is not None:
                found = True
                df["source"] = str(d)
                kind = "check_coverage" if name == "coverage" and (d / "verdicts").is_dir() else name
                frames.setdefault(kind, []).append(df)
        if not found:
            raise ReportError(f"{d}: no pipeline output here (runs/ or verdicts/ ...)")
    return {name: pd.concat(parts, ignore_index=True) for name, parts in frames.items()}


def docs_base(docs: str, out: Path) -> tuple[str, bool]:
    """Where clause links point, and whether the docs are missing: a URL as given (None can be said about it),
    or a folder of the built site as a path relative to the report (missing when it has no index.html)."""
    if "://" in docs:
        return docs.rstrip("/"), False
    folder = Path(docs)
    relative = Path(os.path.relpath(folder.resolve(), out.resolve())).as_posix()
    return relative, not (folder / "index.html").is_file()


def clause_link(clause: str, base: str) -> str:
    document, _, section = clause.partition(" ")
    return f"{base}/spec/{document.lower()}/{section}.html"


def write(dirs: list[Path], out: Path, *, docs: str) -> dict[str, Any]:
    """Write the report into ``out``; returns what it holds: its page, figures, where its links go and whether
    the docs they lead to are missing."""
    import matplotlib

    matplotlib.use("Agg")
    data = load(dirs)
    out.mkdir(parents=True, exist_ok=True)
    base, missing = docs_base(docs, out)
    sections = [f"<h1>mqspec pipeline report</h1><p>From: {', '.join(html.escape(str(d)) for d in dirs)}</p>"]
    if missing:
        sections.append(f"<p class=warn>The annotated specification is not built at {html.escape(docs)}, so the "
                        "clause links below lead nowhere yet: <code>make docs</code> builds it there (or give "
                        "<code>--docs URL</code> where it is published).</p>")
    sections.append(_summary(data, out))
    figures: list[str] = []
    described: dict[str, dict[str, Any]] = {}
    for draw in (charts.violations, charts.coverage, charts.divergences, charts.lag, charts.convergence):
        for chart in draw(data, out):
            if chart.file is None:
                sections.append(f"<h2>{html.escape(chart.title)}</h2><p class=none>{html.escape(chart.caption)}</p>")
                continue
            figures.append(chart.file)
            described[chart.file] = {"caption": chart.caption, "colours": list(chart.colours)}
            sections.append(f"<h2>{html.escape(chart.title)}</h2><p>{html.escape(chart.caption)}</p>"
                            f"<img src='{chart.file}' alt='{html.escape(chart.title)}'>")
    sections.append(_clause_table(data, base))
    (out / "index.html").write_text(_page("\n".join(sections)), encoding="utf-8")
    return {"report": str(out / "index.html"), "figures": figures, "captions": described, "docs": docs,
            "links": base, "docs_missing": missing}


def _page(body: str) -> str:
    return ("<!doctype html><html lang=en><head><meta charset=utf-8><title>mqspec pipeline report</title>"
            "<meta name=viewport content='width=device-width, initial-scale=1'><style>"
            "body{font-family:sans-serif;max-width:72em;margin:auto;padding:0 1em;line-height:1.45}"
            "img{max-width:100%;height:auto}table{border-collapse:collapse}"
            "td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}"
            "td.n{text-align:right;font-variant-numeric:tabular-nums}.none,.what{color:#555}"
            ".warn{background:#fff4d6;border-left:4px solid #d68910;padding:.5em 1em}</style></head><body>\n"
            + body + "\n</body></html>\n")


def _summary(data: dict[str, Any], out: Path) -> str:
    """The headline numbers, each with what it counts."""
    rows: list[tuple[str, int, str]] = []
    runs = data.get("runs")
    if runs is not None:
        modes = ", ".join(sorted(set(runs["mode"])))
        rows += [
            ("exploration runs", len(runs), f"generated runs of the replication state machine ({modes} mode), every "
                                            "invariant checked after every step"),
            ("steps", int(runs["steps"].sum()), "rule applications of those runs (client requests, faults, sites "
                                                "added, PSCs moved, timers advanced ...)"),
            ("runs that converged", int(runs["converged"].sum()),
             "runs with no violation whose every replica equalled its authority at the end (every partition "
             "NORMAL, no deleted object left unpurged)"),
            ("violations", int(runs["violation_count"].sum()), "invariants violated, counted per run at its first "
                                                              "failing step (a run stops there)"),
        ]
    verdicts = data.get("verdicts")
    if verdicts is not None:
        modes = charts.run_modes(data)
        for verdict, n in sorted(verdicts["verdict"].value_counts().items()):
            by_mode = verdicts[verdicts["verdict"] == verdict]["trace"].map(lambda t: charts.trace_mode(t, modes))
            split = ", ".join(f"{k}: {v}" for k, v in sorted(by_mode.value_counts().items()))
            rows.append((f"checked inputs: {verdict}", int(n),
                         f"traces and captures the conformance checker judged {verdict} (by mode: {split}); each "
                         "is replayed against the reference of the mode it was recorded in"))
    messages = data.get("messages")
    if messages is not None:
        rows.append(("wire messages", len(messages), "messages the checked inputs logged, one row per send and per "
                                                     "receive (the lag charts read them)"))
    quarantine = data.get("quarantine")
    if quarantine is not None:
        rows.append(("inputs quarantined", len(quarantine), "inputs that are not valid traces or captures"))
    table = "".join(f"<tr><th>{html.escape(k)}</th><td class=n>{v:,}</td><td class=what>{html.escape(w)}</td></tr>"
                    for k, v, w in rows)
    parts = [f"<h2>Summary</h2><table><tr><th></th><th>count</th><th>what it counts</th></tr>{table}</table>"]
    violations = data.get("violations")
    if violations is not None and len(violations):
        first = violations[violations["run"] == violations["first_run"]].drop_duplicates("counterexample")
        items = "".join(
            f"<li><a href='{html.escape(_relative(Path(r.source) / r.counterexample, out))}'>{html.escape(r.counterexample)}"
            f"</a>: {html.escape(r.invariant)} ({html.escape(', '.join(r.errata) or 'unexplained')})</li>"
            for r in first.sort_values(["invariant", "counterexample"]).itertuples())
        parts.append(f"<h3>Counterexamples (one per distinct shrunk input)</h3><ul>{items}</ul>")
    if quarantine is not None and len(quarantine):
        items = "".join(f"<li>{html.escape(r.path)}: {html.escape(r.error)}</li>" for r in quarantine.itertuples())
        parts.append(f"<h3>Quarantined inputs</h3><ul>{items}</ul>")
    return "\n".join(parts)


def _relative(target: Path, start: Path) -> str:
    return Path(os.path.relpath(target.resolve(), start.resolve())).as_posix()


def _clause_table(data: dict[str, Any], base: str) -> str:
    rows = charts.clause_rows(data)
    divergences = data.get("divergences")
    div = divergences.groupby("clause").size().to_dict() if divergences is not None and len(divergences) else {}
    heads = [label for name, label in (("explore", "share of exploration runs"), ("check", "share of checked inputs"))
             if rows[name].notna().any()]
    body = []
    for r in rows.itertuples():
        shares = "".join(f"<td class=n>{getattr(r, name):.0%}</td>" for name in ("explore", "check")
                         if rows[name].notna().any())
        body.append(f"<tr><td><a href='{html.escape(clause_link(r.clause, base))}'>{html.escape(r.clause)}</a></td>"
                    f"<td>{html.escape(r.title)}</td>{shares}<td class=n>{div.get(r.clause, 0)}</td></tr>")
    extra = [c for c in sorted(div) if c not in set(rows["clause"])]
    body += [f"<tr><td>{html.escape(c)}</td><td></td>{'<td></td>' * len(heads)}<td class=n>{div[c]}</td></tr>"
             for c in extra]
    head = "".join(f"<th>{h}</th>" for h in heads)
    return ("<h2>Clauses</h2><p>Every registered clause, linked to its section in the annotated specification, with "
            "the share of runs and inputs that exercised it and the divergences that broke its rule.</p>"
            f"<table><tr><th>clause</th><th>title</th>{head}<th>divergences</th></tr>" + "".join(body) + "</table>")
