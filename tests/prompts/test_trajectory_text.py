"""A trajectory as the judge reads it: each message in its role's tag, tool calls and results marked."""

from __future__ import annotations

import pytest

from localjudge._prompts.trajectory import trajectory_messages, trajectory_text
from localjudge.errors import InvalidTrajectoryError, UsageError

WEATHER = [
    {"role": "user", "content": "What is the weather in Paris?"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}
        ],
    },
    {"role": "tool", "content": "18 C, cloudy", "tool_call_id": "call_1"},
    {"role": "assistant", "content": "It is 18 C and cloudy in Paris."},
]

WEATHER_TEXT = """<user>
What is the weather in Paris?
</user>

<assistant>
<tool_call>
<name>get_weather</name>
<arguments>{"city": "Paris"}</arguments>
</tool_call>
</assistant>

<tool>
<tool_result>
<id>call_1</id>
<content>18 C, cloudy</content>
</tool_result>
</tool>

<assistant>
It is 18 C and cloudy in Paris.
</assistant>"""


def test_messages_with_tool_calls_are_rendered_in_their_tags():
    assert trajectory_text(WEATHER) == WEATHER_TEXT


def test_a_dict_holding_messages_and_a_single_message_are_trajectories_too():
    assert trajectory_text({"messages": WEATHER, "other": 1}) == WEATHER_TEXT
    assert trajectory_text({"role": "user", "content": "hi"}) == "<user>\nhi\n</user>"


def test_langchain_names_and_shapes_read_as_openai_ones():
    messages = [
        {"role": "human", "content": [{"type": "text", "text": "a"}, "b"]},
        {"role": "ai", "content": "Looking.", "tool_calls": [{"name": "search", "args": {"q": "战国"}, "id": "x"}]},
    ]
    assert trajectory_text(messages) == (
        "<user>\na\nb\n</user>\n\n"
        "<assistant>\nLooking.\n<tool_call>\n<name>search</name>\n"
        '<arguments>{"q": "战国"}</arguments>\n</tool_call>\n</assistant>'
    )


def test_langchain_message_objects_are_converted():
    messages = pytest.importorskip("langchain_core.messages")
    trajectory = [
        messages.HumanMessage("What is the weather in Paris?"),
        messages.AIMessage("", tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}, "id": "call_1"}]),
        messages.ToolMessage("18 C, cloudy", tool_call_id="call_1"),
        messages.AIMessage("It is 18 C and cloudy in Paris."),
    ]
    assert trajectory_text(trajectory) == WEATHER_TEXT


def test_the_checked_messages_keep_what_the_judge_is_shown():
    [_, call, result, _] = trajectory_messages(WEATHER)
    assert call["tool_calls"] == [
        {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
    ]
    assert result == {"role": "tool", "content": "18 C, cloudy", "tool_call_id": "call_1"}


def test_a_tool_message_without_a_call_id_is_plain_and_other_roles_show_no_tool_calls():
    text = trajectory_text(
        [
            {"role": "tool", "content": "r"},
            {"role": "user", "content": "x", "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}]},
        ]
    )
    assert text == "<tool>\nr\n</tool>\n\n<user>\nx\n</user>"


@pytest.mark.parametrize(
    ("trajectory", "says"),
    [
        (None, "outputs is required"),
        ([], "outputs holds no messages"),
        ("a transcript", "outputs is a string, not a trajectory"),
        ({"steps": []}, "neither 'messages' nor 'role' (its keys: 'steps')"),
        ({"messages": "hi"}, "outputs.messages is a string, not a list of messages"),
        ([{"content": "hi"}], "outputs[0] has no 'role'"),
        ([{"role": "robot", "content": "hi"}], "outputs[0] has the role 'robot'; a role is one of user, assistant"),
        ([3], "outputs[0] is an int, not a message"),
        ([{"role": "user", "content": {"a": 1}}], "outputs[0].content is a dict"),
        (
            [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}],
            "outputs[0].content[0] is a 'image_url' block; a trajectory judge reads text only",
        ),
        ([{"role": "assistant", "tool_calls": ["get_weather"]}], "outputs[0].tool_calls[0] is a string, not an object"),
        ([{"role": "assistant", "tool_calls": {"name": "f"}}], "outputs[0].tool_calls is a dict, not a list"),
        ([{"role": "assistant", "tool_calls": [{"function": "f"}]}], "tool_calls[0].function is a string"),
        ([{"role": "assistant", "tool_calls": [{"function": {"arguments": "{}"}}]}], "tool_calls[0] has no tool name"),
        (
            [{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": "{oops"}}]}],
            "tool_calls[0].function.arguments is not valid JSON",
        ),
        (
            [{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": "[1]"}}]}],
            "tool_calls[0].function.arguments is a list; a tool call's arguments are a JSON object",
        ),
        ([{"role": "assistant", "tool_calls": [{"name": "f"}]}], "tool_calls[0].args is null; a tool call's arguments"),
    ],
)
def test_a_malformed_trajectory_says_which_item_and_what_to_write(trajectory, says):
    with pytest.raises(InvalidTrajectoryError) as raised:
        trajectory_text(trajectory)
    assert says in str(raised.value)
    assert isinstance(raised.value, UsageError)


def test_errors_name_the_value_they_are_about():
    with pytest.raises(InvalidTrajectoryError, match=r"^reference_outputs\.messages\[1\] has no 'role'"):
        trajectory_text({"messages": [{"role": "user", "content": "a"}, {}]}, "reference_outputs")
