"""The pipeline commands' usage errors: one line on stderr, exit 2, nothing deleted, no Spark started."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from mqspec.cli import main


@pytest.mark.parametrize(("args", "message"), [
    (["explore", "--runs", "2", "--master", "yarn"], "master 'yarn': expected local[*]"),
    (["explore", "--runs", "2", "--mode", "literal", "--reading", "receive_sync_request"], "clarified mode"),
    (["explore", "--runs", "2", "--reading", "nope"], "nope is not an MC-MQDSRP handler"),
    (["explore", "--runs", "0"], "Invalid value for '--runs'"),
    (["check", "no/such/trace.ndjson"], "no such file or folder"),
    (["report", "no/such/dir", "--out", "r"], "no such folder"),
    (["explore", "--runs", "2", "--out", "out[1]"], "glob pattern"),
])
def test_usage_errors_exit_2_with_one_line(tmp_path, monkeypatch, args, message):
    """A bad master, reading, count or path is refused before any Spark session starts."""
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["pipeline", *args])
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output


def test_an_output_folder_with_foreign_files_is_refused_and_left_alone(tmp_path):
    """--out naming a folder of the user's own files is a usage error; the files stay."""
    (tmp_path / "mine.txt").write_text("keep me")
    (tmp_path / "t.ndjson").write_text("{}\n")
    result = CliRunner().invoke(main, ["pipeline", "check", str(tmp_path / "t.ndjson"), "--out", str(tmp_path)])
    assert result.exit_code == 2 and "did not write" in result.output
    assert (tmp_path / "mine.txt").read_text() == "keep me"


def test_a_folder_without_traces_is_a_usage_error(tmp_path):
    """check over a folder holding no *.ndjson, *.pcap or *.pcapng says so and exits 2."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "notes.txt").write_text("x")
    result = CliRunner().invoke(main, ["pipeline", "check", str(tmp_path / "in"), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "no trace" in result.output
