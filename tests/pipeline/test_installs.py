"""The same seed gives byte-identical runs wherever and however mqspec is installed (issue 23 row 3)."""

from __future__ import annotations

import json

from .installs import ROOT, rows, unpack, without_location


def test_a_seed_gives_the_same_rows_from_the_checkout_and_from_a_wheel(wheel, tmp_path):
    """Runs of one seed (traces and shrunk violations included) are the same bytes from the editable
    checkout and from the wheel unpacked under a site-packages folder, under two hash seeds: hypothesis
    no longer mixes in constants of the modules it calls local (files outside site-packages)."""
    site = unpack(wheel, tmp_path / "lib" / "python3" / "site-packages")
    (tmp_path / "cwd").mkdir()
    editable = rows(tmp_path / "cwd", hash_seed="1")
    installed = rows(tmp_path / "cwd", hash_seed="2", python_path=site)
    assert json.loads(editable)["mqspec"].startswith(str(ROOT))
    assert json.loads(installed)["mqspec"].startswith(str(site))
    assert without_location(editable) == without_location(installed)
    data = json.loads(editable)["rows"]
    assert data[0]["trace"] and data[2]["violations"]  # the comparison covers a trace and a shrunk violation
