"""What the CPU offers: the features llama.cpp cares about, and how many cores we may use."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cpu_features", "default_threads", "usable_cpus"]

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


def default_threads() -> int:
    """Decode threads: every CPU on small machines; half (about the physical cores) on larger ones."""
    cpus = usable_cpus()
    return cpus if cpus <= 4 else cpus // 2
