"""Try judge clients in order; the first that answers wins, and the answer says who it was.

Any object with ``chat.completions.create`` takes part: our local and remote
clients, the official openai SDK client, a test double. The response gains a
``"localjudge"`` field, ``{"client": name, "failures": [...]}``, which the
judge copies into the result's ``metadata``.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping, Sequence
from contextlib import closing
from typing import Any, Optional, Union

from .._text import clip
from ..errors import AllClientsFailedError, UsageError
from ..types import AnyModelClient, SupportsCacheIdentity, SupportsCheckSchema, offers
from .adapter import adapt_response_format
from .base import (
    AsyncChatClient,
    ChatClient,
    ChatResponse,
    acall_create,
    call_create,
    field_of,
)
from .failure_policy import another_client
from .formats import check_answer

__all__ = ["FALLBACK_FIELD", "AsyncFallbackClient", "FallbackClient", "answering_client"]

#: the response field that names the client that answered and why the others did not
FALLBACK_FIELD = "localjudge"

FallbackOn = Union[type, tuple[type, ...], Callable[[BaseException], bool], None]


def answering_client(response: object) -> Optional[str]:
    """The name of the chain's member that gave ``response``; None for a response no chain labelled."""
    client = field_of(field_of(response, FALLBACK_FIELD), "client")
    return client if isinstance(client, str) else None


def _predicate(fallback_on: FallbackOn) -> Callable[[BaseException], bool]:
    if fallback_on is None:
        return another_client
    if isinstance(fallback_on, type) and issubclass(fallback_on, BaseException):
        fallback_on = (fallback_on,)
    if isinstance(fallback_on, tuple):
        if not fallback_on or not all(isinstance(t, type) and issubclass(t, BaseException) for t in fallback_on):
            raise UsageError("fallback_on must be exception classes, a tuple of them, or a predicate")
        types = fallback_on
        return lambda exc: isinstance(exc, types)
    if callable(fallback_on) and not isinstance(fallback_on, type):  # a class that is no exception is no predicate
        return fallback_on
    raise UsageError(f"fallback_on must be exception classes or a predicate, got {type(fallback_on).__name__}")


def _names(clients: Sequence[Any], names: Sequence[str] | None) -> list[str]:
    if names is not None:
        if len(names) != len(clients) or len(set(names)) != len(names):
            raise UsageError("names must give one distinct name per client")
        return list(names)
    result: list[str] = []
    for client in clients:
        base = getattr(client, "name", None)
        base = base if isinstance(base, str) and base else type(client).__name__
        name, n = base, 2
        while name in result:
            name, n = f"{base}#{n}", n + 1
        result.append(name)
    return result


def _check_clients(clients: Sequence[Any]) -> None:
    if not clients:
        raise UsageError("FallbackClient needs at least one client")
    for client in clients:
        create = getattr(getattr(getattr(client, "chat", None), "completions", None), "create", None)
        if not callable(create):
            raise UsageError(f"{type(client).__name__} has no chat.completions.create; it cannot be a judge client")


class _Chain:
    """The bookkeeping both twins share: names, the rule, failures, the answer's label."""

    def __init__(self, clients: Sequence[Any], fallback_on: FallbackOn, names: Sequence[str] | None) -> None:
        _check_clients(clients)
        self.names = _names(clients, names)
        # Foreign clients (the openai SDK) learn which schema form each server takes.
        self.clients = [adapt_response_format(c) for c in clients]
        self.fallback_on = fallback_on
        self.moves_on = _predicate(fallback_on)

    def attempts(self) -> Generator[tuple[str, Any], None, None]:
        """The clients to try for one request, in order (a pool reorders them per request)."""
        yield from zip(self.names, self.clients, strict=True)

    def member_identities(self) -> list[dict[str, Any]] | None:
        """Each client's cache identity; None when one cannot say who it is."""
        try:
            identities = [c.cache_identity() if offers(c, SupportsCacheIdentity) else None for c in self.clients]
        except Exception:  # a member that cannot even load: the chain will move past it, uncached
            return None
        if any(i is None for i in identities):
            return None
        return [i for i in identities if i is not None]

    def identity(self) -> dict[str, Any] | None:
        identities = self.member_identities()
        return None if identities is None else {"chain": identities}

    def failed(self, failures: list[tuple[str, BaseException]], name: str, exc: BaseException) -> None:
        if not self.moves_on(exc):
            raise exc
        failures.append((name, exc))

    def checked(self, name: str, request: Mapping[str, Any], response: object) -> Any:
        """The answer as a ChatResponse; one cut at max_tokens, or not of the shape asked for, is a failure.

        Such an answer fails like an error, so the next client may do better.
        Free text (no response_format) is any text, so it is never checked.
        """
        if isinstance(response, Mapping):
            response = response if isinstance(response, ChatResponse) else ChatResponse(response)
        elif callable(dump := getattr(response, "model_dump", None)):  # the openai SDK's pydantic objects
            response = ChatResponse(dump())
        check_answer(request, response, backend=name)
        return response

    def answered(self, name: str, response: object, failures: list[tuple[str, BaseException]]) -> Any:
        """The answer, labelled with who gave it and who failed before (an object we cannot label goes unchanged)."""
        if not isinstance(response, ChatResponse):
            return response
        response[FALLBACK_FIELD] = ChatResponse(
            {
                "client": name,
                "failures": [{"client": n, "error": type(e).__name__, "message": clip(str(e))} for n, e in failures],
            }
        )
        return response

    def all_failed(self, failures: list[tuple[str, BaseException]]) -> AllClientsFailedError:
        return AllClientsFailedError(failures, backend=self.backend)

    backend = "fallback"

    def check_schema(self, schema: Mapping[str, Any]) -> None:
        """Refuse a schema that any client in the chain cannot enforce: never ignore a keyword silently."""
        for client in self.clients:
            if offers(client, SupportsCheckSchema):
                client.check_schema(schema)


class _Chained:
    """What a fallback client and its async twin share: the chain, built once, that both walk."""

    def __init__(
        self, *clients: AnyModelClient, fallback_on: FallbackOn = None, names: Sequence[str] | None = None
    ) -> None:
        super().__init__()
        self._chain = self._new_chain(clients, fallback_on, names)

    def _new_chain(self, clients: Sequence[Any], fallback_on: FallbackOn, names: Sequence[str] | None) -> _Chain:
        return _Chain(clients, fallback_on, names)

    @property
    def clients(self) -> list[Any]:
        return list(self._chain.clients)

    def check_schema(self, schema: Mapping[str, Any]) -> None:
        self._chain.check_schema(schema)


class FallbackClient(_Chained, ChatClient):
    """``FallbackClient(primary, secondary, ...)``: the first client that answers wins.

    A client's failure moves the call on when ``fallback_on`` says so (by
    default :func:`~localjudge._clients.failure_policy.another_client`; or give exception classes, or a predicate
    taking the exception). Any other error propagates at once. When every
    client fails, ``AllClientsFailedError`` lists each failure in order.
    """

    name = "fallback"

    def cache_identity(self) -> dict[str, Any] | None:
        """The chain's clients in order; None when one of them cannot say who it is."""
        return self._chain.identity()

    def _complete(self, request: dict[str, Any]) -> Any:
        failures: list[tuple[str, BaseException]] = []
        with closing(self._chain.attempts()) as attempts:
            for name, client in attempts:
                try:
                    response = self._chain.checked(name, request, call_create(client, dict(request)))
                except Exception as exc:
                    self._chain.failed(failures, name, exc)
                    continue
                return self._chain.answered(name, response, failures)
        raise self._chain.all_failed(failures)

    @property
    def aio(self) -> AsyncFallbackClient:
        """The async twin over each client's async form (``.aio`` where a client has one)."""
        clients = [c.aio if isinstance(c, ChatClient) else c for c in self._chain.clients]
        return AsyncFallbackClient(*clients, fallback_on=self._chain.fallback_on, names=self._chain.names)

    def __repr__(self) -> str:
        return f"FallbackClient({', '.join(self._chain.names)})"


class AsyncFallbackClient(_Chained, AsyncChatClient):
    """The async twin of :class:`FallbackClient`; blocking clients run in a worker thread."""

    name = "fallback"

    async def _acomplete(self, request: dict[str, Any]) -> Any:
        failures: list[tuple[str, BaseException]] = []
        with closing(self._chain.attempts()) as attempts:
            for name, client in attempts:
                try:
                    response = self._chain.checked(name, request, await acall_create(client, dict(request)))
                except Exception as exc:
                    self._chain.failed(failures, name, exc)
                    continue
                return self._chain.answered(name, response, failures)
        raise self._chain.all_failed(failures)

    def __repr__(self) -> str:
        return f"AsyncFallbackClient({', '.join(self._chain.names)})"
