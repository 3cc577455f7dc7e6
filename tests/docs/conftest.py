"""The built documentation site, served on 127.0.0.1, and a headless Chromium to read it with.

``make test`` builds the site first and passes it in ``MQSPEC_DOCS_HTML``; without it the fixture
builds the site into a temporary folder (about a minute). The browser is Debian's ``chromium`` and
``chromium-driver`` (``make test`` installs them through ``tools/browser.sh`` when run as root);
where either is missing the browser tests skip and say so. Nothing here downloads a browser.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
CHROMEDRIVER = ("/usr/bin/chromedriver",)


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = os.environ.get("MQSPEC_DOCS_HTML")
    if given:
        path = Path(given)
        if not (path / "index.html").is_file():
            pytest.fail(f"MQSPEC_DOCS_HTML={given} holds no built site (no index.html)")
        return path
    out = tmp_path_factory.mktemp("site")
    doctrees = tmp_path_factory.mktemp("doctrees")  # as make test does (-d): not inside the published html/
    build = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                            "-d", str(doctrees), str(ROOT / "docs"), str(out)], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-4000:]
    return out


@pytest.fixture(scope="session")
def server(site: Path):
    handler = functools.partial(_QuietHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


def _first(paths: tuple[str, ...]) -> str | None:
    return next((p for p in paths if os.access(p, os.X_OK)), None) or None


@pytest.fixture(scope="session")
def browser(tmp_path_factory: pytest.TempPathFactory):
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("selenium is not installed (pip install -e '.[docs]')")
    binary = _first(CHROMIUM) or shutil.which("chromium")
    driver_path = _first(CHROMEDRIVER) or shutil.which("chromedriver")
    if not binary or not driver_path:
        pytest.skip("no Chromium browser and driver here (Debian: apt-get install chromium chromium-driver; "
                    "make test does this as root: tools/browser.sh)")
    os.environ["SE_OFFLINE"] = "true"  # selenium must not fetch anything
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", "--hide-scrollbars",
                f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"):
        options.add_argument(arg)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=driver_path))
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


@pytest.fixture(scope="session")
def screenshots() -> Path:
    """Where the screenshots go (``MQSPEC_SCREENSHOTS``, default ``docs/_build/screenshots``)."""
    out = Path(os.environ.get("MQSPEC_SCREENSHOTS", ROOT / "docs" / "_build" / "screenshots"))
    out.mkdir(parents=True, exist_ok=True)
    return out
