"""An answer's text and its code, read as OpenEvals' code judge reads them (parity: tests/judges/test_code_parity.py)."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage

from localjudge._prompts.code import extraction_messages, final_output_text, markdown_code
from localjudge.errors import UsageError


@pytest.mark.parametrize(
    ("outputs", "text"),
    [
        ("x = 1", "x = 1"),
        ({"role": "assistant", "content": "x = 1"}, "x = 1"),
        ({"messages": [{"role": "user", "content": "q"}, AIMessage(content="x = 1")]}, "x = 1"),
        ({"role": "assistant", "content": [{"type": "text", "text": "x = "}, {"type": "text", "text": "1"}]}, "x = 1"),
    ],
)
def test_the_final_answer_is_read_as_text(outputs, text):
    assert final_output_text(outputs) == text


@pytest.mark.parametrize(
    ("outputs", "says"),
    [
        ({"messages": []}, "empty list of messages"),
        ({"steps": [1]}, r"neither 'content' nor a list of 'messages' \(its keys: \['steps'\]\)"),
        ({"content": "x"}, "'role' and 'content'"),
        (["x"], "got list"),
    ],
)
def test_what_is_no_answer_is_refused_saying_what_to_give(outputs, says):
    with pytest.raises(UsageError, match=says):
        final_output_text(outputs)


def test_markdown_blocks_are_joined_and_shell_blocks_left_out():
    text = "Do:\n```python\na = 1\n```\n```sh\npip install x\n```\nthen\n```\nb = 2\n```"
    assert markdown_code(text) == "a = 1\n\nb = 2\n"
    assert markdown_code("no fences") is None and markdown_code("```json\n{}\n```") is None


def test_the_text_to_copy_from_goes_in_as_it_is():
    messages = extraction_messages("f = lambda: {x}")
    assert messages[0]["role"] == "system" and messages[1]["content"].endswith("<text>\nf = lambda: {x}\n</text>")
