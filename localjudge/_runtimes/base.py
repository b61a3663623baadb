"""The one contract every in-process engine meets: tokens in, logits out.

A runtime owns one loaded model and ``slots`` evaluation states (KV caches),
one per sequence in flight. The decode loop (:mod:`localjudge._decoding.loop`)
drives one sequence with ``start``, ``extend`` and ``branch``; the batcher
(:mod:`localjudge._decoding.batcher`) drives several with
``evaluate_together``, which an engine may run as one batch only where that
gives each sequence exactly the logits it would get alone. The local client
(:mod:`localjudge._clients.local`) adds chat templates and requests on top.
Everything an engine does not have to do differently (prompt tokenisation
with one BOS, the context check, refusing work after ``close``) lives here once.
"""

from __future__ import annotations

import abc
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar, NamedTuple

import numpy as np

from .._prompts.messages import Part
from .._wording import Message
from ..errors import ContextOverflowError, ModelError, UsageError
from .vocabulary import TokenVocabulary

__all__ = ["Group", "Runtime", "check_fits", "check_positive", "log_softmax_at", "refuse_what_cannot_fit"]


class Group(NamedTuple):
    """Tokens to evaluate after what sequence ``seq`` holds; ``keep=False`` forgets them afterwards (a probe)."""

    seq: int
    tokens: Sequence[int]
    keep: bool = True


class Runtime(abc.ABC):
    """One loaded model. Not thread-safe: hold ``lock`` around every evaluation, ``reading`` around tokenizing.

    The two are apart so that requests can be tokenized while others are
    evaluated (engines' tokenizers do not touch the evaluation state);
    ``close`` needs both.

    Sequences are numbered ``0 .. slots - 1``; each has its own evaluated
    tokens. Subclasses set, when loaded: ``slots`` (when more than 1), ``path``, ``n_ctx`` (the context in use),
    ``n_ctx_train``, ``n_vocab``, ``vocab``, ``bos_id``, ``add_bos`` and
    ``template_metadata`` (GGUF-style keys: ``general.architecture``, and
    ``tokenizer.chat_template`` when the model carries one).
    """

    backend: ClassVar[str] = "local"
    slots: int = 1
    path: Path
    n_ctx: int
    n_ctx_train: int
    n_vocab: int
    vocab: TokenVocabulary
    bos_id: int | None
    add_bos: bool
    template_metadata: dict[str, str]

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.reading = threading.RLock()
        self._n_past: dict[int, int] = {}  # sequence -> tokens evaluated

    # --- what each engine implements ---------------------------------------------------

    @abc.abstractmethod
    def tokenize(self, text: str, *, special: bool) -> list[int]:
        """Tokens for ``text``, no BOS; ``special`` lets the text spell special tokens."""

    @abc.abstractmethod
    def tokenize_fragment(self, data: bytes) -> list[int]:
        """Tokens for a piece of output text (no BOS, no special tokens); [] when it cannot."""

    @abc.abstractmethod
    def token_text(self, token: int | None) -> str:
        """The token as the tokenizer spells it, special tokens included (for chat templates)."""

    @abc.abstractmethod
    def _reset(self, seq: int) -> None:
        """Forget everything sequence ``seq`` evaluated."""

    @abc.abstractmethod
    def _evaluate(self, tokens: Sequence[int], n_past: int, seq: int) -> np.ndarray:
        """Evaluate ``tokens`` after the ``n_past`` that ``seq`` holds; the logits after the last one.

        The array must stay as it is after later evaluations (a copy, not a view of an engine's buffer).
        """

    def _truncate(self, n_past: int, seq: int) -> None:
        """Forget what ``seq`` evaluated after its first ``n_past`` tokens (for the default ``_branch``)."""
        raise NotImplementedError(f"{type(self).__name__} implements neither _truncate nor _branch")

    def _branch(self, paths: Sequence[Sequence[int]], n_past: int, seq: int) -> list[np.ndarray]:
        """Logits after each path, evaluated one after another; engines that can do better override this."""
        found = []
        for path in paths:
            found.append(self._evaluate(path, n_past, seq))
            self._truncate(n_past, seq)
        return found

    def _read_logprobs(self, tokens: Sequence[int], n_past: int, seq: int) -> list[float]:
        """Evaluate all but the last of ``tokens`` after the ``n_past`` that ``seq`` holds, keeping them; the
        log-probability of each token after the first, given those before it.

        One token at a time here; engines that can read every position's logits in one pass override this.
        """
        found = []
        for i in range(len(tokens) - 1):
            found.append(log_softmax_at(self._evaluate(tokens[i : i + 1], n_past + i, seq), tokens[i + 1]))
        return found

    def _evaluate_groups(self, groups: Sequence[tuple[Group, int]]) -> list[np.ndarray]:
        """Each group (with its sequence's ``n_past``) one after another; engines that batch override this.

        An override must give each group, bit for bit, the logits it gets evaluated alone.
        """
        return [
            self._evaluate(group.tokens, n_past, group.seq)
            if group.keep
            else self._branch([group.tokens], n_past, group.seq)[0]
            for group, n_past in groups
        ]

    @abc.abstractmethod
    def load_info(self) -> dict[str, Any]:
        """How the model was loaded, for ``localjudge doctor``."""

    @property
    @abc.abstractmethod
    def closed(self) -> bool: ...

    @abc.abstractmethod
    def close(self) -> None:
        """Free the model; later calls raise ModelError."""

    # --- shared --------------------------------------------------------------------------

    def require_open(self) -> None:
        if self.closed:
            raise ModelError(f"The model {self.path} was closed", backend=self.backend, retryable=False)

    def start(self, prompt_tokens: Sequence[int], seq: int = 0) -> np.ndarray:
        """Evaluate a fresh prompt in sequence ``seq``; return the logits after its last token."""
        self.require_open()
        self._check_seq(seq)
        tokens = list(prompt_tokens)
        if not tokens:
            raise ValueError("a prompt needs at least one token")
        self._refuse_past_context(0, len(tokens))
        self._n_past[seq] = 0
        logits = self._prefill(tokens, seq)
        self._n_past[seq] = len(tokens)
        return logits

    def score(self, prompt_tokens: Sequence[int], reply_tokens: Sequence[int], seq: int = 0) -> list[float]:
        """The log-probability of each reply token after the prompt and the reply tokens before it.

        For asking how likely the model finds a given answer, with nothing
        sampled. ``seq`` holds the prompt and the reply afterwards, less the
        reply's last token, whose logits nothing needs.
        """
        reply = list(reply_tokens)
        if not reply:
            raise ValueError("a reply to score needs at least one token")
        self._refuse_past_context(0, len(prompt_tokens) + len(reply))
        first = log_softmax_at(self.start(prompt_tokens, seq), reply[0])
        n_past = self._n_past[seq]
        rest = self._read_logprobs(reply, n_past, seq) if len(reply) > 1 else []
        self._n_past[seq] = n_past + len(reply) - 1
        return [first, *rest]

    def expect(self, prompts: Sequence[Sequence[int]]) -> None:
        """Prompts about to be started one after another; engines that keep evaluated prefixes listen."""
        return None

    def _prefill(self, tokens: list[int], seq: int) -> np.ndarray:
        """A fresh prompt's logits; engines that keep evaluated prefixes override this."""
        self._reset(seq)
        return self._evaluate(tokens, 0, seq)

    def extend(self, tokens: Sequence[int], seq: int = 0) -> np.ndarray:
        """Evaluate more tokens after what ``seq`` holds; return the last logits."""
        return self.evaluate_together([Group(seq, tokens)])[0]

    def evaluate_together(self, groups: Sequence[Group]) -> list[np.ndarray]:
        """The logits after each group, each evaluated after what its sequence holds (at most one group per sequence).

        Groups with ``keep`` stay evaluated; the others are forgotten again.
        Each group's logits are what it would get evaluated alone.
        """
        self.require_open()
        if len({group.seq for group in groups}) < len(groups):
            raise ValueError("evaluate_together takes at most one group per sequence")
        placed = []
        for group in groups:
            self._check_seq(group.seq)
            if not group.tokens:
                raise ValueError("a group of tokens to evaluate must not be empty")
            n_past = self._n_past.get(group.seq, 0)
            self._refuse_past_context(n_past, len(group.tokens))
            placed.append((Group(group.seq, list(group.tokens), group.keep), n_past))
        logits = self._evaluate_groups(placed) if placed else []
        for group, n_past in placed:
            if group.keep:
                self._n_past[group.seq] = n_past + len(group.tokens)
        return logits

    def _refuse_past_context(self, n_past: int, n_more: int) -> None:
        if n_past + n_more > self.n_ctx:
            raise ContextOverflowError(f"Generation ran past the context of {self.n_ctx} tokens", backend=self.backend)

    def _check_seq(self, seq: int) -> None:
        if not 0 <= seq < self.slots:
            raise ValueError(f"sequence {seq} is not one of this runtime's {self.slots} slots")

    def branch(self, paths: Sequence[Sequence[int]], seq: int = 0) -> list[np.ndarray]:
        """The logits after each path of tokens, each evaluated from the current state of ``seq``, which is left as it was.

        For reading several continuations (the probability of every allowed
        value); no path may be empty.
        """
        self.require_open()
        self._check_seq(seq)
        if any(not path for path in paths):
            raise ValueError("branch paths must not be empty")
        n_past = self._n_past.get(seq, 0)
        self._refuse_past_context(n_past, max((len(path) for path in paths), default=0))
        return self._branch(paths, n_past, seq) if paths else []

    def prompt_tokens(self, prompt: str | Sequence[Part]) -> list[int]:
        """Tokens for a rendered chat prompt, with exactly one BOS when the model wants one.

        ``prompt`` is a string (all markup) or ``(text, is_markup)`` parts from
        :meth:`ChatTemplate.render_parts`: special tokens are parsed in markup
        only, never in message text.
        """
        parts = [(prompt, True)] if isinstance(prompt, str) else prompt
        refuse_what_cannot_fit(
            [text for text, _ in parts], lambda text: len(self.tokenize(text, special=False)), self.n_ctx, self.backend
        )
        tokens = [t for text, markup in parts for t in self.tokenize(text, special=markup)]
        if self.add_bos and self.bos_id is not None and self.bos_id >= 0:
            while len(tokens) > 1 and tokens[0] == self.bos_id and tokens[1] == self.bos_id:
                tokens.pop(0)
            if not tokens or tokens[0] != self.bos_id:
                tokens.insert(0, self.bos_id)
        return tokens

    def tokenize_output(self, data: bytes) -> list[int]:
        """``tokenize_fragment`` under ``reading``: for decoding, which runs while other requests are tokenized."""
        with self.reading:
            return self.tokenize_fragment(data)

    def spells_special(self, text: str) -> bool:
        """Whether ``text``, read as markup, would contain a special token of the model."""
        return self.tokenize(text, special=True) != self.tokenize(text, special=False)

    def check_fits(self, n_prompt: int, max_tokens: int, *, max_tokens_given: bool = True) -> None:
        check_fits(n_prompt, max_tokens, self.n_ctx, self.n_ctx_train, backend=self.backend, given=max_tokens_given)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.path)!r}, n_ctx={self.n_ctx})"


def log_softmax_at(logits: np.ndarray, token: int) -> float:
    """log p(token) under ``logits``, computed stably (in float64)."""
    row = np.asarray(logits, dtype=np.float64)
    top = row.max()
    return float(row[token] - top - np.log(np.exp(row - top).sum()))


def check_fits(n_prompt: int, max_tokens: int, n_ctx: int, n_ctx_train: int, *, backend: str, given: bool) -> None:
    """Refuse before decoding when prompt plus answer cannot fit; the advice fits how the limit was set.

    ``given`` says whether the caller chose ``max_tokens`` (then lowering it
    helps) or it was filled in for them (then only the prompt or the context can change).
    """
    if n_prompt + max_tokens <= n_ctx:
        return
    larger = Message(
        "load the model with a larger {n_ctx:n_ctx} (it was trained for {trained})"
        if n_ctx < n_ctx_train
        else "use a model with a longer context (this one was trained for {trained})",
        trained=n_ctx_train,
    )
    if given:
        template = (
            "The prompt has {prompt} tokens and max_tokens is {answer}: {total} tokens do not fit the context "
            "of {size}. Shorten the prompt, lower {max_tokens:max_tokens}, or {larger}."
        )
    else:
        template = (
            "The prompt has {prompt} tokens, which leaves no room for an answer in the context of {size}. "
            "Shorten the prompt, or {larger}."
        )
    values = {"prompt": n_prompt, "answer": max_tokens, "total": n_prompt + max_tokens, "size": n_ctx}
    raise ContextOverflowError(Message(template, larger=larger, **values), backend=backend)


def check_positive(**values: int | None) -> None:
    """Sizes and counts a caller gave (None: not given) must be positive integers."""
    for name, value in values.items():
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise UsageError(f"{name} must be a positive integer, got {value!r}")


#: text longer than this many characters is counted in pieces before it is tokenized whole
LONG_TEXT = 16_384
_PIECE = 4_096
_MERGE_SLACK = 64  # tokens one cut between pieces can cost at most (a piece of the vocabulary spans the cut)


def refuse_what_cannot_fit(texts: Sequence[str], count: Callable[[str], int], n_ctx: int, backend: str) -> None:
    """Refuse, in time linear in its length, a prompt that cannot fit ``n_ctx`` tokens.

    Some tokenizers take time quadratic in a text's token count (llama.cpp's
    Gemma tokenizer: 20,000 tokens of "x\n" in 1 s, 80,000 in 14 s), and text
    under judgement is untrusted. Counted piece by piece, a long text gives
    a lower bound on its tokens; past the context, it is refused before the
    exact, whole tokenization.
    """
    if not n_ctx or sum(len(text) for text in texts) <= LONG_TEXT:
        return
    at_least = 0
    for text in texts:
        pieces = [text[i : i + _PIECE] for i in range(0, len(text), _PIECE)]
        at_least += sum(count(piece) for piece in pieces) - (len(pieces) - 1) * _MERGE_SLACK
        if at_least > n_ctx:
            raise ContextOverflowError(
                Message(
                    "The prompt has at least {at_least} tokens, more than the context of {size} holds. "
                    "Shorten the text being judged, or load the model with a larger {n_ctx:n_ctx}.",
                    at_least=at_least,
                    size=n_ctx,
                ),
                backend=backend,
            )
