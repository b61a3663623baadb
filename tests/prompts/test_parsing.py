"""Model text -> validated object; every failure keeps the raw text."""

from __future__ import annotations

import json

import pydantic
import pytest

from localjudge._prompts.parsing import complete_partial_json, extract_json, parse_json_output, validate
from localjudge._prompts.schema import default_output_schema
from localjudge.errors import JudgeRuntimeError, OutputParseError, TruncatedOutputError

SCHEMA, _ = default_output_schema()
GOOD = '{"reasoning": "All four names are right.", "score": true}'


# --- extract_json ---------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        GOOD,
        f"  \n{GOOD}\n ",
        f"```json\n{GOOD}\n```",
        f"```\n{GOOD}\n```",
        f"Here is my verdict:\n```json\n{GOOD}\n```\nHope that helps.",
        f"Sure! My answer is {GOOD} and nothing else.",
        f"Sure, the JSON:\n{GOOD}",
    ],
    ids=["bare", "whitespace", "fence-json", "fence-plain", "fence-in-prose", "prose-both-sides", "prose-before"],
)
def test_extract_json_finds_the_object(text):
    assert extract_json(text) == {"reasoning": "All four names are right.", "score": True}


def test_extract_json_skips_braces_that_are_not_json():
    assert extract_json('I use {braces} here. {"score": false}') == {"score": False}


def test_extract_json_raises_when_there_is_none():
    with pytest.raises(json.JSONDecodeError):
        extract_json("no json at all")


# --- complete_partial_json --------------------------------------------------------


@pytest.mark.parametrize(
    ("prefix", "expected"),
    [
        ('{"reasoning": "The ans', {"reasoning": "The ans"}),
        ('{"reasoning": "x", "sco', {"reasoning": "x"}),
        ('{"reasoning": "x", "score": tr', {"reasoning": "x"}),
        ('{"reasoning": "x", "score": true', {"reasoning": "x", "score": True}),
        ('{"a": [1, 2', {"a": [1, 2]}),
        ('{"a": {"b": "c', {"a": {"b": "c"}}),
        ('{"reasoning": "line\nbreak', {"reasoning": "line\nbreak"}),
        ('{"reasoning": "ends with \\', {"reasoning": "ends with "}),
        ('prose first {"score": 0.5', {"score": 0.5}),
        ("{", {}),
    ],
)
def test_complete_partial_json_closes_what_is_open(prefix, expected):
    completed = complete_partial_json(prefix)
    assert completed is not None
    assert json.loads(completed) == expected


@pytest.mark.parametrize("text", ["", "no json", '{"a": 1]'])
def test_complete_partial_json_gives_none_when_nothing_can_be_closed(text):
    assert complete_partial_json(text) is None


# --- parse_json_output, partial mode ------------------------------------------------


def test_partial_mode_returns_the_best_object_so_far():
    assert parse_json_output('{"reasoning": "Half a thou', SCHEMA, partial=True) == {"reasoning": "Half a thou"}


def test_partial_mode_returns_the_whole_object_when_complete():
    assert parse_json_output(GOOD, SCHEMA, partial=True) == json.loads(GOOD)


@pytest.mark.parametrize("text", ["", None, "Thinking", '{"a": 1]'])
def test_partial_mode_returns_none_without_raising(text):
    assert parse_json_output(text, SCHEMA, partial=True) is None


def test_partial_mode_does_not_validate():
    # still arriving: a missing required key is not an error yet
    assert parse_json_output('{"score": true', SCHEMA, partial=True) == {"score": True}


# --- parse_json_output, final mode ---------------------------------------------------


def test_final_mode_returns_the_validated_object():
    assert parse_json_output(f"```json\n{GOOD}\n```", SCHEMA) == json.loads(GOOD)


def test_final_mode_without_a_schema_only_parses():
    assert parse_json_output('{"anything": [1]}') == {"anything": [1]}


def test_finish_reason_length_is_truncation_even_when_the_json_is_complete():
    with pytest.raises(TruncatedOutputError) as info:
        parse_json_output(GOOD, SCHEMA, finish_reason="length", backend="b")
    err = info.value
    assert err.raw_output == GOOD
    assert err.schema == SCHEMA
    assert err.hint and "max_tokens" in err.hint
    assert err.backend == "b"


def test_an_unfinished_answer_is_truncation():
    raw = '{"reasoning": "The answer names four gener'
    with pytest.raises(TruncatedOutputError) as info:
        parse_json_output(raw, SCHEMA, finish_reason="stop")
    assert info.value.raw_output == raw


@pytest.mark.parametrize(
    "raw",
    ['{"reasoning": "x", "score": True}', "I think {great} answer", "{'score': true}", "score: true"],
    ids=["python-literal", "braces-in-prose", "single-quotes", "no-json"],
)
def test_complete_but_invalid_json_is_a_parse_error_not_truncation(raw):
    with pytest.raises(OutputParseError) as info:
        parse_json_output(raw, SCHEMA)
    assert type(info.value) is OutputParseError
    assert "unfinished" not in str(info.value)
    assert info.value.raw_output == raw


@pytest.mark.parametrize("raw", ["", "   \n", None])
def test_empty_output_is_a_parse_error(raw):
    with pytest.raises(OutputParseError, match="empty") as info:
        parse_json_output(raw, SCHEMA)
    assert info.value.raw_output == (raw or "")


@pytest.mark.parametrize(
    ("raw", "where"),
    [
        ('{"reasoning": "x", "score": "yes"}', "score"),
        ('{"reasoning": "x"}', "score"),
        ('{"reasoning": "x", "score": true, "extra": 1}', "extra"),
        ('{"reasoning": 3, "score": true}', "reasoning"),
        ('[{"reasoning": "x", "score": true}]', "object"),
    ],
)
def test_schema_violations_are_parse_errors_with_the_raw_text(raw, where):
    with pytest.raises(OutputParseError) as info:
        parse_json_output(raw, SCHEMA)
    err = info.value
    assert err.raw_output == raw
    assert err.schema == SCHEMA
    assert err.hint
    assert where in str(err)
    assert raw in str(err), "the message shows the raw model output"


def test_parse_errors_are_value_errors_and_runtime_errors():
    with pytest.raises(ValueError):
        parse_json_output("nope", SCHEMA)
    with pytest.raises(JudgeRuntimeError):
        parse_json_output("nope", SCHEMA)


class Positive(pydantic.BaseModel):
    n: int

    @pydantic.field_validator("n")
    @classmethod
    def _positive(cls, value: int) -> int:
        if value <= 0:
            raise ValueError("n must be positive")
        return value


def test_validate_runs_the_model_type_checks_after_the_schema():
    schema = Positive.model_json_schema()
    assert validate({"n": 3}, schema, Positive) is None
    problem = validate({"n": -1}, schema, Positive)
    assert problem is not None and "positive" in problem
    assert "at n" in (validate({"n": "x"}, schema, Positive) or "")


def test_parse_json_output_applies_the_model_type():
    with pytest.raises(OutputParseError, match="positive"):
        parse_json_output('{"n": 0}', Positive.model_json_schema(), model_type=Positive)
    assert parse_json_output('{"n": 2}', Positive.model_json_schema(), model_type=Positive) == {"n": 2}


def test_brackets_in_leading_prose_do_not_hide_the_object():
    text = 'Per rule [1] of the rubric: {"reasoning": "x", "score": true}'
    assert extract_json(text) == {"reasoning": "x", "score": True}
    assert parse_json_output(text, SCHEMA) == {"reasoning": "x", "score": True}
    assert parse_json_output('See [1]. {"reasoning": "x', SCHEMA, partial=True) == {"reasoning": "x"}


def test_a_bare_array_is_still_found_without_an_object():
    assert extract_json("values: [1, 2]") == [1, 2]
    assert json.loads(complete_partial_json("values: [1, 2") or "null") == [1, 2]


def test_an_unfinished_object_after_bracketed_prose_is_truncation():
    with pytest.raises(TruncatedOutputError):
        parse_json_output('See [1]. {"reasoning": "x', SCHEMA)
