"""Clients that produce chat completions, all behind the OpenAI-shaped ModelClient protocol."""

from __future__ import annotations

from typing import Any

from .base import AsyncChatClient, ChatClient, ChatCompletion, ScriptedClient, make_chat_completion

__all__ = [
    "AsyncChatClient",
    "AsyncFallbackClient",
    "AsyncOpenAICompatibleClient",
    "ChatClient",
    "ChatCompletion",
    "FallbackClient",
    "LlamaCppClient",
    "OpenAICompatibleClient",
    "ScriptedClient",
    "TransformersClient",
    "adapt_response_format",
    "make_chat_completion",
]

_LAZY = {
    "LlamaCppClient": ".llamacpp",
    "TransformersClient": ".transformers",
    "OpenAICompatibleClient": ".remote",
    "AsyncOpenAICompatibleClient": ".remote",
    "FallbackClient": ".fallback",
    "AsyncFallbackClient": ".fallback",
    "adapt_response_format": ".adapter",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module 'localjudge.clients' has no attribute {name!r}")
