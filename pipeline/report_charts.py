"""The pictures of ``mqspec pipeline report`` (matplotlib, PNG), each with the caption that says what it shows.

Every chart function takes the loaded datasets and the output folder and returns :class:`Chart` rows: a
title, the image's file name (None when there is nothing to draw) and a caption computed from the same
numbers as the picture, so that the caption names only colours the picture has and counts what it draws.
"""

from __future__ import annotations

from typing import Any

import attrs

from mqspec.wording import plural

#: the documents whose registered clauses the coverage chart shows, in this order
DOCUMENTS = ("MC-MQDSRP", "MS-MQSD", "MS-MQCN", "MS-MQDS")
#: colours the captions name (the test reads them back from the pictures)
GREEN, BLUE, RED = "#1b9e77", "#3a6fc4", "#d62728"
#: lag panels drawn at most per group
LAG_PANELS = 4
#: the wire messages that carry a partition's changes to a replica
CHANGE_MESSAGES = ("ChangePropagationMessage", "SyncReplyMessage")


@attrs.frozen
class Chart:
    """One picture of the report: its heading, its file (None: nothing to draw) and its caption."""

    title: str
    file: str | None
    caption: str
    #: the colours drawn, by the name the caption uses for them ("green", "red", ...)
    colours: tuple[str, ...] = ()


def save(fig: Any, out: Any, name: str) -> str:
    import matplotlib.pyplot as plt

    fig.savefig(out / name, dpi=100, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    return name


# --- which traces are which ------------------------------------------------------------------------------


def trace_mode(trace: str, modes: dict[tuple[int, int], str]) -> str:
    """The mode a trace was recorded in: a scenario trace's is in its id (``NAME:MODE:SEED``); an exploration
    run's (``explore:SEED:RUN``) is its run's in the campaign's runs/ (``modes``, see :func:`run_modes`);
    ``unknown`` when the report was not given that campaign."""
    parts = trace.split(":")
    if parts[0] == "explore" and len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
        from mqspec.pipeline.runs import derive_seed

        return modes.get((int(parts[2]), derive_seed(int(parts[1]), int(parts[2]))), "unknown")
    if len(parts) >= 3 and parts[-2] in ("clarified", "literal"):
        return parts[-2]
    return "unknown"


def run_modes(data: dict[str, Any]) -> dict[tuple[int, int], str]:
    """(run, its seed) -> mode, for every exploration run the report reads."""
    runs = data.get("runs")
    if runs is None:
        return {}
    return {(int(r.run), int(r.seed)): str(r.mode) for r in runs.itertuples()}


# --- violations ------------------------------------------------------------------------------------------


def violations(data: dict[str, Any], out: Any) -> list[Chart]:
    import matplotlib.pyplot as plt

    title = "Violations by invariant and mode"
    v = data.get("violations")
    runs = data.get("runs")
    if v is None or not len(v):
        text = (f"No violation: every invariant held after every step of the {plural(len(runs), 'run')} explored."
                if runs is not None else "No exploration output.")
        return [Chart(title, None, text)]
    table = v.groupby(["invariant", "mode"]).size().unstack(fill_value=0).sort_index()
    fig, ax = plt.subplots(figsize=(10, 0.6 + 0.45 * len(table)))
    table.plot.barh(ax=ax)
    ax.set_xlabel("violations (one per run and invariant that failed)")
    ax.set_ylabel("")
    ax.legend(title="mode", loc="upper left", bbox_to_anchor=(1.01, 1))
    return [Chart(title, save(fig, out, "violations.png"),
                  f"{plural(len(v), 'violation')} of {plural(len(table), 'invariant')} in "
                  f"{plural(v['run'].nunique(), 'run')}; the bars count them per invariant and mode.")]


# --- clause coverage -------------------------------------------------------------------------------------


def clause_rows(data: dict[str, Any]) -> Any:
    """Per registered clause: document, section, title, and the share of exploration runs and of checked
    inputs that exercised it (None where there is no such output)."""
    import pandas as pd

    from mqspec.clauses import load_all

    rows = pd.DataFrame([{"clause": f"{c.document} {c.section}", "document": c.document, "section": c.section,
                          "title": c.title} for c in load_all()])
    coverage = data.get("coverage")
    rows["explore"] = None
    if coverage is not None and len(coverage):
        share = coverage.groupby("clause")["share"].max()
        rows["explore"] = rows["clause"].map(share).fillna(0.0)
    checked, verdicts = data.get("check_coverage"), data.get("verdicts")
    rows["check"] = None
    if checked is not None and verdicts is not None and len(verdicts):
        share = checked.groupby("clause")["path"].nunique() / verdicts["path"].nunique()
        rows["check"] = rows["clause"].map(share).fillna(0.0)
    rows["key"] = rows["section"].map(lambda s: tuple(int(p) if p.isdigit() else 0 for p in s.split(".")))
    rows["order"] = rows["document"].map({d: i for i, d in enumerate(DOCUMENTS)}).fillna(len(DOCUMENTS))
    return rows.sort_values(["order", "key"]).reset_index(drop=True)


def coverage(data: dict[str, Any], out: Any) -> list[Chart]:
    import matplotlib.pyplot as plt

    title = "Clause coverage per document"
    rows = clause_rows(data)
    series = [(name, label, colour) for name, label, colour in
              (("explore", "exploration runs", GREEN), ("check", "checked inputs", BLUE))
              if rows[name].notna().any()]
    if not series:
        return [Chart(title, None, "No coverage output (neither explore's coverage/ nor check's).")]
    exercised = sum((rows[name].fillna(0) > 0) for name, _, _ in series) > 0
    docs = [d for d in DOCUMENTS if (rows["document"] == d).any()]
    heights = [int((rows["document"] == d).sum()) for d in docs]
    fig, axes = plt.subplots(len(docs), 1, figsize=(11, 1.2 * len(docs) + 0.3 * sum(heights)), squeeze=False,
                             gridspec_kw={"height_ratios": heights})
    width = 0.8 / len(series)
    for ax, doc in zip(axes[:, 0], docs, strict=True):
        part = rows[rows["document"] == doc].reset_index(drop=True)
        hit = exercised[rows["document"] == doc].reset_index(drop=True)
        for y, missed in enumerate(~hit):
            if missed:  # a registered clause nothing exercised: a red band across the row
                ax.axhspan(y - 0.45, y + 0.45, color=RED, alpha=0.35, lw=0)
        for i, (name, label, colour) in enumerate(series):
            offset = (i - (len(series) - 1) / 2) * width
            ax.barh([y + offset for y in range(len(part))], part[name].fillna(0), height=width, color=colour,
                    label=label)
        ax.set_yticks(range(len(part)), [f"{s}  {t}" for s, t in zip(part["section"], part["title"], strict=True)])
        ax.tick_params(axis="y", labelsize=9)
        ax.set_ylim(len(part) - 0.5, -0.5)
        ax.set_xlim(0, 1)
        ax.set_title(f"{doc}: {int(hit.sum())} of {plural(len(part), 'registered clause')} exercised", fontsize=11,
                     loc="left")
    axes[0, 0].legend(loc="lower left", bbox_to_anchor=(0, 1.04), ncol=len(series), fontsize=9, frameon=False)
    axes[-1, 0].set_xlabel("share exercising the clause")
    bars = " and ".join(f"of the {label} ({colour_name(colour)})" for _, label, colour in series)
    missed = int((~exercised).sum())
    caption = (f"Each row is a clause registered in mqspec's clause registry (mqspec clauses); the bars show the "
               f"share {bars} that exercised it. {int(exercised.sum())} of {plural(len(rows), 'clause')} were "
               "exercised" + (f"; a red band marks each of the {plural(missed, 'clause')} nothing exercised." if missed
                              else "; none was left unexercised."))
    colours = tuple(colour_name(c) for _, _, c in series) + (("red",) if missed else ())
    return [Chart(title, save(fig, out, "coverage.png"), caption, colours)]


def colour_name(colour: str) -> str:
    return {GREEN: "green", BLUE: "blue", RED: "red"}[colour]


# --- divergences -----------------------------------------------------------------------------------------


def divergences(data: dict[str, Any], out: Any) -> list[Chart]:
    import matplotlib.pyplot as plt

    title = "Divergences by clause"
    d = data.get("divergences")
    if d is None:
        return [Chart(title, None, "No check output.")]
    if not len(d):
        verdicts = data.get("verdicts")
        n = len(verdicts) if verdicts is not None else 0
        return [Chart(title, None, f"No divergence: none of the {plural(n, 'checked input')} diverged.")]
    counts = d.fillna({"clause": "(no clause)"}).groupby("clause").size().sort_values()
    fig, ax = plt.subplots(figsize=(10, 0.6 + 0.4 * len(counts)))
    counts.plot.barh(ax=ax, color=RED)
    ax.set_xlabel("divergent traces")
    ax.set_ylabel("")
    return [Chart(title, save(fig, out, "divergences.png"),
                  f"{plural(len(d), 'divergent trace')}, counted by the clause whose rule each first broke (red).",
                  ("red",))]


# --- replica lag and convergence -------------------------------------------------------------------------


def lag_frame(messages: Any) -> Any:
    """Per (source, trace, partition, node, t): the replica's lag as the wire shows it: the highest SeqNumber
    any server has sent for the partition in a change propagation or sync reply, less the highest the node
    has received in one."""
    import pandas as pd

    m = messages[messages["protocol"].eq("mqdsrp") & messages["seq"].notna() & messages["partition"].notna()
                 & messages["message_type"].isin(CHANGE_MESSAGES)].copy()
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


def with_modes(frame: Any, data: dict[str, Any]) -> Any:
    modes = run_modes(data)
    frame = frame.copy()
    frame["mode"] = frame["trace"].map(lambda t: trace_mode(t, modes))
    return frame


def styles(n: int) -> list[tuple[Any, str]]:
    """``n`` distinct (colour, line style) pairs: tab10's ten colours, then again dashed, then dotted."""
    import matplotlib

    colours = matplotlib.colormaps["tab10"].colors
    return [(colours[i % 10], ("-", "--", ":", "-.")[i // 10 % 4]) for i in range(n)]


def lag(data: dict[str, Any], out: Any) -> list[Chart]:
    title = "Replica lag behind the authority, as the wire shows it"
    messages = data.get("messages")
    if messages is None:
        return [Chart(title, None, "No check output (messages/).")]
    frame = lag_frame(messages)
    if not len(frame):
        return [Chart(title, None, "No replication message with sequence numbers in the checked inputs.")]
    frame = with_modes(frame, data)
    pairs = frame.groupby(["source", "trace", "partition"]).ngroups
    replication = messages[messages["protocol"].eq("mqdsrp") & messages["partition"].notna()]
    all_pairs = replication.groupby(["source", "trace", "partition"]).ngroups
    how = ("A line is one replica: the highest SeqNumber any server has sent for the partition (in a change "
           "propagation or a sync reply) less the highest that replica has received in one. It is the wire's view, "
           "not the replica's state: a server that takes over a moved PSC's state (E-313) or has its changes "
           "another way shows a lag until a message reaches it, and a server that left (a moved PSC's old machine, "
           "a deleted site's) keeps its last lag. Whether a run converged is judged on the servers' states at its "
           "end (the summary), not on this chart.")
    charts = []
    for mode, name, why in (
        ("clarified", "lag-clarified.png", "clarified mode (the exploration campaign and the section 4 examples)"),
        ("literal", "lag-literal.png", "literal mode (the section 4 examples recorded in literal mode: the literal "
                                       "text never converges in them, E-119, E-112, E-114, E-131, E-133)"),
        ("unknown", "lag-other.png", "traces whose mode the report cannot tell (exploration runs of a campaign "
                                     "whose runs/ the report was not given, or traces of other tools)")):
        part = frame[frame["mode"] == mode]
        if not len(part):
            continue
        drawn, count = _lag_panels(part, out, name)
        charts.append(Chart(
            f"{title}: {mode}", name,
            f"{why[0].upper()}{why[1:]}: the {plural(min(count, LAG_PANELS), 'partition')} with the most replica updates, of the "
            f"{count} (trace, partition) pairs of {mode}-mode traces that carried changes. Of all "
            f"{all_pairs} (trace, partition) pairs the checked traces' replication messages name, {pairs} carried "
            "changes; the others saw only sync requests, acknowledgements or sequence number headers. "
            f"{drawn} {how}"))
    return charts


def _lag_panels(part: Any, out: Any, name: str) -> tuple[str, int]:
    """Draw the busiest (trace, partition) pairs of ``part``; returns a sentence on their end lags, and the count."""
    import matplotlib.pyplot as plt

    sizes = part.groupby(["source", "trace", "partition"]).size().sort_values(ascending=False, kind="stable")
    busiest = list(sizes.index[:LAG_PANELS])
    fig, axes = plt.subplots(len(busiest), 1, figsize=(11, 3.2 * len(busiest)), squeeze=False)
    ends = []
    for ax, (source, trace, partition) in zip(axes[:, 0], busiest, strict=True):
        panel = part[(part["source"] == source) & (part["trace"] == trace) & (part["partition"] == partition)]
        nodes = sorted(set(panel["node"]))
        for (node, g), (colour, style) in zip(panel.groupby("node", sort=True), styles(len(nodes)), strict=True):
            ax.step(g["t"], g["lag"], where="post", label=node, color=colour, linestyle=style)
        last = panel.sort_values("t").groupby("node")["lag"].last()
        behind = last[last > 0]
        ends.append(f"{trace} partition {partition[:8]}: "
                    + (f"{', '.join(f'{n} {int(v)}' for n, v in behind.items())} behind at the end"
                       if len(behind) else "every replica caught up"))
        ax.set_title(f"{trace}: partition {partition[:8]}…", fontsize=10, loc="left")
        ax.set_ylabel("changes behind")
        # outside the plot, in as many columns as keep it within the panel's height
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1), title="server", title_fontsize=8,
                  ncol=1 + (len(nodes) - 1) // 9)
    axes[-1, 0].set_xlabel("trace time (s)")
    save(fig, out, name)
    return "At the end of each panel: " + "; ".join(ends) + ".", int(len(sizes))


def convergence_times(messages: Any) -> Any:
    """Per (trace, partition): seconds from a replica first falling behind to the last one catching up, on the
    wire; partitions where a replica is still behind at the end are left out (and counted by the caption)."""
    import pandas as pd

    lagging = lag_frame(messages)
    rows = []
    for (source, trace, partition), g in lagging.groupby(["source", "trace", "partition"], sort=True):
        behind = g[g["lag"] > 0]
        if not len(behind):
            continue
        settled = g[g["t"] > behind["t"].max()]
        if len(settled):
            rows.append((source, trace, partition, float(settled["t"].min() - behind["t"].min())))
    return pd.DataFrame(rows, columns=["source", "trace", "partition", "seconds"])


def convergence(data: dict[str, Any], out: Any) -> list[Chart]:
    import matplotlib.pyplot as plt

    title = "Time to convergence (clarified mode)"
    messages = data.get("messages")
    if messages is None:
        return [Chart(title, None, "No check output (messages/).")]
    modes = run_modes(data)
    clarified = messages[messages["trace"].map(lambda t: trace_mode(t, modes)) == "clarified"]
    times = convergence_times(clarified)
    lagging = lag_frame(clarified)
    fell = lagging[lagging["lag"] > 0].groupby(["source", "trace", "partition"]).ngroups if len(lagging) else 0
    if not len(times):
        return [Chart(title, None, "No partition of a clarified-mode trace fell behind and caught up on the wire.")]
    fig, ax = plt.subplots(figsize=(10, 3))
    ax.hist(times["seconds"], bins=min(30, max(5, len(times))), color=BLUE)
    ax.set_xlabel("seconds from a replica falling behind to every replica caught up (trace time)")
    ax.set_ylabel("partitions")
    return [Chart(title, save(fig, out, "convergence.png"),
                  f"{plural(len(times), 'partition')} of clarified-mode traces fell behind and caught up on the wire "
                  f"(blue): median {times['seconds'].median():.1f} s, longest {times['seconds'].max():.1f} s. "
                  f"{fell - len(times)} of the {fell} that fell behind end with a replica behind on the wire (see "
                  "the lag chart: the wire's view, not the servers' states); the literal-mode examples, which "
                  "never converge, are left out.", ("blue",))]
