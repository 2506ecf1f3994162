"""How many threads each stretch of a long MDAV run uses: measured as it runs.

Each MDAV step is a few short parallel regions (one pass over the records still ungrouped),
and a region ends only when its slowest thread does. On a machine where another process
runs, the operating system deschedules one of our threads now and then, and every region
waits for it: measured on a 2-core machine beside one CPU-bound process, exact MDAV on
50,000 x 10 with 2 threads took 0.50-0.63 s most times but 4.7-6.1 s one run in four to six,
while one thread took a steady 0.94-1.20 s. No setting fixed in advance is right for both
an idle and a busy machine, so a long run is cut into short stretches (as for progress
reports, the labels are the same), each stretch's speed is measured, and the faster of
"all threads" and "one thread" is used. The other is tried again now and then, on a
shorter stretch, so that a change of load (the other process starting or stopping) is
noticed; each try that loses doubles the wait before the next one, so that on a machine
that stays busy the tries cost little.
"""

from __future__ import annotations

__all__ = ["ThreadChooser"]


class ThreadChooser:
    """Chooses the threads of each stretch of a run from the measured speed of earlier ones.

    Parameters
    ----------
    threads : int
        The threads available (numba's current setting); 1 turns the choice off.
    probe_every : int, default=8
        After this many stretches with one setting, the other is tried for one stretch
        (:attr:`probing`); doubled after each try that loses, up to ``64 * probe_every``.
    smoothing : float, default=0.5
        Weight of the newest stretch in each setting's running speed estimate (0 < w <= 1).

    Examples
    --------
    >>> chooser = ThreadChooser(2)
    >>> chooser.next_threads()          # first all threads
    2
    >>> chooser.record(2, work=100.0, seconds=1.0)
    >>> chooser.next_threads()          # then one thread, to compare
    1
    >>> chooser.record(1, work=100.0, seconds=0.5)   # one thread was faster (a busy machine)
    >>> chooser.next_threads()
    1
    """

    def __init__(self, threads: int, probe_every: int = 8, smoothing: float = 0.5) -> None:
        if threads < 1:
            raise ValueError(f"threads must be at least 1; got {threads}.")
        if probe_every < 1:
            raise ValueError(f"probe_every must be at least 1; got {probe_every}.")
        if not 0.0 < smoothing <= 1.0:
            raise ValueError(f"smoothing must be in (0, 1]; got {smoothing}.")
        self.threads, self.probe_every, self.smoothing = threads, probe_every, smoothing
        self.speed: dict[int, float] = {}
        """Running estimate of work units per second, by thread count."""
        self.probing = False
        """Whether the last :meth:`next_threads` is a try of the setting that is not the
        faster one (the caller may make that stretch shorter)."""
        self._streak = 0
        self._interval = probe_every

    def _best(self) -> int:
        return max((self.threads, 1), key=lambda option: self.speed[option])

    def next_threads(self) -> int:
        """The threads for the next stretch."""
        self.probing = False
        if self.threads == 1:
            return 1
        for option in (self.threads, 1):  # measure each setting once first
            if option not in self.speed:
                return option
        best = self._best()
        if self._streak >= self._interval:
            self.probing = True
            return 1 if best == self.threads else self.threads
        return best

    def record(self, threads: int, work: float, seconds: float) -> None:
        """A stretch of ``work`` units took ``seconds`` with ``threads`` threads."""
        if work <= 0.0:
            return
        speed = work / max(seconds, 1e-9)
        before = self._best() if len(self.speed) == 2 else None
        old = self.speed.get(threads)
        self.speed[threads] = speed if old is None else (
            self.smoothing * speed + (1.0 - self.smoothing) * old)
        if self.probing:  # a try: did it win?
            won = len(self.speed) == 2 and self._best() != before
            self._interval = (self.probe_every if won
                              else min(2 * self._interval, 64 * self.probe_every))
            self._streak = 0
        else:
            self._streak += 1
