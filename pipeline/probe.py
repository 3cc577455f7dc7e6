"""What an executor runs: the pre-flight probe, sent to the executors by value (the standard library only here).

Spark pickles a function by reference when its module is importable on the driver, and an executor
that cannot import mqspec then fails to unpickle it, in a long Python traceback. This module is
pickled by value instead (:mod:`mqspec.pipeline.preflight` registers it), so the probe reaches such
an executor and reports what it found: its Python, where mqspec is (if anywhere), a digest of
mqspec's code, the versions of the libraries whose differences would change the rows, and what it
failed to import. The same digest computed on the driver tells whether both run the same mqspec.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
import socket
import sys
import uuid
from typing import Any

#: the installed packages of mqspec (pyproject's package-dir roots): their files make its digest
ROOTS = ("mqspec", "mqspec.model", "mqspec.refimpl", "mqspec.proofs", "mqspec.pipeline", "mqspec.scenarios")
#: what the digest covers: code and the package data code reads
SUFFIXES = (".py", ".yaml", ".json", ".properties", ".md")
#: the modules an executor's work imports (a failure names what to ship)
NEEDED = ("mqspec.pipeline.runs", "mqspec.pipeline.checks", "mqspec.proofs.explore.run", "mqspec.oracle.check",
          "pyarrow", "hypothesis", "zstandard")
#: libraries whose version changes the rows (hypothesis's draws differ between versions)
PINNED = ("hypothesis",)
PREFLIGHT = "_preflight"


def code_digest() -> tuple[str | None, str | None]:
    """(where mqspec is, SHA-256 of its code and data), or (None, None) when it cannot be found."""
    try:
        spec = importlib.util.find_spec("mqspec")
    except (ImportError, ValueError):
        return None, None
    if spec is None or not spec.submodule_search_locations:
        return None, None
    digest = hashlib.sha256()
    top = list(spec.submodule_search_locations)[0]
    for name in ROOTS:
        try:
            sub = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            sub = None
        if sub is None or not sub.submodule_search_locations:
            digest.update(f"{name}: missing\0".encode())
            continue
        base = list(sub.submodule_search_locations)[0]
        # the other roots sit inside mqspec/ in an installed wheel and beside it in a checkout
        skip = {r.split(".")[1] for r in ROOTS[1:]} if name == "mqspec" else set()
        for folder, dirs, files in os.walk(base):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith(".")
                             and not (folder == base and d in skip))
            for file in sorted(files):
                if file.endswith(SUFFIXES):
                    path = os.path.join(folder, file)
                    digest.update(f"{name}/{os.path.relpath(path, base)}\0".encode())
                    with open(path, "rb") as f:
                        digest.update(f.read())
    return top, digest.hexdigest()


def describe(out: str | None = None) -> dict[str, Any]:
    """This process's Python, mqspec and libraries; with ``out`` (a URI), a probe file written under it."""
    where, digest = code_digest()
    missing = {}
    for module in NEEDED:
        try:
            importlib.import_module(module)
        except Exception as exc:  # noqa: BLE001 - whatever stops an import is what the user must fix
            missing[module] = f"{type(exc).__name__}: {exc}"
    versions = {}
    for name in PINNED:
        try:
            versions[name] = importlib.import_module(name).__version__
        except Exception:  # noqa: BLE001 - reported as missing above
            versions[name] = None
    found: dict[str, Any] = {
        "python": sys.executable, "version": ".".join(map(str, sys.version_info[:3])), "cwd": os.getcwd(),
        "host": socket.gethostname(), "mqspec": where, "digest": digest, "missing": missing, "versions": versions,
    }
    if out is not None and not missing:
        found["wrote"], found["write_error"] = _write_probe(out)
    return found


def _write_probe(out: str) -> tuple[str | None, str | None]:
    """A small file under ``OUT/_preflight`` (the driver then looks for it: is --out shared?)."""
    from mqspec.pipeline.store import Location

    name = f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}.json"
    try:
        Location(out).child(PREFLIGHT, name).write_text(json.dumps({"host": socket.gethostname()}) + "\n")
    except Exception as exc:  # noqa: BLE001 - an executor that cannot write --out is the finding
        return None, f"{type(exc).__name__}: {' '.join(str(exc).split())}"
    return name, None


def probe(_: object, out: str | None = None) -> str:
    """The UDF: :func:`describe` as JSON (the argument is the task's row, unused)."""
    try:
        return json.dumps(describe(out), sort_keys=True)
    except Exception as exc:  # noqa: BLE001 - a probe never fails the job: it reports
        return json.dumps({"python": sys.executable, "error": f"{type(exc).__name__}: {exc}"})
