"""Schema -> regex: what the six default schemas accept and reject, and which keywords are refused."""

from __future__ import annotations

import json
import re

import pytest

from localjudge._decoding import check_schema, schema_to_regex
from localjudge._prompts.schema import default_output_schema
from localjudge.errors import UnsupportedSchemaError, UsageError

VARIANTS = {
    "boolean": {},
    "boolean-no-reasoning": {"use_reasoning": False},
    "continuous": {"continuous": True},
    "continuous-no-reasoning": {"continuous": True, "use_reasoning": False},
    "choices": {"choices": [0.0, 0.5, 1.0]},
    "choices-no-reasoning": {"choices": [0.0, 0.5, 1.0], "use_reasoning": False},
}


def compact(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def matches(schema, text: str) -> bool:
    return re.fullmatch(schema_to_regex(schema), text) is not None


def with_reasoning(score, reasoning='The answer is right.\nIt says "4".') -> dict:
    return {"reasoning": reasoning, "score": score}


VALID = {
    "boolean": [with_reasoning(True), with_reasoning(False), with_reasoning(True, "")],
    "continuous": [
        with_reasoning(0),
        with_reasoning(1),
        with_reasoning(0.25),
        with_reasoning(1.0),
        with_reasoning(0.999999),
    ],
    "choices": [with_reasoning(0.0), with_reasoning(0.5), with_reasoning(1.0)],
}
INVALID = {
    "boolean": [with_reasoning(1), with_reasoning("true"), with_reasoning(None), {"score": True, "reasoning": "x"}],
    "continuous": [
        with_reasoning(1.5),
        with_reasoning(-0.1),
        with_reasoning(2),
        with_reasoning(1.01),
        with_reasoning(True),
    ],
    "choices": [with_reasoning(0.25), with_reasoning(2.0), with_reasoning(0.75), with_reasoning(True)],
}


@pytest.mark.parametrize("name", VARIANTS)
def test_default_schemas_accept_valid_and_reject_invalid(name):
    schema, _ = default_output_schema(**VARIANTS[name])
    check_schema(schema)
    family = name.replace("-no-reasoning", "")
    strip = "no-reasoning" in name
    for instance in VALID[family]:
        if strip:
            instance = {"score": instance["score"]}
        assert matches(schema, compact(instance)), instance
    for instance in INVALID[family]:
        if strip and isinstance(instance, dict) and list(instance) == ["reasoning", "score"]:
            instance = {"score": instance["score"]}
        assert not matches(schema, compact(instance)), instance


@pytest.mark.parametrize("name", VARIANTS)
def test_default_schemas_refuse_whitespace_and_extra_keys(name):
    schema, _ = default_output_schema(**VARIANTS[name])
    good = {"reasoning": "ok", "score": True} if "reasoning" in schema["properties"] else {"score": True}
    if "boolean" not in name:
        good["score"] = 1.0
    text = compact(good)
    assert matches(schema, text)
    assert not matches(schema, text.replace(":", ": "))
    assert not matches(schema, text + "\n")
    assert not matches(schema, text[:-1] + ',"extra":1}')
    if "reasoning" in schema["properties"]:
        assert not matches(schema, compact({"score": good["score"]}))


def test_continuous_score_is_held_to_zero_one():
    schema = {"type": "number", "minimum": 0, "maximum": 1}
    for text in ["0", "1", "0.5", "0.123456", "1.0", "1.000000"]:
        assert matches(schema, text), text
    for text in ["1.5", "1.01", "-0", "-0.5", "2", "0.1234567", "01", ".5", "1e0", "0."]:
        assert not matches(schema, text), text


def test_number_enum_accepts_exactly_what_json_prints():
    schema = {"type": "number", "enum": [0.0, 0.5, 1.0, 2, 10]}
    for value in [0.0, 0.5, 1.0, 2, 10]:
        assert matches(schema, json.dumps(value))
        assert json.loads(json.dumps(value)) in schema["enum"]
    for text in ["0", "1", "0.50", "2.0", "1", "100"]:
        assert not matches(schema, text), text


def test_string_escapes_and_control_characters():
    schema = {"type": "string"}
    assert matches(schema, compact('a "quoted" \\ back\nslash\té'))
    assert not matches(schema, '"raw\nnewline"')
    assert not matches(schema, '"unterminated')
    assert not matches(schema, '"\\u0041"')  # \u escapes can spell lone surrogates: not written


def test_optional_properties_in_order():
    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "string", "enum": ["x", "y.z"]}, "c": {"type": "null"}},
        "required": ["b"],
    }
    for text in ['{"b":"x"}', '{"a":3,"b":"y.z"}', '{"b":"x","c":null}', '{"a":-12,"b":"x","c":null}']:
        assert matches(schema, text), text
    for text in ["{}", '{"a":1}', '{"b":"y"}', '{"b":"yaz"}', '{"c":null,"b":"x"}', '{"a":1,,"b":"x"}']:
        assert not matches(schema, text), text


def test_no_required_properties_allows_empty_object():
    schema = {"type": "object", "properties": {"a": {"type": "boolean"}, "b": {"type": "boolean"}}}
    for text in ["{}", '{"a":true}', '{"b":false}', '{"a":true,"b":false}']:
        assert matches(schema, text), text
    assert not matches(schema, '{,"b":false}')


def test_arrays_refs_and_any_of():
    schema = {
        "$defs": {
            "Item": {
                "type": "object",
                "properties": {"n": {"type": "integer", "minimum": 1, "maximum": 3}},
                "required": ["n"],
            }
        },
        "type": "object",
        "properties": {
            "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}, "minItems": 1, "maxItems": 2},
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        },
        "required": ["items", "note"],
    }
    assert matches(schema, '{"items":[{"n":1}],"note":null}')
    assert matches(schema, '{"items":[{"n":1},{"n":3}],"note":"hi"}')
    assert not matches(schema, '{"items":[],"note":null}')
    assert not matches(schema, '{"items":[{"n":1},{"n":2},{"n":3}],"note":null}')
    assert not matches(schema, '{"items":[{"n":4}],"note":null}')


def test_any_json_object_is_a_flat_object_of_scalars():
    schema = {"type": "object"}
    for value in [{}, {"a": 1}, {"a": "x", "b": None, "c": True, "d": -1.5, "e": 12345678901234567890}]:
        assert matches(schema, compact(value)), value
    # nesting is left out on purpose (index cost); still never invalid JSON
    for text in ["[]", "1", '"x"', "{'a':1}", '{"a":}', '{"a":{"b":1}}', '{"a":[1]}']:
        assert not matches(schema, text), text


@pytest.mark.parametrize(
    ("schema", "path", "keyword"),
    [
        ({"type": "string", "pattern": "^a"}, "#", "pattern"),
        ({"type": "string", "format": "date"}, "#", "format"),
        ({"type": "number", "multipleOf": 0.5}, "#", "multipleOf"),
        ({"type": "number", "exclusiveMinimum": 0}, "#", "exclusiveMinimum"),
        ({"type": "number", "minimum": -1, "maximum": 1}, "#", "minimum"),
        ({"type": "number", "minimum": 0, "maximum": 0.5}, "#", "minimum"),
        ({"type": "object", "properties": {"x": {"oneOf": [{"type": "string"}]}}}, "#/properties/x", "oneOf"),
        (
            {"type": "object", "properties": {"x": {"type": "array", "uniqueItems": True}}},
            "#/properties/x",
            "uniqueItems",
        ),
        ({"type": "object", "patternProperties": {"a": {}}}, "#", "patternProperties"),
        ({"type": "object", "required": ["a"]}, "#", "required"),
        (
            {"$defs": {"N": {"type": "array", "items": {"$ref": "#/$defs/N"}}}, "$ref": "#/$defs/N"},
            "#/$defs/N/items",
            "$ref",
        ),
        ({"type": "integer", "minimum": 0, "maximum": 10**6}, "#", "maximum"),
    ],
)
def test_unenforceable_keywords_are_refused_with_path(schema, path, keyword):
    with pytest.raises(UnsupportedSchemaError) as info:
        check_schema(schema)
    assert info.value.path == path
    assert info.value.keyword == keyword
    assert keyword in str(info.value)
    assert isinstance(info.value, UsageError)


def test_annotations_are_fine():
    schema = {
        "title": "T",
        "description": "d",
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"s": {"type": "string", "title": "S", "default": "", "examples": ["a"]}},
        "required": ["s"],
    }
    check_schema(schema)
    assert matches(schema, '{"s":"a"}')


@pytest.mark.parametrize(
    ("keyword", "value"),
    [(k, v) for k in ("minLength", "maxLength", "minItems", "maxItems") for v in (-1, 1.5, True)]
    + [("minLength", None), ("minItems", None)],  # a maximum of null is no maximum; a minimum of null is refused
)
def test_a_count_that_is_not_a_non_negative_integer_is_refused(keyword, value):
    kind = "string" if keyword.endswith("Length") else "array"
    with pytest.raises(UnsupportedSchemaError, match=f"{keyword} must be a non-negative integer") as info:
        check_schema({"type": kind, keyword: value})
    assert info.value.keyword == keyword
