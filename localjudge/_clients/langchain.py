"""A LangChain chat model as a ModelClient (extra: langchain).

Its answers are bounded like every client's (:mod:`~localjudge._clients.bound`):
a request's own bound, else the chat model's, else ours, set on a copy of the
chat model; an answer that stopped at the bound is a truncation, not a score.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import OutputParseError, TruncatedOutputError
from .base import ChatClient, ChatResponse, make_chat_completion, read_response_format
from .bound import chat_model_bound, given_bound

__all__ = ["LangChainClient"]


class LangChainClient(ChatClient):
    """Wraps a LangChain ``BaseChatModel`` as a ModelClient."""

    name = "langchain"

    def __init__(self, chat_model: object) -> None:
        super().__init__()
        self.chat_model = chat_model

    def _complete(self, request: dict[str, Any]) -> ChatResponse:
        from langchain_core.messages import convert_to_messages

        messages = convert_to_messages(request["messages"])
        kind, schema = read_response_format(request.get("response_format"))
        model_name = str(request.get("model") or getattr(self.chat_model, "model_name", "langchain"))
        chat_model = self._bounded(request, model_name)
        if kind == "json_schema" and schema is not None:
            structured = chat_model.with_structured_output({"title": "output", **schema}, include_raw=True)
            try:
                outcome = structured.invoke(messages)
            except Exception as exc:
                if type(exc).__name__ == "LengthFinishReasonError":  # the openai SDK's parser refuses a cut answer
                    raise self._truncated(_completion_text(exc)) from exc
                if type(exc).__name__ != "OutputParserException":
                    raise
                raw = getattr(exc, "llm_output", None) or ""
                raise OutputParseError(
                    f"The model's answer did not parse: {exc}", raw_output=raw, backend=self.name
                ) from exc
            if _stopped_at_bound(outcome.get("raw")):
                raise self._truncated(_raw_text(outcome.get("raw")))
            if outcome.get("parsing_error") is not None or outcome.get("parsed") is None:
                raise OutputParseError(
                    f"The model's answer did not parse: {outcome.get('parsing_error') or 'nothing was read from it'}",
                    raw_output=_raw_text(outcome.get("raw")),
                    backend=self.name,
                )
            return make_chat_completion(json.dumps(outcome["parsed"], ensure_ascii=False), model=model_name)
        reply = chat_model.invoke(messages)
        finish_reason = "length" if _stopped_at_bound(reply) else "stop"
        return make_chat_completion(str(reply.content), model=model_name, finish_reason=finish_reason)

    def _truncated(self, raw: str) -> TruncatedOutputError:
        return TruncatedOutputError(
            "The model's answer stopped at its token bound; raise max_tokens or shorten the prompt",
            raw_output=raw,
            backend=self.name,
        )

    def _bounded(self, request: dict[str, Any], model_name: str) -> Any:
        """The chat model with its answers bounded (a copy: the user's model is left as it was)."""
        settings = getattr(self.chat_model, "__dict__", {})
        update = chat_model_bound(settings, model_name, given_bound(request))
        copy = getattr(self.chat_model, "model_copy", None)
        return copy(update=update) if update and callable(copy) else self.chat_model


def _stopped_at_bound(message: object) -> bool:
    """Whether a reply says it stopped at its token bound, in any provider's words for it."""
    metadata = getattr(message, "response_metadata", None) or {}
    reasons = (metadata.get(key) for key in ("finish_reason", "stop_reason", "done_reason"))
    return any(isinstance(reason, str) and reason.lower() in ("length", "max_tokens") for reason in reasons)


def _completion_text(exc: object) -> str:
    """The text of the completion an openai SDK error carries (its ``completion``), or nothing."""
    choices = getattr(getattr(exc, "completion", None), "choices", None) or []
    content = getattr(getattr(choices[0], "message", None), "content", None) if choices else None
    return content if isinstance(content, str) else ""


def _raw_text(message: object) -> str:
    """What the model said: its text (its text blocks joined), else the arguments of its tool calls, valid or not."""
    content = getattr(message, "content", None)
    if isinstance(content, list):
        content = "".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in content)
    if isinstance(content, str) and content:
        return content
    calls = [*(getattr(message, "tool_calls", None) or []), *(getattr(message, "invalid_tool_calls", None) or [])]
    arguments = [call.get("args") for call in calls]
    return "\n".join(a if isinstance(a, str) else json.dumps(a, ensure_ascii=False) for a in arguments)
