"""Writing a vectors tree: one directory per case, a manifest each, an index, a version, a README.

Layout (``DIR`` is the ``--out`` directory)::

    DIR/VERSION                      "format 1" and the mqspec version, one per line
    DIR/README.md                    for implementers: the layout and a loading loop to copy
    DIR/index.json                   every case: path, kind, document, section
    DIR/*.schema.json                the JSON Schemas of every JSON file of the tree (mqspec.vectors.schemas):
                                     manifest, handler files, decoded messages, errors, traces, scenarios,
                                     their results, the index, propids.json and vocabulary.json
    DIR/propids.json                 every PROPID with its VARTYPE: how its flat PROPVALUE is encoded
    DIR/vocabulary.json              every key, effect, timer and value of the handler files, and what it rests on
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
import time
from collections.abc import Callable, Iterable, Iterator
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

import attrs

from mqspec import __version__, json64
from mqspec.errata import marks
from mqspec.wording import plural

from .manifest import FORMAT_VERSION, KINDS

#: the schema files every tree holds (mqspec.vectors.schemas.schema_files)
SCHEMA_NAMES = ("manifest.schema.json", "handler.schema.json", "message.schema.json", "error.schema.json",
                "trace.schema.json", "scenario.schema.json", "scenario-result.schema.json", "index.schema.json",
                "propids.schema.json", "vocabulary.schema.json")
TOP_FILES = ("VERSION", "README.md", "index.json", *SCHEMA_NAMES, "propids.json", "vocabulary.json")


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
    """The one JSON encoding of the tree: sorted keys, indent 2, ASCII only, a final newline, 64-bit
    values as decimal strings (:mod:`mqspec.json64`).

    ``sort_keys=False`` keeps the order the object has (``scenario.json``: the scenario file's order).
    """
    return (json64.dumps(obj, sort_keys=sort_keys, indent=2, ensure_ascii=True) + "\n").encode("ascii")


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
            if v.rests_on:
                fields["rests_on"] = marks(v.rests_on)
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
        fields: dict[str, Any] = {"handler": s.handler, "situation": s.name, "mode": v.mode}
        if v.rests_on:
            fields["rests_on"] = marks(v.rests_on)
        if v.differs_by:
            fields["differs_by"] = marks(v.differs_by)
        yield Case(f"handler/{where}/{s.handler}/{name}", "handler", name, v.document, v.section, s.description, files,
                   fields)


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


def all_cases(kinds: Iterable[str] = KINDS, *, reduced: bool = False, scenarios: Path | None = None,
              progress: Callable[[str], None] | None = None) -> list[Case]:
    """Every case of the chosen kinds, in path order (``progress``: a line every few seconds, and per kind)."""
    kinds = tuple(kinds)
    unknown = set(kinds) - set(KINDS)
    if unknown:
        raise ValueError(f"unknown vector kinds {sorted(unknown)} (known: {', '.join(KINDS)})")
    cases: list[Case] = []
    if "codec" in kinds:
        cases += _reported("codec", codec_cases(reduced=reduced), progress)
    if "handler" in kinds:
        cases += _reported("handler", handler_cases(), progress)
    if "scenario" in kinds:
        cases += _reported("scenario", scenario_cases(reduced=reduced, folder=scenarios), progress)
    paths = [c.path for c in cases]
    if len(paths) != len(set(paths)):
        raise ValueError("two vector cases share a path")
    return sorted(cases, key=lambda c: c.path)


def _reported(kind: str, cases: Iterable[Case], progress: Callable[[str], None] | None,
              every: float = 5.0) -> list[Case]:
    """The cases, with a progress line every ``every`` seconds (the case just built) and one at the end."""
    if progress is None:
        return list(cases)
    out: list[Case] = []
    start = last = time.monotonic()
    for case in cases:
        out.append(case)
        if time.monotonic() - last >= every:
            last = time.monotonic()
            progress(f"{kind}: {plural(len(out), 'case')} so far ({case.path})")
    progress(f"{kind}: {plural(len(out), 'case')} in {time.monotonic() - start:.1f} s")
    return out


# --- the tree ---------------------------------------------------------------------------------------


class OutputError(Exception):
    """The output directory cannot take a vectors tree (it holds something else)."""


def is_vectors_tree(out: Path) -> bool:
    version = out / "VERSION"
    return version.is_file() and version.read_text(encoding="utf-8", errors="replace").startswith("format ")


#: the files write_tree writes at the top of a tree (and that an earlier generation may be replaced in)
GENERATED_TOP_FILES = TOP_FILES


def generated_files(out: Path) -> set[Path]:
    """The files an earlier generation wrote in the tree at ``out``: its top files, and each indexed case's
    ``manifest.json`` and the files that manifest lists. OutputError when the index or a manifest cannot
    be read (then which files mqspec wrote cannot be told)."""
    root = out.resolve()
    found = {root / name for name in GENERATED_TOP_FILES}
    try:
        index = json.loads((root / "index.json").read_text(encoding="utf-8"))
        for entry in index["cases"]:
            folder = root / entry["case"]
            manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
            found |= {folder / "manifest.json", *(folder / name for name in manifest["files"])}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise OutputError(f"{out} holds a vectors tree whose index or manifests cannot be read ({exc}): cannot "
                          "tell which files mqspec wrote; remove it yourself or choose another --out") from None
    # a manifest naming a file outside its tree is not trusted to remove it
    return {f for f in found if f.resolve().is_relative_to(root) and (f.is_file() or f.is_symlink())}


def check_output(out: Path) -> None:
    """OutputError unless ``out`` is new, an empty directory, or an earlier tree whose index can be read."""
    if out.exists() and not out.is_dir():
        raise OutputError(f"{out} is not a directory")
    if out.is_dir() and any(out.iterdir()):
        if not is_vectors_tree(out):
            raise OutputError(f"{out} is not empty and holds no vectors tree (no VERSION): refusing to overwrite it")
        generated_files(out)


def prepare(out: Path, new_files: Iterable[str] = ()) -> list[Path]:
    """Make ``out`` ready for a tree: new, empty, or an earlier vectors tree, whose generated files are removed.

    A command never deletes a file it did not write: files in an earlier tree that its index and
    manifests do not list stay where they are, and their paths (relative to ``out``) are returned.
    OutputError when ``out`` holds something but no vectors tree, or when one of the ``new_files``
    (paths relative to ``out``) would overwrite a file mqspec did not write.
    """
    check_output(out)
    kept: list[Path] = []
    if out.is_dir() and any(out.iterdir()):
        root = out.resolve()
        generated = generated_files(out)
        kept = sorted(p.relative_to(root) for p in root.rglob("*")
                      if (p.is_file() or p.is_symlink()) and p not in generated)
        clash = sorted(set(kept) & {Path(name) for name in new_files})
        if clash:
            raise OutputError(f"{out / clash[0]} was not written by mqspec and a new vector would overwrite it: "
                              "move it, or choose another --out")
        for path in generated:
            path.unlink()
        _remove_emptied(root, {p.parent for p in generated})
    out.mkdir(parents=True, exist_ok=True)
    return kept


def _remove_emptied(root: Path, folders: set[Path]) -> None:
    """Remove each of ``folders`` (and its parents below ``root``) that removing the generated files emptied."""
    for folder in sorted(folders, key=lambda f: len(f.parts), reverse=True):
        while folder != root and folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
            folder = folder.parent


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
    from .schemas import schema_files, vocabulary

    for name, schema in schema_files().items():
        (out / name).write_bytes(dump_json(schema))
    (out / "propids.json").write_bytes(dump_json(propids_json()))
    (out / "vocabulary.json").write_bytes(dump_json(vocabulary()))
    for case in cases:
        folder = out / case.path
        folder.mkdir(parents=True, exist_ok=True)  # a user's file kept in an earlier case folder
        (folder / "manifest.json").write_bytes(dump_json(case.manifest()))
        for name, data in sorted(case.files.items()):
            (folder / name).write_bytes(data)
    return index


def generate(out: str | Path, kinds: Iterable[str] = KINDS, *, reduced: bool = False,
             scenarios: Path | None = None, progress: Callable[[str], None] | None = None,
             kept: list[Path] | None = None) -> dict[str, Any]:
    """Build every case of ``kinds`` and write the tree to ``out``; returns the index.

    ``progress`` receives a line now and then while the cases are built and written; ``kept``
    receives the files of an earlier tree at ``out`` that mqspec did not write (left in place).
    """
    out = Path(out)
    check_output(out)  # before the minute the full set takes to build
    cases = all_cases(kinds, reduced=reduced, scenarios=scenarios, progress=progress)
    new_files = [*GENERATED_TOP_FILES, *(f"{c.path}/{name}" for c in cases for name in ("manifest.json", *c.files))]
    left = prepare(out, new_files)
    if kept is not None:
        kept.extend(left)
    if progress:
        size = sum(len(data) for c in cases for data in c.files.values())
        progress(f"writing {plural(len(cases), 'case')} ({size / 1e6:,.0f} MB) to {out}")
    return write_tree(out, cases)
