"""What every client shares: OpenAI-shaped responses, request reading, sync/async plumbing.

A client implements one blocking method, ``_complete(request) -> ChatResponse``,
or one coroutine, ``_acomplete``. ``client.chat.completions.create(**request)``
is the public face, exactly as in the openai SDK, so our clients can judge for
any code written against that SDK and any object of that shape can judge for us.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, cast

from ..errors import UsageError
from ..types import AnyModelClient
from .completion import read_completion

__all__ = [
    "AsyncChatClient",
    "ChatClient",
    "ChatResponse",
    "Record",
    "WrappingClient",
    "field_of",
    "make_chat_completion",
    "plain_data",
    "read_choice",
    "read_response_format",
]


class Record(dict[str, Any]):
    """A dict that also reads as attributes, like the openai SDK's response objects.

    ``resp.choices[0].message.content`` and ``resp["choices"][0]["message"]["content"]``
    both work, so callers written for either style read our responses.
    """

    def __init__(self, data: Mapping[str, Any] | None = None, **fields: object) -> None:
        super().__init__()
        for key, value in {**(data or {}), **fields}.items():
            self[key] = _wrap(value)

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"{type(self).__name__} has no field {name!r}") from None

    def model_dump(self) -> dict[str, Any]:
        """Plain nested dicts, as pydantic-based SDK objects offer."""
        plain: dict[str, Any] = plain_data(self)
        return plain


class ChatResponse(Record):
    """What our clients return: an OpenAI-shaped chat completion, read as a dict or by attributes.

    Its shape is :class:`localjudge.types.ChatCompletion`'s, the type OpenEvals annotates with.
    """


def _wrap(value: object) -> Any:
    if isinstance(value, Mapping) and not isinstance(value, Record):
        return Record(value)
    if isinstance(value, list):
        return [_wrap(v) for v in value]
    return value


def plain_data(value: object) -> Any:
    """Plain dicts and lists, without the attribute access of our records: to print, compare or serialise."""
    if isinstance(value, Mapping):
        return {k: plain_data(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain_data(v) for v in value]
    return value


def make_chat_completion(
    content: str,
    *,
    model: str,
    finish_reason: str = "stop",
    prompt_tokens: int = 0,
    completion_tokens: int = 0,
    extra: Mapping[str, Any] | None = None,
) -> ChatResponse:
    """Build a response of the shape the OpenAI chat completions API returns."""
    return ChatResponse(
        {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
            **(extra or {}),
        }
    )


def field_of(obj: object, name: str) -> Any:
    """A response's field, read by key (our dicts) or by attribute (the openai SDK's objects)."""
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def read_choice(response: object) -> tuple[str | None, str | None]:
    """(content, finish_reason) from a response read by key or by attribute (:func:`.completion.read_completion`)."""
    completion = read_completion(response)
    return completion.text, completion.finish_reason


def read_response_format(response_format: Mapping[str, Any] | None) -> tuple[str, dict[str, Any] | None]:
    """Reduce the accepted ``response_format`` forms to ``(kind, schema)``.

    kind is "text" (free text), "json_object" (any JSON object) or "json_schema".
    """
    if response_format is None:
        return "text", None
    if not isinstance(response_format, Mapping):
        raise UsageError(f"response_format must be a dict, got {type(response_format).__name__}")
    kind = response_format.get("type")
    if kind == "text":
        return "text", None
    if kind == "json_schema":
        spec = response_format.get("json_schema")
        if not isinstance(spec, Mapping) or not isinstance(spec.get("schema"), Mapping):
            raise UsageError(
                'response_format {"type": "json_schema"} needs "json_schema": {"name": ..., "schema": {...}}'
            )
        return "json_schema", dict(spec["schema"])
    if kind == "json_object":
        schema = response_format.get("schema")
        if schema is None:
            return "json_object", None
        if not isinstance(schema, Mapping):
            raise UsageError('response_format "schema" must be a JSON schema object')
        return "json_schema", dict(schema)
    raise UsageError(f"Unsupported response_format type {kind!r}; use 'json_schema', 'json_object' or 'text'")


class _Completions:
    def __init__(self, create: Callable[..., Any]) -> None:
        self.create = create


class _Chat:
    def __init__(self, create: Callable[..., Any]) -> None:
        self.completions = _Completions(create)


class ChatClient:
    """Base of the blocking clients: subclasses implement ``_complete``."""

    name = "client"

    def __init__(self) -> None:
        self.chat = _Chat(self._create)

    def _create(self, **request: object) -> ChatResponse:
        return self._complete(request)

    def _complete(self, request: dict[str, Any]) -> ChatResponse:
        raise NotImplementedError

    @property
    def aio(self) -> AsyncChatClient:
        """An async twin sharing this client's state; calls run in a worker thread."""
        return _ThreadedAsyncClient(self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class WrappingClient(ChatClient):
    """A client around another (``self.client``) that adds one thing to every call and is otherwise that client.

    Its other attributes (``check_schema``, ``cache_identity``, ``close``, ...)
    are the wrapped client's, but ``create_many``, which would go round the wrapper.
    """

    def __init__(self, client: AnyModelClient) -> None:
        super().__init__()
        self.client = client
        self.name = getattr(client, "name", type(self).__name__)

    def __getattr__(self, name: str) -> Any:
        if name in ("client", "create_many"):
            raise AttributeError(name)
        return getattr(self.client, name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.client!r})"


class AsyncChatClient:
    """Base of the async clients: subclasses implement ``_acomplete``."""

    name = "client"

    def __init__(self) -> None:
        self.chat = _Chat(self._create)

    async def _create(self, **request: object) -> ChatResponse:
        return await self._acomplete(request)

    async def _acomplete(self, request: dict[str, Any]) -> ChatResponse:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class _ThreadedAsyncClient(AsyncChatClient):
    def __init__(self, sync_client: ChatClient) -> None:
        super().__init__()
        self.sync_client = sync_client
        self.name = sync_client.name

    async def _acomplete(self, request: dict[str, Any]) -> ChatResponse:
        response: ChatResponse = await in_worker_thread(self.sync_client._complete, request)
        return response


@functools.cache
def _worker_threads() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=64, thread_name_prefix="localjudge")


async def in_worker_thread(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``function(*args, **kwargs)`` in a worker thread, so the event loop stays free.

    Not the loop's default pool, which holds only a few threads on a small
    machine: a local client decodes as many requests side by side as are in
    flight, so every awaiting caller needs a thread of its own.
    """
    call = functools.partial(function, *args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(_worker_threads(), call)


def call_create(client: AnyModelClient, request: Mapping[str, Any]) -> Any:
    """Call ``client.chat.completions.create`` from sync code."""
    result = client.chat.completions.create(**request)
    if asyncio.iscoroutine(result):
        result.close()
        raise UsageError(
            f"{type(client).__name__} is an async client; use create_async_llm_as_judge with it, "
            "or pass its sync counterpart to create_llm_as_judge"
        )
    return result


async def acall_create(client: AnyModelClient, request: Mapping[str, Any]) -> Any:
    """Await an async client, or run a sync one in a worker thread so the loop stays free."""
    create = client.chat.completions.create
    if is_async_create(create):
        return await cast("Awaitable[Any]", create(**request))
    result = await in_worker_thread(create, **request)
    if isinstance(result, Awaitable):
        result = await result
    return result


def is_async_create(create: Callable[..., Any]) -> bool:
    """Whether ``create`` is a coroutine function, also behind decorators (the openai SDK wraps it)."""
    call_method = type(create).__dict__.get("__call__")  # a callable object's async __call__
    for candidate in (create, call_method):
        if candidate is not None and inspect.iscoroutinefunction(inspect.unwrap(candidate)):
            return True
    return False
