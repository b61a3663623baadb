"""The default score schema (six variants) and user output schemas (dict, Pydantic, TypedDict)."""

from __future__ import annotations

import json
import typing
from typing import Optional

import jsonschema
import pydantic
import pytest
import typing_extensions

from localjudge._prompts.schema import OutputSchema, default_output_schema, normalise_output_schema
from localjudge.errors import UsageError
from localjudge.llm import _construct_default_output_json_schema

# Printed by the seed's demo program, verbatim: these strings are the interface.
SEED_DEFAULT_PRINT = """\
[
  {
    "type": "object",
    "additionalProperties": false,
    "properties": {
      "reasoning": {
        "type": "string",
        "description": "A human-readable explanation of the score. You MUST end the reasoning with a sentence that says: Thus, the score should be: SCORE_YOU_ASSIGN."
      },
      "score": {
        "type": "boolean",
        "description": "A score that is true if criteria in the prompt are met, and false otherwise."
      }
    },
    "required": [
      "reasoning",
      "score"
    ]
  },
  "A score that is true if criteria in the prompt are met, and false otherwise."
]"""

SEED_CHOICES_PRINT = """\
[
  {
    "type": "object",
    "additionalProperties": false,
    "properties": {
      "reasoning": {
        "type": "string",
        "description": "A human-readable explanation of the score. You MUST end the reasoning with a sentence that says: Thus, the score should be: SCORE_YOU_ASSIGN."
      },
      "score": {
        "type": "number",
        "description": "A number that represents the degree to which the criteria in the prompt are met.",
        "enum": [
          0.0,
          0.5,
          1.0
        ]
      }
    },
    "required": [
      "reasoning",
      "score"
    ]
  },
  "A number that represents the degree to which the criteria in the prompt are met."
]"""

REASONING = json.loads(SEED_DEFAULT_PRINT)[0]["properties"]["reasoning"]
BOOLEAN_SCORE = json.loads(SEED_DEFAULT_PRINT)[0]["properties"]["score"]


def _printed(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)


# --- the six default variants -------------------------------------------------


def test_boolean_with_reasoning_is_the_seed_json_string_for_string():
    assert _printed(_construct_default_output_json_schema()) == SEED_DEFAULT_PRINT


def test_choices_with_reasoning_is_the_seed_json_string_for_string():
    printed = _printed(_construct_default_output_json_schema(continuous=True, choices=[0.0, 0.5, 1.0]))
    assert printed == SEED_CHOICES_PRINT


def test_choices_without_continuous_is_the_same_schema():
    assert _printed(default_output_schema(choices=[0.0, 0.5, 1.0])) == SEED_CHOICES_PRINT


def test_boolean_without_reasoning():
    schema, description = default_output_schema(use_reasoning=False)
    assert schema == {
        "type": "object",
        "additionalProperties": False,
        "properties": {"score": BOOLEAN_SCORE},
        "required": ["score"],
    }
    assert description == BOOLEAN_SCORE["description"]


def test_choices_without_reasoning():
    schema, description = default_output_schema(choices=[0.0, 0.25, 1.0], use_reasoning=False)
    expected_score = {
        "type": "number",
        "description": "A number that represents the degree to which the criteria in the prompt are met.",
        "enum": [0.0, 0.25, 1.0],
    }
    assert schema == {
        "type": "object",
        "additionalProperties": False,
        "properties": {"score": expected_score},
        "required": ["score"],
    }
    assert description == expected_score["description"]


@pytest.mark.parametrize("use_reasoning", [True, False])
def test_continuous_states_the_zero_to_one_range_in_words_and_the_decoder_holds_it(use_reasoning):
    import re

    from localjudge._decoding import schema_to_regex

    schema, description = default_output_schema(continuous=True, use_reasoning=use_reasoning)
    score = schema["properties"]["score"]
    assert score["type"] == "number" and "minimum" not in score and "maximum" not in score  # OpenEvals' own
    assert "0.0" in score["description"] and "1.0" in score["description"]
    regex = schema_to_regex(schema)
    start = '{"reasoning":"ok",' if use_reasoning else "{"
    assert re.fullmatch(regex, start + '"score":0.75}') and re.fullmatch(regex, start + '"score":1}')
    assert not re.fullmatch(regex, start + '"score":200000000000000.0}')
    assert re.fullmatch(
        schema_to_regex({"type": "object", "properties": {"score": {"type": "number"}}}), '{"score":2.5}'
    )
    assert description == score["description"]
    assert "enum" not in score
    assert schema["additionalProperties"] is False
    if use_reasoning:
        assert list(schema["properties"]) == ["reasoning", "score"]
        assert schema["properties"]["reasoning"] == REASONING
        assert schema["required"] == ["reasoning", "score"]
    else:
        assert list(schema["properties"]) == ["score"]
        assert schema["required"] == ["score"]


@pytest.mark.parametrize("continuous", [False, True])
@pytest.mark.parametrize("choices", [None, [0.0, 1.0]])
@pytest.mark.parametrize("use_reasoning", [True, False])
def test_every_variant_is_a_valid_closed_schema_with_reasoning_first(continuous, choices, use_reasoning):
    schema, _ = default_output_schema(continuous=continuous, choices=choices, use_reasoning=use_reasoning)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["additionalProperties"] is False
    assert list(schema["properties"])[-1] == "score"
    assert schema["required"] == list(schema["properties"])
    validator = jsonschema.Draft202012Validator(schema)
    good_score = True if (choices is None and not continuous) else 1.0
    value = {"reasoning": "r", "score": good_score} if use_reasoning else {"score": good_score}
    assert validator.is_valid(value)
    assert not validator.is_valid({**value, "extra": 1})


def test_a_continuous_score_outside_the_stated_range_is_an_error_with_the_raw_text():
    """A remote judge is not held by our grammar; OpenEvals would hand on its 200000000000000.0 as a score."""
    from localjudge import create_llm_as_judge
    from localjudge.errors import OutputParseError
    from localjudge.testing import ScriptedClient

    for score, ok in ((0.0, True), (1, True), (1.01, False), (-0.5, False), (2e14, False)):
        answer = json.dumps({"reasoning": "r", "score": score})
        judge = create_llm_as_judge(prompt="Judge {outputs}", judge=ScriptedClient([answer]), continuous=True)
        if ok:
            assert judge(outputs="x")["score"] == score
        else:
            with pytest.raises(OutputParseError, match="outside 0 to 1") as caught:
                judge(outputs="x")
            assert caught.value.raw_output == answer


def test_each_call_returns_a_fresh_schema():
    first, _ = default_output_schema()
    first["properties"]["score"]["type"] = "string"
    first["required"].append("x")
    assert default_output_schema()[0] == json.loads(SEED_DEFAULT_PRINT)[0]


def test_choices_keep_the_given_values_and_order():
    schema, _ = default_output_schema(choices=[1, 0.5, 0])
    assert schema["properties"]["score"]["enum"] == [1, 0.5, 0]


@pytest.mark.parametrize(
    "choices",
    [[], ["a"], [True, False], [0.5, 0.5], "0.5", 0.5, [None], [{"x": 1}]],
)
def test_bad_choices_are_usage_errors(choices):
    with pytest.raises(UsageError, match="choices"):
        default_output_schema(choices=choices)


def test_choices_accept_a_tuple():
    schema, _ = default_output_schema(choices=(0.0, 1.0))
    assert schema["properties"]["score"]["enum"] == [0.0, 1.0]


# --- user output schemas -------------------------------------------------------


def test_dict_schema_is_copied_closed_and_named_from_title():
    given = {
        "title": "Answer quality!",
        "type": "object",
        "properties": {
            "verdict": {"type": "string"},
            "detail": {"type": "object", "properties": {"n": {"type": "integer"}}},
        },
        "required": ["verdict"],
    }
    snapshot = json.dumps(given)
    result = normalise_output_schema(given)
    assert isinstance(result, OutputSchema)
    assert result.is_default is False
    assert result.name == "Answer_quality"
    assert result.json_schema["additionalProperties"] is False
    assert result.json_schema["properties"]["detail"]["additionalProperties"] is False
    assert result.model_type is None
    assert json.dumps(given) == snapshot, "the caller's dict must not be modified"


def test_dict_schema_without_title_gets_a_default_name():
    assert normalise_output_schema({"type": "object", "properties": {"score": {"type": "boolean"}}}).name == "output"


@pytest.mark.parametrize("schema", [{}, {"type": "object"}, {"type": "object", "properties": {}}])
def test_a_schema_that_lets_the_answer_hold_nothing_is_refused(schema):
    with pytest.raises(UsageError, match="names no properties, so the judge's answer could hold no verdict"):
        normalise_output_schema(schema)


def test_dict_schema_keeps_an_explicit_additional_properties():
    result = normalise_output_schema({"type": "object", "properties": {}, "additionalProperties": True})
    assert result.json_schema["additionalProperties"] is True


def test_response_format_is_strict_json_schema():
    result = normalise_output_schema({"title": "x", "type": "object", "properties": {"a": {"type": "string"}}})
    assert result.response_format() == {
        "type": "json_schema",
        "json_schema": {"name": "x", "strict": True, "schema": result.json_schema},
    }


class Verdict(pydantic.BaseModel):
    correct: bool
    confidence: float = pydantic.Field(ge=0, le=1)
    note: Optional[str] = None


def test_pydantic_model_schema():
    result = normalise_output_schema(Verdict)
    assert result.name == "Verdict"
    assert result.model_type is Verdict
    assert set(result.json_schema["properties"]) == {"correct", "confidence", "note"}
    assert result.json_schema["additionalProperties"] is False
    assert result.json_schema["properties"]["confidence"]["maximum"] == 1


class ExtTD(typing_extensions.TypedDict):
    label: str
    points: int
    extra: typing_extensions.NotRequired[str]


class PlainTD(typing.TypedDict):
    label: str
    points: int
    note: typing.NotRequired[str]


def test_typing_extensions_typeddict_schema():
    result = normalise_output_schema(ExtTD)
    assert result.name == "ExtTD"
    assert result.json_schema["required"] == ["label", "points"]
    assert result.json_schema["additionalProperties"] is False
    assert result.json_schema["properties"]["points"]["type"] == "integer"


def test_plain_typing_typeddict_schema():
    """``from typing import TypedDict`` is what OpenEvals users write; it must work on every Python."""
    result = normalise_output_schema(PlainTD)
    assert result.name == "PlainTD"
    assert result.json_schema["required"] == ["label", "points"]
    assert result.json_schema["properties"]["label"]["type"] == "string"
    assert result.json_schema["additionalProperties"] is False
    assert set(result.json_schema["properties"]) == {"label", "points", "note"}
    pydantic.TypeAdapter(result.model_type).validate_python({"label": "a", "points": 1})
    with pytest.raises(pydantic.ValidationError):
        pydantic.TypeAdapter(result.model_type).validate_python({"label": "a", "points": "many"})


@pytest.mark.parametrize(
    "bad",
    [42, "schema", ["a"], Verdict(correct=True, confidence=0.5), int, object, {"type": "string"}],
    ids=["int", "str", "list", "model-instance", "int-class", "object-class", "non-object-dict"],
)
def test_bad_output_schemas_are_usage_errors(bad):
    with pytest.raises(UsageError, match="output_schema"):
        normalise_output_schema(bad)


def test_continuous_variants_exact_json():
    description = (  # OpenEvals' words, and no bounds: the decoder reads the range from the words
        "A number that represents the degree to which the criteria in the prompt are met, from 0.0 to 1.0. "
        "1.0 means the criteria are met perfectly. 0.0 means none of the criteria are met, 0.5 means exactly "
        "half of the criteria are met."
    )
    score = {"type": "number", "description": description}
    assert default_output_schema(continuous=True) == (
        {
            "type": "object",
            "additionalProperties": False,
            "properties": {"reasoning": REASONING, "score": score},
            "required": ["reasoning", "score"],
        },
        description,
    )
    assert default_output_schema(continuous=True, use_reasoning=False) == (
        {"type": "object", "additionalProperties": False, "properties": {"score": score}, "required": ["score"]},
        description,
    )


def test_a_bare_object_field_stays_open():
    result = normalise_output_schema(
        {"type": "object", "properties": {"extra": {"type": "object"}}, "required": ["extra"]}
    )
    assert result.json_schema["additionalProperties"] is False
    assert "additionalProperties" not in result.json_schema["properties"]["extra"]
