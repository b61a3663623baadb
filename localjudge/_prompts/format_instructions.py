"""What the answer's schema means, told to a local model in words.

OpenAI's API shows a request's ``json_schema`` to the model. A local model
(like one behind a server that only turns the schema into a grammar) sees
just the grammar that holds its answer to the schema's shape, never what the
fields mean ("true if the criteria are met", what 0 and 1 stand for, how the
reasoning should end). These lines put that meaning into the prompt: each
field's name, what it holds and its description, in the order the answer
gives them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from .schema import stated_bounds

__all__ = ["add_format_instructions", "describe_schema"]


def describe_schema(schema: Mapping[str, Any]) -> str | None:
    """The lines for an object schema's fields; None for a schema with no named fields to explain."""
    properties = schema.get("properties")
    if schema.get("type") != "object" or not isinstance(properties, Mapping) or not properties:
        return None
    lines = ["Reply with one JSON object and nothing else. Its fields, in this order:"]
    for name, field in properties.items():
        field = field if isinstance(field, Mapping) else {}
        description = str(field.get("description") or "").strip()
        lines.append(f"- {name} ({_kind(field)})" + (f": {description}" if description else ""))
    return "\n".join(lines)


def add_format_instructions(
    messages: Sequence[Mapping[str, Any]], schema: Mapping[str, Any] | None
) -> list[Mapping[str, Any]]:
    """The messages with the schema's lines after the last user message's text (unchanged when there are none)."""
    text = describe_schema(schema) if schema else None
    if text is None:
        return list(messages)
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=None)
    if last_user is None:
        return [*messages, {"role": "user", "content": text}]
    message = dict(messages[last_user])
    content = message.get("content")
    if isinstance(content, str):
        message["content"] = f"{content.rstrip()}\n\n{text}"
    elif isinstance(content, list):
        message["content"] = [*content, {"type": "text", "text": f"\n\n{text}"}]
    else:
        return list(messages)
    return [*messages[:last_user], message, *messages[last_user + 1 :]]


def _kind(field: Mapping[str, Any]) -> str:
    """A field's values in words."""
    if "enum" in field:
        return "one of " + ", ".join(json.dumps(v) for v in field["enum"])
    if "const" in field:
        return f"always {json.dumps(field['const'])}"
    kinds = field.get("type")
    kinds = [kinds] if isinstance(kinds, str) else list(kinds or [])
    words = {
        "string": "text",
        "boolean": "true or false",
        "integer": "a whole number",
        "number": "a number",
        "array": "a list",
        "object": "an object",
        "null": "null",
    }
    kind = " or ".join(words.get(k, k) for k in kinds) or "any JSON value"
    low, high = stated_bounds(field)
    if low is not None and high is not None:
        kind += f" from {low} to {high}"
    elif low is not None:
        kind += f", at least {low}"
    elif high is not None:
        kind += f", at most {high}"
    return kind
