"""The CLI's edges: bad input is one stderr line and exit 2, never a traceback."""

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest


GUID = "00000000-0000-0000-0000-000000000001"


def run_cli(*args, stdin=None):
    return subprocess.run(
        [sys.executable, "-m", "mqspec", *args], capture_output=True, text=True, input=stdin
    )


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["decode", "--protocol", "mqdsrp", "--hex", "zz"], "not a hexadecimal digit"),
        (["decode", "--protocol", "mqdsrp", "/nonexistent/file"], "No such file"),
        (["decode", "--hex", "00"], "--protocol is required"),
        (["decode", "--timeout", "1"], "mqspec: usage: No such option '--timeout'."),
        (["nope"], "mqspec: usage: No such command 'nope'."),
        (["mqsd", "discover", "--to", "127.0.0.1:9", "--enterprise", GUID, "--site", GUID, "--timeout", "nan"],
         "mqspec: usage: Invalid value for '--timeout': 'nan' is not a number of seconds"),
        (["mqsd", "discover", "--to", "127.0.0.1:9", "--enterprise", GUID, "--site", GUID, "--timeout", "inf"],
         "mqspec: usage: Invalid value for '--timeout': inf is not in the range 0.001<=x<=3600.0."),
        (["mqsd", "probe", "--to", "127.0.0.1:9", "--enterprise", GUID, "--site", GUID, "--connected-network", GUID,
          "--timeout", "nan"], "mqspec: usage: Invalid value for '--timeout': 'nan' is not a number of seconds"),
        (["decode", "--protocol", "mqdsrp", "--hex", "00", "file"], "not --hex and FILE"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(args, needle):
    """Usage mistakes print one line on stderr naming the problem and exit 2."""
    out = run_cli(*args)
    assert out.returncode == 2
    assert needle in out.stderr
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("args", [[], ["mqsd"], ["scenario"]])
def test_a_group_without_a_command_prints_its_help(args):
    """`mqspec` (or `mqspec mqsd`) alone prints the help with its list of commands, not a one-line usage error."""
    out = run_cli(*args)
    assert out.stderr.startswith("Usage: ") and "Commands:" in out.stderr and len(out.stderr.splitlines()) > 5
    assert "mqspec: usage:" not in out.stderr


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


# --- issue 15: hex text, examples, encode input -------------------------------------------------

REPO = Path(__file__).resolve().parents[1]


def one_line_exit_2(out):
    """The CLI's bad-input shape: nothing on stdout, one stderr line, exit 2, no traceback."""
    assert out.returncode == 2 and out.stdout == "", out.stderr
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("mqspec: ") and "Traceback" not in out.stderr
    return lines[0]


def test_hex_errors_name_the_character_and_its_position():
    """A look-alike letter pasted from MS-MQSD section 4 is named with its position and the digit it resembles."""
    # the second reply's first row as the plain-text specification prints it: a Greek Alpha for "A1"
    line = one_line_exit_2(run_cli("decode", "-p", "mqsd", "--hex", "00 02 00 00 03 \u03911 91 F2"))
    assert line.startswith("mqspec: usage: --hex: character 16 is '\u0391' (GREEK CAPITAL LETTER ALPHA), "
                           "not a hexadecimal digit; it looks like 'A'")
    line = one_line_exit_2(run_cli("decode", "-p", "mqsd", "--hex", "3C E\u0417 4F"))
    assert "character 5 is '\u0417' (CYRILLIC CAPITAL LETTER ZE)" in line and "looks like '3'" in line
    line = one_line_exit_2(run_cli("decode", "-p", "mqsd", "--hex", "0x" + "00" * 30 + "zz"))
    assert "--hex: character 63 is 'z' (LATIN SMALL LETTER Z), not a hexadecimal digit" in line
    assert one_line_exit_2(run_cli("decode", "-p", "mqsd", "--hex", "0 01")) == (
        "mqspec: usage: --hex: 3 hexadecimal digits, an odd number (a byte is two digits)")


def test_hex_split_digits_and_colons_still_decode():
    """Digits split by a blank (the spec's "4 F") or by colons are read as the bytes they spell."""
    from mqspec.model import examples_mqsd

    text = " ".join(f"{b:02X}" for b in examples_mqsd.CLIENT_REQUEST).replace("4F", "4 F")
    spaced = run_cli("decode", "-p", "mqsd", "--hex", text)
    colons = run_cli("decode", "-p", "mqsd", "--hex", examples_mqsd.CLIENT_REQUEST.hex(":"))
    assert spaced.returncode == colons.returncode == 0 and spaced.stdout == colons.stdout


@pytest.mark.parametrize("name", ["client_request", "reply_local_site", "reply_other_site"])
def test_section_4_examples_decode_by_name(name):
    """`decode --example NAME` prints the MS-MQSD section 4 packet NAME decoded, as --hex of its bytes does."""
    from mqspec.model import examples_mqsd

    by_name = run_cli("decode", "--example", name)
    by_hex = run_cli("decode", "-p", "mqsd", "--hex", examples_mqsd.EXAMPLES[name].hex())
    assert by_name.returncode == 0 and by_name.stdout == by_hex.stdout
    assert json.loads(by_name.stdout)["message"].startswith("Topology")


def test_example_of_another_protocol_is_a_usage_error():
    """The examples are MS-MQSD packets: --example with --protocol mqdsrp is a usage error."""
    assert one_line_exit_2(run_cli("decode", "-p", "mqdsrp", "--example", "client_request")) == (
        "mqspec: usage: --example packets are MS-MQSD messages, not --protocol mqdsrp")


def test_readme_decode_examples_run_as_written():
    """Every `mqspec decode` line of README.md with --hex or --example runs as printed and exits 0."""
    lines = [line.split("  #")[0] for line in (REPO / "README.md").read_text(encoding="utf-8").splitlines()
             if line.startswith(".venv/bin/mqspec decode") and ("--hex" in line or "--example" in line)]
    assert len(lines) >= 2
    for line in lines:
        out = run_cli(*shlex.split(line)[1:])
        assert out.returncode == 0, (line, out.stderr)
        assert json.loads(out.stdout)["message"]


def test_encode_of_deeply_nested_json_is_one_line(tmp_path):
    """JSON nested 2,000 deep is one `json error` line and exit 2, not a RecursionError."""
    path = tmp_path / "deep.json"
    path.write_text("[" * 2000 + "]" * 2000)
    assert one_line_exit_2(run_cli("encode", "-p", "mqsd", str(path))) == f"mqspec: json error: {path}: nested too deeply"
    path.write_text('{"message": "TopologyClientRequest", "x": ' + "{\"a\": " * 100000 + "1" + "}" * 100000 + "}")
    assert "nested too deeply" in one_line_exit_2(run_cli("encode", "-p", "mqsd", str(path)))


def test_encode_names_the_field_a_validator_refuses(tmp_path):
    """A NUL inside requester_name is refused naming ChangeRequestMessage.requester_name, not "invalid value @ $"."""
    from mqspec.model.guid import Guid
    from mqspec.model.jsonform import to_json
    from mqspec.model.mqdsrp import ChangeRequestMessage, Command, DirectoryChange
    from mqspec.model.seqnum import SequenceNumber

    part = Guid.parse("00112233-4455-6677-8899-aabbccddeeff")
    change = DirectoryChange(command=Command.UPDATE, partition_id=part, previous_seq_number=SequenceNumber(0),
                             seq_number=SequenceNumber(1), purged_seq_number=SequenceNumber(0), properties=(),
                             path_name="q")
    data = to_json(ChangeRequestMessage(part, part, 0, "requester", None, change))
    path = tmp_path / "nul.json"
    path.write_text(json.dumps({**data, "requester_name": "a\u0000b"}))
    line = one_line_exit_2(run_cli("encode", "-p", "mqdsrp", str(path)))
    assert line.startswith(f"mqspec: encode error: {path}: ChangeRequestMessage: ChangeRequestMessage.requester_name "
                           "must be a str without NUL") and "@ $" not in line
    path.write_text(json.dumps(data))
    assert run_cli("encode", "-p", "mqdsrp", str(path)).returncode == 0


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b'{"message": "caf\xe9"}', "not UTF-8 text (byte 16: invalid continuation byte)"),
        ('{"message": "x"}'.encode("utf-16"), "UTF-16 text (a UTF-16 byte-order mark); save it as UTF-8"),
    ],
)
def test_encode_says_when_the_input_is_not_utf8(tmp_path, raw, message):
    """JSON that is not UTF-8 is named as such, not reported as an unknown structure '??'."""
    path = tmp_path / "in.json"
    path.write_bytes(raw)
    assert one_line_exit_2(run_cli("encode", "-p", "mqdsrp", str(path))) == f"mqspec: json error: {path}: {message}"


def test_encode_accepts_a_utf8_byte_order_mark(tmp_path):
    """JSON saved with a UTF-8 byte-order mark (common on Windows) encodes like the same JSON without it."""
    from mqspec.model import examples_mqsd

    decoded = run_cli("decode", "--example", "client_request").stdout
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + decoded.encode())
    out = run_cli("encode", "-p", "mqsd", str(path))
    assert out.returncode == 0 and out.stdout.strip() == examples_mqsd.CLIENT_REQUEST.hex()
