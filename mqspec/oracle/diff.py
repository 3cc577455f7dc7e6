"""Field-level differences between two decoded messages (their :mod:`mqspec.model.jsonform` form).

>>> field_diff({"message": "A", "x": 1, "l": [1, 2]}, {"message": "A", "x": 2, "l": [1]})
[{'field': 'x', 'expected': 1, 'actual': 2}, {'field': 'l', 'expected': '2 elements', 'actual': '1 elements'}, {'field': 'l[1]', 'expected': 2, 'actual': '(absent)'}]
"""

from __future__ import annotations

from typing import Any

from mqspec.wording import plural

ABSENT = "(absent)"


def field_diff(expected: Any, actual: Any, prefix: str = "") -> list[dict[str, Any]]:
    """Every leaf that differs, as ``{"field": dotted.path[i], "expected", "actual"}``, in field order."""
    out: list[dict[str, Any]] = []
    _walk(expected, actual, prefix, out)
    return out


def _walk(expected: Any, actual: Any, path: str, out: list[dict[str, Any]]) -> None:
    if isinstance(expected, dict) and isinstance(actual, dict):
        if expected.get("message") != actual.get("message") and "message" in expected:
            out.append({"field": _join(path, "message"), "expected": expected.get("message"),
                        "actual": actual.get("message")})
            return
        for key in (*expected, *(k for k in actual if k not in expected)):
            _walk(expected.get(key, ABSENT), actual.get(key, ABSENT), _join(path, key), out)
        return
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            out.append({"field": path, "expected": plural(len(expected), "element"),
                        "actual": plural(len(actual), "element")})
        for i in range(max(len(expected), len(actual))):
            _walk(expected[i] if i < len(expected) else ABSENT, actual[i] if i < len(actual) else ABSENT,
                  f"{path}[{i}]", out)
        return
    if expected != actual or type(expected) is not type(actual):
        out.append({"field": path or "(message)", "expected": expected, "actual": actual})


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key
