"""The test vectors: generated deterministically, every file consumed by mqspec's own runner.

The default tier generates the reduced set (``reduced=True``: fewer random codec cases and
scenario runs, every handler vector); the ``slow`` tier generates and checks the full set that
``mqspec vectors --out DIR`` writes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from mqspec.model import mqcn, mqdsrp, mqsd
from mqspec.model.examples_mqsd import EXAMPLES

from mqspec.cli.vectors import vectors
from mqspec.proofs.explore.branches import HANDLER_MODULES, Reach
from mqspec.vectors.handlers import handler_sections
from mqspec.vectors.manifest import FORMAT_VERSION, MANIFEST_SCHEMA, validate
from mqspec.vectors.runner import CHECKS, Report, _Tree, run_all
from mqspec.vectors.writer import generate

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The reduced vectors tree, generated once for this module."""
    out = tmp_path_factory.mktemp("vectors") / "tree"
    generate(out, reduced=True)
    return out


@pytest.fixture(scope="module")
def report(tree: Path) -> Report:
    return run_all(tree)


def files_of(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def manifests(root: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(root.rglob("manifest.json"))]


# --- the runner ---------------------------------------------------------------------------------


def test_every_case_passes_the_runner(report: Report):
    """mqspec's runner re-checks every case of the tree against mqspec and all of them pass."""
    assert report.failures == []
    assert report.cases == report.passed > 450
    assert set(report.by_kind) == {"codec", "handler", "scenario"}


def test_every_file_of_the_tree_is_consumed(tree: Path, report: Report):
    """The runner read every file of the tree: nothing is stale."""
    assert report.stale_files() == []
    assert report.files_read == set(files_of(tree))


def _copy_case(tree: Path, case: str, tmp_path: Path) -> tuple[_Tree, dict]:
    shutil.copytree(tree / case, tmp_path / case)
    manifest = json.loads((tmp_path / case / "manifest.json").read_text())
    return _Tree(tmp_path, Report(tmp_path)), manifest


def _case(tree: Path, prefix: str) -> str:
    return next(m["case"] for m in manifests(tree) if m["case"].startswith(prefix))


@pytest.mark.parametrize(("prefix", "file", "edit"), [
    ("codec/mqdsrp/valid/", "expected.json", lambda d: {**d, "site_id": "00000000-0000-0000-0000-000000000001"}),
    ("codec/mqsd/invalid/", "error.json", lambda d: {**d, "offset": d["offset"] + 1}),
    ("handler/3.1.7.2.2/", "post.json", lambda d: {**d, "my_psc_name": "SOMEONE"}),
    ("handler/3.3.7.3/", "effects.json", lambda d: {**d, "effects": d["effects"][1:]}),
])
def test_a_tampered_case_is_reported(tree: Path, tmp_path: Path, prefix: str, file: str, edit):
    """Changing what a case expects makes the runner report that case."""
    case = _case(tree, prefix)
    t, manifest = _copy_case(tree, case, tmp_path)
    path = tmp_path / case / file
    path.write_text(json.dumps(edit(json.loads(path.read_text()))))
    assert CHECKS[manifest["kind"]](t, case, manifest) != []


def test_a_tampered_trace_is_reported_at_its_line(tree: Path, tmp_path: Path):
    """A changed line of a scenario trace is reported with its line number."""
    case = "scenario/counterexample/e136-pending-change-after-full-sync-clarified"
    t, manifest = _copy_case(tree, case, tmp_path)
    path = tmp_path / case / "trace.ndjson"
    lines = path.read_text().splitlines(keepends=True)
    lines[9] = lines[9].replace('"t":', '"t":1')
    path.write_text("".join(lines))
    (problem,) = CHECKS["scenario"](t, case, manifest)
    assert problem.startswith("trace line 10 differs")


def test_a_tampered_trace_names_the_differing_field(tree: Path, tmp_path: Path):
    """A changed field of a trace line is reported by its JSON path, with both values."""
    case = "scenario/counterexample/e136-pending-change-after-full-sync-clarified"
    t, manifest = _copy_case(tree, case, tmp_path)
    path = tmp_path / case / "trace.ndjson"
    lines = path.read_text().splitlines(keepends=True)
    event = json.loads(lines[9])
    lines[9] = json.dumps({**event, "node": "ELSEWHERE"}, separators=(",", ":")) + "\n"
    path.write_text("".join(lines))
    (problem,) = CHECKS["scenario"](t, case, manifest)
    assert problem == (f"trace line 10 differs (event {event['event']}) at /node: "
                       f"expected \"ELSEWHERE\", got {json.dumps(event['node'])}")


#: a scenario whose properties are not in name order: the order reaches the trace
UNSORTED_PROPERTIES = """\
# Properties given out of name order.
enterprise: {pec: PEC0, sites: {site0: {psc: PEC0, bscs: [BSC01], machines: [C0]}}}
steps:
- create:
    at: PEC0
    type: queue
    path: C0\\q1
    properties: {PROPID_Q_LABEL: q1, PROPID_Q_INSTANCE: d63bd8de-555d-5929-a610-a79072ed146b}
- settle: {}
- expect: {converged: true}
"""


def test_scenario_json_keeps_the_order_of_properties(tmp_path: Path):
    """scenario.json keeps the scenario file's property order, so running it again gives the same trace."""
    from mqspec.refimpl.effects import Mode

    from mqspec.vectors.scenarios import _file_vector
    from mqspec.vectors.writer import prepare, scenario_case, write_tree

    source = tmp_path / "4.9-unsorted.yaml"
    source.write_text(UNSORTED_PROPERTIES)
    case = scenario_case(_file_vector("example", source, Mode.CLARIFIED))
    written = json.loads(case.files["scenario.json"])
    assert list(written["steps"][0]["create"]["properties"]) == ["PROPID_Q_LABEL", "PROPID_Q_INSTANCE"]
    prepare(tmp_path / "tree")
    write_tree(tmp_path / "tree", [case])
    result = run_all(tmp_path / "tree", kinds=("scenario",))
    assert result.failures == [] and result.passed == 1


def test_stale_files_and_unlisted_cases_are_reported(tmp_path: Path):
    """A file nothing reads and a case directory the index omits both fail the run."""
    out = tmp_path / "tree"
    generate(out, ("codec",), reduced=True)
    (out / "codec" / "notes.txt").write_text("left over")
    stray = out / "codec" / "mqsd" / "valid" / "stray"
    shutil.copytree(out / "codec" / "mqsd" / "valid" / "section4-client-request", stray)
    result = run_all(out, kinds=("codec",))
    assert "codec/notes.txt" in result.stale_files()
    assert any(f.case == "codec/mqsd/valid/stray" for f in result.failures)
    assert not result.ok


# --- determinism ------------------------------------------------------------------------------------


def test_generation_is_deterministic(tree: Path, tmp_path: Path):
    """Generating again gives the same files, byte for byte."""
    again = tmp_path / "again"
    generate(again, reduced=True)
    first, second = files_of(tree), files_of(again)
    assert sorted(first) == sorted(second)
    assert [p for p in first if first[p] != second[p]] == []


def test_generation_does_not_depend_on_the_hash_seed(tree: Path, tmp_path: Path):
    """A process with another string hash seed writes the same codec and handler files."""
    out = tmp_path / "other-seed"
    env = {**os.environ, "PYTHONHASHSEED": "4242"}
    code = f"from mqspec.vectors.writer import generate; generate({str(out)!r}, ('codec', 'handler'), reduced=True)"
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=300)
    theirs = files_of(out)
    ours = {p: d for p, d in files_of(tree).items() if p.startswith(("codec/", "handler/"))}
    from mqspec.vectors.writer import TOP_FILES

    assert sorted(theirs) == sorted([*ours, *TOP_FILES])
    assert [p for p in ours if ours[p] != theirs[p]] == []
    top = {p: d for p, d in files_of(tree).items() if p in TOP_FILES and p not in ("README.md", "index.json")}
    assert [p for p in top if top[p] != theirs[p]] == []  # the schemas and vocabulary too


# --- manifests and layout ------------------------------------------------------------------------------


def test_every_manifest_matches_the_schema(tree: Path):
    """Each manifest.json validates against the manifest schema written into the tree."""
    schema = json.loads((tree / "manifest.schema.json").read_text())
    assert schema == MANIFEST_SCHEMA
    found = manifests(tree)
    assert len(found) == len(json.loads((tree / "index.json").read_text())["cases"])
    for m in found:
        assert validate(m, schema) == [], m["case"]
        assert m["format"] == FORMAT_VERSION
        assert sorted(p.name for p in (tree / m["case"]).iterdir()) == sorted([*m["files"], "manifest.json"])


@pytest.mark.parametrize(("change", "message"), [
    (lambda m: m.pop("section"), "missing 'section'"),
    (lambda m: m.update(kind="unknown"), "is not"),
    (lambda m: m.update(extra=1), "unknown key 'extra'"),
    (lambda m: m.update(lenient="no"), "expected boolean"),
    (lambda m: m.update(section="2.2.x"), "does not match"),
    (lambda m: m.update(format=FORMAT_VERSION + 1), "is not"),
])
def test_the_schema_refuses_broken_manifests(tree: Path, change, message):
    """A manifest missing a key, with an unknown key or a wrong value fails validation."""
    manifest = json.loads((tree / _case(tree, "codec/mqdsrp/valid/") / "manifest.json").read_text())
    change(manifest)
    problems = validate(manifest)
    assert any(message in p for p in problems), problems


def test_version_and_index_name_the_format(tree: Path):
    """VERSION and index.json carry the format version; the index lists cases in path order."""
    assert (tree / "VERSION").read_text().splitlines()[0] == f"format {FORMAT_VERSION}"
    index = json.loads((tree / "index.json").read_text())
    paths = [c["case"] for c in index["cases"]]
    assert index["format"] == FORMAT_VERSION and paths == sorted(paths)


# --- what the vectors cover ----------------------------------------------------------------------------


def test_every_handler_section_has_vectors_in_both_modes(tree: Path):
    """Every MC-MQDSRP handler of the clause registry has a clarified and a literal vector (or one for both)."""
    have = {(m["section"], mode) for m in manifests(tree) if m["kind"] == "handler" and m["document"] == "MC-MQDSRP"
            for mode in (("clarified", "literal") if m["mode"] == "both" else (m["mode"],))}
    sections = handler_sections()
    assert len(sections) > 40
    assert [s for s in sections if (s, "clarified") not in have or (s, "literal") not in have] == []


def test_every_mqsd_handler_has_vectors(tree: Path):
    """Every MS-MQSD handler event of the clause registry (client and server) has handler vectors."""
    from mqspec.clauses import load_all
    from mqspec.vectors.handlers_mqsd import MQSD_HANDLERS

    have = {(m["section"], m["handler"]) for m in manifests(tree) if m["kind"] == "handler"
            and m["document"] == "MS-MQSD"}
    registered = {c.section for c in load_all() if c.document == "MS-MQSD" and c.code.startswith("refimpl/mqsd_")}
    handler_sections = {h.section for h in MQSD_HANDLERS.values()}
    # 3.1.1 and 3.2.1 are the data models (classes), every other registered section is a handler here
    assert sorted(registered - handler_sections) == ["3.1.1", "3.2.1"]
    assert {(h.section, h.name) for h in MQSD_HANDLERS.values()} <= have
    assert all(case.startswith("handler/ms-mqsd/") for case in
               (m["case"] for m in manifests(tree) if m["kind"] == "handler" and m["document"] == "MS-MQSD"))


def test_every_mqcn_handler_has_vectors(tree: Path):
    """Every MS-MQCN handler event of the server (3.2.3, 3.2.5, 3.2.5.1, 3.2.5.2, batching) and client (3.3) has vectors."""
    from mqspec.vectors.handlers_mqcn import MQCN_HANDLERS

    have = {(m["section"], m["handler"]) for m in manifests(tree) if m["kind"] == "handler"
            and m["document"] == "MS-MQCN"}
    assert {(h.section, h.name) for h in MQCN_HANDLERS.values()} <= have
    assert {"3.2.3", "3.2.5", "3.2.5.1", "3.2.5.2", "3.3.3", "3.3.4.1", "3.3.5.2", "3.3.5.3"} <= {s for s, _ in have}


def test_identical_readings_make_one_vector_and_different_ones_two(tree: Path):
    """A situation whose two readings agree is one "both" vector; one whose readings differ is two vectors that differ."""
    by_situation: dict[tuple[str, str], dict[str, Path]] = {}
    for m in manifests(tree):
        if m["kind"] == "handler":
            by_situation.setdefault((m["handler"], m["situation"]), {})[m["mode"]] = tree / m["case"]
    kinds = {tuple(sorted(modes)) for modes in by_situation.values()}
    assert kinds == {("both",), ("clarified", "literal")}
    for modes in by_situation.values():
        if "both" not in modes:
            outcome = [(json.loads((modes[mode] / "post.json").read_text()),
                        json.loads((modes[mode] / "effects.json").read_text())) for mode in ("clarified", "literal")]
            assert outcome[0] != outcome[1], modes


def test_handler_files_match_the_handler_schema(tree: Path):
    """Every pre, post, event and effects file validates against handler.schema.json, written into the tree."""
    from mqspec.vectors.handler_schema import FILE_DEFS, HANDLER_SCHEMA, validate_file

    assert json.loads((tree / "handler.schema.json").read_text()) == HANDLER_SCHEMA
    cases = [m["case"] for m in manifests(tree) if m["kind"] == "handler"]
    assert len(cases) > 150
    for case in cases:
        for name in FILE_DEFS:
            assert validate_file(name, json.loads((tree / case / name).read_text())) == [], (case, name)


@pytest.mark.parametrize(("name", "edit", "message"), [
    ("pre.json", lambda d: {**d, "role": "KING"}, "pre.json.role: 'KING' is not one of"),
    ("post.json", lambda d: {**d, "partitions": [{**d["partitions"][0], "last_seq_number": "-1"}]}, "does not match"),
    # a sequence number is written as a decimal string (64 bits), never as a JSON number
    ("post.json", lambda d: {**d, "partitions": [{**d["partitions"][0], "last_seq_number": 5}]}, "expected string"),
    ("event.json", lambda d: {**d, "mode": "loose"}, "event.json.mode"),
    ("effects.json", lambda d: {**d, "effects": [{"effect": "Teleport"}]}, "effects.json.effects[0]"),
])
def test_the_handler_schema_refuses_broken_files(tree: Path, name, edit, message):
    """A state, event or effect outside the schema is refused, naming where."""
    from mqspec.vectors.handler_schema import validate_file

    case = _case(tree, "handler/3.3.7.3/")
    problems = validate_file(name, edit(json.loads((tree / case / name).read_text())))
    assert any(message in p for p in problems), problems


#: handler statements no situation can reach, by (module, function, statement text), and why
UNREACHABLE = {
    ("mqdsrp_client.py", "receive_sync_reply", "return"):
        "the SYNC0 branch repeats a PurgedSeqNumber test the event has already passed",
    ("mqdsrp_common.py", "check_pending_changes", "continue  # removed by a nested event while this loop ran"):
        "no event Handle In-Sync Change raises empties PendingChangeCollection",
}


def _statements(path: Path) -> list[tuple[str, str, range]]:
    """(function, first line's text, the lines of its header) of every statement inside a function."""
    import ast

    source = path.read_text().splitlines()
    found = []
    for fn in ast.walk(ast.parse(path.read_text())):
        if not isinstance(fn, ast.FunctionDef):
            continue
        for node in ast.walk(fn):
            if node is fn or not isinstance(node, ast.stmt) or isinstance(node, ast.FunctionDef):
                continue
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
                continue  # a docstring
            body = getattr(node, "body", None)
            end = body[0].lineno - 1 if isinstance(body, list) and body else node.end_lineno
            text = source[node.lineno - 1].strip()
            if "pragma: no cover" in source[node.lineno - 2]:  # under an ``else:  # pragma: no cover``
                text += "  # pragma: no cover"
            found.append((fn.name, text, range(node.lineno, end + 1)))
    return found


def test_handler_vectors_reach_every_statement_of_the_handlers():
    """Running every handler vector executes every statement of the MC-MQDSRP handler modules."""
    from mqspec.refimpl.effects import Mode

    from mqspec.vectors.handlers import all_situations, build_vector, run_event

    built = [build_vector(s, mode) for s in all_situations() for mode in Mode]
    with Reach() as reach:
        for v in built:
            run_event(v.pre, v.event)
    hits = reach.lines
    missed = []
    for name in HANDLER_MODULES:
        for function, text, lines in _statements(ROOT / "refimpl" / name):
            if any((name, n) in hits for n in lines) or "pragma: no cover" in text:
                continue
            if (name, function, text) not in UNREACHABLE:
                missed.append(f"{name}:{lines.start} {function}: {text}")
    assert missed == []


def test_every_message_type_has_valid_codec_vectors(tree: Path):
    """Every message of MC-MQDSRP, MS-MQSD and MS-MQCN decodes in some valid vector, both MQCN versions too."""
    decoded = [json.loads((tree / m["case"] / "expected.json").read_text())
               for m in manifests(tree) if m["kind"] == "codec" and m["outcome"] == "valid"]
    names = {d["message"] for d in decoded}
    messages = {t.__name__ for t in (*mqdsrp._BY_OPERATION.values(), *mqsd.MESSAGE_TYPES.values(),
                                     *mqcn.MESSAGE_TYPES.values())}
    assert messages <= names
    assert {d["version"] for d in decoded if d["message"] == "ChangeNotificationMessage"} == {1, 2}


def test_mqsd_section_4_packets_are_vectors_byte_for_byte(tree: Path):
    """The three MS-MQSD section 4 packets are valid vectors with their exact bytes."""
    for name, data in EXAMPLES.items():
        case = tree / "codec" / "mqsd" / "valid" / f"section4-{name.replace('_', '-')}"
        assert (case / "input.bin").read_bytes() == data
        assert json.loads((case / "manifest.json").read_text())["canonical"] is True


#: codec clauses no byte string can break on its own: SEQUENCE_NUMBER and PARTITION_SEQ_NUMBERS
#: are fixed-size and checked through the counts around them; 2.2.6.1 dispatches on the header
UNBREAKABLE = {("MC-MQDSRP", "2.2.2"), ("MC-MQDSRP", "2.2.3"), ("MC-MQDSRP", "2.2.6.1")}


def test_invalid_vectors_cover_every_codec_clause(tree: Path):
    """Each registered section 2 clause of the three codecs has an invalid vector with its section."""
    from mqspec.clauses import load_all

    refused = {(m["document"], m["section"]) for m in manifests(tree) if m["kind"] == "codec"
               and m["outcome"] == "invalid"}
    codec_clauses = {(c.document, c.section) for c in load_all()
                     if c.document in ("MC-MQDSRP", "MS-MQSD", "MS-MQCN") and c.code.startswith("model/")
                     and c.section.startswith("2.2")}
    assert sorted(codec_clauses - refused - UNBREAKABLE) == []


def test_scenario_vectors_cover_examples_counterexamples_and_faults(tree: Path):
    """The reduced set has section 4 examples, a counterexample in both modes and a fault run that converges."""
    found = {(m["source"], m["mode"]) for m in manifests(tree) if m["kind"] == "scenario"}
    assert found == {("example", "clarified"), ("example", "literal"), ("counterexample", "clarified"),
                     ("counterexample", "literal"), ("fault", "clarified")}
    for m in manifests(tree):
        if m["kind"] == "scenario" and m["mode"] == "clarified":
            result = json.loads((tree / m["case"] / "expected.json").read_text())
            assert result["converged"] and result["failures"] == [], m["case"]


def test_policy_cases_are_the_refusals_no_must_requires(tree: Path):
    """Codec cases refused by mqspec's policy rather than a MUST carry the entry and its kind: a reply's Version and
    Reserved (E-020), a tag in another case (E-032, ABNF strings being case-insensitive, row 7)."""
    marked = {m["case"]: [(r["id"], r["kind"]) for r in m["rests_on"]] for m in manifests(tree)
              if m["kind"] == "codec" and "rests_on" in m}
    policy = {case: found for case, found in marked.items() if any(kind == "policy" for _, kind in found)}
    assert policy == {"codec/mqsd/invalid/reply-version": [("E-020", "policy")],
                      "codec/mqsd/invalid/reply-reserved": [("E-020", "policy")],
                      "codec/mqcn/invalid/tag-case": [("E-032", "policy")]}, policy
    for case in policy:
        assert "policy" in json.loads((tree / case / "manifest.json").read_text())["description"]
    assert all(not m.get("rests_on") for m in manifests(tree) if m["kind"] == "codec" and m["outcome"] == "valid")


def test_propids_json_sizes_every_property_of_the_valid_vectors(tree: Path):
    """The README's flat encoding, applied with propids.json alone, re-encodes every property of every valid
    MC-MQDSRP and MS-MQCN vector to bytes found in its input.bin."""
    import uuid

    table = {p["name"]: p["vartype"] for p in json.loads((tree / "propids.json").read_text())["propids"]}
    ints = {"VT_I1": "<b", "VT_UI1": "<B", "VT_I2": "<h", "VT_UI2": "<H", "VT_BOOL": "<H", "VT_I4": "<i",
            "VT_UI4": "<I", "VT_I8": "<q", "VT_UI8": "<Q"}

    def flat(vartype: str, value) -> bytes:
        import struct

        if vartype in ints:
            return struct.pack(ints[vartype], value)
        if vartype == "VT_LPWSTR":
            return value.encode("utf-16-le", "surrogatepass") + b"\0\0"
        if vartype == "VT_CLSID":
            return uuid.UUID(value).bytes_le
        if vartype in ("VT_BLOB", "VT_UI1|VT_VECTOR"):
            return struct.pack("<I", len(value) // 2) + bytes.fromhex(value)
        element = {"VT_CLSID|VT_VECTOR": "VT_CLSID", "VT_UI4|VT_VECTOR": "VT_UI4", "VT_LPWSTR|VT_VECTOR": "VT_LPWSTR"}
        return struct.pack("<I", len(value)) + b"".join(flat(element[vartype], v) for v in value)

    def properties(node):
        if isinstance(node, dict):
            if set(node) == {"propid", "value"}:
                yield node
            for v in node.values():
                yield from properties(v)
        elif isinstance(node, list):
            for v in node:
                yield from properties(v)

    checked: list[str] = []
    for m in manifests(tree):
        if m["kind"] == "codec" and m["outcome"] == "valid" and m["protocol"] in ("mqdsrp", "mqcn"):
            data = (tree / m["case"] / "input.bin").read_bytes()
            for prop in properties(json.loads((tree / m["case"] / "expected.json").read_text())):
                assert flat(table[prop["propid"]], prop["value"]) in data, (m["case"], prop["propid"])
                checked.append(table[prop["propid"]])
    assert len(checked) > 50 and len(set(checked)) >= 10


# --- the README and the CLI ----------------------------------------------------------------------------


def test_readme_loading_loop_reads_every_case(tree: Path):
    """The Python loading loop of the README, run as written, visits every case of the tree."""
    text = (tree / "README.md").read_text()
    loop = re.search(r"```python\n(.*?)```", text, re.DOTALL).group(1)
    seen: list[str] = []
    record = lambda *args: seen.append(args[0])
    namespace = {"check_decodes": lambda *a: record(a[3]), "check_refuses": lambda *a: record(a[3]),
                 "check_handler": lambda *a: record(a[0]), "check_trace": lambda *a: record(a[0])}
    exec(loop.replace('Path("vectors")', f"Path({str(tree)!r})"), namespace)  # noqa: S102
    assert len(seen) == len(json.loads((tree / "index.json").read_text())["cases"])


def test_cli_writes_and_checks_a_tree(tmp_path: Path):
    """``mqspec vectors --out DIR --kinds codec --check`` writes the codec vectors and checks them."""
    result = CliRunner().invoke(vectors, ["--out", str(tmp_path / "v"), "--kinds", "codec", "--reduced", "--check"])
    assert result.exit_code == 0, result.output
    assert "0 failures, 0 stale files" in result.output


@pytest.mark.parametrize("args", [["--kinds", "codecs"], ["--kinds", ""]])
def test_cli_refuses_unknown_kinds(tmp_path: Path, args):
    """An unknown kind is a usage error (exit 2, one line)."""
    result = CliRunner().invoke(vectors, ["--out", str(tmp_path / "v"), *args])
    assert result.exit_code == 2 and "usage" in result.output


def test_cli_refuses_to_overwrite_other_files(tmp_path: Path):
    """A non-empty directory that is no vectors tree is left alone (exit 2)."""
    (tmp_path / "mine.txt").write_text("keep me")
    result = CliRunner().invoke(vectors, ["--out", str(tmp_path), "--kinds", "codec"])
    assert result.exit_code == 2 and (tmp_path / "mine.txt").read_text() == "keep me"


@pytest.mark.slow
def test_the_full_set_passes_the_runner(tmp_path: Path):
    """The full set the CLI writes (every example and counterexample in both modes) passes, nothing stale."""
    out = tmp_path / "full"
    generate(out)
    result = run_all(out)
    assert result.failures == [] and result.stale_files() == []
    assert result.by_kind["scenario"] > 10


def test_scenario_sources_are_in_the_repository():
    """The section 4 examples the scenario vectors run are the repository's scenario files."""
    from mqspec.vectors.scenarios import scenario_files

    names = [path.name for source, path in scenario_files() if source == "example"]
    assert names == sorted(p.name for p in (ROOT / "scenarios").glob("4.*.yaml")) and len(names) == 5
