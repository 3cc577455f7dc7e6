"""`mqspec vectors` as a user meets it: an earlier tree with the user's own files in it, scenario
files that make no vectors, progress while it works (issue 15 rows 6-8)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from mqspec.cli.vectors import vectors
from mqspec.vectors.runner import run_all
from mqspec.vectors.writer import GENERATED_TOP_FILES, OutputError, generate, prepare

ROOT = Path(__file__).resolve().parents[2]
SMALL = """\
enterprise:
  pec: PEC0
  sites:
    site0: {psc: PEC0}
steps:
  - settle: {}
"""


def invoke(*args: str):
    return CliRunner().invoke(vectors, list(args))


def test_regenerating_keeps_the_users_files_and_replaces_the_generated_ones(tmp_path):
    """Over an earlier tree, vectors removes only the files it wrote: the user's files stay, byte for byte."""
    out = tmp_path / "v"
    assert invoke("--out", str(out), "--kinds", "codec", "--reduced").exit_code == 0
    case = next(p.parent for p in sorted((out / "codec").rglob("manifest.json")))
    mine = {out / "NOTES.md": b"my notes", out / "codec" / "mine.bin": b"\x01\x02",
            case / "my-extra.txt": b"kept beside a generated case"}
    for path, data in mine.items():
        path.write_bytes(data)
    result = invoke("--out", str(out), "--kinds", "handler")
    assert result.exit_code == 0, result.output
    assert all(path.read_bytes() == data for path, data in mine.items())
    assert not (case / "manifest.json").exists() and not (case / "input.bin").exists()
    assert {p.name for p in case.iterdir()} == {"my-extra.txt"}
    assert "mqspec: note: left 3 files in" in result.stderr and "NOTES.md" in result.stderr
    assert (out / "handler").is_dir() and json.loads((out / "index.json").read_text())["counts"]["codec"] == 0


def test_a_new_vector_never_overwrites_a_file_mqspec_did_not_write(tmp_path):
    """A file the earlier tree's index does not list, where a new vector would go, is refused before anything is removed."""
    out = tmp_path / "v"
    assert invoke("--out", str(out), "--kinds", "codec", "--reduced").exit_code == 0
    index = json.loads((out / "index.json").read_text())
    first = index["cases"].pop(0)["case"]  # its files are now no file the earlier generation wrote
    (out / "index.json").write_text(json.dumps(index))
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    result = invoke("--out", str(out), "--kinds", "codec", "--reduced")
    assert result.exit_code == 2
    errors = [line for line in result.stderr.splitlines() if not line.startswith("mqspec vectors: ")]
    assert errors == [f"mqspec: error: {out / first}/error.json was not written by mqspec and "
                      "a new vector would overwrite it: move it, or choose another --out"]
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    with pytest.raises(OutputError):
        prepare(out, [f"{first}/input.bin"])


def test_a_tree_whose_index_cannot_be_read_is_left_alone(tmp_path):
    """When the index is unreadable, which files mqspec wrote cannot be told: refuse, remove nothing."""
    out = tmp_path / "v"
    generate(out, ("codec",), reduced=True)
    (out / "index.json").write_text("{not json")
    count = sum(1 for _ in out.rglob("*"))
    result = invoke("--out", str(out), "--kinds", "codec", "--reduced")
    assert result.exit_code == 2 and "cannot tell which files mqspec wrote" in result.stderr
    assert len(result.stderr.splitlines()) == 1 and sum(1 for _ in out.rglob("*")) == count


def test_a_manifest_cannot_make_vectors_delete_outside_its_tree(tmp_path):
    """A manifest listing ../../outside.txt does not get that file removed."""
    out = tmp_path / "v"
    generate(out, ("codec",), reduced=True)
    outside = tmp_path / "outside.txt"
    outside.write_text("not mqspec's")
    manifest = next(out.rglob("manifest.json"))
    data = json.loads(manifest.read_text())
    data["files"].append("../" * (len(manifest.relative_to(out).parts) - 1) + "../outside.txt")
    manifest.write_text(json.dumps(data))
    generate(out, ("codec",), reduced=True)
    assert outside.read_text() == "not mqspec's"


def test_generated_top_files_are_the_ones_written(tmp_path):
    """GENERATED_TOP_FILES (what regeneration may replace at the top of a tree) is exactly what a tree has there."""
    out = tmp_path / "v"
    generate(out, ("codec",), reduced=True)
    assert sorted(p.name for p in out.iterdir() if p.is_file()) == sorted(GENERATED_TOP_FILES)


def test_scenario_files_that_make_no_vectors_are_named(tmp_path):
    """With --scenarios DIR, a file such as my.yaml, which makes no vector, is named on stderr as skipped."""
    folder = tmp_path / "scenarios"
    folder.mkdir()
    (folder / "my.yaml").write_text(SMALL)
    (folder / "e999-mine.yaml").write_text(SMALL)
    result = invoke("--out", str(tmp_path / "v"), "--kinds", "scenario", "--scenarios", str(folder), "--reduced")
    assert result.exit_code == 0, result.output
    notes = [line for line in result.stderr.splitlines() if line.startswith("mqspec: note:")]
    assert notes == [f"mqspec: note: {folder / 'my.yaml'} is skipped: scenario vectors are made of 4.*.yaml "
                     "(examples), e<NNN>-*.yaml and counterexamples/*.yaml (counterexamples)"]


def test_a_bad_scenario_file_is_one_error_line(tmp_path):
    """A scenario file that does not parse stops vectors with one `scenario error` line (exit 2), not a traceback."""
    folder = tmp_path / "scenarios"
    folder.mkdir()
    (folder / "4.1-broken.yaml").write_text(SMALL + "  - advance: 1e12\n")
    result = invoke("--out", str(tmp_path / "v"), "--kinds", "scenario", "--scenarios", str(folder), "--reduced")
    assert result.exit_code == 2 and result.exception is None or isinstance(result.exception, SystemExit)
    assert result.stderr.splitlines()[-1].startswith("mqspec: scenario error: ") and "MAX_SECONDS" in result.stderr


def test_progress_goes_to_stderr_and_stdout_keeps_the_summary(tmp_path):
    """While it works, vectors prints a line per kind (and what it writes) on stderr; stdout has the one summary line."""
    result = invoke("--out", str(tmp_path / "v"), "--kinds", "codec,handler", "--reduced")
    assert result.exit_code == 0
    progress = [line for line in result.stderr.splitlines() if line.startswith("mqspec vectors: ")]
    assert progress[0].startswith("mqspec vectors: codec: ") and " cases in " in progress[0]
    assert progress[1].startswith("mqspec vectors: handler: ")
    assert progress[-1].startswith("mqspec vectors: writing ") and " MB) to " in progress[-1]
    assert result.stdout.splitlines() == [line for line in result.stdout.splitlines() if line.startswith("wrote ")]
    assert run_all(tmp_path / "v", kinds=("codec", "handler")).failures == []


def test_readme_states_the_size_of_the_full_set_and_reduced():
    """README.md says how long the full set takes, how big it is, and what --reduced is for."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "--reduced" in text and " MB" in text and "minute" in text
