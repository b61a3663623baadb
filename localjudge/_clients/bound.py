"""The bound on an answer's length that every remote or foreign call carries, and the field it goes in.

A judge that is sent no bound may ramble until its context is full (one call
on llama.cpp's server ran 4,070 tokens, 875 s) and then fail anyway. So a
request that names neither ``max_tokens`` nor ``max_completion_tokens`` gets
one: the model card's recommended ``max_tokens`` when the request's model
names a card, else :data:`DEFAULT_MAX_TOKENS`, the local clients' own default.
A bound the caller gave, in the request or in a client's settings, is sent
as given, never renamed or changed.

OpenAI's reasoning models refuse ``max_tokens`` (HTTP 400, ``param``
"max_tokens", ``code`` "unsupported_parameter") and take
``max_completion_tokens``, which counts their hidden reasoning too. Such a
refusal of our own bound is recognised here, answered with
``max_completion_tokens`` (:data:`DEFAULT_MAX_COMPLETION_TOKENS`, room for
that reasoning) and remembered for the endpoint and model in :data:`BOUND_FIELD`.

A LangChain chat model takes its bound as one of its own settings, under a
name its provider chose (:data:`CHAT_MODEL_BOUND_FIELDS`); one left unset
gets ours there (:func:`chat_model_bound`), and one the user set stands.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from .. import _bounded_json as bounded_json
from .formats import FormatMemo

__all__ = [
    "BOUND_FIELD",
    "CHAT_MODEL_BOUND_FIELDS",
    "DEFAULT_MAX_COMPLETION_TOKENS",
    "DEFAULT_MAX_TOKENS",
    "MAX_COMPLETION_TOKENS",
    "MAX_TOKENS",
    "chat_model_bound",
    "default_bound",
    "given_bound",
    "has_bound",
    "is_max_tokens_refusal",
    "with_bound",
]

MAX_TOKENS = "max_tokens"
MAX_COMPLETION_TOKENS = "max_completion_tokens"

#: the visible answer's bound: four times the 256-token reasoning budget of the local decoder, plus the verdict
DEFAULT_MAX_TOKENS = 1024
#: a bound that also counts hidden reasoning: the answer's bound and room for several thousand reasoning tokens
DEFAULT_MAX_COMPLETION_TOKENS = 8192

#: the field each endpoint and model takes the bound in (``max_tokens`` until found otherwise), shared in the process
BOUND_FIELD = FormatMemo(default=MAX_TOKENS)


#: where LangChain chat models keep the bound: OpenAI, Anthropic, Mistral, Groq and llama.cpp's ``max_tokens``,
#: Google's ``max_output_tokens``, Ollama's ``num_predict``
CHAT_MODEL_BOUND_FIELDS = (MAX_TOKENS, MAX_COMPLETION_TOKENS, "max_output_tokens", "num_predict")

#: the openai SDK's markers for "not given", which a caller may pass through as values
_UNSET_MARKERS = frozenset({"NotGiven", "Omit"})


def has_bound(request: Mapping[str, Any]) -> bool:
    """Whether the caller set a bound of its own (None and the openai SDK's NOT_GIVEN set none)."""
    return given_bound(request) is not None


def given_bound(request: Mapping[str, Any]) -> Any:
    """The bound the caller put in a request, in either field (None: it gave none)."""
    values = (request.get(name) for name in (MAX_TOKENS, MAX_COMPLETION_TOKENS))
    return next((v for v in values if v is not None and type(v).__name__ not in _UNSET_MARKERS), None)


def default_bound(field: str, model: object = None) -> int:
    """Our bound in ``field``: a card's recommended max_tokens for a model a card names, else the default."""
    if field == MAX_COMPLETION_TOKENS:
        return DEFAULT_MAX_COMPLETION_TOKENS
    recommended = _card_max_tokens(model) if isinstance(model, str) and model else None
    return recommended or DEFAULT_MAX_TOKENS


@functools.lru_cache(maxsize=64)
def _card_max_tokens(model: str) -> int | None:
    from .._specs.cards import find_card
    from ..errors import ModelSpecError

    try:
        card = find_card(model)
    except ModelSpecError:  # an installation without cards: the default holds
        return None
    value = card.recommended.get("max_tokens") if card is not None else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def with_bound(request: Mapping[str, Any], field: str) -> tuple[dict[str, Any], str | None]:
    """``request`` with our bound in ``field`` when it has none, and the field added (None: the caller's stands)."""
    body = dict(request)
    if has_bound(body):
        return body, None
    for name in (MAX_TOKENS, MAX_COMPLETION_TOKENS):
        body.pop(name, None)  # None or NOT_GIVEN: nothing to keep
    body[field] = default_bound(field, body.get("model"))
    return body, field


def chat_model_bound(settings: Mapping[str, Any], model: object = None, given: int | None = None) -> dict[str, int]:
    """The settings to change so a chat model's answers are bounded: none when it has no field for a bound.

    ``settings`` are the chat model's own fields and values (a pydantic model's
    ``__dict__``), ``model`` names the model (for a card's recommended bound)
    and ``given`` is the request's own bound, which wins; without it the
    model's own bound stands, and one left unset gets ours.
    """
    fields = [name for name in CHAT_MODEL_BOUND_FIELDS if name in settings]
    if not fields:
        return {}
    if given is not None:
        return {fields[0]: given}
    if any(settings[name] is not None for name in fields):
        return {}
    return {fields[0]: default_bound(MAX_TOKENS, model)}


def is_max_tokens_refusal(status_code: int, body: object) -> bool:
    """Whether an error answer says "this model takes max_completion_tokens, not max_tokens".

    ``body`` is the answer's text, its JSON, or the error object inside it (the
    openai SDK's ``exc.body``). An error about the bound's value ("max_tokens is
    too large") is not a refusal of the field, and neither is a 422 that only
    echoes the request.
    """
    if status_code not in (400, 422):
        return False
    error = _error_object(body)
    if error is None:  # plain text, as some proxies answer
        text = str(body or "").lower()
        return status_code == 400 and _names_the_other_field(text)
    if error.get("param") == MAX_TOKENS and error.get("code") == "unsupported_parameter":
        return True
    return _names_the_other_field(str(error.get("message", "")).lower())


def _names_the_other_field(text: str) -> bool:
    return "max_tokens" in text and MAX_COMPLETION_TOKENS in text and "supported" in text


def _error_object(body: object) -> Mapping[str, Any] | None:
    if isinstance(body, (bytes, str)):
        try:
            body = bounded_json.loads(body)
        except ValueError:
            return None
    if not isinstance(body, Mapping):
        return None
    inner = body.get("error")
    if isinstance(inner, Mapping):
        return inner
    return body if "message" in body or "param" in body else None
