"""The API reference (docs/reference/) documents exactly the public ``__all__``.

``docs/reference/pages.py`` writes one page per public module from its ``__all__``; the
committed pages must be what it writes, so that a new public name without an entry (or an
entry for a name no longer public) fails here. ``make docs-api`` renders them with Sphinx.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

REFERENCE = Path(__file__).resolve().parents[1] / "docs" / "reference"


def reference_pages() -> ModuleType:
    """``docs/reference/pages.py``, the generator of the reference's pages, as a module."""
    spec = importlib.util.spec_from_file_location("reference_pages", REFERENCE / "pages.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def public_module(name: str) -> ModuleType | None:
    """The public module ``name``, or ``None`` when an optional extra it imports is missing."""
    try:
        return importlib.import_module(name)
    except ImportError as error:
        cause: BaseException | None = error
        while cause is not None and not isinstance(cause, ModuleNotFoundError):
            cause = cause.__cause__ or cause.__context__
        if cause is None or cause.name is None or cause.name.split(".")[0] == "microagg":
            raise  # not a missing extra: a broken import of microagg's own
        return None


def require_every_module() -> None:
    """Skip where an extra is missing: the whole reference needs the ``dev`` extra."""
    missing = [name for name in reference_pages().MODULES if public_module(name) is None]
    if missing:
        pytest.skip(f"{missing} need an optional extra (the dev extra has them all)")


def test_reference_pages_are_up_to_date() -> None:
    require_every_module()
    pages = reference_pages().render_pages()
    committed = {p.name: p.read_text(encoding="utf-8")
                 for p in sorted((REFERENCE / "api").glob("*.rst"))}
    assert sorted(committed) == sorted(pages), (
        "docs/reference/api/ has other pages than the public modules: run `make docs-api-pages`")
    stale = [name for name in pages if committed[name] != pages[name]]
    assert not stale, f"{stale} are stale: run `make docs-api-pages` and commit them"


def test_every_public_name_has_one_entry() -> None:
    generator = reference_pages()
    for module_name in generator.MODULES:
        module = public_module(module_name)
        if module is None:
            continue
        page = (REFERENCE / "api" / f"{module_name}.rst").read_text(encoding="utf-8")
        documented = re.findall(rf"^\.\. auto\w+:: {re.escape(module_name)}\.(\w+)$", page,
                                flags=re.MULTILINE)
        documented += re.findall(rf"^\.\. rubric:: ``{re.escape(module_name)}\.(\w+)``$", page,
                                 flags=re.MULTILINE)
        assert sorted(documented) == sorted(module.__all__), module_name


def test_the_index_lists_every_page() -> None:
    index = (REFERENCE / "index.rst").read_text(encoding="utf-8")
    listed = re.findall(r"^   api/(\S+)$", index, flags=re.MULTILINE)
    assert listed == list(reference_pages().MODULES)


def test_a_new_public_name_gets_an_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    module = ModuleType("microagg.example", "An example module.")
    module.__all__ = ["described", "LIMIT"]  # type: ignore[attr-defined]
    module.described = len  # type: ignore[attr-defined]
    module.LIMIT = 3  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "microagg.example", module)
    generator = reference_pages()
    monkeypatch.setitem(generator.MODULES, "microagg.example", "an example")
    page = generator.render_page("microagg.example")
    assert ".. autofunction:: microagg.example.described" in page
    assert ".. autodata:: microagg.example.LIMIT\n   :no-value:" in page
    assert page.split(".. autosummary::")[1].split("\n\n")[1] == "   described\n   LIMIT"
