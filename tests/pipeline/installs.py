"""mqspec installed elsewhere than this checkout, for the tests: a wheel built from it, unpacked under a
``site-packages`` folder (as pip installs it), and the rows of a few runs computed in a child process."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: prints, as one JSON line, the rows of runs 0-1 of a clarified campaign (traces kept) and run 0 of a
#: literal one (violations shrunk), timing aside, and where mqspec was imported from
ROWS = """
import json, sys
import mqspec
from mqspec.pipeline.runs import TIMING_COLUMNS, Campaign, run_rows
def untimed(row):
    row = {k: v for k, v in row.items() if k not in TIMING_COLUMNS}
    row["violations"] = [{k: v for k, v in x.items() if k not in TIMING_COLUMNS} for x in row["violations"]]
    return row
rows = [*run_rows([0, 1], Campaign(runs=2, seed=1, traces=True)),
        *run_rows([0], Campaign(runs=1, seed=9, mode="literal", shrink_replays=2))]
print(json.dumps({"mqspec": mqspec.__file__, "rows": [untimed(r) for r in rows]}, sort_keys=True))
"""


def build_wheel(folder: Path) -> Path:
    """A wheel of this checkout's files (pip, as a user builds one), in ``folder``.

    Built from a copy of the files git knows (tracked, or new and not ignored): setuptools keeps a
    ``build/`` folder in the tree it builds, and a stale one would bring back files deleted since.
    """
    source = folder / "source"
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            check=True, capture_output=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(folder),
                    str(source)], check=True, capture_output=True, timeout=600)
    (wheel,) = folder.glob("mqspec-*.whl")
    return wheel


def unpack(wheel: Path, site_packages: Path) -> Path:
    """The wheel's files under ``site_packages`` (what pip puts there for a pure-Python wheel)."""
    site_packages.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site_packages)
    return site_packages


def rows(cwd: Path, *, hash_seed: str, python_path: Path | None = None) -> str:
    """The ROWS line computed by this interpreter in ``cwd``, with that hash seed and import path."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHASHSEED")}
    env["PYTHONHASHSEED"] = hash_seed
    if python_path is not None:
        env["PYTHONPATH"] = str(python_path)
    done = subprocess.run([sys.executable, "-c", ROWS], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def without_location(line: str) -> str:
    data = json.loads(line)
    data.pop("mqspec")
    return json.dumps(data, sort_keys=True)
