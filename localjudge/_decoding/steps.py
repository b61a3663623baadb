"""What a generation asks of a runtime, one step at a time.

A generation (the decode loop, the readout) is a generator: it yields a
step and is sent the logits it asked for, until it returns its result. It
never touches the runtime's state itself, so whoever runs the steps decides
how they are batched: :func:`run` runs one generation alone on one
sequence, the :class:`~localjudge._decoding.batcher.Batcher` several side by
side. Both give a generation the same logits.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, Union

import numpy as np

from .._runtimes.base import Runtime

__all__ = ["FRESH", "Answer", "Extend", "Generation", "Probe", "Score", "Start", "Step", "perform", "run"]

T = TypeVar("T")


@dataclass(frozen=True)
class Start:
    """Evaluate a fresh prompt (what the sequence held is forgotten); sent back: the logits after it."""

    tokens: Sequence[int]


@dataclass(frozen=True)
class Extend:
    """Evaluate tokens after what the sequence holds, and keep them; sent back: the logits after them."""

    tokens: Sequence[int]


@dataclass(frozen=True)
class Probe:
    """The logits after each path, each from the sequence's current state, which stays as it was."""

    paths: Sequence[Sequence[int]]


@dataclass(frozen=True)
class Score:
    """Evaluate a fresh prompt and a reply after it; sent back: the log-probability of each reply token."""

    prompt: Sequence[int]
    reply: Sequence[int]

    @property
    def tokens(self) -> list[int]:
        """Everything it reads, as a :class:`Start` would (for the prefix cache)."""
        return [*self.prompt, *self.reply]


#: the steps that begin with a fresh prompt
FRESH = (Start, Score)
Step = Union[Start, Extend, Probe, Score]
#: what a step is answered with: logits (Start, Extend), logits per path (Probe), log-probabilities (Score)
Answer = Union[np.ndarray, list[np.ndarray], list[float]]
#: a generation is sent each step's answer; typed Any there, as each kind of step gets its own kind of answer
Generation = Generator[Step, Any, T]


def perform(step: Step, runtime: Runtime, seq: int = 0) -> Answer:
    """Run one step on sequence ``seq`` of ``runtime``."""
    if isinstance(step, Start):
        return runtime.start(step.tokens, seq)
    if isinstance(step, Extend):
        return runtime.extend(step.tokens, seq)
    if isinstance(step, Score):
        return runtime.score(step.prompt, step.reply, seq)
    return runtime.branch(step.paths, seq)


def run(generation: Generation[T], runtime: Runtime, seq: int = 0) -> T:
    """Run a generation alone on sequence ``seq``; its result."""
    try:
        step = next(generation)
        while True:
            step = generation.send(perform(step, runtime, seq))
    except StopIteration as stop:
        result: T = stop.value  # what the generation returned
        return result
