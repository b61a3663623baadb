"""A LangChain chat model as a ModelClient (extra: langchain)."""

from __future__ import annotations

import json
from typing import Any

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
            structured = self.chat_model.with_structured_output({"title": "output", **schema})
            return make_chat_completion(json.dumps(structured.invoke(messages), ensure_ascii=False), model=model_name)
        reply = self.chat_model.invoke(messages)
        return make_chat_completion(str(reply.content), model=model_name)
