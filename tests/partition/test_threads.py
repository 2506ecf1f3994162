"""Threads chosen by measured speed in long MDAV runs (issue 21, "speed that holds on a busy
machine"): the choice logic on given timings, and the labels unchanged whatever it chooses.
Timings themselves are measured in benchmarks/bench_busy.py, not here."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from microagg.partition import mdav
from microagg.partition._threads import ThreadChooser

MDAV_MODULE = importlib.import_module("microagg.partition.mdav")


def _run(chooser: ThreadChooser, seconds_per_unit: dict[int, float], stretches: int
         ) -> list[int]:
    used = []
    for _ in range(stretches):
        threads = chooser.next_threads()
        used.append(threads)
        chooser.record(threads, 100.0, 100.0 * seconds_per_unit[threads])
    return used


def test_an_idle_machine_keeps_all_threads_and_tries_one_rarely() -> None:
    used = _run(ThreadChooser(2), {2: 0.5, 1: 1.0}, 200)
    assert used[:2] == [2, 1]  # each measured once
    assert used.count(1) <= 8  # the tries back off: 8, 16, 32, 64... stretches apart
    assert used[-20:].count(2) >= 19


def test_a_busy_machine_switches_to_one_thread() -> None:
    used = _run(ThreadChooser(2), {2: 8.0, 1: 1.0}, 200)
    assert used.count(2) <= 8 and used[-20:].count(1) >= 19


def test_a_change_of_load_is_noticed() -> None:
    chooser = ThreadChooser(2, probe_every=4)
    assert _run(chooser, {2: 8.0, 1: 1.0}, 30)[-1] == 1  # busy
    after = _run(chooser, {2: 0.4, 1: 1.0}, 200)  # the other process stopped
    assert after[-20:].count(2) >= 19


def test_tries_are_flagged_for_a_shorter_stretch() -> None:
    chooser = ThreadChooser(2, probe_every=2)
    flags = []
    for _ in range(12):
        threads = chooser.next_threads()
        flags.append(chooser.probing)
        chooser.record(threads, 100.0, 50.0 if threads == 2 else 100.0)
    assert any(flags) and not all(flags)


def test_one_thread_means_no_choice() -> None:
    assert _run(ThreadChooser(1), {1: 1.0}, 5) == [1] * 5


@pytest.mark.parametrize(("name", "value"), [("threads", 0), ("probe_every", 0),
                                             ("smoothing", 0.0), ("smoothing", 1.5)])
def test_bad_parameters_name_the_value(name: str, value: float) -> None:
    kwargs = {"threads": 2, name: value}
    with pytest.raises(ValueError, match=f"{name} must be .*got {value}"):
        ThreadChooser(**kwargs)  # type: ignore[arg-type]


@pytest.mark.slow  # 30,000 records: quick compiled, minutes as Python (NUMBA_DISABLE_JIT)
def test_labels_do_not_depend_on_the_threads_chosen(monkeypatch) -> None:
    """Stretches alternating 2 and 1 threads give exact MDAV's labels of one call."""
    class Alternating(ThreadChooser):
        def next_threads(self) -> int:
            self.probing = not self.probing
            return 2 if self.probing else 1

    monkeypatch.setattr(MDAV_MODULE, "ThreadChooser", Alternating)
    X = np.random.default_rng(3).normal(size=(30_000, 4))
    expected = MDAV_MODULE._mdav_kernel(X, 4, 3)
    np.testing.assert_array_equal(MDAV_MODULE._mdav_stretches(X, 4, 3, None), expected)
    np.testing.assert_array_equal(mdav(X, 4), expected)  # 30,000 >= ADAPTIVE_MIN_ROWS
