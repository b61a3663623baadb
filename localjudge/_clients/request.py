"""Reading an OpenAI-shaped chat request the way every in-process client does.

Which fields are honoured, which are accepted and ignored, which are refused
with a reason, and the checks on sampling options: the same for the local
client over any runtime and for the outlines client.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._text import clip, lone_surrogate, surrogate_message
from ..errors import UsageError

__all__ = [
    "HONOURED_FIELDS",
    "IGNORED_FIELDS",
    "SCORE_REPLY_FIELD",
    "RequestOptions",
    "answer_length",
    "check_max_tokens",
    "read_request",
    "refuse_special_spellings",
    "scores_reply",
]

HONOURED_FIELDS = frozenset(
    {
        "frequency_penalty",
        "presence_penalty",
        "messages",
        "model",
        "response_format",
        "temperature",
        "max_tokens",
        "max_completion_tokens",
        "seed",
        "stop",
        "top_p",
        "n",
        "stream",
        "logprobs",
        "top_logprobs",
    }
)
#: a request with this field set asks for no answer: its last message is the assistant's reply, and the
#: response gives the log-probability of each of that reply's tokens (``choices[0].logprobs.content``)
SCORE_REPLY_FIELD = "score_reply"
# Harmless to accept and ignore: they do not change what a model writes.
IGNORED_FIELDS = frozenset(
    {"user", "metadata", "store", "timeout", "extra_headers", "extra_query", "extra_body", "service_tier"}
)


@dataclass(frozen=True)
class RequestOptions:
    max_tokens: int | None  # None: as many as fit, up to the client's default
    temperature: float
    top_p: float
    seed: int | None
    frequency_penalty: float
    presence_penalty: float
    stop: tuple[str, ...]
    logprobs: int | None = None  # None: not asked; else how many alternatives per token (top_logprobs)


def scores_reply(request: Mapping[str, Any]) -> bool:
    """Whether ``request`` asks for its last message to be scored (``score_reply``), which must be a bool."""
    value = request.get(SCORE_REPLY_FIELD)
    if value is not None and not isinstance(value, bool):
        raise UsageError(f"{SCORE_REPLY_FIELD} must be true or false, got {clip(value, 40)}", param=SCORE_REPLY_FIELD)
    return bool(value)


def read_request(  # noqa: C901  one check per request field, read in order
    request: Mapping[str, Any], client: str, *, logprobs: bool = True
) -> tuple[list[Mapping[str, Any]], RequestOptions]:
    """``(messages, options)``, or a UsageError naming what ``client`` cannot do (``logprobs``: whether it can)."""
    unknown = set(request) - HONOURED_FIELDS - IGNORED_FIELDS
    if unknown:
        raise UsageError(f"{client} does not support the request fields {sorted(unknown)}")
    messages = request.get("messages")
    if not isinstance(messages, (list, tuple)) or not messages:
        raise UsageError("messages must be a non-empty list of chat messages", param="messages")
    _check_messages(messages)
    if request.get("n") not in (None, 1) or isinstance(request.get("n"), bool):
        raise UsageError(f"{client} generates one choice per request (n=1)", param="n")
    if not isinstance(request.get("logprobs", False), (bool, type(None))):
        raise UsageError(f"logprobs must be true or false, got {clip(request.get('logprobs'), 60)}", param="logprobs")
    if request.get("logprobs") and not logprobs:
        raise UsageError(f"{client} does not return logprobs", param="logprobs")
    top = request.get("top_logprobs")
    if top is not None and (isinstance(top, bool) or not isinstance(top, int) or not 0 <= top <= 20):
        raise UsageError(f"top_logprobs must be an integer from 0 to 20, got {top!r}", param="top_logprobs")
    if top is not None and not request.get("logprobs"):
        raise UsageError("top_logprobs needs logprobs=True", param="top_logprobs")
    if request.get("stream"):
        raise UsageError(f"{client} does not stream; call without stream=True", param="stream")
    given = [request[k] for k in ("max_tokens", "max_completion_tokens") if request.get(k) is not None]
    if len(set(given)) > 1:
        raise UsageError(f"max_tokens and max_completion_tokens disagree ({given[0]} and {given[1]}); give one")
    max_tokens = check_max_tokens(given[0]) if given else None
    temperature = _number(request, "temperature", 0.0)
    top_p = _number(request, "top_p", 1.0)
    if not 0 <= temperature <= 2:
        raise UsageError(f"temperature must be between 0 and 2, got {temperature!r}", param="temperature")
    if not 0 < top_p <= 1:
        raise UsageError(f"top_p must be in (0, 1], got {top_p!r}", param="top_p")
    stop = request.get("stop") or ()
    if isinstance(stop, str):
        stop = (stop,)
    if not isinstance(stop, (list, tuple)) or not all(isinstance(s, str) for s in stop):
        raise UsageError(f"stop must be a string or a list of strings, got {request.get('stop')!r}", param="stop")
    seed = request.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**32):
        raise UsageError(f"seed must be an integer from 0 to 2**32 - 1, got {clip(seed, 60)}", param="seed")
    penalties = {name: _number(request, name, 0.0) for name in ("frequency_penalty", "presence_penalty")}
    for name, value in penalties.items():
        if not -2 <= value <= 2:
            raise UsageError(f"{name} must be between -2 and 2, got {value!r}", param=name)
    return list(messages), RequestOptions(
        max_tokens=max_tokens,
        temperature=temperature,
        top_p=top_p,
        seed=seed,
        frequency_penalty=penalties["frequency_penalty"],
        presence_penalty=penalties["presence_penalty"],
        stop=tuple(stop),
        logprobs=(top or 0) if request.get("logprobs") else None,
    )


def _check_messages(messages: Sequence[Any]) -> None:
    """Each message an object with a role, its content text (a string, parts, or none) that UTF-8 can hold."""
    for number, message in enumerate(messages):
        if not isinstance(message, Mapping) or not isinstance(message.get("role"), str):
            raise UsageError(
                f"messages[{number}] must be an object with a role, got {clip(message, 60)}", param="messages"
            )
        content = message.get("content")
        if isinstance(content, bool) or not isinstance(content, (str, list, tuple, type(None))):
            raise UsageError(
                f"messages[{number}].content must be a string or a list of content parts, got {clip(content, 60)}",
                param=f"messages[{number}].content",
            )
        found = lone_surrogate(content, f"messages[{number}].content")
        if found is not None:
            raise UsageError(surrogate_message(found), param=found[0])


def _number(request: Mapping[str, Any], key: str, default: float) -> float:
    value = request.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UsageError(f"{key} must be a number, got {clip(value, 60)}", param=key)
    try:
        number = float(value)
    except OverflowError:  # an integer past any float
        number = math.inf
    if not math.isfinite(number):
        raise UsageError(f"{key} must be a finite number, got {clip(value, 60)}", param=key)
    return number


def answer_length(options: RequestOptions, default: int, n_ctx: int | None, n_prompt: int) -> int:
    """The max_tokens a request asked for, else as many as the context has room for, up to ``default``."""
    if options.max_tokens is not None:
        return options.max_tokens
    room = n_ctx - n_prompt if n_ctx else default
    return max(1, min(default, room))


def check_max_tokens(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UsageError(f"max_tokens must be a positive integer, got {value!r}", param="max_tokens")
    return value


def refuse_special_spellings(texts: Iterable[str], spells_special: Callable[[str], bool], client: str) -> None:
    """Refuse message text the engine would read as markup: it could close its turn and write the verdict."""
    for text in texts:
        if spells_special(text):
            clipped = text if len(text) <= 60 else text[:60] + "..."
            raise UsageError(
                f"A message spells a special token of the model ({clipped!r}), and {client} would read it as "
                "markup here. Use a chat template that keeps message text apart (a built-in one, chat_template=), "
                "or LlamaCppClient / TransformersClient, which never read message text as markup."
            )
