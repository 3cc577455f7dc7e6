"""Writing a vectors tree: one directory per case, a manifest each, an index, a version, a README.

Layout (``DIR`` is the ``--out`` directory)::

    DIR/VERSION                      "format 1" and the mqspec version, one per line
    DIR/README.md                    for implementers: the layout and a loading loop to copy
    DIR/index.json                   every case: path, kind, document, section
    DIR/manifest.schema.json         the JSON Schema of manifest.json
    DIR/handler.schema.json          the JSON Schema of a handler case's pre/post/event/effects files
    DIR/propids.json                 every PROPID with its VARTYPE: how its flat PROPVALUE is encoded
    DIR/codec/<protocol>/<valid|invalid>/<name>/     manifest.json input.bin expected.json|error.json
    DIR/handler/<section>/<handler>/<situation>-<mode|both>/   manifest.json pre.json event.json post.json effects.json
    DIR/scenario/<source>/<name>/    manifest.json scenario.json trace.ndjson expected.json

The bytes are the same on every run: JSON is written with sorted keys, two-space indentation and
ASCII escapes, cases in path order, nothing depends on the clock or on hash order. The one
exception to sorted keys is ``scenario.json``: it keeps the key order of the scenario file, since
the order of a ``properties`` mapping is the order the properties reach the directory (and the
trace).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable, Iterator
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

import attrs

from mqspec import __version__

from .handler_schema import HANDLER_SCHEMA
from .manifest import FORMAT_VERSION, KINDS, MANIFEST_SCHEMA

TOP_FILES = ("VERSION", "README.md", "index.json", "manifest.schema.json", "handler.schema.json", "propids.json")


@attrs.frozen
class Case:
    """One case directory: its path under the tree, its manifest fields and its files' bytes."""

    path: str
    kind: str
    name: str
    document: str
    section: str
    description: str
    files: dict[str, bytes]
    fields: dict[str, Any] = attrs.field(factory=dict)

    def manifest(self) -> dict[str, Any]:
        return {
            "format": FORMAT_VERSION, "mqspec": __version__, "kind": self.kind, "case": self.path,
            "name": self.name, "document": self.document, "section": self.section,
            "description": self.description, "files": sorted(self.files), **self.fields,
        }


def dump_json(obj: Any, *, sort_keys: bool = True) -> bytes:
    """The one JSON encoding of the tree: sorted keys, indent 2, ASCII only, a final newline.

    ``sort_keys=False`` keeps the order the object has (``scenario.json``: the scenario file's order).
    """
    return (json.dumps(obj, sort_keys=sort_keys, indent=2, ensure_ascii=True) + "\n").encode("ascii")


def propids_json() -> dict[str, Any]:
    """``propids.json``: the PROPID table ([MS-MQMQ] 2.3) a decoder needs to size each flat value."""
    from mqspec.model.propids import PROPIDS

    return {"source": "[MS-MQMQ] 2.3", "encoding": "[MS-MQCN] 2.2.3 (flat PROPVALUE, no VARTYPE on the wire)",
            "propids": [{"name": p.name, "propid": p.propid, "vartype": p.vartype.name.replace("_VECTOR", "|VT_VECTOR"),
                         "vt": p.vartype.value, "section": p.section}
                        for p in sorted(PROPIDS.values(), key=lambda p: p.propid)]}


def version_text() -> str:
    return f"format {FORMAT_VERSION}\nmqspec {__version__}\n"


def readme_text(counts: dict[str, int]) -> str:
    """README.md for the tree, from README.template.md (``$format``, ``$mqspec``, ``$counts``)."""
    template = (resources.files("mqspec.vectors") / "README.template.md").read_text(encoding="utf-8")
    listing = ", ".join(f"{counts.get(k, 0)} {k}" for k in KINDS)
    return Template(template).substitute(format=FORMAT_VERSION, mqspec=__version__, counts=listing)


# --- cases of each kind ---------------------------------------------------------------------------


def codec_cases(*, reduced: bool = False) -> Iterator[Case]:
    from .codec import codec_vectors

    for v in codec_vectors(reduced=reduced):
        outcome = "valid" if v.valid else "invalid"
        files = {"input.bin": v.data}
        fields: dict[str, Any] = {"protocol": v.protocol, "entry": v.entry, "lenient": v.lenient, "outcome": outcome}
        if v.valid:
            files["expected.json"] = dump_json(v.expected)
            fields["canonical"] = v.canonical
        else:
            files["error.json"] = dump_json(v.error)
            if v.policy:
                fields["policy"] = v.policy
        yield Case(f"codec/{v.protocol}/{outcome}/{v.name}", "codec", v.name, v.document, v.section, v.description,
                   files, fields)


def handler_cases() -> Iterator[Case]:
    from .handlers import DOC, handler_vectors

    for v in handler_vectors():
        s = v.situation
        name = f"{s.name}-{v.mode}"
        # MC-MQDSRP at handler/<section>/..., another document under its lowercase name
        where = v.section if v.document == DOC else f"{v.document.lower()}/{v.section}"
        files = {"pre.json": dump_json(v.pre), "event.json": dump_json(v.event), "post.json": dump_json(v.post),
                 "effects.json": dump_json(v.effects)}
        yield Case(f"handler/{where}/{s.handler}/{name}", "handler", name, v.document, v.section, s.description, files,
                   {"handler": s.handler, "situation": s.name, "mode": v.mode})


def scenario_case(v: Any) -> Case:
    """The case of one :class:`~mqspec.vectors.scenarios.ScenarioVector`."""
    from .scenarios import TRACE_FORMAT

    # the scenario file's key order: a properties mapping is applied in its order
    files = {"scenario.json": dump_json(v.scenario, sort_keys=False), "trace.ndjson": v.trace,
             "expected.json": dump_json(v.result)}
    return Case(f"scenario/{v.source}/{v.name}", "scenario", v.name, v.document, v.section, v.description, files,
                {"source": v.source, "scenario": v.scenario_name, "mode": v.mode.value, "seed": v.seed,
                 "trace_format": TRACE_FORMAT})


def scenario_cases(*, reduced: bool = False, folder: Path | None = None) -> Iterator[Case]:
    from .scenarios import SCENARIO_DIR, scenario_vectors

    for v in scenario_vectors(reduced=reduced, folder=folder or SCENARIO_DIR):
        yield scenario_case(v)


def all_cases(kinds: Iterable[str] = KINDS, *, reduced: bool = False, scenarios: Path | None = None) -> list[Case]:
    """Every case of the chosen kinds, in path order."""
    kinds = tuple(kinds)
    unknown = set(kinds) - set(KINDS)
    if unknown:
        raise ValueError(f"unknown vector kinds {sorted(unknown)} (known: {', '.join(KINDS)})")
    cases: list[Case] = []
    if "codec" in kinds:
        cases += codec_cases(reduced=reduced)
    if "handler" in kinds:
        cases += handler_cases()
    if "scenario" in kinds:
        cases += scenario_cases(reduced=reduced, folder=scenarios)
    paths = [c.path for c in cases]
    if len(paths) != len(set(paths)):
        raise ValueError("two vector cases share a path")
    return sorted(cases, key=lambda c: c.path)


# --- the tree ---------------------------------------------------------------------------------------


class OutputError(Exception):
    """The output directory cannot take a vectors tree (it holds something else)."""


def is_vectors_tree(out: Path) -> bool:
    version = out / "VERSION"
    return version.is_file() and version.read_text(encoding="utf-8", errors="replace").startswith("format ")


def prepare(out: Path) -> None:
    """Make ``out`` an empty directory: new, empty, or a previous vectors tree (which is removed)."""
    if out.exists() and not out.is_dir():
        raise OutputError(f"{out} is not a directory")
    if out.is_dir() and any(out.iterdir()):
        if not is_vectors_tree(out):
            raise OutputError(f"{out} is not empty and holds no vectors tree (no VERSION): refusing to overwrite it")
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)


def index_json(cases: list[Case]) -> dict[str, Any]:
    counts = {k: sum(1 for c in cases if c.kind == k) for k in KINDS}
    return {
        "format": FORMAT_VERSION, "mqspec": __version__, "counts": counts,
        "cases": [{"case": c.path, "kind": c.kind, "document": c.document, "section": c.section} for c in cases],
    }


def write_tree(out: Path, cases: list[Case]) -> dict[str, Any]:
    """Write ``cases`` and the top-level files into the prepared directory ``out``; returns the index."""
    index = index_json(cases)
    (out / "VERSION").write_text(version_text(), encoding="ascii")
    (out / "README.md").write_text(readme_text(index["counts"]), encoding="utf-8")
    (out / "index.json").write_bytes(dump_json(index))
    (out / "manifest.schema.json").write_bytes(dump_json(MANIFEST_SCHEMA))
    (out / "handler.schema.json").write_bytes(dump_json(HANDLER_SCHEMA))
    (out / "propids.json").write_bytes(dump_json(propids_json()))
    for case in cases:
        folder = out / case.path
        folder.mkdir(parents=True)
        (folder / "manifest.json").write_bytes(dump_json(case.manifest()))
        for name, data in sorted(case.files.items()):
            (folder / name).write_bytes(data)
    return index


def generate(out: str | Path, kinds: Iterable[str] = KINDS, *, reduced: bool = False,
             scenarios: Path | None = None) -> dict[str, Any]:
    """Build every case of ``kinds`` and write the tree to ``out``; returns the index."""
    out = Path(out)
    cases = all_cases(kinds, reduced=reduced, scenarios=scenarios)
    prepare(out)
    return write_tree(out, cases)
