"""``mqspec pipeline pack-env``: this mqspec and what its executors import, as a venv archive for ``--archives``.

Spark ships a Python environment to executors as an archive (its documented way for virtual
environments): ``--archives mqspec-env.tar.gz#env --conf spark.pyspark.python=./env/bin/python``
unpacks it in every executor's working folder and runs its interpreter. This module makes that
archive without the network: a fresh venv on this Python's base interpreter, filled with copies of

- mqspec's own files as this process imports them (an editable checkout or an installed wheel
  alike), laid out as a wheel installs them, so the executors run exactly the driver's code (the
  pre-flight check compares the two digests);
- the installed distributions an executor's work needs, with their dependencies: mqspec's base
  requirements, hypothesis, pyarrow and zstandard. pyspark is left out (Spark puts its own
  ``pyspark.zip`` on the executors' path), and so is what only the driver uses (matplotlib for
  the report, the docs and test tools, z3 for ``mqspec prove``).

The venv's ``bin/python`` links to the base interpreter (here: ``sys._base_executable``), so the
machines that unpack it need that Python at the same path, as with venv-pack. ``.tar.gz`` keeps the
links and the executable bits (a plain ``.tar`` through Spark loses the latter).
"""

from __future__ import annotations

import importlib.metadata as metadata
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .probe import ROOTS, SUFFIXES

#: the distributions an executor imports (their own requirements follow)
EXECUTOR_DISTRIBUTIONS = ("attrs", "cattrs", "click", "rich", "pyyaml", "dpkt", "hypothesis", "pyarrow", "numpy",
                          "zstandard")
#: never packed: Spark provides pyspark and py4j on the executors' path
LEFT_OUT = frozenset({"pyspark", "py4j", "pip", "setuptools", "wheel", "mqspec"})


class PackError(RuntimeError):
    """The environment cannot be packed (a distribution missing here, an unwritable output)."""


def _key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def distributions(roots: Iterable[str] = EXECUTOR_DISTRIBUTIONS) -> list[Any]:
    """The installed distributions ``roots`` need, their requirements followed (extras and LEFT_OUT aside)."""
    found: dict[str, Any] = {}
    todo = [_key(r) for r in roots]
    while todo:
        name = todo.pop()
        if name in found or name in LEFT_OUT:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            if name in map(_key, roots):
                raise PackError(f"{name} is not installed here: install mqspec[proofs,pipeline] first") from None
            continue  # a requirement under a marker this Python does not meet
        found[name] = dist
        for requirement in dist.requires or ():
            if "extra ==" in requirement.replace('"', "").replace("'", ""):
                continue
            todo.append(_key(re.split(r"[\s;<>=!~\[(]", requirement, maxsplit=1)[0]))
    return [found[k] for k in sorted(found)]


def _site_packages(venv: Path) -> Path:
    return venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"


def _copy_distribution(dist: Any, site: Path) -> int:
    copied = 0
    for file in dist.files or ():
        if file.parts and file.parts[0] == "..":
            continue  # scripts and data outside site-packages: not imported by the executors
        source = Path(dist.locate_file(file))
        if "__pycache__" in file.parts or not source.is_file():
            continue
        target = site / file
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
        copied += 1
    return copied


def _copy_mqspec(site: Path) -> int:
    """mqspec's files as this process imports them, laid out as its wheel installs them."""
    copied = 0
    for name in ROOTS:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            raise PackError(f"{name} cannot be imported here")
        base = Path(list(spec.submodule_search_locations)[0])
        target = site.joinpath(*name.split("."))
        skip = {r.split(".")[1] for r in ROOTS[1:]} if name == "mqspec" else set()
        for folder, dirs, files in os.walk(base):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith(".")
                             and not (Path(folder) == base and d in skip))
            for file in files:
                if file.endswith(SUFFIXES):
                    source = Path(folder) / file
                    dest = target / source.relative_to(base)
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(source, dest)
                    copied += 1
    return copied


def pack(out: Path, *, level: int = 1) -> dict[str, Any]:
    """Write the archive (see the module docstring); returns what it holds."""
    started = time.monotonic()
    if not out.name.endswith(".tar.gz"):
        raise PackError(f"{out}: the archive's name must end in .tar.gz (Spark unpacks it by its extension)")
    dists = distributions()
    try:  # before minutes of copying: an output that cannot be written is said at once
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PackError(f"{out}: the archive cannot be written there ({exc.strerror})") from None
    with tempfile.TemporaryDirectory(prefix="mqspec-env-") as tmp:
        venv = Path(tmp) / "env"
        base = getattr(sys, "_base_executable", sys.executable)
        subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True)
        site = _site_packages(venv)
        files = sum(_copy_distribution(d, site) for d in dists) + _copy_mqspec(site)
        partial = out.with_name(out.name + ".part")
        try:
            with tarfile.open(partial, "w:gz", compresslevel=level) as archive:
                for entry in sorted(venv.iterdir()):
                    archive.add(entry, arcname=entry.name)  # links stay links, modes stay
            partial.replace(out)
        except OSError as exc:
            partial.unlink(missing_ok=True)
            raise PackError(f"{out}: the archive cannot be written there ({exc.strerror})") from None
    return {"archive": str(out), "bytes": out.stat().st_size, "files": files,
            "python": f"{sys.version_info.major}.{sys.version_info.minor}", "base_python": str(Path(base).resolve()),
            "distributions": {d.metadata["Name"]: d.version for d in dists}, "seconds": round(time.monotonic() - started, 1),
            "use": f"--archives {out}#env --conf spark.pyspark.python=./env/bin/python"}
