"""How the docs are built and read: doctrees outside the published site, the browser set up by `make test`."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _recipe(target: str) -> list[str]:
    """The lines of a Makefile target's recipe."""
    lines = (ROOT / "Makefile").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(rf"^{target}:", line)) + 1
    recipe = []
    for line in lines[start:]:
        if not line.startswith("\t"):
            break
        recipe.append(line.strip())
    return recipe


def test_the_published_site_holds_no_doctrees(site):
    """Sphinx's pickled environment (tens of MB) is written beside the site (-d), not inside html/."""
    assert not (site / ".doctrees").exists()
    assert not list(site.rglob("*.doctree"))


def test_make_test_and_make_docs_keep_doctrees_out_of_html_and_make_test_sets_up_the_browser():
    """Both recipes pass -d outside docs/_build/html; make test runs tools/browser.sh before Sphinx."""
    for target in ("test", "docs"):
        build = next(line for line in _recipe(target) if "sphinx-build" in line)
        assert "-d $(DOCTREES)" in build, target
    assert re.search(r"^DOCTREES := docs/_build/doctrees$", (ROOT / "Makefile").read_text(), re.M)
    test = _recipe("test")
    assert test.index("@sh tools/browser.sh") < next(i for i, line in enumerate(test) if "sphinx-build" in line)
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line and not line.startswith("#")]
    assert ci[-1] == "make test" and not any("apt-get" in line for line in ci)


def test_without_the_browser_and_without_root_the_set_up_says_how_and_lets_the_tests_run(tmp_path):
    """tools/browser.sh, not root and with no chromium on PATH, prints how to install it and exits 0."""
    (tmp_path / "id").write_text("#!/bin/sh\necho 1000\n")
    (tmp_path / "id").chmod(0o755)
    run = subprocess.run(["/bin/sh", str(ROOT / "tools" / "browser.sh")], capture_output=True, text=True,
                         env={"PATH": str(tmp_path)})
    assert run.returncode == 0 and run.stdout == ""
    assert "browser tests (tests/docs) will skip" in run.stderr and "apt-get install chromium chromium-driver" in run.stderr
