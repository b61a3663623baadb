"""LangChain prompts as a source of chat messages, for users who already have them (extra: langchain).

The chat-model side (a LangChain model as a judge) is :mod:`localjudge._clients.langchain`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from ..errors import MissingDependencyError, MissingTemplateVariableError, UsageError
from ..types import RunnablePrompt
from .messages import render_value

__all__ = ["runnable_to_messages"]

_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool", "chat": "user"}


class _LangChainMessage(Protocol):
    """A LangChain message as a prompt value's ``to_messages()`` gives it."""

    @property
    def type(self) -> str: ...

    @property
    def content(self) -> object: ...


def _require_langchain() -> None:
    try:
        import langchain_core  # noqa: F401
    except ImportError as exc:
        raise MissingDependencyError("LangChain prompts and chat models", "langchain-core", "langchain") from exc


def runnable_to_messages(prompt: RunnablePrompt, values: Mapping[str, object]) -> list[dict[str, Any]]:
    """Invoke a LangChain prompt with the evaluator's values; return OpenAI-style messages."""
    _require_langchain()
    given = {k: render_value(v) for k, v in values.items() if v is not None}
    for name in getattr(prompt, "input_variables", None) or []:
        if name not in given:
            raise MissingTemplateVariableError(name, list(given))
    optional = set(getattr(prompt, "optional_variables", None) or [])
    wanted = set(getattr(prompt, "input_variables", None) or []) | optional
    prompt_value = prompt.invoke({k: v for k, v in given.items() if not wanted or k in wanted})
    if hasattr(prompt_value, "to_messages"):
        return [_message_dict(m) for m in prompt_value.to_messages()]
    if isinstance(prompt_value, str):
        return [{"role": "user", "content": prompt_value}]
    raise UsageError(
        f"The LangChain prompt returned {type(prompt_value).__name__}; expected a prompt value or messages"
    )


def _message_dict(message: _LangChainMessage) -> dict[str, Any]:
    return {"role": _ROLES.get(message.type, message.type), "content": message.content}
