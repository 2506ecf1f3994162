"""Shared fixtures: small random matrices and the path to ../shared (optional)."""

from __future__ import annotations

import os
from pathlib import Path

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


# CI runs the property tests with a fixed derandomized seed so that a run is repeatable;
# locally hypothesis explores new examples each time.
if os.environ.get("CI"):
    settings.register_profile("ci", derandomize=True, print_blob=True)
    settings.load_profile("ci")
