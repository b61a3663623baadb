"""Keeping the evaluated state of prompt prefixes that calls share, so the next call starts warm.

A judge's prompts share their start (system message, instructions, few-shot
examples) and differ where the answer under judgement goes. Evaluating that
start once and keeping its state saves most of a prefill.

A warm verdict must be the cold one, bit for bit, and an engine's results
depend on how a prompt is split into batches. So every prompt is evaluated
in canonical chunks, aligned to multiples of :data:`CHUNK` tokens from its
start, warm or cold alike; states are kept only at chunk boundaries, and a
prompt resumed from one goes on in the same chunks a cold run would.

Which boundary to keep is learnt, not guessed: a boundary is kept once a
second prompt reaches it with the same tokens, at the last such boundary of
that prompt, so one prompt costs at most one snapshot. Prompts that arrive
together (a pair's two orders, the first requests of a run) are announced
with :meth:`PrefixCache.expect`, so the first of them already keeps what the
others share, and they resume from it instead of all starting cold. States are kept in
an LRU bounded in bytes. This module decides; the engine snapshots and
restores (:class:`~localjudge.runtimes.llamacpp.LlamaCppRuntime`).
"""

from __future__ import annotations

import hashlib
import itertools
import threading
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..specs.options import DEFAULT_PREFIX_CACHE_BYTES

__all__ = ["CHUNK", "DEFAULT_BUDGET_BYTES", "Plan", "PrefixCache", "chunks"]

CHUNK = 128  # tokens: prefixes are kept at multiples of this; prompts are evaluated in chunks of it
DEFAULT_BUDGET_BYTES = DEFAULT_PREFIX_CACHE_BYTES
_SEEN_LIMIT = 65_536  # boundary digests remembered from earlier prompts


def chunks(start: int, end: int, size: int = CHUNK) -> list[tuple[int, int]]:
    """``[start, end)`` cut at the multiples of ``size``: the same cuts whatever ``start`` a run resumes from."""
    cuts = [start, *range((start // size + 1) * size, end, size), end]
    return [(a, b) for a, b in itertools.pairwise(cuts) if b > a]


def boundary_digests(tokens: Sequence[int], size: int = CHUNK) -> list[bytes]:
    """The digest of ``tokens[:k*size]`` for each k with a token left after it (a resumed prompt needs one)."""
    digest = hashlib.sha256()
    found = []
    array = np.asarray(tokens, dtype=np.int64)
    for k in range(1, (len(tokens) - 1) // size + 1):
        digest.update(array[(k - 1) * size : k * size].tobytes())
        found.append(digest.copy().digest())
    return found


@dataclass(frozen=True)
class Plan:
    """How to evaluate one prompt: resume from ``resume_at`` (0: cold) with ``state``; keep the state at ``keep_at``."""

    resume_at: int
    state: bytes | None
    keep_at: int | None
    keep_key: bytes | None


class PrefixCache:
    """Prefix states by the digest of their tokens, most recently used last, within ``budget_bytes``."""

    def __init__(self, budget_bytes: int = DEFAULT_BUDGET_BYTES, size: int = CHUNK) -> None:
        self.budget_bytes = budget_bytes
        self.size = size
        self._states: OrderedDict[bytes, bytes] = OrderedDict()
        self._seen: OrderedDict[bytes, None] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    @property
    def bytes_held(self) -> int:
        return self._bytes

    def plan(self, tokens: Sequence[int]) -> Plan:
        digests = boundary_digests(tokens, self.size)
        with self._lock:
            resume = max((k for k, d in enumerate(digests, 1) if d in self._states), default=0)
            state = self._states[digests[resume - 1]] if resume else None
            if resume:
                self._states.move_to_end(digests[resume - 1])
                self.hits += 1
            else:
                self.misses += 1
            shared = max((k for k, d in enumerate(digests, 1) if d in self._seen), default=0)
            self._mark_seen(digests)
        keep = shared if shared > resume else None
        return Plan(
            resume_at=resume * self.size,
            state=state,
            keep_at=keep * self.size if keep else None,
            keep_key=digests[keep - 1] if keep else None,
        )

    def expect(self, prompts: Sequence[Sequence[int]]) -> None:
        """Prompts about to be read one after another: count the boundaries two of them share as seen."""
        counts = Counter(digest for tokens in prompts for digest in set(boundary_digests(tokens, self.size)))
        with self._lock:
            self._mark_seen([digest for digest, count in counts.items() if count > 1])

    def _mark_seen(self, digests: Sequence[bytes]) -> None:
        """Under the lock: remember ``digests`` as reached, most recent last, within the limit."""
        for digest in digests:
            self._seen[digest] = None
            self._seen.move_to_end(digest)
        while len(self._seen) > _SEEN_LIMIT:
            self._seen.popitem(last=False)

    def keep(self, key: bytes, state: bytes) -> None:
        if len(state) > self.budget_bytes:
            return
        with self._lock:
            if key in self._states:
                return
            self._states[key] = state
            self._bytes += len(state)
            while self._bytes > self.budget_bytes:
                _, dropped = self._states.popitem(last=False)
                self._bytes -= len(dropped)

    def clear(self) -> None:
        with self._lock:
            self._states.clear()
            self._seen.clear()
            self._bytes = 0
