"""A localjudge client as a LangChain chat model (extra: langchain), for code that takes one.

The other way round from :mod:`.langchain`: here a local model (or any
ModelClient) answers LangChain's ``invoke``, in free text, greedy unless told
otherwise, and bounded in tokens. OpenEvals' simulated user
(``create_llm_simulated_user(client=...)``) takes a chat model: given this
one, a multi-turn simulation runs offline.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Optional

from ..errors import MissingDependencyError, UsageError

try:  # the class is LangChain's chat model: without LangChain there is none to define
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage, BaseMessage, convert_to_openai_messages
    from langchain_core.outputs import ChatGeneration, ChatResult
except ImportError as exc:
    raise MissingDependencyError("LocalChatModel", "langchain-core", extra="langchain") from exc
from pydantic import ConfigDict, PrivateAttr

from ..types import JudgeRequest
from .base import acall_create, call_create, read_choice

__all__ = ["LocalChatModel"]

#: what one call may set over the model's own (``invoke(..., temperature=...)``, ``bind(max_tokens=...)``)
_PER_CALL = frozenset({"temperature", "max_tokens"})


class LocalChatModel(BaseChatModel):
    """A LangChain chat model over localjudge: ``model`` (a model spec, the default judge's by default) or ``client``.

    Each reply is free text, at most ``max_tokens`` tokens; one cut at that
    bound says so in its ``response_metadata`` (``finish_reason: "length"``).
    Each reply has an id of its own, as conversations that merge messages by
    id (OpenEvals' simulator) need.
    """

    model: Optional[str] = None
    client: Any = None
    temperature: float = 0.0
    max_tokens: int = 512

    model_config = ConfigDict(arbitrary_types_allowed=True)
    _resolved: Any = PrivateAttr(default=None)

    @property
    def _llm_type(self) -> str:
        return "localjudge"

    def _client(self) -> Any:
        """The client that answers: the one given, else the model named, loaded once (shared in the process)."""
        if self.client is not None:
            return self.client
        if self._resolved is None:
            from .resolve import default_model_spec, resolve_model

            self._resolved = resolve_model(self.model or default_model_spec())
        return self._resolved

    def _request(
        self, messages: Sequence[BaseMessage], stop: Optional[list[str]], options: Mapping[str, Any]
    ) -> JudgeRequest:
        """The request for ``messages``; ``options`` given to one call (``invoke(..., max_tokens=8)``) over the model's."""
        unknown = sorted(set(options) - _PER_CALL)
        if unknown:
            raise UsageError(
                f"LocalChatModel takes {', '.join(sorted(_PER_CALL))} for one call, not {', '.join(unknown)}; "
                "a local model here answers in free text only (no tools, no structured output)"
            )
        request: JudgeRequest = {
            "messages": list(convert_to_openai_messages(list(messages))),
            "temperature": options.get("temperature", self.temperature),
            "max_tokens": options.get("max_tokens", self.max_tokens),
        }
        if stop:
            request["stop"] = list(stop)
        return request

    def _result(self, response: object) -> ChatResult:
        content, finish_reason = read_choice(response)
        message = AIMessage(
            content=content or "",
            id=f"localjudge-{uuid.uuid4()}",
            response_metadata={"finish_reason": finish_reason, "model_name": self.model or "localjudge"},
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _generate(
        self, messages: list[BaseMessage], stop: Optional[list[str]] = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        return self._result(call_create(self._client(), self._request(messages, stop, kwargs)))

    async def _agenerate(
        self, messages: list[BaseMessage], stop: Optional[list[str]] = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        return self._result(await acall_create(self._client(), self._request(messages, stop, kwargs)))
