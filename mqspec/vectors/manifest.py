"""The manifest of a vector case: its JSON Schema (written into the tree) and a small validator.

Every case directory holds a ``manifest.json`` that says what the case is (kind, document,
section, name), which versions made it (the vectors format and mqspec) and which files it has.
:data:`MANIFEST_SCHEMA` is a JSON Schema (draft 2020-12) for it; the generator writes it to
``manifest.schema.json`` at the top of the tree, so an implementer can validate manifests with
any JSON Schema library. :func:`validate` checks a manifest against the schema with the keywords
every schema the tree publishes uses (``type``, also as a list, ``const``, ``enum``, ``required``,
``properties``, ``patternProperties``, ``additionalProperties``, ``propertyNames``,
``minProperties``, ``maxProperties``, ``items``, ``minLength``, ``pattern``, ``minimum``,
``maximum``, ``oneOf``, ``anyOf``, ``allOf``, ``if``/``then``/``else`` and local ``$ref``), so mqspec
needs no schema library; every other schema of the tree (:mod:`mqspec.vectors.schemas`) is checked
with it too.
"""

from __future__ import annotations

import re
from typing import Any

#: the version of the vectors' layout and file formats (bumped when either changes)
FORMAT_VERSION = 2
KINDS = ("codec", "handler", "scenario")

_COMMON: dict[str, Any] = {
    "format": {"const": FORMAT_VERSION},
    "mqspec": {"type": "string", "minLength": 1},
    "case": {"type": "string", "pattern": "^(codec|handler|scenario)/[A-Za-z0-9._/-]+$"},
    "name": {"type": "string", "minLength": 1},
    "document": {"enum": ["MC-MQDSRP", "MS-MQSD", "MS-MQCN"]},
    "section": {"type": "string", "pattern": "^[0-9]+(\\.[0-9]+)*$"},
    "description": {"type": "string"},
    "files": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+\\.(bin|json|ndjson)$"}},
}
#: a register entry a case rests on (mqspec.errata.mark): its id, kind and title
MARK = {"type": "object", "required": ["id", "kind", "title"], "additionalProperties": False,
        "properties": {"id": {"type": "string", "pattern": "^E-[0-9]{3}$"},
                       "kind": {"enum": ["erratum", "clarification", "policy", "modelling"]},
                       "title": {"type": "string", "minLength": 1}}}
MARKS = {"type": "array", "items": {"$ref": "#/$defs/mark"},
         "description": "register entries (errata register) the case rests on rather than a MUST of the text"}
_COMMON_REQUIRED = ["format", "mqspec", "kind", "case", "name", "document", "section", "description", "files"]


def _kind(kind: str, properties: dict[str, Any], optional: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {**_COMMON, "kind": {"const": kind}, **properties},
        "required": [*_COMMON_REQUIRED, *(p for p in properties if p not in optional)],
        "additionalProperties": False,
    }


MANIFEST_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://mqspec.invalid/vectors/manifest.schema.json",
    "title": "mqspec test vector manifest",
    "description": "manifest.json of one case directory of an mqspec vectors tree",
    "oneOf": [{"$ref": "#/$defs/codec"}, {"$ref": "#/$defs/handler"}, {"$ref": "#/$defs/scenario"}],
    "$defs": {
        "codec": _kind("codec", {
            "protocol": {"enum": ["mqdsrp", "mqsd", "mqcn"]},
            "entry": {"enum": ["message", "msmq-body"]},
            "lenient": {"type": "boolean"},
            "outcome": {"enum": ["valid", "invalid"]},
            # valid cases only: whether encoding the decoded message gives input.bin back
            "canonical": {"type": "boolean"},
            # invalid cases only: the register entries the refusal rests on rather than a MUST
            "rests_on": MARKS,
        }, optional=("canonical", "rests_on")),
        "handler": _kind("handler", {
            "handler": {"type": "string", "minLength": 1},
            "situation": {"type": "string", "minLength": 1},
            # both: the clarified and the literal reading give this same outcome
            "mode": {"enum": ["clarified", "literal", "both"]},
            "rests_on": MARKS,
            # a -clarified / -literal pair: the register entries that make the two readings differ
            "differs_by": {**MARKS, "description": "the register entries whose clarified reading makes this case "
                                                   "differ from its other reading"},
        }, optional=("rests_on", "differs_by")),
        "mark": MARK,
        "scenario": _kind("scenario", {
            "source": {"enum": ["example", "counterexample", "fault"]},
            "scenario": {"type": "string", "minLength": 1},
            "mode": {"enum": ["clarified", "literal"]},
            "seed": {"type": "integer"},
            "trace_format": {"type": "integer"},
        }),
    },
}

_TYPES: dict[str, type | tuple[type, ...]] = {
    "object": dict, "array": list, "string": str, "integer": int, "boolean": bool, "number": (int, float),
    "null": type(None),
}


def _resolve(ref: str, root: dict[str, Any]) -> dict[str, Any]:
    node: Any = root
    for part in ref.removeprefix("#/").split("/"):
        node = node[part]
    return node  # type: ignore[no-any-return]


def _has_type(value: Any, name: str) -> bool:
    return isinstance(value, _TYPES[name]) and not (isinstance(value, bool) and name in ("integer", "number"))


def _errors(value: Any, schema: Any, root: dict[str, Any], where: str) -> list[str]:
    if schema is True:
        return []
    if schema is False:
        return [f"{where}: not allowed"]
    out: list[str] = []
    if "$ref" in schema:
        out += _errors(value, _resolve(schema["$ref"], root), root, where)
    for sub in schema.get("allOf", ()):
        out += _errors(value, sub, root, where)
    if "anyOf" in schema:
        results = [_errors(value, s, root, where) for s in schema["anyOf"]]
        if all(results):
            out += min(results, key=len)
    if "oneOf" in schema:
        results = [_errors(value, s, root, where) for s in schema["oneOf"]]
        matching = [r for r in results if not r]
        if not matching:
            out += min(results, key=len)  # the closest alternative says best what is wrong
        elif len(matching) > 1:
            out.append(f"{where}: matches {len(matching)} alternatives of oneOf")
    if "if" in schema:
        branch = schema.get("then") if not _errors(value, schema["if"], root, where) else schema.get("else")
        if branch is not None:
            out += _errors(value, branch, root, where)
    if "const" in schema and value != schema["const"]:
        out.append(f"{where}: {value!r} is not {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{where}: {value!r} is not one of {schema['enum']}")
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_has_type(value, n) for n in names):
            return [*out, f"{where}: expected {' or '.join(names)}, not {type(value).__name__}"]
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            out.append(f"{where}: empty")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            out.append(f"{where}: {value!r} does not match {schema['pattern']}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if value < schema.get("minimum", value) or value > schema.get("maximum", value):
            out.append(f"{where}: {value} is out of range")
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            out += _errors(item, schema["items"], root, f"{where}[{i}]")
    if isinstance(value, dict):
        out += _object_errors(value, schema, root, where)
    return out


def _object_errors(value: dict[str, Any], schema: dict[str, Any], root: dict[str, Any], where: str) -> list[str]:
    out: list[str] = []
    if not schema.get("minProperties", 0) <= len(value) <= schema.get("maxProperties", len(value)):
        out.append(f"{where}: {len(value)} keys")
    props = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    extra = schema.get("additionalProperties", True)
    for key in schema.get("required", []):
        if key not in value:
            out.append(f"{where}: missing {key!r}")
    for key, item in value.items():
        if "propertyNames" in schema:
            out += _errors(key, schema["propertyNames"], root, f"{where} key {key!r}")
        known = key in props
        if known:
            out += _errors(item, props[key], root, f"{where}.{key}")
        for pattern, sub in patterns.items():
            if re.search(pattern, key):
                known = True
                out += _errors(item, sub, root, f"{where}.{key}")
        if not known:
            if extra is False:
                out.append(f"{where}: unknown key {key!r}")
            elif extra is not True:
                out += _errors(item, extra, root, f"{where}.{key}")
    return out


def validate(manifest: Any, schema: dict[str, Any] = MANIFEST_SCHEMA) -> list[str]:
    """The ways ``manifest`` breaks ``schema`` (empty when it is valid)."""
    return _errors(manifest, schema, schema, "manifest")
