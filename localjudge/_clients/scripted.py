"""A client that answers from a script and records what it was asked: the double for tests of judging logic."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from typing import Any

from .base import ChatClient, ChatResponse, make_chat_completion

__all__ = ["ScriptedClient"]


class ScriptedClient(ChatClient):
    """A test double: answers with the given contents in turn and records each request.

    A content may be a string, a ``ChatResponse`` (sent as is), an exception
    (raised) or a callable taking the request. With ``repeat=True`` the script
    starts over when it runs out.
    """

    name = "scripted"

    def __init__(self, contents: Iterable[Any], *, repeat: bool = False, finish_reason: str = "stop") -> None:
        super().__init__()
        items = list(contents)
        self._script = itertools.cycle(items) if repeat else iter(items)
        self.finish_reason = finish_reason
        self.requests: list[dict[str, Any]] = []

    def _complete(self, request: dict[str, Any]) -> ChatResponse:
        self.requests.append(request)
        try:
            item = next(self._script)
        except StopIteration:
            raise AssertionError(f"ScriptedClient ran out of answers after {len(self.requests) - 1} calls") from None
        if callable(item) and not isinstance(item, BaseException):
            item = item(request)
        if isinstance(item, BaseException):
            raise item
        if isinstance(item, Mapping):
            return ChatResponse(item)
        return make_chat_completion(
            str(item), model=str(request.get("model") or self.name), finish_reason=self.finish_reason
        )
