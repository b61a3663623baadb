"""Several generations on one runtime, decoded side by side: one step of each per batch.

Decoding one token costs a CPU little more for several sequences than for
one, so requests in flight together (async callers, ``batch -j N``, a
server) should share each step. A :class:`Batcher` gives each generation
(:mod:`.steps`) a sequence of the runtime while it runs and, per round,
evaluates the next step of every admitted generation together through
:meth:`Runtime.evaluate_together`, which batches only what gives each
sequence the logits it would get alone: a generation's result is the same
alone or in company.

There is no scheduler thread. Every caller waiting for a result takes the
runtime's lock in turn and runs a round for everyone; whoever holds it
advances all admitted generations, so none waits on a thread that is busy
elsewhere. A prompt is read (``Start``) alone, one per round, as the prefix
cache's canonical chunks require; a probe's paths are taken one per round.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import ContextOverflowError
from ..runtimes.base import Group, Runtime
from .steps import Extend, Generation, Probe, Start

__all__ = ["Batcher"]


class _Job:
    """One generation, the step it waits on, and its outcome."""

    def __init__(self, generation: Generation[Any]) -> None:
        self.generation = generation
        self.step: Any = None
        self.seq = -1
        self.probed: list[np.ndarray] = []
        self.value: Any = None
        self.error: BaseException | None = None
        self.done = False

    def advance(self, sent: Any = None, *, first: bool = False) -> None:
        """Send the step's result (or start); the next step, or the outcome."""
        self.probed = []
        try:
            self.step = next(self.generation) if first else self.generation.send(sent)
        except StopIteration as stop:
            self.value, self.done = stop.value, True
        except Exception as exc:
            self.fail(exc)

    def fail(self, error: BaseException) -> None:
        self.error, self.done = error, True
        self.generation.close()

    def group(self) -> Group:
        if isinstance(self.step, Extend):
            return Group(self.seq, self.step.tokens)
        return Group(self.seq, self.step.paths[len(self.probed)], keep=False)

    def take(self, logits: np.ndarray) -> None:
        if isinstance(self.step, Extend):
            self.advance(logits)
            return
        self.probed.append(logits)
        if len(self.probed) == len(self.step.paths):
            self.advance(self.probed)


class Batcher:
    """Runs generations on ``runtime``, up to ``runtime.slots`` of them at once. Thread-safe.

    It owns the runtime's sequences between rounds: evaluate on a runtime
    that a batcher serves only through the batcher.
    """

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self._waiting: deque[_Job] = deque()
        self._active: dict[int, _Job] = {}  # sequence -> the job using it
        self._guard = threading.Lock()  # for _waiting, which callers add to without the runtime's lock
        self.rounds = 0

    def run(self, generation: Generation[Any]) -> Any:
        """The generation's result; raises its error."""
        (outcome,) = self.run_all([generation], return_exceptions=False)
        return outcome

    def run_all(self, generations: Sequence[Generation[Any]], *, return_exceptions: bool = True) -> list[Any]:
        """Each generation's result, in order; a failed one's exception in its place (or raised)."""
        jobs = [_Job(generation) for generation in generations]
        with self._guard:
            self._waiting.extend(jobs)
        while not all(job.done for job in jobs):
            with self.runtime.lock:
                if not all(job.done for job in jobs):
                    self._round()
        if not return_exceptions:
            for job in jobs:
                if job.error is not None:
                    raise job.error
        return [job.error if job.error is not None else job.value for job in jobs]

    # --- one round, under the runtime's lock --------------------------------------------

    def _round(self) -> None:
        self.rounds += 1
        self._admit()
        starting = next((job for job in self._active.values() if isinstance(job.step, Start)), None)
        if starting is not None:
            self._start(starting)
        stepping = [job for job in self._active.values() if isinstance(job.step, (Extend, Probe))]
        if stepping:
            self._evaluate(stepping)
        for seq in [seq for seq, job in self._active.items() if job.done]:
            del self._active[seq]

    def _admit(self) -> None:
        free = [seq for seq in range(self.runtime.slots) if seq not in self._active]
        with self._guard:
            while free and self._waiting:
                job = self._waiting.popleft()
                job.seq = free.pop(0)
                job.advance(first=True)
                if not job.done:
                    self._active[job.seq] = job

    def _start(self, job: _Job) -> None:
        try:
            logits = self.runtime.start(job.step.tokens, job.seq)
        except BaseException as exc:
            _fail([job], exc)
            return
        job.advance(logits)

    def _evaluate(self, jobs: list[_Job]) -> None:
        """One step of each job; an error fails only the jobs it concerns."""
        try:
            found = self.runtime.evaluate_together([job.group() for job in jobs])
        except ContextOverflowError as exc:  # refused before anything was evaluated
            if len(jobs) == 1:
                jobs[0].fail(exc)
            else:  # each alone, so that only the one that overflows fails
                for job in jobs:
                    self._evaluate([job])
            return
        except BaseException as exc:
            _fail(jobs, exc)
            return
        for job, logits in zip(jobs, found, strict=True):
            job.take(logits)


def _fail(jobs: list[_Job], error: BaseException) -> None:
    """An evaluation error is its jobs' outcome; an interrupt also stops the caller (their states are unknown)."""
    for job in jobs:
        job.fail(error)
    if not isinstance(error, Exception):
        raise error
