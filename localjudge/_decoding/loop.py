"""The decode loop: sample where the grammar leaves a choice, batch-feed where it does not.

Engine-agnostic: :func:`generate` is a generation (:mod:`.steps`) that asks
for logits and never touches a runtime's state, so it runs alone
(:func:`decode`) or beside others in one batch (:mod:`.batcher`). Per step the loop

1. appends the forced text of the current state (no sampling; those tokens
   are evaluated together with the previously sampled one, in one batch),
2. stops when the grammar is complete (a final state admitting nothing but
   end-of-generation), without evaluating the trailing forced tokens,
3. otherwise evaluates what is pending and picks one token among the allowed.

Free text inside a JSON string is held to ``string_budget`` sampled tokens:
when it is spent and the string may close, the closing quote is forced and
the forced text after it (``,"score":``) follows. A rambling model thus still
reaches a verdict instead of running into ``max_tokens``. With
``close_loops`` the string also closes as soon as its last tokens repeat one
cycle verbatim (at least :data:`LOOP_MIN_TOKENS` tokens, three times or more):
greedy decoding of a small model never leaves such a loop by itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from typing_extensions import Required, TypedDict, Unpack

from .._runtimes.base import Runtime
from .._runtimes.vocabulary import TokenVocabulary
from ..errors import ModelError
from .guide import Guide
from .readout import DEFAULT_TOLERANCE, Readout, readout, value_probabilities
from .steps import Extend, Generation, Start, run

__all__ = ["LOOP_MIN_TOKENS", "DecodeResult", "GenerateOptions", "Sampler", "decode", "generate"]

LOOP_MIN_TOKENS = 12
LOOP_MAX_PERIOD = 64


@dataclass
class Sampler:
    """Greedy at temperature 0 (the default, so one input gives one verdict), else top-p sampling."""

    temperature: float = 0.0
    top_p: float = 1.0
    seed: int | None = None
    frequency_penalty: float = 0.0
    presence_penalty: float = 0.0
    _rng: np.random.Generator = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._rng = np.random.default_rng(self.seed)

    def penalise(self, logits: np.ndarray, counts: dict[int, int]) -> np.ndarray:
        """OpenAI's frequency/presence penalties over the tokens sampled so far."""
        if not counts or (not self.frequency_penalty and not self.presence_penalty):
            return logits
        ids = np.fromiter(counts.keys(), dtype=np.int64, count=len(counts))
        seen = np.fromiter(counts.values(), dtype=np.float32, count=len(counts))
        adjusted: np.ndarray = logits.copy()
        adjusted[ids] -= self.frequency_penalty * seen + self.presence_penalty
        return adjusted

    def pick(self, logits: np.ndarray, ids: np.ndarray | None, mask: np.ndarray | None) -> int:
        if ids is not None and ids.size == 1:
            return int(ids[0])
        if ids is not None and (mask is None or ids.size < logits.size // 8):
            candidates, values = ids, logits[ids]
        elif mask is not None:
            candidates, values = None, np.where(mask, logits, -np.inf)
        else:
            candidates, values = None, logits
        if not self.temperature or self.temperature <= 0:
            best = int(np.argmax(values))
        else:
            best = self._sample(values)
        return int(candidates[best]) if candidates is not None else best

    def _sample(self, values: np.ndarray) -> int:
        scaled = (values - np.max(values)) / self.temperature
        probs = np.exp(scaled.astype(np.float64))
        probs /= probs.sum()
        if self.top_p < 1.0:
            order = np.argsort(-probs)
            keep = np.cumsum(probs[order]) - probs[order] < self.top_p
            kept = order[keep]
            return int(kept[self._rng.choice(kept.size, p=probs[kept] / probs[kept].sum())])
        return int(self._rng.choice(probs.size, p=probs))


@dataclass
class DecodeResult:
    """What one generation produced, with the counts a benchmark needs."""

    text: str
    tokens: list[int]
    finish_reason: str  # "stop" or "length"
    sampled_tokens: int = 0
    forced_tokens: int = 0
    closed_by: str | None = None  # "budget" or "loop" when a free-text string was closed for us
    prefill_seconds: float = 0.0
    decode_seconds: float = 0.0
    prompt_tokens: int = 0
    readouts: dict[bytes, Readout] = field(default_factory=dict)  # marker -> the value after it
    readout_seconds: float = 0.0
    logprobs: list[dict[str, Any]] | None = None  # per output token, OpenAI's shape, when asked for

    def stats(self) -> dict[str, Any]:
        """The figures a response carries: what was sampled, what was forced, and how long each took."""
        return {
            "sampled_tokens": self.sampled_tokens,
            "forced_tokens": self.forced_tokens,
            "closed_by": self.closed_by,
            "prefill_seconds": round(self.prefill_seconds, 4),
            "decode_seconds": round(self.decode_seconds, 4),
            "readout_seconds": round(self.readout_seconds, 4),
        }


class GenerateOptions(TypedDict, total=False):
    """:func:`generate`'s keywords, which :func:`decode` passes on."""

    guide: Required[Guide | None]
    max_tokens: Required[int]
    sampler: Required[Sampler]
    string_budget: int | None
    close_loops: bool
    stop: Sequence[str]
    readout_after: Sequence[bytes]
    readout_tolerance: float
    logprobs: int | None
    clock: Callable[[], float]


def decode(
    runtime: Runtime, vocab: TokenVocabulary, prompt_tokens: Sequence[int], **options: Unpack[GenerateOptions]
) -> DecodeResult:
    """Generate after ``prompt_tokens`` on sequence 0 of ``runtime``, alone; the options are :func:`generate`'s."""
    return run(generate(runtime, vocab, prompt_tokens, **options), runtime)


def generate(
    runtime: Runtime,
    vocab: TokenVocabulary,
    prompt_tokens: Sequence[int],
    *,
    guide: Guide | None,
    max_tokens: int,
    sampler: Sampler,
    string_budget: int | None = 256,
    close_loops: bool = True,
    stop: Sequence[str] = (),
    readout_after: Sequence[bytes] = (),
    readout_tolerance: float = DEFAULT_TOLERANCE,
    logprobs: int | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> Generation[DecodeResult]:
    """Generate up to ``max_tokens`` tokens after ``prompt_tokens``; ``runtime`` only tokenizes.

    With a guide the output matches its regex, or is cut at ``max_tokens``
    (finish_reason "length"). Without one it is free text ending at an
    end-of-generation token or a stop string. The text the grammar forces at
    the start (``{"score":``) is read together with the prompt, in one batch.

    ``readout_after`` (such as ``[b'"score":']``) asks for the probabilities
    of the value that follows each marker (:mod:`.readout`). ``logprobs`` (the number of
    alternatives, 0 for none) asks for each output token's log-probability
    under the grammar, in OpenAI's shape.
    """
    started = clock()
    result = DecodeResult("", [], "length", prompt_tokens=len(prompt_tokens))
    decoding = _Decoding(
        runtime,
        vocab,
        sampler,
        max_tokens,
        string_budget,
        close_loops,
        [s.encode("utf-8") for s in stop if s],
        readout_after,
        readout_tolerance,
        logprobs,
        clock,
        result,
    )
    state, logits = yield from decoding.start(guide, prompt_tokens, started)
    if guide is None:
        yield from decoding.free(logits)
    else:
        yield from decoding.guided(guide, state, logits)
    return decoding.finish(started)


@dataclass(eq=False)
class _Decoding:
    """One call of :func:`generate`: its settings, the output so far, and the result being filled in.

    The loops (:meth:`guided`, :meth:`free`) run once per token, so each is
    kept whole, with what it reads bound to locals first: per token they make
    the calls the single loop made, plus :meth:`close_reason` inside a
    free-text string and :meth:`read_markers` until each marker is read (no
    difference measured in the loop's time per token).
    """

    runtime: Runtime
    vocab: TokenVocabulary
    sampler: Sampler
    max_tokens: int
    string_budget: int | None
    close_loops: bool
    stop_bytes: list[bytes]
    readout_after: Sequence[bytes]
    readout_tolerance: float
    logprobs: int | None
    clock: Callable[[], float]
    result: DecodeResult
    out: list[int] = field(default_factory=list)
    pending: list[int] = field(default_factory=list)  # taken, not yet evaluated
    text: bytearray = field(default_factory=bytearray)

    def start(
        self, guide: Guide | None, prompt_tokens: Sequence[int], started: float
    ) -> Generation[tuple[int, np.ndarray]]:
        """Read the prompt, and with it the text the grammar forces first; the state after it and the logits."""
        result, vocab = self.result, self.vocab
        state = guide.initial_state if guide is not None else 0
        opening = guide.forced(state, self.runtime.tokenize_output) if guide is not None else None
        if opening is not None and opening.tokens and len(opening.tokens) <= self.max_tokens:
            self.out += opening.tokens
            result.forced_tokens += len(opening.tokens)
            state = opening.end_state
            logits = yield Start([*prompt_tokens, *opening.tokens])
        else:
            logits = yield Start(list(prompt_tokens))
        result.prefill_seconds = self.clock() - started
        self.text += vocab.decode(self.out)
        if self.logprobs is not None:
            result.logprobs = [_forced_logprob(vocab, t) for t in self.out]
        return state, logits

    def take(self, tokens: Sequence[int], entry: dict[str, Any] | None = None) -> bool:
        """Append tokens (``entry``: a sampled token's logprob); False when max_tokens cut them short."""
        room = self.max_tokens - len(self.out)
        self.out.extend(tokens[:room])
        self.pending.extend(tokens[:room])
        self.text.extend(self.vocab.decode(tokens[:room]))
        result = self.result
        if result.logprobs is not None:
            result.logprobs += [entry] if entry is not None else [_forced_logprob(self.vocab, t) for t in tokens[:room]]
        return len(tokens) <= room

    def guided(self, guide: Guide, state: int, logits: np.ndarray) -> Generation[None]:
        """The loop under a grammar: forced text taken whole, a token sampled where the grammar leaves a choice."""
        result, out, pending, sampler, vocab = self.result, self.out, self.pending, self.sampler, self.vocab
        tokenize, stop_ids = self.runtime.tokenize_output, vocab.stop_set
        stretch: list[int] = []  # tokens sampled in the current free-text string
        counts: dict[int, int] = {}
        while True:
            forced = guide.forced(state, tokenize)
            if forced.tokens:
                result.forced_tokens += len(forced.tokens)
                if not self.take(forced.tokens):
                    return
                state, stretch = forced.end_state, []
            info = guide.info(state)
            if info.done:
                result.finish_reason = "stop"
                return
            if len(out) >= self.max_tokens:
                return
            if pending:
                logits = yield Extend(list(pending))
                pending.clear()
            if len(result.readouts) < len(self.readout_after):  # a marker not read yet
                yield from self.read_markers(guide, state, logits)
            scores = sampler.penalise(logits, counts)
            reason = self.close_reason(stretch) if info.text else None
            closing = guide.close_string(state, tokenize) if reason else None
            if closing is not None:
                result.forced_tokens += len(closing.tokens)
                result.closed_by = reason
                state, stretch = closing.end_state, []
                if not self.take(closing.tokens):
                    return
                continue
            token = sampler.pick(scores, info.ids, info.mask)
            if token in stop_ids:
                result.finish_reason = "stop"
                return
            result.sampled_tokens += 1
            counts[token] = counts.get(token, 0) + 1
            logprob = None if result.logprobs is None else self.logprob(scores, info.ids, token)
            self.take([token], logprob)
            if info.text:
                stretch.append(token)
            nxt = guide.advance(state, token)
            if nxt is None:  # the mask admitted it, so this means the index is inconsistent
                raise ModelError(f"Token {token} left the output grammar at state {state}", retryable=False)
            state = nxt

    def free(self, logits: np.ndarray) -> Generation[None]:
        """The loop without a grammar: free text until an end-of-generation token, a stop string or max_tokens."""
        result, out, pending, sampler, vocab = self.result, self.out, self.pending, self.sampler, self.vocab
        stop_ids, stop_bytes = vocab.stop_set, self.stop_bytes
        counts: dict[int, int] = {}
        while len(out) < self.max_tokens:
            if pending:
                logits = yield Extend(list(pending))
                pending.clear()
            scores = sampler.penalise(logits, counts)
            token = sampler.pick(scores, None, vocab.text_mask)
            if token in stop_ids:
                result.finish_reason = "stop"
                return
            result.sampled_tokens += 1
            counts[token] = counts.get(token, 0) + 1
            logprob = None if result.logprobs is None else self.logprob(scores, np.flatnonzero(vocab.text_mask), token)
            self.take([token], logprob)
            if stop_bytes and _cut_at_stop(out, vocab, stop_bytes) is not None:
                result.finish_reason = "stop"
                return

    def read_markers(self, guide: Guide, state: int, logits: np.ndarray) -> Generation[None]:
        """Read the value after each marker of ``readout_after`` the text now holds, once per marker."""
        result, text = self.result, self.text
        for marker in self.readout_after:
            at = -1 if marker in result.readouts else text.rfind(marker)
            if at >= 0:  # the value after it starts here
                readout_started = self.clock()
                result.readouts[marker] = yield from readout(
                    guide,
                    state,
                    logits,
                    prefix=bytes(text[at + len(marker) :]),
                    temperature=self.sampler.temperature,
                    tolerance=self.readout_tolerance,
                )
                result.readout_seconds += self.clock() - readout_started

    def close_reason(self, stretch: list[int]) -> str | None:
        """Why the free-text string being written must close now ("budget" or "loop"), or None."""
        if self.string_budget is not None and len(stretch) >= self.string_budget:
            return "budget"
        if self.close_loops and _loops(stretch):
            return "loop"
        return None

    def logprob(self, scores: np.ndarray, allowed: np.ndarray, token: int) -> dict[str, Any]:
        """The sampled token's logprob entry, in OpenAI's shape."""
        return _sampled_logprob(self.vocab, scores, allowed, token, self.sampler.temperature, self.logprobs or 0)

    def finish(self, started: float) -> DecodeResult:
        """The result: the text cut at the first stop string, and how long decoding took."""
        result, out = self.result, self.out
        data = self.vocab.decode(out)
        if self.stop_bytes:
            cut = _cut_at_stop(out, self.vocab, self.stop_bytes)
            if cut is not None:
                data = data[:cut]
                result.finish_reason = "stop"
        result.text = data.decode("utf-8", errors="replace")
        result.tokens = out
        result.decode_seconds = self.clock() - started - result.prefill_seconds
        return result


def _token_record(vocab: TokenVocabulary, token: int, logprob: float) -> dict[str, Any]:
    piece = vocab.pieces[token] or b""
    return {"token": piece.decode("utf-8", "replace"), "logprob": logprob, "bytes": list(piece)}


def _forced_logprob(vocab: TokenVocabulary, token: int) -> dict[str, Any]:
    """A token the grammar left no choice about: probability 1 under the grammar."""
    record = _token_record(vocab, token, 0.0)
    return {**record, "top_logprobs": [dict(record)]}


def _sampled_logprob(
    vocab: TokenVocabulary, logits: np.ndarray, allowed: np.ndarray, token: int, temperature: float, top: int
) -> dict[str, Any]:
    """The chosen token's log-probability among the allowed ones, and the ``top`` most likely of them."""
    probs = value_probabilities(logits, allowed, temperature)
    logs = np.log(np.maximum(probs, 1e-300))
    position = int(np.searchsorted(allowed, token))  # allowed ids are sorted
    best = np.argsort(-logs)[:top]
    record = _token_record(vocab, token, float(logs[position]))
    record["top_logprobs"] = [_token_record(vocab, int(allowed[i]), float(logs[i])) for i in best]
    return record


def _loops(tokens: list[int]) -> bool:
    """True when the tail of ``tokens`` is one cycle repeated (>= LOOP_MIN_TOKENS tokens, >= 3 times)."""
    n = len(tokens)
    if n < LOOP_MIN_TOKENS:
        return False
    for period in range(1, min(LOOP_MAX_PERIOD, n // 3) + 1):
        times = max(3, -(-LOOP_MIN_TOKENS // period))
        if period * times > n:
            continue
        cycle = tokens[n - period :]
        if all(tokens[n - (k + 1) * period : n - k * period] == cycle for k in range(1, times)):
            return True
    return False


def _cut_at_stop(tokens: list[int], vocab: TokenVocabulary, stops: list[bytes]) -> int | None:
    data = vocab.decode(tokens)
    hits = [i for i in (data.find(s) for s in stops) if i >= 0]
    return min(hits) if hits else None
