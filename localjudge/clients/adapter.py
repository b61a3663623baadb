"""Teach any OpenAI-shaped client the ``response_format`` each server accepts.

The official openai SDK sends ``{"type": "json_schema", ...}`` as given, so it
fails on every call to a llama-cpp-python server. Wrapped here, a rejected
schema form is resent as ``{"type": "json_object", "schema": ...}`` and the
endpoint is remembered in the same memo the remote clients use.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .base import _Chat, is_async_create
from .formats import FORMATS, LLAMA_FORM, OPENAI_FORM, is_schema_rejection, wire_response_format

__all__ = ["AsyncFormatAdapter", "FormatAdapter", "adapt_response_format", "is_async_create"]


def _endpoint_key(client: Any) -> str:
    base_url = getattr(client, "base_url", None)
    if base_url:
        return str(base_url).rstrip("/")
    return f"client:{id(client)}"


def _rejection(exc: BaseException) -> bool:
    status = getattr(exc, "status_code", None)
    if not isinstance(status, int):
        return False
    body = getattr(exc, "body", None)
    return is_schema_rejection(status, f"{body!r} {exc}")


class _Adapter:
    def __init__(self, client: Any) -> None:
        self.client = client
        self.key = _endpoint_key(client)
        self.name = getattr(client, "name", None) or type(client).__name__
        self.chat = _Chat(self._create)

    def _request(self, request: Mapping[str, Any], form: str) -> tuple[dict[str, Any], bool]:
        """The request in ``form``, and whether it carries a schema a server might reject."""
        kind, schema, wire = wire_response_format(request.get("response_format"), form)
        adapted = dict(request)
        if wire is not None:
            adapted["response_format"] = wire
        return adapted, kind == "json_schema" and schema is not None and form == OPENAI_FORM

    def __getattr__(self, name: str) -> Any:
        if name == "client":  # not set yet (copying, unpickling): don't recurse
            raise AttributeError(name)
        return getattr(self.client, name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.client!r})"


class FormatAdapter(_Adapter):
    """Wraps a blocking client; see the module docstring."""

    def _create(self, **request: Any) -> Any:
        adapted, may_be_rejected = self._request(request, FORMATS.get(self.key))
        try:
            return self.client.chat.completions.create(**adapted)
        except Exception as exc:
            if not (may_be_rejected and _rejection(exc)):
                raise
        FORMATS.set(self.key, LLAMA_FORM)
        return self.client.chat.completions.create(**self._request(request, LLAMA_FORM)[0])


class AsyncFormatAdapter(_Adapter):
    """Wraps an async client (``await client.chat.completions.create(...)``)."""

    async def _create(self, **request: Any) -> Any:
        adapted, may_be_rejected = self._request(request, FORMATS.get(self.key))
        try:
            return await self.client.chat.completions.create(**adapted)
        except Exception as exc:
            if not (may_be_rejected and _rejection(exc)):
                raise
        FORMATS.set(self.key, LLAMA_FORM)
        return await self.client.chat.completions.create(**self._request(request, LLAMA_FORM)[0])


def adapt_response_format(client: Any) -> Any:
    """``client`` wrapped to negotiate the schema form; our own clients already do and pass through."""
    from .base import AsyncChatClient, ChatClient

    if isinstance(client, (ChatClient, AsyncChatClient, _Adapter)):
        return client
    return AsyncFormatAdapter(client) if is_async_create(client.chat.completions.create) else FormatAdapter(client)
