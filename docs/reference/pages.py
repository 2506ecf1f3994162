"""Write the API reference's pages (``docs/reference/api/*.rst``) from the public ``__all__``.

One page per public module, one entry per name of its ``__all__``, so that a public name
without documentation cannot exist: ``tests/test_api_reference.py`` fails when the committed
pages differ from what this script writes. Run it after adding or removing a public name::

    PYTHONPATH=src python docs/reference/pages.py      # or: make docs-api-pages

Sphinx (``make docs-api``) then renders each entry from the object's numpydoc docstring.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from pathlib import Path
from types import ModuleType

MODULES: dict[str, str] = {
    "microagg": "the release in one call, the estimator, the exceptions",
    "microagg.partition": "the partitioners and their registry",
    "microagg.models": "privacy models: achieved k, l-diversity, t-closeness, enforcement",
    "microagg.metrics": "information loss and disclosure risk",
    "microagg.bounds": "certified lower bounds on the SSE of any k-partition",
    "microagg.steps": "the plan of steps a release runs",
    "microagg.engines": "the engines that run a release, by name",
    "microagg.schema": "column roles and types",
    "microagg.io": "reading and writing tables",
    "microagg.datasets": "the bundled benchmark data sets",
    "microagg.series": "time-series microaggregation",
    "microagg.semantic": "semantic microaggregation of categories",
    "microagg.documents": "microaggregation of documents",
    "microagg.graph": "k-anonymous graphs",
}
"""The public modules, in the reference's order, each with the line that introduces it."""

API = Path(__file__).resolve().parent / "api"
"""Where the pages are written."""


def public_names(module: ModuleType) -> list[str]:
    """The module's public names (its ``__all__``), sorted case-insensitively.

    Parameters
    ----------
    module : module
        A public module of :data:`MODULES`.

    Returns
    -------
    list of str
    """
    return sorted(module.__all__, key=lambda name: (name.lower(), name))


def kind_of(value: object) -> str:
    """The autodoc directive that documents ``value``.

    Parameters
    ----------
    value : object
        A public name's value.

    Returns
    -------
    str
        ``"module"``, ``"exception"``, ``"class"``, ``"function"`` or ``"data"``.
    """
    if inspect.ismodule(value):
        return "module"
    if inspect.isclass(value):
        return "exception" if issubclass(value, BaseException) else "class"
    if inspect.isroutine(value):
        return "function"
    return "data"


def entry(module: str, name: str, value: object) -> str:
    """The reStructuredText that documents one public name.

    Parameters
    ----------
    module : str
        The public module the name belongs to.
    name : str
        The name, one of the module's ``__all__``.
    value : object
        Its value.

    Returns
    -------
    str
    """
    kind = kind_of(value)
    if kind == "module":
        return f".. rubric:: ``{module}.{name}``\n\nThe module :mod:`{value.__name__}`.\n"
    lines = [f".. auto{kind}:: {module}.{name}"]
    if kind == "class":
        lines.append("   :members:")
    home = home_of(value)
    if home not in (None, module) and name in importlib.import_module(home).__all__:
        lines.append("   :no-index:")  # indexed on its own module's page
    if kind == "data":
        lines.append("   :no-value:")
    return "\n".join(lines) + "\n"


def home_of(value: object) -> str | None:
    """The public module of :data:`MODULES` that defines ``value`` (the longest whose name
    starts its ``__module__``): a name listed on another page too is indexed there only.

    Parameters
    ----------
    value : object
        A public name's value.

    Returns
    -------
    str or None
        ``None`` for a value without a module of its own (data).
    """
    defined_in = getattr(value, "__module__", None)
    if not isinstance(defined_in, str) or kind_of(value) == "data":
        return None
    homes = [m for m in MODULES if defined_in == m or defined_in.startswith(m + ".")]
    return max(homes, key=len) if homes else None


def render_page(module_name: str) -> str:
    """The page of one public module: its docstring, a summary table, every public name.

    Parameters
    ----------
    module_name : str
        A key of :data:`MODULES`.

    Returns
    -------
    str
    """
    module = importlib.import_module(module_name)
    names = public_names(module)
    title = f"``{module_name}``: {MODULES[module_name]}"
    parts = [title, "=" * len(title), "",
             f".. automodule:: {module_name}", "   :no-members:", "",
             ".. autosummary::", ""]
    parts += [f"   {name}" for name in names
              if kind_of(getattr(module, name)) != "module"]
    parts.append("")
    parts += [entry(module_name, name, getattr(module, name)) for name in names]
    return "\n".join(parts)


def render_pages() -> dict[str, str]:
    """Every page of the reference by file name (``api/<module>.rst``).

    Returns
    -------
    dict of str to str
    """
    return {f"{name}.rst": render_page(name) for name in MODULES}


def main() -> None:
    """Write the pages, and remove those of modules no longer public."""
    pages = render_pages()
    API.mkdir(exist_ok=True)
    for stale in set(p.name for p in API.glob("*.rst")) - set(pages):
        (API / stale).unlink()
    for file_name, text in pages.items():
        (API / file_name).write_text(text, encoding="utf-8")
    print(f"wrote {len(pages)} pages to {API}", file=sys.stderr)


if __name__ == "__main__":
    main()
