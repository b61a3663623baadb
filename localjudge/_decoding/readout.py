"""The probability of every value the grammar allows at one point of the answer: the readout.

Under a grammar, the probability of a value (``true``, ``0.5``, ``"pass"``)
is the sum over the token paths that spell it of the product of each step's
probability, each renormalised over the tokens the grammar allows at that
step. A value can take several paths (``false``, or ``f`` + ``alse``), and a
partial token can carry real mass (``f`` took 4% of the default model's
verdict once), so the paths are walked as a tree. A path whose value is
already decided (``f`` can only become ``false``), and steps where the
grammar allows one token, cost nothing; the logits of the other branching
nodes of a level are probed in one step (:class:`~.steps.Probe`).

Reading every path to the last digit would cost more than the verdict, so
the walk reads the paths that could change the result most first, and stops
once what is left could change it by less than ``tolerance``: a path's
probability, or for a number its probability times the width of the
interval its digits still allow. A number left there counts at the digits it
has (``0.7`` for 0.7 to 0.8; the expected value moves by less than the
tolerance); any other path left unread is reported as unexplored
probability, and the probabilities are normalised over the rest.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from typing_extensions import TypedDict, Unpack

from .._runtimes.base import Runtime
from .._specs.options import DEFAULT_READOUT_TOLERANCE
from .guide import Guide
from .steps import Generation, Probe, run

__all__ = [
    "DEFAULT_TOLERANCE",
    "Readout",
    "ReadoutOptions",
    "read_values",
    "readout",
    "readout_fields",
    "value_probabilities",
]

DEFAULT_TOLERANCE = DEFAULT_READOUT_TOLERANCE
MAX_ROUNDS = 6
MAX_BRANCHES = 16  # nodes whose logits are read in one round
_DECODER = json.JSONDecoder()
# Bytes that can continue a JSON number or literal: after them a value is not finished yet.
_CONTINUES_VALUE = frozenset(b"0123456789.eE+-abcdefghijklmnopqrstuvwxyz")
_CONTINUES_VALUE_CHARS = frozenset(chr(b) for b in _CONTINUES_VALUE)


@dataclass
class Readout:
    """The values the grammar allowed, with their probabilities (normalised over what was explored)."""

    probabilities: dict[str, float]
    unexplored: float = 0.0  # probability mass left unexplored, below the tolerance
    expected: float | None = None  # numeric values: the expected value
    evaluations: int = 0  # paths whose logits were read

    def metadata(self) -> dict[str, Any]:
        found: dict[str, Any] = {"probabilities": self.probabilities, "probability_unexplored": self.unexplored}
        if self.expected is not None:
            found["expected_score"] = self.expected
        return found


def readout_fields(schema: Mapping[str, Any] | None) -> dict[str, bytes]:
    """The top-level properties whose values a readout can weigh (booleans, enums, numbers), with their markers.

    The marker is the property's key as the compact answer spells it, ``"score":``.
    """
    properties = (schema or {}).get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(properties, Mapping):
        return {}
    found = {}
    for name, sub in properties.items():
        kinds = sub.get("type") if isinstance(sub, Mapping) else None
        kinds = [kinds] if isinstance(kinds, str) else list(kinds or [])
        if isinstance(sub, Mapping) and (
            "enum" in sub or "const" in sub or {"boolean", "number", "integer"} & set(kinds)
        ):
            found[name] = (json.dumps(name, ensure_ascii=False) + ":").encode("utf-8")
    return found


@dataclass
class _Node:
    tokens: tuple[int, ...]
    text: bytes
    state: int
    logprob: float


def value_probabilities(logits: np.ndarray, ids: np.ndarray, temperature: float) -> np.ndarray:
    """Each allowed token's probability, renormalised over the allowed ones (temperature 0 reads as 1)."""
    scale = temperature if temperature and temperature > 0 else 1.0
    chosen = logits[ids].astype(np.float64) / scale
    chosen -= chosen.max()
    weights = np.exp(chosen)
    probabilities: np.ndarray = weights / weights.sum()
    return probabilities


class ReadoutOptions(TypedDict, total=False):
    """:func:`readout`'s keywords, which :func:`read_values` passes on."""

    prefix: bytes
    temperature: float
    tolerance: float


def read_values(
    runtime: Runtime, guide: Guide, state: int, logits: np.ndarray, *, seq: int = 0, **options: Unpack[ReadoutOptions]
) -> Readout:
    """:func:`readout` run alone on sequence ``seq`` of ``runtime``, which is left where it was."""
    return run(readout(guide, state, logits, **options), runtime, seq)


def readout(
    guide: Guide,
    state: int,
    logits: np.ndarray,
    *,
    prefix: bytes = b"",
    temperature: float = 0.0,
    tolerance: float = DEFAULT_TOLERANCE,
) -> Generation[Readout]:
    """The readout of the value that starts at ``state`` (``prefix``: its bytes already forced, such as a quote).

    A generation (:mod:`.steps`) from the sequence's state at ``state``,
    whose last logits are ``logits``; it probes, and leaves the state as it was.
    """
    complete: dict[bytes, float] = {}
    unexplored: list[tuple[bytes, float, float | None]] = []  # text, probability, how far a number can move
    approximate: dict[bytes, float] = {}  # numbers not read to the end: how far they could still move
    pending = [_Node((), prefix, state, 0.0)]
    known: dict[tuple[int, ...], np.ndarray] = {(): logits}
    evaluations = 0
    for round_number in range(MAX_ROUNDS + 1):
        waiting: list[_Node] = []
        for node in pending:
            _expand(node, known[node.tokens], guide, temperature, complete, waiting)
        # Read the nodes that could move the answer most, until what stays unread could move it less than
        # the tolerance: a node's weight is its probability, times the width of the interval its digits
        # still allow for a number (0.3... can only move an expected value by 0.1 of its mass).
        weights = {id(n): _weight(n, guide) for n in waiting}
        waiting.sort(key=lambda n: -weights[id(n)])
        left = sum(weights.values())
        chosen: list[_Node] = []
        for node in waiting:
            if left <= tolerance or len(chosen) >= MAX_BRANCHES or round_number == MAX_ROUNDS:
                width = _width(node.text, node.state, guide)
                if width is not None and (width == 0.0 or _has_fraction_digits(node.text)):
                    text = node.text.rstrip(b".")  # a number read to the digits that matter
                    _finish(text, node.logprob, complete)
                    approximate[text] = max(approximate.get(text, 0.0), width)
                else:
                    unexplored.append((node.text, math.exp(node.logprob), width))
                continue
            chosen.append(node)
            left -= weights[id(node)]
        if not chosen:
            break
        probed = yield Probe([list(n.tokens) for n in chosen])
        for node, branch_logits in zip(chosen, probed, strict=True):
            known[node.tokens] = branch_logits
        evaluations += len(chosen)
        pending = chosen
    complete = _merge_equal_numbers(complete)
    total = sum(complete.values())
    probabilities = {text.decode("utf-8", "replace"): p / total for text, p in complete.items()} if total else {}
    missing = sum((p for _, p, _ in unexplored), 0.0)
    return Readout(
        probabilities=dict(sorted(probabilities.items(), key=lambda item: -item[1])),
        unexplored=missing,
        expected=_expected(complete, approximate, unexplored),
        evaluations=evaluations,
    )


def _expand(
    node: _Node,
    logits: np.ndarray,
    guide: Guide,
    temperature: float,
    complete: dict[bytes, float],
    waiting: list[_Node],
) -> None:
    """Follow every allowed token from ``node``: finished values are counted; the rest wait for their logits.

    Steps where the grammar allows a single token have probability 1 and are
    followed at once, without reading logits.
    """
    vocab = guide.vocab
    info = guide.info(node.state)
    probs = value_probabilities(logits, info.ids, temperature)
    stops = vocab.stop_set
    for token, p in zip(info.ids.tolist(), probs.tolist(), strict=True):
        if p <= 0.0:
            continue
        logprob = node.logprob + math.log(p)
        if token in stops:
            _finish(node.text, logprob, complete)
            continue
        text, tokens, state = (
            node.text + (vocab.pieces[token] or b""),
            (*node.tokens, token),
            guide.advance(node.state, token),
        )
        while state is not None:
            tail, after = guide.forced_text(state)  # what the grammar writes next no matter what, such as "alse}"
            end = _value_end(text + tail, after, guide)
            if end is not None:
                _finish((text + tail)[:end], logprob, complete)
                break
            ids = guide.info(state).ids
            if ids.size != 1:
                waiting.append(_Node(tokens, text, state, logprob))
                break
            only = int(ids[0])  # one allowed token: probability 1 under the grammar
            if only in stops:
                _finish(text, logprob, complete)
                break
            text, tokens, state = text + (vocab.pieces[only] or b""), (*tokens, only), guide.advance(state, only)


def _weight(node: _Node, guide: Guide) -> float:
    """How much reading this node could change the readout: its mass, or for a number its mass times how
    far the grammar still lets the number move (nothing for 1 on its way to 1.000)."""
    mass = math.exp(node.logprob)
    width = _width(node.text, node.state, guide)
    return mass if width is None else mass * min(width, 1.0) / 2  # counted at the middle: off by half at most


def _width(text: bytes, state: int, guide: Guide) -> float | None:
    """How far a number written as ``text`` can still move under the grammar; None when it is no number yet.

    Walks the grammar byte by byte from ``state`` (a few steps: a number has few digits left) to see which
    digits can still come, before and after the point.
    """
    if _number(text.rstrip(b".")) is None:
        return None
    fraction = len(text.rsplit(b".", 1)[1]) if b"." in text else None
    single = guide.vocab.single_byte
    stack = [(state, fraction)]
    seen = set()
    widest = 0.0
    while stack:
        current, position = stack.pop()
        if (current, position) in seen or (position or 0) > 8:
            continue
        seen.add((current, position))
        for byte in b"0123456789.":
            token = int(single[byte])
            nxt = guide.advance(current, token) if token >= 0 else None
            if nxt is None:
                continue
            if byte == ord("."):
                stack.append((nxt, 0))
            elif position is None:
                return 1.0  # the whole part can still grow: it could move by any amount
            else:
                if byte != ord("0"):
                    widest = max(widest, 10.0**-position)
                stack.append((nxt, position + 1))
    return widest


def _finish(text: bytes, logprob: float, complete: dict[bytes, float]) -> None:
    complete[text] = complete.get(text, 0.0) + math.exp(logprob)


def _value_end(text: bytes, state: int, guide: Guide) -> int | None:
    """Where the value in ``text`` ends, once nothing more can be added to it; None while it can still grow."""
    try:
        decoded = text.decode("utf-8")
    except UnicodeDecodeError:
        return None
    try:
        _, end = _DECODER.raw_decode(decoded)
    except ValueError:
        return None
    if end < len(decoded):  # "1." read as 1 is a number still being written; "1}" is a finished 1
        return None if decoded[end] in _CONTINUES_VALUE_CHARS else len(decoded[:end].encode("utf-8"))
    if decoded.endswith(('"', "}", "]")):
        return len(text)  # it closed itself
    firsts = guide.vocab.first_byte[guide.info(state).ids]
    if any(int(b) in _CONTINUES_VALUE for b in np.unique(firsts[firsts >= 0])):
        return None
    return len(text)


def _has_fraction_digits(text: bytes) -> bool:
    return _number(text) is not None and b"." in text and text.rsplit(b".", 1)[1][:1].isdigit()


def _merge_equal_numbers(complete: dict[bytes, float]) -> dict[bytes, float]:
    """``1.0`` and ``1.00`` are one value: summed under its likeliest spelling."""
    spellings: dict[float, bytes] = {}
    merged: dict[bytes, float] = {}
    for text, p in sorted(complete.items(), key=lambda item: -item[1]):
        value = _number(text)
        key = spellings.setdefault(value, text) if value is not None else text
        merged[key] = merged.get(key, 0.0) + p
    return merged


def _expected(
    complete: dict[bytes, float], approximate: dict[bytes, float], unexplored: list[tuple[bytes, float, float | None]]
) -> float | None:
    """Σ p·v over numeric values; a number not read to the end counts at the middle of how far it can move."""
    total = weighted = 0.0
    for text, p in complete.items():
        value = _number(text)
        if value is None:
            return None
        total, weighted = total + p, weighted + p * (value + min(approximate.get(text, 0.0), 1.0) / 2)
    for text, p, width in unexplored:
        low = _number(text.rstrip(b"."))
        if low is None or width is None:
            continue
        total, weighted = total + p, weighted + p * (low + min(width, 1.0) / 2)
    return weighted / total if total else None


def _number(text: bytes) -> float | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
