"""Sphinx configuration for the mqspec annotated specification (built with -W in `make test`).

The section pages (``spec/``) and evidence pages (``evidence/``) are generated at build time from
the registries by ``_ext/mqspec_pages.py``; see ``_ext/mqspec_evidence.py`` for the sources.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

project = "mqspec"
author = "the mqspec authors"
copyright = "2026, the mqspec authors"
extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx_copybutton",
    "mqspec_register",
    "mqspec_pages",
    "mqspec_names",
    "mqspec_links",
    "mqspec_autodoc",
    "mqspec_contract",
]
autodoc_member_order = "bysource"
autodoc_typehints = "signature"  # types once, in the signature (no second "Parameters" list)
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": False}
nitpicky = False
smartquotes = False  # commands and quoted spec text keep their straight quotes
html_theme = "furo"
html_title = "mqspec: the annotated specification"
html_static_path = ["_static"]
html_css_files = ["mqspec.css"]
html_js_files = ["mqspec.js"]
html_copy_source = False
html_show_sourcelink = False
copybutton_selector = "div.mqspec-command pre, div.mqspec-code pre, div.highlight-python pre, div.highlight-default pre"
copybutton_exclude = ".linenos, .gp"
exclude_patterns = ["_build", "spec_text", "_data"]
suppress_warnings = ["ref.python"]
