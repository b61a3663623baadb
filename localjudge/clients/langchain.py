"""A LangChain chat model as a ModelClient (extra: langchain)."""

from __future__ import annotations

import json
from typing import Any

from ..errors import OutputParseError
from .base import ChatClient, ChatCompletion, make_chat_completion, read_response_format

__all__ = ["LangChainClient"]


class LangChainClient(ChatClient):
    """Wraps a LangChain ``BaseChatModel`` as a ModelClient."""

    name = "langchain"

    def __init__(self, chat_model: Any) -> None:
        super().__init__()
        self.chat_model = chat_model

    def _complete(self, request: dict[str, Any]) -> ChatCompletion:
        from langchain_core.messages import convert_to_messages

        messages = convert_to_messages(request["messages"])
        kind, schema = read_response_format(request.get("response_format"))
        model_name = str(request.get("model") or getattr(self.chat_model, "model_name", "langchain"))
        if kind == "json_schema" and schema is not None:
            structured = self.chat_model.with_structured_output({"title": "output", **schema}, include_raw=True)
            try:
                outcome = structured.invoke(messages)
            except Exception as exc:
                if type(exc).__name__ != "OutputParserException":
                    raise
                raw = getattr(exc, "llm_output", None) or ""
                raise OutputParseError(
                    f"The model's answer did not parse: {exc}", raw_output=raw, backend=self.name
                ) from exc
            if outcome.get("parsing_error") is not None or outcome.get("parsed") is None:
                raise OutputParseError(
                    f"The model's answer did not parse: {outcome.get('parsing_error') or 'nothing was read from it'}",
                    raw_output=_raw_text(outcome.get("raw")),
                    backend=self.name,
                )
            return make_chat_completion(json.dumps(outcome["parsed"], ensure_ascii=False), model=model_name)
        reply = self.chat_model.invoke(messages)
        return make_chat_completion(str(reply.content), model=model_name)


def _raw_text(message: Any) -> str:
    """What the model said: its text (its text blocks joined), else the arguments of its tool calls, valid or not."""
    content = getattr(message, "content", None)
    if isinstance(content, list):
        content = "".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in content)
    if isinstance(content, str) and content:
        return content
    calls = [*(getattr(message, "tool_calls", None) or []), *(getattr(message, "invalid_tool_calls", None) or [])]
    arguments = [call.get("args") for call in calls]
    return "\n".join(a if isinstance(a, str) else json.dumps(a, ensure_ascii=False) for a in arguments)
