"""A model's vocabulary as the decoder sees it: the bytes each token id writes, and the tokens that stop."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from .. import _disk_cache as disk_cache

__all__ = ["TokenVocabulary", "load_vocabulary"]

_loaded: dict[str, TokenVocabulary] = {}
_lock = threading.Lock()


class TokenVocabulary:
    """Token id -> bytes for one model, plus the tokens that end a generation.

    ``pieces[i]`` is None for tokens a generation may never write (control and
    unused tokens, empty pieces); ``stop_ids`` are the end-of-generation tokens
    (EOS, end-of-turn), ``eos_id`` the one a token index treats as "done".
    ``key`` names the model, for caching what is derived from the vocabulary.
    """

    def __init__(self, pieces: Sequence[bytes | None], *, eos_id: int, stop_ids: Iterable[int], key: str) -> None:
        self.pieces = list(pieces)
        self.n_vocab = len(self.pieces)
        self.eos_id = int(eos_id)
        stops = set(stop_ids) | {self.eos_id}
        self.stop_ids = np.array(sorted(stops), dtype=np.int64)
        self.stop_set = frozenset(stops)
        self.key = key
        self.first_byte = np.full(self.n_vocab, -1, dtype=np.int16)
        self.single_byte = np.full(256, -1, dtype=np.int64)
        writable = np.zeros(self.n_vocab, dtype=bool)
        for token_id, piece in enumerate(self.pieces):
            if not piece or token_id in stops:
                continue
            writable[token_id] = True
            self.first_byte[token_id] = piece[0]
            if len(piece) == 1 and self.single_byte[piece[0]] < 0:
                self.single_byte[piece[0]] = token_id
        self.text_mask = writable.copy()
        self.text_mask[self.stop_ids] = True

    def decode(self, tokens: Iterable[int]) -> bytes:
        return b"".join(self.pieces[t] or b"" for t in tokens)


def load_vocabulary(
    key: str,
    n_vocab: int,
    read_pieces: Callable[[], list[bytes | None]],
    build: Callable[[list[bytes | None]], TokenVocabulary],
) -> TokenVocabulary:
    """One vocabulary per model per process; its pieces from the disk cache when sound, else read and stored.

    Reading a 262k vocabulary token by token takes seconds (ctypes calls, or a
    tokenizer's id -> token walk); the checked disk cache takes milliseconds.
    """
    with _lock:
        if key in _loaded:
            return _loaded[key]
    parts = ("pieces", key, str(n_vocab))
    pieces = disk_cache.load_pieces(parts, n_vocab)
    if pieces is None:
        pieces = read_pieces()
        disk_cache.store_pieces(parts, pieces)
    vocab = build(pieces)
    with _lock:
        return _loaded.setdefault(key, vocab)
