"""mqspec check reads traces compressed with gzip (.ndjson.gz) or Zstandard (.ndjson.zst), chosen by extension."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from mqspec.cli import main
from mqspec.oracle.compression import compress
from mqspec.oracle.record import scenario_trace

SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "4.1-adding-a-site.yaml"


def test_compressed_traces_are_checked_as_the_plain_one(tmp_path):
    """The same trace, plain, gzip and zstd: the same verdict and report lines (paths aside); the compressed
    bytes are the same for the same text (gzip keeps no time or name)."""
    text = scenario_trace(str(SCENARIO))
    reports = []
    for name in ("t.ndjson", "t.ndjson.gz", "t.ndjson.zst"):
        (tmp_path / name).write_bytes(compress(text.encode(), name))
        result = CliRunner().invoke(main, ["check", str(tmp_path / name)])
        assert result.exit_code == 0, result.output
        reports.append(result.output.replace(str(tmp_path / name), "T"))
    assert reports[0] == reports[1] == reports[2] and "conformant" in reports[0]
    assert (tmp_path / "t.ndjson.gz").stat().st_size * 5 < len(text)
    assert compress(text.encode(), "x.gz") == (tmp_path / "t.ndjson.gz").read_bytes()


def test_a_cut_or_foreign_compressed_file_is_one_line_and_exit_2(tmp_path):
    """A zstd stream cut in half, or plain text named .gz: one trace error line naming the file, exit 2."""
    data = compress(scenario_trace(str(SCENARIO)).encode(), "x.zst")
    (tmp_path / "cut.ndjson.zst").write_bytes(data[: len(data) // 2])
    (tmp_path / "plain.ndjson.gz").write_text('{"event": "header"}\n')
    for name in ("cut.ndjson.zst", "plain.ndjson.gz"):
        result = CliRunner().invoke(main, ["check", str(tmp_path / name)])
        assert result.exit_code == 2, result.output
        (line,) = result.output.strip().splitlines()
        assert line.startswith(f"mqspec: trace error: {tmp_path / name}") and "Traceback" not in result.output
