"""Run one remote call, sync or async, and report what happened and what it left open."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from localjudge._clients.remote import AsyncOpenAICompatibleClient, OpenAICompatibleClient

SCORE_SCHEMA = {
    "type": "object",
    "properties": {"score": {"type": "boolean"}},
    "required": ["score"],
    "additionalProperties": False,
}

REQUEST = {
    "model": "judge",
    "messages": [{"role": "user", "content": "Is 2 + 2 = 4? Answer as JSON."}],
    "response_format": {"type": "json_schema", "json_schema": {"name": "score", "schema": SCORE_SCHEMA}},
    "max_tokens": 20,
}

# The body llama-cpp-python 0.3.36's server sends for response_format json_schema, verbatim.
LLAMA_REJECTION = {
    "error": {
        "message": "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
        "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', "
        "'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n  File \"llama_cpp/server/app.py\", line 376, "
        "in create_chat_completion\n    POST /v1/chat/completions",
        "type": "internal_server_error",
        "param": None,
        "code": None,
    }
}

# OpenAI's answer to max_tokens from a reasoning model (o1, o3, o4-mini, gpt-5).
O_SERIES_REFUSAL = {
    "error": {
        "message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
        "Use 'max_completion_tokens' instead.",
        "type": "invalid_request_error",
        "param": "max_tokens",
        "code": "unsupported_parameter",
    }
}

# Small waits so a fault test takes about a second, not a minute.
FAST = {"max_retries": 2, "backoff": 0.01, "max_backoff": 0.05, "timeout": 5.0, "connect_timeout": 1.0}


@dataclass
class Run:
    response: Any
    error: BaseException | None
    elapsed: float
    busy_connections: int  # connections in the client's pool still in use after the call
    open_before_close: int | None  # the server's open connections, settled, before the client closes
    open_after_close: int | None

    def assert_no_leaks(self) -> None:
        assert self.busy_connections == 0, "a response was left unclosed in the pool"
        if self.open_before_close is not None:
            assert self.open_before_close <= 1, "failed connections were left open"
            assert self.open_after_close == 0, "closing the client left connections open"


def _busy(http: Any) -> int:
    if http is None:
        return 0
    pool = http._transport._pool
    return sum(1 for conn in pool.connections if not conn.is_idle() and not conn.is_closed())


def run(mode: str, base_url: str, server: Any = None, request: dict | None = None, **options: Any) -> Run:
    options = {**FAST, **options}
    request = dict(request or REQUEST)
    if mode == "sync":
        return _run_sync(base_url, server, request, options)
    return asyncio.run(_run_async(base_url, server, request, options))


def _run_sync(base_url: str, server: Any, request: dict, options: dict) -> Run:
    client = OpenAICompatibleClient(base_url, **options)
    response = error = None
    start = time.monotonic()
    try:
        response = client.chat.completions.create(**request)
    except Exception as exc:
        error = exc
    elapsed = time.monotonic() - start
    busy = _busy(client._http)
    before = server.wait_open_at_most(1) if server is not None else None
    client.close()
    after = server.wait_open_at_most(0) if server is not None else None
    return Run(response, error, elapsed, busy, before, after)


async def _run_async(base_url: str, server: Any, request: dict, options: dict) -> Run:
    client = AsyncOpenAICompatibleClient(base_url, **options)
    response = error = None
    start = time.monotonic()
    try:
        response = await client.chat.completions.create(**request)
    except Exception as exc:
        error = exc
    elapsed = time.monotonic() - start
    busy = _busy(client._http)
    before = await asyncio.to_thread(server.wait_open_at_most, 1) if server is not None else None
    await client.aclose()
    after = await asyncio.to_thread(server.wait_open_at_most, 0) if server is not None else None
    return Run(response, error, elapsed, busy, before, after)
