"""Messages from template strings and callables: values, system, few-shot, attachments."""

from __future__ import annotations

import pytest

from localjudge._prompts.prompting import (
    build_messages,
    format_few_shot_examples,
    format_template,
    template_fields,
)
from localjudge.errors import MissingTemplateVariableError, UsageError

VALUES = {"inputs": "What is 2+2?", "outputs": "4", "reference_outputs": None}


# --- templates --------------------------------------------------------------------


def test_template_fields_in_order_of_first_use():
    assert template_fields("{outputs} {inputs} {outputs} {ctx.attr} {{literal}}") == ["outputs", "inputs", "ctx"]


@pytest.mark.parametrize("template", ["{}", "{0}", "a { b"])
def test_positional_or_broken_placeholders_are_usage_errors(template):
    with pytest.raises(UsageError, match=r"\{\{"):
        template_fields(template)


def test_format_template_fills_every_placeholder_and_kwargs():
    text = format_template(
        "Q: {inputs}\nA: {outputs}\nRef: {reference_outputs}\nCtx: {context} {{literal}}",
        {"inputs": "q", "outputs": {"answer": "四"}, "reference_outputs": 4, "context": "math"},
    )
    assert text == 'Q: q\nA: {"answer": "\\u56db"}\nRef: 4\nCtx: math {literal}'  # json.dumps, as OpenEvals writes


@pytest.mark.parametrize("missing", ["reference_outputs", "context"])
def test_a_placeholder_without_a_value_names_the_variable(missing):
    with pytest.raises(MissingTemplateVariableError) as info:
        format_template("{inputs} {outputs} {" + missing + "}", VALUES)
    err = info.value
    assert err.variable == missing
    assert "{" + missing + "}" in str(err)
    assert err.available == ["inputs", "outputs"]
    assert isinstance(err, UsageError) and isinstance(err, ValueError)


def test_an_empty_string_is_a_value():
    assert format_template("[{outputs}]", {"outputs": ""}) == "[]"


# --- build_messages: string prompts ------------------------------------------------------


def test_string_prompt_is_one_user_message():
    assert build_messages("Q: {inputs} A: {outputs}", values=VALUES) == [
        {"role": "user", "content": "Q: What is 2+2? A: 4"}
    ]


def test_system_comes_first():
    messages = build_messages("Q: {inputs}", values=VALUES, system="You are a strict grader.")
    assert messages == [
        {"role": "system", "content": "You are a strict grader."},
        {"role": "user", "content": "Q: What is 2+2?"},
    ]


# --- callables -------------------------------------------------------------------------


def test_callable_gets_every_value_and_its_messages_are_used():
    seen = {}

    def prompt(**kwargs):
        seen.update(kwargs)
        return [{"role": "system", "content": "sys"}, {"role": "user", "content": f"grade {kwargs['outputs']}"}]

    messages = build_messages(prompt, values={**VALUES, "context": "c"})
    assert seen == {**VALUES, "context": "c"}
    assert messages == [{"role": "system", "content": "sys"}, {"role": "user", "content": "grade 4"}]


def test_callable_messages_are_copied_not_mutated():
    shared = [{"role": "user", "content": "grade it"}]
    examples = [{"inputs": "i", "outputs": "o", "score": True}]
    first = build_messages(lambda **_: shared, values=VALUES, few_shot_examples=examples)
    second = build_messages(lambda **_: shared, values=VALUES, few_shot_examples=examples)
    assert shared == [{"role": "user", "content": "grade it"}]
    assert first == second
    assert first[0]["content"].count("<example>") == 1


@pytest.mark.parametrize(
    "returned",
    [[], "text", None, [{"content": "no role"}], [{"role": "user"}], ["just a string"]],
)
def test_callable_returning_something_else_is_a_usage_error(returned):
    with pytest.raises(UsageError):
        build_messages(lambda **_: returned, values=VALUES)


@pytest.mark.parametrize("prompt", [42, None, b"bytes", ["list"]])
def test_prompt_of_another_type_is_a_usage_error(prompt):
    with pytest.raises(UsageError, match="prompt"):
        build_messages(prompt, values=VALUES)


# --- few-shot examples --------------------------------------------------------------------

EXAMPLES = [
    {"inputs": "说出战国四大名将的姓名", "outputs": "白起、李牧、王翦、廉颇", "score": 1.0, "reasoning": "四个都对"},
    {"inputs": {"q": "2+2"}, "outputs": "5", "score": False},
]


def test_few_shot_text_is_openevals_markup():
    assert format_few_shot_examples(EXAMPLES) == (
        "<example>\n<input>说出战国四大名将的姓名</input>\n<output>白起、李牧、王翦、廉颇</output>\n"
        "<reasoning>四个都对</reasoning>\n<score>1.0</score>\n</example>\n"
        "<example>\n<input>{'q': '2+2'}</input>\n<output>5</output>\n<score>False</score>\n</example>"
    )  # values as Python writes them, no reasoning block where the example has none


def test_few_shot_example_missing_a_text_is_a_usage_error_and_a_missing_score_is_left_out():
    with pytest.raises(UsageError, match="few_shot_examples\\[1\\] is missing outputs"):
        format_few_shot_examples([EXAMPLES[0], {"inputs": "i", "score": True}])
    assert format_few_shot_examples([{"inputs": "i", "outputs": "o"}]) == (
        "<example>\n<input>i</input>\n<output>o</output>\n</example>"
    )


def test_few_shot_is_appended_to_the_last_user_message():
    def prompt(**_):
        return [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": "reply"},
            {"role": "user", "content": "grade this"},
            {"role": "assistant", "content": "prefill"},
        ]

    messages = build_messages(prompt, values=VALUES, few_shot_examples=EXAMPLES)
    assert [m["content"] for m in messages[:3]] == ["sys", "first", "reply"]
    assert messages[4]["content"] == "prefill"
    assert messages[3]["content"] == "grade this\n\n" + format_few_shot_examples(EXAMPLES)


def test_few_shot_with_a_string_prompt_and_system():
    messages = build_messages("Q: {inputs}", values=VALUES, system="sys", few_shot_examples=EXAMPLES[:1])
    assert messages[0] == {"role": "system", "content": "sys"}
    assert messages[1]["content"].startswith("Q: What is 2+2?")
    assert messages[1]["content"] == "Q: What is 2+2?\n\n" + format_few_shot_examples(EXAMPLES[:1])
    assert len(messages) == 2


def test_few_shot_on_a_content_block_message_adds_a_text_block():
    blocks = [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "http://x/cat.png"}}]
    messages = build_messages(
        lambda **_: [{"role": "user", "content": blocks}], values=VALUES, few_shot_examples=EXAMPLES
    )
    content = messages[0]["content"]
    assert content[:2] == blocks
    assert content[2] == {"type": "text", "text": format_few_shot_examples(EXAMPLES)}
    assert len(blocks) == 2, "the caller's block list is not modified"


def test_few_shot_without_any_user_message_becomes_one():
    messages = build_messages(
        lambda **_: [{"role": "system", "content": "sys"}], values=VALUES, few_shot_examples=EXAMPLES
    )
    assert messages[-1] == {"role": "user", "content": format_few_shot_examples(EXAMPLES)}


# --- attachments -----------------------------------------------------------------------------

IMAGE = {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}


def test_attachments_stand_where_the_placeholder_is_with_text_kept():
    messages = build_messages(
        "Look at this:\n{attachments}\nIs it a {outputs}?", values={**VALUES, "outputs": "cat", "attachments": [IMAGE]}
    )
    assert messages == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Look at this:\n"},
                IMAGE,
                {"type": "text", "text": "\nIs it a cat?"},
            ],
        }
    ]


def test_attachment_at_the_start_has_no_empty_text_block():
    messages = build_messages("{attachments}\n{outputs}", values={**VALUES, "attachments": IMAGE})
    assert messages[0]["content"] == [IMAGE, {"type": "text", "text": "\n4"}]


def test_attachment_at_the_end_keeps_the_text_before():
    messages = build_messages("Grade {outputs}: {attachments}", values={**VALUES, "attachments": [IMAGE, IMAGE]})
    assert messages[0]["content"] == [{"type": "text", "text": "Grade 4: "}, IMAGE, IMAGE]


def test_attachment_forms_become_openai_content_blocks():
    attachments = [
        "https://example.com/a.png",
        {"mime_type": "image/png", "data": "iVBORw0KGgo="},
        {"mime_type": "application/pdf", "data": "JVBERi0=", "filename": "doc.pdf"},
    ]
    content = build_messages("{attachments}", values={**VALUES, "attachments": attachments})[0]["content"]
    assert content == [
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        {"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBERi0=", "filename": "doc.pdf"}},
    ]


def test_an_unknown_attachment_is_a_usage_error():
    with pytest.raises(UsageError, match="attachment"):
        build_messages("{attachments}", values={**VALUES, "attachments": [42]})


def test_attachments_with_few_shot_append_a_text_block():
    messages = build_messages(
        "See {attachments}", values={**VALUES, "attachments": [IMAGE]}, few_shot_examples=EXAMPLES[:1]
    )
    content = messages[0]["content"]
    assert content[:2] == [{"type": "text", "text": "See "}, IMAGE]
    assert content[2] == {"type": "text", "text": format_few_shot_examples(EXAMPLES[:1])}


def test_attachments_placeholder_without_attachments_is_a_missing_variable():
    with pytest.raises(MissingTemplateVariableError) as info:
        build_messages("See {attachments}", values=VALUES)
    assert info.value.variable == "attachments"


def test_missing_variable_after_the_attachments_is_named():
    with pytest.raises(MissingTemplateVariableError) as info:
        build_messages("{attachments} then {context}", values={**VALUES, "attachments": [IMAGE]})
    assert info.value.variable == "context"


def test_literal_attachments_braces_stay_text():
    messages = build_messages(
        "Write {{attachments}} as a word. {attachments} {outputs}",
        values={**VALUES, "attachments": [IMAGE]},
    )
    assert messages[0]["content"] == [
        {"type": "text", "text": "Write {attachments} as a word. "},
        IMAGE,
        {"type": "text", "text": " 4"},
    ]


def test_a_value_containing_the_placeholder_text_is_not_split():
    messages = build_messages(
        "{outputs} {attachments}", values={**VALUES, "outputs": "a {attachments} b", "attachments": [IMAGE]}
    )
    assert messages[0]["content"] == [{"type": "text", "text": "a {attachments} b "}, IMAGE]


@pytest.mark.parametrize("template", ["{inputs[question]}", "{inputs.question}", "{outputs:d}"])
def test_indexing_into_a_value_is_a_usage_error(template):
    # values are rendered to text before filling, so fields and indexes cannot reach into them
    with pytest.raises(UsageError, match="fill the prompt template"):
        format_template(template, {"inputs": {"question": "q"}, "outputs": 3})


def test_attachments_without_a_placeholder_follow_the_text():
    messages = build_messages("Grade {outputs}", values={**VALUES, "attachments": IMAGE})
    assert messages[0]["content"] == [{"type": "text", "text": "Grade 4"}, IMAGE]


def test_few_shot_examples_can_come_first_so_prompts_share_their_start():
    examples = [{"inputs": "1+1", "outputs": "2", "score": True}]
    first = build_messages(
        "Grade {outputs}", values={"outputs": "x"}, few_shot_examples=examples, few_shot_placement="start"
    )
    second = build_messages(
        "Grade {outputs}", values={"outputs": "y"}, few_shot_examples=examples, few_shot_placement="start"
    )
    block = format_few_shot_examples(examples)
    assert first[-1]["content"] == block + "\n\nGrade x" and second[-1]["content"] == block + "\n\nGrade y"
    end = build_messages("Grade {outputs}", values={"outputs": "x"}, few_shot_examples=examples)
    assert end[-1]["content"] == "Grade x\n\n" + block  # OpenEvals' place
    with pytest.raises(UsageError, match="few_shot_placement"):
        build_messages("Grade {outputs}", values={"outputs": "x"}, few_shot_examples=examples, few_shot_placement="mid")


@pytest.mark.parametrize(
    ("attachment", "block"),
    [
        (
            {"mime_type": "audio/x-wav", "data": "UklGRg=="},
            {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
        ),
        (
            {"mime_type": "audio/mpeg", "data": "data:audio/mpeg;base64,SUQz"},
            {"type": "input_audio", "input_audio": {"data": "SUQz", "format": "mp3"}},
        ),
        (
            {"mime_type": "image/png", "data": "data:image/png;base64,iVBORw0KGgo="},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        ),
    ],
)
def test_audio_and_data_urls_become_the_blocks_openevals_sends(attachment, block):
    """Audio as OpenAI's input_audio block (its base64 and format); data given as a data URL kept as it is."""
    content = build_messages("{attachments}", values={**VALUES, "attachments": [attachment]})[0]["content"]
    assert content == [block]


@pytest.mark.parametrize(
    ("values", "system", "field"),
    [
        ({"outputs": "caf\udce9"}, None, "outputs"),
        ({"outputs": [{"role": "user", "content": "\ud800"}]}, None, "outputs"),
        ({"outputs": "ok"}, "be fair\udce9", "system"),
    ],
)
def test_text_that_is_not_utf8_is_refused_naming_its_field(values, system, field):
    with pytest.raises(UsageError, match=rf"^{field}\S* is not UTF-8 text") as caught:
        build_messages("Is {outputs} right?", values=values, system=system)
    assert caught.value.param == field
