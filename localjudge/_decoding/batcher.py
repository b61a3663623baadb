"""Several generations on one runtime, decoded side by side: one step of each per batch.

Decoding one token costs a CPU little more for several sequences than for
one, so requests in flight together (async callers, ``batch -j N``, a
server) should share each step. A :class:`Batcher` gives each generation
(:mod:`.steps`) a sequence of the runtime while it runs and, per round,
evaluates the next step of every admitted generation together through
:meth:`Runtime.evaluate_together`, which batches only what gives each
sequence the logits it would get alone: a generation's result is the same
alone or in company.

The rounds run on one worker thread, started when work arrives and ended
when there has been none for a while; callers wait for their results.
One thread matters: llama.cpp's CPU backend (built with OpenMP) keeps a
team of compute threads per calling thread, and rounds run from several
callers' threads in turn (measured: 8 callers, the same 70 rounds) took
7.5 s against 6.0 s from one, the idle teams spinning beside the busy one.

A prompt is read (``Start``, or ``Score`` with the reply it scores) alone,
one per round, as the prefix cache's canonical chunks require; a probe's
paths are taken one per round. Prompts about to be read one after another
(those admitted and waiting to be read, and the next ones queued for a
sequence when their callers gave them) are announced to the runtime (:meth:`Runtime.expect`), so what they share is
kept by the first one read and the rest resume from it: a pair's two
orders read their shared start once, side by side or, with one sequence,
one after the other.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections import deque
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import _cancellation as cancellation
from .._runtimes.base import Group, Runtime
from ..errors import ContextOverflowError, ModelError, RequestCancelledError, UsageError
from .steps import FRESH, Answer, Extend, Generation, Probe, perform

__all__ = ["Batcher"]


class _Job:
    """One generation, the step it waits on, and its outcome."""

    def __init__(self, generation: Generation[Any], prompt: Sequence[int] | None = None) -> None:
        self.generation = generation
        self.prompt = prompt  # the tokens its first step reads, when the caller knows them: announced while it queues
        self.step: Any = None
        self.seq = -1
        self.probed: list[np.ndarray] = []
        self.value: Any = None
        self.error: BaseException | None = None
        self.finished = threading.Event()
        self.abandoned = False  # its caller stopped waiting
        self.cancel = cancellation.current()  # set by whoever made the request: a client that hung up

    def stopped(self) -> BaseException | None:
        """Why this job must end now, if it must."""
        if self.abandoned:
            return InterruptedError("its caller stopped waiting")
        if self.cancel is not None and self.cancel.is_set():
            return RequestCancelledError(f"The request was cancelled: {self.cancel.reason}")
        return None

    def advance(self, sent: Answer | None = None, *, first: bool = False) -> None:
        """Send the step's result (or start); the next step, or the outcome."""
        self.probed = []
        try:
            self.step = next(self.generation) if first else self.generation.send(sent)
        except StopIteration as stop:
            self.value = stop.value
            self.finished.set()
        except Exception as exc:
            self.fail(exc)

    def fail(self, error: BaseException) -> None:
        if self.done:
            return
        self.error = error
        try:
            self.generation.close()
        finally:
            self.finished.set()

    @property
    def done(self) -> bool:
        return self.finished.is_set()

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

    #: seconds without work after which the worker thread ends (a new one starts with the next request)
    IDLE_SECONDS = 5.0
    #: seconds a request that finds the batcher idle waits for company: requests sent together (a pair's two
    #: orders, from two threads) arrive a moment apart, and admitted in one round they share their prompt's start
    GATHER_SECONDS = 0.005

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self._waiting: deque[_Job] = deque()
        self._active: dict[int, _Job] = {}  # sequence -> the job using it; the worker's own
        self._work = threading.Condition()  # guards _waiting and _worker
        self._worker: threading.Thread | None = None
        self._pid = os.getpid()  # a process made by fork has a copy of this batcher, but not its worker thread

    def run(self, generation: Generation[Any], prompt: Sequence[int] | None = None) -> Any:
        """The generation's result; raises its error. ``prompt``: the tokens it starts by reading, if known."""
        (outcome,) = self.run_all([generation], return_exceptions=False, prompts=[prompt])
        return outcome

    def run_all(
        self,
        generations: Sequence[Generation[Any]],
        *,
        return_exceptions: bool = True,
        prompts: Sequence[Sequence[int] | None] | None = None,
    ) -> list[Any]:
        """Each generation's result, in order; a failed one's exception in its place (or raised).

        ``prompts`` (one per generation, or None) are the tokens each starts by
        reading: a generation that waits for a sequence is announced with them
        to the runtime's prefix cache, so the one read before it keeps their
        shared start.
        """
        self._check_process()
        given = prompts if prompts is not None else [None] * len(generations)
        jobs = [_Job(generation, prompt) for generation, prompt in zip(generations, given, strict=True)]
        with self._work:
            self._waiting.extend(jobs)
            if self._worker is None:
                self._worker = threading.Thread(target=self._serve, name="localjudge-batcher", daemon=True)
                self._worker.start()
            self._work.notify()
        try:
            for job in jobs:
                job.finished.wait()
        except BaseException:  # an interrupt: nobody will read these results
            for job in jobs:
                job.abandoned = True
            raise
        if not return_exceptions:
            for job in jobs:
                if job.error is not None:
                    raise job.error
        return [job.error if job.error is not None else job.value for job in jobs]

    def _check_process(self) -> None:
        """Refuse at once in a child made by fork: it would wait forever for a worker thread that is not there.

        fork copies the model's memory and this batcher, not its threads, and a
        lock a thread held at that moment stays held in the child.
        """
        if os.getpid() != self._pid:
            raise UsageError(
                f"This judge's model was loaded in process {self._pid}, and process {os.getpid()} is a copy of it "
                "made by fork, which the model's decoding thread did not come along to. Start worker processes "
                "with the spawn start method (multiprocessing.get_context('spawn'), or "
                "ProcessPoolExecutor(mp_context=...)), or build the judge inside each worker."
            )

    def _serve(self) -> None:
        """The worker: rounds while there is work; ends after IDLE_SECONDS without, or with the error that stopped it."""
        try:
            while True:
                with self._work:
                    if not self._waiting and not self._active:
                        self._work.wait(self.IDLE_SECONDS)
                        if not self._waiting:
                            self._worker = None
                            return
                    if len(self._waiting) == 1 and not self._active:
                        self._work.wait(self.GATHER_SECONDS)
                with self.runtime.lock:
                    try:
                        self._round()
                    except Exception as exc:  # a fault of ours: every job learns of it, none waits forever
                        self._fail_all(exc)
        except BaseException as exc:
            with self._work:
                self._worker = None
            self._fail_all(exc)
            raise

    def _fail_all(self, error: BaseException) -> None:
        for job in [*self._active.values(), *self._drain()]:
            job.fail(error)
        self._active.clear()

    def _drain(self) -> list[_Job]:
        with self._work:
            jobs, self._waiting = list(self._waiting), deque()
        return jobs

    # --- one round, under the runtime's lock --------------------------------------------

    def _round(self) -> None:
        if self.runtime.closed:  # closed between rounds: nothing may touch the model again
            self._fail_all(ModelError(f"The model {self.runtime.path} was closed", backend=self.runtime.backend))
            return
        for seq, job in list(self._active.items()):
            reason = job.stopped()
            if reason is not None:  # its sequence goes to the next request at this very round
                job.fail(reason)
                del self._active[seq]
        self._admit()
        starting = next((job for job in self._active.values() if isinstance(job.step, FRESH)), None)
        if starting is not None:
            self._start(starting)
        stepping = [job for job in self._active.values() if isinstance(job.step, (Extend, Probe))]
        if stepping:
            self._evaluate(stepping)
        for seq in [seq for seq, job in self._active.items() if job.done]:
            del self._active[seq]

    def _admit(self) -> None:
        free = [seq for seq in range(self.runtime.slots) if seq not in self._active]
        admitted = []
        with self._work:
            stopped = [(job, job.stopped()) for job in self._waiting]
            self._waiting = deque(job for job, reason in stopped if reason is None)
            for job, reason in stopped:  # a queued request whose caller gave up is answered now, not when admitted
                if reason is not None:
                    job.fail(reason)
            while free and self._waiting:
                job = self._waiting.popleft()
                job.seq = free.pop(0)
                admitted.append(job)
            queued = [job.prompt for job in itertools.islice(self._waiting, self.runtime.slots) if job.prompt]
        for job in admitted:
            job.advance(first=True)
            if not job.done:
                self._active[job.seq] = job
        starting = [job.step.tokens for job in self._active.values() if isinstance(job.step, FRESH)]
        if admitted and len(starting) + len(queued) > 1:
            self.runtime.expect([*starting, *queued])

    def _start(self, job: _Job) -> None:
        try:
            found = perform(job.step, self.runtime, job.seq)  # a prompt, or a prompt and a reply to score
        except Exception as exc:
            job.fail(exc)
            return
        job.advance(found)

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
        except Exception as exc:
            for job in jobs:
                job.fail(exc)
            return
        for job, logits in zip(jobs, found, strict=True):
            job.take(logits)
