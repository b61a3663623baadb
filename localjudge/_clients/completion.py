"""A model's answer as the judging core reads it: one typed value, read once at the edge.

Clients return OpenAI-shaped chat completions (our :class:`~.base.ChatResponse`,
an SDK object, a plain dict): that is their public face. The judges read only
:class:`Completion`, which :func:`read_completion` builds from any of them and
refuses, with the value shown, when the shape is not a chat completion's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .._text import clip
from ..errors import JudgeRuntimeError, OutputParseError

__all__ = ["Completion", "TokenLogprob", "read_completion"]


@dataclass(frozen=True)
class TokenLogprob:
    """One output token's log-probability and, when asked for, its most likely alternatives."""

    token: str
    logprob: float
    top_logprobs: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class Completion:
    """The first choice of a chat completion: its text, why it stopped, its tokens' log-probabilities.

    ``logprobs`` is None when the response carries none in OpenAI's shape (a
    reader that needs them says so with its own error).
    """

    text: str | None
    finish_reason: str | None
    logprobs: tuple[TokenLogprob, ...] | None = None
    #: who answered, as a fallback chain adds it (its ``localjudge`` field)
    answered_by: Mapping[str, object] | None = None
    #: a local client's probabilities of each field's values (its ``readout`` field)
    readout: Mapping[str, object] | None = None
    #: "budget" or "loop" when a local client closed a free-text string (its ``decode_stats``)
    closed_by: str | None = None


#: the fields our own clients add beside OpenAI's (clients.fallback.FALLBACK_FIELD, clients.local's; not imported:
#: the local client loads numpy)
_ANSWERED_BY, _READOUT, _DECODE_STATS = "localjudge", "readout", "decode_stats"


def _mapping(value: object) -> Mapping[str, object] | None:
    return value if isinstance(value, Mapping) else None


def _field(obj: object, name: str) -> object:
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def _shown(response: object) -> str:
    return clip(repr(response), 2000)


def read_completion(response: object, *, backend: str | None = None) -> Completion:
    """The typed answer of a response read by key (dicts) or by attribute (SDK objects).

    ``JudgeRuntimeError`` when there is no first choice (the client is not
    OpenAI-shaped); ``OutputParseError`` when its content or finish reason is
    not text. Both carry the response as ``raw_output``.
    """
    choices = _field(response, "choices")
    if not isinstance(choices, Sequence) or isinstance(choices, (str, bytes)) or not choices:
        raise JudgeRuntimeError(
            f"The judge returned {type(response).__name__} without choices; a judge's "
            "chat.completions.create must return an OpenAI-shaped ChatCompletion",
            backend=backend or type(response).__name__,
            raw_output=_shown(response),
        )
    choice = choices[0]
    message = _field(choice, "message")
    text = _field(message, "content") if message is not None else None
    finish_reason = _field(choice, "finish_reason")
    if text is not None and not isinstance(text, str):
        raise OutputParseError(
            f"The judge's message content is {type(text).__name__}, not text",
            raw_output=_shown(response),
            backend=backend,
        )
    if finish_reason is not None and not isinstance(finish_reason, str):
        raise OutputParseError(
            f"The judge's finish_reason is {type(finish_reason).__name__}, not text",
            raw_output=_shown(response),
            backend=backend,
        )
    closed_by = _field(_field(response, _DECODE_STATS), "closed_by")
    return Completion(
        text=text,
        finish_reason=finish_reason,
        logprobs=_read_logprobs(_field(choice, "logprobs")),
        answered_by=_mapping(_field(response, _ANSWERED_BY)),
        readout=_mapping(_field(response, _READOUT)),
        closed_by=closed_by if isinstance(closed_by, str) else None,
    )


def _number(value: object) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value):
        return float(value)
    return None


def _read_logprobs(logprobs: object) -> tuple[TokenLogprob, ...] | None:
    """OpenAI's ``logprobs.content`` list, typed; None when absent or not in that shape."""
    tokens = _field(logprobs, "content")
    if not isinstance(tokens, (list, tuple)):
        return None
    read: list[TokenLogprob] = []
    for entry in tokens:
        figure = _number(_field(entry, "logprob"))
        if figure is None:
            return None
        token = _field(entry, "token")
        top: list[tuple[str, float]] = []
        alternatives = _field(entry, "top_logprobs") or ()
        if not isinstance(alternatives, (list, tuple)):
            return None
        for alternative in alternatives:
            alt_figure, alt_token = _number(_field(alternative, "logprob")), _field(alternative, "token")
            if alt_figure is None or not isinstance(alt_token, str):
                return None
            top.append((alt_token, alt_figure))
        read.append(TokenLogprob(token if isinstance(token, str) else "", figure, tuple(top)))
    return tuple(read)
