"""Cancelling a request that nobody waits for any more: a server's client that hung up, a server shutting down.

The caller makes a :class:`Cancel` and runs the request inside
:func:`cancellable`; whatever decodes the request (the
:class:`~localjudge.decoding.batcher.Batcher`) takes the token when the
request arrives and, between decode steps, ends the generation once the
token is set, freeing its sequence for the next request. The token rides
in a context variable, so the OpenAI-shaped ``create(**request)`` needs no
extra argument, and every client between the caller and the decoder passes
it on untouched.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from contextvars import ContextVar

__all__ = ["Cancel", "cancellable", "current"]


class Cancel:
    """A token set once, with the reason, from any thread."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.reason = ""

    def set(self, reason: str) -> None:
        if not self._event.is_set():
            self.reason = reason
            self._event.set()

    def __bool__(self) -> bool:
        return self._event.is_set()


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
