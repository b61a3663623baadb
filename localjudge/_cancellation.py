"""Cancelling a request that nobody waits for any more: a server's client that hung up, a server shutting down.

The caller makes a :class:`Cancel` and runs the request inside
:func:`cancellable`, in the thread that makes the call. The local decoder
(the :class:`~localjudge._decoding.batcher.Batcher` under every llama.cpp and
transformers client of ours) takes the token when the request arrives and,
between decode steps, ends the generation once the token is set, freeing its
sequence for the next request. The token rides in a context variable, so the
OpenAI-shaped ``create(**request)`` needs no extra argument, and wrappers
that call on in the same thread (a cache, a fallback chain) pass it on
untouched. A remote server's request is not cancelled: it runs to its end or
its timeout.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from contextvars import ContextVar

__all__ = ["Cancel", "cancellable", "current"]


class Cancel:
    """A token set once, with the reason, from any thread: the first reason given stays."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._set = False
        self.reason = ""

    def set(self, reason: str) -> None:
        with self._lock:
            if not self._set:
                self.reason, self._set = reason, True

    def is_set(self) -> bool:
        return self._set


_current: ContextVar[Cancel | None] = ContextVar("localjudge_cancel", default=None)


def current() -> Cancel | None:
    """The token of the request being made in this context, if its caller gave one."""
    return _current.get()


@contextlib.contextmanager
def cancellable(token: Cancel) -> Iterator[Cancel]:
    """Requests made inside the block end early once ``token`` is set."""
    reset = _current.set(token)
    try:
        yield token
    finally:
        _current.reset(reset)
