"""What every runtime shares: one BOS, markup-only special tokens, and the context check's advice.

How runtimes evaluate (batched steps, extend, branch, close, the context) is in test_runtime_contract.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from localjudge._runtimes.base import Runtime, check_fits
from localjudge._runtimes.vocabulary import TokenVocabulary
from localjudge.errors import ContextOverflowError

BOS = 1


class CharRuntime(Runtime):
    """One token per character (ids = code points); "<s>" is BOS when special tokens are parsed."""

    backend = "chars"

    def __init__(self, *, add_bos: bool = True) -> None:
        super().__init__()
        self.path = Path("chars")
        self.n_ctx, self.n_ctx_train, self.n_vocab = 64, 128, 256
        self.bos_id, self.add_bos = BOS, add_bos
        self.vocab = TokenVocabulary([bytes([i]) for i in range(256)], eos_id=0, stop_ids=[0], key="chars")
        self.template_metadata = {}
        self._closed = False

    def tokenize(self, text: str, *, special: bool) -> list[int]:
        if special and text.startswith("<s>"):
            return [BOS, *self.tokenize(text[3:], special=special)]
        return [ord(c) for c in text]

    def tokenize_fragment(self, data: bytes) -> list[int]:
        return list(data)

    def token_text(self, token: int | None) -> str:
        return "<s>" if token == BOS else chr(token or 0)

    def _reset(self, seq: int) -> None:
        self.evaluated: list[int] = []

    def _evaluate(self, tokens: Sequence[int], n_past: int, seq: int) -> np.ndarray:
        assert n_past == len(self.evaluated)
        self.evaluated += tokens
        logits = np.zeros(self.n_vocab, dtype=np.float32)
        logits[sum(self.evaluated) % self.n_vocab] = 1.0  # depends on everything evaluated
        return logits

    def load_info(self) -> dict[str, Any]:
        return {}

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        self._closed = True


def test_exactly_one_bos_whether_the_template_writes_it_or_not():
    runtime = CharRuntime()
    assert runtime.prompt_tokens([("<s>", True), ("ab", False)]) == [BOS, ord("a"), ord("b")]
    assert runtime.prompt_tokens([("ab", False)]) == [BOS, ord("a"), ord("b")]
    assert runtime.prompt_tokens("<s><s>ab") == [BOS, ord("a"), ord("b")]
    assert CharRuntime(add_bos=False).prompt_tokens([("ab", False)]) == [ord("a"), ord("b")]


def test_message_text_cannot_spell_a_special_token():
    runtime = CharRuntime()
    tokens = runtime.prompt_tokens([("<s>", True), ("<s>x", False)])
    assert tokens.count(BOS) == 1
    assert tokens[1:] == [ord(c) for c in "<s>x"]


def test_overflow_advice_names_max_tokens_only_when_the_caller_chose_it():
    with pytest.raises(ContextOverflowError) as given:
        check_fits(60, 10, 64, 128, backend="x", given=True)
    assert "lower max_tokens, or load the model with a larger n_ctx (it was" in str(given.value)
    shown = given.value.render({"max_tokens": "--max-tokens", "n_ctx": "--n-ctx"})
    assert "lower --max-tokens, or load the model with a larger --n-ctx (it was" in shown
    with pytest.raises(ContextOverflowError) as chosen:
        check_fits(64, 1, 64, 128, backend="x", given=False)
    assert "max_tokens" not in str(chosen.value) and "leaves no room" in str(chosen.value)
    with pytest.raises(ContextOverflowError, match="longer context"):
        check_fits(200, 1, 128, 128, backend="x", given=False)
    check_fits(54, 10, 64, 128, backend="x", given=True)  # fits exactly


def test_a_long_text_is_counted_in_pieces_and_refused_before_the_whole_count():
    from localjudge._runtimes.base import LONG_TEXT, refuse_what_cannot_fit

    whole = []

    def count(text: str) -> int:
        whole.append(len(text))
        return len(text)  # one token per character

    refuse_what_cannot_fit(["a" * LONG_TEXT], count, 100, "x")  # short enough: not even counted
    assert whole == []
    with pytest.raises(ContextOverflowError, match="at least"):
        refuse_what_cannot_fit(["a" * 100_000], count, 20_000, "x")
    assert max(whole) <= 4_096  # never the whole text at once
    refuse_what_cannot_fit(["a" * 100_000], count, 200_000, "x")  # fits: left to the exact count
