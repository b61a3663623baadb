"""The text of chat messages and of the values put into them."""

from __future__ import annotations

import json

import pytest

from localjudge._prompts.messages import message_text, render_value
from localjudge.errors import UsageError

# --- values ---------------------------------------------------------------------


def test_strings_go_in_unchanged():
    assert render_value('say "hi" {x}') == 'say "hi" {x}'


def test_non_strings_are_json_as_openevals_writes_them():
    rendered = render_value({"问题": "说出战国四大名将的姓名", "n": 4})
    assert json.loads(rendered) == {"问题": "说出战国四大名将的姓名", "n": 4}
    assert rendered == json.dumps({"问题": "说出战国四大名将的姓名", "n": 4})  # OpenEvals' bytes, escapes and all


@pytest.mark.parametrize(("value", "expected"), [(3, "3"), (0.5, "0.5"), (True, "true"), (["é"], '["\\u00e9"]')])
def test_scalars_and_lists_as_json(value, expected):
    assert render_value(value) == expected


def test_tuples_render_as_json_lists():
    # the seed's third demo passes inputs=("...",) (a trailing comma makes a tuple)
    assert json.loads(render_value(("说出战国四大名将的姓名",))) == ["说出战国四大名将的姓名"]


def test_objects_with_model_dump_are_serialised_through_it():
    class Model:
        def model_dump(self):
            return {"a": "ü"}

    assert json.loads(render_value({"m": Model()})) == {"m": {"a": "ü"}}


def test_circular_values_are_a_usage_error():
    loop: list = []
    loop.append(loop)
    with pytest.raises(UsageError, match="JSON"):
        render_value(loop)


# --- message_text ------------------------------------------------------------------------------


def test_message_text_of_strings_and_text_blocks():
    assert message_text({"role": "user", "content": "plain"}) == "plain"
    assert (
        message_text({"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]})
        == "ab"
    )
    assert message_text({"role": "assistant", "content": None}) == ""


def test_message_text_refuses_non_text_blocks_naming_the_kind():
    with pytest.raises(UsageError, match="image_url"):
        message_text({"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]})


@pytest.mark.parametrize(
    ("block", "what", "judge"),
    [
        ({"type": "image_url", "image_url": {"url": "data:image/png;base64,AA=="}}, "an image", "a vision model"),
        ({"type": "input_audio", "input_audio": {"data": "AA==", "format": "wav"}}, "audio", "takes audio input"),
        ({"type": "file", "file": {"file_data": "data:application/pdf;base64,AA=="}}, "a file", "takes file input"),
    ],
)
def test_media_is_refused_naming_what_it_is_and_which_judge_takes_it(block, what, judge):
    with pytest.raises(UsageError) as info:
        message_text({"role": "user", "content": [{"type": "text", "text": "Look:"}, block]})
    said = str(info.value)
    assert f"reads text only (a local model here is text-only), and a message holds {what} " in said
    assert judge in said and "OpenAICompatibleClient(BASE_URL, model=NAME)" in said
