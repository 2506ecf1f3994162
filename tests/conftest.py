"""Shared fixtures: small random matrices, the path to ../shared (optional), and a guard
that fails any ``dataclasses.replace`` of a Release."""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import settings

SHARED = Path(__file__).resolve().parents[2] / "shared"


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261125)


@pytest.fixture
def shared_datasets() -> Path:
    """``../shared/datasets`` when present (larger reference runs); skip cleanly otherwise."""
    path = SHARED / "datasets"
    if not path.is_dir():
        pytest.skip("../shared/datasets is not available")
    return path


@pytest.fixture
def refuse_release_replace(monkeypatch) -> Callable[..., Any]:
    """``dataclasses.replace`` failing on a Release, in :mod:`dataclasses` and in every
    microagg module imported so far that holds it as ``replace`` (a module imported later
    binds the failing one): a release is built once, by ``Release.of``, never patched."""
    from microagg._pipeline.result import Release

    original = dataclasses.replace

    def refuse(obj: Any, /, **changes: Any) -> Any:
        assert not isinstance(obj, Release), f"dataclasses.replace of a Release: {changes}"
        return original(obj, **changes)

    monkeypatch.setattr(dataclasses, "replace", refuse)
    for name, module in list(sys.modules.items()):
        if name.partition(".")[0] == "microagg" and getattr(module, "replace", None) is original:
            monkeypatch.setattr(module, "replace", refuse)
    return refuse


# CI runs the property tests with a fixed derandomized seed so that a run is repeatable;
# locally hypothesis explores new examples each time.
if os.environ.get("CI"):
    settings.register_profile("ci", derandomize=True, print_blob=True)
    settings.load_profile("ci")
