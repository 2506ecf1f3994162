"""Public names of a package loaded on first access (PEP 562), so that importing the package
loads none of its dependencies."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(package: str, where: Mapping[str, str], public: Sequence[str],
               namespace: dict[str, Any]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: each name of ``where`` is imported from
    its module (relative to ``package``) on first access and kept in ``namespace`` (the
    package's globals).

    Examples
    --------
    >>> getattr_, dir_ = lazy_names("json", {"loads": "json"}, ["loads"], {})
    >>> getattr_("loads").__name__
    'loads'
    """

    def __getattr__(name: str) -> Any:
        try:
            module = importlib.import_module(where[name], package)
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        value = getattr(module, name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(public))

    return __getattr__, __dir__
