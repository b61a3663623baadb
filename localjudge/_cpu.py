"""What the CPU offers: the features llama.cpp cares about, how many cores we may use, and how many others use.

llama.cpp's compute threads meet at a barrier after every operation of a
step. When other work holds a core, the thread that is waiting for it holds
up the rest: measured here, a verdict took 115 s with every core on a busy
machine and 12.7 s with one thread (``make bench-threads`` measures it
again). So unless told otherwise, a model decodes with the cores that other
processes leave free, measured while it runs (:class:`ThreadGovernor`).
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

__all__ = [
    "CpuSample",
    "ThreadGovernor",
    "cpu_features",
    "default_threads",
    "others_busy",
    "sample_cpu",
    "threads_for",
    "usable_cpus",
]

_INTERESTING = (
    "avx",
    "avx2",
    "fma",
    "f16c",
    "avx512f",
    "avx512_bf16",
    "avx512_vnni",
    "amx_tile",
    "amx_int8",
    "amx_bf16",
    "neon",
    "asimd",
)


def cpu_features() -> list[str]:
    """The SIMD/matrix features llama.cpp cares about, as the kernel reports them."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return []
    flags: set[str] = set()
    for line in text.splitlines():
        if line.startswith(("flags", "Features")):
            flags.update(line.split(":", 1)[1].split())
    return [f for f in _INTERESTING if f in flags]


def usable_cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def default_threads(cpus: Optional[int] = None) -> int:
    """The most decode threads: every CPU on small machines; half (about the physical cores) on larger ones."""
    cpus = usable_cpus() if cpus is None else cpus
    return cpus if cpus <= 4 else cpus // 2


#: how much of a CPU other work may use on the one we would take: beyond it, that thread would wait for it
SPARE_MARGIN = 0.25


def threads_for(cpus: int, busy_elsewhere: float) -> int:
    """Decode threads for ``cpus`` usable CPUs when other processes keep ``busy_elsewhere`` of them busy.

    A thread is added only for a CPU that other work leaves (nearly) whole;
    at least one, at most :func:`default_threads`.
    """
    free = cpus - max(0.0, busy_elsewhere)
    return max(1, min(default_threads(cpus), int(free + SPARE_MARGIN)))


@dataclass(frozen=True)
class CpuSample:
    """The machine's busy CPU-seconds and this process's own, at one moment."""

    wall: float
    machine_busy: float
    own: float


def sample_cpu() -> Optional[CpuSample]:
    """Now's counters (``/proc/stat`` and this process's times), or None where there is no ``/proc/stat``."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu" or len(fields) < 5:
        return None
    ticks = [int(value) for value in fields[1:]]
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)  # idle and iowait
    hz = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    own = os.times()
    return CpuSample(time.monotonic(), (sum(ticks[:8]) - idle) / hz, own.user + own.system)


def others_busy(before: CpuSample, after: CpuSample) -> float:
    """How many CPUs other processes kept busy between two samples (0 when too close to tell)."""
    wall = after.wall - before.wall
    if wall <= 0:
        return 0.0
    return max(0.0, (after.machine_busy - before.machine_busy) - (after.own - before.own)) / wall


class ThreadGovernor:
    """Decode threads that follow the machine's load: re-measured every ``interval`` seconds of use.

    ``fixed`` (a count the user gave) is kept as it is. Without ``/proc/stat``
    it stays at :func:`default_threads`.
    """

    def __init__(self, fixed: Optional[int] = None, *, interval: float = 2.0, cpus: Optional[int] = None) -> None:
        self.cpus = usable_cpus() if cpus is None else cpus
        self.fixed = fixed
        self.interval = interval
        self._lock = threading.Lock()
        self._last = None if fixed else sample_cpu()
        self.current = fixed or (threads_for(self.cpus, 0.0) if self._last is None else self._first_guess())

    def _first_guess(self) -> int:
        """A first count from a short look at the machine, before this process has done any work."""
        time.sleep(0.05)
        now = sample_cpu()
        if now is None or self._last is None:
            return default_threads(self.cpus)
        guess = threads_for(self.cpus, others_busy(self._last, now))
        self._last = now
        return guess

    @property
    def rule(self) -> str:
        """How the count is chosen, in words (for ``doctor`` and load info)."""
        if self.fixed:
            return f"fixed at {self.fixed} (n_threads)"
        if self._last is None:
            return f"{default_threads(self.cpus)}: the load of this machine cannot be read"
        return (
            f"the CPUs other work leaves free, re-measured every {self.interval:g} s: "
            f"1 to {default_threads(self.cpus)} of {self.cpus}"
        )

    def threads(self) -> int:
        """The count to decode with now."""
        if self.fixed or self._last is None or time.monotonic() - self._last.wall < self.interval:
            return self.current
        with self._lock:
            now = sample_cpu()
            if now is not None and now.wall - self._last.wall >= self.interval:
                self.current = threads_for(self.cpus, others_busy(self._last, now))
                self._last = now
            return self.current
