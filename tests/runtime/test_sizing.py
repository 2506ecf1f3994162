"""The cost model of exact and blocked MDAV (issue 18, item 8): :mod:`microagg._runtime.sizing`."""

from __future__ import annotations

import pytest

from microagg._runtime import sizing as _sizing
from microagg._runtime.sizing import estimate, format_duration, remaining_seconds


def test_exact_grows_as_n_squared_over_k_and_blocked_as_n() -> None:
    base = estimate(100_000, 10, 5)
    assert estimate(200_000, 10, 5).exact == pytest.approx(4 * base.exact)
    assert estimate(100_000, 10, 10).exact == pytest.approx(base.exact / 2)
    assert estimate(200_000, 10, 5).blocked == pytest.approx(2 * base.blocked)
    assert estimate(100_000, 30, 5).exact > base.exact


def test_the_issue_case_is_too_slow_and_census_is_not() -> None:
    # issue 18: 1,000,000 x 10 at k=5 took 27 min exact, 37 s with --blocking kd
    big = estimate(1_000_000, 10, 5)
    assert big.too_slow
    assert 4 * 60 < big.exact < 30 * 60
    assert big.blocked < 60
    assert not estimate(1_080, 13, 5).too_slow  # Census: milliseconds
    assert not estimate(100_000, 10, 5).too_slow


def test_blocking_that_cannot_help_never_trips_the_guard(monkeypatch) -> None:
    monkeypatch.setattr(_sizing, "GUARD_SECONDS", 0.0)
    small = estimate(5_000, 3, 5, block_size=10_000)  # one block: blocked == exact
    assert small.blocked == pytest.approx(small.exact)
    assert not small.too_slow


def test_remaining_seconds_follows_the_quadratic_work() -> None:
    assert remaining_seconds(10.0, 0, 1_000) is None
    assert remaining_seconds(75.0, 500, 1_000) == pytest.approx(25.0)
    assert remaining_seconds(30.0, 1_000, 1_000) == 0.0
    # a linear guess would say 10 x more; the first 10 % is about 19 % of the work
    assert remaining_seconds(19.0, 100, 1_000) == pytest.approx(81.0)


@pytest.mark.parametrize(("seconds", "text"), [
    (0.0, "about 1 s"), (89.4, "about 89 s"), (90.0, "about 2 min"), (5_399, "about 90 min"),
    (5_400, "about 1.5 h"),
])
def test_format_duration(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text
