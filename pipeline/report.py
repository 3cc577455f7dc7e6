"""``mqspec pipeline report``: a static HTML report (``index.html`` and PNG images) of explore and check outputs.

It reads the Parquet datasets with pyarrow (no Spark session needed) and draws, with matplotlib:
violations by invariant and mode; clause coverage per document (MC-MQDSRP, MS-MQSD, MS-MQCN);
divergences by clause; per partition, each replica's lag behind its authority over time, as the
wire shows it (``messages/``: the highest SeqNumber any server has sent for the partition, less
the highest one the replica has received); and the time each partition took to converge. Every
clause links to its section page in the published docs. The report is readable offline: the
images sit beside ``index.html``, nothing is fetched.
"""

from __future__ import annotations

import html
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mqspec.wording import plural

DOCUMENTS = ("MC-MQDSRP", "MS-MQSD", "MS-MQCN")
#: lag panels drawn at most (the partitions with the most messages)
LAG_PANELS = 6


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
        for name in ("runs", "violations", "coverage", "verdicts", "divergences", "messages", "quarantine"):
            df = read(d / name)
            if df is not None:
                found = True
                df["source"] = str(d)
                kind = "check_coverage" if name == "coverage" and (d / "verdicts").is_dir() else name
                frames.setdefault(kind, []).append(df)
        if not found:
            raise ReportError(f"{d}: no pipeline output here (runs/ or verdicts/ ...)")
    return {name: pd.concat(parts, ignore_index=True) for name, parts in frames.items()}


def clause_link(clause: str, docs: str) -> str:
    document, _, section = clause.partition(" ")
    return f"{docs.rstrip('/')}/spec/{document.lower()}/{section}.html"


def write(dirs: list[Path], out: Path, *, docs: str) -> dict[str, Any]:
    """Write the report into ``out``; returns what it holds (figures and counts)."""
    import matplotlib

    matplotlib.use("Agg")
    data = load(dirs)
    out.mkdir(parents=True, exist_ok=True)
    sections: list[str] = [f"<h1>mqspec pipeline report</h1><p>From: {', '.join(html.escape(str(d)) for d in dirs)}</p>"]
    figures: list[str] = []
    sections.append(_summary(data, dirs, out))
    for title, draw in (("Violations by invariant and mode", _violations),
                        ("Clause coverage per document", _coverage),
                        ("Divergences by clause", _divergences),
                        ("Replica lag behind the authority (LastSeqNumber, as the wire shows it)", _lag),
                        ("Time to convergence", _convergence)):
        name, caption = draw(data, out)
        if name is None:
            sections.append(f"<h2>{title}</h2><p class=none>{html.escape(caption)}</p>")
            continue
        figures.append(name)
        sections.append(f"<h2>{title}</h2><p>{html.escape(caption)}</p><img src='{name}' alt='{html.escape(title)}'>")
    sections.append(_clause_table(data, docs))
    (out / "index.html").write_text(_page("\n".join(sections)), encoding="utf-8")
    return {"report": str(out / "index.html"), "figures": figures}


def _page(body: str) -> str:
    return ("<!doctype html><html lang=en><head><meta charset=utf-8><title>mqspec pipeline report</title>"
            "<meta name=viewport content='width=device-width, initial-scale=1'><style>"
            "body{font-family:sans-serif;max-width:70em;margin:auto;padding:0 1em}img{max-width:100%}"
            "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left}"
            ".none{color:#777}</style></head><body>\n" + body + "\n</body></html>\n")


def _summary(data: dict[str, Any], dirs: list[Path], out: Path) -> str:
    rows = []
    runs = data.get("runs")
    if runs is not None:
        rows.append(("exploration runs", len(runs)))
        rows.append(("steps", int(runs["steps"].sum())))
        rows.append(("runs that converged", int(runs["converged"].sum())))
        rows.append(("violations", int(runs["violation_count"].sum())))
    verdicts = data.get("verdicts")
    quarantine = data.get("quarantine")
    if verdicts is not None:
        for verdict, n in sorted(verdicts["verdict"].value_counts().items()):
            rows.append((f"checked inputs: {verdict}", int(n)))
    if quarantine is not None:
        rows.append(("inputs quarantined", len(quarantine)))
    table = "".join(f"<tr><th>{html.escape(k)}</th><td>{v}</td></tr>" for k, v in rows)
    parts = [f"<h2>Summary</h2><table>{table}</table>"]
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


def _save(fig: Any, out: Path, name: str) -> str:
    fig.tight_layout()
    fig.savefig(out / name, dpi=90, metadata={"Software": None})
    import matplotlib.pyplot as plt

    plt.close(fig)
    return name


def _violations(data: dict[str, Any], out: Path) -> tuple[str | None, str]:
    import matplotlib.pyplot as plt

    v = data.get("violations")
    if v is None or not len(v):
        runs = data.get("runs")
        return None, "No violation." if runs is not None else "No exploration output."
    table = v.groupby(["invariant", "mode"]).size().unstack(fill_value=0).sort_index()
    fig, ax = plt.subplots(figsize=(9, 0.5 + 0.4 * len(table)))
    table.plot.barh(ax=ax)
    ax.set_xlabel("violations")
    ax.set_ylabel("")
    return _save(fig, out, "violations.png"), f"{plural(len(v), 'violation')} of {plural(len(table), 'invariant')}."


def _clause_shares(data: dict[str, Any]) -> Any:
    """(clause, document, section, share of runs or inputs exercising it) from explore and check coverage."""
    import pandas as pd

    parts = []
    coverage = data.get("coverage")
    if coverage is not None:
        parts.append(coverage.groupby(["clause", "document", "section"], as_index=False)["share"].max())
    checked = data.get("check_coverage")
    verdicts = data.get("verdicts")
    if checked is not None and verdicts is not None and len(verdicts):
        c = checked.groupby("clause", as_index=False)["path"].nunique()
        c["share"] = c["path"] / verdicts["path"].nunique()
        c["document"], c["section"] = c["clause"].str.split(" ").str[0], c["clause"].str.split(" ").str[1]
        parts.append(c[["clause", "document", "section", "share"]])
    if not parts:
        return None
    shares = pd.concat(parts).groupby(["clause", "document", "section"], as_index=False)["share"].max()
    shares["key"] = shares["section"].map(lambda s: tuple(int(p) if p.isdigit() else 0 for p in s.split(".")))
    return shares.sort_values(["document", "key"])


def _coverage(data: dict[str, Any], out: Path) -> tuple[str | None, str]:
    import matplotlib.pyplot as plt

    shares = _clause_shares(data)
    if shares is None:
        return None, "No coverage output."
    docs = [d for d in DOCUMENTS if d in set(shares["document"])] or sorted(set(shares["document"]))
    heights = [max(1, (shares["document"] == d).sum()) for d in docs]
    fig, axes = plt.subplots(len(docs), 1, figsize=(9, 1 + 0.16 * sum(heights)), squeeze=False,
                             gridspec_kw={"height_ratios": heights})
    for ax, doc in zip(axes[:, 0], docs, strict=True):
        part = shares[shares["document"] == doc]
        ax.barh(part["section"], part["share"], color=["#2a7" if s > 0 else "#c44" for s in part["share"]])
        ax.invert_yaxis()
        ax.set_xlim(0, 1)
        ax.set_title(f"{doc}: {(part['share'] > 0).sum()} of {plural(len(part), 'registered clause')} exercised", fontsize=9)
        ax.tick_params(axis="y", labelsize=6)
    axes[-1, 0].set_xlabel("share of runs / inputs exercising the clause")
    return _save(fig, out, "coverage.png"), "Red: a registered clause nothing exercised."


def _divergences(data: dict[str, Any], out: Path) -> tuple[str | None, str]:
    import matplotlib.pyplot as plt

    d = data.get("divergences")
    if d is None:
        return None, "No check output."
    if not len(d):
        return None, "No divergence: every checked trace conformed."
    counts = d.fillna({"clause": "(no clause)"}).groupby("clause").size().sort_values()
    fig, ax = plt.subplots(figsize=(9, 0.5 + 0.35 * len(counts)))
    counts.plot.barh(ax=ax, color="#c44")
    ax.set_xlabel("divergent traces")
    ax.set_ylabel("")
    return _save(fig, out, "divergences.png"), f"{plural(len(d), 'divergent trace')}."


def lag_frame(messages: Any) -> Any:
    """Per (trace, partition, node, t): the replica's lag, as the wire shows it (see the module docstring)."""
    import pandas as pd

    m = messages[messages["protocol"].eq("mqdsrp") & messages["seq"].notna() & messages["partition"].notna()
                 & messages["message_type"].isin(["ChangePropagationMessage", "SyncReplyMessage"])].copy()
    if not len(m):
        return pd.DataFrame(columns=["source", "trace", "partition", "node", "t", "lag"])
    m["seq"] = m["seq"].astype(float)
    out = []
    for (source, trace, partition), g in m.sort_values("t").groupby(["source", "trace", "partition"], sort=True):
        sent = g[g["direction"] == "send"]
        authority = sent["seq"].cummax()
        received = g[g["direction"] == "receive"]
        for node, r in received.groupby("node", sort=True):
            replica = r["seq"].cummax()
            times = sorted(set(r["t"]) | set(sent["t"]))
            a = pd.Series(authority.values, index=sent["t"].values).groupby(level=0).max().reindex(times).ffill()
            b = pd.Series(replica.values, index=r["t"].values).groupby(level=0).max().reindex(times).ffill().fillna(0)
            lag = (a - b).clip(lower=0).fillna(0)
            out.append(pd.DataFrame({"source": source, "trace": trace, "partition": partition, "node": node,
                                     "t": times, "lag": lag.values}))
    return pd.concat(out, ignore_index=True)


def _lag(data: dict[str, Any], out: Path) -> tuple[str | None, str]:
    import matplotlib.pyplot as plt

    messages = data.get("messages")
    if messages is None:
        return None, "No check output (messages/)."
    lag = lag_frame(messages)
    if not len(lag):
        return None, "No replication message with sequence numbers."
    busiest = lag.groupby(["source", "trace", "partition"]).size().sort_values(ascending=False).index[:LAG_PANELS]
    fig, axes = plt.subplots(len(busiest), 1, figsize=(9, 2.2 * len(busiest)), squeeze=False)
    for ax, (source, trace, partition) in zip(axes[:, 0], busiest, strict=True):
        part = lag[(lag["source"] == source) & (lag["trace"] == trace) & (lag["partition"] == partition)]
        for node, g in part.groupby("node", sort=True):
            ax.step(g["t"], g["lag"], where="post", label=node)
        ax.set_title(f"{trace}: partition {partition[:8]}", fontsize=9)
        ax.set_ylabel("changes behind")
        ax.legend(fontsize=7, loc="upper right")
    axes[-1, 0].set_xlabel("trace time (s)")
    return (_save(fig, out, "lag.png"),
            f"The busiest {len(busiest)} of {plural(lag.groupby(['source', 'trace', 'partition']).ngroups, 'partition')}.")


def convergence_times(messages: Any) -> Any:
    """Per (trace, partition): seconds from the authority's last new change to the last replica having it."""
    lag = lag_frame(messages)
    rows = []
    for (source, trace, partition), g in lag.groupby(["source", "trace", "partition"], sort=True):
        behind = g[g["lag"] > 0]
        if not len(behind):
            continue
        settled = g[g["t"] > behind["t"].max()]
        if len(settled):
            rows.append((source, trace, partition, float(settled["t"].min() - behind["t"].min())))
    import pandas as pd

    return pd.DataFrame(rows, columns=["source", "trace", "partition", "seconds"])


def _convergence(data: dict[str, Any], out: Path) -> tuple[str | None, str]:
    import matplotlib.pyplot as plt

    messages = data.get("messages")
    if messages is None:
        return None, "No check output (messages/)."
    times = convergence_times(messages)
    if not len(times):
        return None, "No partition fell behind and caught up."
    fig, ax = plt.subplots(figsize=(9, 3))
    ax.hist(times["seconds"], bins=min(30, max(5, len(times))), color="#27a")
    ax.set_xlabel("seconds from a replica falling behind to every replica caught up")
    ax.set_ylabel("partitions")
    return (_save(fig, out, "convergence.png"),
            f"{plural(len(times), 'partition')}; median {times['seconds'].median():.1f} s, max {times['seconds'].max():.1f} s.")


def _clause_table(data: dict[str, Any], docs: str) -> str:
    shares = _clause_shares(data)
    divergences = data.get("divergences")
    div = divergences.groupby("clause").size().to_dict() if divergences is not None and len(divergences) else {}
    if shares is None and not div:
        return ""
    rows = []
    clauses = list(shares["clause"]) if shares is not None else []
    clauses += [c for c in sorted(div) if c not in clauses]
    share = dict(zip(shares["clause"], shares["share"], strict=True)) if shares is not None else {}
    for c in clauses:
        rows.append(f"<tr><td><a href='{html.escape(clause_link(c, docs))}'>{html.escape(c)}</a></td>"
                    f"<td>{share.get(c, 0):.0%}</td><td>{div.get(c, 0)}</td></tr>")
    return ("<h2>Clauses</h2><table><tr><th>clause (its section in the annotated spec)</th>"
            "<th>runs / inputs exercising it</th><th>divergences</th></tr>" + "".join(rows) + "</table>")
