"""An agent's trajectory (OpenAI-style messages, tool calls included) as the text a judge reads.

The text is OpenEvals' rendering, so an import swap sends the same prompt:
each message in a tag named by its role, an assistant's tool calls as
``<tool_call>`` blocks (name, then the arguments as JSON), a tool's answer
as a ``<tool_result>`` with the id of the call it answers, messages apart by
a blank line. A trajectory that cannot be rendered faithfully is an
:class:`~localjudge.errors.InvalidTrajectoryError` that names the item and
says what to write instead.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import InvalidTrajectoryError
from .messages import is_langchain_message, langchain_to_openai

__all__ = ["ROLES", "render_trajectory", "trajectory_messages", "trajectory_text"]

#: the roles a message may have (LangChain's names for two of them are read as OpenAI's)
ROLES = ("user", "assistant", "system", "developer", "tool", "function")
ROLE_ALIASES = {"human": "user", "ai": "assistant"}

MESSAGE_SHAPE = 'a message is {"role": "user" | "assistant" | "tool" | ..., "content": "..."}'
TOOL_CALL_SHAPE = 'a tool call is {"id": ..., "type": "function", "function": {"name": "...", "arguments": "{...}"}}'


def trajectory_text(value: object, name: str = "outputs") -> str:
    """``value`` (messages, one message, or a dict holding ``messages``) as the judge's text; ``name`` for errors."""
    return render_trajectory(trajectory_messages(value, name))


def trajectory_messages(value: object, name: str = "outputs") -> list[dict[str, Any]]:
    """The trajectory as checked OpenAI messages: text content, tool calls with JSON-object arguments.

    Accepts what OpenEvals accepts: a list of message dicts or LangChain
    messages, a single message, or a dict with a ``messages`` list (an
    agent's state).
    """
    if value is None:
        raise InvalidTrajectoryError(f"{name} is required: the trajectory to judge, as a list of messages")
    where = name
    if isinstance(value, Mapping):
        if "role" in value:
            value = [value]
        elif "messages" in value:
            value, where = value["messages"], f"{name}.messages"
            if not isinstance(value, (list, tuple)):
                raise InvalidTrajectoryError(f"{where} is {_kind(value)}, not a list of messages; {MESSAGE_SHAPE}")
        else:
            keys = ", ".join(map(repr, list(value)[:5])) or "none"
            raise InvalidTrajectoryError(
                f"{name} is a dict with neither 'messages' nor 'role' (its keys: {keys}); give the list of "
                "messages, or a dict holding it under 'messages'"
            )
    elif is_langchain_message(value):
        value = [value]
    elif not isinstance(value, (list, tuple)):
        raise InvalidTrajectoryError(
            f"{name} is {_kind(value)}, not a trajectory; give a list of messages ({MESSAGE_SHAPE})"
        )
    if not value:
        raise InvalidTrajectoryError(f"{where} holds no messages; a trajectory has at least one")
    return [_message(item, f"{where}[{index}]") for index, item in enumerate(value)]


def render_trajectory(messages: Sequence[Mapping[str, Any]]) -> str:
    """Checked messages (:func:`trajectory_messages`) in OpenEvals' tags, byte for byte."""
    return "\n\n".join(_render_message(message) for message in messages)


def _render_message(message: Mapping[str, Any]) -> str:
    role, content = message["role"], message["content"]
    calls = "\n".join(
        "<tool_call>\n"
        f"<name>{call['function']['name']}</name>\n"
        f"<arguments>{call['function']['arguments']}</arguments>\n"
        "</tool_call>"
        for call in message.get("tool_calls", ())
    )
    if calls:
        content = f"{content}\n{calls}" if content else calls
    if message.get("tool_call_id"):
        content = f"<tool_result>\n<id>{message['tool_call_id']}</id>\n<content>{content}</content>\n</tool_result>"
    return f"<{role}>\n{content}\n</{role}>"


def _message(item: object, where: str) -> dict[str, Any]:
    if is_langchain_message(item):
        item = langchain_to_openai(item)
    if not isinstance(item, Mapping):
        raise InvalidTrajectoryError(f"{where} is {_kind(item)}, not a message; {MESSAGE_SHAPE}")
    role = item.get("role", item.get("type"))  # LangChain's dicts may name the role "type"
    if role is None:
        raise InvalidTrajectoryError(f"{where} has no 'role'; {MESSAGE_SHAPE}")
    role = ROLE_ALIASES.get(role, role) if isinstance(role, str) else role
    if role not in ROLES:
        raise InvalidTrajectoryError(f"{where} has the role {role!r}; a role is one of {', '.join(ROLES)}")
    message: dict[str, Any] = {"role": role, "content": _content(item.get("content"), f"{where}.content")}
    if role == "assistant":  # only an assistant calls tools; OpenEvals shows no other message's tool_calls
        calls = item.get("tool_calls")
        if calls:
            if not isinstance(calls, (list, tuple)):
                raise InvalidTrajectoryError(
                    f"{where}.tool_calls is {_kind(calls)}, not a list of tool calls; {TOOL_CALL_SHAPE}"
                )
            message["tool_calls"] = [_tool_call(call, f"{where}.tool_calls[{i}]") for i, call in enumerate(calls)]
    if role == "tool" and item.get("tool_call_id") is not None:
        message["tool_call_id"] = str(item["tool_call_id"])
    return message


def _content(content: object, where: str) -> str:
    """A message's text: a string, or text blocks one per line (as LangChain joins them); none is empty."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, (list, tuple)):
        raise InvalidTrajectoryError(
            f"{where} is {_kind(content)}; a message's content is text or a list of text blocks "
            "(write a tool's structured result as JSON text)"
        )
    texts = []
    for index, block in enumerate(content):
        if isinstance(block, str):
            texts.append(block)
        elif isinstance(block, Mapping) and block.get("type") == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif isinstance(block, Mapping) and block.get("type") == "text":
            raise InvalidTrajectoryError(f'{where}[{index}] is a text block whose "text" is not a string')
        else:
            kind = f"a {block.get('type')!r} block" if isinstance(block, Mapping) else _kind(block)
            raise InvalidTrajectoryError(
                f"{where}[{index}] is {kind}; a trajectory judge reads text only: "
                'give text blocks ({"type": "text", "text": "..."}) or the content as a string'
            )
    return "\n".join(texts)


def _tool_call(call: object, where: str) -> dict[str, Any]:
    """One tool call in OpenAI's form; LangChain's (``name``, ``args``) is read too. Arguments must be an object."""
    if not isinstance(call, Mapping):
        raise InvalidTrajectoryError(f"{where} is {_kind(call)}, not an object; {TOOL_CALL_SHAPE}")
    if "function" in call:
        function = call["function"]
        if not isinstance(function, Mapping):
            raise InvalidTrajectoryError(f"{where}.function is {_kind(function)}, not an object; {TOOL_CALL_SHAPE}")
        name, arguments, field = function.get("name"), function.get("arguments"), f"{where}.function.arguments"
    else:
        name, arguments, field = call.get("name"), call.get("args"), f"{where}.args"
    if not isinstance(name, str):
        raise InvalidTrajectoryError(f"{where} has no tool name (a string); {TOOL_CALL_SHAPE}")
    return {
        "id": "" if call.get("id") is None else str(call["id"]),
        "type": "function",
        "function": {"name": name, "arguments": _arguments(arguments, field)},
    }


def _arguments(arguments: object, where: str) -> str:
    """The arguments as JSON text, written anew as OpenEvals writes them (``", "`` and ``": "``, non-ASCII kept)."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments, strict=False)
        except json.JSONDecodeError as exc:
            raise InvalidTrajectoryError(
                f"{where} is not valid JSON ({exc.msg} at column {exc.colno}); arguments are a JSON object's text"
            ) from None
    if not isinstance(arguments, Mapping):
        raise InvalidTrajectoryError(
            f"{where} is {_kind(arguments)}; a tool call's arguments are a JSON object (its text, or a dict); "
            'a tool without arguments takes "{}"'
        )
    try:
        return json.dumps(arguments, ensure_ascii=False)
    except (TypeError, ValueError) as exc:  # a value JSON cannot write, or a circular reference
        raise InvalidTrajectoryError(f"{where} cannot be written as JSON: {exc}") from None


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, str):
        return "a string"
    name = type(value).__name__
    return f"an {name}" if name[0].lower() in "aeiou" else f"a {name}"
