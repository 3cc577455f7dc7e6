"""The CLI's edges: bad input is one stderr line and exit 2, never a traceback."""

import subprocess
import sys

import pytest


def run_cli(*args, stdin=None):
    return subprocess.run(
        [sys.executable, "-m", "mqspec", *args], capture_output=True, text=True, input=stdin
    )


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["decode", "--protocol", "mqdsrp", "--hex", "zz"], "not hexadecimal"),
        (["decode", "--protocol", "mqdsrp", "/nonexistent/file"], "No such file"),
        (["decode", "--hex", "00"], "--protocol is required"),
        (["decode", "--protocol", "mqdsrp", "--hex", "00", "file"], "not both"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(args, needle):
    """Usage mistakes print one line on stderr naming the problem and exit 2."""
    out = run_cli(*args)
    assert out.returncode == 2
    assert needle in out.stderr
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_encode_rejects_bad_json_with_line_and_column(tmp_path):
    """A JSON syntax error names the file, line and column."""
    path = tmp_path / "bad.json"
    path.write_text("{\n  nope\n}")
    out = run_cli("encode", "--protocol", "mqdsrp", str(path))
    assert out.returncode == 2
    assert "line 2 column 3" in out.stderr and "Traceback" not in out.stderr


def test_version_option():
    """`mqspec --version` prints the package version."""
    out = run_cli("--version")
    assert out.returncode == 0 and "mqspec" in out.stdout
