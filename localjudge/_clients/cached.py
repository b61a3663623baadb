"""Any judge client with its complete answers kept in a :class:`~localjudge._clients.result_cache.ResultCache`.

The same request to the same judge gets the stored answer, without a model
call. Who answers is the client's ``cache_identity()``: a local model's file
hash and decoder settings, a server's address and model. A client that
cannot say who it is cannot be cached (its answers could come from anything).
"""

from __future__ import annotations

import copy
import threading
from concurrent.futures import Future
from typing import Any

from ..errors import OutputParseError, UsageError
from ..types import AnyModelClient, SupportsCacheIdentity, offers
from .base import ChatResponse, WrappingClient, call_create, plain_data
from .formats import check_answer
from .result_cache import ResultCache, request_key

__all__ = ["CachedClient", "cache_identity"]


def cache_identity(client: AnyModelClient) -> dict[str, Any] | None:
    """Who answers for ``client``, or None when it cannot say."""
    return client.cache_identity() if offers(client, SupportsCacheIdentity) else None


class CachedClient(WrappingClient):
    """``client`` (a blocking ModelClient), answering from ``cache`` when it can; counts in ``cache.hits``."""

    def __init__(self, client: AnyModelClient, cache: ResultCache) -> None:
        identity = cache_identity(client)
        if identity is None:
            raise UsageError(
                f"{type(client).__name__} cannot be cached: it does not say which model answers "
                "(a cache_identity() method). Turn the cache off for it (cache=None)."
            )
        super().__init__(client)
        self.cache = cache
        self.identity = identity
        self._flights: dict[str, Future[dict[str, Any]]] = {}  # requests being asked now, by key
        self._flights_lock = threading.Lock()

    def _complete(self, request: dict[str, Any]) -> ChatResponse:
        """The stored answer, else the model's; a request already in flight is waited for, not asked twice.

        Rows of a run that share a question ask the same request for the judge's
        own answer (or its checks) at once: one asks the model, the others get
        what it got, its answer or its error (an answer cut short included,
        which is not stored).
        """
        key = request_key(self.identity, request)
        with self._flights_lock:
            flight = self._flights.get(key)
            leading = flight is None
            if flight is None:
                flight = self._flights[key] = Future()
        if not leading:
            return ChatResponse(copy.deepcopy(flight.result()))
        try:
            # looked up by the one asking, so a caller that comes as the last flight lands finds its stored answer
            stored = self.cache.get(key, accept=lambda response: _answers(request, response))
            if stored is not None:
                flight.set_result(stored)
                return ChatResponse(stored)
            response: ChatResponse = call_create(self.client, request)
            data = plain_data(response.model_dump() if hasattr(response, "model_dump") else response)
            if data.get("choices") and data["choices"][0].get("finish_reason") == "stop":
                self.cache.put(key, data)
            flight.set_result(data)
            return response
        except BaseException as exc:
            flight.set_exception(exc)
            raise
        finally:
            with self._flights_lock:
                del self._flights[key]

    def cache_identity(self) -> dict[str, Any]:
        return self.identity


def _answers(request: dict[str, Any], stored: dict[str, Any]) -> bool:
    """Whether a stored answer is of the shape ``request`` asks for; one that is not is a miss, not a verdict."""
    try:
        check_answer(request, stored)
    except OutputParseError:
        return False
    return True
