"""Model text -> validated object. Errors keep the raw text so nothing the model said is lost."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Optional, TypedDict

from .. import _bounded_json as bounded_json
from .._wording import Message
from ..errors import OutputParseError, TruncatedOutputError

__all__ = ["complete_partial_json", "extract_json", "parse_json_output", "validate"]

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*[ \t]*\n?(.*?)(?:```|$)", re.DOTALL)


def extract_json(text: str) -> Any:
    """The first JSON object in ``text`` (an array only if it has no object): bare, inside a
    Markdown fence, or after some prose.

    Raises ``json.JSONDecodeError`` when there is none; trailing prose is ignored.
    """
    stripped = text.strip()
    try:
        return bounded_json.loads(stripped)
    except json.JSONDecodeError as first_error:
        fence = _FENCE.search(stripped)
        if fence:
            try:
                return bounded_json.loads(fence.group(1).strip())
            except json.JSONDecodeError:
                pass
        # An object when the text has one: prose before the answer may hold brackets
        # ("see [1]") that parse as arrays. Arrays only when there is no object at all.
        opener = "{" if "{" in stripped else "["
        for match in re.finditer(re.escape(opener), stripped):
            try:
                return bounded_json.raw_decode(stripped, match.start())[0]
            except json.JSONDecodeError:
                continue
        raise first_error


def complete_partial_json(text: str) -> Optional[str]:
    """Close what a JSON prefix left open (strings, arrays, objects), or None if it can't be.

    A dangling key or a half-written literal is cut back to the last complete member,
    so the result is the best object the text so far supports.
    """
    start = text.find("{")  # an object, when there is one: "[1]" in leading prose is not the answer
    if start < 0:
        start = text.find("[")
    if start < 0:
        return None
    scanned = _scan_json(text[start:])
    if scanned is None:
        return None
    chars, endings, closers = scanned
    if not closers:  # the value closed itself: it is whole, so nothing may be cut
        candidate = "".join(chars)
        return candidate if _parses(candidate) else None
    # Cut back from the end until the closed-up text parses.
    for end in range(len(chars), 0, -1):
        candidate = "".join(chars[:end]) + endings[end - 1]
        if _parses(candidate):
            return candidate
    return None


def _scan_json(text: str) -> tuple[list[str], list[str], str] | None:
    """One pass over a JSON prefix: its characters (newlines in strings escaped), what would close the text
    after each, and what is left open at the end; None when a bracket closes what was not opened.

    The pass stops where the first value closes itself, so trailing prose is not read.
    """
    chars: list[str] = []
    endings: list[str] = []
    closers = ""
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            elif char == "\n":
                char = "\\n"
        elif char == '"':
            in_string = True
        elif char in "{[":
            closers = ("}" if char == "{" else "]") + closers
        elif char in "}]":
            if not closers.startswith(char):
                return None
            closers = closers[1:]
        chars.append(char)
        endings.append(('"' if in_string else "") + closers)
        if not closers:
            break
    return chars, endings, closers


def _parses(text: str) -> bool:
    try:
        bounded_json.loads(text)
    except json.JSONDecodeError:
        return False
    return True


def validate(value: object, schema: Mapping[str, Any], model_type: Optional[type] = None) -> Optional[str]:
    """The first way ``value`` breaks ``schema`` (and the model type's own checks), or None."""
    import jsonschema

    validator_cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    error = jsonschema.exceptions.best_match(validator_cls(schema).iter_errors(value))
    if error is not None:
        location = "/".join(str(p) for p in error.absolute_path) or "(root)"
        return f"at {location}: {error.message}"
    if model_type is not None:
        import pydantic

        try:
            pydantic.TypeAdapter(model_type).validate_python(value)
        except pydantic.ValidationError as exc:
            return str(exc)
    return None


class _ErrorContext(TypedDict):
    """What every parse error below carries, passed to it as keywords."""

    raw_output: str
    schema: dict[str, Any] | None
    backend: Optional[str]


def parse_json_output(
    text: Optional[str],
    schema: Optional[Mapping[str, Any]] = None,
    *,
    partial: bool = False,
    finish_reason: Optional[str] = None,
    model_type: Optional[type] = None,
    backend: Optional[str] = None,
) -> Any:
    """Parse and validate the judge's answer.

    With ``partial=True`` (text still arriving) the best object so far is returned,
    or None; nothing raises. Otherwise an output that is truncated, not JSON or
    not of the schema raises ``OutputParseError`` carrying the raw text.
    """
    raw = text or ""
    if partial:
        try:
            return extract_json(raw)
        except json.JSONDecodeError:
            completed = complete_partial_json(raw)
            return bounded_json.loads(completed) if completed is not None else None

    context: _ErrorContext = {"raw_output": raw, "schema": dict(schema) if schema else None, "backend": backend}
    if finish_reason == "length":
        raise TruncatedOutputError(
            "The judge stopped at max_tokens before finishing its answer",
            hint=Message("Raise {max_tokens:max_tokens}, shorten the prompt, or ask for shorter reasoning."),
            **context,
        )
    if not raw.strip():
        raise OutputParseError(
            "The judge returned an empty answer",
            hint="Check that the model and its chat template are right for this judge.",
            **context,
        )
    try:
        value = extract_json(raw)
    except json.JSONDecodeError as exc:
        truncated = complete_partial_json(raw) is not None
        raise (TruncatedOutputError if truncated else OutputParseError)(
            f"The judge's answer is {'an unfinished' if truncated else 'not'} JSON ({exc.msg} at character {exc.pos})",
            hint="Use a judge that supports structured output (response_format), or a larger model.",
            **context,
        ) from exc
    if schema is not None:
        problem = validate(value, schema, model_type)
        if problem:
            raise OutputParseError(
                f"The judge's answer does not match the output schema {problem}",
                hint="The server may ignore response_format; use a judge that enforces the schema.",
                **context,
            )
    return value
