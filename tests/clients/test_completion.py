"""read_completion: any client's answer (SDK object, ChatResponse, plain dict) read into one typed value."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from localjudge._clients.base import ChatResponse, make_chat_completion
from localjudge._clients.completion import Completion, TokenLogprob, read_completion
from localjudge.errors import JudgeRuntimeError, OutputParseError

TOKENS = [
    {"token": "A", "logprob": -0.1, "top_logprobs": [{"token": "A", "logprob": -0.1}, {"token": "B", "logprob": -2.5}]},
    {"token": "}", "logprob": 0, "top_logprobs": []},
]


def test_reads_our_chat_response() -> None:
    response = make_chat_completion('{"score": true}', model="m", finish_reason="length")
    assert isinstance(response, ChatResponse)
    assert read_completion(response) == Completion(text='{"score": true}', finish_reason="length", logprobs=None)


def test_reads_a_plain_dict_with_logprobs() -> None:
    response = {"choices": [{"message": {"content": "A"}, "finish_reason": "stop", "logprobs": {"content": TOKENS}}]}
    completion = read_completion(response)
    assert completion.text == "A" and completion.finish_reason == "stop"
    assert completion.logprobs == (
        TokenLogprob("A", -0.1, (("A", -0.1), ("B", -2.5))),
        TokenLogprob("}", 0.0, ()),
    )


def test_reads_an_sdk_shaped_object() -> None:
    tokens = [SimpleNamespace(token=t["token"], logprob=t["logprob"], top_logprobs=[]) for t in TOKENS]
    choice = SimpleNamespace(
        message=SimpleNamespace(content="hi"), finish_reason="stop", logprobs=SimpleNamespace(content=tokens)
    )
    completion = read_completion(SimpleNamespace(choices=[choice]))
    assert completion.text == "hi"
    assert completion.logprobs is not None and [t.logprob for t in completion.logprobs] == [-0.1, 0.0]


def test_the_value_is_frozen() -> None:
    completion = read_completion(make_chat_completion("x", model="m"))
    with pytest.raises(AttributeError):
        completion.text = "y"  # type: ignore[misc]


@pytest.mark.parametrize("response", [{"id": "x"}, {"choices": []}, {"choices": "abc"}, SimpleNamespace(), 42])
def test_no_choices_is_an_error_with_the_raw_value(response: object) -> None:
    with pytest.raises(JudgeRuntimeError, match="without choices") as caught:
        read_completion(response, backend="b")
    assert caught.value.raw_output == repr(response)
    assert caught.value.backend == "b"


def test_content_that_is_not_text_is_a_parse_error_with_the_raw_value() -> None:
    response = {"choices": [{"message": {"content": ["a", "list"]}, "finish_reason": "stop"}]}
    with pytest.raises(OutputParseError, match="content is list") as caught:
        read_completion(response)
    assert "'a', 'list'" in (caught.value.raw_output or "")


def test_finish_reason_that_is_not_text_is_a_parse_error() -> None:
    with pytest.raises(OutputParseError, match="finish_reason is int") as caught:
        read_completion({"choices": [{"message": {"content": "x"}, "finish_reason": 3}]})
    assert "'finish_reason': 3" in (caught.value.raw_output or "")


@pytest.mark.parametrize(
    "logprobs",
    [None, {"content": None}, {"content": [{"token": "a", "logprob": "low"}]}, {"content": [{"logprob": True}]}],
)
def test_logprobs_not_in_openai_shape_read_as_none(logprobs: object) -> None:
    response = {"choices": [{"message": {"content": "x"}, "logprobs": logprobs}]}
    assert read_completion(response).logprobs is None


def test_a_choice_without_message_has_no_text() -> None:
    assert read_completion({"choices": [{"logprobs": {"content": [{"logprob": -1}]}}]}).text is None


def test_reads_the_fields_our_clients_add_beside_openais() -> None:
    response = make_chat_completion(
        "{}",
        model="m",
        extra={
            "localjudge": {"client": "first"},
            "readout": {"score": {"probability": 0.9}},
            "decode_stats": {"closed_by": "budget"},
        },
    )
    completion = read_completion(response)
    assert completion.answered_by == {"client": "first"}
    assert completion.readout == {"score": {"probability": 0.9}}
    assert completion.closed_by == "budget"
    assert read_completion(make_chat_completion("{}", model="m")).closed_by is None
