"""The stale-cache guard deletes numba cache files when a kernel source changes."""

from __future__ import annotations

from pathlib import Path

from microagg._numba_cache import reset_stale_cache


def test_cache_cleared_only_when_sources_change(tmp_path: Path) -> None:
    (tmp_path / "kernels.py").write_text("import numba\nx = 1\n")
    cache = tmp_path / "__pycache__"
    cache.mkdir()
    reset_stale_cache((tmp_path,))  # records the stamp
    entry = cache / "kernels.f-1.py311.nbi"
    entry.write_text("cached")
    reset_stale_cache((tmp_path,))  # unchanged sources: the cache stays
    assert entry.exists()
    (tmp_path / "plain.py").write_text("y = 1\n")
    reset_stale_cache((tmp_path,))  # a module without kernels: the cache stays
    assert entry.exists()
    (tmp_path / "kernels.py").write_text("import numba\nx = 2\n")
    reset_stale_cache((tmp_path,))  # changed kernel sources: the cache goes
    assert not entry.exists()
    assert (cache / "microagg-kernels.sha256").exists()


def test_unwritable_folder_is_ignored(tmp_path: Path) -> None:
    reset_stale_cache((tmp_path / "missing",))  # never raises
