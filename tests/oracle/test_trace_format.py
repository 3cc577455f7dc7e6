"""The published trace format: the line validator, the reader's trace rules, and the JSON Schema."""

from __future__ import annotations

import copy
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mqspec.oracle.generate import generate
from mqspec.oracle.record import scenario_trace
from mqspec.oracle.trace_format import (
    _FAST,
    _FIELDS,
    EVENTS,
    FORMAT_VERSION,
    SCHEMA_PATH,
    TraceError,
    TraceWriter,
    check_fields,
    load,
    schema,
    schema_text,
    validate,
)

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
HEAD = {"trace": "t", "format": FORMAT_VERSION}
GUID = "00000000-0000-0000-0000-000000000001"


@pytest.fixture(scope="module")
def recorded() -> list[dict[str, Any]]:
    """Lines of every kind the recorder writes, plus codec-level kinds and a note."""
    lines = [json.loads(x) for x in generate(seed=2, sites=2, bscs=1, changes=6, crash=True, quiet=12.0).splitlines()]
    lines += [{**HEAD, "event": "datagram", "t": 1e6, "node": "PEC0", "direction": "send", "body": "00ff",
               "from": "10.0.0.1:1801", "to": "10.0.0.2:1801", "transport": "ip"},
              {**HEAD, "event": "notification", "t": 1e6, "node": "PEC0", "direction": "receive", "body": ""},
              {**HEAD, "event": "clock", "t": 1e6, "node": "PEC0", "clock": 12.5},
              {**HEAD, "event": "node", "t": 1e6, "name": "DS1",
               "mqsd": {"role": "server", "enterprise": GUID, "site": GUID, "connected_networks": [GUID],
                        "servers": ["DS1:ip+ipx", "DS2"]},
               "mqcn": {"side": "queue_manager", "version": 1}},
              {**HEAD, "event": "notification", "t": 1e6, "node": "DS1", "direction": "receive", "body": "01",
               "sender_id_type": 2, "sender_id": GUID, "authentication": 1},
              {**HEAD, "event": "queue", "t": 1e6, "node": "DS1", "operation": "update", "identifier": GUID,
               "attributes": ["label"]},
              {**HEAD, "event": "notification", "t": 1e6, "node": "DS1", "direction": "receive", "body": "02",
               "read": [{"propid": "PROPID_Q_QUOTA", "value": 5}]},
              {**HEAD, "event": "discover", "t": 1e6, "node": "DS1", "networks": ["net1", "dialup"], "ras": ["dialup"]},
              {**HEAD, "event": "datagram", "t": 1e6, "node": "DS1", "direction": "send", "body": "00", "network": "net1"},
              {**HEAD, "event": "discovered", "t": 1e6, "node": "DS1", "result": "success", "servers": ["DS2"],
               "connected_networks": [GUID]},
              {**HEAD, "event": "notify", "t": 1e6, "node": "DS1", "operation": "QueueUpdate", "identifier": GUID,
               "owner": GUID, "properties": [{"propid": "PROPID_Q_QUOTA", "value": 5}], "modified": ["PROPID_Q_QUOTA"]},
              {**HEAD, "event": "handover", "t": 1e6, "node": "PSC1b", "site": GUID, "old": "PSC1", "state": {
                  "partitions": [{"partition": GUID, "authority": "PSC1b", "last_seq": 2, "purged_seq": 0,
                                  "allowed_purge_seq": 0, "purge_state": "NORMAL"}],
                  "psc_neighbors": [{"name": "PEC0", "partition": GUID, "acked_seq": 0, "acked_pec_seq": 0,
                                     "acked_time": 0.0}],
                  "bsc_neighbors": [],
                  "tombstones": [{"guid": None, "partition": GUID, "seq": 1, "type": 1, "scope": 0}],
                  "objects": [{"guid": GUID, "type": 1, "path": "PSC1b\\q", "partition": GUID, "seq": 1,
                               "properties": [{"propid": "PROPID_Q_LABEL", "value": "q"}]}]}},
              {**HEAD, "event": "handover", "t": 1e6, "node": "BSC11", "site": GUID, "old": "PSC1", "new": "PSC1b"},
              {"trace": "t", "format": 1, "event": "node", "t": 1e6, "name": "OLD", "role": None},
              {**HEAD, "event": "hole", "t": 1e6, "kind": "tcp-gap", "text": "stream bytes 10..19 lost",
               "nodes": ["PEC0"], "from": "10.0.0.1:1801", "to": "10.0.0.2:40000", "bytes": 10, "frame": 7},
              {**HEAD, "event": "note", "t": 1e6, "text": "done"}]
    return lines


def text(*records: dict[str, Any]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def header(**fields: Any) -> dict[str, Any]:
    return {**HEAD, "event": "header", "t": 0, **fields}


# --- the schema ------------------------------------------------------------------------------------


def test_the_committed_schema_is_the_one_the_format_tables_generate():
    """mqspec/schema/trace.schema.json is up to date (regenerate: python -m mqspec.oracle.trace_format --write)."""
    assert SCHEMA_PATH.read_text(encoding="utf-8") == schema_text()
    assert json.loads(schema_text())["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_every_recorded_line_is_valid_under_the_committed_schema(recorded):
    """Each line the recorder writes (every event kind) validates against the published schema."""
    published = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    kinds = {r["event"] for r in recorded}
    assert kinds == set(EVENTS)
    for record in recorded:
        assert schema_errors(published, record) == [], record
    try:
        import jsonschema  # optional: the reference validator, when installed
    except ImportError:
        return
    validator = jsonschema.Draft202012Validator(published)
    for record in recorded:
        validator.validate(record)


@settings(max_examples=300)
@given(data=st.data())
def test_the_fast_validator_the_explaining_one_and_the_schema_agree(recorded, data):
    """On lines with a field removed, retyped or added, the fast path, the messages and the schema agree."""
    record = copy.deepcopy(data.draw(st.sampled_from(recorded)))
    key = data.draw(st.sampled_from(sorted(record)))
    how = data.draw(st.sampled_from(["delete", "retype", "add", "extension"]))
    if how == "delete":
        del record[key]
    elif how == "retype":
        record[key] = data.draw(st.sampled_from([None, 0, -1, 1.5, "", "x", "zz", True, [], {}, [1], {"a": 1},
                                                  GUID, "PSC", 2**40]))
    elif how == "add":
        record[data.draw(st.sampled_from(["extra", "nodes", "state", "body"]))] = "00"
    else:
        record["x-vendor"] = {"anything": [1, 2]}
    kind = record.get("event")
    slow_ok = _slow_ok(record)
    if isinstance(kind, str) and kind in _FAST[FORMAT_VERSION] and record.get("format") == FORMAT_VERSION:
        assert _FAST[FORMAT_VERSION][kind](record) == (check_fields(record, *_FIELDS[kind]) is None)
    assert (schema_errors(schema(), record) == []) == slow_ok, (record, schema_errors(schema(), record))


def _slow_ok(record: dict[str, Any]) -> bool:
    try:
        validate(record)
    except TraceError:
        return False
    return True


# --- what validate() refuses --------------------------------------------------------------------------


@pytest.mark.parametrize(("record", "field", "reason"), [
    ({**HEAD, "event": "send", "t": 1, "node": "A", "to": "B", "body": "abc"}, "body", "hexadecimal"),
    ({**HEAD, "event": "send", "t": 1, "node": "A", "to": "B"}, "body", "required"),
    ({**HEAD, "event": "send", "t": 1, "node": "A", "to": "B", "body": "", "priority": 8}, "priority", "outside"),
    ({**HEAD, "event": "receive", "t": 1, "body": "00"}, "node", "required"),
    ({**HEAD, "event": "timer", "t": 1, "node": "A", "timer": "coffee"}, "timer", "not one of"),
    ({**HEAD, "event": "start", "t": math.inf, "node": "A"}, "t", "finite"),
    ({**HEAD, "event": "start", "t": 1, "node": "A", "colour": 1}, "colour", "extensions start with 'x-'"),
    ({**HEAD, "event": "sent", "t": 1}, "event", "is not an event kind"),
    ({"trace": "t", "event": "start", "t": 1, "node": "A"}, "format", "required"),
    ({**HEAD, "event": "snapshot", "t": 1, "node": "A", "state": {"partitions": {"nope": {}}}},
     "state.partitions.nope", "does not match"),
    ({**HEAD, "event": "snapshot", "t": 1, "node": "A",
      "state": {"tombstones": [{"seq": 1}, {"seq": 1, "type": 1}]}}, "state.tombstones", "same fields"),
    ({**HEAD, "event": "node", "t": 1, "name": "A", "role": "BSC", "site": GUID}, "pec", "role is given"),
    ({**HEAD, "event": "client_request", "t": 1, "node": "A", "request": 1, "operation": "create",
      "object_type": 1, "partition": "not-a-guid"}, "partition", "does not match"),
])
def test_a_bad_field_is_named_with_its_reason(record, field, reason):
    """Each malformed line raises TraceError naming the offending field and why."""
    with pytest.raises(TraceError) as info:
        validate(record, "f.ndjson", 7)
    assert (info.value.path, info.value.line, info.value.field) == ("f.ndjson", 7, field)
    assert reason in info.value.reason
    assert str(info.value).startswith(f"f.ndjson:7: {field}: ")


def test_extension_fields_are_accepted_anywhere():
    """Fields named x-... are allowed on any event and inside any object, and never read."""
    record = {**HEAD, "event": "snapshot", "t": 1, "node": "A", "x-host": "h1",
              "state": {"x-note": 1, "partitions": {GUID: {"last_seq": 3, "x-more": [1]}}}}
    assert validate(record) == record


def test_a_different_format_version_is_refused_by_number():
    """A line of another format version is refused, saying which versions this reader reads."""
    with pytest.raises(TraceError, match=r"unsupported format version 4 \(this mqspec reads 1 and 2 and 3\)"):
        validate({**HEAD, "format": 4, "event": "header", "t": 0})


def test_format_1_lines_stay_valid_and_lack_the_format_2_additions():
    """An old (format 1) trace still validates; the MS-MQSD/MS-MQCN declarations and queue events are format 2 only."""
    old = {"trace": "t", "format": 1}
    assert validate({**old, "event": "node", "t": 0, "name": "A", "role": "PSC", "site": GUID, "pec": "P"})
    declared = {**old, "event": "node", "t": 0, "name": "A", "mqsd": {"role": "client", "enterprise": GUID,
                                                                      "site": GUID}}
    with pytest.raises(TraceError, match="mqsd"):
        validate(declared)
    assert validate({**declared, "format": 2})
    with pytest.raises(TraceError, match="an event of format 2 and later, not of format 1"):
        validate({**old, "event": "queue", "t": 0, "node": "A", "operation": "create"})
    for record in (declared, {**old, "event": "queue", "t": 0, "node": "A", "operation": "create"}):
        assert schema_errors(schema(), record) != []
        assert schema_errors(schema(), {**record, "format": 2}) == []


# --- what load() checks across lines -----------------------------------------------------------------


@pytest.mark.parametrize(("records", "line", "field", "reason"), [
    ([{**HEAD, "event": "start", "t": 0, "node": "A"}], 1, "event", "must begin with a header"),
    ([header(), header()], 2, "event", "already has a header"),
    ([header(), {**HEAD, "event": "start", "t": 1, "node": "A"}], 2, "node", "is not declared"),
    ([header(nodes=[{"name": "A"}]), {**HEAD, "event": "start", "t": 5, "node": "A"},
      {**HEAD, "event": "crash", "t": 4, "node": "A"}], 3, "t", "earlier than"),
])
def test_trace_rules_across_lines(records, line, field, reason):
    """A trace begins with one header, declares nodes before their events, and its clock never runs back."""
    with pytest.raises(TraceError) as info:
        load("f.ndjson", text(*records))
    assert (info.value.line, info.value.field) == (line, field) and reason in info.value.reason


def test_a_line_that_is_not_json_is_named_by_its_line():
    """Broken JSON on line 2 (after a blank line 1) is reported at line 2."""
    with pytest.raises(TraceError, match=r"^f.ndjson:3: \(line\): not JSON"):
        load("f.ndjson", text(header()) + "\n{oops\n")


def test_node_events_declare_nodes_and_traces_may_share_a_file():
    """Two traces interleaved in one file load separately; a node event declares a node mid-trace."""
    other = {"trace": "u", "format": 1}
    body = text(header(), {**other, "event": "header", "t": 0},
                {**HEAD, "event": "node", "t": 1, "name": "A"}, {**HEAD, "event": "start", "t": 1, "node": "A"},
                {**other, "event": "note", "t": 2, "text": "hello"})
    t, u = load("f.ndjson", body)
    assert (t.trace_id, len(t.events), t.lines) == ("t", 3, [1, 3, 4])
    assert (u.trace_id, len(u.events), u.where(1)) == ("u", 2, "f.ndjson:5")


def test_the_writer_puts_the_trace_id_and_format_on_every_line():
    """TraceWriter prefixes each record with the trace id and the format version."""
    out: list[str] = []
    writer = TraceWriter("abc", out.append)
    writer({"event": "header", "t": 0})
    writer({"event": "note", "t": 1, "text": "x"})
    assert [json.loads(line) for line in out] == [
        {"trace": "abc", "format": 3, "event": "header", "t": 0},
        {"trace": "abc", "format": 3, "event": "note", "t": 1, "text": "x"},
    ]
    assert writer.count == 2


def test_sequence_numbers_are_written_as_decimal_strings_and_read_in_either_form():
    """Format 3 writes every SEQUENCE_NUMBER as a decimal string (64 bits: a JSON number above 2**53 loses
    precision in many languages); a reader takes a string or an integer and hands the checker an integer."""
    big = (1 << 64) - 1
    out: list[str] = []
    TraceWriter("abc", out.append)({"event": "directory", "t": 0, "node": "A", "operation": "create", "status": 0,
                                    "seq": big, "partition": GUID})
    assert '"seq":"18446744073709551615"' in out[0]
    assert validate(json.loads(out[0]))["seq"] == big
    as_int = {**HEAD, "event": "snapshot", "t": 1, "node": "A", "state": {"partitions": {GUID: {"last_seq": big}}}}
    as_text = {**as_int, "state": {"partitions": {GUID: {"last_seq": str(big)}}}}
    assert validate(as_int) == validate(as_text) == as_int
    for bad in ("-1", "01", "1e3", " 1", str(big + 1), 1.5):
        with pytest.raises(TraceError, match="64-bit unsigned"):
            validate({**as_int, "state": {"partitions": {GUID: {"last_seq": bad}}}})


def test_a_recorded_scenario_trace_loads_with_one_header_and_declared_nodes():
    """The recorder's output for a scenario is one well-formed trace: header, nodes, every event valid."""
    (trace,) = load("4.2.ndjson", scenario_trace(str(SCENARIOS / "4.2-adding-a-bsc.yaml")))
    assert trace.header["mode"] == "clarified" and "send" in trace.header["observes"]
    declared = [e["name"] for e in trace.events if e["event"] == "node"]
    assert len(declared) == len(set(declared)) == len({e["node"] for e in trace.events if "node" in e})
    assert {e["event"] for e in trace.events} >= {"start", "receive", "send", "timer", "snapshot", "directory"}


# --- a minimal JSON Schema interpreter (the keywords the published schema uses) ------------------------


def schema_errors(root: dict[str, Any], value: Any) -> list[str]:
    """Where ``value`` fails ``root`` (draft 2020-12 semantics of the keywords used); [] when valid."""
    out: list[str] = []
    _check(root, root, value, "", out)
    return out


_TYPES = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "null": lambda v: v is None,
}


def _check(root: dict[str, Any], s: Any, v: Any, at: str, out: list[str]) -> None:
    if s is False:
        out.append(f"{at}: false schema")
        return
    if s is True or s == {}:
        return
    if "$ref" in s:
        _check(root, root["$defs"][s["$ref"].rsplit("/", 1)[1]], v, at, out)
    if "type" in s:
        types = s["type"] if isinstance(s["type"], list) else [s["type"]]
        if not any(_TYPES[t](v) for t in types):
            out.append(f"{at}: not {types}")
            return
    if "enum" in s and not any(v == e and type(v) is type(e) or (v is None and e is None) for e in s["enum"]):
        out.append(f"{at}: not in enum")
    if "const" in s and not (v == s["const"] and type(v) is type(s["const"])):
        out.append(f"{at}: not const")
    if isinstance(v, str):
        if len(v) < s.get("minLength", 0):
            out.append(f"{at}: too short")
        if "pattern" in s and not re.search(s["pattern"], v):
            out.append(f"{at}: pattern")
    if isinstance(v, int | float) and not isinstance(v, bool) and (
            not math.isfinite(v) or v < s.get("minimum", -math.inf) or v > s.get("maximum", math.inf)):
        out.append(f"{at}: range")
    if isinstance(v, dict):
        for name in s.get("required", ()):
            if name not in v:
                out.append(f"{at}.{name}: required")
        for k, item in v.items():
            matched = False
            if k in s.get("properties", {}):
                matched = True
                _check(root, s["properties"][k], item, f"{at}.{k}", out)
            for pattern, sub in s.get("patternProperties", {}).items():
                if re.search(pattern, k):
                    matched = True
                    _check(root, sub, item, f"{at}.{k}", out)
            if "propertyNames" in s:
                _check(root, s["propertyNames"], k, f"{at}.{k}(name)", out)
            if not matched and "additionalProperties" in s:
                _check(root, s["additionalProperties"], item, f"{at}.{k}", out)
    if isinstance(v, list) and "items" in s:
        for i, item in enumerate(v):
            _check(root, s["items"], item, f"{at}[{i}]", out)
    for sub in s.get("allOf", ()):
        _check(root, sub, v, at, out)
    if "anyOf" in s and not any(schema_errors_at(root, sub, v) == [] for sub in s["anyOf"]):
        out.append(f"{at}: anyOf")
    if "if" in s:
        branch = "then" if schema_errors_at(root, s["if"], v) == [] else "else"
        if branch in s:
            _check(root, s[branch], v, at, out)


def schema_errors_at(root: dict[str, Any], s: Any, v: Any) -> list[str]:
    out: list[str] = []
    _check(root, s, v, "", out)
    return out
