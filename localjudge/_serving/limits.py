"""The bounds a server holds its clients to, and the requests in flight, so that a stopping server answers each."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from .._cancellation import Cancel
from ..errors import RequestCancelledError
from .api_errors import unavailable

__all__ = ["RETRY_AFTER_SECONDS", "InFlight", "Limits"]

#: what a busy server's 503 says to wait before asking again (a verdict takes about a second on a small judge)
RETRY_AFTER_SECONDS = 1


@dataclass(frozen=True)
class Limits:
    """What one request may ask: its body's size, and the tokens it may have written."""

    max_body_bytes: int = 1 << 20
    max_tokens: int = 4096
    body_seconds: float = 30.0  # to receive the whole body
    header_seconds: float = 10.0  # to receive a request's line and headers, on a new or a kept-alive connection
    max_in_flight: int = 64  # chat requests being judged or queued; one more is a 503 at once


class InFlight:
    """The chat requests being judged, each with its cancel token, so that a stopping server can answer them all."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._lock = threading.Lock()
        self._tokens: set[Cancel] = set()
        self.stopping = False
        self.answered_while_stopping = 0
        self.cancelled_at_stop = 0

    def admit(self) -> Cancel:
        """A new request's token; a 503 while stopping, or when ``limit`` are in flight already."""
        with self._lock:
            if self.stopping:
                raise unavailable("The server is stopping and takes no new requests", code="shutting_down")
            if len(self._tokens) >= self.limit:
                raise unavailable(
                    f"The server is busy: {self.limit} requests in flight; retry later",
                    code="busy",
                    retry_after=RETRY_AFTER_SECONDS,
                )
            token = Cancel()
            self._tokens.add(token)
            return token

    def finish(self, token: Cancel, failure: BaseException | None) -> None:
        """A request answered: with its verdict (``failure`` None), a 503 for its cancellation, or another error."""
        with self._lock:
            self._tokens.discard(token)
            if self.stopping:
                self.answered_while_stopping += failure is None
                self.cancelled_at_stop += isinstance(failure, RequestCancelledError)

    def stop(self) -> int:
        """Take no more requests; how many are in flight. No lock: a signal handler calls it."""
        self.stopping = True
        return len(self._tokens)

    def cancel_all(self, reason: str) -> None:
        """Cancel every request still in flight; each then answers 503."""
        with self._lock:
            tokens = list(self._tokens)
        for token in tokens:
            token.set(reason)
