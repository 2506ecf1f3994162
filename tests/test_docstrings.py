"""Every public function and class names each of its parameters in its numpydoc docstring.

The public API is what the reference documents (``docs/reference/pages.py``: the ``__all__``
of each public module). A function's ``Parameters`` (or ``Other Parameters``) section names
every parameter of its signature and no parameter it does not have; a class names the
parameters of its constructor in ``Parameters`` or ``Attributes``, or, for a dataclass field,
in the field's own docstring (the string under it, which the reference renders). Parameters
whose name starts with ``_`` are private; exceptions are raised, not constructed.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import textwrap

import pytest

from tests.test_api_reference import public_module, reference_pages

docscrape = pytest.importorskip("numpydoc.docscrape")

SECTIONS = ("Parameters", "Other Parameters")


def public_objects() -> list[tuple[str, object]]:
    """Every public function and class (exceptions left out), by its documented name; the
    modules whose optional extra is missing are left out."""
    generator = reference_pages()
    found = []
    for module_name in generator.MODULES:
        module = public_module(module_name)
        if module is None:
            continue
        for name in generator.public_names(module):
            value = getattr(module, name)
            if generator.kind_of(value) in ("function", "class"):
                found.append((f"{module_name}.{name}", value))
    return found


def signature_names(value: object) -> list[str]:
    """The parameters a caller passes (``*args`` and ``**kwargs`` with their stars)."""
    stars = {inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.VAR_KEYWORD: "**"}
    return [stars.get(p.kind, "") + p.name
            for p in inspect.signature(value).parameters.values()  # type: ignore[arg-type]
            if not p.name.startswith("_")]


def documented_names(value: object, sections: tuple[str, ...]) -> set[str]:
    """The names a numpydoc docstring's ``sections`` describe (``a, b : int`` gives two)."""
    doc = docscrape.NumpyDocString(inspect.getdoc(value) or "")
    return {name.strip() for section in sections for item in doc[section]
            for name in item.name.split(",") if name.strip()}


def field_docstrings(cls: type) -> set[str]:
    """The class-level fields followed by a docstring (``x: int`` then ``\"\"\"...\"\"\"``)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError):
        return set()
    body = tree.body[0].body  # type: ignore[attr-defined]
    return {node.target.id for node, after in itertools.pairwise(body)
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
            and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)}


def undocumented(value: object) -> list[str]:
    """What a public object's docstring fails to say about its parameters (empty: nothing)."""
    params = signature_names(value)
    if inspect.isclass(value):
        known = documented_names(value, (*SECTIONS, "Attributes")) | field_docstrings(value)
        return [f"{p} is not described" for p in params if p.lstrip("*") not in known
                and p not in known]
    described = documented_names(value, SECTIONS)
    problems = [f"{p} is not in its Parameters" for p in params
                if p not in described and p.lstrip("*") not in described]
    if not any(p.startswith("**") for p in params):
        bare = {p.lstrip("*") for p in params}
        problems += [f"Parameters describes {d}, which it has not" for d in sorted(described)
                     if d.lstrip("*") not in bare]
    return problems


PUBLIC = public_objects()


@pytest.mark.parametrize(("name", "value"), PUBLIC, ids=[name for name, _ in PUBLIC])
def test_parameters_are_documented(name: str, value: object) -> None:
    assert not undocumented(value), f"{name}: {'; '.join(undocumented(value))}"


def test_the_check_catches_an_undocumented_parameter() -> None:
    def scaled(x: float, factor: float = 2.0) -> float:
        """Scale a number.

        Parameters
        ----------
        x : float
            The number.
        gone : int
            A parameter it no longer has.
        """
        return x * factor

    assert undocumented(scaled) == ["factor is not in its Parameters",
                                    "Parameters describes gone, which it has not"]


def test_a_dataclass_field_docstring_documents_it() -> None:
    from dataclasses import dataclass

    @dataclass
    class Entry:
        """A registry entry."""

        name: str
        """Its name."""
        size: int = 0

    assert undocumented(Entry) == ["size is not described"]


def test_the_public_api_is_walked() -> None:
    names = {name for name, _ in PUBLIC}
    assert {"microagg.anonymize", "microagg.Release", "microagg.metrics.sse",
            "microagg.steps.Plan", "microagg.partition.mdav"} <= names
    assert "microagg.PrivacyViolationError" not in names  # exceptions are raised
