"""An installed mqspec is whole and installs quietly (issue 15 rows 17, 22, 23)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from mqspec import clauses

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]


def _package_folders() -> dict[str, Path]:
    """Every folder setuptools would see as a package (a .py file or data in it) -> its dotted name."""
    found = {}
    for name, folder in SETUPTOOLS["package-dir"].items():
        base = ROOT / folder
        for path in [base, *sorted(p for p in base.rglob("*") if p.is_dir())]:
            if "__pycache__" in path.parts or path.name.startswith("."):
                continue
            if any(f.is_file() for f in path.iterdir()):
                found[".".join([name, *path.relative_to(base).parts])] = path
    return found


def test_every_folder_with_code_or_data_is_a_listed_package():
    """Each folder of code or data under the package-dir roots is in `packages`, so nothing is left out
    of an installed mqspec and setuptools has nothing to warn about."""
    missing = sorted(set(_package_folders()) - set(SETUPTOOLS["packages"]))
    assert missing == []


def test_every_data_file_is_package_data():
    """Each non-Python file under the package roots matches a package-data pattern of its package."""
    data = SETUPTOOLS["package-data"]
    left_out = []
    for name, folder in _package_folders().items():
        for f in folder.iterdir():
            if f.is_file() and f.suffix not in (".py", ".pyc") and not any(
                    f.match(pattern) for pattern in data.get(name, [])):
                left_out.append(str(f.relative_to(ROOT)))
    assert left_out == []


def test_the_default_dev_set_up_leaves_out_the_fuzz_extra():
    """`.[dev]`, which make installs, does not pull atheris (the fuzz extra): no default test needs it."""
    extras = PYPROJECT["project"]["optional-dependencies"]
    dev = extras["dev"]
    assert all("fuzz" not in item and "atheris" not in item for item in dev)
    assert extras["fuzz"] == ["atheris>=2.3"]


def test_the_atheris_run_skips_saying_how_to_install_it(monkeypatch, tmp_path):
    """Without atheris, the slow libFuzzer test skips and its reason names the fuzz extra."""
    from tests.fuzz.test_atheris_smoke import test_atheris_runs_20000_inputs_without_a_crash

    monkeypatch.setitem(sys.modules, "atheris", None)  # as if it were not installed
    with pytest.raises(pytest.skip.Exception, match=r"the fuzz extra\) is not installed: .*\[fuzz\]"):
        test_atheris_runs_20000_inputs_without_a_crash(tmp_path)


def test_clauses_say_test_counts_need_a_source_checkout(monkeypatch, tmp_path):
    """Installed (no tests/ beside the package), `clauses` prints no "(0 tests)" but one note saying why."""
    from click.testing import CliRunner

    from mqspec.cli import main

    clauses.load_all()  # registered first, under the real root: a module imported under tmp_path would keep it
    monkeypatch.setattr(clauses, "_ROOT", tmp_path)
    result = CliRunner().invoke(main, ["clauses"])
    assert result.exit_code == 0
    assert "tests)" not in result.stdout and len(result.stdout.splitlines()) > 50
    assert result.stderr.splitlines() == ["mqspec: note: test counts need a source checkout "
                                          "(an installed mqspec has no tests/)"]
    assert all(row["tests"] is None for row in clauses.report())


def test_vectors_find_the_scenario_files_through_the_package():
    """The scenario vectors read mqspec.scenarios, which is scenarios/ here and package data when installed."""
    from mqspec.vectors.scenarios import SCENARIO_DIR

    assert SCENARIO_DIR.resolve() == (ROOT / "scenarios").resolve()


@pytest.mark.slow
def test_a_built_wheel_holds_the_data_and_builds_without_warnings(tmp_path):
    """`pip wheel .` builds with no setuptools warning, and the wheel holds the register, the schema and
    every scenario file."""
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(tmp_path), str(ROOT)],
                         capture_output=True, text=True, timeout=600, check=False)
    assert out.returncode == 0, out.stderr
    assert "BuildBackendWarning" not in out.stderr and "absent from the `packages`" not in out.stderr
    names = zipfile.ZipFile(next(tmp_path.glob("mqspec-*.whl"))).namelist()
    scenarios = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "scenarios").rglob("*.yaml"))
    assert all(f"mqspec/{s}" in names for s in scenarios) and len(scenarios) > 40
    assert any(n.startswith("mqspec/register/") and n.endswith(".yaml") for n in names)
    assert "mqspec/schema/trace.schema.json" in names
