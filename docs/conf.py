"""Sphinx configuration for the mqspec annotated specification (built with -W in `make test`)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

project = "mqspec"
author = "the mqspec authors"
copyright = "2026, the mqspec authors"
extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "mqspec_register",
]
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": False}
nitpicky = False
html_theme = "alabaster"
html_static_path: list[str] = []
exclude_patterns = ["_build"]
suppress_warnings = ["ref.python"]
