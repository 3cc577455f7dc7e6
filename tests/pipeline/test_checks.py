"""The per-input rows of the check pipeline (no Spark): verdicts, quarantine, messages, one row per input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mqspec.pipeline.checks import check_rows, find_inputs, judge, message_fields

from .corpus import make_corpus


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("corpus")
    return root, make_corpus(root)


def test_folders_are_searched_recursively_for_traces_and_captures(corpus):
    """find_inputs keeps *.ndjson, *.pcap and *.pcapng under a folder, sorted, and nothing else."""
    root, expected = corpus
    assert sorted(Path(p).name for p in find_inputs([root])) == sorted(expected)


def test_every_input_gets_one_verdict_or_one_quarantine_row(corpus):
    """Each input yields exactly one verdict or quarantine row, and the verdict is the one mqspec check gives."""
    root, expected = corpus
    for path in find_inputs([root]):
        rows = list(check_rows(path))
        heads = [r for r in rows if r["table"] in ("verdict", "quarantine")]
        assert len(heads) == 1, path
        got = "quarantine" if heads[0]["table"] == "quarantine" else heads[0]["verdict"]
        assert got == expected[Path(path).name], (path, heads[0])


def test_a_divergence_names_its_event_node_and_clause(corpus):
    """The divergent trace's verdict row carries the first divergence: event, node, clause and a summary."""
    root, _ = corpus
    (verdict, *rest) = check_rows(str(root / "lab" / "divergent.ndjson"))
    assert verdict["conformant"] is False and verdict["event"] > 0 and verdict["node"]
    assert verdict["clause"].startswith("MC-MQDSRP 2.2") and verdict["summary"]
    assert [r["table"] for r in rest].count("divergence") == 1


def test_a_quarantined_input_carries_the_error_line_mqspec_check_prints(corpus):
    """A non-trace gets 'trace error: PATH:LINE: FIELD: reason'; a cut capture a 'capture error' line."""
    root, _ = corpus
    (row,) = check_rows(str(root / "lab" / "notes.ndjson"))
    assert row["error"].startswith("trace error: ") and "notes.ndjson:1" in row["error"]
    (row,) = check_rows(str(root / "lab" / "nested" / "cut.pcap"))
    assert row["error"].startswith("capture error: ") and "\n" not in row["error"]


def test_messages_carry_their_type_and_key_header_fields(corpus):
    """Every send and receive of a trace is a message row; a ChangePropagation names partition, sequence numbers and count."""
    root, _ = corpus
    rows = [r for r in check_rows(str(root / "lab" / "a-site.ndjson")) if r["table"] == "message"]
    assert {r["direction"] for r in rows} == {"send", "receive"}
    props = [r for r in rows if r["message_type"] == "ChangePropagationMessage" and r.get("seq") is not None]
    assert props and all(r["partition"] and r["seq"] >= r["seq_low"] for r in props)


def test_an_undecodable_body_is_a_row_with_its_error():
    """A body the codec refuses gives no type and the codec's one-line error, never an exception."""
    fields = message_fields("mqdsrp", "00")
    assert fields["message_type"] is None and fields["error"].startswith("decode error: ")


def test_an_input_is_read_once_for_its_verdict_coverage_and_messages(corpus, monkeypatch):
    """The checker's own pass over a trace's bytes gives its verdict, its coverage and a row for every wire message
    (past the first divergence too): no read is added for the messages (a conformant trace is read once; a
    divergent one as often as `mqspec check` alone reads it, to name the broken clause)."""
    from mqspec.oracle import source
    from mqspec.oracle.check import check_source

    root, _ = corpus
    opened: list[str] = []
    real = source.text_of
    monkeypatch.setattr(source, "text_of", lambda data, name: opened.append(name) or real(data, name))
    for name, reads in (("zipped.ndjson.gz", 1), ("divergent.ndjson", None)):
        path = next(root.rglob(name))
        check_source(source.LineSource.from_bytes(path.read_bytes(), str(path)))
        alone = len(opened)
        opened.clear()
        heads, messages = judge(str(path), path.read_bytes())
        assert len(opened) == alone == (reads or alone)
        opened.clear()
        assert {r["table"] for r in heads} >= {"verdict", "coverage"}
        events = [json.loads(line) for line in real(path.read_bytes(), name)]
        wire = [e for e in events if e["event"] in ("send", "receive", "datagram", "notification")]
        assert sum(b.num_rows for b in messages) == len(wire) > 0
