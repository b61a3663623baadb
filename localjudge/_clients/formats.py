"""The ``response_format`` a server accepts, and a local check of what it returned.

Servers differ: OpenAI and vLLM take ``{"type": "json_schema", ...}``;
llama-cpp-python's server rejects that form (HTTP 500, "type must be text or
json_object") and takes ``{"type": "json_object", "schema": ...}`` instead;
others accept a schema and ignore it. So the client sends the OpenAI form,
recognises that one rejection, switches form and remembers the switch for the
endpoint; and every JSON answer is validated here against the schema asked
for, whatever the server claims to have enforced.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping
from typing import Any

from .. import _bounded_json as bounded_json
from ..errors import JudgeRuntimeError, OutputParseError
from .base import read_choice, read_response_format
from .completion import Completion, read_completion
from .request import scores_reply

__all__ = [
    "FIXED_TEMPERATURE",
    "FORMATS",
    "LLAMA_FORM",
    "OPENAI_FORM",
    "FormatMemo",
    "check_answer",
    "check_content",
    "is_schema_rejection",
    "is_temperature_rejection",
    "read_reply_logprobs",
    "wire_response_format",
]

OPENAI_FORM = "json_schema"
LLAMA_FORM = "json_object+schema"


class FormatMemo:
    """What each endpoint was found to accept (``default`` until found otherwise), shared in the process."""

    def __init__(self, default: object = OPENAI_FORM) -> None:
        self._forms: dict[str, Any] = {}
        self._default = default
        self._lock = threading.Lock()

    def get(self, key: str) -> Any:
        with self._lock:
            return self._forms.get(key, self._default)

    def set(self, key: str, form: object) -> None:
        with self._lock:
            self._forms[key] = form

    def forget(self, key: str | None = None) -> None:
        """Drop what was learnt (about one endpoint, or all); the next call negotiates again."""
        with self._lock:
            if key is None:
                self._forms.clear()
            else:
                self._forms.pop(key, None)


#: the process-wide memo the remote clients use
FORMATS = FormatMemo()
#: endpoints (and models) that refuse a temperature other than their own (OpenAI's reasoning models)
FIXED_TEMPERATURE = FormatMemo(default=False)


def wire_response_format(
    response_format: Mapping[str, Any] | None, form: str
) -> tuple[str, dict[str, Any] | None, dict[str, Any] | None]:
    """``(kind, schema, what to send)`` for a caller's ``response_format`` and an endpoint's form.

    A schema given in either accepted form is sent in ``form``; ``json_object``
    without a schema, ``text`` and None pass through unchanged.
    """
    kind, schema = read_response_format(response_format)
    if kind != "json_schema" or schema is None or response_format is None:
        return kind, schema, (dict(response_format) if response_format is not None else None)
    if form == LLAMA_FORM:
        return kind, schema, {"type": "json_object", "schema": schema}
    spec = response_format.get("json_schema") if response_format.get("type") == "json_schema" else None
    if isinstance(spec, Mapping):
        wire = {"type": "json_schema", "json_schema": dict(spec)}
    else:
        wire = {"type": "json_schema", "json_schema": {"name": "output", "schema": schema}}
    return kind, schema, wire


def is_schema_rejection(status_code: int, body: str) -> bool:
    """Whether an error answer says "I take text or json_object, not json_schema".

    llama-cpp-python's server sends this as HTTP 500 with a pydantic validation
    message; other servers may use 400 or 422. The message must name both the
    ``json_object`` alternative and ``response_format``/``json_schema`` so an
    ordinary server error is never mistaken for it.
    """
    if status_code not in (400, 422, 500):
        return False
    text = body.lower()
    return "json_object" in text and ("response_format" in text or "json_schema" in text)


def is_temperature_rejection(status_code: int, body: str) -> bool:
    """Whether an error answer says the model takes no temperature but its own.

    OpenAI answers HTTP 400 with an error whose ``param`` is "temperature"
    ("Unsupported value: 'temperature' does not support 0 with this model.
    Only the default (1) value is supported."). Only an error that names the
    parameter counts: a 422 that merely echoes the request does not.
    """
    if status_code not in (400, 422):
        return False
    try:
        error = bounded_json.loads(body).get("error")
    except (ValueError, AttributeError):
        return False
    if not isinstance(error, Mapping):
        return False
    message = str(error.get("message", "")).lower()
    return error.get("param") == "temperature" or ("'temperature'" in message and "unsupported" in message)


def check_content(
    content: str | None,
    kind: str,
    schema: Mapping[str, Any] | None,
    *,
    finish_reason: str | None = None,
    backend: str | None = None,
) -> Any:
    """The JSON answer's value; ``OutputParseError`` (raw text kept) when it breaks the format asked for."""
    if kind == "text":
        return None
    from .._prompts.parsing import parse_json_output

    value = parse_json_output(content, schema, finish_reason=finish_reason, backend=backend)
    if not isinstance(value, dict):
        raise OutputParseError(
            f"The server was asked for a JSON object but answered with a JSON {type(value).__name__}",
            raw_output=content or "",
            schema=dict(schema) if schema else None,
            hint="The server may ignore response_format; use one that enforces it.",
            backend=backend,
        )
    return value


def read_reply_logprobs(response: object, *, backend: str | None = None) -> list[float]:
    """The log-probability of each token of a scored reply (a ``score_reply`` request's answer).

    ``OutputParseError`` when the response holds none, as from a client that
    answered the request instead of scoring its reply, or holds figures that
    are no log-probabilities (a cache file is checked like a model).
    """
    try:
        completion = read_completion(response, backend=backend)
    except JudgeRuntimeError:
        completion = Completion(text=None, finish_reason=None)
    figures = [token.logprob for token in completion.logprobs or ()]
    if not figures or not all(-math.inf < f <= 0 for f in figures):
        content = completion.text
        raise OutputParseError(
            "The judge was asked how likely a reply is (score_reply) and answered without a log-probability "
            "for each of its tokens",
            raw_output=content if isinstance(content, str) else "",
            hint="Scoring a reply needs a local model (a GGUF file or transformers model), or localjudge serve "
            "in front of one.",
            backend=backend,
        )
    return figures


def check_answer(request: Mapping[str, Any], response: object, *, backend: str | None = None) -> tuple[str, Any]:
    """``(kind, value)`` of a response to ``request``: its JSON value checked against the format asked for
    (``OutputParseError`` otherwise), or None for free text, which is any text; a scored reply's figures."""
    if scores_reply(request):
        return "scored", read_reply_logprobs(response, backend=backend)
    kind, schema = read_response_format(request.get("response_format"))
    content, finish_reason = read_choice(response)
    return kind, check_content(content, kind, schema, finish_reason=finish_reason, backend=backend)
