"""A judge on any OpenAI-compatible server (vLLM, llama.cpp's server, Ollama, OpenAI).

All decisions (request body, retries, backoff, ``response_format`` and
answer-bound negotiation, reading and checking the answer) live in
:meth:`~.remote_plan.RemoteBase.plan`, a generator that yields what to do
next: send this request, or sleep this long. The sync client and its async
twin here only carry those steps out with httpx, as httpx itself keeps its
logic apart from its I/O.

Timeouts: ``connect_timeout`` bounds opening a connection, ``read_timeout``
bounds each wait for bytes, and ``timeout`` bounds a whole attempt, so a server
that drips its answer byte by byte cannot hold the judge forever.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import httpx

from .base import AsyncChatClient, ChatClient, ChatResponse
from .guarded_network import guarded_async_client, guarded_client
from .remote_plan import Call, Failure, Outcome, RemoteBase, Reply, Sleep

__all__ = ["AsyncOpenAICompatibleClient", "OpenAICompatibleClient"]

_MAX_RESPONSE_BYTES = 32 * 1024 * 1024


def _httpx_timeout(client: RemoteBase, read: float | None = None) -> httpx.Timeout:
    read = client.read_timeout if read is None else read
    return httpx.Timeout(connect=client.connect_timeout, read=read, write=read, pool=client.connect_timeout)


def _failure(exc: httpx.HTTPError, call: Call, connect_timeout: float) -> Failure:
    """Name what went wrong without the request (its headers hold the key)."""
    detail = str(exc) or type(exc).__name__
    if isinstance(exc, httpx.ConnectTimeout):
        return Failure("timeout", f"no connection within {connect_timeout:g} s")
    if isinstance(exc, httpx.TimeoutException):
        return Failure("timeout", f"no data for {call.read_timeout:g} s ({type(exc).__name__})")
    if isinstance(exc, httpx.ConnectError):
        return Failure("connect", f"could not connect: {detail}")
    if isinstance(exc, httpx.RemoteProtocolError):
        return Failure("transport", f"the server broke off the response: {detail}")
    return Failure("transport", f"{type(exc).__name__}: {detail}")


def _deadline_failure(call: Call) -> Failure:
    return Failure("timeout", f"the answer did not arrive in full within the {call.deadline:g} s deadline")


class OpenAICompatibleClient(RemoteBase, ChatClient):
    """A blocking judge client for an OpenAI-compatible ``/chat/completions`` endpoint.

    ``client.chat.completions.create(messages=..., response_format=...)`` as in
    the openai SDK; ``client.aio`` is the async twin with the same settings.
    The API key comes from ``api_key`` or ``LOCALJUDGE_API_KEY`` /
    ``OPENAI_API_KEY`` and is never shown in a repr, log line or error.
    """

    def __init__(self, base_url: str, api_key: str | None = None, model: str | None = None, **options: Any) -> None:
        ChatClient.__init__(self)
        RemoteBase.__init__(self, base_url, api_key, model, **options)
        self._http: httpx.Client | None = None
        self._lock = threading.Lock()
        self._aio: AsyncOpenAICompatibleClient | None = None

    def _client(self) -> httpx.Client:
        with self._lock:
            if self._http is None:
                self._http = guarded_client(timeout=_httpx_timeout(self), follow_redirects=False)
            return self._http

    def _complete(self, request: dict[str, Any]) -> ChatResponse:
        plan = self.plan(request)
        outcome: Outcome = None
        for _ in range(2 * self.retry.attempts + 2):  # the plan ends well within this
            try:
                step = plan.send(outcome)
            except StopIteration as done:
                response: ChatResponse = done.value
                return response
            if isinstance(step, Sleep):
                time.sleep(step.seconds)
                outcome = None
            else:
                outcome = self._send(step)
        raise RuntimeError("the retry plan did not finish")  # pragma: no cover

    def _send(self, call: Call) -> Reply | Failure:
        deadline = time.monotonic() + call.deadline
        try:
            with self._client().stream(
                "POST",
                call.url,
                content=call.content,
                headers=call.headers,
                timeout=_httpx_timeout(self, call.read_timeout),
            ) as response:
                chunks: list[bytes] = []
                size = 0
                for chunk in response.iter_bytes():
                    chunks.append(chunk)
                    size += len(chunk)
                    if time.monotonic() > deadline:
                        return _deadline_failure(call)
                    if size > _MAX_RESPONSE_BYTES:
                        return Failure("transport", f"the answer is larger than {_MAX_RESPONSE_BYTES} bytes")
                return Reply(response.status_code, response.reason_phrase, response.headers, b"".join(chunks))
        except httpx.HTTPError as exc:
            return _failure(exc, call, self.connect_timeout)

    @property
    def aio(self) -> AsyncOpenAICompatibleClient:
        """The async twin: same endpoint, key and settings, its own pool (``await client.aio.aclose()``)."""
        if self._aio is None:
            twin = AsyncOpenAICompatibleClient(**self._settings)
            twin._api_key = self._api_key
            twin._secrets = self._secrets
            self._aio = twin
        return self._aio

    def close(self) -> None:
        """Close pooled connections; the client opens new ones if used again."""
        with self._lock:
            http, self._http = self._http, None
        if http is not None:
            http.close()

    def __enter__(self) -> OpenAICompatibleClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class AsyncOpenAICompatibleClient(RemoteBase, AsyncChatClient):
    """The async twin of :class:`OpenAICompatibleClient`: same decisions, httpx.AsyncClient I/O."""

    def __init__(self, base_url: str, api_key: str | None = None, model: str | None = None, **options: Any) -> None:
        AsyncChatClient.__init__(self)
        RemoteBase.__init__(self, base_url, api_key, model, **options)
        self._http: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _client(self) -> httpx.AsyncClient:
        # Pooled connections belong to the loop that opened them; a new loop gets a new pool.
        loop = asyncio.get_running_loop()
        if self._http is None or self._loop is not loop:
            self._http = guarded_async_client(timeout=_httpx_timeout(self), follow_redirects=False)
            self._loop = loop
        return self._http

    async def _acomplete(self, request: dict[str, Any]) -> ChatResponse:
        plan = self.plan(request)
        outcome: Outcome = None
        for _ in range(2 * self.retry.attempts + 2):
            try:
                step = plan.send(outcome)
            except StopIteration as done:
                response: ChatResponse = done.value
                return response
            if isinstance(step, Sleep):
                await asyncio.sleep(step.seconds)
                outcome = None
            else:
                outcome = await self._send(step)
        raise RuntimeError("the retry plan did not finish")  # pragma: no cover

    async def _send(self, call: Call) -> Reply | Failure:
        try:
            return await asyncio.wait_for(self._exchange(call), timeout=call.deadline)
        except asyncio.TimeoutError:
            return _deadline_failure(call)

    async def _exchange(self, call: Call) -> Reply | Failure:
        try:
            async with self._client().stream(
                "POST",
                call.url,
                content=call.content,
                headers=call.headers,
                timeout=_httpx_timeout(self, call.read_timeout),
            ) as response:
                chunks: list[bytes] = []
                size = 0
                async for chunk in response.aiter_bytes():
                    chunks.append(chunk)
                    size += len(chunk)
                    if size > _MAX_RESPONSE_BYTES:
                        return Failure("transport", f"the answer is larger than {_MAX_RESPONSE_BYTES} bytes")
                return Reply(response.status_code, response.reason_phrase, response.headers, b"".join(chunks))
        except httpx.HTTPError as exc:
            return _failure(exc, call, self.connect_timeout)

    async def aclose(self) -> None:
        http, self._http = self._http, None
        if http is not None:
            await http.aclose()

    async def __aenter__(self) -> AsyncOpenAICompatibleClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
