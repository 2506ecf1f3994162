"""Sphinx configuration of the API reference (``make docs-api``).

The pages under ``api/`` are written by ``pages.py`` from each public module's ``__all__``;
Sphinx renders every entry from its numpydoc docstring. The build treats warnings as errors
(``-W --keep-going``) and writes HTML to ``docs/reference/_build/`` (git-ignored).
"""

from __future__ import annotations

import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
if str(SRC) not in sys.path:  # the checkout's package, installed or not
    sys.path.insert(0, str(SRC))

import microagg  # noqa: E402

project = "microagg"
author = "microagg developers"
copyright = "microagg developers, Apache-2.0"
release = version = microagg.__version__

extensions = ["sphinx.ext.autodoc", "sphinx.ext.autosummary", "numpydoc"]
exclude_patterns = ["_build"]
root_doc = "index"

autosummary_generate = False  # one page per module, written by pages.py; no stub pages
autodoc_member_order = "bysource"
autodoc_typehints = "none"  # the numpydoc Parameters section says the types
numpydoc_show_class_members = False  # autodoc's :members: lists them, once
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

html_theme = "alabaster"
html_title = f"microagg {release} API reference"
html_show_sourcelink = False
