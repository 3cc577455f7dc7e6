"""Field specifications of the trace format: each validates a value, compiles a fast check, and
describes itself as JSON Schema (draft 2020-12).

:mod:`mqspec.oracle.trace_format` builds every event kind from these; :func:`fast_validator`
compiles one kind's fields into a function that accepts exactly what :func:`check_fields`
accepts, without building messages (the reader runs it on every line, the explaining path only
on a line it refuses).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable
from typing import Any

import attrs

from mqspec import memos
from mqspec.json64 import U64_MAX, UNSIGNED_PATTERN, u64_schema


class Spec:
    """A field's type: ``check`` returns None or (sub-field path, reason); ``schema`` its JSON Schema."""

    description = ""

    def check(self, value: Any) -> tuple[str, str] | None:
        raise NotImplementedError

    def schema(self) -> dict[str, Any]:
        raise NotImplementedError

    def expr(self, v: str, ns: dict[str, Any]) -> str:
        """A Python expression, true exactly when the value named ``v`` passes :meth:`check`
        (the fast path of :func:`validate`; ``ns`` receives the names it uses)."""
        name = f"_x{len(ns)}"
        ns[name] = self.fast()
        return f"{name}({v})"

    def fast(self) -> Callable[[Any], bool]:
        """A function true exactly when a value passes :meth:`check` (compiled from :meth:`expr`)."""
        ns: dict[str, Any] = {}
        source = f"lambda v: bool({type(self).expr(self, 'v', ns)})"
        return eval(source, ns)  # type: ignore[no-any-return]

    def _described(self, schema: dict[str, Any]) -> dict[str, Any]:
        return {**schema, "description": self.description} if self.description else schema

    #: whether a 64-bit value (:class:`Wide`) sits in this field: its two JSON forms are converted
    wide = False

    def convert(self, value: Any, to_text: bool) -> Any:
        """A valid value with its 64-bit values as decimal strings (``to_text``, the form mqspec
        writes) or as integers (the form the checker reads); only called when :attr:`wide`."""
        return value


def _or_null(expr: str, v: str, nullable: bool) -> str:
    return f"({v} is None or {expr})" if nullable else f"({expr})"


def _nullable(schema: dict[str, Any], nullable: bool) -> dict[str, Any]:
    if not nullable:
        return schema
    if "type" in schema and "enum" not in schema and "pattern" not in schema:
        return {**schema, "type": [schema["type"], "null"]}
    return {"anyOf": [schema, {"type": "null"}]}


@attrs.frozen
class Text(Spec):
    nullable: bool = False
    pattern: str | None = None
    description: str = ""

    def check(self, value: Any) -> tuple[str, str] | None:
        if value is None and self.nullable:
            return None
        if type(value) is not str or not value:
            return "", f"must be a non-empty string{' or null' if self.nullable else ''}, not {_show(value)}"
        if self.pattern is not None and not _compiled(self.pattern).fullmatch(value):
            return "", f"{value[:60]!r} does not match {self.pattern}"
        return None

    def expr(self, v: str, ns: dict[str, Any]) -> str:
        test = f"type({v}) is str and {v} != ''"
        if self.pattern is not None:
            name = f"_p{len(ns)}"
            ns[name] = _compiled(self.pattern).fullmatch
            test += f" and {name}({v}) is not None"
        return _or_null(test, v, self.nullable)

    def schema(self) -> dict[str, Any]:
        s: dict[str, Any] = {"type": "string", "minLength": 1}
        if self.pattern is not None:
            s["pattern"] = f"^(?:{self.pattern})$"
        return self._described(_nullable(s, self.nullable))


GUID_PATTERN = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
HEX_PATTERN = "(?:[0-9a-fA-F]{2})*"


@attrs.frozen
class Hex(Spec):
    """Bytes as hexadecimal text, two digits a byte (either case; the empty string is no bytes)."""

    description: str = ""

    def check(self, value: Any) -> tuple[str, str] | None:
        if type(value) is not str:
            return "", f"must be hexadecimal text, not {_show(value)}"
        if len(value) % 2 or not _HEX.fullmatch(value):
            return "", "is not hexadecimal bytes (two digits a byte)"
        return None

    def expr(self, v: str, ns: dict[str, Any]) -> str:
        ns["_hexmatch"] = _HEX.fullmatch
        return f"(type({v}) is str and not len({v}) % 2 and _hexmatch({v}) is not None)"

    def schema(self) -> dict[str, Any]:
        return self._described({"type": "string", "pattern": f"^{HEX_PATTERN}$"})


#: the digits alone: with the even length checked apart, the same strings as HEX_PATTERN, six times faster
_HEX = re.compile("[0-9a-fA-F]*")


@attrs.frozen
class Integer(Spec):
    lo: int | None = None
    hi: int | None = None
    nullable: bool = False
    description: str = ""

    def check(self, value: Any) -> tuple[str, str] | None:
        if value is None and self.nullable:
            return None
        if type(value) is not int:
            return "", f"must be an integer{' or null' if self.nullable else ''}, not {_show(value)}"
        if (self.lo is not None and value < self.lo) or (self.hi is not None and value > self.hi):
            return "", f"{value} is outside {self.lo}..{self.hi}"
        return None

    def expr(self, v: str, ns: dict[str, Any]) -> str:
        test = f"type({v}) is int"
        if self.lo is not None:
            test += f" and {v} >= {self.lo}"
        if self.hi is not None:
            test += f" and {v} <= {self.hi}"
        return _or_null(test, v, self.nullable)

    def schema(self) -> dict[str, Any]:
        s: dict[str, Any] = {"type": "integer"}
        if self.lo is not None:
            s["minimum"] = self.lo
        if self.hi is not None:
            s["maximum"] = self.hi
        return self._described(_nullable(s, self.nullable))


_DECIMAL = re.compile(UNSIGNED_PATTERN).match


@attrs.frozen
class Wide(Spec):
    """A 64-bit unsigned value (a SEQUENCE_NUMBER): a decimal string, as mqspec writes it, or a
    JSON integer (:mod:`mqspec.json64`); the reader hands the checker an integer."""

    nullable: bool = False
    description: str = ""
    wide = True

    def check(self, value: Any) -> tuple[str, str] | None:
        if value is None and self.nullable:
            return None
        if type(value) is int and 0 <= value <= U64_MAX:
            return None
        if type(value) is str and _DECIMAL(value) is not None and int(value) <= U64_MAX:
            return None
        return "", (f"must be a 64-bit unsigned value (a decimal string or an integer in 0..2**64-1)"
                    f"{' or null' if self.nullable else ''}, not {_show(value)}")

    def expr(self, v: str, ns: dict[str, Any]) -> str:
        ns["_decimal"] = _DECIMAL
        test = (f"(type({v}) is int and 0 <= {v} <= {U64_MAX}) or "
                f"(type({v}) is str and _decimal({v}) is not None and int({v}) <= {U64_MAX})")
        return _or_null(test, v, self.nullable)

    def schema(self) -> dict[str, Any]:
        return _nullable(u64_schema(self.description, strict=False), self.nullable)

    def convert(self, value: Any, to_text: bool) -> Any:
        if value is None:
            return None
        return str(value) if to_text else int(value)


@attrs.frozen
class Number(Spec):
    lo: float | None = None
    description: str = ""

    def check(self, value: Any) -> tuple[str, str] | None:
        if type(value) not in (int, float) or not math.isfinite(value):
            return "", f"must be a finite number, not {_show(value)}"
        if self.lo is not None and value < self.lo:
            return "", f"{value} is below {self.lo}"
        return None

    def expr(self, v: str, ns: dict[str, Any]) -> str:
        # x - x == 0.0 exactly when a float is finite (inf - inf and nan - nan are nan): no call
        test = f"(type({v}) is float and {v} - {v} == 0.0 or type({v}) is int)"
        return f"({test} and {v} >= {self.lo})" if self.lo is not None else test

    def schema(self) -> dict[str, Any]:
        s: dict[str, Any] = {"type": "number"}
        if self.lo is not None:
            s["minimum"] = self.lo
        return self._described(s)


@attrs.frozen
class Choice(Spec):
    values: tuple[Any, ...]
    nullable: bool = False
    description: str = ""

    def check(self, value: Any) -> tuple[str, str] | None:
        if value is None and self.nullable:
            return None
        if type(value) not in (str, int) or value not in self.values:
            return "", f"{_show(value)} is not one of {', '.join(map(str, self.values))}"
        return None

    def expr(self, v: str, ns: dict[str, Any]) -> str:
        name = f"_c{len(ns)}"
        ns[name] = frozenset(self.values)
        return _or_null(f"(type({v}) is str or type({v}) is int) and {v} in {name}", v, self.nullable)

    def schema(self) -> dict[str, Any]:
        return self._described({"enum": [*self.values, *([None] if self.nullable else [])]})


@attrs.frozen
class Anything(Spec):
    description: str = ""

    def check(self, value: Any) -> tuple[str, str] | None:
        return None

    def expr(self, v: str, ns: dict[str, Any]) -> str:
        return "True"

    def schema(self) -> dict[str, Any]:
        return self._described({})


@attrs.frozen
class Items(Spec):
    item: Spec
    same_keys: bool = False  # every element (an object) gives the same fields
    description: str = ""
    nullable: bool = False

    def check(self, value: Any) -> tuple[str, str] | None:
        if value is None and self.nullable:
            return None
        if type(value) is not list:
            return "", f"must be a list{' or null' if self.nullable else ''}, not {_show(value)}"
        for i, element in enumerate(value):
            bad = self.item.check(element)
            if bad is not None:
                return f"[{i}]{bad[0]}", bad[1]
        if self.same_keys and value and any(e.keys() != value[0].keys() for e in value):
            return "", "every element must give the same fields (a list is compared as a multiset)"
        return None

    def expr(self, v: str, ns: dict[str, Any]) -> str:
        if type(self.item) is Anything and not self.same_keys:  # any elements: no call for each
            return _or_null(f"type({v}) is list", v, self.nullable)
        return super().expr(v, ns)

    def fast(self) -> Callable[[Any], bool]:
        item, same, nullable = self.item.fast(), self.same_keys, self.nullable

        def valid(value: Any) -> bool:
            if value is None and nullable:
                return True
            if type(value) is not list or not all(map(item, value)):
                return False
            return not (same and value and any(e.keys() != value[0].keys() for e in value))

        return valid

    def schema(self) -> dict[str, Any]:
        return self._described(_nullable({"type": "array", "items": self.item.schema()}, self.nullable))

    @property
    def wide(self) -> bool:  # type: ignore[override]
        return self.item.wide

    def convert(self, value: Any, to_text: bool) -> Any:
        return None if value is None else [self.item.convert(v, to_text) for v in value]


@attrs.frozen
class Keyed(Spec):
    """An object whose keys match ``key`` (a pattern) and whose values are ``value``."""

    key: str
    value: Spec
    description: str = ""

    def check(self, value: Any) -> tuple[str, str] | None:
        if type(value) is not dict:
            return "", f"must be an object, not {_show(value)}"
        pattern = _compiled(self.key)
        for k, v in value.items():
            if not pattern.fullmatch(k):
                return f".{k}", f"key {k[:60]!r} does not match {self.key}"
            bad = self.value.check(v)
            if bad is not None:
                return f".{k}{bad[0]}", bad[1]
        return None

    def fast(self) -> Callable[[Any], bool]:
        key, value = _compiled(self.key).fullmatch, self.value.fast()

        def valid(obj: Any) -> bool:
            return type(obj) is dict and all(key(k) is not None and value(v) for k, v in obj.items())

        return valid

    def schema(self) -> dict[str, Any]:
        return self._described({"type": "object", "propertyNames": {"pattern": f"^(?:{self.key})$"},
                                "additionalProperties": self.value.schema()})

    @property
    def wide(self) -> bool:  # type: ignore[override]
        return self.value.wide

    def convert(self, value: Any, to_text: bool) -> Any:
        return {k: self.value.convert(v, to_text) for k, v in value.items()}


@attrs.frozen
class Fields(Spec):
    """An object with named fields (``required`` ones must be present); ``x-`` names are extensions."""

    fields: dict[str, Spec]
    required: tuple[str, ...] = ()
    description: str = ""

    def check(self, value: Any) -> tuple[str, str] | None:
        if type(value) is not dict:
            return "", f"must be an object, not {_show(value)}"
        return check_fields(value, self.fields, self.required, prefix=".")

    def fast(self) -> Callable[[Any], bool]:
        fields = fast_validator(self.fields, self.required)
        return lambda value: type(value) is dict and fields(value)

    def schema(self) -> dict[str, Any]:
        return self._described(_object_schema(self.fields, self.required))

    @property
    def wide(self) -> bool:  # type: ignore[override]
        return any(spec.wide for spec in self.fields.values())

    def convert(self, value: Any, to_text: bool) -> Any:
        return convert_fields(value, self.fields, to_text)


def convert_fields(obj: dict[str, Any], fields: dict[str, Spec], to_text: bool) -> dict[str, Any]:
    """A copy of a valid object with the 64-bit values of its fields in the form asked for (see
    :meth:`Spec.convert`); fields that hold none are shared, not copied."""
    out = dict(obj)
    for name, value in obj.items():
        spec = fields.get(name)
        if spec is not None and spec.wide:
            out[name] = spec.convert(value, to_text)
    return out


def check_fields(obj: dict[str, Any], fields: dict[str, Spec], required: Iterable[str],
                 prefix: str = "") -> tuple[str, str] | None:
    """Validate ``obj`` against named fields: the first problem as (field path, reason)."""
    for name in required:
        if name not in obj:
            return f"{prefix}{name}", "is required"
    for name, value in obj.items():
        spec = fields.get(name)
        if spec is None:
            if name.startswith("x-"):
                continue
            return f"{prefix}{name}", "is not a field of this event (extensions start with 'x-')"
        bad = spec.check(value)
        if bad is not None:
            return f"{prefix}{name}{bad[0]}", bad[1]
    return None


def _object_schema(fields: dict[str, Spec], required: Iterable[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: spec.schema() for name, spec in fields.items()},
        "required": list(required),
        "patternProperties": {"^x-": {}},
        "additionalProperties": False,
    }


def _show(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, float) or math.isfinite(value) else str(value)
    return text if len(text) <= 40 else text[:37] + "..."


_PATTERNS: dict[str, re.Pattern[str]] = {}
memos.register(f"{__name__}._PATTERNS", "a pattern -> its compiled regular expression", _PATTERNS)


def _compiled(pattern: str) -> re.Pattern[str]:
    compiled = _PATTERNS.get(pattern)
    if compiled is None:
        compiled = _PATTERNS[pattern] = re.compile(pattern)
    return compiled


def fast_validator(fields: dict[str, Spec], required: tuple[str, ...]) -> Callable[[dict[str, Any]], bool]:
    """Compile one event kind's fields into a function that is true for a valid record.

    The same rules as :func:`check_fields`, without the messages: :func:`validate` runs this
    first and the slow, explaining path only for a record it refuses. The required fields are
    fetched at once, each optional one only when present; the present fields are counted, so a
    record holds a field of no spec (an extension, or an error) exactly when it has more.
    """
    ns: dict[str, Any] = {"_allowed": frozenset(fields)}
    need = [name for name in fields if name in required]
    body = ["def fast(r):"]
    if need:
        names = [f"v{i}" for i in range(len(need))]
        body += ["    try:", f"        {', '.join(names)}, = {', '.join(f'r[{n!r}]' for n in need)},",
                 "    except KeyError:", "        return False"]
        body += [f"    if not ({fields[n].expr(v, ns)}): return False" for n, v in zip(need, names)]
    body.append(f"    n = {len(need)}")
    for name, spec in fields.items():
        if name not in required:
            body.append(f"    if {name!r} in r:\n        v = r[{name!r}]\n        n += 1\n"
                        f"        if not ({spec.expr('v', ns)}): return False")
    body.append("    if len(r) != n:")
    body.append("        if any(k[:2] != 'x-' for k in r.keys() - _allowed): return False")
    body.append("    return True")
    exec("\n".join(body), ns)  # noqa: S102 - source built above from the field tables only
    return ns["fast"]  # type: ignore[no-any-return]
