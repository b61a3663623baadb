"""Teach any OpenAI-shaped client what each server accepts, and bound its answers.

The official openai SDK sends ``{"type": "json_schema", ...}`` as given, so it
fails on every call to a llama-cpp-python server. Wrapped here, a rejected
schema form is resent as ``{"type": "json_object", "schema": ...}`` and the
endpoint is remembered in the same memo the remote clients use.

The SDK sends no ``max_tokens`` either, so a rambling model runs until its
context is full. Wrapped here, a request without a bound gets ours
(:mod:`~localjudge._clients.bound`), resent as ``max_completion_tokens`` to a
model that refuses ``max_tokens``. Both decisions are made once, in
``_Adapter.next_attempt``; the sync and async wrappers only make the call.
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from ..types import AnyModelClient
from .base import _Chat, is_async_create
from .bound import BOUND_FIELD, MAX_COMPLETION_TOKENS, MAX_TOKENS, is_max_tokens_refusal, with_bound
from .formats import FORMATS, LLAMA_FORM, OPENAI_FORM, is_schema_rejection, wire_response_format

__all__ = ["AsyncFormatAdapter", "FormatAdapter", "adapt_response_format", "is_async_create"]


def _endpoint_key(client: AnyModelClient) -> str:
    base_url = getattr(client, "base_url", None)
    if base_url:
        return str(base_url).rstrip("/")
    return f"client:{id(client)}"


@dataclass(frozen=True)
class _Attempt:
    """One request as sent to the wrapped client, and what in it may be refused."""

    body: dict[str, Any]
    form: str
    schema_sent: bool  # a schema a server might refuse in this form
    bound_added: str | None  # the bound field we added (None: the caller's bound stands)


class _Adapter:
    def __init__(self, client: AnyModelClient) -> None:
        self.client = client
        self.key = _endpoint_key(client)
        self.name = getattr(client, "name", None) or type(client).__name__
        self.chat = _Chat(self._create)

    def first_attempt(self, request: Mapping[str, Any]) -> _Attempt:
        """The request in the form and with the bound this endpoint is known to take."""
        form = FORMATS.get(self.key)
        kind, schema, wire = wire_response_format(request.get("response_format"), form)
        adapted = dict(request)
        if wire is not None:
            adapted["response_format"] = wire
        body, bound_added = with_bound(adapted, BOUND_FIELD.get(self._model_key(adapted)))
        return _Attempt(body, form, kind == "json_schema" and schema is not None, bound_added)

    def next_attempt(self, request: Mapping[str, Any], attempt: _Attempt, exc: BaseException) -> _Attempt | None:
        """What to send after ``exc``, learnt for the endpoint; None when the error stands as it is."""
        status = getattr(exc, "status_code", None)
        if not isinstance(status, int) or isinstance(status, bool):
            return None
        body = getattr(exc, "body", None)
        if attempt.schema_sent and attempt.form == OPENAI_FORM and is_schema_rejection(status, f"{body!r} {exc}"):
            FORMATS.set(self.key, LLAMA_FORM)
        elif attempt.bound_added == MAX_TOKENS and (
            is_max_tokens_refusal(status, body) or is_max_tokens_refusal(status, str(exc))
        ):
            BOUND_FIELD.set(self._model_key(attempt.body), MAX_COMPLETION_TOKENS)
        else:
            return None
        following = self.first_attempt(request)
        return following if following.body != attempt.body else None

    def _model_key(self, request: Mapping[str, Any]) -> str:
        return f"{self.key}#{request.get('model') or ''}"

    def __getattr__(self, name: str) -> Any:
        if name == "client":  # not set yet (copying, unpickling): don't recurse
            raise AttributeError(name)
        return getattr(self.client, name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.client!r})"


class FormatAdapter(_Adapter):
    """Wraps a blocking client; see the module docstring."""

    def _create(self, **request: object) -> Any:
        attempt = self.first_attempt(request)
        while True:
            try:
                return self.client.chat.completions.create(**attempt.body)
            except Exception as exc:
                following = self.next_attempt(request, attempt, exc)
                if following is None:
                    raise
            attempt = following


class AsyncFormatAdapter(_Adapter):
    """Wraps an async client (``await client.chat.completions.create(...)``)."""

    async def _create(self, **request: object) -> Any:
        attempt = self.first_attempt(request)
        while True:
            try:
                return await cast("Awaitable[Any]", self.client.chat.completions.create(**attempt.body))
            except Exception as exc:
                following = self.next_attempt(request, attempt, exc)
                if following is None:
                    raise
            attempt = following


def adapt_response_format(client: AnyModelClient) -> Any:
    """``client`` wrapped to negotiate the schema form and bound its answers; our own clients already do."""
    from .base import AsyncChatClient, ChatClient

    if isinstance(client, (ChatClient, AsyncChatClient, _Adapter)):
        return client
    return AsyncFormatAdapter(client) if is_async_create(client.chat.completions.create) else FormatAdapter(client)
