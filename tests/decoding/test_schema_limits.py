"""Schemas past the decoder's limits are refused before anything is built, naming the keyword, path and limit."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time

import pytest

from localjudge._decoding import check_schema, schema_to_regex
from localjudge._decoding.schema_limits import SCHEMA_LIMITS, SchemaLimits, estimated_states
from localjudge.errors import SchemaTooLargeError, UnsupportedSchemaError


def nested(levels: int) -> dict:
    schema: dict = {"type": "boolean"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}, "required": ["a"]}
    return schema


def inside(schema: dict) -> dict:
    return {"type": "object", "properties": {"answer": schema}, "required": ["answer"]}


# The probes that grew memory until the process died, or kept a worker busy for minutes.
HOSTILE = {
    "minLength 1e7": (inside({"type": "string", "minLength": 10_000_000}), "minLength", "#/properties/answer"),
    "maxLength 1e7": (inside({"type": "string", "maxLength": 10_000_000}), "maxLength", "#/properties/answer"),
    "maxLength 1e5": (inside({"type": "string", "maxLength": 100_000}), "maxLength", "#/properties/answer"),
    "maxItems 1e9": (inside({"type": "array", "items": {"type": "boolean"}, "maxItems": 10**9}), "maxItems", None),
    "minItems 1e6": (inside({"type": "array", "items": {"type": "boolean"}, "minItems": 10**6}), "minItems", None),
    "maxItems 1e4": (inside({"type": "array", "items": {"type": "string"}, "maxItems": 10_000}), "maxItems", None),
    "enum of 20,000": (inside({"enum": [f"value {i}" for i in range(20_000)]}), "enum", "#/properties/answer"),
    "5,000 properties": (
        {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(5000)}},
        "properties",
        "#",
    ),
    "depth 200": (nested(200), "properties", None),
    "depth 5,000": (nested(5000), "properties", None),
    "anyOf of 1,000": (inside({"anyOf": [{"const": i} for i in range(1000)]}), "anyOf", "#/properties/answer"),
    "arrays of arrays": (
        inside(
            {"type": "array", "maxItems": 30, "items": {"type": "array", "maxItems": 30, "items": {"type": "integer"}}}
        ),
        "maxItems",
        "#/properties/answer",
    ),
    "many small strings": (
        {"type": "object", "properties": {f"p{i}": {"type": "string", "maxLength": 12} for i in range(60)}},
        "properties",
        "#",
    ),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_hostile_schema_is_refused_at_once_with_the_keyword_the_path_and_the_limit(name):
    schema, keyword, path = HOSTILE[name]
    started = time.perf_counter()
    with pytest.raises(SchemaTooLargeError) as refused:
        check_schema(schema)
    assert time.perf_counter() - started < 1.0
    error = refused.value
    assert error.keyword == keyword and (path is None or error.path == path)
    assert error.value > error.limit and f"at most {error.limit:,}" in str(error) and error.path in str(error)
    assert isinstance(error, UnsupportedSchemaError)  # a 400 on the server, a UsageError in Python


def test_the_depth_limit_names_where_it_was_passed():
    with pytest.raises(SchemaTooLargeError, match="levels of nesting") as refused:
        check_schema(nested(SCHEMA_LIMITS.depth + 5))
    assert refused.value.path.count("/properties/a") == SCHEMA_LIMITS.depth  # the root is the first level


@pytest.mark.parametrize(
    "schema",
    [
        nested(SCHEMA_LIMITS.depth - 1),
        inside({"type": "string", "maxLength": SCHEMA_LIMITS.length_bound}),
        inside({"type": "array", "items": {"type": "boolean"}, "maxItems": SCHEMA_LIMITS.items_bound}),
        inside({"enum": [f"v{i}" for i in range(SCHEMA_LIMITS.enum_values)]}),
        {"type": "object", "properties": {f"p{i}": {"type": "boolean"} for i in range(30)}, "required": ["p0"]},
        {
            "type": "object",
            "properties": {f"p{i}": {"type": "number"} for i in range(40)},
            "required": [f"p{i}" for i in range(40)],
        },
    ],
    ids=["deepest", "longest string bound", "most items", "largest enum", "30 properties", "40 required"],
)
def test_schemas_at_the_limits_still_compile(schema):
    regex = schema_to_regex(schema)
    assert estimated_states(regex) <= SCHEMA_LIMITS.states


def test_limits_can_be_set_per_call():
    schema = inside({"type": "string", "maxLength": 100})
    with pytest.raises(SchemaTooLargeError):
        check_schema(schema)
    generous = SchemaLimits(length_bound=100, states=5000)
    assert re.fullmatch(schema_to_regex(schema, generous), '{"answer":"' + "x" * 100 + '"}')


@pytest.mark.parametrize(
    ("regex", "states"),
    [
        ("abc", 3),
        ("(a|bc)", 3),
        ("a{3}", 3),
        ("(ab){2,5}", 10),
        ("a{2,}", 3),
        ("[0-9]{0,4}", 4),
        ('"[^"]{0,10}"', 92),
        (r"\{\}", 2),
        (r"\x00é", 3),  # an escape is one state; é is two UTF-8 bytes
    ],
)
def test_the_estimate_counts_copies_that_repetitions_make(regex, states):
    assert estimated_states(regex) == states


def test_every_default_schema_is_far_below_the_limits():
    from localjudge._prompts.schema import default_output_schema

    for options in ({}, {"continuous": True}, {"choices": [0, 0.5, 1]}):
        for reasoning in (True, False):
            regex = schema_to_regex(default_output_schema(use_reasoning=reasoning, **options)[0])
            assert estimated_states(regex) < SCHEMA_LIMITS.states / 20


PROBE = """
import json, resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))  # 4 GiB, the model included: the dead probes grew past 20
from localjudge import create_llm_as_judge
from localjudge.errors import UnsupportedSchemaError
create_llm_as_judge(prompt="Judge {outputs}", model="tiny")  # the model, loaded once, before the probes
loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
outcomes = []
for schema in json.loads(sys.stdin.read()):
    started = time.perf_counter()
    try:
        create_llm_as_judge(prompt="Judge {outputs}", output_schema=schema, model="tiny")
        outcomes.append("built")
    except UnsupportedSchemaError as exc:
        outcomes.append(type(exc).__name__)
    outcomes.append(time.perf_counter() - started)
grew = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - loaded
print(json.dumps({"outcomes": outcomes, "grew_mb": grew}))
"""


@pytest.mark.model
def test_the_python_api_refuses_them_when_the_judge_is_built_in_a_process_under_a_memory_limit():
    """Once, create_llm_as_judge built these without complaint and the first call killed the interpreter."""
    schemas = [HOSTILE[name][0] for name in ("minLength 1e7", "maxItems 1e9", "enum of 20,000", "depth 200")]
    done = subprocess.run(
        [sys.executable, "-c", PROBE], input=json.dumps(schemas), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    outcomes, seconds = report["outcomes"][::2], report["outcomes"][1::2]
    assert outcomes == ["SchemaTooLargeError"] * len(schemas)
    assert max(seconds) < 1.0 and report["grew_mb"] < 100
