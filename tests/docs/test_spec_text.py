"""The committed quotes of the specifications are what tools/extract_spec.py makes of ../shared/spec."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / ".." / "shared" / "spec"


@pytest.mark.skipif(not (SPEC / "MC-MQDSRP.txt").is_file(), reason="../shared/spec is not beside this clone")
def test_extracted_text_is_up_to_date(tmp_path):
    """Running the extraction again gives the committed docs/spec_text files byte for byte."""
    run = subprocess.run([sys.executable, str(ROOT / "tools" / "extract_spec.py"), "--spec", str(SPEC),
                          "--out", str(tmp_path)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    for path in sorted(tmp_path.glob("*.json")):
        assert path.read_bytes() == (ROOT / "docs" / "spec_text" / path.name).read_bytes(), path.name


def test_every_section_of_chapters_2_to_4_is_extracted_in_order():
    """Each document's sections run in document order, with no number twice, and the handler sections are there."""
    for name in ("MC-MQDSRP", "MS-MQSD", "MS-MQCN"):
        sections = [s["section"] for s in json.loads((ROOT / "docs" / "spec_text" / f"{name}.json").read_text())["sections"]]
        keys = [tuple(int(p) for p in s.split(".")) for s in sections]
        assert keys == sorted(keys) and len(set(keys)) == len(keys), name
        assert {"2", "3", "4"} <= set(sections), name
    mqdsrp = json.loads((ROOT / "docs" / "spec_text" / "MC-MQDSRP.json").read_text())["sections"]
    text = {s["section"]: s["text"] for s in mqdsrp}
    assert "iSyncRequestMessage" in text["3.2.7.3"] and "Copyright" not in text["3.2.7.3"]


def test_a_missing_spec_folder_is_one_line_and_exit_2(tmp_path):
    """Without the specifications the tool says which file it could not read, in one line, and exits 2."""
    run = subprocess.run([sys.executable, str(ROOT / "tools" / "extract_spec.py"), "--spec", str(tmp_path / "none"),
                          "--out", str(tmp_path / "out")], capture_output=True, text=True)
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1 and "MC-MQDSRP.txt" in run.stderr


#: the PDF's page furniture as a reader would spot it in a quote: the running header with the document's
#: version, the copyright and release lines, page numbers, and the running title on a line of its own
FURNITURE = (
    re.compile(r"\[(?:\[\])?M[CS]-MQ\w+\] ?[—-] ?v\d{8}"),
    re.compile(r"Copyright\b.*\bMicrosoft Corporation\."),
    re.compile(r"^Release: \w+day, "),
    re.compile(r"^\d+ / \d+$"),
    re.compile(r"^\$\[\{\\it "),
    re.compile(r"^Message Queuing \(MSMQ\): Directory Service [A-Za-z ]+ Protocol(?: Specification)?$"),
)


@pytest.mark.parametrize("name", ["MC-MQDSRP", "MS-MQSD", "MS-MQCN", "MS-MQDS"])
def test_no_quote_carries_the_pdf_page_furniture(name):
    """No line of any committed quote is a page header, footer, page number or the running title."""
    found = [(s["section"], line) for s in json.loads((ROOT / "docs" / "spec_text" / f"{name}.json").read_text())["sections"]
             for line in s["text"].splitlines() if any(p.search(line.strip()) for p in FURNITURE)]
    assert found == []


def test_the_extraction_drops_footers_in_every_spelling_and_keeps_sentences_that_start_with_the_title():
    """A footer in a fence, the "[[]MC-MQDSRP]" spelling and the TeX copyright go; prose naming the protocol stays."""
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        from extract_spec import _clean
    finally:
        sys.path.pop(0)
    text = _clean([
        "- Set repMessage to rMessage.Body.", "",
        "[[]MC-MQDSRP] — v20130625 Message Queuing (MSMQ): Directory Service Replication Protocol", "",
        "```", "[MC-MQDSRP] — v20130625", "Message Queuing (MSMQ): Directory Service Replication Protocol", "```", "",
        "Copyright ${\\ensuremath{\\mathbb C}}$ 2013 Microsoft Corporation.", "", "12 / 45", "",
        "Message Queuing (MSMQ): Directory Service Discovery Protocol messages are formatted as UDP packets.",
    ])
    assert text == ("- Set repMessage to rMessage.Body.\n\n"
                    "Message Queuing (MSMQ): Directory Service Discovery Protocol messages are formatted as UDP packets.")
