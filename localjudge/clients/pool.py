"""Several servers of one model as one judge client: requests spread over them, and move on when one fails.

Each request goes first to the member with the fewest requests in flight
(ties taken in turn), then, if that member fails in a way another may not
(a dead server, a timeout, a 5xx), to the next. A member that failed rests
for ``rest`` seconds: it is tried last until then, never dropped, so a
request fails only when every member failed it. The answer says which
member gave it, and which failed first, as a fallback chain's does.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

from ..errors import UsageError
from .base import ChatClient
from .fallback import AsyncFallbackClient, FallbackClient, FallbackOn, _Chain

__all__ = ["AsyncPoolClient", "PoolClient", "pool_order"]

#: seconds a member that failed is tried only after the others
DEFAULT_REST = 30.0


def pool_order(in_flight: Sequence[int], resting_until: Sequence[float], now: float, turn: int) -> list[int]:
    """The members to try for one request, by index: ready ones by load, then resting ones by when they are back.

    ``turn`` rotates ties among equally loaded members, so a quiet pool still
    spreads its requests instead of sending each to the first member.
    """
    count = len(in_flight)
    rotated = [(turn + step) % count for step in range(count)]
    ready = [i for i in rotated if resting_until[i] <= now]
    resting = sorted((i for i in rotated if resting_until[i] > now), key=lambda i: resting_until[i])
    return sorted(ready, key=lambda i: in_flight[i]) + resting


class _Pool(_Chain):
    backend = "pool"

    def __init__(self, clients: Sequence[Any], fallback_on: FallbackOn, names: Sequence[str] | None, rest: float):
        if not isinstance(rest, (int, float)) or rest < 0:
            raise UsageError(f"rest must be a number of seconds >= 0, got {rest!r}")
        super().__init__(clients, fallback_on, names)
        self.rest = float(rest)
        self._lock = threading.Lock()
        self._in_flight = [0] * len(self.clients)
        self._resting_until = [0.0] * len(self.clients)
        self._turns = itertools.count()

    def attempts(self) -> Iterator[tuple[str, Any]]:
        with self._lock:
            order = pool_order(self._in_flight, self._resting_until, time.monotonic(), next(self._turns))
        for index in order:
            with self._lock:
                self._in_flight[index] += 1
            try:
                yield self.names[index], self.clients[index]
            finally:
                with self._lock:
                    self._in_flight[index] -= 1

    def failed(self, failures: list[tuple[str, BaseException]], name: str, exc: BaseException) -> None:
        super().failed(failures, name, exc)  # raises when the next member would fail the same way
        with self._lock:
            self._resting_until[self.names.index(name)] = time.monotonic() + self.rest

    def answered(self, name: str, response: Any, failures: list[tuple[str, BaseException]]) -> Any:
        with self._lock:
            self._resting_until[self.names.index(name)] = 0.0
        return super().answered(name, response, failures)

    def identity(self) -> dict[str, Any] | None:
        """The members in any order: which server answers does not change the verdict of one model."""
        identity = super().identity()
        return None if identity is None else {"pool": sorted(identity["pool"], key=repr)}


class PoolClient(FallbackClient):
    """``PoolClient(server_a, server_b, ...)``: one model served several times, as one client.

    Members are any clients (usually :class:`OpenAICompatibleClient` over
    servers of the same model); ``fallback_on`` and ``names`` are as for
    :class:`FallbackClient`; ``rest`` is how long a failed member waits at
    the back of the queue.
    """

    name = "pool"

    def __init__(
        self,
        *clients: Any,
        rest: float = DEFAULT_REST,
        fallback_on: FallbackOn = None,
        names: Sequence[str] | None = None,
    ) -> None:
        self.rest = rest
        super().__init__(*clients, fallback_on=fallback_on, names=names)

    def _new_chain(self, clients: Sequence[Any], fallback_on: FallbackOn, names: Sequence[str] | None) -> _Chain:
        return _Pool(clients, fallback_on, names, self.rest)

    @property
    def aio(self) -> AsyncPoolClient:
        clients = [c.aio if isinstance(c, ChatClient) else c for c in self._chain.clients]
        return AsyncPoolClient(*clients, rest=self.rest, fallback_on=self._chain.fallback_on, names=self._chain.names)

    def __repr__(self) -> str:
        return f"PoolClient({', '.join(self._chain.names)})"


class AsyncPoolClient(AsyncFallbackClient):
    """The async twin of :class:`PoolClient`."""

    name = "pool"

    def __init__(
        self,
        *clients: Any,
        rest: float = DEFAULT_REST,
        fallback_on: FallbackOn = None,
        names: Sequence[str] | None = None,
    ) -> None:
        self.rest = rest
        super().__init__(*clients, fallback_on=fallback_on, names=names)

    def _new_chain(self, clients: Sequence[Any], fallback_on: FallbackOn, names: Sequence[str] | None) -> _Chain:
        return _Pool(clients, fallback_on, names, self.rest)

    def __repr__(self) -> str:
        return f"AsyncPoolClient({', '.join(self._chain.names)})"
