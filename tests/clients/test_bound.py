"""The answer bound: its default, a caller's own bound, and recognising a refusal of max_tokens."""

from __future__ import annotations

import json

import pytest
from support.remote_helpers import O_SERIES_REFUSAL

from localjudge._clients.bound import (
    DEFAULT_MAX_COMPLETION_TOKENS,
    DEFAULT_MAX_TOKENS,
    default_bound,
    is_max_tokens_refusal,
    with_bound,
)
from localjudge._specs.cards import load_cards

TOO_LARGE = {
    "error": {
        "message": "max_tokens is too large: 100000. This model supports at most 16384 completion tokens, "
        "whereas you provided 100000.",
        "type": "invalid_request_error",
        "param": "max_tokens",
        "code": None,
    }
}
TEMPERATURE_REFUSAL = {
    "error": {
        "message": "Unsupported value: 'temperature' does not support 0 with this model.",
        "type": "invalid_request_error",
        "param": "temperature",
        "code": "unsupported_value",
    }
}


@pytest.mark.parametrize(
    ("status", "body", "refused"),
    [
        (400, json.dumps(O_SERIES_REFUSAL), True),  # the answer's text, as our remote client reads it
        (400, O_SERIES_REFUSAL, True),  # parsed JSON
        (400, O_SERIES_REFUSAL["error"], True),  # the openai SDK's exc.body: the error object inside
        (400, {"error": {**O_SERIES_REFUSAL["error"], "message": ""}}, True),  # param and code say it
        (400, {"error": {"message": O_SERIES_REFUSAL["error"]["message"]}}, True),  # a proxy keeping only the text
        (400, O_SERIES_REFUSAL["error"]["message"], True),  # plain text
        (422, json.dumps(O_SERIES_REFUSAL), True),
        (500, json.dumps(O_SERIES_REFUSAL), False),  # a server's own failure, whatever it says
        (401, json.dumps(O_SERIES_REFUSAL), False),
        (400, json.dumps(TOO_LARGE), False),  # the value is wrong, not the field
        (400, json.dumps(TEMPERATURE_REFUSAL), False),
        (400, {"error": {**O_SERIES_REFUSAL["error"], "param": "max_tokens", "code": None, "message": "bad"}}, False),
        (422, json.dumps({"detail": [{"msg": "field required", "input": {"max_tokens": 1024}}]}), False),  # echo
        (422, "max_tokens not supported; use max_completion_tokens", False),  # plain text counts only as a 400
        (400, "", False),
        (400, None, False),
        (400, b"\xff\xfe", False),
    ],
)
def test_a_refusal_of_max_tokens_is_recognised_and_nothing_else(status, body, refused):
    assert is_max_tokens_refusal(status, body) is refused


def test_the_default_bound_is_a_card_s_for_a_model_it_names_else_the_documented_one():
    card = next(c for c in load_cards() if c.recommended.get("max_tokens"))
    assert default_bound("max_tokens", card.name) == card.recommended["max_tokens"]
    assert default_bound("max_tokens", card.name) != DEFAULT_MAX_TOKENS  # so the card's value is what is seen
    assert default_bound("max_tokens", "gpt-4o-mini") == DEFAULT_MAX_TOKENS == 1024
    assert default_bound("max_tokens", None) == DEFAULT_MAX_TOKENS
    # max_completion_tokens counts hidden reasoning, so it leaves room for it, for any model
    assert default_bound("max_completion_tokens", card.name) == DEFAULT_MAX_COMPLETION_TOKENS == 8192


def test_the_default_is_the_local_clients_own_so_local_and_remote_answers_are_held_alike():
    from localjudge._clients.local import DEFAULT_MAX_TOKENS as LOCAL_DEFAULT
    from localjudge._clients.local import DEFAULT_REASONING_BUDGET

    assert DEFAULT_MAX_TOKENS == LOCAL_DEFAULT
    assert DEFAULT_MAX_TOKENS >= 4 * DEFAULT_REASONING_BUDGET  # a reasoning-first verdict fits


@pytest.mark.parametrize(
    ("given", "sent", "added"),
    [
        ({}, {"max_tokens": 1024}, "max_tokens"),
        ({"max_tokens": None}, {"max_tokens": 1024}, "max_tokens"),  # None is "not given", as in the SDK
        ({"max_tokens": 5}, {"max_tokens": 5}, None),
        ({"max_completion_tokens": 5}, {"max_completion_tokens": 5}, None),  # never renamed
        ({"max_tokens": 100_000}, {"max_tokens": 100_000}, None),  # nor lowered
    ],
)
def test_a_caller_s_own_bound_always_wins(given, sent, added):
    request = {"model": "gpt-4o-mini", "messages": [], **given}
    body, field = with_bound(request, "max_tokens")
    assert {k: v for k, v in body.items() if k.startswith("max_")} == {**given, **sent}
    assert field == added
    assert request == {"model": "gpt-4o-mini", "messages": [], **given}  # the caller's dict is left alone


def test_the_openai_sdk_s_not_given_is_no_bound():
    openai = pytest.importorskip("openai")
    body, field = with_bound(
        {"model": "m", "max_tokens": openai.NOT_GIVEN, "max_completion_tokens": None}, "max_tokens"
    )
    assert (body, field) == ({"model": "m", "max_tokens": DEFAULT_MAX_TOKENS}, "max_tokens")
