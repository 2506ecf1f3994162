"""What loads on first use: the public names of a package (PEP 562), and the functions and
tables a registry names by ``"module:attribute"``, so that importing a package or a registry
loads none of their dependencies."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Generic, TypeVar

__all__ = ["LazyMapping", "LoadedOnRead", "Target", "lazy_names"]


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


def _load(path: str) -> Any:
    """The attribute that ``"module:attribute"`` names, its module imported now."""
    module, _, name = path.partition(":")
    if not module or not name:
        raise ValueError(f"A registry target must read 'module:attribute'; got {path!r}.")
    return getattr(importlib.import_module(module), name)


@dataclass(frozen=True)
class Target:
    """A function named by ``"module:function"``, imported on first use, with ``keywords``
    bound as :func:`functools.partial` binds them.

    >>> Target("math:hypot").load()(3.0, 4.0)
    5.0
    >>> Target("builtins:int", {"base": 2}).load()("101")
    5
    """

    path: str
    keywords: Mapping[str, Any] = field(default_factory=dict)

    def load(self) -> Callable[..., Any]:
        """The function (its module imported now), with :attr:`keywords` bound."""
        function = _load(self.path)
        return partial(function, **self.keywords) if self.keywords else function


_Function = TypeVar("_Function")


class LoadedOnRead(Generic[_Function]):
    """A dataclass field (descriptor-typed) that holds a function, given itself or as a
    :class:`Target` (or its ``"module:function"`` string), and imports a target on its first
    read. The field is the descriptor, shared by the instances; each keeps its value.

    ``required``: the field has no default; otherwise its default is ``None``.
    """

    def __init__(self, *, required: bool) -> None:
        self.required = required
        self.given = self.loaded = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.given, self.loaded = f"_{name}_given", f"_{name}_loaded"

    def __get__(self, entry: object | None, owner: type | None = None) -> _Function:
        if entry is None:  # the class: the field's default (none when required)
            if self.required:
                raise AttributeError(self.given)
            return None  # type: ignore[return-value]
        state = entry.__dict__
        if self.loaded not in state:  # imported once, on the first read
            given = state[self.given]
            if isinstance(given, str):
                given = Target(given)
            state[self.loaded] = given.load() if isinstance(given, Target) else given
        return state[self.loaded]

    def __set__(self, entry: object, value: _Function | str | Target) -> None:
        entry.__dict__[self.given] = value
        entry.__dict__.pop(self.loaded, None)

    def target(self, entry: object) -> str | None:
        """The ``"module:function"`` the entry was given, ``None`` for a function object."""
        given = entry.__dict__[self.given]
        return given if isinstance(given, str) else getattr(given, "path", None)


class LazyMapping(Mapping[str, Any]):
    """A read-only mapping named by ``"module:attribute"``, imported on first access.

    >>> sorted(LazyMapping("microagg.partition.colgen:CONSTRAINTS"))
    ['part_size', 'time_limit']
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._mapping: Mapping[str, Any] | None = None

    def _loaded(self) -> Mapping[str, Any]:
        if self._mapping is None:
            self._mapping = _load(self.path)
        return self._mapping

    def __getitem__(self, key: str) -> Any:
        return self._loaded()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaded())

    def __len__(self) -> int:
        return len(self._loaded())

    def __repr__(self) -> str:
        return f"LazyMapping({self.path!r})"
