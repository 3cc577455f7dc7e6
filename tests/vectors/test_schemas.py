"""Every JSON file of a vectors tree validates against the schema the tree publishes for it (issue 24, row 1),
and the vocabulary names every key, effect and timer the handler files use (row 3)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from mqspec import json64
from mqspec.vectors.schemas import schema_of, validate_file
from mqspec.vectors.writer import SCHEMA_NAMES, generate


@pytest.fixture(scope="module")
def reduced(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("schemas") / "tree"
    generate(out, reduced=True)
    return out


def validate_tree(root: Path, sample: int = 1) -> tuple[dict[str, int], list[str]]:
    """Validate every JSON file of the tree, and every line of every trace, against the tree's own schema
    files (read from the tree, as a consumer would); returns counts and the problems found.

    ``sample`` above 1: a trace line is checked against trace.schema.json one line in ``sample`` (and the
    first and last of each trace), every line by the trace reader's validator, which is generated from the
    same tables as the schema (the full set's traces are hundreds of megabytes)."""
    from mqspec.oracle.trace_format import TraceError
    from mqspec.oracle.trace_format import validate as trace_validate

    schemas = {name: json.loads((root / name).read_text()) for name in SCHEMA_NAMES}
    counts = {"files": 0, "trace_lines": 0, "skipped": 0}
    problems: list[str] = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root).as_posix()
        if rel in SCHEMA_NAMES or path.suffix not in (".json", ".ndjson"):
            counts["skipped"] += path.suffix in (".json", ".ndjson")
            continue
        assert schema_of(rel) is not None, f"{rel}: no published schema says what it holds"
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".ndjson":
            lines = text.splitlines()
            for i, line in enumerate(lines, 1):
                counts["trace_lines"] += 1
                record = json.loads(line)
                if sample == 1 or i % sample == 0 or i in (1, len(lines)):
                    problems += validate_file(rel, record, schemas)[:1]
                try:
                    trace_validate(record, rel, i)
                except TraceError as exc:
                    problems.append(str(exc))
            continue
        counts["files"] += 1
        problems += validate_file(rel, json.loads(text), schemas)[:2]
    return counts, problems


def test_every_json_file_of_a_reduced_tree_validates_against_its_published_schema(reduced: Path):
    """Each manifest, codec expected/error, handler pre/post/event/effects, scenario file and result, every
    trace line, the index, propids.json and vocabulary.json: valid under the schema file beside them."""
    counts, problems = validate_tree(reduced)
    assert problems == []
    assert counts["files"] > 2500 and counts["trace_lines"] > 1000


def test_the_published_schemas_refuse_what_they_should(reduced: Path):
    """The check can fail: a sequence number written as a number, a decoded message with a field it lacks, a
    trace line with an unknown event, an error without its offset."""
    schemas = {name: json.loads((reduced / name).read_text()) for name in SCHEMA_NAMES}
    expected = next(p for p in sorted(reduced.rglob("expected.json")) if "codec/mqdsrp/valid" in p.as_posix())
    message = json.loads(expected.read_text())
    rel = expected.relative_to(reduced).as_posix()
    seq_key = next(k for k in message if k.endswith("seq_number"))
    assert validate_file(rel, {**message, seq_key: 5}, schemas)
    assert validate_file(rel, {**message, "extra": 1}, schemas)
    assert validate_file("scenario/x/y/trace.ndjson", {"trace": "t", "format": 3, "event": "nope", "t": 0}, schemas)
    error = {"field": "X.Y", "path": "X.Y", "context": [], "document": "MS-MQSD", "section": "2.2.1", "reason": "r"}
    assert validate_file("codec/mqsd/invalid/x/error.json", error, schemas)


def test_no_json_file_of_the_tree_holds_a_number_beyond_2_53(reduced: Path):
    """64-bit fidelity: every number of every JSON file is one a double holds exactly (sequence numbers are
    decimal strings), and the tree does hold sequence numbers above 2^53, as strings."""
    from tests.test_json64 import numbers

    big = 0
    for path in reduced.rglob("*.json"):
        text = path.read_text()
        assert all(abs(n) <= json64.MAX_SAFE for n in numbers(json.loads(text))), path
        big += text.count('"18446744073709551615"')
    assert big > 0


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_every_json_file_of_a_full_tree_validates_against_its_published_schema(tmp_path: Path):
    """Slow tier: the full vector set (a minute or two to write, about 470 MB): every JSON file against its
    schema; every trace line by the trace reader and one in 50 against trace.schema.json too."""
    out = tmp_path / "tree"
    start = time.monotonic()
    generate(out)
    counts, problems = validate_tree(out, sample=50)
    assert problems == [], problems[:20]
    assert counts["files"] > 3000, (counts, time.monotonic() - start)


# --- the vocabulary ------------------------------------------------------------------------------------------


def _scope_keys(root: Path) -> dict[str, set[str]]:
    """Every key of the handler states, by the vocabulary's scope, and every effect, field and timer used."""
    keys: dict[str, set[str]] = {}

    def add(scope: str, names) -> None:
        keys.setdefault(scope, set()).update(names)

    for name in ("pre.json", "post.json"):
        for path in root.glob(f"handler/**/{name}"):
            state = json.loads(path.read_text())
            side = state.get("side")
            if side is None:
                add("mqdsrp_state", state)
                for p in state["partitions"]:
                    add("mqdsrp_partition", p)
                for n in state["psc_neighbors"] + state["bsc_neighbors"]:
                    add("mqdsrp_neighbor", n)
            elif side == "queue_manager":
                add("mqcn_queue_manager", state)
                add("mqcn_options", state["options"])
                for q in state["queue_collection"].values():
                    add("mqcn_queue", q)
            elif side == "server":
                add("mqsd_server", state)
            elif "outgoing" in state:
                add("mqcn_client", state)
            else:
                add("mqsd_client", state)
    for path in root.glob("handler/**/effects.json"):
        for effect in json.loads(path.read_text())["effects"]:
            add("effect", {effect["effect"]})
            add(f"fields:{effect['effect']}", set(effect) - {"effect"})
            if effect["effect"] in ("StartTimer", "CancelTimer"):
                timer = effect["timer"]
                add("timer", {timer if isinstance(timer, str) else timer["kind"]})
    return keys


def test_the_vocabulary_names_every_key_effect_field_and_timer_of_the_handler_files(reduced: Path):
    """Every key of every state, every effect and each of its fields, every timer: in vocabulary.json, with its
    meaning and the element of the text it holds (or the register entry it rests on)."""
    vocabulary = json.loads((reduced / "vocabulary.json").read_text())["entries"]
    known: dict[str, set[str]] = {}
    for entry in vocabulary:
        known.setdefault(entry["scope"], set()).add(entry["name"])
        if entry["scope"] == "effect":
            known[f"fields:{entry['name']}"] = set(entry["fields"])
    missing = {scope: sorted(names - known.get(scope, set())) for scope, names in _scope_keys(reduced).items()}
    assert {scope: names for scope, names in missing.items() if names} == {}


def test_the_modelled_elements_the_issue_names_carry_their_register_entry(reduced: Path):
    """MS-MQCN's batch options and timer, the status codes and sender identifier type 2 are marked (row 3)."""
    entries = {(e["scope"], e["name"]): e for e in json.loads((reduced / "vocabulary.json").read_text())["entries"]}

    def ids(scope, name):
        return [m["id"] for m in entries[(scope, name)].get("rests_on", [])]

    assert "E-249" in ids("mqcn_options", "batching") and "E-249" in ids("timer", "mqcn_batch")
    assert "E-199" in ids("value", "status") and "E-247" in ids("value", "sender_identifier_type")
    assert entries[("value", "status")]["rests_on"][0]["kind"] == "modelling"
