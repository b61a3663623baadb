"""A toy runtime for unit tests: logits drawn from a generator seeded by everything a sequence has read.

Every path thus has its own probabilities, as with a real model, and a
result computed twice (alone, batched, resumed) must come out the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from localjudge._runtimes.base import Group, Runtime
from localjudge._runtimes.vocabulary import TokenVocabulary

MULTI = [
    "true",
    "false",
    "tr",
    "ue",
    "fa",
    "lse",
    "t",
    "f",
    "0.",
    ".5",
    "5}",
    "1}",
    '"}',
    "pa",
    "ss",
    "fail",
    "un",
    "sure",
]
SINGLE = [chr(c) for c in range(32, 127) if chr(c) not in "\\"]
PIECES = [None, *sorted(set(SINGLE + MULTI))]  # token 0 is the end of generation
EOS = 0


class ToyRuntime(Runtime):
    """Logits drawn from a generator seeded by everything its sequence evaluated; records how it was called."""

    backend = "toy"

    def __init__(self, slots: int = 1, n_ctx: int = 10_000) -> None:
        super().__init__()
        self.slots = slots
        self.path = Path("toy")
        self.n_ctx = self.n_ctx_train = n_ctx
        self.n_vocab = len(PIECES)
        self.bos_id, self.add_bos = None, False
        self.template_metadata = {}
        self.vocab = TokenVocabulary([p.encode() if p else None for p in PIECES], eos_id=EOS, stop_ids=[EOS], key="toy")
        self.histories: dict[int, list[int]] = {}
        self.branch_calls = 0
        self.group_calls: list[list[Group]] = []  # each _evaluate_groups call's groups
        self._closed = False

    @staticmethod
    def logits_after(history: Sequence[int]) -> np.ndarray:
        rng = np.random.default_rng(abs(hash(tuple(history))) % (2**32))
        return (rng.standard_normal(len(PIECES)) * 2.0).astype(np.float32)

    def tokenize(self, text: str, *, special: bool) -> list[int]:
        return [PIECES.index(c) for c in text]

    def tokenize_fragment(self, data: bytes) -> list[int]:
        return [PIECES.index(chr(b)) for b in data]

    def token_text(self, token: int | None) -> str:
        return (PIECES[token] or "") if token else ""

    def _reset(self, seq: int) -> None:
        self.histories[seq] = []

    def _evaluate(self, tokens: Sequence[int], n_past: int, seq: int) -> np.ndarray:
        assert n_past == len(self.histories[seq])
        self.histories[seq] = [*self.histories[seq], *tokens]
        return self.logits_after(self.histories[seq])

    def _truncate(self, n_past: int, seq: int) -> None:
        del self.histories[seq][n_past:]

    def _branch(self, paths, n_past, seq):
        self.branch_calls += 1
        return super()._branch(paths, n_past, seq)

    def _evaluate_groups(self, groups):
        self.group_calls.append([group for group, _ in groups])
        return super()._evaluate_groups(groups)

    def load_info(self) -> dict[str, Any]:
        return {}

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        self._closed = True
