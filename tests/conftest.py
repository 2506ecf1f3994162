"""Shared fixtures: small random matrices and the path to ../shared (optional)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

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
