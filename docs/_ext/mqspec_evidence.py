"""Everything the annotated spec shows about a section, gathered from the project's own registries.

No Sphinx here: the quoted text (``docs/spec_text/*.json``, written by ``tools/extract_spec.py``),
the clause registry (code and the tests that ``covers()`` a section), the errata register, the
vector cases (their manifests' document and section, without running the scenario cases), the
proof obligations with their committed results (``docs/_data/obligations.json``, written by
``tools/obligation_results.py``) and the scenario files. Every page of ``docs/spec/`` is a view
of :class:`Evidence`, so a new clause, register entry, vector, obligation or scenario appears in
the documentation without anyone editing it.
"""

from __future__ import annotations

import ast
import functools
import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import attrs

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
TEXT_DIR = DOCS / "spec_text"
RESULTS = DOCS / "_data" / "obligations.json"
#: the documents with section pages, in the order the site lists them
DOCUMENTS = ("MC-MQDSRP", "MS-MQSD", "MS-MQCN", "MS-MQDS")
OFFICIAL = {
    "MC-MQDSRP": "https://learn.microsoft.com/en-us/openspecs/windows_protocols/mc-mqdsrp/",
    "MS-MQSD": "https://learn.microsoft.com/en-us/openspecs/windows_protocols/ms-mqsd/",
    "MS-MQCN": "https://learn.microsoft.com/en-us/openspecs/windows_protocols/ms-mqcn/",
    "MS-MQDS": "https://learn.microsoft.com/en-us/openspecs/windows_protocols/ms-mqds/",
}
ERRATUM_ID = re.compile(r"\bE-\d{3}\b")

Key = tuple[str, str]  # (document, section)


def section_key(section: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else 0 for p in section.split("."))


def page_name(document: str, section: str) -> str:
    """The docname of a section page: ``spec/mc-mqdsrp/3.2.7.3``."""
    return f"spec/{document.lower()}/{section}"


def erratum_anchor(erratum_id: str) -> str:
    return erratum_id.lower()


@attrs.frozen
class Section:
    document: str
    section: str
    title: str
    text: str
    lines: tuple[int, int]
    source: str

    @property
    def key(self) -> Key:
        return (self.document, self.section)

    @property
    def parent(self) -> str | None:
        return self.section.rsplit(".", 1)[0] if "." in self.section else None

    @property
    def heading(self) -> str:
        return f"{self.document} {self.section} {self.title}"


@attrs.frozen
class Code:
    """The source of one registered clause: the decorated function or class, decorators included."""

    module: str  # dotted, e.g. mqspec.refimpl.mqdsrp_server
    qualname: str
    path: str  # relative to the repository root
    first: int
    last: int
    source: str


@attrs.frozen
class Test:
    id: str  # tests/x.py::test_name
    doc: str
    source: str

    @property
    def path(self) -> str:
        return self.id.split("::")[0]

    @property
    def name(self) -> str:
        return self.id.rsplit("::", 1)[-1]

    @property
    def page(self) -> str:
        """The evidence page that shows this test's file: ``evidence/tests/refimpl--test_x``."""
        return "evidence/tests/" + self.path.removeprefix("tests/").removesuffix(".py").replace("/", "--")

    @property
    def anchor(self) -> str:
        return re.sub(r"[^a-z0-9]+", "-", f"t-{self.page.rsplit('/', 1)[-1]}-{self.name}".lower())


@attrs.frozen
class Obligation:
    name: str
    kind: str
    handler: str
    invariant: str
    status: dict[str, str]  # mode -> proved | proved, trivial | proved, vacuous | violated | unknown | not run
    servers: str = "one"  # one | any | a bounded run's number of servers


@attrs.frozen
class Vector:
    case: str
    kind: str


@attrs.frozen
class Scenario:
    path: str  # relative to the repository root, e.g. scenarios/4.1-adding-a-site.yaml
    text: str

    @property
    def page(self) -> str:
        return "evidence/scenarios/" + self.path.removeprefix("scenarios/").removesuffix(".yaml").replace("/", "--")


# --- loading each registry ----------------------------------------------------------------------------------


def load_sections() -> dict[str, list[Section]]:
    out: dict[str, list[Section]] = {}
    for document in DOCUMENTS:
        data = json.loads((TEXT_DIR / f"{document}.json").read_text(encoding="utf-8"))
        out[document] = [Section(document, s["section"], s["title"], s["text"], tuple(s["lines"]), data["source"])
                         for s in data["sections"]]
    return out


_PACKAGES = {"model": "mqspec.model", "refimpl": "mqspec.refimpl", "proofs": "mqspec.proofs",
             "pipeline": "mqspec.pipeline", "mqspec": "mqspec"}


def clause_code(where: str) -> Code:
    """The source of the definition registered at ``path:line`` (the line of its first decorator or ``def``)."""
    path, line_text = where.rsplit(":", 1)
    line = int(line_text)
    text = (ROOT / path).read_text(encoding="utf-8")
    tree = ast.parse(text)
    lines = text.splitlines()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            if line in (first, node.lineno):
                parts = Path(path).with_suffix("").parts
                module = ".".join([_PACKAGES.get(parts[0], parts[0]), *parts[1:]])
                source = "\n".join(lines[first - 1:node.end_lineno])
                return Code(module, node.name, path, first, node.end_lineno or first, source)
    raise ValueError(f"no function or class at {where}")


@functools.lru_cache(maxsize=None)
def _test_defs(path: str) -> dict[str, tuple[str, str]]:
    """Each function or class of a test file: its docstring's first paragraph and its source (decorators on)."""
    text = (ROOT / path).read_text(encoding="utf-8")
    lines = text.splitlines()
    out: dict[str, tuple[str, str]] = {}
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            doc = (ast.get_docstring(node) or "").strip().split("\n\n")[0].replace("\n", " ")
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            out[node.name] = (doc, "\n".join(lines[first - 1:node.end_lineno]))
    return out


def make_test(test_id: str) -> Test:
    path, _, name = test_id.partition("::")
    doc, source = _test_defs(path).get(name.split("::")[-1], ("", ""))
    return Test(test_id, doc, source)


def load_vectors() -> dict[Key, list[Vector]]:
    """Vector cases by section: codec and handler cases as ``mqspec vectors`` writes them (its own generators, a
    few seconds); scenario cases by file, without running them (that takes minutes)."""
    from mqspec.vectors.scenarios import FAULT_SEEDS, scenario_files
    from mqspec.vectors.writer import codec_cases, handler_cases

    out: dict[Key, list[Vector]] = defaultdict(list)
    for case in codec_cases():
        out[(case.document, case.section)].append(Vector(case.path, "codec"))
    for case in handler_cases():
        out[(case.document, case.section)].append(Vector(case.path, "handler"))
    # the scenario cases' sections, by the rules of mqspec.vectors.scenarios (without running them)
    entries = _errata_by_id()
    for source, path in scenario_files(ROOT / "scenarios"):
        if source == "example":
            key = ("MC-MQDSRP", path.stem.split("-", 1)[0])
        else:
            m = re.match(r"e(\d{3})", path.stem)
            e = entries.get(f"E-{m.group(1)}") if m else None
            key = (e.document, e.section) if e else ("MC-MQDSRP", "3")
        for mode in ("clarified", "literal"):
            out[key].append(Vector(f"scenario/{source}/{path.stem}-{mode}", "scenario"))
    for seed in FAULT_SEEDS:
        out[("MC-MQDSRP", "3")].append(Vector(f"scenario/fault/fault-{seed:03d}-clarified", "scenario"))
    return dict(out)


def _errata_by_id() -> dict[str, Any]:
    from mqspec.errata import by_id

    return by_id()


def load_obligations() -> tuple[dict[Key, list[Obligation]], list[Obligation], str]:
    """Obligations by section (consecution: the handler's, per server and in the enterprise model; lemmas 2.2.2;
    initiation 3.1.3.1; bounded model checking 3), every obligation, and how the results were made (the results
    file's ``made_by``)."""
    from mqspec.proofs.enterprise.transitions import BY_TRANSITION
    from mqspec.proofs.obligations import obligations
    from mqspec.proofs.z3_events import EVENTS_BY_NAME

    recorded: dict[tuple[str, str], str] = {}
    made_by = "no results file"
    if RESULTS.is_file():
        data = json.loads(RESULTS.read_text(encoding="utf-8"))
        made_by = data.get("made_by", "")
        for r in data["results"]:
            note = ", vacuous" if r.get("vacuous") else ", trivial" if r.get("trivial") else ""
            recorded[(r["name"], r["mode"])] = r["status"] + (note if r["status"] == "proved" else "")
    merged: dict[str, Obligation] = {}
    modes = ("clarified", "literal")
    for mode in modes:
        for ob in obligations(mode):
            merged.setdefault(ob.name, Obligation(ob.name, ob.kind, ob.handler, ob.invariant,
                                                  {m: recorded.get((ob.name, m), "not run") for m in modes},
                                                  ob.servers))
    by_key: dict[Key, list[Obligation]] = defaultdict(list)
    for ob in merged.values():
        if ob.kind == "lemma":
            section = "2.2.2"
        elif ob.kind in ("initiation", "enterprise-initiation"):
            section = "3.1.3.1"
        elif ob.kind == "consecution" and ob.handler in EVENTS_BY_NAME:
            section = EVENTS_BY_NAME[ob.handler].section
        elif ob.kind == "enterprise-consecution" and ob.handler in BY_TRANSITION:
            section = BY_TRANSITION[ob.handler].section
        else:
            section = "3"
        by_key[("MC-MQDSRP", section)].append(ob)
    return dict(by_key), list(merged.values()), made_by


def load_scenarios() -> tuple[dict[Key, list[Scenario]], list[Scenario]]:
    """Every scenario file, and by section: examples by number, ``eNNN-`` files by their entry, counterexamples
    of an obligation by its handler, literal hunts by the handlers they read literally."""
    from mqspec.proofs.z3_events import EVENTS_BY_NAME

    entries = _errata_by_id()
    every: list[Scenario] = []
    by_key: dict[Key, list[Scenario]] = defaultdict(list)
    for path in sorted((ROOT / "scenarios").rglob("*.yaml")):
        rel = path.relative_to(ROOT).as_posix()
        sc = Scenario(rel, path.read_text(encoding="utf-8"))
        every.append(sc)
        stem = path.stem
        keys: set[Key] = set()
        if m := re.match(r"(4\.\d+)-", stem):
            keys.add(("MC-MQDSRP", m.group(1)))
        elif m := re.match(r"e(\d{3})-", stem):
            e = entries.get(f"E-{m.group(1)}")
            if e is not None:
                keys.add((e.document, e.section))
        elif "-by-" in stem or "-literal-in-" in stem:
            tail = stem.split("-by-", 1)[-1] if "-by-" in stem else stem.split("-literal-in-", 1)[1]
            for handler in tail.split("-"):
                if handler in EVENTS_BY_NAME:
                    keys.add(("MC-MQDSRP", EVENTS_BY_NAME[handler].section))
        for found in ERRATUM_ID.findall(sc.text):
            e = entries.get(found)
            if e is not None and rel.startswith("scenarios/e"):
                keys.add((e.document, e.section))
        for key in keys or {("MC-MQDSRP", "3")}:
            by_key[key].append(sc)
    return dict(by_key), every


# --- the joined view ------------------------------------------------------------------------------------


@attrs.frozen
class Evidence:
    sections: dict[str, list[Section]]
    clauses: dict[Key, dict[str, Any]]  # (document, section) -> {"title", "code"}
    tests: dict[Key, list[Test]]
    errata: list[Any]
    vectors: dict[Key, list[Vector]]
    obligations: dict[Key, list[Obligation]]
    all_obligations: list[Obligation]
    results_made_by: str
    scenarios: dict[Key, list[Scenario]]
    all_scenarios: list[Scenario]

    @functools.cached_property
    def by_key(self) -> dict[Key, Section]:
        return {s.key: s for secs in self.sections.values() for s in secs}

    @functools.cached_property
    def errata_by_key(self) -> dict[Key, list[Any]]:
        out: dict[Key, list[Any]] = defaultdict(list)
        for e in self.errata:
            out[(e.document, e.section)].append(e)
        return dict(out)

    def children(self, s: Section) -> list[Section]:
        return [c for c in self.sections[s.document] if c.parent == s.section]

    def counts(self, key: Key) -> dict[str, int]:
        return {"errata": len(self.errata_by_key.get(key, [])), "tests": len(self.tests.get(key, [])),
                "vectors": len(self.vectors.get(key, [])), "obligations": len(self.obligations.get(key, [])),
                "scenarios": len(self.scenarios.get(key, []))}

    @functools.cached_property
    def test_files(self) -> dict[str, list[Test]]:
        """Every test that covers a section, by file (the evidence pages of tests)."""
        out: dict[str, dict[str, Test]] = defaultdict(dict)
        for tests in self.tests.values():
            for t in tests:
                out[t.path][t.id] = t
        return {path: list(by_id.values()) for path, by_id in sorted(out.items())}

    def orphan_clauses(self) -> list[Key]:
        """Registered clauses that have no section page (a build warning)."""
        return sorted(k for k in self.clauses if k not in self.by_key)


def gather() -> Evidence:
    from mqspec.clauses import load_all, test_references
    from mqspec.errata import load

    clauses = {(c.document, c.section): {"title": c.title, "code": c.code} for c in load_all()}
    tests = {k: [make_test(t) for t in v] for k, v in test_references(ROOT / "tests").items()}
    obligations, all_obligations, made_by = load_obligations()
    scenarios, all_scenarios = load_scenarios()
    return Evidence(load_sections(), clauses, tests, load(), load_vectors(), obligations, all_obligations, made_by,
                    scenarios, all_scenarios)
