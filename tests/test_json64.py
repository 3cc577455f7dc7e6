"""The 64-bit-safe JSON writer and the reader's rule (mqspec.json64), and where mqspec applies them."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from mqspec import json64
from mqspec.cli import main
from mqspec.model import mqdsrp
from mqspec.model.guid import Guid
from mqspec.model.jsonform import from_json, to_json
from mqspec.model.seqnum import SequenceNumber

MAX = (1 << 64) - 1


def numbers(value):
    """Every JSON number in a parsed document."""
    if isinstance(value, dict):
        for v in value.values():
            yield from numbers(v)
    elif isinstance(value, list):
        for v in value:
            yield from numbers(v)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield value


def test_dumps_writes_every_integer_beyond_2_53_as_a_decimal_string():
    """2**53 - 1 stays a number; 2**53, 2**64 - 1 and -2**63 become decimal strings, inside lists and objects too."""
    text = json64.dumps({"a": [json64.MAX_SAFE, 1 << 53, MAX], "b": {"c": -(1 << 63)}, "d": True, "e": 1.5})
    assert json.loads(text) == {"a": [json64.MAX_SAFE, str(1 << 53), str(MAX)], "b": {"c": str(-(1 << 63))},
                                "d": True, "e": 1.5}


@pytest.mark.parametrize(("value", "signed", "expected"), [
    (5, False, 5), ("18446744073709551615", False, MAX), ("0", False, 0), ("-5", True, -5),
])
def test_wide_int_reads_an_integer_or_a_decimal_string(value, signed, expected):
    """A reader takes either form."""
    assert json64.wide_int(value, signed=signed) == expected


@pytest.mark.parametrize("value", ["-1", "01", "1.0", "1e3", " 1", "", str(MAX + 1), 1.0, True, None, -1])
def test_wide_int_refuses_anything_else(value):
    """Signs on unsigned values, leading zeros, exponents, spaces, floats, booleans and out-of-range values are refused."""
    with pytest.raises(ValueError):
        json64.wide_int(value)


def test_a_sequence_number_is_a_decimal_string_in_the_json_form_and_both_forms_are_read():
    """An AlreadyPurgedMessage carrying 2**64 - 1 writes it as a string, and structures back from either form."""
    message = mqdsrp.AlreadyPurgedMessage(Guid.from_name("s"), Guid.from_name("p"), SequenceNumber(MAX))
    data = to_json(message)
    assert data["purged_seq_number"] == str(MAX)
    assert from_json(data, mqdsrp.MESSAGE_TYPES) == message
    assert from_json({**data, "purged_seq_number": MAX}, mqdsrp.MESSAGE_TYPES) == message


def test_decode_and_encode_keep_2_64_minus_1_exact(tmp_path):
    """`mqspec decode` prints the largest sequence number as a string no double rounds; `encode` reads it back."""
    message = mqdsrp.AlreadyPurgedMessage(Guid.from_name("s"), Guid.from_name("p"), SequenceNumber(MAX))
    wire = mqdsrp.encode(message)
    out = CliRunner().invoke(main, ["decode", "--protocol", "mqdsrp", "--hex", wire.hex()])
    assert out.exit_code == 0, out.output
    assert '"purged_seq_number": "18446744073709551615"' in out.stdout
    assert all(abs(n) <= json64.MAX_SAFE for n in numbers(json.loads(out.stdout)))
    path = tmp_path / "m.json"
    path.write_text(out.stdout)
    back = CliRunner().invoke(main, ["encode", "--protocol", "mqdsrp", str(path)])
    assert back.exit_code == 0 and back.stdout.strip() == wire.hex()


def test_scenario_json_writes_sequence_numbers_as_strings(tmp_path):
    """`mqspec scenario run --json` gives every node's sequence numbers as decimal strings."""
    from pathlib import Path

    scenario = Path(__file__).resolve().parent.parent / "scenarios" / "4.2-adding-a-bsc.yaml"
    out = CliRunner().invoke(main, ["scenario", "run", str(scenario), "--json"])
    data = json.loads(out.stdout)
    partitions = [p for node in data["nodes"].values() for p in node["partitions"].values()]
    assert partitions and all(type(p["last_seq"]) is str and p["last_seq"].isdigit() for p in partitions)
