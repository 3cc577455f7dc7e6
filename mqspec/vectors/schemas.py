"""Every JSON Schema a vectors tree publishes, and which one each file of the tree follows.

The tree's top holds one schema (draft 2020-12) per kind of JSON file: ``manifest.schema.json``
(:mod:`.manifest`), ``handler.schema.json`` (:mod:`.handler_schema`), ``message.schema.json``
(every decoded structure: a valid codec case's ``expected.json``, from :mod:`mqspec.model.jsonschema`),
``error.schema.json`` (an invalid codec case's ``error.json``), ``trace.schema.json`` (a line of a
scenario's ``trace.ndjson``: the trace format, :mod:`mqspec.oracle.trace_format`),
``scenario.schema.json`` and ``scenario-result.schema.json`` (a scenario case's ``scenario.json``
and ``expected.json``), ``index.schema.json``, ``propids.schema.json`` and
``vocabulary.schema.json`` (the top files). :func:`schema_of` says which schema (and which of its
``$defs``) a file of the tree follows, so a consumer, and mqspec's own test of a full tree,
validates every file against the schema the tree publishes for it.
"""

from __future__ import annotations

from typing import Any

from mqspec.json64 import u64_schema

from .handler_schema import GUID, HANDLER_SCHEMA
from .manifest import FORMAT_VERSION, KINDS, MANIFEST_SCHEMA

_DRAFT = "https://json-schema.org/draft/2020-12/schema"
_SECTION = {"type": "string", "pattern": "^[0-9]+(\\.[0-9]+)*$"}
_DOCUMENT = {"enum": ["MC-MQDSRP", "MS-MQSD", "MS-MQCN"]}
_STR, _INT, _BOOL, _NUM = {"type": "string"}, {"type": "integer"}, {"type": "boolean"}, {"type": "number"}
_SEQ = u64_schema("a SEQUENCE_NUMBER")


def _schema(name: str, title: str, body: dict[str, Any], defs: dict[str, Any] | None = None) -> dict[str, Any]:
    out = {"$schema": _DRAFT, "$id": f"https://mqspec.invalid/vectors/{name}", "title": title, **body}
    if defs:
        out["$defs"] = defs
    return out


def _obj(properties: dict[str, Any], *, optional: tuple[str, ...] = (), **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": [p for p in properties if p not in optional],
            "additionalProperties": False, **extra}


INDEX_SCHEMA = _schema("index.schema.json", "mqspec vectors index", _obj({
    "format": {"const": FORMAT_VERSION}, "mqspec": {"type": "string", "minLength": 1},
    "counts": _obj({k: {"type": "integer", "minimum": 0} for k in KINDS}),
    "cases": {"type": "array", "items": _obj({
        "case": {"type": "string"}, "kind": {"enum": list(KINDS)}, "document": _DOCUMENT, "section": _SECTION})},
}, description="index.json: every case of the tree, in path order"))

PROPIDS_SCHEMA = _schema("propids.schema.json", "mqspec PROPID table", _obj({
    "source": _STR, "encoding": _STR,
    "propids": {"type": "array", "items": _obj({
        "name": {"type": "string", "pattern": "^PROPID_[A-Z0-9_]+$"}, "propid": {"type": "integer", "minimum": 0},
        "vartype": {"type": "string", "pattern": "^VT_[A-Z0-9_]+(\\|VT_VECTOR)?$"},
        "vt": {"type": "integer", "minimum": 0}, "section": _SECTION})},
}, description="propids.json: every PROPID with its VARTYPE ([MS-MQMQ] 2.3), how its flat PROPVALUE is encoded"))

ERROR_SCHEMA = _schema("error.schema.json", "mqspec codec error", _obj({
    "field": {"type": "string", "minLength": 1, "description": "Structure.Field of the innermost structure"},
    "path": {"type": "string", "minLength": 1, "description": "the field with its enclosing structures"},
    "context": {"type": "array", "items": _STR, "description": "the enclosing structures, outermost first"},
    "offset": {"type": "integer", "minimum": 0, "description": "where the blamed field starts, bytes from input.bin's start"},
    "document": _DOCUMENT, "section": _SECTION,
    "reason": {"type": "string", "description": "mqspec's words, informative only"},
}, description="error.json of an invalid codec case: what a strict decoder reports (see the README)"))

_NODE_STATE = _obj({
    "role": {"enum": ["PEC", "PSC", "BSC"]}, "site": GUID,
    "partitions": {"type": "object", "propertyNames": GUID, "additionalProperties": _obj({
        "authority": {"type": ["string", "null"]}, "last_seq": _SEQ, "purged_seq": _SEQ, "allowed_purge_seq": _SEQ,
        "purge_state": {"enum": ["NORMAL", "STARTSYNC0", "SYNC0", "COMPLETESYNC0"]},
        "pending": {"type": "integer", "minimum": 0},
        "objects": {"type": "object", "propertyNames": GUID, "additionalProperties": _obj({
            "type": _STR, "path": {"type": ["string", "null"]}, "seq": _SEQ})}})},
    "psc_neighbors": {"type": "array", "items": _STR}, "bsc_neighbors": {"type": "array", "items": _STR},
    "deleted_objects": {"type": "array", "items": _obj({
        "guid": {"oneOf": [GUID, {"type": "null"}]}, "partition": GUID, "seq": _SEQ,
        "type": {"type": ["string", "null"]}})},
}, description="one server's replication state and directory at the end of the run")

SCENARIO_RESULT_SCHEMA = _schema("scenario-result.schema.json", "mqspec scenario run result", _obj({
    "scenario": _STR, "mode": {"enum": ["clarified", "literal"]}, "seed": _INT,
    "converged": _BOOL, "problems": {"type": "array", "items": _STR}, "failures": {"type": "array", "items": _STR},
    "time": {"type": "number", "minimum": 0, "description": "simulated seconds"},
    "messages": {"type": "integer", "minimum": 0, "description": "replication messages processed"},
    "nodes": {"type": "object", "additionalProperties": {"$ref": "#/$defs/node"}},
}, description="a scenario case's expected.json: what `mqspec scenario run --json` prints"), {"node": _NODE_STATE})

#: the step kinds of the scenario language (refimpl/scenario.py; the docs page "Scenario files")
STEP_KINDS = ("create", "update", "delete", "add_site", "add_bsc", "move_psc", "mark", "settle", "advance", "drop",
              "duplicate", "delay", "tamper", "send", "partition", "heal", "crash", "restart", "repeat", "expect")
SCENARIO_SCHEMA = _schema("scenario.schema.json", "mqspec scenario file", _obj({
    "description": _STR,
    "enterprise": {"type": "object", "required": ["pec", "sites"], "properties": {
        "pec": _STR, "name": _STR, "settle": {"type": "object"},
        "sites": {"type": "object", "additionalProperties": {"type": "object", "required": ["psc"]}}},
        "additionalProperties": False},
    "steps": {"type": "array", "items": {"$ref": "#/$defs/step"}},
}, optional=("description",), description="scenario.json: the scenario as mqspec scenario run reads it (the docs' "
                                          "\"Scenario files\" page gives each step's fields)"), {
    "step": {"type": "object", "minProperties": 1, "maxProperties": 1, "propertyNames": {"enum": list(STEP_KINDS)},
             "description": "one step: a mapping with exactly one key, the step's kind"},
})

#: file name -> the schema a tree publishes under it
SCHEMA_FILES: dict[str, dict[str, Any]] = {
    "manifest.schema.json": MANIFEST_SCHEMA, "handler.schema.json": HANDLER_SCHEMA,
    "index.schema.json": INDEX_SCHEMA, "propids.schema.json": PROPIDS_SCHEMA, "error.schema.json": ERROR_SCHEMA,
    "scenario.schema.json": SCENARIO_SCHEMA, "scenario-result.schema.json": SCENARIO_RESULT_SCHEMA,
}

VOCABULARY_SCOPES = ("mqdsrp_state", "mqdsrp_partition", "mqdsrp_neighbor", "mqsd_server", "mqsd_client",
                     "mqcn_queue_manager", "mqcn_options", "mqcn_queue", "mqcn_client", "effect", "timer", "value")
VOCABULARY_SCHEMA = _schema("vocabulary.schema.json", "mqspec handler vector vocabulary", _obj({
    "source": _STR,
    "entries": {"type": "array", "items": _obj({
        "scope": {"enum": list(VOCABULARY_SCOPES)}, "name": {"type": "string", "minLength": 1},
        "spec": {"type": "string", "minLength": 1, "description": "the element or section of the text"},
        "meaning": {"type": "string", "minLength": 1},
        "rests_on": {"type": "array", "items": {"$ref": "#/$defs/mark"},
                     "description": "the register entries the element rests on (mqspec's modelling, say)"},
        "fields": {"type": "object", "additionalProperties": _STR, "description": "an effect's fields"},
    }, optional=("rests_on", "fields"))},
}, description="vocabulary.json: every key of the handler vectors' states, every effect and its fields, every "
               "timer and value, what it means and what it rests on"), {"mark": MANIFEST_SCHEMA["$defs"]["mark"]})


def vocabulary() -> dict[str, Any]:
    """``vocabulary.json``: :file:`vocabulary.yaml` with each register entry as its mark (id, kind, title)."""
    from importlib import resources

    import yaml

    from mqspec.errata import marks

    entries = yaml.safe_load((resources.files("mqspec.vectors") / "vocabulary.yaml").read_text(encoding="utf-8"))
    out = []
    for e in entries:
        entry = {k: v for k, v in e.items() if k != "rests_on"}
        if e.get("rests_on"):
            entry["rests_on"] = marks(e["rests_on"])
        out.append(entry)
    return {"source": "mqspec/vectors/vocabulary.yaml", "entries": out}


def schema_files() -> dict[str, dict[str, Any]]:
    """Every schema file the tree publishes, by name."""
    from mqspec.model.jsonschema import schema as message_schema
    from mqspec.oracle.trace_format import schema as trace_schema

    return {**SCHEMA_FILES, "message.schema.json": message_schema(), "trace.schema.json": trace_schema(),
            "vocabulary.schema.json": VOCABULARY_SCHEMA}


#: handler files -> the $defs of handler.schema.json they follow
_HANDLER_DEFS = {"pre.json": "state", "post.json": "state", "event.json": "event", "effects.json": "effects"}


def schema_of(path: str) -> tuple[str, str | None] | None:
    """The schema file (and ``$defs`` entry, or None for the whole schema) a file of the tree follows, by its
    path in the tree; None for a file that is not JSON (``input.bin``, ``README.md``, ``VERSION``) or is a
    schema itself. ``trace.ndjson``: each line follows ``trace.schema.json``."""
    parts = path.split("/")
    name = parts[-1]
    if len(parts) == 1:
        return {"index.json": ("index.schema.json", None), "propids.json": ("propids.schema.json", None),
                "vocabulary.json": ("vocabulary.schema.json", None)}.get(name)
    if name == "manifest.json":
        return "manifest.schema.json", None
    kind = parts[0]
    if kind == "codec":
        return {"expected.json": ("message.schema.json", None), "error.json": ("error.schema.json", None)}.get(name)
    if kind == "handler":
        return ("handler.schema.json", _HANDLER_DEFS[name]) if name in _HANDLER_DEFS else None
    if kind == "scenario":
        return {"scenario.json": ("scenario.schema.json", None), "expected.json": ("scenario-result.schema.json", None),
                "trace.ndjson": ("trace.schema.json", None)}.get(name)
    return None


def validate_file(path: str, document: Any, schemas: dict[str, dict[str, Any]] | None = None) -> list[str]:
    """The ways one JSON document of the tree (a trace line for ``trace.ndjson``) breaks the schema it follows."""
    from .manifest import validate

    which = schema_of(path)
    if which is None:
        return []
    name, definition = which
    schema = (schemas or schema_files())[name]
    if definition is not None:
        schema = {**schema, "$ref": f"#/$defs/{definition}"}
        schema.pop("oneOf", None)
    return [p.replace("manifest", path, 1) for p in validate(document, schema)]
