"""A small corpus for the check pipeline: conformant traces (plain, gzip, zstd), a divergent one, a non-trace,
a cut zstd stream, a corrupt capture."""

from __future__ import annotations

import json
from pathlib import Path

from mqspec.oracle.compression import compress
from mqspec.oracle.record import scenario_trace

from tests.oracle.mutations import dump, flip, indices, parse
from tests.oracle.test_from_pcap import replication_capture

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def make_corpus(root: Path) -> dict[str, str]:
    """Write the corpus under ``root`` (nested folders); returns {file name: the verdict it should get}."""
    (root / "lab" / "nested").mkdir(parents=True)
    good = scenario_trace(str(SCENARIOS / "4.1-adding-a-site.yaml"))
    (root / "lab" / "a-site.ndjson").write_text(good, encoding="utf-8")
    (root / "lab" / "nested" / "a-bsc.ndjson").write_text(
        "\ufeff" + scenario_trace(str(SCENARIOS / "4.2-adding-a-bsc.yaml")), encoding="utf-8")  # a BOM, as Windows logs have
    events = parse(good)
    (root / "lab" / "divergent.ndjson").write_text(dump(flip(events, indices(events, "send")[3], 0)), encoding="utf-8")
    (root / "lab" / "notes.ndjson").write_text(json.dumps({"hello": "not a trace"}) + "\n", encoding="utf-8")
    (root / "lab" / "nested" / "cut.pcap").write_bytes(b"\xd4\xc3\xb2\xa1\x02\x00\x04")
    sends = [e for e in events if e["event"] == "send"]
    replication_capture(root / "lab" / "nested" / "capture.pcap", sends)
    (root / "lab" / "README.txt").write_text("not an input: ignored by the folder search\n")
    (root / "lab" / "zipped.ndjson.gz").write_bytes(compress(good.encode(), "x.gz"))
    packed = compress(scenario_trace(str(SCENARIOS / "4.3-creating-a-remote-queue.yaml")).encode(), "x.zst")
    (root / "lab" / "nested" / "packed.ndjson.zst").write_bytes(packed)
    (root / "lab" / "cut.ndjson.zst").write_bytes(packed[: len(packed) // 2])
    return {"a-site.ndjson": "conformant", "a-bsc.ndjson": "conformant", "divergent.ndjson": "divergent",
            "capture.pcap": "conformant", "notes.ndjson": "quarantine", "cut.pcap": "quarantine",
            "zipped.ndjson.gz": "conformant", "packed.ndjson.zst": "conformant", "cut.ndjson.zst": "quarantine"}
