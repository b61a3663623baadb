"""What a request may ask, and what an answer must be before it is sent: plain functions, no HTTP."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .._clients.base import read_response_format
from .._clients.formats import check_answer
from .._clients.request import HONOURED_FIELDS, IGNORED_FIELDS, SCORE_REPLY_FIELD
from .._text import clip, lone_surrogate, surrogate_message
from ..errors import UsageError
from .api_errors import ApiError, invalid
from .limits import Limits

__all__ = ["WIRE_FIELDS", "WIRE_TYPES", "check_messages", "check_request", "check_types", "checked_answer", "read_body"]

#: the fields a request may carry: OpenAI's wire fields the judges know, and ``score_reply`` (our one
#: extension: a reply's log-probabilities); never the SDK-only ``extra_*``, which a remote judge would merge
#: into its own request past every limit here
WIRE_FIELDS = (HONOURED_FIELDS | IGNORED_FIELDS | {SCORE_REPLY_FIELD}) - {
    "extra_body",
    "extra_headers",
    "extra_query",
    "timeout",
}


#: each field's JSON type as OpenAI's API types it (null is always allowed: the field left out); a JSON
#: true is no integer here, though Python's bool is one
WIRE_TYPES: dict[str, tuple[str, tuple[type, ...]]] = {
    "messages": ("an array of messages", (list,)),
    "model": ("a string", (str,)),
    "n": ("an integer", (int,)),
    "stream": ("a boolean", (bool,)),
    "logprobs": ("a boolean", (bool,)),
    "top_logprobs": ("an integer", (int,)),
    "store": ("a boolean", (bool,)),
    "user": ("a string", (str,)),
    "service_tier": ("a string", (str,)),
    "metadata": ("an object", (dict,)),
    "response_format": ("an object", (dict,)),
    "max_tokens": ("an integer", (int,)),
    "max_completion_tokens": ("an integer", (int,)),
    "seed": ("an integer", (int,)),
    "temperature": ("a number", (int, float)),
    "top_p": ("a number", (int, float)),
    "frequency_penalty": ("a number", (int, float)),
    "presence_penalty": ("a number", (int, float)),
    "stop": ("a string or an array of strings", (str, list)),
    SCORE_REPLY_FIELD: ("a boolean", (bool,)),
}


def check_types(body: Mapping[str, Any]) -> None:
    """Every field of the JSON type OpenAI gives it (``n: true`` and ``logprobs: "yes"`` are refused, not read)."""
    for name, value in body.items():
        if value is None or name not in WIRE_TYPES:
            continue
        said, types = WIRE_TYPES[name]
        if (isinstance(value, bool) and bool not in types) or not isinstance(value, types):
            raise invalid(f"{name} must be {said}, got {clip(json.dumps(value), 60)}", param=name)


def check_messages(messages: Any) -> None:
    """Each message an object with a role, and content a string, an array of content parts, or null."""
    if not isinstance(messages, list):
        return  # absent or not an array: the judge's own check says so
    for number, message in enumerate(messages):
        where = f"messages[{number}]"
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise invalid(f"{where} must be an object with a role (a string)", param=where)
        content = message.get("content")
        if content is None or isinstance(content, str):
            continue
        if not isinstance(content, list):
            raise invalid(
                f"{where}.content must be a string or an array of content parts, got {clip(json.dumps(content), 60)}",
                param=f"{where}.content",
            )
        for index, part in enumerate(content):
            part_at = f"{where}.content[{index}]"
            if not isinstance(part, dict) or not isinstance(part.get("type"), str):
                raise invalid(f"{part_at} must be an object with a type (a string)", param=part_at)
            if part["type"] == "text" and not isinstance(part.get("text"), str):
                raise invalid(f"{part_at}.text must be a string", param=f"{part_at}.text")


def check_request(body: Any, limits: Limits) -> dict[str, Any]:
    """The request to hand the judge, or an :class:`ApiError` for what it may not ask."""
    if not isinstance(body, dict):
        raise invalid("The request body must be a JSON object")
    unknown = sorted(set(body) - WIRE_FIELDS)
    if unknown:
        raise invalid(f"Unsupported request fields: {', '.join(unknown)}", param=unknown[0])
    check_types(body)
    check_messages(body.get("messages"))
    for name, value in body.items():  # JSON may spell half a surrogate pair ("\ud800"); no text holds one
        found = lone_surrogate(value, name)
        if found is not None:
            raise invalid(surrogate_message(found), param=found[0])
    if not isinstance(body.get(SCORE_REPLY_FIELD, False), bool):
        raise invalid(f"{SCORE_REPLY_FIELD} must be true or false", param=SCORE_REPLY_FIELD)
    if body.get("stream"):
        raise invalid("stream is not supported: the judge answers with one complete response", param="stream")
    if body.get("n") not in (None, 1):
        raise invalid("n must be 1: the judge gives one answer per request", param="n")
    for name in ("max_tokens", "max_completion_tokens"):
        value = body.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise invalid(f"{name} must be a positive integer, got {value!r}", param=name)
        if isinstance(value, int) and value > limits.max_tokens:
            raise invalid(f"{name} is {value}; this server allows at most {limits.max_tokens}", param=name)
    response_format = body.get("response_format")
    if response_format is not None:
        kind = response_format.get("type") if isinstance(response_format, Mapping) else None
        if kind not in ("text", "json_object", "json_schema"):
            raise invalid(
                f"response_format type {kind!r} is not supported: use text, json_object or json_schema",
                param="response_format",
            )
        try:
            read_response_format(response_format)
        except UsageError as exc:
            raise invalid(str(exc), param="response_format") from None
    return dict(body)


def checked_answer(request: Mapping[str, Any], response: Any, backend: str) -> dict[str, Any]:
    """The judge's answer as a dict, if it is what the request asked for; else the error saying how it is not.

    A JSON answer is sent as the object alone (a judge behind a fallback may
    have wrapped it in prose or a code fence), so a caller's ``json.loads``
    of the content always works.
    """
    answer = dict(response.model_dump() if hasattr(response, "model_dump") else response)
    kind, value = check_answer(request, answer, backend=backend)
    if kind not in ("text", "scored"):  # a scored reply's figures are in its logprobs, its content empty
        choice = dict(answer["choices"][0])
        choice["message"] = {**dict(choice["message"]), "content": json.dumps(value, ensure_ascii=False)}
        answer["choices"] = [choice, *answer["choices"][1:]]
    return answer


async def read_body(request: Any, limit: int) -> bytes:
    """The body, refused (413) past ``limit`` bytes without reading the rest."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise ApiError(413, f"The request body is over {limit} bytes", kind="invalid_request_error", code="too_large")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ApiError(
                413, f"The request body is over {limit} bytes", kind="invalid_request_error", code="too_large"
            )
        chunks.append(chunk)
    return b"".join(chunks)
