"""Keeping the evaluated state of prompt prefixes that calls share, so the next call starts warm.

A judge's prompts share their start (system message, instructions, few-shot
examples) and differ where the answer under judgement goes. Evaluating that
start once and keeping its state saves most of a prefill.

A warm verdict must be the cold one, bit for bit, and an engine's results
depend on how a prompt is split into batches. So every prompt is evaluated
in canonical chunks, cut at the same positions from its start, warm or cold
alike: multiples of :data:`FINE` tokens below :data:`CHUNK`, multiples of
:data:`CHUNK` after it. States are kept only at those cuts, and a prompt
resumed from one goes on in the same chunks a cold run would. The finer cuts
at the start are there because a judge's fixed instructions are often
shorter than :data:`CHUNK` (the default answer prompt shares about 120
tokens from row to row): cut at 128 only, they would never be resumed. They
cost a cold prompt a little (smaller batches run slower), measured in
``make bench``.

Which boundary to keep is learnt, not guessed: a boundary is kept once a
second prompt reaches it with the same tokens, at the last such boundary of
that prompt, so one prompt costs at most one snapshot. Prompts that arrive
together (a pair's two orders, the first requests of a run) are announced
with :meth:`PrefixCache.expect`, so the first of them already keeps what the
others share, and they resume from it instead of all starting cold. States are kept in
an LRU bounded in bytes. This module decides; the engine snapshots and
restores (:class:`~localjudge._runtimes.llamacpp.LlamaCppRuntime`).
"""

from __future__ import annotations

import hashlib
import itertools
import threading
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._specs.options import DEFAULT_PREFIX_CACHE_BYTES

__all__ = ["CHUNK", "DEFAULT_BUDGET_BYTES", "FINE", "Plan", "PrefixCache", "boundaries", "chunks"]

CHUNK = 128  # tokens: past the first CHUNK, prompts are cut (and prefixes kept) at multiples of this
FINE = 32  # tokens: below CHUNK, at multiples of this
DEFAULT_BUDGET_BYTES = DEFAULT_PREFIX_CACHE_BYTES
_SEEN_LIMIT = 65_536  # boundary digests remembered from earlier prompts


def boundaries(end: int, size: int = CHUNK, fine: int = FINE) -> list[int]:
    """The canonical cuts strictly inside ``[0, end)``: every ``fine`` tokens below ``size``, then every ``size``."""
    return [*range(fine, min(size, end), fine), *range(size, end, size)]


def chunks(start: int, end: int, size: int = CHUNK, fine: int = FINE) -> list[tuple[int, int]]:
    """``[start, end)`` cut at the canonical cuts: the same cuts whatever ``start`` a run resumes from."""
    cuts = [start, *(cut for cut in boundaries(end, size, fine) if cut > start), end]
    return list(itertools.pairwise(cuts)) if end > start else []


def boundary_digests(tokens: Sequence[int], size: int = CHUNK, fine: int = FINE) -> list[tuple[int, bytes]]:
    """Each canonical cut with a token left after it (a resumed prompt needs one), and the digest of the tokens before it."""
    digest = hashlib.sha256()
    found = []
    array = np.asarray(tokens, dtype=np.int64)
    previous = 0
    for cut in boundaries(len(tokens), size, fine):
        digest.update(array[previous:cut].tobytes())
        found.append((cut, digest.copy().digest()))
        previous = cut
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

    def __init__(self, budget_bytes: int = DEFAULT_BUDGET_BYTES, size: int = CHUNK, fine: int = FINE) -> None:
        self.budget_bytes = budget_bytes
        self.size, self.fine = size, fine
        self._states: OrderedDict[bytes, bytes] = OrderedDict()
        self._seen: OrderedDict[bytes, None] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    @property
    def bytes_held(self) -> int:
        return self._bytes

    def plan(self, tokens: Sequence[int]) -> Plan:
        cuts = boundary_digests(tokens, self.size, self.fine)
        with self._lock:
            resume_at, key = max(((cut, d) for cut, d in cuts if d in self._states), default=(0, b""))
            state = self._states[key] if resume_at else None
            if resume_at:
                self._states.move_to_end(key)
                self.hits += 1
            else:
                self.misses += 1
            keep_at, keep_key = max(((cut, d) for cut, d in cuts if d in self._seen), default=(0, b""))
            self._mark_seen([d for _, d in cuts])
        keep = keep_at > resume_at
        return Plan(
            resume_at=resume_at,
            state=state,
            keep_at=keep_at if keep else None,
            keep_key=keep_key if keep else None,
        )

    def expect(self, prompts: Sequence[Sequence[int]]) -> None:
        """Prompts about to be read one after another: count the boundaries two of them share as seen."""
        counts = Counter(
            d for tokens in prompts for d in {d for _, d in boundary_digests(tokens, self.size, self.fine)}
        )
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
