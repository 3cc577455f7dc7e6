"""The pages of mqspec's published contract, built from the tables that define it (so they cannot drift).

* ``.. mqspec-trace-format::`` the trace format's specification: the common fields, every event kind with
  each field's type, whether it is required and what it holds (units included), an example line, and the
  versions (:mod:`mqspec.oracle.trace_format`, :mod:`mqspec.oracle.trace_doc`);
* ``.. mqspec-schemas::`` every JSON Schema a vectors tree publishes (written beside the HTML under
  ``schemas/``, so the docs publish them too), which files each validates, and the fields of every decoded
  structure (:mod:`mqspec.vectors.schemas`, :mod:`mqspec.model.jsonschema`);
* ``.. mqspec-vocabulary::`` the vocabulary of the handler vectors: every key, effect, timer and value, what
  it means, the element of the text it holds and the register entries it rests on
  (``mqspec/vectors/vocabulary.yaml``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from docutils.parsers.rst import Directive
from docutils.statemachine import StringList
from docutils import nodes


def _cell(text: Any) -> str:
    return " ".join(str(text).split()).replace("|", "\\|") or " "


def _table(header: list[str], rows: list[list[Any]], widths: str = "") -> list[str]:
    out = [".. list-table::", "   :header-rows: 1"]
    if widths:
        out.append(f"   :widths: {widths}")
    out.append("")
    for row in [header, *rows]:
        out.append(f"   * - {_cell(row[0])}")
        out += [f"     - {_cell(c)}" for c in row[1:]]
    return [*out, ""]


def _type(schema: dict[str, Any]) -> str:
    """A field's JSON type in a few words, from its schema."""
    if "anyOf" in schema:
        return " or ".join(_type(s) for s in schema["anyOf"])
    if "enum" in schema:
        return "one of " + ", ".join(json.dumps(v) for v in schema["enum"])
    kind = schema.get("type", "any")
    kinds = kind if isinstance(kind, list) else [kind]
    text = " or ".join(kinds)
    if "pattern" in schema and "string" in kinds:
        text += f" matching ``{schema['pattern']}``"
    if "items" in schema:
        text += f" of {_type(schema['items'])}"
    bounds = [f"{k} {schema[k]}" for k in ("minimum", "maximum") if k in schema]
    return text + (f" ({', '.join(bounds)})" if bounds else "")


class _Generated(Directive):
    has_content = False

    def lines(self) -> list[str]:
        raise NotImplementedError

    def run(self) -> list[nodes.Node]:
        from sphinx.util.nodes import nested_parse_with_titles

        box = nodes.container()
        nested_parse_with_titles(self.state, StringList(self.lines(), source="mqspec_contract"), box)
        return list(box.children)


class TraceFormatDirective(_Generated):
    def lines(self) -> list[str]:
        from mqspec.oracle import trace_doc
        from mqspec.oracle.trace_format import AT_NODE, EVENTS, FORMAT_2_ONLY, INPUT_KINDS, OUTPUT_KINDS, _FIELDS

        out = ["Common fields", "-------------", ""]
        out += _table(["field", "required", "what it holds"],
                      [[f"``{k}``", "yes" if k != "node" else "at a node", v] for k, v in trace_doc.COMMON_NOTES.items()],
                      "15 10 75")
        for kind, (fields, required) in EVENTS.items():
            role = ("an input the checker replays" if kind in INPUT_KINDS else
                    "an output the checker compares" if kind in OUTPUT_KINDS else "")
            since = "format 2 and later" if kind in FORMAT_2_ONLY else ""
            title = f"``{kind}``"
            out += [title, "-" * len(title), ""]
            notes = [x for x in (role, since, "at a node (carries ``node``)" if kind in AT_NODE else "") if x]
            if notes:
                out += ["; ".join(notes).capitalize() + ".", ""]
            schema = {name: spec.schema() for name, spec in _FIELDS[kind][0].items()}
            rows = []
            for name, spec in fields.items():
                words = getattr(spec, "description", "") or trace_doc.NOTES.get((kind, name), "")
                rows.append([f"``{name}``", "yes" if name in required else "no", _type(schema[name]), words])
            if rows:
                out += _table(["field", "required", "type", "what it holds"], rows, "15 8 32 45")
            out += ["Example:", "", ".. code-block:: json", "",
                    "   " + json.dumps(trace_doc.EXAMPLES[kind], separators=(", ", ": ")), ""]
        return out


class SchemasDirective(_Generated):
    def lines(self) -> list[str]:
        from mqspec.model.jsonschema import FIELDS, STRUCTURES, schema
        from mqspec.vectors.schemas import schema_files

        files = schema_files()
        out = _table(["schema", "what it validates"],
                     [[f"`{name} <../schemas/{name}>`__", files[name].get("description", files[name].get("title", ""))]
                      for name in sorted(files)], "30 70")
        out += ["Decoded structures", "------------------", "",
                "Each structure of ``message.schema.json``, field by field (a top-level message also has "
                "``\"message\"``, its structure name):", ""]
        defs = schema()["$defs"]
        for protocol, table in STRUCTURES.items():
            for name in table:
                out += [f"``{name}`` ({protocol})", "~" * (len(name) + len(protocol) + 7), ""]
                props = defs[name]["properties"]
                rows = [[f"``{field}``", _type(props[field]) if "$ref" not in props[field]
                         else props[field]["$ref"].rsplit("/", 1)[1], FIELDS[(name, field)]]
                        for field in props if field != "message"]
                out += _table(["field", "type", "the specification's field"], rows, "22 23 55")
        return out


class VocabularyDirective(_Generated):
    def lines(self) -> list[str]:
        from mqspec.vectors.schemas import VOCABULARY_SCOPES, vocabulary

        entries = vocabulary()["entries"]
        out: list[str] = []
        titles = {"mqdsrp_state": "MC-MQDSRP directory server (pre.json, post.json)", "mqdsrp_partition":
                  "MC-MQDSRP partitions", "mqdsrp_neighbor": "MC-MQDSRP neighbors", "mqsd_server": "MS-MQSD server",
                  "mqsd_client": "MS-MQSD client", "mqcn_queue_manager": "MS-MQCN queue manager", "mqcn_options":
                  "MS-MQCN server options", "mqcn_queue": "MS-MQCN queues", "mqcn_client": "MS-MQCN client",
                  "effect": "Effects (effects.json)", "timer": "Timers", "value": "Values"}
        for scope in VOCABULARY_SCOPES:
            title = titles[scope]
            out += [title, "-" * len(title), ""]
            rows = []
            for e in (e for e in entries if e["scope"] == scope):
                rests = ", ".join(f"{m['id']} ({m['kind']})" for m in e.get("rests_on", []))
                meaning = e["meaning"]
                if "fields" in e:
                    meaning += "; fields: " + "; ".join(f"``{k}``: {v}" for k, v in e["fields"].items())
                rows.append([f"``{e['name']}``", meaning, e["spec"], rests])
            out += _table(["name", "what it holds", "the text", "rests on"], rows, "15 45 25 15")
        return out


def write_schemas(app: Any, exception: Exception | None) -> None:
    """Publish every schema beside the HTML (``schemas/NAME``), as a vectors tree has them."""
    if exception is not None or app.builder.format != "html":
        return
    from mqspec import json64
    from mqspec.vectors.schemas import schema_files, vocabulary

    folder = Path(app.outdir) / "schemas"
    folder.mkdir(exist_ok=True)
    for name, schema in schema_files().items():
        (folder / name).write_text(json64.dumps(schema, indent=2, sort_keys=True) + "\n", encoding="ascii")
    (folder / "vocabulary.json").write_text(json64.dumps(vocabulary(), indent=2, sort_keys=True) + "\n",
                                            encoding="ascii")


def setup(app: Any) -> dict[str, Any]:
    app.add_directive("mqspec-trace-format", TraceFormatDirective)
    app.add_directive("mqspec-schemas", SchemasDirective)
    app.add_directive("mqspec-vocabulary", VocabularyDirective)
    app.connect("build-finished", write_schemas)
    return {"parallel_read_safe": True, "version": "1"}
