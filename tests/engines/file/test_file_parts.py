"""The file engine's result parts (issue 21): written contiguously, read back in input order."""

import itertools

import numpy as np
import pytest

from microagg.engines.file._parts import InputOrder, read_part, remove_parts, write_part


@pytest.fixture
def parts(tmp_path):
    """120 rows (p = 3) dealt at random to 4 parts, fences every 25 rows."""
    rng = np.random.default_rng(0)
    n, p = 120, 3
    masked = rng.normal(size=(n, p))
    labels = rng.integers(0, 40, size=n)
    owner = rng.integers(0, 4, size=n)
    written = []
    for i in range(4):
        rows = rng.permutation(np.flatnonzero(owner == i))  # a block's rows, in any order
        written.append(write_part(str(tmp_path / f"part{i}.rec"), rows, labels[rows],
                                  masked[rows], None, bucket=25, n=n))
    return written, labels, masked


@pytest.mark.parametrize("cuts", [[0, 25, 50, 75, 100, 120], [0, 7, 60, 61, 119, 120],
                                  [0, 120]])
def test_rows_come_back_in_input_order(parts, cuts):
    written, labels, masked = parts
    reader = InputOrder(written, bucket=25, p=3)
    got = [reader.take(a, b) for a, b in itertools.pairwise(cuts)]
    np.testing.assert_array_equal(np.concatenate([g[0] for g in got]), labels)
    np.testing.assert_array_equal(np.concatenate([g[1] for g in got]), masked)
    assert reader.most == labels.max()


def test_a_part_is_sorted_by_row_with_its_fences(parts, tmp_path):
    written, _, _ = parts
    for part in written:
        records = read_part(part)
        assert np.all(np.diff(records["row"]) > 0)
        assert part.fences.tolist() == np.searchsorted(records["row"],
                                                       [0, 25, 50, 75, 100, 125]).tolist()
        assert part.size == records.shape[0]
    remove_parts(written)
    assert list(tmp_path.glob("*.rec")) == []


def test_a_missing_row_is_an_error_not_a_hole(parts):
    written, _, _ = parts
    with pytest.raises(RuntimeError, match="of rows 0:120"):
        InputOrder(written[1:], bucket=25, p=3).take(0, 120)


def test_values_travel_when_a_second_pass_reads_them(tmp_path):
    rows = np.array([5, 1, 3])
    values = np.arange(6.0).reshape(3, 2)
    part = write_part(str(tmp_path / "p.rec"), rows, np.zeros(3, np.int64), values * 0, values,
                      bucket=4, n=6)
    records = read_part(part)
    assert records["row"].tolist() == [1, 3, 5]
    np.testing.assert_array_equal(records["value"], values[[1, 2, 0]])
    assert (tmp_path / "p.rec").stat().st_mode & 0o777 == 0o600
