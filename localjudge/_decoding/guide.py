"""Token-level view of a regex: allowed-token masks and forced text per state.

An outlines-core ``Index`` maps (state, token) -> state for every token of the
model's vocabulary. On top of it this module caches, per state, the allowed
tokens as a numpy mask (a free-text state admits ~all of a 262k vocabulary, so
the mask is built once, never per step) and the *forced text*: the bytes the
regex admits as the only continuation, such as ``{"reasoning":"`` or
``","score":``. Forced text is fed to the model in one batch (prefill speed)
instead of being sampled one token at a time (decode speed).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from .._runtimes.vocabulary import TokenVocabulary
from ..errors import ModelError, SchemaTooLargeError
from .index_build import build_in_child, index_bytes, token_ids_by_piece
from .schema_limits import SCHEMA_LIMITS, estimated_states

__all__ = ["Guide", "TokenVocabulary", "build_index", "guide_for", "outlines_vocabulary"]

_INDEX_CACHE_SIZE = 32
_index_cache: OrderedDict[tuple[str, str], _Index] = OrderedDict()
_index_lock = threading.Lock()
_outlines_vocabularies: dict[str, object] = {}


def outlines_vocabulary(vocab: TokenVocabulary) -> object:
    """The outlines-core Vocabulary for ``vocab``, built once per model (~2 s for 262k tokens); only an Index reads it."""
    with _index_lock:
        cached = _outlines_vocabularies.get(vocab.key)
    if cached is not None:
        return cached
    from outlines_core import Vocabulary

    built = Vocabulary(vocab.eos_id, token_ids_by_piece(vocab))
    with _index_lock:
        return _outlines_vocabularies.setdefault(vocab.key, built)


def build_index(vocab: TokenVocabulary, regex: str) -> _Index:
    """The outlines-core Index for ``regex`` over ``vocab``, cached per (model, regex)."""
    key = (vocab.key, regex)
    with _index_lock:
        if key in _index_cache:
            _index_cache.move_to_end(key)
            return _index_cache[key]
    import outlines_core
    from outlines_core import Index

    from .. import _disk_cache as disk_cache

    parts = ("index", getattr(outlines_core, "__version__", _outlines_version()), vocab.key, regex)
    index: _Index | None = None
    data = disk_cache.load("index", parts)
    if data is not None:
        try:
            index = Index.from_binary(data)
        except Exception:
            index = None
    if index is None:
        try:
            if estimated_states(regex) > SCHEMA_LIMITS.in_process_states:  # not plainly small: bounded, elsewhere
                built = Index.from_binary(build_in_child(regex, vocab, SCHEMA_LIMITS))
            else:
                built = Index(regex, outlines_vocabulary(vocab))
        except SchemaTooLargeError:
            raise
        except Exception as exc:  # outlines-core raises plain ValueError/RuntimeError
            raise ModelError(f"Could not build the token index for the output grammar: {exc}") from exc
        disk_cache.store("index", parts, index_bytes(built))
        index = built
    with _index_lock:
        _index_cache[key] = index
        while len(_index_cache) > _INDEX_CACHE_SIZE:
            _index_cache.popitem(last=False)
    return index


def _outlines_version() -> str:
    from importlib.metadata import version

    return version("outlines-core")


@dataclass
class _StateInfo:
    mask: np.ndarray
    ids: np.ndarray
    done: bool
    text: bool


@dataclass
class Forced:
    tokens: tuple[int, ...]
    end_state: int


class _Index(Protocol):
    """What a guide reads of an outlines_core ``Index`` (the package ships no type information)."""

    def get_initial_state(self) -> int: ...
    def get_allowed_tokens(self, state: int) -> Iterable[int]: ...
    def is_final_state(self, state: int) -> bool: ...
    def get_next_state(self, state: int, token_id: int) -> int | None: ...


@dataclass
class Guide:
    """Per-state masks and forced continuations over one Index.

    Guides are shared by every client of one model file, so they hold no
    reference to a loaded model; the caller passes its tokenizer to ``forced``.
    """

    index: _Index
    vocab: TokenVocabulary
    _states: dict[int, _StateInfo] = field(default_factory=dict, repr=False)
    _forced: dict[int, Forced] = field(default_factory=dict, repr=False)
    _forced_text: dict[int, tuple[bytes, int]] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def initial_state(self) -> int:
        return self.index.get_initial_state()

    def info(self, state: int) -> _StateInfo:
        info = self._states.get(state)
        if info is None:
            allowed = np.fromiter(self.index.get_allowed_tokens(state), dtype=np.int64)
            mask = np.zeros(self.vocab.n_vocab, dtype=bool)
            mask[allowed[allowed < self.vocab.n_vocab]] = True
            final = bool(self.index.is_final_state(state))
            if final:
                mask[self.vocab.stop_ids] = True
            ids = np.flatnonzero(mask)
            done = final and bool(np.all(np.isin(ids, self.vocab.stop_ids)))
            text = ids.size > self.vocab.n_vocab // 4
            info = _StateInfo(mask=mask, ids=ids, done=done, text=text)
            self._states[state] = info
        return info

    def advance(self, state: int, token: int) -> int | None:
        return self.index.get_next_state(state, int(token))

    def close_string(self, state: int, tokenize: Callable[[bytes], list[int]] | None = None) -> Forced | None:
        """The closing quote plus the forced text after it, when the string may close here.

        Tokenized as one piece, so ``","score":`` reaches the model as the
        tokens it would have written itself.
        """
        quote = int(self.vocab.single_byte[ord('"')])
        nxt = self.advance(state, quote) if quote >= 0 else None
        if nxt is None:
            return None
        after = self.forced(nxt, tokenize)
        data = b'"' + self.vocab.decode(after.tokens)
        tokens = self._retokenize(state, data, after.end_state, tokenize)
        return Forced(tuple(tokens or (quote, *after.tokens)), after.end_state)

    def forced(self, state: int, tokenize: Callable[[bytes], list[int]] | None = None) -> Forced:
        """The tokens the regex leaves no choice about from ``state`` on (maybe none).

        ``tokenize`` turns the forced bytes into the model's own tokens, so the
        model sees them as it would have written them; if the index rejects
        that tokenization, single-byte tokens are used instead.
        """
        cached = self._forced.get(state)
        if cached is None:
            with self._lock:
                cached = self._forced.get(state) or self._compute_forced(state, tokenize)
                self._forced[state] = cached
        return cached

    def forced_text(self, state: int) -> tuple[bytes, int]:
        """The bytes the regex admits as the only continuation from ``state``, and the state after them.

        Text only: unlike :meth:`forced` it never chooses tokens, so it can be
        asked (by the readout) without deciding what the model will be fed.
        """
        found = self._forced_text.get(state)
        if found is None:
            forced = self._compute_forced(state, None)
            found = self._forced_text[state] = (self.vocab.decode(forced.tokens), forced.end_state)
        return found

    def _compute_forced(self, state: int, tokenize: Callable[[bytes], list[int]] | None) -> Forced:
        data = bytearray()
        byte_tokens: list[int] = []
        current = state
        while not self.index.is_final_state(current):
            info = self.info(current)
            firsts = np.unique(self.vocab.first_byte[info.ids])
            firsts = firsts[firsts >= 0]
            if firsts.size != 1:
                break
            token = int(self.vocab.single_byte[int(firsts[0])])
            nxt = self.advance(current, token) if token >= 0 else None
            if nxt is None:
                break
            data.append(int(firsts[0]))
            byte_tokens.append(token)
            current = nxt
        if not data:
            return Forced((), state)
        tokens = self._retokenize(state, bytes(data), current, tokenize)
        return Forced(tuple(tokens or byte_tokens), current)

    def _retokenize(
        self, state: int, data: bytes, end_state: int, tokenize: Callable[[bytes], list[int]] | None
    ) -> list[int] | None:
        """The model's own tokens for ``data`` if the index accepts them all, else None."""
        if tokenize is None:
            return None
        tokens = tokenize(data)
        if self.vocab.decode(tokens) != data:
            return None
        current = state
        for token in tokens:
            nxt = self.advance(current, token)
            if nxt is None:
                return None
            current = nxt
        return tokens if current == end_state else None


def guide_for(vocab: TokenVocabulary, regex: str) -> Guide:
    """A guide for ``regex``; guides (and their per-state caches) are shared per (model, regex)."""
    key = (vocab.key, regex)
    with _index_lock:
        guide = _guide_cache.get(key)
        if guide is not None:
            _guide_cache.move_to_end(key)
            return guide
    guide = Guide(build_index(vocab, regex), vocab)
    with _index_lock:
        guide = _guide_cache.setdefault(key, guide)
        while len(_guide_cache) > _INDEX_CACHE_SIZE:
            _guide_cache.popitem(last=False)
    return guide


_guide_cache: OrderedDict[tuple[str, str], Guide] = OrderedDict()
