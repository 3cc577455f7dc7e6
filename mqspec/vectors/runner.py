"""mqspec's own vector runner: re-check every case of a vectors tree against mqspec itself.

:func:`run_all` reads the tree the way an implementer's loader would (``index.json``, then each
case's ``manifest.json`` and files) and checks each case against the reference:

* codec: decode ``input.bin`` and compare with ``expected.json`` (and re-encode a canonical
  one), or check the decoder refuses it with exactly ``error.json``;
* handler: validate the four files against ``handler.schema.json``, rebuild the state of
  ``pre.json``, run the event of ``event.json`` (in each mode, for a ``both`` case), compare the
  state with ``post.json`` and the effects and return value with ``effects.json``;
* scenario: run ``scenario.json`` again and compare the trace line by line and the result.

It also checks the tree itself: ``VERSION``, the README (it must be the one this mqspec writes),
the manifest schema, that the index and the case directories agree, and that each manifest
lists exactly the files of its directory. The report says which files were read: a file of the
tree the runner never read is stale, and the tests fail on it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from mqspec.model.errors import DecodeError
from mqspec.model.jsonform import from_json, to_json
from mqspec.refimpl.effects import Mode
from mqspec.wording import plural

from mqspec import json64

from .manifest import FORMAT_VERSION, KINDS, validate
from .writer import TOP_FILES, propids_json, readme_text, version_text


@attrs.frozen
class Failure:
    case: str
    message: str

    def __str__(self) -> str:
        return f"{self.case}: {self.message}"


@attrs.define
class Report:
    """What :func:`run_all` found: counts, failures, and every file it read (relative paths)."""

    root: Path
    kinds: tuple[str, ...] = KINDS
    cases: int = 0
    passed: int = 0
    by_kind: dict[str, int] = attrs.field(factory=dict)
    failures: list[Failure] = attrs.field(factory=list)
    files_read: set[str] = attrs.field(factory=set)

    @property
    def ok(self) -> bool:
        return not self.failures and not self.stale_files()

    def all_files(self) -> set[str]:
        """The files of the tree the run was asked to cover: the top files and the checked kinds'."""
        files = {p.relative_to(self.root).as_posix() for p in self.root.rglob("*") if p.is_file()}
        return {f for f in files if "/" not in f or f.split("/", 1)[0] in self.kinds}

    def stale_files(self) -> list[str]:
        """Files of the tree the runner did not read."""
        return sorted(self.all_files() - self.files_read)

    def to_json(self) -> dict[str, Any]:
        return {"root": str(self.root), "cases": self.cases, "passed": self.passed, "by_kind": self.by_kind,
                "failures": [{"case": f.case, "message": f.message} for f in self.failures],
                "files_read": len(self.files_read), "stale_files": self.stale_files()}


class _Tree:
    """Reads files of the tree, remembering which."""

    def __init__(self, root: Path, report: Report) -> None:
        self.root = root
        self.report = report

    def read(self, rel: str) -> bytes:
        data = (self.root / rel).read_bytes()
        self.report.files_read.add(rel)
        return data

    def json(self, rel: str) -> Any:
        return json.loads(self.read(rel).decode("utf-8"))


def json_diff(expected: Any, actual: Any, path: str = "") -> str | None:
    """Where two JSON values first differ (``None`` when equal), with both values there."""
    if type(expected) is not type(actual):
        return f"{path or '/'}: expected {_short(expected)}, got {_short(actual)}"
    if isinstance(expected, dict):
        for key in sorted(set(expected) | set(actual)):
            if key not in actual:
                return f"{path}/{key}: missing"
            if key not in expected:
                return f"{path}/{key}: unexpected {_short(actual[key])}"
            found = json_diff(expected[key], actual[key], f"{path}/{key}")
            if found:
                return found
        return None
    if isinstance(expected, list):
        for i, (a, b) in enumerate(zip(expected, actual)):
            found = json_diff(a, b, f"{path}/{i}")
            if found:
                return found
        if len(expected) != len(actual):
            return f"{path}: expected {plural(len(expected), 'item')}, got {len(actual)}"
        return None
    return None if expected == actual else f"{path or '/'}: expected {_short(expected)}, got {_short(actual)}"


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=True, sort_keys=True)
    return text if len(text) <= 120 else text[:117] + "..."


# --- one case of each kind ---------------------------------------------------------------------------


def check_codec(tree: _Tree, case: str, m: dict[str, Any]) -> list[str]:
    from .codec import ENTRIES, MESSAGE_TYPES, error_json

    data = tree.read(f"{case}/input.bin")
    decode, encode = ENTRIES[(m["protocol"], m["entry"])]
    name = "expected.json" if m["outcome"] == "valid" else "error.json"
    problems = _schema_problems(tree, f"{case}/{name}")
    if problems:
        return problems
    if m["outcome"] == "valid":
        expected = tree.json(f"{case}/expected.json")
        try:
            msg = decode(data, lenient=m["lenient"])
        except DecodeError as err:
            return [f"the bytes should decode, the decoder says: {err}"]
        problems = []
        diff = json_diff(expected, to_json(msg))
        if diff:
            problems.append(f"decoded JSON differs at {diff}")
        if from_json(expected, MESSAGE_TYPES[m["protocol"]]) != msg:
            problems.append("expected.json does not rebuild the decoded message")
        if m["canonical"] != (encode(msg) == data):
            problems.append(f"canonical is {m['canonical']}, but re-encoding gives {'the same' if not m['canonical'] else 'other'} bytes")
        return problems
    expected = tree.json(f"{case}/error.json")
    try:
        decode(data, lenient=m["lenient"])
    except DecodeError as err:
        # what the text fixes: the field blamed, where, and whose MUST; "reason" is informative
        got = {k: v for k, v in error_json(err).items() if k != "reason"}
        diff = json_diff({k: v for k, v in expected.items() if k != "reason"}, got)
        return [f"error differs at {diff}"] if diff else []
    return ["the bytes decode, but the case says they must be refused"]


def check_handler(tree: _Tree, case: str, m: dict[str, Any]) -> list[str]:
    from .handler_schema import FILE_DEFS, validate_file
    from .handlers import event_modes, run_event

    files = {name: tree.json(f"{case}/{name}") for name in FILE_DEFS}
    problems = [p for name, document in files.items() for p in validate_file(name, document)]
    if problems:
        return problems[:3]
    pre, event, post, effects = (files[n] for n in ("pre.json", "event.json", "post.json", "effects.json"))
    if (event["handler"], event["mode"], event["section"]) != (m["handler"], m["mode"], m["section"]):
        return ["event.json names another handler, mode or section than the manifest"]
    for run in event_modes(event):
        outcome = run_event(pre, run)
        within = f" (run in {run['mode']} mode)" if event["mode"] != run["mode"] else ""
        for label, want, got in (("post-state", post, outcome["post"]),
                                 ("effects", effects, {"effects": outcome["effects"],
                                                       "returned": outcome["returned"]})):
            diff = json_diff(want, got)
            if diff:
                problems.append(f"{label} differs{within} at {diff}")
        if problems:
            return problems
    return problems


def check_scenario(tree: _Tree, case: str, m: dict[str, Any]) -> list[str]:
    from .scenarios import TRACE_FORMAT, run_scenario

    problems = _schema_problems(tree, f"{case}/scenario.json") + _schema_problems(tree, f"{case}/expected.json")
    if problems:
        return problems
    data = tree.json(f"{case}/scenario.json")
    trace, result = tree.read(f"{case}/trace.ndjson"), tree.json(f"{case}/expected.json")
    if m["trace_format"] != TRACE_FORMAT:
        return [f"trace format {m['trace_format']}, this mqspec writes {TRACE_FORMAT}"]
    got_trace, got_result = run_scenario(data, m["scenario"], Mode(m["mode"]), m["seed"])
    problems = []
    if got_trace != trace:
        want_lines, got_lines = trace.splitlines(), got_trace.splitlines()
        n = next((i for i, (a, b) in enumerate(zip(want_lines, got_lines)) if a != b), min(len(want_lines), len(got_lines)))
        problems.append(f"trace line {n + 1} differs {_line_diff(want_lines, got_lines, n)}")
    diff = json_diff(result, got_result)
    if diff:
        problems.append(f"result differs at {diff}")
    return problems


def _line_diff(want_lines: list[bytes], got_lines: list[bytes], n: int) -> str:
    """Where line ``n`` of two traces differs: the JSON field and both values, or the line that is missing."""
    if n >= len(want_lines):
        return f"at the end: the trace has no line {n + 1}, the run adds {_short(json.loads(got_lines[n]))}"
    if n >= len(got_lines):
        return f"at the end: the run stops before {_short(json.loads(want_lines[n]))}"
    try:
        diff = json_diff(json.loads(want_lines[n]), json.loads(got_lines[n]))
    except ValueError:
        diff = None
    if diff is None:  # the same JSON written otherwise (or not JSON): show the text
        return f"in its text: expected {want_lines[n][:200]!r}, got {got_lines[n][:200]!r}"
    event = json.loads(want_lines[n]).get("event")
    return f"(event {event}) at {diff}"


def _schema_problems(tree: _Tree, path: str) -> list[str]:
    """The first few ways a JSON file of the tree breaks the schema the tree publishes for it."""
    from .schemas import validate_file

    return validate_file(path, tree.json(path))[:3]


CHECKS: dict[str, Callable[[_Tree, str, dict[str, Any]], list[str]]] = {
    "codec": check_codec, "handler": check_handler, "scenario": check_scenario,
}


# --- the whole tree ---------------------------------------------------------------------------------------


def _check_top(tree: _Tree, report: Report) -> dict[str, Any] | None:
    """VERSION, index.json, the schema and the README; returns the index (None when unusable)."""
    fail = report.failures.append
    version = tree.read("VERSION").decode("ascii", "replace")
    if not version.startswith(f"format {FORMAT_VERSION}\n"):
        fail(Failure("VERSION", f"this runner reads format {FORMAT_VERSION}, the tree says {version.splitlines()[:1]}"))
        return None
    if version != version_text():
        fail(Failure("VERSION", f"written by another mqspec: {version!r}"))
    index = tree.json("index.json")
    from .schemas import schema_files, validate_file, vocabulary

    for name, schema in schema_files().items():
        if tree.json(name) != json.loads(json64.dumps(schema)):
            fail(Failure(name, "differs from the schema this mqspec writes"))
    if tree.json("propids.json") != propids_json():
        fail(Failure("propids.json", "differs from the PROPID table this mqspec writes"))
    if tree.json("vocabulary.json") != vocabulary():
        fail(Failure("vocabulary.json", "differs from the vocabulary this mqspec writes"))
    for name in ("index.json", "propids.json", "vocabulary.json"):
        for problem in validate_file(name, tree.json(name))[:3]:
            fail(Failure(name, problem))
    counts = {k: sum(1 for c in index["cases"] if c["kind"] == k) for k in KINDS}
    if counts != index["counts"]:
        fail(Failure("index.json", f"counts {index['counts']} do not match its cases {counts}"))
    if tree.read("README.md").decode("utf-8") != readme_text(counts):
        fail(Failure("README.md", "differs from the README this mqspec writes for this index"))
    return index  # type: ignore[no-any-return]


def run_all(root: str | Path, *, kinds: tuple[str, ...] = KINDS) -> Report:
    """Check every case of the tree at ``root`` (of ``kinds``); never raises for a bad case."""
    root = Path(root)
    report = Report(root, tuple(kinds))
    tree = _Tree(root, report)
    missing = [name for name in TOP_FILES if not (root / name).is_file()]
    if missing:
        report.failures.append(Failure("(tree)", f"missing {', '.join(missing)}: not a vectors tree"))
        return report
    try:
        index = _check_top(tree, report)
        entries = [(c["case"], c["kind"], c) for c in index["cases"]] if index is not None else []
    except (OSError, ValueError, KeyError, TypeError) as exc:  # a malformed top file: nothing to run
        report.failures.append(Failure("(tree)", f"unreadable VERSION, index.json or schema: {exc!r}"))
        return report
    on_disk = sorted(p.parent.relative_to(root).as_posix() for p in root.rglob("manifest.json"))
    for stale in sorted(set(on_disk) - {case for case, _, _ in entries}):
        report.failures.append(Failure(stale, "a case directory the index does not list"))
    for case, kind, entry in entries:
        if kind not in kinds:
            continue
        report.cases += 1
        report.by_kind[kind] = report.by_kind.get(kind, 0) + 1
        problems = _check_case(tree, case, entry)
        if problems:
            report.failures.extend(Failure(case, p) for p in problems)
        else:
            report.passed += 1
    return report


def check_cases(root: str | Path, cases: list[str], *, first_only: bool = False) -> list[Failure]:
    """Check the named cases of the tree at ``root`` only (no tree-level checks); ``first_only`` stops
    at the first failing case (what mutation testing needs: is the mutant told apart at all)."""
    root = Path(root)
    tree = _Tree(root, Report(root))
    failures: list[Failure] = []
    for case in cases:
        kind = case.split("/", 1)[0]
        problems = _check_case(tree, case, {"kind": kind, **_manifest_key(tree, case)})
        failures.extend(Failure(case, p) for p in problems)
        if failures and first_only:
            break
    return failures


def _manifest_key(tree: _Tree, case: str) -> dict[str, Any]:
    """The index entry of a case, from its own manifest (for :func:`check_cases`)."""
    m = tree.json(f"{case}/manifest.json")
    return {"document": m.get("document"), "section": m.get("section")}


def _check_case(tree: _Tree, case: str, entry: dict[str, Any]) -> list[str]:
    folder = tree.root / case
    if ".." in Path(case).parts or not (folder / "manifest.json").is_file():
        return ["listed in index.json, but there is no such case directory"]
    try:
        m = tree.json(f"{case}/manifest.json")
    except (OSError, ValueError) as exc:
        return [f"manifest.json unreadable: {exc}"]
    problems = validate(m)
    if problems:
        return problems
    if (m["case"], m["kind"], m["document"], m["section"]) != (case, entry.get("kind"), entry.get("document"),
                                                                 entry.get("section")):
        return ["manifest.json and index.json disagree on the case"]
    present = sorted(p.name for p in folder.iterdir() if p.name != "manifest.json")
    if present != m["files"]:
        return [f"the directory holds {present}, the manifest lists {m['files']}"]
    try:
        return CHECKS[m["kind"]](tree, case, m)
    except Exception as exc:  # noqa: BLE001  (a broken case is a failure of that case, never of the run)
        return [f"{type(exc).__name__}: {exc}"]
