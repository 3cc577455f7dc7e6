"""64-bit-safe JSON: the one writer of the JSON texts mqspec prints and writes, and the reader's rule.

A JSON number is read as an IEEE double by many parsers (JavaScript's ``JSON.parse`` among them):
an integer above 2**53 comes back rounded, silently (``18446744073709551615`` reads as
``18446744073709552000``). A SEQUENCE_NUMBER (MC-MQDSRP 2.2.2) is 64 bits, so mqspec writes every
sequence number as a **decimal string**, always (not only when it is large), wherever it makes
its JSON form (:mod:`mqspec.model.jsonform`, the trace writer, the vectors), and its schemas say
so (:func:`u64_schema`). (No PROPID of [MS-MQMQ] 2.3 is a VT_I8 or VT_UI8, the other 64-bit
values the protocols could carry.) :func:`dumps`, the writer every ``--json`` report and every JSON
file goes through, is the net under that rule: any other integer outside the doubles' exact range
is written as a decimal string too, so no JSON text mqspec writes holds a number a double cannot
hold exactly.

Readers accept both forms (:func:`wide_int`): a JSON integer, as earlier mqspec versions wrote and
as hand-written inputs may give, or a decimal string.
"""

from __future__ import annotations

import json
import re
from typing import Any

#: the largest integer every JSON reader holds exactly (2**53 - 1, JavaScript's Number.MAX_SAFE_INTEGER)
MAX_SAFE = (1 << 53) - 1
U64_MAX = (1 << 64) - 1
I64_MIN, I64_MAX = -(1 << 63), (1 << 63) - 1
#: a decimal string as mqspec writes it: no sign for unsigned values, no leading zeros, no spaces
UNSIGNED_PATTERN = "^(0|[1-9][0-9]{0,19})$"
SIGNED_PATTERN = "^(0|-?[1-9][0-9]{0,18})$"
_UNSIGNED = re.compile(UNSIGNED_PATTERN)
_SIGNED = re.compile(SIGNED_PATTERN)


def safe(value: Any) -> Any:
    """``value`` with every integer outside -MAX_SAFE..MAX_SAFE replaced by its decimal string
    (recursively through dicts, lists and tuples; bools and floats are left as they are)."""
    t = type(value)
    if t is int:
        return value if -MAX_SAFE <= value <= MAX_SAFE else str(value)
    if t is dict:
        return {k: safe(v) for k, v in value.items()}
    if t is list or t is tuple:
        return [safe(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool):  # an IntEnum, say
        return safe(int(value))
    return value


def dumps(value: Any, **kwargs: Any) -> str:
    """``json.dumps`` of :func:`safe` ``(value)``: the JSON text of every report and file mqspec writes."""
    return json.dumps(safe(value), **kwargs)


def wide_int(value: Any, *, signed: bool = False, what: str = "a 64-bit value") -> int:
    """The integer a JSON value stands for: a JSON integer or a decimal string (ValueError otherwise).

    ``signed``: VT_I8's range (-2**63..2**63-1), else 0..2**64-1.
    """
    if type(value) is int:
        number = value
    elif type(value) is str and (_SIGNED if signed else _UNSIGNED).match(value):
        number = int(value)
    else:
        raise ValueError(f"{what} is an integer or a decimal string, not {value!r}")
    low, high = (I64_MIN, I64_MAX) if signed else (0, U64_MAX)
    if not low <= number <= high:
        raise ValueError(f"{what} is in {low}..{high}, not {number}")
    return number


def wide_text(value: int) -> str:
    """How mqspec writes a 64-bit value: its decimal string."""
    return str(int(value))


def u64_schema(description: str = "", *, signed: bool = False, strict: bool = True) -> dict[str, Any]:
    """The JSON Schema of a 64-bit value: a decimal string (``strict``: what mqspec writes), or
    (not ``strict``: what a reader accepts) a decimal string or a JSON integer in range."""
    text: dict[str, Any] = {"type": "string", "pattern": SIGNED_PATTERN if signed else UNSIGNED_PATTERN}
    note = ("a 64-bit value as a decimal string (a JSON number above 2^53 loses precision in many "
            "languages)")
    if not strict:
        low, high = (I64_MIN, I64_MAX) if signed else (0, U64_MAX)
        text = {"anyOf": [text, {"type": "integer", "minimum": low, "maximum": high}]}
        note += "; an integer is accepted too"
    return {**text, "description": f"{description}: {note}" if description else note}
