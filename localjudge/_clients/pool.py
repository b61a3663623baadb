"""Several servers of one model as one judge client: requests spread over them, and move on when one fails.

Each request goes first to the member with the fewest requests in flight
(ties taken in turn), then, if that member's server failed (unreachable, a
timeout, 408, 429 or 5xx), to the next. A member whose server failed rests
for ``rest`` seconds: it is tried last until then, never dropped, so a
request fails only when every member failed it. An answer that does not
parse is not a server failure: another server of the same model would give
it too, so it is the request's error at once. The answer says which member
gave it, and which failed first, as a fallback chain's does.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Generator, Sequence
from typing import Any

from ..errors import UsageError
from ..types import AnyModelClient
from .base import ChatClient
from .failure_policy import another_server
from .fallback import AsyncFallbackClient, FallbackClient, FallbackOn, _Chain, _Chained

__all__ = ["AsyncPoolClient", "PoolClient", "pool_order"]

#: seconds a member whose server failed is tried only after the others
DEFAULT_REST = 30.0


def pool_order(in_flight: Sequence[int], resting_until: Sequence[float], now: float, turn: int) -> list[int]:
    """The members to try for one request, by index: ready ones by load, then resting ones by load.

    ``turn`` rotates ties among equally loaded members, so a quiet pool still
    spreads its requests instead of sending each to the first member.
    """
    rotated = [(turn + step) % len(in_flight) for step in range(len(in_flight))]
    return sorted(rotated, key=lambda i: (resting_until[i] > now, in_flight[i]))


class _PoolState:
    """Load and health of the members, shared by a pool and its async twin."""

    def __init__(self, size: int, rest: float) -> None:
        if not isinstance(rest, (int, float)) or rest < 0:
            raise UsageError(f"rest must be a number of seconds >= 0, got {rest!r}")
        self.rest = float(rest)
        self.lock = threading.Lock()
        self.in_flight = [0] * size
        self.resting_until = [0.0] * size
        self.turns = itertools.count()


class _Pool(_Chain):
    backend = "pool"

    def __init__(
        self, clients: Sequence[Any], fallback_on: FallbackOn, names: Sequence[str] | None, state: _PoolState
    ) -> None:
        super().__init__(clients, another_server if fallback_on is None else fallback_on, names)
        self.fallback_on = fallback_on
        self.state = state

    def attempts(self) -> Generator[tuple[str, Any], None, None]:
        state = self.state
        with state.lock:
            order = pool_order(state.in_flight, state.resting_until, time.monotonic(), next(state.turns))
            state.in_flight[order[0]] += 1  # counted at once, so requests arriving together spread
        for step, index in enumerate(order):
            if step:
                with state.lock:
                    state.in_flight[index] += 1
            try:
                yield self.names[index], self.clients[index]
            finally:
                with state.lock:
                    state.in_flight[index] -= 1

    def failed(self, failures: list[tuple[str, BaseException]], name: str, exc: BaseException) -> None:
        super().failed(failures, name, exc)  # raises when another member would fail the same way
        with self.state.lock:
            self.state.resting_until[self.names.index(name)] = time.monotonic() + self.state.rest

    def answered(self, name: str, response: object, failures: list[tuple[str, BaseException]]) -> Any:
        with self.state.lock:
            self.state.resting_until[self.names.index(name)] = 0.0
        return super().answered(name, response, failures)

    def identity(self) -> dict[str, Any] | None:
        """The model, not the servers: adding or losing a server of it keeps the cached answers.

        Members that name different models (not a pool of one model) are all kept in the key.
        """
        identities = self.member_identities()
        if identities is None:
            return None
        models = [{k: v for k, v in identity.items() if k != "base_url"} for identity in identities]
        if all(model == models[0] for model in models):
            return {"pool": models[0]}
        return {"pool": sorted(identities, key=repr)}


class _Pooled(_Chained):
    """What a pool and its async twin share: the state, and the chain that reads it."""

    def __init__(
        self,
        *clients: AnyModelClient,
        rest: float = DEFAULT_REST,
        fallback_on: FallbackOn = None,
        names: Sequence[str] | None = None,
        _state: _PoolState | None = None,
    ) -> None:
        self._state = _state or _PoolState(len(clients), rest)
        super().__init__(*clients, fallback_on=fallback_on, names=names)

    def _new_chain(self, clients: Sequence[Any], fallback_on: FallbackOn, names: Sequence[str] | None) -> _Chain:
        return _Pool(clients, fallback_on, names, self._state)


class PoolClient(_Pooled, FallbackClient):
    """``PoolClient(server_a, server_b, ...)``: one model served several times, as one client.

    Members are any clients (usually :class:`OpenAICompatibleClient` over
    servers of the same model); ``rest`` is how long a member whose server
    failed waits at the back of the queue; ``fallback_on`` replaces the rule
    for moving on (by default :func:`~localjudge._clients.failure_policy.another_server`); ``names`` label members.
    """

    name = "pool"

    @property
    def aio(self) -> AsyncPoolClient:
        """The async twin: the same members' async forms, sharing this pool's load and health."""
        clients = [c.aio if isinstance(c, ChatClient) else c for c in self._chain.clients]
        return AsyncPoolClient(
            *clients, fallback_on=self._chain.fallback_on, names=self._chain.names, _state=self._state
        )

    def __repr__(self) -> str:
        return f"PoolClient({', '.join(self._chain.names)})"


class AsyncPoolClient(_Pooled, AsyncFallbackClient):
    """The async twin of :class:`PoolClient`."""

    name = "pool"

    def __repr__(self) -> str:
        return f"AsyncPoolClient({', '.join(self._chain.names)})"
