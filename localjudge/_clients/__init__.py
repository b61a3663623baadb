"""Clients that produce chat completions, all behind the OpenAI-shaped ModelClient protocol.

:mod:`.resolve` turns a model spec (``default``, ``PATH.gguf``, ``openai:NAME``, ...) into one of them.
"""

from __future__ import annotations

from .._lazy import lazy_attributes
from .base import AsyncChatClient, ChatClient, ChatResponse, make_chat_completion
from .scripted import ScriptedClient

__all__ = [
    "AsyncChatClient",
    "AsyncFallbackClient",
    "AsyncOpenAICompatibleClient",
    "AsyncPoolClient",
    "ChatClient",
    "ChatResponse",
    "FallbackClient",
    "LlamaCppClient",
    "LocalClient",
    "MeteredClient",
    "OpenAICompatibleClient",
    "OutlinesClient",
    "PoolClient",
    "ScriptedClient",
    "TransformersClient",
    "adapt_response_format",
    "make_chat_completion",
]

_LAZY = {
    "LlamaCppClient": ".llamacpp",
    "LocalClient": ".local",
    "OutlinesClient": ".outlines",
    "TransformersClient": ".transformers",
    "OpenAICompatibleClient": ".remote",
    "AsyncOpenAICompatibleClient": ".remote",
    "FallbackClient": ".fallback",
    "AsyncFallbackClient": ".fallback",
    "PoolClient": ".pool",
    "AsyncPoolClient": ".pool",
    "MeteredClient": ".metered",
    "adapt_response_format": ".adapter",
}

__getattr__ = lazy_attributes(__name__, _LAZY)
