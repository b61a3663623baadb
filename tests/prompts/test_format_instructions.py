"""The schema's meaning in words, added to the prompt of a local model."""

from __future__ import annotations

from localjudge._prompts.format_instructions import add_format_instructions, describe_schema
from localjudge._prompts.schema import default_output_schema


def test_the_default_schemas_are_explained_field_by_field_in_order():
    schema, _ = default_output_schema(continuous=False, choices=None, use_reasoning=True)
    text = describe_schema(schema)
    lines = text.splitlines()
    assert lines[0] == "Reply with one JSON object and nothing else. Its fields, in this order:"
    assert lines[1].startswith("- reasoning (text): ") and schema["properties"]["reasoning"]["description"] in lines[1]
    assert lines[2] == f"- score (true or false): {schema['properties']['score']['description']}"
    continuous, _ = default_output_schema(continuous=True, choices=None, use_reasoning=False)
    assert "- score (a number from 0 to 1)" in describe_schema(continuous)
    choices, _ = default_output_schema(continuous=False, choices=[0, 0.5, 1], use_reasoning=False)
    assert "- score (one of 0, 0.5, 1)" in describe_schema(choices)


def test_kinds_and_bounds_in_words():
    schema = {
        "type": "object",
        "properties": {
            "winner": {"type": "string", "enum": ["A", "B"]},
            "count": {"type": "integer", "minimum": 1},
            "tags": {"type": "array"},
            "note": {"type": ["string", "null"], "maximum": 3},
            "anything": {},
        },
    }
    assert describe_schema(schema).splitlines()[1:] == [
        '- winner (one of "A", "B")',
        "- count (a whole number, at least 1)",
        "- tags (a list)",
        "- note (text or null, at most 3)",
        "- anything (any JSON value)",
    ]
    assert describe_schema({"type": "object"}) is None and describe_schema({"type": "string"}) is None


def test_the_lines_follow_the_last_user_message_and_nothing_else_changes():
    schema = {"type": "object", "properties": {"score": {"type": "boolean", "description": "right?"}}}
    messages = [
        {"role": "system", "content": "Be fair."},
        {"role": "user", "content": "First.\n"},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": "Judge this."},
    ]
    added = add_format_instructions(messages, schema)
    assert added[:3] == messages[:3] and messages[3]["content"] == "Judge this."  # the caller's list is untouched
    assert added[3]["content"] == "Judge this.\n\n" + describe_schema(schema)
    parts = add_format_instructions([{"role": "user", "content": [{"type": "text", "text": "Judge."}]}], schema)
    assert parts[0]["content"][-1] == {"type": "text", "text": "\n\n" + describe_schema(schema)}
    assert add_format_instructions(messages, None) == messages
    assert add_format_instructions([{"role": "system", "content": "x"}], schema)[-1]["role"] == "user"
