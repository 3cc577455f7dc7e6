"""mqspec pipeline report on small datasets written here (no Spark): captions true to the pictures, relative
links and a note when the docs are missing, clarified and literal traces apart, every number explained."""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mqspec.clauses import load_all
from mqspec.pipeline import report_charts
from mqspec.pipeline.runs import derive_seed
from mqspec.pipeline.report import load, write

ENTERPRISE = "00000000-0000-0000-0000-000000000000"
#: the colours a caption may name, as (R, G, B) bytes
NAMED = {"green": report_charts.GREEN, "blue": report_charts.BLUE, "red": report_charts.RED}


def dataset(folder: Path, rows: list[dict]) -> None:
    folder.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), folder / "part-0.parquet")


def messages(trace: str, lagging: str) -> list[dict]:
    """PEC0 sends changes 1..3 of the enterprise partition; PSC1 gets all three, ``lagging`` only the first."""
    rows = []
    for t, seq in ((10.0, 1), (20.0, 2), (30.0, 3)):
        for node, direction in (("PEC0", "send"), ("PSC1", "receive")) + (((lagging, "receive"),) if seq == 1 else ()):
            rows.append({"path": f"{trace}.ndjson", "trace": trace, "t": t, "node": node, "direction": direction,
                         "protocol": "mqdsrp", "message_type": "ChangePropagationMessage", "partition": ENTERPRISE,
                         "seq_low": float(seq), "seq": float(seq)})
    return rows


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> tuple[Path, Path]:
    """An explore folder (2 clarified runs, every registered clause but a few exercised) and a check folder (an
    exploration trace and a literal section 4 trace, with their wire messages)."""
    root = tmp_path_factory.mktemp("pipeline")
    clauses = load_all()
    skipped = {f"{c.document} {c.section}" for c in clauses if c.document == "MS-MQSD"}
    dataset(root / "explore" / "runs", [{"run": i, "seed": derive_seed(7, i), "mode": "clarified", "steps": 10,
                                         "converged": True, "violation_count": 0} for i in range(2)])
    dataset(root / "explore" / "coverage", [
        {"clause": f"{c.document} {c.section}", "document": c.document, "section": c.section, "title": c.title,
         "runs": 0 if f"{c.document} {c.section}" in skipped else 2,
         "share": 0.0 if f"{c.document} {c.section}" in skipped else 1.0} for c in clauses])
    traces = ("explore:7:0", "4.1-adding-a-site:literal:0")
    dataset(root / "check" / "verdicts", [{"path": f"{t}.ndjson", "trace": t, "verdict": "conformant"} for t in traces])
    dataset(root / "check" / "coverage", [{"path": f"{t}.ndjson", "clause": "MC-MQDSRP 3.1.7.2.2"} for t in traces])
    dataset(root / "check" / "messages", messages(traces[0], "BSC01") + messages(traces[1], "PSC2"))
    return root / "explore", root / "check"


@pytest.fixture(scope="module")
def report(outputs, tmp_path_factory) -> dict:
    """The report of both folders, its links to a published URL."""
    return write(list(outputs), tmp_path_factory.mktemp("report"), docs="https://docs.invalid/mqspec")


def pixels(path: Path):
    """The distinct colours of a picture, as (R, G, B) rows."""
    import matplotlib.image
    import numpy as np

    image = (matplotlib.image.imread(path)[:, :, :3] * 255).round().astype(np.int64).reshape(-1, 3)
    packed = np.unique(image[:, 0] << 16 | image[:, 1] << 8 | image[:, 2])
    return np.stack([packed >> 16, packed >> 8 & 255, packed & 255], axis=1)


def shows(colours, hex_colour: str) -> bool:
    """The picture holds the colour, drawn solid or as a band (alpha 0.35 over white), to within rounding."""
    rgb = [int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)]
    band = [round(0.35 * c + 0.65 * 255) for c in rgb]
    return any(bool((abs(colours - want) <= 2).all(axis=1).any()) for want in (rgb, band))


def test_each_caption_names_exactly_the_colours_its_picture_shows(report):
    """A caption names green, blue or red iff the picture has that colour (coverage: red bands for the clauses
    nothing exercised, here MS-MQSD's)."""
    result = report
    assert "coverage.png" in result["figures"]
    for name in result["figures"]:
        caption = result["captions"][name]["caption"]
        colours = pixels(Path(result["report"]).parent / name)
        for word, hex_colour in NAMED.items():
            assert (f"({word})" in caption or f"a {word} band" in caption) == shows(colours, hex_colour), (name, word)
    coverage = result["captions"]["coverage.png"]["caption"]
    missed = sum(c.document == "MS-MQSD" for c in load_all())
    assert f"a red band marks each of the {missed} clauses nothing exercised" in coverage


def test_the_coverage_chart_covers_the_four_documents_with_labels_a_reader_can_read(outputs, tmp_path, monkeypatch):
    """MC-MQDSRP, MS-MQSD, MS-MQCN and MS-MQDS each have a panel; the labels carry section and title at 9 pt."""
    import matplotlib.pyplot as plt

    drawn: list = []
    subplots = plt.subplots

    def keep(*args, **kwargs):
        drawn.append(subplots(*args, **kwargs))
        return drawn[-1]

    monkeypatch.setattr(plt, "subplots", keep)
    (chart,) = report_charts.coverage(load(list(outputs)), tmp_path)
    _fig, axes = drawn[0]
    assert [ax.get_title(loc="left").split(":")[0] for ax in axes[:, 0]] == ["MC-MQDSRP", "MS-MQSD", "MS-MQCN",
                                                                              "MS-MQDS"]
    labels = axes[0, 0].get_yticklabels()
    assert "3.1.7.2.2  Handle Directory Change" in [label.get_text() for label in labels]
    assert all(label.get_fontsize() >= 9 for label in labels) and chart.file == "coverage.png"


def test_links_are_relative_to_the_report_and_a_missing_site_is_said(outputs, tmp_path):
    """With a built site the clause links are relative paths to it; without one the page says so and how."""
    site = tmp_path / "docs" / "html"
    (site / "spec" / "mc-mqdsrp").mkdir(parents=True)
    (site / "index.html").write_text("<title>docs</title>")
    (site / "spec" / "mc-mqdsrp" / "3.1.7.2.2.html").write_text("<title>3.1.7.2.2</title>")
    result = write(list(outputs), tmp_path / "out" / "report", docs=str(site))
    page = Path(result["report"]).read_text()
    assert result["docs_missing"] is False and "file://" not in page and "not built" not in page
    link = "../../docs/html/spec/mc-mqdsrp/3.1.7.2.2.html"
    assert f"href='{link}'" in page and (Path(result["report"]).parent / link).is_file()
    gone = write(list(outputs), tmp_path / "other", docs=str(tmp_path / "nowhere"))
    text = Path(gone["report"]).read_text()
    assert gone["docs_missing"] is True and "is not built at" in text and "make docs" in text


def test_clarified_and_literal_traces_have_their_own_lag_chart_with_outside_legends(report):
    """The exploration trace is drawn in the clarified chart, the literal example in the literal one, each
    caption naming the replicas still behind at the end; a panel's servers never share a colour and style."""
    result = report
    assert {"lag-clarified.png", "lag-literal.png"} <= set(result["figures"])
    clarified, literal = (result["captions"][f"lag-{m}.png"]["caption"] for m in ("clarified", "literal"))
    assert "explore:7:0 partition 00000000: BSC01 2 behind at the end" in clarified and "literal:0" not in clarified
    assert "4.1-adding-a-site:literal:0 partition 00000000: PSC2 2 behind at the end" in literal
    assert "never converges" in literal and "explore:7:0" not in literal
    assert len(set(report_charts.styles(40))) == 40


def test_every_number_of_the_summary_says_what_it_counts(report):
    """Each summary row has a count and a sentence on what it counts."""
    page = Path(report["report"]).read_text()
    summary = page[page.index("<h2>Summary</h2>"):page.index("</table>")]
    rows = re.findall(r"<tr><th>([^<]+)</th><td class=n>([\d,]+)</td><td class=what>([^<]+)</td></tr>", summary)
    assert [r[0] for r in rows] == ["exploration runs", "steps", "runs that converged", "violations",
                                    "checked inputs: conformant", "wire messages"]
    assert all(len(what.split()) >= 5 for _, _, what in rows)
    assert "by mode: clarified: 1, literal: 1" in summary
