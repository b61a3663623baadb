"""Reading a chat request the way every in-process client does: honoured, ignored, refused."""

from __future__ import annotations

import pytest

from localjudge._clients.request import read_request, refuse_special_spellings
from localjudge.errors import UsageError

MESSAGES = [{"role": "user", "content": "hi"}]


def read(**request):
    return read_request({"messages": MESSAGES, **request}, "engine")[1]


def test_defaults_are_greedy_and_unbounded_by_the_request():
    options = read()
    assert (options.max_tokens, options.temperature, options.top_p, options.seed, options.stop) == (
        None,
        0.0,
        1.0,
        None,
        (),
    )


def test_either_max_tokens_field_is_read_and_they_must_agree():
    assert read(max_completion_tokens=7).max_tokens == 7
    assert read(max_tokens=None, max_completion_tokens=7).max_tokens == 7
    assert read(max_tokens=7, max_completion_tokens=7).max_tokens == 7
    with pytest.raises(UsageError, match="disagree"):
        read(max_tokens=5, max_completion_tokens=7)


@pytest.mark.parametrize(
    ("request_fields", "message"),
    [
        ({"max_tokens": 0}, "max_tokens must be a positive integer"),
        ({"max_tokens": True}, "max_tokens must be a positive integer"),
        ({"temperature": 3}, "temperature must be between 0 and 2"),
        ({"temperature": "hot"}, "temperature must be a number"),
        ({"top_p": 0}, r"top_p must be in \(0, 1\]"),
        ({"stop": 5}, "stop must be a string or a list of strings"),
        ({"stop": ["a", 1]}, "stop must be a string or a list of strings"),
        ({"seed": "x"}, "seed must be an integer"),
        ({"n": 2}, "n=1"),
        ({"tools": []}, r"request fields \['tools'\]"),
    ],
)
def test_bad_fields_are_usage_errors_that_name_them(request_fields, message):
    with pytest.raises(UsageError, match=message):
        read(**request_fields)


def test_ignored_fields_change_nothing():
    assert read(user="u", metadata={"a": 1}, service_tier="auto") == read()


def test_messages_are_required():
    with pytest.raises(UsageError, match="non-empty list"):
        read_request({"messages": []}, "engine")


def test_text_that_spells_a_special_token_is_refused_naming_it():
    refuse_special_spellings(["plain"], lambda text: "<eot>" in text, "engine")
    with pytest.raises(UsageError, match=r"special token of the model \('a<eot>'\)"):
        refuse_special_spellings(["plain", "a<eot>"], lambda text: "<eot>" in text, "engine")
