"""Text of chat messages, and of the values put into them: the leaf every prompt path shares."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from ..errors import UsageError

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

__all__ = ["Part", "is_langchain_message", "langchain_to_openai", "message_text", "render_value"]

Part = tuple[str, bool]  # (text, is_markup) of a rendered prompt: markup may spell special tokens, text may not


def message_text(message: Mapping[str, Any]) -> str:
    """The text of a chat message whose content is a string or text content blocks."""
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if isinstance(block, Mapping) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        else:
            raise UsageError(_not_text(block))
    return "".join(parts)


#: what a content block that is not text holds, and the judge that can take it, by the block's type
_MEDIA = {
    "image_url": ("an image", "a vision model"),
    "input_audio": ("audio", "a model that takes audio input"),
    "file": ("a file", "a model that takes file input"),
}


def _not_text(block: object) -> str:
    """Why a text-only judge refuses ``block``, and which judge could take it."""
    kind = block.get("type") if isinstance(block, Mapping) else type(block).__name__
    what, model = _MEDIA.get(str(kind), (f"a {kind!r} content block", "a model that takes it"))
    return (
        f"This judge reads text only (a local model here is text-only), and a message holds {what} "
        f"({kind!r} content block). Judge it with {model} on an OpenAI-compatible server, which is sent the "
        "content blocks as they are: judge=localjudge.OpenAICompatibleClient(BASE_URL, model=NAME) or an "
        "openai.OpenAI(base_url=...) client; or give this judge a text description of it instead."
    )


def render_value(value: object) -> str:
    """Strings go in as they are; anything else as ``json.dumps`` writes it, as OpenEvals renders a prompt's values.

    (So an import swap from OpenEvals sends the same bytes; objects JSON
    cannot write go in as their ``model_dump()``/``dict()``/``str()``.)
    """
    if isinstance(value, str):
        return value
    try:
        return json.dumps(_openai_messages(value), default=_json_fallback)
    except ValueError as exc:  # circular references
        raise UsageError(f"Could not serialise a prompt value to JSON: {exc}") from exc


def is_langchain_message(value: object) -> bool:
    """A LangChain message object (told by its module, so LangChain need not be imported to ask)."""
    return type(value).__module__.startswith("langchain_core.messages")


def langchain_to_openai(message: object) -> dict[str, Any]:
    """One LangChain message as OpenAI's message dict, its id kept, as OpenEvals converts it.

    ``message`` is one :func:`is_langchain_message` accepted; LangChain checks it again.
    """
    from langchain_core.messages import convert_to_openai_messages

    converted = convert_to_openai_messages([cast("BaseMessage", message)])[0]
    message_id = getattr(message, "id", None)
    if message_id is not None and converted.get("id") is None:
        converted["id"] = message_id
    return converted


def _openai_messages(value: object) -> object:
    """LangChain messages as OpenAI's message dicts, where OpenEvals converts them: the value itself, the
    items of a list, or the ``messages`` of a dict (an agent's run)."""
    if is_langchain_message(value):
        return langchain_to_openai(value)
    if isinstance(value, list):
        return [_openai_messages(item) if is_langchain_message(item) else item for item in value]
    if isinstance(value, dict) and isinstance(value.get("messages"), list):
        return {**value, "messages": _openai_messages(value["messages"])}
    return value


def _json_fallback(value: object) -> object:
    for method in ("model_dump", "dict", "to_dict"):
        if callable(getattr(value, method, None)):
            return getattr(value, method)()
    return str(value)
